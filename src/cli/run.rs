//! `run`: watch nodes and pods, and delete pods when they are due, in the foreground.

use std::io::{IsTerminal, Write};

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot, watch as channel};

use super::args::LogFormat;
use super::config::{Printing, RunConfig};
use crate::cluster;
use crate::cluster::evict::{KubeEvictor, Mode};
use crate::cluster::lease::{self, ElectionConfig, KubeLock};
use crate::cluster::lifecycle;
use crate::cluster::timekeeping;
use crate::cluster::watch::{self, NodeScope};
use crate::engine::devices::{FIRST_MINOR, NEWEST_MINOR};
use crate::error::{Error, Result};
use crate::metrics::Metrics;
use crate::output::ColorMode;
use crate::output::redraw::fit;
use crate::output::run::{LiveView, write_json, write_log, write_text};
use crate::runtime::election::{self, Candidate, Periods};
use crate::runtime::report::{Report, RunEvent};
use crate::runtime::{self, Asked, Clock, Leadership, PodChange, RunOptions, Sources, Throttle, throttle};

/// Resolves at the first SIGINT or SIGTERM; a second one ends the process at once with 130.
pub(super) async fn interrupted() {
    wait_for_signal().await;
    tokio::spawn(async {
        wait_for_signal().await;
        eprintln!("interrupted again: quitting without waiting");
        std::process::exit(130);
    });
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            Some(()) = async { match term.as_mut() { Some(term) => term.recv().await, None => None } } => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

fn scope(args: &RunConfig) -> (NodeScope, String) {
    match (&args.selector, args.nodes.is_empty()) {
        (Some(selector), _) => (NodeScope::Labels(selector.clone()), format!("nodes matching \"{selector}\"")),
        (None, false) => (NodeScope::Named(args.nodes.clone()), format!("nodes {}", args.nodes.join(", "))),
        (None, true) => (NodeScope::All, "every node".to_owned()),
    }
}

/// The nodes asked for, for the runtime to say when a list lacks them.
fn asked(args: &RunConfig) -> Asked {
    match (&args.selector, args.nodes.is_empty()) {
        (Some(selector), _) => Asked::Selected(selector.as_str().to_owned()),
        (None, false) => Asked::Named(args.nodes.iter().map(|name| name.as_str().into()).collect()),
        (None, true) => Asked::Every,
    }
}

/// The most reports written in one go: a burst is written in batches, one write and one flush
/// each, and the live view is redrawn once per batch.
const BATCH: usize = 512;

/// Prints reports until the summary; if stdout's reader goes away or a write fails, stops
/// printing and sends why on `unrecorded`, so that `run` stops enforcing.
async fn print(
    mut reports: mpsc::UnboundedReceiver<Report>,
    printing: Printing,
    clock: Clock,
    throttle: Throttle,
    unrecorded: oneshot::Sender<std::io::Error>,
) {
    let (color, live) = match printing {
        Printing::Text { color, live } => (color, live),
        _ => (ColorMode::Plain, false),
    };
    let mut view = LiveView::default();
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
    let mut out = std::io::stdout();
    let mut drawn = 0;
    let mut batch = Vec::with_capacity(BATCH);
    let mut text = Vec::new();
    // What is foreseen is said after the state at the start (synced, then the pods), whichever
    // reaches the printer first.
    let mut synced = false;
    let mut foreseen: Vec<Report> = Vec::new();
    let closed = super::closed::closed();
    tokio::pin!(closed);
    loop {
        tokio::select! {
            received = reports.recv_many(&mut batch, BATCH) => if received == 0 { break },
            () = &mut closed => {
                let _ = unrecorded.send(std::io::ErrorKind::BrokenPipe.into());
                return;
            }
            _ = tick.tick(), if live => {
                view.set_backlog(throttle.backlog().map(|b| (b.deletions, b.drains_at)));
                drawn = redraw(&mut out, drawn, &view.render(clock.now(), color));
                continue;
            }
        }
        text.clear();
        let mut last = false;
        for report in batch.drain(..) {
            match &report.event {
                RunEvent::Foreseen(_) if !synced => {
                    foreseen.push(report);
                    continue;
                }
                RunEvent::Synced { .. } => synced = true,
                _ => {}
            }
            let summary = matches!(report.event, RunEvent::Summary(_));
            // Held back until synced, or said before the summary of a run stopped before it.
            let held = if synced || summary { std::mem::take(&mut foreseen) } else { Vec::new() };
            let (first, then) = if summary { (held, vec![report]) } else { (vec![report], held) };
            for report in first.into_iter().chain(then) {
                view.observe(&report);
                // Writing into memory cannot fail.
                let _ = match printing {
                    Printing::Text { color, .. } => write_text(&report, color, &mut text),
                    Printing::Json => write_json(&report, &mut text),
                    Printing::Log(format) => write_log(&report, format == LogFormat::Json, &mut text),
                };
            }
            last = summary;
            if last {
                break;
            }
        }
        if live {
            drawn = redraw(&mut out, drawn, &[]);
        }
        if let Err(error) = out.write_all(&text).and_then(|()| out.flush()) {
            // Nothing more can be recorded: nothing more may be done.
            let _ = unrecorded.send(error);
            return;
        }
        if live && !last {
            view.set_backlog(throttle.backlog().map(|b| (b.deletions, b.drains_at)));
            drawn = redraw(&mut out, 0, &view.render(clock.now(), color));
        }
        if last {
            return;
        }
    }
}

/// Replaces the `drawn` lines of the live block with `lines`; returns how many are drawn now.
///
/// Each line is cut to the terminal's width (read at every redraw: it may be resized): a longer
/// line would wrap onto a second row, and moving back `drawn` lines would leave its first row behind.
fn redraw(out: &mut impl Write, drawn: usize, lines: &[String]) -> usize {
    redraw_within(out, drawn, lines, super::screen_size::size().columns)
}

fn redraw_within(out: &mut impl Write, drawn: usize, lines: &[String], columns: usize) -> usize {
    if drawn > 0 {
        // Move to the block's first line and clear it and everything below.
        let _ = write!(out, "\x1b[{drawn}F\x1b[J");
    }
    for line in lines {
        let _ = writeln!(out, "{}", fit(line, columns));
    }
    let _ = out.flush();
    lines.len()
}

/// `kubectl taint-evict run`.
pub fn run(args: &RunConfig) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::Runtime(e.to_string()))?;
    runtime.block_on(enforce(args))
}

/// Starts the election when asked; otherwise this instance always decides.
async fn election(
    args: &RunConfig,
    connection: &cluster::Connection,
    clock: Clock,
    report: &mpsc::UnboundedSender<Report>,
    metrics: &Arc<Metrics>,
    stop: channel::Receiver<bool>,
) -> Result<(Leadership, Option<tokio::task::JoinHandle<()>>)> {
    let Some(election) = &args.election else {
        metrics.set_leader(true);
        return Ok((Leadership::always(), None));
    };
    let config = ElectionConfig {
        namespace: election.namespace.clone().unwrap_or_else(|| connection.default_namespace.clone()),
        name: election.lease_name.clone(),
        identity: lease::default_identity(),
        lease_duration: election.lease_duration,
        renew_deadline: election.renew_deadline,
        retry_period: election.retry_period,
    };
    lease::preflight(connection, &config.namespace, &config.name).await?;
    let candidate = Candidate {
        lease: format!("{}/{}", config.namespace, config.name),
        identity: config.identity.clone(),
        periods: Periods { renew_deadline: config.renew_deadline, retry_period: config.retry_period },
        lock: KubeLock::new(connection.client.clone(), config, clock.clone()),
        clock,
        report: report.clone(),
        metrics: metrics.clone(),
    };
    let (leading_tx, leading_rx) = channel::channel(false);
    let task = tokio::spawn(election::elect(candidate, leading_tx, stop));
    Ok((Leadership::elected(leading_rx), Some(task)))
}

/// The pods as kube-controller-manager reads them: `Lt`/`Gt` tolerations match only with its
/// `TaintTolerationComparisonOperators` gate on (`--feature-gates`, else by the server's version).
/// When that was assumed, the first list's pods with such tolerations are warned about, once.
pub(super) fn gate_comparison_operators(
    mut pods: mpsc::Receiver<PodChange>,
    lifecycle: &super::config::Lifecycle,
    minor: Option<u32>,
    report: mpsc::UnboundedSender<Report>,
    clock: Clock,
) -> mpsc::Receiver<PodChange> {
    let (enabled, _) = lifecycle.comparison_operators(minor);
    let lifecycle = lifecycle.clone();
    let (tx, gated) = mpsc::channel(1024);
    tokio::spawn(async move {
        let mut warned = false;
        while let Some(mut change) = pods.recv().await {
            match &mut change {
                PodChange::Listed(list) => {
                    let comparing =
                        list.iter_mut().map(|pod| pod.gate_comparison_operators(enabled)).filter(|c| *c).count();
                    if !warned && let Some(message) = lifecycle.comparison_warning(comparing, minor) {
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

/// Starts reporting the unhealthy nodes not yet tainted, with their expected taint windows (the node
/// lifecycle controller's, predicted as `plan` does; `run` never taints nodes).
async fn foresee(
    args: &RunConfig,
    connection: &cluster::Connection,
    report: &mpsc::UnboundedSender<Report>,
    clock: crate::runtime::Clock,
    narrowed: tokio::sync::watch::Receiver<bool>,
) -> Result<Option<u32>> {
    let shown = Shown { selector: args.selector.as_ref(), nodes: &args.nodes };
    foresee_nodes(connection, shown, &args.lifecycle, report, clock, narrowed).await
}

/// The nodes whose expected taints are reported: those of `selector`, else `nodes`, else all.
pub(super) struct Shown<'a> {
    pub selector: Option<&'a crate::selector::Selector>,
    pub nodes: &'a [String],
}

/// Starts reporting the node lifecycle controller's expected taints of the nodes shown, for `run` and
/// `plan -w`: read now, predicted once `narrowed` says the clock was narrowed. Returns the minor
/// version to follow (`--kube-version`, else the server's `/version`), for the other defaults that
/// follow it.
pub(super) async fn foresee_nodes(
    connection: &cluster::Connection,
    shown: Shown<'_>,
    lifecycle: &super::config::Lifecycle,
    report: &mpsc::UnboundedSender<Report>,
    clock: crate::runtime::Clock,
    narrowed: tokio::sync::watch::Receiver<bool>,
) -> Result<Option<u32>> {
    let Shown { selector, nodes } = shown;
    let (minor, controller, leases) = tokio::join!(
        cluster::snapshot::read_server_minor(connection),
        cluster::snapshot::read_controller_health(connection),
        cluster::snapshot::node_leases_readable(connection),
    );
    // `--kube-version` names the version whose controllers to follow, as for `plan`.
    let minor = lifecycle.kube_version().or(minor);
    if let Err(message) = &leases {
        let _ = report.send(Report { at: clock.now(), event: RunEvent::Warning { message: message.clone() } });
    }
    let shown = match (selector, nodes.is_empty()) {
        (Some(selector), _) => lifecycle::Shown::Labels(selector.clone()),
        (None, false) => lifecycle::Shown::Named(nodes.to_vec()),
        (None, true) => lifecycle::Shown::All,
    };
    let settings = lifecycle::Settings {
        flags: lifecycle.flags(minor),
        silent_after: lifecycle.silent_after,
        controller: controller?,
        leases: leases.is_ok(),
        shown,
    };
    lifecycle::spawn(&connection.client, settings, report.clone(), clock, narrowed);
    Ok(minor)
}

/// Whether device taints can be enforced, and as which version's controller: the server serves
/// the DRA objects and RBAC lets them be watched; a warning says what it denies.
async fn device_taints(
    connection: &cluster::Connection,
    minor: Option<u32>,
    report: &mpsc::UnboundedSender<Report>,
    clock: &Clock,
) -> Option<(cluster::devices::Served, u32)> {
    let minor = minor.unwrap_or(NEWEST_MINOR).min(NEWEST_MINOR);
    if minor < FIRST_MINOR {
        return None;
    }
    match cluster::devices::watchable(connection).await {
        Ok(served) => served.map(|served| (served, minor)),
        Err(message) => {
            let _ = report.send(Report { at: clock.now(), event: RunEvent::Warning { message } });
            None
        }
    }
}

async fn enforce(args: &RunConfig) -> Result<()> {
    let metrics = Arc::new(Metrics::new());
    if let Some(address) = args.metrics_bind_address {
        crate::metrics::server::serve(address, metrics.clone())
            .await
            .map_err(|e| Error::Listen { address: address.to_string(), reason: e.to_string() })?;
    }
    let connection = cluster::connect(&args.connect).await?;
    if std::io::stderr().is_terminal() {
        // Nothing else is printed until the server answers (or --request-timeout runs out).
        eprintln!("connecting to {}…", crate::words::printable(&connection.server));
    }
    // Fail now, with the denied verb and resource, rather than retrying a watch forever.
    let namespace = args.namespace.as_deref();
    cluster::snapshot::preflight(&connection, args.selector.as_ref().map(|s| s.as_str()), namespace).await?;
    // Deadlines are the control plane's: the clock follows the latest instant its clock can read,
    // so that no deletion comes early.
    connection.time.follow_latest();
    let clock = connection.time.clock().clone();
    // Narrowed while the rest starts (the controller manager's Lease followed from now on); nothing
    // is decided before it ends.
    timekeeping::keep(&connection);
    let narrowed = timekeeping::narrow_in_background(&connection);
    let (scope, watched) = scope(args);
    let (report_tx, report_rx) = mpsc::unbounded_channel();
    let evict = args.mode == Mode::Evict;
    let throttle = Throttle::new(clock.clone(), args.qps, args.burst).with_writes_per_deletion(if evict {
        throttle::WRITES_PER_EVICTION
    } else {
        throttle::WRITES_PER_DELETION
    });
    let (unrecorded_tx, mut unrecorded) = oneshot::channel();
    let printer = tokio::spawn(print(report_rx, args.printing, clock.clone(), throttle.clone(), unrecorded_tx));

    let server = connection.server.clone();
    let namespace = args.namespace.clone();
    let started = RunEvent::Started { server, watching: watched, namespace, dry_run: args.dry_run, evict };
    let _ = report_tx.send(Report { at: clock.now(), event: started });
    for message in args.lifecycle.warnings() {
        let _ = report_tx.send(Report { at: clock.now(), event: RunEvent::Warning { message } });
    }
    if args.keep_last_ready && !matches!(scope, NodeScope::All) {
        let message = "--keep-last-ready sees the replicas on the nodes watched only: a replica ready on another \
                       node does not count, so the last ready replica of a workload on these nodes is kept even when \
                       others are ready elsewhere (run on every node for the guard to see them all)"
            .to_owned();
        let _ = report_tx.send(Report { at: clock.now(), event: RunEvent::Warning { message } });
    }
    if let Some(count) = cluster::recent_upstream_evictions(&connection, clock.now()).await
        && count > 0
    {
        let message = if args.dry_run {
            format!(
                "the cluster's own taint-eviction controller reported {count} TaintManagerEviction events in the last \
                 hour: it deletes pods, this dry run says what run would delete beside it; for run to enforce, \
                 disable it (kube-controller-manager --controllers=*,-taint-eviction-controller)"
            )
        } else {
            format!(
                "the cluster's own taint-eviction controller reported {count} TaintManagerEviction events in the last \
                 hour: both would delete pods; disable one (kube-controller-manager \
                 --controllers=*,-taint-eviction-controller) or use --dry-run"
            )
        };
        let _ = report_tx.send(Report { at: clock.now(), event: RunEvent::Warning { message } });
    }
    let controller_acquired = cluster::read_controller_acquired(&connection).await?;
    // The nodes' not-ready spells, for the countdowns of a swapped taint the start-up replay finds.
    let not_ready = cluster::snapshot::every_not_ready_since(&connection).await.unwrap_or_default();
    // The pods whose tolerations were edited mid-countdown, for the first countdown their owner's
    // template recovers.
    let edited = cluster::snapshot::every_tolerations_written(&connection).await;
    // Predicted on the narrowed clock, as deletions are decided.
    let minor = foresee(args, &connection, &report_tx, clock.clone(), narrowed.clone()).await?;
    let (stop_election, stop_rx) = channel::channel(false);
    let (leadership, elector) = election(args, &connection, clock.clone(), &report_tx, &metrics, stop_rx).await?;
    let devices = if args.device_taints { device_taints(&connection, minor, &report_tx, &clock).await } else { None };
    let served = devices.as_ref().map(|(served, _)| served);
    if args.keep_last_ready {
        watch::read_owners();
    }
    let watch::Watches { nodes, pods, devices: device_changes, mut fatal } = watch::spawn(
        &connection.client,
        scope,
        args.namespace.as_deref(),
        report_tx.clone(),
        clock.clone(),
        metrics.clone(),
        served,
    );
    let pods = gate_comparison_operators(pods, &args.lifecycle, minor, report_tx.clone(), clock.clone());
    let hostname = std::env::var("HOSTNAME").ok();
    connection.pushback.report_to(throttle.clone());
    let evictor = KubeEvictor::new(connection.client.clone(), args.dry_run, hostname, throttle).with_mode(args.mode);
    let options = RunOptions {
        restart_countdowns: args.restart_countdowns,
        concurrency: args.concurrency,
        max_deletions: args.max_deletions,
        keep_last_ready: args.keep_last_ready,
        metrics,
        device_minor: devices.map(|(_, minor)| minor),
        asked: asked(args),
        not_ready,
        node_monitor_period: args.lifecycle.flags(minor).node_monitor_period,
        edited,
        ..RunOptions::default()
    };
    let sources = Sources { nodes, pods, devices: device_changes, controller_acquired, leadership };
    let _ = narrowed.clone().wait_for(|narrowed| *narrowed).await;
    if let Some(message) = connection.time.estimate().as_ref().and_then(super::input::skew_warning) {
        let _ = report_tx.send(Report { at: clock.now(), event: RunEvent::Warning { message } });
    }
    // Ctrl-C, a watch failing for good (RBAC revoked, a request the server refuses), or stdout
    // that cannot be written (no deletion without its line): each ends the loop as a stop does;
    // the last two, then, with the error.
    let failure = std::sync::Mutex::new(None);
    let stop = async {
        tokio::select! {
            () = interrupted() => {}
            Some(error) = fatal.recv() => *failure.lock().expect("failure") = Some(error.into()),
            Ok(error) = &mut unrecorded => *failure.lock().expect("failure") = Some(Error::Unrecorded(error)),
        }
    };
    runtime::run(options, sources, evictor, clock, report_tx, stop).await;
    // Give the lease up so another instance takes over now, not after the lease duration.
    let _ = stop_election.send(true);
    if let Some(elector) = elector {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), elector).await;
    }
    let _ = printer.await;
    match failure.into_inner().expect("failure") {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::redraw::visible_width;

    #[test]
    fn live_lines_are_cut_to_the_terminal_width_so_moving_back_over_them_leaves_no_copy() {
        // Fixed: at 80 columns the status line wrapped, and each redraw left a copy of it.
        let lines = vec![format!("── {} ──", "9 scheduled, 0 deleted · ".repeat(5)), "  in 5s  web/a on n1".to_owned()];
        let mut out = Vec::new();
        let drawn = redraw_within(&mut out, 0, &lines, 80);
        let drawn = redraw_within(&mut out, drawn, &lines, 80);
        assert_eq!(drawn, 2);
        let text = String::from_utf8(out).expect("UTF-8");
        assert!(text.contains("\x1b[2F\x1b[J"), "{text:?}");
        for line in text.split('\n') {
            let line = line.replace("\x1b[2F\x1b[J", "");
            assert!(visible_width(&line) < 80, "{line}");
        }
    }
}
