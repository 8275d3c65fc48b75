//! Every offline example of the README is a test: each `console` block's `$ kubectl taint-evict …`
//! line that reads a file of this repository (`-f examples/…`, `-f tests/data/…`) is run, and what it
//! prints is compared with the page, stdout and stderr (`warning:`, `error:` and `hint:` lines; all of
//! a failure's), and
//! its exit code with a following `$ echo $?`; a last line `…` shows only the beginning. Live examples (a cluster's own output) are shown as a
//! real control plane printed them and are not rerun.

use std::path::Path;

use crate::util::{command, repo, run_command};

/// One example: the command line, what the page shows under it, and the exit code it shows.
struct Example {
    line: usize,
    command: String,
    shown: Vec<String>,
    code: i32,
}

/// The examples of `markdown` (line numbers from 1).
fn examples(markdown: &str) -> Vec<Example> {
    let mut examples: Vec<Example> = Vec::new();
    let mut in_console = false;
    for (number, text) in markdown.lines().enumerate() {
        if text.starts_with("```") {
            in_console = text == "```console";
            continue;
        }
        if !in_console {
            continue;
        }
        if let Some(command) = text.strip_prefix("$ ") {
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
    let args: Vec<String> = rest.split_whitespace().map(str::to_owned).collect();
    let file = args.iter().position(|a| a == "-f").and_then(|i| args.get(i + 1))?;
    repo().join(file).is_file().then_some((args, columns, head))
}

#[test]
fn every_offline_example_of_the_readme_prints_what_the_page_shows() {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let mut ran = 0;
    let mut wrong = Vec::new();
    for example in examples(&readme) {
        let Some((args, columns, head)) = offline(&example.command) else { continue };
        let mut binary = command();
        binary.current_dir(repo()).args(&args);
        if let Some(columns) = columns {
            binary.env("COLUMNS", columns);
        }
        let result = run_command(&mut binary, None);
        ran += 1;
        // A failure prints on stderr only; a success its diagnostics there.
        let is_diagnostic = |line: &&String| {
            example.code != 0 || ["warning: ", "error: ", "hint: "].iter().any(|p| line.starts_with(p))
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
                "README.md:{}: $ {}\n--- the page shows (exit {}):\n{}\n{}\n--- it prints (exit {}):\n{}\n{}",
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
    assert!(Path::new(&repo()).join("README.md").is_file());
}
