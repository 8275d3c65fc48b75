//! Showing a [`Prediction`] in a [`Plan`] (contract §5): each node gains its health and expected
//! taint, and the pods of a node about to be tainted get the deletion window that taint opens.

use std::collections::{HashMap, HashSet};

use super::{Basis, NodeLifecycle, Plan, Verdict, sort_pods};
use crate::lifecycle::{ConditionTaint, HeldReason, NodeHealth, Prediction, deletion};
use crate::model::{NodeName, Taint};
use crate::snapshot::Snapshot;

/// Adds `prediction` (made over `nodes`, in the same order) to `plan`, replayed from `snapshot`.
///
/// A pod already due from a taint the node carries keeps that deadline unless the predicted taint
/// deletes it for certain before; a pod the node's taints leave alone becomes `evict-at` the
/// predicted window (or `never` when it tolerates the predicted taint forever), with the basis
/// [`Basis::PredictedTaint`]. When every zone is down the controller removes the condition taints,
/// which cancels every deletion not yet due: on such a node that only carries condition taints,
/// those pods are `unaffected`.
pub fn show_in_plan(plan: &mut Plan, snapshot: &Snapshot, nodes: &[NodeHealth], prediction: &Prediction) {
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
    for node in snapshot.nodes.iter().filter(|node| tainted.contains(&node.name)) {
        taints.entry(&node.name).or_insert(&node.taints);
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
                    (Some(at), Some(window)) => window.latest.is_some_and(|latest| latest < at),
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
            let pending = |pod: &&mut super::PodPlan| pod.evict_at.is_some_and(|at| at >= prediction.at);
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
}
