//! The watches' changes as the engines read them: the node-taint engine's inputs, and the device-taint
//! controller's.

use super::changes::{NodeChange, PodChange};
use crate::engine::Input;
use crate::engine::devices::{DeviceInput, DevicePod};
use crate::engine::model::PodRef;
use crate::engine::snapshot::SnapshotPod;
use crate::engine::start::engine_node;

/// A pod change as the device-taint controller reads it: only pods bound to a node and naming a
/// claim matter to it.
pub(super) fn device_pod_input(change: &PodChange) -> Option<DeviceInput> {
    let device_pod = |pod: &SnapshotPod| {
        Some(DevicePod {
            pod: PodRef { key: pod.pod.key.clone(), uid: pod.pod.uid.clone(), node: pod.pod.node.clone()? },
            uses: pod.claims.as_deref()?.to_vec(),
            terminating: pod.terminating,
        })
    };
    Some(match change {
        PodChange::Listed(pods) => DeviceInput::PodsListed(pods.iter().filter_map(device_pod).collect()),
        PodChange::Applied(pod) => match device_pod(pod) {
            Some(pod) => DeviceInput::PodApplied(pod),
            None => DeviceInput::PodDeleted(pod.pod.key.clone()),
        },
        PodChange::Deleted(key) => DeviceInput::PodDeleted(key.clone()),
        PodChange::Interrupted | PodChange::Resumed => return None,
    })
}

pub(super) fn node_change_input(change: &NodeChange) -> Option<Input> {
    Some(match change {
        NodeChange::Listed(list) => Input::NodesReplaced(list.iter().map(engine_node).collect()),
        NodeChange::Applied(node) => Input::NodeUpserted(engine_node(node)),
        NodeChange::Deleted(name) => Input::NodeDeleted(name.clone()),
        NodeChange::Left(name) => Input::NodeLeft(name.clone()),
        NodeChange::Interrupted => return None,
    })
}

pub(super) fn pod_change_input(change: &PodChange) -> Option<Input> {
    Some(match change {
        PodChange::Listed(list) => Input::PodsReplaced(list.iter().map(|p| p.pod.clone()).collect()),
        PodChange::Applied(pod) => Input::PodUpserted(pod.pod.clone()),
        PodChange::Deleted(key) => Input::PodDeleted(key.clone()),
        PodChange::Interrupted | PodChange::Resumed => return None,
    })
}
