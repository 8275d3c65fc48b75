//! The node lifecycle controller's settings a prediction used, and where each came from: the
//! `controllerSettings` field of the documents (docs/output.md) and the words the text uses.

use serde::Serialize;

use crate::engine::lifecycle::{SettingValue, Settings, Source};

/// `controllerSettings`: each setting by its flag's name in camelCase, `{value, from}`.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct SettingsDoc {
    node_monitor_period: SettingDoc,
    node_monitor_grace_period: SettingDoc,
    node_startup_grace_period: SettingDoc,
    node_eviction_rate: SettingDoc,
    secondary_node_eviction_rate: SettingDoc,
    unhealthy_zone_threshold: SettingDoc,
    large_cluster_size_threshold: SettingDoc,
    kube_api_qps: SettingDoc,
    kube_api_burst: SettingDoc,
}

/// One setting: its value (a duration in seconds) and where it came from.
#[derive(Serialize, Debug)]
pub struct SettingDoc {
    value: serde_json::Value,
    from: &'static str,
}

impl From<&Settings> for SettingsDoc {
    fn from(settings: &Settings) -> Self {
        let [a, b, c, d, e, f, g, h, i] =
            settings.each().map(|(_, value, from)| SettingDoc { value: json(value), from: from.as_str() });
        Self {
            node_monitor_period: a,
            node_monitor_grace_period: b,
            node_startup_grace_period: c,
            node_eviction_rate: d,
            secondary_node_eviction_rate: e,
            unhealthy_zone_threshold: f,
            large_cluster_size_threshold: g,
            kube_api_qps: h,
            kube_api_burst: i,
        }
    }
}

/// A value as JSON: a duration in seconds (whole when it is), a ratio as written (`0.1`), a count.
fn json(value: SettingValue) -> serde_json::Value {
    match value {
        SettingValue::Duration(duration) if duration.subsec_nanos() == 0 => duration.as_secs().into(),
        SettingValue::Duration(duration) => duration.as_secs_f64().into(),
        // As the f32 reads (`0.1`), not as its f64 widening (`0.10000000149011612`).
        SettingValue::Ratio(ratio) => ratio.to_string().parse::<f64>().map_or(serde_json::Value::Null, Into::into),
        SettingValue::Count(count) => count.into(),
    }
}

/// A value as the flag takes it (`40s`, `0.1`, `50`).
#[must_use]
pub fn shown(value: SettingValue) -> String {
    match value {
        SettingValue::Duration(duration) => humantime::format_duration(duration).to_string(),
        SettingValue::Ratio(ratio) => ratio.to_string(),
        SettingValue::Count(count) => count.to_string(),
    }
}

/// Where a setting came from, in a few words for the text: `given`, `read from its pod`, `from
/// --controller-settings`, `assumed: the default`.
#[must_use]
pub fn from_words(source: Source) -> &'static str {
    match source {
        Source::Flag => "given",
        Source::Pod => "read from its pod",
        Source::File => "from --controller-settings",
        Source::Default => "assumed: the default",
    }
}
