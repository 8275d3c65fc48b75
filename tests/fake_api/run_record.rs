//! `run` keeps its record: every deletion is a line on stdout, so when its lines can no longer be
//! written (the reader of a pipe went away, a full disk) it stops enforcing, says why on stderr and
//! exits 1; pods due after that are left alone.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, ChildStderr, Output, Stdio};
use std::sync::mpsc;

use serde_json::Value;

use crate::fake_api::run_cluster::{deletes, node, pod, taint};
use crate::support::running::WAIT;
use crate::util::{command, instant, scratch};
use taint_evict_test_support::fake_apiserver::FakeApiServer;

/// `run -o json` against `server`, its stdout going to `stdout`.
fn spawn(server: &FakeApiServer, stdout: Stdio) -> Child {
    let kubeconfig = server.kubeconfig().to_str().expect("UTF-8").to_owned();
    command()
        .args(["run", "--kubeconfig", &kubeconfig, "-o", "json"])
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts")
}

/// Waits (at most [`WAIT`]) for `child` to exit on its own, and returns its exit and stderr.
fn exit_of(mut child: Child) -> Output {
    let pid = child.id().to_string();
    let mut stderr: ChildStderr = child.stderr.take().expect("stderr");
    let (tx, exited) = mpsc::channel();
    std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = stderr.read_to_end(&mut text);
        let _ = tx.send((child.wait().expect("run exits"), text));
    });
    match exited.recv_timeout(WAIT) {
        Ok((status, stderr)) => Output { status, stdout: Vec::new(), stderr },
        Err(_) => {
            let _ = std::process::Command::new("kill").args(["-KILL", &pid]).status();
            panic!("run went on for {WAIT:?} after its output was gone");
        }
    }
}

#[test]
fn run_whose_reader_goes_away_stops_enforcing_says_why_and_exits_1() {
    // `run | head -1`: after head exits, no pod due later may be deleted without its line.
    let server = FakeApiServer::start(&scratch("record-closed"));
    server.add(node("n1", &[taint(jiff::Timestamp::now())]));
    server.add(pod("tol8", "n1", Some(Some(8))));
    server.add(pod("tol9", "n1", Some(Some(9))));
    let mut child = spawn(&server, Stdio::piped());
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    // The start's last lines: both pods scheduled, and n1 foreseen (it has no health to read). Then
    // nothing is written until tol8 is due: the reader going away must be noticed all the same.
    let (mut scheduled, mut foreseen) = (Vec::new(), false);
    while scheduled.len() < 2 || !foreseen {
        let line = lines.next().expect("a line before stdout ends").expect("a line");
        let line: Value = serde_json::from_str(&line).expect("a JSON line");
        if line["type"] == "scheduled" {
            scheduled.push(line);
        } else if line["type"] == "foreseen" {
            foreseen = true;
        }
    }
    // Both are still to come: closing now is closing before they are due.
    let now = jiff::Timestamp::now().as_nanosecond();
    assert!(scheduled.iter().all(|l| instant(l["evictAt"].as_str().expect("evictAt")) > now), "{scheduled:?}");
    drop(lines);

    let output = exit_of(child);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr,
        "error: standard output is closed (broken pipe): run stops enforcing, since every deletion must be recorded\n"
    );
    let requests = server.requests();
    assert_eq!((deletes(&requests, "tol8"), deletes(&requests, "tol9")), (0, 0));
    assert!(server.object("Pod", "default", "tol8").is_some() && server.object("Pod", "default", "tol9").is_some());
}

#[test]
fn run_that_cannot_write_its_lines_deletes_nothing_and_exits_1() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("no /dev/full here: the write error is not tested");
        return;
    };
    let server = FakeApiServer::start(&scratch("record-full"));
    // Due at once: only the failed write stands between the pod and its deletion.
    server.add(node("n1", &[taint(jiff::Timestamp::now())]));
    server.add(pod("bare", "n1", None));
    let output = exit_of(spawn(&server, Stdio::from(full)));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with("error: cannot write to standard output: "), "{stderr}");
    assert!(stderr.ends_with(": run stops enforcing, since every deletion must be recorded\n"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert_eq!(deletes(&server.requests(), "bare"), 0);
}
