//! `run` end to end against the fake API server (release build): how fast a taint turns into
//! DELETEs, how a burst of due deletions drains, and how long the initial sync of a large cluster
//! takes. `cargo bench --bench run_live [-- reaction|burst|startup|startup-elected]`.
//!
//! The fake API server is the tests' (`tests/support/fake_apiserver.rs`), in this process; `run` is
//! the real binary in a child process.

#[allow(dead_code)]
#[path = "../tests/support/fake_apiserver.rs"]
mod fake_apiserver;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use fake_apiserver::FakeApiServer;
use serde_json::{Value, json};

const TAINT: &str = "bench/down";

fn node(name: &str, tainted: bool) -> Value {
    let taints = if tainted {
        json!([{"key": TAINT, "effect": "NoExecute", "timeAdded": jiff::Timestamp::now().round(jiff::Unit::Second).unwrap().to_string()}])
    } else {
        json!([])
    };
    json!({"kind": "Node", "apiVersion": "v1", "metadata": {"name": name}, "spec": {"taints": taints}})
}

/// A small pod (the engine reads only these fields; a real pod is bigger, which only slows the fake).
fn pod(name: &str, node: &str, seconds: Option<i64>) -> Value {
    let tolerations = match seconds {
        Some(s) => json!([{"key": TAINT, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": s}]),
        None => json!([]),
    };
    json!({"kind": "Pod", "apiVersion": "v1",
           "metadata": {"name": name, "namespace": "bench", "uid": format!("uid-{name}"), "creationTimestamp": "2026-01-01T00:00:00Z"},
           "spec": {"nodeName": node, "tolerations": tolerations, "containers": [{"name": "c", "image": "app:1"}]},
           "status": {"phase": "Running"}})
}

struct Run {
    child: Child,
    lines: mpsc::Receiver<Value>,
}

impl Run {
    fn start(server: &FakeApiServer) -> Self {
        Self::start_with(server, &[])
    }

    fn start_with(server: &FakeApiServer, extra: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kubectl-taint_evict"))
            .args(["run", "-o", "json", "--kubeconfig", server.kubeconfig().to_str().unwrap()])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("run starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(value) = serde_json::from_str::<Value>(&line)
                    && tx.send(value).is_err()
                {
                    return;
                }
            }
        });
        Self { child, lines }
    }

    fn wait(&self, what: &str, timeout: Duration, condition: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|_| panic!("no {what} within {timeout:?}"));
            if condition(&line) {
                return line;
            }
        }
    }

    /// CPU seconds (user + system) the child has used so far.
    fn cpu_seconds(&self) -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
        let fields: Vec<&str> = stat.rsplit_once(')').map_or(vec![], |(_, rest)| rest.split_whitespace().collect());
        let ticks: f64 = fields.get(11..13).map_or(f64::NAN, |f| f.iter().filter_map(|v| v.parse::<f64>().ok()).sum());
        ticks / 100.0
    }

    /// The child's peak resident set (VmHWM), in MiB.
    fn peak_rss_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        let kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(f64::NAN);
        kib / 1024.0
    }

    fn stop(mut self) {
        let _ = Command::new("kill").args(["-INT", &self.child.id().to_string()]).status();
        let _ = self.wait("the summary", Duration::from_secs(60), |l| l["type"] == "summary");
        let _ = self.child.wait();
    }
}

fn percentile(samples: &mut [f64], q: f64) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[((samples.len() - 1) as f64 * q).round() as usize]
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("taint-evict-bench-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A taint lands on a node with 110 untolerated pods: from the taint to the last DELETE.
fn reaction() {
    const REPS: usize = 20;
    const PODS: usize = 110;
    let server = FakeApiServer::start(&scratch("reaction"));
    for n in 0..REPS {
        server.add(node(&format!("r{n:02}"), false));
        for p in 0..PODS {
            server.add(pod(&format!("r{n:02}-{p:03}"), &format!("r{n:02}"), None));
        }
    }
    let run = Run::start(&server);
    run.wait("the initial sync", Duration::from_secs(60), |l| l["type"] == "synced");
    let mut samples = Vec::new();
    for n in 0..REPS {
        // Timed from the taint to run's report of the node's last completed DELETE (read on another
        // thread: waiting on the fake's state would hold its lock and slow the server under test).
        let prefix = format!("r{n:02}-");
        let start = Instant::now();
        server.add(node(&format!("r{n:02}"), true));
        for _ in 0..PODS {
            run.wait("the node's deletions", Duration::from_secs(30), |l| {
                l["type"] == "deleted" && l["pod"]["name"].as_str().is_some_and(|name| name.starts_with(&prefix))
            });
        }
        samples.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    run.stop();
    let (p50, p99, max) =
        (percentile(&mut samples, 0.5), percentile(&mut samples, 0.99), percentile(&mut samples, 1.0));
    println!(
        "run reaction: taint on a node with {PODS} untolerated pods -> last DELETE, {REPS} reps: median {p50:.1} ms, p99 {p99:.1} ms, max {max:.1} ms (target p99 <= 50 ms)"
    );
}

/// `count` pods on 100 nodes tolerate a taint for 5 s; the taint lands on every node at once.
fn burst(count: usize) {
    const NODES: usize = 100;
    let server = FakeApiServer::start(&scratch("burst"));
    for n in 0..NODES {
        server.add(node(&format!("b{n:03}"), false));
    }
    for p in 0..count {
        let n = p % NODES;
        server.add(pod(&format!("b{n:03}-{p:05}"), &format!("b{n:03}"), Some(5)));
    }
    let run = Run::start(&server);
    run.wait("the initial sync", Duration::from_secs(120), |l| l["type"] == "synced");
    let cpu_before = run.cpu_seconds();
    for n in 0..NODES {
        server.add(node(&format!("b{n:03}"), true));
    }
    // Each pod's deadline, from run's report of its deletion; when its DELETE was sent, from the
    // fake's request log (arrival on loopback, the body read).
    let mut deadlines = std::collections::HashMap::new();
    while deadlines.len() < count {
        let line = run.wait("the deletions", Duration::from_secs(120), |l| l["type"] == "deleted");
        let due = line["evictAt"].as_str().unwrap().parse::<jiff::Timestamp>().unwrap().as_nanosecond();
        deadlines.insert(line["pod"]["name"].as_str().unwrap().to_owned(), due);
    }
    let cpu = run.cpu_seconds() - cpu_before;
    run.stop();
    let mut late = Vec::new();
    let mut last_sent = i128::MIN;
    for request in server.requests().iter().filter(|r| r.method == "DELETE") {
        let name = request.path.rsplit('/').next().unwrap();
        let sent = request.at.as_nanosecond();
        last_sent = last_sent.max(sent);
        late.push((sent - deadlines[name]) as f64 / 1e6);
    }
    assert_eq!(late.len(), count, "one DELETE per pod");
    let first_deadline = *deadlines.values().min().unwrap();
    let spread = (deadlines.values().max().unwrap() - first_deadline) as f64 / 1e6;
    let all_within = (last_sent - first_deadline) as f64 / 1e6;
    let (first, p50, p99) = (percentile(&mut late, 0.0), percentile(&mut late, 0.5), percentile(&mut late, 0.99));
    println!(
        "run burst: {count} pods due within {spread:.0} ms: all DELETEs sent {all_within:.0} ms after the first deadline (target <= 2000 ms); DELETE sent after the deadline: first {first:.1} ms, median {p50:.1} ms, p99 {p99:.1} ms (target p99 <= 20 ms); run's own CPU {cpu:.2} s ({:.0} µs per deletion)",
        cpu * 1e6 / count as f64
    );
}

/// The initial sync of 5,000 nodes and 150,000 pods: time to "synced" and the run's peak RSS.
fn startup(nodes: usize, pods_per_node: usize, extra: &[&str]) {
    let server = FakeApiServer::start(&scratch("startup"));
    for n in 0..nodes {
        let name = format!("s{n:04}");
        server.add(node(&name, n % 10 == 0));
        for p in 0..pods_per_node {
            server.add(pod(&format!("s{n:04}-{p:02}"), &name, Some(300 + p as i64)));
        }
    }
    let start = Instant::now();
    let run = Run::start_with(&server, extra);
    run.wait("the initial sync", Duration::from_secs(300), |l| l["type"] == "synced");
    let synced = start.elapsed();
    let rss = run.peak_rss_mib();
    run.stop();
    println!(
        "run startup{}: {nodes} nodes, {} pods: synced in {:.2} s (target <= 10 s), peak RSS {rss:.0} MiB (target <= 300 MB)",
        if extra.is_empty() { String::new() } else { format!(" ({})", extra.join(" ")) },
        nodes * pods_per_node,
        synced.as_secs_f64()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let wants = |name: &str| args.is_empty() || args.iter().any(|a| a == name);
    if wants("reaction") {
        reaction();
    }
    if wants("burst") {
        burst(10_000);
    }
    if wants("startup") {
        startup(5_000, 30, &[]);
    }
    // In-cluster: the lists are also kept for the next term as leader.
    if wants("startup-elected") {
        startup(5_000, 30, &["--leader-elect"]);
    }
}
