//! The node lifecycle controller's cases (v01–v20, `lifecycle/vectors.rs`, docs/node-lifecycle.md)
//! replayed as `audit` scenarios (docs/audit.md). Each case observes a cluster some time after some
//! kubelets went silent; an audit asks, of a healthy cluster, what happens if a zone's or a node's
//! kubelets go silent now. So each case whose failing nodes are one node or one whole zone is built
//! again as the healthy cluster at the instant their heartbeats stopped (the failing nodes renewing
//! their Lease up to that instant, every other node as in the case, `now` that instant), audited, and
//! the scenario of that node or zone must predict the case's outcome: each failing node tainted
//! inside the case's window, and an owner with all its pods on them losing every replica.
//!
//! The cases left out, none an outage of one node or one whole zone:
//! - v04 (both), v05, v06, v07 (both), v08, v09: several nodes of a zone, not all of it (four of
//!   twelve, two of five at rate 0, three of four, two of four, 34 of 60);
//! - v11: every node of two zones, one of them silent and tainted before the others failed;
//! - v12's first: two zones, each down whole (an audit takes one zone at a time);
//! - v13, v20: nodes coming back after an outage; v14: a node back; v15: a tainted node renewing
//!   its Lease again: nothing goes silent there;
//! - v16, v17: a kubelet reporting `Ready=False`, not one gone silent;
//! - v18: a new leader of the controller, restarting its countdowns;
//! - v19 (both): a node that never posted its status.
//!
//! Every case held back (v04's rate 0, v06, v07, v11, v12's first) is among them: each case replayed
//! here expects its nodes tainted.

use crate::audit::scenarios::tests::{bound_pod, owner};
use crate::audit::{Down, Outcome, Setting, scenarios};
use crate::lifecycle::vectors::{Case, assert_taint_within, at, secs};
use crate::lifecycle::{Basis, ConditionTaint, Flags, ZoneKey};
use crate::plan::OwnerLoss;
use crate::replay::Host;
use crate::snapshot::{Owner, Snapshot, SnapshotNode, SnapshotPod};
use crate::time::{NANOS_PER_SECOND, Timestamp};

/// How much wider than the case's own bounds the scenario's window may be, in seconds. The audit
/// takes a node going down as last heard of at any instant from its last heartbeat recorded up to
/// `now`; built at the instant its heartbeats stopped, both are that instant, which leaves the case's
/// own uncertainty (the whole second `lastHeartbeatTime` hides, the pass phase), already within its
/// bounds. What remains is the prediction's sampling of the pass phase, from another `now`: it
/// samples the phase every 20 ms and widens each window by as much (`lifecycle/predict.rs`), so an
/// end may move by that much (by 16 ms at most in these cases).
const WIDER: f64 = 0.02;

/// The pods' `tolerationSeconds` for `unreachable` and `not-ready` (the API server's default).
const TOLERATION_SECONDS: i64 = 300;

/// One failing node's expectation, as its case states it: tainted (`unreachable`, for a lost
/// heartbeat) in a window that contains `at` and lies within `[at - before, at + after]`.
struct Tainted {
    node: &'static str,
    at: f64,
    before: f64,
    after: f64,
}

const fn tainted(node: &'static str, at: f64, before: f64, after: f64) -> Tainted {
    Tainted { node, at, before, after }
}

/// A pod bound at the cases' start, with `DefaultTolerationSeconds`' tolerations.
fn pod(name: &str, node: &str, owner: &Owner) -> SnapshotPod {
    bound_pod(name, node, owner, at(0.0))
}

/// `instant` plus the pods' toleration.
fn tolerated(instant: Timestamp) -> Timestamp {
    instant.add_nanos(TOLERATION_SECONDS * NANOS_PER_SECOND)
}

/// The loss of the owner `name` in `owners`.
fn loss<'o, 'a>(owners: &'o [OwnerLoss<'a>], name: &str) -> &'o OwnerLoss<'a> {
    owners.iter().find(|loss| loss.owner.name() == name).unwrap_or_else(|| panic!("{name} loses pods: {owners:?}"))
}

/// Audits `case` (the healthy cluster at the instant its failing nodes stopped), takes the scenario
/// of `down` and checks it against the case's expectations: each failing node's window, and the
/// owners. `gone` owns one pod on each failing node; `spread`, one on the first failing node and one
/// on a node that stays up.
#[track_caller]
fn replay(label: &str, case: &Case, down: &Down, expected: &[Tainted]) {
    let observation = case.observation();
    let failing: Vec<&str> = expected.iter().map(|e| e.node).collect();
    let up = observation.nodes.iter().find(|n| !failing.contains(&n.name.as_str())).expect("a node staying up");
    let (gone, spread) = (owner("ReplicaSet", "gone"), owner("ReplicaSet", "spread"));
    let mut pods: Vec<SnapshotPod> = failing.iter().map(|node| pod(&format!("gone-{node}"), node, &gone)).collect();
    pods.push(pod("spread-0", failing[0], &spread));
    pods.push(pod("spread-1", up.name.as_str(), &spread));
    let snapshot = Snapshot {
        nodes: observation.nodes.iter().map(|n| SnapshotNode::new(n.name.clone(), Default::default(), [])).collect(),
        pods,
        ..Snapshot::default()
    };
    let setting =
        Setting { observation: &observation, max_unsettled: 200, namespace: None, only: None, host: Host::default() };
    let scenarios = scenarios(&snapshot, &setting);
    let scenario =
        scenarios.iter().find(|s| &s.down == down).unwrap_or_else(|| panic!("{label}: no scenario {down:?}"));
    let Outcome::Predicted { owners, nodes } = &scenario.outcome;

    let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, failing, "{label}: the nodes going down");
    for (forecast, expected) in nodes.iter().zip(expected) {
        assert_eq!(forecast.held, None, "{label}: {forecast:?}");
        let taint = forecast.taint.unwrap_or_else(|| panic!("{label}: {} not tainted", forecast.name));
        assert_eq!((taint.key, taint.basis), (ConditionTaint::Unreachable, Basis::LostHeartbeat), "{label}");
        assert_taint_within(forecast, expected.at, expected.before + WIDER, expected.after + WIDER);
    }

    // Every failing node tainted: `gone` loses every replica, each `tolerationSeconds` after its
    // node's taint; `spread` keeps the one on the node staying up.
    let taints: Vec<_> = nodes.iter().filter_map(|n| n.taint).collect();
    let earliest = taints.iter().map(|t| t.earliest).min().expect("a taint");
    let latest = taints.iter().map(|t| t.latest.expect("a bounded window")).max().expect("a taint");
    let lost = loss(owners, "gone");
    let failing = u32::try_from(failing.len()).expect("a few pods");
    assert_eq!((lost.deleted, lost.pods, lost.none_left()), (failing, failing, true), "{label}: {lost:?}");
    assert_eq!(lost.first, tolerated(earliest), "{label}: the first of gone's deletions");
    assert_eq!(lost.last.map(secs), Some(secs(tolerated(latest))), "{label}: the last of gone's deletions");
    let kept = loss(owners, "spread");
    assert_eq!((kept.deleted, kept.pods, kept.none_left()), (1, 2, false), "{label}: {kept:?}");
    assert_eq!(kept.last, taints[0].latest.map(tolerated), "{label}: spread's deletion");
    assert_eq!(owners.len(), 2, "{label}: {owners:?}");
}

#[test]
fn v01_a_single_node_going_silent_is_tainted_one_pass_after_unknown() {
    let case = Case::at(29.2).healthy("z", 6).silent("x", "z", 29.2);
    replay("v01", &case, &Down::Node("x".into()), &[tainted("x", 75.6, 0.6, 0.7)]);
}

#[test]
fn v02_a_node_going_silent_just_after_a_pass_waits_a_whole_pass_more() {
    let case = Case::at(30.7).healthy("z", 6).silent("x", "z", 30.7);
    replay("v02", &case, &Down::Node("x".into()), &[tainted("x", 80.6, 5.0, 0.7)]);
}

#[test]
fn v03_from_1_32_a_node_going_silent_is_tainted_ten_seconds_later() {
    let mut case = Case::at(29.2).healthy("z", 6).silent("x", "z", 29.2);
    case.flags = Flags::defaults_for(32);
    replay("v03", &case, &Down::Node("x".into()), &[tainted("x", 85.6, 0.6, 0.7)]);
}

#[test]
fn v10_a_small_zone_going_down_whole_is_tainted_at_the_normal_rate() {
    // The zone's heartbeats stop at 29.3, a's a tenth of a second before (as in the case; both
    // within the whole second their `lastHeartbeatTime` hides, so the order is the queue's).
    let case = Case::at(29.3).healthy("y", 3).silent("a", "z", 29.2).silent("b", "z", 29.3);
    let expected = [tainted("a", 75.6, 0.6, 11.0), tainted("b", 85.6, 11.0, 0.8)];
    replay("v10", &case, &Down::Zone(ZoneKey::new("r1", "z")), &expected);
}

#[test]
fn v12_an_excluded_node_going_silent_still_counts_as_one_in_its_zone_queue() {
    let case = Case::at(29.2).healthy("z", 3).silent("a", "z", 29.2).excluded();
    replay("v12", &case, &Down::Node("a".into()), &[tainted("a", 75.6, 0.6, 0.7)]);
}
