//! `--keep-last-ready`, through the loop on tokio's paused clock.

use std::time::Duration;

use crate::engine::snapshot::{PodReady, SnapshotPod};
use crate::runtime::changes::{NodeChange, PodChange};
use crate::runtime::harness::*;
use crate::runtime::options::{Leadership, Policy, RunOptions};
use crate::runtime::report::{HeldBy, LetGo, RunEvent};

#[tokio::test(start_paused = true)]
async fn keep_last_ready_deletes_one_of_two_ready_replicas_due_together_and_the_other_once_a_third_is_ready() {
    // n1 tainted: a and b, both ready, fall due at once; c, on n2, is not ready yet. The recorder's
    // deletions leave the pods as they were (a dry run's do too): a stays taken, not ready to spare.
    let nodes = vec![node("n1", &[("a", 0)]), node("n2", &[])];
    let pods = vec![replica("a", "n1", true), replica("b", "n1", true), replica("c", "n2", false)];
    let h = start(nodes, pods, keeping(), 60);
    pod_at(&h, 30, PodChange::Applied(replica("c", "n2", true)));
    let (summary, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("a", 0), deleted("b", 30)], "{reports:#?}");
    assert_eq!(kept(&reports), [("b".to_owned(), t(0))]);
    assert_eq!(unkept(&reports), [("b".to_owned(), LetGo::Spare { replica: "c".into() }, t(30))]);
    assert_eq!(summary.deleted, 2);
}

#[tokio::test(start_paused = true)]
async fn keep_last_ready_in_a_node_loss_counts_the_replicas_the_controller_marked_not_ready() {
    // n1 lost: the node lifecycle controller tainted it `unreachable` and marked its pods not ready
    // (their containers were ready). web's a and b, and db's only pod, fall due at once: a goes, b is
    // the last ready replica of web, db-0 the only pod of db; both kept, and said so.
    let unreachable = "node.kubernetes.io/unreachable";
    let nodes = vec![node("n1", &[(unreachable, 0)]), node("n2", &[])];
    let marked = |name: &str| SnapshotPod { ready: PodReady::Marked, ..replica(name, "n1", false) };
    let db = crate::engine::snapshot::Owner::new("StatefulSet", "db", "ss-db");
    let db_0 = SnapshotPod { owner: Some(db), ..marked("db-0") };
    let pods = vec![marked("a"), marked("b"), db_0];
    let h = start(nodes, pods, keeping(), 60);
    // A replacement for a, on n2, becomes ready at +30: b goes.
    pod_at(&h, 30, PodChange::Applied(replica("c", "n2", true)));
    let (summary, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("a", 0), deleted("b", 30)], "{reports:#?}");
    assert_eq!(kept(&reports), [("b".to_owned(), t(0))]);
    let only: Vec<(&str, bool)> = reports
        .iter()
        .filter_map(|r| match &r.event {
            RunEvent::Kept { pod, only, .. } => Some((pod.key.name(), *only)),
            _ => None,
        })
        .collect();
    assert_eq!(only, [("b", false), ("db-0", true)], "db-0 is said to be its workload's only pod");
    let held: Vec<(&str, HeldBy)> = summary.held.iter().map(|(pod, _, by)| (pod.key.name(), *by)).collect();
    assert_eq!(held, [("db-0", HeldBy::KeepLastReady)]);
}

#[tokio::test(start_paused = true)]
async fn keep_last_ready_releases_the_held_replica_no_longer_due_and_deletes_it_once_not_ready() {
    // a, the only ready replica, falls due at once and is kept; at +20 the taint goes: not deleted,
    // even when c is ready later.
    let nodes = vec![node("n1", &[("a", 0)]), node("n2", &[])];
    let pods = vec![replica("a", "n1", true), replica("c", "n2", false)];
    let h = start(nodes.clone(), pods.clone(), keeping(), 60);
    node_at(&h, 20, NodeChange::Applied(node("n1", &[])));
    pod_at(&h, 30, PodChange::Applied(replica("c", "n2", true)));
    let (_, deletions, reports) = h.finish().await;
    assert_eq!(deletions, []);
    assert_eq!(kept(&reports), [("a".to_owned(), t(0))]);
    assert_eq!(unkept(&reports), [("a".to_owned(), LetGo::NotDue, t(20))]);
    // Kept again; at +10 a is no longer ready (its probe fails): no longer guarded, it goes.
    let h = start(nodes, pods, keeping(), 60);
    pod_at(&h, 10, PodChange::Applied(replica("a", "n1", false)));
    let (_, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("a", 10)]);
    assert_eq!(unkept(&reports), [("a".to_owned(), LetGo::NotReady, t(10))]);
}

#[tokio::test(start_paused = true)]
async fn keep_last_ready_guards_neither_a_bare_pod_nor_one_not_ready_and_off_it_changes_nothing() {
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods = vec![
        SnapshotPod { ready: PodReady::Yes, ..pod("bare", "n1", &[], -60) },
        replica("slow", "n1", false),
        replica("solo", "n1", true),
    ];
    let h = start(nodes.clone(), pods.clone(), keeping(), 60);
    let (_, mut deletions, reports) = h.finish().await;
    deletions.sort();
    assert_eq!(deletions, [deleted("bare", 0), deleted("slow", 0)]);
    assert_eq!(kept(&reports), [("solo".to_owned(), t(0))], "solo: the last ready replica (slow is not ready)");
    let h = start(nodes, pods, RunOptions::default(), 60);
    let (_, mut deletions, reports) = h.finish().await;
    deletions.sort();
    assert_eq!(deletions, [deleted("bare", 0), deleted("slow", 0), deleted("solo", 0)]);
    assert_eq!(kept(&reports), []);
}

#[tokio::test(start_paused = true)]
async fn keep_last_ready_in_a_dry_run_says_what_would_be_held_and_what_would_go() {
    let nodes = vec![node("n1", &[("a", 0)]), node("n2", &[])];
    let pods = vec![replica("a", "n1", true), replica("b", "n1", true), replica("c", "n2", false)];
    let recorder = Recorder { dry_run: true, ..Recorder::default() };
    let h = start_recording(nodes, pods, keeping(), 60, Leadership::always(), recorder);
    pod_at(&h, 30, PodChange::Applied(replica("c", "n2", true)));
    let (summary, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("a", 0), deleted("b", 30)], "would be deleted");
    let kept: Vec<_> = reports.iter().filter(|r| matches!(r.event, RunEvent::Kept { dry_run: true, .. })).collect();
    assert_eq!(kept.len(), 1, "{reports:#?}");
    assert!(
        reports.iter().any(|r| matches!(&r.event, RunEvent::Unkept { dry_run: true, why: LetGo::Spare { .. }, .. }))
    );
    assert!(summary.dry_run && summary.deleted == 2);
}

#[tokio::test(start_paused = true)]
async fn keep_last_ready_beside_max_deletions_counts_the_capped_replicas_as_going() {
    // a, b and c, the workload's ready replicas, all due at once; one deletion per minute. a goes;
    // b waits for a slot (c is ready beside it); c, beside a gone and b going, is the last: kept.
    let nodes = vec![node("n1", &[("a", 0)])];
    let pods = vec![replica("a", "n1", true), replica("b", "n1", true), replica("c", "n1", true)];
    let options = RunOptions::from(Policy {
        max_deletions: Some((1, Duration::from_secs(60))),
        keep_last_ready: true,
        ..Policy::default()
    });
    let h = start(nodes, pods, options, 150);
    let (_, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("a", 0), deleted("b", 60)], "{reports:#?}");
    let capped: Vec<&str> = reports
        .iter()
        .filter_map(|r| match &r.event {
            RunEvent::Capped { pod, .. } => Some(pod.key.name()),
            _ => None,
        })
        .collect();
    assert_eq!(capped, ["b"]);
    assert_eq!(kept(&reports), [("c".to_owned(), t(0))]);
    assert_eq!(unkept(&reports), []);
}

#[tokio::test(start_paused = true)]
async fn keep_last_ready_counts_the_replicas_on_nodes_not_followed() {
    // `run n1 --keep-last-ready`: a, on n1, falls due at once; b, web's other replica, is ready on n2,
    // which is not followed. Nothing is decided before the replicas' list is in (+5); then a goes.
    let nodes = vec![node("n1", &[("a", 0)])];
    let followed = vec![replica("a", "n1", true)];
    let everywhere = vec![replica("a", "n1", true), replica("b", "n2", true)];
    let (h, _replicas) = start_with_replicas(nodes.clone(), followed.clone(), everywhere, 5);
    let (_, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("a", 5)], "{reports:#?}");
    assert_eq!(kept(&reports), []);

    // b not ready yet: a is kept; b ready at +20 (seen by the replicas' watch alone): a goes.
    let everywhere = vec![replica("a", "n1", true), replica("b", "n2", false)];
    let (h, replicas) = start_with_replicas(nodes, followed, everywhere, 0);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(20)).await;
        replicas.send(PodChange::Applied(replica("b", "n2", true))).await.unwrap();
    });
    let (_, deletions, reports) = h.finish().await;
    assert_eq!(deletions, [deleted("a", 20)], "{reports:#?}");
    assert_eq!(kept(&reports), [("a".to_owned(), t(0))]);
    assert_eq!(unkept(&reports), [("a".to_owned(), LetGo::Spare { replica: "b".into() }, t(20))]);
}
