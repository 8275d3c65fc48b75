//! A record `record` wrote (docs/review.md, "The record"): its JSON lines read back into what the
//! review replays, the state where the record starts and each change after it, each at the instant
//! the control plane gives it.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::build::{CONTROLLER_LEASE, parse_time};
use super::lifecycle::{NODE_LEASE_NAMESPACE, read_controller_lease, read_node_health};
use super::not_ready::NotReady;
use super::read::{read, read_object};
use crate::engine::model::{NodeName, PodKey};
use crate::engine::review::{Deleter, Moment, Seen};
use crate::engine::snapshot::{SnapshotNode, SnapshotPod};
use crate::engine::start::engine_node;
use crate::engine::taint_review::{NodeMoment, NodeSeen, Writer};
use crate::engine::time::{NANOS_PER_SECOND, Timestamp};

/// The reason of the taint-eviction controller's Events, and how their message names the pod.
const EVICTION_REASON: &str = "TaintManagerEviction";
const MARKING: &str = "Marking for deletion Pod ";
/// The names kube-controller-manager gives the taint-eviction controller's client and account: the
/// node controller's, whose part it was, up to 1.29 (`cmd/kube-controller-manager/app/core.go`).
const CONTROLLER_CLIENTS: [&str; 2] = ["node-controller", "taint-eviction-controller"];
/// The node lifecycle controller's client and account name (`cmd/kube-controller-manager/app/core.go`).
const NODE_CONTROLLER_CLIENT: &str = "node-controller";

/// How long before a pod's deletion its controller's Event may say it is marked: the Event is sent
/// just before the DELETE, its instant to the second.
const MARKED_BEFORE: i128 = 10 * NANOS_PER_SECOND as i128;
/// And after: the Event's instant is the controller's clock, the deletion's the API server's.
const MARKED_AFTER: i128 = 2 * NANOS_PER_SECOND as i128;

/// What a record holds, read.
#[derive(Debug, Default)]
pub struct Record {
    /// Where it starts (its first complete lists), then each change, in the order of their instants.
    pub moments: Vec<Moment>,
    /// Its last line's instant.
    pub end: Option<Timestamp>,
    /// Its lines.
    pub lines: usize,
    /// What it saw of node health, in the order of the instants: every node as written, each node
    /// Lease's renewal, the controller manager's Lease, and the gaps.
    pub nodes: Vec<NodeMoment>,
    /// How many node Lease renewals it holds (0: the node lifecycle review reads heartbeats).
    pub renewals: usize,
    /// The longest `--leases-every` its `record` lines say (a record of an earlier recorder, or an
    /// audit log, does not).
    pub leases_every: Option<std::time::Duration>,
}

/// A line that does not read: its file, its line (from 1) and why.
#[derive(Debug, PartialEq, Eq)]
pub struct RecordError {
    /// The file, as named.
    pub file: String,
    /// Its line, from 1.
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Line<'a> {
    #[serde(borrow)]
    at: Cow<'a, str>,
    #[serde(borrow)]
    record: Option<Cow<'a, str>>,
    #[serde(borrow)]
    list: Option<Cow<'a, str>>,
    #[serde(borrow)]
    listed: Option<Cow<'a, str>>,
    #[serde(borrow)]
    node: Option<&'a RawValue>,
    #[serde(borrow)]
    pod: Option<&'a RawValue>,
    #[serde(borrow)]
    lease: Option<&'a RawValue>,
    event: Option<Value>,
    deleted: Option<Deleted>,
    #[serde(borrow)]
    gap: Option<Cow<'a, str>>,
    /// Who wrote the change, when the source knows (an audit log): a user's name, and the client it
    /// used (`userAgent`).
    #[serde(borrow)]
    by: Option<Cow<'a, str>>,
    #[serde(borrow)]
    agent: Option<Cow<'a, str>>,
    #[serde(borrow)]
    from: Option<Cow<'a, str>>,
    stopped: Option<Value>,
    /// The recorder's `--leases-every` (a `record` line's).
    #[serde(borrow)]
    leases_every: Option<Cow<'a, str>>,
}

/// Of a line past the instant whose state is read, what tells that the record saw nothing then.
#[derive(Deserialize)]
struct Later<'a> {
    #[serde(borrow)]
    gap: Option<Cow<'a, str>>,
    #[serde(borrow)]
    from: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Deleted {
    kind: String,
    #[serde(default)]
    namespace: String,
    name: String,
}

/// A pod as the record last wrote it.
struct PodSeen {
    pod: SnapshotPod,
    /// Its deletion was seen (or it was terminating when first seen).
    deleting: bool,
}

/// The record's state as its lines are read.
#[derive(Default)]
struct Reader {
    nodes: BTreeMap<NodeName, (SnapshotNode, String)>,
    pods: BTreeMap<PodKey, (PodSeen, String)>,
    controller_lease: Option<String>,
    holder: Option<String>,
    /// The controller's Lease's last `renewTime`.
    renewed: Option<Timestamp>,
    /// The lists in progress, by kind, with what each has listed so far.
    listing: BTreeMap<String, BTreeSet<String>>,
    /// The kinds listed completely at least once.
    listed: BTreeSet<String>,
    /// Whether the start was taken (nodes and pods listed).
    started: bool,
    /// A gap's start: when a watch broke, until its list is complete.
    broken: BTreeMap<String, Timestamp>,
    /// When the recorder last stopped, or its last line's instant (a stop not written).
    last: Option<Timestamp>,
    stopped: Option<Timestamp>,
    moments: Vec<Moment>,
    /// The controller's Events marking a pod for deletion: the pod and when.
    marked: Vec<(PodKey, Timestamp)>,
    /// Each node Lease (`kube-node-lease`) as last written, by node: the state at an instant holds
    /// them, as a dump made with Leases does.
    node_leases: BTreeMap<String, String>,
    /// When each node became not ready, as the Events about nodes say.
    not_ready: NotReady,
    /// What the node lifecycle review reads (docs/review.md, "Node taints").
    health: Vec<NodeMoment>,
    renewals: usize,
}

fn time(text: &str, field: &str) -> Result<Timestamp, String> {
    parse_time(text).ok_or_else(|| format!("{field}: not an RFC 3339 time: {text:?}"))
}

/// `namespace/name` as a pod's key.
fn pod_key(text: &str) -> Option<PodKey> {
    let (namespace, name) = text.trim().split_once('/')?;
    Some(PodKey::new(namespace, name))
}

impl Reader {
    fn line(&mut self, line: Line<'_>) -> Result<(), String> {
        let at = time(&line.at, "at")?;
        if let Some(record) = line.record {
            if record != "taint-evict/v1" {
                return Err(format!("a record of {record:?}: this version reads taint-evict/v1"));
            }
            // A new run of the recorder: what came between its last line and this one was not seen.
            if self.started
                && let Some(from) = self.stopped.take().or(self.last)
            {
                self.moments.push(Moment { at: from, seen: Seen::Gap { until: at } });
            }
            self.listing.clear();
            return Ok(());
        }
        self.last = Some(at);
        if let Some(kind) = line.list {
            self.listing.insert(kind.into_owned(), BTreeSet::new());
        } else if let Some(kind) = line.listed {
            self.listed_all(&kind, at)?;
        } else if let Some(raw) = line.node {
            let by = line.by.as_deref().map(|user| node_writer(user, line.agent.as_deref().unwrap_or_default()));
            self.node(raw.get(), at, by)?;
        } else if let Some(raw) = line.pod {
            let by = line.by.as_deref().map(|user| deleter(user, line.agent.as_deref().unwrap_or_default()));
            self.pod(raw.get(), at, by)?;
        } else if let Some(raw) = line.lease {
            self.lease(raw.get(), at)?;
        } else if let Some(event) = line.event {
            self.event(&event, at);
        } else if let Some(deleted) = line.deleted {
            let by = line.by.as_deref().map(|user| deleter(user, line.agent.as_deref().unwrap_or_default()));
            self.deleted(&deleted, at, by);
        } else if let Some(kind) = line.gap {
            let from = time(&line.from.ok_or("a gap without `from`")?, "from")?;
            self.broken.insert(kind.into_owned(), from);
        } else if line.stopped.is_some() {
            self.stopped = Some(at);
        } else {
            return Err("no `record`, `list`, `listed`, `node`, `pod`, `lease`, `event`, `deleted`, `gap` or \
                        `stopped`: not a line of a record"
                .to_owned());
        }
        Ok(())
    }

    /// Whether a line of `kind` is part of a list again after the start (not a change seen live).
    fn relisting(&self, kind: &str) -> bool {
        self.started && self.listing.contains_key(kind)
    }

    fn note_listed(&mut self, kind: &str, key: String) {
        if let Some(names) = self.listing.get_mut(kind) {
            names.insert(key);
        }
    }

    fn node(&mut self, json: &str, at: Timestamp, by: Option<Writer>) -> Result<(), String> {
        let snapshot = read_object(json.as_bytes(), "Node").map_err(|e| format!("node: {e}"))?;
        let health = read_node_health(json.as_bytes()).map_err(|e| format!("node: {e}"))?;
        self.health.push(NodeMoment { at, seen: NodeSeen::Node { health, by } });
        let node = snapshot.nodes.into_iter().next().ok_or("node: not a Node")?;
        self.note_listed("nodes", node.name.to_string());
        let relisting = self.relisting("nodes");
        if self.started && !relisting {
            self.moments.push(Moment { at, seen: Seen::Node(engine_node(&node)) });
        }
        self.nodes.insert(node.name.clone(), (node, json.to_owned()));
        Ok(())
    }

    fn pod(&mut self, json: &str, at: Timestamp, by: Option<Deleter>) -> Result<(), String> {
        let snapshot = read_object(json.as_bytes(), "Pod").map_err(|e| format!("pod: {e}"))?;
        let pod = snapshot.pods.into_iter().next().ok_or("pod: not a Pod")?;
        let key = pod.pod.key.clone();
        self.note_listed("pods", key.to_string());
        let relisting = self.relisting("pods");
        let was_deleting = self.pods.get(&key).map(|(seen, _)| seen.deleting);
        if self.started && pod.terminating && was_deleting != Some(true) {
            // Seen live, its deletion is when the record saw it; in a list after a gap, when the
            // DELETE was answered: its deletion's end less its grace period.
            let when = if relisting { deletion_requested(json, &pod).unwrap_or(at) } else { at };
            let by = by.unwrap_or(Deleter::Unknown);
            self.moments.push(Moment { at: when, seen: Seen::PodDeleted { pod: key.clone(), by } });
        } else if self.started && !pod.terminating && !relisting {
            self.moments.push(Moment { at, seen: Seen::Pod(pod.pod.clone()) });
        }
        let deleting = pod.terminating;
        self.pods.insert(key, (PodSeen { pod, deleting }, json.to_owned()));
        Ok(())
    }

    fn lease(&mut self, json: &str, at: Timestamp) -> Result<(), String> {
        let lease: Value = serde_json::from_str(json).map_err(|e| format!("lease: {e}"))?;
        let meta = &lease["metadata"];
        if meta["namespace"].as_str() == Some(NODE_LEASE_NAMESPACE)
            && let Some(node) = meta["name"].as_str()
        {
            self.node_leases.insert(node.to_owned(), json.to_owned());
            // A node's renewal, as the node lifecycle controller reads it: `renewTime`.
            let renewed = lease["spec"]["renewTime"].as_str().map(|t| time(t, "lease: spec.renewTime")).transpose()?;
            if let Some(renewed) = renewed {
                self.renewals += 1;
                self.health.push(NodeMoment { at, seen: NodeSeen::Renewed { node: node.into(), renewed } });
            }
            return Ok(());
        }
        if (meta["namespace"].as_str(), meta["name"].as_str()) != (Some(CONTROLLER_LEASE.0), Some(CONTROLLER_LEASE.1)) {
            return Ok(());
        }
        let controller = read_controller_lease(json.as_bytes()).map_err(|e| format!("lease: {e}"))?;
        self.health.push(NodeMoment { at, seen: NodeSeen::Controller(controller) });
        let holder = lease["spec"]["holderIdentity"].as_str().unwrap_or_default().to_owned();
        let spec_time =
            |field: &str| lease["spec"][field].as_str().map(|t| time(t, &format!("lease: spec.{field}"))).transpose();
        let renewed = spec_time("renewTime")?;
        if self.started && self.holder.as_ref().is_some_and(|last| *last != holder) && !holder.is_empty() {
            let when = spec_time("acquireTime")?.unwrap_or(at);
            let last_renewed = self.renewed;
            let seen = Seen::LeaderChanged { holder: holder.clone().into(), last_renewed };
            self.moments.push(Moment { at: when, seen });
        }
        if !holder.is_empty() {
            self.holder = Some(holder);
            self.renewed = renewed.or(self.renewed);
        }
        self.controller_lease = Some(json.to_owned());
        Ok(())
    }

    fn event(&mut self, event: &Value, at: Timestamp) {
        self.not_ready.note(event);
        if event["reason"].as_str() != Some(EVICTION_REASON) {
            return;
        }
        let Some(key) = event["message"].as_str().and_then(|m| m.strip_prefix(MARKING)).and_then(pod_key) else {
            return;
        };
        let when = ["eventTime", "lastTimestamp", "firstTimestamp"]
            .iter()
            .find_map(|field| event[*field].as_str().and_then(parse_time))
            .unwrap_or(at);
        self.marked.push((key, when));
    }

    fn deleted(&mut self, deleted: &Deleted, at: Timestamp, by: Option<Deleter>) {
        // `record` writes the kind as its lines name it (`pod`); an audit log, as the API does.
        match deleted.kind.to_ascii_lowercase().as_str() {
            "pod" => {
                let key = PodKey::new(deleted.namespace.as_str(), deleted.name.as_str());
                if let Some((seen, _)) = self.pods.remove(&key)
                    && self.started
                    && !seen.deleting
                {
                    let by = by.unwrap_or(Deleter::Unknown);
                    self.moments.push(Moment { at, seen: Seen::PodDeleted { pod: key, by } });
                }
            }
            "node" => {
                let name = NodeName::from(deleted.name.as_str());
                self.health.push(NodeMoment { at, seen: NodeSeen::NodeGone(name.clone()) });
                if self.nodes.remove(&name).is_some() && self.started {
                    self.moments.push(Moment { at, seen: Seen::NodeGone(name) });
                }
            }
            _ => {}
        }
    }

    /// A list complete: what it did not hold is gone; the first lists of nodes and pods are the start.
    fn listed_all(&mut self, kind: &str, at: Timestamp) -> Result<(), String> {
        let Some(names) = self.listing.remove(kind) else { return Ok(()) };
        let was_started = self.started;
        match kind {
            "nodes" => {
                self.nodes.retain(|name, _| names.contains(name.as_str()));
                if was_started {
                    let nodes = self.nodes.values().map(|(node, _)| engine_node(node)).collect();
                    self.moments.push(Moment { at, seen: Seen::Nodes(nodes) });
                }
            }
            "pods" => {
                let gone: Vec<PodKey> =
                    self.pods.keys().filter(|key| !names.contains(&key.to_string())).cloned().collect();
                for key in gone {
                    if let Some((seen, _)) = self.pods.remove(&key)
                        && was_started
                        && !seen.deleting
                    {
                        self.moments.push(Moment { at, seen: Seen::PodDeleted { pod: key, by: Deleter::Unknown } });
                    }
                }
                if was_started {
                    let pods =
                        self.pods.values().filter(|(seen, _)| !seen.deleting).map(|(seen, _)| seen.pod.pod.clone());
                    self.moments.push(Moment { at, seen: Seen::Pods(pods.collect()) });
                }
            }
            _ => {}
        }
        if let Some(from) = self.broken.remove(kind)
            && was_started
        {
            self.moments.push(Moment { at: from, seen: Seen::Gap { until: at } });
        }
        self.listed.insert(kind.to_owned());
        if !was_started && self.listed.contains("nodes") && self.listed.contains("pods") {
            self.start(at)?;
        }
        Ok(())
    }

    /// The state when nodes and pods are first listed, read as a dump of them is.
    fn start(&mut self, at: Timestamp) -> Result<(), String> {
        let bytes = self.dump(false)?;
        let snapshot = read(&bytes).map_err(|e| format!("the state at the start: {e}"))?;
        self.moments.push(Moment { at, seen: Seen::Start(Box::new(snapshot)) });
        self.started = true;
        Ok(())
    }

    /// The nodes, the pods and the controller's Lease as last written (with the node Leases when
    /// `node_leases`), as a dump's `List` of them.
    fn dump(&self, node_leases: bool) -> Result<Vec<u8>, String> {
        let nodes = self.nodes.values().map(|(_, json)| ("Node", json.as_str()));
        let pods = self.pods.values().map(|(_, json)| ("Pod", json.as_str()));
        let lease = self.controller_lease.as_deref().map(|json| ("Lease", json));
        let leases = self.node_leases.values().filter(|_| node_leases).map(|json| ("Lease", json.as_str()));
        let mut items = Vec::with_capacity(self.nodes.len() + self.pods.len() + 1);
        for (kind, json) in nodes.chain(pods).chain(lease).chain(leases) {
            // A record's objects need not say their kind; a dump's items do.
            let mut item: Value = serde_json::from_str(json).map_err(|e| format!("{kind}: {e}"))?;
            if let Some(object) = item.as_object_mut() {
                object.insert("kind".to_owned(), Value::from(kind));
            }
            items.push(item);
        }
        let list = serde_json::json!({"kind": "List", "apiVersion": "v1", "items": items});
        serde_json::to_vec(&list).map_err(|e| e.to_string())
    }

    fn finish(mut self) -> (Vec<Moment>, Vec<NodeMoment>, usize) {
        // Who started each deletion: the controller, when its Event marked the pod just then.
        for moment in &mut self.moments {
            if let Seen::PodDeleted { pod, by } = &mut moment.seen {
                let at = moment.at;
                let marked = self
                    .marked
                    .iter()
                    .any(|(key, when)| key == pod && (-MARKED_BEFORE..=MARKED_AFTER).contains(&when.nanos_since(at)));
                if marked && matches!(by, Deleter::Unknown) {
                    *by = Deleter::Controller;
                }
            }
        }
        // In the order of their instants; the start first, and lines of one instant as written.
        self.moments.sort_by_key(|moment| (!matches!(moment.seen, Seen::Start(_)), moment.at));
        // The gaps hide node health too.
        for moment in &self.moments {
            if let Seen::Gap { until } = moment.seen {
                self.health.push(NodeMoment { at: moment.at, seen: NodeSeen::Gap { until } });
            }
        }
        self.health.sort_by_key(|moment| moment.at);
        (self.moments, self.health, self.renewals)
    }
}

/// Who a change's writer is: the taint-eviction controller when its own client wrote it (the client
/// kube-controller-manager names in its user agent, `…/node-controller` up to 1.29 and
/// `…/taint-eviction-controller` since, or that service account); else the user's name.
fn deleter(user: &str, agent: &str) -> Deleter {
    let controller = CONTROLLER_CLIENTS.iter().any(|client| {
        agent.starts_with("kube-controller-manager/") && agent.ends_with(&format!("/{client}"))
            || user == format!("system:serviceaccount:kube-system:{client}")
    });
    if controller { Deleter::Controller } else { Deleter::Other(user.into()) }
}

/// Who wrote a node: the node lifecycle controller when its own client did (`…/node-controller` in
/// kube-controller-manager's user agent, or that service account); else the user, by name.
fn node_writer(user: &str, agent: &str) -> Writer {
    let client = NODE_CONTROLLER_CLIENT;
    if agent.starts_with("kube-controller-manager/") && agent.ends_with(&format!("/{client}"))
        || user == format!("system:serviceaccount:kube-system:{client}")
    {
        Writer::Controller
    } else {
        Writer::Other(user.into())
    }
}

/// When a pod's DELETE was answered: its `deletionTimestamp` less its `deletionGracePeriodSeconds`.
fn deletion_requested(json: &str, pod: &SnapshotPod) -> Option<Timestamp> {
    let grace = serde_json::from_str::<Value>(json).ok()?["metadata"]["deletionGracePeriodSeconds"].as_i64()?;
    let end = pod.deletion_timestamp?;
    Some(end.add_nanos(-grace.checked_mul(NANOS_PER_SECOND)?))
}

/// The state a record holds at an instant, as a dump of it (docs/review.md, "The state at an
/// instant").
#[derive(Debug)]
pub struct StateAt {
    /// A `List` of the nodes, the pods, the controller's Lease and the nodes' Leases then, read as
    /// a dump is.
    pub dump: Vec<u8>,
    /// The instant: the one asked for, or the record's last line's.
    pub at: Timestamp,
    /// When each node not ready then had become so, as the Events recorded by then say.
    pub not_ready: BTreeMap<NodeName, Timestamp>,
    /// When the record stopped seeing part of the cluster before the instant (a watch broken, the
    /// recorder stopped), and what it saw then (`no pods`, `nothing (…)`): that part is as the
    /// record last saw it.
    pub unseen: Option<(Timestamp, String)>,
}

/// The state `files` (a record's, in order) hold at `at`, or at their last line.
///
/// Every line at or before `at` is read, wherever it is in the files: a node Lease's renewal seen
/// before `at` can be written up to `--leases-every` after it (docs/review.md, "Its lines"); and
/// the lines after it are looked at for a gap that began before it.
///
/// # Errors
/// A line that does not read (with its file and line); `at` before the record's first complete
/// lists of nodes and pods, or after its last line (`line` 0: the record as a whole).
pub fn state_at(files: &[(String, String)], at: Option<Timestamp>) -> Result<StateAt, RecordError> {
    let mut reader = Reader::default();
    let mut last: Option<Timestamp> = None;
    let mut unseen: Option<(Timestamp, String)> = None;
    for (file, text) in files {
        for (index, text) in text.lines().enumerate() {
            if text.trim().is_empty() {
                continue;
            }
            let error = |reason: String| RecordError { file: file.clone(), line: index + 1, reason };
            let line: Line<'_> = serde_json::from_str(text).map_err(|e| error(e.to_string()))?;
            let when = time(&line.at, "at").map_err(error)?;
            last = last.max(Some(when));
            match at {
                Some(at) if when > at => {
                    // A watch broken before the instant and listed again after it: its kind unseen.
                    let later: Later<'_> = serde_json::from_str(text).map_err(|e| error(e.to_string()))?;
                    if let (Some(kind), Some(from)) = (later.gap, later.from) {
                        let from = time(&from, "from").map_err(error)?;
                        if from <= at && unseen.as_ref().is_none_or(|(first, _)| from < *first) {
                            unseen = Some((from, kind.into_owned()));
                        }
                    }
                }
                _ => reader.line(line).map_err(error)?,
            }
        }
    }
    let whole = |reason: String| RecordError {
        file: files.first().map(|(f, _)| f.clone()).unwrap_or_default(),
        line: 0,
        reason,
    };
    let Some(last) = last else { return Err(whole("no line in it".to_owned())) };
    let at = at.unwrap_or(last);
    if at > last {
        return Err(whole(format!(
            "{} is after the record's last line ({}): what came after is not known",
            crate::words::rfc3339(at.as_nanos()),
            crate::words::rfc3339(last.as_nanos())
        )));
    }
    if !reader.started {
        return Err(whole(format!(
            "{} is before the record's first complete lists of nodes and pods: nothing is known of then",
            crate::words::rfc3339(at.as_nanos())
        )));
    }
    for (kind, from) in &reader.broken {
        if unseen.as_ref().is_none_or(|(first, _)| from < first) {
            unseen = Some((*from, kind.clone()));
        }
    }
    let mut unseen = unseen.map(|(from, kind)| (from, format!("no {kind}")));
    if let Some(stopped) = reader.stopped.filter(|stopped| *stopped < at) {
        let stop = (stopped, "nothing (the recorder had stopped)".to_owned());
        unseen = unseen.filter(|(from, _)| *from < stopped).or(Some(stop));
    }
    let dump = reader.dump(true).map_err(whole)?;
    Ok(StateAt { dump, at, not_ready: std::mem::take(&mut reader.not_ready).since(), unseen })
}

/// One line of a record, and where it was read: its file and line (from 1).
pub struct Numbered<'a> {
    /// The file.
    pub file: &'a str,
    /// The line, from 1.
    pub line: usize,
    /// Its text.
    pub text: Cow<'a, str>,
}

/// Reads a record's files, in order: each `(name, text)`.
///
/// # Errors
/// A line that is not JSON, has no `at`, or holds an object that does not read, with its file and
/// line.
pub fn read_record(files: &[(String, String)]) -> Result<Record, RecordError> {
    let lines = files.iter().flat_map(|(file, text)| {
        text.lines().enumerate().map(|(index, text)| Ok(Numbered { file, line: index + 1, text: Cow::Borrowed(text) }))
    });
    read_lines(lines)
}

/// Reads a record's lines, in order (from any source that writes them: a record's files, or an
/// audit log's events rewritten as them).
///
/// # Errors
/// The first of `lines` that is an error, or that does not read, with its file and line.
pub fn read_lines<'a>(lines: impl Iterator<Item = Result<Numbered<'a>, RecordError>>) -> Result<Record, RecordError> {
    let mut reader = Reader::default();
    let mut count = 0;
    let mut end = None;
    let mut leases_every = None;
    for numbered in lines {
        let numbered = numbered?;
        if numbered.text.trim().is_empty() {
            continue;
        }
        count += 1;
        let error = |reason: String| RecordError { file: numbered.file.to_owned(), line: numbered.line, reason };
        let line: Line<'_> = serde_json::from_str(&numbered.text).map_err(|e| error(e.to_string()))?;
        if let Some(every) = line.leases_every.as_deref() {
            let every = humantime::parse_duration(every).map_err(|e| error(format!("leasesEvery: {e}")))?;
            leases_every = leases_every.max(Some(every));
        }
        reader.line(line).map_err(error)?;
        end = reader.last.max(end);
    }
    let (moments, nodes, renewals) = reader.finish();
    Ok(Record { moments, end, lines: count, nodes, renewals, leases_every })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, deletion: Option<(&str, i64)>) -> String {
        let deleting = deletion.map_or_else(String::new, |(at, grace)| {
            format!(",\"deletionTimestamp\":\"{at}\",\"deletionGracePeriodSeconds\":{grace}")
        });
        format!(
            "{{\"metadata\":{{\"namespace\":\"shop\",\"name\":\"{name}\",\"uid\":\"u-{name}\"{deleting}}},\
             \"spec\":{{\"nodeName\":\"n1\"}}}}"
        )
    }

    fn line(at: &str, rest: &str) -> String {
        format!("{{\"at\":\"2026-11-29T10:{at}Z\",{rest}}}")
    }

    fn start() -> Vec<String> {
        vec![
            line("00:00", "\"record\":\"taint-evict/v1\""),
            line("00:00", "\"list\":\"nodes\""),
            line("00:00", "\"node\":{\"metadata\":{\"name\":\"n1\"}}"),
            line("00:00", "\"listed\":\"nodes\""),
            line("00:00", "\"list\":\"pods\""),
            line("00:00", &format!("\"pod\":{}", pod("a", None))),
            line("00:00", &format!("\"pod\":{}", pod("b", None))),
            line("00:01", "\"listed\":\"pods\""),
        ]
    }

    /// Each moment as `instant what`, the start left out.
    fn said(lines: &[String]) -> Vec<String> {
        let record = read_record(&[("r.jsonl".to_owned(), lines.join("\n"))]).expect("reads");
        record
            .moments
            .iter()
            .skip(1)
            .map(|m| {
                let what = match &m.seen {
                    Seen::PodDeleted { pod, by } => format!("deleted {pod} {by:?}"),
                    Seen::Gap { until } => format!("gap until {}", crate::words::rfc3339(until.as_nanos())),
                    Seen::Pods(pods) => format!("pods {}", pods.len()),
                    other => format!("{other:?}").split(['(', ' ']).next().unwrap_or_default().to_owned(),
                };
                format!("{} {what}", crate::words::rfc3339(m.at.as_nanos()))
            })
            .collect()
    }

    #[test]
    fn a_deletion_in_a_gap_is_dated_by_its_request_and_a_pod_gone_unseen_at_the_list() {
        // The pod watch breaks at 10:02; listed again at 10:05, `a` is terminating (its DELETE
        // answered at 10:04:00 with a 30 s grace, an Event of the controller at 10:03:59) and `b` is
        // gone, its deletion unseen: gone by 10:05.
        let mut lines = start();
        lines.push(line("05:00", "\"gap\":\"pods\",\"from\":\"2026-11-29T10:02:00Z\""));
        lines.push(line("05:00", "\"list\":\"pods\""));
        lines.push(line("05:00", &format!("\"pod\":{}", pod("a", Some(("2026-11-29T10:04:30Z", 30))))));
        lines.push(line("05:01", "\"listed\":\"pods\""));
        lines.push(line(
            "05:02",
            "\"event\":{\"reason\":\"TaintManagerEviction\",\"message\":\"Marking for deletion Pod shop/a\",\
             \"firstTimestamp\":\"2026-11-29T10:03:59Z\"}",
        ));
        assert_eq!(
            said(&lines),
            vec![
                "2026-11-29T10:02:00Z gap until 2026-11-29T10:05:01Z",
                "2026-11-29T10:04:00Z deleted shop/a Controller",
                "2026-11-29T10:05:01Z deleted shop/b Unknown",
                "2026-11-29T10:05:01Z pods 0",
            ]
        );
    }

    #[test]
    fn node_health_is_kept_each_node_lease_renewal_the_controllers_lease_and_who_wrote_a_node() {
        let mut lines = start();
        lines.push(line(
            "00:10",
            "\"lease\":{\"metadata\":{\"namespace\":\"kube-node-lease\",\"name\":\"n1\"},\
             \"spec\":{\"holderIdentity\":\"n1\",\"renewTime\":\"2026-11-29T10:00:09.5Z\"}}",
        ));
        lines.push(line(
            "00:11",
            "\"lease\":{\"metadata\":{\"namespace\":\"kube-system\",\"name\":\"kube-controller-manager\"},\
             \"spec\":{\"holderIdentity\":\"kcm-1\",\"acquireTime\":\"2026-11-29T08:00:00Z\",\
             \"renewTime\":\"2026-11-29T10:00:11Z\",\"leaseDurationSeconds\":15}}",
        ));
        lines.push(line(
            "00:12",
            "\"node\":{\"metadata\":{\"name\":\"n1\"}},\"by\":\"system:serviceaccount:kube-system:node-controller\",\
             \"agent\":\"kube-controller-manager/v1.29.6\"",
        ));
        lines.push(line("00:13", "\"node\":{\"metadata\":{\"name\":\"n1\"}},\"by\":\"alice\",\"agent\":\"kubectl\""));
        let record = read_record(&[("r.jsonl".to_owned(), lines.join("\n"))]).expect("reads");
        // The start's node, the renewal at its renewTime, the controller's term, then two writes:
        // the node lifecycle controller's account, then alice.
        let said: Vec<String> = record
            .nodes
            .iter()
            .map(|m| {
                let what = match &m.seen {
                    NodeSeen::Node { health, by } => format!("node {} {by:?}", health.name),
                    NodeSeen::Renewed { node, renewed } => {
                        format!("renewed {node} {}", crate::words::rfc3339(renewed.as_nanos()))
                    }
                    NodeSeen::Controller(lease) => format!("controller {:?}", lease.duration),
                    other => format!("{other:?}"),
                };
                format!("{} {what}", crate::words::rfc3339(m.at.as_nanos()))
            })
            .collect();
        assert_eq!(
            said,
            vec![
                "2026-11-29T10:00:00Z node n1 None",
                "2026-11-29T10:00:10Z renewed n1 2026-11-29T10:00:09.5Z",
                "2026-11-29T10:00:11Z controller Some(15s)",
                "2026-11-29T10:00:12Z node n1 Some(Controller)",
                "2026-11-29T10:00:13Z node n1 Some(Other(\"alice\"))",
            ]
        );
        assert_eq!(record.renewals, 1);
    }

    #[test]
    fn a_stop_and_a_new_run_of_the_recorder_are_a_gap_and_an_unwritten_stop_ends_at_the_last_line() {
        let mut lines = start();
        lines.push(line("03:00", "\"stopped\":\"signal\""));
        lines.push(line("09:00", "\"record\":\"taint-evict/v1\""));
        lines.push(line("09:30", &format!("\"pod\":{}", pod("c", None))));
        // No `stopped`: the recorder was killed after its last line.
        lines.push(line("12:00", "\"record\":\"taint-evict/v1\""));
        assert_eq!(
            said(&lines),
            vec![
                "2026-11-29T10:03:00Z gap until 2026-11-29T10:09:00Z",
                "2026-11-29T10:09:30Z Pod",
                "2026-11-29T10:09:30Z gap until 2026-11-29T10:12:00Z",
            ]
        );
        let bad = read_record(&[("r.jsonl".to_owned(), line("00:00", "\"nothing\":1"))]).expect_err("no kind");
        assert_eq!((bad.file.as_str(), bad.line), ("r.jsonl", 1));
        assert!(bad.reason.starts_with("no `record`"), "{}", bad.reason);
    }

    #[test]
    fn the_state_at_an_instant_holds_every_line_seen_by_then_wherever_it_is_written() {
        // `a` is deleted at 10:02 and `c` created at 10:04: at 10:03 the state holds `a` and `b`.
        // n1's Lease renewed at 10:02:50 is held back and written after a line of 10:03:30: it is
        // in the state at 10:03; the one of 10:03:40 is not. n1's Event says not ready since 10:02.
        let lease = |renewed: &str| {
            format!(
                "\"lease\":{{\"metadata\":{{\"namespace\":\"kube-node-lease\",\"name\":\"n1\"}},\
                 \"spec\":{{\"holderIdentity\":\"n1\",\"renewTime\":\"2026-11-29T10:{renewed}.000000Z\"}}}}"
            )
        };
        let mut lines = start();
        lines.push(line("01:00", &lease("01:00")));
        lines.push(line(
            "02:00",
            "\"event\":{\"involvedObject\":{\"kind\":\"Node\",\"name\":\"n1\"},\"reason\":\"NodeNotReady\",\
             \"lastTimestamp\":\"2026-11-29T10:02:00Z\"}",
        ));
        lines.push(line("02:00", "\"deleted\":{\"kind\":\"pod\",\"namespace\":\"shop\",\"name\":\"a\"}"));
        lines.push(line("03:30", &format!("\"pod\":{}", pod("b", None))));
        lines.push(line("02:50", &lease("02:50")));
        lines.push(line("03:40", &lease("03:40")));
        lines.push(line("04:00", &format!("\"pod\":{}", pod("c", None))));
        let files = [("r.jsonl".to_owned(), lines.join("\n"))];
        let at = parse_time("2026-11-29T10:03:00Z");
        let state = state_at(&files, at).expect("the state at 10:03");
        assert_eq!(state.at, at.expect("a time"));
        let dump: Value = serde_json::from_slice(&state.dump).expect("a list");
        let items: Vec<String> = dump["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|item| {
                let renewed = item["spec"]["renewTime"].as_str().map(|t| format!(" {t}")).unwrap_or_default();
                format!(
                    "{} {}{renewed}",
                    item["kind"].as_str().unwrap_or("?"),
                    item["metadata"]["name"].as_str().unwrap_or("?")
                )
            })
            .collect();
        assert_eq!(items, ["Node n1", "Pod b", "Lease n1 2026-11-29T10:02:50.000000Z"]);
        assert_eq!(
            state.not_ready,
            BTreeMap::from([(NodeName::from("n1"), parse_time("2026-11-29T10:02:00Z").expect("a time"))])
        );
        assert_eq!(state.unseen, None);
        // Its last line's, without an instant: `c` is there.
        let end = state_at(&files, None).expect("the state at the end");
        assert_eq!(crate::words::rfc3339(end.at.as_nanos()), "2026-11-29T10:04:00Z");
        assert!(String::from_utf8_lossy(&end.dump).contains("\"name\":\"c\""));
    }
}
