//! Snapshot sources other than a live cluster.
//!
//! - [`file`]: a `kubectl get nodes,pods -A -o json` dump (a `v1` `List`), from a file or stdin;
//! - [`bounded`]: reading those bytes so that endless or binary input fails early;
//! - [`lifecycle`]: what the node lifecycle controller reads from such a dump (with Leases).

pub mod bounded;
pub mod file;
pub mod lifecycle;

mod build;
mod seeds;
mod stream;
