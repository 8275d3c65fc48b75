//! The pace of `run`'s writes: one token bucket shared by every write (the status PATCH, the DELETE,
//! the event POSTs), as client-go's `--kube-api-qps`/`--kube-api-burst` limiter paces
//! kube-controller-manager, and the server's pushback (429 or 503 with `Retry-After`, which API
//! Priority and Fairness rejections are), which holds every write until the instant it names.
//!
//! Each write reserves its slot when it asks ([`Throttle::admit`]), so writes go out in the order they
//! asked: deletions due at the same instant are handed out in deadline order, and keep it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::engine::time::Timestamp;
use crate::time::Clock;

/// `--qps`'s default: writes per second once the burst is spent. Upstream's kube-controller-manager
/// allows 20 (`--kube-api-qps`), shared with every other controller in it; this one only deletes.
pub const DEFAULT_QPS: f64 = 10.0;
/// `--burst`'s default: writes that may go at once (kube-controller-manager's `--kube-api-burst`: 30).
pub const DEFAULT_BURST: u32 = 20;

/// The longest `Retry-After` honoured: a server asking for more is waited on this long, then asked
/// again (a misconfigured proxy must not stop deletions for hours).
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(300);

/// The writes one deletion makes: the status PATCH and the DELETE (its `Marking` event is queued for
/// the events' writer, and counted as an event queued: [`Throttle::event_queued`]).
pub const WRITES_PER_DELETION: usize = 2;
/// The writes one eviction makes (`--mode evict`): the eviction POST (the API server sets the
/// `DisruptionTarget` condition itself).
pub const WRITES_PER_EVICTION: usize = 1;

/// What waits for the limiter, and when it should all have gone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backlog {
    /// Deletions due and not yet done.
    pub deletions: usize,
    /// Writes waiting for their turn (the limiter or the server's pushback).
    pub writes: usize,
    /// When the last write of those deletions is expected to go.
    pub drains_at: Timestamp,
}

/// The shared limiter; clones share one bucket.
#[derive(Clone, Debug)]
pub struct Throttle {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    clock: Clock,
    /// Time between writes once the burst is spent; `None`: unlimited.
    interval: Option<Duration>,
    /// How far ahead of its steady slot a write may go (`(burst - 1) * interval`).
    tolerance: Duration,
    state: Mutex<State>,
    waiting: AtomicUsize,
    /// Deletions due and not yet done.
    deletions: AtomicUsize,
    /// Events queued for the events' writer and not yet written.
    events: AtomicUsize,
    /// The writes each deletion makes, for the backlog's drain time.
    writes_per_deletion: AtomicUsize,
}

#[derive(Debug, Default)]
struct State {
    /// The next write's steady slot (GCRA's theoretical arrival time).
    next: Option<Instant>,
    /// The latest slot handed out.
    last: Option<Instant>,
    /// No write goes before this instant (the server's `Retry-After`).
    hold: Option<Instant>,
    /// When the server last pushed back.
    pushed_back: Option<Instant>,
}

impl Throttle {
    /// At most `qps` writes per second after a burst of `burst`; `qps == 0`: unlimited.
    #[must_use]
    pub fn new(clock: Clock, qps: f64, burst: u32) -> Self {
        let interval = (qps > 0.0 && qps.is_finite()).then(|| Duration::from_secs_f64(1.0 / qps));
        let tolerance = interval.map_or(Duration::ZERO, |interval| interval * burst.max(1).saturating_sub(1));
        let inner = Inner {
            clock,
            interval,
            tolerance,
            state: Mutex::default(),
            waiting: AtomicUsize::new(0),
            deletions: AtomicUsize::new(0),
            events: AtomicUsize::new(0),
            writes_per_deletion: AtomicUsize::new(WRITES_PER_DELETION),
        };
        Self { inner: Arc::new(inner) }
    }

    /// Counts `writes` writes per deletion in the backlog's drain time (default:
    /// [`WRITES_PER_DELETION`]); every clone shares it.
    #[must_use]
    pub fn with_writes_per_deletion(self, writes: usize) -> Self {
        self.inner.writes_per_deletion.store(writes.max(1), Ordering::Relaxed);
        self
    }

    /// No limit, and no pushback unless the server sends some.
    #[must_use]
    pub fn unlimited(clock: Clock) -> Self {
        Self::new(clock, 0.0, 0)
    }

    /// Reserves the next slot: when this write may go.
    fn reserve(&self) -> Instant {
        let now = self.inner.clock.instant();
        let mut state = self.inner.state.lock().expect("throttle state");
        let earliest = state.hold.map_or(now, |hold| hold.max(now));
        let at = match self.inner.interval {
            None => earliest,
            Some(interval) => {
                let next = state.next.map_or(earliest, |next| next.max(earliest));
                state.next = Some(next + interval);
                next.checked_sub(self.inner.tolerance).map_or(earliest, |at| at.max(earliest))
            }
        };
        state.last = Some(state.last.map_or(at, |last| last.max(at)));
        at
    }

    /// Waits for this write's turn: its slot in the bucket, and the end of any pushback (also one
    /// that arrives while it waits).
    pub async fn admit(&self) {
        let at = self.reserve();
        if at <= self.inner.clock.instant() && self.held_until().is_none() {
            return;
        }
        let _waiting = Waiting::enter(&self.inner.waiting);
        tokio::time::sleep_until(at).await;
        while let Some(hold) = self.held_until() {
            tokio::time::sleep_until(hold).await;
        }
    }

    /// The server asked to wait `retry_after` (capped at [`MAX_RETRY_AFTER`]): no write goes before
    /// then, and the bucket starts empty afterwards, so the backlog resumes at the steady rate.
    pub fn push_back(&self, retry_after: Duration) {
        let now = self.inner.clock.instant();
        let hold = now + retry_after.min(MAX_RETRY_AFTER);
        let mut state = self.inner.state.lock().expect("throttle state");
        state.hold = Some(state.hold.map_or(hold, |held| held.max(hold)));
        state.pushed_back = Some(now);
        if self.inner.interval.is_some() {
            let resume = hold + self.inner.tolerance;
            state.next = Some(state.next.map_or(resume, |next| next.max(resume)));
        }
    }

    /// The end of the server's pushback, while it lasts.
    #[must_use]
    pub fn held_until(&self) -> Option<Instant> {
        let now = self.inner.clock.instant();
        self.inner.state.lock().expect("throttle state").hold.filter(|hold| *hold > now)
    }

    /// The clock the writes are paced by (virtual under paused time); conditions and events are
    /// stamped from it.
    #[must_use]
    pub fn clock(&self) -> Clock {
        self.inner.clock.clone()
    }

    /// The monotonic instant now, for [`Throttle::pushed_back_since`].
    #[must_use]
    pub fn now(&self) -> Instant {
        self.inner.clock.instant()
    }

    /// Whether the server pushed back at or after `since`.
    #[must_use]
    pub fn pushed_back_since(&self, since: Instant) -> bool {
        self.inner.state.lock().expect("throttle state").pushed_back.is_some_and(|at| at >= since)
    }

    /// Counts a deletion as due until the guard is dropped (when it is done).
    #[must_use]
    pub fn deletion_due(&self) -> DeletionDue {
        self.inner.deletions.fetch_add(1, Ordering::Relaxed);
        DeletionDue(self.inner.clone())
    }

    /// Counts an event as queued until the guard is dropped (when the events' writer has written
    /// it): its write is still to go through the limiter.
    #[must_use]
    pub fn event_queued(&self) -> QueuedEvent {
        self.inner.events.fetch_add(1, Ordering::Relaxed);
        QueuedEvent(self.inner.clone())
    }

    /// The backlog while writes wait for their turn (`None`: none waits, the limiter is not what
    /// holds deletions back). The drain time counts the writes yet to ask for their slot: the due
    /// deletions', [`WRITES_PER_DELETION`] each, and the queued events' (their writer asks for one
    /// slot at a time, between the deletions' writes), at the steady rate after the last slot
    /// handed out.
    #[must_use]
    pub fn backlog(&self) -> Option<Backlog> {
        let writes = self.inner.waiting.load(Ordering::Relaxed);
        if writes == 0 {
            return None;
        }
        let deletions = self.inner.deletions.load(Ordering::Relaxed);
        let state = self.inner.state.lock().expect("throttle state");
        let now = self.inner.clock.instant();
        let last = state.last.into_iter().chain(state.hold).max().unwrap_or(now).max(now);
        let events = self.inner.events.load(Ordering::Relaxed);
        let unasked =
            (deletions * self.inner.writes_per_deletion.load(Ordering::Relaxed) + events).saturating_sub(writes);
        let rest = self.inner.interval.unwrap_or_default() * u32::try_from(unasked).unwrap_or(u32::MAX);
        Some(Backlog { deletions, writes, drains_at: self.inner.clock.wall_at(last + rest) })
    }
}

/// A deletion counted as due (see [`Throttle::deletion_due`]).
#[derive(Debug)]
pub struct DeletionDue(Arc<Inner>);

impl Drop for DeletionDue {
    fn drop(&mut self) {
        self.0.deletions.fetch_sub(1, Ordering::Relaxed);
    }
}

/// An event counted as queued (see [`Throttle::event_queued`]).
#[derive(Debug)]
pub struct QueuedEvent(Arc<Inner>);

impl Drop for QueuedEvent {
    fn drop(&mut self) {
        self.0.events.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Counts a write as waiting until it goes (or is given up).
struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    fn enter(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::Relaxed);
        Self(count)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
// The tests measure tokio's paused time directly.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    fn clock() -> Clock {
        Clock::starting_at(Timestamp::from_unix_seconds(1_795_341_600))
    }

    /// When each of `n` writes, asked for at once, goes, in milliseconds after the start.
    async fn send_times(throttle: &Throttle, n: usize) -> Vec<u128> {
        let start = Instant::now();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        for i in 0..n {
            let (throttle, tx) = (throttle.clone(), tx.clone());
            tokio::spawn(async move {
                throttle.admit().await;
                let _ = tx.send((i, Instant::now().duration_since(start).as_millis()));
            });
        }
        drop(tx);
        let mut times = Vec::new();
        while let Some(sent) = rx.recv().await {
            times.push(sent);
        }
        times.sort_by_key(|(i, at)| (*at, *i));
        assert!(times.windows(2).all(|w| w[0].0 < w[1].0), "writes went out of order: {times:?}");
        times.into_iter().map(|(_, at)| at).collect()
    }

    #[tokio::test(start_paused = true)]
    async fn throttle_lets_the_burst_go_then_one_write_per_interval() {
        let throttle = Throttle::new(clock(), 2.0, 3);
        assert_eq!(send_times(&throttle, 6).await, [0, 0, 0, 500, 1000, 1500]);
    }

    #[tokio::test(start_paused = true)]
    async fn throttle_with_zero_qps_is_unlimited() {
        let throttle = Throttle::unlimited(clock());
        assert_eq!(send_times(&throttle, 100).await, vec![0; 100]);
    }

    #[tokio::test(start_paused = true)]
    async fn pushback_holds_every_write_until_retry_after_then_resumes_at_the_steady_rate() {
        let throttle = Throttle::new(clock(), 2.0, 3);
        throttle.push_back(Duration::from_secs(4));
        assert_eq!(send_times(&throttle, 3).await, [4000, 4500, 5000]);
        let unlimited = Throttle::unlimited(clock());
        unlimited.push_back(Duration::from_secs(4));
        assert_eq!(send_times(&unlimited, 3).await, [4000, 4000, 4000]);
    }

    #[tokio::test(start_paused = true)]
    async fn pushback_arriving_while_writes_wait_holds_them_too() {
        let throttle = Throttle::unlimited(clock());
        throttle.push_back(Duration::from_secs(1));
        let waiter = {
            let throttle = throttle.clone();
            tokio::spawn(async move {
                throttle.admit().await;
                Instant::now()
            })
        };
        tokio::task::yield_now().await;
        let start = Instant::now();
        throttle.push_back(Duration::from_secs(3));
        assert_eq!(waiter.await.unwrap().duration_since(start), Duration::from_secs(3));
    }

    #[tokio::test(start_paused = true)]
    async fn backlog_counts_the_waiting_writes_and_when_they_drain() {
        let throttle = Throttle::new(clock(), 1.0, 1);
        assert_eq!(throttle.backlog(), None);
        for _ in 0..4 {
            let throttle = throttle.clone();
            tokio::spawn(async move { throttle.admit().await });
        }
        tokio::task::yield_now().await;
        // The first went at once; three wait, the last for 3 s.
        let backlog = throttle.backlog().expect("writes wait");
        assert_eq!((backlog.deletions, backlog.writes), (0, 3));
        assert_eq!(backlog.drains_at, Timestamp::from_unix_seconds(1_795_341_603));
        // Two deletions due and their two events queued: six writes, three of them already
        // waiting; three more to ask for.
        let due = [throttle.deletion_due(), throttle.deletion_due()];
        let queued = [throttle.event_queued(), throttle.event_queued()];
        let backlog = throttle.backlog().expect("writes wait");
        assert_eq!((backlog.deletions, backlog.writes), (2, 3));
        assert_eq!(backlog.drains_at, Timestamp::from_unix_seconds(1_795_341_606));
        drop(queued);
        let backlog = throttle.backlog().expect("writes wait");
        assert_eq!(backlog.drains_at, Timestamp::from_unix_seconds(1_795_341_604));
        drop(due);
        assert_eq!(throttle.backlog().map(|b| b.deletions), Some(0));
    }
}
