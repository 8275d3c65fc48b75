//! Reading what `plan` and `explain` need, and nothing more.
//!
//! - named nodes: one GET per node and one LIST of pods per node (`fieldSelector=spec.nodeName=NODE`);
//! - `-l` or no node: one LIST of nodes (label selector server-side), then the pods of the selected
//!   nodes: per node, or one cluster-wide LIST (`spec.nodeName!=`) when more than a handful;
//! - the `kube-system/kube-controller-manager` Lease, when RBAC allows (a 403 or 404 is no restart).
//!
//! Reads come from the API server's watch cache (`resourceVersion=0`, unlimited, as informers' first
//! lists) unless a quorum read is asked for ([`ReadFrom`]), which is paged (`limit`/`continue`); a
//! continue token is followed in both. Requests for different nodes run concurrently, bounded.

use futures::{StreamExt, TryStreamExt, stream};
use kube::api::{GetParams, ListParams};
use kube::core::Request;

use super::{ClusterError, Connection, ReadFrom};
use crate::engine::replay::Snapshot;
use crate::engine::time::Timestamp;
use crate::selector::Selector;
use crate::source::file::{CONTROLLER_LEASE, Page, read_object, read_page};

/// Objects per LIST page (client-go's default).
pub const PAGE_SIZE: u32 = 500;
/// Requests in flight at once.
pub const CONCURRENCY: usize = 8;
/// Above this many selected nodes, one cluster-wide pod LIST is cheaper than one per node.
pub const PER_NODE_LISTS_UP_TO: usize = 5;

/// Which nodes to read.
#[derive(Clone, Debug)]
pub enum NodeSelection {
    /// These, by name (in this order).
    Named(Vec<String>),
    /// Those matching a label selector.
    Labels(Selector),
    /// Every node with a NoExecute taint.
    Tainted,
}

impl Connection {
    async fn send(
        &self,
        request: http::Request<Vec<u8>>,
        verb: &'static str,
        resource: &str,
    ) -> Result<String, ClusterError> {
        let call = self.client.request_text(request);
        let result = match self.request_timeout {
            Some(limit) => tokio::time::timeout(limit, call).await.map_err(|_| ClusterError::Timeout {
                server: self.server.clone(),
                verb,
                resource: resource.to_owned(),
                after: crate::output::human::std_duration(limit),
            })?,
            None => call.await,
        };
        result.map_err(|e| ClusterError::from_kube(e, &self.server, verb, resource))
    }

    /// GETs one object; `Ok(None)` on 404.
    async fn get(&self, path: &str, name: &str, kind: &str, resource: &str) -> Result<Option<Snapshot>, ClusterError> {
        let params = match self.read {
            ReadFrom::Cache => GetParams::any(),
            ReadFrom::Quorum => GetParams::default(),
        };
        // An empty name, or one a URL path cannot hold, fails here: kube checks the first, `http` the
        // second (a namespace from the kubeconfig, a node name from the server).
        let request = Request::new(path)
            .get(name, &params)
            .map_err(|_| ClusterError::InvalidName { kind: kind.to_owned(), name: name.to_owned() })?;
        match self.send(request, "get", resource).await {
            Ok(body) => {
                read_object(body.as_bytes(), kind).map(Some).map_err(|e| self.decode("get", resource, &body, &e))
            }
            Err(ClusterError::ApiFailed { code: 404, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// LISTs every page.
    async fn list(&self, path: &str, params: ListParams, kind: &str, resource: &str) -> Result<Snapshot, ClusterError> {
        let mut snapshot = Snapshot::default();
        // The watch cache serves a read at resourceVersion=0 only without a limit (kube leaves the
        // version out of a limited one, as client-go does, since servers before 1.31 ignore the limit).
        let mut params = match self.read {
            ReadFrom::Cache => params.match_any(),
            ReadFrom::Quorum => params.limit(PAGE_SIZE),
        };
        loop {
            // Cannot fail: the paths are constants, and kube only rejects a version match without a
            // resourceVersion or an Exact match at "0"; these parameters set none or NotOlderThan at "0"
            // (selectors and tokens are URL-encoded).
            let request = Request::new(path).list(&params).expect("a valid LIST request");
            let body = self.send(request, "list", resource).await?;
            let Page { snapshot: page, continue_token } =
                read_page(body.as_bytes(), kind).map_err(|e| self.decode("list", resource, &body, &e))?;
            snapshot.merge(page);
            match continue_token {
                Some(token) => params = params.continue_token(&token),
                None => return Ok(snapshot),
            }
        }
    }

    /// The error for an answer that did not read: not an API server's when it is not a JSON object
    /// (a web server's page), else a field of the wrong shape.
    fn decode(
        &self,
        verb: &'static str,
        resource: &str,
        body: &str,
        error: &crate::source::file::DumpError,
    ) -> ClusterError {
        if !body.trim_start().starts_with('{') {
            return ClusterError::NotAnApiServer {
                server: self.server.clone(),
                verb,
                resource: resource.to_owned(),
                what: "an answer that is not JSON".into(),
            };
        }
        ClusterError::Decode { server: self.server.clone(), resource: resource.to_owned(), reason: error.to_string() }
    }

    /// The controller manager's Lease; `None` when it is absent or RBAC hides it.
    async fn controller_lease(&self) -> Result<Option<Snapshot>, ClusterError> {
        let (namespace, name) = CONTROLLER_LEASE;
        let path = format!("/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases");
        match self.get(&path, name, "Lease", "leases in kube-system").await {
            Err(ClusterError::Forbidden { .. }) => Ok(None),
            other => other,
        }
    }

    async fn pods_on(&self, nodes: &[String]) -> Result<Snapshot, ClusterError> {
        if nodes.len() > PER_NODE_LISTS_UP_TO {
            let params = ListParams::default().fields("spec.nodeName!=");
            let mut all = self.list("/api/v1/pods", params, "Pod", "pods at the cluster scope").await?;
            let wanted: std::collections::HashSet<&str> = nodes.iter().map(String::as_str).collect();
            all.pods.retain(|p| p.pod.node.as_ref().is_some_and(|n| wanted.contains(n.as_str())));
            return Ok(all);
        }
        let pages: Vec<Snapshot> = stream::iter(nodes)
            .map(|node| {
                let params = ListParams::default().fields(&format!("spec.nodeName={node}"));
                self.list("/api/v1/pods", params, "Pod", "pods at the cluster scope")
            })
            .buffered(CONCURRENCY)
            .try_collect()
            .await?;
        let mut snapshot = Snapshot::default();
        pages.into_iter().for_each(|page| snapshot.merge(page));
        Ok(snapshot)
    }
}

/// Reads the nodes `selection` names, their pods and the controller Lease.
pub async fn read_snapshot(connection: &Connection, selection: &NodeSelection) -> Result<Snapshot, ClusterError> {
    let lease = connection.controller_lease();
    let nodes = async {
        match selection {
            NodeSelection::Named(names) => {
                let found: Vec<Snapshot> = stream::iter(names)
                    .map(|name| async move {
                        connection
                            .get("/api/v1/nodes", name, "Node", "nodes")
                            .await?
                            .ok_or_else(|| ClusterError::NodeNotFound(name.clone()))
                    })
                    .buffered(CONCURRENCY)
                    .try_collect()
                    .await?;
                let mut snapshot = Snapshot::default();
                found.into_iter().for_each(|node| snapshot.merge(node));
                Ok(snapshot)
            }
            NodeSelection::Labels(selector) => {
                connection.list("/api/v1/nodes", ListParams::default().labels(selector.as_str()), "Node", "nodes").await
            }
            NodeSelection::Tainted => {
                let mut all = connection.list("/api/v1/nodes", ListParams::default(), "Node", "nodes").await?;
                all.nodes.retain(|n| n.taints.iter().any(|t| t.is_no_execute()));
                Ok(all)
            }
        }
    };
    let (lease, nodes) = tokio::join!(lease, nodes);
    let mut snapshot = nodes?;
    let names: Vec<String> = snapshot.nodes.iter().map(|n| n.name.to_string()).collect();
    snapshot.merge(connection.pods_on(&names).await?);
    if let Some(lease) = lease? {
        snapshot.merge(lease);
    }
    Ok(snapshot)
}

/// Reads one pod, its node and the controller Lease (what `explain` needs).
pub async fn read_pod(connection: &Connection, namespace: &str, name: &str) -> Result<Snapshot, ClusterError> {
    let path = format!("/api/v1/namespaces/{namespace}/pods");
    let resource = format!("pods in namespace \"{namespace}\"");
    let (pod, lease) = tokio::join!(connection.get(&path, name, "Pod", &resource), connection.controller_lease());
    let mut snapshot = pod?.ok_or_else(|| ClusterError::PodNotFound(format!("{namespace}/{name}")))?;
    if let Some(node) = snapshot.pods.first().and_then(|p| p.pod.node.clone()) {
        let node = connection
            .get("/api/v1/nodes", node.as_str(), "Node", "nodes")
            .await?
            .ok_or_else(|| ClusterError::NodeNotFound(node.to_string()))?;
        snapshot.merge(node);
    }
    if let Some(lease) = lease? {
        snapshot.merge(lease);
    }
    Ok(snapshot)
}

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

/// The controller manager Lease's `acquireTime`, when readable: `run`'s start-up replay uses it as
/// `plan` does.
pub async fn read_controller_acquired(connection: &Connection) -> Result<Option<Timestamp>, ClusterError> {
    Ok(connection.controller_lease().await?.and_then(|lease| lease.controller_acquired))
}

/// How many `TaintManagerEviction` events another controller (the cluster's own) reported in the
/// hour before `now`; `None` when events cannot be read.
pub async fn recent_upstream_evictions(connection: &Connection, now: Timestamp) -> Option<usize> {
    let params = ListParams::default().fields("reason=TaintManagerEviction").limit(PAGE_SIZE);
    let request = Request::new("/api/v1/events").list(&params).ok()?;
    let body = connection.send(request, "list", "events").await.ok()?;
    let list: serde_json::Value = serde_json::from_str(&body).ok()?;
    let hour_ago = now.add_nanos(-3600 * 1_000_000_000);
    let recent = list["items"]
        .as_array()?
        .iter()
        .filter(|event| {
            let reporter = event["reportingComponent"].as_str().or_else(|| event["source"]["component"].as_str());
            reporter != Some(crate::cluster::evict::CONTROLLER)
        })
        .filter(|event| {
            ["lastTimestamp", "eventTime", "firstTimestamp"]
                .iter()
                .find_map(|field| event[*field].as_str().and_then(crate::source::file::parse_time))
                .is_some_and(|at| at >= hour_ago)
        })
        .count();
    Some(recent)
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

/// The names of the pods of `namespace`, sorted, for shell completion.
pub async fn pod_names(connection: &Connection, namespace: &str) -> Result<Vec<String>, ClusterError> {
    let path = format!("/api/v1/namespaces/{namespace}/pods");
    let resource = format!("pods in namespace \"{namespace}\"");
    let pods = connection.list(&path, ListParams::default(), "Pod", &resource).await?.pods;
    let mut names: Vec<String> = pods.into_iter().map(|pod| pod.pod.key.name().to_owned()).collect();
    names.sort();
    Ok(names)
}

/// Checks that the initial lists `run` needs are allowed: one small LIST of nodes and of pods.
pub async fn preflight(connection: &Connection) -> Result<(), ClusterError> {
    for (path, resource) in [("/api/v1/nodes", "nodes"), ("/api/v1/pods", "pods at the cluster scope")] {
        let request = Request::new(path).list(&ListParams::default().limit(1)).expect("a valid LIST request");
        connection.send(request, "list", resource).await?;
    }
    Ok(())
}
