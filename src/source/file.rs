//! Reads a `kubectl get nodes,pods -A -o json` dump into a [`Snapshot`].
//!
//! Only the fields the engine needs are deserialized, borrowing from the input where the JSON has no
//! escapes; everything else is skipped unread. The fast path (`stream`) reads the items one at a time
//! and builds each as soon as it is read. When it fails, the input is read again by the exact readers
//! below: first whole, then, if that fails too, slowly, item by item, to say exactly where it is wrong
//! (`item 12 (Pod web/api-0): spec.tolerations[1].tolerationSeconds: …`). Items of other kinds
//! (Services, Deployments, …) are skipped, so `kubectl get all,nodes -A -o json` works as well.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Deserialize;
use serde_path_to_error::Segment;

pub use super::build::KeepLabels;
use super::build::{Builder, Fields};
use super::stream;
use crate::engine::replay::Snapshot;
use crate::engine::time::Timestamp;

/// Why a dump could not be read. The messages name the item and field; the caller adds the file.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DumpError {
    /// The input is not JSON.
    #[error("not valid JSON: {0}")]
    Json(String),
    /// The document is JSON but not a `List`.
    #[error("expected a v1 List as `kubectl get nodes,pods -A -o json` prints it, found {0}")]
    NotAList(String),
    /// One item has a field of the wrong shape or value.
    #[error("item {index} ({object}): {}{message}", located(.path))]
    BadItem {
        /// The item's index in `items`.
        index: usize,
        /// `Kind namespace/name`, as far as it is known.
        object: String,
        /// The field, as a JSON path (`spec.tolerations[1].tolerationSeconds`).
        path: String,
        /// What is wrong with it.
        message: String,
    },
    /// The document is JSON, but it (or a field outside its items) has the wrong shape: an API
    /// server's answer that is not the object or list asked for.
    #[error("{}{message}", located(.path))]
    BadShape {
        /// The field, as a JSON path; empty for the document itself.
        path: String,
        /// What is wrong with it.
        message: String,
    },
}

/// `path: `, or nothing for the document (or item) itself.
fn located(path: &str) -> String {
    if path.is_empty() { String::new() } else { format!("{path}: ") }
}

/// The Lease kube-controller-manager's leader holds: its `acquireTime` is a controller restart.
pub const CONTROLLER_LEASE: (&str, &str) = ("kube-system", "kube-controller-manager");

/// The instant an API timestamp names, or `None` when it is not RFC 3339.
#[must_use]
pub fn parse_time(text: &str) -> Option<Timestamp> {
    text.parse::<jiff::Timestamp>().ok().map(|t| Timestamp::from_nanos(t.as_nanosecond()))
}

/// Why [`parse_time`] refused `text`: `out of range …` for a time at the end of year 9999 or later
/// (the last instants the API's range holds, and past it), else `not an RFC 3339 time`.
#[must_use]
pub fn time_error(text: &str) -> String {
    let year = text.split('-').next().filter(|y| y.len() >= 4 && y.bytes().all(|b| b.is_ascii_digit()));
    if year.is_some_and(|y| y.parse::<u64>().map_or(true, |y| y >= 9999)) {
        let last = jiff::Timestamp::MAX.as_second();
        let last = jiff::Timestamp::from_second(last).map_or_else(|_| "?".to_owned(), |t| t.to_string());
        return format!("out of range: the last time supported is {last}");
    }
    "not an RFC 3339 time".to_owned()
}

#[derive(Deserialize)]
#[serde(expecting = "an object")]
struct RawList<'a> {
    #[serde(borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    metadata: Option<RawListMeta<'a>>,
    #[serde(borrow, default)]
    items: Option<Vec<RawItem<'a>>>,
}

#[derive(Deserialize, Default)]
#[serde(expecting = "an object", default)]
pub(super) struct RawListMeta<'a> {
    #[serde(borrow, rename = "continue")]
    pub(super) continue_: Option<Cow<'a, str>>,
}

/// One page of a typed API list (`PodList`, `NodeList`): the objects and the `continue` token.
#[derive(Debug, Default)]
pub struct Page {
    /// The objects, as a snapshot.
    pub snapshot: Snapshot,
    /// The token for the next page; `None` on the last.
    pub continue_token: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(expecting = "an object", default)]
struct RawItem<'a> {
    #[serde(borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    metadata: Option<RawMeta<'a>>,
    #[serde(borrow)]
    spec: Option<RawSpec<'a>>,
    #[serde(borrow)]
    status: Option<RawStatus<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(expecting = "an object", default, rename_all = "camelCase")]
struct RawMeta<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    namespace: Option<Cow<'a, str>>,
    #[serde(borrow)]
    uid: Option<Cow<'a, str>>,
    #[serde(borrow)]
    creation_timestamp: Option<Cow<'a, str>>,
    #[serde(borrow)]
    deletion_timestamp: Option<Cow<'a, str>>,
    #[serde(borrow)]
    labels: Option<BTreeMap<Cow<'a, str>, Cow<'a, str>>>,
}

/// The union of the Node, Pod and Lease spec fields the engine reads.
#[derive(Deserialize, Default)]
#[serde(expecting = "an object", default, rename_all = "camelCase")]
struct RawSpec<'a> {
    #[serde(borrow)]
    taints: Option<Vec<RawTaint<'a>>>,
    #[serde(borrow)]
    node_name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    tolerations: Option<Vec<RawToleration<'a>>>,
    #[serde(borrow)]
    acquire_time: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
#[serde(expecting = "an object", default, rename_all = "camelCase")]
pub(super) struct RawTaint<'a> {
    #[serde(borrow)]
    pub(super) key: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(super) value: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(super) effect: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(super) time_added: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
#[serde(expecting = "an object", default, rename_all = "camelCase")]
pub(super) struct RawToleration<'a> {
    #[serde(borrow)]
    pub(super) key: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(super) operator: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(super) value: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(super) effect: Option<Cow<'a, str>>,
    pub(super) toleration_seconds: Option<i64>,
}

#[derive(Deserialize, Default)]
#[serde(expecting = "an object", default)]
struct RawStatus<'a> {
    #[serde(borrow)]
    phase: Option<Cow<'a, str>>,
    #[serde(borrow)]
    conditions: Option<Vec<RawCondition<'a>>>,
}

#[derive(Deserialize, Default)]
#[serde(expecting = "an object", default, rename_all = "camelCase")]
pub(super) struct RawCondition<'a> {
    #[serde(borrow, rename = "type")]
    pub(super) type_: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(super) status: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(super) last_transition_time: Option<Cow<'a, str>>,
}

/// Reads a dump. See the module docs.
pub fn read(bytes: &[u8]) -> Result<Snapshot, DumpError> {
    read_keeping(bytes, &KeepLabels::All)
}

/// [`read`], keeping only the node labels `keep_labels` keeps.
pub fn read_keeping(bytes: &[u8], keep_labels: &KeepLabels) -> Result<Snapshot, DumpError> {
    if let Some(list) = stream::read_list(bytes, None, true, keep_labels)
        && matches!(list.kind.as_deref(), Some("List") | None)
        && list.has_items
    {
        return Ok(list.snapshot);
    }
    read_exactly(bytes, keep_labels)
}

/// [`read`] without the streaming fast path: every item is deserialized first, and when that fails,
/// the input is read again item by item to say where it is wrong.
pub(super) fn read_exactly(bytes: &[u8], keep_labels: &KeepLabels) -> Result<Snapshot, DumpError> {
    // serde reads a struct from an array too (`[]` as a list with no kind and no items): only an
    // object takes the fast path, so that an array is named as one.
    let object = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    match serde_json::from_slice::<RawList<'_>>(bytes) {
        Ok(list) if object => convert_list(list.kind.as_deref(), list.items, keep_labels),
        _ => read_slowly(bytes, keep_labels),
    }
}

/// Reads one page of a typed list the API server returned (`kind` names its items: `Pod`, `Node`).
pub fn read_page(bytes: &[u8], kind: &str) -> Result<Page, DumpError> {
    if let Some(list) = stream::read_list(bytes, Some(kind), false, &KeepLabels::All) {
        let continue_token = list.metadata.and_then(|m| m.continue_).filter(|c| !c.is_empty()).map(Cow::into_owned);
        return Ok(Page { snapshot: list.snapshot, continue_token });
    }
    read_page_exactly(bytes, kind)
}

/// [`read_page`] without the streaming fast path.
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
pub fn read_object(bytes: &[u8], kind: &str) -> Result<Snapshot, DumpError> {
    let item: RawItem<'_> = serde_json::from_slice(bytes).map_err(|e| diagnose::<RawItem<'_>>(bytes, kind, &e))?;
    let (item_kind, fields) = item.into_fields();
    let mut builder = Builder::default();
    builder.add(0, item_kind.as_deref().unwrap_or(kind), &fields)?;
    Ok(builder.finish())
}

impl<'a> RawItem<'a> {
    /// The item's kind, when it says, and its fields for the [`Builder`].
    fn into_fields(self) -> (Option<Cow<'a, str>>, Fields<'a>) {
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
            labels: meta.labels.into_iter().flatten().collect(),
            keep_labels: KeepLabels::All,
            taints: spec.taints.unwrap_or_default(),
            node_name: spec.node_name,
            tolerations: spec.tolerations.unwrap_or_default(),
            acquire_time: spec.acquire_time,
            phase: status.phase,
            conditions: status.conditions.unwrap_or_default(),
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

/// `text` with control and other invisible characters escaped (`\n`, `\u{202e}`), so that a message
/// quoting the input stays one honest line.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' | '\'' | '\\' => c.to_string(),
            c => c.escape_debug().to_string(),
        })
        .collect()
}

fn convert_list(
    kind: Option<&str>,
    items: Option<Vec<RawItem<'_>>>,
    keep_labels: &KeepLabels,
) -> Result<Snapshot, DumpError> {
    let items = match (kind, items) {
        (Some("List") | None, Some(items)) => items,
        (Some(kind), _) => return Err(DumpError::NotAList(format!("kind {kind:?}"))),
        (None, None) => return Err(DumpError::NotAList("an object with no kind and no items".into())),
    };
    let mut builder = Builder::new(keep_labels.clone());
    for (index, item) in items.into_iter().enumerate() {
        let (kind, fields) = item.into_fields();
        builder.add(index, kind.as_deref().unwrap_or_default(), &fields)?;
    }
    Ok(builder.finish())
}

/// The diagnostic path: parse to a tree, then each item of a known kind on its own, tracking paths.
fn read_slowly(bytes: &[u8], keep_labels: &KeepLabels) -> Result<Snapshot, DumpError> {
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
        let hint = if looks_like_yaml { " (it looks like YAML: write the dump with -o json)" } else { "" };
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
        _ => return convert_list(kind.as_deref(), None, keep_labels),
    };
    let mut builder = Builder::new(keep_labels.clone());
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

/// `Kind namespace/name`, `Kind name` or `Kind`, one line whatever the names hold.
pub(super) fn object_name(kind: &str, namespace: &str, name: &str) -> String {
    printable(&match (namespace.is_empty(), name.is_empty()) {
        (_, true) => kind.to_owned(),
        (true, false) => format!("{kind} {name}"),
        (false, false) => format!("{kind} {namespace}/{name}"),
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::model::PodKey;

    fn item_error(json: &str) -> String {
        read(json.as_bytes()).expect_err("malformed").to_string()
    }

    #[test]
    fn only_the_labels_asked_for_are_kept_and_pods_share_their_node_name_and_phase() {
        let json = r#"{"kind":"List","items":[
            {"kind":"Node","metadata":{"name":"n1","labels":{"zone":"a","role":"db","big":"x"}}},
            {"kind":"Pod","metadata":{"name":"p","namespace":"d","uid":"u1"},"spec":{"nodeName":"n1"},"status":{"phase":"Running"}},
            {"kind":"Pod","metadata":{"name":"q","namespace":"d","uid":"u2"},"spec":{"nodeName":"n1"},"status":{"phase":"Running"}}]}"#;
        let only = |keys: &[&str]| KeepLabels::Only(keys.iter().map(|k| (*k).to_owned()).collect());
        let labels = |keep: &KeepLabels| {
            // The fast reader, and the exact one it falls back to, keep the same labels.
            let fast = read_keeping(json.as_bytes(), keep).expect("valid dump");
            let exact = read_exactly(json.as_bytes(), keep).expect("valid dump");
            assert_eq!(format!("{fast:?}"), format!("{exact:?}"));
            fast.nodes[0].labels.keys().cloned().collect::<Vec<_>>()
        };
        assert_eq!(labels(&KeepLabels::All), ["big", "role", "zone"]);
        assert_eq!(labels(&only(&["zone", "absent"])), ["zone"]);
        assert!(labels(&only(&[])).is_empty());
        let snapshot = read(json.as_bytes()).expect("valid dump");
        let [p, q] = [&snapshot.pods[0], &snapshot.pods[1]];
        let shared = |a: &crate::engine::model::NodeName, b: &crate::engine::model::NodeName| {
            std::ptr::eq(a.as_str().as_ptr(), b.as_str().as_ptr())
        };
        assert!(shared(p.pod.node.as_ref().expect("bound"), &snapshot.nodes[0].name));
        assert!(shared(p.pod.node.as_ref().expect("bound"), q.pod.node.as_ref().expect("bound")));
        assert!(std::sync::Arc::ptr_eq(&p.phase, &q.phase));
    }

    #[test]
    fn reads_nodes_pods_and_the_controller_lease() {
        let json = r#"{"apiVersion":"v1","kind":"List","items":[
            {"kind":"Node","metadata":{"name":"n1","labels":{"zone":"a"}},"spec":{"taints":[
                {"key":"k","effect":"NoExecute","timeAdded":"2026-11-22T10:00:00Z"},{"key":"s","value":"v","effect":"NoSchedule"}]}},
            {"kind":"Pod","metadata":{"name":"p","namespace":"web","uid":"u","creationTimestamp":"2026-11-22T09:00:00Z"},
             "spec":{"nodeName":"n1","tolerations":[{"operator":"Exists","tolerationSeconds":5},{"key":"k","effect":"NoExecute"}]},
             "status":{"phase":"Running","conditions":[{"type":"PodScheduled","status":"True","lastTransitionTime":"2026-11-22T09:00:01Z"}]}},
            {"kind":"Service","metadata":{"name":"svc"},"spec":{"taints":"not ours"}},
            {"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"kube-controller-manager","namespace":"kube-system"},
             "spec":{"acquireTime":"2026-11-22T09:50:56.796765Z"}}]}"#;
        let snapshot = read(json.as_bytes()).expect("valid dump");
        assert_eq!(snapshot.nodes.len(), 1);
        assert_eq!(snapshot.nodes[0].taints.len(), 2);
        assert_eq!(snapshot.nodes[0].labels.get("zone").map(String::as_str), Some("a"));
        let pod = &snapshot.pods[0];
        assert_eq!(pod.pod.key, PodKey::new("web", "p"));
        assert_eq!(pod.bound_at, parse_time("2026-11-22T09:00:01Z"), "PodScheduled wins over creation");
        assert_eq!(pod.pod.tolerations[0].effect, None);
        assert_eq!(pod.pod.tolerations[0].seconds, Some(5));
        assert_eq!(snapshot.controller_acquired, parse_time("2026-11-22T09:50:56.796765Z"));
    }

    #[test]
    fn bad_toleration_seconds_names_item_and_path() {
        let json = r#"{"kind":"List","items":[{"kind":"Node","metadata":{"name":"n"}},
            {"kind":"Pod","metadata":{"name":"api-0","namespace":"web"},"spec":{"tolerations":[{},{"tolerationSeconds":"300"}]}}]}"#;
        assert_eq!(
            item_error(json),
            "item 1 (Pod web/api-0): spec.tolerations[1].tolerationSeconds: invalid type: string \"300\", expected an integer"
        );
    }

    #[test]
    fn bad_time_names_item_and_path() {
        let json = r#"{"kind":"List","items":[{"kind":"Node","metadata":{"name":"n"},"spec":{"taints":[{"key":"k","effect":"NoExecute","timeAdded":"yesterday"}]}}]}"#;
        assert_eq!(
            item_error(json),
            "item 0 (Node n): spec.taints[0].timeAdded: \"yesterday\" is not an RFC 3339 time"
        );
    }

    #[test]
    fn wrong_kind_and_non_json_are_named() {
        assert_eq!(
            item_error(r#"{"kind":"Pod","metadata":{"name":"x"}}"#),
            "expected a v1 List as `kubectl get nodes,pods -A -o json` prints it, found kind \"Pod\""
        );
        assert!(item_error("nodes:\n- a").starts_with("not valid JSON: "));
        assert_eq!(
            item_error("[1]"),
            "expected a v1 List as `kubectl get nodes,pods -A -o json` prints it, found a JSON array"
        );
    }

    #[test]
    fn missing_names_are_errors() {
        assert_eq!(
            item_error(r#"{"kind":"List","items":[{"kind":"Pod","metadata":{}}]}"#),
            "item 0 (Pod): metadata.name: missing"
        );
    }
}
