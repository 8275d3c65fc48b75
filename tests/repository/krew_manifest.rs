//! `krew-manifest.yaml` is a krew-release-bot template; rendered by `scripts/release`, it passes the checks
//! krew and krew-index make (`validate-krew-manifest`, `kubectl krew install --manifest --archive`).

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::repository::release::{archive, members, render, sha256, stand_in_binary};
use crate::util::{repo, scratch};

/// The platforms published, as krew's `os/arch` selectors.
const PLATFORMS: [&str; 5] = ["darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64", "windows/amd64"];

fn template() -> String {
    std::fs::read_to_string(repo().join("krew-manifest.yaml")).expect("krew-manifest.yaml")
}

/// The archive names of the template's `addURIAndSha` lines, in order.
pub fn template_archives() -> Vec<String> {
    template()
        .lines()
        .filter(|line| line.contains("addURIAndSha"))
        .map(|line| {
            let uri = line.split('"').nth(1).unwrap_or_else(|| panic!("no quoted URI in {line:?}"));
            uri.rsplit('/').next().expect("a file name").to_owned()
        })
        .collect()
}

/// The Rust target an archive is built for: `kubectl-taint_evict-<target>.tar.gz` or `.zip`.
pub fn archive_target(archive: &str) -> &str {
    let name = archive.strip_prefix("kubectl-taint_evict-").unwrap_or_else(|| panic!("{archive} has no prefix"));
    name.strip_suffix(".tar.gz").or_else(|| name.strip_suffix(".zip")).unwrap_or_else(|| panic!("{archive}"))
}

#[test]
fn template_takes_version_and_uris_from_the_tag_and_carries_no_sums() {
    let text = template();
    assert!(text.contains("\n  version: {{ .TagName }}\n"), "spec.version is not {{{{ .TagName }}}}");
    let uri_lines: Vec<&str> = text.lines().filter(|l| l.contains("addURIAndSha")).collect();
    assert_eq!(uri_lines.len(), PLATFORMS.len());
    for line in uri_lines {
        assert!(
            line.trim_start().starts_with("{{ addURIAndSha \"https://github.com/kubectl-taint-evict/kubectl-taint-evict/releases/download/{{ .TagName }}/")
                && line.ends_with("\" .TagName }}"),
            "{line}"
        );
    }
    // Only the two forms scripts/release renders as krew-release-bot does.
    let other = text.replace("{{ .TagName }}", "").replace("{{ addURIAndSha \"", "").replace("\" .TagName }}", "");
    assert!(!other.contains("{{") && !other.contains("}}"), "template syntax scripts/release cannot render");
    assert!(!text.contains("sha256"), "the template must not carry sums: the release computes them");
    assert!(!text.contains("uri:"), "every uri must come from addURIAndSha");
}

#[test]
fn template_version_cannot_drift_from_cargo_toml() {
    // The template has no version of its own: the tag gives it, and the release refuses a tag that is
    // not `v` + Cargo.toml's version (tested in release.rs). What could drift is a hard-coded one.
    let text = template();
    assert!(!text.contains("download/v"), "a hard-coded version in a URI");
    assert!(!text.lines().any(|l| l.trim_start().starts_with("version: v")), "a hard-coded spec.version");
    // `cargo build --locked` in the release fails if Cargo.lock still names another version.
    let lock = std::fs::read_to_string(repo().join("Cargo.lock")).expect("Cargo.lock");
    let entry = format!("name = \"kubectl-taint-evict\"\nversion = \"{}\"\n", env!("CARGO_PKG_VERSION"));
    assert!(lock.contains(&entry), "Cargo.lock's kubectl-taint-evict is not {}", env!("CARGO_PKG_VERSION"));

    let dir = scratch("krew-version");
    archive("x86_64-unknown-linux-musl", &stand_in_binary(&dir), &dir);
    let manifest = render(&dir, &[]);
    assert_eq!(manifest["spec"]["version"], format!("v{}", env!("CARGO_PKG_VERSION")));
}

/// krew's `semver.Parse` after its `v` check: `v` MAJOR.MINOR.PATCH, numbers without leading zeros, an
/// optional `-pre-release` and `+build`.
fn is_v_semver(version: &str) -> bool {
    let Some(rest) = version.strip_prefix('v') else { return false };
    let (rest, build) = rest.split_once('+').map_or((rest, None), |(r, b)| (r, Some(b)));
    let (core, pre) = rest.split_once('-').map_or((rest, None), |(c, p)| (c, Some(p)));
    let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    let ident = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|p| number(p))
        && pre.is_none_or(|p| p.split('.').all(ident))
        && build.is_none_or(|b| b.split('.').all(ident))
}

#[test]
fn semver_check_accepts_what_krew_accepts() {
    for good in ["v0.1.0", "v1.2.3-rc.1", "v10.0.0+build.5"] {
        assert!(is_v_semver(good), "{good}");
    }
    for bad in ["0.1.0", "v1.2", "v01.2.3", "v1.2.3-", "v1.2.x", "{{ .TagName }}"] {
        assert!(!is_v_semver(bad), "{bad}");
    }
}

fn text<'a>(value: &'a Value, what: &str) -> &'a str {
    value.as_str().unwrap_or_else(|| panic!("{what} is not a string: {value}"))
}

/// krew's ValidatePlugin and validatePlatform (internal/index/validation/validate.go), plus what
/// `krew install --archive` needs: every `from` in the archive, `bin` among the installed files.
fn assert_krew_valid(manifest: &Value, dir: &Path) {
    assert_eq!(manifest["apiVersion"], "krew.googlecontainertools.github.com/v1alpha2");
    assert_eq!(manifest["kind"], "Plugin");
    let name = text(&manifest["metadata"]["name"], "metadata.name");
    assert_eq!(name, "taint-evict");
    assert!(name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'), "unsafe plugin name");
    let spec = &manifest["spec"];
    let short = text(&spec["shortDescription"], "shortDescription");
    assert!(!short.is_empty() && !short.contains(['\r', '\n']), "shortDescription: {short:?}");
    // `krew search` shows 50 characters.
    assert!(short.chars().count() <= 50, "shortDescription is {} characters: {short:?}", short.chars().count());
    assert!(!text(&spec["description"], "description").trim().is_empty());
    assert!(text(&spec["homepage"], "homepage").starts_with("https://"));
    let version = text(&spec["version"], "version");
    assert!(is_v_semver(version), "version {version} is not v-prefixed semver");

    let platforms = spec["platforms"].as_array().expect("platforms");
    let mut selectors = BTreeSet::new();
    for platform in platforms {
        let labels = platform["selector"]["matchLabels"].as_object().expect("selector.matchLabels");
        assert!(!labels.is_empty() && labels.keys().all(|k| k == "os" || k == "arch"), "selector {labels:?}");
        let os = text(&labels["os"], "os");
        let selector = format!("{os}/{}", text(&labels["arch"], "arch"));
        assert!(selectors.insert(selector.clone()), "two platforms select {selector}");

        let uri = text(&platform["uri"], "uri");
        let prefix = format!("https://github.com/kubectl-taint-evict/kubectl-taint-evict/releases/download/{version}/");
        let archive = uri.strip_prefix(&prefix).unwrap_or_else(|| panic!("{selector}: uri {uri}"));
        let path = dir.join(archive);
        let sum = text(&platform["sha256"], "sha256");
        assert!(sum.len() == 64 && sum.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)), "{sum}");
        assert_eq!(sum, sha256(&path), "{selector}: sha256 is not the archive's");

        let bin = text(&platform["bin"], "bin");
        assert_eq!(bin.ends_with(".exe"), os == "windows", "{selector}: bin {bin}");
        let listed = members(&path);
        let files = platform["files"].as_array().expect("files");
        assert!(!files.is_empty());
        let mut installed = Vec::new();
        for op in files {
            let (from, to) = (text(&op["from"], "from"), text(&op["to"], "to"));
            assert!(listed.iter().any(|m| m == from), "{selector}: {from} is not in {archive}: {listed:?}");
            assert_eq!(to, ".", "{selector}: files go to the install directory's top level");
            installed.push(from);
        }
        assert!(installed.contains(&bin), "{selector}: bin {bin} is not among the files");
        assert!(installed.contains(&"LICENSE"), "{selector}: krew-index wants the LICENSE installed");
    }
    assert_eq!(selectors.into_iter().collect::<Vec<_>>(), PLATFORMS);
}

#[test]
fn rendered_manifest_passes_krews_validation_rules_for_every_platform() {
    let dir = scratch("krew-rules");
    let binary = stand_in_binary(&dir);
    let dist = dir.join("dist");
    for name in template_archives() {
        let made = archive(archive_target(&name), &binary, &dist);
        assert!(made.ends_with(&name), "{} is not named as the manifest expects ({name})", made.display());
    }
    let manifest = render(&dist, &["--all-platforms"]);
    assert_krew_valid(&manifest, &dist);
}
