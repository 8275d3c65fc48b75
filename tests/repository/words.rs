//! docs/output.md's "Words used" table has a row for every kind of line `run` and `plan -w` can
//! print: the kinds are read from the code (the variants of `RunLine` and `WatchLine` in
//! `src/output/lines.rs`, whose JSON `type` is the variant's name in camel case), so that a new kind
//! cannot land undocumented.

use std::collections::BTreeSet;

use crate::util::repo;

/// The variants of `pub enum NAME<'a> {` in `source`, in order.
fn variants(source: &str, name: &str) -> Vec<String> {
    let start = format!("pub enum {name}<'a> {{");
    let body = source.split_once(&start).unwrap_or_else(|| panic!("no `{start}` in src/output/lines.rs")).1;
    let body = body.split_once("\n}").expect("the enum's end").0;
    body.lines()
        .filter_map(|line| line.strip_prefix("    "))
        .filter(|line| line.starts_with(|c: char| c.is_ascii_uppercase()))
        .map(|line| line.split(|c: char| !c.is_ascii_alphanumeric()).next().expect("a name").to_owned())
        .collect()
}

/// A line's kind as its text line says it: `WouldEvict` is `would evict` (JSON `wouldEvict`).
fn word(variant: &str) -> String {
    let mut word = String::new();
    for c in variant.chars() {
        if c.is_ascii_uppercase() && !word.is_empty() {
            word.push(' ');
        }
        word.push(c.to_ascii_lowercase());
    }
    word
}

/// The words of the table under `## Words used` in `page`: every `code` span of each row's first cell.
fn table_words(page: &str) -> BTreeSet<String> {
    let section = page.split_once("\n## Words used\n").expect("docs/output.md has a \"Words used\" section").1;
    let section = section.split("\n## ").next().expect("the section");
    let rows = section.lines().filter(|l| l.starts_with("| `"));
    rows.flat_map(|row| {
        let first = row.split('|').nth(1).expect("a first cell");
        first.split('`').skip(1).step_by(2).map(str::to_owned).collect::<Vec<_>>()
    })
    .collect()
}

#[test]
fn every_kind_of_line_run_and_plan_w_print_has_a_row_in_the_words_used_table() {
    let source = std::fs::read_to_string(repo().join("src/output/lines.rs")).expect("src/output/lines.rs");
    let page = std::fs::read_to_string(repo().join("docs/output.md")).expect("docs/output.md");
    let words = table_words(&page);
    let mut kinds = variants(&source, "RunLine");
    assert!(kinds.len() >= 20 && kinds.contains(&"Capped".to_owned()), "the kinds of run's lines: {kinds:?}");
    kinds.extend(variants(&source, "WatchLine"));
    let missing: Vec<String> = kinds.iter().map(|kind| word(kind)).filter(|kind| !words.contains(kind)).collect();
    assert!(missing.is_empty(), "docs/output.md's \"Words used\" table has no row for {missing:?}: add one");
}

#[test]
fn the_words_used_table_names_the_words_a_plan_prints_too() {
    let page = std::fs::read_to_string(repo().join("docs/output.md")).expect("docs/output.md");
    let words = table_words(&page);
    for word in ["terminating", "unaffected", "basis", "predicted-taint", "taint-written", "overdue", "due now"] {
        assert!(words.contains(word), "docs/output.md's \"Words used\" table has no row for {word:?}");
    }
}

#[test]
fn a_kind_is_read_as_its_line_says_it() {
    assert_eq!(word("WouldEvict"), "would evict");
    assert_eq!(word("Held"), "held");
    let source = "pub enum RunLine<'a> {\n    /// Doc.\n    Started {\n        server: &'a str,\n    },\n    Held(X),\n    Stopping { n: usize },\n}\n";
    assert_eq!(variants(source, "RunLine"), ["Started", "Held", "Stopping"]);
}
