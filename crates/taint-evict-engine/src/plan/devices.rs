//! The device-taint controller's decisions shown in a plan: each pod's device taints, and its
//! verdict and deadline when that controller deletes it before the node-taint one would.

use std::collections::BTreeSet;

use super::model::{Basis, Plan, PodPlan, Verdict, sort_pods};
use crate::devices::{DeviceReport, DeviceTaints, DeviceTolerance};
use crate::model::NodeName;
use crate::snapshot::Snapshot;

/// Adds each pod's device taints to `plan`; a pod's verdict and `evict_at` become the earliest of
/// both controllers' (the node-taint one's on a tie), with [`Basis::DeviceTaint`] when the device
/// taint decides. A pod whose device taints are all tolerated forever, on an untainted node, is
/// [`Verdict::Never`].
pub fn show_devices(plan: &mut Plan<'_>, taints: &DeviceTaints<'_>) {
    if taints.is_empty() {
        return;
    }
    plan.device_taints = Some(taints.minor());
    let now = plan.now;
    for node in &mut plan.nodes {
        let mut changed = false;
        for pod in &mut node.pods {
            let report = taints.pod(pod.key(), pod.uid());
            if report.evictions.is_empty() {
                continue;
            }
            merge(pod, &report, now);
            pod.devices = Some(Box::new(report));
            changed = true;
        }
        if changed {
            sort_pods(&mut node.pods);
        }
    }
}

fn merge(pod: &mut PodPlan<'_>, report: &DeviceReport, now: crate::time::Timestamp) {
    let Some(deciding) = report.deciding() else {
        if pod.verdict == Verdict::Unaffected
            && report.evictions.iter().any(|e| e.tolerance == DeviceTolerance::Forever)
        {
            pod.verdict = Verdict::Never;
        }
        return;
    };
    let Some(at) = deciding.deadline else { return };
    let earlier = match pod.verdict {
        Verdict::EvictNow | Verdict::EvictAt => pod.evict_at.is_none_or(|node_at| at < node_at),
        Verdict::Never | Verdict::Unaffected => true,
    };
    if !earlier {
        // A predicted node taint may come later than the device's deadline: the latest instant is then
        // the device's.
        if pod.basis == Some(Basis::PredictedTaint) && pod.evict_at_latest.is_none_or(|latest| at < latest) {
            pod.evict_at_latest = Some(at);
        }
        return;
    }
    (pod.verdict, pod.toleration_seconds) = match deciding.tolerance {
        DeviceTolerance::For(seconds) => (Verdict::EvictAt, Some(seconds)),
        DeviceTolerance::Untolerated | DeviceTolerance::Forever => (Verdict::EvictNow, None),
    };
    pod.evict_at = Some(at);
    pod.evict_at_latest = None;
    pod.since = deciding.taint.time_added;
    pod.basis = Some(Basis::DeviceTaint);
    pod.overdue = at < now;
}

/// The nodes of `snapshot` with a pod whose claims hold a device with a NoExecute taint: a plan of
/// the tainted nodes shows them too.
#[must_use]
pub fn device_affected_nodes<'a>(snapshot: &'a Snapshot, taints: &DeviceTaints<'_>) -> BTreeSet<&'a NodeName> {
    if taints.is_empty() {
        return BTreeSet::new();
    }
    let pods = snapshot.pods.iter().filter_map(|p| Some((p, p.pod.node.as_ref()?)));
    pods.filter(|(p, _)| !taints.pod(&p.pod.key, &p.pod.uid).evictions.is_empty()).map(|(_, node)| node).collect()
}
