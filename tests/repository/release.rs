//! `scripts/release`: reproducible archives, their sums, and installing one the way krew does.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{repo, scratch};

/// The instant every archive of these tests is dated at.
const EPOCH: &str = "1700000000";

/// Runs `scripts/release` with `args` and a fixed `SOURCE_DATE_EPOCH`; returns (exit code, stdout, stderr).
pub fn release(args: &[&str]) -> (i32, String, String) {
    let output = Command::new("bash")
        .arg(repo().join("scripts/release"))
        .args(args)
        .env("SOURCE_DATE_EPOCH", EPOCH)
        .current_dir(repo())
        .output()
        .expect("bash runs scripts/release");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stdout).expect("UTF-8 stdout"),
        String::from_utf8(output.stderr).expect("UTF-8 stderr"),
    )
}

/// Archives `binary` as `target`'s release archive into `dir`; returns the archive's path.
pub fn archive(target: &str, binary: &Path, dir: &Path) -> PathBuf {
    let (code, stdout, stderr) = release(&["archive", target, path_str(binary), path_str(dir)]);
    assert_eq!(code, 0, "scripts/release archive {target}: {stderr}");
    PathBuf::from(stdout.trim())
}

/// Renders the manifest from the archives in `dir`; returns it parsed.
pub fn render(dir: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["manifest", path_str(dir)];
    args.extend_from_slice(extra);
    let (code, _, stderr) = release(&args);
    assert_eq!(code, 0, "scripts/release manifest: {stderr}");
    let path = dir.join("taint-evict.yaml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    // Fixed: the manifest opened with the template's comment, "A krew-release-bot template, not a manifest".
    assert!(text.starts_with("apiVersion: "), "{}", text.lines().next().unwrap_or_default());
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{} is not YAML: {e}\n{text}", path.display()))
}

/// A tiny file standing in for a binary, where only the packaging is under test.
pub fn stand_in_binary(dir: &Path) -> PathBuf {
    let path = dir.join("stand-in");
    std::fs::write(&path, "#!/bin/sh\necho stand-in\n").expect("stand-in binary");
    path
}

/// The archive's member names, in archive order.
pub fn members(archive: &Path) -> Vec<String> {
    let output = if path_str(archive).ends_with(".zip") {
        Command::new("unzip").arg("-Z1").arg(archive).output().expect("unzip runs")
    } else {
        Command::new("tar").arg("-tzf").arg(archive).output().expect("tar runs")
    };
    assert!(output.status.success(), "listing {}: {}", archive.display(), String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("UTF-8 listing").lines().map(str::to_owned).collect()
}

/// The SHA-256 of a file, as `sha256sum` prints it.
pub fn sha256(path: &Path) -> String {
    let output = Command::new("sha256sum").arg(path).output().expect("sha256sum runs");
    assert!(output.status.success(), "sha256sum {}", path.display());
    String::from_utf8(output.stdout).expect("UTF-8").split_whitespace().next().expect("a sum").to_owned()
}

pub fn path_str(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

#[test]
fn archives_are_byte_identical_when_made_twice_from_the_same_inputs() {
    let dir = scratch("release-twice");
    let binary = stand_in_binary(&dir);
    for target in ["x86_64-unknown-linux-musl", "x86_64-pc-windows-gnu"] {
        let first = std::fs::read(archive(target, &binary, &dir.join("first"))).expect("first archive");
        // Another mtime on the binary must not show in the archive.
        let touched = Command::new("touch").args(["-d", "@86400"]).arg(&binary).status().expect("touch runs");
        assert!(touched.success());
        let second = std::fs::read(archive(target, &binary, &dir.join("second"))).expect("second archive");
        assert!(first == second, "the two {target} archives differ");
    }
}

#[test]
fn tar_archive_holds_the_binary_and_license_at_top_level_owned_by_root_at_the_fixed_time() {
    let dir = scratch("release-tar-listing");
    let path = archive("x86_64-unknown-linux-musl", &stand_in_binary(&dir), &dir);
    assert!(path.ends_with("kubectl-taint_evict-x86_64-unknown-linux-musl.tar.gz"), "{}", path.display());
    let output = Command::new("tar")
        .args(["--numeric-owner", "--full-time", "-tvzf"])
        .arg(&path)
        .env("TZ", "UTC")
        .output()
        .expect("tar runs");
    let listing = String::from_utf8(output.stdout).expect("UTF-8");
    let lines: Vec<Vec<&str>> = listing.lines().map(|l| l.split_whitespace().collect()).collect();
    let names: Vec<&str> = lines.iter().map(|l| l[5]).collect();
    assert_eq!(names, ["LICENSE", "kubectl-taint_evict"], "{listing}");
    for line in &lines {
        assert_eq!(line[1], "0/0", "{listing}");
        assert_eq!(format!("{} {}", line[3], line[4]), "2023-11-14 22:13:20", "{listing}");
    }
    assert_eq!((lines[0][0], lines[1][0]), ("-rw-r--r--", "-rwxr-xr-x"), "{listing}");
}

#[test]
fn windows_archive_is_a_zip_holding_the_exe_and_license() {
    let dir = scratch("release-zip-listing");
    let path = archive("x86_64-pc-windows-gnu", &stand_in_binary(&dir), &dir);
    assert!(path.ends_with("kubectl-taint_evict-x86_64-pc-windows-gnu.zip"), "{}", path.display());
    assert_eq!(members(&path), ["LICENSE", "kubectl-taint_evict.exe"]);
}

#[test]
fn sha256sums_lists_every_archive_in_the_format_sha256sum_checks() {
    let dir = scratch("release-sums");
    let binary = stand_in_binary(&dir);
    let out = dir.join("dist");
    let tar = archive("x86_64-unknown-linux-musl", &binary, &out);
    let zip = archive("x86_64-pc-windows-gnu", &binary, &out);
    render(&out, &[]);
    let sums = std::fs::read_to_string(out.join("SHA256SUMS")).expect("SHA256SUMS");
    assert_eq!(
        sums,
        format!(
            "{}  kubectl-taint_evict-x86_64-pc-windows-gnu.zip\n{}  kubectl-taint_evict-x86_64-unknown-linux-musl.tar.gz\n",
            sha256(&zip),
            sha256(&tar)
        )
    );
    let check = Command::new("sha256sum").args(["--check", "--strict", "SHA256SUMS"]).current_dir(&out).output();
    assert!(check.expect("sha256sum runs").status.success());
}

#[test]
fn release_refuses_a_tag_that_is_not_the_crate_version() {
    let dir = scratch("release-wrong-tag");
    archive("x86_64-unknown-linux-musl", &stand_in_binary(&dir), &dir);
    let (code, _, stderr) = release(&["manifest", path_str(&dir), "--tag", "v999.0.0"]);
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        format!(
            "release: tag v999.0.0 does not match Cargo.toml's version {0}: tag v{0}, or bump the version\n",
            env!("CARGO_PKG_VERSION")
        )
    );
}

#[test]
fn release_with_all_platforms_refuses_to_render_a_manifest_with_missing_archives() {
    let dir = scratch("release-missing");
    archive("x86_64-unknown-linux-musl", &stand_in_binary(&dir), &dir);
    let (code, _, stderr) = release(&["manifest", path_str(&dir), "--all-platforms"]);
    assert_eq!(code, 1);
    assert!(stderr.starts_with("release: no archive in ") && stderr.contains("darwin/arm64"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!dir.join("taint-evict.yaml").exists());
}

#[test]
fn release_answers_wrong_arguments_with_one_line_and_a_failure() {
    let (code, stdout, stderr) = release(&["--bogus"]);
    assert_eq!((code, stdout.as_str()), (1, ""));
    assert_eq!(stderr, "release: unknown argument --bogus: see scripts/release --help\n");
}

/// This machine's platform in krew's words (Go's GOOS/GOARCH).
fn host_platform() -> (&'static str, &'static str) {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    (os, arch)
}

/// Does what `kubectl krew install --manifest=M --archive=A` does on unix: pick the platform matching this
/// machine, check the archive's sum, unpack it, apply `files`, and link `bin` into `$KREW_ROOT/bin`.
fn krew_install(manifest: &serde_json::Value, archive: &Path, krew_root: &Path) -> PathBuf {
    let (os, arch) = host_platform();
    let platform = manifest["spec"]["platforms"]
        .as_array()
        .expect("platforms")
        .iter()
        .find(|p| p["selector"]["matchLabels"]["os"] == os && p["selector"]["matchLabels"]["arch"] == arch)
        .unwrap_or_else(|| panic!("no platform for {os}/{arch}"));
    assert_eq!(platform["sha256"], sha256(archive), "the archive's sum is not the manifest's");

    let staging = krew_root.join("staging");
    std::fs::create_dir_all(&staging).expect("staging directory");
    let unpacked = Command::new("tar").arg("-xzf").arg(archive).arg("-C").arg(&staging).status().expect("tar runs");
    assert!(unpacked.success());

    let name = manifest["metadata"]["name"].as_str().expect("name");
    let version = manifest["spec"]["version"].as_str().expect("version");
    let install = krew_root.join("store").join(name).join(version);
    for op in platform["files"].as_array().expect("files") {
        let from = op["from"].as_str().expect("from");
        let to = match op["to"].as_str().expect("to") {
            "." => install.clone(),
            to => install.join(to),
        };
        std::fs::create_dir_all(&to).expect("install directory");
        std::fs::rename(staging.join(from), to.join(from)).unwrap_or_else(|e| panic!("moving {from}: {e}"));
    }
    let bin = platform["bin"].as_str().expect("bin");
    let bin_dir = krew_root.join("bin");
    std::fs::create_dir_all(&bin_dir).expect("bin directory");
    // krew names the link after the plugin: kubectl-<name with dashes as underscores>.
    let link = bin_dir.join(format!("kubectl-{}", name.replace('-', "_")));
    std::os::unix::fs::symlink(install.join(bin), &link).expect("symlink");
    link
}

#[test]
fn linux_archive_installs_the_way_krew_installs_it_and_kubectl_finds_the_plugin() {
    let dir = scratch("release-install");
    let target = match host_platform() {
        ("linux", "amd64") => "x86_64-unknown-linux-musl",
        ("linux", "arm64") => "aarch64-unknown-linux-musl",
        other => panic!("this test installs a Linux archive, and this machine is {other:?}"),
    };
    let out = dir.join("dist");
    // The suite's own build stands in for the release build: the packaging is what is under test.
    let archive = archive(target, Path::new(env!("CARGO_BIN_EXE_kubectl-taint_evict")), &out);
    let manifest = render(&out, &[]);

    let krew_root = dir.join("krew");
    let link = krew_install(&manifest, &archive, &krew_root);
    assert!(
        krew_root.join("store/taint-evict").join(format!("v{}", env!("CARGO_PKG_VERSION"))).join("LICENSE").is_file()
    );

    let version = Command::new(&link).arg("--version").output().expect("the installed plugin runs");
    assert!(version.status.success());
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("kubectl-taint_evict {}", env!("CARGO_PKG_VERSION"))
    );

    let kubectl = which("kubectl").expect("kubectl is not on PATH: install kubectl to run this test");
    let path = format!("{}:{}", krew_root.join("bin").display(), kubectl.parent().expect("a directory").display());
    let list = Command::new(&kubectl)
        .args(["plugin", "list", "--name-only"])
        .env("PATH", path)
        .env("HOME", &dir)
        .output()
        .expect("kubectl runs");
    let stdout = String::from_utf8_lossy(&list.stdout);
    assert!(
        stdout.lines().any(|l| l.trim() == "kubectl-taint_evict"),
        "kubectl plugin list does not show the plugin:\n{stdout}\n{}",
        String::from_utf8_lossy(&list.stderr)
    );
    // The copies of the debug binary are large.
    let _ = std::fs::remove_dir_all(&dir);
}

fn which(tool: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).map(|dir| dir.join(tool)).find(|path| path.is_file())
}
