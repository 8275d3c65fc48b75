//! kube-apiserver's `DefaultTolerationSeconds` admission, read from its command line: the
//! `--default-not-ready-toleration-seconds` and `--default-unreachable-toleration-seconds` arguments
//! of its pod (a static pod as kubeadm writes it, labelled `component=kube-apiserver` in
//! `kube-system`), from the API server or a dump (docs/audit.md, "The cluster's profile").
//!
//! Owns: the reading of those two flags. Uses: the engine's [`Admission`].

use crate::engine::audit::Admission;

/// The label selector that finds its pod: kubeadm's `component` label (in
/// [`super::controller_manager::NAMESPACE`], as the controller manager's).
pub const SELECTOR: &str = "component=kube-apiserver";

/// The label kubeadm gives it, as (key, value).
pub const LABEL: (&str, &str) = ("component", "kube-apiserver");

/// The name of its container.
pub const CONTAINER: &str = "kube-apiserver";

/// The not-ready flag's name.
pub const NOT_READY: &str = "default-not-ready-toleration-seconds";

/// The unreachable flag's name.
pub const UNREACHABLE: &str = "default-unreachable-toleration-seconds";

/// What the API server's command line says of its default tolerations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Said {
    /// `--default-not-ready-toleration-seconds`, when on the command line.
    pub not_ready: Option<i64>,
    /// `--default-unreachable-toleration-seconds`, when on the command line.
    pub unreachable: Option<i64>,
}

impl Said {
    /// The admission's seconds: each flag as given, else its default (300).
    #[must_use]
    pub fn admission(self) -> Admission {
        let defaults = Admission::default();
        Admission {
            not_ready_seconds: self.not_ready.unwrap_or(defaults.not_ready_seconds),
            unreachable_seconds: self.unreachable.unwrap_or(defaults.unreachable_seconds),
        }
    }
}

/// The two flags `args` hold (`--name=value`, or `--name value`), and a warning for each that does not
/// read as a whole number (left out: the default applies). kube-apiserver takes the last of a flag
/// given twice, as here.
#[must_use]
pub fn from_args(args: &[String]) -> (Said, Vec<String>) {
    let mut said = Said::default();
    let mut warnings = Vec::new();
    let mut words = args.iter().peekable();
    while let Some(word) = words.next() {
        let Some(flag) = word.strip_prefix("--") else { continue };
        let (name, value) = match flag.split_once('=') {
            Some((name, value)) => (name, value.to_owned()),
            None if flag == NOT_READY || flag == UNREACHABLE => {
                match words.peek().filter(|next| !next.starts_with("--")) {
                    Some(next) => (flag, (*next).clone()),
                    None => continue,
                }
            }
            None => continue,
        };
        let slot = match name {
            NOT_READY => &mut said.not_ready,
            UNREACHABLE => &mut said.unreachable,
            _ => continue,
        };
        match value.trim().parse::<i64>() {
            Ok(seconds) => *slot = Some(seconds),
            Err(_) => warnings.push(format!("--{name}={value} is not a whole number")),
        }
    }
    (said, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn the_default_toleration_seconds_are_read_from_the_command_line_each_else_300() {
        let (said, warnings) = from_args(&words(
            "kube-apiserver --advertise-address=10.0.0.1 --default-unreachable-toleration-seconds=120 \
             --default-not-ready-toleration-seconds 60",
        ));
        assert_eq!(said, Said { not_ready: Some(60), unreachable: Some(120) });
        assert!(warnings.is_empty(), "{warnings:?}");
        let (said, _) = from_args(&words("kube-apiserver --default-unreachable-toleration-seconds=30"));
        assert_eq!(said.admission(), Admission { not_ready_seconds: 300, unreachable_seconds: 30 });
        let (said, warnings) = from_args(&words("kube-apiserver --default-not-ready-toleration-seconds=5m"));
        assert_eq!(
            (said, warnings.as_slice()),
            (Said::default(), &["--default-not-ready-toleration-seconds=5m is not a whole number".to_owned()][..])
        );
    }
}
