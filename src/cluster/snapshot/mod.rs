//! Reading a snapshot of the cluster: the reads of `plan` and `explain` (`read`, over the requests
//! they are made of, `request`), the names shell completion offers (`names`), what `run` and
//! `plan -w` check before their watches (`preflight`), the Events (`events`), the pods' history
//! (`history`), their controllers' objects (`owners`), and what a cluster's profile is taken from
//! (`profile`).

mod events;
mod history;
mod names;
mod owners;
mod preflight;
mod profile;
mod read;
mod request;

pub use events::{
    UpstreamEvictions, condition_tainted, every_not_ready_since, not_ready_since, recent_upstream_evictions,
};
pub use history::{counting_down, tolerations_written};
pub use names::{namespace_names, namespaces_with_pod, node_names, node_names_selected, pod_names};
pub use owners::owners_of;
pub use preflight::{node_leases_readable, preflight};
pub use profile::{ProfileRead, read_profile};
pub use read::{
    CONCURRENCY, LiveHealth, NodeSelection, PAGE_SIZE, PER_NODE_LISTS_UP_TO, Unsettled, read_controller,
    read_controller_manager, read_pod, read_server_minor, read_snapshot,
};
