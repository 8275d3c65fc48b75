//! The pods' controllers read by kind: their pod templates' tolerations (for the pods edited
//! mid-countdown) and their own controllers (`audit`), by LIST per kind and namespace, never a GET
//! per object.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use futures::{StreamExt, stream};
use kube::api::ListParams;

use super::read::PER_NODE_LISTS_UP_TO;
use super::request::list_json;
use crate::cluster::client::{CONCURRENCY, Connection, PAGE_SIZE};
use crate::engine::model::{PodKey, Toleration};
use crate::engine::snapshot::{Owner, TaintsWritten, Workloads};

/// The pod templates' tolerations of the controllers of `written`, by controller UID: one LIST
/// per kind and namespace, or one per kind at the cluster scope past [`PER_NODE_LISTS_UP_TO`]
/// namespaces. A controller whose list cannot be read is left out.
pub(super) async fn templates(
    connection: &Connection,
    written: &[(PodKey, TaintsWritten, Option<Controller>)],
) -> HashMap<String, Arc<[Toleration]>> {
    let mut wanted: BTreeMap<(&'static str, &'static str), std::collections::BTreeSet<&str>> = BTreeMap::new();
    let mut uids = std::collections::HashSet::new();
    for (key, _, controller) in written {
        if let Some(Controller { owner, resource: Some(resource) }) = controller {
            wanted.entry(*resource).or_default().insert(key.namespace());
            uids.insert(owner.uid());
        }
    }
    // Owned: `run` reads them in a task, whose future must be `Send` whatever the lifetimes.
    let mut paths: Vec<(String, String)> = Vec::new();
    for ((api, resource), namespaces) in wanted {
        if namespaces.len() > PER_NODE_LISTS_UP_TO {
            paths.push((format!("{api}/{resource}"), resource.to_owned()));
        } else {
            paths.extend(
                namespaces
                    .into_iter()
                    .map(|namespace| (format!("{api}/namespaces/{namespace}/{resource}"), resource.to_owned())),
            );
        }
    }
    let uids: &std::collections::HashSet<String> = &uids.into_iter().map(str::to_owned).collect();
    let lists: Vec<Vec<serde_json::Value>> = stream::iter(paths)
        .map(|(path, resource)| {
            list_owned(connection, path, connection.list_params(ListParams::default()), resource, uids)
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    lists
        .into_iter()
        .flatten()
        .filter_map(|object| Some((object["metadata"]["uid"].as_str()?.to_owned(), template_tolerations(&object)?)))
        .collect()
}

/// [`list_json`] of the objects whose UID is among `uids`.
async fn list_owned(
    connection: &Connection,
    path: String,
    params: ListParams,
    resource: String,
    uids: &std::collections::HashSet<String>,
) -> Vec<serde_json::Value> {
    let keep = |object: &serde_json::Value| object["metadata"]["uid"].as_str().is_some_and(|uid| uids.contains(uid));
    list_json(connection, &path, params, &resource, keep).await
}

/// A pod's controller, and where its pod template is read (API path and resource; `None`: a kind
/// without one read).
pub(super) struct Controller {
    pub(super) owner: Owner,
    pub(super) resource: Option<(&'static str, &'static str)>,
}

impl Controller {
    /// The controller `owner`, of the group and version `api_version` names.
    pub(super) fn of(api_version: &str, owner: &Owner) -> Self {
        let resource = match (api_version, owner.kind()) {
            ("apps/v1", "ReplicaSet") => Some(("/apis/apps/v1", "replicasets")),
            ("apps/v1", "StatefulSet") => Some(("/apis/apps/v1", "statefulsets")),
            ("apps/v1", "DaemonSet") => Some(("/apis/apps/v1", "daemonsets")),
            ("batch/v1", "Job") => Some(("/apis/batch/v1", "jobs")),
            _ => None,
        };
        Self { owner: owner.clone(), resource }
    }
}

/// The controller among `references` (an object's `ownerReferences`, the entry with
/// `controller: true`).
fn controller(references: &serde_json::Value) -> Option<Controller> {
    let reference = references.as_array()?.iter().find(|r| r["controller"].as_bool() == Some(true))?;
    let text = |field: &str| reference[field].as_str().unwrap_or_default();
    let owner = Owner::new(text("kind"), text("name"), text("uid"));
    Some(Controller::of(text("apiVersion"), &owner))
}

/// The tolerations of a controller's pod template (`spec.template.spec.tolerations`), read as
/// a pod's are.
fn template_tolerations(object: &serde_json::Value) -> Option<Arc<[Toleration]>> {
    let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
    // The template's tolerations, read by the one reader of pods.
    let pod = serde_json::json!({"kind": "Pod", "metadata": {"name": "template", "namespace": namespace},
        "spec": {"tolerations": object["spec"]["template"]["spec"]["tolerations"]}});
    let read = crate::decode::read_object(pod.to_string().as_bytes(), "Pod").ok()?;
    Some(Arc::clone(&read.pods.first()?.pod.tolerations))
}

/// The own controllers of `owners` (ReplicaSets and Jobs, each with its namespace), read from
/// their objects' `ownerReferences`: one LIST per kind and namespace, or one per kind at the cluster
/// scope past [`PER_NODE_LISTS_UP_TO`] namespaces, never a GET per object. An object whose list
/// cannot be read, or that is gone, is left out: its controller is not known (docs/audit.md).
pub async fn owners_of(connection: &Connection, owners: &[(&str, &Owner)]) -> Workloads {
    let mut wanted: BTreeMap<(&'static str, &'static str), std::collections::BTreeSet<&str>> = BTreeMap::new();
    let mut uids = std::collections::HashSet::new();
    for (namespace, owner) in owners {
        let resource = match owner.kind() {
            "ReplicaSet" => ("/apis/apps/v1", "replicasets"),
            "Job" => ("/apis/batch/v1", "jobs"),
            _ => continue,
        };
        wanted.entry(resource).or_default().insert(namespace);
        uids.insert(owner.uid());
    }
    let mut paths = Vec::new();
    for ((api, resource), namespaces) in wanted {
        if namespaces.len() > PER_NODE_LISTS_UP_TO {
            paths.push((format!("{api}/{resource}"), resource));
        } else {
            paths.extend(
                namespaces.into_iter().map(|namespace| (format!("{api}/namespaces/{namespace}/{resource}"), resource)),
            );
        }
    }
    let uids = &uids;
    let lists: Vec<Vec<serde_json::Value>> = stream::iter(paths)
        .map(async |(path, resource)| {
            let params = ListParams::default().limit(PAGE_SIZE);
            list_json(connection, &path, params, resource, |object| {
                object["metadata"]["uid"].as_str().is_some_and(|uid| uids.contains(uid))
            })
            .await
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    let mut workloads = Workloads::default();
    for object in lists.into_iter().flatten() {
        let meta = &object["metadata"];
        let text = |value: &serde_json::Value| value.as_str().unwrap_or_default().to_owned();
        // The kind the pods name (a list's items may leave theirs out).
        let uid = text(&meta["uid"]);
        let Some((_, named)) = owners.iter().find(|(_, owner)| owner.uid() == uid) else { continue };
        let owner = Owner::new(named.kind(), &text(&meta["name"]), &uid);
        let controller = controller(&meta["ownerReferences"]).map(|controller| controller.owner);
        workloads.add_object(&Arc::from(text(&meta["namespace"])), owner, controller);
    }
    workloads
}

#[cfg(test)]
mod tests {
    use super::controller;

    #[test]
    fn a_pods_controller_is_read_with_where_its_template_is() {
        let read = |refs: serde_json::Value| controller(&refs).map(|c| (c.owner.kind().to_string(), c.resource));
        let reference = |api: &str, kind: &str, is: bool| serde_json::json!({"apiVersion": api, "kind": kind, "name": "web", "uid": "u", "controller": is});
        let replica_set = reference("apps/v1", "ReplicaSet", true);
        assert_eq!(
            read(serde_json::json!([replica_set])),
            Some(("ReplicaSet".into(), Some(("/apis/apps/v1", "replicasets"))))
        );
        let job = reference("batch/v1", "Job", true);
        assert_eq!(read(serde_json::json!([job])), Some(("Job".into(), Some(("/apis/batch/v1", "jobs")))));
        // Another group's kind of the same name has no template read; an owner that is not the
        // controller is none.
        let custom = reference("example.com/v1", "ReplicaSet", true);
        assert_eq!(read(serde_json::json!([custom])), Some(("ReplicaSet".into(), None)));
        assert_eq!(read(serde_json::json!([reference("apps/v1", "ReplicaSet", false)])), None);
        assert_eq!(read(serde_json::Value::Null), None);
    }
}
