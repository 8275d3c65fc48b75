//! The pod watches of `run`, kept to the pods of the selected nodes.
//!
//! What is kept is proportional to what is watched, not to the cluster:
//! - every node: one cluster-wide watch of the bound pods (`spec.nodeName!=`);
//! - up to [`PER_NODE_WATCHES`] named nodes: one watch per node (`spec.nodeName=NODE`, as each
//!   kubelet watches its own pods), their lists merged into one;
//! - more names, or `-l`: one cluster-wide watch whose pods are decoded and dropped at once unless
//!   bound to a selected node. With `-l` the selected nodes are those the node watch reports; a node
//!   that starts matching has its pods listed then (`spec.nodeName=NODE`), and its later changes pass
//!   the filter. Deletions always pass (a deletion of a pod not kept changes nothing).
//!
//! A pod not yet bound has no node and is irrelevant to a NoExecute taint; its binding reaches the
//! watch as an event (the pod starts matching the field selector), and is kept then.
//!
//! Owns: the pod watches and which pods they keep. Uses: `watched`, `scope`, `outage`, the
//! runtime's changes.

use std::collections::{HashMap, HashSet};

use futures::StreamExt;
use kube::api::ListParams;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Api, Client};
use tokio::sync::mpsc;

use super::decoded::WatchedPod;
use super::outage::{Health, backoff};
use super::relist::relisting;
use super::scope::NodeScope;
use crate::engine::model::{NodeName, PodKey};
use crate::engine::snapshot::SnapshotPod;
use crate::runtime::PodChange;
use crate::time::Clock;

/// Up to this many named nodes are watched one by one; more share one filtered watch.
///
/// A per-node watch is what each kubelet keeps: the API server serves it from its watch cache's
/// node index, so ten cost it about what ten kubelets do, and `run` receives only their pods. Past a
/// handful, one more stream per node buys nothing in memory (the filter keeps the same pods) while
/// every re-list after a `410 Gone` is multiplied by the number of watches.
pub const PER_NODE_WATCHES: usize = 10;

/// What the node watch says about which nodes are selected (with `-l`).
#[derive(Debug)]
pub enum Selected {
    /// The complete list of matching nodes (the initial list, or a re-list).
    Listed(Vec<NodeName>),
    /// A node matches (it may have matched already).
    Applied(NodeName),
    /// A node no longer matches, or is gone.
    Deleted(NodeName),
}

/// Where the selected nodes come from.
pub enum Nodes {
    /// Every node.
    All,
    /// These names, fixed.
    Named(HashSet<String>),
    /// The node watch's matches, as they change.
    Watched(mpsc::UnboundedReceiver<Selected>),
}

impl Nodes {
    /// The selection for `scope`; with `-l`, also the sender the node watch reports matches on.
    pub fn of(scope: &NodeScope) -> (Self, Option<mpsc::UnboundedSender<Selected>>) {
        match scope {
            NodeScope::All => (Self::All, None),
            NodeScope::Named(names) => (Self::Named(names.iter().cloned().collect()), None),
            NodeScope::Labels(_) => {
                let (tx, rx) = mpsc::unbounded_channel();
                (Self::Watched(rx), Some(tx))
            }
        }
    }
}

fn convert<const OWNERS: bool>(pod: &WatchedPod<OWNERS>) -> SnapshotPod {
    pod.pod().clone()
}

fn key<const OWNERS: bool>(pod: &WatchedPod<OWNERS>) -> PodKey {
    pod.pod().pod.key.clone()
}

/// Starts the pod watches for `nodes`, of `namespace` alone when given (every list and watch is then
/// the namespace's); their changes go to `changes`. With `owners` (`run --keep-last-ready`), the pods
/// carry their controller ([`WatchedPod`]).
pub(super) fn spawn(
    client: &Client,
    nodes: Nodes,
    namespace: Option<&str>,
    health: Health,
    changes: mpsc::Sender<PodChange>,
    owners: bool,
) {
    if owners {
        spawn_reading::<true>(client, nodes, namespace, health, changes);
    } else {
        spawn_reading::<false>(client, nodes, namespace, health, changes);
    }
}

/// [`spawn`], the pods read with their controller when `OWNERS`.
fn spawn_reading<const OWNERS: bool>(
    client: &Client,
    nodes: Nodes,
    namespace: Option<&str>,
    health: Health,
    changes: mpsc::Sender<PodChange>,
) {
    let api = match namespace {
        Some(namespace) => Api::<WatchedPod<OWNERS>>::namespaced(client.clone(), namespace),
        None => Api::<WatchedPod<OWNERS>>::all(client.clone()),
    };
    match nodes {
        Nodes::Named(names) if names.len() <= PER_NODE_WATCHES => {
            let mut names: Vec<String> = names.into_iter().collect();
            names.sort_unstable();
            tokio::spawn(per_node(api, names, health, changes));
        }
        Nodes::All => {
            tokio::spawn(filtered(api, Filter::All, health, changes));
        }
        Nodes::Named(names) => {
            tokio::spawn(filtered(api, Filter::Named(names), health, changes));
        }
        Nodes::Watched(selected) => {
            let filter = Filter::Watched { selected, nodes: HashSet::new(), known: false };
            tokio::spawn(filtered(api, filter, health, changes));
        }
    }
}

/// Which bound pods the cluster-wide watch keeps.
enum Filter {
    All,
    Named(HashSet<String>),
    /// `nodes` is what `selected` reported so far; `known` once its first list is in.
    Watched {
        selected: mpsc::UnboundedReceiver<Selected>,
        nodes: HashSet<String>,
        known: bool,
    },
}

impl Filter {
    fn keeps<const OWNERS: bool>(&self, pod: &WatchedPod<OWNERS>) -> bool {
        match self {
            Self::All => true,
            Self::Named(names) => pod.node_name().is_some_and(|node| names.contains(node)),
            Self::Watched { nodes, .. } => pod.node_name().is_some_and(|node| nodes.contains(node)),
        }
    }

    /// Whether the watch may start: with `-l`, once the matching nodes are known.
    fn ready(&self) -> bool {
        !matches!(self, Self::Watched { known: false, .. })
    }

    /// Applies `change`; returns the nodes that newly match after the first list (to be listed).
    fn select(&mut self, change: Selected) -> Vec<String> {
        let Self::Watched { nodes, known, .. } = self else { return Vec::new() };
        let was_known = std::mem::replace(known, true);
        let added = match change {
            Selected::Listed(names) => {
                let names: HashSet<String> = names.iter().map(|n| n.as_str().to_owned()).collect();
                let added = names.difference(nodes).cloned().collect();
                *nodes = names;
                added
            }
            Selected::Applied(name) => {
                if nodes.insert(name.as_str().to_owned()) {
                    vec![name.as_str().to_owned()]
                } else {
                    Vec::new()
                }
            }
            Selected::Deleted(name) => {
                nodes.remove(name.as_str());
                Vec::new()
            }
        };
        if was_known { added } else { Vec::new() }
    }

    async fn changed(&mut self) -> Option<Selected> {
        match self {
            Self::Watched { selected, .. } => selected.recv().await,
            _ => std::future::pending().await,
        }
    }
}

/// Lists the pods bound to `node` until the list succeeds (or nobody waits for it any more).
async fn list_node<const OWNERS: bool>(
    api: Api<WatchedPod<OWNERS>>,
    node: String,
    found: mpsc::UnboundedSender<(String, Vec<WatchedPod<OWNERS>>)>,
    clock: Clock,
) {
    // From the watch cache, as the watch's own lists.
    let params = ListParams::default().fields(&format!("spec.nodeName={node}")).match_any();
    let mut delays = backoff();
    loop {
        match api.list(&params).await {
            Ok(list) => {
                let _ = found.send((node, list.items));
                return;
            }
            Err(_) if found.is_closed() => return,
            Err(error) => {
                tracing::debug!("listing the pods of node {node}: {error}");
                let delay = delays.next().unwrap_or(std::time::Duration::from_secs(5));
                tokio::time::sleep_until(clock.instant() + delay).await;
            }
        }
    }
}

/// The nodes whose pods are being listed (they started matching), with the pods the watch has
/// reported on them since. The watch's word is as new as the list's or newer, and the watch brings
/// whatever follows, so those pods are left out of the list's answer: a pod deleted meanwhile must
/// not come back from it.
#[derive(Default)]
struct Pickups(HashMap<String, HashSet<PodKey>>);

impl Pickups {
    fn start(&mut self, node: &str) {
        self.0.entry(node.to_owned()).or_default();
    }

    /// The watch reported `pod`.
    fn seen<const OWNERS: bool>(&mut self, pod: &WatchedPod<OWNERS>) {
        if let Some(seen) = pod.node_name().and_then(|node| self.0.get_mut(node)) {
            seen.insert(key(pod));
        }
    }

    /// The listed pods of `node` still to apply.
    fn finish<const OWNERS: bool>(&mut self, node: &str, pods: Vec<WatchedPod<OWNERS>>) -> Vec<WatchedPod<OWNERS>> {
        let seen = self.0.remove(node).unwrap_or_default();
        pods.into_iter().filter(|pod| !seen.contains(&key(pod))).collect()
    }
}

/// One cluster-wide watch of the bound pods, filtered on arrival.
async fn filtered<const OWNERS: bool>(
    api: Api<WatchedPod<OWNERS>>,
    mut filter: Filter,
    mut health: Health,
    changes: mpsc::Sender<PodChange>,
) {
    let (watched, config) = (api.clone(), super::cache::from_watch_cache().fields("spec.nodeName!="));
    let events = relisting(move || watcher::watcher(watched.clone(), config.clone()).boxed()).backoff(backoff());
    let mut interrupted = false;
    let mut events = std::pin::pin!(events);
    let (found_tx, mut found) = mpsc::unbounded_channel();
    let mut pickups = Pickups::default();
    let mut listing = Vec::new();
    loop {
        let change = tokio::select! {
            biased;
            Some(selected) = filter.changed() => {
                for node in filter.select(selected) {
                    pickups.start(&node);
                    tokio::spawn(list_node(api.clone(), node, found_tx.clone(), health.clock()));
                }
                continue;
            }
            Some((node, pods)) = found.recv() => {
                // Still selected: its pods join (the watch brings their changes from now on).
                let kept: Vec<SnapshotPod> =
                    pickups.finish(&node, pods).iter().filter(|pod| filter.keeps(pod)).map(convert).collect();
                for pod in kept {
                    if changes.send(PodChange::Applied(pod)).await.is_err() {
                        return;
                    }
                }
                tracing::debug!("picked up the pods of node {node}");
                continue;
            }
            event = events.next(), if filter.ready() => match event {
                None => return,
                Some(Err(error)) => {
                    if health.failed(&error) {
                        return;
                    }
                    // Said here, not below: a failure is no successful read, and must not end the
                    // outage it begins.
                    if !std::mem::replace(&mut interrupted, true)
                        && changes.send(PodChange::Interrupted).await.is_err()
                    {
                        return;
                    }
                    continue;
                }
                Some(Ok(Event::Init)) => {
                    // Said before the list is requested: nothing is known of the connection yet.
                    listing.clear();
                    continue;
                }
                Some(Ok(Event::InitApply(pod))) => {
                    if filter.keeps(&pod) {
                        listing.push(convert(&pod));
                    }
                    None
                }
                Some(Ok(Event::InitDone)) => {
                    interrupted = false;
                    Some(PodChange::Listed(std::mem::take(&mut listing)))
                }
                Some(Ok(Event::Apply(pod))) => {
                    pickups.seen(&pod);
                    filter.keeps(&pod).then(|| PodChange::Applied(convert(&pod)))
                }
                Some(Ok(Event::Delete(pod))) => {
                    pickups.seen(&pod);
                    Some(PodChange::Deleted(key(&pod)))
                }
            },
        };
        // Only a successful read comes here.
        health.ok();
        if let Some(change) = change
            && changes.send(change).await.is_err()
        {
            return;
        }
    }
}

/// The per-node watches' lists, merged into one view.
#[derive(Default)]
struct Merge {
    /// Each watch's list under way (the initial one, or a re-list).
    listing: Vec<Option<Vec<SnapshotPod>>>,
    /// Before the first complete list: each watch's pods so far (`None` until its list is in).
    initial: Option<Vec<Option<HashMap<PodKey, SnapshotPod>>>>,
    /// After it: which watch each kept pod came from, so a deletion (or a re-list) from one node's
    /// watch never removes a pod of the same name that another node's watch reported since.
    owner: HashMap<PodKey, usize>,
}

impl Merge {
    fn new(watches: usize) -> Self {
        Self { listing: vec![None; watches], initial: Some(vec![None; watches]), owner: HashMap::new() }
    }

    /// The changes one watch's `event` makes.
    fn event<const OWNERS: bool>(&mut self, watch: usize, event: Event<WatchedPod<OWNERS>>) -> Vec<PodChange> {
        match event {
            Event::Init => {
                self.listing[watch] = Some(Vec::new());
                Vec::new()
            }
            Event::InitApply(pod) => {
                self.listing[watch].get_or_insert_with(Vec::new).push(convert(&pod));
                Vec::new()
            }
            Event::InitDone => {
                let pods = self.listing[watch].take().unwrap_or_default();
                self.listed(watch, pods)
            }
            Event::Apply(pod) => {
                let pod = convert(&pod);
                if let Some(initial) = &mut self.initial {
                    initial[watch].get_or_insert_with(HashMap::new).insert(pod.pod.key.clone(), pod);
                    return Vec::new();
                }
                self.owner.insert(pod.pod.key.clone(), watch);
                vec![PodChange::Applied(pod)]
            }
            Event::Delete(pod) => {
                let key = key(&pod);
                if let Some(initial) = &mut self.initial {
                    if let Some(pods) = &mut initial[watch] {
                        pods.remove(&key);
                    }
                    return Vec::new();
                }
                if self.owner.get(&key) == Some(&watch) {
                    self.owner.remove(&key);
                    vec![PodChange::Deleted(key)]
                } else {
                    Vec::new()
                }
            }
        }
    }

    fn listed(&mut self, watch: usize, pods: Vec<SnapshotPod>) -> Vec<PodChange> {
        if let Some(initial) = &mut self.initial {
            initial[watch] = Some(pods.into_iter().map(|pod| (pod.pod.key.clone(), pod)).collect());
            return self.complete();
        }
        // A re-list of one node: its pods missing from it are gone, the others are (re)applied.
        let listed: HashSet<&PodKey> = pods.iter().map(|pod| &pod.pod.key).collect();
        let gone: Vec<PodKey> = self
            .owner
            .iter()
            .filter(|(key, w)| **w == watch && !listed.contains(key))
            .map(|(k, _)| k.clone())
            .collect();
        let mut changes = Vec::with_capacity(gone.len() + pods.len());
        for key in gone {
            self.owner.remove(&key);
            changes.push(PodChange::Deleted(key));
        }
        for pod in pods {
            self.owner.insert(pod.pod.key.clone(), watch);
            changes.push(PodChange::Applied(pod));
        }
        changes
    }

    /// Once every watch has listed: the one complete list.
    fn complete(&mut self) -> Vec<PodChange> {
        if self.initial.as_ref().is_none_or(|lists| lists.iter().any(Option::is_none)) {
            return Vec::new();
        }
        let lists = self.initial.take().unwrap_or_default();
        let mut all = Vec::new();
        for (watch, pods) in lists.into_iter().enumerate() {
            for (key, pod) in pods.unwrap_or_default() {
                self.owner.insert(key, watch);
                all.push(pod);
            }
        }
        vec![PodChange::Listed(all)]
    }
}

/// One watch per named node (`spec.nodeName=NODE`), merged.
async fn per_node<const OWNERS: bool>(
    api: Api<WatchedPod<OWNERS>>,
    names: Vec<String>,
    mut health: Health,
    changes: mpsc::Sender<PodChange>,
) {
    let watches = names.iter().enumerate().map(|(watch, name)| {
        let config = super::cache::from_watch_cache().fields(&format!("spec.nodeName={name}"));
        let api = api.clone();
        relisting(move || watcher::watcher(api.clone(), config.clone()).boxed())
            .backoff(backoff())
            .map(move |event| (watch, event))
            .boxed()
    });
    let mut events = futures::stream::select_all(watches);
    let mut merge = Merge::new(names.len());
    // The watches failing now: the outage is over when none is.
    let mut failing = HashSet::new();
    // The watches that broke and have not listed again: the merged view is interrupted until none.
    let mut broken = HashSet::new();
    while let Some((watch, event)) = events.next().await {
        let event = match event {
            Ok(event) => event,
            Err(error) => {
                if health.failed(&error) {
                    return;
                }
                failing.insert(watch);
                if broken.is_empty() && changes.send(PodChange::Interrupted).await.is_err() {
                    return;
                }
                broken.insert(watch);
                continue;
            }
        };
        // `Init` is said before the list is requested: it says nothing of the connection.
        if !matches!(event, Event::Init) {
            failing.remove(&watch);
            if failing.is_empty() {
                health.ok();
            }
        }
        let relisted = matches!(event, Event::InitDone) && broken.remove(&watch) && broken.is_empty();
        let mut merged = merge.event(watch, event);
        // Every broken watch has listed again: what the merge said since is the state (the first
        // complete list says so itself).
        if relisted && !merged.iter().any(|change| matches!(change, PodChange::Listed(_))) {
            merged.push(PodChange::Resumed);
        }
        for change in merged {
            if changes.send(change).await.is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, node: &str) -> WatchedPod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}-{node}")},
            "spec": {"nodeName": node}
        }))
        .expect("a pod")
    }

    fn names(changes: &[PodChange]) -> Vec<String> {
        changes
            .iter()
            .map(|change| match change {
                PodChange::Listed(pods) => {
                    let mut names: Vec<&str> = pods.iter().map(|p| p.pod.key.name()).collect();
                    names.sort_unstable();
                    format!("listed {}", names.join(","))
                }
                PodChange::Applied(pod) => format!("applied {}", pod.pod.key.name()),
                PodChange::Deleted(key) => format!("deleted {}", key.name()),
                PodChange::Interrupted => "interrupted".to_owned(),
                PodChange::Resumed => "resumed".to_owned(),
            })
            .collect()
    }

    #[test]
    fn per_node_lists_become_one_list_once_every_node_has_listed() {
        let mut merge = Merge::new(2);
        assert!(merge.event::<false>(0, Event::Init).is_empty());
        assert!(merge.event::<false>(0, Event::InitApply(pod("a", "n1"))).is_empty());
        assert!(merge.event::<false>(0, Event::InitDone).is_empty());
        // Node 1's watch already follows changes while node 2's still lists.
        assert!(merge.event::<false>(0, Event::Apply(pod("b", "n1"))).is_empty());
        assert!(merge.event::<false>(0, Event::Delete(pod("a", "n1"))).is_empty());
        merge.event::<false>(1, Event::Init);
        merge.event::<false>(1, Event::InitApply(pod("c", "n2")));
        assert_eq!(names(&merge.event::<false>(1, Event::InitDone)), ["listed b,c"]);
        assert_eq!(names(&merge.event::<false>(1, Event::Apply(pod("d", "n2")))), ["applied d"]);
    }

    #[test]
    fn a_node_relist_removes_only_that_nodes_missing_pods() {
        let mut merge = Merge::new(2);
        for (watch, pods) in [(0, ["a", "b"]), (1, ["c", "d"])] {
            merge.event::<false>(watch, Event::Init);
            for name in pods {
                merge.event::<false>(watch, Event::InitApply(pod(name, "n")));
            }
            merge.event::<false>(watch, Event::InitDone);
        }
        merge.event::<false>(0, Event::Init);
        merge.event::<false>(0, Event::InitApply(pod("b", "n1")));
        assert_eq!(names(&merge.event::<false>(0, Event::InitDone)), ["deleted a", "applied b"]);
    }

    #[test]
    fn a_deletion_from_another_nodes_watch_keeps_the_pod_of_the_same_name() {
        let mut merge = Merge::new(2);
        for watch in 0..2 {
            merge.event::<false>(watch, Event::Init);
            merge.event::<false>(watch, Event::InitDone);
        }
        merge.event::<false>(0, Event::Apply(pod("web-0", "n1")));
        // Re-created on n2; n2's watch reports it before n1's reports the old one's deletion.
        assert_eq!(names(&merge.event::<false>(1, Event::Apply(pod("web-0", "n2")))), ["applied web-0"]);
        assert!(merge.event::<false>(0, Event::Delete(pod("web-0", "n1"))).is_empty());
        assert_eq!(names(&merge.event::<false>(1, Event::Delete(pod("web-0", "n2")))), ["deleted web-0"]);
    }

    #[test]
    fn a_pod_the_watch_reported_while_its_node_was_listed_is_not_taken_from_the_list() {
        let mut pickups = Pickups::default();
        pickups.seen(&pod("before", "n2"));
        pickups.start("n2");
        // Deleted (or changed) after the list was served, reported before its answer arrived.
        pickups.seen(&pod("deleted", "n2"));
        pickups.seen(&pod("elsewhere", "n3"));
        let listed = pickups.finish("n2", vec![pod("before", "n2"), pod("deleted", "n2")]);
        let names: Vec<_> = listed.iter().map(|p| key(p).name().to_owned()).collect();
        assert_eq!(names, ["before"]);
        assert!(pickups.0.is_empty());
    }

    #[test]
    fn a_node_that_starts_matching_is_listed_once_the_first_list_is_in() {
        let (_tx, rx) = mpsc::unbounded_channel();
        let mut filter = Filter::Watched { selected: rx, nodes: HashSet::new(), known: false };
        assert!(!filter.ready());
        assert!(filter.select(Selected::Listed(vec![NodeName::from("n1")])).is_empty());
        assert!(filter.ready());
        assert!(filter.keeps(&pod("a", "n1")) && !filter.keeps(&pod("b", "n2")));
        assert_eq!(filter.select(Selected::Applied(NodeName::from("n2"))), ["n2"]);
        assert!(filter.select(Selected::Applied(NodeName::from("n2"))).is_empty());
        assert!(filter.keeps(&pod("b", "n2")));
        filter.select(Selected::Deleted(NodeName::from("n1")));
        assert!(!filter.keeps(&pod("a", "n1")));
        assert_eq!(filter.select(Selected::Listed(vec![NodeName::from("n1"), NodeName::from("n2")])), ["n1"]);
    }
}
