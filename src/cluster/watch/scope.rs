//! Which nodes a live command follows, as the node and pod watches both read it.
//!
//! Owns: [`NodeScope`]. Uses: the label selector, the engine's node.

use crate::engine::snapshot::SnapshotNode;
use crate::selector::Selector;

/// Which nodes `run` and `plan -w` follow (the node watch reads every node; the scope says which of
/// them the engine sees and which pods are watched).
#[derive(Clone, Debug)]
pub enum NodeScope {
    /// Every node.
    All,
    /// These, by name.
    Named(Vec<String>),
    /// Those matching a label selector.
    Labels(Selector),
}

impl NodeScope {
    /// Whether `node` is followed.
    #[must_use]
    pub fn admits(&self, node: &SnapshotNode) -> bool {
        match self {
            Self::All => true,
            Self::Named(names) => names.iter().any(|n| n == node.name.as_str()),
            Self::Labels(selector) => selector.matches(&node.labels),
        }
    }
}
