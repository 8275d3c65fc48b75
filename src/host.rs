//! What the engine takes from the operating system, supplied here: threads for the independent parts
//! of a replay, and the key of the engine's keyed hashes, drawn at random once per process
//! (docs/architecture.md). Uses the engine only.

use std::sync::OnceLock;

use crate::engine::Engine;
use crate::engine::hash::HashKey;
use crate::engine::observe::Observer;
use crate::engine::plan::Plan;
use crate::engine::replay::{Host, Part, Parts, replay_with};
use crate::engine::snapshot::{Snapshot, WhatIf};
use crate::engine::time::Timestamp;

/// Runs a replay's parts (or an audit's) on threads of their own, the first on the caller's: the
/// plans of a large replay are made on both cores.
#[derive(Clone, Copy, Debug, Default)]
pub struct Threads;

impl Parts for Threads {
    fn map<'a>(&self, parts: usize, run: &(dyn Fn(usize) -> Part<'a> + Sync)) -> Vec<Part<'a>> {
        std::thread::scope(|scope| {
            let others: Vec<_> = (1..parts).map(|i| scope.spawn(move || run(i))).collect();
            let mut done = Vec::with_capacity(parts);
            done.extend((parts > 0).then(|| run(0)));
            for other in others {
                done.push(other.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
            }
            done
        })
    }

    fn each(&self, parts: usize, run: &(dyn Fn(usize) + Sync)) {
        std::thread::scope(|scope| {
            let others: Vec<_> = (1..parts).map(|i| scope.spawn(move || run(i))).collect();
            if parts > 0 {
                run(0);
            }
            for other in others {
                other.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            }
        });
    }
}

/// This process's key for the engine's keyed hashes: random, so that whoever names pods and nodes
/// cannot know it, and the same for the life of the process.
pub fn hash_key() -> HashKey {
    static KEY: OnceLock<HashKey> = OnceLock::new();
    *KEY.get_or_init(|| {
        use std::hash::BuildHasher;
        // std's RandomState is keyed from the operating system's entropy.
        let random = std::hash::RandomState::new();
        HashKey([random.hash_one(0_u64), random.hash_one(1_u64)])
    })
}

/// What the engine's replays take from this process: [`Threads`] and [`hash_key`].
pub fn host() -> Host<'static> {
    Host { parts: &Threads, key: hash_key() }
}

/// An engine keyed by [`hash_key`].
pub fn engine() -> Engine {
    Engine::with_hash_key(hash_key())
}

/// An observer for `plan -w` ([`Observer::new`]) whose start-up replay runs on [`host`].
pub fn observer(controller_acquired: Option<Timestamp>) -> Observer {
    Observer::new(controller_acquired).with_host(host())
}

/// The engine's replay ([`replay_with`]) on [`host`]: the same plan as inline, its parts on two threads.
pub fn replay<'a>(snapshot: &'a Snapshot, selected: &[usize], what_if: &[WhatIf], now: Timestamp) -> Plan<'a> {
    replay_with(snapshot, selected, what_if, now, host())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use super::*;
    use crate::engine::model::{Effect, NodeName, Pod, PodKey, Taint, Toleration, Uid};
    use crate::engine::snapshot::{SnapshotNode, SnapshotPod};

    /// Four tainted nodes sharing 24,000 pods: enough for the replay to come in two parts.
    fn large() -> Snapshot {
        let taint = Taint::new("node.kubernetes.io/unreachable", "", Effect::NoExecute);
        let nodes = (0..4)
            .map(|i| SnapshotNode::new(NodeName::from(format!("n{i}")), BTreeMap::new(), vec![taint.clone()]))
            .collect();
        let tolerations: Arc<[Toleration]> = Arc::from([]);
        let pods = (0..24_000)
            .map(|i| {
                let pod = Pod {
                    key: PodKey::new("web", format!("p{i:05}")),
                    uid: Uid::from(format!("u{i}")),
                    node: Some(NodeName::from(format!("n{}", i % 4))),
                    tolerations: Arc::clone(&tolerations),
                };
                SnapshotPod::running(pod, Some(Timestamp::from_unix_seconds(i)))
            })
            .collect();
        Snapshot { nodes, pods, controller_acquired: None, taken: None, workloads: Default::default() }
    }

    #[test]
    fn the_replays_parts_on_threads_give_the_plan_made_inline_with_the_processs_own_key() {
        assert_eq!(hash_key(), hash_key(), "drawn once");
        let snapshot = large();
        let selected = [3, 0, 2, 1];
        let now = Timestamp::from_unix_seconds(30_000);
        let threaded = replay(&snapshot, &selected, &[], now);
        assert_eq!(threaded, crate::engine::replay::replay(&snapshot, &selected, &[], now));
        assert_eq!(threaded.nodes.iter().map(|n| n.name.as_str()).collect::<Vec<_>>(), ["n3", "n0", "n2", "n1"]);
        assert_eq!(threaded.nodes.iter().map(|n| n.pods.len()).sum::<usize>(), 24_000);
    }
}
