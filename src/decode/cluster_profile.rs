//! A cluster's profile taken from what a dump or the API server shows of it, rather than written by
//! hand (docs/audit.md, "The cluster's profile"): its zones and their node counts from the nodes'
//! zone labels, as the node lifecycle controller reads them; the controller's settings from its
//! static pod's command line; the API server's default tolerations from its own; the Kubernetes
//! version as `plan` and `audit` take it (the server's `/version`; a dump says none). What the input
//! does not show stays unknown, with why.
//!
//! Owns: [`take`] and what it says of each part. Uses: [`Profile`], the command lines' readers.

use std::collections::BTreeMap;

use super::api_server;
use super::controller_manager::{self, Found};
use super::profile::Profile;
use crate::words::printable;

/// What the input shows, read.
#[derive(Clone, Copy, Debug)]
pub struct Shown<'a> {
    /// Each node's zone, as the controller names it (`""` without zone labels).
    pub zones: &'a [String],
    /// The server's minor version.
    pub minor: Option<u32>,
    /// Whether the input is the live cluster (else a dump).
    pub live: bool,
    /// The controller manager's pod.
    pub controller_manager: &'a Found,
    /// The API server's pod.
    pub api_server: &'a Found,
}

/// Where a part of the profile came from (`Ok`), or why it is not known (`Err`), in a few words.
pub type Origin = Result<String, String>;

/// A profile taken, with where each part came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Taken {
    /// The profile.
    pub profile: Profile,
    /// `kubernetesVersion`'s origin.
    pub kube_version: Origin,
    /// `controllerSettings`'.
    pub settings: Origin,
    /// `apiServer`'s; with it, whether each flag was on the command line (not-ready, unreachable):
    /// else it is the API server's default.
    pub admission: Origin,
    /// Whether `--default-not-ready-toleration-seconds` and `--default-unreachable-toleration-seconds`
    /// were on the API server's command line.
    pub admission_given: [bool; 2],
    /// `zones`'.
    pub zones: Origin,
    /// A value of a command line that does not read (its default applies), one line each.
    pub warnings: Vec<String>,
}

/// Why a pod's command line is not known.
fn missing(found: &Found, selector: &str) -> String {
    match found {
        Found::NoPod | Found::Pod { .. } => {
            format!("no pod labelled {selector} in namespace \"{}\"", controller_manager::NAMESPACE)
        }
        Found::Unreadable(why) => printable(why).into_owned(),
    }
}

/// The profile `shown` gives, each part with its origin.
#[must_use]
pub fn take(shown: &Shown<'_>) -> Taken {
    let mut warnings = Vec::new();
    let pod = |name: &str| format!("pod {}/{}", controller_manager::NAMESPACE, printable(name));
    let (settings, settings_from) = match shown.controller_manager {
        Found::Pod { name, args } => {
            let (given, unread) = controller_manager::from_args(args);
            warnings.extend(unread.iter().map(|w| format!("{}: {}: its default is assumed", pod(name), printable(w))));
            (Some(given), Ok(format!("read from {}", pod(name))))
        }
        other => (None, Err(missing(other, controller_manager::SELECTOR))),
    };
    let (admission, admission_from, admission_given) = match shown.api_server {
        Found::Pod { name, args } => {
            let (said, unread) = api_server::from_args(args);
            warnings.extend(unread.iter().map(|w| format!("{}: {}: its default is assumed", pod(name), printable(w))));
            let given = [said.not_ready.is_some(), said.unreachable.is_some()];
            (Some(said.admission()), Ok(format!("read from {}", pod(name))), given)
        }
        other => (None, Err(missing(other, api_server::SELECTOR)), [false; 2]),
    };
    let kube_version = match (shown.minor, shown.live) {
        (Some(_), _) => Ok("the API server's /version".to_owned()),
        (None, true) => Err("the API server's /version did not answer".to_owned()),
        (None, false) => Err("a dump does not say".to_owned()),
    };
    let mut zones: BTreeMap<String, u32> = BTreeMap::new();
    for zone in shown.zones {
        *zones.entry(zone.clone()).or_default() += 1;
    }
    let nodes = shown.zones.len();
    let zones_from = Ok(format!(
        "the zone labels of {nodes} node{}, as the node lifecycle controller reads them",
        if nodes == 1 { "" } else { "s" }
    ));
    Taken {
        profile: Profile { kube_version: shown.minor, settings, admission, zones: Some(zones) },
        kube_version,
        settings: settings_from,
        admission: admission_from,
        admission_given,
        zones: zones_from,
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::engine::audit::Admission;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn zones_settings_and_default_tolerations_come_from_the_nodes_and_the_two_pods() {
        let zones: Vec<String> = ["za", "zb", "za", "", "za"].iter().map(|z| (*z).to_owned()).collect();
        let manager = Found::Pod {
            name: "kube-controller-manager-cp".into(),
            args: words("kube-controller-manager --node-monitor-grace-period=45s --node-eviction-rate=x"),
        };
        let api = Found::Pod {
            name: "kube-apiserver-cp".into(),
            args: words("kube-apiserver --default-unreachable-toleration-seconds=120"),
        };
        let shown =
            Shown { zones: &zones, minor: Some(31), live: true, controller_manager: &manager, api_server: &api };
        let taken = take(&shown);
        // Counted by hand: za 3, zb 1, and the node without a zone label in the zone "".
        let expected: BTreeMap<String, u32> = [("", 1), ("za", 3), ("zb", 1)].map(|(z, n)| (z.to_owned(), n)).into();
        assert_eq!(taken.profile.zones, Some(expected));
        assert_eq!((taken.profile.zone_count(), taken.profile.node_count()), (Some(3), Some(5)));
        assert_eq!(taken.profile.kube_version, Some(31));
        let given = taken.profile.settings.expect("read from the pod");
        assert_eq!(given.node_monitor_grace_period, Some(Duration::from_secs(45)));
        assert_eq!(given.node_eviction_rate, None, "a value that does not read is left to its default");
        assert_eq!(
            taken.warnings,
            [
                "pod kube-system/kube-controller-manager-cp: --node-eviction-rate=x is not a number: its default is assumed"
            ]
        );
        assert_eq!(taken.profile.admission, Some(Admission { not_ready_seconds: 300, unreachable_seconds: 120 }));
        assert_eq!(taken.admission_given, [false, true]);
        assert_eq!(taken.settings, Ok("read from pod kube-system/kube-controller-manager-cp".to_owned()));
    }

    #[test]
    fn what_the_input_does_not_show_stays_unknown_with_why() {
        let zones = vec!["za".to_owned()];
        let unreadable = Found::Unreadable("cannot list pods in namespace \"kube-system\" (forbidden)".into());
        let shown = Shown {
            zones: &zones,
            minor: None,
            live: false,
            controller_manager: &Found::NoPod,
            api_server: &unreadable,
        };
        let taken = take(&shown);
        assert_eq!((taken.profile.kube_version, taken.profile.settings, taken.profile.admission), (None, None, None));
        assert_eq!(taken.kube_version, Err("a dump does not say".to_owned()));
        assert_eq!(
            taken.settings,
            Err("no pod labelled component=kube-controller-manager in namespace \"kube-system\"".to_owned())
        );
        assert_eq!(taken.admission, Err("cannot list pods in namespace \"kube-system\" (forbidden)".to_owned()));
    }
}
