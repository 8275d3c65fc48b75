//! `review`: a record read, replayed by the engine, each deletion judged (docs/review.md).

use std::io::{BufWriter, Write};

use crate::config::{ReviewConfig, ReviewOutput};
use crate::decode::audit_log::{is_audit_log, read_audit_log};
use crate::decode::record::{read_lines, read_record};
use crate::engine::review::review as replay;
use crate::error::{Error, Result};
use crate::output::json::{write_json, write_yaml};
use crate::output::review::{ReviewDoc, Reviewed, write_review};

use super::records::files;

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
    let reviewed = Reviewed { review: &found, lines: record.lines, files: files.len(), slack: config.slack };
    let mut out = BufWriter::new(std::io::stdout().lock());
    match config.format {
        ReviewOutput::Table => write_review(&reviewed, &mut out)?,
        ReviewOutput::Json => write_json(&ReviewDoc::new(&reviewed), &mut out)?,
        ReviewOutput::Yaml => write_yaml(&ReviewDoc::new(&reviewed), &mut out)?,
    }
    out.flush()?;
    Ok(())
}
