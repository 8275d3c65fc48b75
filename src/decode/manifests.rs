//! Rendered manifests, as `helm template`, `kustomize build` and `kubectl … -o yaml` write them: one
//! or more YAML documents (JSON is read as YAML is), each an object or a `kind: List` of them, read
//! into the engine's pod templates with where each came from: its document, its line, the field path
//! of its pod spec and the line of each toleration; and the PodDisruptionBudgets, each with the line
//! of what it asks (docs/audit.md, "Rendered manifests").
//!
//! Only the fields the rules read are decoded; the rest is skipped unread.

use std::collections::BTreeMap;
use std::io::{self, Read as _};

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::engine::audit::{Apart, Budget, LabelSelector, Requirement, Scaled, SelectorOperator, Template, Wanted};
use crate::engine::model::{Effect, Toleration};

/// The kinds whose pod templates are read.
pub const KINDS: [&str; 7] = ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "Pod"];

/// The kind of the budgets read.
pub const BUDGET: &str = "PodDisruptionBudget";

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

/// One PodDisruptionBudget and where it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct BudgetManifest {
    /// The budget, as written.
    pub budget: Budget,
    /// The document it is in, from 1, as a [`Manifest`]'s.
    pub document: usize,
    /// The line its object starts on.
    pub line: u32,
    /// The field path of what it asks, `spec.minAvailable` or `spec.maxUnavailable`
    /// (`items[2].spec.minAvailable` in a List), and its line; `None` when it writes neither.
    pub wanted_at: Option<(String, u32)>,
}

/// What one file holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Manifests {
    /// The pod templates, in the order written.
    pub manifests: Vec<Manifest>,
    /// The PodDisruptionBudgets, in the order written.
    pub budgets: Vec<BudgetManifest>,
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
    labels: Option<BTreeMap<String, String>>,
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
    min_available: Option<Spanned<IntOrPercent>>,
    max_unavailable: Option<Spanned<IntOrPercent>>,
    selector: Option<RawSelector>,
}

#[derive(Deserialize)]
struct PodTemplate {
    metadata: Option<TemplateMeta>,
    spec: Option<Spanned<Spec>>,
}

#[derive(Deserialize)]
struct TemplateMeta {
    labels: Option<BTreeMap<String, String>>,
}

/// A budget's value as written: a number of pods, or a string, a percent when it reads.
#[derive(Deserialize)]
#[serde(untagged)]
enum IntOrPercent {
    Int(i64),
    String(String),
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawSelector {
    match_labels: Option<BTreeMap<String, String>>,
    match_expressions: Option<Vec<Spanned<RawRequirement>>>,
}

#[derive(Deserialize)]
struct RawRequirement {
    key: Option<String>,
    operator: Option<String>,
    values: Option<Vec<String>>,
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
    max_skew: Option<i64>,
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
        "data did not match any variant of untagged enum IntOrPercent" => {
            "not a number of pods nor a percent (\"50%\")"
        }
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
    if kind == BUDGET {
        return budget(Read { document, line, prefix, metadata, spec }, read);
    }
    if !KINDS.contains(&kind.as_str()) {
        let kind = if kind.is_empty() { "(no kind)".to_owned() } else { kind };
        *read.skipped.entry(kind).or_default() += 1;
        return Ok(());
    }
    let (name, namespace, own_labels, owners) =
        metadata.map(|meta| (meta.name, meta.namespace, meta.labels, meta.owner_references)).unwrap_or_default();
    // A Pod's controller, as `kubectl get pods -o yaml` writes it.
    let controller = owners
        .unwrap_or_default()
        .into_iter()
        .find(|owner| owner.controller == Some(true))
        .map(|owner| owner.kind.unwrap_or_default().into_boxed_str());
    // The pod spec and labels: the object's own (a Pod), its template's, or its job template's
    // template's.
    let (replicas, pod_spec, labels, path) = match kind.as_str() {
        "Pod" => (None, spec, own_labels, "spec"),
        "CronJob" => {
            let job = spec.and_then(|spec| spec.value.job_template).and_then(|job| job.spec);
            let (pod, labels) = pod_template(job.and_then(|job| job.value.template));
            (None, pod, labels, "spec.jobTemplate.spec.template.spec")
        }
        _ => match spec {
            Some(spec) => {
                let replicas = spec.value.replicas.map(|replicas| (replicas.value, line_of(&replicas)));
                let (pod, labels) = pod_template(spec.value.template);
                (replicas, pod, labels, "spec.template.spec")
            }
            None => (None, None, None, "spec.template.spec"),
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
                // `maxSkew` is required, at least 1: the API server refuses a spread without it.
                let max_skew = spread.max_skew.unwrap_or(1).max(1);
                apart_on.push(Apart::Spread { key: key.into_boxed_str(), max_skew });
            }
        }
        let terms = spec.affinity.and_then(|affinity| affinity.pod_anti_affinity);
        let terms = terms.and_then(|anti| anti.required_during_scheduling_ignored_during_execution);
        apart_on.extend(
            terms
                .unwrap_or_default()
                .into_iter()
                .filter_map(|term| term.topology_key.map(|key| Apart::AntiAffinity { key: key.into_boxed_str() })),
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
        labels: boxed(labels),
    };
    let spec_path = format!("{prefix}{path}");
    let replicas_line = replicas.map(|(_, line)| line);
    read.manifests.push(Manifest { template, document, line, spec_path, replicas_line, spec_line, toleration_lines });
    Ok(())
}

/// A pod template's spec and its pods' labels.
type PodParts = (Option<Spanned<Spec>>, Option<BTreeMap<String, String>>);

fn pod_template(template: Option<Box<PodTemplate>>) -> PodParts {
    template.map(|template| (template.spec, template.metadata.and_then(|meta| meta.labels))).unwrap_or_default()
}

fn boxed(labels: Option<BTreeMap<String, String>>) -> BTreeMap<Box<str>, Box<str>> {
    labels.unwrap_or_default().into_iter().map(|(key, value)| (key.into_boxed_str(), value.into_boxed_str())).collect()
}

/// An object of a kind read on its own, with where it is.
struct Read<'a> {
    document: usize,
    line: u32,
    prefix: &'a str,
    metadata: Option<Meta>,
    spec: Option<Spanned<Spec>>,
}

/// A PodDisruptionBudget: what it asks, at its line, and its selector.
fn budget(object: Read<'_>, read: &mut Manifests) -> Result<(), ManifestError> {
    let Read { document, line, prefix, metadata, spec } = object;
    let (name, namespace) = metadata.map(|meta| (meta.name, meta.namespace)).unwrap_or_default();
    let (min, max, selector) = spec
        .map(|spec| (spec.value.min_available, spec.value.max_unavailable, spec.value.selector))
        .unwrap_or_default();
    let (wanted, wanted_at) = match (min, max) {
        (Some(_), Some(max)) => {
            let reason = "maxUnavailable: a PodDisruptionBudget sets minAvailable or maxUnavailable, not both";
            return Err(ManifestError { line: line_of(&max), reason: reason.to_owned() });
        }
        (Some(value), None) => {
            let at = line_of(&value);
            let wanted = Wanted::MinAvailable(scaled(value.value, "minAvailable", at)?);
            (Some(wanted), Some((format!("{prefix}spec.minAvailable"), at)))
        }
        (None, Some(value)) => {
            let at = line_of(&value);
            let wanted = Wanted::MaxUnavailable(scaled(value.value, "maxUnavailable", at)?);
            (Some(wanted), Some((format!("{prefix}spec.maxUnavailable"), at)))
        }
        (None, None) => (None, None),
    };
    let selector = selector.map(label_selector).transpose()?;
    let budget = Budget {
        namespace: namespace.unwrap_or_default().into_boxed_str(),
        name: name.unwrap_or_default().into_boxed_str(),
        wanted,
        selector,
    };
    read.budgets.push(BudgetManifest { budget, document, line, wanted_at });
    Ok(())
}

/// A budget's value, as the API server accepts it: a number of pods from 0, or a percent from 0%
/// to 100% (`ValidatePositiveIntOrPercent`, `IsValidPercent`).
fn scaled(value: IntOrPercent, field: &str, line: u32) -> Result<Scaled, ManifestError> {
    let wrong = |reason: String| ManifestError { line, reason: format!("{field}: {reason}") };
    match value {
        IntOrPercent::Int(count) if count >= 0 => Ok(Scaled::Count(count)),
        IntOrPercent::Int(count) => Err(wrong(format!("{count} is less than 0"))),
        IntOrPercent::String(text) => text
            .strip_suffix('%')
            .filter(|digits| !digits.is_empty() && digits.bytes().all(|byte| byte.is_ascii_digit()))
            .and_then(|digits| digits.parse::<i64>().ok())
            .filter(|percent| *percent <= 100)
            .map(Scaled::Percent)
            .ok_or_else(|| wrong(format!("{text:?} is not a number of pods nor a percent from 0% to 100%"))),
    }
}

fn label_selector(raw: RawSelector) -> Result<LabelSelector, ManifestError> {
    let match_labels = boxed(raw.match_labels);
    let mut match_expressions = Vec::new();
    for expression in raw.match_expressions.unwrap_or_default() {
        let line = line_of(&expression);
        let RawRequirement { key, operator, values } = expression.value;
        let operator = operator.unwrap_or_default();
        let Some(operator) = SelectorOperator::named(&operator) else {
            return Err(ManifestError {
                line,
                reason: format!("operator: {operator:?} is not In, NotIn, Exists or DoesNotExist"),
            });
        };
        let values = values.unwrap_or_default().into_iter().map(String::into_boxed_str).collect();
        match_expressions.push(Requirement { key: key.unwrap_or_default().into_boxed_str(), operator, values });
    }
    Ok(LabelSelector { match_labels, match_expressions })
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
pub fn read_unless_a_dump(mut source: impl io::Read) -> io::Result<Option<Vec<u8>>> {
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
    use crate::engine::audit::HOSTNAME;

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
        // `ScheduleAnyway` keeps nothing apart; a constraint without it is `DoNotSchedule` (its
        // `maxSkew` not written, 1).
        let zone = Apart::Spread { key: "topology.kubernetes.io/zone".into(), max_skew: 1 };
        assert_eq!(web.template.apart_on, vec![zone]);
        let report = &read.manifests[1];
        assert_eq!((report.document, report.line), (3, 31));
        assert_eq!(report.spec_path, "spec.jobTemplate.spec.template.spec");
        assert_eq!(report.template.apart_on, vec![Apart::AntiAffinity { key: "kubernetes.io/hostname".into() }]);
    }

    const BUDGETS: &str = "\
kind: CronJob
metadata: {name: report, labels: {app: not-the-pods}}
spec:
  jobTemplate:
    spec:
      template:
        metadata: {labels: {app: report, version: 2}}
        spec:
          topologySpreadConstraints:
          - {maxSkew: 3, topologyKey: kubernetes.io/hostname}
---
kind: Pod
metadata: {name: debug, labels: {app: debug}}
---
kind: List
items:
- apiVersion: policy/v1
  kind: PodDisruptionBudget
  metadata: {name: web, namespace: shop}
  spec:
    minAvailable: 50%
    selector:
      matchLabels: {app: web}
      matchExpressions:
      - {key: tier, operator: NotIn, values: [batch]}
- kind: PodDisruptionBudget
  metadata: {name: all}
  spec:
    maxUnavailable: 0
    selector: {}
- kind: PodDisruptionBudget
  metadata: {name: none}
";

    /// A budget as a test reads it: name, what it asks, its field path and line, document, line.
    type Said<'a> = (&'a str, Option<Wanted>, Option<(&'a str, u32)>, usize, u32);

    #[test]
    fn budgets_are_read_with_the_line_of_what_they_ask_and_templates_with_their_pods_labels() {
        let read = read_manifests(BUDGETS).expect("reads");
        // Budgets are read, not skipped: each at its item's line, with the line of what it asks.
        assert!(read.skipped.is_empty(), "{:?}", read.skipped);
        // A CronJob's pods are labelled by its job template's template, a Pod by its own labels;
        // `version: 2` is the string "2", as the API server would refuse the number.
        let labels: Vec<Vec<(&str, &str)>> =
            read.manifests.iter().map(|m| m.template.labels.iter().map(|(k, v)| (&**k, &**v)).collect()).collect();
        assert_eq!(labels, vec![vec![("app", "report"), ("version", "2")], vec![("app", "debug")]]);
        assert_eq!(read.manifests[0].template.apart_on, vec![Apart::Spread { key: HOSTNAME.into(), max_skew: 3 }]);
        let said: Vec<Said<'_>> = read
            .budgets
            .iter()
            .map(|b| {
                let at = b.wanted_at.as_ref().map(|(path, line)| (path.as_str(), *line));
                (&*b.budget.name, b.budget.wanted, at, b.document, b.line)
            })
            .collect();
        assert_eq!(
            said,
            vec![
                (
                    "web",
                    Some(Wanted::MinAvailable(Scaled::Percent(50))),
                    Some(("items[0].spec.minAvailable", 21)),
                    3,
                    17
                ),
                (
                    "all",
                    Some(Wanted::MaxUnavailable(Scaled::Count(0))),
                    Some(("items[1].spec.maxUnavailable", 29)),
                    3,
                    26
                ),
                ("none", None, None, 3, 31),
            ]
        );
        let web = read.budgets[0].budget.selector.as_ref().expect("a selector");
        assert_eq!(web.match_labels.get("app").map(|v| &**v), Some("web"));
        let tier = &web.match_expressions[0];
        assert_eq!((&*tier.key, tier.operator, tier.values.len()), ("tier", SelectorOperator::NotIn, 1));
        // `{}` selects every pod; no selector, none.
        assert_eq!(read.budgets[1].budget.selector, Some(LabelSelector::default()));
        assert_eq!(read.budgets[2].budget.selector, None);
    }

    #[test]
    fn a_budget_that_does_not_read_says_its_line() {
        let wrong = |spec: &str| {
            let text = format!("kind: PodDisruptionBudget\nmetadata: {{name: web}}\nspec:\n{spec}");
            read_manifests(&text).expect_err("does not read").to_string()
        };
        assert_eq!(
            wrong("  minAvailable: 150%\n"),
            "line 4: minAvailable: \"150%\" is not a number of pods nor a percent from 0% to 100%"
        );
        assert_eq!(
            wrong("  minAvailable: \"2\"\n"),
            "line 4: minAvailable: \"2\" is not a number of pods nor a percent from 0% to 100%"
        );
        assert_eq!(wrong("  maxUnavailable: -1\n"), "line 4: maxUnavailable: -1 is less than 0");
        assert_eq!(
            wrong("  maxUnavailable: 1.5\n"),
            "line 4: maxUnavailable: not a number of pods nor a percent (\"50%\")"
        );
        assert_eq!(
            wrong("  minAvailable: 1\n  maxUnavailable: 1\n"),
            "line 5: maxUnavailable: a PodDisruptionBudget sets minAvailable or maxUnavailable, not both"
        );
        assert_eq!(
            wrong("  selector:\n    matchExpressions:\n    - {key: app, operator: Gt, values: [\"1\"]}\n"),
            "line 6: operator: \"Gt\" is not In, NotIn, Exists or DoesNotExist"
        );
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
