//! The queue itself: each key's entry in a table, and the one deadline index (a binary heap for the
//! earliest timers, the timing wheel for later ones, a map for those outside `i64` nanoseconds).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use super::entries::{Entry, EntryState, QueueKey, Ticket, Work};
use super::wheel::{self, Timer, Wheel};
use crate::slab::Slab;
use crate::time::Timestamp;

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
    /// Each key's work, armed or in flight.
    entries: Slab<Entry>,
    /// Timers in granules after the wheel's current one.
    wheel: Wheel<K>,
    /// Timers in the wheel's current granule or earlier, earliest on top.
    near: BinaryHeap<Reverse<Timer<K>>>,
    /// The timers the wheel hands over to `near`, on their way (kept for its allocation).
    due: Vec<Timer<K>>,
    /// How many of the timers in `near` were armed there directly, earlier than the wheel's current
    /// granule, since `near` was last empty.
    early: usize,
    /// Whether `near` holds every timer, whatever its granule, the wheel being empty: a queue of a few
    /// timers (an engine replaying one node) never builds the wheel.
    loose: bool,
    /// Timers whose deadline is outside `i64` nanoseconds, by deadline and ticket. Removed when
    /// cancelled, so all are live.
    far: BTreeMap<(Timestamp, Ticket), K>,
    /// The deadline and ticket of the earliest live timer.
    earliest: Option<(Timestamp, Ticket)>,
    armed: usize,
    next_ticket: u64,
}

impl<K> Default for EvictionQueue<K> {
    fn default() -> Self {
        Self {
            entries: Slab::default(),
            wheel: Wheel::default(),
            near: BinaryHeap::new(),
            due: Vec::new(),
            early: 0,
            loose: false,
            far: BTreeMap::new(),
            earliest: None,
            armed: 0,
            next_ticket: 0,
        }
    }
}

impl<K: QueueKey> EvictionQueue<K> {
    /// An empty queue.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The work for `key`, armed or in flight.
    #[must_use]
    pub fn get(&self, key: &K) -> Option<&Entry> {
        self.entries.get(key.index())
    }

    /// How many keys have work (armed or in flight).
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no key has work.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.len() == 0
    }

    /// How many timers are armed.
    #[must_use]
    pub fn armed(&self) -> usize {
        self.armed
    }

    /// Iterates over every key with its work, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (K, &Entry)> {
        self.entries.iter().map(|(index, entry)| (K::from_index(index), entry))
    }

    /// Adds work for `key` unless it already has some. Work due at once is in flight on return.
    ///
    /// Mirrors `TimedWorkerQueue.AddWork`.
    pub fn add(&mut self, key: K, work: Work) -> Added {
        if work.is_immediate() {
            return self.add_due(key, work);
        }
        let ticket = Ticket(self.next_ticket);
        if !self.entries.insert_vacant(key.index(), Entry { work, ticket, state: EntryState::Armed }) {
            return Added::Skipped;
        }
        self.next_ticket += 1;
        self.arm(key, work.fire, ticket);
        Added::Armed(ticket)
    }

    /// Adds work for `key` that is already due (unless the key has some): it is in flight on return,
    /// whatever its deadline says. Used when seeding with work that fell due before the engine ran.
    pub fn add_due(&mut self, key: K, work: Work) -> Added {
        let ticket = Ticket(self.next_ticket);
        if !self.entries.insert_vacant(key.index(), Entry { work, ticket, state: EntryState::InFlight }) {
            return Added::Skipped;
        }
        self.next_ticket += 1;
        Added::Fired(ticket)
    }

    /// Removes `key`'s work, armed or in flight, and returns it.
    ///
    /// Mirrors `TimedWorkerQueue.CancelWork`; the caller tells a live timer ([`Entry::is_armed`]) from
    /// an in-flight deletion, which upstream cancels silently.
    pub fn cancel(&mut self, key: &K) -> Option<Entry> {
        let entry = self.entries.take(key.index())?;
        if entry.is_armed() {
            self.armed -= 1;
            if nanos(entry.work.fire).is_none() {
                self.far.remove(&(entry.work.fire, entry.ticket));
            }
            if self.earliest == Some((entry.work.fire, entry.ticket)) {
                self.find_earliest();
            }
            self.sweep_if_sparse();
        }
        Some(entry)
    }

    /// Removes every entry, armed or in flight, without reporting any (a restarted controller loses
    /// its timers).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.wheel.clear();
        self.near = BinaryHeap::new();
        self.early = 0;
        self.loose = false;
        self.far.clear();
        self.earliest = None;
        self.armed = 0;
    }

    /// The earliest armed deadline. Exact and O(1): it is kept up to date by every change.
    #[must_use]
    pub fn next_deadline(&self) -> Option<Timestamp> {
        self.earliest.map(|(fire, _)| fire)
    }

    /// Fires the earliest armed work due at or before `now`: it is in flight on return.
    pub fn pop_due(&mut self, now: Timestamp) -> Option<(K, Entry)> {
        let (fire, ticket) = self.earliest?;
        if fire > now {
            return None;
        }
        let key = if nanos(fire).is_some() {
            let timer = self.settle().expect("the earliest timer is stored");
            debug_assert_eq!(timer.ticket, ticket.0, "the earliest timer is on top once settled");
            self.near.pop();
            timer.key
        } else {
            self.far.remove(&(fire, ticket)).expect("the earliest timer is stored")
        };
        let entry = self.entries.get_mut(key.index()).expect("a live timer has its entry");
        entry.state = EntryState::InFlight;
        let fired = *entry;
        self.armed -= 1;
        self.find_earliest();
        Some((key, fired))
    }

    /// Ends in-flight work once its deletion completed, success or not (upstream ≥ 1.33 deletes the
    /// key on completion). A stale ticket changes nothing. Returns whether the entry was removed.
    pub fn finish(&mut self, key: &K, ticket: Ticket) -> bool {
        match self.entries.get(key.index()) {
            Some(entry) if entry.ticket == ticket && entry.state == EntryState::InFlight => {
                self.entries.take(key.index());
                true
            }
            _ => false,
        }
    }

    /// Stores a timer for `key`'s newly armed work.
    fn arm(&mut self, key: K, fire: Timestamp, ticket: Ticket) {
        self.armed += 1;
        if self.earliest.is_none_or(|earliest| (fire, ticket) < earliest) {
            self.earliest = Some((fire, ticket));
        }
        match nanos(fire) {
            Some(nanos) => {
                let timer = Timer { fire: nanos, ticket: ticket.0, key };
                if self.wheel.len() == 0 && self.near.is_empty() {
                    self.loose = true;
                }
                if self.loose {
                    if self.near.len() < LOOSE {
                        self.near.push(Reverse(timer));
                        return;
                    }
                    self.rebase();
                }
                if let Err(timer) = self.wheel.insert(timer) {
                    self.near.push(Reverse(timer));
                    self.early += 1;
                    if self.early > REBASE_AFTER && 8 * self.early > self.near.len() + self.wheel.len() {
                        self.rebase();
                    }
                }
            }
            None => {
                self.far.insert((fire, ticket), key);
            }
        }
    }

    /// Whether `timer` is its key's current armed work.
    fn is_live(entries: &Slab<Entry>, timer: &Timer<K>) -> bool {
        entries.get(timer.key.index()).is_some_and(|e| e.ticket.0 == timer.ticket && e.is_armed())
    }

    /// Drops dead timers from the top of `near`, refilling it from the wheel when it runs empty, and
    /// returns the earliest live timer within `i64` nanoseconds (then on top of `near`).
    fn settle(&mut self) -> Option<Timer<K>> {
        loop {
            while let Some(&Reverse(top)) = self.near.peek() {
                if Self::is_live(&self.entries, &top) {
                    return Some(top);
                }
                self.near.pop();
            }
            self.early = 0;
            if !self.wheel.advance(&mut self.due) {
                return None;
            }
            // Dead timers are dropped on the way in. Reading the entries of the timers handed over in
            // one tight loop lets their cache misses overlap, instead of taking one miss per pop.
            let entries = &self.entries;
            self.due.retain(|timer| Self::is_live(entries, timer));
            self.near.extend(self.due.drain(..).map(Reverse));
            if self.due.capacity() > DUE_CAPACITY {
                self.due = Vec::new();
            }
        }
    }

    /// Places every stored timer again, relative to the earliest of them: when a loose heap outgrows
    /// itself, and when early work piles up in it. The wheel's current granule only moves forward as
    /// timers come due, so work armed earlier than it (shorter windows than the earliest pending one)
    /// goes to the binary heap; once that is an eighth of the timers, they all go back into the wheel.
    /// The cost is paid for by the timers armed since `near` was last empty.
    fn rebase(&mut self) {
        let mut timers: Vec<Timer<K>> = self.near.drain().map(|Reverse(timer)| timer).collect();
        self.wheel.drain_into(&mut timers);
        let entries = &self.entries;
        timers.retain(|timer| Self::is_live(entries, timer));
        let earliest = timers.iter().map(|timer| wheel::granule(timer.fire)).min().unwrap_or(0);
        self.wheel.restart_at(earliest.saturating_sub(1));
        for timer in timers {
            if let Err(timer) = self.wheel.insert(timer) {
                self.near.push(Reverse(timer));
            }
        }
        self.early = 0;
        self.loose = false;
    }

    /// Recomputes the earliest live timer after it was cancelled or fired.
    fn find_earliest(&mut self) {
        let near = self.settle().map(|timer| (Timestamp::from_nanos(timer.fire.into()), Ticket(timer.ticket)));
        let far = self.far.first_key_value().map(|(&earliest, _)| earliest);
        self.earliest = match (near, far) {
            (Some(near), Some(far)) => Some(near.min(far)),
            (near, far) => near.or(far),
        };
    }

    /// Sweeps the dead timers out once they outnumber the live ones (plus a little slack).
    fn sweep_if_sparse(&mut self) {
        let live = self.armed - self.far.len();
        if self.near.len() + self.wheel.len() > 2 * live + 64 {
            let entries = &self.entries;
            self.near.retain(|Reverse(timer)| Self::is_live(entries, timer));
            self.wheel.retain(|timer| Self::is_live(entries, timer));
        }
    }
}

/// How many timers a queue keeps in its binary heap alone before it builds the wheel (small under test,
/// so that the model test exercises the change).
const LOOSE: usize = if cfg!(test) { 4 } else { 64 };

/// How many timers may be armed into the binary heap, earlier than the wheel's current granule, before
/// a rebase is considered (small under test, so that the model test exercises it).
const REBASE_AFTER: usize = if cfg!(test) { 4 } else { 4096 };

/// The largest buffer of handed-over timers kept between uses, in timers.
const DUE_CAPACITY: usize = 4096;

/// `at` in nanoseconds since the Unix epoch, when that fits in an `i64` (years 1677 to 2262).
fn nanos(at: Timestamp) -> Option<i64> {
    i64::try_from(at.as_nanos()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::Cause;

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
        // Upstream's placeholder: the finite path cannot add while the deletion runs (its empty
        // entry holds the pod's key).
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
    fn queue_fires_thousands_of_scrambled_timers_in_order_after_cancels() {
        // Deadlines over a day (large slots spread over lower levels), clustered in one granule
        // (a slot handed over whole), and equal (ticket order).
        let fire = |key: u32| match key % 4 {
            0 => 1 + i64::from(key.wrapping_mul(2_654_435_761) % 86_400),
            1 => 40_000,
            _ => 50_000 + i64::from(key % 7),
        };
        let mut q = EvictionQueue::new();
        for key in 0..10_000u32 {
            assert!(matches!(q.add(key, expiring(0, fire(key))), Added::Armed(_)));
        }
        for key in (0..10_000u32).step_by(3) {
            assert!(q.cancel(&key).is_some_and(|e| e.is_armed()));
        }
        let mut expected: Vec<(i64, u32)> = (0..10_000u32).filter(|k| k % 3 != 0).map(|k| (fire(k), k)).collect();
        expected.sort_unstable();
        assert_eq!(q.next_deadline(), Some(t(expected[0].0)));
        let fired: Vec<(i64, u32)> = std::iter::from_fn(|| q.pop_due(t(86_401)))
            .map(|(key, entry)| (entry.work.fire.as_nanos() as i64 / 1_000_000_000, key))
            .collect();
        assert_eq!(fired, expected, "deadline order, then the order the work was added in");
        assert_eq!((q.armed(), q.next_deadline()), (0, None));
    }

    #[test]
    fn work_armed_before_the_wheels_current_granule_goes_back_into_the_wheel() {
        let mut q = EvictionQueue::new();
        let _ = q.add(0u32, expiring(0, 10));
        for key in 1..=10u32 {
            let _ = q.add(key, expiring(0, 86_400));
        }
        assert!(!q.loose, "more timers than a loose heap holds build the wheel");
        // Cancelling the earliest timer moves the wheel on to the next ones, a day later.
        q.cancel(&0);
        assert_eq!(q.next_deadline(), Some(t(86_400)));
        for key in 11..1_000u32 {
            let _ = q.add(key, expiring(0, i64::from(key * 37 % 997) + 1));
        }
        assert!(q.near.len() < q.armed() / 4, "{} timers kept in the heap instead of the wheel", q.near.len());
        let fired: Vec<i64> = std::iter::from_fn(|| q.pop_due(t(86_400)))
            .map(|(_, entry)| entry.work.fire.as_nanos() as i64 / 1_000_000_000)
            .collect();
        assert_eq!(fired.len(), 999);
        assert!(fired.is_sorted(), "fired out of order");
    }

    #[test]
    fn a_few_timers_never_build_the_wheel() {
        let mut q = EvictionQueue::new();
        for key in 0..LOOSE as u32 {
            let _ = q.add(key, expiring(0, 1_000 - i64::from(key)));
        }
        assert!(q.loose && q.wheel.len() == 0);
        let _ = q.add(LOOSE as u32, expiring(0, 5_000));
        assert!(!q.loose && q.near.len() + q.wheel.len() == LOOSE + 1, "one more builds the wheel");
        let fired: Vec<u32> = std::iter::from_fn(|| q.pop_due(t(5_000))).map(|(key, _)| key).collect();
        let expected: Vec<u32> = (0..LOOSE as u32).rev().chain([LOOSE as u32]).collect();
        assert_eq!(fired, expected);
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
        let stored = q.near.len() + q.wheel.len();
        assert!(stored <= 64, "{stored} dead timers kept");
        assert_eq!(q.next_deadline(), None);
    }
}

#[cfg(test)]
mod model_tests {
    //! The queue against a naive model: a map of entries, and the earliest armed one found by a scan.

    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;
    use crate::queue::Cause;

    #[derive(Clone, Debug)]
    enum Op {
        Add(u32, i128, i128),
        AddDue(u32, i128),
        Cancel(u32),
        Pop(i128),
        Finish(u32, bool),
        Clear,
    }

    const BASE: i128 = 1_795_341_600_000_000_000;
    const GRANULE: i128 = 1 << 26;

    /// Instants that share granules, straddle them, lie days apart, or sit at and beyond the ends
    /// of `i64` nanoseconds.
    fn instant() -> impl Strategy<Value = i128> {
        prop_oneof![
            (0i128..4).prop_map(|d| BASE + d),
            (0i128..300).prop_map(|d| BASE + d * GRANULE / 3),
            (0i128..100_000).prop_map(|d| BASE + d * 1_000_000_007),
            (0i128..(1 << 40)).prop_map(|d| BASE + d * 65_536),
            any::<i64>().prop_map(i128::from),
            (-3i128..3).prop_map(|d| i128::from(i64::MAX) + d),
            (-3i128..3).prop_map(|d| i128::from(i64::MIN) + d),
            (0i128..3).prop_map(|d| i128::MIN / 2 + d),
            (0i128..3).prop_map(|d| i128::MAX / 2 - d),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        let key = 0u32..12;
        prop_oneof![
            6 => (key.clone(), instant(), prop_oneof![Just(0i128), Just(1), Just(1_000_000_000)])
                .prop_map(|(k, fire, back)| Op::Add(k, fire, back)),
            1 => (key.clone(), instant()).prop_map(|(k, fire)| Op::AddDue(k, fire)),
            3 => key.clone().prop_map(Op::Cancel),
            4 => instant().prop_map(Op::Pop),
            2 => (key, any::<bool>()).prop_map(|(k, stale)| Op::Finish(k, stale)),
            1 => Just(Op::Clear),
        ]
    }

    fn work(created: i128, fire: i128) -> Work {
        let at = Timestamp::from_nanos;
        Work { created: at(created), fire: at(fire), cause: Cause::Expired { seconds: 1 } }
    }

    #[derive(Default)]
    struct Model {
        entries: BTreeMap<u32, Entry>,
        next_ticket: u64,
    }

    impl Model {
        fn add(&mut self, key: u32, work: Work, state: EntryState) -> Added {
            if self.entries.contains_key(&key) {
                return Added::Skipped;
            }
            let ticket = Ticket(self.next_ticket);
            self.next_ticket += 1;
            self.entries.insert(key, Entry { work, ticket, state });
            if state == EntryState::Armed { Added::Armed(ticket) } else { Added::Fired(ticket) }
        }

        fn earliest(&self) -> Option<(u32, Entry)> {
            let armed = self.entries.iter().filter(|(_, e)| e.is_armed());
            armed.min_by_key(|(_, e)| (e.work.fire, e.ticket)).map(|(&k, &e)| (k, e))
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        #[test]
        fn queue_agrees_with_a_naive_model(ops in prop::collection::vec(op(), 1..120)) {
            let mut queue = EvictionQueue::<u32>::new();
            let mut model = Model::default();
            for op in ops {
                match op {
                    Op::Add(key, fire, back) => {
                        let work = work(fire - back, fire);
                        let state = if work.is_immediate() { EntryState::InFlight } else { EntryState::Armed };
                        prop_assert_eq!(queue.add(key, work), model.add(key, work, state));
                    }
                    Op::AddDue(key, fire) => {
                        let work = work(fire - 1, fire);
                        prop_assert_eq!(queue.add_due(key, work), model.add(key, work, EntryState::InFlight));
                    }
                    Op::Cancel(key) => prop_assert_eq!(queue.cancel(&key), model.entries.remove(&key)),
                    Op::Pop(now) => {
                        let now = Timestamp::from_nanos(now);
                        let expected = model.earliest().filter(|(_, e)| e.work.fire <= now).map(|(k, mut e)| {
                            e.state = EntryState::InFlight;
                            model.entries.insert(k, e);
                            (k, e)
                        });
                        prop_assert_eq!(queue.pop_due(now), expected);
                    }
                    Op::Finish(key, stale) => {
                        let Some(entry) = model.entries.get(&key).copied() else {
                            prop_assert!(!queue.finish(&key, Ticket(0)));
                            continue;
                        };
                        let ticket = if stale { Ticket(entry.ticket.0.wrapping_sub(1)) } else { entry.ticket };
                        let removed = !stale && entry.state == EntryState::InFlight;
                        if removed {
                            model.entries.remove(&key);
                        }
                        prop_assert_eq!(queue.finish(&key, ticket), removed);
                    }
                    Op::Clear => {
                        queue.clear();
                        model.entries.clear();
                    }
                }
                prop_assert_eq!(queue.next_deadline(), model.earliest().map(|(_, e)| e.work.fire));
                prop_assert_eq!(queue.len(), model.entries.len());
                prop_assert_eq!(queue.armed(), model.entries.values().filter(|e| e.is_armed()).count());
                let listed: Vec<_> = queue.iter().map(|(k, e)| (k, *e)).collect();
                let expected: Vec<_> = model.entries.iter().map(|(&k, &e)| (k, e)).collect();
                prop_assert_eq!(listed, expected);
            }
        }

        #[test]
        fn queue_fires_many_timers_in_deadline_then_ticket_order(
            fires in prop::collection::vec(instant(), 1..200),
        ) {
            let mut queue = EvictionQueue::<u32>::new();
            for (key, &fire) in fires.iter().enumerate() {
                let _ = queue.add(key as u32, work(fire - 1, fire));
            }
            let mut expected: Vec<(i128, u32)> = fires.iter().enumerate().map(|(k, &f)| (f, k as u32)).collect();
            expected.sort_unstable();
            let fired: Vec<(i128, u32)> = std::iter::from_fn(|| queue.pop_due(Timestamp::from_nanos(i128::MAX)))
                .map(|(k, e)| (e.work.fire.as_nanos(), k))
                .collect();
            prop_assert_eq!(fired, expected);
        }
    }
}
