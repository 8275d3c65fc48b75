//! The names of what a cluster holds: nodes and pods for shell completion and `--down-selector`,
//! namespaces, and where a pod `explain` did not find is.

use kube::api::ListParams;
use kube::core::Request;

use crate::cluster::client::Connection;
use crate::cluster::error::ClusterError;
use crate::selector::Selector;

/// The namespaces that hold a pod named `name`, sorted (for `explain` to say where a pod it did not
/// find is); empty when there are none or they cannot be listed.
pub async fn namespaces_with_pod(connection: &Connection, name: &str) -> Vec<String> {
    let params = ListParams::default().fields(&format!("metadata.name={name}"));
    let Ok(found) = connection.list("/api/v1/pods", params, "Pod", "pods at the cluster scope").await else {
        return Vec::new();
    };
    let mut namespaces: Vec<String> = found.pods.iter().map(|p| p.pod.key.namespace().to_owned()).collect();
    namespaces.sort();
    namespaces.dedup();
    namespaces
}

/// Every node's name, for shell completion: those with a NoExecute taint first, then the others,
/// each by name.
pub async fn node_names(connection: &Connection) -> Result<Vec<String>, ClusterError> {
    let nodes = connection.list("/api/v1/nodes", ListParams::default(), "Node", "nodes").await?.nodes;
    let (mut tainted, mut others): (Vec<_>, Vec<_>) =
        nodes.into_iter().partition(|node| node.taints.iter().any(crate::engine::model::Taint::is_no_execute));
    tainted.sort_by(|a, b| a.name.cmp(&b.name));
    others.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(tainted.into_iter().chain(others).map(|node| node.name.to_string()).collect())
}

/// The names of the nodes `selector` selects (server-side), in the server's order.
pub async fn node_names_selected(connection: &Connection, selector: &Selector) -> Result<Vec<String>, ClusterError> {
    let params = ListParams::default().labels(selector.as_str());
    let nodes = connection.list("/api/v1/nodes", params, "Node", "nodes").await?.nodes;
    Ok(nodes.into_iter().map(|node| node.name.to_string()).collect())
}

/// The names of the pods of `namespace`, sorted, for shell completion.
pub async fn pod_names(connection: &Connection, namespace: &str) -> Result<Vec<String>, ClusterError> {
    let path = format!("/api/v1/namespaces/{namespace}/pods");
    let resource = format!("pods in namespace \"{namespace}\"");
    let pods = connection.list(&path, ListParams::default(), "Pod", &resource).await?.pods;
    let mut names: Vec<String> = pods.into_iter().map(|pod| pod.pod.key.name().to_owned()).collect();
    names.sort();
    Ok(names)
}

/// The names of the namespaces, sorted, for shell completion (one LIST from the watch cache).
pub async fn namespace_names(connection: &Connection) -> Result<Vec<String>, ClusterError> {
    let params = ListParams::default().match_any();
    let request = Request::new("/api/v1/namespaces")
        .list(&params)
        .map_err(|e| ClusterError::unsendable("list", "namespaces", &e))?;
    let text = connection.send(request, "list", "namespaces").await?;
    let list: serde_json::Value = serde_json::from_str(&text).map_err(|e| ClusterError::Decode {
        server: connection.server.clone(),
        resource: "namespaces".into(),
        reason: e.to_string(),
    })?;
    let items = list["items"].as_array().into_iter().flatten();
    let mut names: Vec<String> =
        items.filter_map(|item| item["metadata"]["name"].as_str().map(str::to_owned)).collect();
    names.sort();
    Ok(names)
}
