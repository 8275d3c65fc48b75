//! The live commands, `run` and `plan -w`: the cluster's inputs started once, in one order, for both
//! ([`inputs`]), then `run` enforcing what the engine decides ([`enforce`]) or `plan -w` showing it
//! ([`follow`]), both with the node lifecycle controller's taints foreseen ([`foresee`]). The event loops
//! and the tasks that print live here; the renderers they call are in
//! `output`, the engine's driver in `runtime`, the watches in `cluster`. `record` ([`record`]) writes
//! what the watches see into files, for `review`.
//!
//! Owns: the start-up order, the printers' loops, the signals that stop them. Uses: cluster, runtime,
//! output, metrics, config.

mod closed;
mod edited;
mod enforce;
mod follow;
mod foresee;
mod inputs;
mod print;
pub mod record;
mod signal;

pub use enforce::run;
pub use follow::watch;
pub use record::record;
