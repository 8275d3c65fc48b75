//! `kubectl taint-evict profile` and `audit --profile-from-cluster` on the real kube-apiserver
//! (docs/audit.md, "The cluster's profile"): nodes in two zones and one without a zone label, and the
//! static pods of kube-controller-manager and kube-apiserver as kubeadm shows them in `kube-system`
//! (their objects only: no kubelet runs them here), each with flags on its command line. The profile
//! is read from them by LISTs and `GET /version` alone, counted by the server itself.

use serde_json::{Value, json};

use super::requests::{counted, shown, without_the_servers_own};
use super::{ControlPlane, node};
use crate::control_plane;
use crate::util::{command, repo, run_command};

/// A control-plane component's static pod as kubeadm writes it, with `args` after its name.
fn static_pod(component: &str, args: &[&str]) -> Value {
    let mut command = vec![component.to_owned()];
    command.extend(args.iter().map(|arg| (*arg).to_owned()));
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": format!("{component}-cp"), "namespace": "kube-system",
                        "labels": {"component": component, "tier": "control-plane"}},
           "spec": {"nodeName": "cp",
                    "containers": [{"name": component, "image": format!("registry.k8s.io/{component}:v1.29.6"),
                                    "command": command}]}})
}

fn zoned(name: &str, zone: &str) -> Value {
    node(name, &[("topology.kubernetes.io/region", "r"), ("topology.kubernetes.io/zone", zone)], &[])
}

fn live(plane: &ControlPlane, args: &[&str]) -> crate::util::Run {
    let mut binary = command();
    binary.current_dir(repo()).args(args).arg("--kubeconfig").arg(plane.kubeconfig());
    run_command(&mut binary, None)
}

#[test]
fn real_apiserver_profile_reads_zones_and_both_control_plane_pods_flags_by_lists_alone() {
    let plane = control_plane!("profile");
    plane.create(&[
        zoned("a1", "za"),
        zoned("a2", "za"),
        zoned("b1", "zb"),
        node("edge", &[], &[]),
        static_pod(
            "kube-controller-manager",
            &["--leader-elect=true", "--node-monitor-grace-period=45s", "--node-eviction-rate", "0.05"],
        ),
        static_pod("kube-apiserver", &["--secure-port=6443", "--default-unreachable-toleration-seconds=90"]),
    ]);
    let mut result = None;
    let counts = counted(&plane, || result = Some(live(&plane, &["profile"])));
    let result = result.expect("profile ran");
    assert_eq!((result.code, result.stderr.as_str()), (0, ""), "{}", result.stdout);
    // Written by hand from the objects above: the version is the server's, whatever its patch.
    let lines: Vec<&str> = result.stdout.lines().collect();
    assert!(lines[1].starts_with("# taken from https://127.0.0.1:"), "{}", result.stdout);
    assert!(
        lines[2].starts_with("kubernetesVersion: \"1.") && lines[2].ends_with("\"  # the API server's /version"),
        "{}",
        result.stdout
    );
    assert_eq!(
        lines[3..].join("\n"),
        "controllerSettings:  # read from pod kube-system/kube-controller-manager-cp\n  \
         node-monitor-grace-period: 45s\n  node-eviction-rate: 0.05\n\
         apiServer:  # read from pod kube-system/kube-apiserver-cp\n  \
         default-not-ready-toleration-seconds: 300  # its default: not on its command line\n  \
         default-unreachable-toleration-seconds: 90\n\
         zones:  # the zone labels of 4 nodes, as the node lifecycle controller reads them\n  \
         \"\": 1  # the nodes without a zone label: one zone\n  za: 2\n  zb: 1"
    );
    // One LIST of nodes and one LIST of pods in kube-system per component (its `GET /version` is no
    // request `apiserver_request_total` counts): no GET of an object, no write.
    let counts = without_the_servers_own(&counts);
    eprintln!("profile's requests:\n{}", shown(&counts));
    let of = |verb: &str, resource: &str| {
        counts.iter().filter(|((v, r, _, _), _)| v == verb && r == resource).map(|(_, n)| *n).sum::<u64>()
    };
    assert_eq!((of("LIST", "nodes"), of("LIST", "pods")), (1, 2), "{}", shown(&counts));
    let others: Vec<_> =
        counts.keys().filter(|(verb, resource, _, _)| verb != "LIST" && !resource.is_empty()).collect();
    assert!(others.is_empty(), "requests of objects other than LISTs: {others:?}");
    assert_eq!(counts.values().sum::<u64>(), 3, "{}", shown(&counts));

    // The manifests' audit against it, taken live: the three zones (za, zb and the zone "" of the
    // node without a label) make api's two replicas, apart on nodes only, a finding; its 10 s is
    // measured against the pod's 45 s; nothing is assumed.
    let audit = live(&plane, &["audit", "-f", "tests/data/manifests/shop", "--profile-from-cluster", "-o", "json"]);
    assert_eq!((audit.code, audit.stderr.as_str()), (0, ""), "{}", audit.stdout);
    let document: Value = serde_json::from_str(&audit.stdout).expect("JSON");
    let findings = document["findings"].as_array().expect("findings");
    let api: Vec<&str> =
        findings.iter().filter(|f| f["name"] == "api").map(|f| f["rule"].as_str().unwrap_or_default()).collect();
    assert_eq!(api, ["deleted-on-a-blip", "replicas-in-one-zone"], "{document:#}");
    let blip = findings.iter().find(|f| f["rule"] == "deleted-on-a-blip").expect("the blip");
    let message = blip["message"].as_str().unwrap_or_default();
    assert!(message.contains("the controller's 45s grace period (read from its pod)"), "{message}");
}
