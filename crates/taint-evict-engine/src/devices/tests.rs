//! The device-taint rules of `device-taints.md`, one test per rule id or upstream case
//! (`TestController`'s table: the fixture's pod `my-pod` with claim `my-claim`, device
//! `some-driver/worker/instance`, taints at T0).

use std::collections::HashMap;

use super::*;
use crate::model::{Effect, PodKey, Taint, Toleration, Uid};
use crate::time::Timestamp;

const T0: i64 = 946_684_800; // 2000-01-01T00:00:00Z, as upstream's fixture

fn t(offset: i64) -> Timestamp {
    Timestamp::from_unix_seconds(T0 + offset)
}

fn no_execute(key: &str, value: &str) -> Taint {
    Taint::new(key, value, Effect::NoExecute).with_time_added(t(0))
}

fn tol(key: &str, operator: &str, effect: &str, seconds: Option<i64>) -> Toleration {
    Toleration {
        key: key.into(),
        operator: operator.into(),
        value: "".into(),
        effect: (!effect.is_empty()).then(|| effect.into()),
        seconds,
    }
}

fn id(device: &str) -> DeviceId {
    DeviceId { driver: "some-driver".into(), pool: "worker".into(), device: device.into() }
}

fn slice(name: &str, generation: i64, devices: &[(&str, Vec<Taint>)]) -> Slice {
    Slice {
        name: name.into(),
        driver: "some-driver".into(),
        pool: "worker".into(),
        generation,
        devices: devices.iter().map(|(n, taints)| SliceDevice { name: (*n).into(), taints: taints.clone() }).collect(),
    }
}

fn rule(name: &str, selector: Option<RuleSelector>, taint: Taint) -> Rule {
    Rule { name: name.into(), selector, taint }
}

fn all_devices() -> Option<RuleSelector> {
    Some(RuleSelector::default())
}

fn pod_uid() -> Uid {
    Uid::from("pod-uid")
}

fn key() -> PodKey {
    PodKey::new("default", "my-pod")
}

/// `my-claim`, allocated `instance` with `tolerations`, owned by and reserved for the pod.
fn claim(tolerations: Vec<Toleration>) -> Claim {
    Claim {
        namespace: "default".into(),
        name: "my-claim".into(),
        owner: Some(pod_uid()),
        allocation: Some(vec![Allocated { request: "req-1".into(), device: id("instance"), tolerations }]),
        reserved_for: vec![Consumer::pod("my-pod", pod_uid())],
        requested_tolerations: 0,
    }
}

fn by_name() -> Vec<ClaimUse> {
    vec![ClaimUse { entry: "my-claim".into(), claim: Some("my-claim".into()), via: Via::Name }]
}

fn devices(slices: Vec<Slice>, claims: Vec<Claim>, rules: Vec<Rule>, uses: Vec<ClaimUse>) -> Devices {
    Devices { slices, claims, rules, uses: HashMap::from([(key(), uses)]) }
}

fn report(devices: &Devices, minor: u32) -> DeviceReport {
    DeviceTaints::new(devices, minor).pod(&key(), &pod_uid())
}

fn deadline(devices: &Devices, minor: u32) -> Option<Timestamp> {
    report(devices, minor).deciding().and_then(|e| e.deadline)
}

fn tainted_slice() -> Vec<Slice> {
    vec![slice("slice", 1, &[("instance", vec![no_execute("example.com/taint", "")])])]
}

#[test]
fn evict_pod_resourceclaim_at_the_taints_time_added() {
    let d = devices(tainted_slice(), vec![claim(vec![])], vec![], by_name());
    let r = report(&d, 36);
    assert_eq!(r.claims[0].skipped, None);
    let deciding = r.deciding().expect("a deadline");
    assert_eq!((deciding.deadline, deciding.tolerance), (Some(t(0)), DeviceTolerance::Untolerated));
    assert_eq!((deciding.source, &*deciding.source_name), (SourceKind::ResourceSlice, "slice"));
}

#[test]
fn a_template_claim_counts_only_named_in_the_status_and_owned_by_the_pod() {
    let template =
        |claim: Option<&str>| vec![ClaimUse { entry: "gpu".into(), claim: claim.map(Into::into), via: Via::Template }];
    let owned = devices(tainted_slice(), vec![claim(vec![])], vec![], template(Some("my-claim")));
    assert_eq!(deadline(&owned, 36), Some(t(0)), "evict-pod-resourceclaimtemplate");
    let unnamed = devices(tainted_slice(), vec![claim(vec![])], vec![], template(None));
    assert_eq!(report(&unnamed, 36).claims[0].skipped, Some(Skipped::Unnamed), "no-evict-…-no-claim");
    let mut other_owner = claim(vec![]);
    other_owner.owner = Some(Uid::from("other-pod"));
    let not_owned = devices(tainted_slice(), vec![other_owner.clone()], vec![], template(Some("my-claim")));
    assert_eq!(report(&not_owned, 36).claims[0].skipped, Some(Skipped::NotOwned), "no-evict-wrong-resourceclaim");
    // By name, the owner is not checked.
    let by_name = devices(tainted_slice(), vec![other_owner], vec![], by_name());
    assert_eq!(deadline(&by_name, 36), Some(t(0)));
}

#[test]
fn the_claim_must_be_allocated_and_reserved_for_the_pods_uid() {
    let mut unallocated = claim(vec![]);
    unallocated.allocation = None;
    let d = devices(tainted_slice(), vec![unallocated], vec![], by_name());
    assert_eq!(report(&d, 36).claims[0].skipped, Some(Skipped::NotAllocated));
    let mut elsewhere = claim(vec![]);
    elsewhere.reserved_for = vec![Consumer::pod("my-pod", Uid::from("replaced-pod"))];
    let d = devices(tainted_slice(), vec![elsewhere], vec![], by_name());
    assert_eq!(report(&d, 36).claims[0].skipped, Some(Skipped::NotReserved), "no-evict-wrong-pod");
    let d = devices(tainted_slice(), vec![], vec![], by_name());
    assert_eq!(report(&d, 36).claims[0].skipped, Some(Skipped::NotFound));
}

#[test]
fn the_extended_resources_claim_is_read_from_1_37_on() {
    let extended = vec![ClaimUse { entry: "extended".into(), claim: Some("my-claim".into()), via: Via::Extended }];
    let d = devices(tainted_slice(), vec![claim(vec![])], vec![], extended);
    assert_eq!(deadline(&d, 37), Some(t(0)), "evict-pod-extended-resourceclaim");
    assert_eq!(report(&d, 36).claims[0].skipped, Some(Skipped::NotRead), "kubernetes/kubernetes#141290 before its fix");
}

#[test]
fn only_the_pools_newest_generation_counts_and_other_devices_do_not() {
    let old = slice("old", 1, &[("instance", vec![no_execute("example.com/taint", "")])]);
    let new = slice("new", 2, &[("instance", vec![])]);
    let d = devices(vec![old, new], vec![claim(vec![])], vec![], by_name());
    assert_eq!(deadline(&d, 36), None, "cancel-eviction-remove-taint-in-new-slice");
    let other = vec![slice("slice", 1, &[("other", vec![no_execute("example.com/taint", "")])])];
    let d = devices(other, vec![claim(vec![])], vec![], by_name());
    assert_eq!(deadline(&d, 36), None, "no-evict-other-device");
}

#[test]
fn only_no_execute_taints_evict() {
    for effect in ["NoSchedule", "None", "Unknown"] {
        let taint = Taint::new("example.com/taint", "", effect.into()).with_time_added(t(0));
        let d = devices(vec![slice("slice", 1, &[("instance", vec![taint])])], vec![claim(vec![])], vec![], by_name());
        assert_eq!(report(&d, 36).evictions, [], "{effect}: ignore-none-effect / ignore-unknown-effect");
    }
}

#[test]
fn rules_select_allocated_devices_without_a_slice_from_1_35() {
    let taint = no_execute("example.com/rule", "");
    let d = devices(vec![], vec![claim(vec![])], vec![rule("rule", all_devices(), taint.clone())], by_name());
    let r = report(&d, 35);
    assert_eq!(r.deciding().map(|e| (e.source, e.deadline)), Some((SourceKind::DeviceTaintRule, Some(t(0)))));
    assert_eq!(deadline(&d, 34), None, "1.33–1.34: a rule reaches only published devices");
    let published = vec![slice("slice", 1, &[("instance", vec![])])];
    let d = devices(published, vec![claim(vec![])], vec![rule("rule", all_devices(), taint.clone())], by_name());
    assert_eq!(deadline(&d, 34), Some(t(0)));
    let none = devices(vec![], vec![claim(vec![])], vec![rule("rule", None, taint)], by_name());
    assert_eq!(deadline(&none, 36), None, "no deviceSelector selects nothing");
}

#[test]
fn each_selector_field_set_must_equal_the_devices() {
    let taint = no_execute("example.com/rule", "");
    let select = |driver: Option<&str>, device: Option<&str>| RuleSelector {
        driver: driver.map(Into::into),
        device: device.map(Into::into),
        ..RuleSelector::default()
    };
    for (selector, selects) in [
        (select(Some("some-driver"), None), true),
        (select(Some("some-driver"), Some("instance")), true),
        (select(Some("other-driver"), None), false),
        (select(None, Some("other")), false),
    ] {
        let d =
            devices(vec![], vec![claim(vec![])], vec![rule("rule", Some(selector.clone()), taint.clone())], by_name());
        assert_eq!(deadline(&d, 36).is_some(), selects, "{selector:?}");
    }
}

#[test]
fn class_or_cel_selectors_are_not_evaluated_before_1_35_and_ignored_after() {
    let selector = RuleSelector { unevaluated: true, ..RuleSelector::default() };
    let published = vec![slice("slice", 1, &[("instance", vec![])])];
    let d = devices(published, vec![claim(vec![])], vec![rule("cel", Some(selector), no_execute("k", ""))], by_name());
    assert_eq!(deadline(&d, 34), None);
    assert_eq!(DeviceTaints::new(&d, 34).unevaluated_rules().count(), 1);
    assert_eq!(deadline(&d, 35), Some(t(0)), "tombstoned from 1.35: the rest of the selector applies");
    assert_eq!(DeviceTaints::new(&d, 35).unevaluated_rules().count(), 0);
}

#[test]
fn every_taint_counts_and_the_earliest_deadline_decides() {
    // evict-pod-many-taints: two slice taints and two rules; tolerations key1 60 s, key2 30 s.
    let taints = vec![no_execute("key1", ""), no_execute("key2", "")];
    let rules =
        vec![rule("r1", all_devices(), no_execute("key1", "")), rule("r2", all_devices(), no_execute("key2", ""))];
    let tolerations = vec![tol("key1", "Exists", "NoExecute", Some(60)), tol("key2", "Exists", "NoExecute", Some(30))];
    let d = devices(vec![slice("slice", 1, &[("instance", taints)])], vec![claim(tolerations)], rules, by_name());
    let r = report(&d, 36);
    assert_eq!(r.evictions.len(), 4, "4 reasons");
    assert_eq!(r.deciding().map(|e| (e.deadline, e.tolerance)), Some((Some(t(30)), DeviceTolerance::For(30))));
}

#[test]
fn only_no_execute_tolerations_count_an_effectless_one_is_ignored() {
    let d = devices(tainted_slice(), vec![claim(vec![tol("", "Exists", "", None)])], vec![], by_name());
    let deciding = report(&d, 36).deciding().cloned().expect("evicted");
    assert_eq!(deciding.deadline, Some(t(0)));
    assert!(deciding.effectless_ignored, "the quirk is said");
    let d = devices(tainted_slice(), vec![claim(vec![tol("", "Exists", "NoSchedule", Some(5))])], vec![], by_name());
    assert_eq!(deadline(&d, 36), Some(t(0)));
}

#[test]
fn key_operator_and_value_as_the_core_matcher_and_no_lt_gt() {
    let valued = vec![slice("slice", 1, &[("instance", vec![no_execute("k", "v")])])];
    let with = |operator: &str, value: &str| {
        let mut toleration = tol("k", operator, "NoExecute", None);
        toleration.value = value.into();
        devices(valued.clone(), vec![claim(vec![toleration])], vec![], by_name())
    };
    assert_eq!(deadline(&with("Equal", "v"), 36), None);
    assert_eq!(deadline(&with("", "v"), 36), None, "empty operator is Equal");
    assert_eq!(deadline(&with("Equal", "V"), 36), Some(t(0)), "case-sensitive");
    assert_eq!(deadline(&with("Exists", ""), 36), None);
    assert_eq!(deadline(&with("Gt", "1"), 36), Some(t(0)), "not a device operator");
    let other_key =
        devices(tainted_slice(), vec![claim(vec![tol("other", "Exists", "NoExecute", None)])], vec![], by_name());
    assert_eq!(deadline(&other_key, 36), Some(t(0)), "evict-pod-toleration-mismatch");
}

#[test]
fn a_forever_toleration_wins_over_finite_ones() {
    let tolerations = vec![tol("", "Exists", "NoExecute", Some(60)), tol("", "Exists", "NoExecute", None)];
    let d = devices(tainted_slice(), vec![claim(tolerations)], vec![], by_name());
    let r = report(&d, 36);
    assert_eq!(r.evictions[0].tolerance, DeviceTolerance::Forever);
    assert_eq!(r.deciding(), None, "no-evict-pod-toleration-forever-many");
}

#[test]
fn the_smallest_seconds_and_negative_is_at_once() {
    // evict-pod-later-many: other key 20 s, Exists 60 s, Exists 30 s → T0+30 s.
    let tolerations = vec![
        tol("other", "Exists", "NoExecute", Some(20)),
        tol("", "Exists", "NoExecute", Some(60)),
        tol("", "Exists", "NoExecute", Some(30)),
    ];
    let d = devices(tainted_slice(), vec![claim(tolerations)], vec![], by_name());
    assert_eq!(deadline(&d, 36), Some(t(30)));
    let d = devices(tainted_slice(), vec![claim(vec![tol("", "Exists", "NoExecute", Some(-5))])], vec![], by_name());
    let r = report(&d, 36);
    assert_eq!(r.deciding().map(|e| (e.deadline, e.tolerance)), Some((Some(t(0)), DeviceTolerance::For(-5))));
}

#[test]
fn the_deadline_is_time_added_plus_the_tolerated_seconds() {
    let d = devices(tainted_slice(), vec![claim(vec![tol("", "Exists", "NoExecute", Some(3600))])], vec![], by_name());
    assert_eq!(deadline(&d, 36), Some(t(3600)), "evict-pod-later");
    let huge =
        devices(tainted_slice(), vec![claim(vec![tol("", "Exists", "NoExecute", Some(i64::MAX))])], vec![], by_name());
    assert!(deadline(&huge, 36).is_some_and(|at| at > t(0)), "no overflow");
}

#[test]
fn the_earliest_over_the_pods_claims() {
    // multiple-claims-different-rules: rules at T0 and T0+40 s on the pod's two claims → T0.
    let mut second = claim(vec![]);
    second.name = "other-claim".into();
    second.allocation = Some(vec![Allocated { request: "req".into(), device: id("second"), tolerations: vec![] }]);
    let later = Taint::new("late", "", Effect::NoExecute).with_time_added(t(40));
    let select = |device: &str| Some(RuleSelector { device: Some(device.into()), ..RuleSelector::default() });
    let rules = vec![rule("late", select("instance"), later), rule("early", select("second"), no_execute("early", ""))];
    let mut uses = by_name();
    uses.push(ClaimUse { entry: "other".into(), claim: Some("other-claim".into()), via: Via::Name });
    let d = devices(vec![], vec![claim(vec![]), second], rules, uses);
    let r = report(&d, 36);
    assert_eq!(r.evictions.len(), 2);
    assert_eq!(r.deciding().map(|e| (&*e.claim, e.deadline)), Some(("other-claim", Some(t(0)))));
}

#[test]
fn a_taint_without_time_added_has_no_deadline() {
    let taint = Taint::new("example.com/taint", "", Effect::NoExecute);
    let d = devices(vec![slice("slice", 1, &[("instance", vec![taint])])], vec![claim(vec![])], vec![], by_name());
    let r = report(&d, 36);
    assert_eq!((r.evictions.len(), r.deciding()), (1, None));
}

#[test]
fn before_1_35_requested_tolerations_were_not_copied_and_that_is_said() {
    let mut uncopied = claim(vec![]);
    uncopied.requested_tolerations = 1;
    let d = devices(tainted_slice(), vec![uncopied], vec![], by_name());
    let deciding = report(&d, 34).deciding().cloned().expect("evicted");
    assert!(deciding.uncopied);
}

#[test]
fn a_pod_without_claims_has_an_empty_report() {
    let d = devices(tainted_slice(), vec![claim(vec![])], vec![], by_name());
    let other = DeviceTaints::new(&d, 36).pod(&PodKey::new("default", "other"), &pod_uid());
    assert_eq!(other, DeviceReport::default());
}

#[test]
fn the_pods_reserved_on_tainted_devices_are_found_before_the_pods_are_read() {
    let d = devices(tainted_slice(), vec![claim(vec![tol("", "Exists", "NoExecute", None)])], vec![], Vec::new());
    let found = DeviceTaints::new(&d, 36).reserved_pods_on_tainted_devices();
    assert_eq!(found, [key()], "tolerated or not, the pod is shown");
    let clean = devices(vec![slice("slice", 1, &[("instance", vec![])])], vec![claim(vec![])], vec![], Vec::new());
    assert_eq!(DeviceTaints::new(&clean, 36).reserved_pods_on_tainted_devices(), []);
}

mod engine {
    use super::*;
    use crate::Action;
    use crate::model::{NodeName, PodRef};

    fn trainer(terminating: bool) -> DevicePod {
        let pod = PodRef { key: key(), uid: pod_uid(), node: NodeName::from("worker") };
        DevicePod { pod, uses: by_name(), terminating }
    }

    fn actions(engine: &mut DeviceEngine) -> Vec<Action> {
        std::iter::from_fn(|| engine.poll_action()).collect()
    }

    /// An engine at 1.36 with `claim` and `trainer`, told at t(10).
    fn started(claim: Claim, slices: Vec<Slice>) -> DeviceEngine {
        let mut engine = DeviceEngine::new(36);
        engine.handle(DeviceInput::SlicesListed(slices), t(10));
        engine.handle(DeviceInput::RulesListed(Vec::new()), t(10));
        engine.handle(DeviceInput::ClaimsListed(vec![claim]), t(10));
        engine.handle(DeviceInput::PodsListed(vec![trainer(false)]), t(10));
        engine
    }

    #[test]
    fn an_overdue_deadline_is_carried_out_at_once_with_the_uid() {
        let mut engine = started(claim(vec![]), tainted_slice());
        match actions(&mut engine).as_slice() {
            [Action::Evict { pod, work, .. }] => {
                assert_eq!((pod.uid.clone(), work.fire, work.created), (pod_uid(), t(0), t(0)));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_tolerated_taint_fires_at_time_added_plus_the_seconds_and_only_then() {
        let mut engine = started(claim(vec![tol("", "Exists", "NoExecute", Some(60))]), tainted_slice());
        assert!(matches!(actions(&mut engine).as_slice(), [Action::Scheduled { work, .. }] if work.fire == t(60)));
        assert_eq!(engine.poll_timeout(), Some(t(60)));
        engine.handle_timeout(t(59));
        assert_eq!(actions(&mut engine), []);
        engine.handle_timeout(t(60));
        assert!(matches!(actions(&mut engine).as_slice(), [Action::Evict { .. }]));
        assert_eq!(engine.poll_timeout(), None);
    }

    #[test]
    fn the_taint_removed_cancels_with_an_event_and_the_pod_deleted_cancels_silently() {
        let mut engine = started(claim(vec![tol("", "Exists", "NoExecute", Some(60))]), tainted_slice());
        let _ = actions(&mut engine);
        engine.handle(DeviceInput::SliceApplied(slice("slice", 1, &[("instance", vec![])])), t(20));
        assert!(matches!(actions(&mut engine).as_slice(), [Action::Cancelled { .. }]), "cancel-eviction-remove-taint");

        let mut engine = started(claim(vec![tol("", "Exists", "NoExecute", Some(60))]), tainted_slice());
        let _ = actions(&mut engine);
        engine.handle(DeviceInput::PodDeleted(key()), t(20));
        assert_eq!(actions(&mut engine), [], "cancel-eviction-pod-deletion: no event");
        assert_eq!(engine.poll_timeout(), None);
    }

    #[test]
    fn a_deletion_under_way_is_withdrawn_when_no_longer_wanted_and_a_done_pod_is_not_deleted_again() {
        let mut engine = started(claim(vec![]), tainted_slice());
        let ticket = match actions(&mut engine).as_slice() {
            [Action::Evict { ticket, .. }] => *ticket,
            other => panic!("{other:?}"),
        };
        engine.handle(DeviceInput::SlicesListed(vec![slice("slice", 1, &[("instance", vec![])])]), t(11));
        assert!(matches!(actions(&mut engine).as_slice(), [Action::Withdrawn { ticket: t, .. }] if *t == ticket));

        let mut engine = started(claim(vec![]), tainted_slice());
        let Some(Action::Evict { ticket, .. }) = engine.poll_action() else { panic!("evicted") };
        engine.handle(DeviceInput::EvictionFinished { pod: key(), ticket }, t(11));
        engine.handle(DeviceInput::RulesListed(Vec::new()), t(12));
        assert_eq!(actions(&mut engine), [], "deleted once");
    }

    #[test]
    fn a_pod_already_terminating_is_left_alone() {
        let mut engine = DeviceEngine::new(36);
        engine.handle(DeviceInput::SlicesListed(tainted_slice()), t(10));
        engine.handle(DeviceInput::ClaimsListed(vec![claim(vec![])]), t(10));
        engine.handle(DeviceInput::PodsListed(vec![trainer(true)]), t(10));
        assert_eq!(actions(&mut engine), []);
    }
}
