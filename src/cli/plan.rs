//! `plan` and `explain`: one pipeline (snapshot → checks → the lifecycle prediction → replay →
//! predicted taints and stuck pods shown), then each its output.

use std::collections::{HashMap, HashSet};
use std::io::{BufWriter, Write};

use crate::decode::controller_manager::{self, Found};
use crate::decode::lifecycle::NODE_LEASE_NAMESPACE;
use crate::engine::devices::{DeviceTaints, Devices, FIRST_MINOR, NEWEST_MINOR};
use crate::engine::explain::explain as match_taints;
use crate::engine::lifecycle::{NodeHealth, Observation, Prediction, Settings, is_unsettled, predict, unsettled};
use crate::engine::model::{NodeName, Taint};
use crate::engine::plan::{Assumed, Plan, device_affected_nodes};
use crate::engine::planner::{Evidence, Foresight, Request, build};
use crate::engine::snapshot::{Snapshot, WhatIf};
use crate::engine::time::Timestamp;
use crate::engine::tolerate::{Tolerance, tolerance};
use crate::error::{Error, Result};
use crate::output::explain::{BeforeTaint, Explanation, render_json, render_text, render_yaml};
use crate::output::lifecycle::drain_line;
use crate::output::template::{Printer, Rows, Template};
use crate::output::{ClockDoc, Live, OutputFormat, plan_document, render_plan_settings};
use crate::selector::Selector;
use crate::words::printable;

use super::input::{Loaded, Source, Want, load, now, pod_hint};
use crate::cluster::NodeSelection;
use crate::config::{ExplainConfig, ExplainOutput, KUBELET_RENEW_INTERVAL, Lifecycle, PlanConfig};
use crate::time::future::{self, NowFrom};
use crate::time::skew::Estimate;

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

/// Refuses a dump that holds one node or pod twice (two dumps concatenated, a pod re-created between
/// two `kubectl get`): the engine keys pods by namespace and name, as upstream does, so one of the
/// two would be reported with the other's deadline.
fn check_unique(snapshot: &Snapshot, origin: &str) -> Result<()> {
    let mut nodes = HashSet::with_capacity(snapshot.nodes.len());
    if let Some(node) = snapshot.nodes.iter().find(|n| !nodes.insert(&n.name)) {
        return Err(Error::Duplicate {
            path: origin.to_owned(),
            object: format!("node \"{}\"", node.name),
            uids: None,
        });
    }
    let pods = &snapshot.pods;
    // kubectl lists pods sorted by namespace and name: usually one comparison per pod.
    if pods.windows(2).all(|pair| pair[0].pod.key < pair[1].pod.key) {
        return Ok(());
    }
    let mut seen = HashMap::with_capacity(pods.len());
    for pod in pods {
        if let Some(uid) = seen.insert(&pod.pod.key, &pod.pod.uid) {
            let object = format!("pod \"{}\"", pod.pod.key);
            return Err(Error::Duplicate {
                path: origin.to_owned(),
                object,
                uids: Some((uid.to_string(), pod.pod.uid.to_string())),
            });
        }
    }
    Ok(())
}

/// Whether a node of `observation` is taken as silent or not ready with `silent_after`.
fn is_unsettled_at(observation: &Observation, silent_after: std::time::Duration) -> impl Fn(&NodeHealth) -> bool {
    move |node| is_unsettled(node, observation.now, silent_after)
}

/// The node lifecycle controller's prediction over what a dump says of node health, with a warning
/// for what the dump lacks (or why it could not be read).
fn foresee(
    loaded: &mut Loaded,
    live: bool,
    now: Timestamp,
    lifecycle: &Lifecycle,
    flags: crate::engine::lifecycle::Flags,
    down: &[String],
) -> Result<Option<Foreseen>> {
    let mut health = match loaded.health.take() {
        None => return Ok(None),
        Some(Ok(health)) => health,
        Some(Err(error)) => {
            eprintln!("warning: node health not predicted: {}", printable(&error.to_string()));
            return Ok(None);
        }
    };
    // `--down`: these nodes' kubelets go silent now.
    for name in down {
        let node = health.nodes.iter_mut().find(|node| node.name.as_str() == name);
        let node = node.ok_or_else(|| Error::NodeNotFound { node: name.clone(), input: loaded.origin.clone() })?;
        node.down = true;
    }
    // A dump without node status (written by hand, or stripped) says nothing of node health.
    if health.nodes.iter().all(|node| node.ready.is_none()) {
        if !down.is_empty() {
            eprintln!("warning: --down: the input has no node status: nothing is predicted");
        }
        return Ok(None);
    }
    let lacks = if live {
        loaded.lacks.take()
    } else {
        (health.node_leases == 0 && !health.nodes.is_empty()).then(|| {
            format!(
                "the dump has no Leases of namespace \"{NODE_LEASE_NAMESPACE}\": a silent kubelet is seen only once \
                 its node is Ready=Unknown (dump with `kubectl get nodes,pods,leases -A -o json`)"
            )
        })
    };
    let mut observation = health.observe(now, flags, lifecycle.silent_after);
    // A dump's heartbeats stopped when it was written: read late, it is judged as of then, however
    // late (docs/node-lifecycle.md, "A dump read late").
    let taken = match (live, down.is_empty()) {
        (true, _) => None,
        (false, true) => observation.judge_when_taken(),
        (false, false) => observation.carry_forward(),
    };
    loaded.snapshot.taken = taken;
    // A `--silent-after` below the kubelets' renewal interval takes healthy nodes as silent: said
    // when it takes every node as silent, some of them renewing within that interval.
    let renewing = |silent_after| is_unsettled_at(&observation, silent_after);
    let early = observation
        .nodes
        .iter()
        .filter(|node| renewing(lifecycle.silent_after)(node) && !renewing(KUBELET_RENEW_INTERVAL)(node))
        .count();
    let every = observation.nodes.len() > 1 && observation.nodes.iter().all(renewing(lifecycle.silent_after));
    if early > 0 && every {
        eprintln!(
            "warning: --silent-after {} takes {} as silent whose kubelet renewed its Lease within the last {} (the \
             kubelet's default interval): keep it only if your kubelets renew more often",
            humantime::format_duration(lifecycle.silent_after),
            if early == 1 { "1 node".to_owned() } else { format!("{early} nodes") },
            humantime::format_duration(KUBELET_RENEW_INTERVAL),
        );
    }
    let read_late = taken.map(|taken| {
        let age = crate::words::duration(u128::try_from(now.as_nanos() - taken.as_nanos()).unwrap_or_default());
        format!(
            "note: the dump was taken at {} or later (its newest heartbeat), {age} before {}: node health is \
             judged as it was then{}",
            crate::output::human::rfc3339(taken),
            crate::output::human::rfc3339(now),
            if down.is_empty() { "" } else { ", the other nodes taken to heartbeat until now" }
        )
    });
    // A healthy cluster (the usual case) is answered without the prediction; past 200 nodes failing
    // at once it drains each zone's queue, and says so once per zone (docs/node-lifecycle.md).
    let prediction = (unsettled(&observation) > 0).then(|| predict(&observation));
    let drains = prediction.iter().flat_map(|prediction| &prediction.zones).filter_map(drain_line);
    let lacks = read_late
        .into_iter()
        .chain(drains.map(|line| format!("note: {line}")))
        .chain(lacks.map(|lacks| format!("warning: {lacks}")))
        .collect();
    Ok(Some(Foreseen { observation, prediction, lacks }))
}

/// The node lifecycle controller's prediction, and what the dump lacked for it.
pub(super) struct Foreseen {
    pub(super) observation: Observation,
    /// `None` when no node is silent or not ready: nothing to foresee.
    prediction: Option<Prediction>,
    /// The lines to print after the plan: how old a dump read late is, what it lacks.
    lacks: Vec<String>,
}

impl Foreseen {
    /// What the plan is built with.
    fn foresight(&self) -> Foresight<'_> {
        Foresight { observation: &self.observation, prediction: self.prediction.as_ref() }
    }
}

/// The evaluation instant and how the control plane's time was read. Warns once when this machine's
/// clock is more than a second off it, and for each kind of stamp in the input later than it.
fn evaluated_at(input: &crate::config::Input, loaded: &Loaded) -> (Timestamp, Option<ClockDoc>) {
    let (now, clock) = now(input, loaded);
    let estimate = loaded.time.and_then(|time| time.estimate).filter(|_| clock.is_some());
    if let Some(warning) = estimate.as_ref().and_then(Estimate::warning) {
        eprintln!("warning: {warning}");
    }
    let from = match (input.now, &loaded.time) {
        (Some(_), _) => NowFrom::Flag,
        (None, Some(_)) => NowFrom::ControlPlane,
        (None, None) => NowFrom::ThisMachine,
    };
    let health = loaded.health.as_ref().and_then(|health| health.as_ref().ok());
    let renewed = health.and_then(|health| health.controller.as_ref()).and_then(|lease| lease.renewed);
    for warning in future::warnings(&loaded.snapshot, renewed, now, from) {
        eprintln!("warning: {}", printable(&warning));
    }
    (now, clock)
}

/// The DRA objects the device-taint controller reads, and the minor version to follow: the
/// server's or `--kube-version`, else the newest modelled. Warns, once each, when they
/// could not be read, when the version has no such controller, and for what a version cannot
/// evaluate (a live read said already what it could not read).
fn device_taints(loaded: &mut Loaded) -> (Devices, Option<u32>) {
    let bound = loaded.snapshot.pods.iter().filter(|pod| pod.pod.node.is_some());
    let uses: std::collections::HashMap<_, _> =
        bound.filter_map(|pod| Some((pod.pod.key.clone(), pod.claims.as_deref()?.to_vec()))).collect();
    let devices = match loaded.devices.take() {
        _ if uses.is_empty() => return (Devices::default(), None),
        None => return (Devices::default(), None),
        Some(Ok(devices)) => Devices { uses, ..devices },
        Some(Err(error)) => {
            eprintln!("warning: device taints not read: {}", printable(&error.to_string()));
            return (Devices::default(), None);
        }
    };
    let minor = loaded.minor.unwrap_or(NEWEST_MINOR).min(NEWEST_MINOR);
    if minor < FIRST_MINOR {
        eprintln!(
            "warning: pods use DRA claims, but Kubernetes 1.{minor} has no device-taint controller (1.{FIRST_MINOR}+): \
             device taints are not shown"
        );
        return (devices, None);
    }
    if loaded.minor.is_none() {
        eprintln!(
            "warning: device taints follow the device-taint controller of Kubernetes 1.{NEWEST_MINOR}; name the \
             dump's version with --kube-version 1.MINOR"
        );
    }
    let taints = DeviceTaints::new(&devices, minor);
    let unevaluated: Vec<String> = taints.unevaluated_rules().map(|rule| format!("\"{}\"", rule.name)).collect();
    if !unevaluated.is_empty() {
        eprintln!(
            "warning: DeviceTaintRule {} select devices by class or CEL, which are not evaluated: left out (Kubernetes \
             1.35 removed those selectors)",
            printable(&unevaluated.join(", "))
        );
    }
    (devices, Some(minor))
}

/// The node lifecycle controller's settings (docs/node-lifecycle.md, "The controller's settings"):
/// the flags given, then its pod's command line (read live, or in a dump), else
/// `--controller-settings`, else the defaults of the version followed. A setting of the pod that
/// does not read is warned of; with the settings, the line that says they were assumed, and why,
/// when a live read assumed them.
fn settings(loaded: &Loaded, config: &Lifecycle, from_dump: bool) -> (Settings, Option<String>) {
    let pod = match &loaded.controller_manager {
        Some(Found::Pod { name, args }) => {
            let (given, warnings) = controller_manager::from_args(args);
            for warning in warnings {
                let pod = printable(name);
                eprintln!("warning: pod kube-system/{pod}: {}: its default is assumed", printable(&warning));
            }
            Some(given)
        }
        _ => None,
    };
    let settings = config.settings(loaded.minor, pod.as_ref());
    let why = match &loaded.controller_manager {
        _ if from_dump || config.file.is_some() || !settings.some_assumed() => None,
        Some(Found::NoPod) => Some(format!(
            "no pod labelled {} in namespace \"{}\"",
            controller_manager::SELECTOR,
            controller_manager::NAMESPACE
        )),
        Some(Found::Unreadable(why)) => Some(why.clone()),
        Some(Found::Pod { .. }) | None => None,
    };
    let line = why.map(|why| {
        let minor = loaded.minor.unwrap_or(crate::config::DEFAULT_MINOR);
        let assumed: Vec<String> = settings
            .each()
            .iter()
            .filter(|(_, _, source)| *source == crate::engine::lifecycle::Source::Default)
            .map(|(name, value, _)| format!("--{name} {}", crate::output::settings::shown(*value)))
            .collect();
        format!(
            "warning: the node lifecycle controller's settings are assumed at kube-controller-manager 1.{minor}'s \
             defaults ({}): {}; give its flags, or --controller-settings FILE",
            assumed.join(", "),
            printable(&why)
        )
    });
    (settings, line)
}

/// What `plan` and `explain` share, in order: the lifecycle flags' warnings, the snapshot and the
/// evaluation instant, the dump's checks, and the node lifecycle controller's prediction.
pub(super) struct Prepared {
    pub(super) loaded: Loaded,
    pub(super) now: Timestamp,
    clock: Option<ClockDoc>,
    pub(super) flags: crate::engine::lifecycle::Flags,
    /// The same settings, and where each came from.
    pub(super) settings: Settings,
    pub(super) lifecycle: Option<Foreseen>,
    pub(super) from_dump: bool,
    /// The DRA objects, and the minor version whose device-taint controller to follow (`None`: no
    /// pod uses a claim, or the version has no such controller).
    devices: Devices,
    device_minor: Option<u32>,
    /// The nodes going down in a what-if (`--down`, then `--down-selector`'s), each once.
    down: Vec<String>,
}

impl Prepared {
    /// Loads what `want` needs; for `plan` (`Want::Nodes`), a dump without nodes is refused first.
    pub(super) fn load(input: &crate::config::Input, config: &Lifecycle, want: Want<'_>) -> Result<(Self, String)> {
        for warning in config.warnings() {
            eprintln!("warning: {warning}");
        }
        let wants_nodes = matches!(want, Want::Nodes(_));
        let (fixed, silent_after) = (input.now, config.silent_after);
        // A node going down is read as an unsettled one is (every node's health, for its zone).
        let unsettled = |node: &NodeHealth, now| {
            input.down.iter().any(|name| name == node.name.as_str())
                || is_unsettled(node, fixed.unwrap_or(now), silent_after)
        };
        let (mut loaded, namespace) = load(input, want, &unsettled)?;
        if let Some(minor) = config.kube_version() {
            loaded.minor = Some(minor);
        }
        let (now, clock) = evaluated_at(input, &loaded);
        let from_dump = input.file.is_some();
        if from_dump && wants_nodes && loaded.snapshot.nodes.is_empty() {
            return Err(Error::IncompleteDump { path: loaded.origin, kind: "Node" });
        }
        if from_dump {
            check_unique(&loaded.snapshot, &loaded.origin)?;
        }
        // `Lt`/`Gt` tolerations, read as the controller reads them.
        let (enabled, _) = config.comparison_operators(loaded.minor);
        let comparing = loaded.snapshot.gate_comparison_operators(enabled);
        if let Some(warning) = config.comparison_warning(comparing, loaded.minor) {
            eprintln!("warning: {warning}");
        }
        let (settings, assumed) = settings(&loaded, config, from_dump);
        let flags = settings.flags;
        // As given: `--down`'s names in order, then those `--down-selector` selects (by name), each once.
        let mut seen = HashSet::new();
        let down: Vec<String> =
            input.down.iter().chain(&loaded.down_selected).filter(|name| seen.insert(name.as_str())).cloned().collect();
        let lifecycle = foresee(&mut loaded, !from_dump, now, config, flags, &down)?;
        // Said when the answer rests on them: the node health read is predicted from.
        if let Some(line) = assumed.filter(|_| lifecycle.is_some()) {
            eprintln!("{line}");
        }
        let (devices, device_minor) = device_taints(&mut loaded);
        let prepared = Self { loaded, now, clock, flags, settings, lifecycle, from_dump, devices, device_minor, down };
        Ok((prepared, namespace))
    }

    /// The device-taint controller's view of the DRA objects read.
    fn device_taints(&self) -> Option<DeviceTaints<'_>> {
        self.device_minor.map(|minor| DeviceTaints::new(&self.devices, minor))
    }

    /// The nodes the controller is expected to act on (taint, or hold a taint back).
    fn foreseen(&self) -> HashSet<&str> {
        let nodes = self.lifecycle.iter().flat_map(|lifecycle| lifecycle.prediction.iter()).flat_map(|p| &p.nodes);
        nodes.filter(|n| n.taint.is_some() || n.held.is_some()).map(|n| n.name.as_str()).collect()
    }

    /// The plan of the `selected` nodes with `what_if` at `now`, kept to `namespace` (its warnings
    /// printed): the engine's [`build`].
    fn build(
        &self,
        selected: &[usize],
        what_if: &[WhatIf],
        assumed: Option<&Assumed>,
        namespace: Option<&str>,
    ) -> Plan<'_> {
        let devices = self.device_taints();
        let host = crate::host::host();
        let request =
            Request { selected, what_if, now: self.now, flags: self.flags, assumed, namespace, host, tables: None };
        let evidence = Evidence {
            not_ready: self.loaded.not_ready.as_ref(),
            tolerations_written: Some(&self.loaded.tolerations_written),
            lifecycle: self.lifecycle.as_ref().map(Foreseen::foresight),
            devices: devices.as_ref(),
        };
        let (plan, warnings) = build(&self.loaded.snapshot, &request, &evidence);
        for warning in warnings {
            eprintln!("warning: {}", printable(&warning.to_string()));
        }
        plan
    }

    /// What to say after the answer: how old a dump read late is, what it lacked for the prediction.
    pub(super) fn take_lacks(&mut self) -> Vec<String> {
        self.lifecycle.as_mut().map(|lifecycle| std::mem::take(&mut lifecycle.lacks)).unwrap_or_default()
    }
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
