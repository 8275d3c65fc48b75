//! `audit`'s words: each finding with its message and a fix an operator can paste, then per outage
//! the owners left with none (docs/audit.md); and the `EvictionAudit` document for `-o json|yaml`.

use std::io::{self, Write};

use owo_colors::OwoColorize;
use serde::{Serialize, Serializer};

use super::human::{count, printable, rfc3339, short_time, to_second};
use super::settings::{SettingsDoc, from_words};
use super::view::ColorMode;
use super::wire::{API_VERSION, HeldDoc, OwnerDoc, PredictedTaintDoc};
use super::yaml::yaml_scalar;
use crate::engine::audit::{Down, Finding, Findings, Outcome, Rule, Scenario, Severity};
use crate::engine::lifecycle::{NOT_READY, Settings, UNREACHABLE};
use crate::engine::plan::OwnerLoss;
use crate::engine::time::Timestamp;
use crate::engine::workloads::{Label, Owner, Workloads};

/// What an audit found, as printed.
pub struct Audit<'a> {
    /// When the kubelets stop, in every scenario.
    pub now: Timestamp,
    /// The node lifecycle controller's settings the outages were predicted with, and where each
    /// came from.
    pub settings: Settings,
    /// The findings, most severe first.
    pub findings: &'a Findings<'a>,
    /// The outages.
    pub scenarios: &'a [Scenario<'a>],
    /// What the input says of the owners: their own controllers, the labels their pods share.
    pub workloads: &'a Workloads,
}

/// `zone za` or `node n1`.
fn outage(down: &Down) -> String {
    match down {
        Down::Zone(zone) if zone.name().is_empty() => "the nodes without a zone".to_owned(),
        Down::Zone(zone) => format!("zone {}", zone.name()),
        Down::Node(node) => format!("node {node}"),
    }
}

/// The finding's subject: its owner's kind and name, or `Pod` and the pod's name.
fn subject<'a>(finding: &Finding<'a>) -> (&'a str, &'a str) {
    match (finding.owner, finding.pods.first()) {
        (Some(owner), _) => (owner.kind(), owner.name()),
        (None, Some(pod)) => ("Pod", pod.pod.key.name()),
        (None, None) => ("Pod", ""),
    }
}

/// One sentence: what is wrong.
#[must_use]
pub fn message(finding: &Finding<'_>, settings: &Settings, now: Timestamp) -> String {
    let pods = finding.pods.len();
    let taint = finding.taint.unwrap_or_default();
    let index = finding.toleration.unwrap_or_default();
    match finding.rule {
        Rule::LosesEveryReplica => {
            let down = finding.scenario.map(outage).unwrap_or_default();
            let replicas = match pods {
                1 => "its one running replica".to_owned(),
                2 => "both running replicas".to_owned(),
                n => format!("all {} running replicas", count(n)),
            };
            match finding.at {
                Some(at) => {
                    format!("{down} down: {replicas} deleted, the last by {}", short_time(to_second(at, true), now))
                }
                None => format!(
                    "{down} down: {replicas} deleted once the controller taints their nodes (it may hold a zone's taints)"
                ),
            }
        }
        Rule::ToleratesNodeLossForever => format!(
            "tolerates {taint} for ever (tolerations[{index}]): on a dead node it is never deleted, so nothing replaces it"
        ),
        Rule::DeletedOnABlip => {
            let s = finding.seconds.unwrap_or_default();
            let grace = settings.flags.node_monitor_grace_period;
            format!(
                "tolerates {taint} for {s}s (tolerations[{index}]), less than the controller's {}s grace period ({}): \
                 a node silent for {}s loses it",
                grace.as_secs(),
                from_words(settings.sources.node_monitor_grace_period),
                grace.as_secs() + u64::try_from(s.max(0)).unwrap_or_default()
            )
        }
        Rule::BarePodDeletedAtOnce => {
            "has no owner: a NoExecute taint it does not tolerate deletes it at once, and nothing makes it again"
                .to_owned()
        }
        Rule::ToleratesEveryTaint => format!(
            "tolerations[{index}] (operator: Exists, no key) tolerates every node taint: no NoExecute taint on \
             its node moves it"
        ),
        Rule::ReplicasOnOneNode | Rule::ReplicasInOneZone => {
            let (what, place) = match finding.rule {
                Rule::ReplicasOnOneNode => ("node", finding.place.unwrap_or_default().to_owned()),
                _ => ("zone", finding.place.map_or_else(String::new, zone_name)),
            };
            let replicas = match pods {
                1 => "its one running replica runs".to_owned(),
                2 => "both running replicas run".to_owned(),
                n => format!("all {} running replicas run", count(n)),
            };
            format!(
                "{replicas} on {what} {place} (from placement, no outage predicted says so): its loss takes them all"
            )
        }
        // A rule of rendered manifests: a cluster's audit does not read budgets.
        Rule::BudgetBrokenByAnOutage => String::new(),
    }
}

/// A zone's name as the text says it: `""` is the nodes without a zone.
fn zone_name(zone: &str) -> String {
    if zone.is_empty() { "(the nodes without a zone)".to_owned() } else { zone.to_owned() }
}

/// The two condition taints' tolerations, as YAML to paste: for 300 s (what `DefaultTolerationSeconds`
/// gives a pod), or for ever (what the DaemonSet controller gives its pods).
fn condition_tolerations(forever: bool) -> String {
    let seconds = if forever { "" } else { "  tolerationSeconds: 300\n" };
    [NOT_READY, UNREACHABLE]
        .iter()
        .map(|key| format!("- key: {key}\n  operator: Exists\n  effect: NoExecute\n{seconds}"))
        .collect()
}

/// Where to make the change, for a finding about `kind` `name` in `namespace` (`owner`, its
/// controller, when it has one): in the pod template of the object its controller's own controller
/// makes it from (a ReplicaSet's Deployment, a Job's CronJob) when the input says which, else its own.
/// Every name escaped as the table escapes names: the fix is written line by line, and a raw newline
/// in a name would split its line.
fn template(kind: &str, name: &str, namespace: &str, owner: Option<&Owner>, workloads: &Workloads) -> String {
    let (kind, name) = (printable(kind), printable(name));
    if kind == "Pod" {
        return format!("in pod {name}'s spec (made again)");
    }
    let made_by = owner.and_then(|owner| workloads.controller(namespace, owner));
    match (&*kind, made_by) {
        (_, Some(Some(controller))) => {
            let (by_kind, by_name) = (printable(controller.kind()), printable(controller.name()));
            let within = if by_kind == "CronJob" { " (spec.jobTemplate.spec.template)" } else { "" };
            format!("in the pod template of {by_kind} {by_name}{within}, which makes {kind} {name}")
        }
        (_, Some(None)) => format!("in the pod template of {kind} {name} (no object owns it)"),
        // Its object was not read (a dump without ReplicaSets; not allowed to list them): a name's
        // hash suffix proves nothing, so the Deployment is named only as a possibility.
        ("ReplicaSet", None) => {
            format!("in the pod template of ReplicaSet {name}'s Deployment, if it has one (else its own)")
        }
        (_, None) => format!("in the pod template of {kind} {name}"),
    }
}

/// The `labelSelector` of a spread constraint over `labels` (the pods' own): an empty selector
/// matches every pod of the namespace, so without labels it names a placeholder the API server
/// refuses until it is replaced.
fn label_selector(labels: Option<&[Label]>) -> String {
    match labels {
        Some(labels) if !labels.is_empty() => {
            let lines: String = labels
                .iter()
                .map(|(key, value)| format!("      {}: {}\n", yaml_scalar(key), yaml_scalar(value)))
                .collect();
            format!("  labelSelector:\n    matchLabels:  # the labels its pods share\n{lines}")
        }
        _ => "  labelSelector:\n    matchLabels:\n      <key>: <value>  # its pods share no label of their own: \
              add one to the pod template, and name it here\n"
            .to_owned(),
    }
}

/// What to change, to paste: a YAML snippet for the pod template, with a line that says where.
/// `workloads` says what the input holds of the owners: their own controllers, their pods' labels.
#[must_use]
pub fn fix(finding: &Finding<'_>, workloads: &Workloads) -> String {
    let (kind, name) = subject(finding);
    let template = template(kind, name, finding.namespace, finding.owner, workloads);
    match finding.rule {
        Rule::LosesEveryReplica | Rule::ReplicasOnOneNode | Rule::ReplicasInOneZone => {
            let key = match (finding.rule, finding.scenario) {
                (Rule::ReplicasOnOneNode, _) | (_, Some(Down::Node(_))) => "kubernetes.io/hostname",
                _ => "topology.kubernetes.io/zone",
            };
            let replicas = if finding.pods.len() < 2 { "run 2 replicas or more and " } else { "" };
            let labels = finding.owner.and_then(|owner| workloads.labels(finding.namespace, owner));
            format!(
                "{replicas}spread them, {template}:\ntopologySpreadConstraints:\n- maxSkew: 1\n  topologyKey: {key}\n  \
                 whenUnsatisfiable: DoNotSchedule\n{}",
                label_selector(labels.as_deref())
            )
        }
        Rule::ToleratesNodeLossForever | Rule::DeletedOnABlip => {
            let taint = finding.taint.unwrap_or(NOT_READY);
            let index = finding.toleration.unwrap_or_default();
            format!(
                "set tolerations[{index}]'s tolerationSeconds (300 is the default), {template}:\n- key: {taint}\n  \
                 operator: Exists\n  effect: NoExecute\n  tolerationSeconds: 300\n"
            )
        }
        Rule::BarePodDeletedAtOnce => format!(
            "run it under a controller (a Deployment, a StatefulSet, a Job) so that it is made again; until then, \
             tolerate the taints it must survive, {template}:\n{}",
            condition_tolerations(false)
        ),
        Rule::ToleratesEveryTaint => {
            let index = finding.toleration.unwrap_or_default();
            format!(
                "replace tolerations[{index}] with the taints it must tolerate, {template}:\n{}",
                condition_tolerations(kind == "DaemonSet")
            )
        }
        Rule::BudgetBrokenByAnOutage => String::new(),
    }
}

/// A severity coloured as the table colours it.
pub(super) fn paint(text: &str, severity: Severity, color: ColorMode) -> String {
    match (color, severity) {
        (ColorMode::Plain, _) => text.to_owned(),
        (ColorMode::Color, Severity::High) => text.red().bold().to_string(),
        (ColorMode::Color, Severity::Medium) => text.yellow().to_string(),
        (ColorMode::Color, Severity::Low) => text.to_string(),
    }
}

/// `1 zone`, `2 zones`.
fn plural(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{} {noun}s", count(n)) }
}

/// How many findings of each severity: `3 findings: 1 high, 2 medium, 0 low`.
fn findings_line(findings: &Findings<'_>) -> String {
    let of = |severity| findings.iter().filter(|f| f.severity == severity).count();
    let noun = if findings.len() == 1 { "finding" } else { "findings" };
    format!(
        "{} {noun}: {} high, {} medium, {} low",
        count(findings.len()),
        of(Severity::High),
        of(Severity::Medium),
        of(Severity::Low)
    )
}

/// One line per outage: what the controller does to its nodes, and the owners left with none.
fn scenario_line(scenario: &Scenario<'_>, now: Timestamp) -> String {
    let down = outage(&scenario.down);
    let Outcome::Predicted { owners, nodes } = &scenario.outcome;
    let held = nodes.iter().filter(|node| node.held.is_some()).count();
    let tainted = nodes.iter().filter(|node| node.taint.is_some()).count();
    let mut line = format!("{down}: {} of {} to be tainted", count(tainted), count(nodes.len()));
    if held > 0 {
        let reason =
            nodes.iter().find_map(|node| node.held.as_ref()).map(|held| held.reason.as_str()).unwrap_or_default();
        line.push_str(&format!(", {} held ({reason})", count(held)));
    }
    let gone: Vec<String> = owners
        .iter()
        .filter(|owner| owner.none_left())
        .map(|owner| {
            let by = owner.last.map_or_else(|| "open".to_owned(), |at| short_time(to_second(at, true), now));
            format!("{}/{}/{} by {by}", owner.namespace, owner.owner.kind(), owner.owner.name())
        })
        .collect();
    match gone.len() {
        0 => line.push_str("; no owner left with none"),
        1 => line.push_str(&format!("; left with none: {}", gone[0])),
        n => line.push_str(&format!("; {} left with none: {}", count(n), gone.join(", "))),
    }
    line
}

/// Writes the table: the findings' line, each finding (severity, rule, subject, message, fix), then a
/// line per outage. With `summary`, the findings' line and the outages' lines only.
pub fn write_text(audit: &Audit<'_>, summary: bool, color: ColorMode, out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "{}", findings_line(audit.findings))?;
    if !summary {
        for finding in audit.findings.iter() {
            let (kind, name) = subject(&finding);
            let severity = paint(finding.severity.as_str(), finding.severity, color);
            let pods = match finding.pods.len() {
                0 | 1 if kind == "Pod" => String::new(),
                1 => " (1 pod)".to_owned(),
                n => format!(" ({} pods)", count(n)),
            };
            writeln!(out)?;
            let head = match finding.namespace {
                "" => format!("{kind}/{name}{pods}"),
                namespace => format!("{namespace}/{kind}/{name}{pods}"),
            };
            writeln!(out, "{severity}  {}  {}", finding.rule.id(), printable(&head))?;
            writeln!(out, "  {}", printable(&message(&finding, &audit.settings, audit.now)))?;
            for line in fix(&finding, audit.workloads).lines() {
                writeln!(out, "  | {}", printable(line))?;
            }
        }
    }
    writeln!(out)?;
    let (zones, nodes) = audit.scenarios.iter().partition::<Vec<_>, _>(|s| matches!(s.down, Down::Zone(_)));
    writeln!(
        out,
        "{} predicted ({}, {}), their kubelets stopping at {}:",
        plural(audit.scenarios.len(), "outage"),
        plural(zones.len(), "zone"),
        plural(nodes.len(), "node"),
        short_time(to_second(audit.now, false), audit.now)
    )?;
    for scenario in audit.scenarios {
        writeln!(out, "{}", printable(&scenario_line(scenario, audit.now)))?;
    }
    Ok(())
}

/// `kind: EvictionAudit`. Each scenario's and finding's document is made as it is written: an audit
/// of thousands of nodes has hundreds of thousands of findings.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvictionAudit<'a> {
    api_version: &'static str,
    kind: &'static str,
    now: String,
    scenarios: ScenarioDocs<'a>,
    findings: FindingDocs<'a>,
    controller_settings: SettingsDoc,
}

/// `{zone: NAME}` or `{node: NAME}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
enum DownDoc<'a> {
    Zone(&'a str),
    Node(&'a str),
}

impl<'a> From<&'a Down> for DownDoc<'a> {
    fn from(down: &'a Down) -> Self {
        match down {
            Down::Zone(zone) => Self::Zone(zone.name()),
            Down::Node(node) => Self::Node(node.as_str()),
        }
    }
}

/// `scenarios`: each one's document made as it is written.
struct ScenarioDocs<'a>(&'a [Scenario<'a>]);

impl Serialize for ScenarioDocs<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(ScenarioDoc::from))
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ScenarioDoc<'a> {
    down: DownDoc<'a>,
    /// Always `true`: every outage is predicted, past 200 nodes silent at once by each zone's drain
    /// (docs/node-lifecycle.md, "At scale"); kept for the documents' readers.
    predicted: bool,
    nodes: Vec<ScenarioNodeDoc<'a>>,
    owners: OwnerDocs<'a>,
}

impl<'a> From<&'a Scenario<'a>> for ScenarioDoc<'a> {
    fn from(scenario: &'a Scenario<'a>) -> Self {
        let Outcome::Predicted { owners, nodes } = &scenario.outcome;
        let nodes = nodes
            .iter()
            .map(|node| ScenarioNodeDoc {
                name: node.name.as_str(),
                predicted_taint: node.taint.as_ref().map(PredictedTaintDoc::from),
                held: node.held.as_ref().map(HeldDoc::from),
            })
            .collect();
        Self { down: DownDoc::from(&scenario.down), predicted: true, nodes, owners: OwnerDocs(owners) }
    }
}

/// A scenario's `owners`: each one's document made as it is written (a zone's outage can take an
/// owner per pod of the zone).
struct OwnerDocs<'a>(&'a [OwnerLoss<'a>]);

impl Serialize for OwnerDocs<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(OwnerDoc::from))
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ScenarioNodeDoc<'a> {
    name: &'a str,
    predicted_taint: Option<PredictedTaintDoc>,
    held: Option<HeldDoc>,
}

/// `findings`: each one's document, its message and fix written out, made as it is written.
struct FindingDocs<'a>(&'a Audit<'a>);

impl Serialize for FindingDocs<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let audit = self.0;
        serializer.collect_seq(audit.findings.iter().map(|finding| FindingDoc::new(finding, audit)))
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FindingDoc<'a> {
    rule: &'static str,
    severity: &'static str,
    namespace: &'a str,
    kind: &'a str,
    name: &'a str,
    pods: Vec<&'a str>,
    scenario: Option<DownDoc<'a>>,
    at: Option<String>,
    message: String,
    fix: String,
}

impl<'a> FindingDoc<'a> {
    fn new(finding: Finding<'a>, audit: &Audit<'_>) -> Self {
        let (kind, name) = subject(&finding);
        Self {
            rule: finding.rule.id(),
            severity: finding.severity.as_str(),
            namespace: finding.namespace,
            kind,
            name,
            pods: finding.pods.iter().map(|pod| pod.pod.key.name()).collect(),
            scenario: finding.scenario.map(DownDoc::from),
            at: finding.at.map(rfc3339),
            message: message(&finding, &audit.settings, audit.now),
            fix: fix(&finding, audit.workloads),
        }
    }
}

impl<'a> EvictionAudit<'a> {
    /// The document of `audit`.
    #[must_use]
    pub fn new(audit: &'a Audit<'a>) -> Self {
        Self {
            api_version: API_VERSION,
            kind: "EvictionAudit",
            now: rfc3339(audit.now),
            scenarios: ScenarioDocs(audit.scenarios),
            findings: FindingDocs(audit),
            controller_settings: SettingsDoc::from(&audit.settings),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::lifecycle::{Basis, ConditionTaint, NodeForecast, PredictedTaint, ZoneKey};

    #[test]
    fn an_outage_line_counts_its_nodes_with_separators_alike() {
        let now = Timestamp::from_unix_seconds(1_795_341_600);
        let node = |i: usize, tainted: bool| NodeForecast {
            name: format!("za-{i}").as_str().into(),
            zone: ZoneKey::new("r1", "za"),
            ready: None,
            last_heartbeat: None,
            taint: tainted.then_some(PredictedTaint {
                key: ConditionTaint::Unreachable,
                earliest: now,
                latest: Some(now),
                basis: Basis::LostHeartbeat,
                queued_with: 0,
                drained: false,
            }),
            held: None,
        };
        let nodes = (0..1_500).map(|i| node(i, i < 1_200)).collect();
        let scenario = Scenario {
            down: Down::Zone(ZoneKey::new("r1", "za")),
            outcome: Outcome::Predicted { owners: Vec::new(), nodes },
        };
        assert_eq!(scenario_line(&scenario, now), "zone za: 1,200 of 1,500 to be tainted; no owner left with none");
    }
}
