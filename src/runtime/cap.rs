//! `--max-deletions`: at most N deletions start in any window (docs/run.md, "A cap on deletions").
//! [`Cap`] counts them across terms and, through the ledger, across leaders and restarts: a
//! deletion counted with a Lease waits until the count is written on it. A refused eviction is no
//! deletion: its slot is given back.

use std::collections::VecDeque;
use std::time::Duration;

use super::ledger::{Ledger, Recorded};
use crate::engine::time::Timestamp;

/// The deletions started in the window, and the limit.
#[derive(Debug)]
pub(super) struct Cap {
    /// At most this many in any window of this length; `None`: no cap.
    limit: Option<(u32, Duration)>,
    /// When each deletion in the window started, oldest first.
    started: VecDeque<Timestamp>,
    ledger: Ledger,
    /// The ledger is written on a Lease: a deletion counted waits for the write.
    lease: bool,
}

impl Cap {
    /// `limit` (`None`: no cap), counted in `ledger`, which a Lease carries when `lease`.
    pub(super) fn new(limit: Option<(u32, Duration)>, ledger: Ledger, lease: bool) -> Self {
        Self { limit, started: VecDeque::new(), ledger, lease }
    }

    /// The limit, when there is one.
    pub(super) fn limit(&self) -> Option<(u32, Duration)> {
        self.limit
    }

    /// A term begins: the deletions counted before (in earlier terms and, with a Lease, by the leader
    /// before or a `run` before this one), those still in the window as of `now`.
    pub(super) fn begin(&mut self, now: Timestamp) {
        self.started = self.ledger.started().into();
        self.prune(now);
    }

    fn window(&self) -> Option<(u32, i64)> {
        self.limit.map(|(max, window)| (max, i64::try_from(window.as_nanos()).unwrap_or(i64::MAX)))
    }

    /// When a deletion is next allowed, as of `now`: `now` when the window has room, else when its
    /// oldest deletion leaves it; `None` without a cap. One `now` for the question and its answer: a
    /// slot free now is never taken for one that frees later.
    pub(super) fn next_slot(&self, now: Timestamp) -> Option<Timestamp> {
        let (max, window) = self.window()?;
        let recent = self.started.iter().filter(|at| at.add_nanos(window) > now).count();
        if recent < max as usize {
            return Some(now);
        }
        self.started.iter().rev().nth(max as usize - 1).map(|at| at.add_nanos(window))
    }

    /// Forgets the deletions that left the window as of `now`.
    pub(super) fn prune(&mut self, now: Timestamp) {
        if let Some((_, window)) = self.window() {
            while self.started.front().is_some_and(|at| at.add_nanos(window) <= now) {
                self.started.pop_front();
            }
        }
    }

    /// Counts a deletion started `now`; with a Lease, what it waits for before it is sent (the
    /// count written on it).
    pub(super) fn count(&mut self, now: Timestamp) -> Option<Recorded> {
        self.started.push_back(now);
        let recorded = self.ledger.count(self.started.iter().copied());
        self.lease.then_some(recorded)
    }

    /// The deletion counted at `at` was refused: no deletion, its slot is free again.
    pub(super) fn give_back(&mut self, at: Timestamp) {
        if let Some(slot) = self.started.iter().position(|started| *started == at) {
            self.started.remove(slot);
            self.ledger.count(self.started.iter().copied());
        }
    }
}

#[cfg(test)]
mod tests;
