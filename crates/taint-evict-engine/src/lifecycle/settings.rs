//! The node lifecycle controller's settings and where each came from: a flag given to this tool,
//! kube-controller-manager's own command line (its pod, live or in a dump), a file the operator
//! named, or the default of the Kubernetes version followed (docs/node-lifecycle.md, "The
//! controller's settings").
//!
//! Pure values: the reading of a pod or a file is the caller's; this only says which value wins.

use std::time::Duration;

use super::health::Flags;

/// Where one setting came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    /// A flag given to this tool: it always wins.
    Flag,
    /// kube-controller-manager's command line, from its pod (live, or in a dump).
    Pod,
    /// The file the operator named.
    File,
    /// Not said anywhere: the default of the Kubernetes version followed, assumed.
    Default,
}

impl Source {
    /// The word in `-o json` and the text: `flag`, `pod`, `file`, `default`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Flag => "flag",
            Source::Pod => "pod",
            Source::File => "file",
            Source::Default => "default",
        }
    }
}

/// The settings one place says, each `None` when it does not say it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Given {
    /// `--node-monitor-period`.
    pub node_monitor_period: Option<Duration>,
    /// `--node-monitor-grace-period`.
    pub node_monitor_grace_period: Option<Duration>,
    /// `--node-startup-grace-period`.
    pub node_startup_grace_period: Option<Duration>,
    /// `--node-eviction-rate`.
    pub node_eviction_rate: Option<f32>,
    /// `--secondary-node-eviction-rate`.
    pub secondary_node_eviction_rate: Option<f32>,
    /// `--unhealthy-zone-threshold`.
    pub unhealthy_zone_threshold: Option<f32>,
    /// `--large-cluster-size-threshold`.
    pub large_cluster_size_threshold: Option<u32>,
    /// `--kube-api-qps`.
    pub kube_api_qps: Option<f32>,
    /// `--kube-api-burst`.
    pub kube_api_burst: Option<u32>,
}

impl Given {
    /// Whether it says no setting at all.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        *self == Given::default()
    }
}

/// Where each of [`Flags`]' settings came from, field by field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sources {
    /// `--node-monitor-period`'s.
    pub node_monitor_period: Source,
    /// `--node-monitor-grace-period`'s.
    pub node_monitor_grace_period: Source,
    /// `--node-startup-grace-period`'s.
    pub node_startup_grace_period: Source,
    /// `--node-eviction-rate`'s.
    pub node_eviction_rate: Source,
    /// `--secondary-node-eviction-rate`'s.
    pub secondary_node_eviction_rate: Source,
    /// `--unhealthy-zone-threshold`'s.
    pub unhealthy_zone_threshold: Source,
    /// `--large-cluster-size-threshold`'s.
    pub large_cluster_size_threshold: Source,
    /// `--kube-api-qps`'s.
    pub kube_api_qps: Source,
    /// `--kube-api-burst`'s.
    pub kube_api_burst: Source,
}

impl Sources {
    /// Every source, in [`Settings::each`]'s order.
    #[must_use]
    pub fn all(&self) -> [Source; 9] {
        [
            self.node_monitor_period,
            self.node_monitor_grace_period,
            self.node_startup_grace_period,
            self.node_eviction_rate,
            self.secondary_node_eviction_rate,
            self.unhealthy_zone_threshold,
            self.large_cluster_size_threshold,
            self.kube_api_qps,
            self.kube_api_burst,
        ]
    }
}

/// One setting's value, as the flag takes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SettingValue {
    /// A duration.
    Duration(Duration),
    /// A rate or a fraction.
    Ratio(f32),
    /// A count.
    Count(u32),
}

/// The settings a prediction uses, and where each came from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// The values.
    pub flags: Flags,
    /// Where each came from.
    pub sources: Sources,
}

impl Settings {
    /// Each setting of `layers` from the first that says it (the flags given first), else
    /// `defaults`'.
    #[must_use]
    pub fn resolve(defaults: Flags, layers: &[(Source, &Given)]) -> Self {
        fn pick<T: Copy>(default: T, layers: &[(Source, &Given)], get: impl Fn(&Given) -> Option<T>) -> (T, Source) {
            layers
                .iter()
                .find_map(|(source, given)| get(given).map(|value| (value, *source)))
                .unwrap_or((default, Source::Default))
        }
        let (node_monitor_period, a) = pick(defaults.node_monitor_period, layers, |g| g.node_monitor_period);
        let (node_monitor_grace_period, b) =
            pick(defaults.node_monitor_grace_period, layers, |g| g.node_monitor_grace_period);
        let (node_startup_grace_period, c) =
            pick(defaults.node_startup_grace_period, layers, |g| g.node_startup_grace_period);
        let (node_eviction_rate, d) = pick(defaults.node_eviction_rate, layers, |g| g.node_eviction_rate);
        let (secondary_node_eviction_rate, e) =
            pick(defaults.secondary_node_eviction_rate, layers, |g| g.secondary_node_eviction_rate);
        let (unhealthy_zone_threshold, f) =
            pick(defaults.unhealthy_zone_threshold, layers, |g| g.unhealthy_zone_threshold);
        let (large_cluster_size_threshold, g) =
            pick(defaults.large_cluster_size_threshold, layers, |g| g.large_cluster_size_threshold);
        let (kube_api_qps, h) = pick(defaults.kube_api_qps, layers, |g| g.kube_api_qps);
        let (kube_api_burst, i) = pick(defaults.kube_api_burst, layers, |g| g.kube_api_burst);
        Self {
            flags: Flags {
                node_monitor_period,
                node_monitor_grace_period,
                node_startup_grace_period,
                node_eviction_rate,
                secondary_node_eviction_rate,
                unhealthy_zone_threshold,
                large_cluster_size_threshold,
                kube_api_qps,
                kube_api_burst,
            },
            sources: Sources {
                node_monitor_period: a,
                node_monitor_grace_period: b,
                node_startup_grace_period: c,
                node_eviction_rate: d,
                secondary_node_eviction_rate: e,
                unhealthy_zone_threshold: f,
                large_cluster_size_threshold: g,
                kube_api_qps: h,
                kube_api_burst: i,
            },
        }
    }

    /// Each setting: its flag's name (without `--`), its value and where it came from.
    #[must_use]
    pub fn each(&self) -> [(&'static str, SettingValue, Source); 9] {
        let (flags, sources) = (&self.flags, &self.sources);
        [
            ("node-monitor-period", SettingValue::Duration(flags.node_monitor_period), sources.node_monitor_period),
            (
                "node-monitor-grace-period",
                SettingValue::Duration(flags.node_monitor_grace_period),
                sources.node_monitor_grace_period,
            ),
            (
                "node-startup-grace-period",
                SettingValue::Duration(flags.node_startup_grace_period),
                sources.node_startup_grace_period,
            ),
            ("node-eviction-rate", SettingValue::Ratio(flags.node_eviction_rate), sources.node_eviction_rate),
            (
                "secondary-node-eviction-rate",
                SettingValue::Ratio(flags.secondary_node_eviction_rate),
                sources.secondary_node_eviction_rate,
            ),
            (
                "unhealthy-zone-threshold",
                SettingValue::Ratio(flags.unhealthy_zone_threshold),
                sources.unhealthy_zone_threshold,
            ),
            (
                "large-cluster-size-threshold",
                SettingValue::Count(flags.large_cluster_size_threshold),
                sources.large_cluster_size_threshold,
            ),
            ("kube-api-qps", SettingValue::Ratio(flags.kube_api_qps), sources.kube_api_qps),
            ("kube-api-burst", SettingValue::Count(flags.kube_api_burst), sources.kube_api_burst),
        ]
    }

    /// Whether every setting was assumed (none given, read or named in a file).
    #[must_use]
    pub fn all_assumed(&self) -> bool {
        self.sources.all().iter().all(|source| *source == Source::Default)
    }

    /// Whether some setting was assumed.
    #[must_use]
    pub fn some_assumed(&self) -> bool {
        self.sources.all().contains(&Source::Default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_wins_over_the_pod_which_wins_over_the_default() {
        let defaults = Flags::defaults_for(29);
        let flag = Given { node_eviction_rate: Some(0.5), ..Given::default() };
        let pod = Given {
            node_eviction_rate: Some(0.25),
            node_monitor_grace_period: Some(Duration::from_secs(10)),
            ..Given::default()
        };
        let settings = Settings::resolve(defaults, &[(Source::Flag, &flag), (Source::Pod, &pod)]);
        assert_eq!(settings.flags.node_eviction_rate, 0.5);
        assert_eq!(settings.sources.node_eviction_rate, Source::Flag);
        assert_eq!(settings.flags.node_monitor_grace_period, Duration::from_secs(10));
        assert_eq!(settings.sources.node_monitor_grace_period, Source::Pod);
        assert_eq!(settings.flags.node_monitor_period, Duration::from_secs(5));
        assert_eq!(settings.sources.node_monitor_period, Source::Default);
        assert!(settings.some_assumed() && !settings.all_assumed());
        assert!(Settings::resolve(defaults, &[]).all_assumed());
    }
}
