//! Instants and durations as plain integers.
//!
//! The engine never reads a clock: every instant comes in as a [`Timestamp`] value. Nanoseconds in an
//! `i128` cover every instant the API can carry (years 0001–9999) plus any window added to it, so
//! deadline arithmetic can neither overflow nor panic.

use std::fmt;
use std::num::NonZeroI64;

/// Nanoseconds in one second.
pub const NANOS_PER_SECOND: i64 = 1_000_000_000;

/// An instant on the wall clock: nanoseconds since the Unix epoch (UTC).
///
/// The `i128` is kept as its high and low words: the same order (signed high word first, then the
/// unsigned low one), with the alignment of a `u64` rather than an `i128`'s 16 bytes. The high word is
/// stored one further from zero (never zero: `high` ≥ 0 as `high + 1`), which leaves `Option` a niche:
/// an `Option<Timestamp>` takes 16 bytes (24 without the niche, 32 as an `i128`) in every pod the engine
/// and its plans hold. An instant in the last 2⁶⁴ ns before `i128::MAX` (10²¹ years away) reads back
/// 2⁶⁴ ns earlier.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    high: NonZeroI64,
    low: u64,
}

impl Default for Timestamp {
    /// The Unix epoch.
    fn default() -> Self {
        Self::from_nanos(0)
    }
}

impl Timestamp {
    /// The instant `nanos` nanoseconds after the Unix epoch.
    #[must_use]
    pub const fn from_nanos(nanos: i128) -> Self {
        // Splitting an i128 into its words: the casts keep exactly the bits each word holds.
        let high = (nanos >> 64) as i64;
        let stored = if high < 0 { high } else { high.saturating_add(1) };
        match NonZeroI64::new(stored) {
            Some(high) => Self { high, low: nanos as u64 },
            // `stored` is negative or at least 1.
            None => unreachable!(),
        }
    }

    /// The instant `seconds` whole seconds after the Unix epoch.
    #[must_use]
    pub const fn from_unix_seconds(seconds: i64) -> Self {
        Self::from_nanos(seconds as i128 * NANOS_PER_SECOND as i128)
    }

    /// Nanoseconds since the Unix epoch.
    #[must_use]
    pub const fn as_nanos(self) -> i128 {
        let high = self.high.get();
        let high = if high < 0 { high } else { high - 1 };
        ((high as i128) << 64) | self.low as i128
    }

    /// This instant moved `nanos` nanoseconds later (earlier when negative).
    #[must_use]
    pub const fn add_nanos(self, nanos: i64) -> Self {
        Self::from_nanos(self.as_nanos() + nanos as i128)
    }

    /// Signed nanoseconds from `earlier` to `self`.
    #[must_use]
    pub const fn nanos_since(self, earlier: Self) -> i128 {
        self.as_nanos() - earlier.as_nanos()
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.as_nanos().div_euclid(NANOS_PER_SECOND as i128);
        let nanos = self.as_nanos().rem_euclid(NANOS_PER_SECOND as i128);
        if nanos == 0 { write!(f, "@{secs}s") } else { write!(f, "@{secs}.{nanos:09}s") }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_keep_their_value_and_order_across_the_whole_range() {
        let values = [
            i128::MIN / 2,
            -(1 << 64) - 1,
            -(1 << 64),
            -(1 << 63),
            -1,
            0,
            1,
            i128::from(u64::MAX),
            1 << 64,
            (1 << 64) + 1,
            253_402_300_799 * i128::from(NANOS_PER_SECOND),
            i128::MAX / 2,
        ];
        for (i, &a) in values.iter().enumerate() {
            assert_eq!(Timestamp::from_nanos(a).as_nanos(), a);
            for &b in &values[i..] {
                assert_eq!(Timestamp::from_nanos(a).cmp(&Timestamp::from_nanos(b)), a.cmp(&b), "{a} vs {b}");
            }
        }
        assert_eq!(Timestamp::from_nanos(-1).add_nanos(1), Timestamp::default());
        assert_eq!(size_of::<Option<Timestamp>>(), 16);
    }
}
