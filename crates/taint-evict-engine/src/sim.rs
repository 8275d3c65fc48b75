//! A deterministic simulation harness for the engine (quinn-proto's `Pair` in spirit): a virtual
//! clock, an inbox of timed inputs, and steps that jump time to the next input or deadline.

use std::collections::VecDeque;
use std::sync::Arc;

use super::model::{Effect, Node, NodeName, Pod, PodKey, Taint, Toleration};
use super::queue::Work;
use super::time::Timestamp;
use super::{Action, Engine, Input};

/// What the simulated controller did, at which virtual instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Observed {
    Scheduled { pod: String, at: i64, fire: Timestamp },
    Cancelled { pod: String, at: i64 },
    Deleted { pod: String, at: Timestamp },
}

pub(crate) struct Sim {
    pub(crate) engine: Engine,
    pub(crate) now: Timestamp,
    inbox: VecDeque<(Timestamp, Input)>,
    pub(crate) log: Vec<Observed>,
    /// Report every deletion as finished right away (upstream ≥ 1.33 removes completed work).
    pub(crate) finish_deletions: bool,
}

pub(crate) fn t(seconds: i64) -> Timestamp {
    Timestamp::from_unix_seconds(seconds)
}

pub(crate) fn taint(key: &str) -> Taint {
    Taint::new(key, "", Effect::NoExecute)
}

pub(crate) fn tol(key: &str, seconds: Option<i64>) -> Toleration {
    Toleration {
        key: key.into(),
        operator: "Exists".into(),
        value: Box::default(),
        effect: Some(Effect::NoExecute),
        seconds,
    }
}

pub(crate) fn node(name: &str, taints: &[Taint]) -> Input {
    Input::NodeUpserted(Node { name: NodeName::from(name), taints: taints.into() })
}

pub(crate) fn pod(name: &str, uid: &str, node: &str, tolerations: &[Toleration]) -> Input {
    Input::PodUpserted(Pod {
        key: PodKey::new("default", name),
        uid: uid.into(),
        node: (!node.is_empty()).then(|| NodeName::from(node)),
        tolerations: Arc::from(tolerations.to_vec()),
    })
}

impl Sim {
    pub(crate) fn new() -> Self {
        Self { engine: Engine::new(), now: t(0), inbox: VecDeque::new(), log: Vec::new(), finish_deletions: true }
    }

    /// Queues `input` to happen at `at` seconds (inputs must be queued in time order).
    pub(crate) fn at(&mut self, at: i64, input: Input) -> &mut Self {
        assert!(self.inbox.back().is_none_or(|(last, _)| *last <= t(at)), "inputs in time order");
        self.inbox.push_back((t(at), input));
        self
    }

    /// Advances to the next input or deadline, whichever is first; false when idle.
    pub(crate) fn step(&mut self) -> bool {
        let next_input = self.inbox.front().map(|(at, _)| *at);
        let next_timer = self.engine.poll_timeout();
        let input_first = match (next_input, next_timer) {
            (None, None) => return false,
            (Some(input), Some(timer)) => input <= timer,
            (input, _) => input.is_some(),
        };
        if input_first {
            let (at, input) = self.inbox.pop_front().expect("peeked");
            self.now = at;
            self.engine.handle(input, at);
        } else {
            let timer = next_timer.expect("no input, so a timer");
            self.now = timer;
            self.engine.handle_timeout(timer);
        }
        self.collect();
        true
    }

    /// Runs until idle; fails the test on a livelock instead of hanging.
    pub(crate) fn drive(&mut self) -> &mut Self {
        for _ in 0..10_000 {
            if !self.step() {
                return self;
            }
        }
        panic!("simulation did not settle in 10000 steps");
    }

    fn collect(&mut self) {
        let at = self.now.as_nanos() as i64 / 1_000_000_000;
        while let Some(action) = self.engine.poll_action() {
            match action {
                Action::Scheduled { pod, work: Work { fire, .. } } => {
                    self.log.push(Observed::Scheduled { pod: pod.key.name().into(), at, fire });
                }
                Action::Cancelled { pod, .. } => self.log.push(Observed::Cancelled { pod: pod.key.name().into(), at }),
                Action::Withdrawn { .. } => {}
                Action::Evict { pod, work, ticket } => {
                    self.log.push(Observed::Deleted { pod: pod.key.name().into(), at: work.fire.max(self.now) });
                    if self.finish_deletions {
                        self.inbox.push_front((self.now, Input::EvictionFinished { pod: pod.key, ticket }));
                    }
                }
            }
        }
    }

    /// The deletions, in order: (pod, instant in seconds).
    pub(crate) fn deletions(&self) -> Vec<(String, Timestamp)> {
        self.log
            .iter()
            .filter_map(|o| match o {
                Observed::Deleted { pod, at } => Some((pod.clone(), *at)),
                _ => None,
            })
            .collect()
    }

    pub(crate) fn cancellations(&self) -> Vec<(String, i64)> {
        self.log
            .iter()
            .filter_map(|o| match o {
                Observed::Cancelled { pod, at } => Some((pod.clone(), *at)),
                _ => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deleted(pod: &str, at: i64) -> (String, Timestamp) {
        (pod.into(), t(at))
    }

    #[test]
    fn toleration_expires_at_its_deadline() {
        let mut sim = Sim::new();
        sim.at(0, pod("web", "u1", "n1", &[tol("a", Some(300))])).at(100, node("n1", &[taint("a")])).drive();
        assert_eq!(sim.deletions(), [deleted("web", 400)]);
    }

    #[test]
    fn taint_removed_before_the_deadline_cancels_with_an_event() {
        let mut sim = Sim::new();
        sim.at(0, pod("web", "u1", "n1", &[tol("a", Some(300))]))
            .at(0, pod("db", "u2", "n1", &[tol("a", Some(600))]))
            .at(0, node("n1", &[taint("a")]))
            .at(50, node("n1", &[]))
            .drive();
        assert_eq!(sim.deletions(), []);
        let mut cancelled = sim.cancellations();
        cancelled.sort();
        assert_eq!(cancelled, [("db".to_string(), 50), ("web".to_string(), 50)]);
    }

    #[test]
    fn node_deleted_keeps_the_timer() {
        let mut sim = Sim::new();
        sim.at(0, pod("web", "u1", "n1", &[tol("a", Some(300))]))
            .at(0, node("n1", &[taint("a")]))
            .at(50, Input::NodeDeleted("n1".into()))
            .drive();
        assert_eq!(sim.deletions(), [deleted("web", 300)]);
        assert!(sim.engine.taints(&"n1".into()).is_empty());
    }

    #[test]
    fn a_node_that_leaves_the_scope_cancels_its_pods_work_and_is_forgotten() {
        let mut sim = Sim::new();
        sim.at(0, pod("web", "u1", "n1", &[tol("a", Some(300))]))
            .at(0, pod("db", "u2", "n1", &[tol("a", Some(300))]))
            .at(0, pod("other", "u3", "n2", &[tol("a", Some(300))]))
            .at(0, node("n1", &[taint("a")]))
            .at(0, node("n2", &[taint("a")]))
            .at(50, Input::NodeLeft("n1".into()))
            .drive();
        assert_eq!(sim.deletions(), [deleted("other", 300)], "n1 is no longer enforced");
        assert_eq!(sim.cancellations(), [("db".to_string(), 50), ("web".to_string(), 50)]);
        assert!(sim.engine.taints(&"n1".into()).is_empty());
        assert!(sim.engine.work(&PodKey::new("default", "web")).is_none());
        assert_eq!(sim.engine.pod_count(), 1, "its pods are forgotten");
    }

    #[test]
    fn a_node_followed_again_is_a_node_that_joins() {
        let mut sim = Sim::new();
        sim.at(0, pod("web", "u1", "n1", &[tol("a", Some(300))]))
            .at(0, node("n1", &[taint("a")]))
            .at(50, Input::NodeLeft("n1".into()))
            .at(100, node("n1", &[taint("a")]))
            .at(101, pod("web", "u1", "n1", &[tol("a", Some(300))]))
            .drive();
        assert_eq!(sim.cancellations(), [("web".to_string(), 50)]);
        // Its taint's time is the pod's new start: the countdown starts again from the pass.
        assert_eq!(sim.deletions(), [deleted("web", 401)]);
    }

    #[test]
    fn pod_deleted_cancels_with_an_event() {
        let mut sim = Sim::new();
        sim.at(0, pod("web", "u1", "n1", &[tol("a", Some(300))]))
            .at(0, node("n1", &[taint("a")]))
            .at(50, Input::PodDeleted(PodKey::new("default", "web")))
            .drive();
        assert_eq!(sim.deletions(), []);
        assert_eq!(sim.cancellations(), [("web".to_string(), 50)]);
    }

    #[test]
    fn restart_starts_every_countdown_again() {
        let mut sim = Sim::new();
        sim.at(0, pod("web", "u1", "n1", &[tol("a", Some(300))]))
            .at(0, node("n1", &[taint("a")]))
            .at(205, Input::ControllerRestarted)
            .drive();
        assert_eq!(sim.deletions(), [deleted("web", 505)]);
        assert_eq!(sim.cancellations(), [], "a restart loses timers silently");
    }

    #[test]
    fn unscheduled_pod_is_ignored() {
        let mut sim = Sim::new();
        sim.at(0, node("n1", &[taint("a")])).at(1, pod("pending", "u1", "", &[])).drive();
        assert_eq!(sim.deletions(), []);
    }

    #[test]
    fn untolerated_pod_is_deleted_again_on_every_node_pass() {
        let mut sim = Sim::new();
        sim.at(0, pod("done", "u1", "n1", &[]))
            .at(10, node("n1", &[taint("a")]))
            .at(20, node("n1", &[taint("a"), taint("b")]))
            .drive();
        assert_eq!(sim.deletions(), [deleted("done", 10), deleted("done", 20)]);
    }

    #[test]
    fn completed_work_is_removed_so_a_same_named_pod_is_scheduled_afresh() {
        let mut sim = Sim::new();
        sim.at(0, node("n1", &[taint("a")]))
            .at(10, pod("web-0", "u1", "n1", &[]))
            .at(20, Input::PodDeleted(PodKey::new("default", "web-0")))
            .at(30, pod("web-0", "u2", "n1", &[tol("a", Some(300))]))
            .drive();
        assert_eq!(sim.deletions(), [deleted("web-0", 10), deleted("web-0", 330)]);
    }

    #[test]
    fn in_flight_deletion_blocks_a_finite_timer() {
        let mut sim = Sim::new();
        sim.finish_deletions = false;
        sim.at(0, pod("web", "u1", "n1", &[])).at(10, node("n1", &[taint("a")]));
        sim.at(11, pod("web", "u1", "n1", &[tol("a", Some(300))])).drive();
        assert_eq!(sim.deletions(), [deleted("web", 10)]);
        assert_eq!(sim.engine.armed(), 0);
    }

    #[test]
    fn same_named_pod_recreated_elsewhere_is_not_deleted_by_the_old_timer() {
        // Upstream keys by name only and would let the old timer delete the replacement. A new
        // UID is a new pod here: the old work is cancelled when the replacement is seen.
        let mut sim = Sim::new();
        sim.at(0, pod("web-0", "u1", "n1", &[tol("a", Some(300))]))
            .at(0, node("n1", &[taint("a")]))
            .at(0, node("n2", &[]))
            .at(100, pod("web-0", "u2", "n2", &[tol("a", Some(300))]))
            .drive();
        assert_eq!(sim.deletions(), []);
        assert_eq!(sim.cancellations(), [("web-0".to_string(), 100)]);
    }

    #[test]
    fn untainted_node_never_evaluates_its_pods() {
        // Upstream's processPodOnNode would delete at once if called with no taints; it never is.
        let mut sim = Sim::new();
        sim.at(0, pod("bare", "u1", "n1", &[]))
            .at(10, node("n1", &[]))
            .at(20, node("n1", &[Taint::new("x", "", Effect::NoSchedule)]))
            .drive();
        assert_eq!(sim.deletions(), []);
    }

    #[test]
    fn pod_arriving_before_its_node_is_evaluated_when_the_node_comes() {
        let mut sim = Sim::new();
        sim.at(0, pod("early", "u1", "n9", &[tol("a", Some(60))])).at(5, node("n9", &[taint("a")])).drive();
        assert_eq!(sim.deletions(), [deleted("early", 65)]);
    }

    #[test]
    fn existing_deadline_is_kept_when_a_toleration_is_shortened() {
        // Upstream processPodOnNode's early return, in the shortening direction.
        let mut sim = Sim::new();
        sim.at(0, pod("web", "u1", "n1", &[tol("a", Some(300))]))
            .at(0, node("n1", &[taint("a")]))
            .at(50, pod("web", "u1", "n1", &[tol("a", Some(30))]))
            .drive();
        assert_eq!(sim.deletions(), [deleted("web", 300)]);
    }

    #[test]
    fn existing_deadline_is_kept_when_a_toleration_is_lengthened() {
        // Upstream test "lengthening toleration shouldn't work".
        let mut sim = Sim::new();
        sim.at(0, pod("web", "u1", "n1", &[tol("a", Some(300))]))
            .at(0, node("n1", &[taint("a")]))
            .at(50, pod("web", "u1", "n1", &[tol("a", Some(3600))]))
            .drive();
        assert_eq!(sim.deletions(), [deleted("web", 300)]);
    }

    #[test]
    fn stale_eviction_finished_does_not_remove_newer_work() {
        let mut sim = Sim::new();
        sim.finish_deletions = false;
        sim.at(0, node("n1", &[taint("a")])).at(1, pod("web", "u1", "n1", &[])).drive();
        let Some((_, entry)) = sim.engine.pending().next() else { panic!("in-flight deletion") };
        let old = entry.ticket;
        sim.at(2, node("n1", &[taint("a"), taint("b")])).drive();
        let newer = sim.engine.work(&PodKey::new("default", "web")).map(|e| e.ticket);
        assert_ne!(newer, Some(old));
        sim.at(3, Input::EvictionFinished { pod: PodKey::new("default", "web"), ticket: old }).drive();
        assert_eq!(sim.engine.work(&PodKey::new("default", "web")).map(|e| e.ticket), newer);
    }

    #[test]
    fn unchanged_relist_changes_nothing() {
        let mut sim = Sim::new();
        sim.at(0, pod("web", "u1", "n1", &[tol("a", Some(300))])).at(0, node("n1", &[taint("a")]));
        let relisted = Node { name: "n1".into(), taints: vec![taint("a")].into() };
        sim.at(100, Input::NodesReplaced(vec![relisted])).drive();
        assert_eq!(sim.deletions(), [deleted("web", 300)], "a relist must not restart the countdown");
    }

    #[test]
    fn relist_without_a_pod_cancels_its_work() {
        let mut sim = Sim::new();
        sim.at(0, pod("web", "u1", "n1", &[tol("a", Some(300))]))
            .at(0, node("n1", &[taint("a")]))
            .at(100, Input::PodsReplaced(vec![]))
            .drive();
        assert_eq!(sim.deletions(), []);
        assert_eq!(sim.cancellations(), [("web".to_string(), 100)]);
    }

    #[test]
    fn same_named_replacement_with_a_new_uid_is_a_new_pod() {
        let mut sim = Sim::new();
        sim.at(0, pod("web-0", "u1", "n1", &[tol("a", Some(300))]))
            .at(0, node("n1", &[taint("a")]))
            .at(100, pod("web-0", "u2", "n1", &[tol("a", Some(300))]))
            .drive();
        assert_eq!(sim.cancellations(), [("web-0".to_string(), 100)]);
        assert_eq!(sim.deletions(), [deleted("web-0", 400)]);
    }
}
