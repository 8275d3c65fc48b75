//! A real incident, reviewed (docs/review.md, "A real incident, reviewed"): on the real kube-apiserver
//! and kube-controller-manager 1.29.6, leader election on, the kubelets of zone `a` stop, a node of
//! zone `c` is tainted by hand, and the controller manager is stopped mid-countdown and started again.
//! Recorded both ways at once (`record` throughout, and the audit log written with
//! `examples/audit-policy.yaml`), each record reviewed: every deletion's instants agree with the
//! controller's own log, and the fault put in on purpose is found and named.
//!
//! With `TAINT_EVICT_WRITE_EXAMPLE=DIR` the run is kept as a worked example in `DIR` (the record's
//! files and the audit log; `examples/incident/` is one, see its README.md).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::lifecycle::{SECOND, clock, condition_taints, in_zone, rfc3339, wait_heartbeats, wait_until};
use super::record::{Recording, expect_lines};
use super::{ControlPlane, Options, TAINT, pod};
use crate::control_plane;
use crate::util::{command, instant, repo, run_command};

/// The controller manager's flags: leader election on (its Lease `kube-system/kube-controller-manager`
/// shows the outage), with a 6 s lease so that the new leader takes over soon after the start; a node
/// silent for 8 s is `Unknown`, and the zone's two nodes are tainted within a second of each other.
const FLAGS: [&str; 7] = [
    "--leader-elect=true",
    "--leader-elect-lease-duration=6s",
    "--leader-elect-renew-deadline=4s",
    "--leader-elect-retry-period=1s",
    "--node-monitor-period=1s",
    "--node-monitor-grace-period=8s",
    "--node-eviction-rate=1",
];

/// The controller's node lifecycle flags of [`FLAGS`], as `review` takes them.
const REVIEWED_WITH: [&str; 6] =
    ["--node-monitor-period", "1s", "--node-monitor-grace-period", "8s", "--node-eviction-rate", "1"];

/// How long the pods whose countdown runs across the outage tolerate their taint.
const ACROSS: i64 = 15;

/// A pod of `namespace` `shop` on `node` tolerating `unreachable:NoExecute` for `seconds`.
fn unreachable_pod(name: &str, node: &str, seconds: i64) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "shop"},
           "spec": {"nodeName": node, "containers": [{"name": "c", "image": "app"}],
                    "tolerations": [{"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                                     "effect": "NoExecute", "tolerationSeconds": seconds}]}})
}

/// The controller manager's Lease: its holder and `renewTime`.
fn controller_lease(plane: &ControlPlane) -> Option<(String, i128)> {
    let output = plane.kubectl(&["get", "lease", "kube-controller-manager", "-n", "kube-system", "-o", "json"], None);
    let lease: Value = serde_json::from_slice(&output.stdout).ok()?;
    let holder = lease["spec"]["holderIdentity"].as_str()?.to_owned();
    Some((holder, instant(lease["spec"]["renewTime"].as_str()?)))
}

/// Waits (at most `within`) until `condition` holds; what it returned.
fn wait_for<T>(what: &str, within: Duration, condition: impl Fn() -> Option<T>) -> T {
    let deadline = Instant::now() + within;
    loop {
        if let Some(found) = condition() {
            return found;
        }
        assert!(Instant::now() < deadline, "{what}: not within {within:?}");
        std::thread::park_timeout(Duration::from_millis(100));
    }
}

/// How many times the taint-eviction controller has synced its caches (once per start).
fn synced(plane: &ControlPlane) -> usize {
    let log = plane.log("kube-controller-manager");
    log.lines().filter(|l| l.contains("Caches are synced") && l.contains("taint-eviction-controller")).count()
}

/// Waits until the controller has logged "Deleting pod" for every one of `names`.
fn deleted(plane: &ControlPlane, names: &[&str], within: Duration) -> BTreeMap<String, Vec<i128>> {
    wait_for(&format!("the controller deleting {names:?}"), within, || {
        let deletions = plane.controller_deletions();
        names.iter().all(|n| deletions.contains_key(*n)).then_some(deletions)
    })
}

/// Checked by hand (a recorded run, `examples/incident/`, walked through in docs/review.md): the
/// six pods deleted are each on time, the controller's, due and deleted within 1 s of its "Deleting
/// pod" (measured over four runs: due within 15 ms of it, but a countdown the restart started, 114
/// to 227 ms before it: the new leader starts them once its caches are synced, after `acquireTime`;
/// deleted 10 to 68 ms after it); one leader change, to the leader that took the Lease after the start again, its
/// predecessor's last renewal before the stop; `a2-across` and `c1-across` first due inside the
/// outage (`dueBeforeRestart`), on time against the countdown started again; the healthy zone's pods
/// and `c1-forever` neither deleted nor judged. Recorded as protobuf or as JSON
/// (`TAINT_EVICT_CONTENT_TYPE=json`), the same.
#[test]
fn real_apiserver_incident_reviewed_from_record_and_audit_log_names_the_restart() {
    let options = Options {
        controller_manager: true,
        controller_manager_args: FLAGS.iter().map(|f| (*f).to_owned()).collect(),
        audit_policy: Some(repo().join("examples/audit-policy.yaml")),
        ..Options::default()
    };
    let mut plane = control_plane!("incident", &options);
    plane.create(&[
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}),
        in_zone("a1", "a"),
        in_zone("a2", "a"),
        in_zone("b1", "b"),
        in_zone("c1", "c"),
        unreachable_pod("a1-quick", "a1", 2),
        unreachable_pod("a2-quick", "a2", 2),
        unreachable_pod("a2-across", "a2", ACROSS),
        unreachable_pod("b1-web", "b1", 2),
        pod("shop", "b1-api", "b1", None),
        pod("shop", "c1-now", "c1", None),
        pod("shop", "c1-t3", "c1", Some(Some(3))),
        pod("shop", "c1-across", "c1", Some(Some(ACROSS))),
        pod("shop", "c1-forever", "c1", Some(None)),
    ]);
    let zone_a = plane.keep_healthy(&["a1", "a2"]);
    let _healthy = plane.keep_healthy(&["b1", "c1"]);
    wait_heartbeats(&plane, 4, "a1");
    wait_for("the taint-eviction controller synced", Duration::from_secs(60), || (synced(&plane) == 1).then_some(()));
    let (first_leader, _) = wait_for("the controller's Lease", Duration::from_secs(30), || controller_lease(&plane));

    let dir = std::env::temp_dir().join(format!("taint-evict-incident-record-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut recording = Recording(
        command()
            .args(["record", "--out"])
            .arg(&dir)
            .arg("--kubeconfig")
            .arg(plane.kubeconfig())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("record starts"),
    );
    for kind in ["nodes", "pods", "leases"] {
        expect_lines(&dir, &format!("the {kind} listed"), |lines| lines.iter().any(|l| l["listed"] == kind));
    }

    // The incident: zone a's kubelets stop; once both its nodes are tainted `unreachable`, c1 is
    // tainted by hand.
    zone_a.stop_and_wait();
    let silent = clock();
    let tainted = wait_for("a1 and a2 tainted unreachable", Duration::from_secs(60), || {
        let taints = condition_taints(&plane);
        (taints.contains_key("a1") && taints.contains_key("a2")).then_some(taints)
    });
    // `kubectl taint` writes no `timeAdded`: the taint is dated by when it was written.
    let hand_tainted = clock();
    plane.kubectl_ok(&["taint", "nodes", "c1", &format!("{TAINT}=now:NoExecute")], None);
    deleted(&plane, &["a1-quick", "a2-quick", "c1-now", "c1-t3"], Duration::from_secs(30));

    // Mid-countdown, the controller manager stops: `a2-across` and `c1-across` still have some 10 s
    // to go. It stays down until both would have been due, and 2 s more.
    let stopped = clock();
    plane.stop_controller_manager();
    let due_without_restart = (tainted["a2"].max(hand_tainted)) + i128::from(ACROSS) * SECOND;
    assert!(due_without_restart > stopped, "the outage falls inside the countdowns");
    wait_until(due_without_restart + 2 * SECOND);
    let restarted = clock();
    plane.start_controller_manager_again();
    let (second_leader, _) = wait_for("a new leader", Duration::from_secs(30), || {
        controller_lease(&plane).filter(|(holder, _)| *holder != first_leader)
    });
    wait_for("the taint-eviction controller synced again", Duration::from_secs(60), || {
        (synced(&plane) == 2).then_some(())
    });
    let real = deleted(&plane, &["a2-across", "c1-across"], Duration::from_secs(60));
    let deleting = |lines: &[Value]| {
        let terminating = |name: &str| {
            lines
                .iter()
                .any(|l| l["pod"]["metadata"]["name"] == name && !l["pod"]["metadata"]["deletionTimestamp"].is_null())
        };
        terminating("a2-across") && terminating("c1-across")
    };
    expect_lines(&dir, "the deletions after the restart recorded", deleting);
    for name in ["b1-web", "b1-api", "c1-forever"] {
        assert!(!real.contains_key(name), "{name} deleted by the controller: {real:?}");
    }
    assert_eq!(recording.terminate(), 0);
    eprintln!(
        "incident: silent {}, tainted {:?}, c1 {}, stopped {}, restarted {}, leaders {first_leader} then \
         {second_leader}; controller's log {real:?}",
        rfc3339(silent),
        tainted.iter().map(|(n, t)| (n, rfc3339(*t))).collect::<Vec<_>>(),
        rfc3339(hand_tainted),
        rfc3339(stopped),
        rfc3339(restarted),
    );

    let log = plane.audit_log();
    let mut reviews = Vec::new();
    for (source, what) in [(dir.as_path(), "record"), (log.as_path(), "audit log")] {
        let review = reviewed(source);
        judged(&review, &real, what);
        restart_found(&review, stopped, restarted, &second_leader);
        // What the restart cost: c1-across was due 15 s after c1's taint, inside the outage; the new
        // leader started its countdown again (upstream's restart keeps no timer), so it went 15 s
        // after the new term began, on time for a restarted controller, its first due kept beside it.
        let by_hand = of(&review, "c1-across");
        let first_due = instant(by_hand["dueBeforeRestart"].as_str().expect("c1-across: dueBeforeRestart"));
        assert!((first_due - (hand_tainted + i128::from(ACROSS) * SECOND)).abs() <= SECOND, "{by_hand:#}");
        // a2-across too was due inside the outage. The new leader's node-lifecycle controller takes
        // every node's `unreachable` NoExecute taint off when it first sees the node
        // (`markNodeAsReachable` for each node added in `monitorNodeHealth`,
        // pkg/controller/nodelifecycle/node_lifecycle_controller.go) and puts it back, a new
        // `timeAdded`, once its check finds the node Unknown: its countdown is cancelled ("Cancelling
        // deletion" Events) and starts again from the taint put back, which the review follows and
        // still names as moved by the restart.
        for name in ["a2-across", "c1-across"] {
            let pod = of(&review, name);
            let first_due = instant(pod["dueBeforeRestart"].as_str().unwrap_or_else(|| panic!("{what}: {pod:#}")));
            let term = instant(review["leaderChanges"][0]["at"].as_str().expect("at"));
            assert!(stopped < first_due && first_due < term, "{what}: {name} first due inside the outage: {pod:#}");
            assert_eq!(pod["verdict"], "on-time", "{what}: {pod:#}");
        }
        if what == "record" {
            zone_tainted_in_time(&review, &tainted);
        }
        reviews.push(review);
    }
    if let Some(example) = std::env::var_os("TAINT_EVICT_WRITE_EXAMPLE") {
        let example = Path::new(&example);
        keep(&dir, &log, example);
        // The example, pruned, reviews as the whole run does.
        let pruned = [reviewed(&example.join("record")), reviewed(&example.join("audit.log"))];
        for (whole, pruned) in reviews.iter().zip(&pruned) {
            for field in ["pods", "leaderChanges", "gaps", "counts", "nodeTaints"] {
                assert_eq!(whole[field], pruned[field], "{field}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Zone a's taints, against when the node lifecycle controller should have put them, from the
/// nodes' Lease renewals the record holds: each within its window, the first (when its kubelet went
/// silent) and the one the new leader put back after taking every condition taint off; no other
/// node's (b1 heartbeats; c1's taint is not a condition's).
fn zone_tainted_in_time(review: &Value, tainted: &BTreeMap<String, i128>) {
    let taints = review["nodeTaints"].as_array().expect("nodeTaints");
    let seen: Vec<(&str, &str, &str)> = taints
        .iter()
        .map(|t| {
            let field = |name: &str| t[name].as_str().unwrap_or("-");
            (field("node"), field("taint"), field("verdict"))
        })
        .collect();
    for node in ["a1", "a2"] {
        let of_node: Vec<_> = seen.iter().filter(|(n, ..)| *n == node).collect();
        assert_eq!(of_node.len(), 2, "{node}: its taint and the one put back: {review:#}");
        for (_, taint, verdict) in of_node {
            assert_eq!((*taint, *verdict), ("node.kubernetes.io/unreachable", "within"), "{node}: {review:#}");
        }
        let first = taints.iter().find(|t| t["node"] == node).expect("the first taint");
        let added = instant(first["added"].as_str().expect("added"));
        assert!((added - tainted[node]).abs() <= SECOND, "{node}: added {first:#}, the API server's {}", tainted[node]);
        assert_eq!(first["withoutLease"], false, "{node}: read from its Lease renewals: {first:#}");
    }
    assert_eq!(seen.len(), 4, "only zone a's: {seen:?}");
}

/// The pod `name` of a review.
fn of<'a>(review: &'a Value, name: &str) -> &'a Value {
    let pods = review["pods"].as_array().expect("pods");
    pods.iter().find(|p| p["name"] == name).unwrap_or_else(|| panic!("{name} in {review:#}"))
}

/// The six pods deleted, each on time, the controller's, its instants within 1 s of the controller's
/// own log (its first "Deleting pod" of the pod: the restarted controller deletes again the pods
/// already terminating, which the review does not judge again); the healthy zone's pods and the one
/// tolerating c1's taint for ever never judged.
fn judged(review: &Value, real: &BTreeMap<String, Vec<i128>>, what: &str) {
    let names: Vec<&str> = review["pods"].as_array().expect("pods").iter().filter_map(|p| p["name"].as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, ["a1-quick", "a2-across", "a2-quick", "c1-across", "c1-now", "c1-t3"], "{what}: {review:#}");
    assert_eq!(review["counts"]["onTime"], 6, "{what}: {review:#}");
    let (mut worst_due, mut lags) = (0_i128, Vec::new());
    for name in names {
        let judged = of(review, name);
        assert_eq!(judged["verdict"], "on-time", "{what}: {judged:#}");
        assert_eq!(judged["deletedBy"], "taint-eviction-controller", "{what}: {judged:#}");
        let logged = real[name][0];
        let deleted = instant(judged["deleted"].as_str().expect("deleted"));
        let due = instant(judged["due"].as_str().expect("due"));
        eprintln!(
            "{what}: {name}: due {:+.3} s, deleted {:+.3} s from the controller's log",
            (due - logged) as f64 / 1e9,
            (deleted - logged) as f64 / 1e9
        );
        assert!((deleted - logged).abs() <= SECOND, "{what}: {name}: logged {logged}, deleted {deleted}");
        assert!((due - logged).abs() <= SECOND, "{what}: {name}: logged {logged}, due {due}");
        worst_due = worst_due.max((due - logged).abs());
        lags.push(deleted - logged);
    }
    let (least, most) = (lags.iter().min().copied().unwrap_or(0), lags.iter().max().copied().unwrap_or(0));
    eprintln!(
        "{what}: max |due - log| {} ms; deleted {} to {} ms after the log",
        worst_due / 1_000_000,
        least / 1_000_000,
        most / 1_000_000
    );
}

/// The restart found and named: one leader change, to the leader that took the Lease after the
/// start again, its predecessor's last renewal before the stop.
fn restart_found(review: &Value, stopped: i128, restarted: i128, leader: &str) {
    let changes = review["leaderChanges"].as_array().expect("leaderChanges");
    assert_eq!(changes.len(), 1, "{changes:#?}");
    let change = &changes[0];
    assert_eq!(change["holder"], leader, "{change:#}");
    let renewed = instant(change["previousRenewed"].as_str().expect("previousRenewed"));
    let at = instant(change["at"].as_str().expect("at"));
    assert!(renewed < stopped, "the old leader renewed last before the stop: {change:#}");
    assert!(at > restarted, "the new term began after the start again: {change:#}");
    assert!(change["withoutLeaderSeconds"].as_f64().is_some_and(|s| s > 0.0), "{change:#}");
}

/// `review SOURCE -o json`.
fn reviewed(source: &Path) -> Value {
    let source = source.to_str().expect("a UTF-8 path");
    let result = run_command(command().args(["review", source, "-o", "json"]).args(REVIEWED_WITH), None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    // Every write the review reads holds its object. Said and expected: an audit log holds no node
    // Lease (the policy does not ask for them); the controller's settings not given are assumed.
    let expected = ["holds no node Lease renewal", "settings are assumed"];
    let said: Vec<&str> = result.stderr.lines().filter(|l| !expected.iter().any(|e| l.contains(e))).collect();
    assert_eq!(said, Vec::<&str>::new(), "{}", result.stderr);
    serde_json::from_str(&result.stdout).expect("JSON")
}

/// Copies the record's files and the audit log into `example`, pruned to what `review` reads: of
/// the controller manager's Lease only the first and the last write of each term (its renewals in
/// between say nothing more), no Event but the taint-eviction controller's.
fn keep(record: &Path, log: &Path, example: &Path) {
    let _ = std::fs::remove_dir_all(example.join("record"));
    std::fs::create_dir_all(example.join("record")).expect("the example's directory");
    let record_line = |line: &Value| -> (Option<String>, bool) {
        let lease = &line["lease"];
        if !lease.is_null() {
            let controller = lease["metadata"]["name"] == "kube-controller-manager";
            let node = lease["metadata"]["namespace"] == "kube-node-lease";
            return (controller.then(|| lease["spec"]["holderIdentity"].to_string()), controller || node);
        }
        let event = &line["event"];
        (None, event.is_null() || event["reason"] == "TaintManagerEviction")
    };
    for entry in std::fs::read_dir(record).expect("the record").filter_map(Result::ok) {
        let text = std::fs::read_to_string(entry.path()).expect("a record file");
        std::fs::write(example.join("record").join(entry.file_name()), pruned(&text, record_line)).expect("written");
    }
    let audit_line = |line: &Value| -> (Option<String>, bool) {
        let object = &line["responseObject"];
        match line["objectRef"]["resource"].as_str() {
            Some("leases") => (Some(object["spec"]["holderIdentity"].to_string()), true),
            Some("events") => (None, object["reason"] == "TaintManagerEviction"),
            _ => (None, true),
        }
    };
    let text = std::fs::read_to_string(log).expect("the audit log");
    std::fs::write(example.join("audit.log"), pruned(&text, audit_line)).expect("written");
}

/// The lines of `text` that `kept` keeps (its second value), and of the controller's Lease (its
/// first value: the term's holder) the first and the last of each run of one holder.
fn pruned(text: &str, kept: impl Fn(&Value) -> (Option<String>, bool)) -> String {
    let lines: Vec<(&str, Option<String>, bool)> = text
        .lines()
        .map(|line| {
            let (term, keep) = kept(&serde_json::from_str(line).expect("a JSON line"));
            (line, term, keep)
        })
        .collect();
    let terms: Vec<(usize, &String)> =
        lines.iter().enumerate().filter_map(|(i, (_, term, _))| term.as_ref().map(|t| (i, t))).collect();
    let mut ends = std::collections::BTreeSet::new();
    for (k, (i, term)) in terms.iter().enumerate() {
        let first = k == 0 || terms[k - 1].1 != *term;
        let last = k + 1 == terms.len() || terms[k + 1].1 != *term;
        if first || last {
            ends.insert(*i);
        }
    }
    let mut out = String::new();
    for (i, (line, term, keep)) in lines.iter().enumerate() {
        if *keep && (term.is_none() || ends.contains(&i)) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}
