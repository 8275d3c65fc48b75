//! `audit` says a zone's outage is held, and on the real control plane it is: zone `zb` holds only
//! nodes labelled `node.kubernetes.io/exclude-disruption` (edge nodes), which count in no zone's
//! state, so `zb` has none; when `za`'s kubelets stop, `za` is fully disrupted and is the only zone
//! with a state, so every zone with a state is down: master disruption mode, no taint
//! (docs/node-lifecycle.md). The controller marks `za`'s nodes `Ready=Unknown` and, watched for longer
//! than a Normal zone's taints and deletions would take, taints none and deletes no pod.
//!
//! The same cluster as `audit.rs`'s: `za` (three nodes) holds `db`'s two replicas and one of `web`'s,
//! `zb` (two) `web`'s other and `cache`'s one. `zb`'s own outage is not held: its nodes are tainted
//! through their zone's queue, at the rate it was made with.

use std::io::BufReader;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use serde_json::{Value, json};

use super::audit::{FLAGS, audit, counts, live_audit, rules, scenario, workloads};
use super::lifecycle::{SECOND, after, clock, dump, in_zone, rfc3339, wait_heartbeats};
use super::{ControlPlane, Options, node};
use crate::control_plane;
use crate::util::instant;

/// How long each pod tolerates `unreachable` (`owned`'s pods).
const TOLERATION: i128 = 2 * SECOND;

/// A node of zone `zb` labelled `node.kubernetes.io/exclude-disruption`: counted in no zone's state.
fn edge(name: &str) -> Value {
    let labels = [
        ("topology.kubernetes.io/region", "r"),
        ("topology.kubernetes.io/zone", "zb"),
        ("node.kubernetes.io/exclude-disruption", ""),
    ];
    node(name, &labels, &[])
}

/// A flag of `FLAGS` in seconds (`10s`) or as a number (`0.25`).
fn flag(name: &str) -> f64 {
    let value = FLAGS.iter().find_map(|f| f.strip_prefix(name)?.strip_prefix('='));
    let value = value.unwrap_or_else(|| panic!("{name} in {FLAGS:?}"));
    value.trim_end_matches('s').parse().unwrap_or_else(|e| panic!("{name}={value}: {e}"))
}

/// The node's `Ready` status.
fn ready(node: &Value) -> &str {
    let conditions = node["status"]["conditions"].as_array().into_iter().flatten();
    conditions.filter(|c| c["type"] == "Ready").find_map(|c| c["status"].as_str()).unwrap_or_default()
}

/// The node's `NoExecute` taints.
fn no_execute(node: &Value) -> Vec<&Value> {
    node["spec"]["taints"].as_array().into_iter().flatten().filter(|t| t["effect"] == "NoExecute").collect()
}

/// Every version of every node the API server sends (`kubectl get nodes --watch`), taken as it comes:
/// a taint there for a millisecond is in it, where polling could miss it.
struct NodeWatch {
    child: Child,
    events: mpsc::Receiver<Value>,
    /// Each node version taken, with the instant it was.
    seen: Vec<(i128, Value)>,
}

impl NodeWatch {
    /// Starts the watch and returns once it has sent every one of the `count` nodes.
    fn start(plane: &ControlPlane, count: usize) -> Self {
        let mut child = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(plane.kubeconfig())
            .args(["get", "nodes", "--watch", "--output-watch-events", "-o", "json"])
            .env_remove("KUBECONFIG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("kubectl starts");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, events) = mpsc::channel();
        std::thread::spawn(move || {
            // One JSON object per event, over several lines each.
            for event in serde_json::Deserializer::from_reader(BufReader::new(stdout)).into_iter::<Value>() {
                let Ok(event) = event else { return };
                if tx.send(event).is_err() {
                    return;
                }
            }
        });
        let mut watch = Self { child, events, seen: Vec::new() };
        let listed = watch.follow(clock() + 30 * SECOND, |seen| {
            let mut names: Vec<&Value> = seen.iter().map(|(_, n)| &n["metadata"]["name"]).collect();
            names.sort_by_key(|n| n.to_string());
            names.dedup();
            names.len() == count
        });
        assert!(listed.is_some(), "the watch did not send the {count} nodes within 30 s");
        watch
    }

    /// Takes the node versions as they come, until `done` holds over all those taken (the instant it
    /// did) or the clock reaches `until` (`None`); fails at the first version with a `NoExecute` taint.
    fn follow(&mut self, until: i128, done: impl Fn(&[(i128, Value)]) -> bool) -> Option<i128> {
        loop {
            if done(&self.seen) {
                return self.seen.last().map(|(at, _)| *at);
            }
            let left = u64::try_from(until - clock()).unwrap_or(0);
            match self.events.recv_timeout(Duration::from_nanos(left)) {
                Ok(event) => {
                    let (at, node) = (clock(), event["object"].clone());
                    let taints = no_execute(&node);
                    assert!(taints.is_empty(), "{} got NoExecute taints: {taints:?}", node["metadata"]["name"]);
                    self.seen.push((at, node));
                }
                Err(RecvTimeoutError::Timeout) => return None,
                Err(RecvTimeoutError::Disconnected) => panic!("the node watch ended: {:?}", self.child.try_wait()),
            }
        }
    }
}

impl Drop for NodeWatch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn real_apiserver_audit_says_a_zone_whose_peers_are_all_excluded_is_held_and_it_is() {
    let options = Options {
        controller_manager: true,
        controller_manager_args: FLAGS.iter().map(|f| (*f).to_owned()).collect(),
        ..Options::default()
    };
    let mut plane = control_plane!("audit-held", &options);
    let (za, zb) = (["a1", "a2", "a3"], ["b1", "b2"]);
    let mut objects: Vec<Value> = za.iter().map(|n| in_zone(n, "za")).chain(zb.iter().map(|n| edge(n))).collect();
    objects.extend(workloads());
    plane.create(&objects);
    let heartbeats = plane.keep_healthy(&za);
    let _edges = plane.keep_healthy(&zb);
    wait_heartbeats(&plane, 5, "a1");

    // Live, before anything stops; then on paper, the healthy cluster's dump, every outage at the
    // instant za's kubelets stop.
    let live = live_audit(&plane, clock());
    let mut watch = NodeWatch::start(&plane, za.len() + zb.len());
    let (healthy_dump, _) = dump(&plane);
    heartbeats.stop();
    let stopped = clock();
    let audit = audit(&healthy_dump, stopped);
    eprintln!("--- audit at {}\n{audit}", rfc3339(stopped));

    // za down: every node held, every zone with a state down; no owner loses a pod.
    let za_down = scenario(&audit, &json!({"zone": "za"}));
    let nodes = za_down["nodes"].as_array().expect("nodes");
    let held: Vec<Value> = nodes.iter().map(|n| json!([n["name"], n["held"], n["predictedTaint"]])).collect();
    let all_down: Vec<Value> =
        za.iter().map(|n| json!([n, {"reason": "all-zones-down", "zone": "za"}, null])).collect();
    assert_eq!(held, all_down, "{za_down}");
    assert_eq!(za_down["owners"], json!([]), "held: nothing deleted");
    // zb down: not held. zb has no state to hold it (nor is every zone with one down: za is Normal);
    // its nodes go through its own queue, at the rate it was made with, inside bounded windows; cache
    // loses its one replica and web one of two.
    let zb_down = scenario(&audit, &json!({"zone": "zb"}));
    for n in zb_down["nodes"].as_array().expect("nodes") {
        assert!(n["held"].is_null() && n["predictedTaint"]["latest"].is_string(), "zb's outage is not held: {n}");
    }
    let owners: Vec<(&str, u64, u64, bool)> = zb_down["owners"]
        .as_array()
        .expect("owners")
        .iter()
        .map(|o| {
            let count = |field: &str| o[field].as_u64().expect("a count");
            (o["name"].as_str().expect("a name"), count("pods"), count("deleted"), o["noneLeft"] == true)
        })
        .collect();
    assert_eq!(owners, [("cache", 1, 1, true), ("web", 2, 1, false)]);
    // db's replicas share za, yet no outage takes both: za's is held, a node's takes one.
    let findings = audit["findings"].as_array().expect("findings");
    let gone: Vec<(&Value, &Value)> =
        findings.iter().filter(|f| f["rule"] == "loses-every-replica").map(|f| (&f["name"], &f["scenario"])).collect();
    assert_eq!(gone, [(&json!("cache"), &json!({"node": "b2"}))]);
    // Read live before the stop, the same: who is held, who is tainted, what each owner loses.
    let verdicts = |audit: &Value| -> Vec<Value> {
        let scenarios = audit["scenarios"].as_array().cloned().unwrap_or_default();
        let nodes = |s: &Value| -> Vec<Value> {
            let nodes = s["nodes"].as_array().cloned().unwrap_or_default();
            nodes.iter().map(|n| json!([n["name"], n["held"], n["predictedTaint"].is_object()])).collect()
        };
        scenarios.iter().map(|s| json!([s["down"], nodes(s)])).collect()
    };
    assert_eq!(verdicts(&live), verdicts(&audit));
    assert_eq!(counts(&live), counts(&audit));
    assert_eq!(rules(&live), rules(&audit));

    // For real: the controller's own act, every za node Ready=Unknown.
    let unknown = watch.follow(stopped + 40 * SECOND, |seen| {
        za.iter().all(|name| seen.iter().any(|(_, n)| n["metadata"]["name"] == *name && ready(n) == "Unknown"))
    });
    let unknown = unknown.expect("every za node Ready=Unknown within 40 s of the stop");
    // For the record: each node's last renewal in the dump, and when the controller marked it.
    let dumped: Value = serde_json::from_str(&healthy_dump).expect("a JSON dump");
    for name in za {
        let items = dumped["items"].as_array().into_iter().flatten();
        let lease = items.filter(|o| o["kind"] == "Lease").find(|o| o["metadata"]["name"] == name);
        let renewed = lease.and_then(|l| l["spec"]["renewTime"].as_str()).map(instant).expect("a renewed Lease");
        let (seen, _) =
            watch.seen.iter().find(|(_, n)| n["metadata"]["name"] == name && ready(n) == "Unknown").expect("seen");
        eprintln!(
            "{name}: Lease renewed {} after the stop (in the dump), Ready=Unknown seen {} after it",
            after(stopped, renewed),
            after(stopped, *seen)
        );
    }
    // Then no taint, for longer than a Normal za would have taken to taint all three and delete their
    // pods: the grace period after the stop, two monitor periods (the first pass to see the last
    // renewal comes up to one after it, and a node is queued for its taint at the pass after the one
    // that marks it Unknown), one slot of the rate limiter per node (1/--node-eviction-rate each: the
    // first token may be spent), then the pods' toleration, and 5 s of margin:
    // 10 + 2 × 2 + 3 × 4 + 2 + 5 = 33 s after the stop.
    let (grace, period, rate) =
        (flag("--node-monitor-grace-period"), flag("--node-monitor-period"), flag("--node-eviction-rate"));
    let span = ((grace + 2.0 * period + za.len() as f64 / rate) * 1e9) as i128 + TOLERATION + 5 * SECOND;
    let quiet_until = stopped + span;
    // Longer, too, than the audit gives one za node going down alone (its zone stays Normal).
    for name in za {
        let alone = scenario(&audit, &json!({"node": name}));
        let taint = &alone["nodes"][0]["predictedTaint"];
        let latest = instant(taint["latest"].as_str().expect("a bounded window"));
        assert!(latest + TOLERATION < quiet_until, "{name} alone: {alone}");
        let earliest = instant(taint["earliest"].as_str().expect("earliest"));
        eprintln!("{name} alone: tainted {}..{} after the stop", after(stopped, earliest), after(stopped, latest));
    }
    assert!(watch.follow(quiet_until, |_| false).is_none());
    eprintln!(
        "audit held: every za node Ready=Unknown (seen) {} after the stop; watched until {} after it ({} past \
         Ready=Unknown, {} node versions): no NoExecute taint",
        after(stopped, unknown),
        after(stopped, quiet_until),
        after(unknown, quiet_until),
        watch.seen.len()
    );
    let log = plane.log("kube-controller-manager");
    let master = log.lines().find(|l| l.contains("Entering master disruption mode"));
    eprintln!("{}", master.unwrap_or("no master disruption mode in the log"));
    assert!(master.is_some(), "the controller says every zone with a state is down");
    assert!(plane.controller_deletions().is_empty(), "{:?}", plane.controller_deletions());
    let pods = plane.get(&["pods"]);
    let pods = pods["items"].as_array().cloned().unwrap_or_default();
    let running: Vec<&str> = pods
        .iter()
        .filter(|p| p["metadata"]["deletionTimestamp"].is_null())
        .filter_map(|p| p["metadata"]["name"].as_str())
        .collect();
    assert_eq!(running, ["cache-a", "db-0", "db-1", "web-a", "web-b"], "no pod deleted: {pods:?}");
}
