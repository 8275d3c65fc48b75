//! `run`'s loop: watch changes in, the engine's decisions out, one timer, deletions carried out.
//!
//! No business rules live here: the engine decides. The [`driver`] (the one `plan -w` reads through
//! too) orders the inputs and keeps one sleeper armed at the engine's next deadline; the loop
//! (`event_loop`, with what it is given in `options`) feeds the engine, hands due deletions to the
//! [`executor`], queues events for the one writer of [`events`], and reports what happened.
//!
//! One improvement in carrying the decisions out: a pod whose deletion is already under way
//! (`metadata.deletionTimestamp` set, as a pod stays on a node whose kubelet is gone) is not sent
//! another DELETE when its work fires; it is reported gone. Upstream re-deletes it (a no-op on the
//! server, but one more request and event per pod after a failover or beside the cluster's controller).

pub mod absent;
mod cap;
mod carried;
mod changes;
pub mod driver;
pub mod election;
mod engine_input;
mod event_loop;
pub mod events;
pub mod evictor;
pub mod executor;
mod gaps;
pub mod ledger;
mod lists;
mod options;
pub mod replicas;
pub mod report;
mod terminating;
pub mod throttle;

pub use absent::Asked;
pub use changes::{NodeChange, PodChange};
pub use driver::{Driver, Step};
pub use event_loop::run;
pub use events::{Notices, Notifier};
pub use evictor::{Controller, Evictor, Notice, Outcome};
pub use executor::{Done, Executor, Job, Outlets};
pub use options::{DEFAULT_CONCURRENCY, Edits, Leadership, Policy, RunOptions, Sources};
pub use throttle::{Backlog, Throttle};

#[cfg(test)]
// The tests measure tokio's paused time directly.
#[allow(clippy::disallowed_methods)]
mod harness;
#[cfg(test)]
#[allow(clippy::disallowed_methods)]
mod interleavings;
