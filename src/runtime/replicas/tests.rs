use super::*;
use crate::engine::model::Pod;

fn replica(name: &str, owner: Option<&Owner>, ready: bool) -> SnapshotPod {
    let ready = if ready { PodReady::Yes } else { PodReady::No };
    on("n1", name, owner, ready)
}

fn on(node: &str, name: &str, owner: Option<&Owner>, ready: PodReady) -> SnapshotPod {
    SnapshotPod {
        pod: Pod {
            key: PodKey::new("default", name),
            uid: format!("uid-{name}").into(),
            node: Some(node.into()),
            tolerations: Arc::default(),
        },
        bound_at: None,
        phase: "Running".into(),
        terminating: false,
        deletion_timestamp: None,
        ready,
        claims: None,
        owner: owner.cloned(),
        tolerations_edited: None,
    }
}

fn pod_ref(pod: &SnapshotPod) -> PodRef {
    let node = pod.pod.node.clone().unwrap_or_else(|| "n1".into());
    PodRef { key: pod.pod.key.clone(), uid: pod.pod.uid.clone(), node }
}

/// No node is lost.
fn healthy(_: &NodeName) -> bool {
    false
}

#[test]
fn the_last_ready_replica_is_kept_and_a_spare_lets_it_go() {
    let web = Owner::new("ReplicaSet", "web", "rs");
    let (a, b) = (replica("a", Some(&web), true), replica("b", Some(&web), true));
    let mut replicas = Replicas::default();
    replicas.listed(&[a.clone(), b.clone(), replica("bare", None, true), replica("slow", Some(&web), false)]);
    let none = |_: &PodKey| false;
    assert_eq!(replicas.guard(&pod_ref(&a), none, healthy), Guard::Spare(&b.pod.key));
    // b's deletion under way: a is the last.
    assert!(
        matches!(replicas.guard(&pod_ref(&a), |k: &PodKey| *k == b.pod.key, healthy), Guard::Last { workload, only: false } if workload.owner == web)
    );
    assert_eq!(replicas.guard(&pod_ref(&replica("bare", None, true)), none, healthy), Guard::Free);
    assert_eq!(replicas.guard(&pod_ref(&replica("slow", Some(&web), false)), none, healthy), Guard::Free);
    // b carried out: taken until the watch shows it terminating, gone or replaced.
    replicas.carried_out(&pod_ref(&b));
    assert!(matches!(replicas.guard(&pod_ref(&a), none, healthy), Guard::Last { .. }));
    replicas.applied(&SnapshotPod { terminating: true, ..b.clone() });
    assert!(matches!(replicas.guard(&pod_ref(&a), none, healthy), Guard::Last { .. }));
    let replacement = SnapshotPod { pod: Pod { uid: "uid-b2".into(), ..b.pod.clone() }, ..b.clone() };
    replicas.applied(&replacement);
    assert_eq!(replicas.guard(&pod_ref(&a), none, healthy), Guard::Spare(&b.pod.key), "a new b, ready");
    replicas.deleted(&b.pod.key);
    assert!(matches!(replicas.guard(&pod_ref(&a), none, healthy), Guard::Last { .. }));
    // Another ReplicaSet of the same name (another UID) is another workload.
    let again = Owner::new(web.kind(), web.name(), "rs-2");
    replicas.applied(&replica("c", Some(&again), true));
    assert!(matches!(replicas.guard(&pod_ref(&a), none, healthy), Guard::Last { .. }));
}

#[test]
fn on_a_lost_node_a_replica_marked_not_ready_with_its_containers_ready_counts_as_ready() {
    // The node lifecycle controller lost n1: a and b, ready until then, are marked not ready; c,
    // not ready of its own before, is not counted; d on n2 (not lost) is marked by a readiness
    // gate, not counted.
    let web = Owner::new("ReplicaSet", "web", "rs");
    let (a, b) = (on("n1", "a", Some(&web), PodReady::Marked), on("n1", "b", Some(&web), PodReady::Marked));
    let (c, d) = (on("n1", "c", Some(&web), PodReady::No), on("n2", "d", Some(&web), PodReady::Marked));
    let mut replicas = Replicas::default();
    replicas.listed(&[a.clone(), b.clone(), c.clone(), d.clone()]);
    let lost = |node: &NodeName| node.as_str() == "n1";
    let none = |_: &PodKey| false;
    assert_eq!(replicas.guard(&pod_ref(&a), none, lost), Guard::Spare(&b.pod.key));
    let b_taken = |k: &PodKey| *k == b.pod.key;
    assert!(matches!(replicas.guard(&pod_ref(&a), b_taken, lost), Guard::Last { only: false, .. }));
    assert_eq!(replicas.guard(&pod_ref(&c), none, lost), Guard::Free, "not ready before its node was lost");
    assert_eq!(replicas.guard(&pod_ref(&d), none, lost), Guard::Free, "its node is not lost");
    // Nothing lost: marked pods are not ready.
    assert_eq!(replicas.guard(&pod_ref(&a), none, healthy), Guard::Free);
    // A workload of one pod: the only one.
    let solo = Owner::new("StatefulSet", "db", "ss");
    let db = on("n1", "db-0", Some(&solo), PodReady::Marked);
    replicas.applied(&db);
    assert!(matches!(replicas.guard(&pod_ref(&db), none, lost), Guard::Last { only: true, .. }));
}

// The loop asking it, on tokio's paused clock: the tests measure its time directly.
#[allow(clippy::disallowed_methods)]
mod in_the_loop;
