//! From a snapshot and a request to the plan: the replay, then what the snapshot alone does not
//! show — history (a swapped taint, an edited toleration), the node lifecycle controller's taints to
//! come and to go, DRA device taints, pods stuck terminating — and the roll-up per owner.

use std::collections::BTreeMap;

use crate::devices::{DeviceTaints, DeviceTolerance};
use crate::hash::HashKey;
use crate::lifecycle::{ConditionTaint, Flags, NodeHealth, Observation, Prediction, ZoneKey, predict, unsettled};
use crate::model::{NodeName, PodKey, Taint};
use crate::replay::{Host, PodsByNode, replay_found, replay_with};
use crate::snapshot::{NodesByName, Snapshot, TolerationsWritten, WhatIf, apply_what_if};
use crate::time::Timestamp;

use crate::plan::{
    Assumed, Plan, Replicas, mark_edited, mark_recovering, mark_stuck, mark_swapped, owner_losses, show_devices,
    show_in_plan,
};

/// What a plan is asked for.
#[derive(Clone, Copy)]
pub struct Request<'a> {
    /// The nodes to plan, as indices into the snapshot, in output order.
    pub selected: &'a [usize],
    /// The taints added and removed on the selected nodes (`--taint`, `--remove-taint`).
    pub what_if: &'a [WhatIf],
    /// The evaluation instant.
    pub now: Timestamp,
    /// The node lifecycle controller's flags (its monitor period and grace period are read here).
    pub flags: Flags,
    /// What the what-if assumed, to be said in the plan; with nodes going down, the plan rolls its
    /// deletions up per owner.
    pub assumed: Option<&'a Assumed>,
    /// Only the pods (and owners) of this namespace are kept.
    pub namespace: Option<&'a str>,
    /// Who runs the replay's parts, and the key of its hashes.
    pub host: Host<'a>,
    /// What was found once for many plans over this snapshot; `None`: found for this one.
    pub tables: Option<&'a Tables<'a>>,
}

/// What many plans over one snapshot share, found once: the pods of each node and each owner's
/// running pods (an audit's outages, docs/audit.md). A plan is the same with them or without.
#[derive(Clone, Debug)]
pub struct Tables<'s> {
    pods: Option<PodsByNode>,
    replicas: Replicas<'s>,
    named: NodesByName<'s>,
}

impl<'s> Tables<'s> {
    /// The tables of `snapshot`, hashed with `key`.
    #[must_use]
    pub fn new(snapshot: &'s Snapshot, key: HashKey) -> Self {
        Self {
            pods: PodsByNode::new(snapshot, key),
            replicas: Replicas::count(snapshot),
            named: NodesByName::new(snapshot),
        }
    }

    /// The snapshot's nodes by name.
    #[must_use]
    pub fn named(&self) -> &NodesByName<'s> {
        &self.named
    }
}

/// What the input tells beside the snapshot, each `None` (or empty) when it was not read.
#[derive(Clone, Copy, Debug, Default)]
pub struct Evidence<'a> {
    /// By node, when its Events last said it became not ready (a swapped taint's first countdown).
    pub not_ready: Option<&'a BTreeMap<NodeName, Timestamp>>,
    /// By pod, when its tolerations were last written after its creation.
    pub tolerations_written: Option<&'a BTreeMap<PodKey, TolerationsWritten>>,
    /// The node lifecycle controller: what it observes, and what it is predicted to do.
    pub lifecycle: Option<Foresight<'a>>,
    /// The device-taint controller's view of the DRA objects, when a pod uses a claim.
    pub devices: Option<&'a DeviceTaints<'a>>,
}

/// The node lifecycle controller as a plan sees it.
#[derive(Clone, Copy, Debug)]
pub struct Foresight<'a> {
    /// Node health as observed at the evaluation instant.
    pub observation: &'a Observation,
    /// What it is predicted to do; `None` when no node is silent or not ready.
    pub prediction: Option<&'a Prediction>,
}

impl Foresight<'_> {
    /// Whether the controller is expected to act on some node (taint it, or hold its taint back).
    #[must_use]
    pub fn acts(&self) -> bool {
        self.prediction.is_some_and(|p| p.nodes.iter().any(|n| n.taint.is_some() || n.held.is_some()))
    }
}

/// What a plan says beside its rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Warning {
    /// A `--remove-taint` matches no taint of a selected node (`kubectl taint` fails with
    /// `taint "KEY" not found`; a what-if goes on).
    NoSuchTaint {
        /// The removal as written: `KEY` or `KEY:EFFECT`.
        removal: String,
        /// The node.
        node: NodeName,
    },
    /// NoExecute device taints without `timeAdded`: the device-taint controller ignores them.
    UndatedDeviceTaints(usize),
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoSuchTaint { removal, node } => {
                write!(f, "--remove-taint {removal}: node \"{node}\" has no such taint")
            }
            Self::UndatedDeviceTaints(n) => write!(
                f,
                "{n} NoExecute device taint(s) without timeAdded: no deadline (the API server always sets it; the \
                 device-taint controller ignores such a taint)"
            ),
        }
    }
}

/// The plan of `request` over `snapshot`, and its warnings.
///
/// The replay decides each pod's verdict and deadline from the taints the nodes carry
/// (docs/upstream.md); then, in order: a swapped taint keeps its first countdown and an edited
/// toleration its countdown of then ([`mark_swapped`], [`mark_edited`]); the taints the node
/// lifecycle controller is expected to add are shown, and put back after a what-if removes one from
/// a node still silent ([`show_in_plan`]; docs/plan.md); a node back loses the controller's taint at
/// its next pass ([`mark_recovering`]); DRA device taints are followed ([`show_devices`]); pods
/// stuck terminating are marked ([`mark_stuck`]); with nodes going down, deletions are rolled up per
/// owner ([`owner_losses`]); last, only `request.namespace`'s pods are kept.
#[must_use]
pub fn build<'s>(snapshot: &'s Snapshot, request: &Request<'_>, evidence: &Evidence<'_>) -> (Plan<'s>, Vec<Warning>) {
    let (selected, what_if, now) = (request.selected, request.what_if, request.now);
    let mut warnings = no_such_taints(snapshot, selected, what_if);
    let mut plan = match request.tables.and_then(|tables| tables.pods.as_ref()) {
        Some(pods) => replay_found(snapshot, selected, what_if, now, request.host, pods),
        None => replay_with(snapshot, selected, what_if, now, request.host),
    };
    if let Some(not_ready) = evidence.not_ready {
        mark_swapped(&mut plan, snapshot, not_ready, request.flags.node_monitor_period);
    }
    if let Some(written) = evidence.tolerations_written {
        mark_edited(&mut plan, written);
    }
    if let Some(lifecycle) = evidence.lifecycle.filter(Foresight::acts)
        && let Some(prediction) = lifecycle.prediction
    {
        let named = request.tables.map(|tables| &tables.named);
        show_in_plan(&mut plan, snapshot, named, &lifecycle.observation.nodes, prediction);
    }
    if let Some(lifecycle) = &evidence.lifecycle {
        retaint_after_removal(&mut plan, snapshot, request, lifecycle.observation);
    }
    // A node back that still carries the controller's taint loses it at the next pass (not when a
    // what-if adds one: that asks what if the node were not back).
    if let Some(lifecycle) = &evidence.lifecycle
        && !what_if.iter().any(|change| matches!(change, WhatIf::Taint(_)))
    {
        let observation = lifecycle.observation;
        let period = request.flags.node_monitor_period;
        mark_recovering(&mut plan, &observation.nodes, observation.now, observation.silent_after, period);
    }
    if let Some(taints) = evidence.devices {
        show_devices(&mut plan, taints);
        let pods = plan.nodes.iter().flat_map(|node| &node.pods);
        let undated = pods
            .flat_map(|pod| pod.devices().iter())
            .filter(|device| device.deadline.is_none() && device.tolerance != DeviceTolerance::Forever)
            .count();
        if undated > 0 {
            warnings.push(Warning::UndatedDeviceTaints(undated));
        }
    }
    let grace = request.flags.node_monitor_grace_period;
    match &evidence.lifecycle {
        Some(lifecycle) => mark_stuck(&mut plan, &lifecycle.observation.nodes, grace),
        None => mark_stuck(&mut plan, &taints_only(snapshot), grace),
    }
    plan.assumed = request.assumed.cloned();
    if request.assumed.is_some_and(|assumed| !assumed.down.is_empty()) {
        let mut owners = owner_losses(&plan, snapshot, request.tables.map(|tables| &tables.replicas));
        if let Some(namespace) = request.namespace {
            owners.retain(|owner| **owner.namespace == *namespace);
        }
        plan.owners = Some(owners);
    }
    if let Some(namespace) = request.namespace {
        for node in &mut plan.nodes {
            node.pods.retain(|p| p.key().namespace() == namespace);
        }
    }
    (plan, warnings)
}

/// A what-if that removes the controller's own taint from a node it still sees silent or not
/// ready: the controller puts it back, as for a node never tainted (docs/plan.md).
fn retaint_after_removal(plan: &mut Plan<'_>, snapshot: &Snapshot, request: &Request<'_>, observed: &Observation) {
    let removes_condition_taint = request
        .what_if
        .iter()
        .any(|change| matches!(change, WhatIf::RemoveTaint { key, .. } if ConditionTaint::from_key(key).is_some()));
    if !removes_condition_taint {
        return;
    }
    let mut observation = observed.clone();
    for node in request.selected.iter().map(|&i| &snapshot.nodes[i]) {
        if let Some(health) = observation.nodes.iter_mut().find(|health| health.name == node.name) {
            health.taints = apply_what_if(&health.taints, request.what_if, request.now);
        }
    }
    if unsettled(&observation) > 0 {
        let mut prediction = predict(&observation);
        // Removed at `now`: put back no sooner.
        for taint in prediction.nodes.iter_mut().filter_map(|forecast| forecast.taint.as_mut()) {
            taint.earliest = taint.earliest.max(request.now);
            taint.latest = taint.latest.map(|latest| latest.max(request.now));
        }
        show_in_plan(plan, snapshot, None, &observation.nodes, &prediction);
    }
}

/// One warning per selected node a `--remove-taint` matches no taint of.
fn no_such_taints(snapshot: &Snapshot, selected: &[usize], what_if: &[WhatIf]) -> Vec<Warning> {
    let mut warnings = Vec::new();
    for change in what_if {
        let WhatIf::RemoveTaint { key, effect } = change else { continue };
        let matches = |t: &Taint| *t.key == **key && effect.as_ref().is_none_or(|e| *e == t.effect);
        let added = what_if.iter().any(|w| matches!(w, WhatIf::Taint(t) if matches(t)));
        for node in selected.iter().map(|&i| &snapshot.nodes[i]) {
            if !added && !node.all_taints().any(matches) {
                let removal = effect.as_ref().map_or_else(|| key.clone(), |e| format!("{key}:{e}"));
                warnings.push(Warning::NoSuchTaint { removal, node: node.name.clone() });
            }
        }
    }
    warnings
}

/// Node health as far as the snapshot's taints say (the `unreachable` taint), for the pods stuck
/// terminating when node status was not read (a live cluster, or a dump without it).
#[must_use]
pub fn taints_only(snapshot: &Snapshot) -> Vec<NodeHealth> {
    let nodes = snapshot.nodes.iter().filter(|node| !node.taints.is_empty());
    nodes
        .map(|node| NodeHealth {
            name: node.name.clone(),
            zone: ZoneKey::default(),
            excluded: false,
            created: None,
            ready: None,
            lease_renewed: None,
            taints: node.taints.clone(),
            down: false,
            ready_pods: 0,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;
    use std::time::Duration;

    use super::{Evidence, Foresight, Request, Warning, build};
    use crate::lifecycle::{Flags, NodeHealth, Observation, Ready, ReadyCondition, ZoneKey, predict};
    use crate::model::{Effect, Operator, Pod, PodKey, Taint, Toleration};
    use crate::plan::{Assumed, Basis, Verdict};
    use crate::replay::Host;
    use crate::snapshot::{Owner, Snapshot, SnapshotNode, SnapshotPod, WhatIf};
    use crate::time::Timestamp;

    const UNREACHABLE: &str = "node.kubernetes.io/unreachable";

    fn t(seconds: i64) -> Timestamp {
        Timestamp::from_unix_seconds(1_800_000_000 + seconds)
    }

    /// `namespace/name` on `node`, tolerating `unreachable` for `seconds`, of ReplicaSet `owner`.
    fn pod(namespace: &str, name: &str, node: &str, seconds: i64, owner: Option<&str>) -> SnapshotPod {
        SnapshotPod {
            pod: Pod {
                key: PodKey::new(namespace, name),
                uid: name.into(),
                node: Some(node.into()),
                tolerations: Arc::from([Toleration {
                    key: UNREACHABLE.into(),
                    operator: Operator::Exists,
                    value: "".into(),
                    effect: Some(Effect::NoExecute),
                    seconds: Some(seconds),
                }]),
            },
            bound_at: Some(t(-1000)),
            phase: "Running".into(),
            terminating: false,
            deletion_timestamp: None,
            ready: crate::snapshot::PodReady::Yes,
            claims: None,
            owner: owner.map(|name| Owner::new("ReplicaSet", name, name)),
            tolerations_edited: None,
        }
    }

    /// n1 tainted `unreachable` at +0; n2 untainted. web has a replica on each, db one on n1.
    fn snapshot() -> Snapshot {
        let taint = Taint::new(UNREACHABLE, "", Effect::NoExecute).with_time_added(t(0));
        Snapshot {
            nodes: vec![
                SnapshotNode::new("n1".into(), BTreeMap::new(), [taint]),
                SnapshotNode::new("n2".into(), BTreeMap::new(), []),
            ],
            pods: vec![
                pod("a", "web-1", "n1", 60, Some("web")),
                pod("a", "web-2", "n2", 60, Some("web")),
                pod("b", "db-0", "n1", 300, Some("db")),
            ],
            ..Snapshot::default()
        }
    }

    fn request<'a>(selected: &'a [usize], what_if: &'a [WhatIf]) -> Request<'a> {
        Request {
            selected,
            what_if,
            now: t(10),
            flags: Flags::defaults_for(29),
            assumed: None,
            namespace: None,
            host: Host::default(),
            tables: None,
        }
    }

    /// `name` of the lifecycle controller's view at +10 s: silent since -100 s when `silent`.
    fn health(name: &str, silent: bool, taints: &[Taint]) -> NodeHealth {
        let heartbeat = if silent { t(-100) } else { t(8) };
        NodeHealth {
            name: name.into(),
            zone: ZoneKey::new("r", "z"),
            excluded: false,
            created: Some(t(-5000)),
            ready: Some(Box::new(ReadyCondition {
                status: if silent { Ready::Unknown } else { Ready::True },
                reason: Box::default(),
                last_heartbeat: Some(heartbeat),
                last_transition: Some(t(-5000)),
            })),
            lease_renewed: Some(heartbeat),
            taints: taints.to_vec().into(),
            down: false,
            ready_pods: 0,
        }
    }

    #[test]
    fn a_plan_says_which_removals_match_nothing_and_keeps_the_namespace_asked_for() {
        let snapshot = snapshot();
        let removals = [WhatIf::RemoveTaint { key: "maintenance".into(), effect: None }];
        let mut asked = request(&[0, 1], &removals);
        asked.namespace = Some("b");
        let (plan, warnings) = build(&snapshot, &asked, &Evidence::default());
        let nodes = ["n1", "n2"].map(|node| Warning::NoSuchTaint { removal: "maintenance".into(), node: node.into() });
        assert_eq!(warnings, nodes);
        assert_eq!(warnings[0].to_string(), "--remove-taint maintenance: node \"n1\" has no such taint");
        let pods: Vec<&str> = plan.nodes.iter().flat_map(|n| &n.pods).map(|p| p.key().name()).collect();
        assert_eq!(pods, ["db-0"]);
        assert!(plan.owners.is_none(), "no roll-up without nodes going down");
    }

    #[test]
    fn nodes_going_down_roll_the_deletions_up_per_owner() {
        let snapshot = snapshot();
        let assumed = Assumed { down: vec!["n1".into()], ..Assumed::default() };
        let mut asked = request(&[0], &[]);
        asked.assumed = Some(&assumed);
        let (plan, _) = build(&snapshot, &asked, &Evidence::default());
        assert_eq!(plan.assumed.as_ref(), Some(&assumed));
        let owners: BTreeMap<&str, (u32, u32, bool)> = plan
            .owners
            .iter()
            .flatten()
            .map(|loss| (loss.owner.name(), (loss.pods, loss.deleted, loss.none_left())))
            .collect();
        // web keeps its replica on n2; db loses its one.
        assert_eq!(owners, BTreeMap::from([("db", (1, 1, true)), ("web", (2, 1, false))]));
        asked.namespace = Some("a");
        let (plan, _) = build(&snapshot, &asked, &Evidence::default());
        let owners: Vec<&str> = plan.owners.iter().flatten().map(|loss| loss.owner.name()).collect();
        assert_eq!(owners, ["web"]);
    }

    #[test]
    fn removing_the_taint_of_a_node_still_silent_counts_from_its_return() {
        let snapshot = snapshot();
        let taint = snapshot.nodes[0].taints.to_vec();
        let observation = Observation {
            now: t(10),
            nodes: vec![health("n1", true, &taint), health("n2", false, &[])],
            controller: None,
            flags: Flags { node_monitor_period: Duration::from_secs(5), ..Flags::defaults_for(29) },
            silent_after: Duration::from_secs(12),
        };
        let prediction = predict(&observation);
        let evidence = Evidence {
            lifecycle: Some(Foresight { observation: &observation, prediction: Some(&prediction) }),
            ..Evidence::default()
        };
        let (plan, _) = build(&snapshot, &request(&[0], &[]), &evidence);
        let web = &plan.nodes[0].pods[0];
        assert_eq!((web.verdict, web.evict_at), (Verdict::EvictAt, Some(t(60))));

        let removed = [WhatIf::RemoveTaint { key: UNREACHABLE.into(), effect: None }];
        let (plan, warnings) = build(&snapshot, &request(&[0], &removed), &evidence);
        assert!(warnings.is_empty(), "{warnings:?}");
        let web = &plan.nodes[0].pods[0];
        // Put back at the controller's next pass, no sooner than the removal: not unaffected.
        assert_eq!((web.verdict, web.basis), (Verdict::EvictAt, Some(Basis::PredictedTaint)));
        let earliest = web.evict_at.expect("a deadline");
        assert!(earliest >= t(70) && earliest <= t(76), "{earliest:?}");
    }
}
