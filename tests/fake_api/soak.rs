//! A soak of `run` against the fake API server: hundreds of pods on dozens of nodes, taints added and
//! removed, pods created, replaced and deleted, while watches drop, resource versions expire (410),
//! the API server goes away and comes back, and DELETEs fail. At the end the deletions are checked
//! against the engine's own prediction replayed on the scenario's event log: the set of deleted pods
//! (by UID) equals the set that was due, no UID is deleted twice, none before its deadline, and every
//! one within a bound after it (once the API server was reachable).
//!
//! The scenario keeps the prediction exact despite real-time latency: changes happen on even seconds,
//! windows are odd (or zero), so every deadline is a second from any change and a run that sees a
//! change up to a second late (a re-watch, a re-list) still decides the same; during an outage, and
//! until the run has caught up after it, only changes that add work are made (a change that cancels
//! work cannot be seen in time by anyone while the API server is down).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use taint_evict::engine::model::{Effect, Node, NodeName, Pod, PodKey, Taint, Toleration};
use taint_evict::engine::time::Timestamp;
use taint_evict::engine::{Action, Engine, Input};

use crate::util::{command, instant, scratch};
use taint_evict_test_support::fake_apiserver::{FakeApiServer, Fault};

const NODES: usize = 24;
const PODS_PER_NODE: usize = 10;
const ROUND: Duration = Duration::from_secs(2);
const KEYS: [&str; 2] = ["soak/a", "soak/b"];
const WINDOWS: [Option<i64>; 6] = [None, Some(0), Some(1), Some(3), Some(5), Some(7)];

/// splitmix64, seeded: the scenario is the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[derive(Clone, Debug)]
struct PodSpec {
    name: String,
    uid: String,
    node: usize,
    tolerations: Vec<(usize, Option<i64>)>,
}

impl PodSpec {
    fn random(rng: &mut Rng, name: String, serial: usize, node: usize) -> Self {
        let mut tolerations = Vec::new();
        for key in 0..KEYS.len() {
            if rng.below(3) > 0 {
                tolerations.push((key, WINDOWS[rng.below(WINDOWS.len())]));
            }
        }
        Self { uid: format!("{name}-u{serial}"), name, node, tolerations }
    }

    fn json(&self) -> Value {
        let tolerations: Vec<Value> = self
            .tolerations
            .iter()
            .map(|(key, seconds)| {
                let mut t = json!({"key": KEYS[*key], "operator": "Exists", "effect": "NoExecute"});
                if let Some(s) = seconds {
                    t["tolerationSeconds"] = json!(s);
                }
                t
            })
            .collect();
        json!({"kind": "Pod", "apiVersion": "v1",
               "metadata": {"name": self.name, "namespace": "soak", "uid": self.uid, "creationTimestamp": "2026-01-01T00:00:00Z"},
               "spec": {"nodeName": node_name(self.node), "tolerations": tolerations},
               "status": {"phase": "Running"}})
    }

    fn engine(&self) -> Pod {
        let tolerations: Vec<Toleration> = self
            .tolerations
            .iter()
            .map(|(key, seconds)| Toleration {
                key: KEYS[*key].into(),
                operator: "Exists".into(),
                value: Box::default(),
                effect: Some(Effect::NoExecute),
                seconds: *seconds,
            })
            .collect();
        Pod {
            key: PodKey::new("soak", self.name.as_str()),
            uid: self.uid.as_str().into(),
            node: Some(NodeName::from(node_name(self.node))),
            tolerations: Arc::from(tolerations),
        }
    }
}

fn node_name(n: usize) -> String {
    format!("soak-{n:02}")
}

fn node_json(n: usize, taints: &[usize], added: &HashMap<(usize, usize), String>) -> Value {
    let taints: Vec<Value> =
        taints.iter().map(|k| json!({"key": KEYS[*k], "effect": "NoExecute", "timeAdded": added[&(n, *k)]})).collect();
    json!({"kind": "Node", "apiVersion": "v1", "metadata": {"name": node_name(n)}, "spec": {"taints": taints}})
}

#[derive(Clone, Debug)]
enum Change {
    Taint(usize, usize),
    Untaint(usize, usize),
    Create(PodSpec),
    Delete(String),
    Replace(PodSpec),
}

impl Change {
    fn cancels(&self) -> bool {
        matches!(self, Change::Untaint(..) | Change::Delete(_) | Change::Replace(_))
    }
}

/// What a round does besides its changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault2 {
    None,
    CloseWatches,
    Expire,
    OutageStart,
    OutageEnd,
}

struct Scenario {
    initial: Vec<PodSpec>,
    rounds: Vec<(Fault2, Vec<Change>)>,
    /// DELETEs of these pods fail twice with 500 before succeeding.
    flaky: Vec<String>,
}

fn scenario(seed: u64, rounds: usize, outages: &[usize]) -> Scenario {
    let mut rng = Rng(seed);
    let mut serial = 0;
    let mut initial = Vec::new();
    for n in 0..NODES {
        for p in 0..PODS_PER_NODE {
            serial += 1;
            initial.push(PodSpec::random(&mut rng, format!("p{n:02}-{p}"), serial, n));
        }
    }
    let mut alive: Vec<String> = initial.iter().map(|p| p.name.clone()).collect();
    let mut planned = Vec::new();
    for round in 0..rounds {
        let fault = if outages.contains(&round) {
            Fault2::OutageStart
        } else if outages.iter().any(|o| o + 2 == round) {
            Fault2::OutageEnd
        } else if round % 7 == 3 {
            Fault2::CloseWatches
        } else if round % 7 == 5 {
            Fault2::Expire
        } else {
            Fault2::None
        };
        // From an outage's start until the run has surely caught up (recovery, backoff, the longest
        // window), only changes that add work.
        let quiet = outages.iter().any(|o| (*o..o + 8).contains(&round));
        let mut changes = Vec::new();
        for _ in 0..8 {
            let change = match rng.below(10) {
                0..=3 => Change::Taint(rng.below(NODES), rng.below(KEYS.len())),
                4..=5 => Change::Untaint(rng.below(NODES), rng.below(KEYS.len())),
                6..=7 => {
                    serial += 1;
                    let node = rng.below(NODES);
                    let spec = PodSpec::random(&mut rng, format!("new-{serial}"), serial, node);
                    alive.push(spec.name.clone());
                    Change::Create(spec)
                }
                8 => Change::Delete(alive[rng.below(alive.len())].clone()),
                _ => {
                    serial += 1;
                    let name = alive[rng.below(alive.len())].clone();
                    let node = rng.below(NODES);
                    Change::Replace(PodSpec::random(&mut rng, name, serial, node))
                }
            };
            if !(quiet && change.cancels()) {
                changes.push(change);
            }
        }
        planned.push((fault, changes));
    }
    let flaky = (0..6).map(|i| format!("p{:02}-{}", i * 4, i % PODS_PER_NODE)).collect();
    Scenario { initial, rounds: planned, flaky }
}

/// The engine's prediction: each pod's deletion (by UID) at virtual instants.
struct Oracle {
    engine: Engine,
    predicted: BTreeMap<String, Timestamp>,
}

impl Oracle {
    fn advance(&mut self, to: Timestamp) {
        self.engine.handle_timeout(to);
        self.collect(to);
    }

    fn apply(&mut self, input: Input, at: Timestamp) {
        self.engine.handle(input, at);
        self.collect(at);
    }

    /// Records deletions; the run's deletion removes the pod, so the oracle removes it too.
    fn collect(&mut self, at: Timestamp) {
        let mut gone = Vec::new();
        while let Some(action) = self.engine.poll_action() {
            if let Action::Evict { pod, work, .. } = action {
                self.predicted.entry(pod.uid.to_string()).or_insert(work.fire);
                gone.push(pod.key);
            }
        }
        for key in gone {
            self.engine.handle(Input::PodDeleted(key), at);
            while self.engine.poll_action().is_some() {}
        }
    }
}

/// Advances the wall clock to `at`: the scenario is paced in real time, a change per round.
fn pace_until(at: Instant) {
    while let Some(left) = at.checked_duration_since(Instant::now()) {
        std::thread::park_timeout(left);
    }
}

struct Figures {
    pods: usize,
    deletions: usize,
    faults: usize,
    worst_late_ms: i128,
    /// Around the outage: the worst of (deletion − the later of its deadline and the recovery).
    worst_after_recovery_ms: i128,
}

fn soak(seed: u64, rounds: usize, outages: &[usize]) -> Figures {
    let plan = scenario(seed, rounds, outages);
    let server = FakeApiServer::start(&scratch(&format!("soak-{seed}-{rounds}")));
    let mut added: HashMap<(usize, usize), String> = HashMap::new();
    let mut taints: Vec<Vec<usize>> = vec![Vec::new(); NODES];
    for n in 0..NODES {
        server.add(node_json(n, &[], &added));
    }
    let mut pods: HashMap<String, PodSpec> = HashMap::new();
    for spec in &plan.initial {
        server.add(spec.json());
        pods.insert(spec.name.clone(), spec.clone());
    }
    let mut faults = 0;
    for name in &plan.flaky {
        server.fail_times(
            "DELETE",
            &format!("/api/v1/namespaces/soak/pods/{name}"),
            Fault::Status(500, "etcdserver: leader changed".into()),
            2,
        );
        faults += 2;
    }

    let kubeconfig = server.kubeconfig().to_str().expect("UTF-8").to_owned();
    let mut child = command()
        // Unpaced: the lateness bounds are the engine's and the retries', not the rate limit's (the
        // default 10 writes/s delete about 3 pods a second, fewer than this scenario makes due).
        .args(["run", "-o", "json", "--qps", "0", "--kubeconfig", &kubeconfig])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run starts");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, lines) = std::sync::mpsc::channel::<Value>();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(value) = serde_json::from_str(&line)
                && tx.send(value).is_err()
            {
                return;
            }
        }
    });
    let mut seen: Vec<Value> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !seen.iter().any(|l| l["type"] == "synced") {
        let left = deadline.saturating_duration_since(Instant::now());
        seen.push(lines.recv_timeout(left).expect("run syncs within 20 s"));
    }

    let start = Instant::now() + ROUND;
    let wall0 = instant(&jiff::Timestamp::now().to_string()) + ROUND.as_nanos() as i128;
    let virtual_at = |round: usize| Timestamp::from_nanos(wall0 + (round as i128) * ROUND.as_nanos() as i128);
    let mut oracle = Oracle { engine: Engine::new(), predicted: BTreeMap::new() };
    let initial_nodes: Vec<Node> =
        (0..NODES).map(|n| Node { name: node_name(n).into(), taints: Vec::new().into() }).collect();
    oracle.apply(Input::NodesReplaced(initial_nodes), virtual_at(0));
    oracle.apply(Input::PodsReplaced(plan.initial.iter().map(PodSpec::engine).collect()), virtual_at(0));
    let mut outage_windows: Vec<(Timestamp, Timestamp)> = Vec::new();

    for (round, (fault, changes)) in plan.rounds.iter().enumerate() {
        pace_until(start + ROUND * round as u32);
        let now = virtual_at(round);
        oracle.advance(now);
        match fault {
            Fault2::None => {}
            Fault2::CloseWatches => {
                server.close_watches();
                faults += 1;
            }
            Fault2::Expire => {
                server.compact();
                server.close_watches();
                faults += 1;
            }
            Fault2::OutageStart => {
                for method in ["GET", "DELETE", "PATCH", "POST"] {
                    server.fail(method, "/", Fault::Drop);
                }
                server.close_watches();
                outage_windows.push((now, virtual_at(round + 2)));
                faults += 1;
            }
            Fault2::OutageEnd => server.heal(),
        }
        let stamp = jiff::Timestamp::from_nanosecond(now.as_nanos())
            .expect("time")
            .round(jiff::Unit::Second)
            .expect("round")
            .to_string();
        for change in changes {
            match change {
                Change::Taint(n, k) | Change::Untaint(n, k) => {
                    let has = taints[*n].contains(k);
                    match (change, has) {
                        (Change::Taint(..), false) => {
                            added.insert((*n, *k), stamp.clone());
                            taints[*n].push(*k);
                        }
                        (Change::Untaint(..), true) => taints[*n].retain(|t| t != k),
                        _ => continue,
                    }
                    server.add(node_json(*n, &taints[*n], &added));
                    let engine_taints =
                        taints[*n].iter().map(|k| Taint::new(KEYS[*k], "", Effect::NoExecute)).collect();
                    oracle.apply(Input::NodeUpserted(Node { name: node_name(*n).into(), taints: engine_taints }), now);
                }
                Change::Create(spec) => {
                    server.add(spec.json());
                    pods.insert(spec.name.clone(), spec.clone());
                    oracle.apply(Input::PodUpserted(spec.engine()), now);
                }
                Change::Delete(name) => {
                    server.remove("Pod", "soak", name);
                    oracle.apply(Input::PodDeleted(PodKey::new("soak", name.as_str())), now);
                }
                Change::Replace(spec) => {
                    server.remove("Pod", "soak", &spec.name);
                    oracle.apply(Input::PodDeleted(PodKey::new("soak", spec.name.as_str())), now);
                    server.add(spec.json());
                    pods.insert(spec.name.clone(), spec.clone());
                    oracle.apply(Input::PodUpserted(spec.engine()), now);
                }
            }
        }
    }
    // Let every predicted deletion happen: the longest window plus the recovery bound.
    let end = plan.rounds.len() + 6;
    pace_until(start + ROUND * end as u32);
    oracle.advance(virtual_at(end));

    assert!(
        std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill").success()
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while !seen.iter().any(|l| l["type"] == "summary") {
        let left = deadline.saturating_duration_since(Instant::now());
        seen.push(lines.recv_timeout(left).expect("run prints its summary"));
    }
    assert_eq!(child.wait().expect("run exits").code(), Some(0));

    let mut deleted: HashMap<String, Vec<i128>> = HashMap::new();
    for line in seen.iter().filter(|l| l["type"] == "deleted") {
        let uid = line["pod"]["uid"].as_str().expect("uid").to_owned();
        deleted.entry(uid).or_default().push(instant(line["time"].as_str().expect("time")));
    }
    let twice: Vec<&String> = deleted.iter().filter(|(_, at)| at.len() > 1).map(|(uid, _)| uid).collect();
    assert!(twice.is_empty(), "deleted more than once: {twice:?}");
    let due: HashSet<&String> = oracle.predicted.keys().collect();
    let done: HashSet<&String> = deleted.keys().collect();
    let wrong: Vec<_> = done.difference(&due).collect();
    let missed: Vec<_> = due.difference(&done).collect();
    let relative = |uid: &String| (oracle.predicted[uid].as_nanos() - wall0) / 1_000_000;
    let missed: Vec<(&&String, i128)> = missed.into_iter().map(|uid| (uid, relative(uid))).collect();
    assert!(
        wrong.is_empty() && missed.is_empty(),
        "wrong deletions {wrong:?}; missed (uid, predicted ms after start) {missed:?}; the scenario ended at {} ms",
        end as u128 * ROUND.as_millis()
    );

    let mut worst_late_ms = 0;
    let mut worst_after_recovery_ms = 0;
    for (uid, fire) in &oracle.predicted {
        let at = deleted[uid][0];
        let late = at - fire.as_nanos();
        assert!(late > -300_000_000, "{uid} deleted {} ms before its deadline", -late / 1_000_000);
        let near_outage =
            outage_windows.iter().any(|(from, to)| *fire >= *from && fire.as_nanos() <= to.as_nanos() + 16_000_000_000);
        let flaky = plan.flaky.iter().any(|name| uid.starts_with(&format!("{name}-u")));
        // Away from outages and failing DELETEs a deletion is late by the time a change takes to reach
        // `run` and the DELETE to reach the server: well under a second on an idle machine, up to 1.8 s
        // seen with the suite's other tests and builds loading both cores.
        let bound: i128 = if near_outage {
            16_000
        } else if flaky {
            4_500
        } else {
            2_500
        };
        assert!(
            late / 1_000_000 <= bound,
            "{uid}: deleted {} ms after its deadline (bound {bound} ms)",
            late / 1_000_000
        );
        if !near_outage && !flaky {
            worst_late_ms = worst_late_ms.max(late / 1_000_000);
        }
        if near_outage {
            let recovered =
                outage_windows.iter().map(|(_, to)| to.as_nanos()).filter(|to| *to <= at + 30_000_000_000).max();
            let from = recovered.map_or(fire.as_nanos(), |to| to.max(fire.as_nanos()));
            worst_after_recovery_ms = worst_after_recovery_ms.max((at - from) / 1_000_000);
        }
    }
    Figures { pods: pods.len(), deletions: deleted.len(), faults, worst_late_ms, worst_after_recovery_ms }
}

#[test]
fn soak_run_deletes_exactly_what_is_due_under_faults() {
    let figures = soak(7, 20, &[6]);
    eprintln!(
        "soak: {} pods, {} deletions checked, {} faults injected, worst lateness outside outages {} ms, worst after recovery {} ms",
        figures.pods, figures.deletions, figures.faults, figures.worst_late_ms, figures.worst_after_recovery_ms
    );
    assert!(figures.deletions > 100, "the scenario deletes many pods ({})", figures.deletions);
}

#[test]
#[ignore = "long soak (about 3 minutes): cargo nextest run --run-ignored only soak_long"]
fn soak_long() {
    let figures = soak(11, 80, &[10, 40]);
    eprintln!(
        "soak_long: {} pods, {} deletions checked, {} faults injected, worst lateness outside outages {} ms, worst after recovery {} ms",
        figures.pods, figures.deletions, figures.faults, figures.worst_late_ms, figures.worst_after_recovery_ms
    );
}
