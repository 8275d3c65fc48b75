//! What a cluster's profile is taken from, live (`kubectl taint-evict profile`, `audit
//! --profile-from-cluster`; docs/audit.md, "The cluster's profile"): every node (one LIST, their zone
//! labels), the controller manager's static pod and the API server's (one LIST each, by label, in
//! `kube-system`, as JSON) and `GET /version`, at once. Never a GET per object.

use crate::cluster::client::Connection;
use crate::cluster::error::ClusterError;
use crate::decode::api_server;
use crate::decode::controller_manager::Found;

use super::read::{read_controller_manager, read_static_pod};

/// What the cluster shows of its profile.
#[derive(Clone, Debug)]
pub struct ProfileRead {
    /// Each node's zone, as the node lifecycle controller names it (`""` for a node without zone
    /// labels).
    pub zones: Vec<String>,
    /// The server's minor version (`/version`), when it answered.
    pub minor: Option<u32>,
    /// The controller manager's pod.
    pub controller_manager: Found,
    /// The API server's pod.
    pub api_server: Found,
}

/// Reads what a profile is taken from: the nodes' LIST fails the read (the cluster cannot be
/// read); the pods' and the version's only leave what they would have said unknown.
///
/// # Errors
/// The nodes' LIST failing, as every live read reports it.
pub async fn read_profile(connection: &Connection) -> Result<ProfileRead, ClusterError> {
    let (nodes, minor, controller_manager, api_server) = tokio::join!(
        connection.all_node_health(),
        connection.server_minor(),
        read_controller_manager(connection),
        read_static_pod(connection, api_server::SELECTOR, api_server::CONTAINER),
    );
    let zones = nodes?.iter().map(|node| node.zone.name().to_owned()).collect();
    Ok(ProfileRead { zones, minor, controller_manager, api_server })
}
