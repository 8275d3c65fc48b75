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
//!
//! [`ReadFrom`]: crate::cluster::ReadFrom

use std::collections::BTreeMap;

use futures::{StreamExt, TryStreamExt, stream};
use kube::api::ListParams;
use kube::core::Request;

use crate::cluster::client::Connection;
use crate::cluster::devices::{ClaimScope, read_devices_for};
use crate::cluster::error::ClusterError;
use crate::decode::CONTROLLER_LEASE;
use crate::decode::controller_manager::{self, Found};
use crate::decode::lifecycle::{
    Health, NODE_LEASE_NAMESPACE, read_controller_lease, read_health_page, read_lease_renewals, read_node_health,
};
use crate::engine::devices::{DeviceTaints, Devices, NEWEST_MINOR};
use crate::engine::lifecycle::{ControllerLease, NodeHealth};
use crate::engine::model::PodKey;
use crate::engine::snapshot::Snapshot;
use crate::engine::time::Timestamp;
use crate::selector::Selector;
use crate::time::skew::{Reading, Source};

pub use crate::cluster::client::{CONCURRENCY, PAGE_SIZE};
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
    /// The controller manager's Lease; `None` when it is absent or RBAC hides it.
    pub(super) async fn controller_lease(&self) -> Result<Option<(Snapshot, ControllerLease)>, ClusterError> {
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
    pub(super) async fn server_minor(&self) -> Option<u32> {
        let request = http::Request::get("/version").body(Vec::new()).ok()?;
        let body = self.send(request, "get", "the server version").await.ok()?;
        let version: serde_json::Value = serde_json::from_str(&body).ok()?;
        minor_version(&version)
    }

    /// Every node's health (one LIST of nodes), for counting zones.
    pub(super) async fn all_node_health(&self) -> Result<Vec<NodeHealth>, ClusterError> {
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
/// of the pods that hold a device with a NoExecute taint, read by LIST: one per namespace (by name
/// for one pod), or one at the cluster scope past [`PER_NODE_LISTS_UP_TO`] namespaces, never one
/// per pod. Nothing when the server does not serve them; a list that cannot be read leaves its pods
/// out.
async fn device_tainted_nodes(connection: &Connection) -> (DevicesRead, Vec<String>) {
    let read = read_devices_for(connection, ClaimScope::All).await;
    let Ok((devices, None)) = &read else { return (read, Vec::new()) };
    let pods = DeviceTaints::new(devices, NEWEST_MINOR).reserved_pods_on_tainted_devices();
    let mut by_namespace: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for key in &pods {
        by_namespace.entry(key.namespace()).or_default().push(key.name());
    }
    let lists: Vec<(String, String, String)> = if by_namespace.len() > PER_NODE_LISTS_UP_TO {
        vec![("/api/v1/pods".into(), "spec.nodeName!=".into(), "pods at the cluster scope".into())]
    } else {
        by_namespace
            .iter()
            .map(|(namespace, names)| {
                let fields = match names.as_slice() {
                    [name] => format!("metadata.name={name}"),
                    _ => "spec.nodeName!=".to_owned(),
                };
                let resource = format!("pods in namespace \"{namespace}\"");
                (format!("/api/v1/namespaces/{namespace}/pods"), fields, resource)
            })
            .collect()
    };
    let wanted: std::collections::HashSet<&PodKey> = pods.iter().collect();
    let listed: Vec<Snapshot> = stream::iter(&lists)
        .map(|(path, fields, resource)| async move {
            let params = ListParams::default().fields(fields);
            connection.list(path, params, "Pod", resource).await.unwrap_or_default()
        })
        .buffered(CONCURRENCY)
        .collect()
        .await;
    let mut nodes: Vec<String> = listed
        .iter()
        .flat_map(|snapshot| &snapshot.pods)
        .filter(|pod| wanted.contains(&pod.pod.key))
        .filter_map(|pod| pod.pod.node.as_ref().map(|node| node.to_string()))
        .collect();
    nodes.sort_unstable();
    nodes.dedup();
    (read, nodes)
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
    read_static_pod(connection, controller_manager::SELECTOR, "kube-controller-manager").await
}

/// The command line of `container` in the first pod of `kube-system` that `selector` selects (a
/// control-plane component's static pod, as kubeadm labels it): one LIST, as JSON, as
/// [`read_controller_manager`] reads the controller manager's.
pub(super) async fn read_static_pod(connection: &Connection, selector: &str, container: &str) -> Found {
    let path = format!("/api/v1/namespaces/{}/pods", controller_manager::NAMESPACE);
    let resource = format!("pods in namespace \"{}\"", controller_manager::NAMESPACE);
    let params = connection.list_params(ListParams::default().labels(selector));
    let Ok(mut request) = Request::new(&path).list(&params) else {
        return Found::Unreadable("the request could not be made".to_owned());
    };
    let json = http::HeaderValue::from_static(crate::cluster::protobuf::JSON);
    request.headers_mut().insert(http::header::ACCEPT, json);
    match connection.send(request, "list", &resource).await {
        Ok(body) => match serde_json::from_str::<serde_json::Value>(&body) {
            Ok(list) => match controller_manager::first_in_pod_list(&list, container) {
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

/// The server's minor version (`GET /version`), when it can be read.
pub async fn read_server_minor(connection: &Connection) -> Option<u32> {
    connection.server_minor().await
}

/// The controller manager Lease, when readable (absent, or hidden by RBAC: `None`), from one GET:
/// its `acquireTime` (`run`'s start-up replay uses it as `plan` does) and what the node lifecycle
/// controller's foresight reads of it.
pub async fn read_controller(
    connection: &Connection,
) -> Result<Option<(Option<Timestamp>, ControllerLease)>, ClusterError> {
    Ok(connection.controller_lease().await?.map(|(lease, health)| (lease.controller_acquired, health)))
}

#[cfg(test)]
mod tests {
    use super::minor_version;

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
