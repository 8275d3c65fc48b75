//! `record`: connects, keeps the control plane's clock, starts the watches, and writes what they see
//! into the record's files until Ctrl-C or SIGTERM (then `stopped`, everything written, exit 0).
//! Written at least every second; a file that reaches `--file-size` ends, and the next begins with
//! its header and every kind listed again (the watches asked to list again), so that each file stands
//! alone.
//!
//! Owns: the recording loop. Uses: the cluster's connection and watches, the clock, the signals.

use std::time::Duration;

use tokio::sync::{mpsc, watch as channel};

use super::files::{Failed, Files};
use super::lines::Recorder;
use crate::cluster::watch::{RECORDED, RecordedKind, Seen, spawn_recorded};
use crate::cluster::{self, ClusterError};
use crate::config::RecordConfig;
use crate::error::{Error, Result};
use crate::live::inputs::runtime;
use crate::live::signal::interrupted;
use crate::time;
use crate::time::skew::{Reading, Source};

/// How often what was gathered is written, and the node Leases held back looked at.
const FLUSH: Duration = Duration::from_secs(1);
/// How often the old files are looked at for `--max-age`.
const PRUNE: Duration = Duration::from_secs(60);

/// Runs `record` until Ctrl-C or SIGTERM.
///
/// # Errors
/// The cluster cannot be reached, a watch is refused, or the record cannot be written.
pub fn record(config: &RecordConfig) -> Result<()> {
    runtime()?.block_on(recording(config))
}

async fn recording(config: &RecordConfig) -> Result<()> {
    // An `--out` that cannot be written is said before the cluster is asked anything.
    super::files::check(&config.out).map_err(unwritable)?;
    let connection = cluster::connect(&config.connect).await?;
    // Unreachable, or refused, in one line before any file is written.
    connection
        .client
        .apiserver_version()
        .await
        .map_err(|e| ClusterError::from_kube(e, &connection.server, "get", "/version"))?;
    let clock = connection.time.clock().clone();
    // Narrowed before the first line, so that the lines' instants do not move back by the correction.
    time::keeping::narrow(&connection).await;
    time::keeping::keep_probing(&connection);
    let recorder_name = format!("kubectl-taint-evict {}", env!("CARGO_PKG_VERSION"));

    let mut files = Files::create(&config.out, config.limits, clock.now()).map_err(unwritable)?;
    let mut recorder = Recorder::new(config.leases_every);
    recorder.begin(clock.now(), &recorder_name, &connection.server);
    recorder.write_out(|lines| files.push(lines)).map_err(unwritable)?;
    files.flush().map_err(unwritable)?;
    files.prune(clock.now()).map_err(unwritable)?;

    let (seen_tx, mut seen) = mpsc::channel(4096);
    let (relist, relisted) = channel::channel(0u64);
    let (fatal_tx, mut fatal) = mpsc::unbounded_channel();
    spawn_recorded(&connection.client, &seen_tx, &relisted, &fatal_tx, &clock);
    drop(seen_tx);

    // Whether the Leases' list is under way: a Lease listed was renewed up to a period before.
    let mut listing_leases = false;
    let stop = interrupted();
    tokio::pin!(stop);
    let mut flush = tokio::time::interval(FLUSH);
    let mut prune = tokio::time::interval(PRUNE);
    let ended = loop {
        tokio::select! {
            () = &mut stop => break None,
            Some(error) = fatal.recv() => break Some(Error::from(error)),
            Some(seen) = seen.recv() => {
                let at = clock.now();
                follow_controller(&connection.time, &seen, &mut listing_leases);
                recorder.see(seen, at);
                recorder.write_out(|lines| files.push(lines)).map_err(unwritable)?;
                if files.full() {
                    // The renewals held back end this file; the next begins with every kind listed.
                    recorder.release_all(at);
                    recorder.write_out(|lines| files.push(lines)).map_err(unwritable)?;
                    files.next(at).map_err(unwritable)?;
                    recorder.begin(at, &recorder_name, &connection.server);
                    recorder.write_out(|lines| files.push(lines)).map_err(unwritable)?;
                    relist.send_modify(|count| *count += 1);
                    files.prune(at).map_err(unwritable)?;
                }
            }
            _ = flush.tick() => {
                recorder.tick(clock.now());
                recorder.write_out(|lines| files.push(lines)).map_err(unwritable)?;
                files.flush().map_err(unwritable)?;
            }
            _ = prune.tick() => {
                files.prune(clock.now()).map_err(unwritable)?;
            }
        }
    };
    recorder.stop(clock.now());
    recorder.write_out(|lines| files.push(lines)).map_err(unwritable)?;
    files.flush().map_err(unwritable)?;
    ended.map_or(Ok(()), Err)
}

/// The controller manager's Lease, renewed every 2 s by its own clock, keeps the clock as `run`'s
/// watch of it does (docs/connecting.md, "Whose clock: the control plane's"): listed, a renewal up
/// to a period before; watched, one just written. The reading is taken by this machine's clock, not
/// the corrected one the lines are written by: it measures the correction.
fn follow_controller(keeper: &time::Timekeeper, seen: &Seen, listing: &mut bool) {
    let leases = |watch: usize| RECORDED[watch].kind == RecordedKind::Lease;
    let recorded = match seen {
        Seen::Listing { watch } if leases(*watch) => return *listing = true,
        Seen::Listed { watch } | Seen::Broke { watch } if leases(*watch) => return *listing = false,
        Seen::Object { watch, recorded } if leases(*watch) => recorded,
        _ => return,
    };
    if recorded.namespace.as_deref() != Some("kube-system") || recorded.name != "kube-controller-manager" {
        return;
    }
    let Some(stamp) = recorded.object["spec"]["renewTime"].as_str().and_then(crate::decode::parse_time) else {
        return;
    };
    let at = keeper.clock().local_now();
    keeper.observe(if *listing {
        Reading::lease(Source::ControllerLease, stamp, at)
    } else {
        Reading::watched_lease(Source::ControllerLease, stamp, at)
    });
}

/// A record file or directory that cannot be written, in one line.
fn unwritable(failed: Failed) -> Error {
    Error::RecordFailed { path: failed.path.display().to_string(), reason: crate::error::os_words(&failed.error) }
}
