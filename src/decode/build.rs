//! Turns the fields of one item, as any reader found them, into the engine's model: the rules every
//! way in shares (the `default` namespace, an empty effect as none, the `PodScheduled` transition
//! before creation as a pod's binding time, RFC 3339 times, the controller's Lease).
//!
//! The streaming reader (`stream`), the exact one (`exact`) and the watches (through `stream`) hand
//! every item to [`Builder::add`] as a [`Fields`] that borrows from the input, so they agree on every
//! conversion and every error.
//!
//! Owns: [`Builder`], [`Fields`], [`Keep`], [`KeepLabels`], [`Page`] and the time rules. Uses: `raw`, `error`
//! and the engine's model; no reader.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use super::error::{DumpError, object_name};
use super::raw::{RawClaimStatus, RawCondition, RawManagedField, RawOwnerRef, RawPodClaim, RawTaint, RawToleration};
use crate::engine::devices::{ClaimUse, Via};
use crate::engine::model::{Effect, NodeName, Pod, PodKey, Taint, Toleration};
use crate::engine::snapshot::{Owner, PodReady, Snapshot, SnapshotNode, SnapshotPod, TaintsWritten, TolerationsEdited};
use crate::engine::time::Timestamp;

/// The Lease kube-controller-manager's leader holds: its `acquireTime` is a controller restart.
pub const CONTROLLER_LEASE: (&str, &str) = ("kube-system", "kube-controller-manager");

/// The instant an API timestamp names, or `None` when it is not RFC 3339.
#[must_use]
pub fn parse_time(text: &str) -> Option<Timestamp> {
    // RFC 3339 offsets run to 23:59; jiff reads up to 25:59:59.
    if let [.., b'+' | b'-', h1 @ b'0'..=b'9', h2 @ b'0'..=b'9', b':', b'0'..=b'9', b'0'..=b'9'] = text.as_bytes()
        && (h1 - b'0') * 10 + (h2 - b'0') > 23
    {
        return None;
    }
    text.parse::<jiff::Timestamp>().ok().map(|t| Timestamp::from_nanos(t.as_nanosecond()))
}

/// Why [`parse_time`] refused `text`: `out of range …` for a time at the end of year 9999 or later
/// (the last instants the API's range holds, and past it), else `not an RFC 3339 time`.
#[must_use]
pub fn time_error(text: &str) -> String {
    // A year is four digits and a dash: `1732269600` or `20261122` is no date at all.
    let year =
        text.split_once('-').map(|(year, _)| year).filter(|y| y.len() >= 4 && y.bytes().all(|b| b.is_ascii_digit()));
    if year.is_some_and(|y| y.parse::<u64>().map_or(true, |y| y >= 9999)) {
        let last = jiff::Timestamp::MAX.as_second();
        let last = jiff::Timestamp::from_second(last).map_or_else(|_| "?".to_owned(), |t| t.to_string());
        return format!("out of range: the last time supported is {last}");
    }
    "not an RFC 3339 time".to_owned()
}

/// One page of a typed API list (`PodList`, `NodeList`): the objects and the `continue` token.
#[derive(Debug, Default)]
pub struct Page {
    /// The objects, as a snapshot.
    pub snapshot: Snapshot,
    /// The token for the next page; `None` on the last.
    pub continue_token: Option<String>,
}

/// Which labels of a Node a reading keeps: all, or only the keys a label selector asks about (a node
/// may carry many labels, and nothing but `-l` reads them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum KeepLabels {
    /// Every label.
    #[default]
    All,
    /// The labels with these keys.
    Only(Arc<[String]>),
}

impl KeepLabels {
    /// Whether label `key` is kept.
    #[must_use]
    pub fn keeps(&self, key: &str) -> bool {
        match self {
            Self::All => true,
            Self::Only(keys) => keys.iter().any(|k| k == key),
        }
    }
}

/// What a reading keeps beyond what every plan needs. The default keeps everything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keep {
    /// The labels of a Node kept.
    pub labels: KeepLabels,
    /// Whether a pod's controller is read (`metadata.ownerReferences`): a game day's roll-up per
    /// owner and `run --keep-last-ready` need it, and a dump's every pod has one.
    pub owners: bool,
    /// Whether, with `owners`, what the input says of them beyond their names is kept too
    /// ([`Snapshot::workloads`]: the labels each one's pods share, the ReplicaSets' and Jobs' own
    /// controllers): only `audit`'s fixes read it, and a cluster can have an owner per pod.
    pub workloads: bool,
}

impl Default for Keep {
    fn default() -> Self {
        Self { labels: KeepLabels::All, owners: true, workloads: true }
    }
}

/// The fields of one item the snapshot needs. The streaming reader reuses one for every item, so its
/// lists keep their capacity.
#[derive(Default)]
pub(super) struct Fields<'a> {
    /// `kind`, when the item says.
    pub(super) kind: Option<Cow<'a, str>>,
    /// `metadata.name`.
    pub(super) name: Option<Cow<'a, str>>,
    /// `metadata.namespace`.
    pub(super) namespace: Option<Cow<'a, str>>,
    /// `metadata.uid`.
    pub(super) uid: Option<Cow<'a, str>>,
    /// `metadata.creationTimestamp`.
    pub(super) creation_timestamp: Option<Cow<'a, str>>,
    /// `metadata.deletionTimestamp`.
    pub(super) deletion_timestamp: Option<Cow<'a, str>>,
    /// `metadata.labels`, in the input's order (a repeated key: the last wins); a reader may leave
    /// out those [`Fields::keep`] does not keep.
    pub(super) labels: Vec<(Cow<'a, str>, Cow<'a, str>)>,
    /// What to keep (the same for every item).
    pub(super) keep: Keep,
    /// `metadata.ownerReferences` (a Pod's controller is read from it).
    pub(super) owner_refs: Vec<RawOwnerRef<'a>>,
    /// `metadata.managedFields` (a Node's: when its taints were written; a Pod's: when its
    /// tolerations were).
    pub(super) managed_fields: Vec<RawManagedField<'a>>,
    /// `spec.taints`.
    pub(super) taints: Vec<RawTaint<'a>>,
    /// `spec.nodeName`.
    pub(super) node_name: Option<Cow<'a, str>>,
    /// `spec.tolerations`.
    pub(super) tolerations: Vec<RawToleration<'a>>,
    /// `spec.acquireTime` (a Lease).
    pub(super) acquire_time: Option<Cow<'a, str>>,
    /// `status.phase`.
    pub(super) phase: Option<Cow<'a, str>>,
    /// `status.conditions`.
    pub(super) conditions: Vec<RawCondition<'a>>,
    /// `spec.resourceClaims` (a Pod).
    pub(super) resource_claims: Vec<RawPodClaim<'a>>,
    /// `status.resourceClaimStatuses` (a Pod).
    pub(super) claim_statuses: Vec<RawClaimStatus<'a>>,
    /// `status.extendedResourceClaimStatus.resourceClaimName` (a Pod).
    pub(super) extended_claim: Option<Cow<'a, str>>,
    /// `metadata.resourceVersion`, read only when [`Fields::keep_version`] says so.
    pub(super) resource_version: Option<Cow<'a, str>>,
    /// Whether to read `metadata.resourceVersion` (a watch resumes from it; the same for every item).
    pub(super) keep_version: bool,
}

impl Fields<'_> {
    /// Forgets the previous item, keeping the lists' capacity.
    pub(super) fn clear(&mut self) {
        self.kind = None;
        self.name = None;
        self.namespace = None;
        self.uid = None;
        self.creation_timestamp = None;
        self.deletion_timestamp = None;
        self.labels.clear();
        self.owner_refs.clear();
        self.managed_fields.clear();
        self.taints.clear();
        self.node_name = None;
        self.tolerations.clear();
        self.acquire_time = None;
        self.phase = None;
        self.conditions.clear();
        self.resource_claims.clear();
        self.claim_statuses.clear();
        self.extended_claim = None;
        self.resource_version = None;
    }

    /// The DRA claims a pod names (`spec.resourceClaims`, a template's claim named by
    /// `status.resourceClaimStatuses`, the extended resources' claim); `None` for none.
    fn claims(&self) -> Option<Arc<[ClaimUse]>> {
        if self.resource_claims.is_empty() && self.extended_claim.is_none() {
            return None;
        }
        let named = |entry: &str| {
            let status = self.claim_statuses.iter().find(|s| s.name.as_deref() == Some(entry));
            status.and_then(|s| s.resource_claim_name.as_deref()).map(Arc::from)
        };
        let mut uses: Vec<ClaimUse> = self
            .resource_claims
            .iter()
            .filter_map(|entry| {
                let name = entry.name.as_deref().unwrap_or_default();
                let (claim, via) = match (&entry.resource_claim_name, &entry.resource_claim_template_name) {
                    (Some(claim), _) => (Some(Arc::from(&**claim)), Via::Name),
                    (None, Some(_)) => (named(name), Via::Template),
                    (None, None) => return None,
                };
                Some(ClaimUse { entry: name.into(), claim, via })
            })
            .collect();
        if let Some(claim) = &self.extended_claim {
            uses.push(ClaimUse {
                entry: "extended resources".into(),
                claim: Some(Arc::from(&**claim)),
                via: Via::Extended,
            });
        }
        (!uses.is_empty()).then(|| uses.into())
    }
}

/// The shared copy of `text` among `known`, one of a handful of words (a phase, a kind): a dump that
/// makes up one per object shares none past the first 16.
fn word(known: &mut Vec<Arc<str>>, text: &str) -> Arc<str> {
    if let Some(known) = known.iter().find(|known| ***known == *text) {
        return Arc::clone(known);
    }
    let word = Arc::<str>::from(text);
    if known.len() < 16 {
        known.push(Arc::clone(&word));
    }
    word
}

/// A node's `NoExecute` taints and its others.
type NodeTaints = (Arc<[Taint]>, Arc<[Taint]>);

/// Builds a snapshot one item at a time.
#[derive(Default)]
pub(super) struct Builder {
    snapshot: Snapshot,
    /// What is kept.
    keep: Keep,
    /// The namespace of the previous pod: dumps list pods by namespace, so most pods share it.
    namespace: Option<Arc<str>>,
    /// Every node name met, as a Node or as a pod's `spec.nodeName`: the pods of a node share one.
    nodes: HashSet<NodeName>,
    /// Every distinct `status.phase` met (a handful): pods share them.
    phases: Vec<Arc<str>>,
    tolerations: Interner,
    /// The previous node's taints: the nodes of a pool carry the same ones, and share them.
    taints: Option<NodeTaints>,
    /// The previous pod's controller: a workload's pods are listed one after another (by name),
    /// and share it.
    owner: Option<Owner>,
}

impl Builder {
    /// A builder that keeps what `keep` keeps.
    pub(super) fn new(keep: Keep) -> Self {
        Self { keep, ..Self::default() }
    }

    /// The shared name of node `name`.
    fn node_name(&mut self, name: &str) -> NodeName {
        if let Some(known) = self.nodes.get(name) {
            return known.clone();
        }
        let known = NodeName::from(name);
        self.nodes.insert(known.clone());
        known
    }

    /// The shared text of phase `phase`.
    fn phase(&mut self, phase: &str) -> Arc<str> {
        word(&mut self.phases, phase)
    }

    /// The controller among a pod's `ownerReferences` (the entry with `controller: true`).
    fn owner(&mut self, refs: &[RawOwnerRef<'_>]) -> Option<Owner> {
        let controller = refs.iter().find(|r| r.controller == Some(true))?;
        let (kind, name) = (controller.kind.as_deref().unwrap_or_default(), controller.name.as_deref()?);
        let uid = controller.uid.as_deref().unwrap_or_default();
        if let Some(last) = &self.owner
            && (last.kind(), last.name(), last.uid()) == (kind, name, uid)
        {
            return Some(last.clone());
        }
        Some(self.owner.insert(Owner::new(kind, name, uid)).clone())
    }

    /// Adds the objects another builder built from the items that follow this one's (the second
    /// reader of a list read by two), sharing this builder's copies of the values they repeat, as
    /// though this builder had read them.
    pub(super) fn absorb(&mut self, mut other: Snapshot) {
        let mut lists: HashMap<usize, Arc<[Toleration]>> = HashMap::new();
        let mut namespaces: HashMap<usize, Arc<str>> = HashMap::new();
        for pod in &mut other.pods {
            if let Some(node) = &mut pod.pod.node {
                *node = self.node_name(node.as_str());
            }
            pod.phase = self.phase(&pod.phase);
            let list = &mut pod.pod.tolerations;
            let address = Arc::as_ptr(list).cast::<()>() as usize;
            *list = Arc::clone(lists.entry(address).or_insert_with(|| self.tolerations.share(list)));
            let namespace = pod.pod.key.namespace_arc();
            let address = Arc::as_ptr(namespace).cast::<()>() as usize;
            let shared = namespaces.entry(address).or_insert_with(|| match &self.namespace {
                Some(last) if **last == **namespace => Arc::clone(last),
                _ => Arc::clone(namespace),
            });
            pod.pod.key.share_namespace(shared);
        }
        for node in &mut other.nodes {
            node.name = self.node_name(node.name.as_str());
        }
        self.snapshot.merge(other);
    }

    /// The snapshot built so far.
    pub(super) fn finish(mut self) -> Snapshot {
        // The lists grew by doubling: give back what they did not fill (up to half of them); the
        // owners' entries, added as read, are sorted to be found.
        self.snapshot.pods.shrink_to_fit();
        self.snapshot.nodes.shrink_to_fit();
        self.snapshot.workloads.settle();
        self.snapshot
    }

    /// Adds item `index` of kind `kind` (Nodes, Pods and the controller's Lease; others are ignored).
    pub(super) fn add(&mut self, index: usize, kind: &str, item: &Fields<'_>) -> Result<(), DumpError> {
        let name = item.name.as_deref().unwrap_or_default();
        let namespace = item.namespace.as_deref().unwrap_or_default();
        let bad = |path: &str, message: String| DumpError::BadItem {
            index,
            object: object_name(kind, namespace, name),
            path: path.to_owned(),
            message,
        };
        // `path` is only written out for an error.
        let time = |text: Option<&str>, path: &dyn Fn() -> String| -> Result<Option<Timestamp>, DumpError> {
            match text {
                None => Ok(None),
                Some(text) => match parse_time(text) {
                    Some(at) => Ok(Some(at)),
                    None => Err(bad(&path(), format!("{text:?} is {}", time_error(text)))),
                },
            }
        };
        match kind {
            "Node" => {
                if name.is_empty() {
                    return Err(bad("metadata.name", "missing".into()));
                }
                // Built straight into the lists the plan and the engine share (the `NoExecute`
                // taints, and the others apart), each allocated once at its size; the first bad
                // `timeAdded` is the error.
                let mut bad_time: Option<(usize, DumpError)> = None;
                let mut convert = |no_execute: bool| -> Arc<[Taint]> {
                    let count = item.taints.iter().filter(|raw| is_no_execute(raw) == no_execute).count();
                    let mut each = item.taints.iter().enumerate().filter(|(_, raw)| is_no_execute(raw) == no_execute);
                    shared_list_of(count, || {
                        let (i, raw) = each.next().expect("the taints just counted");
                        let added = time(raw.time_added.as_deref(), &|| format!("spec.taints[{i}].timeAdded"));
                        Taint {
                            key: raw.key.as_deref().unwrap_or_default().into(),
                            value: raw.value.as_deref().unwrap_or_default().into(),
                            effect: Effect::from(raw.effect.as_deref().unwrap_or_default()),
                            time_added: added.unwrap_or_else(|error| {
                                if bad_time.as_ref().is_none_or(|(first, _)| i < *first) {
                                    bad_time = Some((i, error));
                                }
                                None
                            }),
                        }
                    })
                };
                let (taints, other_taints) = match &self.taints {
                    Some((taints, other)) if same_taints(&item.taints, taints, other) => {
                        (Arc::clone(taints), Arc::clone(other))
                    }
                    _ => (convert(true), convert(false)),
                };
                if let Some((_, error)) = bad_time {
                    return Err(error);
                }
                if !item.taints.is_empty() {
                    self.taints = Some((Arc::clone(&taints), Arc::clone(&other_taints)));
                }
                let mut labels = BTreeMap::new();
                for (key, value) in item.labels.iter().filter(|(key, _)| self.keep.labels.keeps(key)) {
                    labels.insert(key.clone().into_owned(), value.clone().into_owned());
                }
                // The `managedFields` entry that owns `spec.taints` (the earliest, should several
                // apply the same list) says when a taint without `timeAdded` was written.
                let mut taints_written: Option<TaintsWritten> = None;
                for (i, entry) in item.managed_fields.iter().enumerate() {
                    let owned = entry.fields_v1.as_ref().and_then(|owned| owned.spec.as_ref());
                    if owned.is_none_or(|spec| spec.taints.is_none()) {
                        continue;
                    }
                    let Some(at) = time(entry.time.as_deref(), &|| format!("metadata.managedFields[{i}].time"))? else {
                        continue;
                    };
                    if taints_written.as_ref().is_none_or(|earliest| at < earliest.at) {
                        let manager = entry.manager.as_deref().unwrap_or_default().into();
                        taints_written = Some(TaintsWritten { at, manager });
                    }
                }
                // Since when its `Ready` condition is not `True` (a repeated type: the last says).
                let mut ready_changed = None;
                for (i, condition) in item.conditions.iter().enumerate() {
                    if condition.type_.as_deref() == Some("Ready") {
                        ready_changed = match condition.status.as_deref() {
                            Some("True") => None,
                            _ => time(condition.last_transition_time.as_deref(), &|| {
                                format!("status.conditions[{i}].lastTransitionTime")
                            })?,
                        };
                    }
                }
                let name = self.node_name(name);
                let node = SnapshotNode { name, labels, taints, other_taints, taints_written, ready_changed };
                self.snapshot.nodes.push(node);
            }
            "Pod" => {
                if name.is_empty() {
                    return Err(bad("metadata.name", "missing".into()));
                }
                let created = time(item.creation_timestamp.as_deref(), &|| "metadata.creationTimestamp".into())?;
                let deleting = time(item.deletion_timestamp.as_deref(), &|| "metadata.deletionTimestamp".into())?;
                let (mut scheduled, mut ready, mut containers_ready) = (None, false, false);
                for (i, condition) in item.conditions.iter().enumerate() {
                    let true_ = condition.status.as_deref() == Some("True");
                    match condition.type_.as_deref() {
                        Some("PodScheduled") if true_ => {
                            scheduled = time(condition.last_transition_time.as_deref(), &|| {
                                format!("status.conditions[{i}].lastTransitionTime")
                            })?;
                        }
                        // A repeated type: the last says (as for `PodScheduled`).
                        Some("Ready") => ready = true_,
                        Some("ContainersReady") => containers_ready = true_,
                        _ => {}
                    }
                }
                let ready = match (ready, containers_ready) {
                    (true, _) => PodReady::Yes,
                    (false, true) => PodReady::Marked,
                    (false, false) => PodReady::No,
                };
                let namespace = if namespace.is_empty() { "default" } else { namespace };
                let namespace = match &self.namespace {
                    Some(last) if **last == *namespace => Arc::clone(last),
                    _ => self.namespace.insert(Arc::from(namespace)).clone(),
                };
                let node = item.node_name.as_deref().filter(|n| !n.is_empty()).map(|n| self.node_name(n));
                let phase = self.phase(item.phase.as_deref().unwrap_or_default());
                let owner = if self.keep.owners { self.owner(&item.owner_refs) } else { None };
                if let Some(owner) = owner.as_ref().filter(|_| self.keep.workloads) {
                    let labels = item.labels.iter().map(|(key, value)| (&**key, &**value));
                    self.snapshot.workloads.add_pod(&namespace, owner, labels);
                }
                self.snapshot.pods.push(SnapshotPod {
                    pod: Pod {
                        key: PodKey::new(namespace, name),
                        uid: item.uid.as_deref().unwrap_or_default().into(),
                        node,
                        tolerations: self.tolerations.get(&item.tolerations),
                    },
                    bound_at: scheduled.or(created),
                    phase,
                    terminating: deleting.is_some(),
                    deletion_timestamp: deleting,
                    ready,
                    claims: item.claims(),
                    owner,
                    tolerations_edited: tolerations_edited(item, created),
                });
            }
            // A pod's controller's own controller (a ReplicaSet's Deployment, a Job's CronJob), for
            // `audit`'s fixes (docs/audit.md).
            "ReplicaSet" | "Job" if self.keep.owners && self.keep.workloads && !name.is_empty() => {
                let namespace = if namespace.is_empty() { "default" } else { namespace };
                let namespace = match &self.namespace {
                    Some(last) if **last == *namespace => Arc::clone(last),
                    _ => Arc::from(namespace),
                };
                let uid = item.uid.as_deref().unwrap_or_default();
                let object = Owner::new(kind, name, uid);
                let controller = item.owner_refs.iter().find(|r| r.controller == Some(true)).map(|r| {
                    let (kind, name, uid) = (r.kind.as_deref(), r.name.as_deref(), r.uid.as_deref());
                    Owner::new(kind.unwrap_or_default(), name.unwrap_or_default(), uid.unwrap_or_default())
                });
                self.snapshot.workloads.add_object(&namespace, object, controller);
            }
            "Lease" if namespace == CONTROLLER_LEASE.0 && name == CONTROLLER_LEASE.1 => {
                self.snapshot.controller_acquired = time(item.acquire_time.as_deref(), &|| "spec.acquireTime".into())?;
            }
            _ => {}
        }
        Ok(())
    }
}

/// A pod's tolerations written after its creation (`created`): the `managedFields` entry that owns
/// `spec.tolerations` (the earliest, should several own the same list; an entry without a time
/// says nothing), with the pod's controller reference. `None` when they were written at its
/// creation only, or nothing says.
fn tolerations_edited(item: &Fields<'_>, created: Option<Timestamp>) -> Option<Arc<TolerationsEdited>> {
    let created = created?;
    let written = item
        .managed_fields
        .iter()
        .filter(|entry| {
            entry
                .fields_v1
                .as_ref()
                .and_then(|owned| owned.spec.as_ref())
                .is_some_and(|spec| spec.tolerations.is_some())
        })
        .filter_map(|entry| {
            let at = parse_time(entry.time.as_deref()?)?;
            Some(TaintsWritten { at, manager: entry.manager.as_deref().unwrap_or_default().into() })
        })
        .min_by_key(|written| written.at)
        .filter(|written| written.at > created)?;
    let controller = item.owner_refs.iter().find(|r| r.controller == Some(true)).map(|r| {
        let text = |value: &Option<Cow<'_, str>>| value.as_deref().unwrap_or_default().to_owned();
        let owner = Owner::new(&text(&r.kind), &text(&r.name), &text(&r.uid));
        (text(&r.api_version).into(), owner)
    });
    Some(Arc::new(TolerationsEdited { written, controller }))
}

/// Whether a raw taint has the `NoExecute` effect.
fn is_no_execute(raw: &RawTaint<'_>) -> bool {
    raw.effect.as_deref() == Some(Effect::NoExecute.as_str())
}

/// `count` items made by `next`, as a shared list allocated once at its size (nothing when empty).
fn shared_list_of<T>(count: usize, mut next: impl FnMut() -> T) -> Arc<[T]> {
    if count == 0 { Arc::default() } else { (0..count).map(|_| next()).collect() }
}

/// Whether `raw` converts to `no_execute` and `other` (its `NoExecute` taints and the others),
/// without converting it.
fn same_taints(raw: &[RawTaint<'_>], no_execute: &[Taint], other: &[Taint]) -> bool {
    let (mut no_execute, mut other) = (no_execute.iter(), other.iter());
    raw.iter().all(|raw| {
        let converted = if is_no_execute(raw) { no_execute.next() } else { other.next() };
        converted.is_some_and(|t| {
            raw.key.as_deref().unwrap_or_default() == &*t.key
                && raw.value.as_deref().unwrap_or_default() == &*t.value
                && raw.effect.as_deref().unwrap_or_default() == t.effect.as_str()
                && match raw.time_added.as_deref() {
                    None => t.time_added.is_none(),
                    Some(text) => t.time_added.is_some() && parse_time(text) == t.time_added,
                }
        })
    }) && no_execute.next().is_none()
        && other.next().is_none()
}

/// One `Arc` per distinct toleration list: a cluster has few (its workloads' templates), and pods
/// share them.
#[derive(Default)]
struct Interner {
    /// The previous pod's list: neighbours in a dump often come from one template.
    last: Option<Arc<[Toleration]>>,
    /// Every list so far, by [`fingerprint`].
    lists: HashMap<u64, Vec<Arc<[Toleration]>>>,
}

impl Interner {
    fn get(&mut self, raw: &[RawToleration<'_>]) -> Arc<[Toleration]> {
        if let Some(last) = &self.last
            && same_list(raw, last)
        {
            return Arc::clone(last);
        }
        let lists = self.lists.entry(fingerprint(raw)).or_default();
        let list = match lists.iter().find(|list| same_list(raw, list)) {
            Some(list) => Arc::clone(list),
            None => {
                let list: Arc<[Toleration]> = raw.iter().map(toleration).collect();
                lists.push(Arc::clone(&list));
                list
            }
        };
        self.last = Some(Arc::clone(&list));
        list
    }

    /// The shared copy of `list` (converted already, by another builder).
    fn share(&mut self, list: &Arc<[Toleration]>) -> Arc<[Toleration]> {
        let mut hasher = DefaultHasher::new();
        for t in list.iter() {
            hash_toleration(
                &t.key,
                t.operator.as_str(),
                &t.value,
                t.effect.as_ref().map(Effect::as_str),
                t.seconds,
                &mut hasher,
            );
        }
        let lists = self.lists.entry(hasher.finish()).or_default();
        match lists.iter().find(|known| ***known == **list) {
            Some(known) => Arc::clone(known),
            None => {
                lists.push(Arc::clone(list));
                Arc::clone(list)
            }
        }
    }
}

fn toleration(raw: &RawToleration<'_>) -> Toleration {
    Toleration {
        key: raw.key.as_deref().unwrap_or_default().into(),
        operator: raw.operator.as_deref().unwrap_or_default().into(),
        value: raw.value.as_deref().unwrap_or_default().into(),
        effect: effect(raw).map(Effect::from),
        seconds: raw.toleration_seconds,
    }
}

/// A toleration's effect: `None` when absent or empty.
fn effect<'r>(raw: &'r RawToleration<'_>) -> Option<&'r str> {
    raw.effect.as_deref().filter(|e| !e.is_empty())
}

/// The operator as [`Operator::as_str`] spells what `raw` converts to.
fn operator<'r>(raw: &'r RawToleration<'_>) -> &'r str {
    match raw.operator.as_deref().unwrap_or_default() {
        "" => "Equal",
        other => other,
    }
}

/// Whether `raw` converts to `list`, without converting it.
fn same_list(raw: &[RawToleration<'_>], list: &[Toleration]) -> bool {
    raw.len() == list.len()
        && raw.iter().zip(list).all(|(raw, t)| {
            raw.key.as_deref().unwrap_or_default() == &*t.key
                && operator(raw) == t.operator.as_str()
                && raw.value.as_deref().unwrap_or_default() == &*t.value
                && effect(raw) == t.effect.as_ref().map(Effect::as_str)
                && raw.toleration_seconds == t.seconds
        })
}

/// A hash of what `raw` converts to: equal for lists that convert to equal lists.
fn fingerprint(raw: &[RawToleration<'_>]) -> u64 {
    let mut hasher = DefaultHasher::new();
    for raw in raw {
        let (key, value) = (raw.key.as_deref().unwrap_or_default(), raw.value.as_deref().unwrap_or_default());
        hash_toleration(key, operator(raw), value, effect(raw), raw.toleration_seconds, &mut hasher);
    }
    hasher.finish()
}

/// Hashes one toleration of a [`fingerprint`], from its converted parts.
fn hash_toleration(
    key: &str,
    operator: &str,
    value: &str,
    effect: Option<&str>,
    seconds: Option<i64>,
    hasher: &mut DefaultHasher,
) {
    key.hash(hasher);
    operator.hash(hasher);
    value.hash(hasher);
    effect.hash(hasher);
    seconds.hash(hasher);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::model::Operator;

    fn raw<'a>(key: &'a str, operator: &'a str, effect: Option<&'a str>, seconds: Option<i64>) -> RawToleration<'a> {
        RawToleration {
            key: Some(key.into()),
            operator: Some(operator.into()),
            value: None,
            effect: effect.map(Cow::from),
            toleration_seconds: seconds,
        }
    }

    #[test]
    fn equal_toleration_lists_share_one_arc_and_keep_their_meaning() {
        let mut interner = Interner::default();
        let a = interner.get(&[raw("k", "", Some("NoExecute"), Some(300))]);
        let b = interner.get(&[raw("x", "Exists", None, None)]);
        // "" and "Equal" are one operator, an empty effect is none.
        let c = interner.get(&[raw("k", "Equal", Some("NoExecute"), Some(300))]);
        let d = interner.get(&[raw("x", "Exists", Some(""), None)]);
        assert!(Arc::ptr_eq(&a, &c));
        assert!(Arc::ptr_eq(&b, &d));
        assert!(!Arc::ptr_eq(&a, &b));
        assert_eq!(a[0].operator, Operator::Equal);
        assert_eq!(d[0].effect, None);
        let other = interner.get(&[raw("k", "exists", Some("NoExecute"), Some(300))]);
        assert_eq!(other[0].operator, Operator::Other(Box::new("exists".into())));
        assert!(!Arc::ptr_eq(&a, &other));
    }

    #[test]
    fn a_node_with_the_taints_of_the_node_before_shares_its_list() {
        let node = |name: &str, taints: &str| {
            format!(r#"{{"kind":"Node","metadata":{{"name":"{name}"}},"spec":{{"taints":[{taints}]}}}}"#)
        };
        let gpu = r#"{"key":"gpu","value":"a","effect":"NoSchedule"}"#;
        let added = r#"{"key":"k","effect":"NoExecute","timeAdded":"2026-01-01T00:00:00Z"}"#;
        let later = r#"{"key":"k","effect":"NoExecute","timeAdded":"2026-01-01T00:00:01Z"}"#;
        let nodes = [
            node("a", gpu),
            node("b", gpu),
            node("c", added),
            node("d", added),
            node("e", later),
            node("f", r#"{"key":"gpu","value":"b","effect":"NoSchedule"}"#),
            node("g", r#"{"key":"k","effect":"NoExecute"}"#),
            node("h", r#"{"key":"k","effect":"NoExecute","timeAdded":"bad"}"#),
        ];
        let dump = |nodes: &[String]| format!(r#"{{"kind":"List","items":[{}]}}"#, nodes.join(","));
        let snapshot = crate::decode::read(dump(&nodes[..7]).as_bytes()).expect("a dump");
        let lists = |node: &SnapshotNode| [Arc::clone(&node.taints), Arc::clone(&node.other_taints)];
        let taints: Vec<[Arc<[Taint]>; 2]> = snapshot.nodes.iter().map(lists).collect();
        let shared: Vec<bool> = taints
            .windows(2)
            .map(|pair| Arc::ptr_eq(&pair[0][0], &pair[1][0]) && Arc::ptr_eq(&pair[0][1], &pair[1][1]))
            .collect();
        assert_eq!(shared, [true, false, true, false, false, false]);
        assert_eq!(taints[5][1][0].value.as_ref(), "b");
        assert_eq!(taints[6][0][0].time_added, None);
        let error = crate::decode::read(dump(&nodes[2..]).as_bytes()).expect_err("a bad time");
        assert!(error.to_string().contains("timeAdded"), "{error}");
        // Mixed effects: each list is shared, and the first bad time in the node's order is the
        // error, whichever list it goes to.
        let mixed = [node("a", &format!("{gpu},{added}")), node("b", &format!("{gpu},{added}"))];
        let snapshot = crate::decode::read(dump(&mixed).as_bytes()).expect("a dump");
        assert!(Arc::ptr_eq(&snapshot.nodes[0].taints, &snapshot.nodes[1].taints));
        assert!(Arc::ptr_eq(&snapshot.nodes[0].other_taints, &snapshot.nodes[1].other_taints));
        let bad = |effect: &str| format!(r#"{{"key":"k","effect":"{effect}","timeAdded":"bad"}}"#);
        let error =
            crate::decode::read(dump(&[node("x", &format!("{},{}", bad("NoSchedule"), bad("NoExecute")))]).as_bytes())
                .expect_err("a bad time");
        assert!(error.to_string().contains("spec.taints[0].timeAdded"), "{error}");
    }
}
