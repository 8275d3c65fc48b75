//! `review`: a record read, replayed by the engine, each deletion judged (docs/review.md).

use std::io::{BufWriter, Write};

use crate::config::{ReviewConfig, ReviewOutput};
use crate::decode::audit_log::{is_audit_log, read_audit_log};
use crate::decode::controller_manager::Found;
use crate::decode::record::{read_lines, read_record};
use crate::engine::review::review as replay;
use crate::engine::taint_review::{Reading, review_taints};
use crate::error::{Error, Result};
use crate::output::json::{write_json, write_yaml};
use crate::output::review::{ReviewDoc, Reviewed, write_review};

use super::records::files;

/// How often `record` writes a node's Lease renewal at most when the record does not say (its
/// `--leases-every` default): two renewals of a node this far apart and `--silent-after` are taken
/// as its kubelet heartbeating between them (docs/review.md, "Node taints").
const LEASES_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// `review`: the record read, the engine driven over it, each pod's verdict printed.
///
/// # Errors
/// A record that cannot be read or whose line does not read, or output that cannot be written.
pub fn review(config: &ReviewConfig) -> Result<()> {
    let files = files(&config.record)?;
    let bad = |e: crate::decode::record::RecordError| Error::BadRecord { path: e.file, line: e.line, reason: e.reason };
    let record = if files.first().is_some_and(|(_, text)| is_audit_log(text)) {
        // A kube-apiserver audit log: its writes read as a record's lines (docs/review.md).
        let logs: Vec<_> = files.iter().map(|(name, text)| read_audit_log(name, text)).collect();
        let without: usize = logs.iter().map(|log| log.without_objects).sum();
        if without > 0 {
            eprintln!(
                "warning: {without} write(s) in the audit log hold no object (a level below RequestResponse): what \
                 they changed is not known"
            );
        }
        read_lines(logs.into_iter().flat_map(|log| log.lines)).map_err(bad)?
    } else {
        read_record(&files).map_err(bad)?
    };
    let end = record.end.unwrap_or_default();
    let mut found = replay(&record.moments, end, config.slack);
    if let Some(namespace) = &config.namespace {
        found.pods.retain(|pod| pod.pod.key.namespace() == namespace.as_str());
    }
    // The node lifecycle controller's settings: a record holds no command line of it.
    let lifecycle = &config.lifecycle;
    let why = Found::Unreadable("a record does not hold kube-controller-manager's command line".to_owned());
    let read = lifecycle.settings_found(lifecycle.kube_version(), Some(&why), true);
    let reading = Reading {
        flags: read.settings.flags,
        silent_after: lifecycle.silent_after,
        bridged: record.leases_every.unwrap_or(LEASES_EVERY) + lifecycle.silent_after,
        slack: config.slack,
    };
    let taints = review_taints(&record.nodes, end, &reading);
    let judged = taints.iter().any(|taint| taint.foreseen.is_some());
    if judged && let Some(line) = &read.assumed {
        eprintln!("warning: {line}");
    }
    if judged && record.renewals == 0 {
        eprintln!(
            "warning: the record holds no node Lease renewal: each node's silence is read from its Ready condition's \
             lastHeartbeatTime, which a kubelet with a Lease writes only every few minutes"
        );
    }
    let reviewed = Reviewed {
        review: &found,
        lines: record.lines,
        files: files.len(),
        slack: config.slack,
        taints: &taints,
        renewals: record.renewals,
        settings: &read.settings,
        assumed: read.assumed.as_deref().filter(|_| judged),
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    match config.format {
        ReviewOutput::Table => write_review(&reviewed, &mut out)?,
        ReviewOutput::Json => write_json(&ReviewDoc::new(&reviewed), &mut out)?,
        ReviewOutput::Yaml => write_yaml(&ReviewDoc::new(&reviewed), &mut out)?,
    }
    out.flush()?;
    Ok(())
}
