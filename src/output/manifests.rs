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
use crate::engine::audit::{Budget, HOSTNAME, Outage, Rule, Scaled, Severity, Template, TemplateFinding, Wanted};
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
    /// The PodDisruptionBudget the finding is about, for [`Rule::BudgetBrokenByAnOutage`]: then
    /// the finding is the budget's, and the template the one whose replicas an outage takes.
    pub budget: Option<&'a Budget>,
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
    /// How many PodDisruptionBudgets were read.
    pub budgets: usize,
    /// How many files.
    pub files: usize,
    /// The objects of other kinds skipped, by kind.
    pub skipped: BTreeMap<String, usize>,
}

/// The kind of a budget.
const BUDGET: &str = "PodDisruptionBudget";

/// The object a finding is about, as `(namespace, kind, name)`: its budget's, else its template's.
fn object<'a>(checked: &'a Checked<'_>) -> (&'a str, &'a str, &'a str) {
    match checked.budget {
        Some(budget) => (&budget.namespace, BUDGET, &budget.name),
        None => (&checked.template.namespace, &checked.template.kind, &checked.template.name),
    }
}

/// `shop/Deployment/web`, or `Deployment/web` with no namespace written.
fn subject(checked: &Checked<'_>) -> String {
    let (namespace, kind, name) = object(checked);
    let name = printable(name);
    match namespace {
        "" => format!("{kind}/{name}"),
        namespace => format!("{}/{kind}/{name}", printable(namespace)),
    }
}

/// A budget's value as written: `2`, `50%`.
fn written_value(value: Scaled) -> String {
    match value {
        Scaled::Count(count) => count.to_string(),
        Scaled::Percent(percent) => format!("{percent}%"),
    }
}

/// What an outage does to a budget on `checked`'s template, in one sentence.
fn breach(checked: &Checked<'_>) -> String {
    let finding = &checked.finding;
    let Some(breach) = finding.budget else { return String::new() };
    let replicas = finding.replicas.unwrap_or_default();
    let template = format!("{}/{}", checked.template.kind, printable(&checked.template.name));
    let outage = match breach.outage {
        Outage::Zone => "a zone's outage",
        Outage::Node => "one node's outage",
    };
    let taken = match (replicas, breach.taken) {
        (1, _) => format!("the one replica of {template}"),
        (2, 2) => format!("both replicas of {template}"),
        (all, taken) if taken >= all => format!("all {all} replicas of {template}"),
        (all, taken) => format!("{taken} of the {all} replicas of {template}"),
    };
    let needed = breach.needed;
    let every = if needed >= replicas { " (every replica)" } else { "" };
    let asks = match breach.wanted {
        Wanted::MinAvailable(Scaled::Count(count)) => format!("minAvailable {count}{every}"),
        Wanted::MinAvailable(percent) => {
            format!("minAvailable {} ({needed} of {replicas}, rounded up)", written_value(percent))
        }
        Wanted::MaxUnavailable(Scaled::Count(count)) => {
            format!("the {needed} healthy maxUnavailable {count} requires{every}")
        }
        Wanted::MaxUnavailable(percent) => format!(
            "the {needed} healthy maxUnavailable {} requires ({} of {replicas} may go, rounded up)",
            written_value(percent),
            replicas - needed
        ),
    };
    format!(
        "{outage} can take {taken} (taint eviction does not ask the budget), leaving {}, below {asks}: the budget \
         is broken and every voluntary eviction (a drain) is refused until they run again",
        replicas - breach.taken
    )
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
        Rule::BudgetBrokenByAnOutage => breach(checked),
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

/// `4 pod templates and 1 PodDisruptionBudget read from 2 files; skipped: 1 Service, 2 ConfigMap`.
fn read_line(audit: &ManifestAudit<'_>) -> String {
    let templates = if audit.templates == 1 {
        "1 pod template".to_owned()
    } else {
        format!("{} pod templates", count(audit.templates))
    };
    let budgets = match audit.budgets {
        0 => String::new(),
        1 => format!(" and 1 {BUDGET}"),
        n => format!(" and {} {BUDGET}s", count(n)),
    };
    let files = if audit.files == 1 { "1 file".to_owned() } else { format!("{} files", count(audit.files)) };
    let mut line = format!("{templates}{budgets} read from {files}");
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
        writeln!(out, "{severity}  {}  {}", checked.finding.rule.id(), subject(checked))?;
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
    budgets: usize,
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
            .map(|checked| {
                let (namespace, kind, name) = object(checked);
                FindingDoc {
                    rule: checked.finding.rule.id(),
                    severity: checked.finding.severity.as_str(),
                    namespace,
                    kind,
                    name,
                    file: &checked.written.file,
                    document: checked.written.document,
                    line: checked.written.line,
                    path: &checked.written.path,
                    unwritten: checked.written.unwritten,
                    source: checked.written.source.as_deref(),
                    message: message(checked, &audit.settings, audit.grace_from),
                }
            })
            .collect();
        Self {
            api_version: API_VERSION,
            kind: "ManifestAudit",
            templates: audit.templates,
            budgets: audit.budgets,
            files: audit.files,
            skipped: &audit.skipped,
            findings,
        }
    }
}

/// The rules a template is checked with, in the order SARIF's `ruleIndex` counts them, each with
/// what it finds and its fix.
pub const TEMPLATE_RULES: [(Rule, &str, &str); 7] = [
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
    (
        Rule::BudgetBrokenByAnOutage,
        "A PodDisruptionBudget that one zone's outage (one node's, when the zones are not known) leaves with fewer healthy replicas than it needs: taint eviction does not ask it, and until they run again every voluntary eviction of its pods, a drain's, is refused.",
        "Spread the replicas so that one zone (or node) holds no more than the budget can lose: topologySpreadConstraints over topology.kubernetes.io/zone with whenUnsatisfiable: DoNotSchedule, more replicas, or a budget that asks less.",
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
            let name = format!("{}: {}", subject(checked), written.path);
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
