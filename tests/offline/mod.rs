//! The binary on dumps, fixtures, conformance vectors and flags: no server, or the fake one only where
//! an error or the live twin of an offline case needs a cluster to answer.

pub mod audit;
pub mod bad_input;
pub mod cli_errors;
pub mod comparison_operators;
pub mod completions;
pub mod device_taints;
pub mod down;
pub mod explain_chain;
pub mod fixtures;
pub mod manifests;
pub mod nlc_fixtures;
pub mod output;
pub mod public_manifests;
pub mod readme_examples;
pub mod record_at;
pub mod review;
pub mod templates;
pub mod vectors;
