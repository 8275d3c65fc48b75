//! The direct writer against serde_json's rendering of the document.

use proptest::prelude::*;

use super::*;
use crate::engine::devices::DeviceTolerance;
use crate::engine::devices::{DeviceId, DeviceReport, SourceKind};
use crate::engine::lifecycle::{
    Basis as LifecycleBasis, ConditionTaint, Drain, Held, HeldReason, NodeForecast, PredictedTaint, ZoneKey, ZoneState,
};
use crate::engine::model::{Effect, NodeName, Pod, PodKey, Uid};
use crate::engine::plan::{OwnerLoss, Verdict};
use crate::engine::snapshot::TaintsWritten;
use crate::engine::snapshot::{Owner, SnapshotPod};
use crate::output::json::write_json;

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(
            &["", "web", "api-0", "a\"b", "back\\slash", "a\nb\r\t", "\u{1}\u{8}\u{c}\u{1f}\u{7f}", "zoné ✓"][..]
        )
        .prop_map(str::to_owned),
        any::<String>(),
    ]
}

fn instant() -> impl Strategy<Value = Option<Timestamp>> {
    let nanos = prop_oneof![Just(0i64), Just(500_000_000), 0i64..1_000_000_000];
    let seconds = prop_oneof![1_700_000_000i64..1_900_000_000, any::<i64>()];
    prop::option::of((seconds, nanos).prop_map(|(s, n)| Timestamp::from_unix_seconds(s).add_nanos(n)))
}

fn taint() -> impl Strategy<Value = Taint> {
    let effect =
        prop_oneof![Just(Effect::NoExecute), Just(Effect::NoSchedule), text().prop_map(|e| Effect::Other(e.into()))];
    (text(), text(), effect, instant())
        .prop_map(|(key, value, effect, time_added)| Taint { time_added, ..Taint::new(key, value, effect) })
}

fn pod() -> impl Strategy<Value = PodPlan<'static>> {
    let verdict = prop::sample::select(&[Verdict::EvictNow, Verdict::EvictAt, Verdict::Never, Verdict::Unaffected][..]);
    let basis = prop::option::of(prop::sample::select(
        &[
            Basis::TaintTimeAdded,
            Basis::TaintWritten,
            Basis::TaintRewritten,
            Basis::InputTaken,
            Basis::PodScheduled,
            Basis::ControllerRestart,
            Basis::NodeNotReady,
            Basis::Now,
            Basis::PredictedTaint,
            Basis::DeviceTaint,
        ][..],
    ));
    (
        (text(), text(), text(), text(), any::<bool>(), verdict, prop::collection::vec(device(), 0..3)),
        (
            (instant(), instant()),
            instant(),
            basis,
            prop::option::of(any::<i64>()),
            prop::collection::vec(taint(), 0..3),
            any::<bool>(),
            (instant(), prop::option::of((any::<i64>(), text(), prop::option::of((text(), text())), 0_usize..7))),
        ),
    )
        .prop_map(
            |(
                (namespace, name, uid, phase, terminating, verdict, devices),
                (
                    (evict_at, evict_at_latest),
                    since,
                    basis,
                    toleration_seconds,
                    untolerated,
                    overdue,
                    (deletion, edited),
                ),
            )| PodPlan {
                // A generated plan's pods are kept for the rest of the test run.
                pod: Box::leak(Box::new(SnapshotPod {
                    pod: Pod {
                        key: PodKey::new(namespace, name),
                        uid: Uid::from(uid),
                        node: None,
                        tolerations: Vec::new().into(),
                    },
                    bound_at: None,
                    phase: phase.into(),
                    terminating,
                    deletion_timestamp: deletion,
                    ready: crate::engine::snapshot::PodReady::No,
                    claims: None,
                    owner: None,
                    tolerations_edited: None,
                })),
                verdict,
                evict_at,
                evict_at_latest,
                since,
                basis,
                toleration_seconds,
                untolerated: untolerated.into(),
                overdue,
                stuck: deletion.is_some() && terminating,
                tolerations_edited: edited.map(|(at, manager, owner, deadline)| {
                    let deadlines = [
                        EditedDeadline::OwnerTemplate,
                        EditedDeadline::NoOwner,
                        EditedDeadline::OwnerKind,
                        EditedDeadline::OwnerUnread,
                        EditedDeadline::TemplateDiffers,
                        EditedDeadline::AddedAtCreation,
                        EditedDeadline::ForeverThen,
                    ];
                    Box::new(TolerationsEdited {
                        written: TaintsWritten {
                            at: Timestamp::from_unix_seconds(at % 100_000_000_000),
                            manager: manager.into(),
                        },
                        owner: owner.map(|(kind, name): (String, String)| Owner::new(&kind, &name, "uid")),
                        deadline: deadlines[deadline],
                    })
                }),
                devices: (!devices.is_empty())
                    .then(|| Box::new(DeviceReport { claims: Vec::new(), evictions: devices })),
            },
        )
}

fn device() -> impl Strategy<Value = DeviceEviction> {
    let tolerance = prop_oneof![
        Just(DeviceTolerance::Untolerated),
        Just(DeviceTolerance::Forever),
        any::<i64>().prop_map(DeviceTolerance::For)
    ];
    let source = prop::sample::select(&[SourceKind::ResourceSlice, SourceKind::DeviceTaintRule][..]);
    ((text(), text(), text(), text()), taint(), source, text(), tolerance, instant()).prop_map(
        |((driver, pool, device, claim), taint, source, source_name, tolerance, deadline)| DeviceEviction {
            device: DeviceId { driver: driver.into(), pool: pool.into(), device: device.into() },
            claim: claim.into(),
            request: "request".into(),
            taint,
            source,
            source_name: source_name.into(),
            tolerance,
            deadline,
            effectless_ignored: false,
            uncopied: false,
        },
    )
}

fn zone() -> impl Strategy<Value = ZoneKey> {
    (text(), text()).prop_map(|(region, zone)| ZoneKey::new(region, zone))
}

fn lifecycle() -> impl Strategy<Value = NodeLifecycle> {
    let ready = prop::option::of(prop::sample::select(&[Ready::True, Ready::False, Ready::Unknown][..]));
    let key = prop::sample::select(&[ConditionTaint::Unreachable, ConditionTaint::NotReady][..]);
    let basis = prop::sample::select(
        &[
            LifecycleBasis::LostHeartbeat,
            LifecycleBasis::NotReady,
            LifecycleBasis::NeverReady,
            LifecycleBasis::ControllerRestart,
        ][..],
    );
    let taint = prop::option::of((key, instant(), instant(), basis, 0usize..5).prop_map(
        |(key, earliest, latest, basis, queued_with)| PredictedTaint {
            key,
            earliest: earliest.unwrap_or_default(),
            latest,
            basis,
            queued_with,
            drained: false,
        },
    ));
    let reason = prop::sample::select(
        &[HeldReason::PartialDisruption, HeldReason::AllZonesDown, HeldReason::NoEvictionRate, HeldReason::Recovered][..],
    );
    let held = prop::option::of((reason, zone()).prop_map(|(reason, zone)| Held { reason, zone }));
    (text(), zone(), ready, instant(), taint, held, instant()).prop_map(
        |(name, zone, ready, last_heartbeat, taint, held, ready_since)| NodeLifecycle {
            forecast: NodeForecast { name: NodeName::from(name), zone, ready, last_heartbeat, taint, held },
            ready_since,
        },
    )
}

fn zones() -> impl Strategy<Value = Option<Vec<ZoneForecast>>> {
    let state = prop::sample::select(&[ZoneState::Normal, ZoneState::PartialDisruption, ZoneState::FullDisruption][..]);
    let rate = prop_oneof![Just(0.0f32), Just(0.1), Just(0.01), any::<f32>().prop_filter("finite", |r| r.is_finite())];
    let drain = prop::option::of((1usize..2000, 1u64..200_000, 1_700_000_000i64..1_900_000_000, 0i64..20_000))
        .prop_map(|drain| {
            drain.map(|(nodes, every_ms, first, span)| Drain {
                nodes,
                every: std::time::Duration::from_millis(every_ms),
                first: Timestamp::from_unix_seconds(first).add_nanos(i64::try_from(every_ms).unwrap_or_default()),
                last: Timestamp::from_unix_seconds(first + span),
            })
        });
    let zone = (zone(), state, 0usize..100, 0usize..100, rate, drain).prop_map(
        |(zone, state, nodes, not_ready, rate_per_second, drain)| ZoneForecast {
            zone,
            state,
            nodes,
            not_ready,
            rate_per_second,
            drain,
        },
    );
    prop::option::of(prop::collection::vec(zone, 0..3))
}

fn plan() -> impl Strategy<Value = Plan<'static>> {
    let written = prop::option::of((instant(), text()))
        .prop_map(|w| w.map(|(at, manager)| TaintsWritten { at: at.unwrap_or_default(), manager: manager.into() }));
    let node = (
        text(),
        prop::collection::vec(taint(), 0..3),
        written,
        prop::collection::vec(pod(), 0..3),
        prop::option::of(lifecycle()),
    )
        .prop_map(|(name, taints, taints_written, pods, lifecycle)| NodePlan {
            name: NodeName::from(name),
            taints: taints.into(),
            taints_written,
            pods,
            lifecycle,
        });
    let device_taints = prop::option::of(33u32..40);
    (instant(), prop::collection::vec(node, 0..3), zones(), device_taints, prop::option::of(assumed()), owners())
        .prop_map(|(now, nodes, zones, device_taints, assumed, owners)| Plan {
            now: now.unwrap_or_default(),
            nodes,
            zones,
            device_taints,
            owners,
            assumed,
        })
}

fn assumed() -> impl Strategy<Value = Assumed> {
    let change = prop_oneof![
        taint().prop_map(WhatIf::Taint),
        (text(), prop::option::of(Just(Effect::NoExecute)))
            .prop_map(|(key, effect)| WhatIf::RemoveTaint { key, effect }),
    ];
    let down = prop::collection::vec(text().prop_map(NodeName::from), 0..3);
    (prop::collection::vec(change, 0..3), down, prop::option::of(text()))
        .prop_map(|(changes, down, down_selector)| Assumed { changes, down, down_selector })
}

fn owners() -> impl Strategy<Value = Option<Vec<OwnerLoss<'static>>>> {
    let owner = (text(), text(), text(), 0u32..5, 0u32..5, instant(), instant()).prop_map(
        |(namespace, kind, name, pods, deleted, first, last)| OwnerLoss {
            // A test's owners are kept for the rest of the run.
            namespace: Box::leak(Box::new(std::sync::Arc::from(namespace))),
            owner: Box::leak(Box::new(crate::engine::snapshot::Owner::new(&kind, &name, ""))),
            pods: pods.max(deleted),
            deleted,
            first: first.unwrap_or_default(),
            last,
        },
    );
    prop::option::of(prop::collection::vec(owner, 0..3))
}

proptest! {
    #[test]
    fn plan_json_is_written_as_serde_json_writes_the_document(
        plan in plan(),
        read in prop::option::of(prop::sample::select(vec!["watch-cache", "quorum"])),
        content_type in prop::option::of(prop::sample::select(vec!["protobuf", "json", "protobuf and json"])),
        clock in prop::option::of((any::<i64>(), 0..i64::MAX, prop::sample::select(vec!["date-header", "node-lease"]))),
        with_timeline in any::<bool>(),
        with_settings in any::<bool>(),
    ) {
        let settings = with_settings.then(|| Settings::resolve(crate::engine::lifecycle::Flags::defaults_for(29), &[]));
        let timeline = with_timeline.then(|| Timeline::of(&plan));
        let clock = clock.map(|(offset, uncertainty, source)| ClockDoc::new(offset, uncertainty, source));
        let live = read.map(|read| Live { read, content_type, clock });
        let mut direct = Vec::new();
        write_plan_json_with(&plan, live.as_ref(), settings.as_ref(), timeline.as_ref(), &mut direct).expect("a Vec");
        let mut serde = Vec::new();
        let document =
            EvictionPlan::from(&plan).read(live.as_ref()).settings(settings.as_ref()).timeline(timeline.as_ref());
        write_json(&document, &mut serde).expect("a Vec");
        prop_assert_eq!(String::from_utf8(direct).expect("UTF-8"), String::from_utf8(serde).expect("UTF-8"));
    }
}
