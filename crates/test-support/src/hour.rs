//! A generated hour of a cluster's changes, played into the fake API server for `record` to watch
//! (BENCHMARKS.md, "`record` and `review` over an hour").
//!
//! The cluster is [`crate::cluster`]'s (every node healthy at the start), and over the hour:
//! - each node's Lease is renewed every 10 s (the kubelet's renew interval), the nodes spread evenly
//!   over the 10 s;
//! - each node's status is written every 5 minutes (the kubelet's `nodeStatusReportFrequency`), its
//!   conditions' `lastHeartbeatTime`;
//! - the controller manager's Lease is renewed every 2 s (its retry period);
//! - pod churn: a rollout of a Deployment of [`Config::rollout`] pods (a new pod created, bound and
//!   ready, an old one deleted, every 2 s), and one Job pod a minute, run and removed;
//! - an incident: at [`Config::incident_at`] the kubelets of one zone ([`DOWN_ZONE`], a third of the
//!   nodes) fall silent: their Leases and statuses stop. The node lifecycle controller marks each node
//!   `Unknown` at its first monitor pass (every 5 s) past the grace period (50 s) with its
//!   `unreachable:NoSchedule` taint and a `NodeNotReady` Event, and once the whole zone is down taints
//!   `unreachable:NoExecute` at `--node-eviction-rate` (one node every 10 s: a fully disrupted zone
//!   while the others are healthy). The taint-eviction controller deletes the pods of a tainted node
//!   as due: at once without a toleration, `tolerationSeconds` later with one (its
//!   `TaintManagerEviction` Event, the `DisruptionTarget` condition, then the DELETE: the pod stays,
//!   terminating, as no kubelet confirms it).
//!
//! The changes' instants (every stamp the objects carry) are the hour's, from the instant the play
//! starts; [`Hour::play`] applies them `speed` times faster than the hour. The `NoExecute` taints
//! fall on whole even seconds, as the controller manager's renewals do: `record` reads the control
//! plane's time from those renewals, so a deletion due at a taint's instant plus its toleration is
//! seen just after a renewal of that same instant (docs/review.md, "Its lines").

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::cluster;
use crate::fake_apiserver::FakeApiServer;

/// The zone whose kubelets fall silent.
pub const DOWN_ZONE: &str = cluster::ZONES[0];
const NANOS: i64 = 1_000_000_000;
/// The kubelet's node Lease renew interval.
const LEASE_EVERY: i64 = 10;
/// The kubelet's `nodeStatusReportFrequency`.
const STATUS_EVERY: i64 = 300;
/// The controller manager's leader-election retry period.
const CONTROLLER_EVERY: i64 = 2;
/// The node lifecycle controller's monitor period and grace period (1.32 and later).
const MONITOR_EVERY: i64 = 5;
const GRACE: i64 = 50;
/// One `NoExecute` taint every this many seconds (`--node-eviction-rate` 0.1).
const TAINT_EVERY: i64 = 10;
/// A Job pod every this many seconds, running this long, removed this long after it ends.
const JOB_EVERY: i64 = 60;
const JOB_RUNS: i64 = 30;
const JOB_KEPT: i64 = 60;
/// The writes the fake API server keeps to watch from.
const HISTORY: usize = 100_000;

/// What to generate.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// The cluster at the start (made healthy).
    pub cluster: cluster::Config,
    /// How long, in seconds.
    pub seconds: i64,
    /// When the zone's kubelets fall silent, seconds from the start.
    pub incident_at: i64,
    /// When the rollout starts, and how many pods it replaces.
    pub rollout_at: i64,
    /// How many pods the rollout replaces.
    pub rollout: usize,
}

impl Config {
    /// An hour of `nodes` nodes with `pods_per_node` pods each: the rollout of 300 pods at minute 10,
    /// the incident at minute 20.
    #[must_use]
    pub fn hour(nodes: usize, pods_per_node: usize) -> Self {
        Self {
            cluster: cluster::Config { nodes, pods_per_node, seed: 1, healthy: true },
            seconds: 3600,
            incident_at: 1200,
            rollout_at: 600,
            rollout: 300,
        }
    }
}

/// What the hour wrote, by kind of change.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Node Lease renewals.
    pub renewals: usize,
    /// Node status writes (heartbeats).
    pub statuses: usize,
    /// Controller manager Lease renewals.
    pub controller: usize,
    /// Nodes marked `Unknown` (and tainted `NoSchedule`).
    pub marked: usize,
    /// Nodes tainted `NoExecute`.
    pub tainted: usize,
    /// Pods whose deletion the taint-eviction controller started.
    pub evicted: usize,
    /// Pods created, and pods removed, by the churn.
    pub created: usize,
    /// Pods removed.
    pub removed: usize,
    /// Events posted.
    pub events: usize,
    /// Every write.
    pub writes: usize,
}

/// One write to the fake API server.
#[derive(Debug)]
enum Change {
    /// Store the object as it is (a Lease renewed, a pod created, an Event).
    Put(Value),
    /// Merge `patch` into the stored object (RFC 7386: a list is replaced).
    Merge { kind: &'static str, namespace: String, name: String, patch: Value },
    /// A pod's deletion, as the API server answers a DELETE whose kubelet has not confirmed it:
    /// `condition` added to its status first (the taint-eviction controller's), then its
    /// `deletionTimestamp` set `grace` seconds after `at`.
    Terminate { namespace: String, name: String, at: i64, grace: i64, condition: Option<Value> },
    /// The object removed.
    Remove { kind: &'static str, namespace: String, name: String },
}

/// A pod the incident's taint concerns: who it is and what it tolerates of `unreachable:NoExecute`.
struct Doomed {
    namespace: String,
    name: String,
    uid: String,
    /// `None`: not tolerated (deleted at once); `Some(s)`: tolerated for `s` seconds.
    seconds: Option<i64>,
}

/// One node, as the hour follows it.
struct NodeState {
    name: String,
    uid: String,
    down: bool,
    /// Its conditions as last written (their heartbeat moves).
    conditions: Value,
    /// When its Lease is renewed within each 10 s, and its status within each 5 minutes (nanoseconds).
    lease_phase: i64,
    status_phase: i64,
    /// Marked `Unknown` at this instant (seconds from the start).
    marked: Option<i64>,
    /// Its pods that an `unreachable:NoExecute` taint deletes, at once or after their toleration.
    doomed: Vec<Doomed>,
}

/// The hour, as it is generated and played.
pub struct Hour {
    config: Config,
    /// The instant of second 0: when the play started.
    start: jiff::Timestamp,
    nodes: Vec<NodeState>,
    /// The healthy nodes, where the churn's pods go.
    up: Vec<usize>,
    /// Changes already decided for a later instant, by (nanoseconds from the start, order decided).
    later: BTreeMap<(i64, u64), Change>,
    decided: u64,
    /// Nodes marked and not yet tainted `NoExecute`, in the order they were marked.
    to_taint: std::collections::VecDeque<usize>,
    /// When the whole zone was marked (seconds), from which the taints come.
    zone_down: Option<i64>,
    tally: Tally,
}

impl Hour {
    /// Loads the cluster at the start into `server`: every node and pod of the dump (made healthy),
    /// each node's Lease, the controller manager's, and the rollout's old pods.
    #[must_use]
    pub fn load(config: Config, server: &FakeApiServer) -> Self {
        let now = jiff::Timestamp::now();
        let count = config.cluster.nodes.max(1);
        let mut nodes = Vec::with_capacity(count);
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut added = 0usize;
        cluster::each_item(&config.cluster, |item| {
            if item["kind"] == "Node" {
                let i = nodes.len();
                let name = item["metadata"]["name"].as_str().unwrap_or_default().to_owned();
                let zone = item["metadata"]["labels"]["topology.kubernetes.io/zone"].as_str();
                index.insert(name.clone(), i);
                nodes.push(NodeState {
                    uid: item["metadata"]["uid"].as_str().unwrap_or_default().to_owned(),
                    down: zone == Some(DOWN_ZONE),
                    conditions: item["status"]["conditions"].clone(),
                    lease_phase: i as i64 * LEASE_EVERY * NANOS / count as i64,
                    status_phase: i as i64 * STATUS_EVERY * NANOS / count as i64,
                    marked: None,
                    doomed: Vec::new(),
                    name,
                });
            } else if let Some(&i) = item["spec"]["nodeName"].as_str().and_then(|node| index.get(node))
                && nodes[i].down
                && let Some(seconds) = unreachable_tolerated(&item)
            {
                let text = |key: &str| item["metadata"][key].as_str().unwrap_or_default().to_owned();
                nodes[i].doomed.push(Doomed {
                    namespace: text("namespace"),
                    name: text("name"),
                    uid: text("uid"),
                    seconds,
                });
            }
            server.add(item);
            added += 1;
            if added.is_multiple_of(10_000) {
                server.compact_to(0);
            }
            Ok::<_, ()>(())
        })
        .expect("the generator does not fail");
        let up: Vec<usize> = (0..nodes.len()).filter(|&i| !nodes[i].down).collect();
        let hour = Self {
            config,
            start: now,
            nodes,
            up,
            later: BTreeMap::new(),
            decided: 0,
            to_taint: std::collections::VecDeque::new(),
            zone_down: None,
            tally: Tally::default(),
        };
        for node in &hour.nodes {
            server.add(node_lease(&node.name, &node.uid, now));
        }
        for k in 0..hour.config.rollout {
            let node = hour.up_node(k);
            server.add(small_pod("shop", &format!("checkout-old-{k:04}"), "checkout-old", Some(node), now, true));
        }
        hour.renew_controller(server, now);
        server.compact_to(0);
        hour
    }

    /// Renews the controller manager's Lease at `at` (before `record` starts, so that its list says
    /// the control plane's time).
    pub fn renew_controller(&self, server: &FakeApiServer, at: jiff::Timestamp) {
        server.add(controller_lease(at, self.start));
    }

    /// The instant of second 0 (once [`Hour::play`] has started, the play's).
    #[must_use]
    pub fn start(&self) -> jiff::Timestamp {
        self.start
    }

    /// The `renewTime` of the controller manager's last renewal of the hour, as `record` writes it
    /// (a whole second, no fraction): once it is in the record, `record` has seen the whole hour.
    #[must_use]
    pub fn last_controller_renewal(&self) -> String {
        let last = (self.config.seconds - 1) / CONTROLLER_EVERY * CONTROLLER_EVERY;
        self.at(last * NANOS).to_string()
    }

    /// Plays the hour into `server`, `speed` times faster than its own pace, from now; what it wrote.
    pub fn play(&mut self, server: &FakeApiServer, speed: f64) -> Tally {
        let now = jiff::Timestamp::now();
        // Second 0 on a whole second, so that the stamps written in whole seconds are exact.
        self.start = now.ceil_second();
        let begun = Instant::now() + duration_between(now, self.start);
        for second in 0..self.config.seconds {
            for (offset, change) in self.second(second) {
                let due = begun + Duration::from_nanos((offset as f64 / speed) as u64);
                let wait = due.saturating_duration_since(Instant::now());
                if !wait.is_zero() {
                    // Pacing the writes to the hour's instants, not waiting for a result.
                    std::thread::sleep(wait);
                }
                self.apply(server, change);
                self.tally.writes += 1;
                if self.tally.writes.is_multiple_of(HISTORY / 2) {
                    server.compact_to(HISTORY);
                }
            }
        }
        self.tally
    }

    /// The changes of one second of the hour, in order of their instants (nanoseconds from the start).
    fn second(&mut self, second: i64) -> Vec<(i64, Change)> {
        let mut changes: Vec<(i64, Change)> = Vec::new();
        let base = second * NANOS;
        let silent_from = self.config.incident_at * NANOS;
        if second % CONTROLLER_EVERY == 0 {
            changes.push((base, Change::Put(controller_lease(self.at(base), self.start))));
            self.tally.controller += 1;
        }
        let lease_window = (second % LEASE_EVERY) * NANOS..(second % LEASE_EVERY + 1) * NANOS;
        let status_window = (second % STATUS_EVERY) * NANOS..(second % STATUS_EVERY + 1) * NANOS;
        for node in &mut self.nodes {
            if lease_window.contains(&node.lease_phase) {
                let at = base - (second % LEASE_EVERY) * NANOS + node.lease_phase;
                if !(node.down && at >= silent_from) {
                    changes.push((at, Change::Put(node_lease(&node.name, &node.uid, at_instant(self.start, at)))));
                    self.tally.renewals += 1;
                }
            }
            if status_window.contains(&node.status_phase) {
                let at = base - (second % STATUS_EVERY) * NANOS + node.status_phase;
                if !(node.down && at >= silent_from) {
                    let stamp = seconds(at_instant(self.start, at));
                    for condition in node.conditions.as_array_mut().into_iter().flatten() {
                        condition["lastHeartbeatTime"] = json!(stamp);
                    }
                    let patch = json!({"status": {"conditions": node.conditions}});
                    changes.push((at, merge("Node", "", &node.name, patch)));
                    self.tally.statuses += 1;
                }
            }
        }
        if second >= self.config.incident_at && second % MONITOR_EVERY == 0 {
            self.monitor(second, &mut changes);
        }
        if let Some(down) = self.zone_down
            && second >= down
            && second % TAINT_EVERY == 0
            && let Some(i) = self.to_taint.pop_front()
        {
            self.taint(i, second, &mut changes);
        }
        self.churn(second);
        // The changes decided earlier for this second.
        let next = (second + 1) * NANOS;
        while let Some(entry) = self.later.first_entry() {
            if entry.key().0 >= next {
                break;
            }
            let ((at, _), change) = entry.remove_entry();
            changes.push((at, change));
        }
        changes.sort_by_key(|(at, _)| *at);
        changes
    }

    /// The node lifecycle controller's monitor pass at `second`: each silent node past its grace
    /// period marked `Unknown`, tainted `NoSchedule`, its `NodeNotReady` Event.
    fn monitor(&mut self, second: i64, changes: &mut Vec<(i64, Change)>) {
        let silent_from = self.config.incident_at * NANOS;
        let at = second * NANOS;
        let stamp = seconds(self.at(at));
        for (i, node) in self.nodes.iter_mut().enumerate() {
            if !node.down || node.marked.is_some() {
                continue;
            }
            // Its last renewal: the last before the kubelet fell silent.
            let last = node.lease_phase
                + (silent_from - 1 - node.lease_phase).div_euclid(LEASE_EVERY * NANOS) * LEASE_EVERY * NANOS;
            if at - last <= GRACE * NANOS {
                continue;
            }
            node.marked = Some(second);
            for condition in node.conditions.as_array_mut().into_iter().flatten() {
                condition["status"] = json!("Unknown");
                condition["reason"] = json!("NodeStatusUnknown");
                condition["message"] = json!("Kubelet stopped posting node status.");
                condition["lastTransitionTime"] = json!(stamp);
            }
            let taints = json!([{"effect": "NoSchedule", "key": "node.kubernetes.io/unreachable", "timeAdded": stamp}]);
            let patch = json!({"spec": {"taints": taints}, "status": {"conditions": node.conditions}});
            changes.push((at, merge("Node", "", &node.name, patch)));
            let message = format!("Node {} status is now: NodeNotReady", node.name);
            let event = event(
                "default",
                &node.name,
                ("Node", "", &node.name, &node.uid),
                "NodeNotReady",
                &message,
                "node-controller",
                &stamp,
            );
            changes.push((at, Change::Put(event)));
            self.tally.marked += 1;
            self.tally.events += 1;
            self.to_taint.push_back(i);
        }
        if self.zone_down.is_none() && self.nodes.iter().all(|node| !node.down || node.marked.is_some()) {
            // The zone fully disrupted: its taints from the next token on (every 10 s).
            self.zone_down = Some(
                second.div_euclid(TAINT_EVERY) * TAINT_EVERY + if second % TAINT_EVERY == 0 { 0 } else { TAINT_EVERY },
            );
        }
    }

    /// Node `i` tainted `unreachable:NoExecute` at `second`, and its pods' deletions decided.
    fn taint(&mut self, i: usize, second: i64, changes: &mut Vec<(i64, Change)>) {
        let at = second * NANOS;
        let node = &self.nodes[i];
        let marked = seconds(self.at(node.marked.unwrap_or(second) * NANOS));
        let stamp = seconds(self.at(at));
        let taints = json!([
            {"effect": "NoSchedule", "key": "node.kubernetes.io/unreachable", "timeAdded": marked},
            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "timeAdded": stamp}
        ]);
        changes.push((at, merge("Node", "", &node.name, json!({"spec": {"taints": taints}}))));
        self.tally.tainted += 1;
        let mut decided = Vec::new();
        for (k, pod) in node.doomed.iter().enumerate() {
            // The controller's workers, 200 ms after it is due: at once without a toleration, when it ends with one.
            let due = at + pod.seconds.map_or(0, |s| s * NANOS) + 200_000_000 + k as i64 * 1_000_000;
            if due >= self.config.seconds * NANOS {
                continue;
            }
            let when = seconds(self.at(due));
            let message = format!("Marking for deletion Pod {}/{}", pod.namespace, pod.name);
            let involved = ("Pod", pod.namespace.as_str(), pod.name.as_str(), pod.uid.as_str());
            let marking = event(
                &pod.namespace,
                &pod.name,
                involved,
                "TaintManagerEviction",
                &message,
                "taint-eviction-controller",
                &when,
            );
            let condition = json!({"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager",
                "message": "Taint manager: deleting due to NoExecute taint", "lastTransitionTime": when});
            decided.push((due, Change::Put(marking)));
            let (namespace, name) = (pod.namespace.clone(), pod.name.clone());
            decided.push((due, Change::Terminate { namespace, name, at: due, grace: 30, condition: Some(condition) }));
        }
        self.tally.evicted += decided.len() / 2;
        self.tally.events += decided.len() / 2;
        for (due, change) in decided {
            self.decide(due, change);
        }
    }

    /// The churn that starts at `second`: the rollout's step, a Job's pod.
    fn churn(&mut self, second: i64) {
        let step = second - self.config.rollout_at;
        if step >= 0 && step % 2 == 0 && ((step / 2) as usize) < self.config.rollout {
            // A new pod: created, bound a second later, ready four seconds after; an old one deleted.
            let k = (step / 2) as usize;
            let at = second * NANOS;
            let name = format!("checkout-new-{k:04}");
            let node = self.up_node(k + 7).to_owned();
            self.decide(at, Change::Put(small_pod("shop", &name, "checkout-new", None, self.at(at), false)));
            let bound = json!({"spec": {"nodeName": node}});
            self.decide(at + NANOS, merge("Pod", "shop", &name, bound));
            let ready = json!({"status": {"phase": "Running", "conditions": conditions(true, &seconds(self.at(at + 5 * NANOS)))}});
            self.decide(at + 5 * NANOS, merge("Pod", "shop", &name, ready));
            let old = format!("checkout-old-{k:04}");
            let deleting = Change::Terminate {
                namespace: "shop".into(),
                name: old.clone(),
                at: at + 5 * NANOS,
                grace: 30,
                condition: None,
            };
            self.decide(at + 5 * NANOS, deleting);
            self.decide(at + 12 * NANOS, Change::Remove { kind: "Pod", namespace: "shop".into(), name: old });
            self.tally.created += 1;
            self.tally.removed += 1;
        }
        if second % JOB_EVERY == JOB_EVERY / 2 && second + JOB_RUNS + JOB_KEPT < self.config.seconds {
            let n = (second / JOB_EVERY) as usize;
            let (at, name) = (second * NANOS, format!("report-{n:03}"));
            let node = self.up_node(n * 13).to_owned();
            let mut pod = small_pod("batch", &name, "report", Some(&node), self.at(at), true);
            pod["spec"]["tolerations"] = json!([]);
            self.decide(at, Change::Put(pod));
            let done = json!({"status": {"phase": "Succeeded", "conditions": conditions(false, &seconds(self.at(at + JOB_RUNS * NANOS)))}});
            self.decide(at + JOB_RUNS * NANOS, merge("Pod", "batch", &name, done));
            self.decide(
                at + (JOB_RUNS + JOB_KEPT) * NANOS,
                Change::Remove { kind: "Pod", namespace: "batch".into(), name },
            );
            self.tally.created += 1;
            self.tally.removed += 1;
        }
    }

    fn decide(&mut self, at: i64, change: Change) {
        self.decided += 1;
        self.later.insert((at, self.decided), change);
    }

    /// A healthy node for the churn's `k`th pod.
    fn up_node(&self, k: usize) -> &str {
        &self.nodes[self.up[k % self.up.len()]].name
    }

    fn at(&self, nanos: i64) -> jiff::Timestamp {
        at_instant(self.start, nanos)
    }

    fn apply(&self, server: &FakeApiServer, change: Change) {
        match change {
            Change::Put(object) => server.add(object),
            Change::Merge { kind, namespace, name, patch } => {
                if let Some(mut object) = server.object(kind, &namespace, &name) {
                    merge_patch(&mut object, patch);
                    server.add(object);
                }
            }
            Change::Terminate { namespace, name, at, grace, condition } => {
                let Some(mut pod) = server.object("Pod", &namespace, &name) else { return };
                if let Some(condition) = condition {
                    if let Some(conditions) = pod["status"]["conditions"].as_array_mut() {
                        conditions.push(condition);
                    }
                    server.add(pod.clone());
                }
                pod["metadata"]["deletionTimestamp"] = json!(seconds(self.at(at + grace * NANOS)));
                pod["metadata"]["deletionGracePeriodSeconds"] = json!(grace);
                server.add(pod);
            }
            Change::Remove { kind, namespace, name } => {
                server.remove(kind, &namespace, &name);
            }
        }
    }
}

fn merge(kind: &'static str, namespace: &str, name: &str, patch: Value) -> Change {
    Change::Merge { kind, namespace: namespace.to_owned(), name: name.to_owned(), patch }
}

/// RFC 7386: objects merge member by member, `null` removes, anything else replaces.
fn merge_patch(target: &mut Value, patch: Value) {
    match patch {
        Value::Object(members) => {
            if !target.is_object() {
                *target = json!({});
            }
            for (key, value) in members {
                if value.is_null() {
                    target.as_object_mut().map(|object| object.remove(&key));
                } else {
                    merge_patch(&mut target[key.as_str()], value);
                }
            }
        }
        other => *target = other,
    }
}

/// How a pod tolerates `unreachable:NoExecute`: `None` when forever (nothing to do), `Some(None)`
/// not at all, `Some(Some(s))` for `s` seconds.
fn unreachable_tolerated(pod: &Value) -> Option<Option<i64>> {
    let tolerations = pod["spec"]["tolerations"].as_array().map(Vec::as_slice).unwrap_or_default();
    let tolerating = tolerations.iter().find(|t| {
        (t["key"] == "node.kubernetes.io/unreachable" || t["key"].is_null())
            && (t["effect"] == "NoExecute" || t["effect"].is_null())
    });
    match tolerating {
        None => Some(None),
        Some(toleration) => toleration["tolerationSeconds"].as_i64().map(Some),
    }
}

fn at_instant(start: jiff::Timestamp, nanos: i64) -> jiff::Timestamp {
    start + jiff::SignedDuration::from_nanos(nanos)
}

fn duration_between(from: jiff::Timestamp, to: jiff::Timestamp) -> Duration {
    Duration::try_from(to.duration_since(from)).unwrap_or_default()
}

/// A `Time`: whole seconds.
fn seconds(t: jiff::Timestamp) -> String {
    jiff::Timestamp::from_second(t.as_second()).expect("in range").to_string()
}

/// A `MicroTime`, as the API server writes a Lease's.
fn micro(t: jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%S.%6fZ").to_string()
}

trait CeilSecond {
    fn ceil_second(self) -> Self;
}

impl CeilSecond for jiff::Timestamp {
    fn ceil_second(self) -> Self {
        let whole = jiff::Timestamp::from_second(self.as_second()).expect("in range");
        if whole == self { whole } else { whole + jiff::SignedDuration::from_secs(1) }
    }
}

fn node_lease(name: &str, uid: &str, renewed: jiff::Timestamp) -> Value {
    json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": name, "namespace": "kube-node-lease", "uid": format!("lease-{uid}"),
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": name, "uid": uid}]},
        "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": micro(renewed)}})
}

fn controller_lease(renewed: jiff::Timestamp, start: jiff::Timestamp) -> Value {
    let acquired = start - jiff::SignedDuration::from_hours(24);
    json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "kube-controller-manager", "namespace": "kube-system", "uid": "kcm-lease"},
        "spec": {"holderIdentity": "ip-10-0-0-10_0d4c5e3a-7b1f-4c8e-9a2b-3f6d8e1c0a9b", "leaseDurationSeconds": 15,
            "acquireTime": micro(acquired), "renewTime": micro(renewed), "leaseTransitions": 2}})
}

/// A core/v1 Event about `involved` (kind, namespace, name, uid), as the controllers' recorders post it.
fn event(
    namespace: &str,
    about: &str,
    involved: (&str, &str, &str, &str),
    reason: &str,
    message: &str,
    component: &str,
    at: &str,
) -> Value {
    let (kind, involved_namespace, name, uid) = involved;
    let mut object = json!({"kind": kind, "name": name, "uid": uid});
    if !involved_namespace.is_empty() {
        object["namespace"] = json!(involved_namespace);
    }
    json!({"apiVersion": "v1", "kind": "Event",
        "metadata": {"name": format!("{about}.{:x}", hash(&(reason, about, at))), "namespace": namespace, "uid": format!("ev-{:x}", hash(&(about, at, reason)))},
        "involvedObject": object, "reason": reason, "message": message, "type": "Normal",
        "source": {"component": component}, "firstTimestamp": at, "lastTimestamp": at, "count": 1})
}

fn hash(value: &impl std::hash::Hash) -> u64 {
    use std::hash::Hasher;
    let mut hasher = std::hash::DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

/// A pod's conditions: ready, or done.
fn conditions(ready: bool, at: &str) -> Value {
    let status = if ready { "True" } else { "False" };
    json!([{"type": "Initialized", "status": "True", "lastTransitionTime": at},
        {"type": "Ready", "status": status, "lastTransitionTime": at},
        {"type": "ContainersReady", "status": status, "lastTransitionTime": at},
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": at}])
}

/// A churn's pod: the default tolerations (300 s), on `node` when bound.
fn small_pod(
    namespace: &str,
    name: &str,
    owner: &str,
    node: Option<&str>,
    created: jiff::Timestamp,
    running: bool,
) -> Value {
    let created = seconds(created);
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": format!("{:032x}", hash(&(namespace, name))),
            "creationTimestamp": created, "labels": {"app": owner},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner,
                "uid": format!("{:032x}", hash(&owner)), "controller": true}]},
        "spec": {"containers": [{"name": "app", "image": format!("registry.example/{owner}:1")}], "tolerations": [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]},
        "status": {"phase": if running { "Running" } else { "Pending" }}});
    if let Some(node) = node {
        pod["spec"]["nodeName"] = json!(node);
        pod["status"]["conditions"] = conditions(running, &created);
    }
    pod
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_merge_patch_merges_objects_and_replaces_lists() {
        let mut target = json!({"a": {"b": 1, "c": [1, 2]}, "d": 1});
        merge_patch(&mut target, json!({"a": {"c": [3]}, "d": null, "e": "x"}));
        // By hand: `b` kept, the list replaced, `d` removed, `e` added.
        assert_eq!(target, json!({"a": {"b": 1, "c": [3]}, "e": "x"}));
    }

    #[test]
    fn tolerations_of_unreachable_are_read_as_the_taint_eviction_controller_reads_them() {
        let pod = |tolerations: Value| json!({"spec": {"tolerations": tolerations}});
        assert_eq!(unreachable_tolerated(&pod(json!([]))), Some(None));
        let timed = json!([{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]);
        assert_eq!(unreachable_tolerated(&pod(timed)), Some(Some(300)));
        let forever = json!([{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}]);
        assert_eq!(unreachable_tolerated(&pod(forever)), None);
    }
}
