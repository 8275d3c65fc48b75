//! `run` shows the node lifecycle controller's coming taints: a node whose Lease stops renewing is
//! reported (`foreseen`, JSON Lines) with its predicted taint window before any taint exists; the
//! window moves when the Lease renews once more, and the node is cleared when it renews for good.
//! `run` itself never taints a node.

use serde_json::{Value, json};

use crate::support::running::Running;
use crate::util::{instant, scratch};
use taint_evict_test_support::fake_apiserver::{FakeApiServer, Fault};

/// `seconds` ago, to the microsecond (a Lease's MicroTime).
fn ago(seconds: i64) -> String {
    let at = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(seconds);
    at.round(jiff::Unit::Microsecond).expect("round").to_string()
}

fn node(name: &str, heartbeat: &str) -> Value {
    json!({"kind": "Node", "apiVersion": "v1",
           "metadata": {"name": name, "creationTimestamp": "2026-01-01T00:00:00Z",
                        "labels": {"topology.kubernetes.io/region": "r", "topology.kubernetes.io/zone": "z"}},
           "spec": {},
           "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                       "lastHeartbeatTime": heartbeat, "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})
}

fn lease(name: &str, renewed: &str) -> Value {
    json!({"kind": "Lease", "apiVersion": "coordination.k8s.io/v1",
           "metadata": {"name": name, "namespace": "kube-node-lease"},
           "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": renewed}})
}

/// n1 silent for 40 s (its Lease and heartbeat), n2 and n3 heard from just now, all in zone z.
fn cluster(name: &str) -> FakeApiServer {
    cluster_silent_for(name, 40)
}

/// n1 silent for `seconds` (its Lease and heartbeat), n2 and n3 heard from just now, all in zone z.
fn cluster_silent_for(name: &str, seconds: i64) -> FakeApiServer {
    let server = FakeApiServer::start(&scratch(name));
    server.serve_version(29);
    let (silent, fresh) = (ago(seconds), ago(0));
    server.add(node("n1", &silent));
    server.add(lease("n1", &silent));
    for other in ["n2", "n3"] {
        server.add(node(other, &fresh));
        server.add(lease(other, &fresh));
    }
    server
}

fn foreseen(line: &Value, node: &str) -> bool {
    line["type"] == "foreseen" && line["node"] == node
}

#[test]
fn run_reports_a_silent_nodes_taint_window_and_follows_its_lease() {
    let server = cluster("run-foreseen");
    // The others stay "heard from" for the test's length without renewing.
    let mut run = Running::start(&server, &["--dry-run", "--silent-after", "30s"]);
    let first = run.expect("n1's predicted taint", |l| foreseen(l, "n1") && !l["predictedTaint"].is_null());
    let taint = &first["predictedTaint"];
    assert_eq!((&taint["key"], &taint["basis"]), (&"node.kubernetes.io/unreachable".into(), &"lost-heartbeat".into()));
    assert_eq!((&first["zone"], &first["ready"], &first["held"]), (&"z".into(), &"True".into(), &Value::Null));
    let earliest = instant(taint["earliest"].as_str().expect("earliest"));
    let renewed = instant(first["lastHeartbeat"].as_str().expect("lastHeartbeat"));
    // Grace 40 s (1.29), then a pass (5 s) before it is queued: 45–50 s after the heartbeat.
    let after = (earliest - renewed) as f64 / 1e9;
    assert!((44.0..=51.0).contains(&after), "taint expected {after} s after the last heartbeat");
    assert!(!run.seen.iter().any(|l| l["type"] == "foreseen" && l["node"] != "n1"), "{:#?}", run.seen);

    // One more renewal, 10 s later than the last: the window moves 10 s later.
    server.add(lease("n1", &ago(30)));
    let moved = run.expect("the window moved", |l| {
        foreseen(l, "n1")
            && l["predictedTaint"]["earliest"].as_str().is_some_and(|at| instant(at) > earliest + 5_000_000_000)
    });
    assert_eq!(moved["predictedTaint"]["basis"], "lost-heartbeat");

    // Renewing again: nothing to expect any more.
    server.add(lease("n1", &ago(0)));
    let cleared = run.expect("n1 cleared", |l| foreseen(l, "n1") && l["predictedTaint"].is_null());
    assert_eq!(cleared["held"], Value::Null);
    let (_, code, _) = run.interrupt_and_read();
    assert_eq!(code, 0);
    // run never taints a node.
    assert!(!server.requests().iter().any(|r| r.path.starts_with("/api/v1/nodes") && r.method != "GET"));
}

#[test]
fn run_reads_the_controllers_settings_from_its_pod_and_says_when_it_assumes_them() {
    // kube-controller-manager as kubeadm runs it: a static pod in kube-system, a 10 s grace period.
    // n1 silent for 5 s: its window follows the grace period (with 40 s, 45–50 s after it).
    let server = cluster_silent_for("run-foreseen-settings", 5);
    server.add(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "kube-controller-manager-cp-1", "namespace": "kube-system",
                     "uid": "5c1c3e0e-0000-4000-8000-00000000c0de",
                     "labels": {"component": "kube-controller-manager", "tier": "control-plane"}},
        "spec": {"nodeName": "cp-1", "containers": [{"name": "kube-controller-manager",
                 "command": ["kube-controller-manager", "--node-monitor-grace-period=10s"]}]}}));
    let mut run = Running::start(&server, &["--dry-run", "--silent-after", "3s"]);
    let first = run.expect("n1's predicted taint", |l| foreseen(l, "n1") && !l["predictedTaint"].is_null());
    let earliest = instant(first["predictedTaint"]["earliest"].as_str().expect("earliest"));
    let renewed = instant(first["lastHeartbeat"].as_str().expect("lastHeartbeat"));
    // Grace 10 s, read from the pod (not 1.29's 40 s), then a pass (5 s): 14–16 s after the heartbeat.
    let after = (earliest - renewed) as f64 / 1e9;
    assert!((9.0..=16.0).contains(&after), "taint expected {after} s after the last heartbeat");
    let (_, code, lines) = run.interrupt_and_read();
    assert_eq!(code, 0);
    let warnings: Vec<&Value> = lines.iter().filter(|l| l["type"] == "warning").collect();
    assert!(warnings.is_empty(), "the settings were read: {warnings:?}");

    // No pod: the defaults, said in one line.
    let server = cluster("run-foreseen-settings-assumed");
    let mut run = Running::start(&server, &["--dry-run", "--silent-after", "30s"]);
    let warning = run.expect("the line", |l| l["type"] == "warning");
    let message = warning["message"].as_str().expect("a message");
    assert!(
        message.starts_with("the node lifecycle controller's settings are assumed at kube-controller-manager 1.29's")
            && message.ends_with(
                "no pod labelled component=kube-controller-manager in namespace \"kube-system\"; give its flags, or \
                 --controller-settings FILE"
            ),
        "{message}"
    );
    let (_, code, _) = run.interrupt_and_read();
    assert_eq!(code, 0);
}

#[test]
fn run_predicts_nothing_before_the_leases_are_listed() {
    // Fixed: a node gone Ready=Unknown was first announced from its status heartbeat (written
    // every 5 minutes) while the Leases were still being listed, then again from its Lease.
    let server = cluster("run-foreseen-listing");
    let renewed = ago(40);
    let mut n1 = node("n1", &ago(240));
    n1["status"]["conditions"][0]["status"] = json!("Unknown");
    n1["status"]["conditions"][0]["reason"] = json!("NodeStatusUnknown");
    server.add(n1);
    server.add(lease("n1", &renewed));
    let path = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";
    server.fail("GET", path, Fault::Slow(std::time::Duration::from_secs(2)));
    let mut run = Running::start(&server, &["--dry-run", "--silent-after", "30s"]);
    let first = run.expect("n1's predicted taint", |l| foreseen(l, "n1"));
    assert_eq!(first["ready"], "Unknown");
    let heartbeat = instant(first["lastHeartbeat"].as_str().expect("lastHeartbeat"));
    assert_eq!(heartbeat / 1_000, instant(&renewed) / 1_000, "announced from its Lease: {first}");
    let (_, code, _) = run.interrupt_and_read();
    assert_eq!(code, 0);
}

#[test]
fn run_without_permission_to_list_leases_warns_and_goes_by_ready_conditions() {
    let server = cluster("run-foreseen-forbidden");
    let path = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";
    server.fail("GET", path, Fault::Status(403, "leases.coordination.k8s.io is forbidden".into()));
    let mut run = Running::start(&server, &["--dry-run", "--silent-after", "30s"]);
    let warning = run.expect("the warning", |l| l["type"] == "warning");
    assert_eq!(
        warning["message"],
        "cannot list leases in namespace \"kube-node-lease\" (forbidden): a silent kubelet is seen only once its node \
         is Ready=Unknown (grant list and watch on leases there: deploy/rbac-run.yaml)"
    );
    let (_, code, lines) = run.interrupt_and_read();
    assert_eq!(code, 0);
    assert!(!lines.iter().any(|l| l["type"] == "foreseen"), "{lines:#?}");
}

#[test]
fn plan_watch_shows_a_silent_nodes_taint_window_as_plan_does() {
    // Fixed: `plan -w` never showed the silent-node predictions `plan` shows.
    let server = cluster("plan-watch-foreseen");
    // The pods listed last: the foresight is ready before the view is synced.
    server.fail("GET", "/api/v1/pods", Fault::Slow(std::time::Duration::from_secs(1)));
    let kubeconfig = server.kubeconfig().to_str().expect("UTF-8").to_owned();
    let mut watch = Running::spawn(crate::util::command().args([
        "plan",
        "-w",
        "--kubeconfig",
        &kubeconfig,
        "--silent-after",
        "30s",
    ]));
    let first = watch.expect("n1's predicted taint", |l| foreseen(l, "n1") && !l["predictedTaint"].is_null());
    assert_eq!(first["predictedTaint"]["key"], "node.kubernetes.io/unreachable");
    assert!(!watch.seen.iter().any(|l| foreseen(l, "n2") || foreseen(l, "n3")), "{:?}", watch.seen);
    // The state at the start first, as the README says: synced, then what is foreseen.
    assert_eq!(watch.seen[0]["type"], "synced", "{:?}", watch.seen);
    watch.signal("-INT");
    assert_eq!(watch.child.wait().expect("plan -w exits").code(), Some(0));
}

/// The LISTs and WATCHes of nodes a command made.
fn node_reads(server: &FakeApiServer) -> (usize, usize) {
    let requests = server.requests();
    let nodes: Vec<_> = requests.iter().filter(|r| r.method == "GET" && r.path == "/api/v1/nodes").collect();
    (nodes.iter().filter(|r| !r.is_watch()).count(), nodes.iter().filter(|r| r.is_watch()).count())
}

#[test]
fn one_node_watch_feeds_the_engine_and_the_foresight_of_run_and_plan_watch() {
    // Fixed: the foresight opened a second watch of every node beside the engine's, and decoded
    // each node twice over. One watch of every node now feeds both: the engine follows the node
    // named, the foresight counts every node's zone and shows the one named.
    for watch in [false, true] {
        let server = cluster(if watch { "one-node-watch-plan" } else { "one-node-watch-run" });
        let mut running = if watch {
            let kubeconfig = server.kubeconfig().to_str().expect("UTF-8").to_owned();
            let mut command = crate::util::command();
            command.args(["plan", "-w", "n1", "--silent-after", "30s", "--kubeconfig", &kubeconfig]);
            Running::spawn(&mut command)
        } else {
            Running::start(&server, &["n1", "--dry-run", "--silent-after", "30s"])
        };
        running.expect("n1's predicted taint", |l| foreseen(l, "n1") && !l["predictedTaint"].is_null());
        assert!(!running.seen.iter().any(|l| l["type"] == "foreseen" && l["node"] != "n1"), "{:#?}", running.seen);
        // One LIST, the watch's (the pods whose tolerations were edited mid-countdown are found in
        // the first lists, and no permission check lists them before), and one WATCH (before: four
        // LISTs and two WATCHes).
        let requests = server.requests().iter().map(ToString::to_string).collect::<Vec<_>>();
        assert_eq!(node_reads(&server), (1, 1), "watch {watch}: {requests:#?}");
        if watch {
            running.signal("-INT");
            assert_eq!(running.child.wait().expect("plan -w exits").code(), Some(0));
        } else {
            let (_, code, _) = running.interrupt_and_read();
            assert_eq!(code, 0);
        }
    }
}
