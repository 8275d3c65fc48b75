//! The live cluster, through kube-rs: connecting as kubectl does, and reading a [`Snapshot`] with the
//! fewest requests that answer the question.
//!
//! Responses are read as raw JSON and decoded by `decode`, so live and offline input
//! go through one conversion into the engine's model (and only the fields the engine needs are kept).
//!
//! [`Snapshot`]: crate::engine::snapshot::Snapshot
//!
//! Owns: every request to the API server, those that keep the clock to the control plane's included
//! (`clock_reads`). Uses: `decode` for every answer and watch event, the engine's model, the clock
//! (`time`, whose layer under the client reads every answer's `Date`), the runtime's seams (evictor,
//! throttle), the metrics, the selector, and `words` for durations in messages.

pub mod bound;
pub mod client;
mod clock_reads;
pub mod devices;
pub mod error;
pub mod evict;
pub mod lease;
pub mod lifecycle;
pub mod protobuf;
pub mod pushback;
pub mod series;
pub mod snapshot;
pub mod watch;

pub use client::{ConnectOptions, Connection, ReadFrom, connect};
pub use error::ClusterError;
pub use snapshot::{
    NodeSelection, UpstreamEvictions, read_controller, read_pod, read_snapshot, recent_upstream_evictions,
};
