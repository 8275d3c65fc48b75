//! Connecting as kubectl does: `--kubeconfig`, `KUBECONFIG` (merged), `--context`, in-cluster config
//! when run in a pod, all through `kube::Config`.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

use std::path::PathBuf;

use kube::config::{ExecConfig, ExecInteractiveMode, KubeConfigOptions, Kubeconfig, KubeconfigError};
use kube::{Client, Config};

use super::error::ClusterError;

/// Objects per LIST page (client-go's default).
pub const PAGE_SIZE: u32 = 500;
/// Requests in flight at once.
pub const CONCURRENCY: usize = 8;
use super::bound::BoundLayer;
use super::protobuf::{Answers, ContentType, ProtobufLayer};
use super::pushback::{Pushback, PushbackLayer, ReadRetryAfter};
use crate::decode::bounded::MaxSize;
use crate::time::date::DateLayer;
use crate::time::{Clock, Timekeeper};

/// How to connect: kubectl's connection flags, each over the kubeconfig's value.
#[derive(Clone, Debug, Default)]
pub struct ConnectOptions {
    /// `--kubeconfig`.
    pub kubeconfig: Option<String>,
    /// `--context`.
    pub context: Option<String>,
    /// `--cluster`: the kubeconfig's cluster instead of the context's.
    pub cluster: Option<String>,
    /// `--user`: the kubeconfig's user instead of the context's.
    pub user: Option<String>,
    /// `-s`, `--server`: the API server's URL instead of the cluster's.
    pub server: Option<String>,
    /// `--token`: a bearer token instead of the user's credentials.
    pub token: Option<String>,
    /// `--as`.
    pub impersonate: Option<String>,
    /// `--as-group`.
    pub impersonate_groups: Vec<String>,
    /// `--as-uid`.
    pub impersonate_uid: Option<String>,
    /// `--certificate-authority`.
    pub certificate_authority: Option<String>,
    /// `--client-certificate`.
    pub client_certificate: Option<String>,
    /// `--client-key`.
    pub client_key: Option<String>,
    /// `--tls-server-name`.
    pub tls_server_name: Option<String>,
    /// `--request-timeout`: the most one request may take.
    pub request_timeout: Option<Duration>,
    /// Whether `--request-timeout` was given (rather than its default): only then does it bound an
    /// exec plugin that has the terminal.
    pub request_timeout_given: bool,
    /// `--insecure-skip-tls-verify`: the only way certificate verification is turned off.
    pub insecure_skip_tls_verify: bool,
    /// `--disable-compression`: answers uncompressed, whatever the kubeconfig says.
    pub disable_compression: bool,
    /// `--content-type`: what reads of pods, nodes and Leases ask for.
    pub content_type: ContentType,
    /// `--max-response-size`: the most bytes of one answer (and of one event of a watch).
    pub max_response_size: MaxSize,
}

/// A client, the server it talks to and the per-request time limit.
#[derive(Clone)]
pub struct Connection {
    /// The kube-rs client.
    pub client: Client,
    /// Where the client reports the server's pushback on writes (`Retry-After`).
    pub pushback: Pushback,
    /// This machine's clock kept to the control plane's by what the answers say of it.
    pub time: Timekeeper,
    /// The API server URL, for messages.
    pub server: String,
    /// The most one request may take.
    pub request_timeout: Option<Duration>,
    /// The kubeconfig context's namespace (or the pod's, in-cluster).
    pub default_namespace: String,
    /// How reads are served: from the API server's watch cache (the default) or from etcd.
    pub read: ReadFrom,
    /// The content types the reads of pods, nodes and Leases were answered in.
    pub answers: Answers,
}

/// Where the API server serves `plan`'s and `explain`'s reads from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReadFrom {
    /// The watch cache (`resourceVersion=0`, as informers' initial lists): no etcd round trip, the
    /// node-name index answers `spec.nodeName=NODE`; the data may lag etcd by the cache's delay
    /// (milliseconds). Kubernetes before 1.31 ignores `limit` on such a read: one page holds all.
    #[default]
    Cache,
    /// A quorum read from etcd (no `resourceVersion`), paged with `limit`/`continue`: the latest
    /// data, at the cost of scanning every pod in etcd for a field selector.
    Quorum,
}

impl ReadFrom {
    /// `watch-cache` or `quorum`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cache => "watch-cache",
            Self::Quorum => "quorum",
        }
    }
}

/// The kubeconfig files kubectl reads when `--kubeconfig` is not given: those `KUBECONFIG` lists, else
/// `~/.kube/config`; each once, in their order.
fn kubeconfig_files() -> Vec<PathBuf> {
    let listed: Vec<PathBuf> = std::env::var_os("KUBECONFIG")
        .map(|list| std::env::split_paths(&list).filter(|path| !path.as_os_str().is_empty()).collect())
        .unwrap_or_default();
    let mut files = if listed.is_empty() {
        std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".kube").join("config")).into_iter().collect()
    } else {
        listed
    };
    let mut seen = std::collections::HashSet::new();
    files.retain(|path| seen.insert(path.clone()));
    files
}

/// Where the kubeconfig was looked for, for messages: `--kubeconfig`'s path, `$KUBECONFIG (LIST)` or
/// `~/.kube/config`.
fn describe_sources(path: Option<&str>) -> String {
    match (path, std::env::var("KUBECONFIG")) {
        (Some(path), _) => path.to_owned(),
        (None, Ok(list)) if !list.is_empty() => format!("$KUBECONFIG ({list})"),
        (None, _) => "~/.kube/config".to_owned(),
    }
}

/// Reads the kubeconfig as kubectl (client-go's loading rules) does: `path` (`--kubeconfig`), which must
/// exist; else the files `KUBECONFIG` lists, merged, the first file to set a value winning (a context,
/// cluster or user of a name comes whole from the first file that defines it; `current-context` from
/// the first that sets it), a file that does not exist skipped; else `~/.kube/config`. `None` when no
/// file exists.
///
/// # Errors
/// A file that cannot be read or parsed, named.
pub fn read_kubeconfig(path: Option<&str>) -> Result<Option<Kubeconfig>, ClusterError> {
    if let Some(path) = path {
        return Kubeconfig::read_from(path).map(Some).map_err(|e| bad_kubeconfig(path.to_owned(), &e));
    }
    let mut merged: Option<Kubeconfig> = None;
    for file in kubeconfig_files() {
        let shown = file.display().to_string();
        let config = match Kubeconfig::read_from(&file) {
            Ok(config) => config,
            Err(KubeconfigError::ReadConfig(e, _)) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(bad_kubeconfig(shown, &e)),
        };
        merged = Some(match merged {
            None => config,
            Some(merged) => merged.merge(config).map_err(|e| bad_kubeconfig(shown, &e))?,
        });
    }
    Ok(merged)
}

/// Reads the kubeconfig (or the in-cluster configuration) and builds a client.
pub async fn connect(options: &ConnectOptions) -> Result<Connection, ClusterError> {
    let kubeconfig = read_kubeconfig(options.kubeconfig.as_deref())?;
    // As kubectl: `--server` alone (with `--token`, or a client certificate) needs no kubeconfig.
    let kubeconfig = match (kubeconfig, &options.server) {
        (None, Some(_)) if std::env::var_os("KUBERNETES_SERVICE_HOST").is_none() => Some(Kubeconfig::default()),
        (kubeconfig, _) => kubeconfig,
    };
    let mut config = match kubeconfig {
        Some(mut kubeconfig) => {
            if let Some(context) = &options.context
                && !kubeconfig.contexts.iter().any(|c| &c.name == context)
            {
                let available: Vec<&str> = kubeconfig.contexts.iter().map(|c| c.name.as_str()).collect();
                return Err(ClusterError::ContextNotFound {
                    context: context.clone(),
                    available: if available.is_empty() { "none".into() } else { available.join(", ") },
                });
            }
            let select = apply_flags(&mut kubeconfig, options).map_err(|reason| ClusterError::BadKubeconfig {
                path: describe_sources(options.kubeconfig.as_deref()),
                reason,
            })?;
            Config::from_custom_kubeconfig(kubeconfig, &select)
                .await
                .map_err(|e| bad_kubeconfig(describe_sources(options.kubeconfig.as_deref()), &e))?
        }
        None if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() => {
            let mut config = Config::incluster().map_err(|e| ClusterError::BadKubeconfig {
                path: "in-cluster configuration".into(),
                reason: e.to_string(),
            })?;
            apply_flags_in_cluster(&mut config, options)?;
            config
        }
        None => {
            let sources = match kubeconfig_files().len() {
                0 | 1 => format!("{} does not exist", describe_sources(None)),
                _ => format!("no file of {} exists", describe_sources(None)),
            };
            return Err(ClusterError::NoKubeconfig(format!("{sources} and this is not a pod")));
        }
    };
    let mut plugin_has_terminal = false;
    if let Some(exec) = &mut config.auth_info.exec {
        let terminal = std::io::stdin().is_terminal();
        interactive_as_kubectl(exec, terminal, &config.cluster_url)?;
        plugin_has_terminal = terminal && exec.interactive_mode != Some(ExecInteractiveMode::Never);
    }
    if let Some(exec) = &config.auth_info.exec
        && let Some(command) = exec.command.as_deref().filter(|command| !installed(command))
    {
        // As kubectl: the kubeconfig's `installHint` says how to get it.
        let hint = exec.install_hint.as_deref().and_then(|hint| hint.lines().map(str::trim).find(|l| !l.is_empty()));
        let hint = hint.map(|hint| format!(": {}", crate::words::printable(hint))).unwrap_or_default();
        let server = config.cluster_url.to_string().trim_end_matches('/').to_owned();
        let reason = format!("the exec plugin \"{}\" is not installed{hint}", crate::words::printable(command));
        return Err(ClusterError::Credentials { server, reason });
    }
    // The limit bounds each whole request in `Connection::send`; only connecting is bounded here, so
    // the long, mostly idle watches of `run` are not cut.
    if let Some(timeout) = options.request_timeout {
        config.connect_timeout = Some(timeout);
    }
    if options.insecure_skip_tls_verify {
        config.accept_invalid_certs = true;
    }
    // The kubeconfig cluster's `disable-compression` is read by `kube::Config`; the flag turns it on.
    if options.disable_compression {
        config.disable_compression = true;
    }
    // An interactive command should say the server is overloaded, not retry for minutes.
    config.default_retry = false;
    if !inline_token_fits_a_header(&config.auth_info) {
        let reason = "the user's token holds characters an HTTP header cannot carry (a line break?)".to_owned();
        return Err(ClusterError::BadKubeconfig { path: describe_sources(options.kubeconfig.as_deref()), reason });
    }
    let server = config.cluster_url.to_string().trim_end_matches('/').to_owned();
    let default_namespace = config.default_namespace.clone();
    let command = credential_command(&config.auth_info);
    let pushback = Pushback::default();
    let time = Timekeeper::new(Clock::system());
    let answers = Answers::default();
    let build = move || kube::client::ClientBuilder::try_from(config);
    let builder = match command {
        Some(command) => {
            let within = credentials_bound(options.request_timeout, options.request_timeout_given, plugin_has_terminal);
            build_within(build, within, &server, command).await?
        }
        None => build(),
    }
    .map_err(|e| ClusterError::from_kube(e, &server, "connect to", "the server"))?;
    let client = builder
        .with_layer(&BoundLayer { server: Arc::from(server.as_str()), limit: options.max_response_size })
        .with_layer(&PushbackLayer(pushback.clone()))
        .with_layer(&DateLayer(time.clone()))
        .with_layer(&ProtobufLayer { asked: options.content_type, answers: answers.clone() })
        .build();
    Ok(Connection {
        client,
        pushback,
        time,
        server,
        request_timeout: options.request_timeout,
        default_namespace,
        read: ReadFrom::Cache,
        answers,
    })
}

/// The command that gives the kubeconfig user's credentials, in words (`the exec plugin "corp-login"`);
/// `None` when no command runs.
fn credential_command(auth: &kube::config::AuthInfo) -> Option<String> {
    let printable = crate::words::printable;
    if let Some(provider) = &auth.auth_provider {
        // kube runs a command for the `gcp` provider only, and takes its other providers' tokens as
        // they are.
        let command = provider.config.get("cmd-path")?;
        return Some(format!("auth provider \"{}\"'s command \"{}\"", printable(&provider.name), printable(command)));
    }
    let exec = auth.exec.as_ref()?;
    exec.command.as_deref().map(|command| format!("exec plugin \"{}\"", printable(command)))
}

/// How long the credential command may take: `--request-timeout`, but for an exec plugin that has the
/// terminal, whose user may be logging in (a browser, a second factor): it waits unless the flag is
/// given.
fn credentials_bound(timeout: Option<Duration>, given: bool, plugin_has_terminal: bool) -> Option<Duration> {
    if plugin_has_terminal && !given { None } else { timeout }
}

/// Runs `build`, which runs the credential command and waits for it (kube runs it as it builds the
/// client's layers), on a thread of its own, and waits `within`; past that, the error names `command`. The
/// thread is left to the command, which ends with the process at the latest.
async fn build_within<T: Send + 'static>(
    build: impl FnOnce() -> T + Send + 'static,
    within: Option<Duration>,
    server: &str,
    command: String,
) -> Result<T, ClusterError> {
    let (give, built) = tokio::sync::oneshot::channel();
    let started = std::thread::Builder::new().name("credentials".into()).spawn(move || {
        let _ = give.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(build)));
    });
    if let Err(error) = started {
        let reason = format!("cannot start the {command}: {}", super::error::root_cause(&error));
        return Err(ClusterError::Credentials { server: server.to_owned(), reason });
    }
    let waited = match within {
        Some(limit) => tokio::time::timeout(limit, built).await.map_err(|_| ClusterError::CredentialsTimeout {
            server: server.to_owned(),
            command,
            after: crate::words::std_duration(limit),
        })?,
        None => built.await,
    };
    // The thread always sends before it ends; a panic of `build` goes on here, as it would have.
    match waited {
        Ok(Ok(built)) => Ok(built),
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => unreachable!("the thread sends before it ends"),
    }
}

/// kubectl's reading of `interactiveMode`: the plugin gets the terminal only when there is one. Without
/// one, `IfAvailable` (v1beta1's default when unset) runs it as `Never` does (told it is not interactive,
/// its stderr kept for the error line), and `Always` is refused before it runs.
fn interactive_as_kubectl(exec: &mut ExecConfig, terminal: bool, server: &http::Uri) -> Result<(), ClusterError> {
    if terminal {
        return Ok(());
    }
    match exec.interactive_mode {
        Some(ExecInteractiveMode::Never) => Ok(()),
        Some(ExecInteractiveMode::Always) => Err(ClusterError::Credentials {
            server: server.to_string().trim_end_matches('/').to_owned(),
            reason: "the exec plugin needs a terminal (interactiveMode: Always) and standard input is not one".into(),
        }),
        Some(ExecInteractiveMode::IfAvailable) | None => {
            exec.interactive_mode = Some(ExecInteractiveMode::Never);
            Ok(())
        }
    }
}

/// Whether an exec plugin's `command`, a name, is found on `PATH` (a path is left to the plugin's
/// start to judge).
fn installed(command: &str) -> bool {
    if command.contains(std::path::MAIN_SEPARATOR) || command.contains('/') {
        return true;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let names = [command.to_owned(), format!("{command}{}", std::env::consts::EXE_SUFFIX)];
    std::env::split_paths(&path).any(|dir| names.iter().any(|name| dir.join(name).is_file()))
}

/// The name the flags' own cluster, user and context go by when the kubeconfig has no context to use
/// (no kubeconfig at all, or one without `current-context`).
const FLAGS: &str = "flags";

/// Puts the connection flags over the kubeconfig's values, with kubectl's precedence: `--context`
/// picks the context, `--cluster` and `--user` replace its cluster and user, and each other flag
/// replaces that one value of them (`--token` replaces the user's credentials; `--certificate-authority`
/// the cluster's CA data; a client certificate flag the user's data). Without a context (no
/// `current-context`, no `--context`), as kubectl, the flags make one: `--server` (or `--cluster`)
/// and the credential flags. Returns what to load.
fn apply_flags(kubeconfig: &mut Kubeconfig, options: &ConnectOptions) -> Result<KubeConfigOptions, String> {
    let context_name = match options.context.clone().or_else(|| kubeconfig.current_context.clone()) {
        Some(name) => name,
        None if options.server.is_some() || options.cluster.is_some() => flags_context(kubeconfig, options),
        None => return Err("it sets no current-context: name one with --context, or give --server".into()),
    };
    let context = kubeconfig.contexts.iter().find(|c| c.name == context_name).and_then(|c| c.context.clone());
    let listed = |names: Vec<&str>| if names.is_empty() { "none".to_owned() } else { names.join(", ") };
    let cluster_name = match (&options.cluster, &context) {
        (Some(name), _) => name.clone(),
        (None, Some(context)) => context.cluster.clone(),
        (None, None) => return Ok(select(&context_name, options, None)),
    };
    let Some(cluster) = kubeconfig.clusters.iter_mut().find(|c| c.name == cluster_name) else {
        let names = kubeconfig.clusters.iter().map(|c| c.name.as_str()).collect();
        return Err(format!("no cluster \"{cluster_name}\" in it (clusters: {})", listed(names)));
    };
    let cluster = cluster.cluster.get_or_insert_with(Default::default);
    if let Some(server) = &options.server {
        cluster.server = Some(server.clone());
    }
    if let Some(path) = &options.certificate_authority {
        cluster.certificate_authority = Some(path.clone());
        cluster.certificate_authority_data = None;
    }
    if let Some(name) = &options.tls_server_name {
        cluster.tls_server_name = Some(name.clone());
    }
    let user_name = options.user.clone().or_else(|| context.as_ref().and_then(|c| c.user.clone()));
    if let Some(name) = &options.user
        && !kubeconfig.auth_infos.iter().any(|u| &u.name == name)
    {
        let names = kubeconfig.auth_infos.iter().map(|u| u.name.as_str()).collect();
        return Err(format!("no user \"{name}\" in it (users: {})", listed(names)));
    }
    let overrides_user = options.token.is_some()
        || options.impersonate.is_some()
        || !options.impersonate_groups.is_empty()
        || options.impersonate_uid.is_some()
        || options.client_certificate.is_some()
        || options.client_key.is_some();
    if !overrides_user {
        return Ok(select(&context_name, options, Some(cluster_name)));
    }
    // A context without a user gets the flags' own.
    let user_name = user_name.unwrap_or_else(|| FLAGS.to_owned());
    let index = match kubeconfig.auth_infos.iter().position(|u| u.name == user_name) {
        Some(index) => index,
        None => {
            let name = user_name.clone();
            kubeconfig.auth_infos.push(kube::config::NamedAuthInfo {
                name,
                auth_info: None,
                other: Default::default(),
            });
            kubeconfig.auth_infos.len() - 1
        }
    };
    let user = kubeconfig.auth_infos[index].auth_info.get_or_insert_with(Default::default);
    if let Some(token) = &options.token {
        *user = kube::config::AuthInfo {
            token: Some(token.clone().into()),
            client_certificate: user.client_certificate.take(),
            client_certificate_data: user.client_certificate_data.take(),
            client_key: user.client_key.take(),
            client_key_data: user.client_key_data.take(),
            impersonate: user.impersonate.take(),
            impersonate_groups: user.impersonate_groups.take(),
            impersonate_uid: user.impersonate_uid.take(),
            ..kube::config::AuthInfo::default()
        };
    }
    if let Some(path) = &options.client_certificate {
        user.client_certificate = Some(path.clone());
        user.client_certificate_data = None;
    }
    if let Some(path) = &options.client_key {
        user.client_key = Some(path.clone());
        user.client_key_data = None;
    }
    if let Some(name) = &options.impersonate {
        user.impersonate = Some(name.clone());
    }
    if !options.impersonate_groups.is_empty() {
        user.impersonate_groups = Some(options.impersonate_groups.clone());
    }
    if let Some(uid) = &options.impersonate_uid {
        user.impersonate_uid = Some(uid.clone());
    }
    let mut selected = select(&context_name, options, Some(cluster_name));
    selected.user = Some(user_name);
    Ok(selected)
}

fn select(context: &str, options: &ConnectOptions, cluster: Option<String>) -> KubeConfigOptions {
    KubeConfigOptions { context: Some(context.to_owned()), cluster, user: options.user.clone() }
}

/// Adds the flags' own context to `kubeconfig` (and, without `--cluster`, their own empty cluster for
/// `--server` to fill), and returns its name.
fn flags_context(kubeconfig: &mut Kubeconfig, options: &ConnectOptions) -> String {
    use kube::config::{Cluster, Context, NamedCluster, NamedContext};
    let cluster = match &options.cluster {
        Some(name) => name.clone(),
        None => {
            kubeconfig.clusters.retain(|c| c.name != FLAGS);
            let cluster = Some(Cluster::default());
            kubeconfig.clusters.push(NamedCluster { name: FLAGS.into(), cluster, other: Default::default() });
            FLAGS.to_owned()
        }
    };
    let context = Context { cluster, user: options.user.clone(), ..Context::default() };
    kubeconfig.contexts.retain(|c| c.name != FLAGS);
    kubeconfig.contexts.push(NamedContext { name: FLAGS.into(), context: Some(context), other: Default::default() });
    FLAGS.to_owned()
}

/// The connection flags over the in-cluster configuration: the server, the token, impersonation and
/// the server name; certificate files need a kubeconfig.
fn apply_flags_in_cluster(config: &mut Config, options: &ConnectOptions) -> Result<(), ClusterError> {
    let refused = [
        ("--certificate-authority", options.certificate_authority.is_some()),
        ("--client-certificate", options.client_certificate.is_some()),
        ("--client-key", options.client_key.is_some()),
        ("--cluster", options.cluster.is_some()),
        ("--user", options.user.is_some()),
    ];
    if let Some((flag, _)) = refused.iter().find(|(_, given)| *given) {
        let reason = format!("{flag} needs a kubeconfig (--kubeconfig)");
        return Err(ClusterError::BadKubeconfig { path: "in-cluster configuration".into(), reason });
    }
    if let Some(server) = &options.server {
        config.cluster_url = server
            .parse()
            .map_err(|e| ClusterError::BadKubeconfig { path: "--server".into(), reason: format!("not a URL: {e}") })?;
    }
    if let Some(token) = &options.token {
        config.auth_info = kube::config::AuthInfo { token: Some(token.clone().into()), ..Default::default() };
    }
    config.auth_info.impersonate = options.impersonate.clone().or(config.auth_info.impersonate.take());
    if !options.impersonate_groups.is_empty() {
        config.auth_info.impersonate_groups = Some(options.impersonate_groups.clone());
    }
    config.auth_info.impersonate_uid = options.impersonate_uid.clone().or(config.auth_info.impersonate_uid.take());
    if let Some(name) = &options.tls_server_name {
        config.tls_server_name = Some(name.clone());
    }
    Ok(())
}

/// Whether the inline `token` kube would send (none when an auth provider or a username and password
/// take precedence) can be an `Authorization` header: kube builds that header with tower-http, which
/// panics when it cannot. The token is only looked at, never kept or printed.
fn inline_token_fits_a_header(auth: &kube::config::AuthInfo) -> bool {
    if auth.auth_provider.is_some() || (auth.username.is_some() && auth.password.is_some()) {
        return true;
    }
    // `AuthInfo` serializes the token as a kubeconfig holds it; its type hides it from everything else.
    let fields = serde_json::to_value(auth).unwrap_or_default();
    fields["token"].as_str().is_none_or(|token| http::HeaderValue::from_str(&format!("Bearer {token}")).is_ok())
}

fn bad_kubeconfig(path: String, error: &KubeconfigError) -> ClusterError {
    let reason = match error {
        KubeconfigError::ReadConfig(io, _) => match io.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_owned(),
            std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
            _ => io.to_string(),
        },
        KubeconfigError::Parse(yaml) => yaml_reason(yaml),
        // kube's messages already carry their cause; walking `source()` would repeat it.
        error => {
            let reason = error.to_string();
            reason.split(" (os error").next().unwrap_or(&reason).to_owned()
        }
    };
    ClusterError::BadKubeconfig { path, reason }
}

/// A YAML error of a kubeconfig in one line: where (line and column) and what is wrong, without the
/// excerpt of the file the parser draws under it.
fn yaml_reason(error: &serde_saphyr::Error) -> String {
    let text = error.without_snippet().to_string();
    let first = text.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("not valid YAML");
    let what = first.strip_prefix("error: ").unwrap_or(first);
    match error.location().filter(|at| at.line() > 0) {
        Some(at) => {
            let (line, column) = (at.line(), at.column());
            let what = what.strip_suffix(&format!(" at line {line}, column {column}")).unwrap_or(what);
            format!("line {line}, column {column}: {what}")
        }
        None => format!("not valid YAML: {what}"),
    }
}

impl Connection {
    /// Sends one request, within `--request-timeout`; the error names `verb` and `resource`.
    pub(super) async fn send(
        &self,
        request: http::Request<Vec<u8>>,
        verb: &'static str,
        resource: &str,
    ) -> Result<String, ClusterError> {
        let call = self.request_text(request);
        let result = match self.request_timeout {
            Some(limit) => tokio::time::timeout(limit, call).await.map_err(|_| ClusterError::Timeout {
                server: self.server.clone(),
                verb,
                resource: resource.to_owned(),
                after: crate::words::std_duration(limit),
            })?,
            None => call.await,
        };
        result.map_err(|e| ClusterError::from_kube(e, &self.server, verb, resource))
    }

    /// Sends one request; a read the server pushes back on (429 or 503 with `Retry-After`) is sent
    /// again once that has passed, at most [`READ_RETRIES`] times, as client-go does for kubectl.
    async fn request_text(&self, request: http::Request<Vec<u8>>) -> Result<String, kube::Error> {
        let (parts, body) = request.into_parts();
        let mut retries = 0;
        loop {
            let answered = ReadRetryAfter::default();
            let mut request = http::Request::new(body.clone());
            *request.method_mut() = parts.method.clone();
            *request.uri_mut() = parts.uri.clone();
            *request.headers_mut() = parts.headers.clone();
            request.extensions_mut().insert(answered.clone());
            match self.client.request_text(request).await {
                Err(kube::Error::Api(status)) if retries < READ_RETRIES && matches!(status.code, 429 | 503) => {
                    let Some(seconds) = answered.take() else { return Err(kube::Error::Api(status)) };
                    retries += 1;
                    // The writes' pushback, for this read alone: held until then (capped as theirs).
                    let hold = crate::runtime::Throttle::unlimited(self.time.clock().clone());
                    hold.push_back(Duration::from_secs(seconds));
                    hold.admit().await;
                }
                answer => return answer,
            }
        }
    }
}

/// How many times a read pushed back on is sent again (client-go's `maxRetries`).
const READ_RETRIES: u32 = 10;

#[cfg(test)]
mod tests {
    use super::*;

    fn kubeconfig() -> Kubeconfig {
        let yaml = "apiVersion: v1\nkind: Config\nclusters:\n- name: prod\n  cluster:\n    server: https://prod:6443\n    \
                    certificate-authority-data: Zm9v\n- name: dr\n  cluster:\n    server: https://dr:6443\n\
                    contexts:\n- name: prod\n  context:\n    cluster: prod\n    user: sso\n    namespace: web\n\
                    current-context: prod\nusers:\n- name: sso\n  user:\n    exec:\n      apiVersion: \
                    client.authentication.k8s.io/v1\n      command: corp-login\n      interactiveMode: Never\n\
                    - name: breakglass\n  user:\n    token: old\n";
        Kubeconfig::from_yaml(yaml).expect("a kubeconfig")
    }

    fn user<'a>(kubeconfig: &'a Kubeconfig, name: &str) -> &'a kube::config::AuthInfo {
        let named = kubeconfig.auth_infos.iter().find(|u| u.name == name).expect("the user");
        named.auth_info.as_ref().expect("its fields")
    }

    #[test]
    fn each_flag_replaces_its_value_of_the_context_s_cluster_and_user() {
        let mut config = kubeconfig();
        let options = ConnectOptions {
            server: Some("https://bastion:8443".into()),
            certificate_authority: Some("/etc/ca.pem".into()),
            token: Some("t0ken".into()),
            impersonate: Some("alice".into()),
            impersonate_groups: vec!["oncall".into()],
            ..ConnectOptions::default()
        };
        let select = apply_flags(&mut config, &options).expect("applied");
        assert_eq!((select.cluster.as_deref(), select.user.as_deref()), (Some("prod"), Some("sso")));
        let prod = config.clusters[0].cluster.as_ref().expect("prod");
        assert_eq!(prod.server.as_deref(), Some("https://bastion:8443"));
        assert_eq!(
            (prod.certificate_authority.as_deref(), prod.certificate_authority_data.as_deref()),
            (Some("/etc/ca.pem"), None)
        );
        let sso = user(&config, "sso");
        assert!(sso.exec.is_none(), "--token replaces the exec plugin");
        assert!(sso.token.is_some());
        assert_eq!(sso.impersonate.as_deref(), Some("alice"));
        assert_eq!(sso.impersonate_groups.as_deref(), Some(&["oncall".to_owned()][..]));
    }

    #[test]
    fn cluster_and_user_flags_pick_others_and_name_what_is_not_there() {
        let mut config = kubeconfig();
        let options =
            ConnectOptions { cluster: Some("dr".into()), user: Some("breakglass".into()), ..ConnectOptions::default() };
        let select = apply_flags(&mut config, &options).expect("applied");
        assert_eq!((select.cluster.as_deref(), select.user.as_deref()), (Some("dr"), Some("breakglass")));
        let missing = ConnectOptions { user: Some("carol".into()), ..ConnectOptions::default() };
        assert_eq!(
            apply_flags(&mut kubeconfig(), &missing).err().as_deref(),
            Some("no user \"carol\" in it (users: sso, breakglass)")
        );
        let missing = ConnectOptions { cluster: Some("qa".into()), ..ConnectOptions::default() };
        assert_eq!(
            apply_flags(&mut kubeconfig(), &missing).err().as_deref(),
            Some("no cluster \"qa\" in it (clusters: prod, dr)")
        );
    }

    #[test]
    fn the_credential_command_waits_the_request_timeout_but_with_the_terminal_only_when_it_is_given() {
        let (thirty, five) = (Some(Duration::from_secs(30)), Some(Duration::from_secs(5)));
        assert_eq!(credentials_bound(thirty, false, false), thirty, "the default, without a terminal");
        assert_eq!(credentials_bound(five, true, false), five);
        assert_eq!(credentials_bound(thirty, false, true), None, "a login in a browser may take longer");
        assert_eq!(credentials_bound(five, true, true), five, "unless the flag says otherwise");
        assert_eq!(credentials_bound(None, true, false), None, "--request-timeout 0");
    }

    #[test]
    fn the_credential_command_is_named_by_its_command_never_its_arguments() {
        let config = kubeconfig();
        assert_eq!(credential_command(user(&config, "sso")).as_deref(), Some("exec plugin \"corp-login\""));
        assert_eq!(credential_command(user(&config, "breakglass")), None);
    }

    #[test]
    fn a_server_flag_alone_makes_a_kubeconfig_with_the_flags_own_user() {
        let mut config = Kubeconfig::default();
        let options = ConnectOptions {
            server: Some("https://10.0.0.1:6443".into()),
            token: Some("t".into()),
            ..ConnectOptions::default()
        };
        let select = apply_flags(&mut config, &options).expect("applied");
        assert_eq!(select.user.as_deref(), Some(FLAGS));
        assert_eq!(
            config.clusters[0].cluster.as_ref().and_then(|c| c.server.as_deref()),
            Some("https://10.0.0.1:6443")
        );
        assert!(user(&config, FLAGS).token.is_some());
    }
}
