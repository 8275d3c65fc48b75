//! `run NODE...` and `run -l` keep only the pods of the selected nodes: what the fake API server is
//! asked for, how many pods `run` keeps (its `synced` line and its watched-pods gauge), and that pods
//! reaching a selected node later (a node that starts matching, a pod bound after start) are enforced.

use serde_json::{Value, json};

use crate::fake_api::in_cluster::{free_port, scrape, wait_for_answer};
use crate::fake_api::run_cluster::{deletes, node, pod, taint};
use crate::support::running::{Running, WAIT};
use crate::util::scratch;
use taint_evict_test_support::fake_apiserver::FakeApiServer;

fn pool_node(name: &str, pool: &str, taints: &[Value]) -> Value {
    let mut node = node(name, taints);
    node["metadata"]["labels"]["pool"] = json!(pool);
    node
}

/// The field selectors of the LISTs and WATCHes of pods, but the start's permission check (`limit=1`).
fn pod_requests(server: &FakeApiServer) -> Vec<String> {
    let requests = server.requests();
    let pods = requests.iter().filter(|r| r.method == "GET" && r.path == "/api/v1/pods" && r.param("limit") != "1");
    pods.map(|r| r.param("fieldSelector").to_owned()).collect()
}

#[test]
fn run_node_watches_only_that_nodes_pods_and_keeps_no_other() {
    let server = FakeApiServer::start(&scratch("scope-named"));
    for name in ["n1", "n2", "n3"] {
        server.add(node(name, &[]));
        for i in 0..3 {
            server.add(pod(&format!("{name}-p{i}"), name, None));
        }
    }
    let port = free_port();
    let address = format!("127.0.0.1:{port}");
    let mut run = Running::start(&server, &["n1", "n2", "--metrics-bind-address", &address]);
    let synced = run.expect("synced", |l| l["type"] == "synced");
    assert_eq!(synced["pods"], 6, "only the pods of n1 and n2 are kept: {synced}");
    wait_for_answer(port, "/readyz", 200);
    assert_eq!(scrape(port)["taint_evict_watched_pods"], 6.0);

    let selectors = pod_requests(&server);
    assert!(selectors.iter().any(|s| s == "spec.nodeName=n1"), "{selectors:?}");
    assert!(selectors.iter().any(|s| s == "spec.nodeName=n2"), "{selectors:?}");
    assert!(selectors.iter().all(|s| s == "spec.nodeName=n1" || s == "spec.nodeName=n2"), "{selectors:?}");

    server.add(node("n1", &[taint(jiff::Timestamp::now())]));
    server.wait_for("n1's pods deleted", WAIT, |r| (0..3).all(|i| deletes(r, &format!("n1-p{i}")) == 1));
    let (summary, code) = run.interrupt();
    assert_eq!((code, summary["deleted"].as_u64()), (0, Some(3)));
}

#[test]
fn more_than_ten_named_nodes_share_one_watch_and_keep_only_their_pods() {
    let server = FakeApiServer::start(&scratch("scope-many-named"));
    let names: Vec<String> = (0..12).map(|n| format!("n{n:02}")).collect();
    for name in &names {
        server.add(node(name, &[]));
        server.add(pod(&format!("{name}-p"), name, None));
    }
    // The first eleven are named: one pod watch of the cluster, filtered on arrival.
    let named: Vec<&str> = names[..11].iter().map(String::as_str).collect();
    let mut run = Running::start(&server, &named);
    let synced = run.expect("synced", |l| l["type"] == "synced");
    assert_eq!((synced["nodes"].as_u64(), synced["pods"].as_u64()), (Some(11), Some(11)), "{synced}");
    let selectors = pod_requests(&server);
    assert!(!selectors.is_empty() && selectors.iter().all(|s| s == "spec.nodeName!="), "{selectors:?}");
    server.add(node("n00", &[taint(jiff::Timestamp::now())]));
    server.add(node("n11", &[taint(jiff::Timestamp::now())]));
    server.wait_for("n00-p's DELETE", WAIT, |r| deletes(r, "n00-p") == 1);
    let (summary, code) = run.interrupt();
    assert_eq!((code, summary["deleted"].as_u64()), (0, Some(1)));
    assert_eq!(deletes(&server.requests(), "n11-p"), 0, "n11 is not named");
}

#[test]
fn a_node_that_starts_matching_the_selector_or_joins_has_its_pods_enforced() {
    let server = FakeApiServer::start(&scratch("scope-labels"));
    server.add(pool_node("n1", "a", &[]));
    server.add(pool_node("n2", "b", &[]));
    server.add(pod("on-n1", "n1", None));
    server.add(pod("on-n2", "n2", None));
    let port = free_port();
    let address = format!("127.0.0.1:{port}");
    let mut run = Running::start(&server, &["-l", "pool=a", "--metrics-bind-address", &address]);
    let synced = run.expect("synced", |l| l["type"] == "synced");
    assert_eq!((synced["nodes"].as_u64(), synced["pods"].as_u64()), (Some(1), Some(1)), "{synced}");
    wait_for_answer(port, "/readyz", 200);
    assert_eq!(scrape(port)["taint_evict_watched_pods"], 1.0);

    // n2 joins the pool, tainted: its pods are listed then, and enforced.
    server.add(pool_node("n2", "a", &[taint(jiff::Timestamp::now())]));
    server.wait_for("on-n2's DELETE", WAIT, |r| deletes(r, "on-n2") == 1);
    run.expect("on-n2 deleted", |l| l["type"] == "deleted" && l["pod"]["name"] == "on-n2");
    assert!(pod_requests(&server).iter().any(|s| s == "spec.nodeName=n2"));

    // A new node of the pool, tainted, and a pod bound to it at once.
    server.add(pool_node("n3", "a", &[taint(jiff::Timestamp::now())]));
    server.add(pod("on-n3", "n3", None));
    server.wait_for("on-n3's DELETE", WAIT, |r| deletes(r, "on-n3") == 1);
    let (summary, code) = run.interrupt();
    assert_eq!((code, summary["deleted"].as_u64()), (0, Some(2)));
    assert_eq!(deletes(&server.requests(), "on-n1"), 0);
}

#[test]
fn a_pod_bound_to_a_selected_node_after_start_is_enforced() {
    for (case, args) in [("named", &["n1"][..]), ("labels", &["-l", "pool=a"][..])] {
        let server = FakeApiServer::start(&scratch(&format!("scope-bound-{case}")));
        server.add(pool_node("n1", "a", &[taint(jiff::Timestamp::now())]));
        server.add(pool_node("n2", "b", &[]));
        // Not yet scheduled: no node.
        server.add(pod("late", "", None));
        let mut run = Running::start(&server, args);
        let synced = run.expect("synced", |l| l["type"] == "synced");
        assert_eq!(synced["pods"], 0, "{case}: {synced}");
        // The scheduler binds it: a MODIFIED write that the watch sees as the pod arriving.
        server.add(pod("late", "n1", None));
        server.wait_for("late's DELETE", WAIT, |r| deletes(r, "late") == 1);
        let (summary, code) = run.interrupt();
        assert_eq!((code, summary["deleted"].as_u64()), (0, Some(1)), "{case}");
    }
}

#[test]
fn a_named_node_not_there_or_a_selector_matching_none_is_said_once_and_a_node_joining_is_enforced() {
    let named = r#"node "worker-03" not found: run keeps watching and enforces its pods if it joins"#;
    let selected =
        "no node matched -l zone=nowhere: run keeps watching and enforces the pods of nodes that start matching";
    for (case, args, said) in [("named", &["worker-03"][..], named), ("labels", &["-l", "zone=nowhere"][..], selected)]
    {
        let server = FakeApiServer::start(&scratch(&format!("scope-absent-{case}")));
        server.add(node("n1", &[taint(jiff::Timestamp::now())]));
        server.add(pod("on-n1", "n1", None));
        let mut run = Running::start(&server, args);
        let warning = run.expect("the warning", |l| l["type"] == "warning");
        assert_eq!(warning["message"], said, "{case}");
        let at = |kind: &str, seen: &[Value]| seen.iter().position(|l| l["type"] == kind);
        assert!(at("synced", &run.seen) < at("warning", &run.seen), "{case}: said after the sync: {:#?}", run.seen);

        // The watches end on a compacted history: the nodes are listed again, still without it. The
        // one node watch reads every node (the lifecycle controller's zones count them all) and
        // follows the nodes asked for.
        let node_lists = |r: &[taint_evict_test_support::fake_apiserver::Recorded]| {
            r.iter().filter(|r| r.path == "/api/v1/nodes" && !r.is_watch() && r.param("resourceVersion") == "0").count()
        };
        server.compact();
        server.close_watches();
        server.wait_for("the nodes listed again", WAIT, |r| node_lists(r) >= 2);

        // It joins, tainted, with a pod: enforced, as any node's.
        let mut joining = node("worker-03", &[taint(jiff::Timestamp::now())]);
        joining["metadata"]["labels"]["zone"] = json!("nowhere");
        server.add(joining);
        server.add(pod("on-w3", "worker-03", None));
        server.wait_for("on-w3's DELETE", WAIT, |r| deletes(r, "on-w3") == 1);
        let (summary, code, lines) = run.interrupt_and_read();
        assert_eq!((code, summary["deleted"].as_u64()), (0, Some(1)), "{case}");
        let warnings: Vec<&Value> = lines.iter().filter(|l| l["type"] == "warning").collect();
        assert_eq!(warnings, [&warning], "{case}: said once");
        assert_eq!(deletes(&server.requests(), "on-n1"), 0, "{case}: n1 is not asked for");
    }
}

#[test]
fn keep_last_ready_on_some_nodes_counts_the_replicas_ready_on_the_others() {
    // web-1 on n1 (followed) and web-2 on n2 (not), both ready: n1's taint deletes web-1, which is not
    // web's last ready replica. Before, only n1's pods were seen: web-1 was kept, with a warning.
    let server = FakeApiServer::start(&scratch("scope-keep-last-ready"));
    server.add(node("n1", &[]));
    server.add(node("n2", &[]));
    let replica = |name: &str, node: &str| {
        let mut pod = pod(name, node, None);
        pod["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "rs-web", "controller": true}]);
        pod["status"] = json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]});
        pod
    };
    server.add(replica("web-1", "n1"));
    server.add(replica("web-2", "n2"));
    let mut run = Running::start(&server, &["n1", "--keep-last-ready"]);
    run.expect("synced", |l| l["type"] == "synced");
    server.add(node("n1", &[taint(jiff::Timestamp::now())]));
    server.wait_for("web-1's DELETE", WAIT, |r| deletes(r, "web-1") == 1);
    let (_, code, lines) = run.interrupt_and_read();
    assert_eq!(code, 0);
    // The nodes say nothing of their health: the controller's settings assumed is the one line.
    let settings = |l: &Value| l["message"].as_str().is_some_and(|m| m.starts_with("the node lifecycle controller's"));
    assert!(!lines.iter().any(|l| (l["type"] == "warning" && !settings(l)) || l["type"] == "kept"), "{lines:#?}");
    assert_eq!(deletes(&server.requests(), "web-2"), 0, "web-2 is on a node not followed");
    let selectors = pod_requests(&server);
    assert!(
        selectors.iter().any(|s| s == "spec.nodeName!="),
        "every node's pods read, for the replicas: {selectors:?}"
    );
    assert!(selectors.iter().any(|s| s == "spec.nodeName=n1"), "n1's pods followed: {selectors:?}");
}

#[test]
fn run_n_lists_and_watches_the_pods_of_that_namespace_alone_and_enforces_only_them() {
    let server = FakeApiServer::start(&scratch("scope-namespace"));
    server.add(node("n1", &[]));
    server.add(pod("web-1", "n1", None));
    let mut cart = pod("cart", "n1", None);
    cart["metadata"]["namespace"] = json!("shop");
    server.add(cart);
    let mut run = Running::start(&server, &["-n", "shop"]);
    let started = run.expect("started", |l| l["type"] == "started");
    assert_eq!(started["namespace"], "shop", "{started}");
    let synced = run.expect("synced", |l| l["type"] == "synced");
    assert_eq!(synced["pods"], 1, "only the pods of shop are kept: {synced}");
    let requests = server.requests();
    let pods = |path: &str| requests.iter().filter(|r| r.method == "GET" && r.path == path).count();
    assert!(pods("/api/v1/namespaces/shop/pods") >= 2, "the check, the list and the watch are the namespace's");
    assert_eq!(pods("/api/v1/pods"), 0, "no pod is read at the cluster scope");

    server.add(node("n1", &[taint(jiff::Timestamp::now())]));
    server.wait_for("cart's DELETE", WAIT, |r| crate::fake_api::run_cluster::deletes_in(r, "shop", "cart") == 1);
    let (summary, code) = run.interrupt();
    assert_eq!((code, summary["deleted"].as_u64()), (0, Some(1)));
    assert_eq!(deletes(&server.requests(), "web-1"), 0, "web-1 is of another namespace");
}

#[test]
fn a_node_relabelled_into_the_selector_is_enforced_from_the_one_node_watch() {
    // The one node watch reads every node and follows those `-l` selects (no label selector is sent
    // to the server): a node that starts matching is enforced, one that never does is not.
    let server = FakeApiServer::start(&scratch("scope-relabelled"));
    let tainted = [taint(jiff::Timestamp::now())];
    server.add(pool_node("n1", "cpu", &tainted));
    server.add(pod("on-n1", "n1", None));
    server.add(pool_node("n2", "cpu", &tainted));
    server.add(pod("on-n2", "n2", None));
    let run = Running::start(&server, &["-l", "pool=gpu"]);
    server.add(pool_node("n2", "gpu", &tainted));
    server.wait_for("on-n2's DELETE", WAIT, |r| deletes(r, "on-n2") == 1);
    let (summary, code) = run.interrupt();
    assert_eq!((code, summary["deleted"].as_u64()), (0, Some(1)));
    assert_eq!(deletes(&server.requests(), "on-n1"), 0);
    // The start's permission check (`limit=1`) asks with the selector; the reads do not.
    let nodes = server
        .requests()
        .into_iter()
        .filter(|r| r.path == "/api/v1/nodes" && r.param("limit") != "1")
        .collect::<Vec<_>>();
    assert!(nodes.iter().all(|r| r.param("labelSelector").is_empty()), "{nodes:?}");
}
