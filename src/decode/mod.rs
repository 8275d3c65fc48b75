//! The one way objects come in: `kubectl get -o json` dumps, the API server's list pages and single
//! objects, and watch events are all decoded here into the engine's model.
//!
//! Only the fields the engine needs are decoded, borrowing from the input where the JSON has no
//! escapes; everything else is skipped unread. The streaming reader (`stream`) reads the items one at
//! a time and builds each as soon as it is read. When it gives up, the input is read again by the
//! exact reader (`exact`): first whole, then, if that fails too, item by item, to say exactly where it
//! is wrong. Items of other kinds (Services, Deployments, …) are skipped, so
//! `kubectl get all,nodes -A -o json` works as well.
//!
//! # Layout
//!
//! Dependencies point one way, each layer using only those above it:
//!
//! - `seeds`: serde visitors that know no field names; `scan`: the byte-level reader under `stream`,
//!   which skips what nothing reads with a validating scan;
//! - `raw`: the raw types, each JSON field name declared once; `error`: [`DumpError`];
//! - `build`: the rules, from one item's fields to the engine's model;
//! - `stream` (the fast streaming reader) and `exact` (the exact one);
//! - `read`, the facade: [`read`], [`read_page`], [`read_object`], [`read_watched`];
//! - [`bounded`]: reading a dump's bytes so that endless or binary input fails early, and a large
//!   file a group of items at a time (`groups` cuts it into groups);
//! - [`lifecycle`]: what the node lifecycle controller reads from a dump (with Leases);
//! - [`manifests`]: rendered manifests, the pod templates `audit -f` checks before they are deployed;
//! - [`profile`]: `audit --profile`, the cluster they will run on; [`cluster_profile`]: that profile
//!   taken from a dump or the API server, with the command lines of the controller manager
//!   ([`controller_manager`]) and of the API server ([`api_server`]).
//! - [`not_ready`]: when each node last became not ready, as its Events say (live or recorded);
//! - [`template_sources`]: the chart template each rendered document came from (helm's `# Source:`).
//!
//! Owns: the decoding of every object the program reads. Uses: the engine's model; never the
//! cluster, the CLI or the output.

pub mod api_server;
pub mod audit_log;
pub mod bounded;
pub mod cluster_profile;
pub mod controller_manager;
pub mod devices;
pub mod kept;
pub mod lifecycle;
pub mod manifests;
pub mod not_ready;
pub mod profile;
pub mod protobuf;
pub mod record;
pub mod template_sources;

mod build;
mod error;
mod exact;
mod groups;
mod raw;
mod read;
mod scan;
mod seeds;
mod stream;

pub use build::{CONTROLLER_LEASE, Keep, KeepLabels, Page, parse_time, time_error};
pub use error::DumpError;
pub use read::{Watched, read, read_keeping, read_object, read_page, read_watched};

#[cfg(test)]
mod tests;
