//! Reads what the node lifecycle controller reads from a dump made with
//! `kubectl get nodes,pods,leases -A -o json`: each Node's zone labels, `exclude-disruption` label,
//! creation time, `Ready` condition and taints; each node Lease's `renewTime` (`kube-node-lease`); and
//! the `kube-system/kube-controller-manager` Lease; the command lines of the controller manager's
//! static pod and of the API server's (for a cluster's profile, docs/audit.md). A dump without
//! Leases is still read: the answer then rests on `lastHeartbeatTime` alone, and
//! [`Health::node_leases`] says so.
//!
//! An item's metadata and status are `raw`'s, the snapshot's: `RawMeta` with the labels the
//! controller reads and without a pod's history, `RawStatus` with its conditions read as a Node's
//! (`RawNodeCondition`, with their reason and last heartbeat); its taints are `RawTaint`s. Its spec is
//! declared here with `raw`'s `raw!` (each JSON name once): it reads more of a Lease and of the
//! controller manager's pod than the snapshot does, and is kept apart from the snapshot's so that
//! neither reading refuses what it refused before.
//!
//! A dump is read with `scan`'s reader, whose validated skip passes over the pods; where that reader
//! refuses the input, serde_json reads it again and names what is wrong.
//!
//! Owns: [`Health`] and its readings. Uses: `scan`, `raw`, `error`, `build`'s time rule and the
//! engine's lifecycle types.

use std::borrow::Cow;
use std::collections::HashMap;
use std::time::Duration;

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, IgnoredAny, MapAccess, SeqAccess};
use serde::{Deserialize, Deserializer};

use super::build::{CONTROLLER_LEASE, parse_time};
use super::error::{DumpError, object_name};
use super::raw::{self, RawMeta, RawNodeCondition, RawStatus, RawTaint, Unread, raw};
use super::scan::Reader;
use super::seeds::Str;
use super::{api_server, controller_manager};
use crate::engine::lifecycle::{
    ConditionTaint, ControllerLease, EXCLUDE_DISRUPTION, Flags, NodeHealth, Observation, Ready, ReadyCondition,
    ZONE_LABELS, ZoneKey,
};
use crate::engine::model::{Effect, Taint, shared_list};
use crate::engine::time::Timestamp;

/// The namespace of the node Leases kubelets renew.
pub const NODE_LEASE_NAMESPACE: &str = "kube-node-lease";

/// What a dump says about node health.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Health {
    /// Every node, in dump order.
    pub nodes: Vec<NodeHealth>,
    /// The controller's leader Lease, if the dump has it.
    pub controller: Option<ControllerLease>,
    /// How many Leases of `kube-node-lease` the dump holds (0: it was made without leases).
    pub node_leases: usize,
    /// How many ResourceSlices, ResourceClaims and DeviceTaintRules it holds: the DRA objects are
    /// read only when there are some.
    pub dra_objects: usize,
    /// The name and command line of the kube-controller-manager pod it holds (`kube-system`,
    /// labelled `component=kube-controller-manager`), when it holds one: the controller's settings.
    pub controller_manager: Option<(String, Vec<String>)>,
    /// The name and command line of the kube-apiserver pod it holds (`kube-system`, labelled
    /// `component=kube-apiserver`), when it holds one: its default tolerations (a profile's).
    pub api_server: Option<(String, Vec<String>)>,
}

impl Health {
    /// The prediction's input at `now`.
    #[must_use]
    pub fn observe(self, now: Timestamp, flags: Flags, silent_after: Duration) -> Observation {
        Observation { now, nodes: self.nodes, controller: self.controller, flags, silent_after }
    }
}

/// The list: `items` handed one by one to a [`Reading`], never collected (a dump is mostly pods).
struct List<'r, 'k>(&'r mut Reading<'k>);

impl<'de> de::DeserializeSeed<'de> for List<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> de::Visitor<'de> for List<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Str<'de>>()? {
            if key.0.as_bytes() == raw::list::items {
                map.next_value_seed(Items(&mut *self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// `items`: each one read, taken in by the [`Reading`] and dropped.
struct Items<'r, 'k>(&'r mut Reading<'k>);

impl<'de> de::DeserializeSeed<'de> for Items<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> de::Visitor<'de> for Items<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        while let Some(item) = seq.next_element::<Item<'_>>()? {
            if let Err(error) = self.0.take(index, &item) {
                self.0.failed = Some(error);
                return Err(de::Error::custom("a bad item"));
            }
            index += 1;
        }
        Ok(())
    }
}

/// What the items read so far say.
struct Reading<'k> {
    /// The kind of items that name none (a typed list's page).
    kind: Option<&'k str>,
    /// Told each node Lease's name and `renewTime` as it is read.
    lease: &'k mut dyn FnMut(&str, Option<Timestamp>),
    health: Health,
    /// Each node Lease's `renewTime`, by node name.
    renewed: HashMap<String, Option<Timestamp>>,
    /// The first item that could not be taken in.
    failed: Option<DumpError>,
}

impl Reading<'_> {
    fn take(&mut self, index: usize, item: &Item<'_>) -> Result<(), DumpError> {
        let namespace = item.metadata.namespace.as_deref().unwrap_or_default();
        let name = item.metadata.name.as_deref().unwrap_or_default();
        match item.kind.as_deref().or(self.kind) {
            Some("Lease") if namespace == NODE_LEASE_NAMESPACE => {
                let at = time(index, item, "spec.renewTime", item.spec.renew_time.as_deref())?;
                (self.lease)(name, at);
                self.renewed.insert(name.to_owned(), at);
            }
            Some("Lease") if (namespace, name) == CONTROLLER_LEASE => {
                self.health.controller = Some(controller(index, item)?);
            }
            Some("Node") => self.health.nodes.push(node(index, item)?),
            Some("Pod") if is_component(&item.metadata, controller_manager::LABEL) => {
                if let Some(containers) = &item.spec.containers {
                    let args = containers.command_line("kube-controller-manager");
                    self.health.controller_manager = args.map(|args| (name.to_owned(), args));
                }
            }
            Some("Pod") if is_component(&item.metadata, api_server::LABEL) => {
                if let Some(containers) = &item.spec.containers {
                    let args = containers.command_line(api_server::CONTAINER);
                    self.health.api_server = args.map(|args| (name.to_owned(), args));
                }
            }
            Some("ResourceSlice" | "ResourceClaim" | "DeviceTaintRule") => self.health.dra_objects += 1,
            _ => {}
        }
        Ok(())
    }
}

#[derive(Default)]
struct Item<'a> {
    kind: Option<Cow<'a, str>>,
    metadata: Meta<'a>,
    spec: Spec<'a>,
    status: Status<'a>,
}

/// Once an item's `kind` is read (kubectl writes it before `metadata`), the rest of a Pod or any
/// other kind is skipped without being built: a dump is mostly pods, and nothing of them is read
/// here.
impl<'de: 'a, 'a> Deserialize<'de> for Item<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor<'a>(PhantomData<Item<'a>>);
        impl<'de: 'a, 'a> de::Visitor<'de> for Visitor<'a> {
            type Value = Item<'a>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Item<'a>, A::Error> {
                let mut item = Item::default();
                while let Some(key) = map.next_key::<Str<'de>>()? {
                    let wanted = item.kind.as_deref().is_none_or(|kind| kind == "Node" || kind == "Lease");
                    // A pod's metadata says whether it is the controller manager's (or the API
                    // server's), whose spec holds its settings; kubectl writes `metadata` before `spec`.
                    let pod = item.kind.as_deref() == Some("Pod");
                    match key.0.as_bytes() {
                        raw::item::kind => item.kind = map.next_value()?,
                        raw::item::metadata if wanted || pod => item.metadata = map.next_value()?,
                        raw::item::spec if wanted || (pod && is_control_plane(&item.metadata)) => {
                            item.spec = map.next_value()?;
                        }
                        raw::item::status if wanted => item.status = map.next_value()?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(item)
            }
        }
        deserializer.deserialize_map(Visitor(PhantomData))
    }
}

/// An item's `metadata` as the controller reads it: the one raw metadata, with the labels it reads
/// and without a pod's history (a dump's every pod's metadata is read, to find the controller
/// manager's).
type Meta<'a> = RawMeta<'a, Labels<'a>, Unread, Unread>;

/// The labels the controller reads (zone, region, `exclude-disruption`); the others are checked to be
/// strings, as the snapshot's reader does, and dropped: a node may carry very many.
#[derive(Default)]
pub(super) struct Labels<'a>(Vec<(Cow<'a, str>, Cow<'a, str>)>);

impl Labels<'_> {
    /// The value of label `key` (the last, when it is repeated).
    fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, value)| &**value)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Labels<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor<'a>(PhantomData<Labels<'a>>);
        impl<'de: 'a, 'a> de::Visitor<'de> for Visitor<'a> {
            type Value = Labels<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Labels<'a>, A::Error> {
                let mut labels = Labels::default();
                while let Some((key, value)) = map.next_entry::<Cow<'de, str>, Cow<'de, str>>()? {
                    if ZONE_LABELS.contains(&&*key) || key == EXCLUDE_DISRUPTION || key == controller_manager::LABEL.0 {
                        labels.0.push((key, value));
                    }
                }
                Ok(labels)
            }
        }
        deserializer.deserialize_map(Visitor(PhantomData))
    }
}

/// The taints the controller reads (`NoExecute`, with a condition key), each with its index in
/// `spec.taints`; the others are checked to be taints, as the snapshot's reader does, and dropped: a
/// node may carry very many.
#[derive(Default)]
pub(super) struct ConditionTaints<'a>(Vec<(usize, RawTaint<'a>)>);

impl<'de: 'a, 'a> Deserialize<'de> for ConditionTaints<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor<'a>(PhantomData<ConditionTaints<'a>>);
        impl<'de: 'a, 'a> de::Visitor<'de> for Visitor<'a> {
            type Value = ConditionTaints<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ConditionTaints<'a>, A::Error> {
                let mut taints = ConditionTaints::default();
                let mut index = 0;
                while let Some(taint) = seq.next_element::<RawTaint<'de>>()? {
                    let key = taint.key.as_deref().unwrap_or_default();
                    if taint.effect.as_deref() == Some("NoExecute") && ConditionTaint::from_key(key).is_some() {
                        taints.0.push((index, taint));
                    }
                    index += 1;
                }
                Ok(taints)
            }
        }
        deserializer.deserialize_seq(Visitor(PhantomData))
    }
}

raw! {
    /// The union of the Node and Lease spec fields read here.
    #[derive(Deserialize, Default)]
    #[serde(expecting = "an object", default)]
    struct Spec<'a> in spec {
        #[serde(borrow)]
        taints: Option<ConditionTaints<'a>> = "taints",
        #[serde(borrow)]
        acquire_time: Option<Cow<'a, str>> = "acquireTime",
        #[serde(borrow)]
        renew_time: Option<Cow<'a, str>> = "renewTime",
        lease_duration_seconds: Option<i64> = "leaseDurationSeconds",
        #[serde(borrow)]
        containers: Option<Containers<'a>> = "containers",
    }
}

/// Whether a pod's `metadata` is that of the static pod `label` names in `kube-system`.
fn is_component(meta: &Meta<'_>, (key, value): (&str, &str)) -> bool {
    let labelled = meta.labels.as_ref().and_then(|labels| labels.get(key));
    meta.namespace.as_deref() == Some(controller_manager::NAMESPACE) && labelled == Some(value)
}

/// Whether a pod's `metadata` is that of the controller manager's static pod or the API server's.
fn is_control_plane(meta: &Meta<'_>) -> bool {
    is_component(meta, controller_manager::LABEL) || is_component(meta, api_server::LABEL)
}

/// A pod's containers: their names and command lines.
#[derive(Deserialize, Default)]
#[serde(transparent)]
pub(super) struct Containers<'a>(#[serde(borrow)] Vec<Container<'a>>);

impl Containers<'_> {
    /// The command line (`command`, then `args`) of the container named `name`, else the first.
    fn command_line(&self, name: &str) -> Option<Vec<String>> {
        let named = self.0.iter().find(|c| c.name.as_deref() == Some(name));
        let container = named.or_else(|| self.0.first())?;
        let words = container.command.iter().flatten().chain(container.args.iter().flatten());
        Some(words.map(|word| word.to_string()).collect())
    }
}

/// One container, as far as its command line.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct Container<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    command: Option<Vec<Cow<'a, str>>>,
    #[serde(borrow)]
    args: Option<Vec<Cow<'a, str>>>,
}

/// An item's `status` as the controller reads it: the one raw status, with its conditions read as a
/// Node's.
type Status<'a> = RawStatus<'a, RawNodeCondition<'a>>;

/// Reads the node health of a dump. Items of other kinds are ignored.
///
/// # Errors
///
/// When the input is not a JSON object with an `items` array of objects, or a timestamp the
/// controller reads is not RFC 3339 (the error names the item and the field).
pub fn read_health(bytes: &[u8]) -> Result<Health, DumpError> {
    read_health_of(bytes, None)
}

/// Reads the node health of one page of a typed list the API server returned (its items name no
/// `kind`: `kind` says what they are, `Node` or `Lease`).
///
/// # Errors
///
/// As [`read_health`].
pub fn read_health_page(bytes: &[u8], kind: &str) -> Result<Health, DumpError> {
    read_health_of(bytes, Some(kind))
}

/// Reads what the node lifecycle controller reads of one Node object (a GET's answer).
///
/// # Errors
///
/// When the input is not a JSON object, or a timestamp the controller reads is not RFC 3339.
pub fn read_node_health(bytes: &[u8]) -> Result<NodeHealth, DumpError> {
    let item: Item<'_> = serde_json::from_slice(bytes).map_err(|e| DumpError::Json(e.to_string()))?;
    node(0, &item)
}

/// Reads each node Lease's `spec.renewTime` from one page of the API server's list of Leases in
/// `kube-node-lease` (by node name; `None` for a Lease never renewed).
///
/// # Errors
///
/// As [`read_health`].
pub fn read_lease_renewals(bytes: &[u8]) -> Result<Vec<(String, Option<Timestamp>)>, DumpError> {
    let mut renewals = Vec::new();
    read_health_with(bytes, Some("Lease"), &mut |name, at| renewals.push((name.to_owned(), at)))?;
    Ok(renewals)
}

impl Health {
    /// Sets each node's `lease_renewed` from `renewals` (by node name), and counts them.
    pub fn apply_lease_renewals(&mut self, renewals: &[(String, Option<Timestamp>)]) {
        let renewed: HashMap<&str, Option<Timestamp>> =
            renewals.iter().map(|(name, at)| (name.as_str(), *at)).collect();
        self.node_leases = renewed.len();
        for node in &mut self.nodes {
            node.lease_renewed = renewed.get(node.name.as_str()).copied().flatten();
        }
    }
}

fn read_health_of(bytes: &[u8], kind: Option<&str>) -> Result<Health, DumpError> {
    read_health_with(bytes, kind, &mut |_, _| {})
}

/// What one group of a dump's items says about node health, before the Leases of the other groups
/// are known: the parts of a dump's groups, merged in order, make what [`read_health`] makes of the
/// whole.
#[derive(Debug, Default)]
pub struct HealthPart {
    health: Health,
    /// Each node Lease's `renewTime`, by node name.
    renewed: HashMap<String, Option<Timestamp>>,
}

impl HealthPart {
    /// Adds what a later group says (its controller Lease and node Leases win, as a later item does).
    pub fn merge(&mut self, later: HealthPart) {
        self.health.nodes.extend(later.health.nodes);
        self.health.controller = later.health.controller.or(self.health.controller.take());
        self.health.dra_objects += later.health.dra_objects;
        self.health.controller_manager = later.health.controller_manager.or(self.health.controller_manager.take());
        self.health.api_server = later.health.api_server.or(self.health.api_server.take());
        self.renewed.extend(later.renewed);
    }

    /// How many DRA objects the groups read so far hold.
    #[must_use]
    pub fn dra_objects(&self) -> usize {
        self.health.dra_objects
    }

    /// The health of every node read, with its Lease's renewal.
    #[must_use]
    pub fn finish(self) -> Health {
        finish(self.health, &self.renewed)
    }
}

/// Node health, read beside a dump's snapshot: from the whole file, or a group of items at a time.
pub struct HealthBeside;

impl super::bounded::Beside for HealthBeside {
    type Out = Result<Health, DumpError>;
    type Part = HealthPart;
    fn whole(&self, bytes: &[u8]) -> Self::Out {
        read_health(bytes)
    }
    fn part(&self, bytes: &[u8]) -> Option<HealthPart> {
        read_health_part(bytes).ok()
    }
    fn add(&self, before: &mut HealthPart, later: HealthPart) {
        before.merge(later);
    }
    fn join(&self, all: HealthPart) -> Self::Out {
        Ok(all.finish())
    }
}

/// Reads the node health of one group of a dump's items (see [`HealthPart`]).
///
/// # Errors
///
/// As [`read_health`] (the item indices are the group's).
pub fn read_health_part(bytes: &[u8]) -> Result<HealthPart, DumpError> {
    read_parts(bytes, None, &mut |_, _| {})
}

fn read_health_with(
    bytes: &[u8],
    kind: Option<&str>,
    lease: &mut dyn FnMut(&str, Option<Timestamp>),
) -> Result<Health, DumpError> {
    read_parts(bytes, kind, lease).map(HealthPart::finish)
}

fn read_parts(
    bytes: &[u8],
    kind: Option<&str>,
    lease: &mut dyn FnMut(&str, Option<Timestamp>),
) -> Result<HealthPart, DumpError> {
    // First with the byte-level reader of `scan`, which skips the pods (most of a dump) with its fast
    // validated skip; where it refuses the input, serde_json reads it again and names what is wrong.
    // Leases are told to `lease` only once the reading succeeded.
    let mut leases = Vec::new();
    let mut fast = Reading {
        kind,
        lease: &mut |name: &str, at| leases.push((name.to_owned(), at)),
        health: Health::default(),
        renewed: HashMap::new(),
        failed: None,
    };
    let mut reader = Reader::new(bytes);
    let read = de::DeserializeSeed::deserialize(List(&mut fast), &mut reader).and_then(|()| reader.end());
    let Reading { health, renewed, failed, .. } = fast;
    match (read, failed) {
        (Ok(()), None) => {
            for (name, at) in &leases {
                lease(name, *at);
            }
            Ok(HealthPart { health, renewed })
        }
        // Both readers accept the items before the one the builder refused: serde_json would too.
        (_, Some(error)) => Err(error),
        (Err(_), None) => read_exactly(bytes, kind, lease)
            .map(|reading| HealthPart { health: reading.health, renewed: reading.renewed }),
    }
}

/// [`read_health_with`] with serde_json alone.
fn read_exactly<'k>(
    bytes: &[u8],
    kind: Option<&'k str>,
    lease: &'k mut dyn FnMut(&str, Option<Timestamp>),
) -> Result<Reading<'k>, DumpError> {
    let mut reading = Reading { kind, lease, health: Health::default(), renewed: HashMap::new(), failed: None };
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let read =
        de::DeserializeSeed::deserialize(List(&mut reading), &mut deserializer).and_then(|()| deserializer.end());
    if let Some(error) = reading.failed {
        return Err(error);
    }
    read.map_err(|e| DumpError::Json(e.to_string()))?;
    Ok(reading)
}

/// The health a reading found, each node with its Lease's renewal (from `renewed`).
fn finish(mut health: Health, renewed: &HashMap<String, Option<Timestamp>>) -> Health {
    health.node_leases = renewed.len();
    for node in &mut health.nodes {
        node.lease_renewed = renewed.get(node.name.as_str()).copied().flatten();
    }
    health
}

/// Reads the `kube-system/kube-controller-manager` Lease object (a GET's answer).
///
/// # Errors
///
/// When the input is not a JSON object, or one of its times is not RFC 3339.
pub fn read_controller_lease(bytes: &[u8]) -> Result<ControllerLease, DumpError> {
    let item: Item<'_> = serde_json::from_slice(bytes).map_err(|e| DumpError::Json(e.to_string()))?;
    controller(0, &item)
}

fn controller(index: usize, item: &Item<'_>) -> Result<ControllerLease, DumpError> {
    let at = |path: &str, text: &Option<Cow<'_, str>>| time(index, item, path, text.as_deref());
    Ok(ControllerLease {
        acquired: at("spec.acquireTime", &item.spec.acquire_time)?,
        renewed: at("spec.renewTime", &item.spec.renew_time)?,
        duration: item
            .spec
            .lease_duration_seconds
            .and_then(|seconds| u64::try_from(seconds).ok())
            .map(Duration::from_secs),
    })
}

fn node(index: usize, item: &Item<'_>) -> Result<NodeHealth, DumpError> {
    let at = |path: &str, text: Option<&str>| time(index, item, path, text);
    let labels = item.metadata.labels.as_ref();
    let label = |key: &str| labels.and_then(|labels| labels.get(key));
    let conditions = item.status.conditions.as_deref().unwrap_or_default();
    let ready = match conditions.iter().position(|c| c.type_.as_deref() == Some("Ready")) {
        None => None,
        Some(i) => {
            let c = &conditions[i];
            let path = |field: &str| format!("status.conditions[{i}].{field}");
            Some(ReadyCondition {
                status: match c.status.as_deref() {
                    Some("True") => Ready::True,
                    Some("False") => Ready::False,
                    _ => Ready::Unknown,
                },
                reason: c.reason.as_deref().unwrap_or_default().into(),
                last_heartbeat: at(&path("lastHeartbeatTime"), c.last_heartbeat_time.as_deref())?,
                last_transition: at(&path("lastTransitionTime"), c.last_transition_time.as_deref())?,
            })
        }
    };
    let mut taints = Vec::new();
    for (i, raw) in item.spec.taints.iter().flat_map(|taints| &taints.0) {
        let taint = Taint::new(
            raw.key.as_deref().unwrap_or_default(),
            raw.value.as_deref().unwrap_or_default(),
            Effect::from(raw.effect.as_deref().unwrap_or_default()),
        );
        taints.push(match at(&format!("spec.taints[{i}].timeAdded"), raw.time_added.as_deref())? {
            Some(added) => taint.with_time_added(added),
            None => taint,
        });
    }
    Ok(NodeHealth {
        name: item.metadata.name.as_deref().unwrap_or_default().into(),
        zone: ZoneKey::from_labels(label),
        excluded: label(EXCLUDE_DISRUPTION).is_some(),
        created: at("metadata.creationTimestamp", item.metadata.creation_timestamp.as_deref())?,
        ready: ready.map(Box::new),
        lease_renewed: None,
        // A node without the condition taints (most) allocates no list.
        taints: shared_list(taints),
        down: false,
        ready_pods: 0,
    })
}

/// The instant `text` names (absent or empty: none), or an error naming the item and field.
fn time(index: usize, item: &Item<'_>, path: &str, text: Option<&str>) -> Result<Option<Timestamp>, DumpError> {
    match text.filter(|text| !text.is_empty()) {
        None => Ok(None),
        Some(text) => parse_time(text).map(Some).ok_or_else(|| DumpError::BadItem {
            index,
            object: object_name(
                item.kind.as_deref().unwrap_or_default(),
                item.metadata.namespace.as_deref().unwrap_or_default(),
                item.metadata.name.as_deref().unwrap_or_default(),
            ),
            path: path.to_owned(),
            message: "expected an RFC 3339 time".to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = r#"{"apiVersion":"v1","kind":"List","items":[
        {"kind":"Node","metadata":{"name":"n1","creationTimestamp":"2026-11-23T18:00:00Z",
          "labels":{"topology.kubernetes.io/region":"r1","topology.kubernetes.io/zone":"za",
                    "node.kubernetes.io/exclude-disruption":""}},
         "spec":{"taints":[{"key":"node.kubernetes.io/unreachable","effect":"NoExecute","timeAdded":"2026-11-23T18:01:05Z"}]},
         "status":{"conditions":[{"type":"MemoryPressure","status":"Unknown"},
           {"type":"Ready","status":"Unknown","reason":"NodeStatusUnknown",
            "lastHeartbeatTime":"2026-11-23T18:00:20Z","lastTransitionTime":"2026-11-23T18:01:00Z"}]}},
        {"kind":"Node","metadata":{"name":"n2"}},
        {"kind":"Pod","metadata":{"name":"p","namespace":"default"},"spec":{"nodeName":"n1"}},
        {"kind":"Lease","metadata":{"name":"n1","namespace":"kube-node-lease"},"spec":{"renewTime":"2026-11-23T18:00:21.500000Z"}},
        {"kind":"Lease","metadata":{"name":"kube-controller-manager","namespace":"kube-system"},
         "spec":{"acquireTime":"2026-11-23T17:00:00.250000Z","renewTime":"2026-11-23T18:02:00Z","leaseDurationSeconds":15}}
    ]}"#;

    fn at(text: &str) -> Timestamp {
        parse_time(text).expect("a time")
    }

    #[test]
    fn the_fast_reading_reads_what_serde_json_reads_and_hands_the_rest_to_it() {
        let exactly = |text: &str| {
            let mut leases = Vec::new();
            let health = read_exactly(text.as_bytes(), None, &mut |name, at| leases.push((name.to_owned(), at)))
                .map(|reading| finish(reading.health, &reading.renewed))
                .map_err(|e| e.to_string());
            (health, leases)
        };
        let fast = |text: &str| {
            let mut leases = Vec::new();
            let health = read_health_with(text.as_bytes(), None, &mut |name, at| leases.push((name.to_owned(), at)))
                .map_err(|e| e.to_string());
            (health, leases)
        };
        let escaped = DUMP.replace(r#""name":"n2""#, r#""name":"n\u0032""#);
        let exponent = DUMP.replace(r#""leaseDurationSeconds":15"#, r#""leaseDurationSeconds":1.5e1"#);
        let bad_time = DUMP.replace("2026-11-23T18:00:21.500000Z", "soon");
        let not_json = DUMP.replace(r#""kind":"Pod""#, r#""kind":Pod"#);
        for text in [DUMP, &escaped, &exponent, &bad_time, &not_json, "[]", "{\"items\":null}"] {
            assert_eq!(fast(text), exactly(text), "{text}");
        }
        assert_eq!(fast(&escaped).0.expect("a dump").nodes[1].name.as_str(), "n2");
        assert!(fast(&bad_time).0.is_err() && fast(&not_json).0.is_err());
        assert_eq!(fast(DUMP).1.len(), 1, "the node Lease is told");
    }

    #[test]
    fn reads_nodes_their_leases_and_the_controller_lease() {
        let health = read_health(DUMP.as_bytes()).expect("a dump");
        assert_eq!(health.node_leases, 1);
        let n1 = &health.nodes[0];
        assert_eq!(n1.zone, ZoneKey::new("r1", "za"));
        assert!(n1.excluded);
        assert_eq!(n1.created, Some(at("2026-11-23T18:00:00Z")));
        assert_eq!(n1.lease_renewed, Some(at("2026-11-23T18:00:21.5Z")));
        let ready = n1.ready.as_ref().expect("a Ready condition");
        assert_eq!((ready.status, ready.is_written_by_controller()), (Ready::Unknown, true));
        assert_eq!(ready.last_transition, Some(at("2026-11-23T18:01:00Z")));
        assert_eq!(n1.taints[0].time_added, Some(at("2026-11-23T18:01:05Z")));
        let n2 = &health.nodes[1];
        assert_eq!((n2.ready.clone(), n2.lease_renewed, n2.zone.name()), (None, None, ""));
        let controller = health.controller.expect("the controller lease");
        assert_eq!(controller.acquired, Some(at("2026-11-23T17:00:00.25Z")));
        assert_eq!(controller.duration, Some(Duration::from_secs(15)));
    }

    #[test]
    fn items_are_read_whatever_the_order_of_their_fields() {
        let dump = r#"{"items":[
            {"metadata":{"name":"n1","namespace":"kube-node-lease"},"spec":{"renewTime":"2026-11-23T18:00:21Z"},"kind":"Lease"},
            {"kind":"Pod","metadata":{"name":"p"},"spec":{"renewTime":"not a time"},"status":{"conditions":[{"type":"Ready","lastHeartbeatTime":"no"}]}},
            {"status":{"conditions":[{"type":"Ready","status":"True"}]},"metadata":{"name":"n1"},"kind":"Node"}
        ]}"#;
        let health = read_health(dump.as_bytes()).expect("a dump");
        assert_eq!(health.node_leases, 1);
        assert_eq!(health.nodes.len(), 1);
        assert_eq!(health.nodes[0].lease_renewed, Some(at("2026-11-23T18:00:21Z")));
        assert_eq!(health.nodes[0].ready.as_ref().map(|ready| ready.status), Some(Ready::True));
    }

    #[test]
    fn labels_other_than_the_zone_and_exclusion_are_checked_and_not_kept() {
        let dump = r#"{"items":[{"kind":"Node","metadata":{"name":"n1","labels":{"a":"1",
            "topology.kubernetes.io/zone":"z1","b":"2","topology.kubernetes.io/zone":"z2"}}}]}"#;
        let health = read_health(dump.as_bytes()).expect("a dump");
        assert_eq!(health.nodes[0].zone, ZoneKey::new("", "z2"), "a repeated label: the last wins");
        let meta: Meta<'_> = serde_json::from_str(r#"{"labels":{"a":"1","node.kubernetes.io/exclude-disruption":""}}"#)
            .expect("metadata");
        assert_eq!(meta.labels.expect("labels").0.len(), 1);
        let bad = r#"{"items":[{"kind":"Node","metadata":{"name":"n1","labels":{"a":1}}}]}"#;
        assert!(read_health(bad.as_bytes()).is_err(), "a label that is not a string is refused, kept or not");
    }

    #[test]
    fn taints_other_than_the_condition_ones_are_checked_and_not_kept() {
        let dump = r#"{"items":[{"kind":"Node","metadata":{"name":"n1"},"spec":{"taints":[
            {"key":"a","effect":"NoExecute"},{"key":"node.kubernetes.io/not-ready","effect":"NoSchedule"},
            {"key":"node.kubernetes.io/not-ready","effect":"NoExecute","timeAdded":"2026-11-23T18:01:05Z"}]}}]}"#;
        let health = read_health(dump.as_bytes()).expect("a dump");
        let kept: Vec<_> = health.nodes[0].taints.iter().map(|t| (&*t.key, t.effect.clone())).collect();
        assert_eq!(kept, [("node.kubernetes.io/not-ready", Effect::NoExecute)]);
        let bad = dump.replace("2026-11-23T18:01:05Z", "soon");
        let error = read_health(bad.as_bytes()).expect_err("a bad time").to_string();
        assert_eq!(
            error, "item 0 (Node n1): spec.taints[2].timeAdded: expected an RFC 3339 time",
            "the index in the node"
        );
        let bad = r#"{"items":[{"kind":"Node","metadata":{"name":"n1"},"spec":{"taints":[{"key":1}]}}]}"#;
        assert!(read_health(bad.as_bytes()).is_err(), "a taint that is not one is refused, kept or not");
    }

    #[test]
    fn the_control_plane_pods_command_lines_are_read_with_their_names() {
        // Two static pods as kubeadm labels them, and one labelled so outside kube-system: not theirs.
        let dump = r#"{"items":[
            {"kind":"Pod","metadata":{"name":"kube-apiserver-cp","namespace":"kube-system","labels":{"component":"kube-apiserver"}},
             "spec":{"containers":[{"name":"kube-apiserver","command":["kube-apiserver","--default-unreachable-toleration-seconds=90"]}]}},
            {"kind":"Pod","metadata":{"name":"kcm-cp","namespace":"kube-system","labels":{"component":"kube-controller-manager"}},
             "spec":{"containers":[{"name":"sidecar","args":["x"]},{"name":"kube-controller-manager","command":["kube-controller-manager"],"args":["--node-monitor-grace-period=45s"]}]}},
            {"kind":"Pod","metadata":{"name":"fake","namespace":"default","labels":{"component":"kube-apiserver"}},
             "spec":{"containers":[{"name":"kube-apiserver","command":["kube-apiserver","--default-unreachable-toleration-seconds=1"]}]}}
        ]}"#;
        let health = read_health(dump.as_bytes()).expect("a dump");
        let words = |list: &[&str]| list.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            health.api_server,
            Some((
                "kube-apiserver-cp".to_owned(),
                words(&["kube-apiserver", "--default-unreachable-toleration-seconds=90"])
            ))
        );
        assert_eq!(
            health.controller_manager,
            Some(("kcm-cp".to_owned(), words(&["kube-controller-manager", "--node-monitor-grace-period=45s"])))
        );
    }

    #[test]
    fn a_dump_without_leases_is_read_and_says_so() {
        let dump = r#"{"kind":"List","items":[{"kind":"Node","metadata":{"name":"n1"}}]}"#;
        let health = read_health(dump.as_bytes()).expect("a dump");
        assert_eq!((health.node_leases, health.controller, health.nodes.len()), (0, None, 1));
    }

    #[test]
    fn a_bad_timestamp_names_the_item_and_field() {
        let dump = r#"{"kind":"List","items":[{"kind":"Node","metadata":{"name":"n1"},
            "status":{"conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"yesterday"}]}}]}"#;
        let error = read_health(dump.as_bytes()).expect_err("a bad time").to_string();
        assert_eq!(error, "item 0 (Node n1): status.conditions[0].lastHeartbeatTime: expected an RFC 3339 time");
    }
}
