//! The harnesses the plugin's integration tests, benches and examples share (docs/testing.md): one
//! copy each, so a bench measures and an example serves exactly what the tests drive.
//!
//! - [`fake_apiserver`]: the in-process fake API server (the tests of `tests/fake_api/`, the live
//!   benches, `examples/fake_cluster.rs`);
//! - [`control_plane`]: a real etcd, kube-apiserver and kube-controller-manager (`tests/real_apiserver/`,
//!   `benches/real_apiserver.rs`);
//! - [`served`]: valid dumps at a cluster's limits (the tests, `examples/gen_served.rs`);
//! - [`cluster`]: seeded realistic dumps (`benches/plan.rs`, `benches/plan_live.rs`,
//!   `examples/gen_cluster.rs`);
//! - [`zone`] and [`churn`]: the engine's workloads (`benches/engine.rs`, `examples/profile.rs`,
//!   `examples/engine_memory.rs`);
//! - [`hour`] and [`recording`]: a generated hour of a cluster's changes played into the fake API
//!   server, and `record` watching it (`benches/record_hour.rs`, `tests/fake_api/record_hour.rs`);
//! - [`counting`]: a counting global allocator for the memory examples;
//! - [`timing`] and [`process`]: the benches' clocks, in process and over whole processes.
//!
//! Harnesses the integration tests alone use stay in `tests/support/`.

// Harnesses measure and wait in real time: the runtime's clock (clippy.toml) is for the product's code.
#![allow(clippy::disallowed_methods)]

pub mod churn;
pub mod cluster;
pub mod control_plane;
pub mod counting;
pub mod fake_apiserver;
pub mod hour;
pub mod process;
pub mod recording;
pub mod served;
pub mod timing;
pub mod zone;
