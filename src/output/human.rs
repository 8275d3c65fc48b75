//! Times and durations for people: RFC 3339 instants and `in 4m 30s` / `overdue by 12s`.

use std::time::Duration;

use crate::engine::time::{NANOS_PER_SECOND, Timestamp};

/// RFC 3339 in UTC (`Z`), with a fraction only when the instant has one.
#[must_use]
pub fn rfc3339(at: Timestamp) -> String {
    let clamped = at.as_nanos().clamp(jiff::Timestamp::MIN.as_nanosecond(), jiff::Timestamp::MAX.as_nanosecond());
    jiff::Timestamp::from_nanosecond(clamped).map_or_else(|_| "?".to_owned(), |t| t.to_string())
}

/// RFC 3339 in UTC to the second (rounded down): for logs and live views, where nanoseconds are noise.
#[must_use]
pub fn rfc3339_seconds(at: Timestamp) -> String {
    let nanos = at.as_nanos();
    rfc3339(Timestamp::from_nanos(nanos - nanos.rem_euclid(i128::from(NANOS_PER_SECOND))))
}

/// A duration as humantime prints it: whole seconds, or milliseconds below one second.
#[must_use]
pub fn duration(nanos: u128) -> String {
    let nanos_per_second = NANOS_PER_SECOND as u128;
    let shown = if nanos >= nanos_per_second {
        Duration::from_secs(u64::try_from(nanos / nanos_per_second).unwrap_or(u64::MAX))
    } else {
        Duration::from_millis(u64::try_from(nanos / 1_000_000).unwrap_or(0))
    };
    humantime::format_duration(shown).to_string()
}

/// `in 4m 30s`, `overdue by 12s`, `now`, or `-` without a deadline.
#[must_use]
pub fn countdown(deadline: Option<Timestamp>, now: Timestamp) -> String {
    let Some(deadline) = deadline else { return "-".to_owned() };
    let delta = deadline.nanos_since(now);
    match delta {
        0 => "now".to_owned(),
        d if d > 0 => format!("in {}", duration(d.unsigned_abs())),
        d => format!("overdue by {}", duration(d.unsigned_abs())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn countdown_reads_like_a_person_would_say_it() {
        let now = Timestamp::from_unix_seconds(1000);
        assert_eq!(countdown(Some(Timestamp::from_unix_seconds(1270)), now), "in 4m 30s");
        assert_eq!(countdown(Some(Timestamp::from_unix_seconds(988)), now), "overdue by 12s");
        assert_eq!(countdown(Some(now), now), "now");
        assert_eq!(countdown(Some(now.add_nanos(290_448_384)), now), "in 290ms");
        assert_eq!(countdown(None, now), "-");
    }

    #[test]
    fn rfc3339_keeps_the_precision_it_is_given() {
        assert_eq!(rfc3339(Timestamp::from_unix_seconds(0)), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(Timestamp::from_unix_seconds(0).add_nanos(500_000_000)), "1970-01-01T00:00:00.5Z");
        assert_eq!(rfc3339(Timestamp::from_unix_seconds(0).add_nanos(290_448_384)), "1970-01-01T00:00:00.290448384Z");
    }
}
