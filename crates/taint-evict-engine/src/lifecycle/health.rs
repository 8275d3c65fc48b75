//! What the node lifecycle controller observes of each node, its flags, and what it is predicted to do.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::model::{Effect, NodeName, Taint, Toleration};
use crate::time::Timestamp;
use crate::tolerate::{Tolerance, TolerationWindow, tolerance};

/// Key of the taint the NLC adds when `Ready` is `Unknown` (the kubelet stopped posting status).
pub const UNREACHABLE: &str = "node.kubernetes.io/unreachable";

/// Key of the taint the NLC adds when `Ready` is `False` (the kubelet says it is not ready).
pub const NOT_READY: &str = "node.kubernetes.io/not-ready";

/// The label that keeps a node out of zone-state counting (any value).
pub const EXCLUDE_DISRUPTION: &str = "node.kubernetes.io/exclude-disruption";

/// Status of a node's `Ready` condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ready {
    /// `True`.
    True,
    /// `False`: posted by the kubelet.
    False,
    /// `Unknown`: written by the NLC when the kubelet went silent (or never reported).
    Unknown,
}

impl Ready {
    /// The status as the API spells it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::True => "True",
            Self::False => "False",
            Self::Unknown => "Unknown",
        }
    }
}

/// A node's `Ready` condition, as far as the NLC reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadyCondition {
    /// `status`.
    pub status: Ready,
    /// `reason` (`NodeStatusUnknown` and `NodeStatusNeverUpdated` mean the NLC wrote it).
    pub reason: Box<str>,
    /// `lastHeartbeatTime` (kubelet clock, whole seconds).
    pub last_heartbeat: Option<Timestamp>,
    /// `lastTransitionTime` (whole seconds; the NLC's clock when it wrote `Unknown`).
    pub last_transition: Option<Timestamp>,
}

impl ReadyCondition {
    /// Whether the NLC wrote this condition (so its transition time is a pass instant).
    #[must_use]
    pub fn is_written_by_controller(&self) -> bool {
        matches!(&*self.reason, "NodeStatusUnknown" | "NodeStatusNeverUpdated")
    }
}

/// The labels a node's zone is read from (all [`ZoneKey::from_labels`] reads).
pub const ZONE_LABELS: [&str; 4] = [
    "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "topology.kubernetes.io/zone",
];

/// A zone as the NLC keys it (`component-helpers/node/topology.GetZoneKey`).
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ZoneKey {
    region: Box<str>,
    zone: Box<str>,
}

impl ZoneKey {
    /// The zone of a node with these labels: `failure-domain.beta.kubernetes.io/*` is preferred over
    /// `topology.kubernetes.io/*`, as upstream does; a node with neither is in the zone `""`.
    pub fn from_labels<'a>(label: impl Fn(&str) -> Option<&'a str>) -> Self {
        let [beta_region, region, beta_zone, zone] = ZONE_LABELS;
        let pick = |beta: &str, ga: &str| label(beta).or_else(|| label(ga)).unwrap_or_default().into();
        Self { region: pick(beta_region, region), zone: pick(beta_zone, zone) }
    }

    /// The zone `zone` of region `region`.
    #[must_use]
    pub fn new(region: impl Into<Box<str>>, zone: impl Into<Box<str>>) -> Self {
        Self { region: region.into(), zone: zone.into() }
    }

    /// The name to show: the zone label, else the region, else `""` (unlabelled nodes).
    #[must_use]
    pub fn name(&self) -> &str {
        if self.zone.is_empty() { &self.region } else { &self.zone }
    }
}

impl fmt::Display for ZoneKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Debug for ZoneKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", format!("{}:{}", self.region, self.zone))
    }
}

/// What the NLC reads of one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeHealth {
    /// `metadata.name`.
    pub name: NodeName,
    /// Its zone key.
    pub zone: ZoneKey,
    /// Labelled [`EXCLUDE_DISRUPTION`]: not counted in zone states, still tainted through its zone.
    pub excluded: bool,
    /// `metadata.creationTimestamp`.
    pub created: Option<Timestamp>,
    /// The `Ready` condition; `None` when the kubelet never posted one (boxed: a dump may list very
    /// many nodes without status).
    pub ready: Option<Box<ReadyCondition>>,
    /// `spec.renewTime` of its Lease in `kube-node-lease`, if the Lease was read and set. Without
    /// it a `Ready=True` node is never taken as silent (its `lastHeartbeatTime` may be minutes old
    /// on a healthy node); its taint is predicted once the controller has marked it `Unknown`.
    pub lease_renewed: Option<Timestamp>,
    /// `spec.taints`, in order: the NLC reads only the `NoExecute` ones with the two keys above (a
    /// dump's reader keeps no other).
    pub taints: Arc<[Taint]>,
    /// A what-if (`plan --down`): its kubelet stops heartbeating at the observation instant at the
    /// latest, after the last heartbeat recorded: it is predicted as a silent node whose heartbeat
    /// is known only to within that span.
    pub down: bool,
    /// Its pods whose `Ready` condition is `True` (or that the controller marked not ready): the
    /// controller writes each one's status (and an Event) in the pass that marks the node `Unknown`,
    /// through its own rate-limited client.
    pub ready_pods: u32,
}

impl NodeHealth {
    /// The `unreachable`/`not-ready` NoExecute taint the node carries, if any.
    #[must_use]
    pub fn condition_taint(&self) -> Option<(ConditionTaint, Option<Timestamp>)> {
        self.taints
            .iter()
            .filter(|taint| taint.is_no_execute())
            .find_map(|taint| ConditionTaint::from_key(&taint.key).map(|key| (key, taint.time_added)))
    }
}

/// The `kube-system/kube-controller-manager` Lease: who runs the controllers, since when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControllerLease {
    /// `spec.acquireTime`: about when the current leader started (with empty memory).
    pub acquired: Option<Timestamp>,
    /// `spec.renewTime`.
    pub renewed: Option<Timestamp>,
    /// `spec.leaseDurationSeconds`.
    pub duration: Option<Duration>,
}

/// kube-controller-manager's NLC flags, named as it names them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Flags {
    /// `--node-monitor-period`: the health pass period (sliding).
    pub node_monitor_period: Duration,
    /// `--node-monitor-grace-period`: silence after which `Ready` becomes `Unknown`.
    pub node_monitor_grace_period: Duration,
    /// `--node-startup-grace-period`: the grace of a node that never posted `Ready`.
    pub node_startup_grace_period: Duration,
    /// `--node-eviction-rate`: taints per second per zone (Normal, and Full while another zone is not).
    pub node_eviction_rate: f32,
    /// `--secondary-node-eviction-rate`: the rate of a large zone in partial disruption.
    pub secondary_node_eviction_rate: f32,
    /// `--unhealthy-zone-threshold`: the not-ready fraction that makes a zone partially disrupted.
    pub unhealthy_zone_threshold: f32,
    /// `--large-cluster-size-threshold`: a zone with more counted nodes than this is large.
    pub large_cluster_size_threshold: u32,
    /// `--kube-api-qps`: the requests a second the controller's own client makes at most (its token
    /// bucket's rate; 0 is client-go's 5, a negative value no limit).
    pub kube_api_qps: f32,
    /// `--kube-api-burst`: that bucket's depth (0 is client-go's 10).
    pub kube_api_burst: u32,
}

impl Flags {
    /// The defaults of kube-controller-manager `1.minor` (grace 40 s before 1.32, 50 s from 1.32).
    #[must_use]
    pub fn defaults_for(minor: u32) -> Self {
        Self {
            node_monitor_period: Duration::from_secs(5),
            node_monitor_grace_period: Duration::from_secs(if minor >= 32 { 50 } else { 40 }),
            node_startup_grace_period: Duration::from_secs(60),
            node_eviction_rate: 0.1,
            secondary_node_eviction_rate: 0.01,
            unhealthy_zone_threshold: 0.55,
            large_cluster_size_threshold: 50,
            kube_api_qps: 20.0,
            kube_api_burst: 30,
        }
    }
}

/// Everything [`predict`](super::predict) reads: a snapshot and what is known about the controller.
#[derive(Clone, Debug)]
pub struct Observation {
    /// When the snapshot was taken.
    pub now: Timestamp,
    /// Every node.
    pub nodes: Vec<NodeHealth>,
    /// The controller's leader Lease; `None` when not read or absent (no leader election).
    pub controller: Option<ControllerLease>,
    /// The controller's flags.
    pub flags: Flags,
    /// A `Ready=True` node whose last heartbeat (Lease renewal or `lastHeartbeatTime`) is older than
    /// this is taken as silent: kubelets renew every 10 s by default.
    pub silent_after: Duration,
}

impl Observation {
    /// When the input was taken, at the earliest: the newest heartbeat or renewal it holds (a node's
    /// Lease or `lastHeartbeatTime`, the controller's Lease); `None` when it holds none.
    #[must_use]
    pub fn taken(&self) -> Option<Timestamp> {
        // The controller's `Unknown` mark is an instant it wrote too.
        let nodes = self.nodes.iter().flat_map(|node| {
            let ready = node.ready.as_ref();
            let marked = ready.filter(|ready| ready.is_written_by_controller()).and_then(|ready| ready.last_transition);
            [node.lease_renewed, ready.and_then(|ready| ready.last_heartbeat), marked].into_iter().flatten()
        });
        let controller = self.controller.as_ref().and_then(|lease| lease.renewed);
        nodes.chain(controller).max()
    }

    /// When the input was taken ([`Observation::taken`]), when that is so long before `now` that
    /// the input must be old, not its kubelets silent: more than `silent_after` when it holds the
    /// controller's Lease (renewed every 2 s, so the input was taken about then); without it, more
    /// than the grace period and a monitor period (by then the controller would have marked silent
    /// nodes `Unknown`, a later instant the input would hold).
    #[must_use]
    pub fn read_late(&self) -> Option<Timestamp> {
        let nanos = |duration: Duration| i128::try_from(duration.as_nanos()).unwrap_or(i128::MAX);
        let bound = match self.controller.as_ref().and_then(|lease| lease.renewed) {
            Some(_) => nanos(self.silent_after),
            None => nanos(self.flags.node_monitor_grace_period) + nanos(self.flags.node_monitor_period),
        };
        self.taken().filter(|taken| self.now.as_nanos() - taken.as_nanos() > bound)
    }

    /// A snapshot read late ([`Observation::read_late`]): its heartbeats stopped when it was
    /// written, the kubelets did not. So the controller is predicted as of then:
    /// a node heartbeating then is not predicted to go silent later, one silent then still is, its
    /// windows where they were (docs/node-lifecycle.md, "A dump read late"). Returns that instant,
    /// which `now` becomes.
    pub fn judge_when_taken(&mut self) -> Option<Timestamp> {
        let taken = self.read_late()?;
        self.now = taken;
        Some(taken)
    }

    /// [`Observation::judge_when_taken`] for a what-if at `now` (`--down`): silence is judged when the
    /// snapshot was taken, and each `Ready=True` node heard from within `silent_after` of then is
    /// taken to heartbeat until `now` (its Lease renewed then; the controller's leader too, when it
    /// held its Lease then); a node going down in the what-if goes down at `now`. Returns when the
    /// snapshot was taken, when it was read late.
    pub fn carry_forward(&mut self) -> Option<Timestamp> {
        let taken = self.read_late()?;
        for node in &mut self.nodes {
            let heard = NodeHealth { down: false, ..node.clone() };
            if node.lease_renewed.is_some() && !is_unsettled(&heard, taken, self.silent_after) {
                node.lease_renewed = Some(self.now);
            }
        }
        // So does the controller's leader, when it held its Lease then.
        if let Some(lease) = &mut self.controller
            && let (Some(renewed), Some(duration)) = (lease.renewed, lease.duration)
            && taken.as_nanos() - renewed.as_nanos() <= i128::try_from(duration.as_nanos()).unwrap_or(i128::MAX)
        {
            lease.renewed = Some(self.now);
        }
        Some(taken)
    }
}

/// The taint the NLC adds, by condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ConditionTaint {
    /// [`UNREACHABLE`], for `Ready=Unknown`.
    Unreachable,
    /// [`NOT_READY`], for `Ready=False`.
    NotReady,
}

impl ConditionTaint {
    /// The taint key.
    #[must_use]
    pub fn key(self) -> &'static str {
        match self {
            Self::Unreachable => UNREACHABLE,
            Self::NotReady => NOT_READY,
        }
    }

    /// The condition taint with this key, if it is one.
    #[must_use]
    pub fn from_key(key: &str) -> Option<Self> {
        match key {
            UNREACHABLE => Some(Self::Unreachable),
            NOT_READY => Some(Self::NotReady),
            _ => None,
        }
    }

    /// The taint for a `Ready` status other than `True`.
    pub(super) fn for_status(status: Ready) -> Option<Self> {
        match status {
            Ready::True => None,
            Ready::False => Some(Self::NotReady),
            Ready::Unknown => Some(Self::Unreachable),
        }
    }
}

/// Why a taint is expected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Basis {
    /// The kubelet stopped heartbeating: grace period, then `Ready=Unknown`.
    LostHeartbeat,
    /// The kubelet posted `Ready=False`.
    NotReady,
    /// The node never posted a `Ready` condition: startup grace period.
    NeverReady,
    /// The controller (re)started, which restarted the countdown or removes and re-adds the taint.
    ControllerRestart,
}

impl Basis {
    /// The name used in output.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::LostHeartbeat => "lost-heartbeat",
            Self::NotReady => "not-ready",
            Self::NeverReady => "never-ready",
            Self::ControllerRestart => "controller-restart",
        }
    }
}

/// The NoExecute taint the NLC is expected to add to a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PredictedTaint {
    /// Which taint.
    pub key: ConditionTaint,
    /// The earliest instant it can be written.
    pub earliest: Timestamp,
    /// The latest instant it can be written; `None` when the zone may hold it back for good.
    pub latest: Option<Timestamp>,
    /// Why.
    pub basis: Basis,
    /// Nodes of the same zone that may be tainted before this one (the queue's order is random).
    pub queued_with: usize,
    /// The window is one of its zone's queue's slots, the zone predicted at scale: every node queued
    /// with it shares it, which is said once for the zone (docs/node-lifecycle.md, "At scale").
    pub drained: bool,
}

/// Why the NLC will not taint a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HeldReason {
    /// Its zone is partially disrupted and not larger than `--large-cluster-size-threshold`: rate 0.
    PartialDisruption,
    /// Every counted zone is fully disrupted (master disruption mode): no NoExecute taint is added,
    /// and the existing ones are removed.
    AllZonesDown,
    /// `--node-eviction-rate` is 0: a zone's queue starts as a token bucket of rate 0 and burst 1,
    /// one taint and then none (`SwapLimiter` keeps it, the rate not changing), and its one token is
    /// spent.
    NoEvictionRate,
    /// The node is back (`Ready=True`, heard from within `--silent-after`) and still carries the
    /// controller's `unreachable`/`not-ready` taint: the controller removes it at its next pass.
    Recovered,
}

impl HeldReason {
    /// The name used in output.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PartialDisruption => "partial-disruption",
            Self::AllZonesDown => "all-zones-down",
            Self::NoEvictionRate => "no-eviction-rate",
            Self::Recovered => "recovered",
        }
    }
}

/// The controller holds a node's taint back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    /// Why.
    pub reason: HeldReason,
    /// The node's zone.
    pub zone: ZoneKey,
}

/// The answer for one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeForecast {
    /// The node.
    pub name: NodeName,
    /// Its zone.
    pub zone: ZoneKey,
    /// Its `Ready` status (`None`: never posted).
    pub ready: Option<Ready>,
    /// Its last heartbeat seen (Lease renewal or `lastHeartbeatTime`, the later).
    pub last_heartbeat: Option<Timestamp>,
    /// The taint expected; `None` for a healthy node, a node already tainted, or a held one.
    pub taint: Option<PredictedTaint>,
    /// Set when the controller will not add (or will remove) its NoExecute taint.
    pub held: Option<Held>,
}

/// A zone's disruption state (`ComputeZoneState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ZoneState {
    /// Fewer not-ready nodes than the thresholds.
    Normal,
    /// More than 2 not ready, and at least `--unhealthy-zone-threshold` of the zone.
    PartialDisruption,
    /// No node ready.
    FullDisruption,
}

impl ZoneState {
    /// The name used in output.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Normal => "Normal",
            Self::PartialDisruption => "PartialDisruption",
            Self::FullDisruption => "FullDisruption",
        }
    }
}

/// The answer for one zone, at the snapshot.
#[derive(Clone, Debug, PartialEq)]
pub struct ZoneForecast {
    /// The zone.
    pub zone: ZoneKey,
    /// Its state now.
    pub state: ZoneState,
    /// Counted nodes (not excluded).
    pub nodes: usize,
    /// Counted nodes whose `Ready` is not `True`.
    pub not_ready: usize,
    /// The taint rate the state gives it (0: no taints).
    pub rate_per_second: f32,
    /// Predicted at scale: its queue drained one node per token in an order nobody sees, said once
    /// for the zone rather than once per node (`None` for the exact search, or nothing queued).
    pub drain: Option<Drain>,
}

/// A zone's queue drained at its last state's rate: every node queued is tainted in one of its
/// slots, which one nobody can tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Drain {
    /// Nodes queued.
    pub nodes: usize,
    /// Time between two slots.
    pub every: Duration,
    /// The first slot, at the earliest.
    pub first: Timestamp,
    /// The last slot, at the latest.
    pub last: Timestamp,
}

/// What [`predict`](super::predict) answers.
#[derive(Clone, Debug, PartialEq)]
pub struct Prediction {
    /// Every node, in input order.
    pub nodes: Vec<NodeForecast>,
    /// Every zone, by key.
    pub zones: Vec<ZoneForecast>,
    /// Whether the controller's pass phase was recovered (windows about 1 s wide) rather than unknown
    /// (windows one monitor period wide).
    pub phase_known: bool,
    /// The instant it was made at: the observation's (for a dump read late, when it was taken).
    pub at: Timestamp,
}

/// When a pod would be deleted once a predicted taint is added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PredictedDeletion {
    /// The earliest instant.
    pub earliest: Timestamp,
    /// The latest instant; `None` when the taint may never come.
    pub latest: Option<Timestamp>,
    /// The deciding `tolerationSeconds`, as written; `None` when the taint is untolerated.
    pub toleration_seconds: Option<i64>,
}

/// How many nodes are not `Ready=True`, or not heard from within `silent_after` (their Lease; a
/// node without one is never taken as silent). With none, [`predict`](super::predict) foresees no taint and holds
/// none back, and a caller may skip it: this costs one pass over the nodes, while [`predict`](super::predict)'s
/// search grows with the square of this count.
#[must_use]
pub fn unsettled(observation: &Observation) -> usize {
    observation.nodes.iter().filter(|node| is_unsettled(node, observation.now, observation.silent_after)).count()
}

/// Whether `node` is not `Ready=True`, or not heard from within `silent_after` of `now` (see
/// [`unsettled`]): only such a node can be tainted or held back by the controller.
#[must_use]
pub fn is_unsettled(node: &NodeHealth, now: Timestamp, silent_after: Duration) -> bool {
    if node.down {
        return true;
    }
    let silent_after = i128::try_from(silent_after.as_nanos()).unwrap_or(i128::MAX);
    let Some(ready) = node.ready.as_ref().filter(|ready| ready.status == Ready::True) else { return true };
    match node.lease_renewed {
        None => false,
        Some(renewed) => {
            let last = ready.last_heartbeat.map_or(renewed, |beat| beat.max(renewed));
            now.as_nanos().saturating_sub(last.as_nanos()) > silent_after
        }
    }
}

/// Whether `node` is back (`Ready=True`, its Lease renewed within `silent_after` of `now`) while it
/// still carries the controller's `unreachable`/`not-ready` NoExecute taint: the controller removes
/// that taint at its next pass (docs/node-lifecycle.md, "A node back").
#[must_use]
pub fn is_back_while_tainted(node: &NodeHealth, now: Timestamp, silent_after: Duration) -> bool {
    node.condition_taint().is_some() && is_back(node, now, silent_after)
}

/// Whether `node` is heard from: `Ready=True` and its Lease renewed within `silent_after` of `now`.
#[must_use]
pub fn is_back(node: &NodeHealth, now: Timestamp, silent_after: Duration) -> bool {
    node.ready.as_ref().is_some_and(|ready| ready.status == Ready::True)
        && node.lease_renewed.is_some()
        && !is_unsettled(node, now, silent_after)
}

/// The forecast of a node back while still tainted ([`is_back_while_tainted`]): no taint expected,
/// held as [`HeldReason::Recovered`]; `None` for any other node.
#[must_use]
pub fn back_forecast(node: &NodeHealth, now: Timestamp, silent_after: Duration) -> Option<NodeForecast> {
    is_back_while_tainted(node, now, silent_after).then(|| NodeForecast {
        name: node.name.clone(),
        zone: node.zone.clone(),
        ready: Some(Ready::True),
        last_heartbeat: node.lease_renewed.max(node.ready.as_ref().and_then(|ready| ready.last_heartbeat)),
        taint: None,
        held: Some(Held { reason: HeldReason::Recovered, zone: node.zone.clone() }),
    })
}

/// When a pod with `tolerations`, on a node whose NoExecute taints are `taints`, is deleted after
/// `predicted` is added: the taint's own window for a pod that does not tolerate every taint, that
/// window moved by the deciding `tolerationSeconds` otherwise, and `None` when tolerated forever.
/// The taint-eviction controller starts the clock when it sees the taint (milliseconds after).
#[must_use]
pub fn deletion(predicted: &PredictedTaint, taints: &[Taint], tolerations: &[Toleration]) -> Option<PredictedDeletion> {
    let mut all: Vec<Taint> = taints
        .iter()
        .filter(|taint| taint.is_no_execute() && ConditionTaint::from_key(&taint.key).is_none())
        .cloned()
        .collect();
    all.push(Taint::new(predicted.key.key(), "", Effect::NoExecute));
    let (nanos, toleration_seconds) = match tolerance(&all, tolerations) {
        Tolerance::Untolerated => (0, None),
        Tolerance::Tolerated(TolerationWindow::Forever) => return None,
        Tolerance::Tolerated(TolerationWindow::After { nanos, seconds }) => (nanos, Some(seconds)),
    };
    Some(PredictedDeletion {
        earliest: predicted.earliest.add_nanos(nanos),
        latest: predicted.latest.map(|latest| latest.add_nanos(nanos)),
        toleration_seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_without_status_takes_a_pointer_for_its_ready_condition() {
        assert_eq!(size_of::<NodeHealth>(), 112);
    }
}
