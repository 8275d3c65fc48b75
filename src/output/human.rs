//! Times and durations for people: RFC 3339 instants and `in 4m 30s` / `overdue by 12s`.
//!
//! RFC 3339 is written by hand for the years 0000–9999 (jiff past them, in `words`): `-o json` writes two
//! or three instants a pod, and formatting them through jiff's `Display` was a measured part of the
//! document's cost (docs/benchmarks-history.md, "What would close the misses", item 4); a property test
//! in `words` holds the two to the same text.

use crate::engine::time::{NANOS_PER_SECOND, Timestamp};
pub use crate::words::{duration, printable, printable_display, std_duration};

/// RFC 3339 in UTC (`Z`), with a fraction only when the instant has one.
#[must_use]
pub fn rfc3339(at: Timestamp) -> String {
    crate::words::rfc3339(at.as_nanos())
}

pub use crate::words::RFC3339_MAX;

/// [`rfc3339`]'s text written into `buffer`, for the years 0000 to 9999 (the API's range);
/// `None` for other instants.
pub fn rfc3339_ascii(at: Timestamp, buffer: &mut [u8; RFC3339_MAX]) -> Option<&[u8]> {
    crate::words::rfc3339_ascii(at.as_nanos(), buffer)
}

/// RFC 3339 in UTC to the second (rounded down): for logs and live views, where nanoseconds are noise.
#[must_use]
pub fn rfc3339_seconds(at: Timestamp) -> String {
    rfc3339(to_second(at, false))
}

/// `at` to the whole second: rounded up when `up` (the end of a window), else down.
#[must_use]
pub fn to_second(at: Timestamp, up: bool) -> Timestamp {
    let second = i128::from(NANOS_PER_SECOND);
    let rest = at.as_nanos().rem_euclid(second);
    Timestamp::from_nanos(at.as_nanos() - rest + if up && rest != 0 { second } else { 0 })
}

/// `at` as the time of day (`10:02:10`, a fraction kept) when it falls on the same UTC day as `now`,
/// else in full RFC 3339: what a table needs during an incident, in a third of the width.
#[must_use]
pub fn short_time(at: Timestamp, now: Timestamp) -> String {
    let day = |t: Timestamp| t.as_nanos().div_euclid(i128::from(NANOS_PER_SECOND) * 86_400);
    let text = rfc3339(at);
    match text.split_once('T') {
        Some((_, time)) if day(at) == day(now) => time.trim_end_matches('Z').to_owned(),
        _ => text,
    }
}

/// A count with thousands separators: `120,000`.
#[must_use]
pub fn count(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// [`duration`] without the spaces (`2m10s`), as kubectl writes ages.
#[must_use]
pub fn compact_duration(nanos: u128) -> String {
    duration(nanos).replace(' ', "")
}

/// [`countdown`] in fewer columns: `in 2m10s`, `overdue 2m50s`, `now`, `-`.
#[must_use]
pub fn compact_countdown(deadline: Option<Timestamp>, now: Timestamp) -> String {
    let Some(deadline) = deadline else { return "-".to_owned() };
    match deadline.nanos_since(now) {
        0 => "now".to_owned(),
        d if d > 0 => format!("in {}", compact_duration(d.unsigned_abs())),
        d => format!("overdue {}", compact_duration(d.unsigned_abs())),
    }
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

/// The time of day of `at` (UTC), to the second: rounded up when `up`, else down.
pub fn time_of_day(at: Timestamp, up: bool) -> String {
    let text = rfc3339(to_second(at, up));
    text.split_once('T').map_or_else(|| text.clone(), |(_, time)| time.trim_end_matches('Z').to_owned())
}

/// The end of a window that starts at `start`: its time of day (rounded up), with its date when the
/// window crosses midnight (UTC): `23:59:50–2026-11-24T00:00:20`.
pub fn until(start: Timestamp, end: Timestamp) -> String {
    let day = |t: Timestamp| t.as_nanos().div_euclid(i128::from(NANOS_PER_SECOND) * 86_400);
    let up = to_second(end, true);
    if day(up) == day(start) { time_of_day(end, true) } else { rfc3339_seconds(up).trim_end_matches('Z').to_owned() }
}

/// The short name of a condition taint (`unreachable`, `not-ready`).
pub fn short_key(key: crate::engine::lifecycle::ConditionTaint) -> &'static str {
    key.key().rsplit('/').next().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_use_one_letter_units_at_any_size() {
        // Fixed: humantime wrote `1day 8h` and `7972years 11months 8days`.
        let second = u128::from(NANOS_PER_SECOND as u64);
        assert_eq!(duration(115_200 * second), "1d 8h");
        assert_eq!(duration((86_400 * 400 + 61) * second), "400d 1m 1s");
        assert_eq!(duration(90 * second), "1m 30s");
        assert_eq!(duration(second / 4), "250ms");
        assert_eq!(duration(0), "0ms");
        assert_eq!(std_duration(std::time::Duration::from_secs(5)), "5s");
    }

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
    fn short_time_is_the_time_of_day_on_the_same_day_only() {
        let now = Timestamp::from_unix_seconds(1_795_341_600); // 2026-11-22T10:00:00Z
        assert_eq!(short_time(Timestamp::from_unix_seconds(1_795_341_730), now), "10:02:10");
        assert_eq!(short_time(Timestamp::from_unix_seconds(1_795_341_730).add_nanos(500_000_000), now), "10:02:10.5");
        assert_eq!(short_time(Timestamp::from_unix_seconds(1_795_341_600 + 14 * 3600), now), "2026-11-23T00:00:00Z");
        assert_eq!(
            short_time(Timestamp::from_unix_seconds(1_795_341_600 - 10 * 3600 - 1), now),
            "2026-11-21T23:59:59Z"
        );
    }

    #[test]
    fn counts_have_thousands_separators_and_countdowns_a_compact_form() {
        assert_eq!(
            (count(0), count(999), count(1000), count(120_000), count(1_234_567)),
            ("0".into(), "999".into(), "1,000".into(), "120,000".into(), "1,234,567".into())
        );
        let now = Timestamp::from_unix_seconds(1000);
        assert_eq!(compact_countdown(Some(Timestamp::from_unix_seconds(1130)), now), "in 2m10s");
        assert_eq!(compact_countdown(Some(Timestamp::from_unix_seconds(830)), now), "overdue 2m50s");
        assert_eq!(compact_countdown(Some(now), now), "now");
        assert_eq!(compact_countdown(None, now), "-");
    }

    #[test]
    fn rfc3339_keeps_the_precision_it_is_given() {
        assert_eq!(rfc3339(Timestamp::from_unix_seconds(0)), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(Timestamp::from_unix_seconds(0).add_nanos(500_000_000)), "1970-01-01T00:00:00.5Z");
        assert_eq!(rfc3339(Timestamp::from_unix_seconds(0).add_nanos(290_448_384)), "1970-01-01T00:00:00.290448384Z");
    }
}
