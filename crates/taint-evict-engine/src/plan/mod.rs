//! What `plan` predicts: a verdict and a deadline for each pod of each node, with the node lifecycle
//! controller's expected taints when they were predicted ([`show_in_plan`]) and the pods stuck
//! terminating ([`mark_stuck`]).

mod devices;
mod history;
mod model;
mod owners;
mod predicted;
mod stuck;

pub use devices::{device_affected_nodes, show_devices};
pub use history::{mark_edited, mark_swapped};
pub use model::{
    Assumed, Basis, EditedDeadline, NodeLifecycle, NodePlan, OwnerLoss, Plan, PodPlan, TolerationsEdited, Verdict,
};
pub(crate) use model::{pod_order, sort_pods};
pub use owners::{Replicas, owner_losses};
pub use predicted::{mark_recovering, rate_zero_ties, show_in_plan};
pub use stuck::mark_stuck;
