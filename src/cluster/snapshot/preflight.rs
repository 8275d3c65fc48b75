//! What is checked before `run` and `plan -w` start their watches: that their lists can be sent,
//! and whether RBAC lets the node Leases be listed (a warning when it does not).

use kube::api::ListParams;
use kube::core::Request;

use crate::cluster::client::Connection;
use crate::cluster::error::ClusterError;
use crate::decode::lifecycle::NODE_LEASE_NAMESPACE;

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

/// Checks that the lists `run` and `plan -w` start their watches with can be sent: of the nodes with
/// the label `selector` (a URL past 64 KiB cannot be), and of pods (of `namespace` alone when given).
/// The requests are built, not sent: a list the server refuses (RBAC) ends the command from the
/// watch, which makes it anyway, naming the verb and resource as this does.
pub fn preflight(selector: Option<&str>, namespace: Option<&str>) -> Result<(), ClusterError> {
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
        Request::new(path).list(&params).map_err(|e| ClusterError::unsendable("list", &resource, &e))?;
    }
    Ok(())
}
