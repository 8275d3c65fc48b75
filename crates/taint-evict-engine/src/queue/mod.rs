//! The eviction queue: pending deletions keyed by pod, with one ordered deadline index.
//!
//! Upstream's `TimedWorkerQueue` (`pkg/controller/tainteviction/timed_workers.go`) arms one timer per
//! pod. Here the queue is data: an [`Entry`] per key, in a table indexed by the key (keys are dense
//! numbers, [`QueueKey`]), and one deadline index. The IO layer sleeps until
//! [`EvictionQueue::next_deadline`] and calls [`EvictionQueue::pop_due`]; nothing runs by itself.
//!
//! The deadline index is a hierarchical timing wheel (`queue/wheel.rs`) for the timers later than the
//! current granule, and a binary heap for those in it (or earlier): adding a timer is a push, and
//! timers are ordered only when they are among the earliest. A queue that never holds more than 64
//! timers keeps them all in the heap and never builds the wheel. Deadlines outside `i64` nanoseconds
//! (before 1677 or after 2262: only a window of centuries, or a replay's beginning of time, reaches
//! them) sit in a `BTreeMap` beside it. Firing order is deadline, then ticket.
//!
//! Cancelling leaves the timer behind (lazy deletion): a stored timer is live only while its key's
//! entry holds the same ticket, armed. Dead timers are dropped when they come up, and swept out when
//! they outnumber the live ones, so memory stays proportional to the pending work. The earliest
//! deadline is kept up to date after every change, so `next_deadline` is exact and O(1).

mod entries;
mod eviction_queue;
mod wheel;

pub use entries::{Cause, Entry, EntryState, QueueKey, Ticket, Work};
pub use eviction_queue::{Added, EvictionQueue};
