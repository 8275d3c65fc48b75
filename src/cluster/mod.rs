//! The live cluster, through kube-rs: connecting as kubectl does, and reading a [`Snapshot`] with the
//! fewest requests that answer the question.
//!
//! Responses are read as raw JSON and decoded by `decode`, so live and offline input
//! go through one conversion into the engine's model (and only the fields the engine needs are kept).
//!
//! [`Snapshot`]: crate::engine::snapshot::Snapshot
//!
//! Owns: every request to the API server. Uses: `decode` for every answer and watch event, the
//! engine's model, the runtime's seams (clock, evictor, throttle), the metrics, the selector, and
//! `output::human` for durations in messages.

pub mod bound;
pub mod client;
mod date;
pub mod devices;
pub mod error;
pub mod evict;
pub mod lease;
pub mod lifecycle;
pub mod protobuf;
pub mod pushback;
pub mod series;
pub mod snapshot;
pub mod timekeeping;
pub mod watch;

pub use client::{ConnectOptions, Connection, ReadFrom, connect};
pub use error::ClusterError;
pub use snapshot::{NodeSelection, read_controller_acquired, read_pod, read_snapshot, recent_upstream_evictions};
