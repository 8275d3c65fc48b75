//! The real binary (`run`, `plan -w`) as a child process, its JSON lines read as they come; every wait is on a
//! line matching a condition, with a deadline.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::command;
use taint_evict_test_support::fake_apiserver::FakeApiServer;

/// How long a wait for a line may take.
pub const WAIT: Duration = Duration::from_secs(20);

/// A running `run` (or `plan -w`), its JSON lines arriving on a channel.
pub struct Running {
    pub child: Child,
    lines: mpsc::Receiver<Value>,
    pub seen: Vec<Value>,
}

impl Running {
    /// Starts `run -o json` with `extra` arguments and waits for the initial sync.
    pub fn start(server: &FakeApiServer, extra: &[&str]) -> Self {
        Self::start_with(server.kubeconfig(), extra)
    }

    /// Starts `run -o json --kubeconfig KUBECONFIG` with `extra` arguments and waits for the initial sync.
    pub fn start_with(kubeconfig: &Path, extra: &[&str]) -> Self {
        let mut running = Self::launch_with(kubeconfig, &[&["-o", "json"], extra].concat());
        running.expect("the initial sync", |l| l["type"] == "synced");
        running
    }

    /// Starts `run` with `args` (which must make it print JSON lines) and returns at once.
    pub fn launch(server: &FakeApiServer, args: &[&str]) -> Self {
        Self::launch_with(server.kubeconfig(), args)
    }

    /// Starts `run --kubeconfig KUBECONFIG` with `args` (which must make it print JSON lines) and
    /// returns at once.
    pub fn launch_with(kubeconfig: &Path, args: &[&str]) -> Self {
        let kubeconfig = kubeconfig.to_str().expect("UTF-8").to_owned();
        Self::spawn(command().args(["run", "--kubeconfig", &kubeconfig]).args(args))
    }

    /// Starts `command` (which must print JSON lines: `run -o json`, `plan -w` into a pipe) and returns
    /// at once.
    pub fn spawn(command: &mut Command) -> Self {
        let mut child = command
            .stdout(Stdio::piped())
            // Diagnostics go to the test's own output (never unread into a full pipe that would block it).
            .stderr(Stdio::inherit())
            .stdin(Stdio::null())
            .spawn()
            .expect("the binary starts");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"));
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        Self { child, lines, seen: Vec::new() }
    }

    /// Waits for a line matching `condition` and returns it.
    pub fn expect(&mut self, what: &str, condition: impl Fn(&Value) -> bool) -> Value {
        if let Some(line) = self.seen.iter().find(|l| condition(l)) {
            return line.clone();
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if condition(&line) {
                        return line;
                    }
                }
                Err(_) => panic!("no {what} within {WAIT:?}; lines: {:#?}", self.seen),
            }
        }
    }

    /// Waits until `count` of the lines seen match `condition` (a line seen before counts too).
    pub fn expect_count(&mut self, what: &str, count: usize, condition: impl Fn(&Value) -> bool) {
        let deadline = Instant::now() + WAIT;
        while self.seen.iter().filter(|l| condition(l)).count() < count {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(_) => panic!("not {count} of {what} within {WAIT:?}; lines: {:#?}", self.seen),
            }
        }
    }

    /// Sends `signal` (`-STOP`, `-CONT`, …) to the process.
    pub fn signal(&self, signal: &str) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill").args([signal, &pid]).status().expect("kill runs").success());
    }

    /// Sends SIGINT and returns the summary line and the exit code.
    pub fn interrupt(self) -> (Value, i32) {
        let (summary, code, _) = self.interrupt_and_read();
        (summary, code)
    }

    /// Sends SIGINT and returns the summary line, the exit code and every line seen.
    pub fn interrupt_and_read(mut self) -> (Value, i32, Vec<Value>) {
        let status = Command::new("kill").args(["-INT", &self.child.id().to_string()]).status().expect("kill runs");
        assert!(status.success());
        let summary = self.expect("the summary", |l| l["type"] == "summary");
        let code = self.child.wait().expect("run exits").code().unwrap_or(-1);
        (summary, code, std::mem::take(&mut self.seen))
    }
}

/// A test that fails (or returns) while the child still runs does not leave it running: it would
/// keep the fake server's port, and the output pipe of whoever ran the tests, open.
impl Drop for Running {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
