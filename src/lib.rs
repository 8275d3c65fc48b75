//! `kubectl taint-evict`: Kubernetes' NoExecute taint-eviction engine, re-implemented and exposed.
//!
//! # Layout
//!
//! - [`engine`]: the pure engine (no IO, no clock): matching, windows, the eviction queue, the
//!   decision rule, and `plan`'s replay of a snapshot. Everything that decides when a pod dies.
//! - [`source`]: reads snapshots from `kubectl get -o json` dumps.
//! - [`output`]: renders plans as tables, JSON and YAML to any `io::Write`.
//! - [`cli`]: the command line: flags, validation, and the glue that runs each command.
//! - [`error`]: the top-level error, its one-line rendering and exit codes.

#![forbid(unsafe_code)]

pub mod cli;
pub mod cluster;
pub mod decode;
pub mod engine;
pub mod error;
pub mod metrics;
pub mod output;
pub mod runtime;
pub mod selector;
