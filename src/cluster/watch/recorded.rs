//! The watches of `record`: nodes, pods, Leases and two of Events, each object cut to the fields the
//! readers read as it is decoded ([`crate::decode::kept`]), so that nothing more of it is held, less
//! its `resourceVersion` (which the watch reads, and the record has no use for).
//!
//! Each watch lists and watches as `run`'s do (from the watch cache, again after any error, with the
//! same backoff), and starts over with a list when asked (`record` begins each file with every kind
//! listed). What they see reaches the recorder on one channel, in the order each watch saw it.
//!
//! Owns: [`Recorded`], [`Seen`] and [`spawn_recorded`]. Uses: kube's watcher, the decoder's cut.

use std::borrow::Cow;
use std::marker::PhantomData;

use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use kube::runtime::utils::Backoff as _;
use kube::runtime::watcher::{self, Event};
use kube::{Api, Client, Resource};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use tokio::sync::{mpsc, watch as channel};

use super::cache::from_watch_cache;
use super::outage::{backoff, permanent};
use super::relist::relisting;
use crate::cluster::error::ClusterError;
use crate::time::Clock;

/// The kinds `record` writes, in the words of its lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecordedKind {
    /// `node`.
    Node,
    /// `pod`.
    Pod,
    /// `lease`.
    Lease,
    /// `event`.
    Event,
}

impl RecordedKind {
    /// The key of an object's line (`pod`), and the `kind` of its `deleted` line.
    #[must_use]
    pub fn line(self) -> &'static str {
        match self {
            Self::Node => "node",
            Self::Pod => "pod",
            Self::Lease => "lease",
            Self::Event => "event",
        }
    }

    /// The resource listed (`pods`), as `list`, `listed` and `gap` lines name it.
    #[must_use]
    pub fn listed(self) -> &'static str {
        match self {
            Self::Node => "nodes",
            Self::Pod => "pods",
            Self::Lease => "leases",
            Self::Event => "events",
        }
    }
}

/// One object as recorded: who it is, and the fields kept of it.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// Its namespace, for a namespaced kind.
    pub namespace: Option<String>,
    /// Its name.
    pub name: String,
    /// Its UID.
    pub uid: String,
    /// The fields the readers read ([`crate::decode::kept`]).
    pub object: serde_json::Value,
}

/// A [`Recorded`] of one kind, as kube's watcher decodes it.
#[derive(Clone, Debug)]
pub struct Watched<K> {
    metadata: ObjectMeta,
    recorded: Recorded,
    kind: PhantomData<K>,
}

/// What kube's watcher needs to know of a kind.
pub trait Kind: Clone + std::fmt::Debug + Send + Sync + 'static {
    /// The API's kind (`Pod`).
    const KIND: &'static str;
    /// Its group (`""` for the core group).
    const GROUP: &'static str;
    /// Its resource (`pods`).
    const PLURAL: &'static str;
    /// Cluster or namespace scope.
    type Scope;
}

macro_rules! kind {
    ($name:ident, $kind:literal, $group:literal, $plural:literal, $scope:ty) => {
        #[doc = concat!("`", $kind, "`.")]
        #[derive(Clone, Debug)]
        pub struct $name;
        impl Kind for $name {
            const KIND: &'static str = $kind;
            const GROUP: &'static str = $group;
            const PLURAL: &'static str = $plural;
            type Scope = $scope;
        }
    };
}

kind!(NodeKind, "Node", "", "nodes", ClusterResourceScope);
kind!(PodKind, "Pod", "", "pods", NamespaceResourceScope);
kind!(LeaseKind, "Lease", "coordination.k8s.io", "leases", NamespaceResourceScope);
kind!(EventKind, "Event", "", "events", NamespaceResourceScope);

impl<'de, K: Kind> Deserialize<'de> for Watched<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let object = serde_json::Value::deserialize(deserializer)?;
        let text = |key: &str| object["metadata"][key].as_str().map(str::to_owned);
        let (namespace, name, uid, version) = (text("namespace"), text("name"), text("uid"), text("resourceVersion"));
        let name = name.ok_or_else(|| D::Error::custom(format!("a {} without a name", K::KIND)))?;
        let mut object = crate::decode::kept::kept(K::KIND, object)
            .ok_or_else(|| D::Error::custom(format!("a {} that is not an object", K::KIND)))?;
        // Every write moves it: kept, it would make a line of a write that changed nothing else.
        if let Some(metadata) = object.get_mut("metadata").and_then(serde_json::Value::as_object_mut) {
            metadata.remove("resourceVersion");
        }
        let metadata = ObjectMeta {
            name: Some(name.clone()),
            namespace: namespace.clone(),
            resource_version: version,
            ..ObjectMeta::default()
        };
        let recorded = Recorded { namespace, name, uid: uid.unwrap_or_default(), object };
        Ok(Self { metadata, recorded, kind: PhantomData })
    }
}

impl<K: Kind> Resource for Watched<K> {
    type DynamicType = ();
    type Scope = K::Scope;

    fn kind(_: &()) -> Cow<'_, str> {
        Cow::Borrowed(K::KIND)
    }

    fn group(_: &()) -> Cow<'_, str> {
        Cow::Borrowed(K::GROUP)
    }

    fn version(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("v1")
    }

    fn plural(_: &()) -> Cow<'_, str> {
        Cow::Borrowed(K::PLURAL)
    }

    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// One watch of `record`'s: its kind, and the field selector it lists with, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordedWatch {
    /// The kind.
    pub kind: RecordedKind,
    /// Its field selector (the Events'), as sent.
    pub fields: Option<&'static str>,
}

/// The watches `record` makes, in the order of their ids: every node, every pod, every Lease (the
/// nodes' and the controller manager's are kept by the recorder), the Events about nodes and the
/// taint-eviction controller's.
pub const RECORDED: [RecordedWatch; 5] = [
    RecordedWatch { kind: RecordedKind::Node, fields: None },
    RecordedWatch { kind: RecordedKind::Pod, fields: None },
    RecordedWatch { kind: RecordedKind::Lease, fields: None },
    RecordedWatch { kind: RecordedKind::Event, fields: Some("involvedObject.kind=Node") },
    RecordedWatch { kind: RecordedKind::Event, fields: Some("reason=TaintManagerEviction") },
];

/// What one watch saw, for the recorder; `watch` is its index in [`RECORDED`].
#[derive(Debug)]
pub enum Seen {
    /// A (re-)list begins.
    Listing { watch: usize },
    /// An object of the list under way, or added or changed since.
    Object { watch: usize, recorded: Recorded },
    /// The list is complete.
    Listed { watch: usize },
    /// An object deleted.
    Deleted { watch: usize, recorded: Recorded },
    /// The watch broke: it lists again (after its backoff).
    Broke { watch: usize },
}

/// Starts the watches of [`RECORDED`]; what they see arrives on `seen`. Each starts over with a list
/// whenever `relist`'s value changes. A failure no retry can mend (a list the server forbids) is sent
/// on `fatal`, and that watch stops.
pub fn spawn_recorded(
    client: &Client,
    seen: &mpsc::Sender<Seen>,
    relist: &channel::Receiver<u64>,
    fatal: &mpsc::UnboundedSender<ClusterError>,
    clock: &Clock,
) {
    for (watch, which) in RECORDED.iter().enumerate() {
        let mut config = from_watch_cache();
        if let Some(fields) = which.fields {
            config = config.fields(fields);
        }
        let (seen, relist, fatal, clock) = (seen.clone(), relist.clone(), fatal.clone(), clock.clone());
        match which.kind {
            RecordedKind::Node => {
                let api = Api::<Watched<NodeKind>>::all(client.clone());
                tokio::spawn(follow(api, config, watch, seen, relist, fatal, clock));
            }
            RecordedKind::Pod => {
                let api = Api::<Watched<PodKind>>::all(client.clone());
                tokio::spawn(follow(api, config, watch, seen, relist, fatal, clock));
            }
            RecordedKind::Lease => {
                let api = Api::<Watched<LeaseKind>>::all(client.clone());
                tokio::spawn(follow(api, config, watch, seen, relist, fatal, clock));
            }
            RecordedKind::Event => {
                let api = Api::<Watched<EventKind>>::all(client.clone());
                tokio::spawn(follow(api, config, watch, seen, relist, fatal, clock));
            }
        }
    }
}

/// Follows one watch until the recorder goes, a permanent failure, or forever.
async fn follow<K: Kind>(
    api: Api<Watched<K>>,
    config: watcher::Config,
    watch: usize,
    seen: mpsc::Sender<Seen>,
    mut relist: channel::Receiver<u64>,
    fatal: mpsc::UnboundedSender<ClusterError>,
    clock: Clock,
) where
    Watched<K>: Resource<DynamicType = ()>,
{
    let what = RECORDED[watch].kind.listed();
    let mut retry = backoff();
    loop {
        let (api, config) = (api.clone(), config.clone());
        let events = relisting(move || watcher::watcher(api.clone(), config.clone()).boxed());
        let mut events = std::pin::pin!(events);
        loop {
            let event = tokio::select! {
                changed = relist.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    break;
                }
                event = events.next() => event,
            };
            let said = match event {
                None => return,
                Some(Err(error)) => {
                    if let Some(permanent) = permanent(&error, what, None) {
                        let _ = fatal.send(permanent);
                        return;
                    }
                    if seen.send(Seen::Broke { watch }).await.is_err() {
                        return;
                    }
                    // The list again, once the backoff's deadline has passed (or at once when asked
                    // for), on the one clock, as the other watches' retries.
                    let deadline = clock.instant() + retry.next().unwrap_or_default();
                    tokio::select! {
                        changed = relist.changed() => if changed.is_err() { return },
                        () = tokio::time::sleep_until(deadline) => {}
                    }
                    continue;
                }
                Some(Ok(Event::Init)) => Seen::Listing { watch },
                Some(Ok(Event::InitApply(object) | Event::Apply(object))) => {
                    Seen::Object { watch, recorded: object.recorded }
                }
                Some(Ok(Event::InitDone)) => {
                    retry.reset();
                    Seen::Listed { watch }
                }
                Some(Ok(Event::Delete(object))) => Seen::Deleted { watch, recorded: object.recorded },
            };
            if seen.send(said).await.is_err() {
                return;
            }
        }
    }
}
