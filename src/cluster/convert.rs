//! k8s-openapi objects (from watches) into the engine's snapshot model.
//!
//! The same fields, with the same rules, as the dump reader (`source::file`): a test feeds both the
//! same objects and compares.

use std::sync::Arc;

use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::engine::model::{Effect, NodeName, Pod, PodKey, Taint, Toleration};
use crate::engine::replay::{SnapshotNode, SnapshotPod};
use crate::engine::time::Timestamp;

fn instant(time: &Time) -> Timestamp {
    Timestamp::from_nanos(time.0.as_nanosecond())
}

/// The engine's view of a node.
#[must_use]
pub fn node(node: &k8s::Node) -> SnapshotNode {
    let taints = node.spec.as_ref().and_then(|s| s.taints.as_ref());
    SnapshotNode {
        name: NodeName::from(node.metadata.name.as_deref().unwrap_or_default()),
        labels: node.metadata.labels.clone().unwrap_or_default(),
        taints: taints
            .into_iter()
            .flatten()
            .map(|t| Taint {
                key: t.key.clone(),
                value: t.value.clone().unwrap_or_default(),
                effect: Effect::from(t.effect.as_str()),
                time_added: t.time_added.as_ref().map(instant),
            })
            .collect(),
    }
}

/// The engine's view of a pod.
#[must_use]
pub fn pod(pod: &k8s::Pod) -> SnapshotPod {
    let meta = &pod.metadata;
    let spec = pod.spec.as_ref();
    let tolerations: Vec<Toleration> = spec
        .and_then(|s| s.tolerations.as_ref())
        .into_iter()
        .flatten()
        .map(|t| Toleration {
            key: t.key.clone().unwrap_or_default(),
            operator: t.operator.as_deref().unwrap_or_default().into(),
            value: t.value.clone().unwrap_or_default(),
            effect: t.effect.as_deref().filter(|e| !e.is_empty()).map(Effect::from),
            seconds: t.toleration_seconds,
        })
        .collect();
    let status = pod.status.as_ref();
    let scheduled = status
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .filter(|c| c.type_ == "PodScheduled" && c.status == "True")
        .filter_map(|c| c.last_transition_time.as_ref().map(instant))
        .next_back();
    let namespace = meta.namespace.as_deref().filter(|n| !n.is_empty()).unwrap_or("default");
    SnapshotPod {
        pod: Pod {
            key: PodKey::new(namespace, meta.name.as_deref().unwrap_or_default()),
            uid: meta.uid.as_deref().unwrap_or_default().into(),
            node: spec.and_then(|s| s.node_name.as_deref()).filter(|n| !n.is_empty()).map(NodeName::from),
            tolerations: Arc::from(tolerations),
        },
        bound_at: scheduled.or_else(|| meta.creation_timestamp.as_ref().map(instant)),
        phase: status.and_then(|s| s.phase.clone()).unwrap_or_default().into(),
        terminating: meta.deletion_timestamp.is_some(),
        deletion_timestamp: meta.deletion_timestamp.as_ref().map(instant),
    }
}

/// The key of a pod object.
#[must_use]
pub fn pod_key(pod: &k8s::Pod) -> PodKey {
    let namespace = pod.metadata.namespace.as_deref().filter(|n| !n.is_empty()).unwrap_or("default");
    PodKey::new(namespace, pod.metadata.name.as_deref().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode as file;

    /// Every Node and Pod of the bundled example, through both readers.
    #[test]
    fn watch_objects_convert_exactly_as_the_dump_reader_reads_them() {
        let text = include_str!("../../examples/incident.json");
        let from_file = file::read(text.as_bytes()).expect("the example reads");
        let list: serde_json::Value = serde_json::from_str(text).expect("JSON");
        let mut nodes = Vec::new();
        let mut pods = Vec::new();
        for item in list["items"].as_array().expect("items") {
            match item["kind"].as_str() {
                Some("Node") => nodes.push(node(&serde_json::from_value(item.clone()).expect("a Node"))),
                Some("Pod") => pods.push(pod(&serde_json::from_value(item.clone()).expect("a Pod"))),
                _ => {}
            }
        }
        assert!(nodes.len() >= 4 && pods.len() >= 15);
        assert_eq!(nodes, from_file.nodes);
        assert_eq!(pods, from_file.pods);
    }
}
