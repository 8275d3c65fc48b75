//! Reading what `plan` and `explain` need, and nothing more.
//!
//! - named nodes: one GET per node and one LIST of pods per node (`fieldSelector=spec.nodeName=NODE`);
//! - `-l` or no node: one LIST of nodes (label selector server-side), then the pods of the selected
//!   nodes: per node, or one cluster-wide LIST (`spec.nodeName!=`) when more than a handful;
//! - a game day (`--down`): every pod, one cluster-wide LIST, for the roll-up per owner;
//! - the `kube-system/kube-controller-manager` Lease, when RBAC allows (a 403 or 404 is no restart);
//! - what the node lifecycle controller reads, beside those: one LIST of the node Leases in
//!   `kube-node-lease` (a 403 is a warning: the prediction then rests on Ready conditions); when a
//!   selected node may be tainted, one LIST of every node (zones are counted), `GET /version`
//!   (the controller's defaults depend on it) and one LIST of the controller manager's pod in
//!   `kube-system` by label (its settings are on its command line), beside the pod reads.
//!
//! Reads come from the API server's watch cache (`resourceVersion=0`, unlimited, as informers' first
//! lists) unless a quorum read is asked for ([`ReadFrom`]), which is paged (`limit`/`continue`); a
//! continue token is followed in both. Requests for different nodes run concurrently, bounded.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use futures::{StreamExt, TryStreamExt, stream};
use kube::api::{GetParams, ListParams};
use kube::core::Request;

use super::client::{Connection, ReadFrom};
use super::devices::{ClaimScope, read_devices_for};
use super::error::ClusterError;
use crate::decode::controller_manager::{self, Found};
use crate::decode::lifecycle::{
    Health, NODE_LEASE_NAMESPACE, read_controller_lease, read_health_page, read_lease_renewals, read_node_health,
};
use crate::decode::{CONTROLLER_LEASE, DumpError, Page, read_object, read_page};
use crate::engine::devices::{DeviceTaints, Devices, NEWEST_MINOR};
use crate::engine::lifecycle::{ConditionTaint, ControllerLease, NodeHealth};
use crate::engine::model::{NodeName, PodKey, Toleration};
use crate::engine::snapshot::{Owner, OwnerTemplate, Snapshot, TaintsWritten, TolerationsWritten, Workloads};
use crate::engine::time::Timestamp;
use crate::engine::tolerate::{Tolerance, TolerationWindow, tolerance};
use crate::selector::Selector;
use crate::time::skew::{Reading, Source};

pub use super::client::{CONCURRENCY, PAGE_SIZE};
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
    /// Every node (`audit`).
    All,
}

impl Connection {
    /// GETs one object and reads its answer a second way too (`also`); `Ok(None)` on 404.
    async fn get_read<T>(
        &self,
        path: &str,
        name: &str,
        kind: &str,
        resource: &str,
        also: impl FnOnce(&[u8]) -> Result<T, DumpError>,
    ) -> Result<Option<(Snapshot, T)>, ClusterError> {
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
                let read = read_object(body.as_bytes(), kind).and_then(|object| Ok((object, also(body.as_bytes())?)));
                read.map(Some).map_err(|e| self.decode("get", resource, &body, &e))
            }
            Err(ClusterError::ApiFailed { code: 404, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// LISTs every page.
    async fn list(&self, path: &str, params: ListParams, kind: &str, resource: &str) -> Result<Snapshot, ClusterError> {
        self.list_read(path, params, kind, resource, |_| Ok(())).await
    }

    /// `params` read from where [`ReadFrom`] says: the watch cache (`resourceVersion=0`, in one
    /// answer), or etcd in pages of [`PAGE_SIZE`].
    fn list_params(&self, params: ListParams) -> ListParams {
        // The watch cache serves a read at resourceVersion=0 only without a limit (kube leaves the
        // version out of a limited one, as client-go does, since servers before 1.31 ignore the limit).
        match self.read {
            ReadFrom::Cache => params.match_any(),
            ReadFrom::Quorum => params.limit(PAGE_SIZE),
        }
    }

    /// LISTs every page, and reads each a second way too (`also`).
    async fn list_read(
        &self,
        path: &str,
        params: ListParams,
        kind: &str,
        resource: &str,
        mut also: impl FnMut(&[u8]) -> Result<(), DumpError>,
    ) -> Result<Snapshot, ClusterError> {
        let mut snapshot = Snapshot::default();
        let mut params = self.list_params(params);
        loop {
            // kube only rejects a version match without a resourceVersion or an Exact match at "0"
            // (these parameters set none or NotOlderThan at "0"); `http` rejects a URL past 64 KiB,
            // which a label selector can make.
            let request =
                Request::new(path).list(&params).map_err(|e| ClusterError::unsendable("list", resource, &e))?;
            let body = self.send(request, "list", resource).await?;
            let Page { snapshot: page, continue_token } = read_page(body.as_bytes(), kind)
                .and_then(|page| also(body.as_bytes()).map(|()| page))
                .map_err(|e| self.decode("list", resource, &body, &e))?;
            snapshot.merge(page);
            match continue_token {
                Some(token) => params = params.continue_token(&token),
                None => return Ok(snapshot),
            }
        }
    }

    /// The error for an answer that did not read: not an API server's when it is not a JSON object
    /// (a web server's page), else a field of the wrong shape.
    fn decode(&self, verb: &'static str, resource: &str, body: &str, error: &DumpError) -> ClusterError {
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
    async fn controller_lease(&self) -> Result<Option<(Snapshot, ControllerLease)>, ClusterError> {
        let (namespace, name) = CONTROLLER_LEASE;
        let path = format!("/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases");
        match self.get_read(&path, name, "Lease", "leases in kube-system", read_controller_lease).await {
            Err(ClusterError::Forbidden { .. }) => Ok(None),
            Ok(Some((snapshot, lease))) => {
                if let Some(renewed) = lease.renewed {
                    self.time.observe(Reading::lease(Source::ControllerLease, renewed, self.time.clock().local_now()));
                }
                Ok(Some((snapshot, lease)))
            }
            other => other,
        }
    }

    /// Every node Lease's last renewal (one LIST in `kube-node-lease`); `Ok(Err(message))` when RBAC
    /// denies it: the answer then lacks what that message says.
    async fn node_leases(&self) -> Result<Result<Vec<(String, Option<Timestamp>)>, String>, ClusterError> {
        let path = format!("/apis/coordination.k8s.io/v1/namespaces/{NODE_LEASE_NAMESPACE}/leases");
        let resource = format!("leases in namespace \"{NODE_LEASE_NAMESPACE}\"");
        let mut renewals = Vec::new();
        let read = self.list_read(&path, ListParams::default(), "Lease", &resource, |page| {
            renewals.extend(read_lease_renewals(page)?);
            Ok(())
        });
        match read.await {
            Ok(_) => {
                // The freshest stamp bounds the offset the closest.
                if let Some(renewed) = renewals.iter().filter_map(|(_, renewed)| *renewed).max() {
                    self.time.observe(Reading::lease(Source::NodeLease, renewed, self.time.clock().local_now()));
                }
                Ok(Ok(renewals))
            }
            Err(ClusterError::Forbidden { .. }) => Ok(Err(format!(
                "cannot list leases in namespace \"{NODE_LEASE_NAMESPACE}\" (forbidden): a silent kubelet is seen \
                 only once its node is Ready=Unknown (grant list on leases there: deploy/rbac-plan.yaml)"
            ))),
            Err(error) => Err(error),
        }
    }

    /// The server's minor version (`GET /version`), for the controller's defaults; `None` when it
    /// cannot be read or says none.
    async fn server_minor(&self) -> Option<u32> {
        let request = http::Request::get("/version").body(Vec::new()).ok()?;
        let body = self.send(request, "get", "the server version").await.ok()?;
        let version: serde_json::Value = serde_json::from_str(&body).ok()?;
        minor_version(&version)
    }

    /// Every node's health (one LIST of nodes), for counting zones.
    async fn all_node_health(&self) -> Result<Vec<NodeHealth>, ClusterError> {
        let mut nodes = Vec::new();
        self.list_read("/api/v1/nodes", ListParams::default(), "Node", "nodes", |page| {
            nodes.extend(read_health_page(page, "Node")?.nodes);
            Ok(())
        })
        .await?;
        Ok(nodes)
    }

    /// The pods bound to `nodes`; with `every_pod`, those of every node.
    async fn pods_on(&self, nodes: &[String], every_pod: bool) -> Result<Snapshot, ClusterError> {
        if nodes.len() > PER_NODE_LISTS_UP_TO || every_pod {
            let params = ListParams::default().fields("spec.nodeName!=");
            let mut all = self.list("/api/v1/pods", params, "Pod", "pods at the cluster scope").await?;
            if every_pod {
                return Ok(all);
            }
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

    /// What the device-taint controller reads for the pods of `snapshot` that name claims: nothing
    /// when none does; `read_before` when read already. With the server's minor version, which its rules
    /// depend on (`known` when read).
    async fn devices_for(
        &self,
        snapshot: &Snapshot,
        known: Option<u32>,
        read_before: Option<DevicesRead>,
    ) -> Result<(Devices, Option<String>, Option<u32>), ClusterError> {
        let mut namespaces = std::collections::BTreeSet::new();
        for pod in snapshot.pods.iter().filter(|pod| pod.claims.is_some()) {
            namespaces.insert(pod.pod.key.namespace().to_owned());
        }
        if namespaces.is_empty() {
            return Ok((Devices::default(), None, known));
        }
        let minor = async { if known.is_some() { known } else { self.server_minor().await } };
        let read = async {
            match read_before {
                Some(read) => read,
                None => read_devices_for(self, ClaimScope::Namespaces(&namespaces)).await,
            }
        };
        let (read, minor) = tokio::join!(read, minor);
        let (devices, lack) = read?;
        Ok((devices, lack, minor))
    }
}

/// The DRA objects read, and what they lack.
type DevicesRead = Result<(Devices, Option<String>), ClusterError>;

/// Before the pods of every affected node are read: the DRA objects (every claim), and the nodes
/// whose pods hold a device with a NoExecute taint (one GET per such pod). Nothing when the
/// server does not serve them.
async fn device_tainted_nodes(connection: &Connection) -> (DevicesRead, Vec<String>) {
    let read = read_devices_for(connection, ClaimScope::All).await;
    let Ok((devices, None)) = &read else { return (read, Vec::new()) };
    let pods = DeviceTaints::new(devices, NEWEST_MINOR).reserved_pods_on_tainted_devices();
    let nodes: Vec<Option<String>> = stream::iter(&pods)
        .map(|key| async move {
            let path = format!("/api/v1/namespaces/{}/pods", key.namespace());
            let resource = format!("pods in namespace \"{}\"", key.namespace());
            let pod = connection.get_read(&path, key.name(), "Pod", &resource, |_| Ok(())).await;
            let pod = pod.ok().flatten().and_then(|(snapshot, ())| snapshot.pods.into_iter().next());
            pod.and_then(|pod| pod.pod.node).map(|node| node.to_string())
        })
        .buffered(CONCURRENCY)
        .collect()
        .await;
    (read, nodes.into_iter().flatten().collect())
}

/// What a live read says of node health (docs/node-lifecycle.md), beside its snapshot.
#[derive(Debug, Default)]
pub struct LiveHealth {
    /// The health of the nodes read: every node of the cluster when some selected node may be
    /// tainted (zones are counted), else only the selected ones; Lease renewals and the controller
    /// Lease applied.
    pub health: Health,
    /// The server's minor version (`GET /version`), when it could be read.
    pub minor: Option<u32>,
    /// What the answer lacks because RBAC denied a read, as a warning to print.
    pub lacks: Option<String>,
    /// What the DRA device-taint controller reads, when a pod read names a claim (empty otherwise).
    pub devices: Devices,
    /// What the device taints lack (a resource not served, or denied), as a warning to print.
    pub devices_lack: Option<String>,
    /// The controller manager's pod, read when the node lifecycle controller's settings are needed
    /// (some node read may be tainted, or every pod is read); `None` when not read.
    pub controller_manager: Option<Found>,
}

/// Whether a node may be tainted or held back by the node lifecycle controller (not `Ready=True`,
/// or silent) at the instant given (the control plane's, as read so far): only then are every
/// node's health and its pods read. The caller knows the flags.
pub type Unsettled<'a> = &'a (dyn Fn(&NodeHealth, Timestamp) -> bool + Sync);

/// The controller Lease's answer (with its snapshot part) and the node Leases' renewals (or what
/// their answer lacks).
type HealthReads = (Option<(Snapshot, ControllerLease)>, Result<Vec<(String, Option<Timestamp>)>, String>);

/// The health reads that go beside the node reads: the controller Lease and the node Leases, at once.
/// The server version is read only when a node is unsettled (beside the pod reads): only the
/// prediction and the silence of a kubelet depend on its defaults.
async fn health_reads(connection: &Connection) -> Result<HealthReads, ClusterError> {
    let (controller, leases) = tokio::join!(connection.controller_lease(), connection.node_leases());
    Ok((controller?, leases?))
}

/// The server's minor version when `needed`.
async fn minor_if(connection: &Connection, needed: bool) -> Option<u32> {
    if needed { connection.server_minor().await } else { None }
}

/// The controller manager's pod when `needed`.
async fn manager_if(connection: &Connection, needed: bool) -> Option<Found> {
    if needed { Some(read_controller_manager(connection).await) } else { None }
}

/// The controller manager's command line, from its pod: one LIST of the pods of `kube-system`
/// labelled `component=kube-controller-manager` (a static pod as kubeadm makes it), as JSON (the
/// protobuf rewrite keeps no command line), from where the other reads come. A refusal or a
/// failure is no error: the settings are then assumed, and the answer says why
/// (docs/node-lifecycle.md, "The controller's settings").
pub async fn read_controller_manager(connection: &Connection) -> Found {
    let path = format!("/api/v1/namespaces/{}/pods", controller_manager::NAMESPACE);
    let resource = format!("pods in namespace \"{}\"", controller_manager::NAMESPACE);
    let params = connection.list_params(ListParams::default().labels(controller_manager::SELECTOR));
    let Ok(mut request) = Request::new(&path).list(&params) else {
        return Found::Unreadable("the request could not be made".to_owned());
    };
    let json = http::HeaderValue::from_static(super::protobuf::JSON);
    request.headers_mut().insert(http::header::ACCEPT, json);
    match connection.send(request, "list", &resource).await {
        Ok(body) => match serde_json::from_str::<serde_json::Value>(&body) {
            Ok(list) => match controller_manager::from_pod_list(&list) {
                Some((name, args)) => Found::Pod { name, args },
                None => Found::NoPod,
            },
            Err(_) => Found::Unreadable(format!("the list of {resource} did not read")),
        },
        Err(ClusterError::Forbidden { .. }) => Found::Unreadable(format!("cannot list {resource} (forbidden)")),
        Err(error) => Found::Unreadable(format!("listing {resource} failed: {error}")),
    }
}

/// Reads the nodes `selection` names, their pods, and what the node lifecycle controller reads (the
/// controller Lease, the node Leases, the server version; every node when a selected one is
/// `unsettled`). Without a node or `-l`, the nodes kept are those with a NoExecute taint and those
/// `unsettled`. With `every_pod`, the pods of every node are read, not only the selected nodes'.
pub async fn read_snapshot(
    connection: &Connection,
    selection: &NodeSelection,
    unsettled: Unsettled<'_>,
    every_pod: bool,
) -> Result<(Snapshot, LiveHealth), ClusterError> {
    let nodes = async {
        let mut health = Vec::new();
        let snapshot = match selection {
            NodeSelection::Named(names) => {
                let found: Vec<(Snapshot, NodeHealth)> = stream::iter(names)
                    .map(|name| async move {
                        connection
                            .get_read("/api/v1/nodes", name, "Node", "nodes", read_node_health)
                            .await?
                            .ok_or_else(|| ClusterError::NodeNotFound(name.clone()))
                    })
                    .buffered(CONCURRENCY)
                    .try_collect()
                    .await?;
                let mut snapshot = Snapshot::default();
                for (node, node_health) in found {
                    snapshot.merge(node);
                    health.push(node_health);
                }
                snapshot
            }
            NodeSelection::Labels(selector) => {
                let params = ListParams::default().labels(selector.as_str());
                connection
                    .list_read("/api/v1/nodes", params, "Node", "nodes", |page| {
                        health.extend(read_health_page(page, "Node")?.nodes);
                        Ok(())
                    })
                    .await?
            }
            NodeSelection::Tainted | NodeSelection::All => {
                connection
                    .list_read("/api/v1/nodes", ListParams::default(), "Node", "nodes", |page| {
                        health.extend(read_health_page(page, "Node")?.nodes);
                        Ok(())
                    })
                    .await?
            }
        };
        Ok::<_, ClusterError>((snapshot, health))
    };
    let complete = matches!(selection, NodeSelection::Tainted);
    let devices = async { if complete { Some(device_tainted_nodes(connection).await) } else { None } };
    let (reads, nodes, devices) = tokio::join!(health_reads(connection), nodes, devices);
    // The nodes' answer first: their failure is the one to report (the Leases are extras).
    let (mut snapshot, nodes) = nodes?;
    let (devices_read, device_nodes) = devices.unzip();
    let (controller, leases) = reads?;
    let renewals = leases.as_deref().unwrap_or_default();
    let mut health = Health { nodes, ..Health::default() };
    health.apply_lease_renewals(renewals);
    let now = connection.time.clock().now();
    let unsettled = |node: &NodeHealth| unsettled(node, now);
    if complete {
        let mut keep: std::collections::HashSet<&str> =
            health.nodes.iter().filter(|node| unsettled(node)).map(|node| node.name.as_str()).collect();
        keep.extend(device_nodes.iter().flatten().map(String::as_str));
        snapshot.nodes.retain(|n| n.taints.iter().any(|t| t.is_no_execute()) || keep.contains(n.name.as_str()));
    }
    let any_unsettled = health.nodes.iter().any(&unsettled);
    let everyone = !complete && any_unsettled && !matches!(selection, NodeSelection::All);
    let names: Vec<String> = snapshot.nodes.iter().map(|n| n.name.to_string()).collect();
    let all_nodes = async { if everyone { connection.all_node_health().await.map(Some) } else { Ok(None) } };
    let needed = any_unsettled || every_pod;
    let (pods, all_nodes, minor, manager) = tokio::join!(
        connection.pods_on(&names, every_pod),
        all_nodes,
        minor_if(connection, needed),
        manager_if(connection, needed)
    );
    snapshot.merge(pods?);
    if let Some(nodes) = all_nodes? {
        health.nodes = nodes;
        health.apply_lease_renewals(renewals);
    }
    if let Some((lease, lease_health)) = controller {
        snapshot.merge(lease);
        health.controller = Some(lease_health);
    }
    let (devices, devices_lack, minor) = connection.devices_for(&snapshot, minor, devices_read).await?;
    let controller_manager = manager;
    Ok((snapshot, LiveHealth { health, minor, lacks: leases.err(), devices, devices_lack, controller_manager }))
}

/// Reads one pod, its node, and what the node lifecycle controller reads (as [`read_snapshot`]):
/// what `explain` needs.
pub async fn read_pod(
    connection: &Connection,
    namespace: &str,
    name: &str,
    unsettled: Unsettled<'_>,
) -> Result<(Snapshot, LiveHealth), ClusterError> {
    let path = format!("/api/v1/namespaces/{namespace}/pods");
    let resource = format!("pods in namespace \"{namespace}\"");
    let get = connection.get_read(&path, name, "Pod", &resource, |_| Ok(()));
    let (pod, reads) = tokio::join!(get, health_reads(connection));
    let (mut snapshot, ()) = pod?.ok_or_else(|| ClusterError::PodNotFound(format!("{namespace}/{name}")))?;
    let (controller, leases) = reads?;
    let renewals = leases.as_deref().unwrap_or_default();
    let mut health = Health::default();
    let mut minor = None;
    let mut controller_manager = None;
    if let Some(node) = snapshot.pods.first().and_then(|p| p.pod.node.clone()) {
        let (node, node_health) = connection
            .get_read("/api/v1/nodes", node.as_str(), "Node", "nodes", read_node_health)
            .await?
            .ok_or_else(|| ClusterError::NodeNotFound(node.to_string()))?;
        snapshot.merge(node);
        health.nodes.push(node_health);
        health.apply_lease_renewals(renewals);
        let now = connection.time.clock().now();
        if health.nodes.iter().any(|node| unsettled(node, now)) {
            let (nodes, version, manager) = tokio::join!(
                connection.all_node_health(),
                connection.server_minor(),
                read_controller_manager(connection)
            );
            health.nodes = nodes?;
            health.apply_lease_renewals(renewals);
            minor = version;
            controller_manager = Some(manager);
        }
    }
    if let Some((lease, lease_health)) = controller {
        snapshot.merge(lease);
        health.controller = Some(lease_health);
    }
    let (devices, devices_lack, minor) = connection.devices_for(&snapshot, minor, None).await?;
    Ok((snapshot, LiveHealth { health, minor, lacks: leases.err(), devices, devices_lack, controller_manager }))
}

/// The minor version a `/version` answer names: `gitVersion`'s (`v1.32.4-gke.100`), else `minor`'s
/// digits (`"29+"`).
fn minor_version(version: &serde_json::Value) -> Option<u32> {
    let from_git = version["gitVersion"].as_str().and_then(|git| {
        let mut parts = git.trim_start_matches('v').split('.');
        (parts.next()? == "1").then_some(())?;
        let minor: String = parts.next()?.chars().take_while(char::is_ascii_digit).collect();
        minor.parse().ok()
    });
    from_git.or_else(|| {
        let minor: String = version["minor"].as_str()?.chars().take_while(char::is_ascii_digit).collect();
        minor.parse().ok()
    })
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

/// The server's minor version (`GET /version`), when it can be read.
pub async fn read_server_minor(connection: &Connection) -> Option<u32> {
    connection.server_minor().await
}

/// The controller manager Lease, when readable (absent, or hidden by RBAC: `None`).
pub async fn read_controller_health(connection: &Connection) -> Result<Option<ControllerLease>, ClusterError> {
    Ok(connection.controller_lease().await?.map(|(_, lease)| lease))
}

/// Whether the node Leases can be listed (a LIST of one); `Err` with the warning when RBAC denies it.
pub async fn node_leases_readable(connection: &Connection) -> Result<(), String> {
    let path = format!("/apis/coordination.k8s.io/v1/namespaces/{NODE_LEASE_NAMESPACE}/leases");
    let resource = format!("leases in namespace \"{NODE_LEASE_NAMESPACE}\"");
    let request = Request::new(&path).list(&ListParams::default().limit(1)).expect("a valid LIST request");
    match connection.send(request, "list", &resource).await {
        Err(ClusterError::Forbidden { .. }) => Err(format!(
            "cannot list leases in namespace \"{NODE_LEASE_NAMESPACE}\" (forbidden): a silent kubelet is seen only \
             once its node is Ready=Unknown (grant list and watch on leases there: deploy/rbac-run.yaml)"
        )),
        _ => Ok(()),
    }
}

/// The controller manager Lease's `acquireTime`, when readable: `run`'s start-up replay uses it as
/// `plan` does.
pub async fn read_controller_acquired(connection: &Connection) -> Result<Option<Timestamp>, ClusterError> {
    Ok(connection.controller_lease().await?.and_then(|(lease, _)| lease.controller_acquired))
}

/// How many `TaintManagerEviction` events another controller (the cluster's own) reported in the
/// hour before `now`, and when the last of them was; `None` when events cannot be read.
pub async fn recent_upstream_evictions(connection: &Connection, now: Timestamp) -> Option<UpstreamEvictions> {
    let params = ListParams::default().fields("reason=TaintManagerEviction").limit(PAGE_SIZE);
    let request = Request::new("/api/v1/events").list(&params).ok()?;
    let body = connection.send(request, "list", "events").await.ok()?;
    let list: serde_json::Value = serde_json::from_str(&body).ok()?;
    upstream_evictions(&list, now)
}

/// The `TaintManagerEviction` events of another controller in the hour before `now`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UpstreamEvictions {
    /// How many.
    pub count: usize,
    /// When the last was (its `lastTimestamp`, else `eventTime`, else `firstTimestamp`).
    pub last: Timestamp,
}

/// [`recent_upstream_evictions`] of an Event list as read; `None` when there is none.
fn upstream_evictions(list: &serde_json::Value, now: Timestamp) -> Option<UpstreamEvictions> {
    let hour_ago = now.add_nanos(-3600 * 1_000_000_000);
    let times: Vec<Timestamp> = list["items"]
        .as_array()?
        .iter()
        .filter(|event| {
            let reporter = event["reportingComponent"].as_str().or_else(|| event["source"]["component"].as_str());
            reporter != Some(crate::cluster::evict::CONTROLLER)
        })
        .filter_map(|event| {
            ["lastTimestamp", "eventTime", "firstTimestamp"]
                .iter()
                .find_map(|field| event[*field].as_str().and_then(crate::decode::parse_time))
        })
        .filter(|&at| at >= hour_ago)
        .collect();
    Some(UpstreamEvictions { count: times.len(), last: times.into_iter().max()? })
}

/// The nodes of `snapshot` whose `unreachable`/`not-ready` NoExecute taint has a `timeAdded`: those
/// a swap may have given a new one.
#[must_use]
pub fn condition_tainted(snapshot: &Snapshot) -> Vec<&str> {
    let tainted = |node: &&crate::engine::snapshot::SnapshotNode| {
        node.taints.iter().any(|t| t.time_added.is_some() && ConditionTaint::from_key(&t.key).is_some())
    };
    snapshot.nodes.iter().filter(tainted).map(|node| node.name.as_str()).collect()
}

/// When the node's Events last said each of `nodes` became not ready (its newest `NodeNotReady`,
/// from its kubelet or the node lifecycle controller, with no `NodeReady` after it): the evidence
/// of a swapped condition taint (docs/upstream.md, "A taint swapped"). `None` when events cannot
/// be read.
pub async fn not_ready_since(connection: &Connection, nodes: &[&str]) -> Option<BTreeMap<NodeName, Timestamp>> {
    not_ready_spells(connection, Some(nodes)).await
}

/// [`not_ready_since`] for every node, as `run` reads it at start.
pub async fn every_not_ready_since(connection: &Connection) -> Option<BTreeMap<NodeName, Timestamp>> {
    not_ready_spells(connection, None).await
}

/// When each node (of `nodes`, or every one) last became not ready, as its Events say.
async fn not_ready_spells(connection: &Connection, nodes: Option<&[&str]>) -> Option<BTreeMap<NodeName, Timestamp>> {
    let mut newest: BTreeMap<String, (Option<Timestamp>, Option<Timestamp>)> =
        nodes.into_iter().flatten().map(|&node| (node.to_owned(), (None, None))).collect();
    let mut params = ListParams::default().fields("involvedObject.kind=Node").limit(PAGE_SIZE);
    loop {
        let request = Request::new("/api/v1/events").list(&params).ok()?;
        let body = connection.send(request, "list", "events").await.ok()?;
        let list: serde_json::Value = serde_json::from_str(&body).ok()?;
        for event in list["items"].as_array()? {
            let Some(name) = event["involvedObject"]["name"].as_str() else { continue };
            let seen = match nodes {
                Some(_) => match newest.get_mut(name) {
                    Some(seen) => seen,
                    None => continue,
                },
                None => newest.entry(name.to_owned()).or_default(),
            };
            let slot = match event["reason"].as_str() {
                Some("NodeNotReady") => &mut seen.0,
                Some("NodeReady") => &mut seen.1,
                _ => continue,
            };
            let at = [&event["lastTimestamp"], &event["series"]["lastObservedTime"], &event["eventTime"]]
                .into_iter()
                .chain([&event["firstTimestamp"]])
                .find_map(|field| field.as_str().and_then(crate::decode::parse_time));
            if let Some(at) = at {
                *slot = (*slot).max(Some(at));
            }
        }
        match list["metadata"]["continue"].as_str().filter(|token| !token.is_empty()) {
            Some(token) => params.continue_token = Some(token.to_owned()),
            None => break,
        }
    }
    let spells = newest.into_iter().filter_map(|(node, (not_ready, ready))| match (not_ready, ready) {
        (Some(not_ready), ready) if ready.is_none_or(|ready| ready < not_ready) => {
            Some((node.as_str().into(), not_ready))
        }
        _ => None,
    });
    Some(spells.collect())
}

/// The pods of `snapshot` on a node with NoExecute taints they tolerate for a while: those whose
/// countdown a toleration edit may have outlived.
pub fn counting_down(snapshot: &Snapshot) -> Vec<&crate::engine::snapshot::SnapshotPod> {
    let tainted: std::collections::HashMap<&str, &[crate::engine::model::Taint]> = snapshot
        .nodes
        .iter()
        .filter(|node| !node.taints.is_empty())
        .map(|node| (node.name.as_str(), &node.taints[..]))
        .collect();
    let counting = |pod: &&crate::engine::snapshot::SnapshotPod| {
        let Some(taints) = pod.pod.node.as_ref().and_then(|node| tainted.get(node.as_str())) else { return false };
        matches!(tolerance(taints, &pod.pod.tolerations), Tolerance::Tolerated(TolerationWindow::After { .. }))
    };
    snapshot.pods.iter().filter(counting).collect()
}

/// [`tolerations_written`] for the pods counting down on every node with a NoExecute taint, as
/// `run` and `plan -w` read it once at start: they take over countdowns that may have outlived an
/// edit. Empty when the nodes or pods cannot be read.
pub async fn every_tolerations_written(connection: &Connection) -> BTreeMap<PodKey, TolerationsWritten> {
    let read = async {
        let mut snapshot = connection.list("/api/v1/nodes", ListParams::default(), "Node", "nodes").await?;
        snapshot.nodes.retain(|node| !node.taints.is_empty());
        let names: Vec<String> = snapshot.nodes.iter().map(|node| node.name.to_string()).collect();
        if !names.is_empty() {
            snapshot.merge(connection.pods_on(&names, false).await?);
        }
        Ok::<_, ClusterError>(snapshot)
    };
    match read.await {
        Ok(snapshot) => tolerations_written(connection, &counting_down(&snapshot)).await,
        Err(_) => BTreeMap::new(),
    }
}

/// The pods (as JSON) on `nodes` that `wanted` names, by LIST: one per node up to
/// [`PER_NODE_LISTS_UP_TO`] nodes, else one at the cluster scope, however many pods they hold.
/// A list that cannot be read leaves its pods out.
async fn pods_as_json(
    connection: &Connection,
    nodes: &[&str],
    wanted: &std::collections::HashSet<(&str, &str)>,
) -> Vec<serde_json::Value> {
    let selectors: Vec<String> = if nodes.len() > PER_NODE_LISTS_UP_TO {
        vec!["spec.nodeName!=".to_owned()]
    } else {
        nodes.iter().map(|node| format!("spec.nodeName={node}")).collect()
    };
    // The pods of one namespace (`explain`, `-n`) are listed there; one pod (`explain`) by its name too.
    let mut namespaces = wanted.iter().map(|(namespace, _)| *namespace);
    let first = namespaces.next();
    let path = match first.filter(|first| namespaces.all(|namespace| namespace == *first)) {
        Some(namespace) => format!("/api/v1/namespaces/{namespace}/pods"),
        None => "/api/v1/pods".to_owned(),
    };
    let one = (wanted.len() == 1).then(|| wanted.iter().next().map(|(_, name)| *name)).flatten();
    let selectors = selectors.into_iter().map(|selector| match one {
        Some(name) => format!("{selector},metadata.name={name}"),
        None => selector,
    });
    let path = &path;
    let lists: Vec<Vec<serde_json::Value>> = stream::iter(selectors)
        .map(async |selector| {
            let params = connection.list_params(ListParams::default().fields(&selector));
            list_json(connection, path, params, "pods", |pod| {
                let meta = &pod["metadata"];
                let key = (meta["namespace"].as_str().unwrap_or_default(), meta["name"].as_str().unwrap_or_default());
                wanted.contains(&key)
            })
            .await
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    lists.into_iter().flatten().collect()
}

/// Every page of the LIST at `path` (from where `params` say), as JSON (`managedFields` included,
/// which the protobuf rewrite leaves out), keeping the items `keep` keeps; what was read before a
/// failure otherwise.
async fn list_json(
    connection: &Connection,
    path: &str,
    mut params: ListParams,
    resource: &str,
    keep: impl Fn(&serde_json::Value) -> bool,
) -> Vec<serde_json::Value> {
    let mut kept = Vec::new();
    loop {
        let Ok(mut request) = Request::new(path).list(&params) else { return kept };
        let json = http::HeaderValue::from_static(super::protobuf::JSON);
        request.headers_mut().insert(http::header::ACCEPT, json);
        let Ok(body) = connection.send(request, "list", resource).await else { return kept };
        let Ok(mut list) = serde_json::from_str::<serde_json::Value>(&body) else { return kept };
        let token = list["metadata"]["continue"].as_str().filter(|token| !token.is_empty()).map(str::to_owned);
        if let Some(items) = list["items"].as_array_mut() {
            kept.extend(items.drain(..).filter(|item| keep(item)));
        }
        match token {
            Some(token) => params.continue_token = Some(token),
            None => return kept,
        }
    }
}

/// When each of `pods` had its tolerations written after its creation, and by whom: the
/// `managedFields` entry that owns `spec.tolerations` (the earliest, should several own the same
/// list), with what its controller's pod template holds. The pods are read by LIST (by node, or
/// at the cluster scope), the templates by LIST per kind and namespace (or at the cluster scope
/// per kind past [`PER_NODE_LISTS_UP_TO`] namespaces): the requests do not grow with the pods or
/// owners. They come from where the pods did (the watch cache unless `--quorum-read`). A pod written only at its creation, or that cannot be read, is left out
/// (docs/upstream.md, "A toleration edited").
pub async fn tolerations_written(
    connection: &Connection,
    pods: &[&crate::engine::snapshot::SnapshotPod],
) -> BTreeMap<PodKey, TolerationsWritten> {
    if pods.is_empty() {
        return BTreeMap::new();
    }
    let wanted: std::collections::HashSet<(&str, &str)> =
        pods.iter().map(|pod| (pod.pod.key.namespace(), pod.pod.key.name())).collect();
    let mut nodes: Vec<&str> = pods.iter().filter_map(|pod| pod.pod.node.as_ref().map(|node| node.as_str())).collect();
    nodes.sort_unstable();
    nodes.dedup();
    let read = |pod: &serde_json::Value| {
        let meta = &pod["metadata"];
        let key = PodKey::new(meta["namespace"].as_str()?, meta["name"].as_str()?);
        let created = meta["creationTimestamp"].as_str().and_then(crate::decode::parse_time)?;
        let written = meta["managedFields"]
            .as_array()?
            .iter()
            .filter(|entry| !entry["fieldsV1"]["f:spec"]["f:tolerations"].is_null())
            .filter_map(|entry| {
                let at = entry["time"].as_str().and_then(crate::decode::parse_time)?;
                Some(TaintsWritten { at, manager: entry["manager"].as_str().unwrap_or_default().into() })
            })
            .min_by_key(|written| written.at)?;
        (written.at > created).then(|| (key, written, controller(&meta["ownerReferences"])))
    };
    let written: Vec<(PodKey, TaintsWritten, Option<Controller>)> =
        pods_as_json(connection, &nodes, &wanted).await.iter().filter_map(read).collect();
    let templates = templates(connection, &written).await;
    let template = |controller: &Option<Controller>| match controller {
        None => OwnerTemplate::NoOwner,
        Some(Controller { owner, resource: None }) => OwnerTemplate::OtherKind(owner.clone()),
        Some(Controller { owner, resource: Some(_) }) => match templates.get(&*owner.uid) {
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

/// The pod templates' tolerations of the controllers of `written`, by controller UID: one LIST
/// per kind and namespace, or one per kind at the cluster scope past [`PER_NODE_LISTS_UP_TO`]
/// namespaces. A controller whose list cannot be read is left out.
async fn templates(
    connection: &Connection,
    written: &[(PodKey, TaintsWritten, Option<Controller>)],
) -> HashMap<String, Arc<[Toleration]>> {
    let mut wanted: BTreeMap<(&'static str, &'static str), std::collections::BTreeSet<&str>> = BTreeMap::new();
    let mut uids = std::collections::HashSet::new();
    for (key, _, controller) in written {
        if let Some(Controller { owner, resource: Some(resource) }) = controller {
            wanted.entry(*resource).or_default().insert(key.namespace());
            uids.insert(&*owner.uid);
        }
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
            let params = connection.list_params(ListParams::default());
            list_json(connection, &path, params, resource, |object| {
                object["metadata"]["uid"].as_str().is_some_and(|uid| uids.contains(uid))
            })
            .await
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

/// A pod's controller, and where its pod template is read (API path and resource; `None`: a kind
/// without one read).
struct Controller {
    owner: Owner,
    resource: Option<(&'static str, &'static str)>,
}

/// The controller among `references` (a pod's `ownerReferences`, the entry with `controller: true`).
fn controller(references: &serde_json::Value) -> Option<Controller> {
    let reference = references.as_array()?.iter().find(|r| r["controller"].as_bool() == Some(true))?;
    let text = |field: &str| reference[field].as_str().unwrap_or_default();
    let resource = match (text("apiVersion"), text("kind")) {
        ("apps/v1", "ReplicaSet") => Some(("/apis/apps/v1", "replicasets")),
        ("apps/v1", "StatefulSet") => Some(("/apis/apps/v1", "statefulsets")),
        ("apps/v1", "DaemonSet") => Some(("/apis/apps/v1", "daemonsets")),
        ("batch/v1", "Job") => Some(("/apis/batch/v1", "jobs")),
        _ => None,
    };
    let owner = Owner { kind: text("kind").into(), name: text("name").into(), uid: text("uid").into() };
    Some(Controller { owner, resource })
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
        let resource = match &*owner.kind {
            "ReplicaSet" => ("/apis/apps/v1", "replicasets"),
            "Job" => ("/apis/batch/v1", "jobs"),
            _ => continue,
        };
        wanted.entry(resource).or_default().insert(namespace);
        uids.insert(&*owner.uid);
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
        let Some((_, named)) = owners.iter().find(|(_, owner)| *owner.uid == *uid) else { continue };
        let kind = named.kind.to_string();
        let owner = Owner { kind: kind.into(), name: text(&meta["name"]).into(), uid: text(&meta["uid"]).into() };
        let controller = controller(&meta["ownerReferences"]).map(|controller| controller.owner);
        workloads.add_object(&Arc::from(text(&meta["namespace"])), owner, controller);
    }
    workloads
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

/// Checks that the initial lists `run` and `plan -w` need are allowed and can be sent: one small LIST
/// of the nodes (with the label `selector` the watch uses) and of pods (of `namespace` alone when
/// given). A request refused for good ends the command here, rather than a watch retrying it forever.
pub async fn preflight(
    connection: &Connection,
    selector: Option<&str>,
    namespace: Option<&str>,
) -> Result<(), ClusterError> {
    let nodes = selector.map_or_else(ListParams::default, |selector| ListParams::default().labels(selector));
    let pods = match namespace {
        Some(namespace) => {
            (format!("/api/v1/namespaces/{namespace}/pods"), format!("pods in namespace \"{namespace}\""))
        }
        None => ("/api/v1/pods".to_owned(), "pods at the cluster scope".to_owned()),
    };
    for (path, resource, params) in
        [("/api/v1/nodes".to_owned(), "nodes".to_owned(), nodes), (pods.0, pods.1, ListParams::default())]
    {
        let resource = resource.as_str();
        let request =
            Request::new(path).list(&params.limit(1)).map_err(|e| ClusterError::unsendable("list", resource, &e))?;
        connection.send(request, "list", resource).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_cluster_s_own_evictions_say_when_the_last_one_was() {
        let now = super::Timestamp::from_unix_seconds(1_795_341_600); // 2026-11-22T10:00:00Z
        let list = serde_json::json!({"items": [
            {"source": {"component": "taint-eviction-controller"}, "lastTimestamp": "2026-11-22T09:10:00Z"},
            {"reportingComponent": "taint-eviction-controller", "eventTime": "2026-11-22T09:20:00.000000Z"},
            {"source": {"component": "taint-eviction-controller"}, "lastTimestamp": "2026-11-22T08:00:00Z"},
        ]});
        let found = super::upstream_evictions(&list, now).expect("two in the hour");
        assert_eq!(found.count, 2);
        assert_eq!(found.last, super::Timestamp::from_unix_seconds(1_795_341_600 - 40 * 60));
        assert_eq!(super::upstream_evictions(&serde_json::json!({"items": []}), now), None);
    }

    use super::{controller, minor_version};

    #[test]
    fn a_pods_controller_is_read_with_where_its_template_is() {
        let read = |refs: serde_json::Value| controller(&refs).map(|c| (c.owner.kind.to_string(), c.resource));
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

    #[test]
    fn minor_version_is_read_from_git_version_else_minor() {
        let read = |text: &str| minor_version(&serde_json::from_str(text).expect("JSON"));
        assert_eq!(read(r#"{"major":"1","minor":"29","gitVersion":"v1.29.6"}"#), Some(29));
        assert_eq!(read(r#"{"major":"1","minor":"32+","gitVersion":"v1.32.4-gke.1000"}"#), Some(32));
        assert_eq!(read(r#"{"major":"1","minor":"31+"}"#), Some(31));
        assert_eq!(read(r#"{"gitVersion":"v2.0.0"}"#), None);
        assert_eq!(read("{}"), None);
    }
}
