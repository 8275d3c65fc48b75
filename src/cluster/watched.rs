//! Nodes and pods as the watches decode them: only the fields the engine reads.
//!
//! A real pod carries its containers, volumes, status and `managedFields` (often 5–20 KB of JSON); a
//! node carries its image list and conditions (often more). The watches decode every object of every
//! list and event, so decoding into full k8s-openapi objects is most of their cost. These types skip
//! what is not needed (serde still scans it) and convert into the k8s-openapi objects, with just those
//! fields, for `convert`.

use std::borrow::Cow;
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use kube::Resource;
use serde::{Deserialize, Deserializer};

/// The metadata fields used: identity, version (for the watch), times; labels only where asked.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Meta<Labels> {
    name: Option<String>,
    namespace: Option<String>,
    uid: Option<String>,
    resource_version: Option<String>,
    creation_timestamp: Option<Time>,
    deletion_timestamp: Option<Time>,
    #[serde(default)]
    labels: Labels,
}

/// Pod labels are never read: skipped.
#[derive(Default)]
struct NoLabels;

impl<'de> Deserialize<'de> for NoLabels {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(deserializer).map(|_| Self)
    }
}

trait IntoLabels {
    fn into_labels(self) -> Option<BTreeMap<String, String>>;
}

impl IntoLabels for NoLabels {
    fn into_labels(self) -> Option<BTreeMap<String, String>> {
        None
    }
}

impl IntoLabels for Option<BTreeMap<String, String>> {
    fn into_labels(self) -> Option<BTreeMap<String, String>> {
        self
    }
}

fn meta<'de, D, L>(deserializer: D) -> Result<ObjectMeta, D::Error>
where
    D: Deserializer<'de>,
    L: Deserialize<'de> + Default + IntoLabels,
{
    let meta = Meta::<L>::deserialize(deserializer)?;
    Ok(ObjectMeta {
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        resource_version: meta.resource_version,
        creation_timestamp: meta.creation_timestamp,
        deletion_timestamp: meta.deletion_timestamp,
        labels: meta.labels.into_labels(),
        ..ObjectMeta::default()
    })
}

fn node_meta<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ObjectMeta, D::Error> {
    meta::<D, Option<BTreeMap<String, String>>>(deserializer)
}

fn pod_meta<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ObjectMeta, D::Error> {
    meta::<D, NoLabels>(deserializer)
}

#[derive(Clone, Debug, Default, Deserialize)]
struct NodeSpec {
    taints: Option<Vec<k8s::Taint>>,
}

/// A node: name, labels, version, taints.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct WatchedNode {
    #[serde(deserialize_with = "node_meta", default)]
    metadata: ObjectMeta,
    #[serde(default)]
    spec: Option<NodeSpec>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PodSpec {
    node_name: Option<String>,
    tolerations: Option<Vec<k8s::Toleration>>,
}

#[derive(Clone, Debug, Default, Deserialize)]
struct PodStatus {
    phase: Option<String>,
    conditions: Option<Vec<k8s::PodCondition>>,
}

/// A pod: identity, version, node, tolerations, phase and conditions.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct WatchedPod {
    #[serde(deserialize_with = "pod_meta", default)]
    metadata: ObjectMeta,
    #[serde(default)]
    spec: Option<PodSpec>,
    #[serde(default)]
    status: Option<PodStatus>,
}

impl WatchedPod {
    /// `spec.nodeName`, when bound.
    #[must_use]
    pub fn node_name(&self) -> Option<&str> {
        self.spec.as_ref().and_then(|spec| spec.node_name.as_deref()).filter(|name| !name.is_empty())
    }
}

impl From<WatchedNode> for k8s::Node {
    fn from(node: WatchedNode) -> Self {
        let spec = node.spec.map(|spec| k8s::NodeSpec { taints: spec.taints, ..k8s::NodeSpec::default() });
        Self { metadata: node.metadata, spec, status: None }
    }
}

impl From<WatchedPod> for k8s::Pod {
    fn from(pod: WatchedPod) -> Self {
        let spec = pod.spec.map(|spec| k8s::PodSpec {
            node_name: spec.node_name,
            tolerations: spec.tolerations,
            ..k8s::PodSpec::default()
        });
        let status = pod.status.map(|status| k8s::PodStatus {
            phase: status.phase,
            conditions: status.conditions,
            ..k8s::PodStatus::default()
        });
        Self { metadata: pod.metadata, spec, status }
    }
}

macro_rules! core_v1_resource {
    ($type:ty, $kind:literal, $plural:literal, $scope:ty) => {
        impl Resource for $type {
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
core_v1_resource!(WatchedPod, "Pod", "pods", NamespaceResourceScope);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::convert;

    /// Every Node and Pod of the bundled example converts the same through the slim types as
    /// through the full k8s-openapi objects.
    #[test]
    fn slim_objects_convert_like_full_ones() {
        let dump: serde_json::Value =
            serde_json::from_str(include_str!("../../examples/incident.json")).expect("the example");
        let (mut nodes, mut pods) = (0, 0);
        for item in dump["items"].as_array().expect("items") {
            match item["kind"].as_str() {
                Some("Node") => {
                    let full: k8s::Node = serde_json::from_value(item.clone()).expect("a Node");
                    let slim: WatchedNode = serde_json::from_value(item.clone()).expect("a slim Node");
                    assert_eq!(slim.meta().resource_version, full.metadata.resource_version);
                    assert_eq!(convert::node(&k8s::Node::from(slim)), convert::node(&full));
                    nodes += 1;
                }
                Some("Pod") => {
                    let full: k8s::Pod = serde_json::from_value(item.clone()).expect("a Pod");
                    let slim: WatchedPod = serde_json::from_value(item.clone()).expect("a slim Pod");
                    assert_eq!(slim.meta().resource_version, full.metadata.resource_version);
                    assert_eq!(convert::pod(&k8s::Pod::from(slim)), convert::pod(&full));
                    pods += 1;
                }
                _ => {}
            }
        }
        assert!(nodes > 0 && pods > 0);
    }

    #[test]
    fn what_is_not_read_is_skipped() {
        let pod: WatchedPod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p", "namespace": "ns", "uid": "u", "resourceVersion": "7",
                         "labels": {"app": "web"}, "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}], "volumes": [{"name": "v"}]},
            "status": {"phase": "Running", "containerStatuses": [{"name": "c"}]}
        }))
        .expect("a pod");
        assert_eq!(pod.metadata.labels, None);
        assert_eq!(pod.metadata.managed_fields, None);
        assert_eq!(pod.metadata.resource_version.as_deref(), Some("7"));
        let full = k8s::Pod::from(pod);
        assert_eq!(full.spec.map(|s| s.containers.len()), Some(0));
    }
}
