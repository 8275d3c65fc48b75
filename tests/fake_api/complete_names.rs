//! Completion of node and pod names from the live cluster, through kubectl's own `__complete` (kubectl
//! >= 1.26 runs `kubectl_complete-taint_evict` from PATH), against the fake API server.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::fake_api::run_cluster::{node, pod, taint};
use crate::util::{command, scratch};
use taint_evict_test_support::fake_apiserver::FakeApiServer;

/// A directory for PATH with the plugin and its completion helper, as an install puts them.
pub(crate) fn plugin_dir(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("bin directory");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_kubectl-taint_evict"), bin.join("kubectl-taint_evict"))
        .expect("the plugin on PATH");
    let helper = command().args(["completion", "kubectl"]).output().expect("completion kubectl");
    let path = bin.join("kubectl_complete-taint_evict");
    std::fs::write(&path, helper.stdout).expect("the helper");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("executable");
    bin
}

/// `kubectl __complete taint-evict WORDS…`'s stdout, with `KUBECONFIG` set to `kubeconfig` (if any).
fn kubectl_complete(bin: &Path, home: &Path, kubeconfig: Option<&Path>, words: &[&str]) -> Vec<String> {
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let mut kubectl = Command::new("kubectl");
    kubectl.arg("__complete").arg("taint-evict").args(words).env("PATH", path).env("HOME", home);
    kubectl.env_remove("KUBECONFIG");
    if let Some(kubeconfig) = kubeconfig {
        kubectl.env("KUBECONFIG", kubeconfig);
    }
    let output = kubectl.output().expect("kubectl runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("UTF-8").lines().map(str::to_owned).collect()
}

#[test]
fn kubectl_completes_node_names_tainted_first_and_pod_names_of_a_namespace_from_the_cluster() {
    let dir = scratch("complete-names");
    let server = FakeApiServer::start(&dir);
    server.add(node("a-plain", &[]));
    server.add(node("z-tainted", &[taint(jiff::Timestamp::now())]));
    server.add(node("m-tainted", &[taint(jiff::Timestamp::now())]));
    server.add(pod("web-1", "a-plain", None));
    server.add(pod("web-2", "a-plain", None));
    let mut tool = pod("tool", "a-plain", None);
    tool["metadata"]["namespace"] = json!("ops");
    server.add(tool);
    let bin = plugin_dir(&dir);
    let home = dir.join("home");
    std::fs::create_dir_all(&home).expect("home");
    let kubeconfig = server.kubeconfig();
    let lines = |words: &[&str]| kubectl_complete(&bin, &home, Some(kubeconfig), words);

    assert_eq!(lines(&["plan", ""]), ["m-tainted", "z-tainted", "a-plain", ":4"]);
    assert_eq!(lines(&["run", "--dry-run", ""]), ["m-tainted", "z-tainted", "a-plain", ":4"]);
    assert_eq!(lines(&["plan", "m-tainted", "z"]), ["z-tainted", ":4"]);
    assert_eq!(lines(&["explain", "-n", "ops", ""]), ["tool", ":4"]);
    assert_eq!(lines(&["explain", ""]), ["web-1", "web-2", ":4"], "the context's namespace");
    assert_eq!(lines(&["plan", "-o", "j"]), ["json", "jsonpath=", "jsonpath-file=", ":4"], "flag values as before");

    // The cluster named on the line being completed, without KUBECONFIG.
    let kubeconfig = kubeconfig.to_str().expect("UTF-8");
    let named = kubectl_complete(&bin, &home, None, &["plan", "--kubeconfig", kubeconfig, "--context", "fake", ""]);
    assert_eq!(named, ["m-tainted", "z-tainted", "a-plain", ":4"]);

    // A cluster that cannot be reached: nothing offered, nothing said.
    let dead = dir.join("dead-kubeconfig");
    let text = std::fs::read_to_string(server.kubeconfig()).expect("kubeconfig");
    std::fs::write(&dead, text.replace(&server.url(), "http://127.0.0.1:9")).expect("dead kubeconfig");
    assert_eq!(kubectl_complete(&bin, &home, Some(&dead), &["plan", ""]), [":4"]);
    let out = command().env("KUBECONFIG", &dead).args(["__complete", "explain", ""]).output().expect("runs");
    assert!(out.status.success() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(server.requests().iter().all(|r| r.method == "GET"));
}

#[test]
fn kubectl_completes_namespaces_from_the_cluster_kubeconfig_names_without_a_request_and_down_node_lists() {
    let dir = scratch("complete-flag-values");
    let server = FakeApiServer::start(&dir);
    server.add(node("a-plain", &[]));
    server.add(node("z-tainted", &[taint(jiff::Timestamp::now())]));
    server.add(node("m-tainted", &[taint(jiff::Timestamp::now())]));
    let mut tool = pod("tool", "a-plain", None);
    tool["metadata"]["namespace"] = json!("ops");
    server.add(tool);
    let bin = plugin_dir(&dir);
    let home = dir.join("home");
    std::fs::create_dir_all(&home).expect("home");
    // A second kubeconfig in the KUBECONFIG list, and a file that does not exist.
    let other = dir.join("other-kubeconfig");
    let text = "apiVersion: v1\nkind: Config\nclusters:\n- name: prod-eu\n  cluster:\n    server: http://127.0.0.1:9\n\
                - name: prod-us\n  cluster:\n    server: http://127.0.0.1:9\ncontexts:\n- name: prod-eu\n  context:\n    \
                cluster: prod-eu\n    user: sre\n- name: prod-us\n  context:\n    cluster: prod-us\n    user: sre\n\
                users:\n- name: sre\n  user:\n    token: t\n";
    std::fs::write(&other, text).expect("the second kubeconfig");
    let list = format!("{}:{}:{}", server.kubeconfig().display(), dir.join("missing").display(), other.display());
    let lines = |words: &[&str]| kubectl_complete(&bin, &home, Some(Path::new(&list)), words);

    let namespaces = ["default", "kube-node-lease", "kube-public", "kube-system", "ops", ":4"];
    assert_eq!(lines(&["plan", "-n", ""]), namespaces);
    assert_eq!(lines(&["run", "--namespace", "o"]), ["ops", ":4"]);
    assert_eq!(lines(&["explain", "-n", "kube-"]), ["kube-node-lease", "kube-public", "kube-system", ":4"]);
    let asked = server.requests().iter().filter(|r| r.path == "/api/v1/namespaces").count();
    assert_eq!(asked, 3, "one LIST of namespaces per completion");

    assert_eq!(lines(&["plan", "--context", ""]), ["fake", "prod-eu", "prod-us", ":4"]);
    assert_eq!(lines(&["run", "--context", "prod-"]), ["prod-eu", "prod-us", ":4"]);
    assert_eq!(lines(&["explain", "--cluster", ""]), ["fake", "prod-eu", "prod-us", ":4"]);
    assert_eq!(lines(&["plan", "--user", ""]), ["fake", "sre", ":4"]);
    // The kubeconfig the line names; the dump does not matter to those.
    let named = other.to_str().expect("UTF-8");
    assert_eq!(lines(&["plan", "-f", "d.json", "--kubeconfig", named, "--context", ""]), ["prod-eu", "prod-us", ":4"]);
    // No request for any of them.
    assert_eq!(server.requests().iter().filter(|r| r.path == "/api/v1/namespaces").count(), asked);

    // --down NODE[,NODE…]: the nodes (tainted first), the names given not again.
    assert_eq!(lines(&["plan", "--down", ""]), ["m-tainted", "z-tainted", "a-plain", ":4"]);
    assert_eq!(lines(&["plan", "--down", "m-tainted,"]), ["m-tainted,z-tainted", "m-tainted,a-plain", ":4"]);
    assert_eq!(lines(&["plan", "--down", "z-tainted,a"]), ["z-tainted,a-plain", ":4"]);
    assert_eq!(lines(&["plan", "-f", "d.json", "--down", ""]), [":4"], "a dump's nodes are not the cluster's");
    assert!(server.requests().iter().all(|r| r.method == "GET"));
}
