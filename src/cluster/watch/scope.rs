//! Which nodes `run` watches, as the node and pod watches both read it.
//!
//! Owns: [`NodeScope`]. Uses: the label selector.

use crate::selector::Selector;

/// Which nodes `run` watches.
#[derive(Clone, Debug)]
pub enum NodeScope {
    /// Every node.
    All,
    /// These, by name.
    Named(Vec<String>),
    /// Those matching a label selector (server-side).
    Labels(Selector),
}

impl NodeScope {
    pub(super) fn admits(&self, name: &str) -> bool {
        match self {
            Self::Named(names) => names.iter().any(|n| n == name),
            Self::All | Self::Labels(_) => true,
        }
    }
}
