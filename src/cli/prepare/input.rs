//! Reading the input of `plan`, `explain` and `audit`: a snapshot from a dump (`-f`) or from the live
//! cluster, with what the node lifecycle controller reads beside it; and a dump's checks.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use crate::cluster::snapshot::{LiveHealth, Unsettled};
use crate::cluster::{self, ConnectOptions, Connection, NodeSelection};
use crate::decode::bounded::{self, ReadError};
use crate::decode::controller_manager::Found;
use crate::decode::devices::HealthAndDevices;
use crate::decode::lifecycle::Health;
use crate::decode::record::state_at;
use crate::decode::{DumpError, Keep, KeepLabels};
use crate::engine::devices::Devices;
use crate::engine::lifecycle::NodeHealth;
use crate::engine::model::{NodeName, PodKey};
use crate::engine::snapshot::{Snapshot, TolerationsWritten};
use crate::engine::time::Timestamp;
use crate::error::{Error, Result};
use crate::selector::Selector;
use crate::time::skew::Estimate;
use crate::words::rfc3339;

use super::super::records::{files, is_record};

use crate::config::Input;

/// A snapshot and a name for where it came from (for messages).
pub struct Loaded {
    /// The snapshot.
    pub snapshot: Snapshot,
    /// `dump.json`, `stdin`, or the server's URL.
    pub origin: String,
    /// How a live cluster answered (`watch-cache` or `quorum`); `None` for a dump.
    pub read: Option<&'static str>,
    /// What a live cluster's reads were answered in (`protobuf`, `json`); `None` for a dump.
    pub content_type: Option<&'static str>,
    /// What the input says about node health; `None` when not read.
    pub health: Option<Result<Health, DumpError>>,
    /// The server's minor version, when read from a live cluster (a dump does not say).
    pub minor: Option<u32>,
    /// What a live read lacks because RBAC denied it, as a warning to print after the answer.
    pub lacks: Option<String>,
    /// The control plane's time when a live read ended, and how it was read; a record's instant
    /// read `--at` (its state is the control plane's then); `None` for a dump.
    pub time: Option<LiveTime>,
    /// The DRA objects the device-taint controller reads (empty when there are none), or why they
    /// could not be read; `None` when a live read could not read them (and said so).
    pub devices: Option<Result<Devices, DumpError>>,
    /// The nodes `--down-selector` selects, by name (none without it).
    pub down_selected: Vec<String>,
    /// When each node carrying a condition taint last became not ready, as its Events say (the
    /// evidence of a swapped taint); `None` when the input holds no events (a dump) or they could
    /// not be read.
    pub not_ready: Option<BTreeMap<NodeName, Timestamp>>,
    /// When pods counting down had their tolerations written after their creation, by whom
    /// (`managedFields`), and their controllers' pod templates (read live; empty for a dump).
    pub tolerations_written: BTreeMap<PodKey, TolerationsWritten>,
    /// The controller manager's pod, as read live (`None`: not read, its settings not needed) or
    /// found in a dump.
    pub controller_manager: Option<Found>,
}

/// The control plane's time at the end of a live read.
#[derive(Clone, Copy, Debug)]
pub struct LiveTime {
    /// The control plane's time then (this machine's, corrected by `estimate`).
    pub now: Timestamp,
    /// How far this machine's clock is ahead of it; `None` when no answer said (no `Date` header,
    /// no Lease).
    pub estimate: Option<Estimate>,
}

/// What to read from the cluster.
pub enum Want<'a> {
    /// Nodes and their pods.
    Nodes(&'a NodeSelection),
    /// One pod (its namespace, `None` for the kubeconfig's), with its node.
    Pod(Option<&'a str>, &'a str),
}

/// Reads the snapshot the flags name. Returns it with the namespace `explain` looks in: `-n`, else
/// the kubeconfig context's (live) or `default` (a dump).
///
/// A live read also reads what the node lifecycle controller reads; every node's health only when a
/// node read is `unsettled` (it may be tainted or held back).
pub fn load(args: &Input, want: Want<'_>, unsettled: Unsettled<'_>) -> Result<(Loaded, String)> {
    let Some(path) = args.file.as_deref() else { return load_live(args, want, unsettled) };
    let origin = if path == "-" { "stdin" } else { path }.to_owned();
    // Only `-l` and `--down-selector` read node labels: a dump's other labels are not kept.
    let mut keys: Vec<String> = match want {
        Want::Nodes(NodeSelection::Labels(selector)) => selector.keys().map(str::to_owned).collect(),
        _ => Vec::new(),
    };
    keys.extend(args.down_selector.iter().flat_map(|selector| selector.keys().map(str::to_owned)));
    keys.extend(args.label_keys.iter().cloned());
    // A pod's controller only for a game day's roll-up per owner; what the pods say of it beyond
    // its name only for `audit`'s fixes.
    let keep =
        Keep { labels: KeepLabels::Only(Arc::from(keys)), owners: args.game_day(), workloads: args.every_outage };
    // Node health is read beside the snapshot: `plan` predicts the node lifecycle controller; both
    // say which pods are stuck terminating. So are the DRA objects, for the device-taint controller.
    let beside = HealthAndDevices;
    let max = args.connect.max_response_size;
    let record = path != "-" && is_record(path);
    if args.at.is_some() && !record {
        return Err(Error::Usage(format!(
            "--at reads a record (what `kubectl taint-evict record` wrote): {origin} is not one; a dump is one instant, \
             evaluated --now"
        )));
    }
    if record && args.now.is_some() {
        return Err(Error::Usage(format!(
            "{origin} is a record: read it --at an instant (its state then, evaluated then), not --now"
        )));
    }
    let mut state = None;
    let read = if record {
        let mut at = state_at(&files(path)?, args.at).map_err(|e| match e.line {
            0 => Error::NotInRecord { path: origin.clone(), reason: e.reason },
            line => Error::BadRecord { path: e.file, line, reason: e.reason },
        })?;
        if let Some((from, what)) = &at.unseen {
            eprintln!(
                "warning: the record saw {what} from {} to {}: the state is as it last saw it",
                rfc3339(from.as_nanos()),
                rfc3339(at.at.as_nanos())
            );
        }
        let dump = std::mem::take(&mut at.dump);
        state = Some(at);
        bounded::read_stream_then(std::io::Cursor::new(dump), &keep, &beside, max)
    } else if path == "-" {
        bounded::read_stream_then(std::io::stdin().lock(), &keep, &beside, max)
    } else {
        let file = std::fs::File::open(path).map_err(|e| read_failed(&origin, &e))?;
        let metadata = file.metadata().map_err(|e| read_failed(&origin, &e))?;
        if metadata.is_dir() {
            return Err(read_failed(&origin, &std::io::Error::from(std::io::ErrorKind::IsADirectory)));
        }
        // A device or a pipe (`/dev/zero`, `<(…)`) has no size: it is read as a stream.
        if metadata.is_file() {
            bounded::read_file_then(file, metadata.len(), &keep, &beside, max)
        } else {
            bounded::read_stream_then(file, &keep, &beside, max)
        }
    };
    let (snapshot, (health, devices)) = read.map_err(|e| match e {
        ReadError::Io(e) => read_failed(&origin, &e),
        ReadError::Dump(source) => Error::BadDump { path: origin.clone(), source },
        ReadError::TooLarge(limit) => Error::DumpTooLarge { path: origin.clone(), limit: limit.to_string() },
    })?;
    let namespace = match want {
        Want::Pod(Some(namespace), _) => namespace,
        _ => "default",
    };
    let down_selected = match &args.down_selector {
        Some(selector) => {
            let nodes = snapshot.nodes.iter().filter(|node| selector.matches(&node.labels));
            let names: Vec<String> = nodes.map(|node| node.name.to_string()).collect();
            down_selected(selector, names, &origin)?
        }
        None => Vec::new(),
    };
    let controller_manager = Some(match health.as_ref().ok().and_then(|health| health.controller_manager.clone()) {
        Some((name, args)) => Found::Pod { name, args },
        None => Found::NoPod,
    });
    let (health, devices) = (Some(health), Some(devices));
    // A record's state at an instant is the control plane's then, read as a live read is.
    let (origin, time, not_ready) = match state {
        Some(state) => {
            let origin = format!("{origin} at {}", rfc3339(state.at.as_nanos()));
            (origin, Some(LiveTime { now: state.at, estimate: None }), Some(state.not_ready))
        }
        None => (origin, None, None),
    };
    let loaded = Loaded {
        snapshot,
        origin,
        read: None,
        content_type: None,
        health,
        minor: None,
        lacks: None,
        time,
        devices,
        down_selected,
        not_ready,
        tolerations_written: BTreeMap::new(),
        controller_manager,
    };
    Ok((loaded, namespace.to_owned()))
}

fn load_live(args: &Input, want: Want<'_>, unsettled: Unsettled<'_>) -> Result<(Loaded, String)> {
    let options: &ConnectOptions = &args.connect;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Runtime(e.to_string()))?;
    runtime.block_on(async {
        let mut connection: Connection = cluster::connect(options).await?;
        if args.quorum_read {
            connection.read = cluster::ReadFrom::Quorum;
        }
        // The nodes going down are read as unsettled ones are (every node's health, for its zone).
        let down_selected = match &args.down_selector {
            Some(selector) => {
                let names = cluster::snapshot::node_names_selected(&connection, selector).await?;
                down_selected(selector, names, &connection.server)?
            }
            None => Vec::new(),
        };
        let unsettled = |node: &NodeHealth, now| {
            down_selected.iter().any(|name| name == node.name.as_str()) || unsettled(node, now)
        };
        let unsettled: Unsettled<'_> = &unsettled;
        let ((snapshot, live), namespace) = match want {
            Want::Nodes(selection) => {
                // A game day rolls up each owner's pods across the cluster: every pod is read.
                let read = cluster::read_snapshot(&connection, selection, unsettled, args.game_day()).await?;
                (read, connection.default_namespace.clone())
            }
            Want::Pod(given, pod) => {
                let namespace = given.map_or_else(|| connection.default_namespace.clone(), str::to_owned);
                match cluster::read_pod(&connection, &namespace, pod, unsettled).await {
                    Ok(read) => (read, namespace),
                    Err(error @ cluster::ClusterError::PodNotFound(_)) => {
                        let elsewhere = cluster::snapshot::namespaces_with_pod(&connection, pod).await;
                        let source = if given.is_some() { Source::Flag } else { Source::Context };
                        let hint = pod_hint(pod, &namespace, source, &elsewhere);
                        return Err(Error::Hinted { error: Box::new(error.into()), hint });
                    }
                    Err(error) => return Err(error.into()),
                }
            }
        };
        let tainted = cluster::snapshot::condition_tainted(&snapshot);
        let not_ready = if tainted.is_empty() {
            Some(BTreeMap::new())
        } else {
            cluster::snapshot::not_ready_since(&connection, &tainted).await
        };
        let counting = cluster::snapshot::counting_down(&snapshot.nodes, &snapshot.pods);
        let tolerations_written = cluster::snapshot::tolerations_written(&connection, &counting).await;
        let read = Some(connection.read.as_str());
        let content_type = connection.answers.described();
        let LiveHealth { health, minor, lacks, devices, devices_lack, controller_manager } = live;
        let devices = match devices_lack {
            Some(lack) => {
                eprintln!("warning: {}", crate::words::printable(&lack));
                None
            }
            None => Some(Ok(devices)),
        };
        let time = Some(LiveTime { now: connection.time.clock().now(), estimate: connection.time.estimate() });
        let origin = connection.server.clone();
        let health = Some(Ok(health));
        let loaded = Loaded {
            snapshot,
            origin,
            read,
            content_type,
            health,
            minor,
            lacks,
            time,
            devices,
            down_selected,
            not_ready,
            tolerations_written,
            controller_manager,
        };
        Ok((loaded, namespace))
    })
}

/// A dump's checks, once read: for `plan` (`wants_nodes`), a dump without nodes is refused; and
/// any dump holding one node or pod twice.
pub fn check_dump(loaded: &Loaded, wants_nodes: bool) -> Result<()> {
    if wants_nodes && loaded.snapshot.nodes.is_empty() {
        return Err(Error::IncompleteDump { path: loaded.origin.clone(), kind: "Node" });
    }
    check_unique(&loaded.snapshot, &loaded.origin)
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

/// The names `--down-selector` selected, sorted; none is an error.
fn down_selected(selector: &Selector, mut names: Vec<String>, origin: &str) -> Result<Vec<String>> {
    if names.is_empty() {
        let selector = selector.as_str().to_owned();
        return Err(Error::NoNodeMatched { flag: "--down-selector", selector, input: origin.to_owned() });
    }
    names.sort();
    Ok(names)
}

fn read_failed(path: &str, e: &std::io::Error) -> Error {
    Error::read_failed(path, e)
}

/// Where the namespace `explain` looks in came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// `-n`.
    Flag,
    /// The kubeconfig context.
    Context,
    /// The default for a dump, `default`.
    Dump,
}

/// What to say when pod `name` is not in `namespace`: where else it is (`elsewhere`, the other
/// namespaces that hold a pod of that name), or where it was looked for and why there.
#[must_use]
pub fn pod_hint(name: &str, namespace: &str, source: Source, elsewhere: &[String]) -> String {
    let others: Vec<&String> = elsewhere.iter().filter(|n| *n != namespace).collect();
    match others.as_slice() {
        [] => match source {
            Source::Flag => format!("the pod is looked up in namespace \"{namespace}\", given with -n"),
            Source::Context => {
                format!("without -n, the pod is looked up in the kubeconfig context's namespace (\"{namespace}\")")
            }
            Source::Dump => format!("without -n, the pod is looked up in namespace \"{namespace}\""),
        },
        [one] => format!("a pod \"{name}\" is in namespace \"{one}\": add -n {one}"),
        many => {
            let listed: Vec<String> = many.iter().map(|n| format!("\"{n}\"")).collect();
            format!("pods named \"{name}\" are in namespaces {}: add -n with one of them", listed.join(", "))
        }
    }
}
