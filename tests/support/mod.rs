//! Test harnesses the integration tests alone use; those shared with the benches and examples are
//! in `crates/test-support`.

pub mod connect_proxy;
pub mod running;
pub mod terminal;
