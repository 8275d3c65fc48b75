//! The node lifecycle controller's rules (docs/node-lifecycle.md) as cases v01–v20, derived from
//! kube-controller-manager's code and measured against the real one where noted, plus held and
//! controller-restart cases. Common setting: G = 40 s, P = 5 s, rate 0.1/s; the leader acquired its
//! Lease at 0.5 s, so passes start at t ≡ 0.6 s (mod 5 s). Times are seconds.

use std::time::Duration;

use super::*;
use crate::model::Effect;
use crate::model::{Taint, Toleration};
use crate::time::Timestamp;

/// The instant `seconds` after the epoch.
pub(crate) fn at(seconds: f64) -> Timestamp {
    #[allow(clippy::cast_possible_truncation)]
    Timestamp::from_nanos((seconds * 1e9).round() as i128)
}

/// `t` in seconds after the epoch.
pub(crate) fn secs(t: Timestamp) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let s = t.as_nanos() as f64 / 1e9;
    s
}

/// The whole second at or before `seconds`, as the API writes timestamps.
fn whole(seconds: f64) -> Timestamp {
    at(seconds.floor())
}

/// A cluster observed at `now` (seconds), its controller's leader since `acquired`.
pub(crate) struct Case {
    now: f64,
    nodes: Vec<NodeHealth>,
    pub(crate) flags: Flags,
    acquired: Option<f64>,
}

impl Case {
    pub(crate) fn at(now: f64) -> Self {
        // The rules, with the controller's own client unlimited: what it adds is checked apart
        // (`a_zone_past_the_clients_burst_is_drained_and_each_window_ends_that_much_later`).
        let flags = Flags { kube_api_qps: -1.0, ..Flags::defaults_for(29) };
        Self { now, nodes: Vec::new(), flags, acquired: Some(0.5) }
    }

    fn base(&self, name: &str, zone: &str) -> NodeHealth {
        NodeHealth {
            name: name.into(),
            zone: ZoneKey::new("r1", zone),
            excluded: false,
            created: Some(at(0.0)),
            ready: None,
            lease_renewed: None,
            taints: Vec::new().into(),
            down: false,
            ready_pods: 0,
        }
    }

    fn push(mut self, node: NodeHealth) -> Self {
        self.nodes.push(node);
        self
    }

    /// `count` healthy nodes in `zone` (lease renewed a second ago).
    pub(crate) fn healthy(mut self, zone: &str, count: usize) -> Self {
        for i in 0..count {
            let mut node = self.base(&format!("{zone}-ok{i}"), zone);
            node.ready = Some(ready(Ready::True, "KubeletReady", whole(self.now - 1.0), at(0.0)));
            node.lease_renewed = Some(at(self.now - 1.0));
            self.nodes.push(node);
        }
        self
    }

    /// A node whose kubelet renewed its lease last at `renew` (Ready still True).
    pub(crate) fn silent(self, name: &str, zone: &str, renew: f64) -> Self {
        let mut node = self.base(name, zone);
        node.ready = Some(ready(Ready::True, "KubeletReady", whole(renew), at(0.0)));
        node.lease_renewed = Some(at(renew));
        self.push(node)
    }

    /// A node the NLC marked Unknown at the pass `since`, heartbeats stopped well before.
    fn unknown(self, name: &str, zone: &str, since: f64) -> Self {
        let mut node = self.base(name, zone);
        node.ready = Some(ready(Ready::Unknown, "NodeStatusUnknown", whole(since - 41.0), whole(since)));
        node.lease_renewed = Some(at(since - 41.0));
        self.push(node)
    }

    fn taint(mut self, key: &str, added: f64) -> Self {
        let node = self.nodes.last_mut().expect("a node to taint");
        let taint = Taint::new(key, "", Effect::NoExecute).with_time_added(whole(added));
        node.taints = node.taints.iter().cloned().chain([taint]).collect();
        self
    }

    pub(crate) fn excluded(mut self) -> Self {
        self.nodes.last_mut().expect("a node").excluded = true;
        self
    }

    /// What the controller's leader and the nodes show at `now`: the leader renewed its Lease half
    /// a second before.
    pub(crate) fn observation(&self) -> Observation {
        let controller = self.acquired.map(|acquired| ControllerLease {
            acquired: Some(at(acquired)),
            renewed: Some(at(self.now - 0.5)),
            duration: Some(Duration::from_secs(15)),
        });
        Observation {
            now: at(self.now),
            nodes: self.nodes.clone(),
            controller,
            flags: self.flags,
            silent_after: Duration::from_secs(12),
        }
    }

    fn predict(&self) -> Prediction {
        predict(&self.observation())
    }
}

fn ready(status: Ready, reason: &str, heartbeat: Timestamp, transition: Timestamp) -> Box<ReadyCondition> {
    Box::new(ReadyCondition {
        status,
        reason: reason.into(),
        last_heartbeat: Some(heartbeat),
        last_transition: Some(transition),
    })
}

fn node<'a>(prediction: &'a Prediction, name: &str) -> &'a NodeForecast {
    prediction.nodes.iter().find(|node| node.name.as_str() == name).unwrap_or_else(|| panic!("node {name}"))
}

/// The window of the taint `forecast` predicts, in seconds.
fn taint_window(forecast: &NodeForecast) -> (f64, Option<f64>) {
    let name = &forecast.name;
    let taint = forecast.taint.unwrap_or_else(|| panic!("{name}: a predicted taint, got {forecast:?}"));
    (secs(taint.earliest), taint.latest.map(secs))
}

/// The predicted window of `name`, in seconds.
fn window(prediction: &Prediction, name: &str) -> (f64, Option<f64>) {
    taint_window(node(prediction, name))
}

/// `name` is predicted to be tainted in a window that contains `expected` and lies within
/// `[expected - before, expected + after]`.
#[track_caller]
fn assert_window(prediction: &Prediction, name: &str, expected: f64, before: f64, after: f64) {
    assert_taint_within(node(prediction, name), expected, before, after);
}

/// `forecast` is a taint in a window that contains `expected` and lies within
/// `[expected - before, expected + after]`.
#[track_caller]
pub(crate) fn assert_taint_within(forecast: &NodeForecast, expected: f64, before: f64, after: f64) {
    let name = &forecast.name;
    let (earliest, latest) = taint_window(forecast);
    let latest = latest.unwrap_or_else(|| panic!("{name}: a bounded window"));
    assert!(earliest <= expected && expected <= latest, "{name}: {expected} outside the window {earliest}..{latest}");
    assert!(
        earliest >= expected - before && latest <= expected + after,
        "{name}: window {earliest}..{latest} wider than {expected} -{before}/+{after}"
    );
}

#[track_caller]
fn assert_held(prediction: &Prediction, name: &str, reason: HeldReason) {
    let forecast = node(prediction, name);
    assert_eq!(forecast.held.as_ref().map(|held| held.reason), Some(reason), "{name}: {forecast:?}");
    assert_eq!(forecast.taint, None, "{name}");
}

#[test]
fn v01_single_silent_node_is_tainted_one_pass_after_unknown() {
    let p = Case::at(45.0).healthy("z", 6).silent("x", "z", 29.2).predict();
    assert!(p.phase_known);
    assert_window(&p, "x", 75.6, 0.6, 0.7);
    let taint = node(&p, "x").taint.expect("taint");
    assert_eq!((taint.key, taint.basis), (ConditionTaint::Unreachable, Basis::LostHeartbeat));
}

#[test]
fn v02_a_renewal_just_after_a_pass_waits_a_whole_pass_more() {
    let p = Case::at(45.0).healthy("z", 6).silent("x", "z", 30.7).predict();
    // 30.7 lies within the leader's informer-sync uncertainty of the pass at 30.6, so the window
    // also holds the earlier outcome (probe at a pass just after 30.7).
    assert_window(&p, "x", 80.6, 5.0, 0.7);
}

#[test]
fn v03_grace_of_fifty_seconds_from_1_32_moves_the_taint_ten_seconds() {
    let mut case = Case::at(45.0).healthy("z", 6).silent("x", "z", 29.2);
    case.flags = Flags::defaults_for(32);
    assert_window(&case.predict(), "x", 85.6, 0.6, 0.7);
}

#[test]
fn v04_simultaneous_failures_share_the_slots_in_any_order() {
    let p = Case::at(45.0)
        .healthy("z", 8)
        .silent("a", "z", 28.5)
        .silent("b", "z", 29.0)
        .silent("c", "z", 29.4)
        .silent("d", "z", 29.9)
        .predict();
    for name in ["a", "b", "c", "d"] {
        assert_window(&p, name, 75.6, 0.6, 31.0);
        assert_window(&p, name, 105.6, 31.0, 1.0);
        assert_eq!(node(&p, name).taint.expect("taint").queued_with, 3, "{name}");
    }
}

#[test]
fn v04_with_node_eviction_rate_0_the_first_node_is_tainted_and_then_none() {
    // Measured: the real kube-controller-manager 1.29 with --node-eviction-rate=0, five nodes in
    // one zone, two silent: it tainted the first and never the second. The zone's queue starts as a
    // token bucket of rate 0 and burst 1, and `SwapLimiter` keeps it (the rate does not change).
    // b's kubelet stops later: it is queued a pass after a is tainted.
    let mut case = Case::at(50.0).healthy("z", 3).silent("a", "z", 29.2).silent("b", "z", 36.0);
    case.flags.node_eviction_rate = 0.0;
    let p = case.predict();
    assert_window(&p, "a", 75.6, 0.6, 0.7);
    assert_held(&p, "b", HeldReason::NoEvictionRate);
    // With a taint in the zone seen, the token is spent: neither is tainted.
    let mut case = Case::at(50.0).healthy("z", 3).silent("a", "z", 29.2).silent("b", "z", 36.0);
    case.flags.node_eviction_rate = 0.0;
    let p = case.unknown("t", "z", 5.6).taint(UNREACHABLE, 10.2).predict();
    assert_held(&p, "a", HeldReason::NoEvictionRate);
    assert_held(&p, "b", HeldReason::NoEvictionRate);
}

#[test]
fn v05_a_recent_taint_in_the_zone_delays_the_first_slot() {
    let p = Case::at(70.3)
        .healthy("z", 7)
        .unknown("t", "z", 65.6)
        .taint(UNREACHABLE, 70.2)
        .silent("a", "z", 28.5)
        .silent("b", "z", 29.0)
        .silent("c", "z", 29.4)
        .silent("d", "z", 29.9)
        .predict();
    for name in ["a", "b", "c", "d"] {
        assert_window(&p, name, 80.2, 0.6, 31.5);
        assert_window(&p, name, 110.2, 31.0, 1.5);
    }
}

#[test]
fn v06_small_zone_partially_disrupted_is_held() {
    let p = Case::at(45.0)
        .healthy("z", 1)
        .silent("a", "z", 29.2)
        .silent("b", "z", 29.3)
        .silent("c", "z", 29.4)
        .healthy("y", 3)
        .predict();
    for name in ["a", "b", "c"] {
        assert_held(&p, name, HeldReason::PartialDisruption);
    }
}

#[test]
fn v07_a_node_two_passes_ahead_is_tainted_before_the_zone_tips() {
    let p = Case::at(45.0)
        .healthy("z", 1)
        .silent("a", "z", 19.2)
        .silent("b", "z", 29.3)
        .silent("c", "z", 29.4)
        .healthy("y", 3)
        .predict();
    assert_window(&p, "a", 65.6, 0.6, 0.7);
    assert_held(&p, "b", HeldReason::PartialDisruption);
    assert_held(&p, "c", HeldReason::PartialDisruption);
}

#[test]
fn v07_a_node_one_pass_ahead_is_queued_in_the_pass_that_tips_the_zone() {
    let p = Case::at(45.0)
        .healthy("z", 1)
        .silent("a", "z", 24.2)
        .silent("b", "z", 29.3)
        .silent("c", "z", 29.4)
        .healthy("y", 3)
        .predict();
    let a = node(&p, "a");
    assert!(a.held.is_some() || a.taint.is_some_and(|taint| taint.latest.is_none()), "{a:?}");
}

#[test]
fn v08_two_of_four_keeps_the_zone_normal() {
    let p = Case::at(45.0).healthy("z", 2).silent("a", "z", 29.2).silent("b", "z", 29.3).predict();
    for name in ["a", "b"] {
        assert_window(&p, name, 75.6, 0.6, 11.0);
        assert_window(&p, name, 85.6, 11.0, 0.8);
    }
}

#[test]
fn v09_large_zone_partially_disrupted_uses_the_secondary_rate() {
    let mut case = Case::at(45.0).healthy("z", 26);
    for i in 0..34 {
        case = case.silent(&format!("s{i:02}"), "z", 29.0 + f64::from(i) * 0.02);
    }
    let p = case.predict();
    for i in 0..34 {
        let name = format!("s{i:02}");
        assert_window(&p, &name, 75.6, 0.6, 3310.0);
        assert_window(&p, &name, 3375.6, 3310.0, 6.0);
    }
}

/// v09's zone under kube-controller-manager's own client at its defaults (20 requests a second,
/// bursts of 30): marking 34 nodes costs 136 requests (a status, an Event and a taint's two each),
/// 106 past the burst, 5.3 s. The passes no longer keep their period, so the zone is drained
/// rather than searched, and every window ends that much later at least. Seven nodes (28
/// requests) fit the burst: their windows are the exact ones.
#[test]
fn a_zone_past_the_clients_burst_is_drained_and_each_window_ends_that_much_later() {
    let silent = |count: u32| {
        let mut case = Case::at(45.0).healthy("z", 26);
        for i in 0..count {
            case = case.silent(&format!("s{i:02}"), "z", 29.0 + f64::from(i) * 0.02);
        }
        case
    };
    let default_client = |mut case: Case| {
        (case.flags.kube_api_qps, case.flags.kube_api_burst) = (20.0, 30);
        case
    };
    let (unlimited, limited) = (silent(34).predict(), default_client(silent(34)).predict());
    for i in 0..34 {
        let name = format!("s{i:02}");
        let exact = node(&unlimited, &name).taint.expect("tainted");
        let drained = node(&limited, &name).taint.expect("tainted");
        assert!(drained.drained && !exact.drained, "{name}: {drained:?}");
        assert!(drained.earliest <= exact.earliest, "{name}: {drained:?} after {exact:?}");
        let (exact_latest, drained_latest) = (exact.latest.expect("bounded"), drained.latest.expect("bounded"));
        assert!(secs(drained_latest) >= secs(exact_latest) + 5.3, "{name}: {drained:?} for {exact:?}");
    }
    assert_eq!(silent(7).predict().nodes, default_client(silent(7)).predict().nodes);
}

#[test]
fn v10_a_fully_down_small_zone_is_tainted_at_the_normal_rate() {
    let p = Case::at(45.0).healthy("y", 3).silent("a", "z", 29.2).silent("b", "z", 29.3).predict();
    assert_window(&p, "a", 75.6, 0.6, 11.0);
    assert_window(&p, "b", 85.6, 11.0, 0.8);
}

#[test]
fn v11_all_zones_down_holds_every_taint_and_removes_the_earlier_ones() {
    let p = Case::at(45.0)
        .unknown("t", "y", 20.6)
        .taint(UNREACHABLE, 25.6)
        .silent("a", "y", 29.2)
        .silent("b", "z", 29.3)
        .silent("c", "z", 29.4)
        .predict();
    for name in ["a", "b", "c", "t"] {
        assert_held(&p, name, HeldReason::AllZonesDown);
    }
}

#[test]
fn v12_an_excluded_healthy_node_does_not_keep_the_zones_up() {
    let p = Case::at(45.0).silent("a", "y", 29.2).silent("b", "z", 29.3).healthy("x", 1).excluded().predict();
    assert_held(&p, "a", HeldReason::AllZonesDown);
    assert_held(&p, "b", HeldReason::AllZonesDown);
}

#[test]
fn v12_an_excluded_node_still_counts_as_one_in_its_zone_queue() {
    let p = Case::at(45.0).healthy("z", 3).silent("a", "z", 29.2).excluded().predict();
    assert_window(&p, "a", 75.6, 0.6, 0.7);
    assert_eq!(p.zones[0].nodes, 3, "the excluded node is not counted");
}

#[test]
fn v13_leaving_all_zones_down_retaints_one_per_zone_per_interval_after_a_drained_bucket() {
    // h recovered at 200.0 (Ready=True again); the others are Unknown since 70.6, untainted.
    let mut case = Case::at(200.3)
        .unknown("a", "y", 70.6)
        .unknown("b", "y", 70.6)
        .unknown("c", "z", 70.6)
        .unknown("d", "z", 70.6)
        .healthy("z", 1);
    case.nodes.last_mut().expect("h").ready = Some(ready(Ready::True, "KubeletReady", whole(200.0), whole(200.0)));
    let p = case.predict();
    // The recovery's `lastTransitionTime` is whole seconds (200 ≤ post < 201): the exit pass is 200.6
    // or 205.6, hence 6 s more at the late end.
    for name in ["a", "b"] {
        assert_window(&p, name, 210.6, 11.0, 16.0);
        assert_window(&p, name, 220.6, 21.0, 6.0);
    }
    // Zone z (2 nodes, 1 ready) is Normal too; y is Full while z is not.
    assert_window(&p, "c", 210.6, 11.0, 16.0);
}

#[test]
fn v14_a_recovered_node_is_not_predicted_a_taint() {
    let mut case = Case::at(100.3).healthy("z", 3);
    case.nodes.last_mut().expect("n").taints = [Taint::new(UNREACHABLE, "", Effect::NoExecute)].into();
    let p = case.predict();
    let n = &p.nodes[2];
    assert_eq!((n.taint, n.held.clone()), (None, None));
}

#[test]
fn v15_a_tainted_unknown_node_renewing_its_lease_keeps_its_taint() {
    let mut case = Case::at(100.0).healthy("z", 3).unknown("x", "z", 70.6).taint(UNREACHABLE, 75.6);
    case.nodes.last_mut().expect("x").lease_renewed = Some(at(99.0));
    let p = case.predict();
    assert_eq!((node(&p, "x").taint, node(&p, "x").held.clone()), (None, None));
}

#[test]
fn v16_ready_false_is_queued_at_the_next_pass_without_grace() {
    let mut case = Case::at(43.0).healthy("z", 3);
    let mut x = case.base("x", "z");
    x.ready = Some(ready(Ready::False, "KubeletNotReady", whole(42.0), whole(42.0)));
    x.lease_renewed = Some(at(42.5));
    case = case.push(x);
    let p = case.predict();
    assert_window(&p, "x", 45.6, 0.6, 0.7);
    let taint = node(&p, "x").taint.expect("taint");
    assert_eq!((taint.key, taint.basis), (ConditionTaint::NotReady, Basis::NotReady));
}

#[test]
fn v17_unreachable_swaps_to_not_ready_at_the_next_pass_without_a_token() {
    let mut case = Case::at(130.2).healthy("z", 3).unknown("t", "z", 120.6).taint(UNREACHABLE, 125.6);
    let mut x = case.base("x", "z");
    x.ready = Some(ready(Ready::False, "KubeletNotReady", whole(130.0), whole(130.0)));
    x.lease_renewed = Some(at(130.0));
    x.taints = [Taint::new(UNREACHABLE, "", Effect::NoExecute).with_time_added(whole(75.6))].into();
    case = case.push(x);
    let p = case.predict();
    // The zone's token went at 125.6, yet the swap does not wait for the next one.
    assert_window(&p, "x", 130.6, 0.6, 0.7);
    assert_eq!(node(&p, "x").taint.expect("taint").key, ConditionTaint::NotReady);
}

#[test]
fn v18_a_new_leader_removes_and_readds_taints_and_restarts_silent_countdowns() {
    let mut case =
        Case::at(300.55).healthy("z", 4).unknown("x", "z", 70.6).taint(UNREACHABLE, 75.6).silent("y", "z", 280.0);
    case.acquired = Some(300.5);
    let p = case.predict();
    let x = node(&p, "x").taint.expect("x re-tainted");
    assert_eq!(x.basis, Basis::ControllerRestart);
    assert_window(&p, "x", 300.7, 0.6, 11.0);
    let y = node(&p, "y").taint.expect("y tainted");
    assert_eq!(y.basis, Basis::ControllerRestart);
    assert_window(&p, "y", 345.6, 0.6, 0.8);
}

#[test]
fn v19_a_node_that_never_posts_status_is_tainted_after_the_startup_grace() {
    let mut case = Case::at(30.0).healthy("z", 3);
    let x = case.base("x", "z");
    case = case.push(x);
    let p = case.predict();
    // creationTimestamp is whole seconds: the node may have been created up to 1 s later.
    assert_window(&p, "x", 60.65, 0.7, 5.6);
    assert_eq!(node(&p, "x").taint.expect("taint").basis, Basis::NeverReady);
}

#[test]
fn v19_a_node_that_never_posts_status_but_renews_its_lease_is_never_tainted() {
    let mut case = Case::at(30.0).healthy("z", 3);
    let mut x = case.base("x", "z");
    x.lease_renewed = Some(at(29.0));
    case = case.push(x);
    let p = case.predict();
    assert_eq!((node(&p, "x").taint, node(&p, "x").held.clone()), (None, None));
}

#[test]
fn v20_a_recovery_that_ends_partial_disruption_releases_the_zone_after_one_interval() {
    // a, b and r were queued since 75.6 in a zone of 4 (3/4: partial, rate 0); r recovered at 150.0.
    let mut case = Case::at(150.3).healthy("z", 1).unknown("a", "z", 70.6).unknown("b", "z", 70.6).healthy("z", 1);
    case.nodes.last_mut().expect("r").ready = Some(ready(Ready::True, "KubeletReady", whole(150.0), whole(150.0)));
    let p = case.predict();
    for name in ["a", "b"] {
        // As in v13, the recovery's whole-second timestamp leaves the exit pass at 150.6 or 155.6.
        assert_window(&p, name, 160.6, 1.0, 16.0);
        assert_window(&p, name, 170.6, 11.0, 6.0);
    }
}

#[test]
fn zones_report_their_state_size_and_rate() {
    let p = Case::at(100.0)
        .healthy("z", 1)
        .unknown("a", "z", 70.6)
        .unknown("b", "z", 70.6)
        .unknown("c", "z", 70.6)
        .healthy("y", 2)
        .predict();
    let states: Vec<(&str, ZoneState, usize, usize, f32)> =
        p.zones.iter().map(|z| (z.zone.name(), z.state, z.nodes, z.not_ready, z.rate_per_second)).collect();
    assert_eq!(states, [("y", ZoneState::Normal, 2, 0, 0.1), ("z", ZoneState::PartialDisruption, 4, 3, 0.0)]);
}

#[test]
fn without_a_controller_lease_the_window_spans_one_monitor_period() {
    let mut case = Case::at(45.0).healthy("z", 6).silent("x", "z", 29.2);
    case.acquired = None;
    let p = case.predict();
    assert!(!p.phase_known);
    assert_window(&p, "x", 75.6, 6.0, 6.0);
    let (earliest, latest) = window(&p, "x");
    let width = latest.expect("bounded") - earliest;
    // One period, plus the second that the truncated `lastHeartbeatTime` may hide.
    assert!(width <= 6.1, "width {width}");
}

#[test]
fn a_dead_leader_leaves_the_latest_instant_open() {
    let mut case = Case::at(45.0).healthy("z", 6).silent("x", "z", 29.2);
    case.acquired = Some(0.5);
    let mut p = case.predict();
    assert!(window(&p, "x").1.is_some());
    let controller =
        ControllerLease { acquired: Some(at(0.5)), renewed: Some(at(20.0)), duration: Some(Duration::from_secs(15)) };
    p = predict(&Observation {
        now: at(45.0),
        nodes: case.nodes.clone(),
        controller: Some(controller),
        flags: case.flags,
        silent_after: Duration::from_secs(12),
    });
    let taint = node(&p, "x").taint.expect("taint");
    assert_eq!((taint.basis, taint.latest), (Basis::ControllerRestart, None));
}

#[test]
fn defaults_follow_the_server_version() {
    assert_eq!(Flags::defaults_for(31).node_monitor_grace_period, Duration::from_secs(40));
    assert_eq!(Flags::defaults_for(32).node_monitor_grace_period, Duration::from_secs(50));
}

#[test]
fn zone_keys_prefer_the_beta_labels_like_upstream() {
    let labels = [
        ("topology.kubernetes.io/zone", "ga"),
        ("failure-domain.beta.kubernetes.io/zone", "beta"),
        ("topology.kubernetes.io/region", "r"),
    ];
    let key = ZoneKey::from_labels(|name| labels.iter().find(|l| l.0 == name).map(|l| l.1));
    assert_eq!(key, ZoneKey::new("r", "beta"));
    assert_eq!(ZoneKey::from_labels(|_| None).name(), "");
}

#[test]
fn pods_are_deleted_after_the_predicted_taint_by_their_toleration() {
    let taint = PredictedTaint {
        key: ConditionTaint::Unreachable,
        earliest: at(75.0),
        latest: Some(at(76.0)),
        basis: Basis::LostHeartbeat,
        queued_with: 0,
        drained: false,
    };
    let toleration = |seconds| Toleration {
        key: UNREACHABLE.into(),
        operator: "Exists".into(),
        value: Box::default(),
        effect: Some(Effect::NoExecute),
        seconds,
    };
    let window = |tolerations: &[Toleration]| deletion(&taint, &[], tolerations).map(|d| (d.earliest, d.latest));
    assert_eq!(window(&[toleration(Some(300))]), Some((at(375.0), Some(at(376.0)))));
    assert_eq!(window(&[]), Some((at(75.0), Some(at(76.0)))));
    assert_eq!(window(&[toleration(None)]), None);
    // Another NoExecute taint the pod does not tolerate: deleted as soon as the node is tainted.
    let other = Taint::new("dedicated", "x", Effect::NoExecute);
    let deleted = deletion(&taint, &[other], &[toleration(Some(300))]).expect("deleted");
    assert_eq!((deleted.earliest, deleted.latest), (at(75.0), Some(at(76.0))));
}

#[test]
fn without_its_lease_a_ready_node_is_not_called_silent() {
    let mut case = Case::at(100.0).healthy("z", 3).silent("x", "z", 29.2);
    case.nodes.last_mut().expect("x").lease_renewed = None;
    let p = case.predict();
    assert_eq!((node(&p, "x").taint, node(&p, "x").held.clone()), (None, None));
    // Once the controller has marked it Unknown, the taint is one pass away.
    let mut case = Case::at(71.0).healthy("z", 3).unknown("x", "z", 70.6);
    case.nodes.last_mut().expect("x").lease_renewed = None;
    assert_window(&case.predict(), "x", 75.6, 0.6, 0.7);
}

/// `plan --down`: a healthy node whose kubelet goes silent now is predicted as a node silent since
/// its last heartbeat recorded, or since now: the window spans both (docs/game-day.md; v01 as a what-if).
#[test]
fn down_a_healthy_node_goes_silent_between_its_last_heartbeat_and_now() {
    // v01 as a what-if: the lease was renewed at 100 s, the snapshot is at 103 s.
    let mut case = Case::at(103.0).healthy("z1", 2).silent("n1", "z1", 100.0);
    case.nodes.last_mut().expect("n1").down = true;
    let down = window(&case.predict(), "n1");
    // The same node really silent since 100 s, or since 103 s, observed later.
    let since = |renew: f64| window(&Case::at(renew + 20.0).healthy("z1", 2).silent("n1", "z1", renew).predict(), "n1");
    let (from_last, from_now) = (since(100.0), since(103.0));
    assert_eq!(down.0, from_last.0, "the earliest: silent since the last heartbeat recorded");
    assert_eq!(down.1, from_now.1, "the latest: silent from now");
    // Without the what-if, the node is healthy: nothing is predicted.
    let healthy = Case::at(103.0).healthy("z1", 2).silent("n1", "z1", 100.0).predict();
    assert_eq!(node(&healthy, "n1").taint, None);
}

#[test]
fn down_nodes_of_a_whole_small_zone_are_each_predicted_a_taint() {
    // Two of two nodes of a small zone go down: the zone is fully disrupted and tainted at the
    // normal rate (v10), where one of three down leaves it normal.
    let mut case = Case::at(103.0).silent("a1", "z1", 100.0).silent("a2", "z1", 100.0).healthy("z2", 3);
    for node in &mut case.nodes[..2] {
        node.down = true;
    }
    let prediction = case.predict();
    assert!(node(&prediction, "a1").taint.is_some() && node(&prediction, "a2").taint.is_some());
    let zone = prediction.zones.iter().find(|z| z.zone == ZoneKey::new("r1", "z1")).expect("z1");
    assert_eq!(zone.not_ready, 0, "not ready only once the controller marks them");
}

// The vectors again as what-ifs (`plan --down`): a healthy snapshot at 30.0, the nodes that fail in
// the vector renewed their Lease last between 28.5 and 29.9 and go down now. Every instant from
// the last renewal to now falls before the pass at 30.6, so each outcome is the vector's own.

/// Marks `names` as going down now.
fn down(mut case: Case, names: &[&str]) -> Case {
    for node in case.nodes.iter_mut().filter(|node| names.contains(&node.name.as_str())) {
        node.down = true;
    }
    case
}

#[test]
fn down_v04_four_of_twelve_share_the_slots_in_any_order() {
    let case = Case::at(30.0)
        .healthy("z", 8)
        .silent("a", "z", 28.5)
        .silent("b", "z", 29.0)
        .silent("c", "z", 29.4)
        .silent("d", "z", 29.9);
    let p = down(case, &["a", "b", "c", "d"]).predict();
    for name in ["a", "b", "c", "d"] {
        assert_window(&p, name, 75.6, 0.6, 31.0);
        assert_window(&p, name, 105.6, 31.0, 1.0);
    }
}

#[test]
fn down_v06_three_of_a_small_zone_of_four_are_held() {
    let case = Case::at(30.0)
        .healthy("z", 1)
        .silent("a", "z", 29.2)
        .silent("b", "z", 29.3)
        .silent("c", "z", 29.4)
        .healthy("y", 3);
    let p = down(case, &["a", "b", "c"]).predict();
    for name in ["a", "b", "c"] {
        assert_held(&p, name, HeldReason::PartialDisruption);
    }
}

#[test]
fn down_v08_two_of_four_keep_the_zone_normal() {
    let case = Case::at(30.0).healthy("z", 2).silent("a", "z", 29.2).silent("b", "z", 29.3);
    let p = down(case, &["a", "b"]).predict();
    for name in ["a", "b"] {
        assert_window(&p, name, 75.6, 0.6, 11.0);
        assert_window(&p, name, 85.6, 11.0, 0.8);
    }
}

#[test]
fn down_v09_34_of_a_large_zone_of_60_go_at_the_secondary_rate() {
    let mut case = Case::at(30.0).healthy("z", 26);
    let names: Vec<String> = (0..34).map(|i| format!("s{i:02}")).collect();
    for (i, name) in (0..).zip(&names) {
        case = case.silent(name, "z", 29.0 + f64::from(i) * 0.02);
    }
    let p = down(case, &names.iter().map(String::as_str).collect::<Vec<_>>()).predict();
    for name in &names {
        assert_window(&p, name, 75.6, 0.6, 3310.0);
        assert_window(&p, name, 3375.6, 3310.0, 6.0);
    }
}

#[test]
fn down_v10_a_small_zone_down_whole_is_tainted_at_the_normal_rate() {
    let case = Case::at(30.0).healthy("y", 3).silent("a", "z", 29.2).silent("b", "z", 29.3);
    let p = down(case, &["a", "b"]).predict();
    assert_window(&p, "a", 75.6, 0.6, 11.0);
    assert_window(&p, "b", 85.6, 11.0, 0.8);
}

#[test]
fn down_v11_every_zone_down_holds_every_taint() {
    let case = Case::at(30.0).silent("a", "y", 29.2).silent("b", "z", 29.3).silent("c", "z", 29.4);
    let p = down(case, &["a", "b", "c"]).predict();
    for name in ["a", "b", "c"] {
        assert_held(&p, name, HeldReason::AllZonesDown);
    }
}

#[test]
fn down_v12_an_excluded_healthy_node_does_not_keep_the_zones_up() {
    let case = Case::at(30.0).silent("a", "y", 29.2).silent("b", "z", 29.3).healthy("x", 1).excluded();
    let p = down(case, &["a", "b"]).predict();
    assert_held(&p, "a", HeldReason::AllZonesDown);
    assert_held(&p, "b", HeldReason::AllZonesDown);
}

impl Case {
    /// The observation [`Case::predict`] reads, evaluated at `later` instead (a dump read late).
    fn read_at(&self, later: f64) -> Observation {
        let controller = ControllerLease {
            acquired: self.acquired.map(at),
            renewed: Some(at(self.now - 0.5)),
            duration: Some(Duration::from_secs(15)),
        };
        Observation {
            now: at(later),
            nodes: self.nodes.clone(),
            controller: Some(controller),
            flags: self.flags,
            silent_after: Duration::from_secs(12),
        }
    }
}

#[test]
fn a_dump_read_late_is_judged_when_it_was_taken() {
    // v01's cluster: six healthy nodes and x, silent since 29.2, dumped at 45.
    let case = Case::at(45.0).healthy("z", 6).silent("x", "z", 29.2);
    let fresh = case.predict();
    for later in [45.0, 65.0, 45.0 + 300.0, 45.0 + 86_400.0] {
        let mut observation = case.read_at(later);
        let taken = observation.judge_when_taken();
        // The controller's renewal is the newest; read within `silent_after`, as if read now.
        assert_eq!(taken.map(secs), (later > 45.0).then_some(44.5), "read at {later}");
        assert_eq!(unsettled(&observation), 1, "only x is silent, read at {later}");
        let late = predict(&observation);
        assert_eq!(node(&late, "x").taint, node(&fresh, "x").taint, "x's window stays where it was, read at {later}");
        assert!(late.nodes.iter().all(|n| n.held.is_none()), "nothing held, read at {later}");
        assert!(late.zones.iter().all(|z| z.state == ZoneState::Normal), "read at {later}: {:?}", late.zones);
    }
    // Judged when read, a day later every node looks silent.
    assert_eq!(unsettled(&case.read_at(45.0 + 86_400.0)), 7);
}

#[test]
fn a_what_if_on_a_dump_read_late_carries_the_healthy_nodes_forward_to_now() {
    let mut case = Case::at(45.0).healthy("z", 6).silent("x", "z", 29.2);
    case.nodes[0].down = true;
    let later = 45.0 + 86_400.0;
    let mut observation = case.read_at(later);
    assert_eq!(observation.carry_forward().map(secs), Some(44.5));
    // x (silent then) and the node going down now; the five others heartbeat on, as does the leader.
    assert_eq!(unsettled(&observation), 2);
    let renewed = observation.controller.as_ref().and_then(|lease| lease.renewed);
    assert_eq!(renewed.map(secs), Some(later));
    let p = predict(&observation);
    let down = node(&p, case.nodes[0].name.as_str()).taint.expect("the node going down is tainted");
    assert!(secs(down.earliest) > later, "after it goes down now: {down:?}");
}

#[test]
fn without_the_controller_lease_a_dump_is_read_late_only_past_the_grace_and_a_pass() {
    // Every kubelet silent since 29.2 in a fresh dump looks like a dump read late; only the
    // controller's own marks (or their absence past the grace period) tell them apart.
    let case = Case::at(45.0).healthy("z", 6).silent("x", "z", 29.2);
    let without = |later: f64| Observation { controller: None, ..case.read_at(later) };
    assert_eq!(without(45.0 + 20.0).read_late(), None, "20 s: kubelets may all have gone silent");
    assert_eq!(without(45.0 + 300.0).read_late().map(secs), Some(44.0), "5 min: the dump is old");
    assert_eq!(case.read_at(45.0 + 20.0).read_late().map(secs), Some(44.5), "with the Lease: old at once");
}
