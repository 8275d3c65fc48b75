//! The hierarchical timing wheel behind the queue's deadline index.
//!
//! Deadlines are grouped by granule (2^26 ns, about 67 ms). The wheel holds the timers whose granule
//! is later than its current one, in levels of 256 slots: level `l` spans 256^l granules per slot,
//! and a timer sits at the level of the highest bit in which its granule differs from the current
//! one. So every timer of a level is earlier than every timer of the levels above, and within a level
//! the slots are in time order. Inserting is a push onto a slot; nothing is ordered until it comes
//! due: [`Wheel::advance`] empties the earliest slot. A small slot is handed over whole (the queue
//! orders it in a binary heap); a large one moves the current granule up to its earliest timer,
//! hands over that granule's timers and spreads the others over lower levels. A timer moves down at
//! most once per level, and only when it is among the earliest.

use std::mem;

/// Bits of a deadline (in nanoseconds) below its granule.
const GRANULE_BITS: u32 = 26;
/// Bits of a granule number per level.
const SLOT_BITS: u32 = 8;
/// Slots per level.
const SLOTS: usize = 1 << SLOT_BITS;
/// Words of the occupancy bitmap per level.
const WORDS: usize = SLOTS / 64;
/// Levels: granule numbers have 64 − 26 = 38 bits, 8 per level.
const LEVELS: usize = (64 - GRANULE_BITS).div_ceil(SLOT_BITS) as usize;
/// A slot with at most this many timers is handed over whole rather than spread over lower levels.
const HAND_OVER: usize = 64;
/// Emptied slot buffers kept for reuse, at most.
const SPARES: usize = 64;
/// The largest buffer kept for reuse, in timers.
const SPARE_CAPACITY: usize = 256;

/// An armed timer as the index stores it: its deadline in nanoseconds, the ticket that tells it from
/// a dead copy left by a cancel, and the key.
#[derive(Clone, Copy, Debug)]
pub(super) struct Timer<K> {
    /// The deadline, nanoseconds since the Unix epoch.
    pub(super) fire: i64,
    /// The ticket of the work that armed it.
    pub(super) ticket: u64,
    /// The key.
    pub(super) key: K,
}

impl<K> Timer<K> {
    /// The firing order: deadline, then ticket (the order the work was added in).
    pub(super) fn order(&self) -> (i64, u64) {
        (self.fire, self.ticket)
    }
}

impl<K> PartialEq for Timer<K> {
    fn eq(&self, other: &Self) -> bool {
        self.order() == other.order()
    }
}

impl<K> Eq for Timer<K> {}

impl<K> PartialOrd for Timer<K> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<K> Ord for Timer<K> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.order().cmp(&other.order())
    }
}

/// The granule of a deadline: its nanoseconds mapped in order onto `u64`, without the low bits.
pub(super) fn granule(fire: i64) -> u64 {
    (fire as u64 ^ 1 << 63) >> GRANULE_BITS
}

/// Timers in granules later than the current one.
#[derive(Debug)]
pub(super) struct Wheel<K> {
    /// The current granule: every timer in the wheel is in a later one.
    current: u64,
    /// `LEVELS` × `SLOTS` slots, level by level; allocated by the first insert.
    slots: Vec<Vec<Timer<K>>>,
    /// One bit per non-empty slot, level by level.
    occupied: [[u64; WORDS]; LEVELS],
    /// How many timers the slots hold.
    len: usize,
    /// Empty buffers of emptied slots, for the next slots to fill: timers move down the levels
    /// constantly, and this spares an allocation and a free for most moves.
    spares: Vec<Vec<Timer<K>>>,
}

impl<K> Default for Wheel<K> {
    fn default() -> Self {
        Self { current: 0, slots: Vec::new(), occupied: [[0; WORDS]; LEVELS], len: 0, spares: Vec::new() }
    }
}

impl<K> Wheel<K> {
    /// How many timers the wheel holds, dead ones included.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Stores `timer` if its granule is later than the current one; otherwise hands it back (it
    /// belongs to the current granule or an earlier one).
    pub(super) fn insert(&mut self, timer: Timer<K>) -> Result<(), Timer<K>> {
        let granule = granule(timer.fire);
        if granule <= self.current {
            return Err(timer);
        }
        if self.slots.is_empty() {
            self.slots.resize_with(LEVELS * SLOTS, Vec::new);
        }
        let level = ((63 - (granule ^ self.current).leading_zeros()) / SLOT_BITS) as usize;
        let slot = (granule >> (level as u32 * SLOT_BITS)) as usize % SLOTS;
        let timers = &mut self.slots[level * SLOTS + slot];
        if timers.capacity() == 0
            && let Some(spare) = self.spares.pop()
        {
            *timers = spare;
        }
        timers.push(timer);
        self.occupied[level][slot / 64] |= 1 << (slot % 64);
        self.len += 1;
        Ok(())
    }

    /// Empties the earliest slot, which holds the earliest timer of the wheel, and appends timers to
    /// `due`: the whole slot if it is small, else the timers of its earliest granule, the others going
    /// back to lower levels. The current granule becomes the latest granule handed over. Returns
    /// `false` when the wheel is empty.
    pub(super) fn advance(&mut self, due: &mut Vec<Timer<K>>) -> bool {
        let Some((level, slot)) = self.earliest_slot() else { return false };
        self.occupied[level][slot / 64] &= !(1 << (slot % 64));
        let mut timers = mem::take(&mut self.slots[level * SLOTS + slot]);
        self.len -= timers.len();
        // The slot's timers share every bit above this level with the current granule and with each
        // other, and every other timer is later. So the current granule may move to any of the slot's
        // granules: every other timer keeps its level and slot, and the slot's later timers go to
        // lower levels.
        let granules = timers.iter().map(|timer| granule(timer.fire));
        if level == 0 || timers.len() <= HAND_OVER {
            self.current = granules.max().expect("occupied slots hold timers");
            due.append(&mut timers);
        } else {
            self.current = granules.min().expect("occupied slots hold timers");
            for timer in timers.drain(..) {
                if let Err(timer) = self.insert(timer) {
                    due.push(timer);
                }
            }
        }
        if timers.capacity() <= SPARE_CAPACITY && self.spares.len() < SPARES {
            self.spares.push(timers);
        }
        true
    }

    /// The level and slot of the earliest non-empty slot.
    fn earliest_slot(&self) -> Option<(usize, usize)> {
        self.occupied.iter().enumerate().find_map(|(level, words)| {
            let (word, bits) = words.iter().enumerate().find(|(_, bits)| **bits != 0)?;
            Some((level, word * 64 + bits.trailing_zeros() as usize))
        })
    }

    /// Keeps only the timers for which `keep` says so, and frees emptied slots.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(&Timer<K>) -> bool) {
        for (level, words) in self.occupied.iter_mut().enumerate() {
            for (word, bits) in words.iter_mut().enumerate() {
                let mut rest = *bits;
                while rest != 0 {
                    let slot = word * 64 + rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    let timers = &mut self.slots[level * SLOTS + slot];
                    self.len -= timers.len();
                    timers.retain(&mut keep);
                    self.len += timers.len();
                    if timers.is_empty() {
                        *timers = Vec::new();
                        *bits &= !(1 << (slot % 64));
                    } else if timers.capacity() > 4 * timers.len() {
                        timers.shrink_to(2 * timers.len());
                    }
                }
            }
        }
    }

    /// Moves every timer into `out`, leaving the wheel empty.
    pub(super) fn drain_into(&mut self, out: &mut Vec<Timer<K>>) {
        for (level, words) in self.occupied.iter_mut().enumerate() {
            for (word, bits) in words.iter_mut().enumerate() {
                while *bits != 0 {
                    let slot = word * 64 + bits.trailing_zeros() as usize;
                    *bits &= *bits - 1;
                    out.append(&mut self.slots[level * SLOTS + slot]);
                }
            }
        }
        self.len = 0;
    }

    /// Makes `current` the current granule of the empty wheel (earlier or later than before).
    pub(super) fn restart_at(&mut self, current: u64) {
        debug_assert_eq!(self.len, 0, "timers are placed relative to the current granule");
        self.current = current;
    }

    /// Removes every timer and frees the slots.
    pub(super) fn clear(&mut self) {
        self.slots = Vec::new();
        self.occupied = [[0; WORDS]; LEVELS];
        self.spares = Vec::new();
        self.len = 0;
    }
}
