//! `audit` read live: the own controllers of the ReplicaSets its findings name, read by one LIST of
//! ReplicaSets per namespace, only when a finding names one (docs/audit.md).

use serde_json::{Value, json};
use taint_evict_test_support::fake_apiserver::FakeApiServer;

use crate::util::{Run, command, run_command, scratch};

const NOW: &str = "2026-11-22T10:00:00Z";

/// A pod of `shop` on n1 owned by `owner` (`kind`, `name`, `uid`), tolerating `unreachable` for ever.
fn pod(name: &str, owner: (&str, &str, &str)) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "shop", "uid": format!("{name}-uid"),
            "creationTimestamp": "2026-11-20T08:00:00Z", "labels": {"app": "web", "pod-template-hash": "5d8f7"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": owner.0, "name": owner.1, "uid": owner.2,
                "controller": true}]},
        "spec": {"nodeName": "n1", "tolerations": [
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}]},
        "status": {"phase": "Running"}})
}

fn audit(server: &FakeApiServer) -> Run {
    let kubeconfig = server.kubeconfig().to_str().expect("UTF-8 path").to_owned();
    let result = run_command(command().args(["audit", "--now", NOW, "--kubeconfig", &kubeconfig]), None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    result
}

/// The requests to ReplicaSets, as `METHOD path`.
fn replica_set_reads(server: &FakeApiServer) -> Vec<String> {
    let requests = server.requests();
    requests.iter().filter(|r| r.path.contains("/replicasets")).map(|r| format!("{} {}", r.method, r.path)).collect()
}

#[test]
fn a_replica_set_s_deployment_is_read_by_one_list_of_its_namespace_only_when_a_finding_names_it() {
    let server = FakeApiServer::start(&scratch("audit-owners"));
    server.add(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "uid": "n1"}}));
    server.add(pod("web-5d8f7-a1", ("ReplicaSet", "web-5d8f7", "rs-web")));
    server.add(pod("web-5d8f7-b2", ("ReplicaSet", "web-5d8f7", "rs-web")));
    server.add(json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "web-5d8f7", "namespace": "shop", "uid": "rs-web",
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "d-web",
                "controller": true}]}}));
    server.add(json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "cache-6c9d4", "namespace": "shop", "uid": "rs-cache"}}));
    let result = audit(&server);
    assert!(
        result.stdout.contains(
            "| set tolerations[0]'s tolerationSeconds (300 is the default), in the pod template of Deployment web, \
             which makes ReplicaSet web-5d8f7:\n"
        ),
        "{}",
        result.stdout
    );
    assert_eq!(replica_set_reads(&server), ["GET /apis/apps/v1/namespaces/shop/replicasets"]);

    // A finding that names no ReplicaSet: none is read.
    let server = FakeApiServer::start(&scratch("audit-owners-none"));
    server.add(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "uid": "n1"}}));
    server.add(pod("db-0", ("StatefulSet", "db", "sts-db")));
    let result = audit(&server);
    assert!(result.stdout.contains("in the pod template of StatefulSet db:"), "{}", result.stdout);
    assert_eq!(replica_set_reads(&server), Vec::<String>::new());
}
