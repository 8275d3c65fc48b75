//! Rendered manifests, as `helm template`, `kustomize build` and `kubectl … -o yaml` write them: one
//! or more YAML documents (JSON is read as YAML is), each an object or a `kind: List` of them, read
//! into the engine's pod templates with where each came from: its document, its line, the field path
//! of its pod spec and the line of each toleration (docs/audit.md, "Rendered manifests").
//!
//! Only the fields the rules read are decoded; the rest is skipped unread.

use std::collections::BTreeMap;
use std::io::{self, Read};

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::engine::audit::Template;
use crate::engine::model::{Effect, Toleration};

/// The kinds whose pod templates are read.
pub const KINDS: [&str; 7] = ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "Pod"];

/// One pod template and where it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    /// The template, as written.
    pub template: Template,
    /// The document it is in, from 1, counting those that hold an object (empty ones are skipped).
    pub document: usize,
    /// The line its object starts on.
    pub line: u32,
    /// The field path of its pod spec: `spec.template.spec`, `items[2].spec.jobTemplate.spec.template.spec`.
    pub spec_path: String,
    /// The line of `spec.replicas`, when written.
    pub replicas_line: Option<u32>,
    /// The line its pod spec starts on (its object's when the spec is not written).
    pub spec_line: u32,
    /// The line of each toleration written.
    pub toleration_lines: Vec<u32>,
}

/// What one file holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Manifests {
    /// The pod templates, in the order written.
    pub manifests: Vec<Manifest>,
    /// The objects of other kinds, by kind, skipped.
    pub skipped: BTreeMap<String, usize>,
}

/// Why a file is not rendered manifests: where, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct ManifestError {
    /// The line, from 1 (0 when the parser does not say).
    pub line: u32,
    /// What is wrong, in one line.
    pub reason: String,
}

#[derive(Deserialize)]
struct Object {
    kind: Option<String>,
    metadata: Option<Meta>,
    spec: Option<Spanned<Spec>>,
    items: Option<Vec<Spanned<Object>>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Meta {
    name: Option<String>,
    namespace: Option<String>,
    owner_references: Option<Vec<OwnerReference>>,
}

#[derive(Deserialize)]
struct OwnerReference {
    kind: Option<String>,
    controller: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Spec {
    replicas: Option<Spanned<i64>>,
    template: Option<Box<PodTemplate>>,
    job_template: Option<Box<JobTemplate>>,
    tolerations: Option<Vec<Spanned<RawToleration>>>,
    host_network: Option<bool>,
    affinity: Option<Affinity>,
    topology_spread_constraints: Option<Vec<Spread>>,
}

#[derive(Deserialize)]
struct PodTemplate {
    spec: Option<Spanned<Spec>>,
}

#[derive(Deserialize)]
struct JobTemplate {
    spec: Option<Spanned<Spec>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawToleration {
    key: Option<String>,
    operator: Option<String>,
    value: Option<String>,
    effect: Option<String>,
    toleration_seconds: Option<i64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Affinity {
    pod_anti_affinity: Option<AntiAffinity>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AntiAffinity {
    required_during_scheduling_ignored_during_execution: Option<Vec<Term>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Term {
    topology_key: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Spread {
    topology_key: Option<String>,
    when_unsatisfiable: Option<String>,
}

/// A YAML error in one line: what is wrong, without the excerpt the parser draws under it.
fn reason(error: &serde_saphyr::Error) -> ManifestError {
    let text = error.without_snippet().to_string();
    let first = text.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("not valid YAML");
    let what = first.strip_prefix("error: ").unwrap_or(first);
    let line = error.location().map_or(0, |at| at.line());
    let column = error.location().map_or(0, |at| at.column());
    let what = what.strip_suffix(&format!(" at line {line}, column {column}")).unwrap_or(what);
    ManifestError { line: u32::try_from(line).unwrap_or(u32::MAX), reason: what.to_owned() }
}

/// `error` with the key of its line when it is a value of the wrong type (`replicas: not a whole
/// number`), in words rather than Rust's types.
fn named(mut error: ManifestError, text: &str) -> ManifestError {
    let words = match error.reason.as_str() {
        "invalid i64" => "not a whole number",
        "invalid bool" => "not true or false",
        _ => return error,
    };
    let line = text.lines().nth(usize::try_from(error.line).unwrap_or(usize::MAX).wrapping_sub(1)).unwrap_or_default();
    let key = line.trim_start().trim_start_matches("- ").split(':').next().unwrap_or_default().trim();
    error.reason =
        if key.is_empty() || key.contains(['{', '"']) { words.to_owned() } else { format!("{key}: {words}") };
    error
}

/// Reads `text`, a file's rendered manifests.
///
/// # Errors
/// Text that is not YAML, a field of the wrong type, or a Node (a cluster's dump, which is read as
/// JSON), with its line.
pub fn read_manifests(text: &str) -> Result<Manifests, ManifestError> {
    // The parser's budget grows with the text (a chart renders thousands of documents), so that only
    // what grows faster than it does, an alias expanded again and again, is refused.
    let bytes = text.len();
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_documents: bytes.max(1_024),
            max_nodes: bytes.max(250_000),
            max_events: bytes.saturating_mul(2).max(1_000_000),
            max_total_scalar_bytes: bytes.max(64 << 20),
        },
    };
    let documents: Vec<Spanned<Object>> =
        serde_saphyr::from_multiple_with_options(text, options).map_err(|e| named(reason(&e), text))?;
    let mut read = Manifests::default();
    for (index, document) in documents.into_iter().enumerate() {
        object(document, index + 1, "", &mut read)?;
    }
    Ok(read)
}

fn line_of<T>(spanned: &Spanned<T>) -> u32 {
    u32::try_from(spanned.referenced.line()).unwrap_or(u32::MAX)
}

fn object(spanned: Spanned<Object>, document: usize, prefix: &str, read: &mut Manifests) -> Result<(), ManifestError> {
    let line = line_of(&spanned);
    let Object { kind, metadata, spec, items } = spanned.value;
    let kind = kind.unwrap_or_default();
    if let Some(items) = items.filter(|_| kind.is_empty() || kind.ends_with("List")) {
        for (index, item) in items.into_iter().enumerate() {
            object(item, document, &format!("{prefix}items[{index}]."), read)?;
        }
        return Ok(());
    }
    if kind == "Node" {
        return Err(ManifestError {
            line,
            reason: "a Node: a cluster's dump is read as JSON (`kubectl get nodes,pods -A -o json`), not as manifests"
                .to_owned(),
        });
    }
    if !KINDS.contains(&kind.as_str()) {
        let kind = if kind.is_empty() { "(no kind)".to_owned() } else { kind };
        *read.skipped.entry(kind).or_default() += 1;
        return Ok(());
    }
    let (name, namespace, owners) =
        metadata.map(|meta| (meta.name, meta.namespace, meta.owner_references)).unwrap_or_default();
    // A Pod's controller, as `kubectl get pods -o yaml` writes it.
    let controller = owners
        .unwrap_or_default()
        .into_iter()
        .find(|owner| owner.controller == Some(true))
        .map(|owner| owner.kind.unwrap_or_default().into_boxed_str());
    // The pod spec: the object's own (a Pod), its template's, or its job template's template's.
    let (replicas, pod_spec, path) = match kind.as_str() {
        "Pod" => (None, spec, "spec".to_owned()),
        "CronJob" => {
            let job = spec.and_then(|spec| spec.value.job_template).and_then(|job| job.spec);
            let pod = job.and_then(|job| job.value.template).and_then(|template| template.spec);
            (None, pod, "spec.jobTemplate.spec.template.spec".to_owned())
        }
        _ => match spec {
            Some(spec) => {
                let replicas = spec.value.replicas.map(|replicas| (replicas.value, line_of(&replicas)));
                (replicas, spec.value.template.and_then(|template| template.spec), "spec.template.spec".to_owned())
            }
            None => (None, None, "spec.template.spec".to_owned()),
        },
    };
    let spec_line = pod_spec.as_ref().map_or(line, line_of);
    let spec = pod_spec.map(|spec| spec.value);
    let (mut tolerations, mut toleration_lines, mut apart_on, mut host_network) =
        (Vec::new(), Vec::new(), Vec::new(), false);
    if let Some(spec) = spec {
        host_network = spec.host_network.unwrap_or(false);
        for raw in spec.tolerations.unwrap_or_default() {
            toleration_lines.push(line_of(&raw));
            tolerations.push(toleration(raw.value));
        }
        for spread in spec.topology_spread_constraints.unwrap_or_default() {
            if spread.when_unsatisfiable.as_deref().unwrap_or("DoNotSchedule") == "DoNotSchedule"
                && let Some(key) = spread.topology_key
            {
                apart_on.push(key.into_boxed_str());
            }
        }
        let terms = spec.affinity.and_then(|affinity| affinity.pod_anti_affinity);
        let terms = terms.and_then(|anti| anti.required_during_scheduling_ignored_during_execution);
        apart_on.extend(
            terms.unwrap_or_default().into_iter().filter_map(|term| term.topology_key.map(String::into_boxed_str)),
        );
    }
    let template = Template {
        kind: kind.into_boxed_str(),
        namespace: namespace.unwrap_or_default().into_boxed_str(),
        name: name.unwrap_or_default().into_boxed_str(),
        controller,
        replicas: replicas.map(|(replicas, _)| replicas),
        tolerations,
        host_network,
        apart_on,
    };
    let spec_path = format!("{prefix}{path}");
    let replicas_line = replicas.map(|(_, line)| line);
    read.manifests.push(Manifest { template, document, line, spec_path, replicas_line, spec_line, toleration_lines });
    Ok(())
}

fn toleration(raw: RawToleration) -> Toleration {
    Toleration {
        key: raw.key.unwrap_or_default().as_str().into(),
        operator: raw.operator.unwrap_or_default().as_str().into(),
        value: raw.value.unwrap_or_default().into_boxed_str(),
        effect: raw.effect.filter(|effect| !effect.is_empty()).map(|effect| Effect::from(effect.as_str())),
        seconds: raw.toleration_seconds,
    }
}

/// How much of a file is read at a time while it may still be a dump.
const PIECE: u64 = 64 << 10;

/// Whether `bytes` begin, past blanks, as JSON does.
#[must_use]
pub fn begins_as_json(bytes: &[u8]) -> bool {
    matches!(bytes.trim_ascii_start().first(), Some(b'{' | b'['))
}

/// The bytes of `source`, read a piece at a time; `None`, read no further, once they are JSON that
/// names a Node ([`names_a_node`]): a dump, then read apart a group of items at a time, never whole
/// (docs/audit.md, "Cost").
///
/// # Errors
/// A read failure.
pub fn read_unless_a_dump(mut source: impl Read) -> io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    loop {
        // A `"Node"` cut by the last piece's end begins in its last five bytes.
        let from = bytes.len().saturating_sub(b"\"Node\"".len() - 1);
        let read = (&mut source).take(PIECE).read_to_end(&mut bytes)?;
        if begins_as_json(&bytes) && names_a_node_from(&bytes, from) {
            return Ok(None);
        }
        if read == 0 {
            return Ok(Some(bytes));
        }
    }
}

/// Whether `bytes`, JSON, names a Node (`"kind": "Node"`, blanks allowed around the colon): such
/// JSON is a cluster's dump, anything else rendered manifests (docs/audit.md, "Rendered manifests").
#[must_use]
pub fn names_a_node(bytes: &[u8]) -> bool {
    names_a_node_from(bytes, 0)
}

/// [`names_a_node`], of the `"Node"`s that begin at `from` or after: a file read a piece at a time
/// asks it of each piece as it comes, and is read no further once it names one.
#[must_use]
pub fn names_a_node_from(bytes: &[u8], from: usize) -> bool {
    let from = from.min(bytes.len());
    memchr::memmem::find_iter(&bytes[from..], b"\"Node\"").any(|at| {
        let before = bytes[..from + at].trim_ascii_end();
        let Some(before) = before.strip_suffix(b":") else { return false };
        before.trim_ascii_end().ends_with(b"\"kind\"")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const RENDERED: &str = "\
---
# Source: shop/templates/web.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 3
  template:
    spec:
      tolerations:
      - key: example.com/gpu
        operator: Exists
        effect: NoSchedule
      - key: node.kubernetes.io/unreachable
        operator: Exists
        effect: NoExecute
        tolerationSeconds: 10
      topologySpreadConstraints:
      - topologyKey: kubernetes.io/hostname
        whenUnsatisfiable: ScheduleAnyway
      - topologyKey: topology.kubernetes.io/zone
---
---
apiVersion: v1
kind: Service
metadata:
  name: web
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: report
spec:
  jobTemplate:
    spec:
      template:
        spec:
          affinity:
            podAntiAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
              - topologyKey: kubernetes.io/hostname
";

    #[test]
    fn each_template_keeps_its_document_line_field_path_and_toleration_lines_and_other_kinds_are_counted() {
        let read = read_manifests(RENDERED).expect("reads");
        assert_eq!(read.skipped, BTreeMap::from([("Service".to_owned(), 1)]));
        let web = &read.manifests[0];
        assert_eq!((web.document, web.line, web.spec_path.as_str(), web.spec_line), (1, 3, "spec.template.spec", 12));
        assert_eq!((web.toleration_lines.as_slice(), web.replicas_line), (&[13, 16][..], Some(9)));
        assert_eq!((&*web.template.name, &*web.template.namespace, web.template.replicas), ("web", "shop", Some(3)));
        assert_eq!(web.template.tolerations[1].seconds, Some(10));
        // `ScheduleAnyway` keeps nothing apart; a constraint without it is `DoNotSchedule`.
        assert_eq!(web.template.apart_on, vec![Box::from("topology.kubernetes.io/zone")]);
        let report = &read.manifests[1];
        assert_eq!((report.document, report.line), (3, 31));
        assert_eq!(report.spec_path, "spec.jobTemplate.spec.template.spec");
        assert_eq!(report.template.apart_on, vec![Box::from("kubernetes.io/hostname")]);
    }

    #[test]
    fn a_list_in_json_is_read_item_by_item_with_its_index_in_the_path() {
        let json = r#"{"apiVersion": "v1", "kind": "List", "items": [
  {"kind": "ConfigMap", "metadata": {"name": "x"}},
  {"kind": "Pod", "metadata": {"name": "debug"},
   "spec": {"tolerations": [{"operator": "Exists"}]}},
  {"kind": "Pod", "metadata": {"name": "web-1", "ownerReferences": [
    {"kind": "Node", "name": "n1"}, {"kind": "ReplicaSet", "name": "web", "controller": true}]}}
]}"#;
        let read = read_manifests(json).expect("reads");
        let debug = &read.manifests[0];
        assert_eq!(
            (debug.spec_path.as_str(), debug.line, debug.toleration_lines.as_slice()),
            ("items[1].spec", 3, &[4][..])
        );
        assert_eq!(read.skipped, BTreeMap::from([("ConfigMap".to_owned(), 1)]));
        // The controller is the `controller: true` owner.
        let controllers: Vec<Option<&str>> = read.manifests.iter().map(|m| m.template.controller.as_deref()).collect();
        assert_eq!(controllers, vec![None, Some("ReplicaSet")]);
    }

    #[test]
    fn bad_input_says_its_line() {
        let error = read_manifests("kind: Deployment\nspec:\n  replicas: three\n").expect_err("not a number");
        assert_eq!(error.to_string(), "line 3: replicas: not a whole number");
        let error = read_manifests("kind: Pod\n---\nkind: Node\nmetadata: {name: n1}\n").expect_err("a Node");
        assert_eq!(error.line, 3, "{error}");
        let error = read_manifests("kind: [\n").expect_err("not YAML");
        assert!(error.line >= 1, "{error}");
    }

    #[test]
    fn thousands_of_documents_are_read_as_few_are() {
        let document = "---\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  template:\n    spec:\n      tolerations:\n      - {key: a, operator: Exists}\n";
        let read = read_manifests(&document.repeat(5_000)).expect("reads");
        assert_eq!(read.manifests.len(), 5_000);
        assert_eq!(read.manifests[4_999].line, 9 * 4_999 + 2);
    }

    #[test]
    fn json_naming_a_node_is_a_dump() {
        assert!(names_a_node(br#"{"items": [{"kind" : "Node", "metadata": {}}]}"#));
        assert!(!names_a_node(br#"{"kind": "Deployment", "metadata": {"name": "Node"}}"#));
    }

    #[test]
    fn a_dump_is_read_no_further_than_its_first_node_and_anything_else_whole() {
        // A read past the first piece (65,536 bytes) fails: a dump that names a Node in it is not
        // read further.
        let mut first = br#"{"items": [{"kind": "Node"}"#.to_vec();
        first.resize(PIECE as usize, b' ');
        let failing = io::Read::chain(&first[..], FailingRead);
        assert!(read_unless_a_dump(failing).expect("not read past the Node").is_none());
        // `"Node"` cut by the first piece's end (65,536 bytes): found with the second piece.
        let mut cut = br#"{"items": [{"kind":"#.to_vec();
        cut.resize(PIECE as usize - 3, b' ');
        cut.extend_from_slice(br#""Node"}]}"#);
        assert!(read_unless_a_dump(&cut[..]).expect("reads").is_none());
        // JSON that names no Node, and YAML naming one: read whole.
        let json = br#"{"kind": "Deployment", "metadata": {"name": "Node"}}"#;
        assert_eq!(read_unless_a_dump(&json[..]).expect("reads").as_deref(), Some(&json[..]));
        let yaml = b"kind: Node\n";
        assert_eq!(read_unless_a_dump(&yaml[..]).expect("reads").as_deref(), Some(&yaml[..]));
    }

    /// A source whose every read fails.
    struct FailingRead;

    impl io::Read for FailingRead {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::Error::other("read past the first piece"))
        }
    }

    #[test]
    fn a_node_is_looked_for_from_where_the_last_piece_ended_with_the_bytes_before_it_read() {
        // `"Node"` begins at byte 20: looked for from 20, found with the `"kind" :` of the
        // bytes before; from 21, it is no longer looked for (an earlier piece was asked).
        let bytes = br#"{"items": [{"kind" :"Node"}]}"#;
        assert!(names_a_node_from(bytes, 20));
        assert!(!names_a_node_from(bytes, 21));
        // Past the end: nothing.
        assert!(!names_a_node_from(bytes, 100));
    }
}
