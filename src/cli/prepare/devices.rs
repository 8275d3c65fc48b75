//! The DRA objects read, and the Kubernetes version whose device-taint controller a plan follows.

use crate::engine::devices::{DeviceTaints, Devices, FIRST_MINOR, NEWEST_MINOR};
use crate::words::printable;

use super::input::Loaded;

/// The DRA objects the device-taint controller reads, and the minor version to follow: the
/// server's or `--kube-version`, else the newest modelled. Warns, once each, when they
/// could not be read, when the version has no such controller, and for what a version cannot
/// evaluate (a live read said already what it could not read).
pub(super) fn device_taints(loaded: &mut Loaded) -> (Devices, Option<u32>) {
    let bound = loaded.snapshot.pods.iter().filter(|pod| pod.pod.node.is_some());
    let uses: std::collections::HashMap<_, _> =
        bound.filter_map(|pod| Some((pod.pod.key.clone(), pod.claims.as_deref()?.to_vec()))).collect();
    let devices = match loaded.devices.take() {
        _ if uses.is_empty() => return (Devices::default(), None),
        None => return (Devices::default(), None),
        Some(Ok(devices)) => Devices { uses, ..devices },
        Some(Err(error)) => {
            eprintln!("warning: device taints not read: {}", printable(&error.to_string()));
            return (Devices::default(), None);
        }
    };
    let minor = loaded.minor.unwrap_or(NEWEST_MINOR).min(NEWEST_MINOR);
    if minor < FIRST_MINOR {
        eprintln!(
            "warning: pods use DRA claims, but Kubernetes 1.{minor} has no device-taint controller (1.{FIRST_MINOR}+): \
             device taints are not shown"
        );
        return (devices, None);
    }
    if loaded.minor.is_none() {
        eprintln!(
            "warning: device taints follow the device-taint controller of Kubernetes 1.{NEWEST_MINOR}; name the \
             dump's version with --kube-version 1.MINOR"
        );
    }
    let taints = DeviceTaints::new(&devices, minor);
    let unevaluated: Vec<String> = taints.unevaluated_rules().map(|rule| format!("\"{}\"", rule.name)).collect();
    if !unevaluated.is_empty() {
        eprintln!(
            "warning: DeviceTaintRule {} select devices by class or CEL, which are not evaluated: left out (Kubernetes \
             1.35 removed those selectors)",
            printable(&unevaluated.join(", "))
        );
    }
    (devices, Some(minor))
}
