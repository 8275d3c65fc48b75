//! Snapshot sources other than a live cluster.
//!
//! - [`file`]: a `kubectl get nodes,pods -A -o json` dump (a `v1` `List`), from a file or stdin;
//! - [`bounded`]: reading those bytes so that endless or binary input fails early.

pub mod bounded;
pub mod file;

mod build;
mod seeds;
mod stream;
