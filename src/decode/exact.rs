//! The exact reader: what the facade falls back to when the streaming reader gives up. It reads
//! the raw types whole with serde, and when that fails, reads the input again, slowly, item by item,
//! to say exactly where it is wrong (`item 12 (Pod web/api-0): spec.tolerations[1].tolerationSeconds:
//! …`).
//!
//! Owns: the exact readings of a dump, a page and one object, and the diagnosis of their errors.
//! Uses: `raw`, `error`, `build`.

use std::borrow::Cow;

use serde::Deserialize;
use serde_path_to_error::Segment;

use super::build::{Builder, Fields, Keep, Page};
use super::error::{DumpError, object_name, printable};
use super::raw::{RawItem, RawList};
use crate::engine::snapshot::Snapshot;

/// Reads a dump without the streaming reader: every item is deserialized first, and when that fails,
/// the input is read again item by item to say where it is wrong.
pub(super) fn read_exactly(bytes: &[u8], keep: &Keep) -> Result<Snapshot, DumpError> {
    // serde reads a struct from an array too (`[]` as a list with no kind and no items): only an
    // object takes the fast path, so that an array is named as one.
    let object = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    match serde_json::from_slice::<RawList<'_>>(bytes) {
        Ok(list) if object => convert_list(list.kind.as_deref(), list.items, keep),
        _ => read_slowly(bytes, keep),
    }
}

/// Reads one page of a typed list without the streaming reader (`kind` names its items).
pub(super) fn read_page_exactly(bytes: &[u8], kind: &str) -> Result<Page, DumpError> {
    let list: RawList<'_> = serde_json::from_slice(bytes).map_err(|e| diagnose::<RawList<'_>>(bytes, kind, &e))?;
    let continue_token = list.metadata.and_then(|m| m.continue_).filter(|c| !c.is_empty()).map(Cow::into_owned);
    let mut builder = Builder::default();
    for (index, item) in list.items.into_iter().flatten().enumerate() {
        let (item_kind, fields) = item.into_fields();
        builder.add(index, item_kind.as_deref().unwrap_or(kind), &fields)?;
    }
    Ok(Page { snapshot: builder.finish(), continue_token })
}

/// Reads one object the API server returned (a Node, a Pod or a Lease).
pub(super) fn read_object(bytes: &[u8], kind: &str) -> Result<Snapshot, DumpError> {
    let item: RawItem<'_> = serde_json::from_slice(bytes).map_err(|e| diagnose::<RawItem<'_>>(bytes, kind, &e))?;
    let (item_kind, fields) = item.into_fields();
    let mut builder = Builder::default();
    builder.add(0, item_kind.as_deref().unwrap_or(kind), &fields)?;
    Ok(builder.finish())
}

impl<'a> RawItem<'a> {
    /// The item's kind, when it says, and its fields for the [`Builder`].
    pub(super) fn into_fields(self) -> (Option<Cow<'a, str>>, Fields<'a>) {
        let meta = self.metadata.unwrap_or_default();
        let spec = self.spec.unwrap_or_default();
        let status = self.status.unwrap_or_default();
        let fields = Fields {
            kind: None,
            name: meta.name,
            namespace: meta.namespace,
            uid: meta.uid,
            creation_timestamp: meta.creation_timestamp,
            deletion_timestamp: meta.deletion_timestamp,
            labels: meta.labels.into_iter().flat_map(|labels| labels.0).collect(),
            owner_refs: meta.owner_references.unwrap_or_default(),
            managed_fields: meta.managed_fields.unwrap_or_default(),
            keep: Keep::default(),
            taints: spec.taints.unwrap_or_default(),
            node_name: spec.node_name,
            tolerations: spec.tolerations.unwrap_or_default(),
            acquire_time: spec.acquire_time,
            phase: status.phase,
            conditions: status.conditions.unwrap_or_default(),
            resource_claims: spec.resource_claims.unwrap_or_default(),
            claim_statuses: status.resource_claim_statuses.unwrap_or_default(),
            extended_claim: status.extended_resource_claim_status.and_then(|s| s.resource_claim_name),
            resource_version: None,
            keep_version: false,
        };
        (self.kind, fields)
    }
}

/// Why `bytes` are not a `T`, once the fast parse failed with `error`: serde_json's words for a syntax
/// error; for a value of the wrong shape, its path, and the list item it is in (`kind` when the item
/// does not say).
fn diagnose<'a, T: Deserialize<'a>>(bytes: &'a [u8], kind: &str, error: &serde_json::Error) -> DumpError {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let shape = match serde_path_to_error::deserialize::<_, T>(&mut deserializer) {
        Err(shape) if error.is_data() => shape,
        _ => return DumpError::Json(error.to_string()),
    };
    let segments: Vec<&Segment> = shape.path().iter().collect();
    let message = friendly(&shape.inner().to_string());
    if let [Segment::Map { key }, Segment::Seq { index }, rest @ ..] = segments.as_slice()
        && key == "items"
    {
        let document = serde_json::from_slice::<serde_json::Value>(bytes).unwrap_or_default();
        let mut item = document.get("items").and_then(|items| items.get(*index)).cloned().unwrap_or_default();
        if let Some(fields) = item.as_object_mut()
            && !fields.get("kind").is_some_and(serde_json::Value::is_string)
        {
            fields.insert("kind".into(), kind.into());
        }
        let object = if item.is_object() { describe(&item) } else { printable(kind) };
        return DumpError::BadItem { index: *index, object, path: json_path(rest), message };
    }
    DumpError::BadShape { path: json_path(&segments), message }
}

/// A path as serde_path_to_error writes it (`spec.taints[0].key`), one line whatever the keys hold.
fn json_path(segments: &[&Segment]) -> String {
    let mut path = String::new();
    for segment in segments {
        match segment {
            Segment::Seq { index } => path.push_str(&format!("[{index}]")),
            Segment::Map { key: name } | Segment::Enum { variant: name } => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(name);
            }
            Segment::Unknown => path.push('?'),
        }
    }
    printable(&path)
}

fn convert_list(kind: Option<&str>, items: Option<Vec<RawItem<'_>>>, keep: &Keep) -> Result<Snapshot, DumpError> {
    let items = match (kind, items) {
        (Some("List") | None, Some(items)) => items,
        (Some(kind), _) => return Err(DumpError::NotAList(format!("kind {kind:?}"))),
        (None, None) => return Err(DumpError::NotAList("an object with no kind and no items".into())),
    };
    let mut builder = Builder::new(keep.clone());
    for (index, item) in items.into_iter().enumerate() {
        let (kind, fields) = item.into_fields();
        builder.add(index, kind.as_deref().unwrap_or_default(), &fields)?;
    }
    Ok(builder.finish())
}

/// What a file that is not plain UTF-8 JSON is, by its first bytes: compressed, UTF-16 (what
/// Windows PowerShell's `>` writes), or UTF-8 behind a byte-order mark.
fn encoding(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0x1f, 0x8b, ..] => Some(" (it is gzip-compressed: decompress it first, e.g. with gunzip)"),
        [0xff, 0xfe, ..] | [0xfe, 0xff, ..] => Some(
            " (it is UTF-16 text, as PowerShell's > writes it: save it as UTF-8, e.g. with Out-File -Encoding utf8NoBOM)",
        ),
        [0xef, 0xbb, 0xbf, ..] => Some(
            " (it starts with a UTF-8 byte-order mark: save it without one, e.g. with Out-File -Encoding utf8NoBOM)",
        ),
        [b'{' | b'[', 0, ..] | [0, b'{' | b'[', ..] => Some(" (it is UTF-16 text: save it as UTF-8)"),
        _ => None,
    }
}

/// The diagnostic path: parse to a tree, then each item of a known kind on its own, tracking paths.
fn read_slowly(bytes: &[u8], keep: &Keep) -> Result<Snapshot, DumpError> {
    let document: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        // YAML opens with a key, `---` or a comment, in text; zeros or random bytes are not YAML.
        let head = &bytes[..bytes.len().min(256)];
        // (A character cut by the 256-byte window still counts as text.)
        let utf8 = std::str::from_utf8(head).map_or_else(|e| e.error_len().is_none(), |_| true);
        let text = utf8 && head.iter().all(|&b| (b >= b' ' && b != 0x7f) || matches!(b, b'\t' | b'\n' | b'\r'));
        let looks_like_yaml = text
            && bytes
                .iter()
                .find(|b| !b.is_ascii_whitespace())
                .is_some_and(|b| b.is_ascii_alphabetic() || matches!(b, b'-' | b'#'));
        let hint = match encoding(bytes) {
            Some(what) => what,
            None if looks_like_yaml => " (it looks like YAML: write the dump with -o json)",
            None => "",
        };
        DumpError::Json(format!("{e}{hint}"))
    })?;
    let serde_json::Value::Object(mut object) = document else {
        return Err(DumpError::NotAList(format!("a JSON {}", json_type(&document))));
    };
    let kind = object.get("kind").and_then(|k| k.as_str()).map(str::to_owned);
    let items = match object.remove("items") {
        Some(serde_json::Value::Array(items)) => items,
        Some(other) if kind.as_deref().is_none_or(|k| k == "List") => {
            return Err(DumpError::NotAList(format!("\"items\" holding a JSON {}", json_type(&other))));
        }
        _ => return convert_list(kind.as_deref(), None, keep),
    };
    let mut builder = Builder::new(keep.clone());
    for (index, value) in items.iter().enumerate() {
        let item_kind = value.get("kind").and_then(|k| k.as_str()).unwrap_or_default();
        if !matches!(item_kind, "Node" | "Pod" | "Lease") {
            continue;
        }
        let item: RawItem<'_> = serde_path_to_error::deserialize(value).map_err(|e| DumpError::BadItem {
            index,
            object: describe(value),
            path: json_path(&e.path().iter().collect::<Vec<_>>()),
            message: friendly(&e.into_inner().to_string()),
        })?;
        let (kind, fields) = item.into_fields();
        builder.add(index, kind.as_deref().unwrap_or_default(), &fields)?;
    }
    if kind.as_deref().is_some_and(|k| k != "List") {
        return Err(DumpError::NotAList(format!("kind {:?}", kind.unwrap_or_default())));
    }
    Ok(builder.finish())
}

fn json_type(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// `Pod web/api-0`, `Node n1`, as far as the item says.
fn describe(value: &serde_json::Value) -> String {
    let text = |path: &str| value.pointer(path).and_then(|v| v.as_str()).unwrap_or_default().to_owned();
    object_name(&text("/kind"), &text("/metadata/namespace"), &text("/metadata/name"))
}

/// serde's messages, in the words of the API's types.
fn friendly(message: &str) -> String {
    let integer =
        if message.starts_with("invalid value") { "expected a 64-bit integer" } else { "expected an integer" };
    message
        .replace("expected i64", integer)
        .replace("expected a sequence", "expected an array")
        .replace("expected a map", "expected an object")
        .replace("expected a borrowed string", "expected a string")
        .replace("expected a string or a borrowed string", "expected a string")
}
