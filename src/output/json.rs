//! Documents written: as indented JSON and a newline, or as YAML as serialized; and what a document
//! written field by field, without building it first, is made of (a field's name, an instant, a small
//! document indented).

use std::io::{self, Write};

use serde::Serialize;

use super::human::{RFC3339_MAX, rfc3339, rfc3339_ascii};
use crate::engine::time::Timestamp;
use crate::words::json_string as string;

/// Writes `document` as indented JSON and a newline.
pub fn write_json(document: &impl Serialize, out: &mut impl Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, document)?;
    out.write_all(b"\n")
}

/// Writes a small document (one per plan, not per pod) with serde_json, indented one level.
pub(super) fn indented(out: &mut impl Write, document: &impl Serialize) -> io::Result<()> {
    let text = serde_json::to_string_pretty(document).map_err(io::Error::other)?;
    out.write_all(text.replace('\n', "\n  ").as_bytes())
}

/// `separator`, `indent` and a field's `"name": `.
pub(super) fn field(out: &mut impl Write, separator: &[u8], indent: &[u8], name: &[u8]) -> io::Result<()> {
    out.write_all(separator)?;
    out.write_all(indent)?;
    out.write_all(name)
}

/// An instant as a JSON string (`null` for none).
pub(super) fn time(out: &mut impl Write, at: Option<Timestamp>) -> io::Result<()> {
    let Some(at) = at else { return out.write_all(b"null") };
    let mut buffer = [0; RFC3339_MAX];
    match rfc3339_ascii(at, &mut buffer) {
        Some(text) => {
            out.write_all(b"\"")?;
            out.write_all(text)?;
            out.write_all(b"\"")
        }
        None => string(out, &rfc3339(at)),
    }
}

/// Writes `document` as YAML, as it is serialized.
pub fn write_yaml(document: &impl Serialize, out: &mut impl Write) -> io::Result<()> {
    serde_saphyr::to_io_writer(out, document).map_err(io::Error::other)
}
