//! Pods stuck terminating: deleted, their grace period over, on a node whose kubelet is gone.
//!
//! A pod's deletion is finished by its node's kubelet (it stops the containers, then removes the
//! object). When the kubelet is gone the pod stays `Terminating` for good, and a StatefulSet never
//! replaces it. Three things unblock it, none of which this tool does: the node coming back, the
//! `node.kubernetes.io/out-of-service` taint (non-graceful node shutdown: only for a node that is
//! really down), or a forced deletion.

use std::time::Duration;

use super::health::{ConditionTaint, NodeHealth, Ready};
use crate::time::Timestamp;

/// Whether the kubelet of `node` is gone at `now`: its `Ready` is `Unknown` or `False`, or it
/// carries the `unreachable` NoExecute taint, or (its Lease read) it has not heartbeated for longer
/// than `grace` (`--node-monitor-grace-period`: the controller is about to mark it `Unknown`).
/// The pod's own termination grace is not added to that silence: [`stuck_since`] counts it by
/// waiting for the `deletionTimestamp`, which includes it.
#[must_use]
pub fn kubelet_gone(node: &NodeHealth, now: Timestamp, grace: Duration) -> bool {
    let ready = node.ready.as_ref();
    if ready.is_some_and(|ready| matches!(ready.status, Ready::Unknown | Ready::False)) {
        return true;
    }
    if node.condition_taint().is_some_and(|(key, _)| key == ConditionTaint::Unreachable) {
        return true;
    }
    // Without a Lease, `lastHeartbeatTime` alone says nothing: a healthy kubelet may post it only
    // every few minutes.
    let Some(renewed) = node.lease_renewed else { return false };
    let last = ready.and_then(|ready| ready.last_heartbeat).map_or(renewed, |beat| beat.max(renewed));
    let grace = i128::try_from(grace.as_nanos()).unwrap_or(i128::MAX);
    now.as_nanos().saturating_sub(last.as_nanos()) > grace
}

/// Since when a pod whose `deletionTimestamp` is `deletion` (the deletion call plus its grace
/// period), on `node`, is stuck terminating at `now`: `deletion` once it has passed while the
/// node's kubelet is gone ([`kubelet_gone`]); `None` while the grace period runs or the kubelet can
/// still finish the deletion.
#[must_use]
pub fn stuck_since(deletion: Timestamp, node: &NodeHealth, now: Timestamp, grace: Duration) -> Option<Timestamp> {
    (deletion <= now && kubelet_gone(node, now, grace)).then_some(deletion)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lifecycle::{ReadyCondition, ZoneKey};
    use crate::model::{Effect, Taint};

    const GRACE: Duration = Duration::from_secs(40);

    fn t(seconds: i64) -> Timestamp {
        Timestamp::from_unix_seconds(seconds)
    }

    fn node(status: Ready, renewed: Option<i64>) -> NodeHealth {
        NodeHealth {
            name: "n".into(),
            zone: ZoneKey::new("r", "z"),
            excluded: false,
            created: Some(t(0)),
            ready: Some(Box::new(ReadyCondition {
                status,
                reason: Box::default(),
                last_heartbeat: Some(t(100)),
                last_transition: Some(t(0)),
            })),
            lease_renewed: renewed.map(t),
            taints: Vec::new().into(),
            down: false,
            ready_pods: 0,
        }
    }

    #[test]
    fn a_deleted_pod_on_an_unreachable_or_not_ready_node_is_stuck_from_its_deletion_timestamp() {
        for status in [Ready::Unknown, Ready::False] {
            assert_eq!(stuck_since(t(900), &node(status, Some(990)), t(1000), GRACE), Some(t(900)), "{status:?}");
        }
    }

    #[test]
    fn a_pod_still_in_its_grace_period_is_not_stuck() {
        assert_eq!(stuck_since(t(1001), &node(Ready::Unknown, None), t(1000), GRACE), None);
        // The deletion timestamp itself is the first stuck instant.
        assert_eq!(stuck_since(t(1000), &node(Ready::Unknown, None), t(1000), GRACE), Some(t(1000)));
    }

    #[test]
    fn a_pod_on_a_heartbeating_ready_node_is_not_stuck() {
        assert_eq!(stuck_since(t(900), &node(Ready::True, Some(995)), t(1000), GRACE), None);
        // Without a Lease an old lastHeartbeatTime is no sign of a gone kubelet.
        assert_eq!(stuck_since(t(900), &node(Ready::True, None), t(1000), GRACE), None);
    }

    #[test]
    fn a_ready_node_silent_for_longer_than_the_grace_period_has_lost_its_kubelet() {
        assert_eq!(stuck_since(t(900), &node(Ready::True, Some(959)), t(1000), GRACE), Some(t(900)));
        assert_eq!(stuck_since(t(900), &node(Ready::True, Some(960)), t(1000), GRACE), None, "exactly the grace");
    }

    #[test]
    fn the_unreachable_taint_says_the_kubelet_is_gone_and_the_not_ready_one_alone_does_not() {
        let mut tainted = node(Ready::True, Some(999));
        tainted.taints = vec![Taint::new("node.kubernetes.io/unreachable", "", Effect::NoExecute)].into();
        assert_eq!(stuck_since(t(900), &tainted, t(1000), GRACE), Some(t(900)));
        tainted.taints = vec![Taint::new("node.kubernetes.io/not-ready", "", Effect::NoExecute)].into();
        assert_eq!(stuck_since(t(900), &tainted, t(1000), GRACE), None);
        tainted.taints = vec![Taint::new("node.kubernetes.io/unreachable", "", Effect::NoSchedule)].into();
        assert_eq!(stuck_since(t(900), &tainted, t(1000), GRACE), None, "NoSchedule is not the controller's sign");
    }
}
