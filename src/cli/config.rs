//! The command line's high level: the parsed flags (clap's structs in [`super`], the low level)
//! turned into validated, typed configs, one per command, before anything is read or connected.
//!
//! Every check that spans flags (beyond one flag's value parser and clap's conflicts) and every
//! default resolved against the environment (`--color auto`, the terminal's width) is here; the
//! commands take the configs and never read the clap structs.
//!
//! Owns: the checks that build the configs (`crate::config`) from the clap structs. Uses: the clap
//! structs, the configs, the output's formats, the cluster's connection options.

use std::io::IsTerminal;
use std::time::Duration;

use crate::cluster::ConnectOptions;
use crate::cluster::evict::Mode;
use crate::config::{
    AuditConfig, AuditOutput, DEFAULT_REQUEST_TIMEOUT, Election, ExplainConfig, ExplainOutput, GivenFlags, Input,
    Lifecycle, PlanConfig, Printing, ProfileConfig, ProfileFrom, RecordConfig, RecordLimits, ReviewConfig,
    ReviewOutput, RunConfig, WatchConfig,
};
use crate::engine::audit::Severity;
use crate::error::{Error, Result};
use crate::output::jsonpath::JsonPath;
use crate::output::template::{CustomColumns, Template};
use crate::output::{ColorMode, OutputFormat, SortBy, View};
use crate::runtime::Policy;
use crate::selector::Selector;

use super::args::{
    AuditArgs, AuditFormat, ClusterArgs, ColorChoice, ElectionArgs, ExplainArgs, ExplainFormat, InputArgs,
    LifecycleArgs, LogFormat, Output, PlanArgs, PlanOutput, ProfileArgs, RecordArgs, ReviewArgs, ReviewFormat, RunArgs,
    RunFormat, RunMode, SeverityArg, SortKey, TemplateArg, TemplateKind,
};
use crate::screen_size;

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
        disable_compression: args.disable_compression,
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

impl Input {
    /// The input flags, typed.
    #[must_use]
    pub fn new(args: &InputArgs) -> Self {
        Self {
            file: args.file.clone(),
            now: args.now,
            at: args.at,
            what_if: args.taints.iter().chain(&args.remove_taints).cloned().collect(),
            down: args.down.clone(),
            down_selector: args.down_selector.clone(),
            quorum_read: args.quorum_read,
            connect: connect_options(&args.cluster),
            every_outage: false,
            label_keys: Vec::new(),
        }
    }
}

impl Lifecycle {
    /// The lifecycle flags, typed.
    #[must_use]
    pub fn new(args: &LifecycleArgs) -> Self {
        Self {
            given: GivenFlags {
                node_monitor_period: args.node_monitor_period,
                node_monitor_grace_period: args.node_monitor_grace_period,
                node_eviction_rate: args.node_eviction_rate,
                secondary_node_eviction_rate: args.secondary_node_eviction_rate,
                unhealthy_zone_threshold: args.unhealthy_zone_threshold,
                large_cluster_size_threshold: args.large_cluster_size_threshold,
                kube_api_qps: args.kube_api_qps,
                kube_api_burst: args.kube_api_burst,
            },
            silent_after: args.silent_after,
            comparison_operators: args.feature_gates.and_then(|gates| gates.comparison_operators),
            kube_version: args.kube_version,
            file: args.controller_settings.as_ref().map(|file| file.given),
        }
    }
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

impl ReviewConfig {
    /// `review`'s flags, typed.
    #[must_use]
    pub fn new(args: &ReviewArgs) -> Self {
        let format = match args.output {
            ReviewFormat::Table => ReviewOutput::Table,
            ReviewFormat::Json => ReviewOutput::Json,
            ReviewFormat::Yaml => ReviewOutput::Yaml,
        };
        Self {
            record: args.record.clone(),
            slack: i128::try_from(args.slack.as_nanos()).unwrap_or(i128::MAX),
            namespace: args.namespace.clone(),
            format,
            lifecycle: Lifecycle::new(&args.lifecycle),
        }
    }
}

impl AuditConfig {
    /// `audit`'s flags, typed.
    ///
    /// # Errors
    /// A usage error for `--summary` with another format than the table.
    pub fn new(args: &AuditArgs) -> Result<Self> {
        let format = match args.output {
            AuditFormat::Table => AuditOutput::Table,
            AuditFormat::Json => AuditOutput::Json,
            AuditFormat::Yaml => AuditOutput::Yaml,
            AuditFormat::Sarif => AuditOutput::Sarif,
        };
        if args.summary && format != AuditOutput::Table {
            return Err(Error::Usage("--summary is for the table, not -o json or yaml".into()));
        }
        let input = Input {
            file: args.file.clone(),
            now: args.now,
            at: args.at,
            what_if: Vec::new(),
            down: Vec::new(),
            down_selector: None,
            quorum_read: args.quorum_read,
            connect: connect_options(&args.cluster),
            every_outage: true,
            // `-l`'s keys, and the zone labels: where the replicas run counts without a prediction.
            label_keys: args
                .selector
                .iter()
                .flat_map(|selector| selector.keys().map(str::to_owned))
                .chain(crate::engine::lifecycle::ZONE_LABELS.iter().map(|key| (*key).to_owned()))
                .collect(),
        };
        Ok(Self {
            selector: args.selector.clone(),
            input,
            namespace: args.namespace.clone(),
            format,
            summary: args.summary,
            fail_on: args.fail_on.map(|severity| match severity {
                SeverityArg::Low => Severity::Low,
                SeverityArg::Medium => Severity::Medium,
                SeverityArg::High => Severity::High,
            }),
            color: color(args.color),
            lifecycle: Lifecycle::new(&args.lifecycle),
            profile: match (&args.profile, &args.profile_from) {
                (Some(file), _) => Some(ProfileFrom::File(file.profile.clone())),
                // Stdin is read once: by the manifests, or by the dump.
                (None, Some(dump)) if dump == "-" && args.file.as_deref() == Some("-") => {
                    return Err(Error::Usage(
                        "--profile-from - and -f - both read stdin: give the manifests or the dump as a file".into(),
                    ));
                }
                (None, Some(dump)) => Some(ProfileFrom::Dump(dump.clone())),
                (None, None) if args.profile_from_cluster => Some(ProfileFrom::Cluster),
                (None, None) => None,
            },
        })
    }
}

impl ProfileConfig {
    /// `profile`'s flags, typed.
    #[must_use]
    pub fn new(args: &ProfileArgs) -> Self {
        let input = Input {
            file: args.file.clone(),
            now: None,
            at: None,
            what_if: Vec::new(),
            down: Vec::new(),
            down_selector: None,
            quorum_read: args.quorum_read,
            connect: connect_options(&args.cluster),
            every_outage: false,
            label_keys: Vec::new(),
        };
        Self { input }
    }
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

impl Printing {
    fn new(args: &RunArgs) -> Self {
        let stdout_is_tty = std::io::stdout().is_terminal();
        match (args.log_format, args.output) {
            (Some(format), _) => Self::Log { json: format == LogFormat::Json },
            (None, Some(RunFormat::Json)) => Self::Json,
            (None, Some(RunFormat::Text)) => Self::Text { color: color(args.color), live: stdout_is_tty },
            // Without -o: text for a person at a terminal, JSON Lines for a pipe or a log collector.
            (None, None) if stdout_is_tty => Self::Text { color: color(args.color), live: true },
            (None, None) => Self::Json,
        }
    }
}

impl Election {
    /// `None` without `--leader-elect`; else the durations, checked as client-go does: lease
    /// duration > renew deadline > 1.2 × retry period.
    ///
    /// # Errors
    /// A line naming the flags that do not fit.
    pub fn new(args: &ElectionArgs, scope: &Scope<'_>) -> Result<Option<Self>, String> {
        if !args.leader_elect {
            return Ok(None);
        }
        Self::checked(args, scope).map(Some)
    }

    /// Without `--leader-elect`, what a lone `run` holds while it enforces (none for a dry run, which
    /// writes nothing): the same Lease, with the durations given if they fit, else client-go's.
    #[must_use]
    pub fn lone(args: &ElectionArgs, scope: &Scope<'_>, dry_run: bool) -> Option<Self> {
        if args.leader_elect || dry_run {
            return None;
        }
        let defaults = || Self {
            lease_name: lease_name(args, scope),
            namespace: args.leader_elect_namespace.clone(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            lone: true,
        };
        Some(Self::checked(args, scope).map_or_else(|_| defaults(), |election| Self { lone: true, ..election }))
    }

    fn checked(args: &ElectionArgs, scope: &Scope<'_>) -> Result<Self, String> {
        if args.leader_elect_lease_duration <= args.leader_elect_renew_deadline {
            return Err("--leader-elect-lease-duration must be longer than --leader-elect-renew-deadline".into());
        }
        if args.leader_elect_renew_deadline <= args.leader_elect_retry_period.mul_f64(1.2) {
            return Err("--leader-elect-renew-deadline must be longer than 1.2 × --leader-elect-retry-period".into());
        }
        if args.leader_elect_retry_period.is_zero() {
            return Err("--leader-elect-retry-period must be more than 0".into());
        }
        Ok(Self {
            lease_name: lease_name(args, scope),
            namespace: args.leader_elect_namespace.clone(),
            lease_duration: args.leader_elect_lease_duration,
            renew_deadline: args.leader_elect_renew_deadline,
            retry_period: args.leader_elect_retry_period,
            lone: false,
        })
    }
}

/// What a `run` enforces: the nodes named, `-l` and `-n` (none: the whole cluster).
#[derive(Clone, Copy, Debug)]
pub struct Scope<'a> {
    /// NODE….
    pub nodes: &'a [String],
    /// `-l`.
    pub selector: Option<&'a Selector>,
    /// `-n`.
    pub namespace: Option<&'a str>,
}

impl Scope<'_> {
    /// The whole cluster: no node named, no `-l`, no `-n`.
    #[must_use]
    pub fn is_whole_cluster(&self) -> bool {
        self.nodes.is_empty() && self.selector.is_none() && self.namespace.is_none()
    }

    /// The scope as its flags read, in one order whatever order they were given in: `NODE… -l S -n NS`
    /// (empty for the whole cluster).
    #[must_use]
    pub fn canonical(&self) -> String {
        let mut nodes: Vec<&str> = self.nodes.iter().map(String::as_str).collect();
        nodes.sort_unstable();
        nodes.dedup();
        let mut parts: Vec<String> = nodes.into_iter().map(str::to_owned).collect();
        if let Some(selector) = self.selector {
            parts.push(format!("-l {selector}"));
        }
        if let Some(namespace) = self.namespace {
            parts.push(format!("-n {namespace}"));
        }
        parts.join(" ")
    }
}

/// The Lease's default name (docs/run.md, "One enforcer at a time").
const LEASE_NAME: &str = "kubectl-taint-evict";

/// `--leader-elect-lease-name` as given; else `kubectl-taint-evict` for the whole cluster, and
/// `kubectl-taint-evict-` with 8 hex digits of the scope's FNV-1a hash otherwise: runs over different
/// scopes hold different Leases, and the same flags the same one on every machine and release.
fn lease_name(args: &ElectionArgs, scope: &Scope<'_>) -> String {
    if let Some(name) = &args.leader_elect_lease_name {
        return name.clone();
    }
    if scope.is_whole_cluster() {
        return LEASE_NAME.to_owned();
    }
    let hash = scope
        .canonical()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3));
    format!("{LEASE_NAME}-{:08x}", hash >> 32)
}

impl RecordConfig {
    /// Checks `record`'s flags together.
    ///
    /// # Errors
    /// A usage error for a `--file-size` not under `--max-size`.
    pub fn new(args: &RecordArgs) -> Result<Self> {
        let file_size = args.file_size.bytes();
        let max_size = (args.max_size > 0).then_some(args.max_size);
        if let Some(max) = max_size.filter(|max| file_size >= *max) {
            return Err(Error::Usage(format!(
                "--file-size {} must be less than --max-size {}: a file that fills the record leaves no room for the next",
                args.file_size,
                crate::decode::bounded::MaxSize::new(max).map_or_else(String::new, |max| max.to_string())
            )));
        }
        if args.leases_every.is_zero() {
            return Err(Error::Usage("--leases-every must be more than 0s".into()));
        }
        Ok(Self {
            out: args.out.clone(),
            connect: connect_options(&args.cluster),
            leases_every: args.leases_every,
            limits: RecordLimits { file_size, max_size, max_age: args.max_age.filter(|age| !age.is_zero()) },
        })
    }
}

impl RunConfig {
    /// Checks `run`'s flags together.
    ///
    /// # Errors
    /// A usage error for election durations that do not fit.
    pub fn new(args: &RunArgs) -> Result<Self> {
        let scope =
            Scope { nodes: &args.nodes, selector: args.selector.as_ref(), namespace: args.namespace.as_deref() };
        Ok(Self {
            election: match Election::new(&args.election, &scope).map_err(Error::Usage)? {
                Some(election) => Some(election),
                None => Election::lone(&args.election, &scope, args.dry_run),
            },
            nodes: args.nodes.clone(),
            selector: args.selector.clone(),
            namespace: args.namespace.clone(),
            device_taints: args.device_taints,
            dry_run: args.dry_run,
            mode: args.mode.into(),
            policy: Policy {
                restart_countdowns: args.restart_countdowns,
                concurrency: usize::from(args.concurrency),
                max_deletions: args.max_deletions.map(|max| (max, args.max_deletions_window)),
                keep_last_ready: args.keep_last_ready,
                ..Policy::default()
            },
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

    use std::time::Duration;

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
        // Without --leader-elect, durations that do not fit are not checked: a lone run holds the
        // Lease with client-go's (and a dry run none).
        let lone = run(&["--leader-elect-lease-duration=1s"]).expect("no election").election.expect("the Lease");
        assert!(lone.lone && lone.lease_duration == Duration::from_secs(15), "{lone:?}");
        assert_eq!(run(&["--dry-run"]).expect("valid").election, None);
        let elected = run(&["--leader-elect", "--mode", "evict"]).expect("upstream's defaults fit");
        assert_eq!(elected.mode, Mode::Evict);
        let election = elected.election.expect("elected");
        assert_eq!(
            (election.lease_name.as_str(), election.lease_duration),
            ("kubectl-taint-evict", Duration::from_secs(15))
        );
        let lease = |args: &[&str]| run(args).expect("valid").election.expect("the Lease").lease_name;
        // Fixed: every scope shared one Lease, so a run over -n q2 waited behind one over -n q1 and
        // q2's pods were never enforced. Scopes that differ hold different Leases by default.
        let q1 = lease(&["--leader-elect", "-n", "q1"]);
        assert!(q1.starts_with("kubectl-taint-evict-") && q1.len() == "kubectl-taint-evict-".len() + 8, "{q1}");
        assert_ne!(q1, lease(&["--leader-elect", "-n", "q2"]));
        assert_ne!(q1, lease(&["--leader-elect", "-l", "a=b"]));
        assert_ne!(lease(&["n1"]), lease(&["n2"]));
        assert_eq!(lease(&["n1", "n2", "-n", "q1"]), lease(&["-n", "q1", "n2", "n1"]), "one scope, one name");
        assert_eq!(lease(&["-n", "q1"]), q1, "a lone run holds the Lease --leader-elect would");
        assert_eq!(lease(&["--leader-elect", "-n", "q1", "--leader-elect-lease-name", "mine"]), "mine");
        let refused = usage(run(&["--leader-elect", "--leader-elect-lease-duration=10s"]));
        assert_eq!(refused, "--leader-elect-lease-duration must be longer than --leader-elect-renew-deadline");
        let refused = usage(run(&["--leader-elect", "--leader-elect-retry-period=9s"]));
        assert_eq!(refused, "--leader-elect-renew-deadline must be longer than 1.2 × --leader-elect-retry-period");
    }
}
