//! The node lifecycle controller foreseen over what was read: its prediction from the nodes' health
//! (`--down`'s nodes going silent now), with what the input lacked for it and how late a dump was
//! read.

use std::collections::HashMap;

use crate::decode::lifecycle::NODE_LEASE_NAMESPACE;
use crate::engine::lifecycle::{NodeHealth, Observation, Prediction, is_unsettled, predict, unsettled};
use crate::engine::planner::Foresight;
use crate::engine::snapshot::{PodReady, Snapshot};
use crate::engine::time::Timestamp;
use crate::error::{Error, Result};
use crate::output::lifecycle::drain_line;
use crate::words::printable;

use super::input::Loaded;
use crate::config::{KUBELET_RENEW_INTERVAL, Lifecycle};

/// Whether a node of `observation` is taken as silent or not ready with `silent_after`.
fn is_unsettled_at(observation: &Observation, silent_after: std::time::Duration) -> impl Fn(&NodeHealth) -> bool {
    move |node| is_unsettled(node, observation.now, silent_after)
}

/// Each node's pods `Ready=True` among those read, and those the controller marked not ready: the
/// statuses it writes (or wrote) through its own client when it finds the node silent
/// (docs/node-lifecycle.md, "The controller's own client").
fn count_ready_pods(observation: &mut Observation, snapshot: &Snapshot) {
    let mut ready: HashMap<&str, u32> = HashMap::new();
    for pod in snapshot.pods.iter().filter(|pod| pod.ready != PodReady::No) {
        if let Some(node) = &pod.pod.node {
            *ready.entry(node.as_str()).or_default() += 1;
        }
    }
    for node in &mut observation.nodes {
        node.ready_pods = ready.get(node.name.as_str()).copied().unwrap_or_default();
    }
}

/// The node lifecycle controller's prediction over what a dump says of node health, with a warning
/// for what the dump lacks (or why it could not be read).
pub(super) fn foresee(
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
    count_ready_pods(&mut observation, &loaded.snapshot);
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
            crate::words::rfc3339(taken.as_nanos()),
            crate::words::rfc3339(now.as_nanos()),
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
pub(in crate::cli) struct Foreseen {
    pub(in crate::cli) observation: Observation,
    /// `None` when no node is silent or not ready: nothing to foresee.
    pub(in crate::cli) prediction: Option<Prediction>,
    /// The lines to print after the plan: how old a dump read late is, what it lacks.
    pub(super) lacks: Vec<String>,
}

impl Foreseen {
    /// What the plan is built with.
    pub(super) fn foresight(&self) -> Foresight<'_> {
        Foresight { observation: &self.observation, prediction: self.prediction.as_ref() }
    }
}
