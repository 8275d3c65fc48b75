//! The history of the pods counting down: their tolerations written after their creation (their
//! `managedFields`, read with them), with what their controllers' pod templates hold.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::owners::{Controller, templates};
use crate::cluster::client::Connection;
use crate::engine::model::{PodKey, Taint};
use crate::engine::snapshot::{OwnerTemplate, SnapshotNode, SnapshotPod, TaintsWritten, TolerationsWritten};
use crate::engine::tolerate::{Tolerance, TolerationWindow, tolerance};

/// The pods of `pods` on a node of `nodes` with NoExecute taints they tolerate for a while: those
/// whose countdown a toleration edit may have outlived.
pub fn counting_down<'p>(nodes: &[SnapshotNode], pods: &'p [SnapshotPod]) -> Vec<&'p SnapshotPod> {
    let tainted: HashMap<&str, &[Taint]> = nodes
        .iter()
        .filter(|node| !node.taints.is_empty())
        .map(|node| (node.name.as_str(), &node.taints[..]))
        .collect();
    let counting = |pod: &&SnapshotPod| {
        let Some(taints) = pod.pod.node.as_ref().and_then(|node| tainted.get(node.as_str())) else { return false };
        matches!(tolerance(taints, &pod.pod.tolerations), Tolerance::Tolerated(TolerationWindow::After { .. }))
    };
    pods.iter().filter(counting).collect()
}

/// When each of `pods` had its tolerations written after its creation, and by whom: the
/// `managedFields` entry that owns `spec.tolerations`, read with the pod (in either content type),
/// with what its controller's pod template holds. The templates are read by LIST per kind and
/// namespace (or at the cluster scope per kind past [`PER_NODE_LISTS_UP_TO`](super::PER_NODE_LISTS_UP_TO)
/// namespaces), from
/// where the pods were (the watch cache unless `--quorum-read`): the requests do not grow with the
/// pods or owners. A pod written only at its creation is left out (docs/upstream.md, "A toleration
/// edited").
pub async fn tolerations_written(
    connection: &Connection,
    pods: &[&SnapshotPod],
) -> BTreeMap<PodKey, TolerationsWritten> {
    let written: Vec<(PodKey, TaintsWritten, Option<Controller>)> = pods
        .iter()
        .filter_map(|pod| {
            let edited = pod.tolerations_edited.as_deref()?;
            let controller = edited.controller.as_ref().map(|(api_version, owner)| Controller::of(api_version, owner));
            Some((pod.pod.key.clone(), edited.written.clone(), controller))
        })
        .collect();
    if written.is_empty() {
        return BTreeMap::new();
    }
    let templates = templates(connection, &written).await;
    let template = |controller: &Option<Controller>| match controller {
        None => OwnerTemplate::NoOwner,
        Some(Controller { owner, resource: None }) => OwnerTemplate::OtherKind(owner.clone()),
        Some(Controller { owner, resource: Some(_) }) => match templates.get(owner.uid()) {
            Some(tolerations) => OwnerTemplate::Read(owner.clone(), Arc::clone(tolerations)),
            None => OwnerTemplate::Unread(owner.clone()),
        },
    };
    written
        .iter()
        .map(|(key, written, controller)| {
            (key.clone(), TolerationsWritten { written: written.clone(), template: template(controller) })
        })
        .collect()
}
