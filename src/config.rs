//! The validated configs, one per command: what the command line's flags (`cli`) say, checked
//! together and typed, before anything is read or connected. The commands take these and never the
//! parser's structs, so what runs them (`cli`, `live`) shares one vocabulary.
//!
//! Owns: `PlanConfig`, `ExplainConfig`, `WatchConfig`, `RunConfig` and their parts. Uses: the engine's
//! values, the output's formats, the cluster's connection options.

use std::net::SocketAddr;
use std::time::Duration;

use crate::cluster::ConnectOptions;
use crate::cluster::evict::Mode;
use crate::decode::controller_manager::{self, Found};
use crate::engine::audit::Severity;
use crate::engine::devices::NEWEST_MINOR;
use crate::engine::lifecycle::{Flags, Given, Settings, Source};
use crate::engine::snapshot::WhatIf;
use crate::engine::time::Timestamp;
use crate::output::template::Template;
use crate::output::{ColorMode, OutputFormat, View};
use crate::runtime::Policy;
use crate::selector::Selector;
use crate::words::printable;

/// How often a kubelet renews its node Lease by default (`nodeLeaseDurationSeconds` 40 / 4).
pub const KUBELET_RENEW_INTERVAL: Duration = Duration::from_secs(10);

/// `--request-timeout` when not given (kubectl waits forever by default; a command that may be run
/// during an incident should not).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The Kubernetes minor version whose controller defaults apply when the server's is not known (a
/// dump, or a `/version` that could not be read).
pub const DEFAULT_MINOR: u32 = 29;

/// The first minor version with the `Lt`/`Gt` toleration operators (alpha).
pub const COMPARISON_OPERATORS_MINOR: u32 = 35;

/// Where the snapshot comes from, the evaluation instant and the what-if taints.
#[derive(Clone, Debug)]
pub struct Input {
    /// A dump to read (`-` for stdin) instead of the live cluster.
    pub file: Option<String>,
    /// `--now`; `None`: the current time.
    pub now: Option<Timestamp>,
    /// `--at`: the instant whose state a record is read at; `None`: its last line's.
    pub at: Option<Timestamp>,
    /// The what-if changes in the order they apply: additions, then removals.
    pub what_if: Vec<WhatIf>,
    /// `--down`: the nodes whose kubelets go silent now, in a what-if.
    pub down: Vec<String>,
    /// `--down-selector`: the nodes it selects go silent now too.
    pub down_selector: Option<Selector>,
    /// Read from etcd instead of the watch cache.
    pub quorum_read: bool,
    /// How to connect to the live cluster.
    pub connect: ConnectOptions,
    /// `audit`: every zone's and every node's outage is predicted, a game day each.
    pub every_outage: bool,
    /// Node label keys read beside `-l`'s and `--down-selector`'s: those of `audit -l`, which picks
    /// among every node read. A dump's other node labels are not kept.
    pub label_keys: Vec<String>,
}

impl Input {
    /// Whether nodes go down in this what-if (`--down`, `--down-selector`, `audit`): a game day,
    /// which reads every pod and its owner.
    #[must_use]
    pub fn game_day(&self) -> bool {
        !self.down.is_empty() || self.down_selector.is_some() || self.every_outage
    }
}

/// kube-controller-manager's node lifecycle flags as given, and when a Ready node counts as silent.
#[derive(Clone, Debug)]
pub struct Lifecycle {
    /// The controller's flags given (`None`: the version's default).
    pub given: GivenFlags,
    /// `--silent-after`.
    pub silent_after: Duration,
    /// `--feature-gates TaintTolerationComparisonOperators=…`, when given.
    pub comparison_operators: Option<bool>,
    /// `--kube-version`'s minor version, when given.
    pub kube_version: Option<u32>,
    /// `--controller-settings FILE`: the settings it names.
    pub file: Option<Given>,
}

/// kube-controller-manager's node lifecycle flags, each as given (`None`: not given).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GivenFlags {
    /// `--node-monitor-period`.
    pub node_monitor_period: Option<Duration>,
    /// `--node-monitor-grace-period`.
    pub node_monitor_grace_period: Option<Duration>,
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

impl Lifecycle {
    /// What a value given means when it is out of the flag's sensible range: kube-controller-manager
    /// validates none of these flags, and neither does this tool, but it says what such a value does.
    #[must_use]
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if let Some(threshold) = self.given.unhealthy_zone_threshold.filter(|t| *t > 1.0) {
            warnings.push(format!(
                "--unhealthy-zone-threshold {threshold} is above 1: no zone can be partially disrupted (no share \
                 of a zone's nodes reaches it), as in kube-controller-manager, which accepts it too"
            ));
        }
        if let Some(minor) = self.kube_version.filter(|minor| *minor > NEWEST_MINOR) {
            warnings.push(format!(
                "--kube-version 1.{minor}: no release this build knows (the newest is 1.{NEWEST_MINOR}): its \
                 controllers are taken to behave as 1.{NEWEST_MINOR}'s"
            ));
        }
        warnings
    }

    /// Whether `Lt`/`Gt` tolerations match (kube-controller-manager's `TaintTolerationComparisonOperators`
    /// gate), and whether that was assumed rather than given: given, as given; else on from
    /// Kubernetes 1.35 (`minor`, the server's; a dump says none: on, as the newest does when a pod
    /// with such a toleration exists at all), off before.
    #[must_use]
    pub fn comparison_operators(&self, minor: Option<u32>) -> (bool, bool) {
        match self.comparison_operators {
            Some(enabled) => (enabled, false),
            None => (minor.is_none_or(|minor| minor >= COMPARISON_OPERATORS_MINOR), true),
        }
    }

    /// The warning for `pods` pods with `Lt`/`Gt` tolerations, when their matching was assumed.
    #[must_use]
    pub fn comparison_warning(&self, pods: usize, minor: Option<u32>) -> Option<String> {
        let (enabled, assumed) = self.comparison_operators(minor);
        if pods == 0 || !assumed {
            return None;
        }
        let pods = if pods == 1 { "1 pod has".to_owned() } else { format!("{pods} pods have") };
        Some(if enabled {
            format!(
                "{pods} Lt/Gt tolerations: matched as kube-controller-manager does with its \
                 TaintTolerationComparisonOperators gate on (the API server admitted them, so its gate is on); if the \
                 controller's is off, say so with --feature-gates TaintTolerationComparisonOperators=false"
            )
        } else {
            format!(
                "{pods} Lt/Gt tolerations: they match nothing, as before Kubernetes 1.{COMPARISON_OPERATORS_MINOR}; if the \
                 controller has the gate on, say so with --feature-gates TaintTolerationComparisonOperators=true"
            )
        })
    }

    /// `--kube-version`'s minor version, when given.
    #[must_use]
    pub fn kube_version(&self) -> Option<u32> {
        self.kube_version
    }

    /// The controller's flags: those given, then those of `--controller-settings`, the others at
    /// the defaults of Kubernetes `1.minor` (1.29 when `None`).
    #[must_use]
    pub fn flags(&self, minor: Option<u32>) -> Flags {
        self.settings(minor, None).flags
    }

    /// The controller's settings and where each came from: a flag given wins; then the command
    /// line of its pod (`pod`, when read), else `--controller-settings`; else the defaults of
    /// Kubernetes `1.minor` (1.29 when `None`), assumed (docs/node-lifecycle.md, "The controller's
    /// settings").
    #[must_use]
    pub fn settings(&self, minor: Option<u32>, pod: Option<&Given>) -> Settings {
        let defaults = Flags::defaults_for(minor.unwrap_or(DEFAULT_MINOR));
        let given = &self.given;
        let flags = Given {
            node_monitor_period: given.node_monitor_period,
            node_monitor_grace_period: given.node_monitor_grace_period,
            node_startup_grace_period: None,
            node_eviction_rate: given.node_eviction_rate,
            secondary_node_eviction_rate: given.secondary_node_eviction_rate,
            unhealthy_zone_threshold: given.unhealthy_zone_threshold,
            large_cluster_size_threshold: given.large_cluster_size_threshold,
            kube_api_qps: given.kube_api_qps,
            kube_api_burst: given.kube_api_burst,
        };
        let mut layers = vec![(Source::Flag, &flags)];
        match (pod, &self.file) {
            (Some(pod), _) => layers.push((Source::Pod, pod)),
            (None, Some(file)) => layers.push((Source::File, file)),
            (None, None) => {}
        }
        Settings::resolve(defaults, &layers)
    }

    /// The controller's settings with what was `found` of its pod (live, or in a dump): with a
    /// warning for each value of its command line that does not read (its default assumed), and,
    /// when a live read assumed some, the line that says so and why (docs/node-lifecycle.md, "The
    /// controller's settings").
    #[must_use]
    pub fn settings_found(&self, minor: Option<u32>, found: Option<&Found>, live: bool) -> SettingsRead {
        let mut warnings = Vec::new();
        let pod = match found {
            Some(Found::Pod { name, args }) => {
                let (given, unread) = controller_manager::from_args(args);
                for warning in unread {
                    let pod = printable(name);
                    warnings.push(format!("pod kube-system/{pod}: {}: its default is assumed", printable(&warning)));
                }
                Some(given)
            }
            _ => None,
        };
        let settings = self.settings(minor, pod.as_ref());
        let why = match found {
            _ if !live || self.file.is_some() || !settings.some_assumed() => None,
            Some(Found::NoPod) => Some(format!(
                "no pod labelled {} in namespace \"{}\"",
                controller_manager::SELECTOR,
                controller_manager::NAMESPACE
            )),
            Some(Found::Unreadable(why)) => Some(why.clone()),
            Some(Found::Pod { .. }) | None => None,
        };
        let assumed = why.map(|why| {
            let minor = minor.unwrap_or(DEFAULT_MINOR);
            let assumed: Vec<String> = settings
                .each()
                .iter()
                .filter(|(_, _, source)| *source == Source::Default)
                .map(|(name, value, _)| format!("--{name} {}", crate::output::settings::shown(*value)))
                .collect();
            format!(
                "the node lifecycle controller's settings are assumed at kube-controller-manager 1.{minor}'s \
                 defaults ({}): {}; give its flags, or --controller-settings FILE",
                assumed.join(", "),
                printable(&why)
            )
        });
        SettingsRead { settings, warnings, assumed }
    }
}

/// The controller's settings as read ([`Lifecycle::settings_found`]), with what to say of them.
#[derive(Clone, Debug)]
pub struct SettingsRead {
    /// Each setting, with where it came from.
    pub settings: Settings,
    /// A value of the pod's command line that does not read, one line each.
    pub warnings: Vec<String>,
    /// Why the settings are assumed, in one line, when a live read assumed them.
    pub assumed: Option<String>,
}

/// `plan` (without `-w`), validated.
#[derive(Clone, Debug)]
pub struct PlanConfig {
    /// The nodes named, without repeats, in their first order.
    pub nodes: Vec<String>,
    /// `-l`.
    pub selector: Option<Selector>,
    /// The snapshot's source, instant and what-if taints.
    pub input: Input,
    /// `-n`: only this namespace's pods are shown.
    pub namespace: Option<String>,
    /// `-o`.
    pub format: OutputFormat,
    /// How the human forms are laid out.
    pub view: View,
    /// The node lifecycle flags.
    pub lifecycle: Lifecycle,
}

/// `audit`, validated.
#[derive(Clone, Debug)]
pub struct AuditConfig {
    /// `-l`: only these nodes' outages and their zones'.
    pub selector: Option<Selector>,
    /// The snapshot's source and instant.
    pub input: Input,
    /// `-n`: only this namespace's pods and owners.
    pub namespace: Option<String>,
    /// `-o`.
    pub format: AuditOutput,
    /// `--summary`: the findings' counts and the scenarios' one line each.
    pub summary: bool,
    /// `--fail-on`: findings at or above this severity end the audit with exit code 3.
    pub fail_on: Option<Severity>,
    /// Whether the table is coloured.
    pub color: ColorMode,
    /// The node lifecycle flags.
    pub lifecycle: Lifecycle,
    /// `--profile`, `--profile-from`, `--profile-from-cluster`: the cluster rendered manifests will
    /// run on.
    pub profile: Option<ProfileFrom>,
}

/// Where the profile of the cluster rendered manifests will run on comes from (docs/audit.md, "The
/// cluster's profile").
#[derive(Clone, Debug)]
pub enum ProfileFrom {
    /// `--profile FILE`: a profile written, read.
    File(crate::decode::profile::Profile),
    /// `--profile-from DUMP`: taken from a dump (`-` for stdin).
    Dump(String),
    /// `--profile-from-cluster`: taken from the live cluster.
    Cluster,
}

impl ProfileFrom {
    /// The flag that names it.
    #[must_use]
    pub fn flag(&self) -> &'static str {
        match self {
            Self::File(_) => "--profile",
            Self::Dump(_) => "--profile-from",
            Self::Cluster => "--profile-from-cluster",
        }
    }
}

/// `profile`, validated: where to take it from.
#[derive(Clone, Debug)]
pub struct ProfileConfig {
    /// A dump (`file`), or the live cluster and how to connect.
    pub input: Input,
}

/// `review`, validated.
#[derive(Clone, Debug)]
pub struct ReviewConfig {
    /// The record: a file or a directory of them.
    pub record: String,
    /// A deletion within this many nanoseconds of when it was due is on time.
    pub slack: i128,
    /// `-n`: only this namespace's pods.
    pub namespace: Option<String>,
    /// `-o`.
    pub format: ReviewOutput,
    /// The node lifecycle flags, for the node taints' windows.
    pub lifecycle: Lifecycle,
}

/// How `review` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReviewOutput {
    /// Each pod's verdict.
    Table,
    /// The `Review` document.
    Json,
    /// The same document as YAML.
    Yaml,
}

/// How `audit` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuditOutput {
    /// Findings, then the owners each outage leaves with none.
    Table,
    /// The `EvictionAudit` document.
    Json,
    /// The same document as YAML.
    Yaml,
    /// SARIF 2.1.0 (rendered manifests only).
    Sarif,
}

/// How `explain` prints.
#[derive(Clone, Debug, PartialEq)]
pub enum ExplainOutput {
    /// Sentences.
    Text,
    /// The `EvictionExplanation` document.
    Json,
    /// The same document as YAML.
    Yaml,
    /// A kubectl template over the JSON document (one row for custom columns).
    Template(Template),
}

/// `explain`, validated.
#[derive(Clone, Debug)]
pub struct ExplainConfig {
    /// The pod.
    pub pod: String,
    /// `-n`; `None`: the kubeconfig context's, or `default` for a dump.
    pub namespace: Option<String>,
    /// The snapshot's source, instant and what-if taints.
    pub input: Input,
    /// `-o`.
    pub format: ExplainOutput,
    /// The node lifecycle flags.
    pub lifecycle: Lifecycle,
    /// The width the text is wrapped to (`COLUMNS`, else the terminal's); `None`: not wrapped.
    pub width: Option<usize>,
}

/// `plan -w`, validated.
#[derive(Clone, Debug)]
pub struct WatchConfig {
    /// The nodes named.
    pub nodes: Vec<String>,
    /// `-l`.
    pub selector: Option<Selector>,
    /// How to connect.
    pub connect: ConnectOptions,
    /// `-n`: only this namespace's pods are shown.
    pub namespace: Option<String>,
    /// `-o json`: JSON lines even on a terminal.
    pub json: bool,
    /// `-o jsonpath=…` or `custom-columns=…`: each JSON line printed through it.
    pub template: Option<Template>,
    /// A custom-columns table's header (`--no-headers` takes it away).
    pub headers: bool,
    /// The colour of the live screen.
    pub color: ColorMode,
    /// The node lifecycle flags, for the expected taints of silent nodes.
    pub lifecycle: Lifecycle,
}

/// How `run` prints its events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Printing {
    /// Text lines for people; on a terminal, the next deletions stay listed under the log, their
    /// countdowns redrawn every second.
    Text {
        /// Colour or not.
        color: ColorMode,
        /// The live view under the log.
        live: bool,
    },
    /// JSON Lines (`-o json`).
    Json,
    /// Log records (`--log-format`): JSON objects, else text lines.
    Log {
        /// `--log-format json`.
        json: bool,
    },
}

/// `run`'s leader election, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Election {
    /// The Lease's name.
    pub lease_name: String,
    /// The Lease's namespace; `None`: the kubeconfig context's.
    pub namespace: Option<String>,
    /// How long a claim lasts without renewal.
    pub lease_duration: Duration,
    /// How long a leader tries to renew before it stops deciding.
    pub renew_deadline: Duration,
    /// How often the lease is tried and renewed.
    pub retry_period: Duration,
    /// Without `--leader-elect`: a lone `run` holds the Lease while it enforces, so that another
    /// `run` notices it and waits, and it waits for one already enforcing (docs/run.md, "One
    /// enforcer at a time"). Renewals that fail do not end its turn (only another holder does): an
    /// outage does not restart its countdowns.
    pub lone: bool,
}

/// `record`, validated.
#[derive(Clone, Debug)]
pub struct RecordConfig {
    /// `--out`: the directory of the record's files.
    pub out: std::path::PathBuf,
    /// How to connect.
    pub connect: ConnectOptions,
    /// `--leases-every`: each node Lease's renewal written at most this often.
    pub leases_every: Duration,
    /// How large the files grow, and how much of them is kept.
    pub limits: RecordLimits,
}

/// `record`'s files: how large each grows, and how long and how much of them is kept.
#[derive(Clone, Copy, Debug)]
pub struct RecordLimits {
    /// `--file-size`: a file this large ends, and the next begins.
    pub file_size: u64,
    /// `--max-size`: the files together stay under this (the oldest removed).
    pub max_size: Option<u64>,
    /// `--max-age`: a file whose last line is older than this is removed.
    pub max_age: Option<Duration>,
}

/// `run`, validated.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// The nodes named.
    pub nodes: Vec<String>,
    /// `-l`.
    pub selector: Option<Selector>,
    /// `-n`: only this namespace's pods are watched and enforced.
    pub namespace: Option<String>,
    /// Write nothing.
    pub dry_run: bool,
    /// How a due pod is removed.
    pub mode: Mode,
    /// How deletions are carried out: `--restart-countdowns`, `--concurrency`, `--max-deletions`,
    /// `--keep-last-ready`.
    pub policy: Policy,
    /// Writes per second; 0: unlimited.
    pub qps: f64,
    /// Writes that may go at once.
    pub burst: u32,
    /// How to connect.
    pub connect: ConnectOptions,
    /// How events are printed.
    pub printing: Printing,
    /// The leader election; `None`: this instance always decides.
    pub election: Option<Election>,
    /// Where to serve /metrics; `None`: off.
    pub metrics_bind_address: Option<SocketAddr>,
    /// The node lifecycle flags.
    pub lifecycle: Lifecycle,
    /// Enforce DRA device taints too.
    pub device_taints: bool,
}
