//! `run --mode evict` against the real kube-apiserver's Eviction API, with a PodDisruptionBudget
//! whose status the test sets through the status subresource (no disruption controller runs here;
//! the eviction code trusts `status` once `observedGeneration` has caught up with the spec).

use serde_json::{Value, json};

use super::run::{add_taint, server_pod};
use super::{ControlPlane, node, pod};
use crate::control_plane;
use crate::support::running::Running;
use crate::util::instant;

const SECOND: i128 = 1_000_000_000;

/// A pod labelled `app`, bound to `n1`, tolerating the test taint for `seconds` (`None`: not at all).
fn app_pod(name: &str, app: &str, seconds: Option<i64>) -> Value {
    let mut pod = pod("default", name, "n1", seconds.map(Some));
    pod["metadata"]["labels"] = json!({"app": app});
    pod
}

/// Makes the pod Running and Ready, as its kubelet would: the Eviction API skips the budget of a
/// pending pod, and lets an unready one go while the budget is otherwise healthy.
fn run_and_ready(plane: &ControlPlane, name: &str) {
    let now = jiff::Timestamp::now().round(jiff::Unit::Second).expect("round").to_string();
    let status = json!({"status": {"phase": "Running", "conditions": [
        {"type": "Ready", "status": "True", "lastTransitionTime": now}]}});
    plane.kubectl_ok(&["patch", "pod", name, "--subresource=status", "--type=merge", "-p", &status.to_string()], None);
}

/// Sets the budget's status as the disruption controller would.
fn set_budget_status(plane: &ControlPlane, allowed: i64) {
    let status = json!({"status": {"observedGeneration": 1, "disruptionsAllowed": allowed,
        "currentHealthy": 1 + allowed, "desiredHealthy": 1, "expectedPods": 1 + allowed}});
    plane.kubectl_ok(&["patch", "pdb", "web", "--subresource=status", "--type=merge", "-p", &status.to_string()], None);
}

fn blocked(line: &Value, name: &str) -> bool {
    line["type"] == "blocked" && line["pod"]["name"] == name
}

#[test]
fn real_apiserver_run_evict_waits_for_the_budget_and_the_pod_carries_the_servers_disruption_target() {
    let plane = control_plane!("run-evict");
    let budget = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}});
    plane.create(&[node("n1", &[], &[]), app_pod("guarded", "web", None), app_pod("free", "batch", Some(2)), budget]);
    for name in ["guarded", "free"] {
        run_and_ready(&plane, name);
    }
    let mut run = Running::start_with(plane.kubeconfig(), &["--mode", "evict"]);
    run.expect("the started line", |l| l["type"] == "started" && l["mode"] == "evict");
    let added = add_taint(&plane, "n1");

    // The budget's status has not been written yet: refused with `Retry-After: 10`, which must not
    // hold the other pod's eviction, due 2 s later.
    let first = run.expect("guarded blocked", |l| blocked(l, "guarded"));
    assert_eq!(first["budget"], "default/web", "{first}");
    assert_eq!(first["message"], "The disruption budget web is still being processed by the server", "{first}");
    let free = run.expect("free evicted", |l| l["type"] == "deleted" && l["pod"]["name"] == "free");
    let late = instant(free["time"].as_str().expect("time")) - added;
    assert!(late > SECOND && late < 3 * SECOND, "free went at its deadline, not after the Retry-After: {late} ns");

    // The status says no disruption is allowed: still refused, now naming the numbers.
    set_budget_status(&plane, 0);
    let refused = run.expect("guarded blocked by the budget's numbers", |l| {
        blocked(l, "guarded") && l["message"].as_str().is_some_and(|m| m.contains("needs"))
    });
    assert_eq!(refused["message"], "The disruption budget web needs 1 healthy pods and has 1 currently", "{refused}");
    let guarded = server_pod(&plane, "default", "guarded").expect("guarded is there");
    assert!(guarded["metadata"]["deletionTimestamp"].is_null(), "not evicted while refused: {guarded}");

    // One disruption allowed: the next attempt evicts it.
    set_budget_status(&plane, 1);
    run.expect("guarded evicted", |l| l["type"] == "deleted" && l["pod"]["name"] == "guarded");
    let (summary, code, lines) = run.interrupt_and_read();
    assert_eq!((code, summary["deleted"].as_u64()), (0, Some(2)), "{summary}");
    assert!(!lines.iter().any(|l| l["type"] == "failed"), "{lines:#?}");

    for name in ["guarded", "free"] {
        let pod = server_pod(&plane, "default", name).expect("terminating: no kubelet finishes the deletion");
        assert!(pod["metadata"]["deletionTimestamp"].is_string(), "{pod}");
        let conditions = pod["status"]["conditions"].as_array().expect("conditions");
        let targets: Vec<&Value> = conditions.iter().filter(|c| c["type"] == "DisruptionTarget").collect();
        assert_eq!(targets.len(), 1, "{conditions:?}");
        assert_eq!(targets[0]["reason"], "EvictionByEvictionAPI", "the API server's condition, not ours: {pod}");
    }
    let web = plane.get(&["pdb", "-n", "default", "web"]);
    assert_eq!(web["status"]["disruptionsAllowed"], 0, "the eviction took the allowed disruption: {web}");
    assert!(web["status"]["disruptedPods"]["guarded"].is_string(), "{web}");

    let events = plane.get(&["events", "-n", "default", "--field-selector", "involvedObject.name=guarded"]);
    let warned = events["items"].as_array().expect("items").iter().any(|e| {
        e["type"] == "Warning"
            && e["message"] == "Eviction of Pod default/guarded refused by PodDisruptionBudget default/web; retrying"
    });
    assert!(warned, "an event names the budget: {events}");
}

#[test]
fn real_apiserver_under_a_cap_a_refused_eviction_frees_its_slot_and_a_second_taint_moves_nothing() {
    // `--max-deletions 2` per 2 minutes. a-guarded's budget allows no disruption: refused; b-free
    // goes; the refusal frees its slot, which c-free takes at once. A second NoExecute taint 3 s later
    // leaves every pod due: nothing is withdrawn or dropped. Before, c-free was capped for 2 minutes
    // behind a refusal, and the second taint withdrew a-guarded and dropped c-free while still due.
    let plane = control_plane!("run-evict-cap");
    let budget = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}});
    let pods = [app_pod("a-guarded", "web", None), app_pod("b-free", "batch", None), app_pod("c-free", "batch", None)];
    plane.create(&[&[node("n1", &[], &[]), budget][..], &pods].concat());
    run_and_ready(&plane, "a-guarded");
    set_budget_status(&plane, 0);
    let args = ["--mode", "evict", "--max-deletions", "2", "--max-deletions-window", "2m"];
    let mut run = Running::start_with(plane.kubeconfig(), &args);
    run.expect("the started line", |l| l["type"] == "started");
    add_taint(&plane, "n1");
    run.expect("a-guarded refused", |l| blocked(l, "a-guarded"));
    let b = run.expect("b-free evicted", |l| l["type"] == "deleted" && l["pod"]["name"] == "b-free");
    run.expect("c-free evicted in the slot the refusal freed", |l| {
        l["type"] == "deleted" && l["pod"]["name"] == "c-free"
    });
    plane.kubectl_ok(&["taint", "node", "n1", "second=x:NoExecute"], None);
    let capped =
        run.expect("a-guarded's retry finds no slot", |l| l["type"] == "capped" && l["pod"]["name"] == "a-guarded");
    let slot = instant(capped["nextSlot"].as_str().expect("nextSlot"));
    let b_at = instant(b["time"].as_str().expect("time"));
    assert!(
        slot > b_at + 110 * SECOND && slot < b_at + 121 * SECOND,
        "the slot b-free took frees 2 min later: {capped}"
    );
    let seen = run.seen.clone();
    let (_, code, lines) = run.interrupt_and_read();
    assert_eq!(code, 0);
    let all: Vec<&Value> = seen.iter().chain(&lines).collect();
    let moved: Vec<&&Value> = all.iter().filter(|l| l["type"] == "withdrawn" || l["type"] == "dropped").collect();
    assert!(moved.is_empty(), "nothing moved by a taint that leaves every pod due: {moved:#?}");
    let guarded = server_pod(&plane, "default", "a-guarded").expect("a-guarded is there");
    assert!(guarded["metadata"]["deletionTimestamp"].is_null(), "not evicted: {guarded}");
}
