//! The RBAC manifests grant what each command uses: every request `plan`, `explain` and `run` make
//! against the fake API server maps to a (verb, resource) that `deploy/rbac-*.yaml` grants.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::util::{command, read_json, repo, scratch};
use taint_evict_test_support::fake_apiserver::{FakeApiServer, Recorded};

/// The (verb, group/resource, namespace) a request needs, as the API server authorizes it.
fn needs(r: &Recorded) -> Option<(String, String)> {
    let parts: Vec<&str> = r.path.trim_matches('/').split('/').collect();
    let (group, rest) = match parts.as_slice() {
        ["api", "v1", rest @ ..] => ("", rest),
        ["apis", group, _version, rest @ ..] => (*group, rest),
        _ => return None, // discovery and /version need no RBAC grant
    };
    let (resource, named) = match rest {
        ["namespaces", _, resource, _name, sub] => (format!("{resource}/{sub}"), true),
        ["namespaces", _, resource, _name] => ((*resource).to_owned(), true),
        ["namespaces", _, resource] | [resource] => ((*resource).to_owned(), false),
        [resource, _name] => ((*resource).to_owned(), true),
        _ => return None,
    };
    let verb = match (r.method.as_str(), named, r.is_watch()) {
        ("GET", _, true) => "watch",
        ("GET", true, _) => "get",
        ("GET", false, _) => "list",
        ("POST", ..) => "create",
        ("PATCH", ..) => "patch",
        ("DELETE", ..) => "delete",
        ("PUT", ..) => "update",
        (other, ..) => return Some((other.to_lowercase(), format!("{group}/{resource}"))),
    };
    Some((verb.to_owned(), format!("{group}/{resource}")))
}

/// Every (verb, group/resource) a manifest's rules grant.
fn granted(path: &str) -> BTreeSet<(String, String)> {
    let text = std::fs::read_to_string(repo().join(path)).expect("manifest");
    let mut grants = BTreeSet::new();
    for document in text.split("\n---") {
        let role: Value = serde_saphyr::from_str(document).expect("YAML");
        for rule in role["rules"].as_array().into_iter().flatten() {
            for group in rule["apiGroups"].as_array().into_iter().flatten() {
                for resource in rule["resources"].as_array().into_iter().flatten() {
                    for verb in rule["verbs"].as_array().into_iter().flatten() {
                        let gr = format!("{}/{}", group.as_str().unwrap_or(""), resource.as_str().unwrap_or(""));
                        grants.insert((verb.as_str().unwrap_or("").to_owned(), gr));
                    }
                }
            }
        }
    }
    grants
}

pub fn missing(server: &FakeApiServer, manifest: &str) -> Vec<(String, String)> {
    let grants = granted(manifest);
    let used: BTreeSet<(String, String)> = server.requests().iter().filter_map(needs).collect();
    used.difference(&grants).cloned().collect()
}

/// Grants no request used, apart from `allowed` (used in situations the test does not stage).
pub fn unused(server: &FakeApiServer, manifest: &str, allowed: &[(&str, &str)]) -> Vec<(String, String)> {
    let used: BTreeSet<(String, String)> = server.requests().iter().filter_map(needs).collect();
    granted(manifest)
        .into_iter()
        .filter(|grant| !used.contains(grant) && !allowed.iter().any(|(v, r)| grant.0 == *v && grant.1 == *r))
        .collect()
}

#[test]
fn plan_rbac_grants_every_request_plan_and_explain_make() {
    let server = FakeApiServer::start(&scratch("rbac-plan"));
    server.load(&read_json(&repo().join("examples/incident.json")));
    let kubeconfig = server.kubeconfig().to_str().expect("UTF-8").to_owned();
    for args in [
        &["plan"][..],
        &["plan", "worker-3"],
        &["plan", "-l", "kubernetes.io/hostname=worker-4"],
        &["explain", "-n", "web", "checkout-5b9f8d6c47-p7v2n"],
    ] {
        let status = command().args(args).args(["--kubeconfig", &kubeconfig]).output().expect("runs").status;
        assert!(status.success(), "{args:?}");
    }
    // A GPU node whose pod holds a tainted device: the device-taint controller's objects are read.
    server.serve_dra(37);
    server.load(&crate::offline::device_taints::gpu_cluster("v1", "v1"));
    for args in [&["plan"][..], &["plan", "gpu-1"], &["explain", "-n", "ml", "trainer"]] {
        let status = command().args(args).args(["--kubeconfig", &kubeconfig]).output().expect("runs").status;
        assert!(status.success(), "{args:?}");
    }
    assert_eq!(missing(&server, "deploy/rbac-plan.yaml"), Vec::<(String, String)>::new());
    // An edited pod's owner is read only for a toleration edited mid-countdown, which the real tier stages.
    let edited = [
        ("list", "apps/replicasets"),
        ("list", "apps/statefulsets"),
        ("list", "apps/daemonsets"),
        ("list", "batch/jobs"),
    ];
    assert_eq!(unused(&server, "deploy/rbac-plan.yaml", &edited), Vec::<(String, String)>::new(), "nothing more");
}

#[test]
fn run_rbac_grants_every_request_run_makes() {
    let server = FakeApiServer::start(&scratch("rbac-run"));
    // A server with DRA: run watches what the device-taint controller reads.
    server.serve_dra(37);
    server.add(json!({"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n1"},
        "spec": {"taints": [{"key": "k", "effect": "NoExecute", "timeAdded": "2026-01-01T00:00:00Z"}]}}));
    server
        .add(json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "namespace": "default", "uid": "u"},
        "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}}));
    let kubeconfig = server.kubeconfig().to_str().expect("UTF-8").to_owned();
    // Once in each mode: `--mode evict` evicts where the default deletes.
    for (mode, write) in [("delete", "DELETE"), ("evict", "POST")] {
        let pod = server.pods().into_iter().next().expect("the pod");
        let mut child = command()
            .args(["run", "-o", "json", "--mode", mode, "--kubeconfig", &kubeconfig])
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("run starts");
        let wrote = |r: &[Recorded]| r.iter().any(|r| r.method == write && r.path.starts_with("/api/v1/namespaces"));
        server.wait_for("the deletion", std::time::Duration::from_secs(20), wrote);
        server.wait_for("the event", std::time::Duration::from_secs(20), |r| {
            r.iter().filter(|r| r.method == "POST" && r.path.contains("/events")).count()
                == if mode == "delete" { 1 } else { 2 }
        });
        assert!(
            std::process::Command::new("kill")
                .args(["-INT", &child.id().to_string()])
                .status()
                .expect("kill")
                .success()
        );
        assert_eq!(child.wait().expect("exits").code(), Some(0));
        server.add(pod);
    }
    let used: BTreeSet<(String, String)> = server.requests().iter().filter_map(needs).collect();
    for expected in [
        ("watch", "/pods"),
        ("delete", "/pods"),
        ("patch", "/pods/status"),
        ("create", "/pods/eviction"),
        ("create", "events.k8s.io/events"),
        ("watch", "resource.k8s.io/resourceslices"),
        ("watch", "resource.k8s.io/resourceclaims"),
        ("watch", "resource.k8s.io/devicetaintrules"),
    ] {
        assert!(used.contains(&(expected.0.to_owned(), expected.1.to_owned())), "run used {expected:?}: {used:?}");
    }
    assert_eq!(missing(&server, "deploy/rbac-run.yaml"), Vec::<(String, String)>::new());
    // The series of a repeated event is a PATCH: the flapping node of `run_cluster` stages it.
    // A pod counting down is read at start, and an edited pod's owner, which the real tier stages.
    let repeated = [
        ("patch", "events.k8s.io/events"),
        ("get", "/pods"),
        ("list", "apps/replicasets"),
        ("list", "apps/statefulsets"),
        ("list", "apps/daemonsets"),
        ("list", "batch/jobs"),
    ];
    assert_eq!(unused(&server, "deploy/rbac-run.yaml", &repeated), Vec::<(String, String)>::new(), "nothing more");
}
