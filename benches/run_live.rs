//! `run` end to end against the fake API server (release build): how fast a taint turns into
//! DELETEs, how a burst of due deletions drains, and how long the initial sync of a large cluster
//! takes; how `run --qps 0` compares with a bare client deleting as fast as it can, how closely
//! `--qps` is kept, how much memory `run NODE` needs on a large cluster, and how many Events a
//! flapping node makes.
//! `cargo bench --bench run_live [-- reaction|burst|paced|startup|startup-elected|startup-content|node-rss|flapping]`.
//! `startup-content` is the initial sync read as protobuf (the default) and as JSON, interleaved.
//! `TAINT_EVICT_BENCH_BASELINE=PATH` also times another build of the plugin in `burst` and `startup`,
//! in the same reps, interleaved (before/after a change).
//!
//! The fake API server is the tests' (`crates/test-support/src/fake_apiserver.rs`), in this process; `run` is
//! the real binary in a child process.

// Benchmarks measure real time: the runtime's clock (clippy.toml) is for the product's code.
#![allow(clippy::disallowed_methods)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use taint_evict_test_support::fake_apiserver::FakeApiServer;

const TAINT: &str = "bench/down";

fn node(name: &str, tainted: bool) -> Value {
    let taints = if tainted {
        json!([{"key": TAINT, "effect": "NoExecute", "timeAdded": jiff::Timestamp::now().round(jiff::Unit::Second).unwrap().to_string()}])
    } else {
        json!([])
    };
    json!({"kind": "Node", "apiVersion": "v1", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
           "spec": {"taints": taints}})
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
    fn start_with(server: &FakeApiServer, extra: &[&str]) -> Self {
        Self::start_plugin(env!("CARGO_BIN_EXE_kubectl-taint_evict"), server, extra)
    }

    /// `run` of the plugin at `plugin`.
    fn start_plugin(plugin: &str, server: &FakeApiServer, extra: &[&str]) -> Self {
        let mut child = Command::new(plugin)
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
    // Unpaced: this measures the reaction, not --qps (the default 10 writes/s would take 33 s).
    let run = Run::start_with(&server, &["--qps", "0"]);
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

/// A fake server holding `count` pods on 100 nodes that tolerate a taint for 5 s.
fn burst_cluster(name: &str, count: usize) -> FakeApiServer {
    const NODES: usize = 100;
    let server = FakeApiServer::start(&scratch(name));
    for n in 0..NODES {
        server.add(node(&format!("b{n:03}"), false));
    }
    for p in 0..count {
        let n = p % NODES;
        server.add(pod(&format!("b{n:03}-{p:05}"), &format!("b{n:03}"), Some(5)));
    }
    server
}

/// The arrival of the last DELETE in the fake's request log.
fn last_delete(server: &FakeApiServer) -> jiff::Timestamp {
    server.requests().iter().filter(|r| r.method == "DELETE").map(|r| r.at).max().expect("DELETEs")
}

/// What one burst of `run --qps 0` measured.
struct Burst {
    /// From the first deadline to the last DELETE's arrival, ms.
    all_within: f64,
    /// Lateness (DELETE arrival − its deadline): first, median, p99, ms.
    late: (f64, f64, f64),
    /// Deadlines' spread, ms.
    spread: f64,
    /// run's CPU per deletion, µs.
    cpu_per_deletion: f64,
}

/// `count` pods on 100 nodes tolerate a taint for 5 s; the taint lands on every node at once; `run`
/// (of the plugin at `plugin`) is unpaced (`--qps 0`).
fn burst_run(plugin: &str, count: usize) -> Burst {
    let server = burst_cluster("burst", count);
    let run = Run::start_plugin(plugin, &server, &["--qps", "0"]);
    run.wait("the initial sync", Duration::from_secs(120), |l| l["type"] == "synced");
    let cpu_before = run.cpu_seconds();
    for n in 0..100 {
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
    for request in server.requests().iter().filter(|r| r.method == "DELETE") {
        let name = request.path.rsplit('/').next().unwrap();
        late.push((request.at.as_nanosecond() - deadlines[name]) as f64 / 1e6);
    }
    assert_eq!(late.len(), count, "one DELETE per pod");
    let first_deadline = *deadlines.values().min().unwrap();
    let spread = (deadlines.values().max().unwrap() - first_deadline) as f64 / 1e6;
    let all_within = (last_delete(&server).as_nanosecond() - first_deadline) as f64 / 1e6;
    let late = (percentile(&mut late, 0.0), percentile(&mut late, 0.5), percentile(&mut late, 0.99));
    Burst { all_within, late, spread, cpu_per_deletion: cpu * 1e6 / count as f64 }
}

/// A bare client deleting the same `count` pods as fast as it can: kube's client (the one `run`
/// uses), `concurrency` pods in flight, each DELETE with the UID precondition `run` sends; with
/// `same_writes`, also `run`'s other writes per pod (the DisruptionTarget status PATCH before the
/// DELETE, and an Event POST beside them). From the first request's start to the last DELETE's
/// arrival, ms.
fn burst_bare(count: usize, concurrency: usize, same_writes: bool) -> f64 {
    use futures::StreamExt;
    use k8s_openapi::api::core::v1::Pod;
    use k8s_openapi::api::events::v1::Event;
    use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, Preconditions};

    let server = burst_cluster("bare", count);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let started = runtime.block_on(async {
        let kubeconfig = kube::config::Kubeconfig::read_from(server.kubeconfig()).unwrap();
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await.unwrap();
        let client = kube::Client::try_from(config).unwrap();
        let pods: Api<Pod> = Api::namespaced(client.clone(), "bench");
        let events: Api<Event> = Api::namespaced(client, "bench");
        let names: Vec<String> = (0..count).map(|p| format!("b{:03}-{p:05}", p % 100)).collect();
        let started = jiff::Timestamp::now();
        futures::stream::iter(names)
            .for_each_concurrent(concurrency, |name| {
                let (pods, events) = (pods.clone(), events.clone());
                async move {
                    if same_writes {
                        let event: Event = serde_json::from_value(json!({
                            "metadata": {"name": format!("{name}.1"), "namespace": "bench"},
                            "eventTime": jiff::Timestamp::now().to_string(), "type": "Normal",
                            "reason": "TaintManagerEviction", "note": format!("Marking for deletion Pod bench/{name}"),
                            "action": "Delete", "reportingController": "bench", "reportingInstance": "bench",
                            "regarding": {"apiVersion": "v1", "kind": "Pod", "name": name, "namespace": "bench"}
                        }))
                        .unwrap();
                        tokio::spawn(
                            async move { events.create(&PostParams::default(), &event).await.expect("posted") },
                        );
                        let condition = json!({"metadata": {"uid": format!("uid-{name}")}, "status": {"conditions": [{
                            "type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager",
                            "message": "Taint manager: deleting due to NoExecute taint",
                            "lastTransitionTime": jiff::Timestamp::now().to_string()}]}});
                        pods.patch_status(&name, &PatchParams::default(), &Patch::Strategic(condition))
                            .await
                            .expect("patched");
                    }
                    let uid = Some(format!("uid-{name}"));
                    let params = DeleteParams {
                        preconditions: Some(Preconditions { uid, resource_version: None }),
                        ..DeleteParams::default()
                    };
                    pods.delete(&name, &params).await.expect("deleted");
                }
            })
            .await;
        started
    });
    (last_delete(&server).as_nanosecond() - started.as_nanosecond()) as f64 / 1e6
}

/// `run --qps 0` against a bare client for the same 10,000 deletions, interleaved.
fn burst(count: usize, reps: usize) {
    let (mut runs, mut bare, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let (mut same, mut same_ratios) = (Vec::new(), Vec::new());
    let baseline = std::env::var("TAINT_EVICT_BENCH_BASELINE").ok();
    let (mut before, mut before_ratios) = (Vec::new(), Vec::new());
    for rep in 0..reps {
        let b = burst_bare(count, 16, false);
        if let Some(plugin) = &baseline {
            let r = burst_run(plugin, count);
            println!(
                "  rep {rep}: baseline run {:.0} ms (lateness median {:.1} / p99 {:.1} ms; {:.0} µs CPU per deletion; ratio {:.2})",
                r.all_within,
                r.late.1,
                r.late.2,
                r.cpu_per_deletion,
                r.all_within / b
            );
            before.push(r.all_within);
            before_ratios.push(r.all_within / b);
        }
        let r = burst_run(env!("CARGO_BIN_EXE_kubectl-taint_evict"), count);
        let w = burst_bare(count, 16, true);
        println!(
            "  rep {rep}: run {:.0} ms (deadlines within {:.0} ms; lateness first {:.1} / median {:.1} / p99 {:.1} ms; {:.0} µs CPU per deletion), bare DELETEs {b:.0} ms (ratio {:.2}), bare with run's writes {w:.0} ms (ratio {:.2})",
            r.all_within,
            r.spread,
            r.late.0,
            r.late.1,
            r.late.2,
            r.cpu_per_deletion,
            r.all_within / b,
            r.all_within / w
        );
        ratios.push(r.all_within / b);
        same_ratios.push(r.all_within / w);
        runs.push(r.all_within);
        bare.push(b);
        same.push(w);
    }
    let summary = |samples: &mut Vec<f64>| {
        let (min, med, max) = (percentile(samples, 0.0), percentile(samples, 0.5), percentile(samples, 1.0));
        format!("median {med:.2} (min {min:.2}, max {max:.2})")
    };
    println!(
        "run burst: {count} pods due at once, --qps 0: last DELETE {} ms after the first deadline; bare client (kube, 16 in flight): {} ms; run/bare {} over {reps} interleaved reps (target <= 1.3); {}",
        summary(&mut runs),
        summary(&mut bare),
        summary(&mut ratios),
        load_average()
    );
    println!(
        "run burst: bare client with run's three writes per pod (status PATCH, DELETE; Event POST beside): {} ms; run/that {}",
        summary(&mut same),
        summary(&mut same_ratios)
    );
    if let Some(plugin) = baseline {
        println!(
            "run burst: baseline {plugin}: last DELETE {} ms after the first deadline; baseline/bare {}",
            summary(&mut before),
            summary(&mut before_ratios)
        );
    }
}

/// `pods` untolerated pods on one node under `--qps qps`: the rate of writes (status PATCH, event
/// POST, DELETE) once the first `--burst` have gone, up to the last DELETE, in writes per second.
fn paced_once(qps: u32, pods: usize) -> f64 {
    const BURST: usize = 20;
    let server = FakeApiServer::start(&scratch("paced"));
    server.add(node("q", false));
    for p in 0..pods {
        server.add(pod(&format!("q-{p:04}"), "q", None));
    }
    let run = Run::start_with(&server, &["--qps", &qps.to_string(), "--burst", &BURST.to_string()]);
    run.wait("the initial sync", Duration::from_secs(60), |l| l["type"] == "synced");
    server.add(node("q", true));
    for _ in 0..pods {
        run.wait("the deletions", Duration::from_secs(600), |l| l["type"] == "deleted");
    }
    run.stop();
    let last = last_delete(&server);
    let mut writes: Vec<jiff::Timestamp> =
        server.requests().iter().filter(|r| r.method != "GET" && r.at <= last).map(|r| r.at).collect();
    writes.sort();
    let paced = &writes[BURST..];
    let span = (paced[paced.len() - 1].as_nanosecond() - paced[0].as_nanosecond()) as f64 / 1e9;
    (paced.len() - 1) as f64 / span
}

/// `--qps 50` and `--qps 200`, interleaved: the achieved write rate.
fn paced(reps: usize) {
    let mut rates: Vec<(u32, Vec<f64>)> = vec![(50, Vec::new()), (200, Vec::new())];
    for _ in 0..reps {
        for (qps, samples) in &mut rates {
            // About 10 s of writes at each rate (three writes per pod).
            samples.push(paced_once(*qps, *qps as usize * 10 / 3));
        }
    }
    for (qps, mut samples) in rates {
        let (min, med, max) =
            (percentile(&mut samples, 0.0), percentile(&mut samples, 0.5), percentile(&mut samples, 1.0));
        println!(
            "run paced: --qps {qps}: achieved median {med:.2} writes/s (min {min:.2}, max {max:.2}, {reps} reps), {:.2}% of --qps (target: within 5%, never above); {}",
            (med / f64::from(qps) - 1.0) * 100.0,
            load_average()
        );
    }
}

/// The machine's 1-minute load average, as `/proc/loadavg` says.
fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    format!("load average {}", text.split_whitespace().next().unwrap_or("?"))
}

/// The initial sync of 5,000 nodes and 150,000 pods: time to "synced" and the run's peak RSS; with
/// `TAINT_EVICT_BENCH_BASELINE`, that build's start-up too, three of each, interleaved.
fn startup(nodes: usize, pods_per_node: usize, extra: &[&str]) {
    let server = FakeApiServer::start(&scratch("startup"));
    for n in 0..nodes {
        let name = format!("s{n:04}");
        server.add(node(&name, n % 10 == 0));
        for p in 0..pods_per_node {
            server.add(pod(&format!("s{n:04}-{p:02}"), &name, Some(300 + p as i64)));
        }
    }
    let current = env!("CARGO_BIN_EXE_kubectl-taint_evict").to_owned();
    let baseline = std::env::var("TAINT_EVICT_BENCH_BASELINE").ok();
    let plugins: Vec<(&str, &str)> = match &baseline {
        Some(before) => [(before.as_str(), "baseline "), (current.as_str(), "")].repeat(3),
        None => vec![(current.as_str(), "")],
    };
    for (plugin, which) in plugins {
        let start = Instant::now();
        let run = Run::start_plugin(plugin, &server, extra);
        run.wait("the initial sync", Duration::from_secs(300), |l| l["type"] == "synced");
        let synced = start.elapsed();
        let rss = run.peak_rss_mib();
        run.stop();
        println!(
            "{which}run startup{}: {nodes} nodes, {} pods: synced in {:.2} s (target <= 10 s), peak RSS {rss:.0} MiB (target <= 300 MB)",
            if extra.is_empty() { String::new() } else { format!(" ({})", extra.join(" ")) },
            nodes * pods_per_node,
            synced.as_secs_f64()
        );
    }
}

/// The initial sync of 5,000 nodes and 150,000 pods read as JSON (`--content-type json`, as before
/// protobuf) and as protobuf, `reps` of each, interleaved on one fake server: time to "synced", the
/// run's CPU and peak RSS, medians. (The fake encodes protobuf from its JSON objects, in this process:
/// its work is not the run's.)
fn startup_content(nodes: usize, pods_per_node: usize, reps: usize) {
    let server = FakeApiServer::start(&scratch("startup-content"));
    for n in 0..nodes {
        let name = format!("s{n:04}");
        server.add(node(&name, n % 10 == 0));
        for p in 0..pods_per_node {
            server.add(pod(&format!("s{n:04}-{p:02}"), &name, Some(300 + p as i64)));
        }
    }
    let ways: [(&str, &[&str]); 2] = [("json", &["--content-type", "json"]), ("protobuf", &[])];
    let mut measured: Vec<(Vec<f64>, Vec<f64>, Vec<f64>)> = vec![Default::default(); 2];
    for _ in 0..reps {
        for ((_, extra), (synced, cpu, rss)) in ways.iter().zip(measured.iter_mut()) {
            let start = Instant::now();
            let run = Run::start_with(&server, extra);
            run.wait("the initial sync", Duration::from_secs(300), |l| l["type"] == "synced");
            synced.push(start.elapsed().as_secs_f64());
            cpu.push(run.cpu_seconds());
            rss.push(run.peak_rss_mib());
            run.stop();
        }
    }
    for ((name, _), (synced, cpu, rss)) in ways.iter().zip(measured.iter_mut()) {
        let spread = |v: &mut Vec<f64>| (percentile(v, 0.5), percentile(v, 0.0), percentile(v, 1.0));
        let ((s, s_lo, s_hi), (c, _, _), (r, r_lo, r_hi)) = (spread(synced), spread(cpu), spread(rss));
        println!(
            "run startup as {name}: {nodes} nodes, {} pods: synced in {s:.2} s ({s_lo:.2}-{s_hi:.2}), run's CPU {c:.2} s, \
             peak RSS {r:.0} MiB ({r_lo:.0}-{r_hi:.0}), median of {reps}",
            nodes * pods_per_node
        );
    }
}

/// `run NODE` and `run -l` selecting one node of 5,000 (150,000 pods), and `run` of every node,
/// interleaved on one fake server: peak RSS (VmHWM) once synced and settled.
fn node_rss(reps: usize) {
    let server = FakeApiServer::start(&scratch("node-rss"));
    for n in 0..5_000 {
        let name = format!("s{n:04}");
        server.add(node(&name, false));
        for p in 0..30 {
            server.add(pod(&format!("s{n:04}-{p:02}"), &name, Some(300 + p as i64)));
        }
    }
    let cases: [(&str, &[&str]); 3] = [
        ("run s0042", &["s0042"]),
        ("run -l kubernetes.io/hostname=s0042", &["-l", "kubernetes.io/hostname=s0042"]),
        ("run", &[]),
    ];
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    for _ in 0..reps {
        for ((_, args), samples) in cases.iter().zip(&mut samples) {
            let run = Run::start_with(&server, args);
            let synced = run.wait("the initial sync", Duration::from_secs(300), |l| l["type"] == "synced");
            assert_eq!(synced["pods"], if args.is_empty() { 150_000 } else { 30 });
            // Settled: the lists are in and the allocator has what it will keep.
            std::thread::sleep(Duration::from_secs(2));
            samples.push(run.peak_rss_mib());
            run.stop();
        }
    }
    for ((name, _), mut samples) in cases.iter().zip(samples) {
        let (min, med, max) =
            (percentile(&mut samples, 0.0), percentile(&mut samples, 0.5), percentile(&mut samples, 1.0));
        println!(
            "run node RSS: `{name}` on 5,000 nodes / 150,000 pods: peak RSS median {med:.1} MiB (min {min:.1}, max {max:.1}, {reps} reps; target for one node <= 64 MB); {}",
            load_average()
        );
    }
}

/// What one flapping run wrote: Event objects, their POSTs and PATCHes, and the occurrences the
/// stored Events count (a series' `count`, else 1).
struct Flapping {
    created: usize,
    posts: usize,
    patches: usize,
    counted: u64,
    seconds: f64,
}

/// Event writes (POST and PATCH) received so far.
fn event_writes(server: &FakeApiServer) -> usize {
    server.requests().iter().filter(|r| r.method != "GET" && r.path.contains("/events")).count()
}

/// One node with `pods` pods tolerating the taint for an hour, tainted and untainted `cycles` times:
/// each untaint cancels every pod's deletion (upstream's `Cancelling deletion of Pod` event). `run`
/// is unpaced (`--qps 0`), so the count of writes, not the limiter, is what is measured.
fn flapping_once(cycles: usize, pods: usize) -> Flapping {
    let server = FakeApiServer::start(&scratch("flapping"));
    server.add(node("f", false));
    for p in 0..pods {
        server.add(pod(&format!("f-{p:03}"), "f", Some(3600)));
    }
    let run = Run::start_with(&server, &["--qps", "0"]);
    run.wait("the initial sync", Duration::from_secs(60), |l| l["type"] == "synced");
    let start = Instant::now();
    for _ in 0..cycles {
        server.add(node("f", true));
        for _ in 0..pods {
            run.wait("the pods scheduled", Duration::from_secs(60), |l| l["type"] == "scheduled");
        }
        server.add(node("f", false));
        for _ in 0..pods {
            run.wait("the deletions cancelled", Duration::from_secs(60), |l| l["type"] == "cancelled");
        }
    }
    // The events are written beside the loop: let the last ones go before stopping.
    let mut seen = event_writes(&server);
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let now = event_writes(&server);
        if now == seen {
            break;
        }
        seen = now;
    }
    let seconds = start.elapsed().as_secs_f64();
    run.stop();
    let requests = server.requests();
    let writes = |method: &str| requests.iter().filter(|r| r.method == method && r.path.contains("/events")).count();
    let events = server.events();
    let counted = events.iter().map(|e| e["series"]["count"].as_u64().unwrap_or(1)).sum();
    Flapping { created: events.len(), posts: writes("POST"), patches: writes("PATCH"), counted, seconds }
}

/// A flapping node, 100 untaint/retaint cycles × 110 pods: Events created (target <= 2 × pods).
fn flapping(reps: usize) {
    const CYCLES: usize = 100;
    const PODS: usize = 110;
    let mut samples: Vec<Flapping> = Vec::new();
    for rep in 0..reps {
        let f = flapping_once(CYCLES, PODS);
        println!(
            "  rep {rep}: {} Events created, {} POSTs, {} PATCHes, {} occurrences counted, {:.1} s",
            f.created, f.posts, f.patches, f.counted, f.seconds
        );
        samples.push(f);
    }
    let summary = |read: fn(&Flapping) -> f64| {
        let mut values: Vec<f64> = samples.iter().map(read).collect();
        let (min, med, max) =
            (percentile(&mut values, 0.0), percentile(&mut values, 0.5), percentile(&mut values, 1.0));
        format!("median {med:.0} (min {min:.0}, max {max:.0})")
    };
    println!(
        "run flapping: {CYCLES} cycles x {PODS} pods ({} cancellations), {reps} reps: Events created {} (target <= {}); POSTs {}; PATCHes {}; occurrences counted {}; {}",
        CYCLES * PODS,
        summary(|f| f.created as f64),
        2 * PODS,
        summary(|f| f.posts as f64),
        summary(|f| f.patches as f64),
        summary(|f| f.counted as f64),
        load_average()
    );
    println!("run flapping: cycles took {} s", {
        let mut values: Vec<f64> = samples.iter().map(|f| f.seconds).collect();
        let (min, med, max) =
            (percentile(&mut values, 0.0), percentile(&mut values, 0.5), percentile(&mut values, 1.0));
        format!("median {med:.1} (min {min:.1}, max {max:.1})")
    });
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
        burst(10_000, 5);
    }
    if wants("paced") {
        paced(3);
    }
    if wants("startup") {
        startup(5_000, 30, &[]);
    }
    // In-cluster: the lists are also kept for the next term as leader.
    if wants("startup-elected") {
        startup(5_000, 30, &["--leader-elect"]);
    }
    if args.iter().any(|a| a == "startup-content") {
        startup_content(5_000, 30, 3);
    }
    if wants("node-rss") {
        node_rss(3);
    }
    if wants("flapping") {
        flapping(3);
    }
}
