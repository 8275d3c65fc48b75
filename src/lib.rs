//! `kubectl taint-evict`: Kubernetes' NoExecute taint-eviction engine, re-implemented and exposed.
//!
//! # Layout
//!
//! Each module's opening comment says what it owns and what it may use; dependencies point one way
//! (`tests/repository/layering.rs` fails on an import cycle between modules or between the parts of one,
//! re-exports followed, and on IO in the engine or the renderers).
//!
//! - [`engine`]: the pure engine (no IO, no clock), the crate `taint-evict-engine` of this workspace
//!   (`crates/taint-evict-engine`): matching, windows, the eviction queue, the decision rule, the
//!   snapshot `plan` reads, its replay and the plan it makes, the node lifecycle prediction. Everything
//!   that decides when a pod dies. It depends on std only: Cargo keeps it from the rest.
//! - [`selector`]: label selectors (`-l`), parsed and matched as the API server does. Uses nothing.
//! - [`words`]: text made safe to print, and durations, for every layer's messages. Uses nothing.
//! - [`decode`]: the one way objects come in: dumps, list pages, single objects and watch events,
//!   decoded into the engine's model with one set of rules. Uses the engine's model.
//! - [`output`]: renders plans, explanations and `run`'s events as tables, JSON and YAML to any
//!   `io::Write`. Uses the engine and `run`'s events (`runtime::report`); never clap.
//! - [`metrics`]: what `run` exposes to Prometheus, and its HTTP endpoint. Uses nothing else.
//! - [`host`]: what the engine takes from the operating system: threads for a replay's independent
//!   parts, and the key of its keyed hashes, drawn once per process. Uses the engine.
//! - [`time`]: the control plane's time: the one clock (this machine's only measures what passes),
//!   how far this machine's is from the control plane's, read off the API server's answers, and the
//!   input stamped after `now`. Uses the engine's instants and the words.
//! - [`runtime`]: `run`'s loop: the inbox order, one timer, the executor, the events' writer, the
//!   election's timing, and the events `run` reports (`runtime::report`, which uses only the engine).
//!   Uses the engine, the host, the clock (`time`) and the metrics.
//! - [`cluster`]: the live cluster through kube-rs: connecting, reading snapshots, watches, leases,
//!   deletions. Uses the decoder, the engine, the clock, the runtime's seams, the metrics and the
//!   selector.
//! - [`error`]: the top-level error, its one-line rendering and exit codes. Uses the cluster's and
//!   the decoder's errors.
//! - [`config`]: the validated configs, one per command (`PlanConfig`, `ExplainConfig`, `AuditConfig`,
//!   `WatchConfig`, `RunConfig`): the one vocabulary between the command line and what runs the
//!   commands. Uses the cluster's connection options, the engine's values, the output's formats and
//!   the selector.
//! - [`screen_size`]: the terminal's size (`COLUMNS`/`LINES`, else the terminal's), for the table and
//!   the live views. Uses the output's sizes.
//! - [`live`]: the live commands, `run` and `plan -w`: their inputs started once, in one order (connection,
//!   clock, watches, the node lifecycle controller's taints foreseen), then `run` enforcing or `plan -w`
//!   showing, and the signals that stop them. Uses the cluster, the runtime, the clock, the output, the
//!   metrics and the configs.
//! - [`cli`]: the command line: flags, validation into the configs, and the glue that runs each command.
//!   Uses all of the above; `main.rs` only calls it.

#![forbid(unsafe_code)]

pub mod cli;
pub mod cluster;
pub mod config;
pub mod decode;
pub use taint_evict_engine as engine;
pub mod error;
pub mod host;
pub mod live;
pub mod metrics;
pub mod output;
pub mod runtime;
pub mod screen_size;
pub mod selector;
pub mod time;
pub mod words;
