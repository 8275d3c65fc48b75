//! A seeded generator of realistic `kubectl get nodes,pods -A -o json` dumps (BENCHMARKS.md).
//!
//! Shared by the examples and benches that need a dump: `examples/gen_cluster.rs` writes a file, and
//! `benches/plan.rs` keeps it in memory. Deterministic: the same sizes and seed give
//! the same bytes.
//! No extra crates: a splitmix64 PRNG, `serde_json::json!` for the objects, jiff for the timestamps.
//!
//! The objects look like an EKS cluster's after a zone outage, as kubectl prints them (4-space
//! indentation, keys sorted, no managed fields):
//! - nodes: cloud labels and annotations, status with capacity, conditions, images and nodeInfo; about
//!   90% carry `node.kubernetes.io/unreachable` `NoSchedule` and `NoExecute` taints with `timeAdded`
//!   in the ten minutes before [`NOW`], the rest are healthy (all of them with [`Config::healthy`]);
//! - pods, per node: 10% DaemonSet pods (`not-ready`/`unreachable` tolerated forever, plus the
//!   DaemonSet controller's `NoSchedule` tolerations), 10% Job pods without tolerations, 80% Deployment
//!   pods with the default tolerations (`not-ready`/`unreachable` for 300 s); each with labels,
//!   `ownerReferences`, a container with image, port and resources, conditions (`PodScheduled` with
//!   `lastTransitionTime`), container statuses and IPs. About 6 KB per pod as kubectl prints it, the
//!   top of the usual range: real pods with probes, env and the service-account volume run 8–11 KB,
//!   and a smaller dump per pod is the harder case for the plan targets (relative to the dump).

use std::collections::HashSet;
use std::io::{self, Write};

use serde_json::{Value, json};

/// The instant the dump is taken at (`plan --now`).
pub const NOW: &str = "2026-11-22T10:00:00Z";
const NOW_SECONDS: i64 = 1_795_341_600;

/// What to generate.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// How many nodes.
    pub nodes: usize,
    /// How many pods on each node.
    pub pods_per_node: usize,
    /// The PRNG seed.
    pub seed: u64,
    /// Every node healthy (an audit's input, before anything breaks); else about 90% are tainted.
    pub healthy: bool,
}

/// splitmix64: tiny, fast, and good enough for synthetic data.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`; the modulo bias is irrelevant here).
    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }

    /// `n` characters from Kubernetes' name-suffix alphabet (no vowels, no confusable digits).
    fn suffix(&mut self, n: usize) -> String {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        (0..n).map(|_| ALPHABET[self.below(ALPHABET.len() as u64) as usize] as char).collect()
    }

    fn hex(&mut self, n: usize) -> String {
        (0..n).map(|_| char::from_digit(self.below(16) as u32, 16).expect("a hex digit")).collect()
    }

    fn uuid(&mut self) -> String {
        format!(
            "{}-{}-4{}-{}{}-{}",
            self.hex(8),
            self.hex(4),
            self.hex(3),
            self.pick(&["8", "9", "a", "b"]),
            self.hex(3),
            self.hex(12)
        )
    }
}

/// RFC 3339 in UTC, seconds precision, as the API server writes it.
fn time(seconds: i64) -> String {
    jiff::Timestamp::from_second(seconds).expect("a generated instant is in range").to_string()
}

/// The zones, node `i` in zone `i % 3`.
pub const ZONES: &[&str] = &["eu-west-1a", "eu-west-1b", "eu-west-1c"];
const INSTANCE_TYPES: &[&str] = &["m6i.2xlarge", "m6i.4xlarge", "c6i.4xlarge", "r6i.2xlarge"];
const APPS: &[&str] = &[
    "checkout",
    "cart",
    "catalog",
    "payments",
    "search",
    "recommendations",
    "frontend",
    "gateway",
    "auth",
    "notifications",
    "inventory",
    "shipping",
    "pricing",
    "reviews",
    "ledger",
    "media",
    "orders",
    "profile",
    "sessions",
    "analytics",
];
const NAMESPACES: usize = 200;

/// Node `i`'s identity, derived from the seed so nodes can be rendered independently.
struct NodeInfo {
    name: String,
    ip: [u8; 4],
    zone: &'static str,
    /// `timeAdded` of the unreachable taints, or `None` for a healthy node.
    tainted_at: Option<i64>,
}

fn node_info(config: &Config, i: usize) -> NodeInfo {
    let mut rng = Rng::new(config.seed ^ (i as u64).wrapping_mul(0xa076_1d64_78bd_642f));
    let ip = [10, (i / 65_536 % 64) as u8 + 64, (i / 256 % 256) as u8, (i % 256) as u8];
    let tainted_at = (!config.healthy && rng.below(10) != 0).then(|| NOW_SECONDS - 1 - rng.below(600) as i64);
    NodeInfo {
        name: format!("ip-{}-{}-{}-{}.eu-west-1.compute.internal", ip[0], ip[1], ip[2], ip[3]),
        ip,
        zone: ZONES[i % ZONES.len()],
        tainted_at,
    }
}

fn node(config: &Config, i: usize) -> Value {
    let info = node_info(config, i);
    let mut rng = Rng::new(config.seed.wrapping_add(0x5eed) ^ (i as u64).wrapping_mul(0xe703_7ed1_a0b4_28db));
    let instance_type = rng.pick(INSTANCE_TYPES);
    let created = NOW_SECONDS - 86_400 * 20 - rng.below(86_400 * 10) as i64;
    let ip = format!("{}.{}.{}.{}", info.ip[0], info.ip[1], info.ip[2], info.ip[3]);
    let taints = match info.tainted_at {
        Some(at) => json!([
            {"effect": "NoSchedule", "key": "node.kubernetes.io/unreachable", "timeAdded": time(at)},
            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "timeAdded": time(at + 1)},
        ]),
        None => Value::Null,
    };
    let (status, reason, message, heartbeat) = match info.tainted_at {
        Some(at) => ("Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.", at - 40),
        None => ("True", "KubeletReady", "kubelet is posting ready status", NOW_SECONDS - 12),
    };
    let condition = |type_: &str, ok_reason: &str, ok_message: &str, ok_status: &str| {
        let (status, reason, message) =
            if info.tainted_at.is_some() { (status, reason, message) } else { (ok_status, ok_reason, ok_message) };
        json!({"lastHeartbeatTime": time(heartbeat), "lastTransitionTime": time(info.tainted_at.unwrap_or(created + 40)),
               "message": message, "reason": reason, "status": status, "type": type_})
    };
    let images: Vec<Value> = (0..12)
        .map(|k| {
            let repo = format!("602401143452.dkr.ecr.eu-west-1.amazonaws.com/{}", APPS[(i + k) % APPS.len()]);
            json!({"names": [format!("{repo}@sha256:{}", rng.hex(64)), format!("{repo}:v1.{}.{}", k, rng.below(20))],
                   "sizeBytes": 20_000_000 + rng.below(400_000_000)})
        })
        .collect();
    let mut spec = json!({
        "podCIDR": format!("100.{}.{}.0/24", 64 + i / 256 % 64, i % 256),
        "providerID": format!("aws:///{}/i-0{}", info.zone, rng.hex(16)),
    });
    if !taints.is_null() {
        spec["taints"] = taints;
    }
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": {
                "alpha.kubernetes.io/provided-node-ip": ip,
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true"
            },
            "creationTimestamp": time(created),
            "labels": {
                "beta.kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/instance-type": instance_type,
                "beta.kubernetes.io/os": "linux",
                "eks.amazonaws.com/capacityType": "ON_DEMAND",
                "eks.amazonaws.com/nodegroup": format!("workers-{}", info.zone),
                "failure-domain.beta.kubernetes.io/region": "eu-west-1",
                "failure-domain.beta.kubernetes.io/zone": info.zone,
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": info.name,
                "kubernetes.io/os": "linux",
                "node.kubernetes.io/instance-type": instance_type,
                "topology.kubernetes.io/region": "eu-west-1",
                "topology.kubernetes.io/zone": info.zone
            },
            "name": info.name,
            "resourceVersion": (40_000_000 + rng.below(9_000_000)).to_string(),
            "uid": rng.uuid()
        },
        "spec": spec,
        "status": {
            "addresses": [
                {"address": ip, "type": "InternalIP"},
                {"address": info.name, "type": "InternalDNS"},
                {"address": info.name, "type": "Hostname"}
            ],
            "allocatable": {"cpu": "7910m", "ephemeral-storage": "95551679124", "hugepages-1Gi": "0",
                            "hugepages-2Mi": "0", "memory": "31482280Ki", "pods": "110"},
            "capacity": {"cpu": "8", "ephemeral-storage": "104845292Ki", "hugepages-1Gi": "0",
                         "hugepages-2Mi": "0", "memory": "32408488Ki", "pods": "110"},
            "conditions": [
                condition("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available", "False"),
                condition("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure", "False"),
                condition("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available", "False"),
                condition("Ready", "KubeletReady", "kubelet is posting ready status", "True")
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": images,
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": rng.uuid(),
                "containerRuntimeVersion": "containerd://1.7.27",
                "kernelVersion": "6.1.141-155.222.amzn2023.x86_64",
                "kubeProxyVersion": "",
                "kubeletVersion": "v1.33.5-eks-113cf36",
                "machineID": rng.hex(32),
                "operatingSystem": "linux",
                "osImage": "Amazon Linux 2023.8.20250915",
                "systemUUID": rng.uuid()
            }
        }
    })
}

/// What a pod is, for its tolerations and owner.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PodKind {
    /// A Deployment's pod: the default tolerations (300 s).
    Deployment,
    /// A DaemonSet's pod: tolerated forever.
    DaemonSet,
    /// A Job's pod: no tolerations.
    Job,
}

/// A pod before rendering: enough to sort the list as kubectl does (namespace, name).
struct PodSeed {
    namespace: String,
    name: String,
    /// The owner's name (ReplicaSet, DaemonSet or Job) and the app.
    owner: String,
    app: &'static str,
    kind: PodKind,
    node: usize,
    /// Index on its node (for the pod IP).
    slot: usize,
    seed: u64,
}

const DAEMONSETS: &[(&str, &str)] =
    &[("kube-system", "kube-proxy"), ("kube-system", "aws-node"), ("monitoring", "node-exporter")];

fn pod_seeds(config: &Config) -> Vec<PodSeed> {
    let mut rng = Rng::new(config.seed);
    let daemons = config.pods_per_node / 10;
    let jobs = config.pods_per_node / 10;
    let mut names = HashSet::new();
    let mut seeds = Vec::with_capacity(config.nodes * config.pods_per_node);
    for node in 0..config.nodes {
        for slot in 0..config.pods_per_node {
            let (namespace, owner, app, kind) = if slot < daemons {
                let (namespace, ds) = DAEMONSETS[slot % DAEMONSETS.len()];
                let ds = if slot < DAEMONSETS.len() { ds.to_owned() } else { format!("{ds}-{slot}") };
                (namespace.to_owned(), ds, "daemon", PodKind::DaemonSet)
            } else if slot < daemons + jobs {
                let namespace = format!("team-{:03}", rng.below(NAMESPACES as u64));
                let app = rng.pick(APPS);
                (namespace, format!("{app}-report-{}", 29_000_000 + rng.below(1000)), app, PodKind::Job)
            } else {
                let ns = rng.below(NAMESPACES as u64);
                let app_index = rng.below(APPS.len() as u64);
                // The ReplicaSet's hash depends on the Deployment only.
                let hash = Rng::new(config.seed ^ (ns << 8 | app_index)).suffix(10);
                let app = APPS[app_index as usize];
                (format!("team-{ns:03}"), format!("{app}-{hash}"), app, PodKind::Deployment)
            };
            let name = loop {
                let name = format!("{owner}-{}", rng.suffix(5));
                if names.insert((namespace.clone(), name.clone())) {
                    break name;
                }
            };
            seeds.push(PodSeed { namespace, name, owner, app, kind, node, slot, seed: rng.next_u64() });
        }
    }
    seeds.sort_unstable_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    seeds
}

fn tolerations(kind: PodKind) -> Value {
    match kind {
        PodKind::Deployment => json!([
            {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300}
        ]),
        PodKind::DaemonSet => json!([
            {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists"},
            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists"},
            {"effect": "NoSchedule", "key": "node.kubernetes.io/disk-pressure", "operator": "Exists"},
            {"effect": "NoSchedule", "key": "node.kubernetes.io/memory-pressure", "operator": "Exists"},
            {"effect": "NoSchedule", "key": "node.kubernetes.io/pid-pressure", "operator": "Exists"},
            {"effect": "NoSchedule", "key": "node.kubernetes.io/unschedulable", "operator": "Exists"},
            {"effect": "NoSchedule", "key": "node.kubernetes.io/network-unavailable", "operator": "Exists"}
        ]),
        PodKind::Job => Value::Null,
    }
}

fn pod(config: &Config, seed: &PodSeed) -> Value {
    let mut rng = Rng::new(seed.seed);
    let node = node_info(config, seed.node);
    let created = NOW_SECONDS - 3_600 - rng.below(86_400 * 14) as i64;
    let scheduled = created + 1;
    let started = scheduled + 2 + rng.below(20) as i64;
    let pod_ip = format!("100.{}.{}.{}", 64 + seed.node / 256 % 64, seed.node % 256, 2 + seed.slot);
    let host_ip = format!("{}.{}.{}.{}", node.ip[0], node.ip[1], node.ip[2], node.ip[3]);
    let (image, owner_kind, owner_api) = match seed.kind {
        PodKind::Deployment => (
            format!(
                "123456789012.dkr.ecr.eu-west-1.amazonaws.com/{}/{}:v1.{}.{}",
                seed.namespace,
                seed.app,
                rng.below(60),
                rng.below(10)
            ),
            "ReplicaSet",
            "apps/v1",
        ),
        PodKind::DaemonSet => (
            format!("602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/{}:v1.33.{}", seed.owner, rng.below(6)),
            "DaemonSet",
            "apps/v1",
        ),
        PodKind::Job => (
            format!(
                "123456789012.dkr.ecr.eu-west-1.amazonaws.com/{}/{}-report:2026.11.{}",
                seed.namespace,
                seed.app,
                1 + rng.below(21)
            ),
            "Job",
            "batch/v1",
        ),
    };
    let container_name = if seed.kind == PodKind::DaemonSet { seed.owner.as_str() } else { seed.app };
    let mut labels = json!({"app.kubernetes.io/instance": seed.owner, "app.kubernetes.io/name": container_name});
    match seed.kind {
        PodKind::Deployment => {
            labels["app.kubernetes.io/part-of"] = json!("shop");
            labels["pod-template-hash"] = json!(seed.owner.rsplit('-').next().unwrap_or_default());
        }
        PodKind::DaemonSet => {
            labels["controller-revision-hash"] = json!(rng.hex(10));
            labels["pod-template-generation"] = json!("4");
        }
        PodKind::Job => {
            labels["batch.kubernetes.io/job-name"] = json!(seed.owner);
            labels["job-name"] = json!(seed.owner);
        }
    }
    let container = json!({
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "name": container_name,
        "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        "resources": {"limits": {"memory": format!("{}Mi", 256 << rng.below(3))},
                      "requests": {"cpu": format!("{}m", 50 + 50 * rng.below(8)), "memory": format!("{}Mi", 128 << rng.below(3))}},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File"
    });
    let ready = if node.tainted_at.is_some() { "False" } else { "True" };
    let ready_at = node.tainted_at.map_or(started + 12, |at| at + 5);
    let condition = |type_: &str, status: &str, at: i64| json!({"lastProbeTime": null, "lastTransitionTime": time(at), "status": status, "type": type_});
    let (phase, running) = match (seed.kind, rng.below(100)) {
        (PodKind::Job, 0..=29) => ("Succeeded", false),
        _ => ("Running", true),
    };
    let state = if running {
        json!({"running": {"startedAt": time(started)}})
    } else {
        json!({"terminated": {"containerID": format!("containerd://{}", rng.hex(64)), "exitCode": 0,
                              "finishedAt": time(started + 300), "reason": "Completed", "startedAt": time(started)}})
    };
    let mut spec = json!({
        "containers": [container],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": true,
        "nodeName": node.name,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "restartPolicy": if seed.kind == PodKind::Job { "Never" } else { "Always" },
        "schedulerName": "default-scheduler",
        "serviceAccount": seed.app,
        "serviceAccountName": seed.app,
        "terminationGracePeriodSeconds": 30
    });
    let tolerations = tolerations(seed.kind);
    if !tolerations.is_null() {
        spec["tolerations"] = tolerations;
    }
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "creationTimestamp": time(created),
            "generateName": format!("{}-", seed.owner),
            "labels": labels,
            "name": seed.name,
            "namespace": seed.namespace,
            "ownerReferences": [{"apiVersion": owner_api, "blockOwnerDeletion": true, "controller": true,
                                 "kind": owner_kind, "name": seed.owner, "uid": rng.uuid()}],
            "resourceVersion": (40_000_000 + rng.below(9_000_000)).to_string(),
            "uid": rng.uuid()
        },
        "spec": spec,
        "status": {
            "conditions": [
                condition("PodReadyToStartContainers", "True", started),
                condition("Initialized", "True", scheduled + 1),
                condition("Ready", ready, ready_at),
                condition("ContainersReady", ready, ready_at),
                condition("PodScheduled", "True", scheduled)
            ],
            "containerStatuses": [{
                "containerID": format!("containerd://{}", rng.hex(64)),
                "image": image,
                "imageID": format!("{}@sha256:{}", image.split(':').next().unwrap_or_default(), rng.hex(64)),
                "lastState": {},
                "name": container_name,
                "ready": running && ready == "True",
                "restartCount": rng.below(3),
                "started": running,
                "state": state
            }],
            "hostIP": host_ip,
            "hostIPs": [{"ip": host_ip}],
            "phase": phase,
            "podIP": pod_ip,
            "podIPs": [{"ip": pod_ip}],
            "qosClass": "Burstable",
            "startTime": time(scheduled + 1)
        }
    })
}

/// Writes one item as kubectl does: pretty, 4-space indentation, nested two levels in the List.
fn write_item(out: &mut impl Write, item: &Value, first: bool, scratch: &mut Vec<u8>) -> io::Result<()> {
    scratch.clear();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut *scratch, formatter);
    serde::Serialize::serialize(item, &mut serializer).map_err(io::Error::other)?;
    out.write_all(if first { b"        " } else { b",\n        " })?;
    // JSON strings never hold a raw newline, so every newline is a line break to indent.
    for (i, line) in scratch.split(|&b| b == b'\n').enumerate() {
        if i > 0 {
            out.write_all(b"\n        ")?;
        }
        out.write_all(line)?;
    }
    Ok(())
}

/// Hands every item of the dump to `each`, in the dump's order: every node, then every pod sorted by
/// namespace and name (`hour` loads them into the fake API server without the dump's text).
///
/// # Errors
/// `each`'s.
pub fn each_item<E>(config: &Config, mut each: impl FnMut(Value) -> Result<(), E>) -> Result<(), E> {
    for i in 0..config.nodes {
        each(node(config, i))?;
    }
    for seed in pod_seeds(config) {
        each(pod(config, &seed))?;
    }
    Ok(())
}

/// Writes the dump: a `v1` `List` of every node, then every pod sorted by namespace and name.
pub fn generate(config: &Config, out: &mut impl Write) -> io::Result<()> {
    let mut scratch = Vec::with_capacity(64 * 1024);
    out.write_all(b"{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n")?;
    let mut first = true;
    each_item(config, |item| {
        write_item(out, &item, first, &mut scratch)?;
        first = false;
        Ok::<_, io::Error>(())
    })?;
    out.write_all(
        b"\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n",
    )
}
