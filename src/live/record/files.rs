//! The record's files in `--out`: named so they sort by time (`record-20261129T101500Z-0001.jsonl`,
//! the instant the file began, the control plane's, and the run's count), each up to `--file-size`,
//! the oldest removed past `--max-size` or `--max-age` (docs/review.md, "The record"). Lines are
//! written whole: they are gathered and written a buffer of whole lines at a time.
//!
//! Owns: [`Files`] and which files go ([`to_remove`]). Uses: the engine's instants, the limits' config.

use std::fs::{File, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use crate::engine::time::Timestamp;

/// How much is gathered before it is written.
const BUFFER: usize = 1 << 16;
/// Every record file's name begins so, and ends with [`SUFFIX`].
const PREFIX: &str = "record-";
const SUFFIX: &str = ".jsonl";

/// How large the files grow, and how long and how much of them is kept.
pub use crate::config::RecordLimits as Limits;

/// The file being written, and the directory.
pub struct Files {
    dir: PathBuf,
    limits: Limits,
    file: File,
    path: PathBuf,
    /// Bytes written to the file, and gathered for it.
    size: u64,
    buffer: Vec<u8>,
    /// The files this run began.
    count: u32,
}

/// Why a file could not be written: its path and the error.
#[derive(Debug)]
pub struct Failed {
    /// The file, or the directory.
    pub path: PathBuf,
    /// The operating system's error.
    pub error: io::Error,
}

fn failed(path: &Path) -> impl FnOnce(io::Error) -> Failed + '_ {
    move |error| Failed { path: path.to_owned(), error }
}

impl Files {
    /// Creates `dir` if it is missing and begins its first file at `at`.
    ///
    /// # Errors
    /// The directory or the file cannot be created.
    pub fn create(dir: &Path, limits: Limits, at: Timestamp) -> Result<Self, Failed> {
        std::fs::create_dir_all(dir).map_err(failed(dir))?;
        let (file, path, count) = open(dir, at, 1)?;
        Ok(Self { dir: dir.to_owned(), limits, file, path, size: 0, buffer: Vec::with_capacity(BUFFER), count })
    }

    /// The file being written.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Adds whole lines, written once a buffer's worth has gathered.
    ///
    /// # Errors
    /// The file cannot be written.
    pub fn push(&mut self, lines: &[u8]) -> Result<(), Failed> {
        self.size += lines.len() as u64;
        self.buffer.extend_from_slice(lines);
        if self.buffer.len() >= BUFFER { self.flush() } else { Ok(()) }
    }

    /// Writes what was gathered.
    ///
    /// # Errors
    /// The file cannot be written.
    pub fn flush(&mut self) -> Result<(), Failed> {
        if !self.buffer.is_empty() {
            self.file.write_all(&self.buffer).map_err(failed(&self.path))?;
            self.buffer.clear();
        }
        Ok(())
    }

    /// Whether the file has reached `--file-size`.
    #[must_use]
    pub fn full(&self) -> bool {
        self.size >= self.limits.file_size
    }

    /// Ends the file and begins the next at `at`.
    ///
    /// # Errors
    /// The file cannot be written, or the next created.
    pub fn next(&mut self, at: Timestamp) -> Result<(), Failed> {
        self.flush()?;
        let (file, path, count) = open(&self.dir, at, self.count + 1)?;
        (self.file, self.path, self.count, self.size) = (file, path, count, 0);
        Ok(())
    }

    /// Removes the oldest files past `--max-size` or `--max-age` at `now`, never the one being
    /// written; what was removed.
    ///
    /// # Errors
    /// The directory cannot be read, or a file removed.
    pub fn prune(&self, now: Timestamp) -> Result<Vec<PathBuf>, Failed> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(&self.dir).map_err(failed(&self.dir))? {
            let entry = entry.map_err(failed(&self.dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(began) = began(&name) else { continue };
            let size = if entry.path() == self.path {
                self.size
            } else {
                entry.metadata().map_err(failed(&entry.path()))?.len()
            };
            files.push(Kept { name, began, size });
        }
        files.sort_by(|a, b| a.name.cmp(&b.name));
        let current = self.path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        let mut removed = Vec::new();
        for index in to_remove(&files, &current, self.limits, now) {
            let path = self.dir.join(&files[index].name);
            std::fs::remove_file(&path).map_err(failed(&path))?;
            removed.push(path);
        }
        Ok(removed)
    }
}

/// Creates `dir` if it is missing, and checks that a file can be created in it.
///
/// # Errors
/// The directory cannot be created, or written in.
pub fn check(dir: &Path) -> Result<(), Failed> {
    std::fs::create_dir_all(dir).map_err(failed(dir))?;
    let probe = dir.join(format!(".record-check-{}", std::process::id()));
    OpenOptions::new().write(true).create(true).truncate(true).open(&probe).map_err(failed(dir))?;
    std::fs::remove_file(&probe).map_err(failed(dir))
}

/// Creates the file of `at`, the run's `count`th (the next count if that name is taken).
fn open(dir: &Path, at: Timestamp, mut count: u32) -> Result<(File, PathBuf, u32), Failed> {
    loop {
        let path = dir.join(name(at, count));
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => return Ok((file, path, count)),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => count += 1,
            Err(error) => return Err(Failed { path, error }),
        }
    }
}

/// `record-YYYYMMDDTHHMMSSZ-NNNN.jsonl`.
#[must_use]
pub fn name(at: Timestamp, count: u32) -> String {
    let stamp = jiff::Timestamp::from_nanosecond(at.as_nanos()).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    format!("{PREFIX}{}-{count:04}{SUFFIX}", stamp.strftime("%Y%m%dT%H%M%SZ"))
}

/// When the file named `name` began; `None` for a name that is not a record file's.
fn began(name: &str) -> Option<Timestamp> {
    let stamp = name.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?.split('-').next()?;
    let digits = stamp.strip_suffix('Z').filter(|s| s.len() == 15 && s.is_char_boundary(8))?;
    let (date, time) = (digits.get(..8)?, digits.get(9..)?);
    let text = format!(
        "{}-{}-{}T{}:{}:{}Z",
        date.get(..4)?,
        date.get(4..6)?,
        date.get(6..)?,
        time.get(..2)?,
        time.get(2..4)?,
        time.get(4..)?
    );
    let at: jiff::Timestamp = text.parse().ok()?;
    Some(Timestamp::from_nanos(at.as_nanosecond()))
}

/// A file of the directory.
#[derive(Clone, Debug)]
pub struct Kept {
    /// Its name.
    pub name: String,
    /// When it began.
    pub began: Timestamp,
    /// Its size.
    pub size: u64,
}

/// Which of `files` (sorted by name, oldest first) go at `now`: those that ended (the next began)
/// more than `--max-age` ago, then the oldest while all of them are over `--max-size`; never
/// `current`.
#[must_use]
pub fn to_remove(files: &[Kept], current: &str, limits: Limits, now: Timestamp) -> Vec<usize> {
    let mut gone = vec![false; files.len()];
    if let Some(age) = limits.max_age {
        for (index, next) in files.iter().enumerate().skip(1) {
            if now.nanos_since(next.began) > age.as_nanos() as i128 {
                gone[index - 1] = true;
            }
        }
    }
    if let Some(max) = limits.max_size {
        let mut total: u64 = files.iter().zip(&gone).filter(|(_, gone)| !**gone).map(|(file, _)| file.size).sum();
        for (index, file) in files.iter().enumerate() {
            if total <= max {
                break;
            }
            if !gone[index] && file.name != current {
                gone[index] = true;
                total -= file.size;
            }
        }
    }
    for (index, file) in files.iter().enumerate() {
        if file.name == current {
            gone[index] = false;
        }
    }
    gone.iter().enumerate().filter(|(_, gone)| **gone).map(|(index, _)| index).collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// 2026-11-29T10:15:00Z plus `seconds`.
    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_unix_seconds(1_795_947_300 + seconds)
    }

    fn kept(minutes: i64, size: u64) -> Kept {
        Kept { name: name(at(minutes * 60), 1), began: at(minutes * 60), size }
    }

    /// Checked by hand: 2026-11-29T10:15:00Z, the first file: `record-20261129T101500Z-0001.jsonl`,
    /// and the name reads back as its instant.
    #[test]
    fn files_are_named_by_when_they_began() {
        assert_eq!(name(at(0), 1), "record-20261129T101500Z-0001.jsonl");
        assert_eq!(began("record-20261129T101500Z-0001.jsonl"), Some(at(0)));
        assert_eq!(began("notes.txt"), None);
    }

    /// Files begun at 0, 10, 20 and 30 minutes, 100 bytes each, the last being written: with
    /// --max-age 15m at 40 minutes, the first two go (they ended at 10 and 20 minutes: 30 and 20
    /// minutes ago), the third (ended at 30) stays; with --max-size 250 the two oldest go; the file
    /// being written never goes, even alone over the size.
    #[test]
    fn the_oldest_files_go_past_the_age_or_the_size() {
        let files = [kept(0, 100), kept(10, 100), kept(20, 100), kept(30, 100)];
        let current = files[3].name.clone();
        let age = Limits { file_size: 100, max_size: None, max_age: Some(Duration::from_secs(15 * 60)) };
        assert_eq!(to_remove(&files, &current, age, at(40 * 60)), [0, 1]);
        let size = Limits { file_size: 100, max_size: Some(250), max_age: None };
        assert_eq!(to_remove(&files, &current, size, at(40 * 60)), [0, 1]);
        let tiny = Limits { file_size: 100, max_size: Some(10), max_age: None };
        assert_eq!(to_remove(&files[3..], &current, tiny, at(40 * 60)), Vec::<usize>::new());
    }

    /// A file filled to --file-size: the next one begins with the next count, and `prune` removes the
    /// first past --max-size; the directory is created when missing. Lines are written whole.
    #[test]
    fn a_full_file_makes_way_for_the_next() {
        let dir = std::env::temp_dir().join(format!("taint-evict-record-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let limits = Limits { file_size: 10, max_size: Some(15), max_age: None };
        let mut files = Files::create(&dir.join("out"), limits, at(0)).expect("created");
        files.push(b"{\"a\":12345}\n").expect("pushed");
        assert!(files.full());
        let first = files.path().to_owned();
        files.next(at(1)).expect("the next file");
        files.push(b"{\"b\":1}\n").expect("pushed");
        files.flush().expect("flushed");
        assert_eq!(files.path().file_name().and_then(|n| n.to_str()), Some("record-20261129T101501Z-0002.jsonl"));
        assert_eq!(std::fs::read_to_string(&first).expect("read"), "{\"a\":12345}\n");
        assert_eq!(files.prune(at(2)).expect("pruned"), [first]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
