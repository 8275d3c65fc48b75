//! The single integration-test binary: every file below runs the real `kubectl-taint_evict`.

// Tests measure real time: the runtime's clock (clippy.toml) is for the product's code.
#![allow(clippy::disallowed_methods)]

mod bad_input;
mod cli_errors;
mod comparison_operators;
mod complete_names;
mod completions;
mod device_taints;
mod down;
mod explain_chain;
mod fake_apiserver;
mod fixtures;
mod in_cluster;
mod krew_manifest;
mod layering;
mod live_lifecycle;
mod nlc_fixtures;
mod output;
mod plan_cluster;
mod plan_watch;
mod rbac;
mod readme_examples;
mod real_apiserver;
mod release;
mod run_cluster;
mod run_evict;
mod run_foreseen;
mod run_live_view;
mod run_record;
mod run_scope;
mod soak;
mod support;
mod templates;
mod util;
mod vectors;
mod workflows;
