//! `--max-deletions`, through the loop on tokio's paused clock.

use std::time::Duration;

use crate::engine::model::PodKey;
use crate::engine::snapshot::SnapshotPod;
use crate::engine::time::Timestamp;
use crate::runtime::changes::{NodeChange, PodChange};
use crate::runtime::harness::*;
use crate::runtime::options::{Leadership, Policy, RunOptions};
use crate::runtime::report::{Report, RunEvent};

#[tokio::test(start_paused = true)]
async fn under_a_cap_a_refused_eviction_frees_its_slot_and_a_second_taint_moves_no_deletion() {
    // At most 2 deletions per 120 s; x1's budget refuses it once. x1 and x2 take the slots, x3 is
    // capped; x1's refusal frees its slot, which x3 takes at once; x1's retry (at 5) finds none
    // free and waits for x2's to leave the window. A second taint at 3 leaves every pod due: the
    // engine decides again, and nothing is dropped, withdrawn or moved.
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods = vec![pod("x1", "n1", &[], -60), pod("x2", "n1", &[], -60), pod("x3", "n1", &[], -60)];
    let options = RunOptions::from(Policy { max_deletions: Some((2, Duration::from_secs(120))), ..Policy::default() });
    let h = start(nodes, pods, options, 200);
    h.evictor.budgets.lock().unwrap().push(("x1".into(), "web".into(), 1));
    // The pods deleted are gone from the watch before the second taint.
    pod_at(&h, 1, PodChange::Deleted(PodKey::new("default", "x2")));
    pod_at(&h, 1, PodChange::Deleted(PodKey::new("default", "x3")));
    node_at(&h, 3, NodeChange::Applied(node("n1", &[("a", 0), ("b", 3)])));
    let (summary, mut deletions, reports) = h.finish().await;
    deletions.sort();
    assert_eq!(deletions, [deleted("x1", 120), deleted("x2", 0), deleted("x3", 0)]);
    let capped: Vec<(Timestamp, &str, Timestamp)> = reports
        .iter()
        .filter_map(|r| match &r.event {
            RunEvent::Capped { pod, until, .. } => Some((r.at, pod.key.name(), *until)),
            _ => None,
        })
        .collect();
    assert_eq!(capped, [(t(0), "x3", t(120)), (t(5), "x1", t(120))]);
    let moved = |r: &&Report| matches!(r.event, RunEvent::Withdrawn { .. } | RunEvent::Dropped { .. });
    assert_eq!(reports.iter().filter(moved).count(), 0, "{reports:#?}");
    let evicting = reports.iter().filter(|r| matches!(r.event, RunEvent::Evicting { .. })).count();
    assert_eq!(evicting, 3, "each eviction starts once, a retry says nothing new");
    assert_eq!(summary.deleted, 3);
}

#[tokio::test(start_paused = true)]
async fn past_max_deletions_the_due_pods_wait_for_the_window_to_free_a_slot() {
    // Five pods due at once; at most 2 deletions per 60 s.
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods: Vec<SnapshotPod> = (1..=5).map(|i| pod(&format!("p{i}"), "n1", &[], -60)).collect();
    let options = RunOptions::from(Policy { max_deletions: Some((2, Duration::from_secs(60))), ..Policy::default() });
    let h = start(nodes, pods, options, 150);
    let (_, deletions, reports) = h.finish().await;
    let at = |name: &str| deletions.iter().find(|(n, _)| n == name).map(|(_, at)| *at);
    assert_eq!([at("p1"), at("p2")], [Some(t(0)), Some(t(0))], "{deletions:?}");
    assert_eq!([at("p3"), at("p4")], [Some(t(60)), Some(t(60))], "two more when the first two leave the window");
    assert_eq!(at("p5"), Some(t(120)));
    let capped: Vec<(String, Timestamp)> = reports
        .iter()
        .filter_map(|r| match &r.event {
            RunEvent::Capped { pod, until, .. } => Some((pod.key.name().to_owned(), *until)),
            _ => None,
        })
        .collect();
    assert_eq!(capped.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["p3", "p4", "p5"], "each said once");
    assert!(capped.iter().all(|(_, until)| *until == t(60)), "{capped:?}");
}

#[tokio::test(start_paused = true)]
async fn a_term_counts_the_deletions_its_lease_carries_and_sends_one_only_once_its_count_is_written() {
    // The Lease says a deletion started 30 s before T0; at most 1 per 60 s. p1 waits for the slot
    // that deletion holds (T0 + 30), and is sent only once the count holding it is written (T0 + 40).
    let ledger = crate::runtime::ledger::Ledger::default();
    ledger.adopt(vec![t(-30)], Vec::new());
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods = vec![pod("p1", "n1", &[], -60)];
    let options = RunOptions::from(Policy { max_deletions: Some((1, Duration::from_secs(60))), ..Policy::default() });
    let h = start_with(nodes, pods, options, 50, Leadership::always().with_ledger(ledger.clone()));
    let writer = ledger.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(40)).await;
        writer.written(writer.to_write().generation);
    });
    let (_, deletions, reports) = h.finish().await;
    let capped = reports.iter().find_map(|r| match &r.event {
        RunEvent::Capped { until, .. } => Some(*until),
        _ => None,
    });
    assert_eq!(capped, Some(t(30)), "the slot the Lease's deletion holds: {reports:?}");
    assert_eq!(deletions, [deleted("p1", 40)]);
    assert_eq!(ledger.started(), [t(30)], "counted for the next term; the first left the window");
}
