//! `record` as a child process against the fake API server, watched from outside: when its watches
//! are open, when a line has reached its files, its memory and CPU, its stop; and what its files hold
//! (`benches/record_hour.rs`, `tests/fake_api/record_hour.rs`).

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::fake_apiserver::{FakeApiServer, Recorded};

/// A `record` running.
pub struct Recording {
    child: Child,
    out: PathBuf,
}

/// The watches `record` opens: nodes, pods, Leases and two of Events.
pub const WATCHES: usize = 5;

impl Recording {
    /// Starts `binary record --out OUT` against `server`, with `extra` flags; `binary` is the plugin
    /// (with the environment the caller gives it).
    #[must_use]
    pub fn start(mut binary: Command, server: &FakeApiServer, out: &Path, extra: &[&str]) -> Self {
        let child = binary
            .args(["record", "--out", out.to_str().expect("a UTF-8 path"), "--kubeconfig"])
            .arg(server.kubeconfig())
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("record starts");
        Self { child, out: out.to_owned() }
    }

    /// Blocks until every watch is open (each after its list), within `timeout`.
    pub fn wait_watching(&self, server: &FakeApiServer, timeout: Duration) {
        server.wait_for("record's watches", timeout, |requests| {
            requests.iter().filter(|r| r.is_watch()).count() >= WATCHES
        });
    }

    /// Blocks until the newest file's last lines hold `needle` (within `timeout`); how long it took.
    ///
    /// # Panics
    /// Not within `timeout`.
    #[must_use]
    pub fn wait_for_text(&self, needle: &str, timeout: Duration) -> Duration {
        let begun = Instant::now();
        loop {
            if newest_tail(&self.out).is_some_and(|tail| tail.contains(needle)) {
                return begun.elapsed();
            }
            assert!(begun.elapsed() < timeout, "no {needle:?} in the record within {timeout:?}");
            std::thread::park_timeout(Duration::from_millis(100));
        }
    }

    /// Its memory now: the largest resident set so far and the resident set (`VmHWM`, `VmRSS`), KiB.
    #[must_use]
    pub fn memory(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
                .unwrap_or(0)
        };
        (field("VmHWM:"), field("VmRSS:"))
    }

    /// CPU seconds (user and system) it has used so far.
    #[must_use]
    pub fn cpu_seconds(&self) -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        // After the command's name (which may hold spaces): utime and stime are the 12th and 13th fields.
        let fields: Vec<&str> = stat.rsplit_once(')').map_or(vec![], |(_, rest)| rest.split_whitespace().collect());
        let ticks: f64 = fields.get(11..13).map_or(0.0, |f| f.iter().filter_map(|v| v.parse::<f64>().ok()).sum());
        ticks / 100.0
    }

    /// Stops it with SIGTERM, as a service manager does, and waits for its exit.
    pub fn stop(mut self) -> ExitStatus {
        let pid = i32::try_from(self.child.id()).expect("a pid");
        // SAFETY: a signal to the child this harness started and has not yet waited for.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
        self.child.wait().expect("record exits")
    }
}

/// The last 256 KiB of the newest record file.
fn newest_tail(dir: &Path) -> Option<String> {
    let newest = record_files(dir).pop()?;
    let mut file = std::fs::File::open(newest).ok()?;
    let length = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(length.saturating_sub(256 * 1024))).ok()?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail).ok()?;
    Some(String::from_utf8_lossy(&tail).into_owned())
}

/// The record's files, in the order of their names.
#[must_use]
pub fn record_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(Result::ok).map(|entry| entry.path()).collect())
        .unwrap_or_default();
    files.retain(|path| path.extension().is_some_and(|e| e == "jsonl"));
    files.sort();
    files
}

/// What a record's files hold.
#[derive(Debug, Default)]
pub struct Contents {
    /// How many files.
    pub files: usize,
    /// Their bytes together.
    pub bytes: u64,
    /// Lines, by the key after `at` (`pod`, `lease`, `list`…).
    pub lines: BTreeMap<String, usize>,
    /// The first and the last `at` (RFC 3339, as written).
    pub span: Option<(String, String)>,
}

impl Contents {
    /// Every line.
    #[must_use]
    pub fn total(&self) -> usize {
        self.lines.values().sum()
    }
}

/// Reads what `dir`'s record files hold, line by line (without parsing whole objects).
#[must_use]
pub fn contents(dir: &Path) -> Contents {
    let mut found = Contents::default();
    for path in record_files(dir) {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        found.files += 1;
        found.bytes += text.len() as u64;
        for line in text.lines() {
            // `{"at":"…","KEY":…`
            let Some(rest) = line.strip_prefix("{\"at\":\"") else { continue };
            let Some((at, rest)) = rest.split_once('"') else { continue };
            let key = rest.strip_prefix(",\"").and_then(|r| r.split_once('"')).map_or("", |(key, _)| key);
            *found.lines.entry(key.to_owned()).or_default() += 1;
            let span = found.span.get_or_insert_with(|| (at.to_owned(), at.to_owned()));
            if at < span.0.as_str() {
                span.0 = at.to_owned();
            }
            if at > span.1.as_str() {
                span.1 = at.to_owned();
            }
        }
    }
    found
}

/// The requests, counted by verb and path (`WATCH /api/v1/pods`), a watch's fieldSelector named.
#[must_use]
pub fn requests_by_kind(requests: &[Recorded]) -> BTreeMap<String, usize> {
    let mut counted = BTreeMap::new();
    for request in requests {
        let verb = if request.is_watch() {
            "WATCH"
        } else if request.method == "GET"
            && request.path.rsplit('/').next().is_some_and(|last| ["nodes", "pods", "leases", "events"].contains(&last))
        {
            "LIST"
        } else {
            request.method.as_str()
        };
        let fields = request.param("fieldSelector");
        let what = if fields.is_empty() {
            format!("{verb} {}", request.path)
        } else {
            format!("{verb} {}?fieldSelector={fields}", request.path)
        };
        *counted.entry(what).or_default() += 1;
    }
    counted
}
