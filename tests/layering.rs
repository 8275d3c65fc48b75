//! The engine stays pure and rendering stays IO-free: a scan of their sources for forbidden paths.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::util::repo;

fn scan(dir: &Path, forbidden: &[&str], found: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).expect("source directory") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            scan(&path, forbidden, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("source file");
            for (n, line) in text.lines().enumerate() {
                for pattern in forbidden {
                    if line.contains(pattern) {
                        found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                    }
                }
            }
        }
    }
}

#[test]
fn engine_imports_no_io_and_reads_no_clock() {
    let forbidden = [
        "tokio",
        "kube::",
        "k8s_openapi",
        "serde",
        "jiff",
        "owo_colors",
        "SystemTime",
        "Instant::now",
        concat!("thread::", "sleep"), // spelled so that sleep scans do not flag this list
        "std::fs",
        "std::net",
        "std::io",
        "println!",
        "eprintln!",
    ];
    let mut found = Vec::new();
    scan(&repo().join("src/engine"), &forbidden, &mut found);
    assert!(found.is_empty(), "src/engine must stay pure:\n{}", found.join("\n"));
}

/// The paths `dir`'s program code (comments and test modules left out) names into the crate outside
/// the modules `allowed` (the top-level module names), as `file: crate::path`.
fn reaches_outside(dir: &str, allowed: &[&str]) -> Vec<String> {
    let mut found = BTreeMap::new();
    modules(&repo().join("src"), &mut Vec::new(), &mut found);
    let mut outside = Vec::new();
    for (module, text) in found.iter().filter(|(module, _)| module.first().is_some_and(|m| m == dir)) {
        for (up, path) in named_paths(&code(text)) {
            // `super::` from a top-level module's file reaches the crate root, as `crate::` does.
            let absolute = match up {
                None => path,
                Some(up) => module[..module.len().saturating_sub(up)].iter().cloned().chain(path).collect(),
            };
            if absolute.first().is_some_and(|top| !allowed.contains(&top.as_str())) {
                outside.push(format!("{}: crate::{}", module.join("::"), absolute.join("::")));
            }
        }
    }
    outside
}

#[test]
fn engine_uses_nothing_else_of_the_crate() {
    let outside = reaches_outside("engine", &["engine"]);
    assert!(outside.is_empty(), "src/engine must use nothing but itself:\n{}", outside.join("\n"));
}

#[test]
fn output_uses_only_the_engine_and_runs_events() {
    let outside: Vec<String> = reaches_outside("output", &["engine", "output"])
        .into_iter()
        .filter(|path| !path.contains(": crate::runtime::report"))
        .collect();
    assert!(outside.is_empty(), "src/output may use the engine and runtime::report only:\n{}", outside.join("\n"));
}

#[test]
fn output_renders_without_cluster_or_clock() {
    let forbidden =
        ["tokio", "kube::", "k8s_openapi", "crate::cli", "crate::source", "SystemTime", "::now()", "println!"];
    let mut found = Vec::new();
    scan(&repo().join("src/output"), &forbidden, &mut found);
    assert!(found.is_empty(), "src/output must not do IO of its own:\n{}", found.join("\n"));
}

#[test]
fn output_types_know_nothing_of_the_command_line_parser() {
    // The flags' enums live in src/cli and convert (src/cli/config.rs).
    let mut found = Vec::new();
    scan(&repo().join("src/output"), &["clap", "ValueEnum"], &mut found);
    assert!(found.is_empty(), "src/output must not depend on clap:\n{}", found.join("\n"));
}

/// Module path (`["cluster", "watch"]`; the crate root is empty) → source text, for every file of `dir`
/// but the binary's `main.rs`.
fn modules(dir: &Path, path: &mut Vec<String>, found: &mut BTreeMap<Vec<String>, String>) {
    for entry in std::fs::read_dir(dir).expect("source directory") {
        let file = entry.expect("entry").path();
        let name = file.file_stem().and_then(|s| s.to_str()).expect("a UTF-8 name").to_owned();
        if file.is_dir() {
            path.push(name);
            modules(&file, path, found);
            path.pop();
        } else if file.extension().is_some_and(|e| e == "rs") && !(path.is_empty() && name == "main") {
            let mut module = path.clone();
            if !matches!(name.as_str(), "mod" | "lib") {
                module.push(name);
            }
            found.insert(module, std::fs::read_to_string(&file).expect("source file"));
        }
    }
}

/// The code of a file without its comments and its `#[cfg(test)] mod … { … }` blocks: tests may
/// reach anywhere; the program's own dependencies are what must not go round.
fn code(text: &str) -> String {
    let text: String =
        text.lines().map(|line| line.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n");
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = rest[at..].trim_start_matches("#[cfg(test)]").trim_start();
        match (after.starts_with("mod "), after.find(['{', ';'])) {
            (true, Some(open)) if after.as_bytes()[open] == b'{' => {
                let mut depth = 0;
                let end = after[open..]
                    .char_indices()
                    .find_map(|(i, c)| {
                        depth += match c {
                            '{' => 1,
                            '}' => -1,
                            _ => 0,
                        };
                        (depth == 0).then_some(open + i + 1)
                    })
                    .unwrap_or(after.len());
                rest = &after[end..];
            }
            _ => rest = after,
        }
    }
    out.push_str(rest);
    out
}

/// Every path a piece of code names from `crate::`, `self::` or `super::` (braces expanded): the
/// start (`crate`, or how many levels up from the file's module) and the segments.
fn named_paths(code: &str) -> Vec<(Option<usize>, Vec<String>)> {
    fn ident(text: &str) -> usize {
        text.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(text.len())
    }
    /// The paths of a `use` tree at the start of `text`.
    fn tree(text: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
        let text = text.trim_start();
        if let Some(inner) = text.strip_prefix('{') {
            let (mut depth, mut start) = (0, 0);
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        tree(&inner[start..i], prefix, out);
                        return;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        tree(&inner[start..i], prefix, out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            return;
        }
        let mut segments = prefix.to_vec();
        let mut rest = text;
        loop {
            let n = ident(rest);
            if n == 0 {
                break;
            }
            segments.push(rest[..n].to_owned());
            rest = &rest[n..];
            match rest.strip_prefix("::") {
                Some(next) if next.starts_with('{') => return tree(next, &segments, out),
                Some(next) => rest = next,
                None => break,
            }
        }
        out.push(segments);
    }
    let mut found = Vec::new();
    for (at, _) in code.match_indices("::") {
        let before = &code[..at];
        let start = before.len() - before.chars().rev().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').count();
        let word = &code[start..at];
        let first = before[..start].chars().next_back();
        if first.is_some_and(|c| c == ':') || !matches!(word, "crate" | "self" | "super") {
            continue;
        }
        let mut up = match word {
            "crate" => None,
            "self" => Some(0),
            _ => Some(1),
        };
        let mut rest = &code[at + 2..];
        while let Some(next) = rest.strip_prefix("super::") {
            up = up.map(|n| n + 1);
            rest = next;
        }
        let mut paths = Vec::new();
        tree(rest, &[], &mut paths);
        found.extend(paths.into_iter().map(|path| (up, path)));
    }
    found
}

/// The cycles among `modules` (each as the module paths in it, joined with `::`): a module uses
/// another when its code names a path into it (the deepest module the path names).
fn cycles(modules: &BTreeMap<Vec<String>, String>) -> Vec<Vec<String>> {
    let mut uses: BTreeMap<&Vec<String>, BTreeSet<&Vec<String>>> = BTreeMap::new();
    for (module, text) in modules {
        // `self` is the module (`a/b.rs` and `a/b/mod.rs` are both `a::b`), `super` its parent.
        for (up, path) in named_paths(&code(text)) {
            let mut target: Vec<String> = match up {
                None => Vec::new(),
                Some(up) => module[..module.len().saturating_sub(up)].to_vec(),
            };
            for segment in path {
                target.push(segment);
                if !modules.contains_key(&target) {
                    target.pop();
                    break;
                }
            }
            if let Some((target, _)) = modules.get_key_value(&target)
                && target != module
            {
                uses.entry(module).or_default().insert(target);
            }
        }
    }
    // Tarjan's strongly connected components; any with more than one module is a cycle.
    struct Search<'m> {
        uses: &'m BTreeMap<&'m Vec<String>, BTreeSet<&'m Vec<String>>>,
        index: BTreeMap<&'m Vec<String>, (usize, usize)>,
        stack: Vec<&'m Vec<String>>,
        found: Vec<Vec<String>>,
    }
    impl<'m> Search<'m> {
        fn visit(&mut self, module: &'m Vec<String>) -> usize {
            let n = self.index.len();
            self.index.insert(module, (n, n));
            self.stack.push(module);
            let mut low = n;
            for &next in self.uses.get(module).into_iter().flatten() {
                match self.index.get(next) {
                    None => low = low.min(self.visit(next)),
                    Some(&(i, _)) if self.stack.contains(&next) => low = low.min(i),
                    Some(_) => {}
                }
            }
            self.index.insert(module, (n, low));
            if low == n {
                let at = self.stack.iter().rposition(|m| *m == module).expect("on the stack");
                let mut component: Vec<String> = self.stack.drain(at..).map(|m| m.join("::")).collect();
                component.sort();
                if component.len() > 1 {
                    self.found.push(component);
                }
            }
            low
        }
    }
    let mut search = Search { uses: &uses, index: BTreeMap::new(), stack: Vec::new(), found: Vec::new() };
    for module in modules.keys() {
        if !search.index.contains_key(module) {
            search.visit(module);
        }
    }
    search.found
}

#[test]
fn no_module_of_src_imports_itself_round_a_cycle() {
    let mut found = BTreeMap::new();
    modules(&repo().join("src"), &mut Vec::new(), &mut found);
    let cycles = cycles(&found);
    let cycles: Vec<String> = cycles.iter().map(|c| c.join(" ↔ ")).collect();
    assert!(cycles.is_empty(), "import cycles in src/:\n{}", cycles.join("\n"));
}

#[test]
fn the_cycle_check_finds_cycles_through_super_crate_and_braces() {
    let module = |path: &str, text: &str| {
        let path = if path.is_empty() { Vec::new() } else { path.split("::").map(str::to_owned).collect() };
        (path, text.to_owned())
    };
    let tree = BTreeMap::from([
        module("", "pub mod a;\npub mod b;"),
        module("a", "pub mod x;\npub mod y;\nuse self::x::X;"),
        module("a::x", "use super::y::Y; // use crate::b::B;"),
        module("a::y", "use crate::{b::{self, Z}, a};"),
        module("b", "pub struct Z;\n#[cfg(test)]\nmod tests {\n    use crate::a::x::X;\n}"),
    ]);
    let cycles = cycles(&tree);
    // a::y names `a` (a's mod.rs), which names a::x, which names a::y; comments and tests do not count.
    assert_eq!(cycles, [vec!["a".to_owned(), "a::x".to_owned(), "a::y".to_owned()]]);
    let acyclic = BTreeMap::from([module("a", "use crate::b::Z;"), module("b", "pub struct Z;")]);
    assert!(self::cycles(&acyclic).is_empty());
}
