//! The watches interrupted and not yet listed again.

use super::changes::{NodeChange, PodChange};
use crate::engine::time::Timestamp;

/// Which watches are interrupted: until each one's re-list is in, what the engine decides may rest
/// on what it can no longer see (docs/run.md, "Continuous watches").
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Gaps {
    nodes: Option<Timestamp>,
    pods: Option<Timestamp>,
}

impl Gaps {
    /// Since when the oldest open gap began, and which watches are in one.
    pub(super) fn open(&self) -> Option<(Timestamp, &'static str)> {
        match (self.nodes, self.pods) {
            (Some(n), Some(p)) => Some((n.min(p), "nodes and pods")),
            (Some(n), None) => Some((n, "nodes")),
            (None, Some(p)) => Some((p, "pods")),
            (None, None) => None,
        }
    }

    /// Follows a node change: an interruption opens the nodes' gap, a re-list closes it.
    pub(super) fn node(&mut self, change: &NodeChange, now: Timestamp) {
        match change {
            NodeChange::Interrupted => self.nodes = self.nodes.or(Some(now)),
            NodeChange::Listed(_) => self.nodes = None,
            _ => {}
        }
    }

    /// Follows a pod change, as [`Gaps::node`].
    pub(super) fn pod(&mut self, change: &PodChange, now: Timestamp) {
        match change {
            PodChange::Interrupted => self.pods = self.pods.or(Some(now)),
            PodChange::Listed(_) | PodChange::Resumed => self.pods = None,
            _ => {}
        }
    }
}

#[cfg(test)]
// The loop's tests on tokio's paused clock measure its time directly.
#[allow(clippy::disallowed_methods)]
mod tests;
