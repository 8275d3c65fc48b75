//! The single integration-test binary: every file below runs the real `kubectl-taint_evict`. The tests
//! are grouped by kind, one folder each (docs/testing.md): `offline/` (dumps, fixtures and flags, no
//! server), `fake_api/` (the in-process fake API server), `real_apiserver/` (a real control plane) and
//! `repository/` (checks of the repository itself).

// Tests measure real time: the runtime's clock (clippy.toml) is for the product's code.
#![allow(clippy::disallowed_methods)]

mod fake_api;
mod offline;
mod real_apiserver;
mod repository;
mod support;
mod util;
