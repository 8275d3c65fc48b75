//! kube-controller-manager's node lifecycle settings, read from its command line: the
//! `--flag=value` arguments of its pod (a static pod as kubeadm writes it, labelled
//! `component=kube-controller-manager` in `kube-system`), from the API server, a dump, or a file
//! the operator names (its manifest, or a YAML/JSON map of the settings by flag name)
//! (docs/node-lifecycle.md, "The controller's settings").
//!
//! Owns: the reading of those flags. Uses: the engine's [`Given`].

use std::time::Duration;

use serde_json::Value;

use crate::engine::lifecycle::Given;

/// The namespace the controller manager's static pod is in.
pub const NAMESPACE: &str = "kube-system";

/// The label selector that finds it: kubeadm's `component` label.
pub const SELECTOR: &str = "component=kube-controller-manager";

/// The label kubeadm gives it, as (key, value).
pub const LABEL: (&str, &str) = ("component", "kube-controller-manager");

/// What a live read of the controller manager's pod (or of another control-plane component's static
/// pod, the API server's) found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// Its pod, by name, and its container's command line.
    Pod {
        /// The pod's name.
        name: String,
        /// `command`, then `args`.
        args: Vec<String>,
    },
    /// No such pod: a managed control plane, or one not run as a pod.
    NoPod,
    /// The LIST was not answered (refused by RBAC, or failed): why, in a few words.
    Unreadable(String),
}

/// The settings of the flags `args` hold (`--name=value`, or `--name value`), and a warning for
/// each that does not read as the flag's type (left out: the default applies).
#[must_use]
pub fn from_args(args: &[String]) -> (Given, Vec<String>) {
    let mut given = Given::default();
    let mut warnings = Vec::new();
    let mut words = args.iter().peekable();
    while let Some(word) = words.next() {
        let Some(flag) = word.strip_prefix("--") else { continue };
        let (name, value) = match flag.split_once('=') {
            Some((name, value)) => (name, value.to_owned()),
            None if is_setting(flag) => match words.peek().filter(|next| !next.starts_with("--")) {
                Some(next) => (flag, (*next).clone()),
                None => continue,
            },
            None => continue,
        };
        if let Err(error) = set(&mut given, name, &value) {
            warnings.push(error);
        }
    }
    (given, warnings)
}

/// Whether `name` is one of the settings read.
fn is_setting(name: &str) -> bool {
    matches!(
        name,
        "node-monitor-period"
            | "node-monitor-grace-period"
            | "node-startup-grace-period"
            | "node-eviction-rate"
            | "secondary-node-eviction-rate"
            | "unhealthy-zone-threshold"
            | "large-cluster-size-threshold"
            | "kube-api-qps"
            | "kube-api-burst"
    )
}

/// Sets setting `name` (a flag's name without `--`) to `value`; other names are not settings read
/// here and are left alone. An error says what did not read.
fn set(given: &mut Given, name: &str, value: &str) -> Result<(), String> {
    let bad = |kind: &str| format!("--{name}={value} is not {kind}");
    let duration = || go_duration(value).ok_or_else(|| bad("a duration"));
    let ratio = || value.trim().parse::<f32>().ok().filter(|v| v.is_finite()).ok_or_else(|| bad("a number"));
    match name {
        "node-monitor-period" => given.node_monitor_period = Some(duration()?),
        "node-monitor-grace-period" => given.node_monitor_grace_period = Some(duration()?),
        "node-startup-grace-period" => given.node_startup_grace_period = Some(duration()?),
        "node-eviction-rate" => given.node_eviction_rate = Some(ratio()?),
        "secondary-node-eviction-rate" => given.secondary_node_eviction_rate = Some(ratio()?),
        "unhealthy-zone-threshold" => given.unhealthy_zone_threshold = Some(ratio()?),
        "large-cluster-size-threshold" => {
            given.large_cluster_size_threshold = Some(value.trim().parse().map_err(|_| bad("a whole number"))?);
        }
        "kube-api-qps" => given.kube_api_qps = Some(ratio()?),
        "kube-api-burst" => given.kube_api_burst = Some(value.trim().parse().map_err(|_| bad("a whole number"))?),
        _ => {}
    }
    Ok(())
}

/// A duration as Go's `time.ParseDuration` reads it (`40s`, `1m30s`, `500ms`, `1.5h`, `0`).
#[must_use]
pub fn go_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    if text == "0" {
        return Some(Duration::ZERO);
    }
    let mut rest = text.strip_prefix('+').unwrap_or(text);
    if rest.is_empty() {
        return None;
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let number: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let seconds = match &rest[..unit] {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        rest = &rest[unit..];
        total += number * seconds;
    }
    Duration::try_from_secs_f64(total).ok()
}

/// The command line of the controller manager's container in a Pod (`command`, then `args`): the
/// container named `kube-controller-manager`, else the first; `None` when it has none.
#[must_use]
pub fn pod_command_line(pod: &Value) -> Option<Vec<String>> {
    command_line_of(pod, "kube-controller-manager")
}

/// The command line of `container` in a Pod (`command`, then `args`): the container of that name,
/// else the first (a static pod as kubeadm writes it has one); `None` when it has none.
#[must_use]
pub fn command_line_of(pod: &Value, container: &str) -> Option<Vec<String>> {
    let containers = pod["spec"]["containers"].as_array()?;
    let container = containers.iter().find(|c| c["name"] == container).or_else(|| containers.first())?;
    let words = |field: &str| -> Vec<String> {
        let list = container[field].as_array().map(Vec::as_slice).unwrap_or_default();
        list.iter().filter_map(|word| word.as_str().map(str::to_owned)).collect()
    };
    Some([words("command"), words("args")].concat())
}

/// The command line of the first controller manager pod in a pod list's answer (by name), and how
/// many it holds; `None` when it holds none.
#[must_use]
pub fn from_pod_list(list: &Value) -> Option<(String, Vec<String>)> {
    first_in_pod_list(list, "kube-controller-manager")
}

/// The name and the command line of `container` of the first pod (by name, not being deleted) in a
/// pod list's answer; `None` when it holds none.
#[must_use]
pub fn first_in_pod_list(list: &Value, container: &str) -> Option<(String, Vec<String>)> {
    let items = list["items"].as_array()?;
    let mut pods: Vec<&Value> = items.iter().filter(|pod| pod["metadata"]["deletionTimestamp"].is_null()).collect();
    pods.sort_by_key(|pod| pod["metadata"]["name"].as_str().unwrap_or_default().to_owned());
    let pod = pods.first()?;
    let name = pod["metadata"]["name"].as_str().unwrap_or_default().to_owned();
    Some((name, command_line_of(pod, container)?))
}

/// The settings a file names: a kube-controller-manager manifest (a Pod: its container's command
/// line), or a map of the settings by flag name (`node-monitor-grace-period: 10s`, a leading `--`
/// allowed), in YAML or JSON.
///
/// # Errors
///
/// When the text is neither, names a key that is no setting, or a value that does not read.
pub fn from_file(text: &str) -> Result<Given, String> {
    let document: Value = serde_saphyr::from_str(text).map_err(|e| format!("not YAML or JSON: {e}"))?;
    let Some(map) = document.as_object() else {
        return Err("neither a kube-controller-manager manifest nor a map of its settings".to_owned());
    };
    if map.contains_key("spec") || map.get("kind").and_then(Value::as_str) == Some("Pod") {
        let args = pod_command_line(&document).ok_or("a Pod without containers")?;
        let (given, warnings) = from_args(&args);
        return match warnings.into_iter().next() {
            Some(warning) => Err(warning),
            None => Ok(given),
        };
    }
    let mut given = Given::default();
    for (key, value) in map {
        let name = key.trim_start_matches("--");
        if !is_setting(name) {
            return Err(format!("\"{key}\" is not a node lifecycle setting read (node-monitor-grace-period, …)"));
        }
        let value = match value {
            Value::String(text) => text.clone(),
            Value::Number(number) => number.to_string(),
            _ => return Err(format!("{key}: a string or a number")),
        };
        set(&mut given, name, &value)?;
    }
    Ok(given)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn durations_read_as_go_reads_them() {
        let cases = [
            ("40s", Some(40_000u128)),
            ("1m0s", Some(60_000)),
            ("1m30s", Some(90_000)),
            ("500ms", Some(500)),
            ("1.5s", Some(1_500)),
            ("0", Some(0)),
            ("10", None),
            ("", None),
            ("5x", None),
        ];
        for (text, millis) in cases {
            assert_eq!(go_duration(text).map(|d| d.as_millis()), millis, "{text:?}");
        }
    }

    #[test]
    fn a_command_line_gives_the_settings_it_names_and_warns_for_a_bad_one() {
        let (given, warnings) = from_args(&words(
            "kube-controller-manager --node-monitor-grace-period=10s --bind-address=127.0.0.1 \
             --node-eviction-rate 0.25 --large-cluster-size-threshold=x --node-monitor-period=2s",
        ));
        assert_eq!(given.node_monitor_grace_period, Some(Duration::from_secs(10)));
        assert_eq!(given.node_monitor_period, Some(Duration::from_secs(2)));
        assert_eq!(given.node_eviction_rate, Some(0.25));
        assert_eq!(given.large_cluster_size_threshold, None);
        assert_eq!(warnings, ["--large-cluster-size-threshold=x is not a whole number"]);
    }

    #[test]
    fn the_controllers_client_rate_is_read_with_the_node_lifecycle_settings() {
        let (given, warnings) = from_args(&words(
            "kube-controller-manager --kube-api-qps=50 --kube-api-burst 100 --kube-api-content-type=x",
        ));
        assert_eq!((given.kube_api_qps, given.kube_api_burst), (Some(50.0), Some(100)));
        assert!(warnings.is_empty(), "{warnings:?}");
        let map = from_file("kube-api-qps: 100\nkube-api-burst: 200\n").expect("a map");
        assert_eq!((map.kube_api_qps, map.kube_api_burst), (Some(100.0), Some(200)));
        let (_, warnings) = from_args(&words("kube-controller-manager --kube-api-burst=1.5"));
        assert_eq!(warnings, ["--kube-api-burst=1.5 is not a whole number"]);
    }

    #[test]
    fn a_file_is_a_manifest_or_a_map_of_settings() {
        let manifest = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-controller-manager\n  namespace: kube-system\n\
                        spec:\n  containers:\n  - name: kube-controller-manager\n    command:\n    - kube-controller-manager\n    \
                        - --node-monitor-grace-period=20s\n";
        let given = from_file(manifest).expect("a manifest");
        assert_eq!(given.node_monitor_grace_period, Some(Duration::from_secs(20)));
        let map = from_file("{\"node-eviction-rate\": 0.5, \"--node-monitor-period\": \"2s\"}").expect("JSON");
        assert_eq!((map.node_eviction_rate, map.node_monitor_period), (Some(0.5), Some(Duration::from_secs(2))));
        assert!(from_file("node-monitor-grace: 10s").unwrap_err().contains("not a node lifecycle setting"));
        assert!(from_file("node-monitor-grace-period: ten").unwrap_err().contains("is not a duration"));
    }
}
