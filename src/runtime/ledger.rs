//! `--max-deletions`' count, kept where the next leader reads it (docs/run.md, "What a takeover and
//! a restart know").
//!
//! The loop counts each deletion it starts; the election's lock writes the instants counted on its
//! Lease with its next write (the candidate renews at once when the count changes), and a deletion
//! counted is sent only once that write is done: a leader killed at any instant has written every
//! deletion it sent. The lock adopts what the Lease says when it takes it, and a term begins its count
//! from there: a failover or a restart never frees a slot the window still holds.
//!
//! It carries too the countdowns a taint change left running where the node's taints no longer give
//! them (a shorter taint removed mid-countdown, a `timeAdded` edited): a replay of the cluster cannot
//! see them, so a `run` started afresh takes them from the Lease while the node's taints are as they
//! were written ([`Countdown`]).
//!
//! Without a Lease (a lone `run` that cannot write one) the ledger lives and dies with the process.

use std::sync::Arc;

use tokio::sync::watch;

use crate::engine::model::{NodeName, PodKey, Taint};
use crate::engine::queue::Work;
use crate::engine::time::Timestamp;

/// A countdown a taint change left running where the node's taints no longer give it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Countdown {
    /// The pod.
    pub pod: PodKey,
    /// Its node.
    pub node: NodeName,
    /// The node's NoExecute taints as they were then ([`taints_print`]): the countdown holds only
    /// while they are the same.
    pub taints: u64,
    /// The countdown, as the engine runs it.
    pub work: Work,
}

/// A print of a node's NoExecute taints (key, value, `timeAdded`; FNV-1a, order kept): equal
/// prints, the same taints.
#[must_use]
pub fn taints_print(taints: &[Taint]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    let mut eat = |bytes: &[u8]| {
        for byte in bytes.iter().chain([&0xff]) {
            hash = (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
    };
    for taint in taints.iter().filter(|taint| taint.is_no_execute()) {
        eat(taint.key.as_bytes());
        eat(taint.value.as_bytes());
        eat(&taint.time_added.map_or(i128::MIN, Timestamp::as_nanos).to_le_bytes());
    }
    hash
}

/// The deletions counted, shared by the loop (which counts), the lock (which writes them) and the
/// deletions waiting for the write.
#[derive(Clone, Debug, Default)]
pub struct Ledger(Arc<Shared>);

#[derive(Debug, Default)]
struct Shared {
    counted: watch::Sender<Counted>,
    /// The last generation written on the Lease.
    written: watch::Sender<u64>,
    /// Whether a Lease held by another was read: a standby seeds its engine only then, with the
    /// countdowns it carries.
    adopted: watch::Sender<bool>,
}

/// The instants counted, as of one generation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counted {
    /// Bumped at every change.
    pub generation: u64,
    /// When each deletion still in a window was started, oldest first.
    pub started: Vec<Timestamp>,
    /// The countdowns a replay would not find.
    pub countdowns: Vec<Countdown>,
}

/// A deletion counted in generation `generation`: it may be sent once that generation is written.
#[derive(Clone, Debug)]
pub struct Recorded {
    ledger: Ledger,
    generation: u64,
}

impl Recorded {
    /// Resolves once the count that holds this deletion is on the Lease.
    pub async fn written(&self) {
        let mut written = self.ledger.0.written.subscribe();
        // The sender lives as long as `self.ledger`: the wait ends only by the write.
        let _ = written.wait_for(|written| *written >= self.generation).await;
    }
}

impl Ledger {
    /// The instants counted now, oldest first.
    #[must_use]
    pub fn started(&self) -> Vec<Timestamp> {
        self.0.counted.borrow().started.clone()
    }

    /// The loop counted `started` (every deletion still in the window, oldest first): the deletion
    /// just counted waits for the returned handle.
    pub fn count(&self, started: impl IntoIterator<Item = Timestamp>) -> Recorded {
        let started: Vec<Timestamp> = started.into_iter().collect();
        let mut generation = 0;
        self.0.counted.send_modify(|counted| {
            counted.generation += 1;
            counted.started = started;
            generation = counted.generation;
        });
        Recorded { ledger: self.clone(), generation }
    }

    /// The Lease taken says `started` and `countdowns`: they are what it says, already written.
    pub fn adopt(&self, started: Vec<Timestamp>, countdowns: Vec<Countdown>) {
        let mut generation = 0;
        self.0.counted.send_modify(|counted| {
            counted.generation += 1;
            counted.started = started;
            counted.countdowns = countdowns;
            generation = counted.generation;
        });
        self.written(generation);
        self.0.adopted.send_replace(true);
    }

    /// Whether a Lease held by another has been read ([`Ledger::adopt`]).
    #[must_use]
    pub fn adopted(&self) -> bool {
        *self.0.adopted.borrow()
    }

    /// Resolves once a Lease held by another has been read.
    pub async fn read_from_another(&self) {
        let mut adopted = self.0.adopted.subscribe();
        // The sender lives as long as `self`: the wait ends only by a read.
        let _ = adopted.wait_for(|adopted| *adopted).await;
    }

    /// The countdowns a replay would not find, now.
    #[must_use]
    pub fn countdowns(&self) -> Vec<Countdown> {
        self.0.counted.borrow().countdowns.clone()
    }

    /// The loop's countdowns a replay would not find changed: written with the next write (nothing
    /// waits for it).
    pub fn keep_countdowns(&self, countdowns: Vec<Countdown>) {
        self.0.counted.send_modify(|counted| {
            counted.generation += 1;
            counted.countdowns = countdowns;
        });
    }

    /// What the lock writes next.
    #[must_use]
    pub fn to_write(&self) -> Counted {
        self.0.counted.borrow().clone()
    }

    /// The lock wrote `generation` on the Lease.
    pub fn written(&self, generation: u64) {
        self.0.written.send_if_modified(|written| {
            let newer = generation > *written;
            if newer {
                *written = generation;
            }
            newer
        });
    }

    /// Changes whenever the count does: the candidate writes it at once.
    #[must_use]
    pub fn changes(&self) -> watch::Receiver<Counted> {
        self.0.counted.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use futures::FutureExt;

    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_unix_seconds(seconds)
    }

    #[test]
    fn a_counted_deletion_waits_for_the_write_of_its_count() {
        let ledger = Ledger::default();
        let first = ledger.count([at(1)]);
        assert!(first.written().now_or_never().is_none());
        let second = ledger.count([at(1), at(2)]);
        let Counted { generation, started, .. } = ledger.to_write();
        assert_eq!(started, vec![at(1), at(2)]);
        ledger.written(generation - 1);
        assert!(first.written().now_or_never().is_some());
        assert!(second.written().now_or_never().is_none());
        ledger.written(generation);
        assert!(second.written().now_or_never().is_some());
    }

    #[test]
    fn an_adopted_count_is_written_already_and_replaces_the_old_one() {
        let ledger = Ledger::default();
        let waiting = ledger.count([at(5)]);
        ledger.adopt(vec![at(3), at(4)], Vec::new());
        assert_eq!(ledger.started(), vec![at(3), at(4)]);
        assert!(waiting.written().now_or_never().is_some());
        // An older write confirmed late does not move the mark back.
        ledger.written(1);
        assert!(ledger.count([at(6)]).written().now_or_never().is_none());
    }
}
