//! Test harnesses shared by the integration tests.

pub mod fake_apiserver;
pub mod running;
