//! What can go wrong talking to a cluster, in words an operator can act on.

/// A failure to connect to or read from the cluster.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// No kubeconfig could be found.
    #[error("no kubeconfig found: {0}")]
    NoKubeconfig(String),
    /// The kubeconfig could not be read or parsed.
    #[error("cannot load kubeconfig {path}: {reason}")]
    BadKubeconfig {
        /// The file (or files, from `KUBECONFIG`).
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// `--context` names a context the kubeconfig does not have.
    #[error("context \"{context}\" not found in the kubeconfig (contexts: {available})")]
    ContextNotFound {
        /// The context asked for.
        context: String,
        /// The contexts there are, comma-separated.
        available: String,
    },
    /// The server could not be reached.
    #[error("cannot connect to {server}: {reason}")]
    Unreachable {
        /// The API server URL.
        server: String,
        /// The cause, as the network stack says it.
        reason: String,
    },
    /// The kubeconfig's user could not get credentials (a failing exec plugin, an unreadable token
    /// file, a client key that cannot be used). The reason never quotes the credential, the plugin's
    /// command line or its output; it quotes what the plugin said on stderr (kubectl shows it too:
    /// "session expired; run corp-login").
    #[error("cannot get credentials for {server}: {reason}")]
    Credentials {
        /// The API server URL.
        server: String,
        /// What failed.
        reason: String,
    },
    /// The kubeconfig user's credential command (an exec plugin) did not answer within
    /// `--request-timeout`.
    #[error("cannot get credentials for {server}: the {command} did not answer within {after}")]
    CredentialsTimeout {
        /// The API server URL.
        server: String,
        /// The command, in words (`exec plugin "corp-login"`): its name, never its arguments.
        command: String,
        /// The limit, human-readable.
        after: String,
    },
    /// An answer of the API server, or one event of a watch, is larger than `--max-response-size`
    /// allows: reading stopped there.
    #[error(
        "{verb} {resource} at {server}: {} is larger than {bound} (--max-response-size)",
        if *.event { "an event" } else { "the answer" }
    )]
    TooLarge {
        /// The API server URL.
        server: String,
        /// The verb.
        verb: &'static str,
        /// The resource.
        resource: String,
        /// The bound passed, in words (`2 GiB`).
        bound: String,
        /// Whether one event of a watch passed its bound, rather than a whole answer.
        event: bool,
    },
    /// The TLS handshake failed.
    #[error("TLS handshake with {server} failed: {reason}")]
    Tls {
        /// The API server URL.
        server: String,
        /// The cause.
        reason: String,
    },
    /// A request did not complete in time.
    #[error("{verb} {resource} at {server} timed out after {after}")]
    Timeout {
        /// The API server URL.
        server: String,
        /// The verb.
        verb: &'static str,
        /// The resource.
        resource: String,
        /// The limit, human-readable.
        after: String,
    },
    /// 401: the credentials were rejected.
    #[error("{server} rejected the credentials (401 Unauthorized) on {verb} {resource}")]
    Unauthorized {
        /// The API server URL.
        server: String,
        /// The verb.
        verb: &'static str,
        /// The resource.
        resource: String,
    },
    /// 403: RBAC denied a request.
    #[error("forbidden: cannot {verb} {resource}: {message}")]
    Forbidden {
        /// The verb denied.
        verb: &'static str,
        /// The resource, with its scope.
        resource: String,
        /// The server's message.
        message: String,
    },
    /// A node named on the command line does not exist.
    #[error("node \"{0}\" not found")]
    NodeNotFound(String),
    /// The pod named for `explain` does not exist.
    #[error("pod \"{0}\" not found")]
    PodNotFound(String),
    /// 429 in plain text: API Priority and Fairness refused a request (its `Retry-After` honoured
    /// as often as client-go would), the server shedding load.
    #[error(
        "{server} is overloaded: it refused to {verb} {resource} (429 Too Many Requests, API Priority and Fairness)"
    )]
    Overloaded {
        /// The URL.
        server: String,
        /// The verb.
        verb: &'static str,
        /// The resource.
        resource: String,
    },
    /// The server answered, but not as a Kubernetes API server does: an error without a `Status`
    /// (a web server's HTML page), or a body that is not JSON.
    #[error("{server} did not answer like a Kubernetes API server: {verb} {resource} got {what}")]
    NotAnApiServer {
        /// The URL.
        server: String,
        /// The verb.
        verb: &'static str,
        /// The resource.
        resource: String,
        /// What came back instead (`HTTP 404 without a Kubernetes Status`).
        what: String,
    },
    /// An `https://` URL whose port speaks plain HTTP.
    #[error("{server} answered in plain HTTP, not HTTPS")]
    PlainHttp {
        /// The URL.
        server: String,
    },
    /// A name that cannot be put in a request path. Names from the command line are checked before
    /// (exit 2), so this one came from the kubeconfig or from the server (a pod's `spec.nodeName`).
    #[error("cannot get {kind} {name:?}: not a valid object name")]
    InvalidName {
        /// `Node`, `Pod`, `Lease`.
        kind: String,
        /// The name, as found.
        name: String,
    },
    /// A request that cannot be sent at all: its URL would pass HTTP's limit (a label selector of
    /// tens of kilobytes).
    #[error("cannot {verb} {resource}: {reason}")]
    Unsendable {
        /// The verb.
        verb: &'static str,
        /// The resource.
        resource: String,
        /// Why, in words.
        reason: String,
    },
    /// Any other answer the API server gave.
    #[error("{verb} {resource} failed: {message} ({code})")]
    ApiFailed {
        /// The verb.
        verb: &'static str,
        /// The resource.
        resource: String,
        /// The HTTP status code.
        code: u16,
        /// The server's message.
        message: String,
    },
    /// The server answered something the reader could not decode.
    #[error("cannot decode {resource} from {server}: {reason}")]
    Decode {
        /// The API server URL.
        server: String,
        /// The resource.
        resource: String,
        /// What is wrong.
        reason: String,
    },
}

/// Whether a connection failed because connecting outlasted its limit (`--request-timeout`).
fn connect_timed_out(reason: &str) -> bool {
    let lower = reason.to_lowercase();
    ["timed out", "timeout", "deadline has elapsed"].iter().any(|words| lower.contains(words))
}

impl ClusterError {
    /// What to do about it.
    #[must_use]
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            Self::NoKubeconfig(_) => {
                "pass --kubeconfig PATH (or -s URL with --token), or set KUBECONFIG; plan and explain also read a dump \
                 with -f FILE"
                    .into()
            }
            Self::BadKubeconfig { .. } => "check the file with: kubectl config view".into(),
            Self::ContextNotFound { .. } => "list the contexts with: kubectl config get-contexts".into(),
            // `--request-timeout` bounds connecting too: a limit too short for it is not a cluster down.
            Self::Unreachable { reason, .. } if connect_timed_out(reason) => {
                "connecting took longer than --request-timeout allows: raise it (0 waits as long as it takes), or \
                 check the network path to the API server"
                    .into()
            }
            Self::Unreachable { .. } => {
                "check that the cluster is up and that --context/--kubeconfig point at it (kubectl cluster-info)".into()
            }
            Self::Credentials { .. } => {
                "check the kubeconfig's user (kubectl get nodes should fail the same way); run its exec plugin by hand \
                 to see why it fails, or log in again"
                    .into()
            }
            Self::CredentialsTimeout { .. } => {
                "raise --request-timeout if the plugin needs longer (0 waits as long as it takes), or run it by hand \
                 to see what it waits for"
                    .into()
            }
            Self::TooLarge { event: false, .. } => {
                "a cluster this large needs a larger bound (--max-response-size 4Gi); an answer that never ends is a \
                 fault of the server or of a proxy in front of it"
                    .into()
            }
            Self::TooLarge { event: true, .. } => {
                "one event holds one object, which the API server keeps under a few MiB: this one is a fault of the \
                 server or of a proxy in front of it (an event may take a 32nd of --max-response-size, 64 MiB at \
                 least)"
                    .into()
            }
            Self::Tls { .. } => {
                "give the CA that signed the server's certificate with --certificate-authority PATH (or as the \
                 kubeconfig cluster's certificate-authority); --insecure-skip-tls-verify skips the check, insecurely"
                    .into()
            }
            Self::Timeout { .. } => "raise --request-timeout, or check the network path to the API server".into(),
            Self::Unauthorized { .. } => {
                "your credentials expired or are wrong: refresh them (kubectl get nodes should fail the same way)"
                    .into()
            }
            Self::Forbidden { .. } => {
                "plan needs get and list on nodes, list on pods, and get on leases in kube-system \
                 (deploy/rbac-plan.yaml); run also needs watch, patch on pods/status, delete on pods and create \
                 on events (deploy/rbac-run.yaml)"
                    .into()
            }
            Self::NodeNotFound(_) => {
                "kubectl get nodes lists the nodes; without NODE, plan shows every tainted node".into()
            }
            Self::PodNotFound(_) => "the pod is looked up in the namespace given with -n".into(),
            Self::NotAnApiServer { .. } => {
                "check the server URL of the kubeconfig's cluster (kubectl config view --minify): it must be the \
                 API server's (https://HOST:6443 and the like), not a web page or a proxy in front of something else"
                    .into()
            }
            Self::Overloaded { .. } => "the API server sheds load while it is this busy: try again in a while (its \
                 apiserver_flowcontrol_rejected_requests_total metric says which priority level refuses)"
                .into(),
            Self::PlainHttp { server } => {
                format!(
                    "write the URL as {} in the kubeconfig, or point it at the TLS port",
                    server.replacen("https://", "http://", 1)
                )
            }
            Self::Unsendable { .. } => {
                "a request's URL holds at most 64 KiB: shorten the label selector (-l), or name the nodes instead"
                    .into()
            }
            Self::Decode { reason, .. } if reason.starts_with(crate::decode::protobuf::UNREAD) => {
                "--content-type json asks the server for JSON instead".into()
            }
            Self::ApiFailed { .. } | Self::Decode { .. } | Self::InvalidName { .. } => return None,
        })
    }

    /// The error for a request to `verb resource` that cannot be built (`error`: kube's, or `http`'s
    /// when a watch builds it).
    #[must_use]
    pub fn unsendable(verb: &'static str, resource: &str, error: &(dyn std::error::Error + 'static)) -> Self {
        let cause = root_cause(error);
        let reason = if cause.to_lowercase().contains("too long") {
            "its URL would be longer than HTTP allows (64 KiB)".to_owned()
        } else {
            format!("the request cannot be built ({cause})")
        };
        Self::Unsendable { verb, resource: resource.to_owned(), reason }
    }

    /// The error for an answer to `verb resource` that passed its bound.
    #[must_use]
    pub fn too_large(large: &super::bound::TooLarge, verb: &'static str, resource: &str) -> Self {
        Self::TooLarge {
            server: large.server.to_string(),
            verb,
            resource: resource.to_owned(),
            bound: large.bound(),
            event: large.event,
        }
    }

    /// Maps a kube-rs error for `verb resource` against `server`.
    #[must_use]
    pub fn from_kube(error: kube::Error, server: &str, verb: &'static str, resource: &str) -> Self {
        let server = server.to_owned();
        let resource = resource.to_owned();
        match error {
            // kube makes a Status up for an error body that is not one (reason "Failed to parse error
            // data"); any JSON object reads as a Status, but the API server's always says `status`.
            // API Priority and Fairness answers its 429 in plain text.
            kube::Error::Api(status)
                if status.code == 429 && (status.reason == "Failed to parse error data" || status.status.is_none()) =>
            {
                Self::Overloaded { server, verb, resource }
            }
            kube::Error::Api(status) if status.reason == "Failed to parse error data" || status.status.is_none() => {
                Self::NotAnApiServer {
                    server,
                    verb,
                    resource,
                    what: format!("HTTP {} without a Kubernetes Status", status.code),
                }
            }
            kube::Error::Api(status) => match status.code {
                401 => Self::Unauthorized { server, verb, resource },
                403 => Self::Forbidden { verb, resource, message: status.message },
                code => Self::ApiFailed { verb, resource, code, message: status.message },
            },
            kube::Error::SerdeError(e) => Self::Decode { server, resource, reason: e.to_string() },
            other => {
                if let Some(large) = find_cause::<super::bound::TooLarge>(&other) {
                    return Self::too_large(large, verb, &resource);
                }
                if let Some(error) = find_cause::<crate::decode::protobuf::ProtobufError>(&other) {
                    return Self::Decode { server, resource, reason: error.to_string() };
                }
                if let Some(auth) = find_cause::<kube::client::AuthError>(&other) {
                    return Self::Credentials { server, reason: credentials_reason(auth) };
                }
                if let Some(identity) = find_cause::<kube::client::RustlsTlsError>(&other).and_then(identity_reason) {
                    return Self::Credentials { server, reason: identity };
                }
                let reason = root_cause(&other);
                let lower = reason.to_lowercase();
                // rustls reading an HTTP answer where a TLS record should be.
                if lower.contains("invalidcontenttype") && server.starts_with("https://") {
                    return Self::PlainHttp { server };
                }
                if lower.contains("certificate") || lower.contains("tls") || lower.contains("handshake") {
                    Self::Tls { server, reason }
                } else {
                    Self::Unreachable { server, reason }
                }
            }
        }
    }
}

/// The first error of type `E` in `error`'s chain, the errors an `io::Error` wraps included (its
/// `source()` skips the one it wraps: a watch's failed read wraps the body's error so).
pub(crate) fn find_cause<'a, E: std::error::Error + 'static>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a E> {
    let mut cause = Some(error);
    while let Some(current) = cause {
        if let Some(found) = current.downcast_ref::<E>() {
            return Some(found);
        }
        let wrapped = current.downcast_ref::<std::io::Error>().and_then(std::io::Error::get_ref);
        cause = match wrapped {
            Some(inner) => Some(inner as &(dyn std::error::Error + 'static)),
            None => current.source(),
        };
    }
    None
}

/// Why the credentials could not be had, in words that cannot carry them: kube's own messages quote
/// an exec plugin's command line, environment and output (where a token may be), and parse errors
/// may quote the token itself.
fn credentials_reason(error: &kube::client::AuthError) -> String {
    use kube::client::AuthError;
    match error {
        AuthError::AuthExecRun { out, .. } => {
            // Captured when the plugin ran without the terminal (`interactiveMode: Never`, or no
            // terminal); otherwise the plugin wrote it to the terminal already.
            let said = String::from_utf8_lossy(&out.stderr);
            match said.lines().map(str::trim).rfind(|line| !line.is_empty()) {
                Some(line) => {
                    let line: String = line.chars().take(300).collect();
                    format!("the exec plugin failed ({}): {}", out.status, crate::words::printable(&line))
                }
                None => format!("the exec plugin failed ({})", out.status),
            }
        }
        AuthError::AuthExecStart(e) => format!("the exec plugin cannot be started: {}", root_cause(e)),
        AuthError::AuthExecParse(_) => "the exec plugin's output is not an ExecCredential".into(),
        AuthError::ReadTokenFile(e, path) => {
            format!("cannot read the token file {}: {}", path.display(), root_cause(e))
        }
        AuthError::InvalidBearerToken(_) | AuthError::InvalidBasicAuth(_) => {
            "the kubeconfig's credentials hold characters an HTTP header cannot carry".into()
        }
        AuthError::MissingCommand | AuthError::ExecPluginFailed | AuthError::ExecMissingClusterInfo => {
            root_cause(error)
        }
        _ => "the kubeconfig's user could not be authenticated".into(),
    }
}

/// Why the kubeconfig's client certificate and key cannot be used; `None` for other TLS set-up errors.
fn identity_reason(error: &kube::client::RustlsTlsError) -> Option<String> {
    use kube::client::RustlsTlsError;
    let why = match error {
        // The PEM parser's messages may quote a line of the file.
        RustlsTlsError::InvalidIdentityPem(_) => "not valid PEM".to_owned(),
        RustlsTlsError::MissingPrivateKey
        | RustlsTlsError::MissingCertificate
        | RustlsTlsError::UnknownPrivateKeyFormat
        | RustlsTlsError::InvalidPrivateKey(_) => root_cause(error),
        _ => return None,
    };
    Some(format!("the client certificate or key cannot be used: {why}"))
}

/// The innermost cause of an error chain, lowercase, without Rust's `(os error N)` suffix.
pub(crate) fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause: &(dyn std::error::Error + 'static) = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    let text = cause.to_string();
    let text = text.split(" (os error").next().unwrap_or(&text);
    let mut chars = text.chars();
    chars.next().map(|c| c.to_lowercase().chain(chars).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_cause_drops_os_error_codes() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "Connection refused (os error 111)");
        assert_eq!(root_cause(&io), "connection refused");
    }
}
