//! `plan` against the real kube-apiserver (v1.29, started from the envtest binaries) holding 200 nodes
//! and 20,000 pods (each as a Deployment's pod is once admitted and running: a container with its
//! environment, probe, resources and mounts, the token volume, the default not-ready/unreachable
//! tolerations, and the status its kubelet writes: some 4 KB of JSON), beside kubectl fetching the same
//! data from the same server, same run:
//! - `plan NODE` (watch-cache read) and `plan NODE --quorum-read` vs
//!   `kubectl get pods -A --field-selector spec.nodeName=NODE -o json`;
//! - `plan` over every tainted node (all 200) vs `kubectl get nodes,pods -A -o json`;
//! - a game day, `plan -l ZONE --down-selector ZONE` (a zone of 50 nodes going dark: every pod read,
//!   the node lifecycle controller predicted for 50 silent nodes, the owners rolled up), vs the same;
//! - protobuf (the default) vs `--content-type json` (and protobuf with `--disable-compression`): the
//!   wall time and kube-apiserver's CPU (from `/proc/PID/stat`) per whole-cluster `plan`, per
//!   `plan NODE` and per `run` start-up to "synced"; one
//!   `LIST /api/v1/pods?resourceVersion=0` each way (wall, CPU, bytes), and this decoder's speed on those
//!   very answers (pods per second: protobuf rewritten then read, vs the JSON read).
//!
//! `cargo bench --bench real_apiserver` (release build). Prints medians, spread and the ratios.
//! `TAINT_EVICT_BENCH_BASELINE=PATH` also times `plan NODE` of another build, interleaved (before/after).

// Benchmarks measure real time: the runtime's clock (clippy.toml) is for the product's code.
#![allow(clippy::disallowed_methods)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use taint_evict_test_support::control_plane;
use taint_evict_test_support::process::{median_and_spread, timed};

const RUNS: usize = 10;
const NODES: usize = 200;
const PODS_PER_NODE: usize = 100;

fn cluster() -> Vec<Vec<serde_json::Value>> {
    let added = "2026-11-23T11:58:00Z";
    let mut batches = Vec::new();
    // Ready, in four zones, without Leases (so never silent: only `--down` takes a zone down).
    let ready = json!({"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                       "lastHeartbeatTime": added, "lastTransitionTime": added}]});
    let nodes: Vec<_> = (0..NODES)
        .map(|i| {
            json!({"apiVersion": "v1", "kind": "Node",
                   "metadata": {"name": format!("node-{i:03}"),
                                "labels": {"topology.kubernetes.io/zone": format!("z{}", i % 4)}},
                   "spec": {"taints": [{"key": "example.com/drain", "effect": "NoExecute", "timeAdded": added}]},
                   "status": ready})
        })
        .collect();
    batches.push(nodes);
    for i in 0..NODES {
        let pods = (0..PODS_PER_NODE)
            .map(|j| {
                json!({"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": format!("pod-{i:03}-{j:03}"), "namespace": "default",
                                    "labels": {"app": format!("app-{}", j % 10)},
                                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                                         "name": format!("app-{}", j % 10), "controller": true,
                                                         "uid": "6f1c2a4e-0b7d-4c1e-9f3a-5d8e7b6a4c21"}]},
                       "spec": {"nodeName": format!("node-{i:03}"), "containers": [container()],
                                "volumes": volumes(),
                                "tolerations": [{"key": "example.com/drain", "operator": "Exists",
                                                 "effect": "NoExecute", "tolerationSeconds": 60 * (j as i64 % 7)},
                                                {"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                                                 "effect": "NoExecute", "tolerationSeconds": 300},
                                                {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                                                 "effect": "NoExecute", "tolerationSeconds": 300}]}})
            })
            .collect();
        batches.push(pods);
    }
    batches
}

/// A container as a Deployment's pod template has it (the API server adds its defaults).
fn container() -> serde_json::Value {
    json!({"name": "app", "image": "registry.example.com/team/app:1.4.2",
           "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
           "env": [{"name": "LOG_LEVEL", "value": "info"},
                   {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                   {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
           "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
           "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10},
           "volumeMounts": [{"name": "config", "mountPath": "/etc/app"},
                            {"name": "kube-api-access", "readOnly": true,
                             "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]})
}

/// A config map and the service account's projected volume as admission adds it (but its token: this
/// control plane has no service accounts).
fn volumes() -> serde_json::Value {
    json!([{"name": "config", "configMap": {"name": "app-config"}},
           {"name": "kube-api-access", "projected": {"sources": [
               {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
               {"downwardAPI": {"items": [{"path": "namespace",
                                           "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}}])
}

/// A running pod's status as its kubelet writes it.
fn status(node: usize, pod: usize) -> serde_json::Value {
    let at = "2026-11-23T11:00:00Z";
    let hex = |seed: usize| format!("{:016x}", seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)).repeat(4);
    let conditions: Vec<_> = ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]
        .iter()
        .map(|kind| json!({"type": kind, "status": "True", "lastProbeTime": null, "lastTransitionTime": at}))
        .collect();
    let ip = format!("10.{}.{}.{}", 64 + node / 250, node % 250, pod + 2);
    json!({"status": {"phase": "Running", "hostIP": format!("192.168.{}.{}", node / 250, node % 250 + 1),
        "hostIPs": [{"ip": format!("192.168.{}.{}", node / 250, node % 250 + 1)}],
        "podIP": ip, "podIPs": [{"ip": ip}], "startTime": at, "qosClass": "Burstable",
        "conditions": conditions,
        "containerStatuses": [{"name": "app", "ready": true, "started": true, "restartCount": 0,
            "image": "registry.example.com/team/app:1.4.2",
            "imageID": format!("registry.example.com/team/app@sha256:{}", hex(node * 1000 + pod)),
            "containerID": format!("containerd://{}", hex(node * 1000 + pod + 7)),
            "state": {"running": {"startedAt": at}}}]}})
}

/// kube-rs' plain client (no layer of the plugin's) for the admin kubeconfig.
fn admin_client(plane: &control_plane::ControlPlane, runtime: &tokio::runtime::Runtime) -> kube::Client {
    runtime.block_on(async {
        let kubeconfig = kube::config::Kubeconfig::read_from(plane.kubeconfig()).expect("the kubeconfig");
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await.expect("a config");
        kube::Client::try_from(config).expect("a client")
    })
}

/// Writes every pod's status, as the kubelets would.
fn write_statuses(plane: &control_plane::ControlPlane) {
    use futures::StreamExt;
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::{Api, Patch, PatchParams};
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let client = admin_client(plane, &runtime);
    let api: Api<Pod> = Api::namespaced(client, "default");
    runtime.block_on(async {
        let patches = (0..NODES).flat_map(|i| (0..PODS_PER_NODE).map(move |j| (i, j))).map(|(i, j)| {
            let api = api.clone();
            async move {
                let name = format!("pod-{i:03}-{j:03}");
                api.patch_status(&name, &PatchParams::default(), &Patch::Merge(status(i, j))).await.expect("a status")
            }
        });
        futures::stream::iter(patches).buffer_unordered(32).for_each(|_| async {}).await;
    });
}

fn ratio_of(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

fn report(name: &str, samples: Vec<Duration>) -> Duration {
    let (median, p10, p90) = median_and_spread(samples);
    println!("  {name:<62} median {median:>10.3?} (p10 {p10:.3?}, p90 {p90:.3?})");
    median
}

/// CPU seconds (user + system) process `pid` has used so far.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    let fields: Vec<&str> = stat.rsplit_once(')').map_or(vec![], |(_, rest)| rest.split_whitespace().collect());
    let ticks: f64 = fields.get(11..13).map_or(f64::NAN, |f| f.iter().filter_map(|v| v.parse::<f64>().ok()).sum());
    // SAFETY: sysconf reads a constant of the system.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    ticks / per_second
}

/// Waits until kube-apiserver has used no CPU for 300 ms (its garbage collector done with the last
/// command's garbage, so that the next command is charged with its own work only), at most 5 s; the
/// CPU seconds it has used by then.
fn settled(pid: u32) -> f64 {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut last = cpu_seconds(pid);
    loop {
        std::thread::park_timeout(Duration::from_millis(300));
        let now = cpu_seconds(pid);
        if now == last || Instant::now() > deadline {
            return now;
        }
        last = now;
    }
}

/// `report` of CPU seconds (as durations), for kube-apiserver's CPU per command.
fn report_cpu(name: &str, seconds: &[f64]) -> Duration {
    report(name, seconds.iter().map(|s| Duration::from_secs_f64(s.max(0.0))).collect())
}

/// Starts `run --dry-run -o json` and waits for its initial sync ("synced"); how long that took.
fn run_until_synced(mut command: Command) -> Duration {
    let start = Instant::now();
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("run starts");
    let stdout = BufReader::new(child.stdout.take().expect("piped"));
    let synced = stdout
        .lines()
        .map_while(Result::ok)
        .any(|line| serde_json::from_str::<serde_json::Value>(&line).is_ok_and(|event| event["type"] == "synced"));
    let elapsed = start.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    assert!(synced, "run reached its initial sync");
    elapsed
}

/// One raw `GET` through kube-rs, `accept`ing a content type and an `encoding` (`gzip`, as the
/// plugin, or `identity`): the answer's bytes (uncompressed) and the wall time.
fn raw_get(
    client: &kube::Client,
    runtime: &tokio::runtime::Runtime,
    path: &str,
    accept: &str,
    encoding: &str,
) -> (Vec<u8>, Duration) {
    runtime.block_on(async {
        let request = http::Request::get(path)
            .header(http::header::ACCEPT, accept)
            .header(http::header::ACCEPT_ENCODING, encoding)
            .body(kube::client::Body::empty());
        let start = Instant::now();
        let response = client.send(request.expect("a request")).await.expect("an answer");
        let bytes = response.into_body().collect_bytes().await.expect("a body");
        (bytes.to_vec(), start.elapsed())
    })
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // test harnesses list benchmarks; this one has no parts to list
    }
    let Some(plane) = control_plane::ControlPlane::start("bench", &control_plane::Options::default()) else {
        return;
    };
    let start = Instant::now();
    let batches = cluster();
    plane.create(&batches[0]);
    std::thread::scope(|scope| {
        for chunk in batches[1..].chunks(NODES / 4) {
            let plane = &plane;
            scope.spawn(move || chunk.iter().for_each(|batch| plane.create(batch)));
        }
    });
    write_statuses(&plane);
    println!(
        "real_apiserver: {NODES} nodes, {} pods created, their statuses written, in {:.1?}",
        NODES * PODS_PER_NODE,
        start.elapsed()
    );

    let dir = std::env::temp_dir().join(format!("taint-evict-bench-real-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    let kubeconfig = plane.kubeconfig().to_str().expect("UTF-8").to_owned();
    let plugin = env!("CARGO_BIN_EXE_kubectl-taint_evict");
    let node = "node-005";
    let selector = format!("spec.nodeName={node}");
    let command = |program: &str, args: &[&str]| {
        let mut c = Command::new(program);
        c.args(args).args(["--kubeconfig", &kubeconfig]).env("HOME", &dir).env_remove("KUBECONFIG");
        c
    };
    let plan_node = || command(plugin, &["plan", node, "-o", "json"]);
    let plan_node_quorum = || command(plugin, &["plan", node, "-o", "json", "--quorum-read"]);
    let kubectl_node = || command("kubectl", &["get", "pods", "-A", "--field-selector", &selector, "-o", "json"]);
    let plan_all = || command(plugin, &["plan", "-o", "json"]);
    let plan_all_quorum = || command(plugin, &["plan", "-o", "json", "--quorum-read"]);
    let kubectl_all = || command("kubectl", &["get", "nodes,pods", "-A", "-o", "json"]);
    let zone = "topology.kubernetes.io/zone=z0";
    let plan_down = || command(plugin, &["plan", "-l", zone, "--down-selector", zone, "-o", "json"]);
    let plan_node_json = || command(plugin, &["plan", node, "-o", "json", "--content-type", "json"]);
    let plan_all_json = || command(plugin, &["plan", "-o", "json", "--content-type", "json"]);
    let run_protobuf = || command(plugin, &["run", "--dry-run", "-o", "json"]);
    let run_json = || command(plugin, &["run", "--dry-run", "-o", "json", "--content-type", "json"]);
    // Protobuf without gzip (`--disable-compression`, for a client near the API server).
    let plan_all_plain = || command(plugin, &["plan", "-o", "json", "--disable-compression"]);
    let run_plain = || command(plugin, &["run", "--dry-run", "-o", "json", "--disable-compression"]);
    let apiserver = plane.pids().into_iter().find(|(name, _)| *name == "kube-apiserver").expect("kube-apiserver").1;

    let baseline = std::env::var("TAINT_EVICT_BENCH_BASELINE").ok();
    let plan_node_before = || command(baseline.as_deref().unwrap_or(plugin), &["plan", node, "-o", "json"]);
    let warm: [&dyn Fn() -> Command; 6] =
        [&plan_node, &plan_node_quorum, &kubectl_node, &plan_all, &kubectl_all, &plan_down];
    for make in warm {
        timed(&mut make()); // warm up, and kubectl's discovery cache, as in daily use
    }
    let mut commands: Vec<&dyn Fn() -> Command> = vec![
        &plan_node,
        &plan_node_quorum,
        &kubectl_node,
        &plan_all,
        &plan_all_quorum,
        &kubectl_all,
        &plan_down,
        &plan_node_json,
        &plan_all_json,
        &plan_all_plain,
    ];
    if baseline.is_some() {
        timed(&mut plan_node_before());
        commands.push(&plan_node_before);
    }
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); commands.len()];
    let mut cpu: Vec<Vec<f64>> = vec![Vec::new(); commands.len()];
    // `run` to its initial sync, each way: wall and kube-apiserver CPU.
    let starts: [&dyn Fn() -> Command; 3] = [&run_protobuf, &run_json, &run_plain];
    let mut start_samples: Vec<Vec<Duration>> = vec![Vec::new(); starts.len()];
    let mut start_cpu: Vec<Vec<f64>> = vec![Vec::new(); starts.len()];
    for _ in 0..RUNS {
        // kube-apiserver's CPU per command: from idle before it to idle after it (its garbage
        // collection included).
        for ((make, log), used) in commands.iter().zip(samples.iter_mut()).zip(cpu.iter_mut()) {
            let before = settled(apiserver);
            log.push(timed(&mut make()));
            used.push(settled(apiserver) - before);
        }
        for ((make, log), used) in starts.iter().zip(start_samples.iter_mut()).zip(start_cpu.iter_mut()) {
            let before = settled(apiserver);
            log.push(run_until_synced(make()));
            used.push(settled(apiserver) - before);
        }
    }
    let mut samples = samples.into_iter();
    let mut next = || samples.next().expect("samples");
    println!(
        "real_apiserver: kube-apiserver v1.29.6, {NODES} nodes x {PODS_PER_NODE} pods, {RUNS} runs each, interleaved"
    );
    let ours = report("kubectl-taint_evict plan node-005 -o json (watch cache)", next());
    let ours_quorum = report("kubectl-taint_evict plan node-005 -o json --quorum-read", next());
    let theirs = report("kubectl get pods -A --field-selector spec.nodeName=node-005 -o json", next());
    let all = report("kubectl-taint_evict plan -o json (watch cache)", next());
    let all_quorum = report("kubectl-taint_evict plan -o json --quorum-read", next());
    let all_theirs = report("kubectl get nodes,pods -A -o json", next());
    let down = report("kubectl-taint_evict plan -l ZONE --down-selector ZONE -o json", next());
    let node_json = report("kubectl-taint_evict plan node-005 -o json --content-type json", next());
    let all_json = report("kubectl-taint_evict plan -o json --content-type json", next());
    let all_plain = report("kubectl-taint_evict plan -o json --disable-compression", next());
    if baseline.is_some() {
        let before = report("baseline plan node-005 -o json (watch cache)", next());
        println!("  ratio plan NODE now / baseline (medians): {:.3}", ratio_of(ours, before));
    }
    let mut start_samples = start_samples.into_iter();
    let run_start = report("kubectl-taint_evict run --dry-run: start to synced", start_samples.next().expect("run"));
    let run_start_json = report(
        "kubectl-taint_evict run --dry-run --content-type json: start to synced",
        start_samples.next().expect("run"),
    );
    let run_start_plain = report(
        "kubectl-taint_evict run --dry-run --disable-compression: start to synced",
        start_samples.next().expect("run"),
    );
    println!("real_apiserver: kube-apiserver CPU per command (medians of {RUNS})");
    let cpu_of = |index: usize| cpu[index].clone();
    let cpu_all = report_cpu("plan -o json (protobuf)", &cpu_of(3));
    let cpu_all_json = report_cpu("plan -o json --content-type json", &cpu_of(8));
    let cpu_node = report_cpu("plan node-005 -o json (protobuf)", &cpu_of(0));
    let cpu_node_json = report_cpu("plan node-005 -o json --content-type json", &cpu_of(7));
    let cpu_kubectl_all = report_cpu("kubectl get nodes,pods -A -o json", &cpu_of(5));
    let cpu_run = report_cpu("run --dry-run to synced (protobuf)", &start_cpu[0]);
    let cpu_run_json = report_cpu("run --dry-run to synced --content-type json", &start_cpu[1]);
    let cpu_all_plain = report_cpu("plan -o json --disable-compression", &cpu_of(9));
    let cpu_run_plain = report_cpu("run --dry-run to synced --disable-compression", &start_cpu[2]);
    println!(
        "  ratio protobuf / json, kube-apiserver CPU (medians): plan {:.3} (target <= 0.25), run start-up {:.3} \
         (target <= 0.25), plan NODE {:.3}; kubectl get nodes,pods {:.3?}",
        ratio_of(cpu_all, cpu_all_json),
        ratio_of(cpu_run, cpu_run_json),
        ratio_of(cpu_node, cpu_node_json),
        cpu_kubectl_all
    );
    println!(
        "  ratio protobuf / json, wall (medians): plan {:.3} (target <= 0.5), run start-up {:.3}, plan NODE {:.3} \
         (target <= 1)",
        ratio_of(all, all_json),
        ratio_of(run_start, run_start_json),
        ratio_of(ours, node_json)
    );
    println!(
        "  --disable-compression / json (gzip), medians: plan wall {:.3}, CPU {:.3}; run start-up wall {:.3}, CPU {:.3}",
        ratio_of(all_plain, all_json),
        ratio_of(cpu_all_plain, cpu_all_json),
        ratio_of(run_start_plain, run_start_json),
        ratio_of(cpu_run_plain, cpu_run_json)
    );
    raw_lists(&plane, apiserver);
    println!(
        "  ratio plan NODE / kubectl (medians): {:.3} (quorum read: {:.3})",
        ratio_of(ours, theirs),
        ratio_of(ours_quorum, theirs)
    );
    println!(
        "  ratio plan / kubectl get nodes,pods (medians): {:.3} (quorum read: {:.3})",
        ratio_of(all, all_theirs),
        ratio_of(all_quorum, all_theirs)
    );
    println!(
        "  ratio plan --down-selector / kubectl get nodes,pods (medians): {:.3} (/ plan: {:.3})",
        ratio_of(down, all_theirs),
        ratio_of(down, all)
    );
}

/// One `LIST /api/v1/pods?resourceVersion=0` (every pod, from the watch cache) in each content type,
/// interleaved: wall, kube-apiserver CPU, bytes; then this decoder on those very answers.
fn raw_lists(plane: &control_plane::ControlPlane, apiserver: u32) {
    use taint_evict::decode::{protobuf::to_json, read_page};
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let client = admin_client(plane, &runtime);
    let path = "/api/v1/pods?resourceVersion=0";
    let ways = [
        ("protobuf, gzip", "application/vnd.kubernetes.protobuf", "gzip"),
        ("json, gzip", "application/json", "gzip"),
        ("protobuf, identity", "application/vnd.kubernetes.protobuf", "identity"),
        ("json, identity", "application/json", "identity"),
    ];
    let mut answers: Vec<Vec<u8>> = vec![Vec::new(); ways.len()];
    let (mut walls, mut cpus): (Vec<Vec<Duration>>, Vec<Vec<f64>>) =
        (vec![Vec::new(); ways.len()], vec![Vec::new(); ways.len()]);
    for _ in 0..5 {
        for (i, (_, accept, encoding)) in ways.iter().enumerate() {
            let before = settled(apiserver);
            let (bytes, wall) = raw_get(&client, &runtime, path, accept, encoding);
            cpus[i].push(settled(apiserver) - before);
            walls[i].push(wall);
            answers[i] = bytes;
        }
    }
    println!("real_apiserver: LIST {path}, medians of 5, interleaved");
    for (i, (name, _, _)) in ways.iter().enumerate() {
        let wall = report(&format!("{name}: wall"), walls[i].clone());
        let cpu = report_cpu(&format!("{name}: kube-apiserver CPU"), &cpus[i]);
        println!("    {name}: {:.1} MB, wall {wall:.3?}, CPU {cpu:.3?}", answers[i].len() as f64 / 1e6);
    }
    if let Ok(dir) = std::env::var("TAINT_EVICT_BENCH_SAVE") {
        std::fs::write(format!("{dir}/pods.pb"), &answers[0]).expect("saved");
        std::fs::write(format!("{dir}/pods.json"), &answers[1]).expect("saved");
    }
    let (protobuf, json) = (&answers[0], &answers[1]);
    let pods = read_page(json, "Pod").expect("a page").snapshot.pods.len();
    assert_eq!(read_page(&to_json(protobuf).expect("reads"), "Pod").expect("a page").snapshot.pods.len(), pods);
    let mut rewrite = Vec::new();
    let mut protobuf_read = Vec::new();
    let mut json_read = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        let slim = to_json(protobuf).expect("reads");
        rewrite.push(start.elapsed());
        std::hint::black_box(read_page(&slim, "Pod").expect("a page"));
        protobuf_read.push(start.elapsed());
        let start = Instant::now();
        std::hint::black_box(read_page(json, "Pod").expect("a page"));
        json_read.push(start.elapsed());
    }
    println!("real_apiserver: decoding those answers ({pods} pods), medians of {RUNS}");
    let rewritten = report("protobuf rewritten as the JSON of the fields read", rewrite);
    let protobuf = report("protobuf: rewritten, then read", protobuf_read);
    let json = report("json: read (the streaming reader)", json_read);
    let per_second = |d: Duration| pods as f64 / d.as_secs_f64();
    println!(
        "  pods per second: protobuf {:.0} (the rewrite alone {:.0}), json {:.0}; ratio {:.3}",
        per_second(protobuf),
        per_second(rewritten),
        per_second(json),
        ratio_of(protobuf, json)
    );
}
