//! Showing a [`Prediction`] in a [`Plan`] (docs/node-lifecycle.md): each node gains its health and expected
//! taint, and the pods of a node about to be tainted get the deletion window that taint opens.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use super::model::{Basis, NodeLifecycle, Plan, Verdict, sort_pods};
use crate::lifecycle::{
    ConditionTaint, Held, HeldReason, NodeForecast, NodeHealth, Prediction, Ready, deletion, is_back,
};
use crate::model::{NodeName, Taint};
use crate::snapshot::{NodesByName, Snapshot};
use crate::time::Timestamp;

/// Adds `prediction` (made over `nodes`, in the same order) to `plan`, replayed from `snapshot`;
/// `named`: the snapshot's nodes by name, when found once for many plans.
///
/// A pod already due from a taint the node carries keeps that deadline (its countdown runs on, as
/// upstream keeps it) unless the predicted taint is one it does not tolerate, due for certain before;
/// a pod the node's taints leave alone becomes `evict-at` the
/// predicted window (or `never` when it tolerates the predicted taint forever), with the basis
/// [`Basis::PredictedTaint`]. When every zone is down the controller removes the condition taints,
/// which cancels every deletion not yet due: on such a node that only carries condition taints,
/// those pods are `unaffected`.
pub fn show_in_plan(
    plan: &mut Plan,
    snapshot: &Snapshot,
    named: Option<&NodesByName<'_>>,
    nodes: &[NodeHealth],
    prediction: &Prediction,
) {
    let index: HashMap<&NodeName, usize> =
        prediction.nodes.iter().enumerate().map(|(i, forecast)| (&forecast.name, i)).collect();
    let tainted: HashSet<&NodeName> = plan
        .nodes
        .iter()
        .filter(|node| index.get(&node.name).is_some_and(|&i| prediction.nodes[i].taint.is_some()))
        .map(|node| &node.name)
        .collect();
    // Their taints as the snapshot has them (the first node of a name).
    let mut taints: HashMap<&NodeName, &[Taint]> = HashMap::new();
    match named {
        Some(named) => {
            let first = tainted.iter().filter_map(|&name| named.first(name)).map(|i| &snapshot.nodes[i]);
            taints.extend(first.map(|node| (&node.name, &*node.taints)));
        }
        None => {
            for node in snapshot.nodes.iter().filter(|node| tainted.contains(&node.name)) {
                taints.entry(&node.name).or_insert(&node.taints);
            }
        }
    }
    let now = plan.now;
    for node in &mut plan.nodes {
        let Some(&i) = index.get(&node.name) else { continue };
        let forecast = &prediction.nodes[i];
        let health = nodes.get(i).filter(|health| health.name == forecast.name);
        if let Some(taint) = forecast.taint {
            let taints = taints.get(&node.name).copied().unwrap_or_default();
            for pod in &mut node.pods {
                let window = deletion(&taint, taints, &pod.pod.pod.tolerations);
                let due_first = match (pod.evict_at, window) {
                    (None, _) => true,
                    // A countdown the node's taints run already goes on when the predicted taint
                    // comes, whatever its `tolerationSeconds` (a countdown, once started, is never
                    // moved: docs/upstream.md, "The controller's rules"); only a taint the pod does
                    // not tolerate deletes it first.
                    (Some(at), Some(window)) => {
                        window.toleration_seconds.is_none() && window.latest.is_some_and(|latest| latest < at)
                    }
                    (Some(_), None) => false,
                };
                if !due_first {
                    continue;
                }
                pod.basis = Some(Basis::PredictedTaint);
                match window {
                    None => {
                        pod.verdict = Verdict::Never;
                        (pod.evict_at, pod.evict_at_latest, pod.since, pod.toleration_seconds) =
                            (None, None, None, None);
                        pod.overdue = false;
                    }
                    Some(window) => {
                        pod.verdict = Verdict::EvictAt;
                        pod.evict_at = Some(window.earliest);
                        pod.evict_at_latest = window.latest;
                        pod.since = Some(taint.earliest);
                        pod.toleration_seconds = window.toleration_seconds;
                        pod.overdue = window.earliest < now;
                    }
                }
            }
            sort_pods(&mut node.pods);
        }
        let all_down = forecast.held.as_ref().is_some_and(|held| held.reason == HeldReason::AllZonesDown);
        if all_down && node.taints.iter().all(|taint| ConditionTaint::from_key(&taint.key).is_some()) {
            // Removed at the controller's next pass after the prediction's instant (for a dump read
            // late, when it was taken): every deletion not due by then is cancelled.
            let pending = |pod: &&mut super::model::PodPlan| pod.evict_at.is_some_and(|at| at >= prediction.at);
            for pod in node.pods.iter_mut().filter(pending) {
                pod.verdict = Verdict::Unaffected;
                (pod.evict_at, pod.since, pod.basis, pod.toleration_seconds) = (None, None, None, None);
            }
            sort_pods(&mut node.pods);
        }
        node.lifecycle = Some(NodeLifecycle {
            forecast: forecast.clone(),
            ready_since: health.and_then(|health| health.ready.as_ref()?.last_transition),
        });
    }
    plan.zones = Some(prediction.zones.clone());
}

/// The nodes of `plan` expected to be tainted that tie for one taint: in a zone whose queue gives
/// none but the one it was made with (rate 0: `--node-eviction-rate 0`), with no end to their window,
/// the controller taints whichever its lister hands the token first, and not the others
/// (docs/node-lifecycle.md). Each group has two nodes or more, in plan order.
#[must_use]
pub fn rate_zero_ties(plan: &Plan) -> Vec<Vec<NodeName>> {
    let Some(zones) = &plan.zones else { return Vec::new() };
    let mut groups: Vec<(&crate::lifecycle::ZoneKey, Vec<NodeName>)> = Vec::new();
    for node in plan.nodes.iter().filter(|node| node.taints.is_empty()) {
        let Some(forecast) = node.lifecycle.as_ref().map(|lifecycle| &lifecycle.forecast) else { continue };
        let open = forecast.taint.is_some_and(|taint| taint.latest.is_none());
        let rate_zero = zones.iter().any(|zone| zone.zone == forecast.zone && zone.rate_per_second <= 0.0);
        if !open || !rate_zero {
            continue;
        }
        match groups.iter_mut().find(|(zone, _)| **zone == forecast.zone) {
            Some((_, names)) => names.push(node.name.clone()),
            None => groups.push((&forecast.zone, vec![node.name.clone()])),
        }
    }
    groups.into_iter().map(|(_, names)| names).filter(|names| names.len() > 1).collect()
}

/// Marks the nodes of `plan` that are back (`Ready=True`, heard from within `silent_after` of
/// `at`, the instant node health was judged at) yet still carry the node lifecycle controller's
/// `unreachable`/`not-ready` taint: the controller removes it at its next pass, within
/// `monitor_period` of `at`, which cancels every deletion not due by then. On such a node that only
/// carries those taints, those pods are `unaffected`, and the node's forecast says it is held
/// ([`HeldReason::Recovered`]); a pod already terminating keeps its verdict. Nodes not in `nodes`
/// are left as they are.
pub fn mark_recovering(
    plan: &mut Plan,
    nodes: &[NodeHealth],
    at: Timestamp,
    silent_after: Duration,
    monitor_period: Duration,
) {
    let health: HashMap<&NodeName, &NodeHealth> = nodes.iter().map(|node| (&node.name, node)).collect();
    let removed_by = at.add_nanos(i64::try_from(monitor_period.as_nanos()).unwrap_or(i64::MAX));
    for node in &mut plan.nodes {
        let Some(health) = health.get(&node.name) else { continue };
        let only_condition_taints =
            !node.taints.is_empty() && node.taints.iter().all(|taint| ConditionTaint::from_key(&taint.key).is_some());
        if !only_condition_taints || !is_back(health, at, silent_after) {
            continue;
        }
        // A pod already terminating stays shown so: its deletion was issued, and the taint's
        // removal does not take that back.
        let cancelled =
            |pod: &&mut super::model::PodPlan| !pod.terminating() && pod.evict_at.is_some_and(|due| due > removed_by);
        for pod in node.pods.iter_mut().filter(cancelled) {
            pod.verdict = Verdict::Unaffected;
            (pod.evict_at, pod.evict_at_latest, pod.since, pod.basis, pod.toleration_seconds) =
                (None, None, None, None, None);
            pod.overdue = false;
        }
        sort_pods(&mut node.pods);
        let held = Held { reason: HeldReason::Recovered, zone: health.zone.clone() };
        match &mut node.lifecycle {
            Some(lifecycle) => {
                lifecycle.forecast.held = Some(held);
                lifecycle.forecast.taint = None;
            }
            None => {
                node.lifecycle = Some(NodeLifecycle {
                    forecast: NodeForecast {
                        name: node.name.clone(),
                        zone: health.zone.clone(),
                        ready: Some(Ready::True),
                        last_heartbeat: health.lease_renewed,
                        taint: None,
                        held: Some(held),
                    },
                    ready_since: health.ready.as_ref().and_then(|ready| ready.last_transition),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::lifecycle::{Flags, NodeHealth, Observation, Ready, ReadyCondition, ZoneKey, unsettled};
    use crate::time::Timestamp;

    fn node(status: Option<Ready>, renewed: Option<i64>) -> NodeHealth {
        let t = Timestamp::from_unix_seconds;
        NodeHealth {
            name: "n".into(),
            zone: ZoneKey::new("r", "z"),
            excluded: false,
            created: Some(t(0)),
            ready: status.map(|status| {
                Box::new(ReadyCondition {
                    status,
                    reason: Box::default(),
                    last_heartbeat: Some(t(900)),
                    last_transition: Some(t(0)),
                })
            }),
            lease_renewed: renewed.map(t),
            taints: Vec::new().into(),
            down: false,
            ready_pods: 0,
        }
    }

    fn count(nodes: Vec<NodeHealth>) -> usize {
        unsettled(&Observation {
            now: Timestamp::from_unix_seconds(1000),
            nodes,
            controller: None,
            flags: Flags::defaults_for(29),
            silent_after: Duration::from_secs(12),
        })
    }

    #[test]
    fn ready_nodes_renewed_lately_or_without_a_lease_are_settled() {
        assert_eq!(count(vec![node(Some(Ready::True), Some(995)), node(Some(Ready::True), None)]), 0);
    }

    #[test]
    fn silent_not_ready_and_never_ready_nodes_are_unsettled() {
        let nodes = vec![
            node(Some(Ready::True), Some(980)),
            node(Some(Ready::False), Some(999)),
            node(Some(Ready::Unknown), None),
            node(None, Some(999)),
            node(Some(Ready::True), Some(999)),
        ];
        assert_eq!(count(nodes), 4);
    }

    #[test]
    fn a_node_back_loses_its_condition_taint_at_the_next_pass_and_its_later_deletions_with_it() {
        use std::collections::BTreeMap;
        use std::sync::Arc;

        use crate::model::{Effect, NodeName, Pod, PodKey, Taint, Toleration};
        use crate::plan::model::Verdict;
        use crate::plan::predicted::mark_recovering;
        use crate::replay::replay;
        use crate::snapshot::{Snapshot, SnapshotNode, SnapshotPod};

        let t = Timestamp::from_unix_seconds;
        let unreachable = Taint::new("node.kubernetes.io/unreachable", "", Effect::NoExecute).with_time_added(t(900));
        let pod = |name: &str, seconds: i64| {
            let toleration = Toleration {
                key: "node.kubernetes.io/unreachable".into(),
                operator: "Exists".into(),
                value: Box::default(),
                effect: Some(Effect::NoExecute),
                seconds: Some(seconds),
            };
            let pod = Pod {
                key: PodKey::new("d", name),
                uid: name.into(),
                node: Some(NodeName::from("n")),
                tolerations: Arc::from([toleration]),
            };
            SnapshotPod::running(pod, Some(t(0)))
        };
        // Tainted at 900; back: Ready=True, its Lease renewed at 995. `p99` is due at 999 (within the
        // next pass, 1005 at the latest), `p300` at 1200.
        let snapshot = Snapshot {
            nodes: vec![SnapshotNode::new("n".into(), BTreeMap::new(), [unreachable])],
            pods: vec![pod("p99", 99), pod("p300", 300), SnapshotPod { terminating: true, ..pod("gone300", 300) }],
            controller_acquired: None,
            taken: None,
            ..Snapshot::default()
        };
        let mut plan = replay(&snapshot, &[0], &[], t(1000));
        let health = node(Some(Ready::True), Some(995));
        mark_recovering(&mut plan, &[health], t(1000), Duration::from_secs(12), Duration::from_secs(5));
        let verdict = |name: &str| plan.nodes[0].pods.iter().find(|p| p.pod.pod.key.name() == name).map(|p| p.verdict);
        assert_eq!(verdict("p300"), Some(Verdict::Unaffected), "cancelled with the taint");
        assert_eq!(verdict("p99"), Some(Verdict::EvictAt), "due before the next pass: the controller may delete it");
        assert_eq!(verdict("gone300"), Some(Verdict::EvictAt), "terminating already: shown so, not unaffected");
        let held = plan.nodes[0].lifecycle.as_ref().and_then(|l| l.forecast.held.as_ref()).map(|h| h.reason);
        assert_eq!(held, Some(super::HeldReason::Recovered));
        // A node still silent keeps its deadlines.
        let mut plan = replay(&snapshot, &[0], &[], t(1000));
        let silent = node(Some(Ready::True), Some(900));
        mark_recovering(&mut plan, &[silent], t(1000), Duration::from_secs(12), Duration::from_secs(5));
        assert!(plan.nodes[0].pods.iter().all(|p| p.verdict == Verdict::EvictAt));
    }

    #[test]
    fn a_predicted_taint_leaves_a_running_countdown_as_it_is_unless_untolerated() {
        use std::collections::BTreeMap;

        use crate::lifecycle::{Basis, ConditionTaint, NodeForecast, PredictedTaint, Prediction};
        use crate::model::{Effect, NodeName, Pod, PodKey, Taint, Toleration};
        use crate::plan::model::Basis as PlanBasis;
        use crate::plan::predicted::show_in_plan;
        use crate::replay::replay;
        use crate::snapshot::{Snapshot, SnapshotNode, SnapshotPod};

        let t = Timestamp::from_unix_seconds;
        let toleration = |key: &str, seconds: i64| Toleration {
            key: key.into(),
            operator: "Exists".into(),
            value: Box::default(),
            effect: Some(Effect::NoExecute),
            seconds: Some(seconds),
        };
        let pod = |name: &str, tolerations: Vec<Toleration>| {
            let pod = Pod {
                key: PodKey::new("d", name),
                uid: name.into(),
                node: Some("n".into()),
                tolerations: tolerations.into(),
            };
            SnapshotPod::running(pod, Some(t(0)))
        };
        // `lab` since 900; the node goes silent and is expected tainted `unreachable` at 1010..1012.
        // g tolerates lab 600 s and unreachable 30 s: its countdown of 900 runs on to 1500, as the
        // controller keeps it. u does not tolerate unreachable: deleted with the taint. fresh
        // tolerates lab forever: its countdown begins with the taint.
        let lab = Taint::new("lab", "", Effect::NoExecute).with_time_added(t(900));
        let unreachable = "node.kubernetes.io/unreachable";
        let snapshot = Snapshot {
            nodes: vec![SnapshotNode::new("n".into(), BTreeMap::new(), [lab])],
            pods: vec![
                pod("g", vec![toleration("lab", 600), toleration(unreachable, 30)]),
                pod("u", vec![toleration("lab", 600)]),
                pod("fresh", vec![Toleration { seconds: None, ..toleration("lab", 0) }, toleration(unreachable, 30)]),
            ],
            ..Snapshot::default()
        };
        let mut plan = replay(&snapshot, &[0], &[], t(1000));
        let taint = PredictedTaint {
            key: ConditionTaint::Unreachable,
            earliest: t(1010),
            latest: Some(t(1012)),
            basis: Basis::LostHeartbeat,
            queued_with: 0,
            drained: false,
        };
        let forecast = NodeForecast {
            name: NodeName::from("n"),
            zone: crate::lifecycle::ZoneKey::new("r", "z"),
            ready: Some(Ready::True),
            last_heartbeat: Some(t(998)),
            taint: Some(taint),
            held: None,
        };
        let prediction = Prediction { nodes: vec![forecast], zones: Vec::new(), phase_known: false, at: t(1000) };
        show_in_plan(&mut plan, &snapshot, None, &[], &prediction);
        let deadline = |name: &str| {
            let pod = plan.nodes[0].pods.iter().find(|p| p.pod.pod.key.name() == name).expect("a pod");
            (pod.evict_at, pod.basis)
        };
        assert_eq!(deadline("g"), (Some(t(1500)), Some(PlanBasis::TaintTimeAdded)));
        assert_eq!(deadline("u"), (Some(t(1010)), Some(PlanBasis::PredictedTaint)));
        assert_eq!(deadline("fresh"), (Some(t(1040)), Some(PlanBasis::PredictedTaint)));
    }

    #[test]
    fn only_a_node_heard_from_that_still_carries_a_condition_taint_is_back_while_tainted() {
        use crate::lifecycle::{HeldReason, back_forecast, is_back_while_tainted};
        use crate::model::{Effect, Taint};

        let now = Timestamp::from_unix_seconds(1000);
        let silent_after = Duration::from_secs(12);
        let unreachable = Taint::new("node.kubernetes.io/unreachable", "", Effect::NoExecute);
        let tainted = |mut node: super::NodeHealth, taint: &Taint| {
            node.taints = vec![taint.clone()].into();
            node
        };
        let back = tainted(node(Some(Ready::True), Some(995)), &unreachable);
        assert!(is_back_while_tainted(&back, now, silent_after));
        let forecast = back_forecast(&back, now, silent_after).expect("a forecast");
        assert_eq!(forecast.held.map(|held| held.reason), Some(HeldReason::Recovered));
        assert_eq!((forecast.taint, forecast.last_heartbeat), (None, Some(Timestamp::from_unix_seconds(995))));
        // Silent still, not ready, or back without a condition taint: no.
        assert!(!is_back_while_tainted(&tainted(node(Some(Ready::True), Some(900)), &unreachable), now, silent_after));
        assert!(!is_back_while_tainted(&tainted(node(Some(Ready::False), Some(995)), &unreachable), now, silent_after));
        let drain = Taint::new("example.com/drain", "", Effect::NoExecute);
        assert!(back_forecast(&tainted(node(Some(Ready::True), Some(995)), &drain), now, silent_after).is_none());
    }
}
