//! The repository reads whole (docs/architecture.md): comments and docs cite its own files (`docs/`
//! above all) or an upstream source in full, such as `kubernetes/kubernetes#108268`, never a text
//! beside it. What a reader could not follow from a clone alone fails here: a section sign, a path into
//! the specification, a document the repository does not hold, a rule's id, a tracker's number.
//!
//! The references this file checks for are spelled in parts (`concat!`, escapes), so that it does not
//! cite them itself.

use std::path::Path;

use crate::util::repo;

/// Where the check looks: the sources, tests, benches, docs, fuzz targets, CI and the two pages at
/// the root.
const CHECKED: [&str; 9] = ["src", "crates", "tests", "benches", "docs", "fuzz", ".ci", "README.md", "BENCHMARKS.md"];

/// Folders under those that are not the repository's text: builds and fuzzers' findings.
const SKIPPED: [&str; 3] = ["target", "corpus", "artifacts"];

/// The section sign: a specification's section (the repository's own pages have headings, linked by
/// anchor).
const SECTION_SIGN: char = '\u{a7}';

/// The rule ids of the specification, each a letter and the highest number it goes to: its vectors
/// (matching, windows, first matches, decisions, restarts), and the device-taint rules of selection,
/// matching and timing.
const RULE_IDS: [(char, u32); 8] = [('A', 15), ('B', 11), ('C', 5), ('D', 25), ('E', 15), ('S', 5), ('M', 4), ('T', 6)];

/// The Markdown files a line names (a name ending in `.md`, with the path before it), but for links
/// to the web and globs (`*.md`).
fn markdown_names(line: &str) -> impl Iterator<Item = &str> {
    line.match_indices(".md").filter_map(move |(at, _)| {
        let after = line[at + 3..].chars().next();
        if after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        let start = line[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "_.-/".contains(c)))
            .map_or(0, |before| before + line[before..].chars().next().map_or(1, char::len_utf8));
        let name = &line[start..at + 3];
        let web = name.starts_with("//") || line[..start].ends_with(':');
        (!web && name.len() > ".md".len() && !name.ends_with("/.md")).then_some(name)
    })
}

/// The words of `line`: its runs of letters, digits and `_`.
fn words(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|word| !word.is_empty())
}

/// The tracker numbers of `line` written after the word (`issue` or `issues`, a space, its digits).
fn issue_numbers(line: &str) -> impl Iterator<Item = &str> {
    let lower = line.to_ascii_lowercase();
    let found: Vec<&str> = lower
        .match_indices("issue")
        .filter(|(at, _)| !lower[..*at].ends_with(|c: char| c.is_ascii_alphanumeric()))
        .filter_map(|(at, word)| {
            let after = &line[at + word.len()..];
            let number = after.strip_prefix("s ").or_else(|| after.strip_prefix(' '))?;
            let digits = number.find(|c: char| !c.is_ascii_digit()).unwrap_or(number.len());
            (digits > 0).then(|| &line[at..line.len() - number.len() + digits])
        })
        .collect();
    found.into_iter()
}

/// Whether `word` is one of [`RULE_IDS`]: its letter, then a number from one to its highest.
fn rule_id(word: &str) -> bool {
    let mut chars = word.chars();
    let (Some(letter), number) = (chars.next(), chars.as_str()) else { return false };
    let Ok(n) = number.parse::<u32>() else { return false };
    !number.starts_with(['0', '+']) && RULE_IDS.iter().any(|&(l, highest)| l == letter && (1..=highest).contains(&n))
}

/// The tracker numbers of `line` written bare: `#N` not right after an `owner/name` (an upstream
/// reference in full, `kubernetes/kubernetes#140639`, is how one is written).
fn bare_numbers(line: &str) -> impl Iterator<Item = &str> {
    line.match_indices('#').filter_map(move |(at, _)| {
        let digits = line[at + 1..].find(|c: char| !c.is_ascii_digit()).unwrap_or(line.len() - at - 1);
        if digits == 0 {
            return None;
        }
        let start = line[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "_.-/".contains(c)))
            .map_or(0, |before| before + line[before..].chars().next().map_or(1, char::len_utf8));
        (!line[start..at].contains('/')).then_some(&line[at..at + 1 + digits])
    })
}

/// What `line` cites outside the repository, each as what it is. `comment` is the part of it a reader
/// reads as prose (a Rust file's comment; the whole line of a page), where a document is named;
/// `exists` says whether a Markdown path named there is one of the repository's.
fn outside_citations(line: &str, comment: &str, exists: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut found = Vec::new();
    if line.contains(SECTION_SIGN) {
        found.push("a section sign".to_owned());
    }
    if line.contains(concat!("spec", "/")) {
        found.push("a path into the specification".to_owned());
    }
    found.extend(issue_numbers(line).map(|number| format!("an issue's number, {number}")));
    // Unicode's control sets are named C0 and C1: a line naming the first means the second.
    let control_sets = words(line).any(|word| word == "C0");
    found.extend(
        words(line)
            .filter(|word| rule_id(word) && !(control_sets && *word == concat!("C", "1")))
            .map(|word| format!("a rule id, {word}")),
    );
    // A name led by one in lower case, as a test named after the vector it ports.
    found.extend(
        words(line)
            .filter_map(|word| word.split_once('_'))
            .filter(|(lead, _)| {
                lead.starts_with(|c: char| c.is_ascii_lowercase()) && rule_id(&lead.to_ascii_uppercase())
            })
            .map(|(lead, _)| format!("a rule id leading a name, {lead}_")),
    );
    found.extend(bare_numbers(line).map(|number| format!("a bare number, {number} (write owner/name{number})")));
    found.extend(
        markdown_names(comment)
            .filter(|name| !exists(name))
            .map(|name| format!("{name}, which the repository does not hold")),
    );
    found
}

/// The comment of a line of Rust: from its first `//` that is not a URL's (`https://`), or nothing.
fn comment_of(line: &str) -> &str {
    line.match_indices("//").find(|(at, _)| !line[..*at].ends_with(':')).map_or("", |(at, _)| &line[at..])
}

/// Every line of `path` (a file, or a folder walked) that [`outside_citations`] flags, as `file:line:
/// what: text`. A Markdown name resolves against the file's folder, the repository's root or `docs/`.
fn check(path: &Path, found: &mut Vec<String>) {
    if path.is_dir() {
        if path.file_name().is_some_and(|name| SKIPPED.iter().any(|skipped| name == *skipped)) {
            return;
        }
        for entry in std::fs::read_dir(path).expect("a folder") {
            check(&entry.expect("an entry").path(), found);
        }
        return;
    }
    let folder = path.parent().expect("a file's folder");
    let exists = |name: &str| [folder, &repo(), &repo().join("docs")].iter().any(|base| base.join(name).exists());
    let rust = path.extension().is_some_and(|e| e == "rs");
    let bytes = std::fs::read(path).expect("a file");
    for (n, line) in String::from_utf8_lossy(&bytes).lines().enumerate() {
        let comment = if rust { comment_of(line) } else { line };
        for what in outside_citations(line, comment, &exists) {
            let file = path.strip_prefix(repo()).unwrap_or(path).display();
            found.push(format!("{file}:{}: {what}: {}", n + 1, line.trim()));
        }
    }
}

#[test]
fn comments_and_docs_cite_only_the_repository_and_upstream_in_full() {
    let mut found = Vec::new();
    for path in CHECKED {
        check(&repo().join(path), &mut found);
    }
    assert!(
        found.is_empty(),
        "say what is meant, cite docs/ (a page, a section by its heading) or upstream in full:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_citation_check_fails_on_each_kind_of_outside_reference() {
    let exists = |name: &str| ["docs/run.md", "run.md", "../BENCHMARKS.md", "README.md"].contains(&name);
    let flagged = |line: &str| outside_citations(line, line, &exists);
    let seeded = [
        (concat!("see the spec (contract ", "\u{a7}4)"), "a section sign"),
        (concat!("`node-lifecycle.md` ", "\u{a7}5\u{2013}6"), "a section sign"),
        (concat!("`spec", "/node-lifecycle.md`"), "a path into the specification"),
        (concat!("// See: issue", " 12."), "an issue's number"),
        (concat!("targets (Issues", " 28, 29)"), "an issue's number"),
        (concat!("upstream sends none, #", "141568"), "a bare number"),
        (concat!("([krew#", "812](https://github.com/kubernetes-sigs/krew/issues/812))"), "a bare number"),
        (
            concat!("`upstream-semantics", ".md`, the matcher"),
            "upstream-semantics.md, which the repository does not hold",
        ),
        (concat!("`../contract", ".md`"), "../contract.md, which the repository does not hold"),
        (concat!("Test vectors A", "1\u{2013}A", "13"), concat!("a rule id, A", "1")),
        (concat!("selection S", "1\u{2013}S", "5, matching M", "1"), concat!("a rule id, S", "1")),
        (concat!("no `timeAdded` (T", "5: upstream ignores it)"), concat!("a rule id, T", "5")),
        (concat!("name: \"A", "10\","), concat!("a rule id, A", "10")),
        (concat!("// keep the timers (D", "11)."), concat!("a rule id, D", "11")),
        (concat!("first match wins (C", "1)"), concat!("a rule id, C", "1")),
        (concat!("fn d", "5_d", "6_edited_seconds() {"), concat!("a rule id leading a name, d", "5_")),
        (concat!("fn s", "3_s", "5_only_no_execute_taints_evict() {"), concat!("a rule id leading a name, s", "3_")),
    ];
    for (line, what) in seeded {
        let found = flagged(line);
        assert!(found.iter().any(|f| f.starts_with(what)), "{line:?}: {found:?}, not {what:?}");
    }
    for line in [
        "an issue worth naming, the spec's words, docs/run.md, [runs](run.md#enforcing), [page](../BENCHMARKS.md)",
        "upstream in full: kubernetes/kubernetes#108268, kubernetes-sigs/krew#812; a heading `## Rules`",
        "https://github.com/kubernetes/kubernetes/blob/master/CHANGELOG/CHANGELOG-1.29.md, `*.md`, `docs/*.md`",
        "const T0: i64 = 1; at T0 + 5 s; A16, S6, M0, T7, D26, A01, ZA1, A1B, Ma1; AWS_S3, S3X",
        "every control character (C0, DEL, C1) escaped",
        "fn untolerated_taint_evicts_now() { let t0_at = 1; let f1_key = 2; } // s0_ a16_ `s5-t2-many-taints`",
        "#[test] fn f() {} #![forbid(unsafe_code)] r#\"raw\"#, a heading # 1, &#x27; issue tracker",
    ] {
        assert_eq!(flagged(line), Vec::<String>::new(), "{line:?}");
    }
    // In a Rust file only the comment names documents: a string is data.
    let code = concat!("let page = \"docs/sub/page", ".md\"; // the same as gone", ".md");
    assert_eq!(outside_citations(code, comment_of(code), &exists), ["gone.md, which the repository does not hold"]);
    assert_eq!(comment_of("let url = \"https://example.com\"; // a comment"), "// a comment");
}
