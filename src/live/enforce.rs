//! `run`: watch nodes and pods, and delete pods when they are due, in the foreground.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot, watch as channel};

use super::inputs::{self, Live, Nodes, Reading};
use super::print::print;
use super::signal::interrupted;
use crate::cluster;
use crate::cluster::evict::{KubeEvictor, Mode};
use crate::cluster::lease::{self, ElectionConfig, KubeLock};
use crate::cluster::watch::Watches;
use crate::config::RunConfig;
use crate::engine::devices::{FIRST_MINOR, NEWEST_MINOR};
use crate::engine::time::Timestamp;
use crate::error::{Error, Result};
use crate::metrics::Metrics;
use crate::runtime::election::{self, Candidate, Lock, Periods, Tried};
use crate::runtime::ledger::Ledger;
use crate::runtime::report::{Report, RunEvent};
use crate::runtime::{self, Leadership, RunOptions, Sources, Throttle, throttle};
use crate::time::Clock;

/// `kubectl taint-evict run`.
///
/// # Errors
/// What ends it other than a stop: a connection or RBAC failure at start, a watch failing for good,
/// stdout that cannot be written.
pub fn run(args: &RunConfig) -> Result<()> {
    inputs::runtime()?.block_on(enforce(args))
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
    let name = format!("{}/{}", config.namespace, config.name);
    let ledger = Ledger::default();
    let mut lock = KubeLock::new(connection.client.clone(), config.clone(), clock.clone()).with_ledger(ledger.clone());
    if election.lone {
        // A lone run holds the Lease so that a second one notices it: it takes it at once when free,
        // says it waits when another run holds it, and goes on alone when it cannot hold it.
        let warn = |message: String| {
            let _ = report.send(Report { at: clock.now(), event: RunEvent::Warning { message } });
        };
        match lock.try_acquire_or_renew().await {
            Tried::Held => {}
            Tried::HeldBy(holder) => warn(format!(
                "another run ({holder}) holds the Lease {name} and enforces: this one waits and enforces once it stops \
                 or its Lease runs out (two enforcers would both delete, each under its own --max-deletions); \
                 --leader-elect makes such a standby on purpose"
            )),
            Tried::Failed(reason) => {
                warn(format!(
                    "{reason}: run enforces without holding the Lease {name}, so another run would not notice this \
                     one, nor this one it"
                ));
                metrics.set_leader(true);
                return Ok((Leadership::always(), None));
            }
        }
    } else {
        lease::preflight(connection, &config.namespace, &config.name).await?;
    }
    let candidate = Candidate {
        lease: name,
        identity: config.identity.clone(),
        periods: Periods { renew_deadline: config.renew_deadline, retry_period: config.retry_period },
        lock,
        clock,
        report: report.clone(),
        metrics: metrics.clone(),
        lone: election.lone,
        counted: Some(ledger.changes()),
    };
    let (leading_tx, leading_rx) = channel::channel(false);
    let task = tokio::spawn(election::elect(candidate, leading_tx, stop));
    Ok((Leadership::elected(leading_rx).with_ledger(ledger), Some(task)))
}

/// Whether device taints can be enforced, and as which version's controller: the server serves
/// the DRA objects and RBAC lets them be watched; a warning says what it denies.
async fn device_taints(
    live: &Live,
    minor: Option<u32>,
    report: &mpsc::UnboundedSender<Report>,
) -> Option<(cluster::devices::Served, u32)> {
    let minor = minor.unwrap_or(NEWEST_MINOR).min(NEWEST_MINOR);
    if minor < FIRST_MINOR {
        return None;
    }
    match cluster::devices::watchable(&live.connection).await {
        Ok(served) => served.map(|served| (served, minor)),
        Err(message) => {
            live.warn(report, message);
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
    let nodes = Nodes { names: &args.nodes, selector: args.selector.as_ref() };
    let namespace = args.namespace.as_deref();
    // Deadlines are the control plane's: the clock follows the latest instant its clock can read, so
    // that no deletion comes early.
    let live = Live::connect(&args.connect, nodes, namespace, Reading::Latest).await?;
    let clock = live.clock.clone();
    let (report_tx, report_rx) = mpsc::unbounded_channel();
    let evict = args.mode == Mode::Evict;
    let throttle = Throttle::new(clock.clone(), args.qps, args.burst).with_writes_per_deletion(if evict {
        throttle::WRITES_PER_EVICTION
    } else {
        throttle::WRITES_PER_DELETION
    });
    let (unrecorded_tx, mut unrecorded) = oneshot::channel();
    let printer = tokio::spawn(print(report_rx, args.printing, clock.clone(), throttle.clone(), unrecorded_tx));

    let server = live.connection.server.clone();
    let started = RunEvent::Started {
        server,
        watching: nodes.described(),
        namespace: args.namespace.clone(),
        dry_run: args.dry_run,
        evict,
    };
    let _ = report_tx.send(Report { at: clock.now(), event: started });
    for message in args.lifecycle.warnings() {
        live.warn(&report_tx, message);
    }
    if let Some(found) = cluster::recent_upstream_evictions(&live.connection, clock.now()).await {
        live.warn(&report_tx, upstream_warning(found, clock.now(), args.dry_run));
    }
    let history = live.history().await?;
    // Predicted on the narrowed clock, as deletions are decided.
    let foresight = live.foresee(&args.lifecycle, &report_tx, history.controller).await;
    let (minor, flags) = (foresight.minor, foresight.flags);
    let (stop_election, stop_rx) = channel::channel(false);
    let (leadership, elector) = election(args, &live.connection, clock.clone(), &report_tx, &metrics, stop_rx).await?;
    let devices = if args.device_taints { device_taints(&live, minor, &report_tx).await } else { None };
    let served = devices.as_ref().map(|(served, _)| served);
    let edited = runtime::Edits::default();
    let watches = live.watch(
        nodes,
        namespace,
        &args.lifecycle,
        foresight,
        &report_tx,
        metrics.clone(),
        served,
        args.policy.keep_last_ready,
        edited.clone(),
    );
    let Watches { nodes: node_changes, pods, devices: device_changes, replicas, mut fatal } = watches;
    let hostname = std::env::var("HOSTNAME").ok();
    live.connection.pushback.report_to(throttle.clone());
    let evictor =
        KubeEvictor::new(live.connection.client.clone(), args.dry_run, hostname, throttle).with_mode(args.mode);
    let options = RunOptions {
        policy: args.policy.clone(),
        metrics,
        device_minor: devices.map(|(_, minor)| minor),
        asked: nodes.asked(),
        not_ready: history.not_ready,
        node_monitor_period: flags.node_monitor_period,
        edited,
    };
    let sources = Sources {
        nodes: node_changes,
        pods,
        devices: device_changes,
        replicas,
        controller_acquired: history.controller_acquired,
        leadership,
    };
    live.narrowed(&report_tx).await;
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

/// The warning that the cluster's own taint-eviction controller deleted pods lately, with when it
/// last did: old events outlive a controller turned off since.
fn upstream_warning(found: cluster::UpstreamEvictions, now: Timestamp, dry_run: bool) -> String {
    let cluster::UpstreamEvictions { count, last } = found;
    let ago = crate::words::duration(u128::try_from(now.nanos_since(last)).unwrap_or_default());
    let reported = format!(
        "the cluster's own taint-eviction controller reported {count} TaintManagerEviction events in the last \
         hour, the last at {} ({ago} ago; none since means it may be off already)",
        crate::output::human::rfc3339_seconds(last)
    );
    if dry_run {
        format!(
            "{reported}: it deletes pods, this dry run says what run would delete beside it; for run to enforce, \
             disable it (kube-controller-manager --controllers=*,-taint-eviction-controller)"
        )
    } else {
        format!(
            "{reported}: both would delete pods; disable one (kube-controller-manager \
             --controllers=*,-taint-eviction-controller) or use --dry-run"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warning_about_the_cluster_s_own_controller_says_when_it_last_deleted() {
        // Fixed: it said only how many in the last hour, as if the controller were still on.
        let now = Timestamp::from_unix_seconds(1_795_341_600); // 2026-11-22T10:00:00Z
        let found = cluster::UpstreamEvictions { count: 6, last: now.add_nanos(-40 * 60 * 1_000_000_000) };
        let warning = upstream_warning(found, now, false);
        assert!(
            warning.starts_with(
                "the cluster's own taint-eviction controller reported 6 TaintManagerEviction events in the last hour, \
                 the last at 2026-11-22T09:20:00Z (40m ago; "
            ),
            "{warning}"
        );
    }
}
