//! The control plane's time. Every instant the tool compares was written by the control plane's
//! clocks (a taint's `timeAdded`, a Lease's `renewTime`, a pod's binding), so "now" is the control
//! plane's too; this machine's clock only measures the time that passes (docs/connecting.md, "Whose
//! clock: the control plane's").
//!
//! - `clock`: the one place the tool reads time, this machine's monotonic clock corrected to the
//!   control plane's ([`Clock`]), and what keeps the correction ([`Timekeeper`]);
//! - `skew`: how far this machine's clock is from the control plane's, read off what the API server says;
//! - `date`: the layer under the client that reads every answer's `Date` header;
//! - `keeping`: `run` and `plan -w` keep the estimate narrow while they run, through the requests the
//!   cluster sends for them;
//! - `future`: the input's stamps later than `now`, said.
//!
//! Owns: reading the time, and what the control plane's answers say of it. Uses: the engine's instants
//! and `words`; never the cluster (it answers `keeping`'s requests), the CLI, `live` or the output.

pub mod clock;
pub mod date;
pub mod future;
pub mod keeping;
pub mod skew;

pub use clock::{Clock, Timekeeper};
