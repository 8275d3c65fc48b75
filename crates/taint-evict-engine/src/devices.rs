//! DRA device taints: what kube-controller-manager's `device-taint-eviction-controller` (1.33+)
//! decides for a pod, rule by rule (docs/device-taints.md, "The rules": which claims, devices and taints count, how
//! tolerations match, when the pod goes), for the Kubernetes minor version the cluster runs.
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
