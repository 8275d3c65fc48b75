//! The streaming reader (the fast path of dumps and list pages, and the only reader of watch events):
//! one pass over the bytes that hands each item to the [`Builder`] as soon as it is parsed, instead of
//! building the whole list first.
//!
//! A large list is read by two such passes at once, one from the start and one from an item in the
//! middle, whose items the first takes over when it arrives there (see [`read_list`]).
//!
//! Strings are borrowed from the input (copied only where the JSON escapes them), one [`Fields`] is
//! reused for every item, and fields the snapshot does not need are skipped unread. With
//! `skip_other_kinds`, items that say they are neither a Node, a Pod, a Lease, a ReplicaSet nor a Job are
//! skipped whole.
//!
//! It reads the usual shapes only (an object wherever the readers expect a struct) and gives up on
//! anything else, errors included: the caller then reads the input again with the exact reader
//! (`exact`), which names what is wrong (a watch event, decoded from kube's deserializer, has no second
//! reading: there the error is the answer). Where it succeeds it accepts exactly what that accepts (the
//! same types, `null` as absent, a repeated field refused) and builds what it builds.
//!
//! Owns: the streaming reading of lists and items. Uses: `scan` (the bytes of a list), `seeds`, `raw` (for the field names),
//! `build`.

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::build::{Builder, Fields, Keep, KeepLabels};
use super::raw::{self, RawClaimStatus, RawCondition, RawListMeta, RawPodClaim};
use super::scan::Reader;
use super::seeds::{Extend, Key, Opt, Str, once, seed, text};
use crate::engine::snapshot::Snapshot;

/// A list the fast path read.
pub(super) struct List<'a> {
    /// Its items, built.
    pub(super) snapshot: Snapshot,
    /// The list's `kind`.
    pub(super) kind: Option<Cow<'a, str>>,
    /// The list's `metadata`.
    pub(super) metadata: Option<RawListMeta<'a>>,
    /// Whether it has `items` (an array, not `null`).
    pub(super) has_items: bool,
}

/// Reads `bytes` as a list whose items are of kind `kind` unless they say otherwise; `None` when the
/// exact readers must decide (an unusual shape, or any error).
///
/// A list of [`SPLIT_FROM`] bytes or more is read by two threads where two cores are free: a second
/// reader starts at what looks like an item in the middle ([`item_boundary`]) and reads the items
/// from there to the end of the array, while the first reads from the start. Only when the first
/// arrives at that very item (so it is one) does it take the second's items and go on after them;
/// otherwise it reads on alone, and the result is the same either way.
pub(super) fn read_list<'a>(
    bytes: &'a [u8],
    kind: Option<&str>,
    skip_other_kinds: bool,
    keep: &Keep,
) -> Option<List<'a>> {
    let split = (bytes.len() >= SPLIT_FROM && std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2))
        .then(|| item_boundary(bytes, bytes.len() / 2))
        .flatten();
    read_list_split(bytes, split, kind, skip_other_kinds, keep).map(|(list, _)| list)
}

/// How large a list must be for [`read_list`] to read it with two threads.
const SPLIT_FROM: usize = 8 << 20;

/// [`read_list`], with the second reader starting at byte `split` (any byte: a wrong guess costs only
/// the second reader's work); also whether the first reader took the second's items.
fn read_list_split<'a>(
    bytes: &'a [u8],
    split: Option<usize>,
    kind: Option<&str>,
    skip_other_kinds: bool,
    keep: &Keep,
) -> Option<(List<'a>, bool)> {
    let Some(at) = split else {
        let (builder, list, _) = read_list_with(Reader::new(bytes), kind, skip_other_kinds, keep)?;
        return Some((List { snapshot: builder.finish(), ..list }, false));
    };
    std::thread::scope(|scope| {
        let (tell, resume) = std::sync::mpsc::sync_channel(1);
        let second = scope.spawn(move || {
            let items = read_items_at(bytes, at, kind, skip_other_kinds, keep);
            // The first reader may have finished without arriving there: then nobody listens.
            let _ = tell.send(items.as_ref().map(|(_, end)| *end));
            items.map(|(snapshot, _)| snapshot)
        });
        let mut reader = Reader::new(bytes);
        reader.hand_over_at(at, resume);
        let first = read_list_with(reader, kind, skip_other_kinds, keep);
        let second = second.join().ok().flatten();
        let (mut builder, list, handed_over) = first?;
        if handed_over {
            builder.absorb(second?);
        }
        Some((List { snapshot: builder.finish(), ..list }, handed_over))
    })
}

/// [`read_list`] with `reader`: the builder (which holds the items), the list with no items yet,
/// and whether the reader handed the items after its handoff over to a second reader.
fn read_list_with<'a>(
    mut reader: Reader<'a>,
    kind: Option<&str>,
    skip_other_kinds: bool,
    keep: &Keep,
) -> Option<(Builder, List<'a>, bool)> {
    let (builder, (kind, metadata, has_items)) =
        with_builder(kind, skip_other_kinds, keep, |items| reader.deserialize_map(ListVisitor { items }).ok())?;
    reader.end().ok()?;
    let list = List { snapshot: Snapshot::default(), kind, metadata, has_items };
    Some((builder, list, reader.handed_over()))
}

/// `read` with the items seed of a new builder (which it fills), and that builder.
fn with_builder<'de, T>(
    kind: Option<&str>,
    skip_other_kinds: bool,
    keep: &Keep,
    read: impl FnOnce(ItemsSeed<'_, 'de>) -> Option<T>,
) -> Option<(Builder, T)> {
    let mut builder = Builder::new(keep.clone());
    let mut fields = Fields { keep: keep.clone(), ..Fields::default() };
    let value = read(ItemsSeed { builder: &mut builder, fields: &mut fields, kind, skip_other_kinds })?;
    Some((builder, value))
}

/// The second reader of [`read_list`]: the items from byte `at` to the end of their array, and where
/// that array's `]` is.
fn read_items_at(
    bytes: &[u8],
    at: usize,
    kind: Option<&str>,
    skip_other_kinds: bool,
    keep: &Keep,
) -> Option<(Snapshot, usize)> {
    let mut reader = Reader::at(bytes, at);
    let (builder, ((), end)) = with_builder(kind, skip_other_kinds, keep, |items| reader.rest_of_array(items).ok())?;
    Some((builder.finish(), end))
}

/// Where an item of a list's `items` probably starts, at or after byte `from`: the next object
/// opened right after another closed at the indentation `kubectl get -o json` gives items, or, in
/// a list without white space (the API server's), right after `},` when the object starts as an
/// item does. Only a guess (the text may be inside a string, or an object deeper down): see
/// [`read_list`]. Looks no further than a few megabytes.
fn item_boundary(bytes: &[u8], from: usize) -> Option<usize> {
    const PRETTY: &[u8] = b"\n        },\n        {";
    const COMPACT: [&[u8]; 2] = [b"},{\"metadata\":", b"},{\"apiVersion\":"];
    let window = bytes.get(from..bytes.len().min(from + (4 << 20)))?;
    let find = |pattern: &[u8]| window.windows(pattern.len()).position(|w| w == pattern);
    if let Some(i) = find(PRETTY) {
        return Some(from + i + PRETTY.len() - 1);
    }
    COMPACT.into_iter().filter_map(find).min().map(|i| from + i + 2)
}

/// Reads one object alone (a watch event's, or an API answer's) as an item of kind `kind` unless it
/// says otherwise, and builds it (its owner only with `owners`); also its `metadata.resourceVersion`. There is no
/// exact reader to fall back to here (the deserializer is the caller's), so an error is the answer.
pub(super) fn read_item<'de, D: Deserializer<'de>>(
    deserializer: D,
    kind: &str,
    owners: bool,
) -> Result<(Snapshot, Option<Cow<'de, str>>), D::Error> {
    // A watch feeds `run` and `plan -w`: only `run --keep-last-ready` reads pods' controllers.
    let keep = Keep { owners, ..Keep::default() };
    let mut fields = Fields { keep_version: true, keep: keep.clone(), ..Fields::default() };
    ItemSeed { fields: &mut fields, skip_other_kinds: false }.deserialize(deserializer)?;
    let mut builder = Builder::new(keep);
    let item_kind = fields.kind.as_deref().unwrap_or(kind);
    builder.add(0, item_kind, &fields).map_err(|e| D::Error::custom(e.to_string()))?;
    Ok((builder.finish(), fields.resource_version.take()))
}

/// The list object: `kind`, `metadata`, and `items` handed to the builder.
struct ListVisitor<'s, 'de> {
    items: ItemsSeed<'s, 'de>,
}

impl<'de> Visitor<'de> for ListVisitor<'_, 'de> {
    type Value = (Option<Cow<'de, str>>, Option<RawListMeta<'de>>, bool);
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        let ItemsSeed { builder, fields, kind: item_kind, skip_other_kinds } = self.items;
        let (mut kind, mut metadata, mut has_items) = (None, None, false);
        let mut seen = [false; 3];
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match &*key.0 {
                raw::list::kind => {
                    once(&mut seen[0])?;
                    kind = text(&mut map)?;
                }
                raw::list::metadata => {
                    once(&mut seen[1])?;
                    metadata = map.next_value()?;
                }
                raw::list::items => {
                    once(&mut seen[2])?;
                    let items =
                        ItemsSeed { builder: &mut *builder, fields: &mut *fields, kind: item_kind, skip_other_kinds };
                    has_items = map.next_value_seed(Opt(items))?.is_some();
                }
                _ => {
                    key.check()?;
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok((kind, metadata, has_items))
    }
}

/// The `items` array: each item is built as soon as it is read.
struct ItemsSeed<'s, 'de> {
    builder: &'s mut Builder,
    fields: &'s mut Fields<'de>,
    /// The kind of items that do not say.
    kind: Option<&'s str>,
    skip_other_kinds: bool,
}

seed!([<'de>] ItemsSeed<'_, 'de> => deserialize_seq);

impl<'de> Visitor<'de> for ItemsSeed<'_, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let ItemsSeed { builder, fields, kind, skip_other_kinds } = self;
        let mut index = 0;
        while seq.next_element_seed(ItemSeed { fields: &mut *fields, skip_other_kinds })?.is_some() {
            let item_kind = fields.kind.as_deref().or(kind).unwrap_or_default();
            builder.add(index, item_kind, fields).map_err(|e| A::Error::custom(e.to_string()))?;
            index += 1;
        }
        Ok(())
    }
}

/// One item: its fields, read into the reused [`Fields`].
struct ItemSeed<'s, 'de> {
    fields: &'s mut Fields<'de>,
    skip_other_kinds: bool,
}

seed!([<'de>] ItemSeed<'_, 'de> => deserialize_map);

impl<'de> Visitor<'de> for ItemSeed<'_, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
        let fields = self.fields;
        fields.clear();
        let mut seen = [false; 4];
        // Set once the item names a kind the snapshot ignores (and the caller skips those).
        let mut skip = false;
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match &*key.0 {
                raw::item::kind => {
                    once(&mut seen[0])?;
                    fields.kind = text(&mut map)?;
                    skip = self.skip_other_kinds
                        && !matches!(fields.kind.as_deref(), Some("Node" | "Pod" | "Lease" | "ReplicaSet" | "Job"));
                }
                raw::item::metadata if !skip => {
                    once(&mut seen[1])?;
                    map.next_value_seed(Opt(Part(&mut *fields, Section::Metadata)))?;
                }
                raw::item::spec if !skip => {
                    once(&mut seen[2])?;
                    map.next_value_seed(Opt(Part(&mut *fields, Section::Spec)))?;
                }
                raw::item::status if !skip => {
                    once(&mut seen[3])?;
                    map.next_value_seed(Opt(Part(&mut *fields, Section::Status)))?;
                }
                _ => {
                    key.check()?;
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// One of an item's objects.
#[derive(Clone, Copy)]
enum Section {
    Metadata,
    Spec,
    Status,
}

/// An item's object, read into `fields`.
struct Part<'s, 'de>(&'s mut Fields<'de>, Section);

seed!([<'de>] Part<'_, 'de> => deserialize_map);

impl<'de> Visitor<'de> for Part<'_, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
        let Part(fields, section) = self;
        let mut seen = [false; 9];
        while let Some(key) = map.next_key::<Key<'de>>()? {
            let known = match section {
                Section::Metadata => metadata(&key.0, &mut map, fields, &mut seen)?,
                Section::Spec => spec(&key.0, &mut map, fields, &mut seen)?,
                Section::Status => status(&key.0, &mut map, fields, &mut seen)?,
            };
            if !known {
                key.check()?;
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// The labels, those kept appended to a list, or (`None`: a Pod's when its controller is not read)
/// only checked.
struct Labels<'v, 'de>(Option<(&'v mut Vec<Label<'de>>, &'v KeepLabels)>);

/// What a Pod's labels keep: every one.
static EVERY_LABEL: KeepLabels = KeepLabels::All;

/// A label's key and value.
type Label<'de> = (Cow<'de, str>, Cow<'de, str>);

seed!([<'de>] Labels<'_, 'de> => deserialize_map);

impl<'de> Visitor<'de> for Labels<'_, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
        match self.0 {
            Some((labels, keep)) => {
                while let Some((key, value)) = map.next_entry::<Str<'de>, Str<'de>>()? {
                    if keep.keeps(&key.0) {
                        labels.push((key.0, value.0));
                    }
                }
            }
            None => {
                while let Some((key, value)) = map.next_entry::<Key<'de>, Key<'de>>()? {
                    key.check()?;
                    value.check()?;
                }
            }
        }
        Ok(())
    }
}

/// `status.conditions`: only the `PodScheduled=True` ones, whether each `Ready` and `ContainersReady` one is `True` and,
/// for a `Ready` one that is not, its `lastTransitionTime` are kept (all the builder looks at); the others are only checked.
struct Conditions<'v, 'de>(&'v mut Vec<RawCondition<'de>>);

seed!([<'de>] Conditions<'_, 'de> => deserialize_seq);

impl<'de> Visitor<'de> for Conditions<'_, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some([type_, status, last_transition_time]) = seq.next_element_seed(Condition)? {
            let scheduled = type_.as_ref().is_some_and(|t| *t.0 == *b"PodScheduled")
                && status.as_ref().is_some_and(|s| *s.0 == *b"True");
            if scheduled {
                self.0.push(RawCondition {
                    type_: Some(Cow::Borrowed("PodScheduled")),
                    status: Some(Cow::Borrowed("True")),
                    last_transition_time: last_transition_time.map(Key::into_text).transpose()?,
                });
            } else {
                for text in [type_.as_ref(), status.as_ref(), last_transition_time.as_ref()].into_iter().flatten() {
                    text.check()?;
                }
                let kept = [("Ready", b"Ready".as_slice()), ("ContainersReady", b"ContainersReady".as_slice())]
                    .into_iter()
                    .find(|(_, name)| type_.as_ref().is_some_and(|t| *t.0 == **name));
                if let Some((name, _)) = kept {
                    let ready = status.as_ref().is_some_and(|s| *s.0 == *b"True");
                    // A node's `Ready` not `True`: since when (a swapped taint's evidence).
                    let since = if ready || name != "Ready" { None } else { last_transition_time };
                    self.0.push(RawCondition {
                        type_: Some(Cow::Borrowed(name)),
                        status: Some(Cow::Borrowed(if ready { "True" } else { "False" })),
                        last_transition_time: since.map(Key::into_text).transpose()?,
                    });
                }
            }
        }
        Ok(())
    }
}

/// One condition's `type`, `status` and `lastTransitionTime`, as bytes (`null` is absent).
struct Condition;

seed!([<'de>] Condition => deserialize_map);

impl<'de> Visitor<'de> for Condition {
    type Value = [Option<Key<'de>>; 3];
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        let mut fields = [None, None, None];
        let mut seen = [false; 3];
        while let Some(key) = map.next_key::<Key<'de>>()? {
            let i = match &*key.0 {
                raw::condition::type_ => 0,
                raw::condition::status => 1,
                raw::condition::last_transition_time => 2,
                _ => {
                    key.check()?;
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            once(&mut seen[i])?;
            fields[i] = map.next_value::<Option<Key<'de>>>()?;
        }
        Ok(fields)
    }
}

/// The fields of `metadata`.
fn metadata<'de, M: MapAccess<'de>>(
    key: &[u8],
    map: &mut M,
    fields: &mut Fields<'de>,
    seen: &mut [bool; 9],
) -> Result<bool, M::Error> {
    let (slot, i) = match key {
        raw::meta::name => (&mut fields.name, 0),
        raw::meta::namespace => (&mut fields.namespace, 1),
        raw::meta::uid => (&mut fields.uid, 2),
        raw::meta::creation_timestamp => (&mut fields.creation_timestamp, 3),
        raw::meta::deletion_timestamp => (&mut fields.deletion_timestamp, 4),
        raw::meta::labels => {
            once(&mut seen[5])?;
            // A Node's labels for `-l`; a Pod's every label with its controller, for what selects
            // its controller's pods (docs/audit.md).
            let keep = match fields.kind.as_deref() {
                Some("Pod") => fields.keep.owners.then_some(&EVERY_LABEL),
                _ => Some(&fields.keep.labels),
            };
            map.next_value_seed(Opt(Labels(keep.map(|keep| (&mut fields.labels, keep)))))?;
            return Ok(true);
        }
        // A pod's controller is read for its owner when kept, and for its tolerations' history.
        raw::meta::owner_references => {
            once(&mut seen[7])?;
            map.next_value_seed(Opt(Extend(&mut fields.owner_refs)))?;
            return Ok(true);
        }
        raw::meta::managed_fields => {
            once(&mut seen[8])?;
            map.next_value_seed(Opt(Extend(&mut fields.managed_fields)))?;
            return Ok(true);
        }
        raw::RESOURCE_VERSION if fields.keep_version => (&mut fields.resource_version, 6),
        _ => return Ok(false),
    };
    once(&mut seen[i])?;
    *slot = text(map)?;
    Ok(true)
}

/// The fields of `spec` (a Node's, a Pod's or a Lease's).
fn spec<'de, M: MapAccess<'de>>(
    key: &[u8],
    map: &mut M,
    fields: &mut Fields<'de>,
    seen: &mut [bool; 9],
) -> Result<bool, M::Error> {
    match key {
        raw::spec::taints => {
            once(&mut seen[0])?;
            map.next_value_seed(Opt(Extend(&mut fields.taints)))?;
        }
        raw::spec::node_name => {
            once(&mut seen[1])?;
            fields.node_name = text(map)?;
        }
        raw::spec::tolerations => {
            once(&mut seen[2])?;
            map.next_value_seed(Opt(Extend(&mut fields.tolerations)))?;
        }
        raw::spec::acquire_time => {
            once(&mut seen[3])?;
            fields.acquire_time = text(map)?;
        }
        raw::spec::resource_claims => {
            once(&mut seen[4])?;
            fields.resource_claims = map.next_value::<Option<Vec<RawPodClaim<'de>>>>()?.unwrap_or_default();
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// The fields of `status`.
fn status<'de, M: MapAccess<'de>>(
    key: &[u8],
    map: &mut M,
    fields: &mut Fields<'de>,
    seen: &mut [bool; 9],
) -> Result<bool, M::Error> {
    match key {
        raw::status::phase => {
            once(&mut seen[0])?;
            fields.phase = text(map)?;
        }
        raw::status::conditions => {
            once(&mut seen[1])?;
            map.next_value_seed(Opt(Conditions(&mut fields.conditions)))?;
        }
        raw::status::resource_claim_statuses => {
            once(&mut seen[2])?;
            fields.claim_statuses = map.next_value::<Option<Vec<RawClaimStatus<'de>>>>()?.unwrap_or_default();
        }
        raw::status::extended_resource_claim_status => {
            once(&mut seen[3])?;
            let status = map.next_value::<Option<RawClaimStatus<'de>>>()?;
            fields.extended_claim = status.and_then(|s| s.resource_claim_name);
        }
        _ => return Ok(false),
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    //! The fast path against the exact readers: on any input where it reads a list, both build the
    //! same snapshot.

    use proptest::prelude::*;

    use std::sync::Arc;

    use super::{item_boundary, read_list, read_list_split};
    use crate::decode::build::Keep;
    use crate::decode::exact::{read_exactly, read_page_exactly};
    use crate::engine::snapshot::Snapshot;

    /// A JSON value whose objects may repeat a key, written as text.
    #[derive(Clone, Debug)]
    enum Json {
        Text(String),
        Array(Vec<Json>),
        Object(Vec<(String, Json)>),
    }

    impl Json {
        fn write(&self, out: &mut String) {
            match self {
                Json::Text(text) => out.push_str(text),
                Json::Array(items) => {
                    out.push('[');
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        item.write(out);
                    }
                    out.push(']');
                }
                Json::Object(fields) => {
                    out.push('{');
                    for (i, (key, value)) in fields.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        out.push_str(key);
                        out.push(':');
                        value.write(out);
                    }
                    out.push('}');
                }
            }
        }
    }

    fn string(text: &str) -> Json {
        Json::Text(serde_json::to_string(text).expect("a string"))
    }

    /// Strings the reader compares against, escaped ones, and times valid and not.
    const WORDS: &[&str] = &[
        "",
        "List",
        "Node",
        "Pod",
        "Lease",
        "Service",
        "kube-system",
        "kube-controller-manager",
        "default",
        "NoExecute",
        "NoSchedule",
        "Exists",
        "Equal",
        "PodScheduled",
        "True",
        "Running",
        "a\nb",
        "zoné",
        "2026-11-22T10:00:00Z",
        "2026-11-22T09:00:00.5+01:00",
        "2026-02-30T10:00:00Z",
        "yesterday",
    ];

    /// Field names the readers know, sometimes escaped (`"k\u0069nd"` is `kind`).
    const KEYS: &[&str] = &[
        "\"kind\"",
        "\"metadata\"",
        "\"spec\"",
        "\"status\"",
        "\"items\"",
        "\"name\"",
        "\"namespace\"",
        "\"uid\"",
        "\"creationTimestamp\"",
        "\"deletionTimestamp\"",
        "\"labels\"",
        "\"ownerReferences\"",
        "\"controller\"",
        "\"taints\"",
        "\"tolerations\"",
        "\"nodeName\"",
        "\"acquireTime\"",
        "\"phase\"",
        "\"conditions\"",
        "\"key\"",
        "\"value\"",
        "\"effect\"",
        "\"operator\"",
        "\"tolerationSeconds\"",
        "\"timeAdded\"",
        "\"type\"",
        "\"lastTransitionTime\"",
        "\"continue\"",
        "\"k\\u0069nd\"",
        "\"other\"",
    ];

    fn leaf() -> BoxedStrategy<Json> {
        prop_oneof![
            Just(Json::Text("null".into())),
            Just(Json::Text("true".into())),
            prop_oneof![Just(300i64), Just(-1), Just(0), any::<i64>()].prop_map(|n| Json::Text(n.to_string())),
            Just(Json::Text("18446744073709551615".into())),
            Just(Json::Text("1.5".into())),
            prop::sample::select(WORDS).prop_map(string),
        ]
        .boxed()
    }

    fn any_json() -> BoxedStrategy<Json> {
        leaf()
            .prop_recursive(3, 24, 4, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..4).prop_map(Json::Array),
                    prop::collection::vec((prop::sample::select(KEYS).prop_map(str::to_owned), inner), 0..4)
                        .prop_map(Json::Object),
                ]
            })
            .boxed()
    }

    /// Mostly a value of the right shape, sometimes anything.
    fn usually(right: BoxedStrategy<Json>) -> BoxedStrategy<Json> {
        prop_oneof![100 => right, 1 => any_json()].boxed()
    }

    /// An object with these fields in a random order, each usually there, rarely twice.
    fn object(fields: Vec<(&'static str, BoxedStrategy<Json>)>) -> BoxedStrategy<Json> {
        let parts: Vec<_> = fields
            .into_iter()
            .map(|(name, value)| (prop_oneof![30 => Just(0usize), 200 => Just(1), 1 => Just(2)], value, Just(name)))
            .collect();
        (parts, any::<prop::sample::Index>())
            .prop_map(|(parts, shift)| {
                let mut fields: Vec<(String, Json)> = Vec::new();
                for (count, value, name) in parts {
                    for _ in 0..count {
                        fields.push((format!("\"{name}\""), value.clone()));
                    }
                }
                if !fields.is_empty() {
                    let at = shift.index(fields.len());
                    fields.rotate_left(at);
                }
                Json::Object(fields)
            })
            .boxed()
    }

    fn text() -> BoxedStrategy<Json> {
        usually(prop::sample::select(WORDS).prop_map(string).boxed())
    }

    fn name() -> BoxedStrategy<Json> {
        prop_oneof![10 => "[a-z][a-z0-9.-]{0,6}".prop_map(|n| string(&n)), 1 => text()].boxed()
    }

    fn time() -> BoxedStrategy<Json> {
        const TIMES: &[&str] = &["2026-11-22T10:00:00Z", "2026-11-22T09:00:00.5+01:00", "2026-11-22T09:59:00Z"];
        prop_oneof![20 => prop::sample::select(TIMES).prop_map(string), 1 => text()].boxed()
    }

    fn array(element: BoxedStrategy<Json>) -> BoxedStrategy<Json> {
        usually(prop::collection::vec(element, 0..3).prop_map(Json::Array).boxed())
    }

    fn item() -> BoxedStrategy<Json> {
        let labels = usually(
            prop::collection::vec((prop::sample::select(&["\"a\"", "\"zone\"", "\"a\\nb\""][..]), text()), 0..3)
                .prop_map(|pairs| Json::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()))
                .boxed(),
        );
        let controller =
            usually(prop_oneof![Just(Json::Text("true".into())), Just(Json::Text("false".into()))].boxed());
        let owner = object(vec![
            ("apiVersion", text()),
            ("kind", text()),
            ("name", name()),
            ("uid", text()),
            ("controller", controller),
        ]);
        let metadata = object(vec![
            ("name", name()),
            ("namespace", text()),
            ("uid", text()),
            ("creationTimestamp", time()),
            ("deletionTimestamp", time()),
            ("labels", labels),
            ("annotations", any_json()),
            ("ownerReferences", array(owner)),
        ]);
        let taint = object(vec![("key", text()), ("value", text()), ("effect", text()), ("timeAdded", time())]);
        let seconds = usually(prop_oneof![Just(Json::Text("300".into())), Just(Json::Text("-5".into()))].boxed());
        let toleration = object(vec![
            ("key", text()),
            ("operator", text()),
            ("value", text()),
            ("effect", text()),
            ("tolerationSeconds", seconds),
        ]);
        let condition = object(vec![("type", text()), ("status", text()), ("lastTransitionTime", time())]);
        let spec = object(vec![
            ("taints", array(taint)),
            ("nodeName", text()),
            ("tolerations", array(toleration)),
            ("acquireTime", time()),
            ("containers", any_json()),
        ]);
        let status = object(vec![("phase", text()), ("conditions", array(condition)), ("hostIP", text())]);
        let kind =
            usually(prop::sample::select(&["Node", "Pod", "Pod", "Lease", "Service"][..]).prop_map(string).boxed());
        usually(object(vec![
            ("apiVersion", text()),
            ("kind", kind),
            ("metadata", usually(metadata)),
            ("spec", usually(spec)),
            ("status", usually(status)),
        ]))
    }

    fn dump() -> BoxedStrategy<Json> {
        let kind = usually(prop::sample::select(&["List", "PodList"][..]).prop_map(string).boxed());
        object(vec![
            ("apiVersion", text()),
            ("kind", kind),
            ("metadata", usually(object(vec![("continue", text())]))),
            ("items", usually(prop::collection::vec(item(), 0..6).prop_map(Json::Array).boxed())),
        ])
    }

    fn same(fast: &Snapshot, exact: &Snapshot) -> bool {
        fast.nodes == exact.nodes && fast.pods == exact.pods && fast.controller_acquired == exact.controller_acquired
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

        #[test]
        fn fast_path_reads_what_the_exact_readers_read(dump in dump()) {
            let mut text = String::new();
            dump.write(&mut text);
            let bytes = text.as_bytes();
            if let Some(list) = read_list(bytes, None, true, &Keep::default())
                && matches!(list.kind.as_deref(), Some("List") | None)
                && list.has_items
            {
                let exact = read_exactly(bytes, &Keep::default());
                prop_assert!(exact.is_ok(), "the fast path read {text}, the exact one says {exact:?}");
                prop_assert!(same(&list.snapshot, &exact.expect("checked")), "different snapshots for {text}");
            }
            if let Some(list) = read_list(bytes, Some("Pod"), false, &Keep::default()) {
                let exact = read_page_exactly(bytes, "Pod");
                prop_assert!(exact.is_ok(), "the fast path read the page {text}, the exact one says {exact:?}");
                let exact = exact.expect("checked");
                prop_assert!(same(&list.snapshot, &exact.snapshot), "different pages for {text}");
                let token = list.metadata.and_then(|m| m.continue_).filter(|c| !c.is_empty());
                prop_assert_eq!(token.as_deref(), exact.continue_token.as_deref());
            }
        }

        #[test]
        fn two_readers_read_what_one_reads_wherever_the_second_starts(dump in dump(), at: prop::sample::Index) {
            let mut text = String::new();
            dump.write(&mut text);
            let bytes = text.as_bytes();
            // Mostly where an object opens (an item, or one deeper down), sometimes anywhere.
            let opens: Vec<usize> = (0..bytes.len()).filter(|&i| bytes[i] == b'{').collect();
            let at = if opens.is_empty() || at.index(4) == 0 { at.index(bytes.len() + 1) } else { opens[at.index(opens.len())] };
            for (kind, skip) in [(None, true), (Some("Pod"), false)] {
                let one = read_list_split(bytes, None, kind, skip, &Keep::default());
                let two = read_list_split(bytes, Some(at), kind, skip, &Keep::default());
                prop_assert_eq!(one.is_some(), two.is_some(), "split at {} of {}", at, text);
                if let (Some((one, _)), Some((two, _))) = (one, two) {
                    prop_assert!(same(&one.snapshot, &two.snapshot), "split at {} of {}", at, text);
                    prop_assert_eq!(&one.kind, &two.kind);
                    prop_assert_eq!(one.has_items, two.has_items);
                    let token = |list: &super::List<'_>| list.metadata.as_ref().and_then(|m| m.continue_.as_deref().map(str::to_owned));
                    prop_assert_eq!(token(&one), token(&two));
                }
            }
        }
    }

    #[test]
    fn a_large_dump_is_read_by_two_readers_that_share_what_pods_repeat() {
        let pod = |i: usize| {
            format!(
                r#"{{
            "kind": "Pod",
            "metadata": {{"name": "p{i}", "namespace": "web", "uid": "u{i}"}},
            "spec": {{"nodeName": "n1", "tolerations": [{{"key": "k", "operator": "Exists"}}]}},
            "status": {{"phase": "Running"}}
        }}"#
            )
        };
        let items: Vec<String> = std::iter::once(r#"{"kind": "Node", "metadata": {"name": "n1"}}"#.to_owned())
            .chain((0..200).map(pod))
            .collect();
        let text = format!(
            "{{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n        {}\n    ],\n    \"kind\": \"List\"\n}}\n",
            items.join(",\n        ")
        );
        let bytes = text.as_bytes();
        let at = item_boundary(bytes, bytes.len() / 2).expect("an item in the middle");
        assert!(text[at..].starts_with("{\n            \"kind\": \"Pod\""), "{}", &text[at..at + 40]);
        let (two, handed_over) = read_list_split(bytes, Some(at), None, true, &Keep::default()).expect("a dump");
        assert!(handed_over, "the first reader took the second's items");
        let (one, _) = read_list_split(bytes, None, None, true, &Keep::default()).expect("a dump");
        assert!(same(&one.snapshot, &two.snapshot));
        let pods = &two.snapshot.pods;
        assert_eq!(pods.len(), 200);
        let (first, last) = (&pods[0].pod, &pods[199].pod);
        assert!(Arc::ptr_eq(&first.tolerations, &last.tolerations));
        assert!(Arc::ptr_eq(&pods[0].phase, &pods[199].phase));
        let node = |pod: &crate::engine::model::Pod| pod.node.as_ref().expect("bound").as_str().as_ptr();
        assert_eq!(node(first), node(last));
        assert!(std::ptr::eq(first.key.namespace().as_ptr(), last.key.namespace().as_ptr()));
    }
}
