//! Connecting as kubectl does: `--kubeconfig`, `KUBECONFIG` (merged), `--context`, in-cluster config
//! when run in a pod, all through `kube::Config`.

use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

use super::ClusterError;
use super::date::DateLayer;
use super::pushback::{Pushback, PushbackLayer};
use crate::runtime::{Clock, Timekeeper};

/// How to connect.
#[derive(Clone, Debug, Default)]
pub struct ConnectOptions {
    /// `--kubeconfig`.
    pub kubeconfig: Option<String>,
    /// `--context`.
    pub context: Option<String>,
    /// `--request-timeout`: the most one request may take.
    pub request_timeout: Option<Duration>,
    /// `--insecure-skip-tls-verify`: the only way certificate verification is turned off.
    pub insecure_skip_tls_verify: bool,
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

fn describe_sources(path: Option<&str>) -> String {
    match (path, std::env::var("KUBECONFIG")) {
        (Some(path), _) => path.to_owned(),
        (None, Ok(list)) if !list.is_empty() => format!("$KUBECONFIG ({list})"),
        (None, _) => "~/.kube/config".to_owned(),
    }
}

/// Reads the kubeconfig (or the in-cluster configuration) and builds a client.
pub async fn connect(options: &ConnectOptions) -> Result<Connection, ClusterError> {
    let kubeconfig = match &options.kubeconfig {
        Some(path) => Some(Kubeconfig::read_from(path).map_err(|e| bad_kubeconfig(Some(path), &e))?),
        None => match Kubeconfig::read() {
            Ok(config) => Some(config),
            Err(kube::config::KubeconfigError::FindPath) => None,
            Err(kube::config::KubeconfigError::ReadConfig(e, _)) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(bad_kubeconfig(None, &e)),
        },
    };
    let mut config = match kubeconfig {
        Some(kubeconfig) => {
            if let Some(context) = &options.context
                && !kubeconfig.contexts.iter().any(|c| &c.name == context)
            {
                let available: Vec<&str> = kubeconfig.contexts.iter().map(|c| c.name.as_str()).collect();
                return Err(ClusterError::ContextNotFound {
                    context: context.clone(),
                    available: if available.is_empty() { "none".into() } else { available.join(", ") },
                });
            }
            let select = KubeConfigOptions { context: options.context.clone(), ..KubeConfigOptions::default() };
            Config::from_custom_kubeconfig(kubeconfig, &select)
                .await
                .map_err(|e| bad_kubeconfig(options.kubeconfig.as_deref(), &e))?
        }
        None if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() => Config::incluster().map_err(|e| {
            ClusterError::BadKubeconfig { path: "in-cluster configuration".into(), reason: e.to_string() }
        })?,
        None => {
            return Err(ClusterError::NoKubeconfig(format!(
                "{} does not exist and this is not a pod",
                describe_sources(options.kubeconfig.as_deref())
            )));
        }
    };
    // The limit bounds each whole request in `Connection::send`; only connecting is bounded here, so
    // the long, mostly idle watches of `run` are not cut.
    if let Some(timeout) = options.request_timeout {
        config.connect_timeout = Some(timeout);
    }
    if options.insecure_skip_tls_verify {
        config.accept_invalid_certs = true;
    }
    // An interactive command should say the server is overloaded, not retry for minutes.
    config.default_retry = false;
    if !inline_token_fits_a_header(&config.auth_info) {
        let reason = "the user's token holds characters an HTTP header cannot carry (a line break?)".to_owned();
        return Err(ClusterError::BadKubeconfig { path: describe_sources(options.kubeconfig.as_deref()), reason });
    }
    let server = config.cluster_url.to_string().trim_end_matches('/').to_owned();
    let default_namespace = config.default_namespace.clone();
    let pushback = Pushback::default();
    let time = Timekeeper::new(Clock::system());
    let client = kube::client::ClientBuilder::try_from(config)
        .map_err(|e| ClusterError::from_kube(e, &server, "connect to", "the server"))?
        .with_layer(&PushbackLayer(pushback.clone()))
        .with_layer(&DateLayer(time.clone()))
        .build();
    Ok(Connection {
        client,
        pushback,
        time,
        server,
        request_timeout: options.request_timeout,
        default_namespace,
        read: ReadFrom::Cache,
    })
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

fn bad_kubeconfig(path: Option<&str>, error: &kube::config::KubeconfigError) -> ClusterError {
    if let kube::config::KubeconfigError::ReadConfig(io, _) = error {
        let reason = match io.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_owned(),
            std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
            _ => io.to_string(),
        };
        return ClusterError::BadKubeconfig { path: describe_sources(path), reason };
    }
    // kube's messages already carry their cause; walking `source()` would repeat it.
    let reason = error.to_string();
    let reason = reason.split(" (os error").next().unwrap_or(&reason).to_owned();
    ClusterError::BadKubeconfig { path: describe_sources(path), reason }
}
