//! The eviction queue: pending deletions keyed by pod, with one ordered deadline index.
//!
//! Upstream's `TimedWorkerQueue` (`pkg/controller/tainteviction/timed_workers.go`) arms one timer per
//! pod. Here the queue is data: a map from key to [`Entry`] and a min-heap of `(fire, ticket)`. The IO
//! layer sleeps until [`EvictionQueue::next_deadline`] and calls [`EvictionQueue::pop_due`]; nothing
//! runs by itself.
//!
//! Cancelling leaves the heap entry behind (lazy deletion). A heap entry is live only while the map
//! still holds the same ticket in [`EntryState::Armed`]; dead entries are dropped when they reach the
//! top, and the heap is rebuilt when they outnumber the live ones, so memory stays proportional to the
//! pending work and `next_deadline` is exact and O(1).

use std::cmp::Reverse;
use std::collections::hash_map::Entry as MapEntry;
use std::collections::{BinaryHeap, HashMap};
use std::hash::Hash;

use super::time::Timestamp;

/// Identifies one piece of work. Tickets grow monotonically, so a completion report carrying an old
/// ticket cannot remove the work that replaced it (upstream
/// `TestRunningWorkerCompletionDoesNotRemoveReplacement`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ticket(pub(super) u64);

/// Why a pod is to be deleted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// A NoExecute taint is tolerated by nothing: deletion at once.
    Untolerated,
    /// Every taint is tolerated, the smallest used `tolerationSeconds` (as written) ran out.
    Expired {
        /// The deciding `tolerationSeconds`.
        seconds: i64,
    },
}

/// A deletion with its clock: when the countdown started and when it ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Work {
    /// When the countdown started (upstream `CreatedAt`).
    pub created: Timestamp,
    /// When the pod is deleted (upstream `FireAt`).
    pub fire: Timestamp,
    /// Why.
    pub cause: Cause,
}

impl Work {
    /// Whether the work is due at once (upstream starts it without a timer: `fireAt - createdAt <= 0`).
    #[must_use]
    pub fn is_immediate(&self) -> bool {
        self.fire <= self.created
    }
}

/// Where a piece of work stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryState {
    /// Waiting for its deadline (upstream: a live timer).
    Armed,
    /// Fired; the deletion runs until its completion is reported (upstream: the nil placeholder, or
    /// the running worker).
    InFlight,
}

/// One pod's work in the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The deletion and its clock.
    pub work: Work,
    /// This work's ticket.
    pub ticket: Ticket,
    /// Armed or in flight.
    pub state: EntryState,
}

impl Entry {
    /// Whether a timer is running (upstream `CancelWork` returns true only then).
    #[must_use]
    pub fn is_armed(&self) -> bool {
        self.state == EntryState::Armed
    }
}

/// The result of [`EvictionQueue::add`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum Added {
    /// The key already had work (armed or in flight): nothing changed (upstream `AddWork`'s
    /// "already existing work, skipping").
    Skipped,
    /// A timer was armed.
    Armed(Ticket),
    /// The work was due at once and is in flight now.
    Fired(Ticket),
}

/// Pending deletions, at most one per key, ordered by deadline.
#[derive(Debug)]
pub struct EvictionQueue<K> {
    entries: HashMap<K, Entry>,
    deadlines: BinaryHeap<Reverse<(Timestamp, Ticket, K)>>,
    armed: usize,
    next_ticket: u64,
}

impl<K> Default for EvictionQueue<K> {
    fn default() -> Self {
        Self { entries: HashMap::new(), deadlines: BinaryHeap::new(), armed: 0, next_ticket: 0 }
    }
}

impl<K: Copy + Eq + Hash + Ord> EvictionQueue<K> {
    /// An empty queue.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The work for `key`, armed or in flight.
    #[must_use]
    pub fn get(&self, key: &K) -> Option<&Entry> {
        self.entries.get(key)
    }

    /// How many keys have work (armed or in flight).
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no key has work.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How many timers are armed.
    #[must_use]
    pub fn armed(&self) -> usize {
        self.armed
    }

    /// Iterates over every key with its work, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &Entry)> {
        self.entries.iter()
    }

    /// Adds work for `key` unless it already has some. Work due at once is in flight on return.
    ///
    /// Mirrors `TimedWorkerQueue.AddWork`.
    pub fn add(&mut self, key: K, work: Work) -> Added {
        if work.is_immediate() {
            return self.add_due(key, work);
        }
        let MapEntry::Vacant(slot) = self.entries.entry(key) else {
            return Added::Skipped;
        };
        let ticket = Ticket(self.next_ticket);
        self.next_ticket += 1;
        slot.insert(Entry { work, ticket, state: EntryState::Armed });
        self.deadlines.push(Reverse((work.fire, ticket, key)));
        self.armed += 1;
        Added::Armed(ticket)
    }

    /// Adds work for `key` that is already due (unless the key has some): it is in flight on return,
    /// whatever its deadline says. Used when seeding with work that fell due before the engine ran.
    pub fn add_due(&mut self, key: K, work: Work) -> Added {
        let MapEntry::Vacant(slot) = self.entries.entry(key) else {
            return Added::Skipped;
        };
        let ticket = Ticket(self.next_ticket);
        self.next_ticket += 1;
        slot.insert(Entry { work, ticket, state: EntryState::InFlight });
        Added::Fired(ticket)
    }

    /// Removes `key`'s work, armed or in flight, and returns it.
    ///
    /// Mirrors `TimedWorkerQueue.CancelWork`; the caller tells a live timer ([`Entry::is_armed`]) from
    /// an in-flight deletion, which upstream cancels silently.
    pub fn cancel(&mut self, key: &K) -> Option<Entry> {
        let entry = self.entries.remove(key)?;
        if entry.is_armed() {
            self.armed -= 1;
            self.tidy();
        }
        Some(entry)
    }

    /// Removes every entry, armed or in flight, without reporting any (a restarted controller loses
    /// its timers).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.deadlines.clear();
        self.armed = 0;
    }

    /// The earliest armed deadline. Exact and O(1): the top of the heap is always live.
    #[must_use]
    pub fn next_deadline(&self) -> Option<Timestamp> {
        self.deadlines.peek().map(|Reverse((fire, _, _))| *fire)
    }

    /// Fires the earliest armed work due at or before `now`: it is in flight on return.
    pub fn pop_due(&mut self, now: Timestamp) -> Option<(K, Entry)> {
        let Reverse((fire, _, key)) = *self.deadlines.peek()?;
        if fire > now {
            return None;
        }
        self.deadlines.pop();
        let entry = self.entries.get_mut(&key).expect("the heap's top is always live (tidy)");
        entry.state = EntryState::InFlight;
        let fired = *entry;
        self.armed -= 1;
        self.tidy();
        Some((key, fired))
    }

    /// Ends in-flight work once its deletion completed, success or not (upstream ≥ 1.33 deletes the
    /// key on completion). A stale ticket changes nothing. Returns whether the entry was removed.
    pub fn finish(&mut self, key: &K, ticket: Ticket) -> bool {
        match self.entries.get(key) {
            Some(entry) if entry.ticket == ticket && entry.state == EntryState::InFlight => {
                self.entries.remove(key);
                true
            }
            _ => false,
        }
    }

    fn is_live(&self, ticket: Ticket, key: &K) -> bool {
        self.entries.get(key).is_some_and(|e| e.ticket == ticket && e.is_armed())
    }

    /// Restores the invariants: the top of the heap is live, and dead entries are at most about half.
    fn tidy(&mut self) {
        if self.deadlines.len() > 2 * self.armed + 64 {
            let entries = &self.entries;
            self.deadlines.retain(|Reverse((_, ticket, key))| {
                entries.get(key).is_some_and(|e| e.ticket == *ticket && e.is_armed())
            });
        }
        while let Some(Reverse((_, ticket, key))) = self.deadlines.peek() {
            if self.is_live(*ticket, key) {
                break;
            }
            self.deadlines.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> Timestamp {
        Timestamp::from_unix_seconds(s)
    }

    fn expiring(created: i64, fire: i64) -> Work {
        Work { created: t(created), fire: t(fire), cause: Cause::Expired { seconds: fire - created } }
    }

    #[test]
    fn queue_skips_work_for_a_key_that_has_some() {
        let mut q = EvictionQueue::new();
        assert!(matches!(q.add(1u32, expiring(0, 300)), Added::Armed(_)));
        assert_eq!(q.add(1, expiring(10, 20)), Added::Skipped);
        assert_eq!(q.get(&1).map(|e| e.work.fire), Some(t(300)));
    }

    #[test]
    fn queue_fires_immediate_work_without_a_timer() {
        let mut q = EvictionQueue::new();
        assert!(matches!(q.add(1u32, expiring(5, 5)), Added::Fired(_)));
        assert_eq!(q.next_deadline(), None);
        assert_eq!(q.get(&1).map(|e| e.state), Some(EntryState::InFlight));
        // Upstream's placeholder: the finite path cannot add while the deletion runs (D24).
        assert_eq!(q.add(1, expiring(6, 100)), Added::Skipped);
    }

    #[test]
    fn queue_next_deadline_skips_cancelled_work() {
        let mut q = EvictionQueue::new();
        let _ = q.add(1u32, expiring(0, 10));
        let _ = q.add(2, expiring(0, 20));
        assert_eq!(q.next_deadline(), Some(t(10)));
        assert!(q.cancel(&1).is_some_and(|e| e.is_armed()));
        assert_eq!(q.next_deadline(), Some(t(20)));
        assert_eq!(q.armed(), 1);
    }

    #[test]
    fn queue_pops_due_work_in_deadline_order_and_keeps_it_in_flight() {
        let mut q = EvictionQueue::new();
        let _ = q.add(3u32, expiring(0, 30));
        let _ = q.add(1, expiring(0, 10));
        let _ = q.add(2, expiring(0, 20));
        assert_eq!(q.pop_due(t(9)), None);
        let popped: Vec<_> = std::iter::from_fn(|| q.pop_due(t(20))).map(|(k, _)| k).collect();
        assert_eq!(popped, [1, 2]);
        assert_eq!(q.next_deadline(), Some(t(30)));
        assert_eq!(q.get(&1).map(|e| e.state), Some(EntryState::InFlight));
    }

    #[test]
    fn queue_finish_with_a_stale_ticket_keeps_the_replacement() {
        let mut q = EvictionQueue::new();
        let Added::Fired(old) = q.add(1u32, expiring(0, 0)) else { panic!("immediate work fires") };
        q.cancel(&1);
        let Added::Fired(new) = q.add(1, expiring(1, 1)) else { panic!("immediate work fires") };
        assert!(!q.finish(&1, old), "a late completion of the old work must not remove the new one");
        assert!(q.get(&1).is_some());
        assert!(q.finish(&1, new));
        assert!(q.is_empty());
    }

    #[test]
    fn queue_cancel_of_in_flight_work_is_not_a_live_timer() {
        let mut q = EvictionQueue::new();
        let _ = q.add(1u32, expiring(0, 0));
        assert!(q.cancel(&1).is_some_and(|e| !e.is_armed()));
    }

    #[test]
    fn queue_heap_stays_proportional_to_armed_work_under_churn() {
        let mut q = EvictionQueue::new();
        for round in 0..50u32 {
            for key in 0..100u32 {
                let _ = q.add(key, expiring(0, i64::from(round * 1000 + key) + 1));
            }
            for key in 0..100u32 {
                q.cancel(&key);
            }
        }
        assert!(q.deadlines.len() <= 64, "{} dead heap entries kept", q.deadlines.len());
        assert_eq!(q.next_deadline(), None);
    }
}
