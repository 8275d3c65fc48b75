//! Keeping `run`'s and `plan -w`'s clock to the control plane's while they run.
//!
//! Every answer's `Date` header already feeds the [`Timekeeper`]; a header says the server's time to
//! the second only. Two things narrow it:
//!
//! - probes: a few `GET /version` sent across the instants where the server's clock may pass its next
//!   whole second. The answers just before the boundary say one second, those after it the next, and
//!   the boundary, so the offset, lies between them. Eight probes a round narrow the interval
//!   eightfold; two rounds take it from a second to some 20 ms. A round is repeated every few
//!   minutes, as readings older than the estimator's window are dropped;
//! - a watch of the `kube-system/kube-controller-manager` Lease, when RBAC allows it: its
//!   `renewTime` is written every 2 s by the controller's own clock and reaches the watch within
//!   milliseconds.

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};

use super::client::Connection;
use crate::decode::CONTROLLER_LEASE;
use crate::engine::time::{NANOS_PER_SECOND, Timestamp};
use crate::runtime::Timekeeper;
use crate::runtime::skew::{Reading, Source};

/// Probes sent in one round.
const PROBES: i64 = 8;
/// Narrowing stops once the interval is this narrow (nanoseconds).
const NARROW: i64 = 40_000_000;
/// The most rounds in one narrowing.
const ROUNDS: usize = 4;
/// How often the narrowing is done again.
const AGAIN: Duration = Duration::from_secs(4 * 60);

/// Starts [`narrow`] in the background; the receiver turns `true` once it has ended (what `run` and
/// `plan -w` wait for before deciding or predicting anything).
pub fn narrow_in_background(connection: &Connection) -> tokio::sync::watch::Receiver<bool> {
    let (narrowed_tx, narrowed) = tokio::sync::watch::channel(false);
    let connection = connection.clone();
    tokio::spawn(async move {
        narrow(&connection).await;
        let _ = narrowed_tx.send(true);
    });
    narrowed
}

/// Narrows the estimate of the offset with rounds of probes, until it is within [`NARROW`] or
/// [`ROUNDS`] rounds were sent. A probe that fails is a reading missed, nothing more.
pub async fn narrow(connection: &Connection) {
    let keeper = &connection.time;
    if keeper.estimate().is_none() {
        probe(connection).await;
    }
    for _ in 0..ROUNDS {
        let Some(estimate) = keeper.estimate() else { return };
        let width = estimate.hi - estimate.lo;
        if width <= NARROW {
            return;
        }
        let instants = probe_instants(keeper.clock().local_now(), estimate.lo, estimate.hi);
        let probes = instants.into_iter().map(|at| async move {
            keeper.clock().reach_local(at).await;
            probe(connection).await;
        });
        futures::future::join_all(probes).await;
    }
}

/// The local instants to probe at: spread evenly over the window in which the server's clock passes
/// its first whole second after `now` (given that this machine's clock is `lo..=hi` ahead of it),
/// each in the middle of its share of the window.
fn probe_instants(now: Timestamp, lo: i64, hi: i64) -> Vec<Timestamp> {
    let second = i128::from(NANOS_PER_SECOND);
    // The server's second boundary B is reached at local B + ahead: the first one whose window
    // starts 10 ms from now or later.
    let earliest = now.as_nanos() + 10_000_000 - i128::from(lo);
    let boundary = (earliest + second - 1).div_euclid(second) * second;
    let width = i128::from(hi - lo);
    (0..PROBES)
        .map(|i| {
            let offset = width * i128::from(2 * i + 1) / i128::from(2 * PROBES);
            Timestamp::from_nanos(boundary + i128::from(lo) + offset)
        })
        .collect()
}

/// One `GET /version`: its answer's `Date` header is read by the client's layer.
async fn probe(connection: &Connection) {
    let Ok(request) = http::Request::get("/version").body(Vec::new()) else { return };
    let answer = connection.client.request_text(request);
    let _ = tokio::time::timeout(Duration::from_secs(5), answer).await;
}

/// Keeps the clock to the control plane's: narrows it again every few minutes, and follows the
/// controller manager's Lease while RBAC allows the watch. Runs until the process ends.
pub fn keep(connection: &Connection) {
    let probing = connection.clone();
    tokio::spawn(async move {
        let mut again = tokio::time::interval_at(probing.time.clock().instant() + AGAIN, AGAIN);
        again.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            again.tick().await;
            narrow(&probing).await;
        }
    });
    let (namespace, name) = CONTROLLER_LEASE;
    let api = Api::<Lease>::namespaced(connection.client.clone(), namespace);
    let config = super::watch::from_watch_cache().fields(&format!("metadata.name={name}"));
    let keeper = connection.time.clone();
    tokio::spawn(async move {
        let events = watcher::watcher(api, config).default_backoff();
        futures::pin_mut!(events);
        while let Some(event) = events.next().await {
            match event {
                // A renewal as it happens: within a watch's delivery of its write.
                Ok(Event::Apply(lease)) => renewed(&keeper, &lease, Reading::watched_lease),
                // The Lease as listed: renewed up to a renew period before.
                Ok(Event::InitApply(lease)) => renewed(&keeper, &lease, Reading::lease),
                Ok(_) => {}
                // Not allowed to watch it: the `Date` headers are the clock.
                Err(error) if denied(&error) => return,
                Err(_) => {}
            }
        }
    });
}

fn renewed(keeper: &Timekeeper, lease: &Lease, reading: fn(Source, Timestamp, Timestamp) -> Reading) {
    let stamp = lease.spec.as_ref().and_then(|spec| spec.renew_time.as_ref());
    if let Some(stamp) = stamp {
        let stamp = Timestamp::from_nanos(stamp.0.as_nanosecond());
        keeper.observe(reading(Source::ControllerLease, stamp, keeper.clock().local_now()));
    }
}

fn denied(error: &watcher::Error) -> bool {
    let (watcher::Error::InitialListFailed(kube::Error::Api(status))
    | watcher::Error::WatchStartFailed(kube::Error::Api(status))
    | watcher::Error::WatchFailed(kube::Error::Api(status))) = error
    else {
        return false;
    };
    matches!(status.code, 401 | 403)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_are_spread_over_the_window_of_the_next_boundary() {
        const MS: i64 = 1_000_000;
        // This machine 90.3 to 91.3 s ahead of the server; local time 12.95 s past some second.
        let now = Timestamp::from_nanos(1_000 * i128::from(NANOS_PER_SECOND) + 12_950 * i128::from(MS));
        let (lo, hi) = (90_300 * MS, 91_300 * MS);
        let instants = probe_instants(now, lo, hi);
        assert_eq!(instants.len(), 8);
        // The server reads 922.65 s..921.65 s: its next whole second, 923, is passed at local
        // 1013.3..1014.3 s; the probes sit at the middle of each eighth of that window.
        assert_eq!(instants[0], Timestamp::from_nanos(1_013_362_500_000));
        assert_eq!(instants[7], Timestamp::from_nanos(1_014_237_500_000));
        assert!(instants.iter().all(|at| *at > now));
    }
}
