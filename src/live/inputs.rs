//! The live inputs, started once and in one order for `run` and `plan -w`: the connection, the
//! control plane's clock kept and narrowed, what the watches cannot show (the controller manager's
//! restart, the nodes' not-ready spells), the node lifecycle controller's taints foreseen, and the
//! watches (a list they are refused ends the command, naming the verb and resource), `Lt`/`Gt` gated
//! as the controller reads them, the tolerations edited mid-countdown found in their first lists.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::Arc;

use tokio::sync::{mpsc, watch as channel};

use super::{edited, foresee};
use crate::cluster::watch::{self, HealthChange, NodeScope, Served, Watches};
use crate::cluster::{self, ConnectOptions, Connection, lifecycle};
use crate::config::Lifecycle;
use crate::engine::lifecycle::{ControllerLease, Flags};
use crate::engine::model::NodeName;
use crate::engine::time::Timestamp;
use crate::error::{Error, Result};
use crate::metrics::Metrics;
use crate::runtime::report::{Report, RunEvent};
use crate::runtime::{Asked, Edits, PodChange};
use crate::selector::Selector;
use crate::time::{self, Clock};

/// A multi-threaded runtime of two workers, as both live commands use.
///
/// # Errors
/// When the runtime cannot be built.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::Runtime(e.to_string()))
}

/// The nodes a live command follows: those of `selector`, else those named, else every node.
#[derive(Clone, Copy)]
pub struct Nodes<'a> {
    /// The nodes named.
    pub names: &'a [String],
    /// `-l`.
    pub selector: Option<&'a Selector>,
}

impl Nodes<'_> {
    /// The node watch's scope.
    pub fn scope(self) -> NodeScope {
        match (self.selector, self.names.is_empty()) {
            (Some(selector), _) => NodeScope::Labels(selector.clone()),
            (None, false) => NodeScope::Named(self.names.to_vec()),
            (None, true) => NodeScope::All,
        }
    }

    /// The nodes asked for, for the runtime to say when a list lacks them.
    pub fn asked(self) -> Asked {
        match (self.selector, self.names.is_empty()) {
            (Some(selector), _) => Asked::Selected(selector.as_str().to_owned()),
            (None, false) => Asked::Named(self.names.iter().map(|name| name.as_str().into()).collect()),
            (None, true) => Asked::Every,
        }
    }

    /// The nodes in words (`run`'s first line).
    pub fn described(self) -> String {
        match (self.selector, self.names.is_empty()) {
            (Some(selector), _) => format!("nodes matching \"{selector}\""),
            (None, false) => format!("nodes {}", self.names.join(", ")),
            (None, true) => "every node".to_owned(),
        }
    }
}

/// How the control plane's clock is read while a live command runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading {
    /// The middle of the estimate (`plan -w`: what is shown).
    Middle,
    /// The latest instant the control plane's clock can read (`run`: a deletion is never early).
    Latest,
}

/// What the watches cannot show, read once at start.
pub struct History {
    /// When the controller manager last acquired its Lease (its countdowns restarted then).
    pub controller_acquired: Option<Timestamp>,
    /// What the node lifecycle controller's foresight reads of that Lease (the same answer).
    pub controller: Option<ControllerLease>,
    /// The nodes' not-ready spells (a swapped taint's first countdown).
    pub not_ready: BTreeMap<NodeName, Timestamp>,
}

/// The foresight started: the version followed, and where the node watch sends node health.
pub struct Foresight {
    /// The minor version to follow (`--kube-version`, else the server's `/version`), for the
    /// defaults that follow it.
    pub minor: Option<u32>,
    /// The node lifecycle controller's settings: the flags given, its pod's command line, the
    /// file, the defaults (docs/node-lifecycle.md, "The controller's settings").
    pub flags: Flags,
    health: mpsc::UnboundedSender<HealthChange>,
}

/// The connection and the control plane's clock, started.
pub struct Live {
    /// The connection.
    pub connection: Connection,
    /// The control plane's clock, as this machine keeps it.
    pub clock: Clock,
    /// Turns `true` once the clock was narrowed: nothing is decided or predicted before.
    pub narrowed: channel::Receiver<bool>,
}

impl Live {
    /// Connects (saying so on a terminal's stderr until the server answers), checks that the
    /// watches' lists can be sent (a label selector too long for a URL), and starts keeping the clock
    /// to the control plane's and narrowing it. RBAC is not checked apart: a list the watches are
    /// refused ends the command, naming the verb and resource (docs/connecting.md).
    ///
    /// # Errors
    /// The connection's, or a list that cannot be sent.
    pub async fn connect(
        options: &ConnectOptions,
        nodes: Nodes<'_>,
        namespace: Option<&str>,
        reading: Reading,
    ) -> Result<Self> {
        let connection = cluster::connect(options).await?;
        if std::io::stderr().is_terminal() {
            // Nothing else is printed until the server answers (or --request-timeout runs out).
            eprintln!("connecting to {}…", crate::words::printable(&connection.server));
        }
        cluster::snapshot::preflight(nodes.selector.map(Selector::as_str), namespace)?;
        if reading == Reading::Latest {
            connection.time.follow_latest();
        }
        let clock = connection.time.clock().clone();
        // Kept from now on (the controller manager's Lease followed), narrowed while the rest starts.
        time::keeping::keep(&connection);
        let narrowed = time::keeping::narrow_in_background(&connection);
        Ok(Self { connection, clock, narrowed })
    }

    /// Reads what the watches cannot show: the controller manager's Lease (once) and the nodes'
    /// Events.
    ///
    /// # Errors
    /// The controller manager's Lease could not be read.
    pub async fn history(&self) -> Result<History> {
        let (controller, not_ready) = tokio::join!(
            cluster::read_controller(&self.connection),
            cluster::snapshot::every_not_ready_since(&self.connection)
        );
        let (controller_acquired, controller) = controller?.unzip();
        Ok(History {
            controller_acquired: controller_acquired.flatten(),
            controller,
            not_ready: not_ready.unwrap_or_default(),
        })
    }

    /// Starts reporting the node lifecycle controller's expected taints of the nodes followed: read
    /// now, predicted once the clock is narrowed (`run` never taints nodes), from the node health the
    /// node watch ([`Live::watch`]) sends on the returned [`Foresight`], and the controller
    /// manager's Lease as [`Live::history`] read it.
    pub async fn foresee(
        &self,
        config: &Lifecycle,
        report: &mpsc::UnboundedSender<Report>,
        controller: Option<ControllerLease>,
    ) -> Foresight {
        let connection = &self.connection;
        let (minor, leases, pod) = tokio::join!(
            cluster::snapshot::read_server_minor(connection),
            cluster::snapshot::node_leases_readable(connection),
            cluster::snapshot::read_controller_manager(connection),
        );
        // `--kube-version` names the version whose controllers to follow, as for `plan`.
        let minor = config.kube_version().or(minor);
        if let Err(message) = &leases {
            self.warn(report, message.clone());
        }
        // Read from the controller's pod as `plan` reads them; said, as `plan` says it, once a
        // prediction rests on them.
        let read = config.settings_found(minor, Some(&pod), true);
        let flags = read.settings.flags;
        let notes = read.warnings.into_iter().chain(read.assumed).collect();
        let settings = foresee::Settings { flags, silent_after: config.silent_after, controller, notes };
        let leases = leases.is_ok().then(|| lifecycle::watch_leases(&connection.client));
        let (health, nodes) = mpsc::unbounded_channel();
        foresee::spawn(settings, nodes, leases, report.clone(), self.clock.clone(), self.narrowed.clone());
        Foresight { minor, flags, health }
    }

    /// Starts the node and pod watches (and the DRA objects' when `devices` says which versions serve
    /// them): the one node watch feeds the engine (the nodes followed) and the foresight (every
    /// node's health); the pods are read as the controller reads them: `Lt`/`Gt` tolerations match
    /// only with its `TaintTolerationComparisonOperators` gate on (`--feature-gates`, else by the
    /// server's version). The pods of the first list whose tolerations were edited mid-countdown go
    /// to `edits` before that list is passed on.
    #[allow(clippy::too_many_arguments)]
    pub fn watch(
        &self,
        nodes: Nodes<'_>,
        namespace: Option<&str>,
        config: &Lifecycle,
        foresight: Foresight,
        report: &mpsc::UnboundedSender<Report>,
        metrics: Arc<Metrics>,
        devices: Option<&Served>,
        replicas: bool,
        edits: Edits,
    ) -> Watches {
        let Watches { nodes: node_changes, pods, devices, replicas, fatal } = watch::spawn(
            &self.connection.client,
            nodes.scope(),
            namespace,
            report.clone(),
            self.clock.clone(),
            metrics,
            devices,
            foresight.health,
            replicas,
        );
        let (node_changes, pods) = edited::found_in_first_lists(self.connection.clone(), node_changes, pods, edits);
        let pods = gate_comparison_operators(pods, config, foresight.minor, report.clone(), self.clock.clone());
        Watches { nodes: node_changes, pods, devices, replicas, fatal }
    }

    /// Waits for the clock's narrowing; then says how far off this machine's clock is, if more than a
    /// second.
    pub async fn narrowed(&self, report: &mpsc::UnboundedSender<Report>) {
        let _ = self.narrowed.clone().wait_for(|narrowed| *narrowed).await;
        if let Some(message) = self.connection.time.estimate().as_ref().and_then(|estimate| estimate.warning()) {
            self.warn(report, message);
        }
    }

    /// Reports a warning, stamped with the control plane's time.
    pub fn warn(&self, report: &mpsc::UnboundedSender<Report>, message: String) {
        let _ = report.send(Report { at: self.clock.now(), event: RunEvent::Warning { message } });
    }
}

/// The pods as kube-controller-manager reads them: `Lt`/`Gt` tolerations match only with its
/// `TaintTolerationComparisonOperators` gate on. When that was assumed, the first list's pods with
/// such tolerations are warned about, once.
fn gate_comparison_operators(
    mut pods: mpsc::Receiver<PodChange>,
    config: &Lifecycle,
    minor: Option<u32>,
    report: mpsc::UnboundedSender<Report>,
    clock: Clock,
) -> mpsc::Receiver<PodChange> {
    let (enabled, _) = config.comparison_operators(minor);
    let config = config.clone();
    let (tx, gated) = mpsc::channel(1024);
    tokio::spawn(async move {
        let mut warned = false;
        while let Some(mut change) = pods.recv().await {
            match &mut change {
                PodChange::Listed(list) => {
                    let comparing =
                        list.iter_mut().map(|pod| pod.gate_comparison_operators(enabled)).filter(|c| *c).count();
                    if !warned && let Some(message) = config.comparison_warning(comparing, minor) {
                        let _ = report.send(Report { at: clock.now(), event: RunEvent::Warning { message } });
                        warned = true;
                    }
                }
                PodChange::Applied(pod) => {
                    pod.gate_comparison_operators(enabled);
                }
                PodChange::Deleted(_) | PodChange::Interrupted | PodChange::Resumed => {}
            }
            if tx.send(change).await.is_err() {
                return;
            }
        }
    });
    gated
}
