//! Gathering a snapshot and the evaluation instant for `plan` and `explain`.

use std::io::Read;

use crate::engine::replay::Snapshot;
use crate::engine::time::Timestamp;
use crate::error::{Error, Result};
use crate::source::file;

use super::InputArgs;

/// A snapshot and a name for where it came from (for messages).
pub struct Loaded {
    /// The snapshot.
    pub snapshot: Snapshot,
    /// `dump.json`, `stdin`, …
    pub origin: String,
}

/// Reads the snapshot the flags name.
pub fn load(args: &InputArgs) -> Result<Loaded> {
    let Some(path) = args.file.as_deref() else { return Err(Error::NoInput) };
    let (origin, bytes) = if path == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .map_err(|e| Error::ReadFailed { path: "stdin".into(), reason: e.to_string() })?;
        ("stdin".to_owned(), bytes)
    } else {
        let bytes = std::fs::read(path).map_err(|e| Error::ReadFailed { path: path.into(), reason: io_reason(&e) })?;
        (path.to_owned(), bytes)
    };
    let snapshot = file::read(&bytes).map_err(|source| Error::BadDump { path: origin.clone(), source })?;
    Ok(Loaded { snapshot, origin })
}

/// The OS error without Rust's `(os error 2)` suffix, lowercase as the rest of our messages.
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        std::io::ErrorKind::IsADirectory => "it is a directory".into(),
        _ => {
            let text = e.to_string();
            text.split(" (os error").next().unwrap_or(&text).to_lowercase()
        }
    }
}

/// `--now`, or the current wall-clock time: the only place `plan` reads the clock.
#[must_use]
pub fn now(args: &InputArgs) -> Timestamp {
    args.now.unwrap_or_else(|| Timestamp::from_nanos(jiff::Timestamp::now().as_nanosecond()))
}
