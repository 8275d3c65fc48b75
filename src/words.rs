//! Words for people that every layer writes: text from dumps and servers made safe to print, and
//! durations (`1d 8h 3m 2s`). Uses nothing else of the crate: the cluster layer's messages and the
//! renderers write them alike.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::time::Duration;

/// Nanoseconds in a second.
const NANOS_PER_SECOND: u128 = 1_000_000_000;

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
        fn printable_text_has_no_control_characters(text in proptest::prelude::any::<String>()) {
            let shown = printable(&text);
            proptest::prop_assert!(!shown.chars().any(is_unprintable), "{:?}", shown);
        }
    }
}
