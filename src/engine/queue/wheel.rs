//! The hierarchical timing wheel behind the queue's deadline index.
//!
//! Deadlines are grouped by granule (2^26 ns, about 67 ms). The wheel holds the timers whose granule
//! is later than its current one, in levels of 64 slots: level `l` spans 64^l granules per slot, and
//! a timer sits at the level of the highest bit in which its granule differs from the current one.
//! So every timer of a level is earlier than every timer of the levels above, and within a level the
//! slots are in time order. Inserting is a push onto a slot; nothing is sorted until it comes due:
//! [`Wheel::take_earliest`] hands over the earliest slot and moves the current granule up to it, and
//! the queue puts back what is not in that granule, one level lower or more. A timer moves down at
//! most once per level, and only when it is among the earliest.

use std::mem;

/// Bits of a deadline (in nanoseconds) below its granule.
const GRANULE_BITS: u32 = 26;
/// Bits of a granule number per level.
const SLOT_BITS: u32 = 6;
/// Slots per level.
const SLOTS: usize = 1 << SLOT_BITS;
/// Levels: granule numbers have 64 − 26 = 38 bits, 6 per level.
const LEVELS: usize = (64 - GRANULE_BITS).div_ceil(SLOT_BITS) as usize;

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
    /// `LEVELS` × `SLOTS` slots, level by level.
    slots: Box<[Vec<Timer<K>>]>,
    /// One bit per non-empty slot, one word per level.
    occupied: [u64; LEVELS],
    /// How many timers the slots hold.
    len: usize,
}

impl<K> Default for Wheel<K> {
    fn default() -> Self {
        Self {
            current: 0,
            slots: std::iter::repeat_with(Vec::new).take(LEVELS * SLOTS).collect(),
            occupied: [0; LEVELS],
            len: 0,
        }
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
        let level = (63 - (granule ^ self.current).leading_zeros()) / SLOT_BITS;
        let slot = (granule >> (level * SLOT_BITS)) as usize % SLOTS;
        self.slots[level as usize * SLOTS + slot].push(timer);
        self.occupied[level as usize] |= 1 << slot;
        self.len += 1;
        Ok(())
    }

    /// Removes the timers of the earliest slot, which hold the earliest timer of the wheel, and makes
    /// that timer's granule the current one. The caller inserts them again: those of the new current
    /// granule come back, the others land on lower levels. `None` when the wheel is empty.
    pub(super) fn take_earliest(&mut self) -> Option<Vec<Timer<K>>> {
        let level = self.occupied.iter().position(|&bits| bits != 0)?;
        let slot = self.occupied[level].trailing_zeros() as usize;
        self.occupied[level] &= !(1 << slot);
        let timers = mem::take(&mut self.slots[level * SLOTS + slot]);
        self.len -= timers.len();
        // The slot's timers share every bit above this level with the current granule and with each
        // other, so moving the current granule to the earliest of them keeps every other timer at its
        // level and slot.
        self.current = timers.iter().map(|timer| granule(timer.fire)).min().expect("occupied slots hold timers");
        Some(timers)
    }

    /// Keeps only the timers for which `keep` says so, and frees emptied slots.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(&Timer<K>) -> bool) {
        for (level, bits) in self.occupied.iter_mut().enumerate() {
            let mut rest = *bits;
            while rest != 0 {
                let slot = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                let timers = &mut self.slots[level * SLOTS + slot];
                self.len -= timers.len();
                timers.retain(&mut keep);
                self.len += timers.len();
                if timers.is_empty() {
                    *timers = Vec::new();
                    *bits &= !(1 << slot);
                } else if timers.capacity() > 4 * timers.len() {
                    timers.shrink_to(2 * timers.len());
                }
            }
        }
    }

    /// Removes every timer and frees the slots.
    pub(super) fn clear(&mut self) {
        for (level, bits) in self.occupied.iter_mut().enumerate() {
            while *bits != 0 {
                let slot = bits.trailing_zeros() as usize;
                *bits &= *bits - 1;
                self.slots[level * SLOTS + slot] = Vec::new();
            }
        }
        self.len = 0;
    }
}
