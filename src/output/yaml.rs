//! YAML written by hand (a fix's snippet, a cluster's profile): scalars that read back as the
//! strings they were made from.

/// A label's key or value as a YAML scalar that reads back as the same string: plain when it is a
/// label's usual shape and reads as no number, boolean or null; else double-quoted, escaped.
pub(super) fn yaml_scalar(text: &str) -> String {
    let usual = text.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'/'))
        && text.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && text.bytes().last().is_some_and(|b| b.is_ascii_alphanumeric());
    const WORDS: &[&str] = &["y", "n", "yes", "no", "on", "off", "true", "false", "null"];
    if usual && !WORDS.iter().any(|word| text.eq_ignore_ascii_case(word)) {
        text.to_owned()
    } else {
        serde_json::to_string(text).unwrap_or_default()
    }
}
