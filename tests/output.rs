//! What the operator sees: the table and JSON for the bundled example (snapshots), colour rules, the
//! YAML twin of the JSON document, and `kubectl taint-evict` through kubectl's plugin dispatch.

use std::process::Command;

use crate::util::{command, run, run_command, scratch};

const NOW: &str = "2026-11-22T10:00:00Z";
const INCIDENT: &str = "examples/incident.json";

#[test]
fn incident_table() {
    let result = run(&["plan", "-f", INCIDENT, "--now", NOW], None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    insta::assert_snapshot!(result.stdout);
}

#[test]
fn incident_wide_table_for_one_namespace() {
    let result =
        run(&["plan", "-f", INCIDENT, "--now", NOW, "-o", "wide", "-n", "payments", "worker-3", "worker-2"], None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    insta::assert_snapshot!(result.stdout);
}

#[test]
fn incident_json() {
    let result = run(&["plan", "-f", INCIDENT, "--now", NOW, "-o", "json"], None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    insta::assert_snapshot!(result.stdout);
}

#[test]
fn incident_explain() {
    let result =
        run(&["explain", "-f", INCIDENT, "--now", NOW, "-n", "payments", "fraud-scorer-5d7b8c9f6-gq2xw"], None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    insta::assert_snapshot!(result.stdout);
}

#[test]
fn explain_names_the_rejected_tolerations_of_an_untolerated_taint() {
    let result =
        run(&["explain", "-f", INCIDENT, "--now", NOW, "-n", "web", "frontend-7d9c6b8f5-c6jfs", "-o", "json"], None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let doc: serde_json::Value = serde_json::from_str(&result.stdout).expect("JSON");
    assert_eq!(doc["kind"], "EvictionExplanation");
    assert_eq!(doc["verdict"], "evict-now");
    let taint = &doc["taints"][0];
    assert_eq!(taint["taint"]["key"], "example.com/maintenance");
    assert!(taint["usedToleration"].is_null());
    assert_eq!(taint["rejected"][0]["reason"], "key differs");
}

#[test]
fn yaml_is_the_json_document() {
    let json = run(&["plan", "-f", INCIDENT, "--now", NOW, "-o", "json"], None);
    let yaml = run(&["plan", "-f", INCIDENT, "--now", NOW, "-o", "yaml"], None);
    assert_eq!(yaml.code, 0, "{}", yaml.stderr);
    let from_json: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let from_yaml: serde_json::Value = serde_saphyr::from_str(&yaml.stdout).expect("YAML");
    assert_eq!(from_json, from_yaml);
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let plain = run(&["plan", "-f", INCIDENT, "--now", NOW], None);
    assert!(!plain.stdout.contains('\u{1b}'), "no colour into a pipe");
    let forced = run(&["plan", "-f", INCIDENT, "--now", NOW, "--color", "always"], None);
    assert!(forced.stdout.contains("\u{1b}[31"), "--color always colours evict-now red");
    let never = run_command(
        command().args(["plan", "-f", INCIDENT, "--now", NOW, "--color", "never"]).env("NO_COLOR", "1"),
        None,
    );
    assert_eq!(never.stdout, plain.stdout);
}

#[test]
fn what_if_taint_on_a_clean_node() {
    let result = run(
        &[
            "plan",
            "-f",
            INCIDENT,
            "--now",
            NOW,
            "-o",
            "json",
            "--taint",
            "node.kubernetes.io/unreachable:NoExecute",
            "worker-1",
        ],
        None,
    );
    assert_eq!(result.code, 0, "{}", result.stderr);
    let doc: serde_json::Value = serde_json::from_str(&result.stdout).expect("JSON");
    let node = &doc["nodes"][0];
    assert_eq!(node["taints"][0]["timeAdded"], NOW);
    let pod = &node["pods"][0];
    assert_eq!(
        (pod["verdict"].as_str(), pod["evictAt"].as_str(), pod["basis"].as_str()),
        (Some("evict-at"), Some("2026-11-22T10:05:00Z"), Some("now"))
    );
}

#[test]
fn selector_picks_nodes_by_label() {
    let result = run(
        &["plan", "-f", INCIDENT, "--now", NOW, "-o", "json", "-l", "kubernetes.io/hostname in (worker-1,worker-4)"],
        None,
    );
    assert_eq!(result.code, 0, "{}", result.stderr);
    let doc: serde_json::Value = serde_json::from_str(&result.stdout).expect("JSON");
    let names: Vec<&str> = doc["nodes"].as_array().expect("nodes").iter().filter_map(|n| n["name"].as_str()).collect();
    assert_eq!(names, ["worker-1", "worker-4"]);
}

#[test]
fn kubectl_dispatches_to_the_plugin_on_path() {
    if Command::new("kubectl").arg("version").arg("--client").output().is_err() {
        eprintln!("kubectl is not installed: plugin dispatch not tested");
        return;
    }
    let dir = scratch("kubectl-dispatch");
    let plugin = dir.join("kubectl-taint_evict");
    // A link, not a copy: kubectl follows it, and the debug binary is ~170 MB.
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_kubectl-taint_evict"), &plugin).expect("link the plugin");
    let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default());
    let args = ["taint-evict", "plan", "-f", INCIDENT, "--now", NOW, "-o", "json"];
    let through_kubectl =
        run_command(Command::new("kubectl").args(args).env("PATH", path).current_dir(crate::util::repo()), None);
    assert_eq!(through_kubectl.code, 0, "{}", through_kubectl.stderr);
    let direct = run(&args[1..], None);
    assert_eq!(through_kubectl.stdout, direct.stdout);
}
