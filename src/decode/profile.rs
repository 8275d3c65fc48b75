//! `audit --profile FILE`: the cluster rendered manifests will run on, as a small file CI keeps beside
//! them: its Kubernetes version, the node lifecycle controller's settings, the API server's default
//! tolerations and its zones with their node counts (docs/audit.md, "The cluster's profile").

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::engine::audit::Admission;
use crate::engine::lifecycle::Given;

/// What a profile says; each part `None` when it does not say it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Profile {
    /// `kubernetesVersion`'s minor version.
    pub kube_version: Option<u32>,
    /// `controllerSettings`: kube-controller-manager's node lifecycle settings, by flag name.
    pub settings: Option<Given>,
    /// `apiServer`: its `DefaultTolerationSeconds` admission's seconds.
    pub admission: Option<Admission>,
    /// `zones`: each zone's node count.
    pub zones: Option<BTreeMap<String, u32>>,
}

impl Profile {
    /// How many zones hold nodes, when the profile says.
    #[must_use]
    pub fn zone_count(&self) -> Option<usize> {
        self.zones.as_ref().map(|zones| zones.values().filter(|nodes| **nodes > 0).count())
    }

    /// How many nodes, when the profile says.
    #[must_use]
    pub fn node_count(&self) -> Option<usize> {
        self.zones.as_ref().map(|zones| zones.values().map(|nodes| usize::try_from(*nodes).unwrap_or(usize::MAX)).sum())
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawProfile {
    kubernetes_version: Option<String>,
    controller_settings: Option<Value>,
    api_server: Option<RawApiServer>,
    zones: Option<BTreeMap<String, u32>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawApiServer {
    #[serde(rename = "default-not-ready-toleration-seconds")]
    not_ready: Option<i64>,
    #[serde(rename = "default-unreachable-toleration-seconds")]
    unreachable: Option<i64>,
}

/// `1.31`, `v1.31.2`: the minor version.
fn minor(text: &str) -> Option<u32> {
    let parts: Vec<&str> = text.trim().trim_start_matches('v').split('.').collect();
    match parts.as_slice() {
        ["1", minor] | ["1", minor, _]
            if parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) =>
        {
            minor.parse().ok()
        }
        _ => None,
    }
}

/// Reads a profile.
///
/// # Errors
/// Text that is not YAML or JSON, a key that is no part of a profile, or a value that does not read,
/// in one line (with its line where the parser says it).
pub fn read_profile(text: &str) -> Result<Profile, String> {
    let raw: RawProfile = serde_saphyr::from_str(text).map_err(|e| {
        let message = e.without_snippet().to_string();
        let first = message.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("not YAML");
        first.strip_prefix("error: ").unwrap_or(first).to_owned()
    })?;
    let kube_version = match raw.kubernetes_version {
        Some(text) => Some(minor(&text).ok_or_else(|| {
            format!("kubernetesVersion: expected a Kubernetes version such as \"1.31\", not {text:?}")
        })?),
        None => None,
    };
    let settings = match raw.controller_settings {
        Some(map) => {
            let text = serde_json::to_string(&map).map_err(|e| format!("controllerSettings: {e}"))?;
            Some(crate::decode::controller_manager::from_file(&text).map_err(|e| format!("controllerSettings: {e}"))?)
        }
        None => None,
    };
    let admission = raw.api_server.map(|api| {
        let defaults = Admission::default();
        Admission {
            not_ready_seconds: api.not_ready.unwrap_or(defaults.not_ready_seconds),
            unreachable_seconds: api.unreachable.unwrap_or(defaults.unreachable_seconds),
        }
    });
    Ok(Profile { kube_version, settings, admission, zones: raw.zones })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_profile_reads_the_version_the_settings_the_admission_defaults_and_the_zones() {
        let text = "\
kubernetesVersion: \"1.31\"
controllerSettings:
  node-monitor-grace-period: 50s
apiServer:
  default-unreachable-toleration-seconds: 120
zones:
  eu-west-1a: 3
  eu-west-1b: 0
  eu-west-1c: 2
";
        let profile = read_profile(text).expect("reads");
        assert_eq!(profile.kube_version, Some(31));
        let grace = profile.settings.and_then(|given| given.node_monitor_grace_period);
        assert_eq!(grace, Some(Duration::from_secs(50)));
        assert_eq!(profile.admission, Some(Admission { not_ready_seconds: 300, unreachable_seconds: 120 }));
        assert_eq!((profile.zone_count(), profile.node_count()), (Some(2), Some(5)));
    }

    #[test]
    fn a_key_or_a_value_that_does_not_read_is_an_error() {
        assert!(read_profile("kubernetesVersion: \"2.0\"\n").is_err());
        let typo = read_profile("zone:\n  a: 1\n").expect_err("no such key");
        assert!(typo.contains("zone"), "{typo}");
        let setting = read_profile("controllerSettings:\n  node-monitor-grace: 5s\n").expect_err("no such setting");
        assert!(setting.starts_with("controllerSettings: "), "{setting}");
        assert!(read_profile("zones:\n  a: many\n").is_err());
    }
}
