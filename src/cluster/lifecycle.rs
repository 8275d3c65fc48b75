//! The node lifecycle controller's input the node watch does not carry: the node Leases in
//! `kube-node-lease`, watched (their renewals are the kubelets' heartbeats), for the foresight of
//! `run` and `plan -w` (`live`), which reads the nodes' health from the one node watch.

use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Api, Client};
use tokio::sync::mpsc;

use crate::decode::lifecycle::NODE_LEASE_NAMESPACE;
use crate::engine::time::Timestamp;

/// A change of the node Leases.
pub enum LeaseChange {
    /// A complete (re-)list: each node's Lease renewal, by node name.
    Listed(Vec<(String, Option<Timestamp>)>),
    /// One Lease renewed (`None`: deleted, or never renewed).
    Renewed(String, Option<Timestamp>),
    /// The Lease watch broke: nothing is foreseen from it until it has listed again.
    Interrupted,
}

/// A node Lease's name and `spec.renewTime` (`None` for one never renewed), read from the watch's
/// typed object as `decode::lifecycle` reads them from a dump.
fn renewal(lease: &Lease) -> Option<(String, Option<Timestamp>)> {
    let name = lease.metadata.name.clone()?;
    let renewed = lease.spec.as_ref().and_then(|spec| spec.renew_time.as_ref());
    Some((name, renewed.map(|at| Timestamp::from_nanos(at.0.as_nanosecond()))))
}

/// Starts the watch of the node Leases; their changes arrive on the returned channel.
pub fn watch_leases(client: &Client) -> mpsc::Receiver<LeaseChange> {
    let (tx, leases) = mpsc::channel(1024);
    // After an error the watch says so and lists again (`watch::relisting`): while it cannot see,
    // nothing is foreseen (a node whose Lease renewals it cannot hear is not silent for that).
    let api = Api::<Lease>::namespaced(client.clone(), NODE_LEASE_NAMESPACE);
    let events =
        super::watch::relisting(move || watcher::watcher(api.clone(), super::watch::from_watch_cache()).boxed())
            .default_backoff();
    tokio::spawn(async move {
        let mut events = std::pin::pin!(events);
        let mut listing = Vec::new();
        while let Some(event) = events.next().await {
            let change = match event {
                Ok(Event::Init) => {
                    listing.clear();
                    None
                }
                Ok(Event::InitApply(lease)) => {
                    listing.extend(renewal(&lease));
                    None
                }
                Ok(Event::InitDone) => Some(LeaseChange::Listed(std::mem::take(&mut listing))),
                Ok(Event::Apply(lease)) => renewal(&lease).map(|(name, at)| LeaseChange::Renewed(name, at)),
                Ok(Event::Delete(lease)) => Some(LeaseChange::Renewed(lease.metadata.name.unwrap_or_default(), None)),
                Err(_) => Some(LeaseChange::Interrupted),
            };
            if let Some(change) = change
                && tx.send(change).await.is_err()
            {
                return;
            }
        }
    });
    leases
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::lifecycle::read_lease_renewals;

    #[test]
    fn a_watched_lease_is_read_as_a_dump_reads_it() {
        let leases = serde_json::json!({"items": [
            {"metadata": {"name": "n1", "namespace": "kube-node-lease"}, "spec": {"renewTime": "2026-11-23T18:00:21.500000Z"}},
            {"metadata": {"name": "n2", "namespace": "kube-node-lease"}, "spec": {"holderIdentity": "n2"}},
            {"metadata": {"name": "n3", "namespace": "kube-node-lease"}},
        ]});
        let from_dump = read_lease_renewals(&serde_json::to_vec(&leases).expect("JSON")).expect("a list of Leases");
        let typed: Vec<Lease> = serde_json::from_value(leases["items"].clone()).expect("Leases");
        let watched: Vec<_> = typed.iter().filter_map(renewal).collect();
        assert_eq!(watched, from_dump);
        assert_eq!(watched[0].1, Some(Timestamp::from_nanos(1_795_456_821_500_000_000)));
    }
}
