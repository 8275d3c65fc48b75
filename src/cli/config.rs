//! The command line's high level: the parsed flags (clap's structs in [`super`], the low level)
//! turned into validated, typed configs, one per command, before anything is read or connected.
//!
//! Every check that spans flags (beyond one flag's value parser and clap's conflicts) and every
//! default resolved against the environment (`--color auto`, the terminal's width) is here; the
//! commands take the configs and never read the clap structs.
//!
//! Owns: `PlanConfig`, `ExplainConfig`, `WatchConfig`, `RunConfig` and their parts. Uses: the clap
//! structs, the engine's values, the output's formats, the cluster's connection options.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::time::Duration;

use crate::cluster::ConnectOptions;
use crate::cluster::evict::Mode;
use crate::engine::devices::NEWEST_MINOR;
use crate::engine::lifecycle::Flags;
use crate::engine::snapshot::WhatIf;
use crate::engine::time::Timestamp;
use crate::error::{Error, Result};
use crate::output::jsonpath::JsonPath;
use crate::output::template::{CustomColumns, Template};
use crate::output::{ColorMode, OutputFormat, SortBy, View};
use crate::selector::Selector;

use super::args::{
    ClusterArgs, ColorChoice, ElectionArgs, ExplainArgs, ExplainFormat, InputArgs, LifecycleArgs, LogFormat, Output,
    PlanArgs, PlanOutput, RunArgs, RunFormat, RunMode, SortKey, TemplateArg, TemplateKind,
};
use super::screen_size;

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

/// The connection options the cluster flags describe.
#[must_use]
pub fn connect_options(args: &ClusterArgs) -> ConnectOptions {
    ConnectOptions {
        kubeconfig: args.kubeconfig.clone(),
        context: args.context.clone(),
        cluster: args.cluster.clone(),
        user: args.user.clone(),
        server: args.server.clone(),
        token: args.token.clone(),
        impersonate: args.impersonate.clone(),
        impersonate_groups: args.impersonate_groups.clone(),
        impersonate_uid: args.impersonate_uid.clone(),
        certificate_authority: args.certificate_authority.clone(),
        client_certificate: args.client_certificate.clone(),
        client_key: args.client_key.clone(),
        tls_server_name: args.tls_server_name.clone(),
        // A server that accepts and never answers must not hang a command: a default, `0` for none.
        request_timeout: match args.request_timeout {
            None => Some(DEFAULT_REQUEST_TIMEOUT),
            Some(limit) if limit.is_zero() => None,
            Some(limit) => Some(limit),
        },
        request_timeout_given: args.request_timeout.is_some(),
        insecure_skip_tls_verify: args.insecure_skip_tls_verify,
        content_type: args.content_type,
        max_response_size: args.max_response_size,
    }
}

/// Resolves `--color`: `auto` against the terminal and `NO_COLOR`.
#[must_use]
pub fn color(choice: ColorChoice) -> ColorMode {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    match choice {
        ColorChoice::Always => ColorMode::Color,
        ColorChoice::Never => ColorMode::Plain,
        // A terminal that says it is dumb shows escape sequences as text.
        ColorChoice::Auto if !no_color && !dumb_terminal() && std::io::stdout().is_terminal() => ColorMode::Color,
        ColorChoice::Auto => ColorMode::Plain,
    }
}

/// Whether `TERM` is `dumb` (Emacs' shell, some CI logs): no colour there.
fn dumb_terminal() -> bool {
    std::env::var_os("TERM").is_some_and(|term| term == "dumb")
}

impl From<PlanOutput> for OutputFormat {
    fn from(output: PlanOutput) -> Self {
        match output {
            PlanOutput::Table => Self::Table,
            PlanOutput::Wide => Self::Wide,
            PlanOutput::Json => Self::Json,
            PlanOutput::Yaml => Self::Yaml,
            PlanOutput::Name => Self::Name,
        }
    }
}

/// The template `-o` names, read (from its file for the `-file` formats) and parsed.
///
/// # Errors
/// A usage error for a template format without a template, or a template that does not parse; the
/// file's error when it cannot be read.
pub fn template(arg: &TemplateArg, allow_missing_keys: bool) -> Result<Template> {
    let format = arg.kind.name();
    let columns = matches!(arg.kind, TemplateKind::CustomColumns | TemplateKind::CustomColumnsFile);
    if arg.value.is_empty() {
        let (what, missing) =
            if columns { ("custom-columns", "no custom columns") } else { ("template", "no template") };
        let form = if arg.kind.is_file() {
            "FILE"
        } else if columns {
            "NAME:.path,…"
        } else {
            "TEMPLATE"
        };
        return Err(Error::Usage(format!("{what} format specified but {missing} given: -o {format}={form}")));
    }
    let text = if arg.kind.is_file() {
        std::fs::read_to_string(&arg.value).map_err(|e| Error::read_failed(&arg.value, &e))?
    } else {
        arg.value.clone()
    };
    let parsed = match arg.kind {
        TemplateKind::JsonPath | TemplateKind::JsonPathFile => {
            JsonPath::parse(&text).map(|path| Template::JsonPath(path.allow_missing_keys(allow_missing_keys)))
        }
        TemplateKind::CustomColumns => CustomColumns::from_spec(&text).map(Template::CustomColumns),
        TemplateKind::CustomColumnsFile => CustomColumns::from_file(&text).map(Template::CustomColumns),
    };
    parsed.map_err(|e| Error::BadTemplate {
        format,
        template: if arg.kind.is_file() { format!("in {}", arg.value) } else { format!("{:?}", arg.value) },
        reason: e.0,
    })
}

impl From<SortKey> for SortBy {
    fn from(key: SortKey) -> Self {
        match key {
            SortKey::Deadline => Self::Deadline,
            SortKey::Namespace => Self::Namespace,
            SortKey::Name => Self::Name,
        }
    }
}

impl From<RunMode> for Mode {
    fn from(mode: RunMode) -> Self {
        match mode {
            RunMode::Delete => Self::Delete,
            RunMode::Evict => Self::Evict,
        }
    }
}

/// Where the snapshot comes from, the evaluation instant and the what-if taints.
#[derive(Clone, Debug)]
pub struct Input {
    /// A dump to read (`-` for stdin) instead of the live cluster.
    pub file: Option<String>,
    /// `--now`; `None`: the current time.
    pub now: Option<Timestamp>,
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
}

impl Input {
    /// The input flags, typed.
    #[must_use]
    pub fn new(args: &InputArgs) -> Self {
        Self {
            file: args.file.clone(),
            now: args.now,
            what_if: args.taints.iter().chain(&args.remove_taints).cloned().collect(),
            down: args.down.clone(),
            down_selector: args.down_selector.clone(),
            quorum_read: args.quorum_read,
            connect: connect_options(&args.cluster),
        }
    }
}

impl Input {
    /// Whether nodes go down in this what-if (`--down`, `--down-selector`): a game day.
    #[must_use]
    pub fn game_day(&self) -> bool {
        !self.down.is_empty() || self.down_selector.is_some()
    }
}

/// kube-controller-manager's node lifecycle flags as given, and when a Ready node counts as silent.
#[derive(Clone, Debug)]
pub struct Lifecycle {
    given: LifecycleArgs,
    /// `--silent-after`.
    pub silent_after: Duration,
}

impl Lifecycle {
    /// The lifecycle flags, typed.
    #[must_use]
    pub fn new(args: &LifecycleArgs) -> Self {
        Self { given: args.clone(), silent_after: args.silent_after }
    }

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
        if let Some(minor) = self.given.kube_version.filter(|minor| *minor > NEWEST_MINOR) {
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
        match self.given.feature_gates.and_then(|gates| gates.comparison_operators) {
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
        self.given.kube_version
    }

    /// The controller's flags: those given, the others at the defaults of Kubernetes `1.minor`
    /// (1.29 when `None`).
    #[must_use]
    pub fn flags(&self, minor: Option<u32>) -> Flags {
        let defaults = Flags::defaults_for(minor.unwrap_or(DEFAULT_MINOR));
        let given = &self.given;
        Flags {
            node_monitor_period: given.node_monitor_period.unwrap_or(defaults.node_monitor_period),
            node_monitor_grace_period: given.node_monitor_grace_period.unwrap_or(defaults.node_monitor_grace_period),
            node_eviction_rate: given.node_eviction_rate.unwrap_or(defaults.node_eviction_rate),
            secondary_node_eviction_rate: given
                .secondary_node_eviction_rate
                .unwrap_or(defaults.secondary_node_eviction_rate),
            unhealthy_zone_threshold: given.unhealthy_zone_threshold.unwrap_or(defaults.unhealthy_zone_threshold),
            large_cluster_size_threshold: given
                .large_cluster_size_threshold
                .unwrap_or(defaults.large_cluster_size_threshold),
            ..defaults
        }
    }
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

impl PlanConfig {
    /// Checks `plan`'s flags together.
    ///
    /// # Errors
    /// A usage error for what-if taints without a node, or an output flag the format ignores.
    pub fn new(args: &PlanArgs) -> Result<Self> {
        let input = Input::new(&args.input);
        if !input.what_if.is_empty() && args.nodes.is_empty() && args.selector.is_none() {
            return Err(Error::Usage("--taint and --remove-taint need NODE or -l SELECTOR".into()));
        }
        let format = match &args.output {
            Output::Format(format) => OutputFormat::from(*format),
            Output::Template(arg) => OutputFormat::Template(template(arg, args.allow_missing_template_keys)?),
        };
        check_view(&format, args.summary, args.timeline)?;
        let view = View {
            color: color(args.color),
            width: screen_size::table_width(),
            headers: !args.no_headers,
            summary: args.summary,
            timeline: args.timeline,
            sort: args.sort_by.into(),
        };
        Ok(Self {
            // `plan worker-4 worker-4` shows worker-4 once.
            nodes: unique(&args.nodes),
            selector: args.selector.clone(),
            input,
            namespace: args.namespace.clone(),
            format,
            view,
            lifecycle: Lifecycle::new(&args.lifecycle),
        })
    }
}

/// `names` without repeats, in their first order.
fn unique(names: &[String]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    names.iter().filter(|name| seen.insert(name.as_str())).cloned().collect()
}

/// Refuses the output flags that mean nothing for the chosen format (`--no-headers` and `--sort-by`
/// are let through for JSON, YAML and jsonpath, as kubectl does).
fn check_view(format: &OutputFormat, summary: bool, timeline: bool) -> Result<()> {
    let name = match format {
        OutputFormat::Table | OutputFormat::Wide => return Ok(()),
        OutputFormat::Json => "json",
        OutputFormat::Yaml => "yaml",
        OutputFormat::Name => "name",
        OutputFormat::Template(Template::JsonPath(_)) => "jsonpath",
        OutputFormat::Template(Template::CustomColumns(_)) => "custom-columns",
    };
    if summary {
        return Err(Error::Usage(format!("--summary is for the table (-o table or wide), not -o {name}")));
    }
    if timeline && matches!(name, "name" | "custom-columns") {
        return Err(Error::Usage(format!(
            "--timeline is for the table, -o json, -o yaml and -o jsonpath, not -o {name}"
        )));
    }
    Ok(())
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

impl ExplainConfig {
    /// `explain`'s flags, typed.
    ///
    /// # Errors
    /// A template (`-o jsonpath=…`) that cannot be read or parsed.
    pub fn new(args: &ExplainArgs) -> Result<Self> {
        let format = match &args.output {
            Output::Format(ExplainFormat::Text) => ExplainOutput::Text,
            Output::Format(ExplainFormat::Json) => ExplainOutput::Json,
            Output::Format(ExplainFormat::Yaml) => ExplainOutput::Yaml,
            Output::Template(arg) => ExplainOutput::Template(template(arg, args.allow_missing_template_keys)?),
        };
        Ok(Self {
            pod: args.pod.clone(),
            namespace: args.namespace.clone(),
            input: Input::new(&args.input),
            format,
            lifecycle: Lifecycle::new(&args.lifecycle),
            width: screen_size::table_width(),
        })
    }
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

impl WatchConfig {
    /// Checks the flags `-w` cannot go with.
    ///
    /// # Errors
    /// A usage error, one line, naming the flag.
    pub fn new(args: &PlanArgs) -> Result<Self> {
        let refuse = |what: &str| Err(Error::Usage(format!("-w/--watch follows the live cluster: {what}")));
        if args.input.file.is_some() {
            return refuse("it cannot read a file (-f)");
        }
        if args.input.now.is_some() {
            return refuse("it runs on the current time, not --now");
        }
        let input = &args.input;
        let down = !input.down.is_empty() || input.down_selector.is_some();
        if !input.taints.is_empty() || !input.remove_taints.is_empty() || down {
            return refuse("--taint, --remove-taint, --down and --down-selector are for a one-shot plan");
        }
        if matches!(args.output, Output::Format(PlanOutput::Yaml | PlanOutput::Wide | PlanOutput::Name)) {
            return refuse("it prints a live table, or JSON lines with -o json, -o jsonpath or -o custom-columns");
        }
        let template = match &args.output {
            Output::Template(arg) => Some(template(arg, args.allow_missing_template_keys)?),
            Output::Format(_) => None,
        };
        let columns = matches!(template, Some(Template::CustomColumns(_)));
        let views = [
            ("--summary", args.summary),
            ("--timeline", args.timeline),
            ("--no-headers", args.no_headers && !columns),
            ("--sort-by", args.sort_by != SortKey::default()),
        ];
        if let Some((flag, _)) = views.iter().find(|(_, given)| *given) {
            return refuse(&format!("{flag} shapes a one-shot plan's table, not the live view"));
        }
        // Named twice is watched once, as the one-shot plan reads it once.
        let mut nodes = args.nodes.clone();
        let mut seen = std::collections::HashSet::new();
        nodes.retain(|node| seen.insert(node.clone()));
        Ok(Self {
            nodes,
            selector: args.selector.clone(),
            connect: connect_options(&args.input.cluster),
            namespace: args.namespace.clone(),
            json: args.output == Output::Format(PlanOutput::Json),
            template,
            headers: !args.no_headers,
            color: color(args.color),
            lifecycle: Lifecycle::new(&args.lifecycle),
        })
    }
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
    /// Log records (`--log-format`).
    Log(LogFormat),
}

impl Printing {
    fn new(args: &RunArgs) -> Self {
        let stdout_is_tty = std::io::stdout().is_terminal();
        match (args.log_format, args.output) {
            (Some(format), _) => Self::Log(format),
            (None, Some(RunFormat::Json)) => Self::Json,
            (None, Some(RunFormat::Text)) => Self::Text { color: color(args.color), live: stdout_is_tty },
            // Without -o: text for a person at a terminal, JSON Lines for a pipe or a log collector.
            (None, None) if stdout_is_tty => Self::Text { color: color(args.color), live: true },
            (None, None) => Self::Json,
        }
    }
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
}

impl Election {
    /// `None` without `--leader-elect`; else the durations, checked as client-go does: lease
    /// duration > renew deadline > 1.2 × retry period.
    ///
    /// # Errors
    /// A line naming the flags that do not fit.
    pub fn new(args: &ElectionArgs) -> Result<Option<Self>, String> {
        if !args.leader_elect {
            return Ok(None);
        }
        if args.leader_elect_lease_duration <= args.leader_elect_renew_deadline {
            return Err("--leader-elect-lease-duration must be longer than --leader-elect-renew-deadline".into());
        }
        if args.leader_elect_renew_deadline <= args.leader_elect_retry_period.mul_f64(1.2) {
            return Err("--leader-elect-renew-deadline must be longer than 1.2 × --leader-elect-retry-period".into());
        }
        if args.leader_elect_retry_period.is_zero() {
            return Err("--leader-elect-retry-period must be more than 0".into());
        }
        Ok(Some(Self {
            lease_name: args.leader_elect_lease_name.clone(),
            namespace: args.leader_elect_namespace.clone(),
            lease_duration: args.leader_elect_lease_duration,
            renew_deadline: args.leader_elect_renew_deadline,
            retry_period: args.leader_elect_retry_period,
        }))
    }
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
    /// Restart every countdown at start.
    pub restart_countdowns: bool,
    /// Deletions in flight at once.
    pub concurrency: usize,
    /// At most this many deletions per window.
    pub max_deletions: Option<(u32, Duration)>,
    /// Never delete the last ready replica of a workload.
    pub keep_last_ready: bool,
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

impl RunConfig {
    /// Checks `run`'s flags together.
    ///
    /// # Errors
    /// A usage error for election durations that do not fit.
    pub fn new(args: &RunArgs) -> Result<Self> {
        Ok(Self {
            election: Election::new(&args.election).map_err(Error::Usage)?,
            nodes: args.nodes.clone(),
            selector: args.selector.clone(),
            namespace: args.namespace.clone(),
            device_taints: args.device_taints,
            dry_run: args.dry_run,
            mode: args.mode.into(),
            restart_countdowns: args.restart_countdowns,
            concurrency: usize::from(args.concurrency),
            max_deletions: args.max_deletions.map(|max| (max, args.max_deletions_window)),
            keep_last_ready: args.keep_last_ready,
            qps: args.qps,
            burst: args.burst,
            connect: connect_options(&args.cluster),
            printing: Printing::new(args),
            metrics_bind_address: args.metrics_bind_address,
            lifecycle: Lifecycle::new(&args.lifecycle),
        })
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    fn parse(args: &[&str]) -> Command {
        Cli::try_parse_from(std::iter::once("kubectl-taint_evict").chain(args.iter().copied())).expect("parses").command
    }

    fn plan(args: &[&str]) -> Result<PlanConfig> {
        let Command::Plan(plan) = parse(&[&["plan"], args].concat()) else { panic!("plan") };
        PlanConfig::new(&plan)
    }

    fn usage(result: Result<impl std::fmt::Debug>) -> String {
        match result {
            Err(Error::Usage(message)) => message,
            other => panic!("not a usage error: {other:?}"),
        }
    }

    #[test]
    fn plan_config_resolves_the_format_the_view_and_repeated_nodes() {
        let config = plan(&["n1", "n2", "n1", "-o", "wide", "--sort-by", "name", "--no-headers", "--color", "always"])
            .expect("valid");
        assert_eq!(config.nodes, ["n1", "n2"], "a node named twice is shown once");
        assert_eq!(config.format, OutputFormat::Wide);
        assert_eq!((config.view.sort, config.view.headers, config.view.color), (SortBy::Name, false, ColorMode::Color));
        let config =
            plan(&["-f", "d.json", "--taint", "a:NoExecute", "-l", "x", "--remove-taint", "b"]).expect("valid");
        assert_eq!(config.input.what_if.len(), 2, "additions, then removals");
        assert_eq!(config.input.connect.request_timeout, Some(DEFAULT_REQUEST_TIMEOUT));
    }

    #[test]
    fn plan_config_refuses_output_flags_the_format_ignores_and_what_if_without_a_node() {
        assert_eq!(usage(plan(&["--taint", "a:NoExecute"])), "--taint and --remove-taint need NODE or -l SELECTOR");
        assert_eq!(
            usage(plan(&["-o", "json", "--summary"])),
            "--summary is for the table (-o table or wide), not -o json"
        );
        assert_eq!(
            usage(plan(&["-o", "name", "--timeline"])),
            "--timeline is for the table, -o json, -o yaml and -o jsonpath, not -o name"
        );
        assert!(plan(&["-o", "yaml", "--timeline", "--no-headers", "--sort-by", "name"]).is_ok());
    }

    #[test]
    fn watch_config_refuses_what_a_live_view_cannot_follow() {
        let watch = |args: &[&str]| {
            let Command::Plan(plan) = parse(&[&["plan", "-w"], args].concat()) else { panic!("plan") };
            WatchConfig::new(&plan)
        };
        assert!(usage(watch(&["-f", "d.json"])).ends_with("it cannot read a file (-f)"));
        assert!(usage(watch(&["--now", "2026-01-01T00:00:00Z"])).ends_with("not --now"));
        assert!(usage(watch(&["n1", "--remove-taint", "k"])).ends_with("are for a one-shot plan"));
        assert!(usage(watch(&["--down", "n1"])).ends_with("are for a one-shot plan"));
        assert!(usage(watch(&["--down-selector", "zone=a"])).ends_with("are for a one-shot plan"));
        let lines = "or JSON lines with -o json, -o jsonpath or -o custom-columns";
        assert!(usage(watch(&["-o", "yaml"])).ends_with(lines));
        // Fixed: these were accepted and ignored.
        for output in ["wide", "name"] {
            assert!(usage(watch(&["-o", output])).ends_with(lines), "{output}");
        }
        for flag in [&["--summary"][..], &["--timeline"], &["--no-headers"], &["--sort-by", "name"]] {
            assert!(usage(watch(flag)).ends_with("shapes a one-shot plan's table, not the live view"), "{flag:?}");
        }
        assert!(watch(&["-o", "json"]).expect("valid").json);
        assert!(watch(&["-o", "jsonpath={.type}"]).expect("valid").template.is_some());
        let columns = watch(&["-o", "custom-columns=TYPE:.type", "--no-headers"]).expect("valid");
        assert!(columns.template.is_some() && !columns.headers);
        assert!(usage(watch(&["-o", "jsonpath={.type}", "--no-headers"])).ends_with("not the live view"));
        // Fixed: a node named twice was watched twice.
        assert_eq!(watch(&["worker-4", "worker-4", "worker-3"]).expect("valid").nodes, ["worker-4", "worker-3"]);
    }

    #[test]
    fn run_config_checks_the_election_only_when_asked_as_client_go_does() {
        let run = |args: &[&str]| {
            let Command::Run(run) = parse(&[&["run"], args].concat()) else { panic!("run") };
            RunConfig::new(&run)
        };
        assert_eq!(run(&["--leader-elect-lease-duration=1s"]).expect("no election").election, None);
        let elected = run(&["--leader-elect", "--mode", "evict"]).expect("upstream's defaults fit");
        assert_eq!(elected.mode, Mode::Evict);
        let election = elected.election.expect("elected");
        assert_eq!(
            (election.lease_name.as_str(), election.lease_duration),
            ("kubectl-taint-evict", Duration::from_secs(15))
        );
        let refused = usage(run(&["--leader-elect", "--leader-elect-lease-duration=10s"]));
        assert_eq!(refused, "--leader-elect-lease-duration must be longer than --leader-elect-renew-deadline");
        let refused = usage(run(&["--leader-elect", "--leader-elect-retry-period=9s"]));
        assert_eq!(refused, "--leader-elect-renew-deadline must be longer than 1.2 × --leader-elect-retry-period");
    }
}
