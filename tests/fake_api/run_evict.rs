//! `run --mode evict` against the fake API server, which plays the Eviction API and
//! PodDisruptionBudgets (a selector and `disruptionsAllowed`; the test plays the disruption
//! controller). Every wait is on a condition with a deadline, never a sleep.

use std::time::Duration;

use serde_json::{Value, json};

use crate::fake_api::run_cluster::{node, one_attempt, pod, taint};
use crate::support::running::Running;
use crate::util::scratch;
use taint_evict_test_support::fake_apiserver::{FakeApiServer, Fault, Recorded};

const WAIT: Duration = Duration::from_secs(20);

/// A pod of `app`, bound to `node` (see [`pod`] for `seconds`).
fn app_pod(name: &str, app: &str, node: &str, seconds: Option<Option<i64>>) -> Value {
    let mut pod = pod(name, node, seconds);
    pod["metadata"]["labels"] = json!({"app": app});
    pod
}

/// A PodDisruptionBudget in `default` selecting `app`, allowing `allowed` disruptions; `current`:
/// whether its status has caught up with its spec (`observedGeneration`).
fn budget(name: &str, app: &str, allowed: i64, current: bool) -> Value {
    json!({"kind": "PodDisruptionBudget", "apiVersion": "policy/v1",
           "metadata": {"name": name, "namespace": "default", "generation": 2},
           "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": app}}},
           "status": {"observedGeneration": if current { 2 } else { 1 }, "disruptionsAllowed": allowed,
                      "desiredHealthy": 2, "currentHealthy": 2 + allowed, "expectedPods": 2 + allowed}})
}

fn evictions<'a>(requests: &'a [Recorded], name: &str) -> Vec<&'a Recorded> {
    let path = format!("/api/v1/namespaces/default/pods/{name}/eviction");
    requests.iter().filter(|r| r.method == "POST" && r.path == path).collect()
}

fn evicted(name: &str) -> impl Fn(&Value) -> bool + '_ {
    move |l: &Value| l["type"] == "deleted" && l["pod"]["name"] == name
}

fn blocked(name: &str) -> impl Fn(&Value) -> bool + '_ {
    move |l: &Value| l["type"] == "blocked" && l["pod"]["name"] == name
}

#[test]
fn evict_mode_retries_a_pod_its_budget_blocks_and_evicts_it_once_the_budget_allows() {
    let server = FakeApiServer::start(&scratch("evict-blocked"));
    server.without_kubelets();
    server.add(node("n1", &[]));
    server.add(app_pod("guarded", "web", "n1", None));
    server.add(budget("web", "web", 0, true));
    let mut run = Running::start(&server, &["--mode", "evict"]);
    run.expect("the started line", |l| l["type"] == "started" && l["mode"] == "evict");
    server.add(node("n1", &[taint(jiff::Timestamp::now())]));

    let first = run.expect("guarded blocked", blocked("guarded"));
    assert_eq!(first["budget"], "default/web", "{first}");
    assert_eq!(first["message"], "The disruption budget web needs 2 healthy pods and has 2 currently", "{first}");
    server.wait_until_state("the event naming the budget", WAIT, |view| {
        view.events().iter().any(|e| {
            e["type"] == "Warning"
                && e["note"] == "Eviction of Pod default/guarded refused by PodDisruptionBudget default/web; retrying"
        })
    });
    // Still refused at the next attempts, until the budget allows one disruption.
    let second = run.expect("guarded blocked again", |l| blocked("guarded")(l) && l["attempt"] == 2);
    assert_eq!(second["budget"], "default/web");
    server.allow_disruptions("default", "web", 1);
    run.expect("guarded evicted", evicted("guarded"));

    let requests = server.requests();
    let posts = evictions(&requests, "guarded");
    assert!(posts.len() >= 3, "refused twice, then evicted: {posts:?}");
    for post in &posts {
        let body = post.body.as_ref().expect("an Eviction");
        assert_eq!((body["apiVersion"].as_str(), body["kind"].as_str()), (Some("policy/v1"), Some("Eviction")));
        assert_eq!(body["deleteOptions"]["preconditions"]["uid"], "uid-guarded", "{body}");
    }
    let gap = posts[1].at.duration_since(posts[0].at);
    assert!(gap >= jiff::SignedDuration::from_millis(4900), "retried after 5 s, not at once: {gap:?}");
    let writes: Vec<String> =
        requests.iter().filter(|r| r.method == "PATCH" || r.method == "DELETE").map(ToString::to_string).collect();
    assert!(writes.is_empty(), "no status PATCH and no DELETE in evict mode: {writes:?}");
    let guarded = server.object("Pod", "default", "guarded").expect("terminating, without a kubelet");
    let target = guarded["status"]["conditions"].as_array().expect("conditions");
    assert!(
        target.iter().any(|c| c["type"] == "DisruptionTarget" && c["reason"] == "EvictionByEvictionAPI"),
        "the API server's condition, not ours: {guarded}"
    );
    let web = server.object("PodDisruptionBudget", "default", "web").expect("the budget");
    assert_eq!(web["status"]["disruptionsAllowed"], 0, "the eviction took the disruption it was allowed");
    let (summary, code) = run.interrupt();
    assert_eq!((code, summary["deleted"].as_u64()), (0, Some(1)), "{summary}");
    assert_eq!(summary["failed"], json!([]), "{summary}");
}

#[test]
fn evict_mode_a_budget_refusal_delays_no_other_pod_and_a_pod_without_budget_goes_at_its_deadline() {
    let server = FakeApiServer::start(&scratch("evict-no-delay"));
    server.add(node("n1", &[]));
    server.add(app_pod("guarded", "web", "n1", None));
    server.add(app_pod("free", "batch", "n1", Some(Some(2))));
    // A budget whose status is behind its spec: the refusal carries `Retry-After: 10`, which must
    // not hold the other writes; and one eviction at a time, so a blocked pod that kept its slot
    // would keep "free" waiting.
    server.add(budget("web", "web", 1, false));
    let mut run = Running::start(&server, &["--mode", "evict", "--concurrency", "1"]);
    let tainted = jiff::Timestamp::now();
    server.add(node("n1", &[taint(tainted)]));

    let refused = run.expect("guarded blocked", blocked("guarded"));
    assert_eq!(refused["message"], "The disruption budget web is still being processed by the server", "{refused}");
    run.expect("free evicted", evicted("free"));
    let requests = server.requests();
    let first_refusal = evictions(&requests, "guarded")[0].at;
    let free = evictions(&requests, "free");
    assert_eq!(free.len(), 1, "{free:?}");
    let late = free[0].at.duration_since(tainted);
    assert!(late >= jiff::SignedDuration::from_millis(1900), "free tolerates the taint for 2 s: {late:?}");
    assert!(
        free[0].at < first_refusal + jiff::SignedDuration::from_secs(5),
        "free went at its deadline, not after the budget's Retry-After: refused at {first_refusal}, free at {}",
        free[0].at
    );
    let patches = requests.iter().filter(|r| r.method == "PATCH").count();
    assert_eq!(patches, 0, "no status PATCH in evict mode");
    // The budget's status catches up: guarded goes at its next attempt.
    server.allow_disruptions("default", "web", 1);
    run.expect("guarded evicted", evicted("guarded"));
    let (summary, code) = run.interrupt();
    assert_eq!((code, summary["deleted"].as_u64()), (0, Some(2)), "{summary}");
}

#[test]
fn evict_mode_priority_and_fairness_429_on_an_eviction_still_holds_every_write() {
    let server = FakeApiServer::start(&scratch("evict-apf"));
    server.add(node("n1", &[]));
    server.add(pod("refused", "n1", None));
    server.add(pod("later", "n1", Some(Some(1))));
    server.fail_times("POST", "/api/v1/namespaces/default/pods/refused/eviction", Fault::RetryAfter(429, 3), 1);
    let mut run = Running::start(&server, &["--mode", "evict"]);
    server.add(node("n1", &[taint(jiff::Timestamp::now())]));

    run.expect("refused evicted", evicted("refused"));
    run.expect("later evicted", evicted("later"));
    let requests = server.requests();
    let refusal = evictions(&requests, "refused")[0].at;
    let hold_ends = refusal + jiff::SignedDuration::from_secs(3);
    let later = evictions(&requests, "later");
    assert_eq!(later.len(), 1);
    assert!(later[0].at >= hold_ends, "later's eviction waited for the Retry-After: {} < {hold_ends}", later[0].at);
    let retry = evictions(&requests, "refused")[1].at;
    assert!(retry >= hold_ends, "the refused eviction is retried when the hold ends: {retry}");
    let (summary, code) = run.interrupt();
    assert_eq!((code, summary["deleted"].as_u64()), (0, Some(2)), "{summary}");
}

#[test]
fn evict_mode_dry_run_asks_the_api_server_with_dry_run_and_changes_nothing() {
    let server = FakeApiServer::start(&scratch("evict-dry-run"));
    server.add(node("n1", &[]));
    server.add(app_pod("guarded", "web", "n1", None));
    server.add(app_pod("free", "batch", "n1", None));
    server.add(budget("web", "web", 0, true));
    let mut run = Running::start(&server, &["--mode", "evict", "--dry-run"]);
    server.add(node("n1", &[taint(jiff::Timestamp::now())]));
    let line = run.expect("free would be evicted", |l| l["type"] == "wouldDelete" && l["pod"]["name"] == "free");
    assert_eq!(line["dryRun"], true);
    let refused = run.expect("guarded blocked", blocked("guarded"));
    assert_eq!(refused["budget"], "default/web");
    let (summary, code) = run.interrupt();
    assert_eq!((code, summary["wouldDelete"].as_u64()), (0, Some(1)), "{summary}");
    assert_eq!(summary["failed"][0]["pod"]["name"], "guarded", "{summary}");

    let requests = server.requests();
    let writes: Vec<&Recorded> = requests.iter().filter(|r| r.method != "GET").collect();
    assert!(!writes.is_empty());
    for write in &writes {
        assert!(write.path.ends_with("/eviction") && write.param("dryRun") == "All", "a dry run wrote: {write}");
    }
    for name in ["guarded", "free"] {
        let pod = server.object("Pod", "default", name).expect("still there");
        assert!(pod["status"]["conditions"].is_null(), "{pod}");
    }
    assert!(server.events().is_empty(), "{:?}", server.events());
}

#[test]
fn evict_mode_denied_eviction_names_the_missing_permission() {
    let server = FakeApiServer::start(&scratch("evict-forbidden"));
    server.add(node("n1", &[]));
    server.add(pod("victim", "n1", None));
    let message = "pods \"victim\" is forbidden: User \"dev\" cannot create resource \"pods/eviction\"";
    server.fail("POST", "/api/v1/namespaces/default/pods/victim/eviction", Fault::Status(403, message.into()));
    let mut run = Running::start(&server, &["--mode", "evict"]);
    server.add(node("n1", &[taint(jiff::Timestamp::now())]));
    let failed = run.expect("the failure", |l| l["type"] == "failed" && l["pod"]["name"] == "victim");
    let reason = failed["message"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("create pods/eviction forbidden:") && reason.contains("needs create on pods/eviction"),
        "{reason}"
    );
    let (_, code) = run.interrupt();
    assert_eq!(code, 0);
}

#[test]
fn evict_mode_never_evicts_a_same_named_replacement() {
    use taint_evict::cluster::evict::Mode;
    use taint_evict::engine::model::{PodKey, PodRef};
    use taint_evict::runtime::Outcome;

    let server = FakeApiServer::start(&scratch("evict-replacement"));
    let mut replacement = pod("web-0", "n1", None);
    replacement["metadata"]["uid"] = json!("uid-new");
    server.add(replacement);
    let old = PodRef { key: PodKey::new("default", "web-0"), uid: "uid-old".into(), node: "n1".into() };
    let outcome = one_attempt(&server, &old, Mode::Evict);
    assert!(matches!(&outcome, Outcome::Gone(reason) if reason.starts_with("replaced:")), "{outcome:?}");
    let pod = server.object("Pod", "default", "web-0").expect("the replacement is still there");
    assert_eq!(pod["metadata"]["uid"], "uid-new");
    assert!(pod["status"]["conditions"].is_null(), "not marked either: {pod}");
}
