//! Watch faults on the real server: kube-apiserver restarting under a running `run`, and a resume
//! from a compacted resourceVersion (410 Gone): nothing missed, nothing deleted twice.

use super::{node, pod};
use crate::control_plane;
use crate::real_apiserver::run::{add_taint, deleted, deletions, server_pod};
use crate::support::running::Running;

#[test]
fn real_apiserver_restart_under_run_misses_nothing_and_deletes_once() {
    let mut plane = control_plane!("fault-restart");
    plane.create(&[node("n1", &[], &[]), node("n2", &[], &[]), pod("default", "early", "n1", None)]);
    let mut run = Running::start_with(plane.kubeconfig(), &[]);
    add_taint(&plane, "n1");
    run.expect("early deleted", |l| deleted(l, "early"));

    plane.restart_apiserver();
    // Made after the restart: seen only through the watch run re-establishes.
    plane.create(&[pod("default", "late", "n2", None), pod("default", "late-on-tainted", "n1", None)]);
    add_taint(&plane, "n2");
    run.expect("late deleted", |l| deleted(l, "late"));
    run.expect("late-on-tainted deleted", |l| deleted(l, "late-on-tainted"));
    let (summary, code, lines) = run.interrupt_and_read();
    assert_eq!(code, 0);
    for name in ["early", "late", "late-on-tainted"] {
        assert_eq!(deletions(&lines, name), 1, "{name} deleted once: {summary}");
    }
}

#[test]
fn real_apiserver_resume_after_compaction_relists_and_misses_nothing() {
    let mut plane = control_plane!("fault-compaction");
    plane.create(&[node("n1", &[], &[]), node("n2", &[], &[]), pod("default", "before", "n1", None)]);
    let mut run = Running::start_with(plane.kubeconfig(), &[]);
    add_taint(&plane, "n1");
    run.expect("before deleted", |l| deleted(l, "before"));

    // Stopped, run cannot follow: its watches break with the first restart, the changes are made
    // while it cannot see them, etcd forgets the history and the second restart empties the watch
    // cache. It resumes from a resourceVersion the server no longer has: 410 Gone, then a new LIST.
    run.signal("-STOP");
    plane.restart_apiserver();
    plane.create(&[pod("default", "unseen", "n2", None), pod("default", "unseen-on-tainted", "n1", None)]);
    add_taint(&plane, "n2");
    let revision = plane.compact_etcd();
    assert!(revision > 0);
    plane.restart_apiserver();
    run.signal("-CONT");

    run.expect("unseen deleted", |l| deleted(l, "unseen"));
    run.expect("unseen-on-tainted deleted", |l| deleted(l, "unseen-on-tainted"));
    let (_, code, lines) = run.interrupt_and_read();
    assert_eq!(code, 0);
    for name in ["before", "unseen", "unseen-on-tainted"] {
        assert_eq!(deletions(&lines, name), 1, "{name} deleted once: {lines:#?}");
        let pod = server_pod(&plane, "default", name).expect("terminating");
        assert!(pod["metadata"]["deletionTimestamp"].is_string());
    }
}
