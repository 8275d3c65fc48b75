//! The flags: clap definitions (the single source of truth for help and completions) and their
//! value parsers.

use clap::{Args, Parser, Subcommand, ValueEnum, ValueHint};

use crate::engine::model::{Effect, Taint};
use crate::engine::snapshot::WhatIf;
use crate::engine::time::Timestamp;
use crate::error::Result;
use crate::selector::Selector;

/// Predict, explain and enforce Kubernetes NoExecute taint evictions.
///
/// Replays the taint-eviction controller of kube-controller-manager over a snapshot of the cluster:
/// which pods on a tainted node are deleted, when, and why.
#[derive(Parser, Debug)]
#[command(name = "kubectl-taint_evict", bin_name = "kubectl taint-evict", version, max_term_width = 110)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Show each pod's verdict and eviction deadline on NoExecute-tainted nodes.
    Plan(PlanArgs),
    /// Say, for one pod, which toleration matched which taint and why.
    Explain(ExplainArgs),
    /// Predict every zone's and every node's outage, and find what the tolerations leave exposed.
    Audit(AuditArgs),
    /// Print the cluster's profile as the YAML `audit --profile` reads.
    ///
    /// Its zones and their node counts, the node lifecycle controller's settings, the API server's
    /// default tolerations and its version, taken from the cluster or a dump (`-f`).
    Profile(ProfileArgs),
    /// Enforce NoExecute evictions: watch nodes and pods, delete pods when they are due.
    Run(RunArgs),
    /// Record what the taint-eviction decisions depend on, as it changes, into files for review.
    Record(RecordArgs),
    /// After an incident: each deletion a record saw, against when the controller should have made it.
    Review(ReviewArgs),
    /// Print a shell completion script (or kubectl's completion helper).
    Completion {
        /// The shell, or `kubectl` for the `kubectl_complete-taint_evict` helper.
        #[arg(value_enum)]
        shell: CompletionShell,
    },
}

/// Shells `completion` can print a script for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CompletionShell {
    /// Bash.
    Bash,
    /// Zsh.
    Zsh,
    /// Fish.
    Fish,
    /// The `kubectl_complete-taint_evict` helper kubectl calls to complete plugin arguments.
    Kubectl,
}

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, ValueEnum)]
pub enum ColorChoice {
    /// Colour when stdout is a terminal and `NO_COLOR` is not set.
    #[default]
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// Where the snapshot comes from, the evaluation instant and the what-if taints.
#[derive(Args, Debug, Clone, Default)]
pub struct InputArgs {
    /// Read a `kubectl get nodes,pods -A -o json` dump instead of the live cluster (`-` for stdin).
    #[arg(short = 'f', long = "filename", value_name = "FILE", value_hint = ValueHint::FilePath, help_heading = "Input")]
    pub file: Option<String>,
    /// Evaluate at this instant (RFC 3339) instead of the current time.
    #[arg(long, value_name = "RFC3339", value_parser = parse_now, help_heading = "Input")]
    pub now: Option<Timestamp>,
    /// With -f RECORD (what `record` wrote): the state it holds at this instant (RFC 3339),
    /// evaluated then; its last line's when left out.
    #[arg(long, value_name = "RFC3339", value_parser = parse_now, requires = "file", conflicts_with = "now", help_heading = "Input")]
    pub at: Option<Timestamp>,
    /// What if this taint were added (or replaced) now: KEY[=VALUE]:EFFECT. Repeatable.
    // The help text is shown as written: its brackets are usage syntax, not links.
    #[allow(rustdoc::broken_intra_doc_links)]
    #[arg(long = "taint", value_name = "KEY[=VALUE]:EFFECT", value_parser = parse_taint, help_heading = "What-if")]
    pub taints: Vec<WhatIf>,
    /// What if this taint were removed now: KEY[:EFFECT] (every effect when left out). Repeatable.
    #[allow(rustdoc::broken_intra_doc_links)]
    #[arg(long = "remove-taint", value_name = "KEY[:EFFECT]", value_parser = parse_remove_taint, help_heading = "What-if")]
    pub remove_taints: Vec<WhatIf>,
    /// What if these nodes' kubelets stopped heartbeating now (a zone's power work, a rack lost):
    /// the node lifecycle controller's taints and the deletions they bring. Repeatable.
    #[arg(long = "down", value_name = "NODE[,NODE…]", value_parser = parse_node_name, value_delimiter = ',', help_heading = "What-if")]
    pub down: Vec<String>,
    /// What if the kubelets of the nodes this label selector selects stopped heartbeating now
    /// (`topology.kubernetes.io/zone=za`: a zone going dark), as --down does.
    #[arg(long = "down-selector", value_name = "SELECTOR", value_parser = parse_selector, help_heading = "What-if")]
    pub down_selector: Option<Selector>,
    /// Read from etcd (a quorum read, paged) instead of the API server's watch cache: the latest
    /// objects, at the cost of etcd scanning every pod for each node's pod list.
    #[arg(long, help_heading = "Cluster")]
    pub quorum_read: bool,
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// Which cluster to talk to, and as whom, as kubectl's flags say it (and with its precedence: a flag
/// over the kubeconfig's value).
#[derive(Args, Debug, Clone, Default)]
pub struct ClusterArgs {
    /// Path to the kubeconfig file.
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath, help_heading = "Cluster")]
    pub kubeconfig: Option<String>,
    /// The kubeconfig context to use.
    #[arg(long, value_name = "NAME", help_heading = "Cluster")]
    pub context: Option<String>,
    /// The kubeconfig cluster to use (instead of the context's).
    #[arg(long, value_name = "NAME", help_heading = "Cluster")]
    pub cluster: Option<String>,
    /// The kubeconfig user to use (instead of the context's).
    #[arg(long, value_name = "NAME", help_heading = "Cluster")]
    pub user: Option<String>,
    /// The address and port of the API server (instead of the cluster's).
    #[arg(short = 's', long, value_name = "URL", help_heading = "Cluster")]
    pub server: Option<String>,
    /// A bearer token to authenticate with (instead of the user's credentials).
    #[arg(long, value_name = "TOKEN", help_heading = "Cluster")]
    pub token: Option<String>,
    /// Act as this user (impersonation).
    #[arg(long = "as", value_name = "USER", help_heading = "Cluster")]
    pub impersonate: Option<String>,
    /// Act as this group, with --as (repeatable).
    #[arg(long = "as-group", value_name = "GROUP", help_heading = "Cluster")]
    pub impersonate_groups: Vec<String>,
    /// Act as this UID, with --as.
    #[arg(long = "as-uid", value_name = "UID", help_heading = "Cluster")]
    pub impersonate_uid: Option<String>,
    /// A certificate file of the certificate authority to verify the server with.
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath, help_heading = "Cluster")]
    pub certificate_authority: Option<String>,
    /// A client certificate file for TLS.
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath, help_heading = "Cluster")]
    pub client_certificate: Option<String>,
    /// A client key file for TLS.
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath, help_heading = "Cluster")]
    pub client_key: Option<String>,
    /// The server name to verify the server's certificate with (instead of the server's host).
    #[arg(long, value_name = "NAME", help_heading = "Cluster")]
    pub tls_server_name: Option<String>,
    /// The most one API request may take (`5s`, `1m`; default 30s); 0 waits as long as it takes.
    ///
    /// Bounds connecting and each read of `plan` and `explain`, and connecting and the start-up
    /// reads of `run` (its watches are long by design and reconnect on their own).
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout, help_heading = "Cluster")]
    pub request_timeout: Option<std::time::Duration>,
    /// The most bytes one answer of the API server (a list page, an object) or a dump (-f) may
    /// hold (`512Mi`, `4Gi`); one event of a watch may hold a 32nd of it, 64 MiB at least.
    ///
    /// Past it the command ends with an error naming this flag, so that a server (or a pipe) that
    /// never ends its answer cannot take the machine's memory. The default fits a LIST of 150,000
    /// pods (about 1 GB of JSON).
    #[arg(long, value_name = "SIZE", value_parser = crate::decode::bounded::MaxSize::parse, default_value = "2Gi", help_heading = "Cluster")]
    pub max_response_size: crate::decode::bounded::MaxSize,
    /// Do not verify the server's TLS certificate (insecure: anyone on the path can read and change
    /// the traffic, the credentials included).
    #[arg(long, help_heading = "Cluster")]
    pub insecure_skip_tls_verify: bool,
    /// Do not ask the API server to compress its answers (gzip), as kubectl's flag and the
    /// kubeconfig cluster's `disable-compression`: it spends less CPU on each list, and the answers
    /// cross the network several times larger. For a client near the API server (in the cluster, on
    /// its network) during an incident.
    #[arg(long, help_heading = "Cluster")]
    pub disable_compression: bool,
    /// What reads of pods, nodes and Leases ask the API server for: protobuf (the default, as
    /// kube-controller-manager reads; the server encodes it several times cheaper than JSON) or
    /// json. A server that cannot answer protobuf answers JSON.
    #[arg(
        long,
        value_name = "TYPE",
        value_enum,
        default_value_t,
        env = "TAINT_EVICT_CONTENT_TYPE",
        help_heading = "Cluster"
    )]
    pub content_type: crate::cluster::protobuf::ContentType,
}

/// `plan -o` (the output's [`crate::output::OutputFormat`], as the flag spells it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, ValueEnum)]
pub enum PlanOutput {
    /// A table per node, fitted to the terminal.
    #[default]
    Table,
    /// The table with every value in full, and `SINCE BASIS TOLERATION UID`.
    Wide,
    /// The `EvictionPlan` document as JSON.
    Json,
    /// The same document as YAML.
    Yaml,
    /// `pod/NAME`, one per line, as kubectl prints it.
    Name,
}

/// `-o`: one of a command's formats, or one of kubectl's templates (`jsonpath=TEMPLATE`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output<F> {
    /// A format of the command's own.
    Format(F),
    /// `jsonpath=…`, `jsonpath-file=…`, `custom-columns=…`, `custom-columns-file=…`.
    Template(TemplateArg),
}

/// A template format and what follows its `=` (empty when nothing does).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateArg {
    /// The format.
    pub kind: TemplateKind,
    /// The template, or the file that holds it.
    pub value: String,
}

/// kubectl's template formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TemplateKind {
    /// `jsonpath=TEMPLATE`.
    JsonPath,
    /// `jsonpath-file=FILE`.
    JsonPathFile,
    /// `custom-columns=NAME:.path,…`.
    CustomColumns,
    /// `custom-columns-file=FILE`.
    CustomColumnsFile,
}

impl TemplateKind {
    const ALL: [Self; 4] = [Self::JsonPath, Self::JsonPathFile, Self::CustomColumns, Self::CustomColumnsFile];

    /// The format's name on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::JsonPath => "jsonpath",
            Self::JsonPathFile => "jsonpath-file",
            Self::CustomColumns => "custom-columns",
            Self::CustomColumnsFile => "custom-columns-file",
        }
    }

    /// Whether the value names a file.
    #[must_use]
    pub fn is_file(self) -> bool {
        matches!(self, Self::JsonPathFile | Self::CustomColumnsFile)
    }

    fn possible_value(self) -> clap::builder::PossibleValue {
        let (name, help) = match self {
            Self::JsonPath => ("jsonpath=", "jsonpath=TEMPLATE: kubectl's JSONPath template over the JSON document"),
            Self::JsonPathFile => ("jsonpath-file=", "jsonpath-file=FILE: the JSONPath template in FILE"),
            Self::CustomColumns => ("custom-columns=", "custom-columns=NAME:.path,…: a table of these columns"),
            Self::CustomColumnsFile => {
                ("custom-columns-file=", "custom-columns-file=FILE: headers on FILE's first line, paths on its second")
            }
        };
        clap::builder::PossibleValue::new(name).help(help)
    }
}

/// Reads `-o`: a value of `F`, or `FORMAT=…` for a template format (a format named without `=`
/// is a template format without a template, refused once the flags are checked).
#[derive(Clone, Copy, Debug)]
pub struct OutputParser<F>(std::marker::PhantomData<F>);

impl<F> OutputParser<F> {
    /// The parser.
    #[must_use]
    pub fn new() -> Self {
        Self(std::marker::PhantomData)
    }
}

impl<F> Default for OutputParser<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: ValueEnum + Clone + Send + Sync + 'static> clap::builder::TypedValueParser for OutputParser<F> {
    type Value = Output<F>;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> std::result::Result<Self::Value, clap::Error> {
        if let Some(text) = value.to_str() {
            let (name, template) = text.split_once('=').map_or((text, None), |(name, rest)| (name, Some(rest)));
            if let Some(kind) = TemplateKind::ALL.into_iter().find(|kind| kind.name() == name) {
                return Ok(Output::Template(TemplateArg { kind, value: template.unwrap_or_default().to_owned() }));
            }
            if let Some(format) = F::value_variants()
                .iter()
                .find(|format| format.to_possible_value().is_some_and(|p| p.get_name() == text))
            {
                return Ok(Output::Format(format.clone()));
            }
        }
        let values: Vec<_> = self.possible_values().into_iter().flatten().collect();
        // Refused here with the list of what `-o` takes (a value in the list was taken above).
        clap::builder::PossibleValuesParser::new(values)
            .parse_ref(cmd, arg, value)
            .and_then(|_| Err(clap::Error::new(clap::error::ErrorKind::InvalidValue).with_cmd(cmd)))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let formats = F::value_variants().iter().filter_map(ValueEnum::to_possible_value);
        Some(Box::new(formats.chain(TemplateKind::ALL.into_iter().map(TemplateKind::possible_value))))
    }
}

/// `plan --sort-by` (the output's [`crate::output::SortBy`], as the flag spells it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, ValueEnum)]
pub enum SortKey {
    /// Deadline (pods without one last), then namespace, then name: the document's order.
    #[default]
    Deadline,
    /// Namespace, then name.
    Namespace,
    /// Name, then namespace.
    Name,
}

/// `plan`.
#[derive(Args, Debug, Clone)]
pub struct PlanArgs {
    /// Nodes to plan for (default: every node with a NoExecute taint).
    #[arg(value_name = "NODE", value_parser = parse_node_name)]
    pub nodes: Vec<String>,
    /// Select nodes by label (`zone=a,!gpu`).
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR", value_parser = parse_selector, conflicts_with = "nodes")]
    pub selector: Option<Selector>,
    #[command(flatten)]
    pub watch: WatchArgs,
    #[command(flatten)]
    pub input: InputArgs,
    /// Only show pods of this namespace.
    #[arg(short = 'n', long, value_name = "NAMESPACE", value_parser = parse_namespace, help_heading = "Output")]
    pub namespace: Option<String>,
    /// Show pods of all namespaces (the default: a node's pods span namespaces).
    #[arg(short = 'A', long, conflicts_with = "namespace", help_heading = "Output")]
    pub all_namespaces: bool,
    /// Output format.
    #[arg(short = 'o', long, value_parser = OutputParser::<PlanOutput>::new(), default_value = "table", help_heading = "Output")]
    pub output: Output<PlanOutput>,
    /// Missing keys in a jsonpath template print nothing (`false`: they are an error), as in kubectl.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true", help_heading = "Output")]
    pub allow_missing_template_keys: bool,
    /// Print the pods' rows only: no column headers, node headings or summaries.
    #[arg(long, help_heading = "Output")]
    pub no_headers: bool,
    /// The pods' order in the table and in `-o name`.
    #[arg(long, value_enum, value_name = "KEY", default_value_t, help_heading = "Output")]
    pub sort_by: SortKey,
    /// Print only the summary lines: the whole plan's, then one per node, most urgent first.
    #[arg(long, help_heading = "Output")]
    pub summary: bool,
    /// Show how many pods are deleted per interval over the coming window (in JSON and YAML: the
    /// `timeline` field).
    #[arg(long, help_heading = "Output")]
    pub timeline: bool,
    /// When to colour the table.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t, help_heading = "Output")]
    pub color: ColorChoice,
    #[command(flatten)]
    pub lifecycle: LifecycleArgs,
}

/// kube-controller-manager's node lifecycle flags, as it names them (docs/plan.md), for the
/// prediction of the taints it adds. Unset unless given: the defaults are those of the server's
/// version (a live cluster's `/version`; Kubernetes 1.29 for a dump), and a flag given always wins.
#[derive(Args, Debug, Clone)]
pub struct LifecycleArgs {
    /// Silence after which the controller marks a node Ready=Unknown [default: 40s before
    /// Kubernetes 1.32, 50s from 1.32; a dump: 40s].
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout, help_heading = "Node lifecycle")]
    pub node_monitor_grace_period: Option<std::time::Duration>,
    /// The controller's node health pass period [default: 5s].
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout, help_heading = "Node lifecycle")]
    pub node_monitor_period: Option<std::time::Duration>,
    /// Nodes tainted per second per zone while the zone is healthy [default: 0.1].
    #[arg(long, value_name = "RATE", value_parser = parse_rate, help_heading = "Node lifecycle")]
    pub node_eviction_rate: Option<f32>,
    /// Nodes tainted per second in a large partially disrupted zone [default: 0.01].
    #[arg(long, value_name = "RATE", value_parser = parse_rate, help_heading = "Node lifecycle")]
    pub secondary_node_eviction_rate: Option<f32>,
    /// The fraction of not-ready nodes that makes a zone partially disrupted [default: 0.55].
    #[arg(long, value_name = "FRACTION", value_parser = parse_rate, help_heading = "Node lifecycle")]
    pub unhealthy_zone_threshold: Option<f32>,
    /// A zone with more nodes than this is large (tainted at the secondary rate when disrupted)
    /// [default: 50].
    #[arg(long, value_name = "NODES", help_heading = "Node lifecycle")]
    pub large_cluster_size_threshold: Option<u32>,
    /// Requests a second kube-controller-manager's own client makes at most: the pass that marks
    /// many nodes silent writes each one's status and its ready pods' through it [default: 20].
    #[arg(long, value_name = "QPS", value_parser = parse_rate, help_heading = "Node lifecycle")]
    pub kube_api_qps: Option<f32>,
    /// The burst of that client [default: 30].
    #[arg(long, value_name = "REQUESTS", help_heading = "Node lifecycle")]
    pub kube_api_burst: Option<u32>,
    /// A Ready node whose last heartbeat (Lease renewal) is older than this is taken as silent
    /// (kubelets renew every 10s).
    #[arg(long, value_name = "DURATION", value_parser = parse_silent_after, default_value = "12s", help_heading = "Node lifecycle")]
    pub silent_after: std::time::Duration,
    /// kube-controller-manager's feature gates this tool follows, in its flag's form:
    /// `TaintTolerationComparisonOperators=true|false` (the `Lt`/`Gt` toleration operators) [default:
    /// on from Kubernetes 1.35 and for a dump, where a pod with such a toleration was admitted by an API
    /// server with the gate on; off before 1.35].
    #[arg(long, value_name = "GATE=BOOL,…", value_parser = parse_feature_gates, help_heading = "Controller")]
    pub feature_gates: Option<FeatureGates>,
    /// The Kubernetes version whose controllers to follow, as 1.MINOR [default: a live cluster's;
    /// for a dump, the node lifecycle flags of 1.29 and the device-taint controller of the newest
    /// version modelled, 1.37].
    #[arg(long, value_name = "1.MINOR", value_parser = parse_kube_version, help_heading = "Controller")]
    pub kube_version: Option<u32>,
    /// The node lifecycle controller's settings, from a file: kube-controller-manager's manifest
    /// (its static pod's YAML), or a YAML or JSON map of the settings by flag name
    /// (`node-monitor-grace-period: 10s`). Used when its pod is not read (a dump without it, a
    /// cluster that does not show it); a flag given wins (docs/node-lifecycle.md).
    #[arg(long, value_name = "FILE", value_parser = parse_controller_settings, help_heading = "Node lifecycle")]
    pub controller_settings: Option<SettingsFile>,
}

/// `--controller-settings FILE`, read.
#[derive(Clone, Debug, PartialEq)]
pub struct SettingsFile {
    /// The settings it names.
    pub given: crate::engine::lifecycle::Given,
}

fn parse_controller_settings(path: &str) -> Result<SettingsFile, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let given = crate::decode::controller_manager::from_file(&text).map_err(|e| format!("{path}: {e}"))?;
    Ok(SettingsFile { given })
}

/// The feature gates given with `--feature-gates` (`None`: not given).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FeatureGates {
    /// `TaintTolerationComparisonOperators`.
    pub comparison_operators: Option<bool>,
}

impl Default for LifecycleArgs {
    fn default() -> Self {
        Self {
            node_monitor_grace_period: None,
            node_monitor_period: None,
            node_eviction_rate: None,
            secondary_node_eviction_rate: None,
            unhealthy_zone_threshold: None,
            large_cluster_size_threshold: None,
            kube_api_qps: None,
            kube_api_burst: None,
            silent_after: std::time::Duration::from_secs(12),
            feature_gates: None,
            kube_version: None,
            controller_settings: None,
        }
    }
}

/// `explain -o`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, ValueEnum)]
pub enum ExplainFormat {
    /// Sentences.
    #[default]
    Text,
    /// An `EvictionExplanation` document.
    Json,
    /// The same document as YAML.
    Yaml,
}

/// `explain`.
#[derive(Args, Debug, Clone)]
pub struct ExplainArgs {
    /// The pod.
    #[arg(value_name = "POD", value_parser = parse_pod_name)]
    pub pod: String,
    /// The pod's namespace (default: the kubeconfig context's, or "default" for a dump).
    #[arg(short = 'n', long, value_name = "NAMESPACE", value_parser = parse_namespace)]
    pub namespace: Option<String>,
    #[command(flatten)]
    pub input: InputArgs,
    /// Output format.
    #[arg(short = 'o', long, value_parser = OutputParser::<ExplainFormat>::new(), default_value = "text", help_heading = "Output")]
    pub output: Output<ExplainFormat>,
    /// Missing keys in a jsonpath template print nothing (`false`: they are an error), as in kubectl.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true", help_heading = "Output")]
    pub allow_missing_template_keys: bool,
    #[command(flatten)]
    pub lifecycle: LifecycleArgs,
}

/// `run -o`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RunFormat {
    /// One line per event for people (coloured on a terminal, with a status line).
    Text,
    /// One JSON object per line.
    Json,
}

/// `audit -o`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum AuditFormat {
    /// The findings, then each outage's owners left with none.
    #[default]
    Table,
    /// An `EvictionAudit` document.
    Json,
    /// The same document as YAML.
    Yaml,
    /// SARIF 2.1.0, as code-scanning tools read it: rendered manifests' findings only.
    Sarif,
}

/// `review -o`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ReviewFormat {
    /// Each pod's verdict, then the leader changes and the gaps.
    #[default]
    Table,
    /// A `Review` document.
    Json,
    /// The same document as YAML.
    Yaml,
}

/// `review`.
#[derive(Args, Debug, Clone)]
pub struct ReviewArgs {
    /// What `record` wrote: a directory of its files (read in the order of their names), or one file.
    #[arg(value_name = "FILE|DIR", value_hint = ValueHint::AnyPath)]
    pub record: String,
    /// A deletion within this much of when it was due is on time (the record's instants are to the
    /// second).
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_timeout)]
    pub slack: std::time::Duration,
    /// Only this namespace's pods.
    #[arg(short = 'n', long, value_name = "NAMESPACE", value_parser = parse_namespace, help_heading = "Output")]
    pub namespace: Option<String>,
    /// Output format.
    #[arg(short = 'o', long, value_enum, value_name = "FORMAT", default_value_t, help_heading = "Output")]
    pub output: ReviewFormat,
    /// The node lifecycle controller's settings, for the windows its taints are judged against.
    #[command(flatten)]
    pub lifecycle: LifecycleArgs,
}

/// `audit --fail-on`: a finding's severity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SeverityArg {
    /// Every finding.
    Low,
    /// Medium and high findings.
    Medium,
    /// High findings only.
    High,
}

/// `audit`.
#[derive(Args, Debug, Clone)]
pub struct AuditArgs {
    /// Only the outages of the nodes this label selector selects, and of their zones (`zone=a,!gpu`).
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR", value_parser = parse_selector)]
    pub selector: Option<Selector>,
    /// Read a `kubectl get nodes,pods,leases -A -o json` dump instead of the live cluster (`-` for
    /// stdin); or rendered manifests to check before they are deployed: YAML or JSON objects, a
    /// file or a directory of them (JSON that names a Node is a dump).
    #[arg(short = 'f', long = "filename", value_name = "FILE|DIR", value_hint = ValueHint::FilePath, help_heading = "Input")]
    pub file: Option<String>,
    /// The instant the kubelets stop, in every scenario (RFC 3339), instead of the current time.
    #[arg(long, value_name = "RFC3339", value_parser = parse_now, help_heading = "Input")]
    pub now: Option<Timestamp>,
    /// With -f RECORD (what `record` wrote): the state it holds at this instant (RFC 3339), the
    /// kubelets stopping then; its last line's when left out.
    #[arg(long, value_name = "RFC3339", value_parser = parse_now, requires = "file", conflicts_with = "now", help_heading = "Input")]
    pub at: Option<Timestamp>,
    /// Read from etcd (a quorum read, paged) instead of the API server's watch cache.
    #[arg(long, help_heading = "Cluster")]
    pub quorum_read: bool,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Only this namespace's pods and owners.
    #[arg(short = 'n', long, value_name = "NAMESPACE", value_parser = parse_namespace, help_heading = "Output")]
    pub namespace: Option<String>,
    /// Every namespace's (the default).
    #[arg(short = 'A', long, conflicts_with = "namespace", help_heading = "Output")]
    pub all_namespaces: bool,
    /// Output format.
    #[arg(short = 'o', long, value_enum, value_name = "FORMAT", default_value_t, help_heading = "Output")]
    pub output: AuditFormat,
    /// Print the findings' count by severity and one line per outage.
    #[arg(long, help_heading = "Output")]
    pub summary: bool,
    /// End with exit code 3 when a finding is at or above this severity (for CI).
    #[arg(long, value_enum, value_name = "SEVERITY", help_heading = "Output")]
    pub fail_on: Option<SeverityArg>,
    /// When to colour the table.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t, help_heading = "Output")]
    pub color: ColorChoice,
    /// Rendered manifests: the cluster they will run on (its Kubernetes version, the controller's
    /// settings, the API server's default tolerations, its zones and their node counts), a YAML file.
    #[arg(long, value_name = "FILE", value_parser = parse_profile, group = "profiles", conflicts_with = "controller_settings", help_heading = "Input")]
    pub profile: Option<ProfileFile>,
    /// Rendered manifests: the cluster they will run on, taken from a dump (`kubectl get nodes,pods
    /// -A -o json`) as `profile -f DUMP` takes it.
    #[arg(long, value_name = "DUMP", value_hint = ValueHint::FilePath, group = "profiles", conflicts_with = "controller_settings", help_heading = "Input")]
    pub profile_from: Option<String>,
    /// Rendered manifests: the cluster they will run on, taken from the cluster kubectl connects to,
    /// as `profile` takes it.
    #[arg(long, group = "profiles", conflicts_with = "controller_settings", help_heading = "Input")]
    pub profile_from_cluster: bool,
    #[command(flatten)]
    pub lifecycle: LifecycleArgs,
}

/// `audit --profile FILE`, read.
#[derive(Clone, Debug)]
pub struct ProfileFile {
    /// What it says.
    pub profile: crate::decode::profile::Profile,
}

fn parse_profile(path: &str) -> Result<ProfileFile, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let profile = crate::decode::profile::read_profile(&text).map_err(|e| format!("{path}: {e}"))?;
    Ok(ProfileFile { profile })
}

/// `profile`.
#[derive(Args, Debug, Clone)]
pub struct ProfileArgs {
    /// Take it from a `kubectl get nodes,pods -A -o json` dump instead of the live cluster (`-` for
    /// stdin).
    #[arg(short = 'f', long = "filename", value_name = "FILE", value_hint = ValueHint::FilePath, help_heading = "Input")]
    pub file: Option<String>,
    /// Read from etcd (a quorum read, paged) instead of the API server's watch cache.
    #[arg(long, help_heading = "Cluster")]
    pub quorum_read: bool,
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// `run --mode`: how a due pod is removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum RunMode {
    /// DELETE, after the DisruptionTarget condition: what the cluster's controller does;
    /// PodDisruptionBudgets are not consulted.
    #[default]
    Delete,
    /// The Eviction API (policy/v1): a pod whose PodDisruptionBudget allows no disruption waits,
    /// retried until the budget allows it.
    Evict,
}

/// `run`.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Only enforce on these nodes (default: every node).
    #[arg(value_name = "NODE", value_parser = parse_node_name)]
    pub nodes: Vec<String>,
    /// Also enforce DRA device taints (Kubernetes 1.33+), as kube-controller-manager's
    /// device-taint-eviction-controller does; false leaves them to the cluster.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set, help_heading = "Controller")]
    pub device_taints: bool,
    /// Only enforce on nodes matching this label selector.
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR", value_parser = parse_selector, conflicts_with = "nodes")]
    pub selector: Option<Selector>,
    /// Only enforce on pods of this namespace: the pods are listed and watched in it alone.
    #[arg(short = 'n', long, value_name = "NAMESPACE", value_parser = parse_namespace)]
    pub namespace: Option<String>,
    /// Pods of all namespaces (the default: a node's pods span namespaces).
    #[arg(short = 'A', long, conflicts_with = "namespace")]
    pub all_namespaces: bool,
    /// Decide and report everything, write nothing (no condition, no deletion, no event).
    ///
    /// With `--mode evict`, each due eviction is sent with `dryRun=All`: the API server checks it
    /// against the pod's PodDisruptionBudget and changes nothing.
    #[arg(long, help_heading = "Run")]
    pub dry_run: bool,
    /// How a due pod goes: `delete` (upstream's controller) or `evict` (the Eviction API, which
    /// respects PodDisruptionBudgets).
    ///
    /// `evict` POSTs a policy/v1 Eviction with the pod's UID as precondition; the API server sets
    /// the DisruptionTarget condition itself. A pod whose budget allows no disruption is retried
    /// (5 s doubling to 30 s) until it does, without delaying other pods. Needs create on
    /// pods/eviction instead of delete on pods and patch on pods/status.
    #[arg(long, value_enum, value_name = "MODE", default_value_t, help_heading = "Run")]
    pub mode: RunMode,
    /// Restart every countdown at start, as upstream's controller does when it starts, instead of
    /// continuing the deadlines `plan` shows.
    #[arg(long, help_heading = "Run")]
    pub restart_countdowns: bool,
    /// Deletions in flight at once.
    #[arg(long, value_name = "N", default_value_t = crate::runtime::DEFAULT_CONCURRENCY, value_parser = clap::value_parser!(u16).range(1..), help_heading = "Run")]
    pub concurrency: u16,
    /// A brake: at most this many deletions per `--max-deletions-window`; past it the due pods are
    /// held (and listed) until the window frees a slot [default: no cap].
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = parse_max_deletions, help_heading = "Run")]
    pub max_deletions: Option<u32>,
    /// The sliding window `--max-deletions` counts in.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_timeout, help_heading = "Run")]
    pub max_deletions_window: std::time::Duration,
    /// A guard: never delete the last ready replica of a workload (the pods of one controller); its
    /// deletion is held (and listed) until another replica is ready.
    ///
    /// A pod is guarded when it is ready (`Ready=True`, not terminating), has a controller
    /// (`ownerReferences` with `controller: true`), and no other pod of that controller is ready
    /// and staying. Bare pods and pods that are not ready are not guarded.
    #[arg(long, help_heading = "Run")]
    pub keep_last_ready: bool,
    /// Writes per second to the API server (DELETE, status PATCH, event POST); 0: unlimited.
    ///
    /// One token bucket paces every write `run` makes, as kube-controller-manager's
    /// `--kube-api-qps` (20) paces all of its controllers. The server's pushback (429 or 503 with
    /// `Retry-After`) holds every write on top of this.
    #[arg(long, value_name = "QPS", default_value_t = crate::runtime::throttle::DEFAULT_QPS, value_parser = parse_qps, help_heading = "Run")]
    pub qps: f64,
    /// Writes that may go at once before `--qps` paces them (kube-controller-manager's
    /// `--kube-api-burst`: 30).
    #[arg(long, value_name = "N", default_value_t = crate::runtime::throttle::DEFAULT_BURST, value_parser = clap::value_parser!(u32).range(1..), help_heading = "Run")]
    pub burst: u32,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Output format (default: text on a terminal, JSON Lines otherwise).
    #[arg(short = 'o', long, value_enum, help_heading = "Output")]
    pub output: Option<RunFormat>,
    /// When to colour the output.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t, help_heading = "Output")]
    pub color: ColorChoice,
    /// Structured log records instead of the terminal view (for running in a cluster): one record
    /// per event on stdout; diagnostics (`RUST_LOG`) on stderr in the same format.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "output", help_heading = "Output")]
    pub log_format: Option<LogFormat>,
    #[command(flatten)]
    pub election: ElectionArgs,
    /// Serve /metrics, /healthz and /readyz on this address (`:8080`, `127.0.0.1:9100`); off when unset.
    #[arg(long, value_name = "ADDRESS", value_parser = crate::metrics::server::parse_bind_address, help_heading = "In-cluster")]
    pub metrics_bind_address: Option<std::net::SocketAddr>,
    /// The node lifecycle controller's flags, for the unhealthy nodes' expected taint windows.
    #[command(flatten)]
    pub lifecycle: LifecycleArgs,
}

/// `record`.
#[derive(Args, Debug, Clone)]
pub struct RecordArgs {
    /// The directory the record's files are written in (created when missing).
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath, help_heading = "Record")]
    pub out: std::path::PathBuf,
    /// Each node Lease's renewal is written at most this often (and at once before a line of its
    /// node); the controller manager's Lease on every change.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_timeout, help_heading = "Record")]
    pub leases_every: std::time::Duration,
    /// A file this large ends and the next begins, with its header and every kind listed again, so
    /// that each file stands alone.
    #[arg(long, value_name = "SIZE", default_value = "256Mi", value_parser = crate::decode::bounded::MaxSize::parse, help_heading = "Record")]
    pub file_size: crate::decode::bounded::MaxSize,
    /// The files together stay under this: the oldest are removed; 0 keeps them all.
    #[arg(long, value_name = "SIZE", default_value = "2Gi", value_parser = parse_size_or_zero, help_heading = "Record")]
    pub max_size: u64,
    /// Files whose last line is older than this are removed (`7d`, `72h`) [default: kept].
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout, help_heading = "Record")]
    pub max_age: Option<std::time::Duration>,
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// `--max-size`: a size, or 0 for none.
fn parse_size_or_zero(text: &str) -> Result<u64, String> {
    if text == "0" {
        Ok(0)
    } else {
        crate::decode::bounded::MaxSize::parse(text).map(crate::decode::bounded::MaxSize::bytes)
    }
}

/// `run --log-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// `TIME LEVEL EVENT text` lines, no colour.
    Text,
    /// One JSON object per line, with `level` and `msg`.
    Json,
}

/// `run`'s leader election, with upstream's (kube-controller-manager's) defaults.
#[derive(Args, Debug, Clone)]
pub struct ElectionArgs {
    /// Decide and delete only while holding a Lease, so that several instances can run and one acts.
    #[arg(long, help_heading = "In-cluster")]
    pub leader_elect: bool,
    /// The Lease's name (default: kubectl-taint-evict for the whole cluster, else with a suffix
    /// derived from the scope: NODE…, -l and -n, so that runs over different scopes do not share one).
    #[arg(long, value_name = "NAME", value_parser = parse_lease_name, help_heading = "In-cluster")]
    pub leader_elect_lease_name: Option<String>,
    /// The Lease's namespace (default: the kubeconfig context's, or the pod's in a cluster).
    #[arg(long, value_name = "NAMESPACE", value_parser = parse_namespace, help_heading = "In-cluster")]
    pub leader_elect_namespace: Option<String>,
    /// How long a leader's claim lasts without renewal; others wait this long before taking over.
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = parse_timeout, help_heading = "In-cluster")]
    pub leader_elect_lease_duration: std::time::Duration,
    /// How long a leader keeps trying to renew before it stops deciding (less than the lease duration).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_timeout, help_heading = "In-cluster")]
    pub leader_elect_renew_deadline: std::time::Duration,
    /// How often the lease is tried and renewed.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_timeout, help_heading = "In-cluster")]
    pub leader_elect_retry_period: std::time::Duration,
}

/// Parses `--now`.
pub fn parse_now(text: &str) -> Result<Timestamp, String> {
    crate::decode::parse_time(text).ok_or_else(|| match crate::decode::time_error(text) {
        range if range.starts_with("out of range") => range,
        _ => "expected an RFC 3339 time such as 2026-11-22T10:00:00Z".to_owned(),
    })
}

/// Whether `name` is a lowercase RFC 1123 DNS label (`max` 63) or subdomain (`max` 253, dots
/// between labels), as the API server checks object names.
fn is_rfc1123(name: &str, subdomain: bool) -> bool {
    let max = if subdomain { 253 } else { 63 };
    let label = |part: &str| {
        let bytes = part.as_bytes();
        !bytes.is_empty()
            && bytes.len() <= 63
            && bytes.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
            && bytes.first() != Some(&b'-')
            && bytes.last() != Some(&b'-')
    };
    name.len() <= max && if subdomain { name.split('.').all(label) } else { label(name) }
}

/// The rule an object name breaks, in the API server's words.
fn check_name(name: &str, what: &str, subdomain: bool) -> Result<String, String> {
    if is_rfc1123(name, subdomain) {
        return Ok(name.to_owned());
    }
    let (rule, max) = if subdomain {
        ("lowercase letters, digits, '-' and '.', starting and ending with a letter or digit", 253)
    } else {
        ("lowercase letters, digits and '-', starting and ending with a letter or digit", 63)
    };
    Err(format!("{name:?} is not a valid {what} name: at most {max} characters, {rule} (RFC 1123)"))
}

/// `text` without a `TYPE/` prefix that names `kind` as kubectl accepts it (`node/x`, `nodes/x`,
/// `no/x`); an error for any other type.
fn strip_kind<'a>(text: &'a str, kind: &str, names: &[&str]) -> Result<&'a str, String> {
    match text.split_once('/') {
        Some((prefix, name)) if names.contains(&prefix) => Ok(name),
        Some((prefix, _)) => Err(format!("{text:?} is not a {kind}: expected NAME or {kind}/NAME, not {prefix}/")),
        None => Ok(text),
    }
}

/// Parses a node name (an RFC 1123 subdomain, as the API server requires), `node/NAME` as kubectl
/// writes it included.
pub fn parse_node_name(text: &str) -> Result<String, String> {
    check_name(strip_kind(text, "node", &["node", "nodes", "no"])?, "node", true)
}

/// Parses a pod name (an RFC 1123 subdomain), `pod/NAME` as kubectl writes it included.
pub fn parse_pod_name(text: &str) -> Result<String, String> {
    check_name(strip_kind(text, "pod", &["pod", "pods", "po"])?, "pod", true)
}

/// Parses a namespace (an RFC 1123 label).
pub fn parse_namespace(text: &str) -> Result<String, String> {
    check_name(text, "namespace", false)
}

fn parse_lease_name(text: &str) -> Result<String, String> {
    check_name(text, "Lease", true)
}

fn parse_timeout(text: &str) -> Result<std::time::Duration, String> {
    let duration = match text.parse::<u64>() {
        Ok(seconds) => std::time::Duration::from_secs(seconds),
        Err(_) => humantime::parse_duration(text).map_err(|e| format!("expected a duration such as 5s or 1m: {e}"))?,
    };
    Ok(duration)
}

/// `--max-deletions`: a whole number, 1 or more. Zero and negative numbers get the same message
/// (a negative one is taken as a value, not as an unknown option).
fn parse_max_deletions(text: &str) -> Result<u32, String> {
    match text.parse::<i64>() {
        Ok(n) if n >= 1 => u32::try_from(n).map_err(|_| format!("expected at most {}, not {text}", u32::MAX)),
        Ok(_) => {
            Err(format!("expected 1 or more deletions per window, not {text} (leave --max-deletions out for no cap)"))
        }
        Err(_) => Err(format!("expected a whole number of deletions such as 20, not {text:?}")),
    }
}

/// `--silent-after`: a second at least. Below that every node is silent between two renewals,
/// and the answer is every zone down.
fn parse_silent_after(text: &str) -> Result<std::time::Duration, String> {
    let duration = parse_timeout(text)?;
    if duration < std::time::Duration::from_secs(1) {
        return Err(format!(
            "expected 1s or more, not {text}: a node is silent when its Lease was last renewed longer ago than \
             this, and kubelets renew every 10s by default"
        ));
    }
    Ok(duration)
}

/// `GATE=BOOL[,GATE=BOOL…]` as kube-controller-manager reads `--feature-gates` (Go's `ParseBool`
/// values); a gate this tool does not follow is refused, as kube-controller-manager refuses an
/// unknown one.
fn parse_feature_gates(text: &str) -> Result<FeatureGates, String> {
    let mut gates = FeatureGates::default();
    for pair in text.split(',').map(str::trim).filter(|pair| !pair.is_empty()) {
        let Some((name, value)) = pair.split_once('=') else {
            return Err(format!("missing bool value for {pair} (expected GATE=true|false)"));
        };
        let value = match value.trim() {
            "1" | "t" | "T" | "true" | "TRUE" | "True" => true,
            "0" | "f" | "F" | "false" | "FALSE" | "False" => false,
            other => return Err(format!("invalid value of {name}: {other:?} (expected true or false)")),
        };
        match name.trim() {
            "TaintTolerationComparisonOperators" => gates.comparison_operators = Some(value),
            other => {
                return Err(format!(
                    "unrecognized feature gate: {other} (the one this tool follows: TaintTolerationComparisonOperators)"
                ));
            }
        }
    }
    Ok(gates)
}

/// `1.MINOR` (a `v` before it and a `.PATCH` after it are allowed, as `kubectl version` prints it):
/// the minor version.
fn parse_kube_version(text: &str) -> Result<u32, String> {
    let number = |part: &str| part.bytes().all(|b| b.is_ascii_digit()) && !part.is_empty() && part.len() < 6;
    let parts: Vec<&str> = text.trim().trim_start_matches('v').split('.').collect();
    match parts[..] {
        ["1", minor] | ["1", minor, _] if parts.iter().all(|p| number(p)) => {
            minor.parse().map_err(|_| format!("expected a Kubernetes version such as 1.33, not {text:?}"))
        }
        _ => Err(format!("expected a Kubernetes version such as 1.33, not {text:?}")),
    }
}

fn parse_qps(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(qps) if qps.is_finite() && qps >= 0.0 => Ok(qps),
        _ => Err("expected a number of writes per second, 0 or more (0: unlimited)".to_owned()),
    }
}

fn parse_rate(text: &str) -> Result<f32, String> {
    match text.parse::<f32>() {
        Ok(rate) if rate.is_finite() && rate >= 0.0 => Ok(rate),
        _ => Err("expected a number of 0 or more, such as 0.1".to_owned()),
    }
}

fn parse_selector(text: &str) -> Result<Selector, String> {
    text.parse().map_err(|e: crate::selector::SelectorError| e.to_string())
}

fn parse_effect(text: &str) -> Result<Effect, String> {
    match Effect::from(text) {
        Effect::Other(_) => Err(format!("unknown effect {text:?}: expected NoExecute, NoSchedule or PreferNoSchedule")),
        effect => Ok(effect),
    }
}

fn check_key(key: &str) -> Result<(), String> {
    let valid = !key.is_empty()
        && key.split('/').count() <= 2
        && key.split('/').all(|part| !part.is_empty())
        && key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
    if valid { Ok(()) } else { Err(format!("invalid taint key {key:?}")) }
}

/// Parses `--taint KEY[=VALUE]:EFFECT`.
pub fn parse_taint(text: &str) -> Result<WhatIf, String> {
    let usage = || "expected KEY[=VALUE]:EFFECT such as node.kubernetes.io/unreachable:NoExecute".to_owned();
    let (spec, effect) = text.rsplit_once(':').ok_or_else(usage)?;
    let (key, value) = spec.split_once('=').unwrap_or((spec, ""));
    check_key(key)?;
    if !value.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) || value.len() > 63 {
        return Err(format!("invalid taint value {value:?}"));
    }
    Ok(WhatIf::Taint(Taint::new(key, value, parse_effect(effect)?)))
}

/// Parses `--remove-taint KEY[:EFFECT]` (a trailing `-`, as `kubectl taint` writes it, is accepted).
pub fn parse_remove_taint(text: &str) -> Result<WhatIf, String> {
    let text = text.strip_suffix('-').unwrap_or(text);
    let (key, effect) = match text.rsplit_once(':') {
        Some((key, effect)) => (key, Some(parse_effect(effect)?)),
        None => (text, None),
    };
    let key = key.split_once('=').map_or(key, |(key, _)| key);
    check_key(key)?;
    Ok(WhatIf::RemoveTaint { key: key.to_owned(), effect })
}

/// `-w` / `--watch`, for `plan`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct WatchArgs {
    /// Keep watching: redraw the plan in place as deadlines pass and the cluster changes (one JSON
    /// line per change when piped or with -o json); reads only. Ctrl-C ends it.
    #[arg(short = 'w', long = "watch", help_heading = "Output")]
    pub enabled: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::config::connect_options;
    use crate::config::{Lifecycle, PlanConfig};
    use crate::engine::lifecycle::Flags;
    use clap::CommandFactory;

    fn run_args(args: &[&str]) -> Result<RunArgs, clap::Error> {
        let cli = Cli::try_parse_from(["kubectl-taint_evict", "run"].iter().chain(args))?;
        match cli.command {
            Command::Run(args) => Ok(args),
            _ => unreachable!("parsed as run"),
        }
    }

    #[test]
    fn run_paces_writes_at_its_defaults_and_accepts_zero_qps_as_unlimited() {
        let defaults = run_args(&[]).unwrap();
        assert_eq!((defaults.qps, defaults.burst), (crate::runtime::throttle::DEFAULT_QPS, 20));
        let set = run_args(&["--qps", "0", "--burst", "5"]).unwrap();
        assert_eq!((set.qps, set.burst), (0.0, 5));
        assert_eq!(run_args(&["--qps=2.5"]).unwrap().qps, 2.5);
        for bad in [["--qps", "-1"], ["--qps", "NaN"], ["--qps", "fast"], ["--burst", "0"]] {
            assert!(run_args(&bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn run_deletes_by_default_and_evicts_with_mode_evict() {
        assert_eq!(run_args(&[]).unwrap().mode, RunMode::Delete, "upstream's behaviour by default");
        assert_eq!(
            crate::cluster::evict::Mode::from(run_args(&["--mode", "evict"]).unwrap().mode),
            crate::cluster::evict::Mode::Evict
        );
        assert_eq!(
            crate::cluster::evict::Mode::from(run_args(&["--mode=delete"]).unwrap().mode),
            crate::cluster::evict::Mode::Delete
        );
        assert!(run_args(&["--mode", "drain"]).is_err());
    }

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn node_lifecycle_flags_default_by_server_version_and_parse_as_the_controller_spells_them() {
        let parse = |extra: &[&str]| {
            let cli = Cli::try_parse_from([&["kubectl-taint_evict", "plan", "-f", "d.json"][..], extra].concat())
                .expect("parses");
            let Command::Plan(args) = cli.command else { panic!("plan") };
            Lifecycle::new(&args.lifecycle)
        };
        assert_eq!(parse(&[]).flags(None), Flags::defaults_for(29));
        assert_eq!(parse(&[]).flags(Some(32)), Flags::defaults_for(32), "the server's version sets the defaults");
        let given = parse(&["--node-monitor-grace-period=40s"]).flags(Some(33));
        assert_eq!(given.node_monitor_grace_period, std::time::Duration::from_secs(40), "a flag given wins");
        let given = parse(&[
            "--node-monitor-grace-period=50s",
            "--node-monitor-period",
            "2s",
            "--node-eviction-rate=0.5",
            "--secondary-node-eviction-rate=0",
            "--unhealthy-zone-threshold=0.7",
            "--large-cluster-size-threshold=10",
            "--silent-after=5s",
        ]);
        let flags = given.flags(Some(33));
        assert_eq!(flags.node_monitor_grace_period, std::time::Duration::from_secs(50));
        assert_eq!(flags.node_monitor_period, std::time::Duration::from_secs(2));
        assert_eq!(
            (flags.node_eviction_rate, flags.secondary_node_eviction_rate, flags.unhealthy_zone_threshold),
            (0.5, 0.0, 0.7)
        );
        assert_eq!(flags.large_cluster_size_threshold, 10);
        assert_eq!(given.silent_after, std::time::Duration::from_secs(5));
        let bad = ["kubectl-taint_evict", "plan", "--node-eviction-rate=-1"];
        assert!(Cli::try_parse_from(bad).is_err(), "a negative rate is refused");
    }

    #[test]
    fn taint_flag_parses_kubectl_notation() {
        assert_eq!(parse_taint("k=v:NoExecute"), Ok(WhatIf::Taint(Taint::new("k", "v", Effect::NoExecute))));
        assert_eq!(
            parse_taint("node.kubernetes.io/unreachable:NoExecute"),
            Ok(WhatIf::Taint(Taint::new("node.kubernetes.io/unreachable", "", Effect::NoExecute)))
        );
        for bad in ["k", "k=v", ":NoExecute", "k:noexecute", "k=a b:NoExecute", "a/b/c:NoExecute", "k=v:"] {
            assert!(parse_taint(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn remove_taint_flag_parses_key_and_optional_effect() {
        assert_eq!(parse_remove_taint("k"), Ok(WhatIf::RemoveTaint { key: "k".into(), effect: None }));
        assert_eq!(
            parse_remove_taint("k:NoSchedule-"),
            Ok(WhatIf::RemoveTaint { key: "k".into(), effect: Some(Effect::NoSchedule) })
        );
        assert!(parse_remove_taint("k:Sometimes").is_err());
        assert!(parse_remove_taint("").is_err());
    }

    #[test]
    fn now_flag_takes_rfc3339_with_fractions() {
        assert_eq!(parse_now("1970-01-01T00:00:01.5Z"), Ok(Timestamp::from_unix_seconds(1).add_nanos(500_000_000)));
        assert!(parse_now("yesterday").is_err());
        assert!(parse_now("2026-11-22 10:00").is_err());
    }

    #[test]
    fn plan_flags_parse_like_kubectl() {
        let cli = Cli::try_parse_from([
            "k",
            "plan",
            "n1",
            "n2",
            "-f",
            "-",
            "-o",
            "json",
            "-n",
            "web",
            "--taint",
            "a:NoExecute",
        ])
        .expect("parses");
        let Command::Plan(args) = cli.command else { panic!("plan") };
        assert_eq!(args.nodes, ["n1", "n2"]);
        assert_eq!(args.output, Output::Format(PlanOutput::Json));
        assert_eq!(args.input.file.as_deref(), Some("-"));
        assert_eq!(args.namespace.as_deref(), Some("web"));
        assert_eq!(PlanConfig::new(&args).expect("valid").input.what_if.len(), 1);
    }

    #[test]
    fn requests_time_out_after_30s_unless_told_otherwise() {
        let parse = |args: &[&str]| match Cli::try_parse_from(args).expect("parses").command {
            Command::Plan(plan) => connect_options(&plan.input.cluster).request_timeout,
            _ => unreachable!("plan"),
        };
        assert_eq!(parse(&["k", "plan"]), Some(std::time::Duration::from_secs(30)));
        assert_eq!(parse(&["k", "plan", "--request-timeout", "0"]), None);
        assert_eq!(parse(&["k", "plan", "--request-timeout", "5s"]), Some(std::time::Duration::from_secs(5)));
    }

    #[test]
    fn tls_verification_is_off_only_when_asked() {
        let parse = |args: &[&str]| match Cli::try_parse_from(args).expect("parses").command {
            Command::Plan(plan) => connect_options(&plan.input.cluster).insecure_skip_tls_verify,
            _ => unreachable!("plan"),
        };
        assert!(!parse(&["k", "plan"]));
        assert!(parse(&["k", "plan", "--insecure-skip-tls-verify"]));
    }

    #[test]
    fn plan_takes_kubectl_output_habits() {
        let cli = Cli::try_parse_from([
            "k",
            "plan",
            "node/n1",
            "nodes/n2",
            "--no-headers",
            "--sort-by",
            "name",
            "-o",
            "name",
            "--summary",
            "--timeline",
        ])
        .expect("parses");
        let Command::Plan(args) = cli.command else { panic!("plan") };
        assert_eq!(args.nodes, ["n1", "n2"]);
        assert!(args.no_headers && args.summary && args.timeline);
        assert_eq!((args.sort_by, args.output), (SortKey::Name, Output::Format(PlanOutput::Name)));
        let defaults = Cli::try_parse_from(["k", "plan", "-A"]).expect("parses");
        let Command::Plan(args) = defaults.command else { panic!("plan") };
        assert_eq!(args.sort_by, SortKey::Deadline);
        assert!(args.all_namespaces && !args.no_headers && !args.summary && !args.timeline);
        assert!(Cli::try_parse_from(["k", "plan", "--sort-by", "age"]).is_err());
    }

    #[test]
    fn output_takes_kubectls_template_formats_as_kubectl_writes_them() {
        let output = |args: &[&str]| match Cli::try_parse_from([&["k"], args].concat()).expect("parses").command {
            Command::Plan(args) => args.output,
            Command::Explain(args) => match args.output {
                Output::Format(_) => panic!("a template"),
                Output::Template(template) => Output::Template(template),
            },
            _ => unreachable!("plan or explain"),
        };
        let template = |kind, value: &str| Output::Template(TemplateArg { kind, value: value.to_owned() });
        assert_eq!(output(&["plan", "-o=jsonpath={.a}"]), template(TemplateKind::JsonPath, "{.a}"));
        assert_eq!(output(&["plan", "-o", "jsonpath={.a=1}"]), template(TemplateKind::JsonPath, "{.a=1}"));
        assert_eq!(output(&["plan", "--output=custom-columns=A:.b"]), template(TemplateKind::CustomColumns, "A:.b"));
        assert_eq!(output(&["plan", "-ojsonpath-file=t"]), template(TemplateKind::JsonPathFile, "t"));
        assert_eq!(
            output(&["explain", "p", "-o", "custom-columns-file=f"]),
            template(TemplateKind::CustomColumnsFile, "f")
        );
        assert_eq!(output(&["plan", "-o", "jsonpath"]), template(TemplateKind::JsonPath, ""));
        assert_eq!(output(&["plan"]), Output::Format(PlanOutput::Table));
        assert!(Cli::try_parse_from(["k", "plan", "-o", "go-template={{.a}}"]).is_err());
        assert!(Cli::try_parse_from(["k", "explain", "p", "-o", "wide"]).is_err());
    }

    #[test]
    fn names_take_kubectl_type_prefixes_of_their_own_kind_only() {
        assert_eq!(parse_node_name("node/worker-3").as_deref(), Ok("worker-3"));
        assert_eq!(parse_node_name("no/worker-3").as_deref(), Ok("worker-3"));
        assert_eq!(parse_pod_name("pod/web-0").as_deref(), Ok("web-0"));
        assert_eq!(parse_pod_name("pods/web-0").as_deref(), Ok("web-0"));
        let wrong = parse_node_name("pod/web-0").expect_err("a pod is not a node");
        assert!(wrong.contains("not a node") && wrong.contains("node/NAME"), "{wrong}");
        assert!(parse_pod_name("node/worker-3").is_err());
        assert!(parse_node_name("node/").is_err());
        assert!(parse_node_name("node/a/b").is_err());
        let run = Cli::try_parse_from(["k", "run", "node/worker-3", "-A"]).expect("parses");
        let Command::Run(args) = run.command else { panic!("run") };
        assert_eq!(args.nodes, ["worker-3"]);
        let explain = Cli::try_parse_from(["k", "explain", "pod/web-0", "-o", "yaml"]).expect("parses");
        let Command::Explain(args) = explain.command else { panic!("explain") };
        assert_eq!((args.pod.as_str(), args.output), ("web-0", Output::Format(ExplainFormat::Yaml)));
    }

    #[test]
    fn run_takes_a_namespace_as_plan_does() {
        assert_eq!(run_args(&["-n", "shop"]).unwrap().namespace.as_deref(), Some("shop"));
        assert_eq!(run_args(&["--namespace=shop", "worker-3"]).unwrap().namespace.as_deref(), Some("shop"));
        let all = run_args(&["-A"]).unwrap();
        assert!(all.all_namespaces && all.namespace.is_none());
        assert!(run_args(&["-n", "shop", "-A"]).is_err(), "-n and -A");
        assert!(run_args(&["-n", "Shop"]).is_err(), "not a namespace name");
    }

    #[test]
    fn plan_rejects_conflicting_flags() {
        assert!(Cli::try_parse_from(["k", "plan", "n1", "-l", "a=b"]).is_err(), "nodes and -l");
        assert!(Cli::try_parse_from(["k", "plan", "-n", "x", "-A"]).is_err(), "-n and -A");
        assert!(Cli::try_parse_from(["k", "plan", "-o", "csv"]).is_err());
    }

    proptest::proptest! {
        /// Fixed: a 51 KB selector made `plan` panic: no value of any flag may.
        #[test]
        fn no_flag_value_makes_the_command_line_panic(value in ".{0,300}", kind in 0..15usize) {
            let flag: &[&str] = match kind {
                0 => &["plan"],
                1 => &["plan", "-l"],
                2 => &["plan", "n1", "--taint"],
                3 => &["plan", "n1", "--remove-taint"],
                4 => &["plan", "--now"],
                5 => &["plan", "-n"],
                6 => &["plan", "--node-eviction-rate"],
                7 => &["plan", "-w", "-l"],
                8 => &["explain"],
                9 => &["run", "--request-timeout"],
                10 => &["run", "--qps"],
                11 => &["audit", "-l"],
                12 => &["audit", "--fail-on"],
                13 => &["review", "--slack"],
                _ => &["run", "-l"],
            };
            let args: Vec<&str> = ["kubectl-taint_evict"].iter().chain(flag).copied().chain([value.as_str()]).collect();
            match Cli::try_parse_from(args) {
                Ok(cli) => match cli.command {
                    Command::Plan(args) if args.watch.enabled => drop(crate::config::WatchConfig::new(&args)),
                    Command::Plan(args) => drop(crate::config::PlanConfig::new(&args)),
                    Command::Explain(args) => drop(crate::config::ExplainConfig::new(&args)),
                    Command::Audit(args) => drop(crate::config::AuditConfig::new(&args)),
                    Command::Profile(args) => drop(crate::config::ProfileConfig::new(&args)),
                    Command::Run(args) => drop(crate::config::RunConfig::new(&args)),
                    Command::Record(args) => drop(crate::config::RecordConfig::new(&args)),
                    Command::Review(args) => drop(crate::config::ReviewConfig::new(&args)),
                    Command::Completion { .. } => {}
                },
                // A usage error says what is wrong in its first line.
                Err(error) => proptest::prop_assert!(error.to_string().starts_with("error: ")),
            }
        }
    }
}
