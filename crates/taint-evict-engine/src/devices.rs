//! DRA device taints: what kube-controller-manager's `device-taint-eviction-controller` (1.33+)
//! decides for a pod, rule by rule (`device-taints.md`: selection S1–S5, matching M1–M4, timing
//! T1–T6), for the Kubernetes minor version the cluster runs.
//!
//! It is a second engine beside the node-taint one, with its own inputs: taints on devices
//! (ResourceSlices, DeviceTaintRules), tolerations on the claims' allocation results (never the
//! pod's), and deadlines from the taint's `timeAdded` (never from when a controller saw it), so a
//! restart or a leader change computes the same instant. Nothing here is timed: a pod's report is a
//! pure function of the objects and the version.

mod engine;
mod taints;

pub use engine::{DeviceEngine, DeviceInput, DevicePod};
pub use taints::*;

#[cfg(test)]
mod tests;
