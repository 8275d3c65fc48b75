//! Nodes and pods as the watches decode them: straight into the engine's model.
//!
//! A real pod carries its containers, volumes, status and `managedFields` (often 5–20 KB of JSON); a
//! node carries its image list and conditions (often more). The watches decode every object of every
//! list and event, so each is read by the decoder's streaming reader and built by its builder as it
//! arrives ([`decode::read_watched`]): only the fields the engine needs are kept, with the same rules
//! as a dump or a list page (default namespace, empty effect, the `PodScheduled` binding time).
//!
//! Owns: the two types kube's watcher and requests decode into. Uses: `decode`, the engine's model.

use std::borrow::Cow;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use kube::Resource;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};

use crate::decode::lifecycle::read_node_health;
use crate::decode::{self, Watched};
use crate::engine::lifecycle::NodeHealth;
use crate::engine::snapshot::{SnapshotNode, SnapshotPod};

/// A node: the engine's view of it, what the node lifecycle controller reads of it (its health), and
/// the metadata kube's watcher reads (name, version).
#[derive(Clone, Debug)]
pub struct WatchedNode {
    metadata: ObjectMeta,
    node: SnapshotNode,
    /// `None` when a time the controller reads is not RFC 3339 (the engine's view may still be read).
    health: Option<NodeHealth>,
}

impl WatchedNode {
    /// The engine's view of the node.
    #[must_use]
    pub fn node(&self) -> &SnapshotNode {
        &self.node
    }

    /// The engine's view of the node, owned.
    #[must_use]
    pub fn into_node(self) -> SnapshotNode {
        self.node
    }

    /// What the node lifecycle controller reads of the node.
    #[must_use]
    pub fn health(&self) -> Option<&NodeHealth> {
        self.health.as_ref()
    }
}

impl<'de> Deserialize<'de> for WatchedNode {
    /// Each node is read twice from the one text the watch received: into the engine's view and into
    /// its health (a node is read far less often than a pod, and one watch serves both).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<serde_json::value::RawValue>::deserialize(deserializer)?;
        let text = raw.get();
        let mut reader = serde_json::Deserializer::from_str(text);
        let Watched { mut snapshot, resource_version } =
            decode::read_watched(&mut reader, "Node", false).map_err(D::Error::custom)?;
        let node = snapshot.nodes.pop().ok_or_else(|| D::Error::custom("expected a Node"))?;
        let health = read_node_health(text.as_bytes()).ok();
        let metadata =
            ObjectMeta { name: Some(node.name.as_str().to_owned()), resource_version, ..ObjectMeta::default() };
        Ok(Self { metadata, node, health })
    }
}

/// A pod: the engine's view of it, and the metadata kube's watcher reads (name, version).
///
/// With `OWNERS` (`run --keep-last-ready`, from its policy), the pod carries its controller
/// (`metadata.ownerReferences`), which that guard reads; without, it is skipped unread, as it costs an
/// allocation per pod. A type parameter, as kube's watcher decodes each object with nothing else to
/// go on.
#[derive(Clone, Debug)]
pub struct WatchedPod<const OWNERS: bool = false> {
    metadata: ObjectMeta,
    pod: SnapshotPod,
}

impl<const OWNERS: bool> WatchedPod<OWNERS> {
    /// `spec.nodeName`, when bound.
    #[must_use]
    pub fn node_name(&self) -> Option<&str> {
        self.pod.pod.node.as_ref().map(|node| node.as_str())
    }

    /// The engine's view of the pod.
    #[must_use]
    pub fn pod(&self) -> &SnapshotPod {
        &self.pod
    }

    /// The engine's view of the pod, owned.
    #[must_use]
    pub fn into_pod(self) -> SnapshotPod {
        self.pod
    }
}

impl<'de, const OWNERS: bool> Deserialize<'de> for WatchedPod<OWNERS> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let Watched { mut snapshot, resource_version } = decode::read_watched(deserializer, "Pod", OWNERS)?;
        let pod = snapshot.pods.pop().ok_or_else(|| D::Error::custom("expected a Pod"))?;
        let metadata = ObjectMeta {
            name: Some(pod.pod.key.name().to_owned()),
            namespace: Some(pod.pod.key.namespace().to_owned()),
            resource_version,
            ..ObjectMeta::default()
        };
        Ok(Self { metadata, pod })
    }
}

macro_rules! core_v1_resource {
    ($type:ty, $kind:literal, $plural:literal, $scope:ty $(, $owners:ident)?) => {
        impl$(<const $owners: bool>)? Resource for $type {
            type DynamicType = ();
            type Scope = $scope;

            fn kind(_: &()) -> Cow<'_, str> {
                Cow::Borrowed($kind)
            }

            fn group(_: &()) -> Cow<'_, str> {
                Cow::Borrowed("")
            }

            fn version(_: &()) -> Cow<'_, str> {
                Cow::Borrowed("v1")
            }

            fn plural(_: &()) -> Cow<'_, str> {
                Cow::Borrowed($plural)
            }

            fn meta(&self) -> &ObjectMeta {
                &self.metadata
            }

            fn meta_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
        }
    };
}

core_v1_resource!(WatchedNode, "Node", "nodes", ClusterResourceScope);
core_v1_resource!(WatchedPod<OWNERS>, "Pod", "pods", NamespaceResourceScope, OWNERS);

#[cfg(test)]
mod tests {
    //! The agreement tests: a watched object becomes what the same object becomes in a dump, and
    //! what the k8s-openapi objects the watches decoded into before became (`reference`, the
    //! conversion they went through, kept here as the proof).

    use k8s_openapi::api::core::v1 as k8s;

    use super::*;
    use crate::engine::model::{Effect, NodeName, Pod, PodKey, Taint, Toleration};
    use crate::engine::snapshot::Owner;
    use crate::engine::snapshot::PodReady;
    use crate::engine::time::Timestamp;

    /// The conversion of full k8s-openapi objects the watches used before they went through the
    /// decoder.
    mod reference {
        use std::sync::Arc;

        use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

        use super::*;

        fn instant(time: &Time) -> Timestamp {
            Timestamp::from_nanos(time.0.as_nanosecond())
        }

        pub(super) fn node(node: &k8s::Node) -> SnapshotNode {
            let taints = node.spec.as_ref().and_then(|s| s.taints.as_ref());
            let taints = taints.into_iter().flatten().map(|t| Taint {
                key: t.key.as_str().into(),
                value: t.value.as_deref().unwrap_or_default().into(),
                effect: Effect::from(t.effect.as_str()),
                time_added: t.time_added.as_ref().map(instant),
            });
            let mut read = SnapshotNode::new(
                NodeName::from(node.metadata.name.as_deref().unwrap_or_default()),
                node.metadata.labels.clone().unwrap_or_default(),
                taints,
            );
            let conditions = node.status.as_ref().and_then(|s| s.conditions.as_ref());
            let ready = conditions.into_iter().flatten().rfind(|c| c.type_ == "Ready");
            read.ready_changed =
                ready.filter(|c| c.status != "True").and_then(|c| c.last_transition_time.as_ref()).map(instant);
            read
        }

        pub(super) fn pod(pod: &k8s::Pod) -> SnapshotPod {
            let meta = &pod.metadata;
            let spec = pod.spec.as_ref();
            let tolerations: Vec<Toleration> = spec
                .and_then(|s| s.tolerations.as_ref())
                .into_iter()
                .flatten()
                .map(|t| Toleration {
                    key: t.key.as_deref().unwrap_or_default().into(),
                    operator: t.operator.as_deref().unwrap_or_default().into(),
                    value: t.value.as_deref().unwrap_or_default().into(),
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
            let condition = |type_: &str| {
                let mut conditions = status.and_then(|s| s.conditions.as_ref()).into_iter().flatten();
                conditions.rfind(|c| c.type_ == type_).is_some_and(|c| c.status == "True")
            };
            let ready = match (condition("Ready"), condition("ContainersReady")) {
                (true, _) => PodReady::Yes,
                (false, true) => PodReady::Marked,
                (false, false) => PodReady::No,
            };
            let owner = meta
                .owner_references
                .iter()
                .flatten()
                .find(|o| o.controller == Some(true))
                .map(|o| Owner::new(o.kind.as_str(), o.name.as_str(), o.uid.as_str()));
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
                ready,
                claims: None,
                owner,
                tolerations_edited: None,
            }
        }
    }

    /// Every Node and Pod of the bundled example: decoded as a watch decodes them, as the dump
    /// reader reads them, and as the full k8s-openapi objects converted.
    #[test]
    fn watched_objects_are_what_the_dump_reader_and_the_full_objects_give() {
        let text = include_str!("../../../examples/incident.json");
        let from_file = decode::read(text.as_bytes()).expect("the example reads");
        let dump: serde_json::Value = serde_json::from_str(text).expect("JSON");
        let (mut nodes, mut pods) = (Vec::new(), Vec::new());
        for item in dump["items"].as_array().expect("items") {
            let json = item.to_string();
            match item["kind"].as_str() {
                Some("Node") => {
                    let full: k8s::Node = serde_json::from_value(item.clone()).expect("a Node");
                    let slim: WatchedNode = serde_json::from_str(&json).expect("a watched Node");
                    assert_eq!(slim.meta().resource_version, full.metadata.resource_version);
                    assert_eq!(*slim.node(), reference::node(&full));
                    // Through a `serde_json::Value`, as kube decodes some answers.
                    let valued: WatchedNode = serde_json::from_value(item.clone()).expect("a watched Node");
                    assert_eq!(valued.node(), slim.node());
                    nodes.push(slim.into_node());
                }
                Some("Pod") => {
                    let full: k8s::Pod = serde_json::from_value(item.clone()).expect("a Pod");
                    let slim: WatchedPod<true> = serde_json::from_str(&json).expect("a watched Pod");
                    assert_eq!(slim.meta().resource_version, full.metadata.resource_version);
                    assert_eq!(*slim.pod(), reference::pod(&full));
                    let valued: WatchedPod<true> = serde_json::from_value(item.clone()).expect("a watched Pod");
                    assert_eq!(valued.pod(), slim.pod());
                    pods.push(slim.into_pod());
                }
                _ => {}
            }
        }
        assert!(nodes.len() >= 4 && pods.len() >= 15);
        assert!(pods.iter().any(|p| p.ready.is_ready()) && pods.iter().any(|p| !p.ready.is_ready()), "ready and not");
        assert!(pods.iter().any(|p| p.owner.is_some()) && pods.iter().any(|p| p.owner.is_none()), "owned and bare");
        let changed = |n: &SnapshotNode| n.ready_changed.is_some();
        assert!(nodes.iter().any(changed) && !nodes.iter().all(changed), "a node not ready, and ready ones");
        assert_eq!(nodes, from_file.nodes);
        assert_eq!(pods, from_file.pods);
    }

    #[test]
    fn what_is_not_read_is_skipped_and_the_version_is_kept() {
        let pod: WatchedPod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p", "namespace": "ns", "uid": "u", "resourceVersion": "7",
                         "labels": {"app": "web"}, "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}], "volumes": [{"name": "v"}]},
            "status": {"phase": "Running", "containerStatuses": [{"name": "c"}]}
        }))
        .expect("a pod");
        assert_eq!(pod.meta().resource_version.as_deref(), Some("7"));
        assert_eq!(pod.meta().labels, None);
        assert_eq!(pod.node_name(), Some("n1"));
        assert_eq!(&*pod.pod().phase, "Running");
    }

    #[test]
    fn a_watched_pod_carries_its_controller_and_whether_it_is_ready() {
        let watched = |owners: serde_json::Value, conditions: serde_json::Value| -> SnapshotPod {
            let pod: WatchedPod<true> = serde_json::from_value(serde_json::json!({
                "metadata": {"name": "web-1", "namespace": "shop", "uid": "u", "ownerReferences": owners},
                "spec": {"nodeName": "n1"},
                "status": {"phase": "Running", "conditions": conditions}
            }))
            .expect("a pod");
            pod.into_pod()
        };
        let rs = |controller: bool| {
            serde_json::json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "rs-1",
                               "controller": controller, "blockOwnerDeletion": true})
        };
        let ready = |status: &str| {
            serde_json::json!([{"type": "PodScheduled", "status": "True"},
                               {"type": "Ready", "status": status, "reason": "r", "message": "m"},
                               {"type": "ContainersReady", "status": "True"}])
        };
        let owned = watched(serde_json::json!([rs(false), rs(true)]), ready("True"));
        let owner = owned.owner.as_ref().expect("the controller");
        assert_eq!((owner.kind(), owner.name(), owner.uid()), ("ReplicaSet", "web", "rs-1"));
        assert_eq!(owned.ready, PodReady::Yes);
        // Not ready with its containers ready: marked so by another writer (a lost node's).
        assert_eq!(watched(serde_json::json!([rs(true)]), ready("False")).ready, PodReady::Marked);
        assert_eq!(watched(serde_json::json!([rs(true)]), ready("Unknown")).ready, PodReady::Marked);
        let not_ready =
            serde_json::json!([{"type": "Ready", "status": "False"}, {"type": "ContainersReady", "status": "False"}]);
        assert_eq!(watched(serde_json::json!([rs(true)]), not_ready).ready, PodReady::No);
        assert_eq!(watched(serde_json::json!([rs(true)]), serde_json::json!([])).ready, PodReady::No, "no condition");
        let bare = watched(serde_json::json!([rs(false)]), ready("True"));
        assert_eq!(bare.owner, None, "an owner that is not the controller is none");
        assert_eq!(bare.ready, PodReady::Yes);
        // Read without owners (no `--keep-last-ready`), the controller is skipped unread.
        let unread: WatchedPod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-1", "namespace": "shop", "uid": "u", "ownerReferences": [rs(true)]},
            "spec": {"nodeName": "n1"}
        }))
        .expect("a pod");
        assert_eq!(unread.pod().owner, None);
    }

    #[test]
    fn a_watched_object_the_builder_refuses_is_a_decoding_error() {
        let bad = serde_json::json!({"metadata": {"name": "p", "creationTimestamp": "yesterday"}});
        let error = serde_json::from_value::<WatchedPod>(bad).expect_err("a bad time").to_string();
        assert_eq!(error, "item 0 (Pod p): metadata.creationTimestamp: \"yesterday\" is not an RFC 3339 time");
    }
}
