//! `plan` and `explain` read from the real kube-apiserver give the same answer as from a
//! `kubectl get nodes,pods -A -o json` dump of the same cluster, over lists that really page.

use serde_json::Value;

use super::{namespace, node, pod, taint};
use crate::control_plane;
use crate::util::{Run, as_from_dump, command, run_command, scratch};

const NOW: &str = "2026-11-23T12:00:00Z";

/// What `--content-type` may ask for.
const CONTENT_TYPES: [&str; 2] = ["protobuf", "json"];

/// Runs the binary against the control plane's admin kubeconfig.
fn live(kubeconfig: &std::path::Path, args: &[&str]) -> Run {
    run_command(command().args(args).arg("--kubeconfig").arg(kubeconfig), None)
}

/// 510 nodes in two zones (more than one LIST page of 500), 12 of them tainted; 560 pods on `worker-000`
/// (more than a page through its field selector) and 3 on each other tainted node, in 3 namespaces.
fn big_cluster() -> Vec<Value> {
    let added = "2026-11-23T11:58:00Z".parse().expect("instant");
    let mut objects: Vec<Value> = ["team-a", "team-b", "team-c"].iter().map(|n| namespace(n)).collect();
    for i in 0..510 {
        let zone = if i % 2 == 0 { "zone-a" } else { "zone-b" };
        let taints = if i < 12 { vec![taint(added)] } else { vec![] };
        objects.push(node(&format!("worker-{i:03}"), &[("topology.kubernetes.io/zone", zone)], &taints));
    }
    let teams = ["team-a", "team-b", "team-c"];
    for i in 0..560 {
        let seconds = match i % 4 {
            0 => None,
            1 => Some(None),
            2 => Some(Some(60 + i64::from(i))),
            _ => Some(Some(30)),
        };
        objects.push(pod(teams[i as usize % 3], &format!("big-{i:03}"), "worker-000", seconds));
    }
    for n in 1..12 {
        for (j, seconds) in [None, Some(Some(120)), Some(None)].into_iter().enumerate() {
            objects.push(pod(teams[j], &format!("p-{n:03}-{j}"), &format!("worker-{n:03}"), seconds));
        }
    }
    objects
}

#[test]
fn real_apiserver_live_plan_equals_the_plan_of_a_kubectl_dump_over_paged_lists() {
    let plane = control_plane!("plan-equals-dump");
    plane.create(&big_cluster());
    let dump = plane.kubectl_ok(&["get", "nodes,pods", "-A", "-o", "json"], None);
    let file = scratch("real-plan-dump").join("dump.json");
    std::fs::write(&file, &dump).expect("write the dump");
    let file = file.to_str().expect("UTF-8 path");
    let cases: [&[&str]; 5] = [
        &[],
        &["worker-000"],
        &["worker-003", "worker-000", "worker-200"],
        &["-l", "topology.kubernetes.io/zone=zone-b"],
        &["-l", "topology.kubernetes.io/zone=zone-a", "-n", "team-b"],
    ];
    for extra in cases {
        let mut args = vec!["plan", "--now", NOW, "-o", "json"];
        args.extend(extra);
        let from_file = run_command(command().args(&args).args(["-f", file]), None);
        assert_eq!(from_file.code, 0, "plan -f {extra:?}: {}", from_file.stderr);
        // From the watch cache (one unlimited LIST) and from etcd (pages of 500), as protobuf (the
        // default) and as JSON.
        for (flags, read) in [(&[][..], "watch-cache"), (&["--quorum-read"][..], "quorum")] {
            for content_type in CONTENT_TYPES {
                let flags = [flags, &["--content-type", content_type]].concat();
                let from_cluster = live(plane.kubeconfig(), &[&args[..], &flags].concat());
                assert_eq!(from_cluster.code, 0, "plan {extra:?} {read}: {}", from_cluster.stderr);
                let answered = format!("\"contentType\": \"{content_type}\"");
                assert!(from_cluster.stdout.contains(&answered), "plan {extra:?} {flags:?}: {}", from_cluster.stdout);
                assert_eq!(as_from_dump(&from_cluster.stdout, read), from_file.stdout, "plan {extra:?} {flags:?}");
            }
        }
        let plan: Value = serde_json::from_str(&from_file.stdout).expect("JSON");
        let pods: usize =
            plan["nodes"].as_array().expect("nodes").iter().map(|n| n["pods"].as_array().map_or(0, Vec::len)).sum();
        assert!(pods > 0, "plan {extra:?} has pods: {plan}");
    }
    // Every pod of the big node is there, read from etcd in two pages.
    let all = live(plane.kubeconfig(), &["plan", "worker-000", "--now", NOW, "-o", "json", "--quorum-read"]);
    let plan: Value = serde_json::from_str(&all.stdout).expect("JSON");
    assert_eq!(plan["nodes"][0]["pods"].as_array().map(Vec::len), Some(560));

    for (namespace, name) in
        [("team-a", "big-000"), ("team-b", "big-001"), ("team-c", "big-002"), ("team-b", "p-004-1")]
    {
        let args = ["explain", "-n", namespace, name, "--now", NOW, "-o", "json"];
        let from_file = run_command(command().args(args).args(["-f", file]), None);
        for read in [&[][..], &["--quorum-read"][..], &["--content-type", "json"][..]] {
            let from_cluster = live(plane.kubeconfig(), &[&args[..], read].concat());
            assert_eq!(from_cluster.code, 0, "explain {name} {read:?}: {}", from_cluster.stderr);
            assert_eq!(from_cluster.stdout, from_file.stdout, "explain {namespace}/{name} {read:?}");
        }
    }
}

#[test]
fn real_apiserver_unknown_node_and_pod_are_clear_errors() {
    let plane = control_plane!("unknown-names");
    // The server's `Status` comes back in the content type asked for: read either way alike.
    for content_type in CONTENT_TYPES {
        let node = live(plane.kubeconfig(), &["plan", "no-such-node", "--content-type", content_type]);
        assert_ne!(node.code, 0);
        assert!(node.stderr.starts_with("error: node \"no-such-node\" not found\n"), "{}", node.stderr);
        let pod =
            live(plane.kubeconfig(), &["explain", "-n", "default", "no-such-pod", "--content-type", content_type]);
        assert_ne!(pod.code, 0);
        assert!(pod.stderr.starts_with("error: pod \"default/no-such-pod\" not found"), "{}", pod.stderr);
    }
}
