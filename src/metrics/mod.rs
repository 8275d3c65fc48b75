//! What `run` exposes to Prometheus, and its health: upstream's two taint-eviction metrics under their
//! names, plus this controller's own (`taint_evict_*`).
//!
//! Upstream's `pod_deletion_duration_seconds` is documented as "taint activated → deletion", measures
//! from the deadline, and records nanoseconds × 1e9 (every sample lands in `+Inf` or is negative). Here
//! it is real seconds from the deadline to the successful DELETE, with upstream's buckets.
//!
//! Owns: the metrics and the health endpoint. Uses: nothing else of the crate.

mod registry;
pub mod server;

pub use registry::*;
