//! `plan` and `explain`: the input prepared (`prepare`), the nodes asked for planned, then each its
//! output.

use std::collections::HashSet;
use std::io::{BufWriter, Write};

use crate::engine::explain::explain as match_taints;
use crate::engine::model::{NodeName, Taint};
use crate::engine::plan::{Assumed, Plan, device_affected_nodes};
use crate::engine::snapshot::Snapshot;
use crate::engine::tolerate::{Tolerance, tolerance};
use crate::error::{Error, Result};
use crate::output::explain::{BeforeTaint, Explanation, render_json, render_text, render_yaml};
use crate::output::template::{Printer, Rows, Template};
use crate::output::{Live, OutputFormat, plan_document, render_plan_settings};
use crate::selector::Selector;

use super::prepare::input::{Source, Want, pod_hint};
use super::prepare::prepared::Prepared;
use crate::cluster::NodeSelection;
use crate::config::{ExplainConfig, ExplainOutput, PlanConfig};

/// The nodes to report, as indices into the snapshot, in output order.
/// Without NODE or -l: the nodes with a NoExecute taint, and those `shown` besides (the node
/// lifecycle controller is expected to taint them, or holds their taint back; a pod's DRA device is
/// tainted).
fn select(
    snapshot: &Snapshot,
    names: &[String],
    selector: Option<&Selector>,
    shown: &HashSet<&str>,
    origin: &str,
) -> Result<Vec<usize>> {
    if !names.is_empty() {
        return names
            .iter()
            .map(|name| {
                snapshot
                    .nodes
                    .iter()
                    .position(|n| n.name.as_str() == name)
                    .ok_or_else(|| Error::NodeNotFound { node: name.clone(), input: origin.to_owned() })
            })
            .collect();
    }
    let mut selected: Vec<usize> = (0..snapshot.nodes.len())
        .filter(|&i| {
            let node = &snapshot.nodes[i];
            match selector {
                Some(selector) => selector.matches(&node.labels),
                None => node.taints.iter().any(|t| t.is_no_execute()) || shown.contains(node.name.as_str()),
            }
        })
        .collect();
    selected.sort_by(|&a, &b| snapshot.nodes[a].name.cmp(&snapshot.nodes[b].name));
    selected.dedup_by(|a, b| snapshot.nodes[*a].name == snapshot.nodes[*b].name);
    Ok(selected)
}

/// What the what-if flags assumed (`down`: the nodes going down); `None` without them.
fn assumed(input: &crate::config::Input, down: &[String]) -> Option<Assumed> {
    let down: Vec<NodeName> = down.iter().map(|name| name.as_str().into()).collect();
    let down_selector = input.down_selector.as_ref().map(|selector| selector.as_str().to_owned());
    let changes = input.what_if.clone();
    (!changes.is_empty() || !down.is_empty()).then_some(Assumed { changes, down, down_selector })
}

/// What kubectl says when `-n` leaves nothing to list (`No resources found in NAMESPACE namespace.`),
/// for the forms a person reads (the table, `-o name`): `-n` given, nodes shown, none of their pods in
/// it. JSON and YAML stay documents.
fn no_pods_in_namespace(plan: &Plan<'_>, args: &PlanConfig) -> Option<String> {
    use crate::output::OutputFormat;
    let namespace = args.namespace.as_deref()?;
    let read = matches!(args.format, OutputFormat::Table | OutputFormat::Wide | OutputFormat::Name);
    let none = !plan.nodes.is_empty() && plan.nodes.iter().all(|node| node.pods.is_empty());
    (read && none).then(|| format!("No pods found in {namespace} namespace on the nodes planned."))
}

/// `kubectl taint-evict plan`.
pub fn plan(args: &PlanConfig) -> Result<()> {
    let what_if = &args.input.what_if;
    let selection = match (&args.selector, args.nodes.is_empty()) {
        (Some(selector), _) => NodeSelection::Labels(selector.clone()),
        (None, false) => NodeSelection::Named(args.nodes.clone()),
        (None, true) => NodeSelection::Tainted,
    };
    let (mut prepared, _) = Prepared::load(&args.input, &args.lifecycle, Want::Nodes(&selection))?;
    let lacks = prepared.take_lacks();
    let (snapshot, origin) = (&prepared.loaded.snapshot, &prepared.loaded.origin);
    let mut shown = prepared.foreseen();
    if let Some(taints) = prepared.device_taints() {
        shown.extend(device_affected_nodes(snapshot, &taints).into_iter().map(|node| node.as_str()));
    }
    let selected = select(snapshot, &args.nodes, args.selector.as_ref(), &shown, origin)?;
    if let (Some(selector), true) = (&args.selector, selected.is_empty()) {
        let selector = selector.as_str().to_owned();
        return Err(Error::NoNodeMatched { flag: "-l", selector, input: origin.clone() });
    }
    // A tainted node without pods is a real answer, but a dump without a single pod is one written
    // without `pods`: "No pods." would be a false all-clear.
    if prepared.from_dump && !selected.is_empty() && snapshot.pods.is_empty() {
        return Err(Error::IncompleteDump { path: origin.clone(), kind: "Pod" });
    }
    let assumed = assumed(&args.input, &prepared.down);
    let plan = prepared.build(&selected, what_if, assumed.as_ref(), args.namespace.as_deref());
    let content_type = prepared.loaded.content_type;
    let live = prepared.loaded.read.map(|read| Live { read, content_type, clock: prepared.clock });
    // The settings the prediction used, with the prediction shown (docs/output.md).
    let settings = plan.zones.is_some().then_some(&prepared.settings);
    let mut out = BufWriter::new(std::io::stdout().lock());
    match &args.format {
        OutputFormat::Template(template) => {
            let document = plan_document(&plan, &args.view, live.as_ref(), settings)?;
            out.write_all(&through(template, args.view.headers, &document, Rows::PlanPods)?)?;
        }
        format => render_plan_settings(&plan, format.clone(), &args.view, live.as_ref(), settings, &mut out)?,
    }
    out.flush()?;
    if let Some(line) = no_pods_in_namespace(&plan, args) {
        eprintln!("{line}");
    }
    for line in lacks {
        eprintln!("{line}");
    }
    Ok(())
}

/// `kubectl taint-evict explain`.
pub fn explain(args: &ExplainConfig) -> Result<()> {
    let want = Want::Pod(args.namespace.as_deref(), &args.pod);
    let (mut prepared, namespace) = Prepared::load(&args.input, &args.lifecycle, want)?;
    let lacks = prepared.take_lacks();
    let (snapshot, origin) = (&prepared.loaded.snapshot, &prepared.loaded.origin);
    let pod_name = format!("{namespace}/{}", args.pod);
    let pod =
        snapshot.pods.iter().find(|p| p.pod.key.namespace() == namespace && p.pod.key.name() == args.pod).ok_or_else(
            || {
                let mut elsewhere: Vec<String> = snapshot
                    .pods
                    .iter()
                    .filter(|p| p.pod.key.name() == args.pod)
                    .map(|p| p.pod.key.namespace().to_owned())
                    .collect();
                elsewhere.sort();
                elsewhere.dedup();
                let source = if args.namespace.is_some() { Source::Flag } else { Source::Dump };
                let error = Error::PodNotFound { pod: pod_name.clone(), input: origin.clone() };
                Error::Hinted { error: Box::new(error), hint: pod_hint(&args.pod, &namespace, source, &elsewhere) }
            },
        )?;
    let node_name = pod.pod.node.clone().ok_or_else(|| Error::PodUnbound(pod_name.clone()))?;
    let node = snapshot
        .nodes
        .iter()
        .position(|n| n.name == node_name)
        .ok_or_else(|| Error::NodeNotFound { node: node_name.to_string(), input: origin.clone() })?;
    let plan = prepared.build(&[node], &args.input.what_if, None, None);
    let node_plan = &plan.nodes[0];
    let pod_plan =
        node_plan.pods.iter().find(|p| std::ptr::eq(p.pod, pod)).expect("the replay reports every pod of the node");
    let matches = match_taints(&node_plan.taints, &pod.pod.tolerations);
    let window = match tolerance(&node_plan.taints, &pod.pod.tolerations) {
        Tolerance::Tolerated(window) if !node_plan.taints.is_empty() => Some(window),
        _ => None,
    };
    let before_taint = node_plan.lifecycle.as_ref().map(|node| {
        let zone = prepared
            .lifecycle
            .as_ref()
            .and_then(|l| l.prediction.as_ref())
            .and_then(|p| p.zones.iter().find(|z| z.zone == node.forecast.zone).cloned());
        let predicted = node.forecast.taint.map(|taint| {
            let predicted = Taint::new(taint.key.key(), "", crate::engine::model::Effect::NoExecute);
            match_taints(&[predicted], &pod.pod.tolerations).remove(0).used
        });
        let down = prepared.down.iter().any(|name| name == node_name.as_str());
        BeforeTaint { node, zone, settings: prepared.settings, used: predicted.flatten(), down }
    });
    let devices = prepared.device_taints().and_then(|taints| {
        let report = taints.pod(&pod.pod.key, &pod.pod.uid);
        (!report.claims.is_empty()).then(|| (report, taints.minor()))
    });
    let explanation = Explanation {
        now: prepared.now,
        node: &node_name,
        tolerations: &pod.pod.tolerations,
        plan: pod_plan,
        taints_written: node_plan.taints_written.as_ref(),
        not_ready: prepared.loaded.not_ready.as_ref().map(|not_ready| not_ready.get(&node_name).copied()),
        matches,
        window,
        before_taint,
        clock: prepared.clock,
        devices,
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    match &args.format {
        ExplainOutput::Text => render_text(&explanation, args.width, &mut out)?,
        ExplainOutput::Json => render_json(&explanation, &mut out)?,
        ExplainOutput::Yaml => render_yaml(&explanation, &mut out)?,
        ExplainOutput::Template(template) => {
            let mut json = Vec::new();
            render_json(&explanation, &mut json)?;
            let document = serde_json::from_slice(&json).map_err(std::io::Error::other)?;
            out.write_all(&through(template, true, &document, Rows::Document)?)?;
        }
    }
    out.flush()?;
    for line in lacks {
        eprintln!("{line}");
    }
    Ok(())
}

/// What `document` prints as through `template` (nothing when it fails).
fn through(template: &Template, headers: bool, document: &serde_json::Value, rows: Rows) -> Result<Vec<u8>> {
    Printer::new(template.clone(), headers)
        .print(document, rows)
        .map_err(|e| Error::TemplateFailed { format: template.name(), reason: e.0 })
}
