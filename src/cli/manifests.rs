//! `audit -f` of rendered manifests: which input is manifests rather than a dump, the files read
//! (a file, a directory's, stdin), each template checked as the cluster will admit it and each
//! PodDisruptionBudget against the templates it selects (`engine::audit::manifest_findings`), and
//! the findings printed with where each was written (docs/audit.md, "Rendered manifests").

use std::collections::BTreeMap;
use std::io::{BufRead, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use crate::config::{AuditConfig, AuditOutput, Input, ProfileFrom};
use crate::decode::bounded::MaxSize;
use crate::decode::manifests::{BudgetManifest, Manifest, begins_as_json, read_manifests, read_unless_a_dump};
use crate::decode::profile::Profile;
use crate::decode::template_sources::TemplateSources;
use crate::engine::audit::{Cluster, Rule, manifest_findings};
use crate::engine::lifecycle::Source as SettingSource;
use crate::error::{Error, Result};
use crate::output::json::{write_json, write_yaml};
use crate::output::manifests::{Checked, ManifestAudit, ManifestAuditDoc, Written, sarif, write_text};
use crate::output::settings::from_words;

/// One input of rendered manifests: its name as said, and its text.
pub struct Source {
    /// The path as given, or `stdin`.
    pub name: String,
    /// Its text.
    pub text: String,
}

/// The file extensions read from a directory.
const EXTENSIONS: [&str; 3] = ["yaml", "yml", "json"];

/// The rendered manifests `-f PATH` names, or `None` when it names a dump, read as today: a
/// directory is manifests (its `.yaml`, `.yml` and `.json` files, in its subdirectories too, in
/// the order of their paths); a file or stdin is a dump when it is JSON that names a Node, else
/// manifests (docs/audit.md, "Rendered manifests"). Stdin that begins as JSON is a dump, read as it
/// comes.
///
/// # Errors
/// A file or directory that cannot be read, or text that is not UTF-8.
pub fn sources(path: &str, max: MaxSize) -> Result<Option<Vec<Source>>> {
    if path == "-" {
        let mut stdin = std::io::stdin().lock();
        let start = stdin.fill_buf().map_err(|e| Error::read_failed("stdin", &e))?;
        if begins_as_json(start) {
            return Ok(None);
        }
        // No more than `--max-response-size`, and a byte past it to know.
        let mut bytes = Vec::new();
        stdin
            .take(max.bytes().saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| Error::read_failed("stdin", &e))?;
        return Ok(Some(vec![source("stdin", bytes, max)?]));
    }
    let metadata = std::fs::metadata(path).map_err(|e| Error::read_failed(path, &e))?;
    if metadata.is_dir() {
        let mut files = Vec::new();
        walk(Path::new(path), &mut files)?;
        files.sort();
        return files
            .into_iter()
            .map(|file| {
                let name = file.to_string_lossy().into_owned();
                let bytes = std::fs::read(&file).map_err(|e| Error::read_failed(&name, &e))?;
                source(&name, bytes, max)
            })
            .collect::<Result<Vec<_>>>()
            .map(Some);
    }
    if !metadata.is_file() {
        // A pipe or a device: read as a dump, as it comes.
        return Ok(None);
    }
    if metadata.len() > max.bytes() {
        // A dump that large is read as today, and refused there as too large.
        return Ok(None);
    }
    let file = std::fs::File::open(path).map_err(|e| Error::read_failed(path, &e))?;
    match read_unless_a_dump(file).map_err(|e| Error::read_failed(path, &e))? {
        None => Ok(None),
        Some(bytes) => Ok(Some(vec![source(path, bytes, max)?])),
    }
}

/// One input's text: no larger than `max` (`--max-response-size`), and UTF-8.
fn source(name: &str, bytes: Vec<u8>, max: MaxSize) -> Result<Source> {
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > max.bytes() {
        return Err(Error::BadManifest {
            path: name.to_owned(),
            line: 0,
            reason: format!("larger than {max} (--max-response-size)"),
        });
    }
    let text = String::from_utf8(bytes).map_err(|e| Error::BadManifest {
        path: name.to_owned(),
        line: 0,
        reason: format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
    })?;
    Ok(Source { name: name.to_owned(), text })
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    let shown = dir.to_string_lossy().into_owned();
    for entry in std::fs::read_dir(dir).map_err(|e| Error::read_failed(&shown, &e))? {
        let path = entry.map_err(|e| Error::read_failed(&shown, &e))?.path();
        if path.is_dir() {
            walk(&path, files)?;
        } else if path.extension().and_then(|e| e.to_str()).is_some_and(|e| EXTENSIONS.contains(&e)) {
            files.push(path);
        }
    }
    Ok(())
}

/// Where `finding` points in `manifest`: the toleration at fault (the field its pod spec would hold,
/// when admission added it), the replicas, or the object; and the chart template it came from.
fn written(file: &str, manifest: &Manifest, source: Option<&str>, rule: Rule, toleration: Option<usize>) -> Written {
    let at = |line, path: String, unwritten| Written {
        file: file.to_owned(),
        document: manifest.document,
        line,
        path,
        unwritten,
        source: source.map(str::to_owned),
    };
    let spec = &manifest.spec_path;
    match (rule, toleration) {
        (_, Some(index)) => match manifest.toleration_lines.get(index) {
            Some(line) => at(*line, format!("{spec}.tolerations[{index}]"), None),
            None => {
                let by = if manifest.template.daemon_set() {
                    "added by the DaemonSet controller or the API server's admission"
                } else {
                    "added by the API server's admission"
                };
                at(manifest.spec_line, format!("{spec}.tolerations[{index}]"), Some(by))
            }
        },
        (Rule::ReplicasOnOneNode | Rule::ReplicasInOneZone, None) => {
            let object = spec.strip_suffix("spec.template.spec").unwrap_or_default();
            match manifest.replicas_line {
                Some(line) => at(line, format!("{object}spec.replicas"), None),
                None => at(manifest.line, format!("{object}spec.replicas"), Some("not written: 1 by default")),
            }
        }
        (_, None) => at(manifest.spec_line, spec.clone(), None),
    }
}

/// What a profile is taken from: the audit's connection, nothing of its outages (a dump's pods and
/// their owners are not kept).
fn profile_input(config: &AuditConfig) -> Input {
    Input { every_outage: false, label_keys: Vec::new(), ..config.input.clone() }
}

/// Where a finding on `budget` points: what it asks, `spec.minAvailable` or `spec.maxUnavailable`.
fn budget_written(file: &str, budget: &BudgetManifest, source: Option<&str>) -> Written {
    let (path, line) = budget.wanted_at.clone().unwrap_or_else(|| ("spec".to_owned(), budget.line));
    let source = source.map(str::to_owned);
    Written { file: file.to_owned(), document: budget.document, line, path, unwritten: None, source }
}

/// `audit` of rendered manifests: every template checked, the findings printed.
///
/// # Errors
/// A file that does not read as manifests (its line said), `--fail-on`'s findings, or output that
/// cannot be written.
pub fn audit(config: &AuditConfig, sources: &[Source]) -> Result<()> {
    let mut manifests: Vec<(&str, Manifest, Option<Box<str>>)> = Vec::new();
    let mut budgets: Vec<(&str, BudgetManifest, Option<Box<str>>)> = Vec::new();
    let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
    for source in sources {
        let read = read_manifests(&source.text).map_err(|e| Error::BadManifest {
            path: source.name.clone(),
            line: e.line,
            reason: e.reason,
        })?;
        let sources = TemplateSources::scan(&source.text);
        manifests.extend(read.manifests.into_iter().map(|manifest| {
            let template = sources.at(manifest.line).map(Box::from);
            (source.name.as_str(), manifest, template)
        }));
        budgets.extend(read.budgets.into_iter().map(|budget| {
            let template = sources.at(budget.line).map(Box::from);
            (source.name.as_str(), budget, template)
        }));
        for (kind, n) in read.skipped {
            *skipped.entry(kind).or_default() += n;
        }
    }
    if let Some(namespace) = &config.namespace {
        manifests.retain(|(_, manifest, _)| &*manifest.template.namespace == namespace.as_str());
        budgets.retain(|(_, budget, _)| &*budget.budget.namespace == namespace.as_str());
    }
    // The profile's version and settings, unless given as flags (it and `--controller-settings`
    // exclude each other): a file's as a file's, a cluster's as its pod's (docs/audit.md, "The
    // cluster's profile").
    let (profile, taken) = match &config.profile {
        None => (Profile::default(), false),
        Some(ProfileFrom::File(profile)) => (profile.clone(), false),
        Some(ProfileFrom::Dump(path)) => {
            let input = Input { file: Some(path.clone()), ..profile_input(config) };
            (super::profile::taken(&input)?.0.profile, true)
        }
        Some(ProfileFrom::Cluster) => {
            let input = Input { file: None, ..profile_input(config) };
            (super::profile::taken(&input)?.0.profile, true)
        }
    };
    let mut lifecycle = config.lifecycle.clone();
    lifecycle.kube_version = lifecycle.kube_version.or(profile.kube_version);
    let pod = if taken { profile.settings } else { None };
    if !taken {
        lifecycle.file = lifecycle.file.or(profile.settings);
    }
    let settings = lifecycle.settings(lifecycle.kube_version, pod.as_ref());
    // What is not known of the cluster, said once (docs/audit.md, "Rendered manifests").
    let source = settings.sources.node_monitor_grace_period;
    let grace_from = match source {
        SettingSource::File if profile.settings.is_some() => "from --profile",
        other => from_words(other),
    };
    let mut assumed = Vec::new();
    let grace = settings.flags.node_monitor_grace_period.as_secs();
    match (source, lifecycle.kube_version) {
        (SettingSource::Default, Some(minor)) => assumed.push(format!(
            "a {grace}s grace period (kube-controller-manager 1.{minor}'s default; give --node-monitor-grace-period)"
        )),
        (SettingSource::Default, None) => assumed.push(format!(
            "a {grace}s grace period (kube-controller-manager 1.{}'s default; give --kube-version, \
             --node-monitor-grace-period)",
            crate::config::DEFAULT_MINOR
        )),
        _ => {}
    }
    if profile.admission.is_none() {
        assumed.push("the API server's 300s default tolerations".to_owned());
    }
    match (profile.zones.is_none(), budgets.is_empty()) {
        (true, true) => assumed.push("zones not known (replicas-in-one-zone is not checked)".to_owned()),
        (true, false) => assumed
            .push("zones not known (replicas-in-one-zone is not checked; budgets face one node's outage)".to_owned()),
        (false, _) => {}
    }
    if !assumed.is_empty() {
        eprintln!("warning: assumed of the cluster the manifests will run on: {}", assumed.join(", "));
    }
    let cluster = Cluster {
        flags: settings.flags,
        admission: profile.admission.unwrap_or_default(),
        zones: profile.zone_count(),
        nodes: profile.node_count(),
    };
    let templates: Vec<_> = manifests.iter().map(|(_, manifest, _)| manifest.template.clone()).collect();
    let read_budgets: Vec<_> = budgets.iter().map(|(_, budget, _)| budget.budget.clone()).collect();
    let findings = manifest_findings(&templates, &read_budgets, &cluster);
    let checked: Vec<Checked<'_>> = findings
        .into_iter()
        .map(|finding| {
            let (file, manifest, source) = &manifests[finding.template];
            match finding.budget.map(|breach| &budgets[breach.budget]) {
                Some((file, budget, source)) => {
                    let written = budget_written(file, budget, source.as_deref());
                    Checked { finding, template: &manifest.template, budget: Some(&budget.budget), written }
                }
                None => {
                    let written = written(file, manifest, source.as_deref(), finding.rule, finding.toleration);
                    Checked { finding, template: &manifest.template, budget: None, written }
                }
            }
        })
        .collect();
    let fail_count = config.fail_on.map(|severity| checked.iter().filter(|c| c.finding.severity >= severity).count());
    let report = ManifestAudit {
        findings: checked,
        settings,
        grace_from,
        templates: manifests.len(),
        budgets: budgets.len(),
        files: sources.len(),
        skipped,
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    match config.format {
        AuditOutput::Table => write_text(&report, config.summary, config.color, &mut out)?,
        AuditOutput::Json => write_json(&ManifestAuditDoc::new(&report), &mut out)?,
        AuditOutput::Yaml => write_yaml(&ManifestAuditDoc::new(&report), &mut out)?,
        AuditOutput::Sarif => write_json(&sarif(&report, env!("CARGO_PKG_VERSION")), &mut out)?,
    }
    out.flush()?;
    match (config.fail_on, fail_count) {
        (Some(severity), Some(count)) if count > 0 => Err(Error::Findings { count, severity: severity.as_str() }),
        _ => Ok(()),
    }
}
