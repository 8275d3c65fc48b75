//! Completion of node and pod names from the live cluster, through kubectl's own `__complete` (kubectl
//! >= 1.26 runs `kubectl_complete-taint_evict` from PATH), against the fake API server.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::run_cluster::{node, pod, taint};
use crate::support::fake_apiserver::FakeApiServer;
use crate::util::{command, scratch};

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
