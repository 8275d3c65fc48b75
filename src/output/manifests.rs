//! `audit`'s words on rendered manifests: each finding with where it was written (file, line, field
//! path), as a table, the `ManifestAudit` document (`-o json|yaml`) or SARIF 2.1.0 (`-o sarif`), as
//! code-scanning tools read it (docs/audit.md, "Rendered manifests").

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;
use serde_json::{Value, json};

use super::human::{count, printable};
use super::view::ColorMode;
use super::wire::API_VERSION;
use crate::engine::audit::{HOSTNAME, Rule, Severity, Template, TemplateFinding};
use crate::engine::lifecycle::Settings;

/// Where a finding was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// The file, as given (`stdin` for `-`).
    pub file: String,
    /// Its document, from 1.
    pub document: usize,
    /// Its line, from 1.
    pub line: u32,
    /// The field path: `spec.template.spec.tolerations[1]`.
    pub path: String,
    /// What the field is when the manifest does not hold it (`added by the API server's admission`).
    pub unwritten: Option<&'static str>,
    /// The chart template its document was rendered from, as helm's `# Source:` comment names it.
    pub source: Option<String>,
}

/// One finding on a template, with the template and where it points.
pub struct Checked<'a> {
    /// The finding.
    pub finding: TemplateFinding,
    /// The template.
    pub template: &'a Template,
    /// Where.
    pub written: Written,
}

/// What an audit of rendered manifests found, as printed.
pub struct ManifestAudit<'a> {
    /// The findings, most severe first.
    pub findings: Vec<Checked<'a>>,
    /// The node lifecycle controller's settings the rules read (its grace period).
    pub settings: Settings,
    /// Where its grace period came from, in words (`given`, `from --profile`).
    pub grace_from: &'static str,
    /// How many pod templates were read, and from how many files.
    pub templates: usize,
    /// How many files.
    pub files: usize,
    /// The objects of other kinds skipped, by kind.
    pub skipped: BTreeMap<String, usize>,
}

/// `shop/Deployment/web`, or `Deployment/web` with no namespace written.
fn subject(template: &Template) -> String {
    let (kind, name) = (&template.kind, printable(&template.name));
    match &*template.namespace {
        "" => format!("{kind}/{name}"),
        namespace => format!("{}/{kind}/{name}", printable(namespace)),
    }
}

/// One sentence: what is wrong.
#[must_use]
pub fn message(checked: &Checked<'_>, settings: &Settings, grace_from: &str) -> String {
    let finding = &checked.finding;
    let taint = finding.taint.unwrap_or_default();
    let pod = checked.template.kind.as_ref() == "Pod";
    let pods = if pod { "the pod" } else { "its pods" };
    match finding.rule {
        Rule::ToleratesNodeLossForever if pod => {
            format!("tolerates {taint} for ever: on a dead node the pod is never deleted, so nothing replaces it")
        }
        Rule::ToleratesNodeLossForever => {
            format!("tolerates {taint} for ever: on a dead node its pods are never deleted, so nothing replaces them")
        }
        Rule::DeletedOnABlip => {
            let s = finding.seconds.unwrap_or_default();
            let grace = settings.flags.node_monitor_grace_period;
            format!(
                "tolerates {taint} for {s}s, less than the controller's {}s grace period ({}): a node silent for {}s \
                 loses {pods}",
                grace.as_secs(),
                grace_from,
                grace.as_secs() + u64::try_from(s.max(0)).unwrap_or_default()
            )
        }
        Rule::BarePodDeletedAtOnce => {
            "has no owner: a NoExecute taint it does not tolerate deletes it at once, and nothing makes it again"
                .to_owned()
        }
        Rule::ToleratesEveryTaint => {
            "operator: Exists with no key tolerates every node taint: no NoExecute taint on its node moves it"
                .to_owned()
        }
        Rule::ReplicasOnOneNode if finding.severity == Severity::High => {
            "one replica: any node's outage takes it, and the workload is down until it is made again elsewhere"
                .to_owned()
        }
        Rule::ReplicasOnOneNode => format!(
            "its {} replicas can all land on one node: no required topologySpreadConstraints or podAntiAffinity \
             on {HOSTNAME} or a zone keeps them apart",
            count(usize::try_from(finding.replicas.unwrap_or_default()).unwrap_or_default())
        ),
        Rule::ReplicasInOneZone => format!(
            "its {} replicas can all land in one zone: no required topologySpreadConstraints or podAntiAffinity \
             on topology.kubernetes.io/zone keeps them apart",
            count(usize::try_from(finding.replicas.unwrap_or_default()).unwrap_or_default())
        ),
        Rule::LosesEveryReplica => String::new(),
    }
}

/// `file:line (document N) path`, who added the field when the manifest does not hold it, and the
/// chart template it came from.
fn location(written: &Written) -> String {
    let added = written.unwritten.map(|what| format!(" ({what})")).unwrap_or_default();
    let from = written.source.as_deref().map(|source| format!(", from {}", printable(source))).unwrap_or_default();
    format!(
        "{}:{} (document {}) {}{added}{from}",
        printable(&written.file),
        written.line,
        written.document,
        written.path
    )
}

fn findings_line(findings: &[Checked<'_>]) -> String {
    let of = |severity| findings.iter().filter(|f| f.finding.severity == severity).count();
    let noun = if findings.len() == 1 { "finding" } else { "findings" };
    format!(
        "{} {noun}: {} high, {} medium, {} low",
        count(findings.len()),
        of(Severity::High),
        of(Severity::Medium),
        of(Severity::Low)
    )
}

/// `4 pod templates read from 2 files; skipped: 1 Service, 2 ConfigMap`.
fn read_line(audit: &ManifestAudit<'_>) -> String {
    let templates = if audit.templates == 1 {
        "1 pod template".to_owned()
    } else {
        format!("{} pod templates", count(audit.templates))
    };
    let files = if audit.files == 1 { "1 file".to_owned() } else { format!("{} files", count(audit.files)) };
    let mut line = format!("{templates} read from {files}");
    if !audit.skipped.is_empty() {
        let skipped: Vec<String> =
            audit.skipped.iter().map(|(kind, n)| format!("{} {}", count(*n), printable(kind))).collect();
        line.push_str(&format!("; skipped: {}", skipped.join(", ")));
    }
    line
}

/// Writes the table: the findings' line, what was read, then each finding (severity, rule, subject,
/// where, message). With `summary`, the two lines only.
pub fn write_text(audit: &ManifestAudit<'_>, summary: bool, color: ColorMode, out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "{}", findings_line(&audit.findings))?;
    writeln!(out, "{}", read_line(audit))?;
    if summary {
        return Ok(());
    }
    for checked in &audit.findings {
        let severity = super::audit::paint(checked.finding.severity.as_str(), checked.finding.severity, color);
        writeln!(out)?;
        writeln!(out, "{severity}  {}  {}", checked.finding.rule.id(), subject(checked.template))?;
        writeln!(out, "  {}", location(&checked.written))?;
        writeln!(out, "  {}", message(checked, &audit.settings, audit.grace_from))?;
    }
    Ok(())
}

/// One finding of the `ManifestAudit` document.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FindingDoc<'a> {
    rule: &'static str,
    severity: &'static str,
    namespace: &'a str,
    kind: &'a str,
    name: &'a str,
    file: &'a str,
    document: usize,
    line: u32,
    path: &'a str,
    unwritten: Option<&'static str>,
    source: Option<&'a str>,
    message: String,
}

/// `-o json|yaml`: `kind: ManifestAudit`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ManifestAuditDoc<'a> {
    api_version: &'static str,
    kind: &'static str,
    templates: usize,
    files: usize,
    skipped: &'a BTreeMap<String, usize>,
    findings: Vec<FindingDoc<'a>>,
}

impl<'a> ManifestAuditDoc<'a> {
    /// The document of `audit`.
    #[must_use]
    pub fn new(audit: &'a ManifestAudit<'a>) -> Self {
        let findings = audit
            .findings
            .iter()
            .map(|checked| FindingDoc {
                rule: checked.finding.rule.id(),
                severity: checked.finding.severity.as_str(),
                namespace: &checked.template.namespace,
                kind: &checked.template.kind,
                name: &checked.template.name,
                file: &checked.written.file,
                document: checked.written.document,
                line: checked.written.line,
                path: &checked.written.path,
                unwritten: checked.written.unwritten,
                source: checked.written.source.as_deref(),
                message: message(checked, &audit.settings, audit.grace_from),
            })
            .collect();
        Self {
            api_version: API_VERSION,
            kind: "ManifestAudit",
            templates: audit.templates,
            files: audit.files,
            skipped: &audit.skipped,
            findings,
        }
    }
}

/// The rules a template is checked with, in the order SARIF's `ruleIndex` counts them, each with
/// what it finds and its fix.
pub const TEMPLATE_RULES: [(Rule, &str, &str); 6] = [
    (
        Rule::ToleratesNodeLossForever,
        "A pod that is not a DaemonSet's tolerates node.kubernetes.io/unreachable or not-ready for ever: on a dead node it is never deleted, so its owner never replaces it.",
        "Set that toleration's tolerationSeconds (300 is the API server's default).",
    ),
    (
        Rule::DeletedOnABlip,
        "A pod that is not a DaemonSet's tolerates unreachable or not-ready for less than the node lifecycle controller's grace period: a network blip a little longer deletes it.",
        "Set tolerationSeconds: 300.",
    ),
    (
        Rule::BarePodDeletedAtOnce,
        "A pod with no owner does not tolerate a NoExecute taint it does not name: it is deleted at once, and nothing makes it again.",
        "Run it under a controller; tolerate the taints it must survive.",
    ),
    (
        Rule::ToleratesEveryTaint,
        "A toleration operator: Exists with no key, for NoExecute or every effect: the pod tolerates every taint, and no maintenance taint moves it.",
        "Name the taints it must tolerate.",
    ),
    (
        Rule::ReplicasOnOneNode,
        "A workload of one replica, or whose replicas no required spread or anti-affinity keeps on different nodes: one node's outage can take them all.",
        "Run 2 replicas or more, spread with topologySpreadConstraints over kubernetes.io/hostname and whenUnsatisfiable: DoNotSchedule.",
    ),
    (
        Rule::ReplicasInOneZone,
        "A workload whose replicas no required spread or anti-affinity keeps in different zones, in a cluster of several: one zone's outage can take them all.",
        "Spread them with topologySpreadConstraints over topology.kubernetes.io/zone and whenUnsatisfiable: DoNotSchedule.",
    ),
];

/// SARIF's level for a severity.
fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low => "note",
    }
}

/// The `ruleIndex` of `rule` in [`TEMPLATE_RULES`].
fn rule_index(rule: Rule) -> usize {
    TEMPLATE_RULES.iter().position(|(r, _, _)| *r == rule).unwrap_or_default()
}

/// A file's URI as SARIF writes it: a relative path with forward slashes, percent-encoded where a
/// URI may not hold the character.
fn uri(file: &str) -> String {
    let mut uri = String::with_capacity(file.len());
    for byte in file.replace('\\', "/").bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => uri.push(char::from(byte)),
            other => uri.push_str(&format!("%{other:02X}")),
        }
    }
    uri.strip_prefix("./").map(str::to_owned).unwrap_or(uri)
}

/// `-o sarif`: the SARIF 2.1.0 log of `audit`, one run of this tool: its rules, and a result per
/// finding at its file and line, its field path the logical location. `version` is this tool's.
#[must_use]
pub fn sarif(audit: &ManifestAudit<'_>, version: &str) -> Value {
    let rules: Vec<Value> = TEMPLATE_RULES
        .iter()
        .map(|(rule, finds, fix)| {
            json!({
                "id": rule.id(),
                "name": rule.id(),
                "shortDescription": {"text": finds},
                "help": {"text": fix},
                "helpUri": "https://github.com/kubectl-taint-evict/kubectl-taint-evict/blob/main/docs/audit.md",
            })
        })
        .collect();
    let results: Vec<Value> = audit
        .findings
        .iter()
        .map(|checked| {
            let written = &checked.written;
            let name = format!("{}: {}", subject(checked.template), written.path);
            // The chart template, where the fix goes: said in the message, which code scanning shows,
            // and kept whole in the properties; the location stays the rendered file's.
            let mut text = message(checked, &audit.settings, audit.grace_from);
            let mut properties = json!({"severity": checked.finding.severity.as_str(), "document": written.document});
            if let Some(source) = &written.source {
                text.push_str(&format!(" (rendered from {source})"));
                properties["source"] = source.as_str().into();
            }
            json!({
                "ruleId": checked.finding.rule.id(),
                "ruleIndex": rule_index(checked.finding.rule),
                "level": level(checked.finding.severity),
                "message": {"text": text},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": uri(&written.file)},
                        "region": {"startLine": written.line.max(1)},
                    },
                    "logicalLocations": [{"fullyQualifiedName": name, "kind": "member"}],
                }],
                "properties": properties,
            })
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "kubectl-taint-evict",
                "version": version,
                "informationUri": "https://github.com/kubectl-taint-evict/kubectl-taint-evict",
                "rules": rules,
            }},
            "results": results,
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uri_is_relative_with_forward_slashes_and_escapes_what_a_uri_cannot_hold() {
        assert_eq!(uri("./deploy/web app.yaml"), "deploy/web%20app.yaml");
        assert_eq!(uri("deploy\\web.yaml"), "deploy/web.yaml");
    }

    #[test]
    fn every_rule_a_template_can_break_has_its_index() {
        for (index, (rule, _, _)) in TEMPLATE_RULES.iter().enumerate() {
            assert_eq!(rule_index(*rule), index);
        }
    }
}
