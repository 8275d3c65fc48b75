//! Running the real binary, and reading the test data (`tests/data/`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What a run of the binary produced.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// The binary, with an environment that cannot leak into results.
pub fn command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kubectl-taint_evict"));
    // No kubeconfig of the machine's may leak in: HOME points at an empty directory.
    let home = std::env::temp_dir().join("taint-evict-test-home");
    std::fs::create_dir_all(&home).expect("an empty HOME");
    command
        .env_remove("KUBECONFIG")
        .env_remove("COLUMNS")
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("HOME", home)
        .current_dir(repo());
    command
}

/// Runs the binary with `args`, feeding `stdin`.
pub fn run(args: &[&str], stdin: Option<&[u8]>) -> Run {
    run_command(command().args(args), stdin)
}

pub fn run_command(command: &mut Command, stdin: Option<&[u8]>) -> Run {
    let mut child = command
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    if let Some(bytes) = stdin {
        child.stdin.take().expect("piped stdin").write_all(bytes).expect("stdin accepts the input");
    }
    let output = child.wait_with_output().expect("the binary finishes");
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).expect("UTF-8 stdout"),
        stderr: String::from_utf8(output.stderr).expect("UTF-8 stderr"),
    }
}

/// The repository's root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A file of the test data copied from the specification (`tests/data/`).
pub fn data(path: &str) -> PathBuf {
    repo().join("tests").join("data").join(path)
}

/// Parses an RFC 3339 instant into nanoseconds since the epoch.
pub fn instant(text: &str) -> i128 {
    text.parse::<jiff::Timestamp>().unwrap_or_else(|e| panic!("{text:?} is not RFC 3339: {e}")).as_nanosecond()
}

/// A fresh scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("taint-evict-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// Reads a JSON file.
pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A live `plan -o json` without its `"read"` and `"contentType"` fields, which must say `read`
/// (`watch-cache` or `quorum`) and what the answers came in: the document a dump of the same
/// objects gives.
pub fn as_from_dump(live: &str, read: &str) -> String {
    let field = format!(",\n  \"read\": \"{read}\"");
    assert!(live.contains(&field), "a live plan says it was read from {read}: {live}");
    let live = live.replacen(&field, "", 1);
    let content_type =
        ["protobuf", "json"].iter().map(|t| format!(",\n  \"contentType\": \"{t}\"")).find(|f| live.contains(f));
    let content_type = content_type.unwrap_or_else(|| panic!("a live plan says what it was answered in: {live}"));
    live.replacen(&content_type, "", 1)
}
