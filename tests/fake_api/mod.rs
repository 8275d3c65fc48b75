//! The binary against the in-process fake API server (`crates/test-support/src/fake_apiserver.rs`) over real
//! HTTP, for what a real one cannot be made to do on cue (faults, timings, a soak), and the tests of the
//! fake itself.

pub mod audit_owners;
pub mod complete_names;
pub mod fake_apiserver;
pub mod in_cluster;
pub mod live_lifecycle;
pub mod plan_cluster;
pub mod plan_watch;
pub mod rbac;
pub mod record_hour;
pub mod run_cluster;
pub mod run_evict;
pub mod run_foreseen;
pub mod run_live_view;
pub mod run_record;
pub mod run_scope;
pub mod soak;
