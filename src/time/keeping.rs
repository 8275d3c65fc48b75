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
//!
//! What is asked, when, and what the answers say of the clock are decided here; the requests are the
//! cluster's, which answers [`ControlPlane`] (`cluster/clock_reads.rs`).

use std::future::Future;
use std::time::Duration;

use futures::{Stream, StreamExt};

use super::clock::Timekeeper;
use super::skew::{Reading, Source};
use crate::engine::time::{NANOS_PER_SECOND, Timestamp};

/// What keeping the clock asks of the API server.
pub trait ControlPlane: Clone + Send + Sync + 'static {
    /// The timekeeper every answer's `Date` header feeds.
    fn timekeeper(&self) -> &Timekeeper;

    /// Sends one `GET /version`, for the `Date` header of its answer. One that fails is a reading
    /// missed, nothing more.
    fn probe(&self) -> impl Future<Output = ()> + Send;

    /// The controller manager Lease's renewals (`renewTime`) as a watch of it brings them; the stream
    /// ends if the watch is not allowed (the `Date` headers are then the clock).
    fn controller_renewals(&self) -> impl Stream<Item = Renewal> + Send + 'static;
}

/// A renewal stamp of the controller manager's Lease, and how it was seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Renewal {
    /// The Lease as listed: renewed up to a renew period before.
    Listed(Timestamp),
    /// A renewal as it happens: within a watch's delivery of its write.
    Watched(Timestamp),
}

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
pub fn narrow_in_background(plane: &impl ControlPlane) -> tokio::sync::watch::Receiver<bool> {
    let (narrowed_tx, narrowed) = tokio::sync::watch::channel(false);
    let plane = plane.clone();
    tokio::spawn(async move {
        narrow(&plane).await;
        let _ = narrowed_tx.send(true);
    });
    narrowed
}

/// Narrows the estimate of the offset with rounds of probes, until it is within [`NARROW`] or
/// [`ROUNDS`] rounds were sent. A probe that fails is a reading missed, nothing more.
pub async fn narrow(plane: &impl ControlPlane) {
    let keeper = plane.timekeeper();
    if keeper.estimate().is_none() {
        plane.probe().await;
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
            plane.probe().await;
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

/// Narrows the clock again every few minutes, until the process ends: `record` follows the
/// controller manager's Lease through its own watch of Leases, and keeps the clock with this alone.
pub fn keep_probing(plane: &impl ControlPlane) {
    let probing = plane.clone();
    tokio::spawn(async move {
        let mut again = tokio::time::interval_at(probing.timekeeper().clock().instant() + AGAIN, AGAIN);
        again.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            again.tick().await;
            narrow(&probing).await;
        }
    });
}

/// Keeps the clock to the control plane's: narrows it again every few minutes, and follows the
/// controller manager's Lease while RBAC allows the watch. Runs until the process ends.
pub fn keep(plane: &impl ControlPlane) {
    keep_probing(plane);
    let renewals = plane.controller_renewals();
    let keeper = plane.timekeeper().clone();
    tokio::spawn(async move {
        futures::pin_mut!(renewals);
        while let Some(renewal) = renewals.next().await {
            let seen = keeper.clock().local_now();
            keeper.observe(match renewal {
                Renewal::Watched(stamp) => Reading::watched_lease(Source::ControllerLease, stamp, seen),
                Renewal::Listed(stamp) => Reading::lease(Source::ControllerLease, stamp, seen),
            });
        }
    });
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
