//! Live `plan` and `explain` read what the node lifecycle controller reads (the node Leases, the
//! controller manager's Lease, the server version) and predict from it exactly as from a dump of the
//! same objects; without permission to list the Leases they say what the answer lacks.

use serde_json::Value;

use crate::util::{Run, as_from_dump, command, data, read_json, run, run_command, scratch};
use taint_evict_test_support::fake_apiserver::{FakeApiServer, Fault};

/// Fixture `b`: four of twelve nodes of zone z1 silent, the snapshot taken before any taint.
const FIXTURE: &str = "tests/data/nlc/b-rate-limit-4-of-12.json";
const NOW: &str = "2026-11-23T18:27:23.291Z";
const NODE_LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";

/// A fake API server holding fixture `b`, answering `/version` as `1.minor`.
fn server(name: &str, minor: u32) -> FakeApiServer {
    let server = FakeApiServer::start(&scratch(name));
    server.load(&read_json(&data("nlc/b-rate-limit-4-of-12.json")));
    server.serve_version(minor);
    server
}

fn live(server: &FakeApiServer, args: &[&str]) -> Run {
    let kubeconfig = server.kubeconfig().to_str().expect("UTF-8 path").to_owned();
    run_command(command().args(args).args(["--kubeconfig", &kubeconfig]), None)
}

/// `plan -o json` of the fixture, live and from the file, with `extra` flags on both.
fn live_and_file(server: &FakeApiServer, live_extra: &[&str], file_extra: &[&str]) -> (String, String) {
    let base = ["plan", "--now", NOW, "--silent-after", "5s", "-o", "json"];
    let from_cluster = live(server, &[&base[..], live_extra].concat());
    assert_eq!(from_cluster.code, 0, "{}", from_cluster.stderr);
    assert_eq!(from_cluster.stderr, "", "no warning when the Leases are read");
    let from_file = run(&[&base[..], &["-f", FIXTURE], file_extra].concat(), None);
    assert_eq!(from_file.code, 0, "{}", from_file.stderr);
    (as_from_dump(&from_cluster.stdout, "watch-cache"), from_file.stdout)
}

#[test]
fn live_plan_reads_the_node_leases_and_predicts_as_from_a_dump_of_the_same_objects() {
    let server = server("live-nlc-leases", 29);
    let (from_cluster, from_file) = live_and_file(&server, &[], &[]);
    assert_eq!(from_cluster, from_file);
    let plan: Value = serde_json::from_str(&from_cluster).expect("JSON");
    let n04 = plan["nodes"].as_array().expect("nodes").iter().find(|n| n["name"] == "n04").expect("n04 is shown");
    assert_eq!(n04["predictedTaint"]["basis"], "lost-heartbeat", "{n04}");
    let requests = server.requests();
    let leases: Vec<_> = requests.iter().filter(|r| r.path == NODE_LEASES).collect();
    assert_eq!(leases.len(), 1, "one LIST of the node Leases");
    assert_eq!(requests.iter().filter(|r| r.path == "/version").count(), 1);
    // Named: the node's zone is counted from one LIST of every node, beside the pod list.
    let (from_cluster, from_file) = live_and_file(&server, &["n04"], &["n04"]);
    assert_eq!(from_cluster, from_file);
}

#[test]
fn live_plan_takes_the_grace_period_of_the_servers_version_unless_one_is_given() {
    // 1.32 and later: 50 s of grace by default.
    let server = server("live-nlc-version", 32);
    let (from_cluster, from_file) = live_and_file(&server, &[], &["--node-monitor-grace-period", "50s"]);
    assert_eq!(from_cluster, from_file);
    // A flag given wins over the version's default.
    let given = ["--node-monitor-grace-period", "40s"];
    let (from_cluster, from_file) = live_and_file(&server, &given, &[]);
    assert_eq!(from_cluster, from_file);
}

#[test]
fn live_plan_without_permission_to_list_leases_predicts_from_ready_conditions_and_says_what_it_lacks() {
    let server = server("live-nlc-forbidden", 29);
    let message = "leases.coordination.k8s.io is forbidden: User \"alice\" cannot list resource \"leases\" in API \
                   group \"coordination.k8s.io\" in the namespace \"kube-node-lease\"";
    server.fail("GET", NODE_LEASES, Fault::Status(403, message.to_owned()));
    let result = live(&server, &["plan", "--now", NOW, "--silent-after", "5s", "-o", "json"]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(
        result.stderr,
        "warning: cannot list leases in namespace \"kube-node-lease\" (forbidden): a silent kubelet is seen only \
         once its node is Ready=Unknown (grant list on leases there: deploy/rbac-plan.yaml)\n"
    );
    // The plan of a dump of the same objects without the node Leases.
    let mut dump = read_json(&data("nlc/b-rate-limit-4-of-12.json"));
    let items = dump["items"].as_array_mut().expect("items");
    items.retain(|item| item["metadata"]["namespace"] != "kube-node-lease");
    let path = scratch("live-nlc-forbidden-dump").join("dump.json");
    std::fs::write(&path, dump.to_string()).expect("the dump is written");
    let path = path.to_str().expect("UTF-8 path");
    let from_file = run(&["plan", "--now", NOW, "--silent-after", "5s", "-o", "json", "-f", path], None);
    assert_eq!(as_from_dump(&result.stdout, "watch-cache"), from_file.stdout);
    // Still Ready=True and no Lease to say they are silent: no taint is foreseen for n01–n04 yet.
    let plan: Value = serde_json::from_str(&result.stdout).expect("JSON");
    let foreseen = plan["nodes"].as_array().expect("nodes").iter().filter(|n| !n["predictedTaint"].is_null()).count();
    assert_eq!(foreseen, 0, "{plan:#}");
    let explain = live(&server, &["explain", "-n", "exp", "zero-n04", "--now", NOW, "--silent-after", "5s"]);
    assert_eq!(explain.code, 0, "{}", explain.stderr);
    assert!(
        explain.stderr.starts_with("warning: cannot list leases in namespace \"kube-node-lease\""),
        "{}",
        explain.stderr
    );
}

#[test]
fn live_explain_walks_the_chain_as_from_a_dump_of_the_same_objects() {
    let server = server("live-nlc-explain", 29);
    for output in ["text", "json"] {
        let args = ["explain", "-n", "exp", "zero-n04", "--now", NOW, "--silent-after", "5s", "-o", output];
        let from_cluster = live(&server, &args);
        assert_eq!(from_cluster.code, 0, "{}", from_cluster.stderr);
        let from_file = run(&[&args[..], &["-f", FIXTURE]].concat(), None);
        assert_eq!(from_cluster.stdout, from_file.stdout, "-o {output}");
    }
}
