//! Test harnesses shared by the integration tests.

pub mod connect_proxy;
pub mod control_plane;
pub mod fake_apiserver;
pub mod running;
pub mod served;
pub mod terminal;
