//! Leader election on a `coordination.k8s.io/v1` Lease, as client-go's `leaderelection` does it: GET,
//! then CREATE or an UPDATE carrying the resourceVersion read (optimistic concurrency), every retry
//! period; a lease held by another is free once its record has not changed for its duration, timed
//! on this process's monotonic clock (no comparison of wall clocks across machines).
//!
//! [`Elector`] is the decision, pure: the record read and the time in, the write to attempt out.
//! [`KubeLock`] carries one attempt out against the API server; the timing (retry period, renew
//! deadline) is `runtime::election`'s.
//!
//! Not a lease crate: `kube-leader-election` judges a lease expired by comparing its `renewTime` with
//! this machine's wall clock (a skewed clock steals or never takes the lease, the problem
//! `time::skew` exists for), and takes it with a merge patch without a resourceVersion, so two
//! candidates can both believe they lead. client-go's rules, followed here, avoid both.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::PostParams;
use kube::{Api, Client};
use tokio::time::Instant;

use super::client::Connection;
use super::error::ClusterError;
use crate::engine::model::PodKey;
use crate::engine::queue::{Cause, Work};
use crate::engine::time::Timestamp;
use crate::runtime::election::{Lock, Tried};
use crate::runtime::ledger::{Countdown, Counted, Ledger};
use crate::time::Clock;

/// The Lease's annotation that carries `--max-deletions`' count to the next leader: when each
/// deletion still counted was started, RFC 3339, comma-separated, oldest first
/// (`runtime::ledger`).
pub const DELETIONS_STARTED: &str = "kubectl-taint-evict/deletions-started";

/// The instants `lease` carries in [`DELETIONS_STARTED`]; one that does not parse is skipped.
fn deletions_started(lease: &Lease) -> Vec<Timestamp> {
    let Some(text) = lease.metadata.annotations.as_ref().and_then(|a| a.get(DELETIONS_STARTED)) else {
        return Vec::new();
    };
    let mut started: Vec<Timestamp> = text
        .split(',')
        .filter_map(|at| at.trim().parse::<jiff::Timestamp>().ok())
        .map(|at| Timestamp::from_nanos(at.as_nanosecond()))
        .collect();
    started.sort_unstable();
    started
}

/// The Lease's annotation that carries the countdowns a replay would not find to the next `run`
/// (`runtime::ledger::Countdown`): a JSON array of `{"pod": "NAMESPACE/NAME", "node", "taints" (the
/// print, hex), "created", "fire" (RFC 3339), "seconds" (null: untolerated)}`.
pub const COUNTDOWNS: &str = "kubectl-taint-evict/countdowns";

/// The countdowns `lease` carries in [`COUNTDOWNS`]; an entry that does not parse is skipped.
fn countdowns(lease: &Lease) -> Vec<Countdown> {
    let Some(text) = lease.metadata.annotations.as_ref().and_then(|a| a.get(COUNTDOWNS)) else {
        return Vec::new();
    };
    let Ok(serde_json::Value::Array(entries)) = serde_json::from_str(text) else { return Vec::new() };
    let instant = |value: &serde_json::Value| {
        let at = value.as_str()?.parse::<jiff::Timestamp>().ok()?;
        Some(Timestamp::from_nanos(at.as_nanosecond()))
    };
    let entry = |entry: &serde_json::Value| {
        let (namespace, name) = entry["pod"].as_str()?.split_once('/')?;
        let cause = match &entry["seconds"] {
            serde_json::Value::Null => Cause::Untolerated,
            seconds => Cause::Expired { seconds: seconds.as_i64()? },
        };
        Some(Countdown {
            pod: PodKey::new(namespace, name),
            node: entry["node"].as_str()?.into(),
            taints: u64::from_str_radix(entry["taints"].as_str()?, 16).ok()?,
            work: Work { created: instant(&entry["created"])?, fire: instant(&entry["fire"])?, cause },
        })
    };
    entries.iter().filter_map(entry).collect()
}

/// [`COUNTDOWNS`]' value for `countdowns`.
fn countdowns_text(countdowns: &[Countdown]) -> String {
    let instant = |at: Timestamp| jiff::Timestamp::from_nanosecond(at.as_nanos()).ok().map(|at| at.to_string());
    let entries: Vec<serde_json::Value> = countdowns
        .iter()
        .map(|countdown| {
            let seconds = match countdown.work.cause {
                Cause::Untolerated => None,
                Cause::Expired { seconds } => Some(seconds),
            };
            serde_json::json!({
                "pod": format!("{}/{}", countdown.pod.namespace(), countdown.pod.name()),
                "node": countdown.node.as_str(),
                "taints": format!("{:016x}", countdown.taints),
                "created": instant(countdown.work.created),
                "fire": instant(countdown.work.fire),
                "seconds": seconds,
            })
        })
        .collect();
    serde_json::Value::Array(entries).to_string()
}

/// [`DELETIONS_STARTED`]'s value for `started`.
fn deletions_text(started: &[Timestamp]) -> String {
    let text = started.iter().filter_map(|at| jiff::Timestamp::from_nanosecond(at.as_nanos()).ok());
    text.map(|at| at.to_string()).collect::<Vec<_>>().join(",")
}

/// The lease's fields the election reads and writes (client-go's `LeaderElectionRecord`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Who holds the lease (empty: nobody).
    pub holder: String,
    /// How long the holder's claim lasts after its last renewal, in seconds.
    pub duration_seconds: i32,
    /// When the holder acquired it.
    pub acquire_time: Option<jiff::Timestamp>,
    /// When the holder last renewed it.
    pub renew_time: Option<jiff::Timestamp>,
    /// How many times the holder changed.
    pub transitions: i32,
}

impl Record {
    fn of(lease: &Lease) -> Self {
        let spec = lease.spec.clone().unwrap_or_default();
        Self {
            holder: spec.holder_identity.unwrap_or_default(),
            duration_seconds: spec.lease_duration_seconds.unwrap_or_default(),
            acquire_time: spec.acquire_time.map(|t| t.0),
            renew_time: spec.renew_time.map(|t| t.0),
            transitions: spec.lease_transitions.unwrap_or_default(),
        }
    }

    fn spec(&self) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.holder.clone()).filter(|h| !h.is_empty()),
            lease_duration_seconds: Some(self.duration_seconds),
            acquire_time: self.acquire_time.map(MicroTime),
            renew_time: self.renew_time.map(MicroTime),
            lease_transitions: Some(self.transitions),
            ..LeaseSpec::default()
        }
    }
}

/// The write to attempt after reading the lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attempt {
    /// There is no lease: create it, held by this instance.
    Create(Record),
    /// Take or renew the lease with this record (an update conditional on the version read).
    Update(Record),
    /// Another instance holds the lease and its claim has not run out.
    Wait {
        /// The holder.
        holder: String,
    },
}

/// client-go's `tryAcquireOrRenew` decision, without the API calls.
#[derive(Clone, Debug)]
pub struct Elector {
    identity: String,
    lease_duration: Duration,
    /// The last record read or written, and when (monotonic) it was first seen as it is.
    observed: Option<(Record, Duration)>,
}

impl Elector {
    /// An elector for `identity`, claiming the lease for `lease_duration` at a time.
    #[must_use]
    pub fn new(identity: impl Into<String>, lease_duration: Duration) -> Self {
        Self { identity: identity.into(), lease_duration, observed: None }
    }

    /// Whether the last record read or written names this instance as the holder.
    #[must_use]
    pub fn is_leader(&self) -> bool {
        self.observed.as_ref().is_some_and(|(record, _)| record.holder == self.identity)
    }

    /// Decides what to write after reading `current` (`None`: no lease) at monotonic time `now`
    /// (any fixed origin) and wall time `wall`.
    pub fn attempt(&mut self, current: Option<&Record>, now: Duration, wall: jiff::Timestamp) -> Attempt {
        let seconds = i32::try_from(self.lease_duration.as_secs()).unwrap_or(i32::MAX);
        let mut claim = Record {
            holder: self.identity.clone(),
            duration_seconds: seconds,
            acquire_time: Some(wall),
            renew_time: Some(wall),
            transitions: 0,
        };
        let Some(current) = current else { return Attempt::Create(claim) };
        if self.observed.as_ref().is_none_or(|(record, _)| record != current) {
            self.observed = Some((current.clone(), now));
        }
        let observed_at = self.observed.as_ref().map_or(now, |(_, at)| *at);
        let claimed_for = Duration::from_secs(u64::try_from(current.duration_seconds).unwrap_or(0));
        if !current.holder.is_empty() && current.holder != self.identity && observed_at + claimed_for > now {
            return Attempt::Wait { holder: current.holder.clone() };
        }
        if current.holder == self.identity {
            claim.acquire_time = current.acquire_time;
            claim.transitions = current.transitions;
        } else {
            claim.transitions = current.transitions.saturating_add(1);
        }
        Attempt::Update(claim)
    }

    /// `record` was written at monotonic time `now`.
    pub fn written(&mut self, record: Record, now: Duration) {
        self.observed = Some((record, now));
    }

    /// The record that gives the lease up (client-go's release: no holder, a one-second claim), if
    /// this instance holds it.
    #[must_use]
    pub fn release(&self, wall: jiff::Timestamp) -> Option<Record> {
        let (record, _) = self.observed.as_ref().filter(|(record, _)| record.holder == self.identity)?;
        Some(Record {
            holder: String::new(),
            duration_seconds: 1,
            acquire_time: Some(wall),
            renew_time: Some(wall),
            transitions: record.transitions,
        })
    }
}

/// How to run the election.
#[derive(Clone, Debug)]
pub struct ElectionConfig {
    /// The Lease's namespace.
    pub namespace: String,
    /// The Lease's name.
    pub name: String,
    /// This instance's identity (unique among the candidates).
    pub identity: String,
    /// How long a claim lasts without renewal.
    pub lease_duration: Duration,
    /// How long a leader keeps trying to renew before it stops leading.
    pub renew_deadline: Duration,
    /// How often the lease is tried.
    pub retry_period: Duration,
}

/// An identity unique to this process: the host (the pod's name in a cluster) and a random suffix,
/// as client-go's callers build it.
#[must_use]
pub fn default_identity() -> String {
    let host = std::env::var("HOSTNAME").ok().filter(|h| !h.is_empty()).unwrap_or_else(|| "taint-evict".to_owned());
    format!("{host}_{:016x}", crate::runtime::election::random())
}

/// The election's Lease in the cluster: one `tryAcquireOrRenew` per call, decided by an [`Elector`].
pub struct KubeLock {
    api: Api<Lease>,
    config: ElectionConfig,
    elector: Elector,
    clock: Clock,
    /// The origin of the monotonic time the elector is given.
    origin: Instant,
    /// `--max-deletions`' count, written on the Lease with each write.
    ledger: Option<Ledger>,
}

impl KubeLock {
    /// The lock `config` describes, through `client`.
    #[must_use]
    pub fn new(client: Client, config: ElectionConfig, clock: Clock) -> Self {
        let api = Api::namespaced(client, &config.namespace);
        let elector = Elector::new(config.identity.clone(), config.lease_duration);
        Self { api, config, elector, origin: clock.instant(), clock, ledger: None }
    }

    /// The lock that also carries `ledger`: adopted from the Lease when this instance takes it,
    /// written on it with every write.
    #[must_use]
    pub fn with_ledger(mut self, ledger: Ledger) -> Self {
        self.ledger = Some(ledger);
        self
    }

    /// The monotonic time the elector is given: since this lock was made, on the runtime's clock.
    fn since_origin(&self) -> Duration {
        self.clock.instant().saturating_duration_since(self.origin)
    }

    fn lease(&self) -> String {
        format!("{}/{}", self.config.namespace, self.config.name)
    }

    fn wall(&self) -> jiff::Timestamp {
        self.clock.api_now()
    }

    fn object(&self, record: &Record, version: Option<String>, counted: &Counted) -> Lease {
        let started =
            (!counted.started.is_empty()).then(|| (DELETIONS_STARTED.to_owned(), deletions_text(&counted.started)));
        let countdowns =
            (!counted.countdowns.is_empty()).then(|| (COUNTDOWNS.to_owned(), countdowns_text(&counted.countdowns)));
        let annotations: std::collections::BTreeMap<String, String> = started.into_iter().chain(countdowns).collect();
        let annotations = (!annotations.is_empty()).then_some(annotations);
        Lease {
            metadata: ObjectMeta {
                name: Some(self.config.name.clone()),
                namespace: Some(self.config.namespace.clone()),
                resource_version: version,
                annotations,
                ..ObjectMeta::default()
            },
            spec: Some(record.spec()),
        }
    }
}

impl Lock for KubeLock {
    /// Reads the lease, decides, writes (CREATE, or an UPDATE carrying the version read).
    async fn try_acquire_or_renew(&mut self) -> Tried {
        let (current, version, started, countdowns) = match self.api.get_opt(&self.config.name).await {
            Ok(Some(lease)) => {
                let (started, countdowns) = (deletions_started(&lease), countdowns(&lease));
                (Some(Record::of(&lease)), lease.metadata.resource_version.clone(), started, countdowns)
            }
            Ok(None) => (None, None, Vec::new(), Vec::new()),
            Err(error) => return Tried::Failed(format!("reading lease {}: {}", self.lease(), describe(&error))),
        };
        let now = self.since_origin();
        let wall = self.wall();
        let attempt = self.elector.attempt(current.as_ref(), now, wall);
        // Held by another (or released), whether this instance takes it or waits: what it carries is
        // the ledger (a standby seeds its engine with the countdowns it carries).
        let another = current.as_ref().is_some_and(|current| current.holder != self.config.identity);
        if let (Some(ledger), true) = (&self.ledger, another) {
            ledger.adopt(started, countdowns);
        }
        let counted = self.ledger.as_ref().map(Ledger::to_write).unwrap_or_default();
        let written = match attempt {
            Attempt::Wait { holder } => return Tried::HeldBy(holder),
            Attempt::Create(record) => {
                self.api.create(&PostParams::default(), &self.object(&record, None, &counted)).await.map(|_| record)
            }
            Attempt::Update(record) => self
                .api
                .replace(&self.config.name, &PostParams::default(), &self.object(&record, version, &counted))
                .await
                .map(|_| record),
        };
        match written {
            Ok(record) => {
                self.elector.written(record, self.since_origin());
                if let Some(ledger) = &self.ledger {
                    ledger.written(counted.generation);
                }
                Tried::Held
            }
            Err(error) => Tried::Failed(format!("writing lease {}: {}", self.lease(), describe(&error))),
        }
    }

    /// Gives the lease up, so another instance can lead at once instead of after the lease duration.
    async fn release(&mut self) {
        let Some(record) = self.elector.release(self.wall()) else { return };
        let Ok(Some(lease)) = self.api.get_opt(&self.config.name).await else { return };
        if Record::of(&lease).holder != self.config.identity {
            return;
        }
        // The count stays for the next leader.
        let counted = self.ledger.as_ref().map(Ledger::to_write).unwrap_or_default();
        let object = self.object(&record, lease.metadata.resource_version, &counted);
        let _ = self.api.replace(&self.config.name, &PostParams::default(), &object).await;
    }
}

fn describe(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) if status.code == 403 => {
            format!("{} (holding the Lease needs get, create and update on leases.coordination.k8s.io)", status.message)
        }
        kube::Error::Api(status) => format!("{} ({})", status.message, status.code),
        other => super::error::root_cause(other),
    }
}

/// Checks that the lease can be read (a 404 is fine: the first candidate creates it), so a missing
/// permission is one clear error at start rather than a retry loop.
///
/// # Errors
/// The API server refused or could not be reached.
pub async fn preflight(connection: &Connection, namespace: &str, name: &str) -> Result<(), ClusterError> {
    let api: Api<Lease> = Api::namespaced(connection.client.clone(), namespace);
    let resource = format!("leases.coordination.k8s.io in namespace \"{namespace}\"");
    api.get_opt(name).await.map(|_| ()).map_err(|e| ClusterError::from_kube(e, &connection.server, "get", &resource))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);
    /// kube-controller-manager's default.
    const LEASE_DURATION: Duration = Duration::from_secs(15);

    fn wall(seconds: i64) -> jiff::Timestamp {
        jiff::Timestamp::from_second(1_700_000_000 + seconds).unwrap()
    }

    fn held_by(holder: &str, renewed: i64, transitions: i32) -> Record {
        Record {
            holder: holder.into(),
            duration_seconds: 15,
            acquire_time: Some(wall(0)),
            renew_time: Some(wall(renewed)),
            transitions,
        }
    }

    #[test]
    fn no_lease_is_created_held_by_us() {
        let mut elector = Elector::new("a", LEASE_DURATION);
        let Attempt::Create(record) = elector.attempt(None, Duration::ZERO, wall(5)) else { panic!("create") };
        assert_eq!(record, Record { holder: "a".into(), transitions: 0, ..held_by("a", 5, 0) }.with_acquire(5));
        assert!(!elector.is_leader(), "not leader before the write succeeds");
        elector.written(record, Duration::ZERO);
        assert!(elector.is_leader());
    }

    #[test]
    fn a_live_claim_is_waited_for_until_unchanged_for_its_duration_on_our_clock() {
        let mut elector = Elector::new("b", LEASE_DURATION);
        let other = held_by("a", 0, 3);
        // First seen at t=100 s (our clock); the holder's wall clock does not matter.
        assert_eq!(elector.attempt(Some(&other), 100 * SECOND, wall(9_999)), Attempt::Wait { holder: "a".into() });
        assert_eq!(elector.attempt(Some(&other), 114 * SECOND, wall(9_999)), Attempt::Wait { holder: "a".into() });
        // A renewal restarts the wait.
        let renewed = held_by("a", 2, 3);
        assert_eq!(elector.attempt(Some(&renewed), 114 * SECOND, wall(9_999)), Attempt::Wait { holder: "a".into() });
        assert_eq!(elector.attempt(Some(&renewed), 128 * SECOND, wall(9_999)), Attempt::Wait { holder: "a".into() });
        let Attempt::Update(taken) = elector.attempt(Some(&renewed), 129 * SECOND, wall(50)) else {
            panic!("take over")
        };
        assert_eq!(taken.holder, "b");
        assert_eq!(taken.transitions, 4, "a change of holder counts a transition");
        assert_eq!(taken.acquire_time, Some(wall(50)));
    }

    #[test]
    fn a_released_lease_is_taken_at_once() {
        let mut elector = Elector::new("b", LEASE_DURATION);
        let released = Record { holder: String::new(), duration_seconds: 1, ..held_by("", 0, 2) };
        let Attempt::Update(taken) = elector.attempt(Some(&released), Duration::ZERO, wall(1)) else { panic!() };
        assert_eq!((taken.holder.as_str(), taken.transitions), ("b", 3));
    }

    #[test]
    fn renewal_keeps_acquire_time_and_transitions() {
        let mut elector = Elector::new("a", LEASE_DURATION);
        let ours = held_by("a", 10, 7);
        elector.written(ours.clone(), 10 * SECOND);
        let Attempt::Update(renewal) = elector.attempt(Some(&ours), 12 * SECOND, wall(12)) else { panic!() };
        assert_eq!(renewal.acquire_time, Some(wall(0)));
        assert_eq!(renewal.renew_time, Some(wall(12)));
        assert_eq!(renewal.transitions, 7);
    }

    #[test]
    fn a_leader_that_sees_another_holder_is_no_longer_leader() {
        let mut elector = Elector::new("a", LEASE_DURATION);
        elector.written(held_by("a", 0, 1), Duration::ZERO);
        assert!(elector.is_leader());
        let taken = held_by("b", 30, 2);
        assert_eq!(elector.attempt(Some(&taken), 30 * SECOND, wall(30)), Attempt::Wait { holder: "b".into() });
        assert!(!elector.is_leader());
        assert_eq!(elector.release(wall(31)), None, "nothing to release");
    }

    #[test]
    fn release_clears_the_holder_and_keeps_the_transitions() {
        let mut elector = Elector::new("a", LEASE_DURATION);
        elector.written(held_by("a", 0, 5), Duration::ZERO);
        let released = elector.release(wall(40)).expect("held");
        assert_eq!(released.holder, "");
        assert_eq!(released.duration_seconds, 1);
        assert_eq!(released.transitions, 5);
        assert_eq!(released.spec().holder_identity, None);
    }

    impl Record {
        fn with_acquire(mut self, seconds: i64) -> Self {
            self.acquire_time = Some(wall(seconds));
            self
        }
    }
}
