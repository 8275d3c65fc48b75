//! The top-level error: one line that says what is wrong, a hint where one helps, and an exit code.
//!
//! Owns: the top-level error and exit codes. Uses: the cluster's and the decoder's errors.

use std::io;

use crate::decode::DumpError;

/// Exit code for success (a broken pipe included, but for `run`'s: see [`Error::Unrecorded`]).
pub const EXIT_OK: u8 = 0;
/// Exit code for a runtime, API or input failure.
pub const EXIT_FAILURE: u8 = 1;
/// Exit code for a usage error (clap's default).
pub const EXIT_USAGE: u8 = 2;
/// `audit --fail-on`: a finding at or above the severity given.
pub const EXIT_FINDINGS: u8 = 3;

/// Everything a command can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The command line is inconsistent in a way clap cannot express.
    #[error("{0}")]
    Usage(String),
    /// `audit --fail-on`: so many findings at or above the severity (the audit itself was printed).
    #[error("{count} finding(s) at or above {severity} (--fail-on {severity})")]
    Findings {
        /// How many.
        count: usize,
        /// The severity given.
        severity: &'static str,
    },
    /// A dump file could not be read.
    #[error("cannot read {path}: {reason}")]
    ReadFailed {
        /// The path, or `stdin`.
        path: String,
        /// The operating system's words.
        reason: String,
    },
    /// A dump file is malformed.
    #[error("{path}: {source}")]
    BadDump {
        /// The path, or `stdin`.
        path: String,
        /// What is wrong, and where.
        source: DumpError,
    },
    /// A file of rendered manifests that does not read.
    #[error("{path}{}: {reason}", at_line(*.line))]
    BadManifest {
        /// The file, or `stdin`.
        path: String,
        /// The line, from 1 (0 when the parser does not say).
        line: u32,
        /// What is wrong.
        reason: String,
    },
    /// A record's line that does not read.
    #[error("{path}:{line}: {reason}")]
    BadRecord {
        /// The file.
        path: String,
        /// The line, from 1.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// `--at` an instant a record does not hold.
    #[error("{path}: {reason}")]
    NotInRecord {
        /// The record, as named.
        path: String,
        /// Why.
        reason: String,
    },
    /// `-o sarif` for a cluster or a dump: SARIF points at files, which only manifests have.
    #[error("-o sarif is for rendered manifests (audit -f FILE|DIR of YAML or JSON objects), not for {input}")]
    SarifWithoutManifests {
        /// Where the audit read from.
        input: String,
    },
    /// A node named on the command line is not in the input.
    #[error("node \"{node}\" not found in {input}")]
    NodeNotFound {
        /// The node.
        node: String,
        /// Where it was looked for.
        input: String,
    },
    /// The pod named for `explain` is not in the input.
    #[error("pod \"{pod}\" not found in {input}")]
    PodNotFound {
        /// `namespace/name`.
        pod: String,
        /// Where it was looked for.
        input: String,
    },
    /// A dump is larger than `--max-response-size` (reading stopped there).
    #[error("{path}: the dump is larger than {limit} (--max-response-size)")]
    DumpTooLarge {
        /// The path, or `stdin`.
        path: String,
        /// The bound, in words (`2 GiB`).
        limit: String,
    },
    /// A dump holds no object of a kind every answer needs (written without `nodes` or `pods`).
    #[error("{path}: the dump has no {kind} objects: write it with `kubectl get nodes,pods -A -o json`")]
    IncompleteDump {
        /// The path, or `stdin`.
        path: String,
        /// `Node` or `Pod`.
        kind: &'static str,
    },
    /// A dump holds a node or a pod twice.
    #[error(
        "{path}: the dump holds {object} twice{}: write it with one `kubectl get nodes,pods -A -o json`",
        .uids.as_ref().map(|(a, b)| format!(" (uids {a} and {b})")).unwrap_or_default()
    )]
    Duplicate {
        /// The path, or `stdin`.
        path: String,
        /// `node "NAME"` or `pod "NAMESPACE/NAME"`.
        object: String,
        /// A pod's two UIDs.
        uids: Option<(String, String)>,
    },
    /// `-l` or `--down-selector` selected no node.
    #[error("no node matched {flag} {selector} in {input}")]
    NoNodeMatched {
        /// `-l` or `--down-selector`.
        flag: &'static str,
        /// The selector, as given.
        selector: String,
        /// Where nodes were looked for.
        input: String,
    },
    /// An `-o` template that cannot be parsed.
    #[error("-o {format} template {template}: {reason}")]
    BadTemplate {
        /// `jsonpath`, `custom-columns`, or their `-file` forms.
        format: &'static str,
        /// The template, quoted, or `in FILE`.
        template: String,
        /// What is wrong with it, in kubectl's words.
        reason: String,
    },
    /// An `-o` template failed on the document (a missing key, with
    /// `--allow-missing-template-keys=false`; an index out of bounds).
    #[error("-o {format}: the template failed on the document: {reason}")]
    TemplateFailed {
        /// `jsonpath`, `custom-columns`, or their `-file` forms.
        format: &'static str,
        /// What failed, in kubectl's words.
        reason: String,
    },
    /// The pod named for `explain` is not bound to a node.
    #[error("pod \"{0}\" is not bound to a node: the taint-eviction engine only acts on bound pods")]
    PodUnbound(String),
    /// An error whose hint depends on the input (where else the pod `explain` names is).
    #[error("{error}")]
    Hinted {
        /// The error.
        error: Box<Error>,
        /// What to do about it.
        hint: String,
    },
    /// Talking to the cluster failed.
    #[error(transparent)]
    Cluster(#[from] crate::cluster::ClusterError),
    /// The metrics endpoint cannot listen on its address.
    #[error("cannot listen on {address} (--metrics-bind-address): {reason}")]
    Listen {
        /// The address.
        address: String,
        /// The operating system's words.
        reason: String,
    },
    /// The async runtime could not start (the operating system refused its threads).
    #[error("cannot start the runtime: {0}")]
    Runtime(String),
    /// Writing the output failed.
    #[error("cannot write output: {0}")]
    Write(#[from] io::Error),
    /// `record` cannot write its files (an `--out` that is not a writable directory, a full disk).
    #[error("cannot write the record to {path}: {reason}")]
    RecordFailed {
        /// The file or directory.
        path: String,
        /// The operating system's words.
        reason: String,
    },
    /// `run`'s lines cannot be written (their reader went away, a full disk): it stopped enforcing.
    #[error("{}: run stops enforcing, since every deletion must be recorded", unwritable(.0))]
    Unrecorded(io::Error),
}

/// What the operating system said of a file, without Rust's `(os error 2)`.
#[must_use]
pub fn os_words(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file".into(),
        io::ErrorKind::PermissionDenied => "permission denied".into(),
        io::ErrorKind::IsADirectory => "it is a directory".into(),
        _ => {
            let text = e.to_string();
            text.split(" (os error").next().unwrap_or(&text).to_lowercase()
        }
    }
}

/// `:LINE` after a file's name, or nothing when the line is not known (0).
fn at_line(line: u32) -> String {
    if line == 0 { String::new() } else { format!(":{line}") }
}

/// Why stdout cannot be written, in words.
fn unwritable(error: &io::Error) -> String {
    match error.kind() {
        io::ErrorKind::BrokenPipe => "standard output is closed (broken pipe)".to_owned(),
        _ => format!("cannot write to standard output: {error}"),
    }
}

impl Error {
    /// A file that cannot be read: the OS's words, without Rust's `(os error 2)`.
    #[must_use]
    pub fn read_failed(path: &str, e: &io::Error) -> Self {
        Self::ReadFailed { path: path.to_owned(), reason: os_words(e) }
    }

    /// The exit code this error ends the process with.
    #[must_use]
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Usage(_) | Self::BadTemplate { .. } | Self::SarifWithoutManifests { .. } => EXIT_USAGE,
            Self::Findings { .. } => EXIT_FINDINGS,
            Self::Hinted { error, .. } => error.exit_code(),
            Self::Write(e) if e.kind() == io::ErrorKind::BrokenPipe => EXIT_OK,
            _ => EXIT_FAILURE,
        }
    }

    /// A second line that says what to do, where there is something useful to say.
    #[must_use]
    pub fn hint(&self) -> Option<String> {
        match self {
            Self::NodeNotFound { .. } => {
                Some("without NODE, plan shows every NoExecute-tainted node; -l SELECTOR selects nodes by label".into())
            }
            Self::Hinted { hint, .. } => Some(hint.clone()),
            Self::NoNodeMatched { .. } => Some("`kubectl get nodes --show-labels` shows the labels nodes have".into()),
            Self::PodNotFound { .. } => Some("the pod is looked up in the namespace given with -n".into()),
            Self::Cluster(e) => e.hint(),
            Self::RecordFailed { .. } => Some(
                "--out must be a directory this user can write to (it is created when missing), on a disk with room"
                    .into(),
            ),
            Self::Listen { .. } => {
                Some("another process holds the port: pick a free one, e.g. --metrics-bind-address :9102".into())
            }
            Self::BadManifest { .. } => Some(
                "audit -f reads rendered manifests (YAML or JSON, as `helm template` or `kustomize build` write them) \
                 or a cluster's dump (`kubectl get nodes,pods -A -o json`)"
                    .into(),
            ),
            Self::NotInRecord { .. } => {
                Some("give --at an instant inside the record: `kubectl taint-evict review` prints its span".into())
            }
            Self::BadRecord { .. } => {
                Some("a record is JSON lines, each with `at` and what was seen then (docs/review.md)".into())
            }
            Self::BadDump { .. } => Some("the file must be what `kubectl get nodes,pods -A -o json` prints".into()),
            Self::BadTemplate { format, .. } if format.starts_with("custom-columns") => Some(
                "custom columns are NAME:.path,OTHER:.path2 (a file: the headers on its first line, the paths on its \
                 second), the paths in kubectl's JSONPath (docs/output.md)"
                    .into(),
            ),
            Self::BadTemplate { .. } => Some(
                "templates are kubectl's JSONPath: text, and {.field}, {.list[*].field}, {range .list[*]}…{end} \
                 (docs/output.md)"
                    .into(),
            ),
            Self::DumpTooLarge { .. } => Some(
                "a dump of a cluster this large needs a larger bound (--max-response-size 4Gi); input that never \
                 ends (a generator, a pipe that is never closed) is not a dump"
                    .into(),
            ),
            _ => None,
        }
    }

    /// Whether nothing should be printed (the reader went away: `plan -o json | head`).
    #[must_use]
    pub fn is_silent(&self) -> bool {
        matches!(self, Self::Write(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }
}

/// `Result` with this module's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;
