//! A record's files (what `record` wrote, or a kube-apiserver audit log) as `review` and the
//! commands reading a record `--at` an instant take them (docs/review.md).

use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};

/// The `record` line a record's every file begins with.
const FIRST: &str = "\"record\":\"taint-evict/v1\"";

/// A record's files, in the order of their names: a directory's `.jsonl` files, or the one file.
///
/// # Errors
/// A file that cannot be read, or a directory without a `.jsonl` file.
pub fn files(path: &str) -> Result<Vec<(String, String)>> {
    let read = |name: String| std::fs::read_to_string(&name).map(|text| (name.clone(), text));
    if !Path::new(path).is_dir() {
        return Ok(vec![read(path.to_owned()).map_err(|e| Error::read_failed(path, &e))?]);
    }
    let names = jsonl(path).map_err(|e| Error::read_failed(path, &e))?;
    if names.is_empty() {
        return Err(Error::Usage(format!("{path}: no record in it (no .jsonl file)")));
    }
    names.into_iter().map(|name| read(name.clone()).map_err(|e| Error::read_failed(&name, &e))).collect()
}

/// The `.jsonl` files of a directory, sorted by name.
fn jsonl(dir: &str) -> std::io::Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(std::result::Result::ok)
        .map(|entry| entry.path())
        .filter(|file| file.extension().is_some_and(|ext| ext == "jsonl"))
        .map(|file| file.to_string_lossy().into_owned())
        .collect();
    names.sort();
    Ok(names)
}

/// Whether `path` is a record `record` wrote: a file whose first line is a `record` line, or a
/// directory whose first `.jsonl` file is one. Anything that cannot be read is not (its reader says
/// why).
#[must_use]
pub fn is_record(path: &str) -> bool {
    let first = if Path::new(path).is_dir() {
        match jsonl(path).ok().and_then(|names| names.into_iter().next()) {
            Some(first) => first,
            None => return false,
        }
    } else {
        path.to_owned()
    };
    let Ok(file) = std::fs::File::open(&first) else { return false };
    let mut start = Vec::with_capacity(1024);
    if file.take(1024).read_to_end(&mut start).is_err() {
        return false;
    }
    let line = start.split(|&byte| byte == b'\n').next().unwrap_or_default();
    line.starts_with(b"{\"at\":") && String::from_utf8_lossy(line).contains(FIRST)
}
