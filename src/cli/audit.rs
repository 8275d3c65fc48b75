//! `audit`: one read, then every zone's and every node's outage and the rules on tolerations, as the
//! engine decides them (`engine::audit`); this reads the input, keeps what `-n` and `-l` ask for and
//! prints (docs/audit.md).

use std::io::{BufWriter, Write};

use crate::cluster::NodeSelection;
use crate::config::{AuditConfig, AuditOutput};
use std::collections::HashMap;

use crate::engine::audit::{Setting, placement_findings, replica_findings, scenarios, toleration_findings};
use crate::engine::lifecycle::{MAX_UNSETTLED, ZoneKey};
use crate::engine::model::NodeName;
use crate::engine::snapshot::Owner;
use crate::error::{Error, Result};
use crate::output::audit::{Audit, EvictionAudit, write_text};
use crate::output::json::{write_json, write_yaml};

use super::prepare::input::Want;
use super::prepare::prepared::Prepared;

/// `kubectl taint-evict audit`.
pub fn audit(config: &AuditConfig) -> Result<()> {
    // Rendered manifests are checked before they are deployed; a dump, a record or the cluster, as
    // it runs.
    if let Some(path) = config.input.file.as_deref()
        && !super::records::is_record(path)
        && let Some(sources) = super::manifests::sources(path, config.input.connect.max_response_size)?
    {
        return super::manifests::audit(config, &sources);
    }
    if config.format == AuditOutput::Sarif {
        return Err(sarif_refused(config));
    }
    if let Some(profile) = &config.profile {
        return Err(Error::Usage(format!(
            "{} describes the cluster rendered manifests will run on: a dump or the live cluster is read as it is",
            profile.flag()
        )));
    }
    let (mut prepared, _) = Prepared::load(&config.input, &config.lifecycle, Want::Nodes(&NodeSelection::All))?;
    let lacks = prepared.take_lacks();
    let (snapshot, origin) = (&prepared.loaded.snapshot, &prepared.loaded.origin);
    if prepared.from_dump && snapshot.pods.is_empty() {
        return Err(Error::IncompleteDump { path: origin.clone(), kind: "Pod" });
    }
    let only: Option<Vec<NodeName>> = config.selector.as_ref().map(|selector| {
        let mut names: Vec<NodeName> =
            snapshot.nodes.iter().filter(|node| selector.matches(&node.labels)).map(|node| node.name.clone()).collect();
        names.sort();
        names
    });
    if let (Some(selector), Some([])) = (&config.selector, only.as_deref()) {
        return Err(Error::NoNodeMatched { flag: "-l", selector: selector.as_str().to_owned(), input: origin.clone() });
    }
    let namespace = config.namespace.as_deref();
    // Each node's zone, as the controller names it.
    let zones: HashMap<NodeName, String> = snapshot
        .nodes
        .iter()
        .map(|node| {
            let zone = ZoneKey::from_labels(|key| node.labels.get(key).map(String::as_str));
            (node.name.clone(), zone.name().to_owned())
        })
        .collect();
    let host = crate::host::host();
    let scenarios = match &prepared.lifecycle {
        Some(foreseen) => {
            let setting = Setting {
                observation: &foreseen.observation,
                max_unsettled: MAX_UNSETTLED,
                namespace,
                only: only.as_deref(),
                host,
            };
            scenarios(snapshot, &setting)
        }
        None => {
            eprintln!(
                "warning: the input has no node status: no outage is predicted, only the tolerations are audited \
                 (dump with `kubectl get nodes,pods,leases -A -o json`)"
            );
            Vec::new()
        }
    };
    let mut findings = replica_findings(snapshot, &scenarios);
    // What no outage predicted says: the owners whose replicas share one node or zone, and each
    // outage not predicted (docs/audit.md).
    let mut reported: Vec<(&str, &Owner)> = Vec::with_capacity(findings.len());
    reported.extend(findings.iter().filter_map(|finding| Some((finding.namespace, finding.owner?))));
    reported.sort_unstable();
    reported.dedup();
    findings.extend(placement_findings(snapshot, &zones, &reported, only.as_deref()));
    findings.extend(toleration_findings(snapshot, &prepared.flags));
    if let Some(namespace) = namespace {
        findings.retain_namespace(namespace);
    }
    let now = prepared.lifecycle.as_ref().map_or(prepared.now, |foreseen| foreseen.observation.now);
    // Live, the own controllers of the ReplicaSets and Jobs the findings name, read only then
    // (docs/audit.md).
    let mut workloads = std::borrow::Cow::Borrowed(&snapshot.workloads);
    if !prepared.from_dump {
        let owners: Vec<(&str, &Owner)> = findings
            .iter()
            .filter_map(|finding| finding.owner.map(|owner| (finding.namespace, owner)))
            .filter(|(_, owner)| matches!(owner.kind(), "ReplicaSet" | "Job"))
            .collect();
        if !owners.is_empty() {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| Error::Runtime(e.to_string()))?;
            let read = runtime.block_on(async {
                let connection = crate::cluster::connect(&config.input.connect).await?;
                Ok::<_, Error>(crate::cluster::snapshot::owners_of(&connection, &owners).await)
            })?;
            let workloads = workloads.to_mut();
            workloads.merge(read);
            workloads.settle();
        }
    }
    let audit =
        Audit { now, settings: prepared.settings, findings: &findings, scenarios: &scenarios, workloads: &workloads };
    let mut out = BufWriter::new(std::io::stdout().lock());
    match config.format {
        AuditOutput::Table => write_text(&audit, config.summary, config.color, &mut out)?,
        AuditOutput::Json => write_json(&EvictionAudit::new(&audit), &mut out)?,
        AuditOutput::Yaml => write_yaml(&EvictionAudit::new(&audit), &mut out)?,
        AuditOutput::Sarif => return Err(sarif_refused(config)),
    }
    out.flush()?;
    for line in lacks {
        eprintln!("{line}");
    }
    match config.fail_on {
        Some(severity) => match findings.iter().filter(|finding| finding.severity >= severity).count() {
            0 => Ok(()),
            count => Err(Error::Findings { count, severity: severity.as_str() }),
        },
        None => Ok(()),
    }
}

/// `-o sarif` of a dump or of the live cluster: SARIF points at the lines of files, which only
/// rendered manifests have.
fn sarif_refused(config: &AuditConfig) -> Error {
    let input = match config.input.file.as_deref() {
        Some("-") => "a dump (stdin)".to_owned(),
        Some(path) => format!("a dump ({path})"),
        None => "the live cluster".to_owned(),
    };
    Error::SarifWithoutManifests { input }
}
