//! The one place the tool reads time.
//!
//! Wall-clock instants are derived from tokio's monotonic clock and one wall reading taken at start:
//! a wall-clock jump cannot move a deadline, and under tokio's paused time (tests) the wall clock
//! advances in lockstep with virtual time.
//!
//! The instants compared are the control plane's: a clock is corrected by how far this machine's
//! clock is ahead of the control plane's ([`Clock::correct`], measured by [`super::skew`]), and every
//! copy of it follows the correction.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::watch;
use tokio::time::Instant;

use super::skew::{Estimate, Reading, Skew};
use crate::engine::time::Timestamp;

/// Maps tokio instants to the control plane's wall-clock [`Timestamp`]s and back.
#[derive(Clone, Debug)]
pub struct Clock {
    wall: Timestamp,
    instant: Instant,
    correction: Arc<Correction>,
}

/// How far this machine's clock is ahead of the control plane's (nanoseconds), shared by the copies.
#[derive(Debug)]
struct Correction {
    ahead: AtomicI64,
    changed: watch::Sender<()>,
}

/// The furthest a timer is armed ahead; a later deadline re-arms when this one fires (tokio's timer
/// wheel has a horizon of about two years, and `tolerationSeconds` can be centuries).
const HORIZON: Duration = Duration::from_secs(30 * 24 * 3600);

impl Clock {
    /// A clock that reads `wall` now.
    #[must_use]
    pub fn starting_at(wall: Timestamp) -> Self {
        let correction = Correction { ahead: AtomicI64::new(0), changed: watch::Sender::new(()) };
        Self { wall, instant: Self::read(), correction: Arc::new(correction) }
    }

    /// The system's wall clock.
    #[must_use]
    #[allow(clippy::disallowed_methods)]
    pub fn system() -> Self {
        let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        Self::starting_at(Timestamp::from_nanos(since_epoch.as_nanos() as i128))
    }

    /// The current wall-clock instant (the control plane's).
    #[must_use]
    pub fn now(&self) -> Timestamp {
        self.wall_at(Self::read())
    }

    /// The current instant by this machine's clock, uncorrected.
    #[must_use]
    pub fn local_now(&self) -> Timestamp {
        self.local_at(Self::read())
    }

    /// The current wall-clock instant, as the API types write it (events, conditions, Leases).
    #[must_use]
    pub fn api_now(&self) -> jiff::Timestamp {
        jiff::Timestamp::from_nanosecond(self.now().as_nanos()).unwrap_or(jiff::Timestamp::UNIX_EPOCH)
    }

    /// tokio's monotonic clock: the one reading of time everything else derives from.
    #[allow(clippy::disallowed_methods)]
    fn read() -> Instant {
        Instant::now()
    }

    /// The tokio instant at which `at` is reached (at the latest one horizon ahead), under the
    /// correction in force: [`Clock::corrected`] says when to ask again.
    #[must_use]
    pub fn deadline(&self, at: Timestamp) -> Instant {
        let ahead = at.nanos_since(self.now()).clamp(0, HORIZON.as_nanos() as i128);
        Self::read() + Duration::from_nanos(ahead as u64)
    }
}

impl Clock {
    /// The monotonic instant now (tokio's clock: virtual under paused time).
    #[must_use]
    pub fn instant(&self) -> Instant {
        Self::read()
    }

    /// Resolves when this machine's clock (uncorrected) reads `at`: the probes that narrow the
    /// correction are timed by it.
    pub async fn reach_local(&self, at: Timestamp) {
        let ahead = at.nanos_since(self.local_now()).clamp(0, HORIZON.as_nanos() as i128);
        tokio::time::sleep_until(Self::read() + Duration::from_nanos(ahead as u64)).await;
    }

    /// The wall-clock instant (the control plane's) of the monotonic `instant`.
    #[must_use]
    pub fn wall_at(&self, instant: Instant) -> Timestamp {
        self.local_at(instant).add_nanos(-self.ahead())
    }

    fn local_at(&self, instant: Instant) -> Timestamp {
        let since = instant.saturating_duration_since(self.instant);
        self.wall.add_nanos(i64::try_from(since.as_nanos()).unwrap_or(i64::MAX))
    }

    /// How far this machine's clock is taken to be ahead of the control plane's, in nanoseconds.
    #[must_use]
    pub fn ahead(&self) -> i64 {
        self.correction.ahead.load(Ordering::Relaxed)
    }

    /// Takes this machine's clock to be `ahead` nanoseconds ahead of the control plane's (behind
    /// when negative), in every copy of this clock.
    pub fn correct(&self, ahead: i64) {
        if self.correction.ahead.swap(ahead, Ordering::Relaxed) != ahead {
            self.correction.changed.send_replace(());
        }
    }

    /// Says when a correction changes the time (`changed()` resolves): a timer armed with
    /// [`Clock::deadline`] is then re-armed. The clock holds the sender: it never closes.
    #[must_use]
    pub fn corrections(&self) -> watch::Receiver<()> {
        self.correction.changed.subscribe()
    }
}

/// A clock kept to the control plane's time by the readings the API server's answers give: each
/// reading updates the [`Skew`] and corrects the clock.
#[derive(Clone, Debug)]
pub struct Timekeeper {
    clock: Clock,
    inner: Arc<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    skew: Mutex<Skew>,
    /// Follow the estimate's upper bound (`run`: never early) rather than its middle.
    latest: AtomicBool,
}

impl Timekeeper {
    /// Keeps `clock`, following the middle of the estimate.
    #[must_use]
    pub fn new(clock: Clock) -> Self {
        Self { clock, inner: Arc::default() }
    }

    /// The clock kept.
    #[must_use]
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// From now on, follow the latest instant the control plane's clock can read (the estimate's
    /// upper bound on this machine's lead): a deadline is then reached at its instant or after, never
    /// before. For `run`, whose deletions must not come early.
    pub fn follow_latest(&self) {
        self.inner.latest.store(true, Ordering::Relaxed);
        self.apply(self.estimate());
    }

    /// Takes a reading into account.
    pub fn observe(&self, reading: Reading) {
        let estimate = {
            let mut skew = self.inner.skew.lock().expect("skew");
            skew.observe(reading);
            skew.estimate()
        };
        self.apply(estimate);
    }

    fn apply(&self, estimate: Option<Estimate>) {
        if let Some(estimate) = estimate {
            let latest = self.inner.latest.load(Ordering::Relaxed);
            self.clock.correct(if latest { estimate.hi } else { estimate.offset() });
        }
    }

    /// The estimate so far; `None` before any reading.
    #[must_use]
    pub fn estimate(&self) -> Option<Estimate> {
        self.inner.skew.lock().expect("skew").estimate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_correction_moves_every_copy_and_tells_the_timer() {
        let clock = Clock::starting_at(Timestamp::from_unix_seconds(1000));
        let copy = clock.clone();
        let mut corrections = copy.corrections();
        clock.correct(90_000_000_000);
        assert_eq!(copy.now(), Timestamp::from_unix_seconds(910));
        assert_eq!(copy.local_now(), Timestamp::from_unix_seconds(1000));
        assert!(corrections.has_changed().expect("open"), "the timer is told");
        corrections.mark_unchanged();
        clock.correct(90_000_000_000);
        assert!(!corrections.has_changed().expect("open"), "the same correction changes nothing");
        // The deadline of an instant 10 s ahead of the control plane's time is 10 s away.
        let deadline = clock.deadline(Timestamp::from_unix_seconds(920));
        assert_eq!(deadline - clock.instant(), Duration::from_secs(10));
    }

    #[tokio::test(start_paused = true)]
    async fn the_kept_clock_follows_the_middle_or_for_run_the_latest_instant() {
        use crate::time::skew::Source;
        let local = Timestamp::from_unix_seconds(1000);
        let keeper = Timekeeper::new(Clock::starting_at(local));
        // The control plane's clock stamped 909.9 s as this machine read 1000 s: at most 90.1 s ahead.
        keeper.observe(Reading::lease(Source::ControllerLease, Timestamp::from_nanos(909_900_000_000), local));
        // Without a `Date` header the Lease's renew period (2 s) bounds it from below.
        assert_eq!(keeper.clock().ahead(), 89_100_000_000);
        keeper.follow_latest();
        assert_eq!(keeper.clock().ahead(), 90_100_000_000);
        assert_eq!(keeper.clock().now(), Timestamp::from_nanos(909_900_000_000));
    }

    #[tokio::test(start_paused = true)]
    async fn reaching_a_local_instant_waits_on_this_machine_s_clock_whatever_the_correction() {
        let clock = Clock::starting_at(Timestamp::from_unix_seconds(1000));
        clock.correct(90_000_000_000);
        let start = clock.instant();
        clock.reach_local(Timestamp::from_unix_seconds(1005)).await;
        assert_eq!(clock.instant() - start, Duration::from_secs(5));
        clock.reach_local(Timestamp::from_unix_seconds(900)).await;
        assert_eq!(clock.instant() - start, Duration::from_secs(5), "a past instant is reached at once");
    }
}
