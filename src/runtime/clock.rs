//! The one place `run` reads time.
//!
//! Wall-clock instants are derived from tokio's monotonic clock and one wall reading taken at start:
//! a wall-clock jump cannot move a deadline, and under tokio's paused time (tests) the wall clock
//! advances in lockstep with virtual time.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

use crate::engine::time::Timestamp;

/// Maps tokio instants to wall-clock [`Timestamp`]s and back.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    wall: Timestamp,
    instant: Instant,
}

/// The furthest a timer is armed ahead; a later deadline re-arms when this one fires (tokio's timer
/// wheel has a horizon of about two years, and `tolerationSeconds` can be centuries).
const HORIZON: Duration = Duration::from_secs(30 * 24 * 3600);

impl Clock {
    /// A clock that reads `wall` now.
    #[must_use]
    pub fn starting_at(wall: Timestamp) -> Self {
        Self { wall, instant: Self::read() }
    }

    /// The system's wall clock.
    #[must_use]
    #[allow(clippy::disallowed_methods)]
    pub fn system() -> Self {
        let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        Self::starting_at(Timestamp::from_nanos(since_epoch.as_nanos() as i128))
    }

    /// The current wall-clock instant.
    #[must_use]
    pub fn now(&self) -> Timestamp {
        self.wall_at(Self::read())
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

    /// The tokio instant at which `at` is reached (at the latest one horizon ahead).
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

    /// The wall-clock instant of the monotonic `instant`.
    #[must_use]
    pub fn wall_at(&self, instant: Instant) -> Timestamp {
        let since = instant.saturating_duration_since(self.instant);
        self.wall.add_nanos(i64::try_from(since.as_nanos()).unwrap_or(i64::MAX))
    }
}
