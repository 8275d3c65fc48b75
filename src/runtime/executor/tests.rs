//! Deletions carried out, through the loop on tokio's paused clock: retries, budgets' refusals,
//! the write rate, `Retry-After`, events.

use std::time::Duration;

use crate::engine::time::Timestamp;
use crate::runtime::changes::NodeChange;
use crate::runtime::evictor::{Controller, Notice};
use crate::runtime::harness::*;
use crate::runtime::options::{Leadership, Policy, RunOptions};
use crate::runtime::report::RunEvent;

#[tokio::test(start_paused = true)]
async fn failed_deletion_is_retried_with_backoff_until_it_succeeds() {
    let nodes = vec![node("n1", &[("a", 0)])];
    let h = start(nodes, vec![pod("stubborn", "n1", &[], -60)], RunOptions::default(), 1000);
    h.evictor.failures.lock().unwrap().push(("stubborn".into(), 3));
    let (summary, deletions, reports) = h.finish().await;
    // Attempts at 0, 1, 3 and 7 s (backoff 1, 2, 4 s).
    assert_eq!(deletions, [deleted("stubborn", 7)]);
    let failures = reports.iter().filter(|r| matches!(r.event, RunEvent::Failed { .. })).count();
    assert_eq!(failures, 3);
    assert!(summary.failed.is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_pod_blocked_by_its_budget_is_retried_on_its_own_backoff_and_holds_up_no_other_pod() {
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods = vec![pod("guarded", "n1", &[], -60), pod("free", "n1", &[("a", Some(2))], -60)];
    // One deletion at a time: were the blocked pod to keep its permit while it waits, "free" would
    // wait for it.
    let options = RunOptions::from(Policy { concurrency: 1, ..Policy::default() });
    let metrics = options.metrics.clone();
    let h = start(nodes, pods, options, 1000);
    h.evictor.budgets.lock().unwrap().push(("guarded".into(), "web".into(), 4));
    let notices = h.evictor.notices.clone();
    let budget_gauge = "taint_evict_blocked_pods{budget=\"default/web\"} 1";
    let probe = {
        let metrics = metrics.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(4)).await;
            metrics.encode()
        })
    };
    let (summary, mut deletions, reports) = h.finish().await;
    deletions.sort();
    // Refused at 0, 5, 15 and 35 (5 s doubling); evicted at 65 (the cap, 30 s, is not reached yet).
    assert_eq!(deletions, [deleted("free", 2), deleted("guarded", 65)]);
    let blocked: Vec<(Timestamp, u32, Timestamp)> = reports
        .iter()
        .filter_map(|r| match &r.event {
            RunEvent::Blocked { budget, attempt, retry_at, .. } if budget == "default/web" => {
                Some((r.at, *attempt, *retry_at))
            }
            _ => None,
        })
        .collect();
    assert_eq!(blocked, [(t(0), 1, t(5)), (t(5), 2, t(15)), (t(15), 3, t(35)), (t(35), 4, t(65))]);
    assert!(!reports.iter().any(|r| matches!(r.event, RunEvent::Failed { .. })), "a refusal is not a failure");
    let blocked_notices: Vec<(String, Notice)> =
        notices.lock().unwrap().iter().filter(|(_, n)| matches!(n, Notice::Blocked { .. })).cloned().collect();
    let once = ("guarded".to_owned(), Notice::Blocked { budget: "default/web".into() });
    assert_eq!(blocked_notices, [once], "one event when it became blocked, not one per retry");
    assert_eq!(summary.deleted, 2);
    assert!(summary.failed.is_empty(), "{:?}", summary.failed);
    let during = probe.await.unwrap();
    assert!(during.contains(budget_gauge), "{during}");
    assert!(during.contains("taint_evict_deletion_failures_total{reason=\"pdb\"} 1"), "{during}");
    let after = metrics.encode();
    assert!(!after.contains("taint_evict_blocked_pods{"), "no pod is blocked any more: {after}");
    assert!(after.contains("taint_evict_deletion_failures_total{reason=\"pdb\"} 4"), "{after}");
}

#[tokio::test(start_paused = true)]
async fn a_blocked_pod_that_is_no_longer_due_is_given_up_and_says_so() {
    let nodes = vec![node("n1", &[("a", 0)])];
    let options = RunOptions::default();
    let metrics = options.metrics.clone();
    let h = start(nodes, vec![pod("guarded", "n1", &[], -60)], options, 100);
    h.evictor.budgets.lock().unwrap().push(("guarded".into(), "web".into(), u32::MAX));
    // The taint goes away at +7, while the pod waits for its retry at +15.
    node_at(&h, 7, NodeChange::Applied(node("n1", &[])));
    let (summary, deletions, reports) = h.finish().await;
    assert!(deletions.is_empty());
    let ended: Vec<(Timestamp, &str)> = reports
        .iter()
        .filter_map(|r| match &r.event {
            RunEvent::Withdrawn { pod, budget } if budget == "default/web" => Some((r.at, pod.key.name())),
            _ => None,
        })
        .collect();
    assert_eq!(ended, [(t(7), "guarded")]);
    let attempts = reports.iter().filter(|r| matches!(r.event, RunEvent::Blocked { .. })).count();
    assert_eq!(attempts, 2, "at 0 and 5, none after the taint went away");
    assert!(summary.failed.is_empty(), "{:?}", summary.failed);
    assert!(!metrics.encode().contains("taint_evict_blocked_pods{"), "{}", metrics.encode());
}

#[tokio::test(start_paused = true)]
async fn replaced_pod_is_gone_not_an_error() {
    let nodes = vec![node("n1", &[("a", 0)])];
    let h = start(nodes, vec![pod("web-0", "n1", &[], -60)], RunOptions::default(), 100);
    h.evictor.gone.lock().unwrap().push("web-0".into());
    let (summary, deletions, _) = h.finish().await;
    assert_eq!((summary.gone, summary.deleted, deletions.len()), (1, 0, 0));
}

#[tokio::test(start_paused = true)]
async fn failing_deletion_stops_retrying_once_the_pod_is_no_longer_due() {
    // The pod is due at +30 but every attempt fails; the taint is removed at +40: no more attempts.
    let h = start(
        vec![node("n1", &[("a", 0)])],
        vec![pod("p", "n1", &[("a", Some(30))], -60)],
        RunOptions::default(),
        1000,
    );
    h.evictor.failures.lock().unwrap().push(("p".into(), u32::MAX));
    node_at(&h, 40, NodeChange::Applied(node("n1", &[])));
    let failures = h.evictor.failures.clone();
    let (summary, deletions, reports) = h.finish().await;
    assert_eq!(deletions, []);
    let attempts: Vec<Timestamp> =
        reports.iter().filter(|r| matches!(r.event, RunEvent::Failed { .. })).map(|r| r.at).collect();
    // Attempts at 30, 31, 33, 37 (backoff 1, 2, 4 s); the next one (45) is withdrawn at 40.
    assert_eq!(attempts, [t(30), t(31), t(33), t(37)]);
    assert!(summary.failed.is_empty(), "a withdrawn deletion is not a failure: {:?}", summary.failed);
    assert!(failures.lock().unwrap()[0].1 > 1000, "no attempt after the withdrawal");
}

#[tokio::test(start_paused = true)]
async fn deletions_due_together_go_out_at_the_write_rate_in_deadline_order() {
    // Five overdue pods, their deadlines in the reverse of their names' order: e (-50) … a (-10).
    let nodes = vec![node("n1", &[("a", -100)])];
    let pods: Vec<_> = ["e", "d", "c", "b", "a"]
        .iter()
        .zip([50, 60, 70, 80, 90])
        .map(|(n, s)| pod(n, "n1", &[("a", Some(s))], -3600))
        .collect();
    let h = start_paced(nodes, pods, RunOptions::default(), 100, Leadership::always(), Some((2.0, 2)));
    let (summary, deletions, _) = h.finish().await;
    assert_eq!(summary.deleted, 5);
    // A burst of 2 at once, then one every 0.5 s, earliest deadline first.
    let half = |n: i64| t(0).add_nanos(n * 500_000_000);
    let expected: Vec<_> = [("e", 0), ("d", 0), ("c", 1), ("b", 2), ("a", 3)]
        .iter()
        .map(|(name, halves)| ((*name).to_owned(), half(*halves)))
        .collect();
    assert_eq!(deletions, expected);
}

#[tokio::test(start_paused = true)]
async fn retry_after_holds_every_write_and_retries_the_refused_one_then_without_backoff() {
    // "first" is due at once and refused with 503, Retry-After 5 s; "second" falls due at +2.
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods = vec![pod("first", "n1", &[], -60), pod("second", "n1", &[("a", Some(2))], -60)];
    let options = RunOptions::default();
    let metrics = options.metrics.clone();
    let h = start_paced(nodes, pods, options, 100, Leadership::always(), Some((0.0, 1)));
    h.evictor.pushback.lock().unwrap().push(("first".into(), Duration::from_secs(5)));
    let (summary, mut deletions, reports) = h.finish().await;
    deletions.sort();
    // Nothing goes before +5, then both: the refused one is not dropped nor backed off to +1, +3.
    assert_eq!(deletions, [deleted("first", 5), deleted("second", 5)]);
    assert_eq!(summary.deleted, 2);
    let retry_at: Vec<_> = reports
        .iter()
        .filter_map(|r| match &r.event {
            RunEvent::Failed { retry_at, .. } => Some((r.at, *retry_at)),
            _ => None,
        })
        .collect();
    assert_eq!(retry_at, [(t(0), t(5))]);
    let text = metrics.encode();
    assert!(text.contains("taint_evict_deletion_failures_total{reason=\"throttled\"} 1"), "{text}");
}

#[tokio::test(start_paused = true)]
async fn a_bursts_deletions_are_not_held_behind_slow_event_writes() {
    // Ten pods due at once: twenty writes of 10 ms, and ten events of 1 s each.
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods: Vec<_> = (0..10).map(|i| pod(&format!("p{i}"), "n1", &[], -60)).collect();
    let h = start_served(nodes, pods, 100);
    let notices = h.evictor.notices.clone();
    let (summary, deletions, _) = h.finish().await;
    assert_eq!(summary.deleted, 10);
    // One event is written at a time: it holds one of the server's two slots, the deletions' writes
    // go through the other (written beside them, the events would hold both for 5 s).
    let last = deletions.iter().map(|(_, at)| *at).max().unwrap();
    assert!(last <= t(0).add_nanos(200_000_000), "last DELETE at {last:?}, {deletions:?}");
    // Every event is still written, in the order the deletions started.
    let expected: Vec<_> = (0..10).map(|i| (format!("p{i}"), Notice::Marking(Controller::NodeTaints))).collect();
    assert_eq!(*notices.lock().unwrap(), expected);
}

#[tokio::test(start_paused = true)]
async fn events_are_written_in_order_per_pod_and_those_queued_are_flushed_on_stop() {
    // Five pods due at once (five events of 1 s queued at 0); "x", on another node, tolerates the
    // taint 2 s: its countdown is cancelled at +1 (the taint removed), and it is deleted at +4
    // (retainted at +2).
    let nodes = vec![node("n1", &[("a", 0)]), node("n2", &[("a", 0)])];
    let mut pods: Vec<_> = (0..5).map(|i| pod(&format!("p{i}"), "n1", &[], -60)).collect();
    pods.push(pod("x", "n2", &[("a", Some(2))], -60));
    let h = start_served(nodes, pods, 5);
    node_at(&h, 1, NodeChange::Applied(node("n2", &[])));
    node_at(&h, 2, NodeChange::Applied(node("n2", &[("a", 2)])));
    let notices = h.evictor.notices.clone();
    let (summary, _, _) = h.finish().await;
    assert_eq!(summary.deleted, 6);
    // At the stop (+5), x's two events still wait behind the others: written before run returns.
    let mut expected: Vec<_> = (0..5).map(|i| (format!("p{i}"), Notice::Marking(Controller::NodeTaints))).collect();
    expected.extend([
        ("x".to_owned(), Notice::Cancelling(Controller::NodeTaints)),
        ("x".to_owned(), Notice::Marking(Controller::NodeTaints)),
    ]);
    assert_eq!(*notices.lock().unwrap(), expected);
}
