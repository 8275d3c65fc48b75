//! Every example of the README and of `docs/` is a test.
//!
//! Offline: each `console` block's `$ kubectl taint-evict …` line that reads a file of this repository
//! (`-f examples/…`, `-f tests/data/…`, a file or a directory) is run, and what it prints is compared with the page, stdout
//! and stderr (`warning:`, `error:` and `hint:` lines; all of a failure's), and its exit code with a
//! following `$ echo $?`; a last line `…` shows only the beginning.
//!
//! Live: the others run against the README's own fake cluster (`examples/fake_cluster.rs` with
//! `examples/incident.json`, a node tainted as the page says), on a pseudo-terminal or through a pipe as
//! the page shows them, and are compared with times, durations and ports put in words. An error of
//! another cluster is the test the page's table of errors names; the incident walkthrough is compared
//! by the real-control-plane test that ran it (`tests/real_apiserver/lifecycle.rs`).

use std::path::Path;

use crate::support::terminal::Pty;
use crate::util::{command, repo, run_command};

/// The README and every page of `docs/`, by their path in the repository, with their text.
pub(crate) fn pages() -> Vec<(String, String)> {
    let mut paths = vec!["README.md".to_owned()];
    let mut docs: Vec<String> = std::fs::read_dir(repo().join("docs"))
        .expect("docs/")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .map(|path| format!("docs/{}", path.file_name().and_then(|n| n.to_str()).expect("a UTF-8 name")))
        .collect();
    docs.sort();
    paths.extend(docs);
    paths.into_iter().map(|path| (path.clone(), std::fs::read_to_string(repo().join(&path)).expect("a page"))).collect()
}

/// One example: the command line, what the page shows under it, and the exit code it shows.
pub(crate) struct Example {
    pub(crate) line: usize,
    pub(crate) command: String,
    pub(crate) shown: Vec<String>,
    pub(crate) code: i32,
}

/// The examples of `markdown` (line numbers from 1); a command line ending in `\` goes on on the next.
pub(crate) fn examples(markdown: &str) -> Vec<Example> {
    let mut examples: Vec<Example> = Vec::new();
    let mut in_console = false;
    let mut continued = false;
    for (number, text) in markdown.lines().enumerate() {
        if text.starts_with("```") {
            in_console = text == "```console";
            continue;
        }
        if !in_console {
            continue;
        }
        if continued && let Some(last) = examples.last_mut() {
            let text = text.trim();
            continued = text.ends_with('\\');
            last.command.push(' ');
            last.command.push_str(text.trim_end_matches('\\').trim_end());
            continue;
        }
        if let Some(command) = text.strip_prefix("$ ") {
            continued = command.ends_with('\\');
            let command = command.trim_end_matches('\\').trim_end();
            if command == "echo $?" {
                if let Some(last) = examples.last_mut() {
                    last.code = -1;
                }
                continue;
            }
            examples.push(Example { line: number + 1, command: command.to_owned(), shown: Vec::new(), code: 0 });
        } else if let Some(last) = examples.last_mut() {
            if last.code == -1 {
                last.code = text.trim().parse().unwrap_or_else(|_| panic!("line {}: not an exit code", number + 1));
            } else {
                last.shown.push(text.to_owned());
            }
        }
    }
    // A blank line between examples in one block is the page's, not the output's.
    for example in &mut examples {
        while example.shown.last().is_some_and(|line| line.is_empty()) {
            example.shown.pop();
        }
    }
    examples
}

/// The arguments, `COLUMNS` and `| head -N` of an offline example, or `None` for a live one.
fn offline(command: &str) -> Option<(Vec<String>, Option<&str>, Option<usize>)> {
    let (columns, rest) = match command.strip_prefix("COLUMNS=") {
        Some(rest) => {
            let (value, rest) = rest.split_once(' ')?;
            (Some(value), rest)
        }
        None => (None, command),
    };
    let rest = rest.strip_prefix("kubectl taint-evict ")?;
    let (rest, head) = match rest.split_once(" | head -") {
        Some((rest, n)) => (rest, Some(n.parse().ok()?)),
        None => (rest, None),
    };
    let args = shell_words(rest)?;
    // A file given with `-f`, or the record `review` reads.
    let file = match args.first().map(String::as_str) {
        Some("review") => args.get(1),
        _ => args.iter().position(|a| a == "-f").and_then(|i| args.get(i + 1)),
    }?;
    repo().join(file).exists().then_some((args, columns, head))
}

/// The words of a command line as a shell splits them: on white space, but not inside `'…'` (a
/// template's braces and spaces); `None` for an unclosed quote.
fn shell_words(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                word.get_or_insert_with(String::new);
            }
            c if c.is_whitespace() && !quoted => words.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    (!quoted).then_some(words)
}

#[test]
fn every_offline_example_of_the_docs_prints_what_the_page_shows() {
    let mut ran = 0;
    let mut wrong = Vec::new();
    for (page, text) in pages() {
        for example in examples(&text) {
            let Some((args, columns, head)) = offline(&example.command) else { continue };
            let mut binary = command();
            binary.current_dir(repo()).args(&args);
            if let Some(columns) = columns {
                binary.env("COLUMNS", columns);
            }
            let result = run_command(&mut binary, None);
            ran += 1;
            // A failure prints on stderr only; a success its diagnostics there, and so does `audit
            // --fail-on` ending with 3 (docs/errors.md): its audit is on stdout.
            let is_diagnostic = |line: &&String| {
                ![0, 3].contains(&example.code)
                    || ["warning: ", "error: ", "hint: "].iter().any(|p| line.starts_with(p))
            };
            let (stderr, stdout): (Vec<&String>, Vec<&String>) = example.shown.iter().partition(is_diagnostic);
            let mut printed: Vec<&str> = result.stdout.lines().collect();
            let mut shown: Vec<&str> = stdout.iter().map(|line| line.as_str()).collect();
            // A last line `…` says the page shows the beginning only.
            let cut = if shown.last() == Some(&"…") {
                shown.pop();
                Some(shown.len())
            } else {
                None
            };
            if let Some(n) = head.or(cut) {
                printed.truncate(n);
            }
            let diagnostics: Vec<&str> = result.stderr.lines().collect();
            let shown_diagnostics: Vec<&str> = stderr.iter().map(|line| line.as_str()).collect();
            if printed != shown || diagnostics != shown_diagnostics || result.code != example.code {
                wrong.push(format!(
                    "{page}:{}: $ {}\n--- the page shows (exit {}):\n{}\n{}\n--- it prints (exit {}):\n{}\n{}",
                    example.line,
                    example.command,
                    example.code,
                    shown.join("\n"),
                    shown_diagnostics.join("\n"),
                    result.code,
                    printed.join("\n"),
                    result.stderr.trim_end()
                ));
            }
        }
    }
    assert!(ran >= 10, "only {ran} offline examples found: is the page's format what this test reads?");
    assert!(wrong.is_empty(), "{} of {ran} examples differ:\n\n{}", wrong.len(), wrong.join("\n\n"));
}

#[test]
fn examples_are_read_from_console_blocks_with_their_exit_codes() {
    let page = "```console\n$ kubectl taint-evict plan worker-9 -f examples/incident.json\nerror: node\n$ echo $?\n1\n\n\
                $ kubectl taint-evict plan -f x.json | head -3\na\n```\n```text\n$ not this\n```\n";
    let found = examples(page);
    assert_eq!(found.len(), 2);
    assert_eq!((found[0].shown.clone(), found[0].code), (vec!["error: node".to_owned()], 1));
    assert!(offline(&found[0].command).is_some());
    assert!(offline(&found[1].command).is_none(), "x.json is no file of the repository");
    assert_eq!(
        shell_words("plan -o 'jsonpath={.a} {\"\\n\"}' -f x").expect("closed"),
        ["plan", "-o", "jsonpath={.a} {\"\\n\"}", "-f", "x"]
    );
    assert_eq!(shell_words("-o ''"), Some(vec!["-o".to_owned(), String::new()]));
    assert_eq!(shell_words("-o 'open"), None);
    assert!(Path::new(&repo()).join("README.md").is_file());
    assert!(pages().iter().any(|(page, _)| page == "docs/run.md"), "the docs' pages are read too");
}

// ---------------------------------------------------------------------------------------------------
// Live examples, against the README's own fake cluster
// ---------------------------------------------------------------------------------------------------

/// What the README says to type into the fake cluster before the live examples.
const TYPED: &str = "taint worker-1 node.kubernetes.io/unreachable";

/// `line` with what differs from run to run put in words: instants and times of day, durations and
/// countdowns, the fake server's port and directory.
pub(crate) fn masked(line: &str) -> String {
    use std::sync::LazyLock;
    static RULES: LazyLock<Vec<(regex::Regex, &str)>> = LazyLock::new(|| {
        [
            (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "<time>"),
            (r"\b\d\d:\d\d(:\d\d)?Z?\b", "<time>"),
            (r"\b\d+(ms|[dhms])( \d+(ms|[dhms]))*\b", "<duration>"),
            (r"127\.0\.0\.1:\d+", "127.0.0.1:<port>"),
            (r"taint-evict-fake-\d+", "taint-evict-fake-<pid>"),
        ]
        .into_iter()
        .map(|(pattern, word)| (regex::Regex::new(pattern).expect("a pattern"), word))
        .collect()
    });
    let line = RULES.iter().fold(line.to_owned(), |line, (rule, word)| rule.replace_all(&line, *word).into_owned());
    // A column is as wide as its widest cell, a countdown among them: spacing is not compared.
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `printed` shows what `shown` shows, `…` lines of the page standing for any lines; the
/// first shown line is the first printed, and without a last `…` the last shown is the last printed.
/// Within the lines between two `…`, order is free: deletions done at once finish in any order.
/// `run`'s `foreseen` lines come from a watch of their own, in no fixed order with the others, and so
/// does the warning that the controller's settings are assumed, said with the first of them (with the
/// rows it wraps to): those the page shows must be printed, anywhere.
pub(crate) fn shows(printed: &[String], shown: &[String]) -> bool {
    // Told apart before masking, which closes up the columns.
    let foreseen = |line: &String| {
        line.contains("  foreseen  ") || line.contains("the node lifecycle controller's settings are assumed")
    };
    let all: Vec<String> = printed.iter().map(|l| masked(l)).collect();
    if !shown.iter().filter(|l| foreseen(l)).all(|l| all.contains(&masked(l))) {
        return false;
    }
    // The warning is longer than any row: a row after it that starts no line (no time, no summary)
    // continues it.
    let continues = |line: &String| {
        !(line.starts_with(|c: char| c.is_ascii_digit()) || line.starts_with("──") || line.starts_with("  "))
    };
    let mut wrapped = false;
    let printed: Vec<String> = printed
        .iter()
        .filter(|l| {
            let apart = foreseen(l) || (wrapped && continues(l));
            wrapped = apart && !l.contains("  foreseen  ");
            !apart
        })
        .map(|l| masked(l))
        .collect();
    let shown: Vec<String> = shown.iter().filter(|l| !foreseen(l)).cloned().collect();
    let parts: Vec<Vec<String>> =
        shown.split(|l| l == "…").map(|part| part.iter().map(|l| masked(l)).collect()).collect();
    let open_end = shown.last().is_some_and(|l| l == "…");
    // Lines in any order within a run of lines (deletions done at once finish in any order).
    let same = |window: &[String], part: &[String]| {
        let (mut window, mut part) = (window.to_vec(), part.to_vec());
        window.sort();
        part.sort();
        window == part
    };
    let mut at = 0;
    for (i, part) in parts.iter().enumerate() {
        if part.is_empty() {
            continue;
        }
        let fits = |from: usize| printed.get(from..from + part.len()).is_some_and(|window| same(window, part));
        let found = if i == 0 { fits(0).then_some(0) } else { (at..printed.len()).find(|&from| fits(from)) };
        let Some(from) = found else { return false };
        at = from + part.len();
    }
    open_end || at == printed.len()
}

/// The README's fake cluster (`cargo run --example fake_cluster -- examples/incident.json`), as built
/// beside the tests, and what it printed first.
struct FakeCluster {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    kubeconfig: String,
    printed: Vec<String>,
}

impl FakeCluster {
    fn start() -> Self {
        use std::io::BufRead;
        let exe = std::env::current_exe().expect("the test binary");
        let example = exe.parent().and_then(Path::parent).expect("the target directory").join("examples/fake_cluster");
        assert!(example.is_file(), "{} is not built (cargo builds examples with the tests)", example.display());
        let mut child = std::process::Command::new(example)
            .arg("examples/incident.json")
            .current_dir(repo())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("the fake cluster starts");
        let stdin = child.stdin.take().expect("stdin");
        let mut lines = std::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
        let printed: Vec<String> = lines.by_ref().take(3).map(|l| l.expect("a line")).collect();
        let kubeconfig = printed
            .iter()
            .find_map(|l| l.strip_prefix("export KUBECONFIG="))
            .unwrap_or_else(|| panic!("no KUBECONFIG in {printed:?}"))
            .to_owned();
        std::thread::spawn(move || lines.map_while(Result::ok).for_each(drop));
        Self { child, stdin, kubeconfig, printed }
    }

    fn type_line(&mut self, line: &str) {
        use std::io::Write;
        writeln!(self.stdin, "{line}").expect("the fake cluster reads its input");
    }
}

impl Drop for FakeCluster {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the binary prints for a live example: on a pseudo-terminal as wide as the page's widest line
/// (at least 80 × 24; `run`'s as high as its log), or the first `head` lines of a pipe.
fn live_output(fake: &FakeCluster, example: &Example) -> (Vec<String>, Option<i32>) {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    const WAIT: Duration = Duration::from_secs(30);
    let rest = example.command.strip_prefix("kubectl taint-evict ").expect("a command of the plugin");
    let (rest, head) = match rest.split_once(" | head -") {
        Some((rest, n)) => (rest, Some(n.parse::<usize>().expect("a count"))),
        None => (rest, None),
    };
    let mut binary = command();
    binary.args(rest.split_whitespace()).env("KUBECONFIG", &fake.kubeconfig).stdin(Stdio::null());
    if let Some(head) = head {
        use std::io::BufRead;
        let mut child = binary.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("the binary starts");
        let stdout = child.stdout.take().expect("stdout");
        let lines: Vec<String> = std::io::BufReader::new(stdout).lines().take(head).map_while(Result::ok).collect();
        let _ = child.kill();
        let _ = child.wait();
        return (lines, None);
    }
    // A line is cut one column short of the width (the last column stays free).
    let columns = (example.shown.iter().map(|l| l.chars().count()).max().unwrap_or(0) + 1).max(80);
    // As many rows as a run prints, for the screen to hold all of it.
    let rows = if rest.starts_with("run ") { 200 } else { (example.shown.len() + 1).max(24) };
    let mut pty = Pty::open(u16::try_from(columns).expect("columns"), u16::try_from(rows).expect("rows"));
    let slave = pty.slave.take().expect("the terminal side");
    let mut child = binary
        .env_remove("LINES")
        .stderr(Stdio::from(slave.try_clone().expect("a second descriptor")))
        .stdout(Stdio::from(slave))
        .spawn()
        .expect("the binary starts");
    let deadline = Instant::now() + WAIT;
    let (mut screen, mut seen) = (Vec::new(), 0);
    while Instant::now() < deadline {
        let left = deadline.saturating_duration_since(Instant::now());
        let Some(now) = pty.wait_for_more(&mut seen, left) else { break };
        screen = now.text_rows();
        if shows(&screen, &example.shown) {
            break;
        }
    }
    let _ = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    let code = child.wait().expect("the binary ends").code();
    (screen, code)
}

#[test]
fn every_live_example_of_the_docs_prints_what_the_page_shows_against_their_fake_cluster() {
    let pages = pages();
    let typed = format!("`{TYPED}`");
    assert!(pages.iter().any(|(_, text)| text.contains(&typed)), "a page says what to type into the fake cluster");
    let mut fake = FakeCluster::start();
    fake.type_line(TYPED);
    let dir = crate::util::scratch("readme-live");
    let bin = crate::fake_api::complete_names::plugin_dir(&dir);
    let mut ran = 0;
    let mut wrong = Vec::new();
    for (page, text) in &pages {
        for example in examples(text) {
            // Offline examples are the test above's; an error of another cluster (RBAC, a context, a server
            // that cannot be reached) is the test the page's table of errors names; a dump of a real
            // control plane's incident is compared with the page by the test that made it
            // (`tests/real_apiserver/lifecycle.rs`).
            let elsewhere = offline(&example.command).is_some()
                || example.command.starts_with("kubectl get ")
                || example.command.contains(" -f ")
                || example.shown.first().is_some_and(|line| line.starts_with("error: "));
            if elsewhere {
                continue;
            }
            let (printed, code) =
                if example.command.starts_with("cargo run --example fake_cluster -- examples/incident.json") {
                    (fake.printed.clone(), None)
                } else if let Some(words) = example.command.strip_prefix("kubectl __complete ") {
                    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
                    let output = std::process::Command::new("kubectl")
                        .arg("__complete")
                        .args(words.split_whitespace().map(|w| if w == "\"\"" { "" } else { w }))
                        .env("PATH", path)
                        .env("HOME", &dir)
                        .env("KUBECONFIG", &fake.kubeconfig)
                        .output()
                        .expect("kubectl runs");
                    (String::from_utf8_lossy(&output.stdout).lines().map(str::to_owned).collect(), output.status.code())
                } else if example.command.starts_with("kubectl taint-evict ") {
                    live_output(&fake, &example)
                } else {
                    continue;
                };
            ran += 1;
            if !shows(&printed, &example.shown) || code.is_some_and(|code| code != 0) {
                wrong.push(format!(
                    "{page}:{}: $ {}\n--- the page shows:\n{}\n--- it prints (exit {code:?}):\n{}",
                    example.line,
                    example.command,
                    example.shown.join("\n"),
                    printed.join("\n")
                ));
            }
        }
    }
    assert!(ran >= 5, "only {ran} live examples found: is the page's format what this test reads?");
    assert!(wrong.is_empty(), "{} of {ran} live examples differ:\n\n{}", wrong.len(), wrong.join("\n\n"));
}

#[test]
fn masking_keeps_names_and_counts_and_hides_times_durations_and_ports() {
    assert_eq!(
        masked("2026-11-22T15:12:14Z  synced    2 nodes, 18 pods; in 4m 57s at 23:05:09Z on http://127.0.0.1:36817"),
        "<time> synced 2 nodes, 18 pods; in <duration> at <time> on http://127.0.0.1:<port>"
    );
    assert_eq!(masked("web/frontend-7d9c6b8f5-x2k4p 3d 14h 34m 11s"), "web/frontend-7d9c6b8f5-x2k4p <duration>");
    let printed: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
    let page = |lines: &[&str]| lines.iter().map(|l| (*l).to_owned()).collect::<Vec<_>>();
    assert!(shows(&printed, &page(&["a", "…", "c", "d"])));
    assert!(shows(&printed, &page(&["a", "b", "…"])));
    assert!(!shows(&printed, &page(&["a", "c", "…"])), "lines between are shown by `…` only");
    assert!(!shows(&printed, &page(&["a", "…", "c"])), "without a last `…`, the last line is the last printed");
    assert!(shows(&printed, &page(&["a", "…", "d", "c"])), "in any order between two `…`");
    // A `foreseen` line may come anywhere, as the page's may sit anywhere (it comes from a watch of its own).
    let foreseen = "2026-11-22T15:12:14Z  foreseen  node n1: held";
    let printed: Vec<String> = ["a", foreseen, "b"].map(String::from).to_vec();
    assert!(shows(&printed, &page(&["a", "b", foreseen])));
    assert!(!shows(&printed[..2], &page(&["a", foreseen, "b"])), "the lines around it still count");
    // So may the warning said with the first of them, shown or not.
    let assumed = "2026-11-22T15:12:14Z  warning the node lifecycle controller's settings are assumed at …";
    let (a, b) = ("2026-11-22T15:12:14Z  synced    a", "2026-11-22T15:12:14Z  synced    b");
    let printed: Vec<String> = [a, assumed, "-wrapped", " to here", b].map(String::from).to_vec();
    assert!(shows(&printed, &page(&[a, b])));
    assert!(!shows(&printed, &page(&[a, "-wrapped", b])), "its rows go with it");
}

#[test]
fn the_readme_synopsis_of_run_names_every_option_run_help_lists() {
    // Fixed: it left out --max-deletions, --max-deletions-window, --keep-last-ready, -n,
    // --leader-elect, --metrics-bind-address and --log-format.
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let start = readme.find("kubectl taint-evict run [").expect("the synopsis of run");
    let end = start + readme[start + 1..].find("kubectl taint-evict ").expect("the next synopsis") + 1;
    let synopsis = &readme[start..end];
    let help = crate::util::run(&["run", "--help"], None);
    assert_eq!(help.code, 0, "{}", help.stderr);
    let mut section = "";
    let mut missing = Vec::new();
    for line in help.stdout.lines() {
        if !line.starts_with(' ') && line.ends_with(':') {
            section = line;
            continue;
        }
        if !["Options:", "Run:", "Output:", "In-cluster:"].contains(&section) {
            continue;
        }
        let Some(flag) = line.split_whitespace().find(|word| word.starts_with("--")) else { continue };
        // `-n, --namespace` is named as `-n`; the lease's settings once, as `--leader-elect-…`.
        let short = line.split_whitespace().next().and_then(|word| word.strip_suffix(','));
        let named = match short {
            Some(short) => short,
            None if flag.starts_with("--leader-elect-") => "--leader-elect-…",
            None => flag,
        };
        if flag != "--help" && !synopsis.contains(&format!("[{named}")) && !synopsis.contains(&format!("| {named}")) {
            missing.push(flag.to_owned());
        }
    }
    assert!(missing.is_empty(), "the README's synopsis of run leaves out {missing:?}:\n{synopsis}");
    assert!(synopsis.contains("[-n NAMESPACE | -A]"), "{synopsis}");
}
