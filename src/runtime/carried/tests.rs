use super::*;
use crate::engine::Input;
use crate::engine::model::{Effect, Uid};
use crate::engine::time::Timestamp;

fn t(seconds: i64) -> Timestamp {
    Timestamp::from_unix_seconds(1_000 + seconds)
}

fn taint(key: &str, at: i64) -> Taint {
    Taint { key: key.into(), value: "".into(), effect: Effect::NoExecute, time_added: Some(t(at)) }
}

fn node(taints: &[Taint]) -> Node {
    Node { name: "n1".into(), taints: taints.to_vec().into() }
}

fn pod() -> Pod {
    let tolerate = |key: &str, seconds: i64| Toleration {
        key: key.into(),
        operator: crate::engine::model::Operator::Exists,
        value: "".into(),
        effect: Some(Effect::NoExecute),
        seconds: Some(seconds),
    };
    Pod {
        key: PodKey::new("default", "e3"),
        uid: Uid::from("u"),
        node: Some("n1".into()),
        tolerations: vec![tolerate("a", 20), tolerate("b", 120)].into(),
    }
}

#[test]
fn a_countdown_a_removed_taint_left_is_carried_until_it_ends() {
    let ledger = Ledger::default();
    let mut carried = Carried::new(ledger.clone());
    let mut engine = Engine::new();
    engine.handle(Input::NodesReplaced(vec![node(&[taint("a", 0), taint("b", 0)])]), t(0));
    engine.handle(Input::PodsReplaced(vec![pod()]), t(0));
    let before = engine.taints(&"n1".into()).to_vec();
    engine.handle(Input::NodeUpserted(node(&[taint("b", 0)])), t(3));
    carried.taints_changed(&engine, &"n1".into(), &before);
    let kept = ledger.countdowns();
    assert_eq!(kept.iter().map(|c| (c.pod.name(), c.work.fire)).collect::<Vec<_>>(), [("e3", t(20))]);
    // An added taint alone carries nothing new.
    let mut fresh = Carried::new(Ledger::default());
    let before = engine.taints(&"n1".into()).to_vec();
    engine.handle(Input::NodeUpserted(node(&[taint("b", 0), taint("c", 5)])), t(5));
    fresh.taints_changed(&engine, &"n1".into(), &before);
    assert!(fresh.kept.is_empty());
    carried.ended(&PodKey::new("default", "e3"));
    assert!(ledger.countdowns().is_empty());
}

// The loop asking it, on tokio's paused clock: the tests measure its time directly.
#[allow(clippy::disallowed_methods)]
mod in_the_loop;
