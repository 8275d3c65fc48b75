//! Property tests: invariants of the engine over arbitrary input sequences, and the matcher against
//! a naive reference.

use std::collections::HashSet;
use std::sync::Arc;

use proptest::prelude::*;

use super::model::{Effect, Node, NodeName, Operator, Pod, PodKey, Taint, Toleration};
use super::queue::EntryState;
use super::time::Timestamp;
use super::tolerate::{Tolerance, TolerationWindow, tolerance, tolerates};
use super::{Action, Engine, Input};

const NODES: &[&str] = &["n0", "n1", "n2"];
const PODS: &[&str] = &["p0", "p1", "p2", "p3", "p4"];
const KEYS: &[&str] = &["a", "b", ""];

fn effect() -> impl Strategy<Value = Effect> {
    prop_oneof![
        Just(Effect::NoExecute),
        Just(Effect::NoExecute),
        Just(Effect::NoSchedule),
        Just(Effect::Other(Box::new("noexecute".into())))
    ]
}

fn taint() -> impl Strategy<Value = Taint> {
    (prop::sample::select(&KEYS[..2]), prop::sample::select(&["", "v", "5", "-3", "05"][..]), effect())
        .prop_map(|(key, value, effect)| Taint::new(key, value, effect))
}

fn toleration() -> impl Strategy<Value = Toleration> {
    let operator = prop_oneof![
        Just(Operator::Equal),
        Just(Operator::Exists),
        Just(Operator::Lt),
        Just(Operator::Gt),
        Just(Operator::Other(Box::new("gt".into())))
    ];
    let seconds =
        prop::option::of(prop_oneof![Just(-1i64), Just(0), Just(5), Just(30), Just(300), Just(18_446_744_074)]);
    (
        prop::sample::select(KEYS),
        operator,
        prop::sample::select(&["", "v", "w", "5", "10", "-0"][..]),
        prop::option::of(effect()),
        seconds,
    )
        .prop_map(|(key, operator, value, effect, seconds)| Toleration {
            key: key.into(),
            operator,
            value: value.into(),
            effect,
            seconds,
        })
}

#[derive(Clone, Debug)]
enum Op {
    Advance(i64),
    Node(usize, Vec<Taint>),
    DeleteNode(usize),
    Pod(usize, usize, Option<usize>, Vec<Toleration>),
    DeletePod(usize),
    Finish(usize),
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0i64..120).prop_map(Op::Advance),
        3 => (0..NODES.len(), prop::collection::vec(taint(), 0..3)).prop_map(|(n, t)| Op::Node(n, t)),
        1 => (0..NODES.len()).prop_map(Op::DeleteNode),
        4 => (0..PODS.len(), 0..2usize, prop::option::of(0..NODES.len()), prop::collection::vec(toleration(), 0..3))
            .prop_map(|(p, u, n, t)| Op::Pod(p, u, n, t)),
        1 => (0..PODS.len()).prop_map(Op::DeletePod),
        2 => (0..PODS.len()).prop_map(Op::Finish),
        1 => Just(Op::Restart),
    ]
}

fn key(p: usize) -> PodKey {
    PodKey::new("default", PODS[p])
}

/// Feeds `ops` and checks the invariants after each; returns the actions.
fn drive(ops: &[Op]) -> Result<Vec<Action>, TestCaseError> {
    let mut engine = Engine::new();
    let mut now = Timestamp::from_unix_seconds(1_000);
    let mut pods: Vec<Option<Pod>> = vec![None; PODS.len()];
    let mut actions = Vec::new();
    for op in ops {
        let was_tainted = match op {
            Op::Node(n, _) => !engine.taints(&NodeName::from(NODES[*n])).is_empty(),
            _ => false,
        };
        let input = match op.clone() {
            Op::Advance(seconds) => {
                now = now.add_nanos(seconds * 1_000_000_000);
                engine.handle_timeout(now);
                None
            }
            Op::Node(n, taints) => Some(Input::NodeUpserted(Node { name: NODES[n].into(), taints: taints.into() })),
            Op::DeleteNode(n) => Some(Input::NodeDeleted(NODES[n].into())),
            Op::Pod(p, uid, node, tolerations) => {
                let pod = Pod {
                    key: key(p),
                    uid: format!("u{uid}").into(),
                    node: node.map(|n| NodeName::from(NODES[n])),
                    tolerations: Arc::from(tolerations),
                };
                pods[p] = Some(pod.clone());
                Some(Input::PodUpserted(pod))
            }
            Op::DeletePod(p) => {
                pods[p] = None;
                Some(Input::PodDeleted(key(p)))
            }
            Op::Finish(p) => engine.work(&key(p)).map(|e| Input::EvictionFinished { pod: key(p), ticket: e.ticket }),
            Op::Restart => Some(Input::ControllerRestarted),
        };
        if let Some(input) = input {
            engine.handle(input, now);
        }
        while let Some(action) = engine.poll_action() {
            actions.push(action);
        }

        // One entry per pod; deadlines after their start; the next timeout is the earliest deadline.
        let pending: Vec<_> = engine.pending().collect();
        let keys: HashSet<_> = pending.iter().map(|(pod, _)| pod.key.clone()).collect();
        prop_assert_eq!(keys.len(), pending.len());
        let armed: Vec<_> = pending.iter().filter(|(_, e)| e.state == EntryState::Armed).collect();
        prop_assert_eq!(engine.poll_timeout(), armed.iter().map(|(_, e)| e.work.fire).min());
        for (pod, entry) in &pending {
            prop_assert!(entry.work.fire >= entry.work.created, "{pod:?}: {entry:?}");
            if entry.state == EntryState::Armed {
                prop_assert!(entry.work.fire > now, "{pod:?}: an armed timer due by now should have fired");
            }
        }
        // A pod on a tainted node that tolerates it forever has no timer; untainting a node cancels the
        // timers of every pod bound to it.
        for pod in pods.iter().flatten() {
            let Some(node) = &pod.node else { continue };
            let taints = engine.taints(node);
            let armed = engine.work(&pod.key).is_some_and(|e| e.state == EntryState::Armed);
            if !taints.is_empty()
                && tolerance(taints, &pod.tolerations) == Tolerance::Tolerated(TolerationWindow::Forever)
            {
                prop_assert!(!armed, "{:?} tolerates {:?} forever but has a timer", pod.key, taints);
            }
            if let Op::Node(n, taints) = op
                && was_tainted
                && NODES[*n] == node.as_str()
                && !taints.iter().any(Taint::is_no_execute)
            {
                prop_assert!(!armed, "untainting {} must cancel {:?}", node, pod.key);
            }
        }
    }
    Ok(actions)
}

/// A reference matcher written from the API documentation, independently of `tolerate`.
fn reference_tolerates(t: &Toleration, taint: &Taint) -> bool {
    let effect_ok = t.effect.as_ref().is_none_or(|e| e.as_str() == taint.effect.as_str());
    let key_ok = t.key.is_empty() || t.key == taint.key;
    // An integer as the API server writes one: it reads back the same.
    let integer = |v: &str| v.parse::<i64>().ok().filter(|n| n.to_string() == v);
    let operator_ok = match t.operator.as_str() {
        "Exists" => true,
        "Equal" => t.value == taint.value,
        "Lt" => integer(&taint.value).zip(integer(&t.value)).is_some_and(|(a, b)| a < b),
        "Gt" => integer(&taint.value).zip(integer(&t.value)).is_some_and(|(a, b)| a > b),
        _ => false,
    };
    effect_ok && key_ok && operator_ok
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn engine_invariants_hold_for_any_input_sequence(ops in prop::collection::vec(op(), 1..60)) {
        drive(&ops)?;
    }

    #[test]
    fn every_cancel_follows_a_schedule(ops in prop::collection::vec(op(), 1..60)) {
        let actions = drive(&ops)?;
        let mut armed: HashSet<PodKey> = HashSet::new();
        for action in actions {
            match action {
                Action::Scheduled { pod, .. } => { armed.insert(pod.key); }
                Action::Cancelled { pod, .. } => prop_assert!(armed.remove(&pod.key), "cancelled {:?} with no timer", pod.key),
                Action::Evict { pod, .. } => { armed.remove(&pod.key); }
                Action::Withdrawn { .. } => {}
            }
        }
    }

    #[test]
    fn matcher_agrees_with_a_naive_reference(t in toleration(), taint in taint()) {
        prop_assert_eq!(tolerates(&t, &taint), reference_tolerates(&t, &taint));
    }
}
