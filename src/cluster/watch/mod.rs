//! Watches of nodes and pods, turned into the runtime's changes.
//!
//! kube-runtime's watcher lists (from the API server's watch cache: [`from_watch_cache`]), then watches
//! from the list's resource version and follows bookmarks; after any error the watch says it is
//! interrupted and starts over with a list (`relist`), backing off (`outage::WatchBackoff`). A
//! (re-)list reaches the runtime as one complete list, so an object that comes back unchanged changes
//! nothing and a vanished one is deleted. Objects are decoded straight into the engine's model
//! ([`decoded`]). Which pods are
//! watched, and kept, follows the node scope ([`pods`]).
//!
//! `record`'s watches (`recorded`) keep each object's fields as JSON instead, cut to those read.
//!
//! Owns: the node watch and the start of all of them (`start`). Uses: the decoder, the runtime's
//! changes and clock, the metrics.

mod cache;
mod decoded;
mod devices;
mod forward;
mod outage;
pub mod pods;
mod recorded;
mod relist;
mod scope;
mod start;
mod tap;

pub use cache::from_watch_cache;
pub use decoded::WatchedPod;
pub use devices::Served;
pub use recorded::{RECORDED, Recorded, RecordedKind, RecordedWatch, Seen, spawn_recorded};
pub(crate) use relist::relisting;
pub use scope::NodeScope;
pub use start::{Watches, spawn};
pub use tap::HealthChange;
