//! The API server's protobuf answers (`application/vnd.kubernetes.protobuf`), rewritten as the JSON
//! of the fields the readers read, so that the JSON readers and their one builder read them: a pod
//! read either way becomes the same engine value, with the same rules and the same errors.
//!
//! Kubernetes encodes a built-in object as `k8s\0` and a `runtime.Unknown` (its `apiVersion` and
//! `kind`, the object's bytes); a watch as frames of a 4-byte big-endian length and a `WatchEvent`
//! (its type and the object, enveloped). Only the field numbers of the tables below are read;
//! everything else (containers, volumes: most of a pod) is skipped by its length, unread. Of a
//! pod's `managedFields`, only the entries that own `spec.tolerations` are written (the history of
//! its tolerations), each with its manager, operation and time, and of the fields it owns those.
//! Each field is written as the API server's JSON writes it: an empty `omitempty` string or
//! number is left out, a set pointer is written even when empty, a zero `Time` is no time, and a
//! `MicroTime` keeps microseconds (the JSON's precision).
//!
//! Owns: the protobuf wire format and the tables of the fields read. Uses: nothing of the decoder
//! (the readers read what it writes).

use std::fmt::Write as _;

use crate::words::{RFC3339_MAX, rfc3339_ascii};

/// How [`ProtobufError`]'s message begins.
pub const UNREAD: &str = "the server's protobuf answer does not read";

/// Why a protobuf answer could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{UNREAD}: {0}")]
pub struct ProtobufError(String);

fn bad(message: impl Into<String>) -> ProtobufError {
    ProtobufError(message.into())
}

/// The prefix of every enveloped object.
const MAGIC: &[u8] = b"k8s\0";

/// One field's value on the wire.
#[derive(Clone, Copy, Debug)]
enum Wire<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    /// A fixed 32- or 64-bit value: no field read here has one.
    Fixed,
}

/// The fields of one message, in wire order.
struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Fields<'a> {
    fn of(bytes: &'a [u8]) -> Self {
        Self { rest: bytes }
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u32, Wire<'a>), ProtobufError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let field = match field_at(self.rest) {
            Ok(Ok((number, value, length))) => {
                self.rest = &self.rest[length..];
                return Some(Ok((number, value)));
            }
            Ok(Err(Short::Varint)) => Err(bad("a varint runs past its message")),
            Ok(Err(Short::Value)) => Err(bad("a field runs past its message")),
            Err(error) => Err(error),
        };
        self.rest = &[];
        Some(field)
    }
}

/// Where bytes end inside a field: more of them may yet come.
#[derive(Clone, Copy, Debug)]
enum Short {
    /// In its key or its length.
    Varint,
    /// In its value.
    Value,
}

/// The varint at the start of `bytes` and its length; `Short` when they end inside it.
fn varint_at(bytes: &[u8]) -> Result<Result<(u64, usize), Short>, ProtobufError> {
    let mut value = 0u64;
    for (i, byte) in bytes.iter().enumerate().take(10) {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Ok(Ok((value, i + 1)));
        }
    }
    if bytes.len() >= 10 { Err(bad("a varint runs past its message")) } else { Ok(Err(Short::Varint)) }
}

/// The field at the start of `bytes`: its number, its value and how many bytes it takes; `Short`
/// when they end inside it.
fn field_at(bytes: &[u8]) -> Result<Result<(u32, Wire<'_>, usize), Short>, ProtobufError> {
    let (key, mut at) = match varint_at(bytes)? {
        Ok(read) => read,
        Err(short) => return Ok(Err(short)),
    };
    let number = u32::try_from(key >> 3).map_err(|_| bad("a field number out of range"))?;
    let sized = |at: usize, length: usize| at.checked_add(length).filter(|&end| end <= bytes.len()).ok_or(Short::Value);
    let value = match key & 7 {
        0 => match varint_at(&bytes[at..])? {
            Ok((value, length)) => {
                at += length;
                Wire::Varint(value)
            }
            Err(short) => return Ok(Err(short)),
        },
        wire @ (1 | 5) => match sized(at, if wire == 1 { 8 } else { 4 }) {
            Ok(end) => {
                at = end;
                Wire::Fixed
            }
            Err(short) => return Ok(Err(short)),
        },
        2 => {
            let (length, read) = match varint_at(&bytes[at..])? {
                Ok(read) => read,
                Err(short) => return Ok(Err(short)),
            };
            let length = usize::try_from(length).map_err(|_| bad("a length out of range"))?;
            let start = at + read;
            match sized(start, length) {
                Ok(end) => {
                    at = end;
                    Wire::Bytes(&bytes[start..end])
                }
                Err(short) => return Ok(Err(short)),
            }
        }
        other => return Err(bad(format!("wire type {other} (groups are not used by Kubernetes)"))),
    };
    Ok(Ok((number, value, at)))
}

/// How a field is written.
#[derive(Clone, Copy)]
pub(super) enum Shape {
    /// A string.
    Str,
    /// An integer (`int32`, `int64`).
    Int,
    /// A boolean.
    Bool,
    /// A `metav1.Time`: seconds (its nanoseconds are never written).
    Time,
    /// A `metav1.MicroTime`: seconds and nanoseconds, written to the microsecond.
    MicroTime,
    /// A `map<string, string>` (labels).
    Map,
    /// A `metav1.FieldsV1`: its one field holds JSON, written as it is.
    FieldsV1,
    /// A `metav1.FieldsV1` of a pod, written as far as it owns `spec.tolerations`:
    /// `{"f:spec":{"f:tolerations":{}}}` when it does, else `{}`.
    TolerationsOwned,
    /// A message of these fields, of which only the occurrences that own `spec.tolerations` are
    /// written (a pod's `managedFields` entries, their `fieldsV1` field 7).
    TolerationsOwners(&'static [Field]),
    /// A message of these fields.
    Message(&'static [Field]),
}

/// One field read: its number, its JSON name, its shape.
pub(super) struct Field {
    number: u32,
    pub(super) json: &'static str,
    pub(super) shape: Shape,
    /// Repeated: a JSON array of every occurrence.
    pub(super) repeated: bool,
    /// Written whenever present (a pointer, or a field JSON writes even when empty), and a repeated
    /// field even when absent (a list's `items`: `[]`); else left out when empty or zero
    /// (`omitempty`).
    pub(super) present: bool,
}

/// An `omitempty` field.
const fn opt(number: u32, json: &'static str, shape: Shape) -> Field {
    Field { number, json, shape, repeated: false, present: false }
}

/// A field written whenever present.
const fn set(number: u32, json: &'static str, shape: Shape) -> Field {
    Field { number, json, shape, repeated: false, present: true }
}

/// A repeated field.
const fn many(number: u32, json: &'static str, shape: Shape) -> Field {
    Field { number, json, shape, repeated: true, present: false }
}

const LIST_META: &[Field] =
    &[opt(2, "resourceVersion", Shape::Str), opt(3, "continue", Shape::Str), set(4, "remainingItemCount", Shape::Int)];
const OWNER_REFERENCE: &[Field] = &[
    set(5, "apiVersion", Shape::Str),
    set(1, "kind", Shape::Str),
    set(3, "name", Shape::Str),
    set(4, "uid", Shape::Str),
    set(6, "controller", Shape::Bool),
];
/// A Lease's metadata: an object's, and its annotations (`run`'s Lease carries its deletion count
/// in one).
const LEASE_META: &[Field] = &[
    opt(1, "name", Shape::Str),
    opt(3, "namespace", Shape::Str),
    opt(5, "uid", Shape::Str),
    opt(6, "resourceVersion", Shape::Str),
    opt(8, "creationTimestamp", Shape::Time),
    set(9, "deletionTimestamp", Shape::Time),
    opt(11, "labels", Shape::Map),
    opt(12, "annotations", Shape::Map),
    many(13, "ownerReferences", Shape::Message(OWNER_REFERENCE)),
];
const MANAGED_FIELDS_ENTRY: &[Field] = &[
    opt(1, "manager", Shape::Str),
    opt(2, "operation", Shape::Str),
    opt(3, "apiVersion", Shape::Str),
    opt(4, "time", Shape::Time),
    opt(6, "fieldsType", Shape::Str),
    opt(7, "fieldsV1", Shape::FieldsV1),
    opt(8, "subresource", Shape::Str),
];
/// An entry of a pod's `managedFields` that owns `spec.tolerations`: who wrote, how and when (the
/// rest of the fields it owns, most of a pod's metadata, is left out).
const POD_MANAGED_FIELDS_ENTRY: &[Field] = &[
    opt(1, "manager", Shape::Str),
    opt(2, "operation", Shape::Str),
    opt(3, "apiVersion", Shape::Str),
    opt(4, "time", Shape::Time),
    opt(6, "fieldsType", Shape::Str),
    opt(7, "fieldsV1", Shape::TolerationsOwned),
    opt(8, "subresource", Shape::Str),
];
/// A Pod's metadata: an object's, and who wrote its tolerations when (`managedFields`, as far as
/// [`POD_MANAGED_FIELDS_ENTRY`] reads them).
const POD_META: &[Field] = &[
    opt(1, "name", Shape::Str),
    opt(3, "namespace", Shape::Str),
    opt(5, "uid", Shape::Str),
    opt(6, "resourceVersion", Shape::Str),
    opt(8, "creationTimestamp", Shape::Time),
    set(9, "deletionTimestamp", Shape::Time),
    // When the DELETE was answered is this much before `deletionTimestamp` (docs/review.md).
    set(10, "deletionGracePeriodSeconds", Shape::Int),
    opt(11, "labels", Shape::Map),
    many(13, "ownerReferences", Shape::Message(OWNER_REFERENCE)),
    many(17, "managedFields", Shape::TolerationsOwners(POD_MANAGED_FIELDS_ENTRY)),
];
/// A Node's metadata: an object's, and who wrote its taints when (`managedFields`).
const NODE_META: &[Field] = &[
    opt(1, "name", Shape::Str),
    opt(3, "namespace", Shape::Str),
    opt(5, "uid", Shape::Str),
    opt(6, "resourceVersion", Shape::Str),
    opt(8, "creationTimestamp", Shape::Time),
    set(9, "deletionTimestamp", Shape::Time),
    opt(11, "labels", Shape::Map),
    many(13, "ownerReferences", Shape::Message(OWNER_REFERENCE)),
    many(17, "managedFields", Shape::Message(MANAGED_FIELDS_ENTRY)),
];
const TOLERATION: &[Field] = &[
    opt(1, "key", Shape::Str),
    opt(2, "operator", Shape::Str),
    opt(3, "value", Shape::Str),
    opt(4, "effect", Shape::Str),
    set(5, "tolerationSeconds", Shape::Int),
];
const POD_RESOURCE_CLAIM: &[Field] = &[
    set(1, "name", Shape::Str),
    set(3, "resourceClaimName", Shape::Str),
    set(4, "resourceClaimTemplateName", Shape::Str),
];
const POD_SPEC: &[Field] = &[
    opt(10, "nodeName", Shape::Str),
    many(22, "tolerations", Shape::Message(TOLERATION)),
    many(39, "resourceClaims", Shape::Message(POD_RESOURCE_CLAIM)),
];
const POD_CONDITION: &[Field] =
    &[set(1, "type", Shape::Str), set(2, "status", Shape::Str), opt(4, "lastTransitionTime", Shape::Time)];
const POD_CLAIM_STATUS: &[Field] = &[set(1, "name", Shape::Str), set(2, "resourceClaimName", Shape::Str)];
const POD_EXTENDED_CLAIM_STATUS: &[Field] = &[set(2, "resourceClaimName", Shape::Str)];
const POD_STATUS: &[Field] = &[
    opt(1, "phase", Shape::Str),
    many(2, "conditions", Shape::Message(POD_CONDITION)),
    many(15, "resourceClaimStatuses", Shape::Message(POD_CLAIM_STATUS)),
    set(18, "extendedResourceClaimStatus", Shape::Message(POD_EXTENDED_CLAIM_STATUS)),
];
const POD: &[Field] = &[
    set(1, "metadata", Shape::Message(POD_META)),
    set(2, "spec", Shape::Message(POD_SPEC)),
    set(3, "status", Shape::Message(POD_STATUS)),
];
const TAINT: &[Field] = &[
    set(1, "key", Shape::Str),
    opt(2, "value", Shape::Str),
    set(3, "effect", Shape::Str),
    set(4, "timeAdded", Shape::Time),
];
const NODE_SPEC: &[Field] = &[many(5, "taints", Shape::Message(TAINT))];
const NODE_CONDITION: &[Field] = &[
    set(1, "type", Shape::Str),
    set(2, "status", Shape::Str),
    opt(3, "lastHeartbeatTime", Shape::Time),
    opt(4, "lastTransitionTime", Shape::Time),
    opt(5, "reason", Shape::Str),
];
const NODE_STATUS: &[Field] = &[many(4, "conditions", Shape::Message(NODE_CONDITION))];
const NODE: &[Field] = &[
    set(1, "metadata", Shape::Message(NODE_META)),
    set(2, "spec", Shape::Message(NODE_SPEC)),
    set(3, "status", Shape::Message(NODE_STATUS)),
];
const LEASE_SPEC: &[Field] = &[
    set(1, "holderIdentity", Shape::Str),
    set(2, "leaseDurationSeconds", Shape::Int),
    set(3, "acquireTime", Shape::MicroTime),
    set(4, "renewTime", Shape::MicroTime),
    set(5, "leaseTransitions", Shape::Int),
];
const LEASE: &[Field] = &[set(1, "metadata", Shape::Message(LEASE_META)), set(2, "spec", Shape::Message(LEASE_SPEC))];
const STATUS_CAUSE: &[Field] =
    &[opt(1, "reason", Shape::Str), opt(2, "message", Shape::Str), opt(3, "field", Shape::Str)];
const STATUS_DETAILS: &[Field] = &[
    opt(1, "name", Shape::Str),
    opt(2, "group", Shape::Str),
    opt(3, "kind", Shape::Str),
    opt(6, "uid", Shape::Str),
    many(4, "causes", Shape::Message(STATUS_CAUSE)),
    opt(5, "retryAfterSeconds", Shape::Int),
];
const STATUS: &[Field] = &[
    set(1, "metadata", Shape::Message(LIST_META)),
    opt(2, "status", Shape::Str),
    opt(3, "message", Shape::Str),
    opt(4, "reason", Shape::Str),
    set(5, "details", Shape::Message(STATUS_DETAILS)),
    opt(6, "code", Shape::Int),
];

/// A list of `items` (written even when there are none, as its JSON is).
const fn list(items: &'static [Field]) -> [Field; 2] {
    let items = Field { number: 2, json: "items", shape: Shape::Message(items), repeated: true, present: true };
    [set(1, "metadata", Shape::Message(LIST_META)), items]
}
const POD_LIST: &[Field] = &list(POD);
const NODE_LIST: &[Field] = &list(NODE);
const LEASE_LIST: &[Field] = &list(LEASE);

/// The fields read of a `kind`; `None` for a kind nothing here reads.
pub(super) fn fields_of(kind: &str) -> Option<&'static [Field]> {
    Some(match kind {
        "Pod" => POD,
        "Node" => NODE,
        "Lease" => LEASE,
        "PodList" => POD_LIST,
        "NodeList" => NODE_LIST,
        "LeaseList" => LEASE_LIST,
        "Status" => STATUS,
        _ => return None,
    })
}

/// An enveloped object: its `apiVersion`, `kind` and bytes.
struct Envelope<'a> {
    api_version: &'a str,
    kind: &'a str,
    raw: &'a [u8],
}

/// Opens the envelope of `bytes` (`k8s\0` and a `runtime.Unknown`); `None` when it has no prefix.
fn envelope(bytes: &[u8]) -> Result<Option<Envelope<'_>>, ProtobufError> {
    let Some(unknown) = bytes.strip_prefix(MAGIC) else { return Ok(None) };
    let mut found = Envelope { api_version: "", kind: "", raw: &[] };
    for field in Fields::of(unknown) {
        match field? {
            (1, Wire::Bytes(type_meta)) => (found.api_version, found.kind) = pair(type_meta)?,
            (2, Wire::Bytes(raw)) => found.raw = raw,
            (3, Wire::Bytes(encoding)) => content_encoding(encoding)?,
            _ => {}
        }
    }
    Ok(Some(found))
}

/// The two strings of a message whose fields 1 and 2 are strings (a `TypeMeta`, a map's entry);
/// `""` for one not given.
fn pair(bytes: &[u8]) -> Result<(&str, &str), ProtobufError> {
    let (mut first, mut second) = ("", "");
    for field in Fields::of(bytes) {
        match field? {
            (1, Wire::Bytes(text)) => first = utf8(text)?,
            (2, Wire::Bytes(text)) => second = utf8(text)?,
            _ => {}
        }
    }
    Ok((first, second))
}

fn utf8(bytes: &[u8]) -> Result<&str, ProtobufError> {
    std::str::from_utf8(bytes).map_err(|_| bad("a string that is not UTF-8"))
}

/// The JSON of one answer: an object, a list of them or a `Status`, as its envelope names it.
///
/// # Errors
/// Not an envelope, a kind nothing here reads, or a message that does not read.
pub fn to_json(bytes: &[u8]) -> Result<Vec<u8>, ProtobufError> {
    let mut out = Vec::with_capacity(bytes.len() / 4 + 64);
    let mut transcoder = Transcoder::default();
    transcoder.feed(bytes, &mut out)?;
    transcoder.finish(&mut out)?;
    Ok(out)
}

/// [`to_json`] of an answer as its bytes come in: a list's items are rewritten one by one as each
/// is complete, so that rewriting a long list keeps pace with its transfer rather than following
/// it, and only an item's bytes wait at a time; any other answer (an object, a `Status`: small) is
/// kept and rewritten at its end. A list's `metadata` is written after its `items` (the last one
/// given, as protobuf reads it).
#[derive(Default)]
pub struct Transcoder {
    /// Bytes come in and not yet rewritten.
    pending: Vec<u8>,
    stage: Stage,
}

#[derive(Default)]
enum Stage {
    /// Before the envelope's `raw` field: its prefix and `TypeMeta` come first.
    #[default]
    Head,
    /// Inside a list's `raw` field, `left` of its bytes to come: its fields, its items written so
    /// far, its `metadata` as last given.
    List { fields: &'static [Field], left: usize, items: usize, metadata: Option<Stored> },
    /// After a list's `raw` field: the envelope's last fields.
    Tail,
    /// Not a list: kept whole.
    Whole,
}

/// A field's value kept past the bytes it came in.
enum Stored {
    Varint(u64),
    Bytes(Vec<u8>),
    Fixed,
}

impl Stored {
    fn of(value: Wire<'_>) -> Self {
        match value {
            Wire::Varint(value) => Self::Varint(value),
            Wire::Bytes(bytes) => Self::Bytes(bytes.to_vec()),
            Wire::Fixed => Self::Fixed,
        }
    }

    fn wire(&self) -> Wire<'_> {
        match self {
            Self::Varint(value) => Wire::Varint(*value),
            Self::Bytes(bytes) => Wire::Bytes(bytes),
            Self::Fixed => Wire::Fixed,
        }
    }
}

impl Transcoder {
    /// Takes the next bytes of the answer, writing to `out` the JSON they complete.
    ///
    /// # Errors
    /// A message that does not read (the answer is then refused whole).
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<u8>) -> Result<(), ProtobufError> {
        self.pending.extend_from_slice(bytes);
        let mut at = 0;
        loop {
            let rest = &self.pending[at..];
            match &mut self.stage {
                Stage::Head => match list_head(rest)? {
                    Head::More => break,
                    Head::Whole => {
                        self.stage = Stage::Whole;
                        break;
                    }
                    Head::List { api_version, kind, fields, raw, length } => {
                        out.extend_from_slice(b"{\"apiVersion\":");
                        string(api_version, out);
                        out.extend_from_slice(b",\"kind\":");
                        string(kind, out);
                        key(true, fields[1].json, out);
                        out.push(b'[');
                        self.stage = Stage::List { fields, left: raw, items: 0, metadata: None };
                        at += length;
                    }
                },
                Stage::List { fields, left, items, metadata } => {
                    if *left == 0 {
                        out.push(b']');
                        if let Some(stored) = metadata {
                            key(true, fields[0].json, out);
                            value_of(&fields[0], stored.wire(), out)?;
                        }
                        self.stage = Stage::Tail;
                        continue;
                    }
                    let within = &rest[..rest.len().min(*left)];
                    let (number, value, length) = match field_at(within)? {
                        Ok(field) => field,
                        Err(_) if within.len() == *left => return Err(bad("a field runs past its message")),
                        Err(_) => break,
                    };
                    if number == fields[1].number {
                        if *items > 0 {
                            out.push(b',');
                        }
                        value_of(&fields[1], value, out)?;
                        *items += 1;
                    } else if number == fields[0].number {
                        *metadata = Some(Stored::of(value));
                    }
                    *left -= length;
                    at += length;
                }
                Stage::Tail => match field_at(rest)? {
                    Ok((number, value, length)) => {
                        if let (3, Wire::Bytes(encoding)) = (number, value) {
                            content_encoding(encoding)?;
                        }
                        at += length;
                    }
                    Err(_) => break,
                },
                Stage::Whole => break,
            }
        }
        self.pending.drain(..at);
        Ok(())
    }

    /// Ends the answer, writing to `out` the rest of its JSON.
    ///
    /// # Errors
    /// A message that does not read, or an answer that ends inside one.
    pub fn finish(mut self, out: &mut Vec<u8>) -> Result<(), ProtobufError> {
        match self.stage {
            Stage::Head | Stage::Whole => {
                let envelope = envelope(&self.pending)?.ok_or_else(|| bad("no k8s envelope"))?;
                object(&envelope, out)
            }
            Stage::List { .. } => {
                // A list that ends with its last item is closed by one more turn.
                self.feed(&[], out)?;
                match self.stage {
                    Stage::Tail => self.finish(out),
                    _ => Err(bad("a field runs past its message")),
                }
            }
            Stage::Tail => {
                // What is left is a field cut short: said as any message's.
                Fields::of(&self.pending).try_for_each(|field| field.map(drop))?;
                out.push(b'}');
                Ok(())
            }
        }
    }
}

/// What the start of an answer says.
enum Head<'a> {
    /// Not enough of it yet.
    More,
    /// Not a list of a kind read (an object, a `Status`, or an order no server writes): whole.
    Whole,
    /// A list: its type, its fields, and its `raw` field's length, which starts `length` bytes in.
    List { api_version: &'a str, kind: &'a str, fields: &'static [Field], raw: usize, length: usize },
}

/// Reads the start of an answer up to its `raw` field (`k8s\0`, then a `runtime.Unknown` whose
/// `TypeMeta` comes first).
fn list_head(bytes: &[u8]) -> Result<Head<'_>, ProtobufError> {
    if bytes.len() < MAGIC.len() {
        return Ok(if MAGIC.starts_with(bytes) { Head::More } else { Head::Whole });
    }
    let Some(unknown) = bytes.strip_prefix(MAGIC) else { return Ok(Head::Whole) };
    let (type_meta, length) = match field_at(unknown)? {
        Ok((1, Wire::Bytes(type_meta), length)) => (type_meta, length),
        Ok(_) => return Ok(Head::Whole),
        Err(_) => return Ok(Head::More),
    };
    let (api_version, kind) = pair(type_meta)?;
    let fields = match fields_of(kind) {
        Some(fields) if kind.ends_with("List") => fields,
        _ => return Ok(Head::Whole),
    };
    // The `raw` field's key and length; its bytes are the list's.
    let after = &unknown[length..];
    let (key, key_length) = match varint_at(after)? {
        Ok(read) => read,
        Err(_) => return Ok(Head::More),
    };
    if key != (2 << 3 | 2) {
        return Ok(Head::Whole);
    }
    let (raw, raw_length) = match varint_at(&after[key_length..])? {
        Ok(read) => read,
        Err(_) => return Ok(Head::More),
    };
    let raw = usize::try_from(raw).map_err(|_| bad("a length out of range"))?;
    Ok(Head::List { api_version, kind, fields, raw, length: MAGIC.len() + length + key_length + raw_length })
}

/// Refuses an envelope whose bytes are encoded (compressed) inside it.
fn content_encoding(encoding: &[u8]) -> Result<(), ProtobufError> {
    if encoding.is_empty() {
        return Ok(());
    }
    Err(bad(format!("content encoding {:?}", String::from_utf8_lossy(encoding))))
}

/// Writes an enveloped object with its `apiVersion` and `kind`.
fn object(envelope: &Envelope<'_>, out: &mut Vec<u8>) -> Result<(), ProtobufError> {
    let fields = fields_of(envelope.kind).ok_or_else(|| bad(format!("kind {:?} is not read", envelope.kind)))?;
    out.extend_from_slice(b"{\"apiVersion\":");
    string(envelope.api_version, out);
    out.extend_from_slice(b",\"kind\":");
    string(envelope.kind, out);
    members(envelope.raw, fields, true, out)?;
    out.push(b'}');
    Ok(())
}

/// The JSON line of one watch frame (a `WatchEvent`, enveloped or not): `{"type":…,"object":…}`.
/// `kind` names the watched objects when the event's object has no envelope of its own.
///
/// # Errors
/// A frame or object that does not read.
pub fn watch_event_to_json(frame: &[u8], kind: &str) -> Result<Vec<u8>, ProtobufError> {
    let event = match envelope(frame)? {
        Some(envelope) => envelope.raw,
        None => frame,
    };
    let (mut kind_of_event, mut raw) = ("", &[][..]);
    for field in Fields::of(event) {
        match field? {
            (1, Wire::Bytes(text)) => kind_of_event = utf8(text)?,
            (2, Wire::Bytes(extension)) => {
                for field in Fields::of(extension) {
                    if let (1, Wire::Bytes(bytes)) = field? {
                        raw = bytes;
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::with_capacity(raw.len() / 4 + 64);
    out.extend_from_slice(b"{\"type\":");
    string(kind_of_event, &mut out);
    out.extend_from_slice(b",\"object\":");
    match envelope(raw)? {
        Some(envelope) => object(&envelope, &mut out)?,
        // An ERROR event's object is a Status.
        None if kind_of_event == "ERROR" => object(&Envelope { api_version: "v1", kind: "Status", raw }, &mut out)?,
        None => object(&Envelope { api_version: "", kind, raw }, &mut out)?,
    }
    out.extend_from_slice(b"}\n");
    Ok(out)
}

/// The most fields a table has.
const MOST_FIELDS: usize = 10;

/// Writes the fields of message `bytes` that `fields` reads as members of an object, each once
/// (`written`: a member was written before them). One pass finds each field's last occurrence (a
/// field given twice: the last wins, as protobuf reads it) and a repeated field's first; the members
/// are then written in the table's order.
fn members(bytes: &[u8], fields: &'static [Field], mut written: bool, out: &mut Vec<u8>) -> Result<(), ProtobufError> {
    debug_assert!(fields.len() <= MOST_FIELDS);
    let mut last: [Option<Wire<'_>>; MOST_FIELDS] = [None; MOST_FIELDS];
    let mut first_at: [Option<usize>; MOST_FIELDS] = [None; MOST_FIELDS];
    let mut wire = Fields::of(bytes);
    loop {
        let at = bytes.len() - wire.rest.len();
        let Some(next) = wire.next() else { break };
        let (number, value) = next?;
        if let Some(index) = fields.iter().position(|field| field.number == number) {
            last[index] = Some(value);
            first_at[index].get_or_insert(at);
        }
    }
    for (index, field) in fields.iter().enumerate() {
        if field.repeated || matches!(field.shape, Shape::Map) {
            // Every occurrence, in order: an array, or (a map) an object of its entries.
            let (open, close) = if field.repeated { (b'[', b']') } else { (b'{', b'}') };
            let Some(at) = first_at[index] else {
                if field.present {
                    key(written, field.json, out);
                    out.extend_from_slice(&[open, close]);
                    written = true;
                }
                continue;
            };
            let start = out.len();
            key(written, field.json, out);
            out.push(open);
            let mut count = 0usize;
            for wire in Fields::of(&bytes[at..]) {
                let (number, value) = wire?;
                if number != field.number {
                    continue;
                }
                if let (Shape::TolerationsOwners(_), Wire::Bytes(entry)) = (field.shape, value)
                    && !entry_owns_tolerations(entry, field)?
                {
                    continue;
                }
                if count > 0 {
                    out.push(b',');
                }
                match (field.shape, value) {
                    (Shape::Map, Wire::Bytes(entry)) => map_entry(entry, out)?,
                    (_, value) => {
                        value_of(field, value, out)?;
                    }
                }
                count += 1;
            }
            if count == 0 && !field.present {
                // Every occurrence left out: none is written, as when there is none.
                out.truncate(start);
                continue;
            }
            out.push(close);
            written = true;
            continue;
        }
        let Some(value) = last[index] else { continue };
        let start = out.len();
        key(written, field.json, out);
        if value_of(field, value, out)? || field.present && !matches!(field.shape, Shape::Time | Shape::MicroTime) {
            written = true;
        } else {
            out.truncate(start);
        }
    }
    Ok(())
}

/// Writes a member's name (after a comma when one was `written` before).
fn key(written: bool, name: &str, out: &mut Vec<u8>) {
    if written {
        out.push(b',');
    }
    string(name, out);
    out.push(b':');
}

/// Writes one entry of a `map<string, string>` as an object's member.
fn map_entry(entry: &[u8], out: &mut Vec<u8>) -> Result<(), ProtobufError> {
    let (key, value) = pair(entry)?;
    string(key, out);
    out.push(b':');
    string(value, out);
    Ok(())
}

/// Writes one value; whether it is not empty (an `omitempty` field's empty value is dropped).
fn value_of(field: &Field, value: Wire<'_>, out: &mut Vec<u8>) -> Result<bool, ProtobufError> {
    let wrong = || bad(format!("field {} ({}) of an unexpected wire type", field.number, field.json));
    match (field.shape, value) {
        (Shape::Str, Wire::Bytes(bytes)) => {
            let text = utf8(bytes)?;
            string(text, out);
            Ok(!text.is_empty())
        }
        (Shape::Int, Wire::Varint(value)) => {
            // int32 and int64 alike: a negative value is its two's complement, sign-extended.
            let value = value.cast_signed();
            let _ = write!(Writer(out), "{value}");
            Ok(value != 0)
        }
        (Shape::Bool, Wire::Varint(value)) => {
            out.extend_from_slice(if value != 0 { b"true" } else { b"false" });
            Ok(value != 0)
        }
        (Shape::Time | Shape::MicroTime, Wire::Bytes(bytes)) => {
            let (mut seconds, mut nanos) = (None, 0i64);
            for wire in Fields::of(bytes) {
                match wire? {
                    (1, Wire::Varint(value)) => seconds = Some(value.cast_signed()),
                    (2, Wire::Varint(value)) => nanos = i64::from(value as u32 as i32),
                    _ => {}
                }
            }
            // The zero time is JSON's `null`: no time, left out.
            let Some(seconds) = seconds else { return Ok(false) };
            // A Time's nanoseconds are never written (its JSON has seconds); a MicroTime's are cut
            // to microseconds, as its JSON is.
            let nanos = if matches!(field.shape, Shape::MicroTime) { nanos - nanos % 1000 } else { 0 };
            let mut buffer = [0; RFC3339_MAX];
            let at = i128::from(seconds) * 1_000_000_000 + i128::from(nanos);
            let text = rfc3339_ascii(at, &mut buffer)
                .filter(|_| (0..1_000_000_000).contains(&nanos))
                .ok_or_else(|| bad(format!("{} is out of range ({seconds} s, {nanos} ns)", field.json)))?;
            out.push(b'"');
            out.extend_from_slice(text);
            out.push(b'"');
            Ok(true)
        }
        (Shape::Message(fields) | Shape::TolerationsOwners(fields), Wire::Bytes(bytes)) => {
            out.push(b'{');
            members(bytes, fields, false, out)?;
            out.push(b'}');
            Ok(true)
        }
        (Shape::FieldsV1, Wire::Bytes(bytes)) => {
            let mut raw: &[u8] = b"{}";
            for wire in Fields::of(bytes) {
                if let (1, Wire::Bytes(json)) = wire? {
                    raw = json;
                }
            }
            serde_json::from_slice::<serde::de::IgnoredAny>(raw)
                .map_err(|error| bad(format!("{} does not hold JSON: {error}", field.json)))?;
            out.extend_from_slice(raw);
            Ok(true)
        }
        (Shape::TolerationsOwned, Wire::Bytes(bytes)) => {
            let mut raw: &[u8] = b"{}";
            for wire in Fields::of(bytes) {
                if let (1, Wire::Bytes(json)) = wire? {
                    raw = json;
                }
            }
            out.extend_from_slice(
                if owns_tolerations(raw).map_err(|error| bad(format!("{} does not hold JSON: {error}", field.json)))? {
                    br#"{"f:spec":{"f:tolerations":{}}}"#
                } else {
                    b"{}"
                },
            );
            Ok(true)
        }
        _ => Err(wrong()),
    }
}

/// Whether a `managedFields` entry (of `field`) owns `spec.tolerations`: its `fieldsV1` (7) says.
fn entry_owns_tolerations(entry: &[u8], field: &Field) -> Result<bool, ProtobufError> {
    let mut owned: &[u8] = b"{}";
    for wire in Fields::of(entry) {
        if let (7, Wire::Bytes(fields_v1)) = wire? {
            for wire in Fields::of(fields_v1) {
                if let (1, Wire::Bytes(json)) = wire? {
                    owned = json;
                }
            }
        }
    }
    owns_tolerations(owned).map_err(|error| bad(format!("{}'s fieldsV1 does not hold JSON: {error}", field.json)))
}

/// Whether the JSON of a `FieldsV1` owns `spec.tolerations` (`f:spec` → `f:tolerations`). Most
/// entries do not name them at all, and are not parsed.
fn owns_tolerations(json: &[u8]) -> Result<bool, serde_json::Error> {
    /// `f:spec` → `f:tolerations`, the rest skipped.
    #[derive(serde::Deserialize)]
    struct Owned {
        #[serde(rename = "f:spec", default)]
        spec: Option<OwnedSpec>,
    }
    #[derive(serde::Deserialize)]
    struct OwnedSpec {
        #[serde(rename = "f:tolerations", default)]
        tolerations: Option<serde::de::IgnoredAny>,
    }
    const NAMED: &[u8] = b"\"f:tolerations\"";
    if !json.windows(NAMED.len()).any(|window| window == NAMED) {
        return Ok(false);
    }
    let owned: Owned = serde_json::from_slice(json)?;
    Ok(owned.spec.is_some_and(|spec| spec.tolerations.is_some()))
}

/// Adapts `Vec<u8>` to `fmt::Write`.
struct Writer<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Writer<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// Writes `text` as a JSON string.
fn string(text: &str, out: &mut Vec<u8>) {
    // Writing to a `Vec` cannot fail.
    let _ = crate::words::json_string(out, text);
}

/// The protobuf a server holding only the fields read would send for `value` (an object, a typed
/// list or a `Status`, as its `kind` says), enveloped: the inverse of [`to_json`], for the tests'
/// fake API server and the benchmarks (the real kube-apiserver holds the field numbers to account).
///
/// # Errors
/// A kind nothing here reads, or a field of another shape than the API's.
pub fn encode(value: &serde_json::Value) -> Result<Vec<u8>, ProtobufError> {
    let kind = value["kind"].as_str().unwrap_or_default();
    let fields = fields_of(kind).ok_or_else(|| bad(format!("kind {kind:?} is not read")))?;
    let api_version = value["apiVersion"].as_str().unwrap_or_default();
    let mut type_meta = Vec::new();
    put_bytes(1, api_version.as_bytes(), &mut type_meta);
    put_bytes(2, kind.as_bytes(), &mut type_meta);
    let mut unknown = Vec::new();
    put_bytes(1, &type_meta, &mut unknown);
    put_bytes(2, &encode_message(value, fields)?, &mut unknown);
    let mut out = MAGIC.to_vec();
    out.extend(unknown);
    Ok(out)
}

/// One watch frame's `WatchEvent` (without its length) for `event` (`{"type", "object"}`): the object
/// enveloped, of `kind` unless it says.
///
/// # Errors
/// As [`encode`].
pub fn encode_watch_event(event: &serde_json::Value, kind: &str) -> Result<Vec<u8>, ProtobufError> {
    let mut object = event["object"].clone();
    if object.get("kind").is_none() {
        object["kind"] = serde_json::Value::from(kind);
    }
    let mut extension = Vec::new();
    put_bytes(1, &encode(&object)?, &mut extension);
    let mut out = Vec::new();
    put_bytes(1, event["type"].as_str().unwrap_or_default().as_bytes(), &mut out);
    put_bytes(2, &extension, &mut out);
    Ok(out)
}

fn put_varint(mut value: u64, out: &mut Vec<u8>) {
    while value >= 0x80 {
        out.push((value & 0x7f) as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn put_bytes(number: u32, bytes: &[u8], out: &mut Vec<u8>) {
    put_varint(u64::from(number) << 3 | 2, out);
    put_varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}

fn encode_message(value: &serde_json::Value, fields: &'static [Field]) -> Result<Vec<u8>, ProtobufError> {
    let mut out = Vec::new();
    for field in fields {
        let Some(member) = value.get(field.json).filter(|v| !v.is_null()) else { continue };
        let wrong = || bad(format!("{} is not of its API shape: {member}", field.json));
        match (field.shape, member) {
            (Shape::Map, serde_json::Value::Object(entries)) => {
                for (key, text) in entries {
                    let mut entry = Vec::new();
                    put_bytes(1, key.as_bytes(), &mut entry);
                    put_bytes(2, text.as_str().ok_or_else(wrong)?.as_bytes(), &mut entry);
                    put_bytes(field.number, &entry, &mut out);
                }
            }
            (_, serde_json::Value::Array(items)) if field.repeated => {
                for item in items {
                    encode_value(field, item, &mut out)?;
                }
            }
            (_, member) => encode_value(field, member, &mut out)?,
        }
    }
    Ok(out)
}

fn encode_value(field: &Field, value: &serde_json::Value, out: &mut Vec<u8>) -> Result<(), ProtobufError> {
    let wrong = || bad(format!("{} is not of its API shape: {value}", field.json));
    match field.shape {
        Shape::Str => put_bytes(field.number, value.as_str().ok_or_else(wrong)?.as_bytes(), out),
        Shape::Int | Shape::Bool => {
            let number = match value {
                serde_json::Value::Bool(flag) => u64::from(*flag),
                other => other.as_i64().ok_or_else(wrong)?.cast_unsigned(),
            };
            put_varint(u64::from(field.number) << 3, out);
            put_varint(number, out);
        }
        Shape::Time | Shape::MicroTime => {
            let at: jiff::Timestamp = value.as_str().and_then(|t| t.parse().ok()).ok_or_else(wrong)?;
            let mut time = Vec::new();
            put_varint(u64::from(1u32) << 3, &mut time);
            put_varint(at.as_second().cast_unsigned(), &mut time);
            if matches!(field.shape, Shape::MicroTime) && at.subsec_nanosecond() != 0 {
                put_varint(u64::from(2u32) << 3, &mut time);
                put_varint(u64::from(at.subsec_nanosecond().cast_unsigned()), &mut time);
            }
            put_bytes(field.number, &time, out);
        }
        Shape::Map => return Err(wrong()),
        Shape::FieldsV1 | Shape::TolerationsOwned => {
            let mut fields = Vec::new();
            put_bytes(1, value.to_string().as_bytes(), &mut fields);
            put_bytes(field.number, &fields, out);
        }
        Shape::Message(fields) | Shape::TolerationsOwners(fields) => {
            put_bytes(field.number, &encode_message(value, fields)?, out);
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::decode::{read_page, read_watched};
    use crate::engine::snapshot::SnapshotPod;

    /// A value to encode.
    pub(crate) enum V<'a> {
        S(&'a str),
        I(i64),
        B(bool),
        M(Vec<u8>),
    }

    fn varint(mut value: u64, out: &mut Vec<u8>) {
        while value >= 0x80 {
            out.push((value as u8) | 0x80);
            value >>= 7;
        }
        out.push(value as u8);
    }

    /// A message of `fields`, in this order.
    pub(crate) fn msg(fields: &[(u32, V<'_>)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (number, value) in fields {
            let bytes = match value {
                V::I(value) => {
                    varint(u64::from(*number) << 3, &mut out);
                    varint(value.cast_unsigned(), &mut out);
                    continue;
                }
                V::B(value) => {
                    varint(u64::from(*number) << 3, &mut out);
                    varint(u64::from(*value), &mut out);
                    continue;
                }
                V::S(text) => text.as_bytes(),
                V::M(bytes) => bytes,
            };
            varint(u64::from(*number) << 3 | 2, &mut out);
            varint(bytes.len() as u64, &mut out);
            out.extend_from_slice(bytes);
        }
        out
    }

    /// `k8s\0` and a `runtime.Unknown` around `raw`.
    pub(crate) fn enveloped(api_version: &str, kind: &str, raw: Vec<u8>) -> Vec<u8> {
        let type_meta = msg(&[(1, V::S(api_version)), (2, V::S(kind))]);
        let mut out = MAGIC.to_vec();
        out.extend(msg(&[(1, V::M(type_meta)), (2, V::M(raw)), (4, V::S("application/vnd.kubernetes.protobuf"))]));
        out
    }

    fn time(seconds: i64) -> V<'static> {
        V::M(msg(&[(1, V::I(seconds))]))
    }

    /// 2026-11-23T18:00:00Z.
    const T0: i64 = 1_795_456_800;

    fn pod() -> Vec<u8> {
        pod_labelled("line\nbreak\u{1}")
    }

    /// [`pod`], its label `q"x` of `value`.
    fn pod_labelled(value: &str) -> Vec<u8> {
        let junk = V::M(vec![0x0a, 0x03, b'a', b'b', b'c', 0x10, 0x96, 0x01]);
        let meta = msg(&[
            (1, V::S("web-1")),
            (3, V::S("prod")),
            (5, V::S("u1")),
            (6, V::S("42")),
            (7, V::I(3)),
            (8, time(T0)),
            (11, V::M(msg(&[(1, V::S("app")), (2, V::S("web"))]))),
            (11, V::M(msg(&[(1, V::S("q\"x")), (2, V::S(value))]))),
            (12, V::M(msg(&[(1, V::S("note")), (2, V::S("skipped"))]))),
            (
                13,
                V::M(msg(&[
                    (1, V::S("ReplicaSet")),
                    (3, V::S("web")),
                    (4, V::S("r1")),
                    (5, V::S("apps/v1")),
                    (6, V::B(true)),
                ])),
            ),
            (14, junk),
            (17, managed_entry("kube-controller-manager", T0, r#"{"f:metadata":{"f:labels":{}},"f:spec":{}}"#)),
        ]);
        let spec = msg(&[
            (2, V::M(msg(&[(1, V::S("app")), (2, V::S("nginx"))]))),
            (10, V::S("n1")),
            (22, V::M(msg(&[(1, V::S("k")), (2, V::S("Exists")), (4, V::S("NoExecute")), (5, V::I(300))]))),
            (22, V::M(msg(&[(2, V::S("Exists"))]))),
            (11, V::S("")),
        ]);
        let status = msg(&[
            (1, V::S("Running")),
            (2, V::M(msg(&[(1, V::S("PodScheduled")), (2, V::S("True")), (3, V::M(Vec::new())), (4, time(T0 + 5))]))),
            (2, V::M(msg(&[(1, V::S("Ready")), (2, V::S("True")), (4, time(T0 + 9)), (6, V::S("skipped"))]))),
            (5, V::S("10.0.0.1")),
        ]);
        msg(&[(1, V::M(meta)), (2, V::M(spec)), (3, V::M(status))])
    }

    /// A `managedFields` entry of `manager`'s, an update at `at` of the fields `owned` (JSON).
    fn managed_entry(manager: &str, at: i64, owned: &str) -> V<'static> {
        V::M(msg(&[
            (1, V::S(manager)),
            (2, V::S("Update")),
            (3, V::S("v1")),
            (4, time(at)),
            (6, V::S("FieldsV1")),
            (7, V::M(msg(&[(1, V::S(owned))]))),
        ]))
    }

    const POD_JSON: &str = r#"{"metadata":{"name":"web-1","namespace":"prod","uid":"u1","resourceVersion":"42",
        "creationTimestamp":"2026-11-23T18:00:00Z","labels":{"app":"web","q\"x":"line\nbreak\u0001"},
        "annotations":{"note":"skipped"},
        "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web","uid":"r1","controller":true}]},
        "spec":{"containers":[{"name":"app","image":"nginx"}],"nodeName":"n1",
        "tolerations":[{"key":"k","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},{"operator":"Exists"}]},
        "status":{"phase":"Running","conditions":[{"type":"PodScheduled","status":"True","lastProbeTime":null,
        "lastTransitionTime":"2026-11-23T18:00:05Z"},{"type":"Ready","status":"True","lastProbeTime":null,
        "lastTransitionTime":"2026-11-23T18:00:09Z","message":"skipped"}],"hostIP":"10.0.0.1"}}"#;

    #[test]
    fn a_pod_is_written_as_the_json_of_the_fields_read_and_nothing_else() {
        let json = to_json(&enveloped("v1", "Pod", pod())).expect("reads");
        assert_eq!(
            String::from_utf8(json).expect("UTF-8"),
            concat!(
                r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"prod","uid":"u1","#,
                r#""resourceVersion":"42","creationTimestamp":"2026-11-23T18:00:00Z","labels":{"app":"web","#,
                r#""q\"x":"line\nbreak\u0001"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","#,
                r#""name":"web","uid":"r1","controller":true}]},"spec":{"nodeName":"n1","tolerations":[{"key":"k","#,
                r#""operator":"Exists","effect":"NoExecute","tolerationSeconds":300},{"operator":"Exists"}]},"#,
                r#""status":{"phase":"Running","conditions":[{"type":"PodScheduled","status":"True","#,
                r#""lastTransitionTime":"2026-11-23T18:00:05Z"},{"type":"Ready","status":"True","#,
                r#""lastTransitionTime":"2026-11-23T18:00:09Z"}]}}"#
            )
        );
    }

    #[test]
    fn a_list_page_reads_as_the_same_page_in_json_does() {
        let meta = msg(&[(2, V::S("77")), (3, V::S("next-token"))]);
        let list = msg(&[(1, V::M(meta)), (2, V::M(pod())), (2, V::M(pod()))]);
        let json = to_json(&enveloped("v1", "PodList", list)).expect("reads");
        let from_protobuf = read_page(&json, "Pod").expect("a page");
        let server = format!(
            r#"{{"kind":"PodList","apiVersion":"v1","metadata":{{"resourceVersion":"77","continue":"next-token"}},"items":[{POD_JSON},{POD_JSON}]}}"#
        );
        let from_json = read_page(server.as_bytes(), "Pod").expect("a page");
        assert_eq!(from_protobuf.continue_token.as_deref(), Some("next-token"));
        assert_eq!(format!("{:?}", from_protobuf.snapshot), format!("{:?}", from_json.snapshot));
        assert_eq!(from_json.snapshot.pods.len(), 2);
    }

    #[test]
    fn a_pods_tolerations_written_after_its_creation_read_from_protobuf_as_from_json() {
        use crate::engine::snapshot::{Owner, TaintsWritten, TolerationsEdited};
        // Created at T0; its tolerations patched at `patched` by another manager, who owns them
        // since. A label named `tolerations` is not them.
        let created = r#"{"f:metadata":{"f:labels":{"f:tolerations":{}}},"f:spec":{"f:containers":{}}}"#;
        let owned = r#"{"f:spec":{"f:nodeName":{},"f:tolerations":{}}}"#;
        let read = |patched: i64| {
            let owner = msg(&[
                (1, V::S("ReplicaSet")),
                (3, V::S("web")),
                (4, V::S("r1")),
                (5, V::S("apps/v1")),
                (6, V::B(true)),
            ]);
            let meta = msg(&[
                (1, V::S("web-1")),
                (3, V::S("prod")),
                (8, time(T0)),
                (13, V::M(owner)),
                (17, managed_entry("kubectl-create", T0, created)),
                (17, managed_entry("kubectl-patch", patched, owned)),
            ]);
            let spec = msg(&[(10, V::S("n1")), (22, V::M(msg(&[(2, V::S("Exists"))])))]);
            let list = msg(&[(1, V::M(Vec::new())), (2, V::M(msg(&[(1, V::M(meta)), (2, V::M(spec))])))]);
            let rewritten = to_json(&enveloped("v1", "PodList", list)).expect("reads");
            let from_protobuf = read_page(&rewritten, "Pod").expect("a page").snapshot.pods.remove(0);
            let at = |seconds: i64| crate::words::rfc3339(i128::from(seconds) * 1_000_000_000);
            let entry = |manager: &str, seconds: i64, fields: &str| {
                format!(
                    r#"{{"manager":"{manager}","operation":"Update","apiVersion":"v1","time":"{}","fieldsType":"FieldsV1","fieldsV1":{fields}}}"#,
                    at(seconds)
                )
            };
            let server = format!(
                r#"{{"kind":"PodList","metadata":{{}},"items":[{{"metadata":{{"name":"web-1","namespace":"prod","creationTimestamp":"{}","ownerReferences":[{{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web","uid":"r1","controller":true}}],"managedFields":[{},{}]}},"spec":{{"nodeName":"n1","tolerations":[{{"operator":"Exists"}}]}}}}]}}"#,
                at(T0),
                entry("kubectl-create", T0, created),
                entry("kubectl-patch", patched, owned)
            );
            let from_json = read_page(server.as_bytes(), "Pod").expect("a page").snapshot.pods.remove(0);
            assert_eq!(from_protobuf, from_json);
            // Only the entry that owns the tolerations is written, and of the fields it owns those.
            let text = String::from_utf8(rewritten).expect("UTF-8");
            assert!(!text.contains("kubectl-create"), "{text}");
            assert!(text.contains(r#""manager":"kubectl-patch","operation":"Update""#), "{text}");
            assert!(text.contains(r#""fieldsV1":{"f:spec":{"f:tolerations":{}}}"#), "{text}");
            from_json.tolerations_edited
        };
        let owner = Owner::new("ReplicaSet", "web", "r1");
        let written = TaintsWritten {
            at: crate::engine::time::Timestamp::from_unix_seconds(T0 + 5),
            manager: "kubectl-patch".into(),
        };
        let edited = TolerationsEdited { written, controller: Some(("apps/v1".into(), owner)) };
        assert_eq!(read(T0 + 5).as_deref(), Some(&edited));
        // Written at its creation only: no edit.
        assert_eq!(read(T0), None);
    }

    #[test]
    fn a_node_not_ready_reads_since_when_from_protobuf_as_from_json() {
        let node = |name: &str, status: &'static str| {
            let condition = msg(&[(1, V::S("Ready")), (2, V::S(status)), (3, time(T0 + 9)), (4, time(T0))]);
            msg(&[(1, V::M(msg(&[(1, V::S(name))]))), (3, V::M(msg(&[(4, V::M(condition))])))])
        };
        let list = msg(&[(1, V::M(Vec::new())), (2, V::M(node("n1", "Unknown"))), (2, V::M(node("n2", "True")))]);
        let json = to_json(&enveloped("v1", "NodeList", list)).expect("reads");
        let from_protobuf = read_page(&json, "Node").expect("a page");
        let condition = |status: &str| {
            format!(
                r#"{{"type":"Ready","status":"{status}","lastHeartbeatTime":"2026-11-23T18:00:09Z","lastTransitionTime":"2026-11-23T18:00:00Z"}}"#
            )
        };
        let server = format!(
            r#"{{"kind":"NodeList","metadata":{{}},"items":[{{"metadata":{{"name":"n1"}},"status":{{"conditions":[{}]}}}},{{"metadata":{{"name":"n2"}},"status":{{"conditions":[{}]}}}}]}}"#,
            condition("Unknown"),
            condition("True")
        );
        let from_json = read_page(server.as_bytes(), "Node").expect("a page");
        let changed: Vec<_> = from_json.snapshot.nodes.iter().map(|n| n.ready_changed).collect();
        assert_eq!(changed, [Some(crate::engine::time::Timestamp::from_unix_seconds(T0)), None]);
        assert_eq!(format!("{:?}", from_protobuf.snapshot), format!("{:?}", from_json.snapshot));
    }

    #[test]
    fn a_watch_frame_is_a_json_line_and_an_error_event_a_status() {
        // (A watched label holds no control character: the streaming reader refuses one, as before.)
        let pod = || pod_labelled("a\"b");
        let event = msg(&[(1, V::S("MODIFIED")), (2, V::M(msg(&[(1, V::M(enveloped("v1", "Pod", pod())))])))]);
        let line = watch_event_to_json(&event, "Pod").expect("reads");
        assert_eq!(line.last(), Some(&b'\n'));
        let value: serde_json::Value = serde_json::from_slice(&line).expect("JSON");
        assert_eq!(value["type"], "MODIFIED");
        let object = value["object"].to_string();
        let mut deserializer = serde_json::Deserializer::from_str(&object);
        let watched = read_watched(&mut deserializer, "Pod", true).expect("a pod");
        assert_eq!(watched.resource_version.as_deref(), Some("42"));
        assert_eq!(watched.snapshot.pods[0].pod.tolerations.len(), 2);
        // What `run --keep-last-ready` reads: the controller (with its UID) and the Ready condition.
        let owner = watched.snapshot.pods[0].owner.as_ref().expect("its controller");
        assert_eq!((owner.kind(), owner.name(), owner.uid()), ("ReplicaSet", "web", "r1"));
        assert!(watched.snapshot.pods[0].ready.is_ready());
        // An object without an envelope is of the watched kind; an ERROR event's is a Status.
        let bare = msg(&[(1, V::S("ADDED")), (2, V::M(msg(&[(1, V::M(pod()))])))]);
        let value: serde_json::Value =
            serde_json::from_slice(&watch_event_to_json(&bare, "Pod").expect("reads")).expect("JSON");
        assert_eq!(value["object"]["kind"], "Pod");
        let status =
            msg(&[(2, V::S("Failure")), (3, V::S("too old resource version")), (4, V::S("Expired")), (6, V::I(410))]);
        let error = msg(&[(1, V::S("ERROR")), (2, V::M(msg(&[(1, V::M(status))])))]);
        let value: serde_json::Value =
            serde_json::from_slice(&watch_event_to_json(&error, "Pod").expect("reads")).expect("JSON");
        let status: kube::core::Status = serde_json::from_value(value["object"].clone()).expect("a Status");
        assert_eq!((status.code, status.reason.as_str()), (410, "Expired"));
    }

    #[test]
    fn a_watched_pod_reads_its_controller_and_readiness_from_protobuf_as_from_json() {
        // A pod owned by a ReplicaSet (as controller) and a DaemonSet (not), its Ready condition
        // `ready`, or none.
        let encoded = |ready: Option<&str>| {
            let owner = |kind, name, uid, controller| {
                V::M(msg(&[
                    (1, V::S(kind)),
                    (3, V::S(name)),
                    (4, V::S(uid)),
                    (5, V::S("apps/v1")),
                    (6, V::B(controller)),
                ]))
            };
            let meta = msg(&[
                (1, V::S("web-1")),
                (3, V::S("prod")),
                (5, V::S("u1")),
                (13, owner("DaemonSet", "agent", "d1", false)),
                (13, owner("ReplicaSet", "web", "r1", true)),
            ]);
            let condition = ready.map(|status| msg(&[(1, V::S("Ready")), (2, V::S(status)), (4, time(T0))]));
            let status = match condition {
                Some(condition) => msg(&[(1, V::S("Running")), (2, V::M(condition))]),
                None => msg(&[(1, V::S("Running"))]),
            };
            msg(&[(1, V::M(meta)), (2, V::M(msg(&[(10, V::S("n1"))]))), (3, V::M(status))])
        };
        let json = |ready: Option<&str>| {
            let conditions = ready.map_or_else(String::new, |status| {
                format!(r#","conditions":[{{"type":"Ready","status":"{status}","lastTransitionTime":"2026-11-23T18:00:00Z"}}]"#)
            });
            format!(
                r#"{{"metadata":{{"name":"web-1","namespace":"prod","uid":"u1","ownerReferences":[
                {{"apiVersion":"apps/v1","kind":"DaemonSet","name":"agent","uid":"d1","controller":false}},
                {{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web","uid":"r1","controller":true}}]}},
                "spec":{{"nodeName":"n1"}},"status":{{"phase":"Running"{conditions}}}}}"#
            )
        };
        for ready in [Some("True"), Some("False"), None] {
            let line = to_json(&enveloped("v1", "Pod", encoded(ready))).expect("reads");
            let from_protobuf =
                read_watched(&mut serde_json::Deserializer::from_slice(&line), "Pod", true).expect("a pod");
            let text = json(ready);
            let from_json = read_watched(&mut serde_json::Deserializer::from_str(&text), "Pod", true).expect("a pod");
            let pod = &from_protobuf.snapshot.pods[0];
            assert_eq!(pod, &from_json.snapshot.pods[0], "{ready:?}");
            assert_eq!(pod.ready.is_ready(), ready == Some("True"));
            let owner = pod.owner.as_ref().expect("the controller");
            assert_eq!((owner.kind(), owner.name(), owner.uid()), ("ReplicaSet", "web", "r1"));
            // Unless asked for, the owner is not read (readiness is: it costs no allocation).
            let unowned = read_watched(&mut serde_json::Deserializer::from_slice(&line), "Pod", false).expect("a pod");
            assert_eq!(unowned.snapshot.pods[0], SnapshotPod { owner: None, ..pod.clone() });
        }
    }

    #[test]
    fn a_status_lease_and_node_keep_what_their_json_keeps() {
        let status = msg(&[
            (1, V::M(Vec::new())),
            (2, V::S("Failure")),
            (3, V::S("pods is forbidden: User \"x\" cannot list resource \"pods\"")),
            (4, V::S("Forbidden")),
            (5, V::M(msg(&[(3, V::S("pods")), (5, V::I(0))]))),
            (6, V::I(403)),
        ]);
        let json = to_json(&enveloped("v1", "Status", status)).expect("reads");
        let status: kube::core::Status = serde_json::from_slice(&json).expect("a Status");
        assert_eq!((status.code, status.status), (403, Some(kube::core::response::StatusSummary::Failure)));
        assert!(status.message.contains("cannot list resource \"pods\""));
        // A MicroTime keeps microseconds; a negative int32 is sign-extended; a zero Time is none.
        let micro = V::M(msg(&[(1, V::I(T0)), (2, V::I(123_456_789))]));
        let lease = msg(&[
            (
                1,
                V::M(msg(&[
                    (1, V::S("n1")),
                    (8, V::M(Vec::new())),
                    (12, V::M(msg(&[(1, V::S("a/b")), (2, V::S("c"))]))),
                ])),
            ),
            (2, V::M(msg(&[(2, V::I(-1)), (4, micro)]))),
        ]);
        let json = String::from_utf8(to_json(&enveloped("coordination.k8s.io/v1", "Lease", lease)).expect("reads"));
        // A Lease keeps its annotations (`run`'s carries its deletion count).
        assert_eq!(
            json.expect("UTF-8"),
            r#"{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"n1","annotations":{"a/b":"c"}},"spec":{"leaseDurationSeconds":-1,"renewTime":"2026-11-23T18:00:00.123456Z"}}"#
        );
        let taint =
            msg(&[(1, V::S("node.kubernetes.io/unreachable")), (2, V::S("")), (3, V::S("NoExecute")), (4, time(T0))]);
        let condition = msg(&[(1, V::S("Ready")), (2, V::S("Unknown")), (3, time(T0)), (4, time(T0)), (5, V::S(""))]);
        let node =
            msg(&[(2, V::M(msg(&[(4, V::B(false)), (5, V::M(taint))]))), (3, V::M(msg(&[(4, V::M(condition))])))]);
        let json = String::from_utf8(to_json(&enveloped("v1", "Node", node)).expect("reads")).expect("UTF-8");
        assert_eq!(
            json,
            concat!(
                r#"{"apiVersion":"v1","kind":"Node","spec":{"taints":[{"key":"node.kubernetes.io/unreachable","#,
                r#""effect":"NoExecute","timeAdded":"2026-11-23T18:00:00Z"}]},"status":{"conditions":[{"type":"Ready","#,
                r#""status":"Unknown","lastHeartbeatTime":"2026-11-23T18:00:00Z","lastTransitionTime":"2026-11-23T18:00:00Z"}]}}"#
            )
        );
    }

    #[test]
    fn encode_is_the_inverse_of_to_json() {
        let json = to_json(&enveloped("v1", "Pod", pod())).expect("reads");
        let value: serde_json::Value = serde_json::from_slice(&json).expect("JSON");
        assert_eq!(to_json(&encode(&value).expect("encodes")).expect("reads"), json);
        let event =
            serde_json::json!({"type": "DELETED", "object": {"metadata": {"name": "n1", "resourceVersion": "5"}}});
        let line = watch_event_to_json(&encode_watch_event(&event, "Node").expect("encodes"), "Node").expect("reads");
        assert_eq!(
            String::from_utf8(line).expect("UTF-8"),
            "{\"type\":\"DELETED\",\"object\":{\"apiVersion\":\"\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"5\"}}}\n"
        );
    }

    /// `bytes` fed to a [`Transcoder`] in pieces of the `cuts`' sizes (cycled), and ended.
    fn fed_in_pieces(bytes: &[u8], cuts: &[usize]) -> Result<Vec<u8>, ProtobufError> {
        let mut transcoder = Transcoder::default();
        let mut out = Vec::new();
        let (mut rest, mut cuts) = (bytes, cuts.iter().cycle());
        while let (false, Some(&cut)) = (rest.is_empty(), cuts.next()) {
            let (piece, after) = rest.split_at(cut.min(rest.len()));
            transcoder.feed(piece, &mut out)?;
            rest = after;
        }
        transcoder.finish(&mut out)?;
        Ok(out)
    }

    proptest::proptest! {
        #[test]
        fn a_list_fed_in_any_pieces_is_the_list_read_whole(
            items in 0..4usize,
            metadata in 0..4u8,
            cuts in proptest::collection::vec(1..64usize, 1..8),
        ) {
            let meta = || (1, V::M(msg(&[(2, V::S("77")), (3, V::S("next"))])));
            let mut fields: Vec<(u32, V<'_>)> = Vec::new();
            // None, before the items, after them, or both (the last one read).
            if metadata & 1 == 1 {
                fields.push(meta());
            }
            fields.extend((0..items).map(|_| (2, V::M(pod()))));
            if metadata & 2 == 2 {
                fields.push((1, V::M(msg(&[(2, V::S("78"))]))));
            }
            let bytes = enveloped("v1", "PodList", msg(&fields));
            let streamed = fed_in_pieces(&bytes, &cuts).expect("reads");
            // The same JSON as the whole list's members, written in the table's order.
            let mut whole = Vec::new();
            object(&envelope(&bytes).expect("reads").expect("an envelope"), &mut whole).expect("reads");
            let value = |json: &[u8]| serde_json::from_slice::<serde_json::Value>(json).expect("JSON");
            proptest::prop_assert_eq!(value(&streamed), value(&whole));
            proptest::prop_assert_eq!(&streamed, &to_json(&bytes).expect("reads"));
            // Cut anywhere before its list ends, it is refused (after it, the envelope's last field
            // may be cut off whole: a shorter message, read).
            let tail = msg(&[(4, V::S("application/vnd.kubernetes.protobuf"))]).len();
            for end in (0..bytes.len() - tail).step_by(7) {
                proptest::prop_assert!(fed_in_pieces(&bytes[..end], &cuts).is_err(), "cut at {end}");
            }
        }
    }

    #[test]
    fn a_list_written_encoded_is_refused_after_its_items_too() {
        let mut bytes = enveloped("v1", "PodList", msg(&[(2, V::M(pod()))]));
        bytes.extend(msg(&[(3, V::S("gzip"))]));
        let error = fed_in_pieces(&bytes, &[5]).expect_err("refused").to_string();
        assert_eq!(error, "the server's protobuf answer does not read: content encoding \"gzip\"");
    }

    #[test]
    fn an_empty_list_has_its_items_as_its_json_does() {
        let list = msg(&[(1, V::M(msg(&[(2, V::S("12"))])))]);
        let json = to_json(&enveloped("coordination.k8s.io/v1", "LeaseList", list)).expect("reads");
        assert_eq!(
            String::from_utf8(json).expect("UTF-8"),
            r#"{"apiVersion":"coordination.k8s.io/v1","kind":"LeaseList","items":[],"metadata":{"resourceVersion":"12"}}"#
        );
    }

    #[test]
    fn what_does_not_read_is_said() {
        let error = |bytes: &[u8]| to_json(bytes).expect_err("refused").to_string();
        assert_eq!(error(b"{\"kind\":\"Pod\"}"), "the server's protobuf answer does not read: no k8s envelope");
        let mut truncated = enveloped("v1", "Pod", pod());
        truncated.truncate(truncated.len() - 3);
        assert!(error(&truncated).contains("runs past its message"), "{}", error(&truncated));
        assert!(error(&enveloped("v1", "Secret", Vec::new())).contains("kind \"Secret\" is not read"));
        let group = enveloped("v1", "Pod", vec![0x0b]);
        assert!(error(&group).contains("wire type 3"), "{}", error(&group));
        let not_utf8 = enveloped("v1", "Pod", msg(&[(1, V::M(msg(&[(1, V::M(vec![0xff, 0xfe]))])))]));
        assert!(error(&not_utf8).contains("not UTF-8"));
        let far = enveloped("v1", "Pod", msg(&[(1, V::M(msg(&[(8, V::M(msg(&[(1, V::I(i64::MAX))])))])))]));
        assert!(error(&far).contains("creationTimestamp is out of range"), "{}", error(&far));
    }
}
