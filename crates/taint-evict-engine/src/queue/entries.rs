//! What the queue holds: one [`Entry`] per key, its [`Work`] (a deletion and its clock) and its
//! [`Ticket`], armed or in flight.

use std::fmt;

use crate::time::Timestamp;

/// A key of the queue: a small number, dense enough to index a table by (the engine numbers its pods
/// and reuses the numbers of deleted ones).
pub trait QueueKey: Copy + Eq + fmt::Debug {
    /// The table index of this key.
    fn index(self) -> usize;
    /// The key at table index `index`.
    fn from_index(index: usize) -> Self;
}

impl QueueKey for u32 {
    fn index(self) -> usize {
        self as usize
    }

    fn from_index(index: usize) -> Self {
        u32::try_from(index).expect("indexes come from u32 keys")
    }
}

/// Identifies one piece of work. Tickets grow monotonically, so a completion report carrying an old
/// ticket cannot remove the work that replaced it (upstream
/// `TestRunningWorkerCompletionDoesNotRemoveReplacement`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ticket(pub(crate) u64);

impl Ticket {
    /// Ticket `n` of another queue than the engine's (the device-taint controller's): its numbers
    /// never meet the engine's, so one executor can tell their deletions apart.
    #[must_use]
    pub const fn foreign(n: u64) -> Self {
        Self(n | 1 << 63)
    }
}

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
