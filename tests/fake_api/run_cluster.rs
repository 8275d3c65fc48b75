//! `run` against the fake API server: the real binary watches, decides and deletes over HTTP. Timed
//! cases use windows of a few seconds; every wait is on a condition with a deadline, never a sleep.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::running::Running;
use crate::util::{command, instant, scratch};
use taint_evict_test_support::fake_apiserver::{FakeApiServer, Fault, Recorded};

const WAIT: Duration = Duration::from_secs(20);
pub const TAINT: &str = "example.com/drain";

pub fn node(name: &str, taints: &[Value]) -> Value {
    json!({"kind": "Node", "apiVersion": "v1", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
           "spec": {"taints": taints}})
}

pub fn taint(added: jiff::Timestamp) -> Value {
    json!({"key": TAINT, "effect": "NoExecute", "timeAdded": added.round(jiff::Unit::Second).expect("round").to_string()})
}

pub fn pod(name: &str, node: &str, seconds: Option<Option<i64>>) -> Value {
    let tolerations = match seconds {
        None => json!([]),
        Some(None) => json!([{"key": TAINT, "operator": "Exists", "effect": "NoExecute"}]),
        Some(Some(s)) => json!([{"key": TAINT, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": s}]),
    };
    json!({"kind": "Pod", "apiVersion": "v1",
           "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"), "creationTimestamp": "2026-01-01T00:00:00Z"},
           "spec": {"nodeName": node, "tolerations": tolerations, "containers": [{"name": "c", "image": "app"}]},
           "status": {"phase": "Running"}})
}

pub fn deletes(requests: &[Recorded], name: &str) -> usize {
    deletes_in(requests, "default", name)
}

/// The DELETEs of pod `namespace/name`.
pub fn deletes_in(requests: &[Recorded], namespace: &str, name: &str) -> usize {
    let path = format!("/api/v1/namespaces/{namespace}/pods/{name}");
    requests.iter().filter(|r| r.method == "DELETE" && r.path == path).count()
}

fn deleted_line(name: &str) -> impl Fn(&Value) -> bool + '_ {
    move |l: &Value| l["type"] == "deleted" && l["pod"]["name"] == name
}

#[test]
fn taint_deletes_untolerated_pods_at_once_and_schedules_tolerated_ones() {
    let server = FakeApiServer::start(&scratch("run-taint"));
    for object in [
        node("n1", &[]),
        node("n2", &[]),
        pod("bare", "n1", None),
        pod("tol2", "n1", Some(Some(2))),
        pod("forever", "n1", Some(None)),
        pod("elsewhere", "n2", None),
    ] {
        server.add(object);
    }
    let mut run = Running::start(&server, &[]);
    let added = jiff::Timestamp::now();
    server.add(node("n1", &[taint(added)]));

    let requests = server.wait_for("bare's DELETE", WAIT, |r| deletes(r, "bare") == 1);
    let status_patch = requests.iter().position(|r| r.method == "PATCH" && r.path.ends_with("/pods/bare/status"));
    let delete = requests.iter().position(|r| r.method == "DELETE" && r.path.ends_with("/pods/bare"));
    assert!(status_patch.is_some() && status_patch < delete, "the condition is set before the DELETE");
    let patch = &requests[status_patch.expect("patched")];
    let condition = &patch.body.as_ref().expect("a body")["status"]["conditions"][0];
    assert_eq!(
        (condition["type"].as_str(), condition["reason"].as_str()),
        (Some("DisruptionTarget"), Some("DeletionByTaintManager"))
    );
    let delete_body = requests[delete.expect("deleted")].body.clone().expect("DeleteOptions");
    assert_eq!(delete_body["preconditions"]["uid"], "uid-bare", "the UID is the DELETE's precondition");

    // tol2's deadline is the runtime's to keep (its paused-time tests time it); here, that it is
    // scheduled with its toleration and left alone until then.
    let line = run.expect("tol2 scheduled", |l| l["type"] == "scheduled" && l["pod"]["name"] == "tol2");
    assert_eq!(line["tolerationSeconds"], 2);
    // Due 2 s after run saw the taint: after it was added, and no later than 2 s from now.
    let evict_at = instant(line["evictAt"].as_str().expect("evictAt"));
    let (seen_after, seen_by) = (added.as_nanosecond() - 1_000_000_000, jiff::Timestamp::now().as_nanosecond());
    assert!((seen_after + 2_000_000_000..=seen_by + 2_000_000_000).contains(&evict_at), "{line}");
    assert_eq!(deletes(&server.requests(), "tol2"), 0, "not before its deadline");

    // The event is written beside the deletion: wait for it, then read them all.
    let marked = |e: &Value| e["note"] == "Marking for deletion Pod default/bare";
    server.wait_until_state("bare's marking event", WAIT, |view| view.events().iter().any(marked));
    let marking: Vec<String> = server
        .events()
        .iter()
        .filter(|e| e["reason"] == "TaintManagerEviction")
        .filter_map(|e| e["note"].as_str().map(str::to_owned))
        .collect();
    assert!(marking.contains(&"Marking for deletion Pod default/bare".to_owned()), "{marking:?}");
    assert!(server.events().iter().all(|e| e["reportingController"] == "kubectl-taint-evict"));

    let (summary, code) = run.interrupt();
    assert_eq!(code, 0);
    assert_eq!(summary["deleted"], 1);
    assert_eq!(summary["scheduled"][0]["pod"]["name"], "tol2", "{summary}");
    let requests = server.requests();
    assert_eq!((deletes(&requests, "forever"), deletes(&requests, "elsewhere")), (0, 0));
}

#[test]
fn retry_after_on_a_delete_holds_every_write_and_the_refused_deletion_still_happens() {
    let server = FakeApiServer::start(&scratch("run-retry-after"));
    server.add(node("n1", &[]));
    server.add(pod("refused", "n1", None));
    server.add(pod("later", "n1", Some(Some(1))));
    // An API Priority and Fairness rejection of the first DELETE: 429, Retry-After: 2 (the hold's
    // timing is the throttle's paused-time tests'; here, that the header reaches it).
    server.fail_times("DELETE", "/api/v1/namespaces/default/pods/refused", Fault::RetryAfter(429, 2), 1);
    let mut run = Running::start(&server, &[]);
    server.add(node("n1", &[taint(jiff::Timestamp::now())]));

    let requests = server.wait_for("the refused pod's second DELETE", WAIT, |r| deletes(r, "refused") == 2);
    run.expect("the refused pod deleted", deleted_line("refused"));
    let first = requests.iter().find(|r| r.method == "DELETE" && r.path.ends_with("/refused")).expect("refused");
    let hold_ends = first.at + jiff::SignedDuration::from_secs(2);
    // The writes asked for after the refusal waited for the hold: the retry, and all of "later"'s
    // (due at +1 s: its event, status PATCH and DELETE).
    let held: Vec<(&str, &str, jiff::Timestamp)> = requests
        .iter()
        .filter(|r| r.method != "GET" && r.at > first.at)
        .filter(|r| {
            r.path.contains("/pods/later") || r.path.ends_with("/pods/refused") || {
                r.body.as_ref().is_some_and(|body| body["regarding"]["name"] == "later")
            }
        })
        .map(|r| (r.method.as_str(), r.path.as_str(), r.at))
        .collect();
    assert!(held.iter().any(|(_, path, _)| path.ends_with("/later/status")), "{held:?}");
    let early: Vec<_> = held.iter().filter(|(.., at)| *at < hold_ends).collect();
    assert!(early.is_empty(), "written before the Retry-After instant {hold_ends}: {early:?}");
    let (summary, code) = run.interrupt();
    assert_eq!((code, summary["deleted"].as_u64()), (0, Some(2)));
}

#[test]
fn an_event_the_server_pushed_back_on_is_sent_again_after_retry_after() {
    let server = FakeApiServer::start(&scratch("run-event-retry-after"));
    server.add(node("n1", &[]));
    server.add(pod("bare", "n1", None));
    server.fail_times("POST", "/apis/events.k8s.io/", Fault::RetryAfter(503, 1), 1);
    let mut run = Running::start(&server, &[]);
    server.add(node("n1", &[taint(jiff::Timestamp::now())]));
    run.expect("bare deleted", deleted_line("bare"));
    server.wait_until_state("the Marking event", WAIT, |view| {
        view.events().iter().any(|e| e["note"] == "Marking for deletion Pod default/bare")
    });
    let posts: Vec<jiff::Timestamp> =
        server.requests().iter().filter(|r| r.method == "POST" && r.path.contains("/events")).map(|r| r.at).collect();
    assert_eq!(posts.len(), 2, "refused once, then sent again: {posts:?}");
    assert!(posts[1] >= posts[0] + jiff::SignedDuration::from_secs(1), "sent again before Retry-After: {posts:?}");
    let (_, code) = run.interrupt();
    assert_eq!(code, 0);
}

#[test]
fn taint_removed_before_the_deadline_cancels_with_an_event() {
    let server = FakeApiServer::start(&scratch("run-cancel"));
    server.add(node("n1", &[]));
    server.add(pod("tol30", "n1", Some(Some(30))));
    let mut run = Running::start(&server, &[]);
    server.add(node("n1", &[taint(jiff::Timestamp::now())]));
    run.expect("the scheduled deletion", |l| l["type"] == "scheduled" && l["pod"]["name"] == "tol30");
    server.add(node("n1", &[]));
    run.expect("the cancellation", |l| l["type"] == "cancelled" && l["pod"]["name"] == "tol30");
    server.wait_until_state("the Cancelling event", WAIT, |view| {
        view.events().iter().any(|e| e["note"] == "Cancelling deletion of Pod default/tol30")
    });
    let (summary, code) = run.interrupt();
    assert_eq!((code, summary["cancelled"].as_u64(), summary["deleted"].as_u64()), (0, Some(1), Some(0)));
    assert_eq!(deletes(&server.requests(), "tol30"), 0);
}

#[test]
fn overdue_deletions_start_in_deadline_order() {
    // Fixed: deletions due together said "evicting" in whatever order their tasks ran.
    let server = FakeApiServer::start(&scratch("run-overdue-order"));
    server.add(node("n1", &[taint(jiff::Timestamp::now() - jiff::SignedDuration::from_hours(1))]));
    let seconds = [300, 60, 600, 120, 0, 240, 30, 180];
    for (i, s) in seconds.iter().enumerate() {
        server.add(pod(&format!("p{i}"), "n1", Some(Some(*s))));
    }
    let mut run = Running::start(&server, &["--dry-run"]);
    run.expect_count("every deletion started", seconds.len(), |l| l["type"] == "wouldEvict");
    let due: Vec<&str> =
        run.seen.iter().filter(|l| l["type"] == "wouldEvict").filter_map(|l| l["evictAt"].as_str()).collect();
    let mut sorted = due.clone();
    sorted.sort_unstable();
    assert_eq!(due, sorted, "in deadline order");
    let (_, code) = run.interrupt();
    assert_eq!(code, 0);
}

#[test]
fn dry_run_decides_everything_and_writes_nothing() {
    let server = FakeApiServer::start(&scratch("run-dry"));
    server.add(node("n1", &[]));
    server.add(pod("bare", "n1", None));
    let mut run = Running::start(&server, &["--dry-run"]);
    server.add(node("n1", &[taint(jiff::Timestamp::now())]));
    // A dry run says what it would do, never that it deleted (docs/run.md).
    let line = run.expect("the would-be deletion", |l| l["type"] == "wouldDelete" && l["pod"]["name"] == "bare");
    assert_eq!(line["dryRun"], true);
    let (summary, code) = run.interrupt();
    assert_eq!((code, summary["wouldDelete"].as_u64(), summary["dryRun"].as_bool()), (0, Some(1), Some(true)));
    assert!(summary.get("deleted").is_none(), "{summary}");
    let writes: Vec<String> = server.requests().iter().filter(|r| r.method != "GET").map(ToString::to_string).collect();
    assert!(writes.is_empty(), "a dry run wrote: {writes:?}");
    assert!(server.object("Pod", "default", "bare").is_some());
}

#[test]
fn run_deletes_what_plan_predicts_when_it_predicts_it() {
    let server = FakeApiServer::start(&scratch("run-equals-plan"));
    let added = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(3);
    server.add(node("n1", &[taint(added)]));
    for (name, seconds) in
        [("bare", None), ("t1", Some(Some(1))), ("t6", Some(Some(6))), ("t8", Some(Some(8))), ("forever", Some(None))]
    {
        server.add(pod(name, "n1", seconds));
    }
    let kubeconfig = server.kubeconfig().to_str().expect("UTF-8").to_owned();
    let plan = command().args(["plan", "n1", "-o", "json", "--kubeconfig", &kubeconfig]).output().expect("plan runs");
    let plan: Value = serde_json::from_slice(&plan.stdout).expect("a plan");
    let now = instant(plan["now"].as_str().expect("now"));
    let predicted: Vec<(String, i128)> = plan["nodes"][0]["pods"]
        .as_array()
        .expect("pods")
        .iter()
        .filter_map(|p| Some((p["name"].as_str()?.to_owned(), instant(p["evictAt"].as_str()?))))
        .collect();
    assert_eq!(predicted.len(), 4, "{plan:#}");

    let mut run = Running::start(&server, &[]);
    for (name, evict_at) in &predicted {
        let line = run.expect(&format!("{name} deleted"), deleted_line(name));
        let deleted_at = instant(line["time"].as_str().expect("time"));
        assert_eq!(instant(line["evictAt"].as_str().expect("evictAt")), *evict_at, "{name}: run's deadline is plan's");
        if *evict_at <= now {
            assert!(deleted_at - now < 5_000_000_000, "{name} was overdue: deleted at once, not at {line}");
        } else {
            let late = deleted_at - evict_at;
            assert!((0..1_000_000_000).contains(&late), "{name}: deleted {late} ns after its predicted deadline");
        }
    }
    let (summary, _) = run.interrupt();
    assert_eq!(summary["deleted"], 4);
    assert_eq!(deletes(&server.requests(), "forever"), 0);
}

#[test]
fn denied_list_stops_run_at_start_naming_verb_and_resource() {
    let server = FakeApiServer::start(&scratch("run-forbidden"));
    server.add(node("n1", &[]));
    server.fail(
        "GET",
        "/api/v1/pods",
        Fault::Status(403, "pods is forbidden: User \"dev\" cannot list resource \"pods\"".into()),
    );
    let kubeconfig = server.kubeconfig().to_str().expect("UTF-8").to_owned();
    let output = command().args(["run", "--kubeconfig", &kubeconfig]).output().expect("run runs");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("error: forbidden: cannot list pods at the cluster scope: pods is forbidden"),
        "{stderr}"
    );
    assert!(stderr.contains("deploy/rbac-run.yaml"), "{stderr}");
}

#[test]
fn cluster_controller_activity_is_warned_about() {
    let server = FakeApiServer::start(&scratch("run-upstream-active"));
    server.add(node("n1", &[]));
    let recent = jiff::Timestamp::now().round(jiff::Unit::Second).expect("round").to_string();
    server.add(json!({"kind": "Event", "apiVersion": "v1", "metadata": {"name": "p.1", "namespace": "default"},
        "reason": "TaintManagerEviction", "message": "Marking for deletion Pod default/p",
        "source": {"component": "taint-eviction-controller"}, "lastTimestamp": recent}));
    let mut run = Running::start(&server, &["--dry-run"]);
    run.expect("the warning", |l| {
        l["type"] == "warning"
            && l["message"].as_str().is_some_and(|m| m.contains("--controllers=*,-taint-eviction-controller"))
    });
    // A dry run is not told to use --dry-run.
    assert!(!run.seen.iter().any(|l| l["message"].as_str().is_some_and(|m| m.contains("or use --dry-run"))));
    let (_, code) = run.interrupt();
    assert_eq!(code, 0);
}

/// One attempt of the plugin's evictor (as `run` makes it, in `mode`) at `pod`, against `server`.
pub fn one_attempt(
    server: &FakeApiServer,
    pod: &taint_evict::engine::model::PodRef,
    mode: taint_evict::cluster::evict::Mode,
) -> taint_evict::runtime::Outcome {
    use taint_evict::cluster::{ConnectOptions, connect, evict::KubeEvictor};
    use taint_evict::runtime::{Controller, Evictor, Throttle};
    use taint_evict::time::Clock;

    let options =
        ConnectOptions { kubeconfig: server.kubeconfig().to_str().map(str::to_owned), ..ConnectOptions::default() };
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        let connection = connect(&options).await.expect("connects");
        let throttle = Throttle::unlimited(Clock::system());
        KubeEvictor::new(connection.client, false, None, throttle)
            .with_mode(mode)
            .evict(pod, Controller::NodeTaints)
            .await
    })
}

#[test]
fn same_named_replacement_is_never_deleted() {
    use taint_evict::cluster::evict::Mode;
    use taint_evict::engine::model::{PodKey, PodRef};
    use taint_evict::runtime::Outcome;

    let server = FakeApiServer::start(&scratch("run-replacement"));
    let mut replacement = pod("web-0", "n1", None);
    replacement["metadata"]["uid"] = json!("uid-new");
    server.add(replacement);
    let old = PodRef { key: PodKey::new("default", "web-0"), uid: "uid-old".into(), node: "n1".into() };
    let outcome = one_attempt(&server, &old, Mode::Delete);
    assert!(matches!(outcome, Outcome::Gone(_)), "{outcome:?}");
    let pod = server.object("Pod", "default", "web-0").expect("the replacement is still there");
    assert_eq!(pod["metadata"]["uid"], "uid-new");
    assert!(
        pod["status"]["conditions"].as_array().is_none_or(|c| c.iter().all(|c| c["type"] != "DisruptionTarget")),
        "not marked either"
    );
}

#[test]
fn second_interrupt_quits_at_once_with_130() {
    let server = FakeApiServer::start(&scratch("run-twice"));
    server.add(node("n1", &[]));
    server.add(pod("bare", "n1", None));
    server.fail("DELETE", "/api/v1/namespaces/default/pods/bare", Fault::Slow(Duration::from_secs(60)));
    let mut run = Running::start(&server, &[]);
    run.expect("the started line", |l| l["type"] == "started" && l["dryRun"] == false);
    server.add(node("n1", &[taint(jiff::Timestamp::now())]));
    server.wait_for("the slow DELETE", WAIT, |r| deletes(r, "bare") == 1);
    let pid = run.child.id().to_string();
    assert!(Command::new("kill").args(["-INT", &pid]).status().expect("kill").success());
    let stopping = run.expect("the stopping line", |l| l["type"] == "stopping");
    assert_eq!(stopping["inFlight"], 1, "the slow deletion is still in flight");
    let started = Instant::now();
    assert!(Command::new("kill").args(["-INT", &pid]).status().expect("kill").success());
    let code = run.child.wait().expect("run exits").code();
    assert_eq!(code, Some(130));
    assert!(started.elapsed() < Duration::from_secs(10), "the second interrupt does not wait for the drain");
}

#[test]
fn denied_delete_is_reported_with_the_missing_permission_and_the_others_go_on() {
    let server = FakeApiServer::start(&scratch("run-delete-forbidden"));
    server.add(node("n1", &[]));
    server.add(pod("protected", "n1", None));
    server.add(pod("plain", "n1", None));
    let message = "pods \"protected\" is forbidden: User \"dev\" cannot delete resource \"pods\"";
    server.fail("DELETE", "/api/v1/namespaces/default/pods/protected", Fault::Status(403, message.into()));
    let mut run = Running::start(&server, &[]);
    server.add(node("n1", &[taint(jiff::Timestamp::now())]));
    run.expect("plain deleted", deleted_line("plain"));
    let failed = run.expect("the failure", |l| l["type"] == "failed" && l["pod"]["name"] == "protected");
    let reason = failed["message"].as_str().unwrap_or_default();
    assert!(reason.contains("forbidden") && reason.contains("delete on pods"), "{reason}");
    let (summary, code) = run.interrupt();
    assert_eq!(code, 0);
    assert_eq!(summary["failed"][0]["pod"]["name"], "protected", "{summary}");
    assert_eq!(summary["deleted"], 1);
}

#[test]
fn outage_is_reported_once_and_interrupting_during_it_is_prompt_and_truthful() {
    let server = FakeApiServer::start(&scratch("run-outage"));
    server.add(node("n1", &[taint(jiff::Timestamp::now())]));
    server.add(pod("later", "n1", Some(Some(3600))));
    let mut run = Running::start(&server, &[]);
    run.expect("the scheduled deletion", |l| l["type"] == "scheduled" && l["pod"]["name"] == "later");
    for method in ["GET", "DELETE", "PATCH", "POST"] {
        server.fail(method, "/", Fault::Drop);
    }
    server.close_watches();
    // Both watches fail and keep retrying; each outage is reported once, not per retry.
    let lost = |watch: &'static str| {
        move |l: &Value| l["type"] == "connection" && l["watch"] == watch && l["connected"] == false
    };
    let nodes = run.expect("the nodes outage", lost("nodes"));
    run.expect("the pods outage", lost("pods"));
    // In an operator's words, not kube's `ServiceError: client error (Connect)` (docs/run.md, "Continuous watches").
    let reason = nodes["reason"].as_str().unwrap_or_default();
    assert!(!reason.is_empty() && !reason.contains("ServiceError") && !reason.contains("client error"), "{nodes}");
    let retries =
        server.wait_for("a few retries", WAIT, |r| r.iter().filter(|r| r.is_watch() || r.method == "GET").count() > 12);
    assert!(retries.len() > 12);
    let started = Instant::now();
    let (summary, code, lines) = run.interrupt_and_read();
    assert!(started.elapsed() < Duration::from_secs(10), "Ctrl-C during an outage exits promptly");
    let reported = |watch: &'static str| lines.iter().filter(|l| lost(watch)(l)).count();
    assert_eq!((reported("nodes"), reported("pods")), (1, 1), "once each, not per retry");
    // The server never answered again: no watch may say it is back.
    let back: Vec<&Value> = lines.iter().filter(|l| l["type"] == "connection" && l["connected"] == true).collect();
    assert!(back.is_empty(), "reconnected while nothing did: {back:?}");
    assert_eq!(code, 0);
    assert_eq!(summary["scheduled"][0]["pod"]["name"], "later", "the queue survived the outage: {summary}");
}

#[test]
fn pod_left_terminating_is_not_deleted_again_by_the_next_run() {
    let server = FakeApiServer::start(&scratch("run-terminating"));
    server.without_kubelets();
    server.add(node("n1", &[taint(jiff::Timestamp::now())]));
    server.add(pod("stuck", "n1", None));
    let mut first = Running::start(&server, &[]);
    first.expect("stuck deleted", |l| l["type"] == "deleted" && l["pod"]["name"] == "stuck");
    first.interrupt();
    let pod = server.object("Pod", "default", "stuck").expect("kept, terminating");
    assert!(pod["metadata"]["deletionTimestamp"].is_string(), "{pod}");

    // A second run (a restart, a new leader) finds the pod overdue and already terminating.
    let mut second = Running::start(&server, &[]);
    let gone = second.expect("stuck gone", |l| l["pod"]["name"] == "stuck" && l["type"] != "scheduled");
    assert_eq!(gone["type"], "gone", "{gone}");
    assert!(gone["message"].as_str().is_some_and(|m| m.starts_with("already terminating")), "{gone}");
    let (summary, code) = second.interrupt();
    assert_eq!(code, 0);
    assert_eq!(summary["deleted"], 0, "{summary}");
    assert_eq!(deletes(&server.requests(), "stuck"), 1, "one DELETE in all");
}

/// Event writes to the events.k8s.io API by `method`.
fn event_writes(requests: &[Recorded], method: &str) -> usize {
    requests.iter().filter(|r| r.method == method && r.path.starts_with("/apis/events.k8s.io/")).count()
}

#[test]
fn flapping_node_makes_one_cancelling_event_per_pod_counting_every_cycle() {
    const CYCLES: u64 = 4;
    const PODS: [&str; 2] = ["tol-a", "tol-b"];
    let server = FakeApiServer::start(&scratch("run-flapping"));
    server.add(node("n1", &[]));
    for name in PODS {
        server.add(pod(name, "n1", Some(Some(3600))));
    }
    let mut run = Running::start(&server, &[]);
    for cycle in 1..=CYCLES {
        let seen = (cycle * PODS.len() as u64) as usize;
        server.add(node("n1", &[taint(jiff::Timestamp::now())]));
        run.expect_count("the scheduled deletions", seen, |l| l["type"] == "scheduled");
        server.add(node("n1", &[]));
        run.expect_count("the cancellations", seen, |l| l["type"] == "cancelled");
        if cycle == 1 {
            // The first Events are in before the next cycle repeats them.
            server.wait_for("the first events", WAIT, |r| event_writes(r, "POST") == PODS.len());
        }
    }
    let (summary, code) = run.interrupt();
    assert_eq!((code, summary["cancelled"].as_u64()), (0, Some(CYCLES * PODS.len() as u64)));
    let events = server.events();
    assert_eq!(events.len(), PODS.len(), "one Event per pod: {events:#?}");
    for name in PODS {
        let event = events.iter().find(|e| e["regarding"]["name"] == name).expect("the pod's Event");
        assert_eq!(event["note"], format!("Cancelling deletion of Pod default/{name}"));
        assert_eq!(event["series"]["count"], CYCLES, "every cycle counted: {event:#}");
        assert!(event["series"]["lastObservedTime"].as_str().is_some_and(|t| t > event["eventTime"].as_str().unwrap()));
    }
    let requests = server.requests();
    // As upstream's recorder: the second occurrence is written at once, the last count when the
    // series ends (here: when run stops); the occurrences in between only count.
    assert_eq!(event_writes(&requests, "POST"), PODS.len());
    assert_eq!(event_writes(&requests, "PATCH"), 2 * PODS.len());
    for manifest in ["deploy/rbac-run.yaml", "deploy/in-cluster.yaml"] {
        assert_eq!(
            crate::fake_api::rbac::missing(&server, manifest),
            Vec::<(String, String)>::new(),
            "{manifest} grants it"
        );
    }
}
