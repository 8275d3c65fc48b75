//! Gathering a snapshot and the evaluation instant for `plan` and `explain`: from a dump (`-f`) or
//! from the live cluster.

use std::io::Read;

use crate::cluster::{self, ConnectOptions, Connection, NodeSelection};
use crate::engine::replay::Snapshot;
use crate::engine::time::Timestamp;
use crate::error::{Error, Result};
use crate::source::file;

use super::InputArgs;

/// A snapshot and a name for where it came from (for messages).
pub struct Loaded {
    /// The snapshot.
    pub snapshot: Snapshot,
    /// `dump.json`, `stdin`, or the server's URL.
    pub origin: String,
}

/// What to read from the cluster.
pub enum Want<'a> {
    /// Nodes and their pods.
    Nodes(&'a NodeSelection),
    /// One pod (its namespace, `None` for the kubeconfig's), with its node.
    Pod(Option<&'a str>, &'a str),
}

/// Reads the snapshot the flags name. Returns it with the namespace `explain` looks in: `-n`, else
/// the kubeconfig context's (live) or `default` (a dump).
pub fn load(args: &InputArgs, want: Want<'_>) -> Result<(Loaded, String)> {
    let Some(path) = args.file.as_deref() else { return load_live(args, want) };
    let (origin, bytes) = if path == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .map_err(|e| Error::ReadFailed { path: "stdin".into(), reason: e.to_string() })?;
        ("stdin".to_owned(), bytes)
    } else {
        let bytes = std::fs::read(path).map_err(|e| Error::ReadFailed { path: path.into(), reason: io_reason(&e) })?;
        (path.to_owned(), bytes)
    };
    let snapshot = file::read(&bytes).map_err(|source| Error::BadDump { path: origin.clone(), source })?;
    let namespace = match want {
        Want::Pod(Some(namespace), _) => namespace,
        _ => "default",
    };
    Ok((Loaded { snapshot, origin }, namespace.to_owned()))
}

fn load_live(args: &InputArgs, want: Want<'_>) -> Result<(Loaded, String)> {
    let options: ConnectOptions = args.cluster.options();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Runtime(e.to_string()))?;
    runtime.block_on(async {
        let mut connection: Connection = cluster::connect(&options).await?;
        if args.quorum_read {
            connection.read = cluster::ReadFrom::Quorum;
        }
        let (snapshot, namespace) = match want {
            Want::Nodes(selection) => {
                (cluster::read_snapshot(&connection, selection).await?, connection.default_namespace.clone())
            }
            Want::Pod(namespace, pod) => {
                let namespace = namespace.map_or_else(|| connection.default_namespace.clone(), str::to_owned);
                (cluster::read_pod(&connection, &namespace, pod).await?, namespace)
            }
        };
        Ok((Loaded { snapshot, origin: connection.server.clone() }, namespace))
    })
}

/// The OS error without Rust's `(os error 2)` suffix, lowercase as the rest of our messages.
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        std::io::ErrorKind::IsADirectory => "it is a directory".into(),
        _ => {
            let text = e.to_string();
            text.split(" (os error").next().unwrap_or(&text).to_lowercase()
        }
    }
}

/// `--now`, or the current wall-clock time: the only place `plan` reads the clock.
#[must_use]
pub fn now(args: &InputArgs) -> Timestamp {
    args.now.unwrap_or_else(|| Timestamp::from_nanos(jiff::Timestamp::now().as_nanosecond()))
}
