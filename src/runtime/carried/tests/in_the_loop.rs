//! The countdowns carried on the Lease, through the loop on tokio's paused clock.

use std::time::Duration;

use crate::runtime::changes::NodeChange;
use crate::runtime::harness::*;
use crate::runtime::options::{Leadership, RunOptions};

#[tokio::test(start_paused = true)]
async fn a_run_started_afresh_continues_a_countdown_a_removed_taint_left_from_the_lease() {
    // e3 tolerates a 20 s and b 120 s, both added at 0; a goes at 3: the countdown of 20 s runs on.
    // The run stops at 8; another starts at 9 from the lists (b alone) and the ledger the Lease
    // carried: e3 deleted at 20, not at 120 as the replay alone says.
    let ledger = crate::runtime::ledger::Ledger::default();
    let e3 = || pod("e3", "n1", &[("a", Some(20)), ("b", Some(120))], -60);
    let leadership = || Leadership::always().with_ledger(ledger.clone());
    let h = start_with(vec![node("n1", &[("a", 0), ("b", 0)])], vec![e3()], RunOptions::default(), 8, leadership());
    node_at(&h, 3, NodeChange::Applied(node("n1", &[("b", 0)])));
    let (_, deletions, _) = h.finish().await;
    assert!(deletions.is_empty());
    let kept = ledger.countdowns();
    assert_eq!(kept.iter().map(|c| (c.pod.name(), c.work.fire)).collect::<Vec<_>>(), [("e3", t(20))]);

    tokio::time::sleep(Duration::from_secs(1)).await;
    let nodes = vec![node("n1", &[("b", 0)])];
    let h = start_recording_at(t(9), nodes, vec![e3()], RunOptions::default(), 30, leadership(), Recorder::default());
    let (_, deletions, _) = h.finish().await;
    assert_eq!(deletions, [deleted("e3", 20)]);

    // Had b been rewritten meanwhile (another timeAdded), the countdown would not hold: the replay's.
    ledger.adopt(Vec::new(), kept);
    let h = start_with(vec![node("n1", &[("b", 1)])], vec![e3()], RunOptions::default(), 30, leadership());
    let (_, deletions, _) = h.finish().await;
    assert!(deletions.is_empty(), "{deletions:?}");
}

#[tokio::test(start_paused = true)]
async fn a_standby_seeds_its_engine_once_the_leaders_lease_is_read_with_the_countdowns_it_carries() {
    // The leader carries e3's countdown to 20 (a removed at 3, b 120 s left). A standby lists at 9
    // and reads the Lease at 12, then takes over at 15: e3 deleted at 20, not at 120 as the lists
    // alone say.
    let carried = crate::runtime::ledger::Ledger::default();
    let first = start_with(
        vec![node("n1", &[("a", 0), ("b", 0)])],
        vec![pod("e3", "n1", &[("a", Some(20)), ("b", Some(120))], -60)],
        RunOptions::default(),
        8,
        Leadership::always().with_ledger(carried.clone()),
    );
    node_at(&first, 3, NodeChange::Applied(node("n1", &[("b", 0)])));
    let _ = first.finish().await;
    let kept = carried.countdowns();
    assert_eq!(kept.len(), 1);

    tokio::time::sleep(Duration::from_secs(1)).await;
    let ledger = crate::runtime::ledger::Ledger::default();
    let (leading, follower) = tokio::sync::watch::channel(false);
    let leading = std::sync::Arc::new(leading);
    let leadership = Leadership::elected(follower).with_ledger(ledger.clone());
    let e3 = pod("e3", "n1", &[("a", Some(20)), ("b", Some(120))], -60);
    let h = start_recording_at(
        t(9),
        vec![node("n1", &[("b", 0)])],
        vec![e3],
        RunOptions::default(),
        30,
        leadership,
        Recorder::default(),
    );
    let read = ledger.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(3)).await;
        read.adopt(Vec::new(), kept);
    });
    lead_at(&leading, 6, true);
    let (_, deletions, _) = h.finish().await;
    assert_eq!(deletions, [deleted("e3", 20)]);
}
