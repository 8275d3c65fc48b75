//! Words for people that every layer writes: text from dumps and servers made safe to print (and to
//! quote in JSON), durations (`1d 8h 3m 2s`) and instants (RFC 3339). Uses nothing else of the crate: the cluster layer's messages and the
//! renderers write them alike.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::time::Duration;

/// Nanoseconds in a second.
const NANOS_PER_SECOND: u128 = 1_000_000_000;

/// The longest [`rfc3339_ascii`] text: `9999-12-31T23:59:59.999999999Z`.
pub const RFC3339_MAX: usize = 30;

/// The instant `nanos` (nanoseconds since 1970-01-01T00:00:00Z) as RFC 3339 in UTC (`Z`), with a
/// fraction only when it has one: written by hand for the years 0000 to 9999 ([`rfc3339_ascii`]),
/// through jiff past them (clamped to its range).
#[must_use]
pub fn rfc3339(nanos: i128) -> String {
    let mut buffer = [0; RFC3339_MAX];
    match rfc3339_ascii(nanos, &mut buffer) {
        Some(text) => String::from_utf8_lossy(text).into_owned(),
        None => rfc3339_jiff(nanos),
    }
}

/// [`rfc3339`] through jiff, for any instant (clamped to jiff's range).
fn rfc3339_jiff(nanos: i128) -> String {
    let clamped = nanos.clamp(jiff::Timestamp::MIN.as_nanosecond(), jiff::Timestamp::MAX.as_nanosecond());
    jiff::Timestamp::from_nanosecond(clamped).map_or_else(|_| "?".to_owned(), |t| t.to_string())
}

/// The instant `nanos` (nanoseconds since 1970-01-01T00:00:00Z) as RFC 3339 in UTC (`Z`), with a
/// fraction only when it has one, written into `buffer`, for the years 0000 to 9999 (the API's
/// range); `None` for other instants.
pub fn rfc3339_ascii(nanos: i128, buffer: &mut [u8; RFC3339_MAX]) -> Option<&[u8]> {
    /// 0000-01-01T00:00:00Z.
    const YEAR_ZERO: i128 = -62_167_219_200 * NANOS_PER_SECOND as i128;
    // Past jiff's last instant `rfc3339` prints that instant; leave that to it.
    if nanos < YEAR_ZERO || nanos > jiff::Timestamp::MAX.as_nanosecond() {
        return None;
    }
    const SECOND: i128 = NANOS_PER_SECOND as i128;
    let seconds = i64::try_from(nanos.div_euclid(SECOND)).ok()?;
    let fraction = i64::try_from(nanos.rem_euclid(SECOND)).ok()?;
    let (days, time) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (year, month, day) = civil(days);
    let mut len = 0;
    write_digits(buffer, &mut len, year, 4, b'-');
    write_digits(buffer, &mut len, i64::from(month), 2, b'-');
    write_digits(buffer, &mut len, i64::from(day), 2, b'T');
    write_digits(buffer, &mut len, time / 3600, 2, b':');
    write_digits(buffer, &mut len, time / 60 % 60, 2, b':');
    write_digits(buffer, &mut len, time % 60, 2, 0);
    if fraction != 0 {
        buffer[len] = b'.';
        len += 1;
        let mut width = 9;
        let mut fraction = fraction;
        while fraction % 10 == 0 {
            fraction /= 10;
            width -= 1;
        }
        write_digits(buffer, &mut len, fraction, width, 0);
    }
    buffer[len] = b'Z';
    Some(&buffer[..=len])
}

/// Writes `value` as `width` decimal digits (zero-padded) at `len`, then `end` unless it is 0.
fn write_digits(buffer: &mut [u8], len: &mut usize, mut value: i64, width: usize, end: u8) {
    for i in (0..width).rev() {
        buffer[*len + i] = b'0' + (value % 10) as u8;
        value /= 10;
    }
    *len += width;
    if end != 0 {
        buffer[*len] = end;
        *len += 1;
    }
}

/// The proleptic Gregorian date `days` after 1970-01-01 (H. Hinnant's `civil_from_days`).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * shifted_month + 2) / 5 + 1) as u32;
    let month = if shifted_month < 10 { shifted_month + 3 } else { shifted_month - 9 } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// A duration in days, hours, minutes and seconds (`1d 8h 3m 2s`), whole seconds, or milliseconds
/// below one second (`250ms`): one set of unit letters everywhere, at any size (humantime would
/// say `1day 8h` and `3years 2months`).
#[must_use]
pub fn duration(nanos: u128) -> String {
    let nanos_per_second = NANOS_PER_SECOND;
    if nanos < nanos_per_second {
        return format!("{}ms", nanos / 1_000_000);
    }
    let seconds = nanos / nanos_per_second;
    let parts = [(seconds / 86_400, "d"), (seconds / 3600 % 24, "h"), (seconds / 60 % 60, "m"), (seconds % 60, "s")];
    let shown: Vec<String> = parts.iter().filter(|(n, _)| *n > 0).map(|(n, unit)| format!("{n}{unit}")).collect();
    shown.join(" ")
}

/// A [`Duration`] as [`duration`] writes it (`5s`, `1m 30s`).
#[must_use]
pub fn std_duration(value: Duration) -> String {
    duration(value.as_nanos())
}

/// `text` with every control character (C0, DEL, C1) and every bidirectional-text control escaped
/// as Rust writes them (`\n`, `\u{1b}`, `\u{202e}`): names, taint keys and messages come from dumps
/// and servers, and printed raw they could break rows or send escape sequences to the terminal.
#[must_use]
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unprintable) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_unprintable(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`printable`] of anything displayable.
#[must_use]
pub fn printable_display(value: &impl std::fmt::Display) -> String {
    printable(&value.to_string()).into_owned()
}

/// Control characters, and the marks and overrides that reorder text (the "Trojan Source" set).
fn is_unprintable(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` as a JSON string, escaped as serde_json escapes it.
pub fn json_string(out: &mut impl std::io::Write, text: &str) -> std::io::Result<()> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = text.as_bytes();
    out.write_all(b"\"")?;
    // Most strings need no escape: one pass without branches (it vectorizes) says so.
    if !bytes.iter().fold(false, |any, &b| any | (b < 0x20) | (b == b'"') | (b == b'\\')) {
        out.write_all(bytes)?;
        return out.write_all(b"\"");
    }
    let mut start = 0;
    for (i, &byte) in bytes.iter().enumerate() {
        let escape: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0x00..=0x1f => &[b'\\', b'u', b'0', b'0', HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 0xf)]],
            _ => continue,
        };
        out.write_all(&bytes[start..i])?;
        out.write_all(escape)?;
        start = i + 1;
    }
    out.write_all(&bytes[start..])?;
    out.write_all(b"\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_escapes_control_and_bidi_characters_only() {
        assert_eq!(printable("web-0 zoné ✓"), "web-0 zoné ✓");
        assert!(matches!(printable("plain"), Cow::Borrowed(_)));
        assert_eq!(printable("x\n\u{1b}[31mred\t\r\u{7f}\u{9b}\u{202e}"), r"x\n\u{1b}[31mred\t\r\u{7f}\u{9b}\u{202e}");
    }

    proptest::proptest! {
        #[test]
        fn rfc3339_writes_what_jiff_writes(
            seconds in proptest::prop_oneof![
                -62_167_219_300i64..-62_167_219_100,
                -62_167_219_200i64..253_402_300_800,
                1_700_000_000i64..1_900_000_000,
                253_402_207_000i64..253_402_300_800,
                proptest::prelude::any::<i64>(),
            ],
            nanos in proptest::prop_oneof![
                proptest::prelude::Just(0i64),
                proptest::prelude::Just(500_000_000),
                proptest::prelude::Just(796_765_000),
                0i64..1_000_000_000,
            ],
        ) {
            let at = i128::from(seconds) * NANOS_PER_SECOND as i128 + i128::from(nanos);
            proptest::prop_assert_eq!(rfc3339(at), rfc3339_jiff(at));
        }

        #[test]
        fn printable_text_has_no_control_characters(text in proptest::prelude::any::<String>()) {
            let shown = printable(&text);
            proptest::prop_assert!(!shown.chars().any(is_unprintable), "{:?}", shown);
        }
    }
}
