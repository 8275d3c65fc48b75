//! `kubectl taint-evict profile`: a cluster's profile as the YAML `audit --profile` reads, each key
//! with a comment saying where it came from, and each key not known left out, commented, with why
//! (docs/audit.md, "The cluster's profile"). What is written reads back as what was taken.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::time::Duration;

use super::human::printable;
use super::yaml::yaml_scalar;
use crate::engine::lifecycle::SettingValue;

/// A part of the profile and where it came from, or why it is not known.
pub type Part<'a, T> = Result<(T, &'a str), &'a str>;

/// One of the API server's two flags: its name, its seconds, and whether its command line gives it
/// (else it is the API server's default).
pub type Toleration = (&'static str, i64, bool);

/// A profile to write.
#[derive(Debug)]
pub struct ProfileText<'a> {
    /// Where it was taken from: a dump's path, or the API server's address.
    pub source: &'a str,
    /// `kubernetesVersion`'s minor version.
    pub kube_version: Part<'a, u32>,
    /// `controllerSettings`: the settings its pod sets, by flag name.
    pub settings: Part<'a, Vec<(&'static str, SettingValue)>>,
    /// `apiServer`: its two flags.
    pub admission: Part<'a, [Toleration; 2]>,
    /// `zones`: each zone's node count (`""` for the nodes without a zone label).
    pub zones: Part<'a, &'a BTreeMap<String, u32>>,
}

/// A duration as kube-controller-manager's flags take it and the profile reads it back exactly:
/// whole seconds (`40s`), else milliseconds (`500ms`), else nanoseconds.
fn go_duration(duration: Duration) -> String {
    if duration.subsec_nanos() == 0 {
        format!("{}s", duration.as_secs())
    } else if duration.subsec_nanos().is_multiple_of(1_000_000) {
        format!("{}ms", duration.as_millis())
    } else {
        format!("{}ns", duration.as_nanos())
    }
}

/// A setting's value as the profile reads it back.
fn value(value: SettingValue) -> String {
    match value {
        SettingValue::Duration(duration) => go_duration(duration),
        SettingValue::Ratio(ratio) => ratio.to_string(),
        SettingValue::Count(count) => count.to_string(),
    }
}

/// The line of a key not known: commented out, with why.
fn unknown(out: &mut impl Write, key: &str, why: &str) -> io::Result<()> {
    writeln!(out, "# {key}: not known: {}", printable(why))
}

/// Writes `profile`.
///
/// # Errors
/// When `out` cannot be written.
pub fn write_profile(profile: &ProfileText<'_>, out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "# The cluster's profile, for `kubectl taint-evict audit -f MANIFESTS --profile FILE`,")?;
    writeln!(out, "# taken from {}.", printable(profile.source))?;
    match &profile.kube_version {
        Ok((minor, from)) => writeln!(out, "kubernetesVersion: \"1.{minor}\"  # {}", printable(from))?,
        Err(why) => unknown(out, "kubernetesVersion", why)?,
    }
    match &profile.settings {
        Ok((settings, from)) if settings.is_empty() => {
            writeln!(out, "controllerSettings: {{}}  # {}: none of the node lifecycle flags set", printable(from))?;
        }
        Ok((settings, from)) => {
            writeln!(out, "controllerSettings:  # {}", printable(from))?;
            for (name, setting) in settings {
                writeln!(out, "  {name}: {}", value(*setting))?;
            }
        }
        Err(why) => unknown(out, "controllerSettings", why)?,
    }
    match &profile.admission {
        Ok((flags, from)) => {
            writeln!(out, "apiServer:  # {}", printable(from))?;
            for (name, seconds, given) in flags {
                let note = if *given { "" } else { "  # its default: not on its command line" };
                writeln!(out, "  {name}: {seconds}{note}")?;
            }
        }
        Err(why) => unknown(out, "apiServer", why)?,
    }
    match &profile.zones {
        Ok((zones, from)) if zones.is_empty() => writeln!(out, "zones: {{}}  # {}", printable(from))?,
        Ok((zones, from)) => {
            writeln!(out, "zones:  # {}", printable(from))?;
            for (zone, nodes) in *zones {
                let note = if zone.is_empty() { "  # the nodes without a zone label: one zone" } else { "" };
                writeln!(out, "  {}: {nodes}{note}", yaml_scalar(zone))?;
            }
        }
        Err(why) => unknown(out, "zones", why)?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_written_in_the_largest_unit_that_keeps_them_whole() {
        assert_eq!(go_duration(Duration::from_secs(40)), "40s");
        assert_eq!(go_duration(Duration::from_millis(1500)), "1500ms");
        assert_eq!(go_duration(Duration::from_nanos(1_000_000_001)), "1000000001ns");
    }

    #[test]
    fn each_key_says_where_it_came_from_and_one_not_known_is_commented_out() {
        let zones: BTreeMap<String, u32> = [("", 1), ("1", 2), ("za", 3)].map(|(z, n)| (z.to_owned(), n)).into();
        let text = ProfileText {
            source: "dump.json",
            kube_version: Err("a dump does not say"),
            settings: Ok((
                vec![("node-monitor-grace-period", SettingValue::Duration(Duration::from_secs(45)))],
                "read from pod kube-system/kcm",
            )),
            admission: Ok((
                [
                    ("default-not-ready-toleration-seconds", 300, false),
                    ("default-unreachable-toleration-seconds", 120, true),
                ],
                "read from pod kube-system/api",
            )),
            zones: Ok((&zones, "the zone labels of 6 nodes")),
        };
        let mut out = Vec::new();
        write_profile(&text, &mut out).expect("written");
        // Written by hand: a zone named "1" would read as a number, "" as nothing: both quoted.
        assert_eq!(
            String::from_utf8(out).expect("UTF-8"),
            "# The cluster's profile, for `kubectl taint-evict audit -f MANIFESTS --profile FILE`,\n\
             # taken from dump.json.\n\
             # kubernetesVersion: not known: a dump does not say\n\
             controllerSettings:  # read from pod kube-system/kcm\n  node-monitor-grace-period: 45s\n\
             apiServer:  # read from pod kube-system/api\n  \
             default-not-ready-toleration-seconds: 300  # its default: not on its command line\n  \
             default-unreachable-toleration-seconds: 120\n\
             zones:  # the zone labels of 6 nodes\n  \"\": 1  # the nodes without a zone label: one zone\n  \"1\": 2\n  za: 3\n"
        );
    }
}
