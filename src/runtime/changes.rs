//! What the watches tell the runtime: changes to the nodes and to the pods bound to them.

use crate::engine::model::{NodeName, PodKey};
use crate::engine::snapshot::{SnapshotNode, SnapshotPod};

/// A change to the watched nodes.
#[derive(Clone, Debug)]
pub enum NodeChange {
    /// The complete list (the initial list, or a re-list).
    Listed(Vec<SnapshotNode>),
    /// A node was added or changed.
    Applied(SnapshotNode),
    /// A node was deleted.
    Deleted(NodeName),
    /// A node is no longer followed (relabelled out of `-l`): not a deletion, nothing is enforced
    /// there any more (docs/run.md, "What `run` watches"). Followed again, it comes as `Applied`.
    Left(NodeName),
    /// The watch broke: what it said may be out of date until its next `Listed`, and no deletion
    /// is carried out until then (docs/run.md, "Continuous watches").
    Interrupted,
}

/// A change to the pods bound to nodes.
#[derive(Clone, Debug)]
pub enum PodChange {
    /// The complete list (the initial list, or a re-list).
    Listed(Vec<SnapshotPod>),
    /// A pod was added or changed.
    Applied(SnapshotPod),
    /// A pod was deleted.
    Deleted(PodKey),
    /// The watch broke: as [`NodeChange::Interrupted`].
    Interrupted,
    /// The watches interrupted (one per node, merged) have all listed again: the changes since
    /// [`PodChange::Interrupted`] brought the pods up to date, as a `Listed` would have.
    Resumed,
}
