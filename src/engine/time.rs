//! Instants and durations as plain integers.
//!
//! The engine never reads a clock: every instant comes in as a [`Timestamp`] value. Nanoseconds in an
//! `i128` cover every instant the API can carry (years 0001–9999) plus any window added to it, so
//! deadline arithmetic can neither overflow nor panic.

use std::fmt;

/// Nanoseconds in one second.
pub const NANOS_PER_SECOND: i64 = 1_000_000_000;

/// An instant on the wall clock: nanoseconds since the Unix epoch (UTC).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(i128);

impl Timestamp {
    /// The instant `nanos` nanoseconds after the Unix epoch.
    #[must_use]
    pub const fn from_nanos(nanos: i128) -> Self {
        Self(nanos)
    }

    /// The instant `seconds` whole seconds after the Unix epoch.
    #[must_use]
    pub const fn from_unix_seconds(seconds: i64) -> Self {
        Self(seconds as i128 * NANOS_PER_SECOND as i128)
    }

    /// Nanoseconds since the Unix epoch.
    #[must_use]
    pub const fn as_nanos(self) -> i128 {
        self.0
    }

    /// This instant moved `nanos` nanoseconds later (earlier when negative).
    #[must_use]
    pub const fn add_nanos(self, nanos: i64) -> Self {
        Self(self.0 + nanos as i128)
    }

    /// Signed nanoseconds from `earlier` to `self`.
    #[must_use]
    pub const fn nanos_since(self, earlier: Self) -> i128 {
        self.0 - earlier.0
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0.div_euclid(NANOS_PER_SECOND as i128);
        let nanos = self.0.rem_euclid(NANOS_PER_SECOND as i128);
        if nanos == 0 { write!(f, "@{secs}s") } else { write!(f, "@{secs}.{nanos:09}s") }
    }
}
