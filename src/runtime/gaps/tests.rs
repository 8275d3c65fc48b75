//! Watch gaps, through the loop on tokio's paused clock: deletions held, dropped, released.

use std::sync::{Arc, Mutex};

use crate::engine::time::Timestamp;
use crate::runtime::changes::{NodeChange, PodChange};
use crate::runtime::harness::*;
use crate::runtime::options::{Leadership, Policy, RunOptions};
use crate::runtime::report::RunEvent;

#[tokio::test(start_paused = true)]
async fn a_deletion_due_while_a_watch_is_interrupted_waits_for_the_relist_and_is_dropped_if_no_longer_due() {
    // n1 tainted at T0; `t10` tolerates 10 s, `t30` 30 s. The nodes watch breaks at +5; while it is
    // down the taint is removed elsewhere; it lists again at +25, without the taint.
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods = vec![pod("t10", "n1", &[("a", Some(10))], -60), pod("t30", "n1", &[("a", Some(30))], -60)];
    let h = start(nodes, pods, RunOptions::default(), 60);
    node_at(&h, 5, NodeChange::Interrupted);
    node_at(&h, 25, NodeChange::Listed(vec![node("n1", &[])]));
    let (_, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [], "nothing deleted on a decision the re-list undid");
    let held: Vec<_> = reports.iter().filter(|r| matches!(r.event, RunEvent::Held { .. })).collect();
    assert_eq!(held.len(), 1, "t10 came due at +10 while the nodes watch was down: {reports:#?}");
    assert_eq!(held[0].at, t(10));
    assert!(
        matches!(&held[0].event, RunEvent::Held { watches: "nodes", since, .. } if *since == t(5)),
        "{:?}",
        held[0].event
    );
    let dropped = reports.iter().filter(|r| matches!(&r.event, RunEvent::Dropped { pod } if pod.key.name() == "t10"));
    assert_eq!(dropped.map(|r| r.at).collect::<Vec<_>>(), [t(25)]);
    assert!(!reports.iter().any(|r| matches!(r.event, RunEvent::Evicting { .. })), "never started");
}

#[tokio::test(start_paused = true)]
async fn a_deletion_held_goes_ahead_once_the_relist_says_it_is_still_due() {
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods = vec![pod("t10", "n1", &[("a", Some(10))], -60)];
    let h = start(nodes.clone(), pods.clone(), RunOptions::default(), 60);
    pod_at(&h, 5, PodChange::Interrupted);
    // The pods listed again at +20 (unchanged): the engine still wants t10 deleted.
    pod_at(&h, 20, PodChange::Listed(pods));
    let (_, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("t10", 20)]);
    assert!(reports.iter().any(|r| matches!(r.event, RunEvent::Released { count: 1 }) && r.at == t(20)));
    // A merged per-node pod view says it is up to date with `Resumed` instead of a list.
    let h = start(nodes, vec![pod("t10", "n1", &[("a", Some(10))], -60)], RunOptions::default(), 60);
    pod_at(&h, 5, PodChange::Interrupted);
    pod_at(&h, 30, PodChange::Resumed);
    let (_, deletions, _) = h.finish().await;
    assert_eq!(deletions, [deleted("t10", 30)]);
}

#[tokio::test(start_paused = true)]
async fn a_failing_deletion_is_not_retried_on_a_decision_older_than_the_last_gap() {
    // t10's deletion fails (the API server is gone) from +10 on, retried 1 s, 2 s, 4 s … later; the
    // watch breaks at +12 (the same outage), and the re-list at +40 finds the taint gone.
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods = vec![pod("t10", "n1", &[("a", Some(10))], -60)];
    let recorder = Recorder { failures: Arc::new(Mutex::new(vec![("t10".into(), 100)])), ..Recorder::default() };
    let h = start_recording(nodes, pods, RunOptions::default(), 60, Leadership::always(), recorder);
    node_at(&h, 12, NodeChange::Interrupted);
    node_at(&h, 40, NodeChange::Listed(vec![node("n1", &[])]));
    let (_, deletions, reports) = h.finish().await;
    assert_eq!(deletions, []);
    let attempts: Vec<Timestamp> =
        reports.iter().filter(|r| matches!(r.event, RunEvent::Failed { .. })).map(|r| r.at).collect();
    // At +10 and +11 (1 s later); the next, due at +13, never comes.
    assert_eq!(attempts, [t(10), t(11)], "{reports:#?}");
    assert!(reports.iter().any(|r| matches!(&r.event, RunEvent::Dropped { pod } if pod.key.name() == "t10")));
}

#[tokio::test(start_paused = true)]
async fn a_gap_with_nothing_under_way_leaves_the_deletions_after_it_unheld() {
    // The watches break at +1 and list again at +2, with nothing due; a taint at +10 makes t0 due at
    // once: deleted then, neither held nor released (the executor was left suspended before).
    let nodes = vec![node("n1", &[])];
    let h = start(nodes.clone(), vec![pod("t0", "n1", &[], -60)], RunOptions::default(), 30);
    node_at(&h, 1, NodeChange::Interrupted);
    pod_at(&h, 1, PodChange::Interrupted);
    node_at(&h, 2, NodeChange::Listed(nodes));
    pod_at(&h, 2, PodChange::Listed(vec![pod("t0", "n1", &[], -60)]));
    node_at(&h, 10, NodeChange::Applied(node("n1", &[("a", 10)])));
    let (_, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("t0", 10)]);
    let held = reports.iter().filter(|r| matches!(r.event, RunEvent::Held { .. } | RunEvent::Released { .. }));
    assert_eq!(held.count(), 0, "{reports:#?}");
}

#[tokio::test(start_paused = true)]
async fn a_deletion_decided_between_two_lists_after_a_gap_is_decided_again_on_both() {
    // Both watches break at +37; meanwhile p1 comes to tolerate `a` for 3 s (+38), then n2 is tainted
    // `a` (+46). At +48 the nodes are listed first: with p1 as last seen (no toleration) it falls due
    // at once and is held; the pods' list then shows its toleration. Before, the held deletion went
    // ahead at +48, before the +49 the controller watching throughout had; now it is decided again on
    // both lists: its countdown from +48, deleted at +51.
    let nodes = vec![node("n1", &[]), node("n2", &[])];
    let p1 = pod("p1", "n2", &[], -60);
    let tolerant = pod("p1", "n2", &[("a", Some(3))], -60);
    let h = start(nodes, vec![p1], RunOptions::default(), 120);
    node_at(&h, 37, NodeChange::Interrupted);
    pod_at(&h, 37, PodChange::Interrupted);
    node_at(&h, 48, NodeChange::Listed(vec![node("n1", &[]), node("n2", &[("a", 46)])]));
    pod_at(&h, 48, PodChange::Listed(vec![tolerant]));
    let (_, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("p1", 51)], "{reports:#?}");
}

#[tokio::test(start_paused = true)]
async fn a_deletion_capped_before_a_gap_is_decided_again_on_the_relists() {
    // n1 tainted `b` at T0, which x1 and x2 do not tolerate; one deletion per 30 s: x1 goes at once,
    // x2 waits for the slot at +30. The watches break at +10; in the gap `b` is removed and `a` added
    // at +20, which both tolerate for 25 s; they list again at +20. x2's deletion rested on `b`: it
    // is dropped, and x2 counts down from the re-list, deleted at +45, not at +30.
    let pods = vec![pod("x1", "n1", &[("a", Some(25))], -60), pod("x2", "n1", &[("a", Some(25))], -60)];
    let options =
        RunOptions::from(Policy { max_deletions: Some((1, std::time::Duration::from_secs(30))), ..Policy::default() });
    let h = start(vec![node("n1", &[("b", 0)])], pods.clone(), options, 60);
    node_at(&h, 10, NodeChange::Interrupted);
    pod_at(&h, 10, PodChange::Interrupted);
    node_at(&h, 20, NodeChange::Listed(vec![node("n1", &[("a", 20)])]));
    pod_at(&h, 20, PodChange::Listed(pods[1..].to_vec()));
    let (_, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("x1", 0), deleted("x2", 45)], "{reports:#?}");
    let dropped = reports.iter().filter(|r| matches!(&r.event, RunEvent::Dropped { pod } if pod.key.name() == "x2"));
    assert_eq!(dropped.map(|r| r.at).collect::<Vec<_>>(), [t(20)]);
}
