//! `plan` and `explain` against a live API server (the in-process fake over real HTTP): the same
//! plan as from a dump, the requests a careful client makes, and one clear line for each failure.

use std::time::Duration;

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::util::{Run, as_from_dump, command, read_json, repo, run, run_command, scratch};
use taint_evict_test_support::fake_apiserver::{FakeApiServer, Fault, Recorded};

const NOW: &str = "2026-11-22T10:00:00Z";

fn incident() -> Value {
    read_json(&repo().join("examples/incident.json"))
}

fn server_with(name: &str, dump: &Value) -> FakeApiServer {
    let server = FakeApiServer::start(&scratch(name));
    server.load(dump);
    server
}

/// Runs the binary against `server` (`--kubeconfig` appended).
fn live(server: &FakeApiServer, args: &[&str]) -> Run {
    let kubeconfig = server.kubeconfig().to_str().expect("UTF-8 path").to_owned();
    run_command(command().args(args).args(["--kubeconfig", &kubeconfig]), None)
}

fn lists<'a>(requests: &'a [Recorded], path: &str) -> Vec<&'a Recorded> {
    requests.iter().filter(|r| r.path == path).collect()
}

#[test]
fn live_plan_equals_the_plan_of_the_same_objects_in_a_file() {
    let server = server_with("live-equals-file", &incident());
    for extra in [&[][..], &["worker-3", "worker-1"][..], &["-l", "topology.kubernetes.io/zone=eu-west-1c"][..]] {
        let mut args = vec!["plan", "--now", NOW, "-o", "json"];
        args.extend(extra);
        let from_cluster = live(&server, &args);
        assert_eq!(from_cluster.code, 0, "{}", from_cluster.stderr);
        let mut file_args = args.clone();
        file_args.extend(["-f", "examples/incident.json"]);
        let from_file = run(&file_args, None);
        assert_eq!(as_from_dump(&from_cluster.stdout, "watch-cache"), from_file.stdout, "plan {extra:?}");
    }
}

#[test]
fn reads_ask_for_protobuf_and_take_json_from_a_server_that_answers_it() {
    let from_file = run(&["plan", "--now", NOW, "-o", "json", "-f", "examples/incident.json"], None);
    let server = server_with("content-types", &incident());
    let answered = |run: &Run| {
        let plan: Value = serde_json::from_str(&run.stdout).expect("JSON");
        plan["contentType"].as_str().map(str::to_owned)
    };
    let protobuf = live(&server, &["plan", "--now", NOW, "-o", "json"]);
    assert_eq!(answered(&protobuf).as_deref(), Some("protobuf"), "{}", protobuf.stderr);
    let json = live(&server, &["plan", "--now", NOW, "-o", "json", "--content-type", "json"]);
    assert_eq!(answered(&json).as_deref(), Some("json"));
    // A server that answers JSON to a read asking for protobuf first: read as JSON.
    server.json_only();
    let fallback = live(&server, &["plan", "--now", NOW, "-o", "json"]);
    assert_eq!(answered(&fallback).as_deref(), Some("json"));
    for read in [protobuf, json, fallback] {
        assert_eq!(as_from_dump(&read.stdout, "watch-cache"), from_file.stdout);
    }
}

#[test]
fn reads_ask_for_gzip_unless_the_flag_or_the_kubeconfig_disables_compression() {
    let server = server_with("compression", &incident());
    // What each read of a run asked for, by the requests the server saw since `from`.
    let asked = |from: usize| -> Vec<String> {
        let requests = server.requests();
        requests[from..].iter().filter(|r| r.method == "GET").map(|r| r.accept_encoding.clone()).collect()
    };
    let args = ["plan", "--now", NOW, "-o", "json"];
    let compressed = live(&server, &args);
    assert_eq!(compressed.code, 0, "{}", compressed.stderr);
    let gzip = asked(0);
    assert!(!gzip.is_empty() && gzip.iter().all(|asked| asked.contains("gzip")), "{gzip:?}");

    let from = server.requests().len();
    let flagged = live(&server, &[&args[..], &["--disable-compression"]].concat());
    assert_eq!(flagged.code, 0, "{}", flagged.stderr);
    let plain = asked(from);
    assert!(!plain.is_empty() && plain.iter().all(|asked| !asked.contains("gzip")), "{plain:?}");

    // The kubeconfig cluster's `disable-compression`, as kubectl reads it.
    let kubeconfig = std::fs::read_to_string(server.kubeconfig()).expect("the fake's kubeconfig");
    let disabled = scratch("compression-kubeconfig").join("config");
    let text = kubeconfig.replacen("    server: ", "    disable-compression: true\n    server: ", 1);
    assert_ne!(text, kubeconfig);
    std::fs::write(&disabled, text).expect("a kubeconfig");
    let from = server.requests().len();
    let configured = run_command(command().args(args).arg("--kubeconfig").arg(&disabled), None);
    assert_eq!(configured.code, 0, "{}", configured.stderr);
    let plain = asked(from);
    assert!(!plain.is_empty() && plain.iter().all(|asked| !asked.contains("gzip")), "{plain:?}");
    // The documents are the same either way.
    assert_eq!(flagged.stdout, compressed.stdout);
    assert_eq!(configured.stdout, compressed.stdout);
}

#[test]
fn named_node_is_one_get_and_one_field_selected_pod_list() {
    let server = server_with("request-shape-named", &incident());
    // worker-4 is Ready=True: nothing the node lifecycle controller would do to it needs other nodes.
    let result = live(&server, &["plan", "worker-4", "--now", NOW]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let requests = server.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(lists(&requests, "/api/v1/nodes/worker-4").len(), 1, "{paths:?}");
    assert!(lists(&requests, "/api/v1/nodes").is_empty(), "no node LIST for a healthy named node: {paths:?}");
    let pods = lists(&requests, "/api/v1/pods");
    assert_eq!(pods.len(), 1, "{paths:?}");
    assert_eq!(pods[0].param("fieldSelector"), "spec.nodeName=worker-4");
    // From the watch cache: resourceVersion=0, no limit (a limited read would go to etcd).
    assert_eq!((pods[0].param("resourceVersion"), pods[0].param("limit")), ("0", ""));
    assert_eq!(pods[0].param("resourceVersionMatch"), "NotOlderThan");
    assert_eq!(lists(&requests, "/api/v1/nodes/worker-4")[0].param("resourceVersion"), "0");
    assert_eq!(
        lists(&requests, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager").len(),
        1
    );
    // What the node lifecycle controller reads: the node Leases (one LIST, from the watch cache);
    // the server's version only matters for a node that may be tainted.
    let leases = lists(&requests, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases");
    assert_eq!(leases.len(), 1, "{paths:?}");
    assert_eq!(leases[0].param("resourceVersion"), "0");
    // The pod counting down (it tolerates worker-4's taint for a while) is not read again: whether its
    // tolerations were edited since came with it (its managedFields; docs/upstream.md).
    assert!(lists(&requests, "/api/v1/namespaces/batch/pods").is_empty(), "{paths:?}");
    assert_eq!(requests.len(), 4, "nothing else is read: {paths:?}");
}

#[test]
fn named_node_that_is_not_ready_also_reads_every_node_to_count_its_zone() {
    let server = server_with("request-shape-named-unknown", &incident());
    let result = live(&server, &["plan", "worker-3", "--now", NOW]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let requests = server.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(lists(&requests, "/api/v1/nodes/worker-3").len(), 1, "{paths:?}");
    assert_eq!(lists(&requests, "/api/v1/nodes").len(), 1, "one node LIST: {paths:?}");
    assert_eq!(lists(&requests, "/version").len(), 1, "the controller's defaults: {paths:?}");
    // Its condition taint: the nodes' Events, once (a swapped taint); the pods counting down are not
    // read again (whether a toleration was edited since came with them): one LIST of the node's
    // pods, no GET of one.
    assert_eq!(lists(&requests, "/api/v1/events").len(), 1, "{paths:?}");
    let pods: Vec<&str> = lists(&requests, "/api/v1/pods").iter().map(|r| r.param("fieldSelector")).collect();
    assert_eq!(pods, ["spec.nodeName=worker-3"], "{paths:?}");
    // The controller's settings: one LIST of its pod in kube-system, by label; no GET of a pod.
    let system = lists(&requests, "/api/v1/namespaces/kube-system/pods");
    assert_eq!(system.len(), 1, "{paths:?}");
    assert_eq!(system[0].param("labelSelector"), "component=kube-controller-manager");
    let one = requests.iter().filter(|r| r.path.starts_with("/api/v1/namespaces/")).count();
    assert_eq!(one, 1, "{paths:?}");
    assert_eq!(requests.len(), 8, "nothing else is read: {paths:?}");
}

#[test]
fn label_selector_is_sent_to_the_server() {
    let server = server_with("request-shape-labels", &incident());
    let result = live(&server, &["plan", "-l", "kubernetes.io/hostname=worker-4", "--now", NOW]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let requests = server.requests();
    let nodes = lists(&requests, "/api/v1/nodes");
    assert_eq!(nodes.len(), 1);
    assert_eq!(nodes[0].param("labelSelector"), "kubernetes.io/hostname=worker-4");
    let pods = lists(&requests, "/api/v1/pods");
    assert_eq!(pods.iter().map(|r| r.param("fieldSelector")).collect::<Vec<_>>(), ["spec.nodeName=worker-4"]);
    assert!(result.stdout.contains("Node worker-4") && !result.stdout.contains("Node worker-3"), "{}", result.stdout);
}

fn many_nodes(count: usize, pods_per_node: usize) -> Value {
    let mut items = Vec::new();
    for n in 0..count {
        items.push(json!({"kind": "Node", "apiVersion": "v1", "metadata": {"name": format!("node-{n:02}")},
            "spec": {"taints": [{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": "2026-11-22T09:55:00Z"}]}}));
        for p in 0..pods_per_node {
            items.push(json!({"kind": "Pod", "apiVersion": "v1",
                "metadata": {"name": format!("pod-{n:02}-{p}"), "namespace": "default", "uid": format!("uid-{n}-{p}"),
                             "creationTimestamp": "2026-11-22T08:00:00Z"},
                "spec": {"nodeName": format!("node-{n:02}"), "tolerations": [
                    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300 + p}]},
                "status": {"phase": "Running"}}));
        }
    }
    json!({"apiVersion": "v1", "kind": "List", "items": items})
}

#[test]
fn many_nodes_read_their_pods_in_one_cluster_wide_list() {
    let server = server_with("request-shape-many", &many_nodes(8, 2));
    let result = live(&server, &["plan", "--now", NOW, "-o", "json"]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let requests = server.requests();
    let pods = lists(&requests, "/api/v1/pods");
    assert_eq!(pods.iter().map(|r| r.param("fieldSelector")).collect::<Vec<_>>(), ["spec.nodeName!="]);
    let plan: Value = serde_json::from_str(&result.stdout).expect("JSON");
    assert_eq!(plan["nodes"].as_array().map(Vec::len), Some(8));
}

#[test]
fn quorum_read_asks_etcd_in_pages() {
    let server = server_with("request-shape-quorum", &incident());
    let result = live(&server, &["plan", "worker-3", "--now", NOW, "--quorum-read"]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let requests = server.requests();
    // The pods, once (their history comes with them), from etcd, in pages.
    let pods = lists(&requests, "/api/v1/pods");
    assert_eq!(pods.len(), 1);
    assert_eq!((pods[0].param("resourceVersion"), pods[0].param("limit")), ("", "500"));
    assert_eq!(lists(&requests, "/api/v1/nodes/worker-3")[0].param("resourceVersion"), "");
    let cached = live(&server, &["plan", "worker-3", "--now", NOW]);
    assert_eq!(result.stdout, cached.stdout, "the same answer from either read");
    // The JSON says which read answered.
    let quorum = live(&server, &["plan", "worker-3", "--now", NOW, "--quorum-read", "-o", "json"]);
    let cached = live(&server, &["plan", "worker-3", "--now", NOW, "-o", "json"]);
    assert_eq!(as_from_dump(&quorum.stdout, "quorum"), as_from_dump(&cached.stdout, "watch-cache"));
}

#[test]
fn list_pages_are_followed_to_the_end() {
    let server = server_with("paging", &many_nodes(1, 12));
    server.cap_pages(5);
    let result = live(&server, &["plan", "node-00", "--now", NOW, "-o", "json"]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let requests = server.requests();
    let continues: Vec<&str> = lists(&requests, "/api/v1/pods").iter().map(|r| r.param("continue")).collect();
    assert_eq!(continues, ["", "5", "10"]);
    let plan: Value = serde_json::from_str(&result.stdout).expect("JSON");
    assert_eq!(plan["nodes"][0]["pods"].as_array().map(Vec::len), Some(12));
}

#[test]
fn explain_reads_the_pod_and_its_node() {
    let server = server_with("explain-live", &incident());
    let args = ["explain", "-n", "payments", "postgres-0", "--now", NOW];
    let from_cluster = live(&server, &args);
    assert_eq!(from_cluster.code, 0, "{}", from_cluster.stderr);
    let mut file_args = args.to_vec();
    file_args.extend(["-f", "examples/incident.json"]);
    // The same, but for what only a live read can look at: the node's Events (no `NodeNotReady`
    // here), which a dump does not hold, and so says.
    let from_file = run(&file_args, None).stdout;
    let (note, rest): (Vec<&str>, Vec<&str>) =
        from_file.split_inclusive('\n').partition(|line| line.contains("The input holds no Events"));
    assert_eq!(note.len(), 1, "{from_file}");
    assert_eq!(from_cluster.stdout, rest.concat());
    let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert!(paths.contains(&"/api/v1/namespaces/payments/pods/postgres-0".to_owned()), "{paths:?}");
    assert!(paths.contains(&"/api/v1/events".to_owned()), "the node's Events are read: {paths:?}");
    assert!(!paths.contains(&"/api/v1/pods".to_owned()), "explain lists no pods: {paths:?}");
}

#[test]
fn forbidden_lease_is_no_restart_not_an_error() {
    let server = server_with("lease-forbidden", &incident());
    server.fail(
        "GET",
        "/apis/coordination.k8s.io",
        Fault::Status(403, "leases.coordination.k8s.io is forbidden".into()),
    );
    let result = live(&server, &["plan", "worker-3", "--now", NOW]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert!(result.stdout.contains("postgres-0"));
}

/// Asserts the exit code and the first two stderr lines (error and hint).
fn fails(result: &Run, error: &str, hint_contains: &str) {
    assert_eq!(result.code, 1, "{}", result.stderr);
    let mut lines = result.stderr.lines();
    assert_eq!(lines.next(), Some(error), "{}", result.stderr);
    let hint = lines.next().unwrap_or_default();
    assert!(hint.starts_with("hint: ") && hint.contains(hint_contains), "{}", result.stderr);
    assert!(result.stdout.is_empty());
}

#[test]
fn unauthorized_names_the_server() {
    let server = server_with("unauthorized", &incident());
    server.fail("GET", "/", Fault::Status(401, "Unauthorized".into()));
    let result = live(&server, &["plan", "worker-3"]);
    let error = format!("error: {} rejected the credentials (401 Unauthorized) on get nodes", server.url());
    fails(&result, &error, "credentials");
    assert!(!result.stderr.contains("fake-token"), "no credential is ever printed");
}

#[test]
fn forbidden_names_the_verb_resource_and_needed_rbac() {
    let server = server_with("forbidden", &incident());
    let message =
        "pods is forbidden: User \"dev\" cannot list resource \"pods\" in API group \"\" at the cluster scope";
    server.fail("GET", "/api/v1/pods", Fault::Status(403, message.into()));
    let result = live(&server, &["plan", "worker-3"]);
    fails(&result, &format!("error: forbidden: cannot list pods at the cluster scope: {message}"), "list on pods");
}

#[test]
fn unknown_node_is_not_found() {
    let server = server_with("node-not-found", &incident());
    fails(&live(&server, &["plan", "worker-9"]), "error: node \"worker-9\" not found", "kubectl get nodes");
}

#[test]
fn unknown_pod_is_not_found() {
    let server = server_with("pod-not-found", &incident());
    fails(&live(&server, &["explain", "ghost", "-n", "web"]), "error: pod \"web/ghost\" not found", "-n");
}

#[test]
fn pod_in_another_namespace_is_named_with_its_namespace() {
    // Without -n the context's namespace is searched, and the hint says so, or says
    // where the pod is.
    let server = server_with("pod-elsewhere", &incident());
    let result = live(&server, &["explain", "postgres-0"]);
    assert_eq!(result.code, 1, "{}", result.stderr);
    let lines: Vec<&str> = result.stderr.lines().collect();
    assert_eq!(
        lines,
        [
            "error: pod \"default/postgres-0\" not found",
            "hint: a pod \"postgres-0\" is in namespace \"payments\": add -n payments"
        ]
    );
    let result = live(&server, &["explain", "ghost"]);
    assert_eq!(
        result.stderr.lines().nth(1),
        Some("hint: without -n, the pod is looked up in the kubeconfig context's namespace (\"default\")")
    );
}

#[test]
fn server_error_is_reported_with_its_code() {
    let server = server_with("server-error", &incident());
    server.fail("GET", "/api/v1/pods", Fault::Status(500, "etcdserver: request timed out".into()));
    let result = live(&server, &["plan", "worker-3"]);
    assert_eq!(result.code, 1);
    assert_eq!(
        result.stderr.lines().next(),
        Some("error: list pods at the cluster scope failed: etcdserver: request timed out (500)")
    );
}

#[test]
fn slow_server_times_out_with_request_timeout() {
    let server = server_with("slow", &incident());
    server.fail("GET", "/api/v1/pods", Fault::Slow(Duration::from_secs(30)));
    let result = live(&server, &["plan", "worker-3", "--request-timeout", "1s"]);
    let error = format!("error: list pods at the cluster scope at {} timed out after 1s", server.url());
    fails(&result, &error, "--request-timeout");
}

#[test]
fn dropped_connection_is_reported_as_unreachable() {
    let server = server_with("dropped", &incident());
    server.fail("GET", "/api/v1/nodes", Fault::Drop);
    let result = live(&server, &["plan", "worker-3"]);
    assert_eq!(result.code, 1, "{}", result.stderr);
    let first = result.stderr.lines().next().unwrap_or_default();
    assert!(first.starts_with(&format!("error: cannot connect to {}: ", server.url())), "{}", result.stderr);
}

#[test]
fn unreachable_server_names_its_url() {
    let dir = scratch("unreachable");
    let kubeconfig = dir.join("kubeconfig");
    let text = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:9\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\ncurrent-context: c\nusers:\n- name: u\n  user:\n    token: t0ps3cret\n";
    std::fs::write(&kubeconfig, text).expect("kubeconfig");
    let result = run_command(command().args(["plan", "n1", "--kubeconfig", kubeconfig.to_str().expect("UTF-8")]), None);
    fails(&result, "error: cannot connect to http://127.0.0.1:9: connection refused", "kubectl cluster-info");
    assert!(!result.stderr.contains("t0ps3cret"));
}

#[test]
fn kubeconfig_problems_name_the_file_and_contexts() {
    let server = server_with("kubeconfig-errors", &incident());
    let result = live(&server, &["plan", "--context", "prod"]);
    fails(&result, "error: context \"prod\" not found in the kubeconfig (contexts: fake)", "get-contexts");
    let missing = run(&["plan", "--kubeconfig", "no/such/kubeconfig"], None);
    assert_eq!(missing.code, 1);
    assert_eq!(missing.stderr.lines().next(), Some("error: cannot load kubeconfig no/such/kubeconfig: no such file"));
    let nothing = run_command(
        command().args(["plan"]).env("HOME", scratch("no-home")).env_remove("KUBERNETES_SERVICE_HOST"),
        None,
    );
    fails(&nothing, "error: no kubeconfig found: ~/.kube/config does not exist and this is not a pod", "--kubeconfig");
}

#[test]
fn kubeconfig_list_skips_missing_files_and_the_first_file_to_set_a_value_wins() {
    let server = server_with("kubeconfig-list", &incident());
    let dir = scratch("kubeconfig-list-files");
    // A second file that would send everything to a dead port: its current-context and its own
    // definition of the context "fake" lose to the first file's.
    let dead = dir.join("dead");
    let text = "apiVersion: v1\nkind: Config\nclusters:\n- name: dead\n  cluster:\n    server: http://127.0.0.1:9\n\
                contexts:\n- name: dead\n  context:\n    cluster: dead\n- name: fake\n  context:\n    cluster: dead\n\
                current-context: dead\n";
    std::fs::write(&dead, text).expect("the second kubeconfig");
    let (fake, dead) = (server.kubeconfig().display().to_string(), dead.display().to_string());
    let with = |list: String, args: &[&str]| run_command(command().args(args).env("KUBECONFIG", list), None);
    let expected = live(&server, &["plan", "worker-3", "--now", NOW]);
    assert_eq!(expected.code, 0, "{}", expected.stderr);

    let merged = with(
        format!("{}:{fake}:/no/such/file:{dead}", dir.join("missing").display()),
        &["plan", "worker-3", "--now", NOW],
    );
    assert_eq!(merged.code, 0, "{}", merged.stderr);
    assert_eq!(merged.stdout, expected.stdout);
    // The second file's context is there to pick.
    let picked = with(format!("{fake}:{dead}"), &["plan", "worker-3", "--context", "dead"]);
    fails(&picked, "error: cannot connect to http://127.0.0.1:9: connection refused", "cluster-info");
    // In the other order, the other file wins.
    let reversed = with(format!("{dead}:{fake}"), &["plan", "worker-3"]);
    fails(&reversed, "error: cannot connect to http://127.0.0.1:9: connection refused", "cluster-info");

    // None of them exists: no kubeconfig, said as such; --kubeconfig must exist.
    let none = with("/no/such/a:/no/such/b".into(), &["plan"]);
    fails(
        &none,
        "error: no kubeconfig found: no file of $KUBECONFIG (/no/such/a:/no/such/b) exists and this is not a pod",
        "--kubeconfig",
    );
    let explicit = with(fake.clone(), &["plan", "--kubeconfig", "/no/such/a"]);
    fails(&explicit, "error: cannot load kubeconfig /no/such/a: no such file", "kubectl config view");
}

#[test]
fn connection_flags_connect_over_a_kubeconfig_without_a_current_context_as_kubectl_does() {
    let server = server_with("kubeconfig-no-context", &incident());
    let empty = scratch("kubeconfig-no-context-file").join("config");
    std::fs::write(&empty, "apiVersion: v1\nkind: Config\n").expect("a kubeconfig without a context");
    let expected = live(&server, &["plan", "worker-3", "--now", NOW]);
    let with = |args: &[&str]| run_command(command().args(args).env("KUBECONFIG", &empty), None);

    let flags = with(&["plan", "worker-3", "--now", NOW, "--server", &server.url(), "--token", "t"]);
    assert_eq!(flags.code, 0, "{}", flags.stderr);
    assert_eq!(flags.stdout, expected.stdout);
    let no_kubeconfig = run(&["plan", "worker-3", "--now", NOW, "-s", &server.url()], None);
    assert_eq!(no_kubeconfig.code, 0, "{}", no_kubeconfig.stderr);
    assert_eq!(no_kubeconfig.stdout, expected.stdout);

    // Without the flags there is nothing to connect to: said, with what to give.
    let shown = empty.display().to_string();
    fails(
        &with(&["plan", "worker-3"]),
        &format!(
            "error: cannot load kubeconfig $KUBECONFIG ({shown}): it sets no current-context: name one with --context, or give --server"
        ),
        "kubectl config view",
    );
}

#[test]
fn a_namespace_with_no_pods_on_the_nodes_is_said_on_stderr_as_kubectl_says_it_for_the_table_and_names() {
    let server = server_with("namespace-no-pods", &incident());
    let said = "No pods found in typo namespace on the nodes planned.";
    let dump = |args: &[&str]| run(&[&["plan", "-f", "examples/incident.json", "--now", NOW], args].concat(), None);
    for result in [
        dump(&["-n", "typo"]),
        dump(&["-n", "typo", "-o", "wide"]),
        dump(&["-n", "typo", "-o", "name"]),
        dump(&["-n", "typo", "--summary"]),
        live(&server, &["plan", "--now", NOW, "-n", "typo"]),
    ] {
        assert_eq!(result.code, 0, "{}", result.stderr);
        assert_eq!(result.stderr.lines().filter(|line| *line == said).count(), 1, "{}", result.stderr);
    }
    // The table itself is what it was.
    let table = dump(&["-n", "typo"]);
    assert!(table.stdout.contains("No pods.") && !table.stdout.contains(said), "{}", table.stdout);
    // Documents stay documents; a namespace with pods there, or no -n, says nothing.
    for quiet in
        [dump(&["-n", "typo", "-o", "json"]), dump(&["-n", "typo", "-o", "yaml"]), dump(&["-n", "payments"]), dump(&[])]
    {
        assert_eq!(quiet.code, 0, "{}", quiet.stderr);
        assert!(!quiet.stderr.contains("No pods found"), "{}", quiet.stderr);
    }
}

#[test]
fn kubectl_plugin_dispatch_reaches_the_cluster() {
    if std::process::Command::new("kubectl").arg("version").arg("--client").output().is_err() {
        eprintln!("kubectl is not installed: plugin dispatch not tested");
        return;
    }
    let server = server_with("kubectl-live", &incident());
    let dir = scratch("kubectl-live-bin");
    // A link, not a copy: kubectl follows it, and the debug binary is ~170 MB.
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_kubectl-taint_evict"), dir.join("kubectl-taint_evict"))
        .expect("link the plugin");
    let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default());
    let kubeconfig = server.kubeconfig().to_str().expect("UTF-8");
    let result = run_command(
        std::process::Command::new("kubectl")
            .args(["taint-evict", "plan", "worker-3", "--now", NOW, "--kubeconfig", kubeconfig])
            .env("PATH", path),
        None,
    );
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(result.stdout, live(&server, &["plan", "worker-3", "--now", NOW]).stdout);
}

const TAINT_KEYS: [&str; 3] = ["a", "b", "node.kubernetes.io/unreachable"];
const TOLERATION_KEYS: [&str; 4] = ["a", "b", "node.kubernetes.io/unreachable", ""];

/// A small random cluster: nodes with random NoExecute taints, pods with random tolerations.
fn cluster() -> impl Strategy<Value = Value> {
    let taint = (0..3usize, prop::option::of(0..300i64)).prop_map(|(k, added)| {
        let mut taint = json!({"key": TAINT_KEYS[k], "effect": "NoExecute"});
        if let Some(seconds) = added {
            taint["timeAdded"] =
                json!(jiff::Timestamp::from_second(1_795_341_300 + seconds).expect("time").to_string());
        }
        taint
    });
    let toleration = (0..4usize, prop::option::of(-5..400i64)).prop_map(|(k, seconds)| {
        let mut toleration = json!({"key": TOLERATION_KEYS[k], "operator": "Exists"});
        if let Some(seconds) = seconds {
            toleration["tolerationSeconds"] = json!(seconds);
            toleration["effect"] = json!("NoExecute");
        }
        toleration
    });
    let node = prop::collection::vec(taint, 0..3);
    let pod = (0..3usize, prop::collection::vec(toleration, 0..3), 0..600i64);
    // At least one pod: a dump without any is refused as written without `pods` (docs/errors.md), while a
    // live cluster without pods is a real, if rare, answer.
    (prop::collection::vec(node, 1..4), prop::collection::vec(pod, 1..12)).prop_map(|(nodes, pods)| {
        let mut items = Vec::new();
        for (n, taints) in nodes.iter().enumerate() {
            let mut unique = taints.clone();
            unique.dedup_by(|a, b| a["key"] == b["key"]);
            items.push(json!({"kind": "Node", "apiVersion": "v1", "metadata": {"name": format!("n{n}")}, "spec": {"taints": unique}}));
        }
        for (p, (node, tolerations, created)) in pods.into_iter().enumerate() {
            let created = jiff::Timestamp::from_second(1_795_341_000 + created).expect("time").to_string();
            items.push(json!({"kind": "Pod", "apiVersion": "v1",
                "metadata": {"name": format!("p{p}"), "namespace": "default", "uid": format!("u{p}"), "creationTimestamp": created},
                "spec": {"nodeName": format!("n{}", node % nodes.len()), "tolerations": tolerations}, "status": {"phase": "Running"}}));
        }
        json!({"apiVersion": "v1", "kind": "List", "items": items})
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn live_and_file_plans_agree_for_random_clusters(dump in cluster()) {
        let server = server_with("random-live", &dump);
        let from_cluster = live(&server, &["plan", "--now", NOW, "-o", "json"]);
        prop_assert_eq!(from_cluster.code, 0, "{}", from_cluster.stderr);
        let bytes = serde_json::to_vec(&dump).expect("dump");
        let from_file = run(&["plan", "--now", NOW, "-o", "json", "-f", "-"], Some(&bytes));
        prop_assert_eq!(as_from_dump(&from_cluster.stdout, "watch-cache"), from_file.stdout);
    }
}

#[test]
fn a_live_deadline_from_now_is_printed_to_the_millisecond_not_the_nanosecond() {
    // Fixed: worker-4's taint has no timeAdded: its countdowns start at the live `now`, whose
    // nanoseconds mean nothing (the control plane's time is known to milliseconds at best).
    let server = server_with("live-now-millis", &incident());
    let result = live(&server, &["plan", "worker-4", "-o", "json"]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let plan: Value = serde_json::from_str(&result.stdout).expect("JSON");
    let now = plan["now"].as_str().expect("now");
    let fraction = now.trim_end_matches('Z').rsplit_once('.').map_or("", |(_, f)| f);
    assert!(fraction.len() <= 3, "{now}");
    for pod in plan["nodes"][0]["pods"].as_array().expect("pods") {
        if let Some(at) = pod["evictAt"].as_str() {
            let fraction = at.trim_end_matches('Z').rsplit_once('.').map_or("", |(_, f)| f);
            assert!(fraction.len() <= 3, "{pod}");
        }
    }
}

#[test]
fn a_request_timeout_too_short_to_connect_says_to_raise_it_not_that_the_cluster_is_down() {
    let server = server_with("timeout-1ns", &incident());
    let result = live(&server, &["plan", "worker-4", "--now", NOW, "--request-timeout", "1ns"]);
    assert_eq!(result.code, 1, "{}", result.stderr);
    let hint = result.stderr.lines().find(|l| l.starts_with("hint:")).expect("a hint");
    assert!(hint.contains("raise") && hint.contains("--request-timeout"), "{}", result.stderr);
    assert!(!hint.contains("cluster is up"), "{}", result.stderr);
}

#[test]
fn a_read_pushed_back_on_is_sent_again_once_its_retry_after_has_passed() {
    // API Priority and Fairness refuses the node's GET once, asking for a second.
    let server = server_with("read-retry-after", &incident());
    server.fail_times("GET", "/api/v1/nodes/worker-3", Fault::RetryAfter(429, 1), 1);
    let result = live(&server, &["plan", "worker-3", "--now", NOW, "-o", "json"]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let requests = server.requests();
    let gets: Vec<&Recorded> = lists(&requests, "/api/v1/nodes/worker-3");
    assert_eq!(gets.len(), 2, "refused, then sent again: {gets:#?}");
    let waited = gets[1].at.duration_since(gets[0].at).as_secs_f64();
    assert!(waited >= 1.0, "sent again {waited} s after, before its Retry-After");
}

#[test]
fn a_read_priority_and_fairness_keeps_refusing_says_the_server_is_overloaded() {
    let server = server_with("read-overloaded", &incident());
    server.fail("GET", "/api/v1/nodes/worker-3", Fault::RetryAfter(429, 0));
    let result = live(&server, &["plan", "worker-3"]);
    let error = format!(
        "error: {} is overloaded: it refused to get nodes (429 Too Many Requests, API Priority and Fairness)",
        server.url()
    );
    fails(&result, &error, "sheds load");
    // Sent again ten times, as client-go does, then given up.
    assert_eq!(lists(&server.requests(), "/api/v1/nodes/worker-3").len(), 11);
}
