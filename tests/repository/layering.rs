//! The engine stays pure and rendering stays IO-free: a scan of their sources for forbidden paths, and
//! of every module's imports for cycles.

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
                if forbidden.iter().any(|pattern| line.contains(pattern)) {
                    found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                }
            }
        }
    }
}

#[test]
fn engine_imports_no_io_and_reads_no_clock() {
    let forbidden = [
        "SystemTime",
        "Instant::now",
        concat!("thread::", "sleep"), // spelled so that sleep scans do not flag this list
        "std::fs",
        "std::net",
        "std::io",
        "std::env",
        "std::process",
        "println!",
        "eprintln!",
        // Nor anything else only the operating system has (docs/architecture.md): threads of its own,
        // entropy (std's `RandomState`), an async runtime.
        "std::thread",
        "thread::scope",
        "thread::spawn",
        "RandomState",
        "tokio",
    ];
    let mut found = Vec::new();
    scan(&repo().join(ENGINE), &forbidden, &mut found);
    assert!(found.is_empty(), "the engine crate must stay pure:\n{}", found.join("\n"));
}

/// The engine crate's sources.
const ENGINE: &str = "crates/taint-evict-engine/src";

#[test]
fn engine_crate_depends_on_nothing() {
    // No tokio, kube, serde or clock crate can reach the engine: Cargo enforces what it may use.
    let manifest = std::fs::read_to_string(repo().join("crates/taint-evict-engine/Cargo.toml")).expect("its manifest");
    let mut section = "";
    let mut dependencies = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
        } else if !line.is_empty()
            && !line.starts_with('#')
            && section.ends_with("dependencies]")
            && !section.contains("dev-dependencies")
        {
            dependencies.push(format!("{section} {line}"));
        }
    }
    assert!(dependencies.is_empty(), "the engine crate must depend on std only: {dependencies:?}");
}

/// The modules a `lib.rs` declares (`pub mod name;`, `pub use crate_name as name;`) that its layout
/// comment (its `//!` lines) does not name as a link, [`name`].
fn modules_the_layout_omits(lib: &str) -> Vec<String> {
    let layout: String = lib.lines().filter(|line| line.starts_with("//!")).collect::<Vec<_>>().join("\n");
    lib.lines()
        .filter_map(|line| {
            let line = line.trim();
            let declared = line.strip_prefix("pub mod ").and_then(|rest| rest.strip_suffix(';'));
            let renamed = line.strip_prefix("pub use ").and_then(|rest| rest.strip_suffix(';')?.rsplit_once(" as "));
            declared.or(renamed.map(|(_, name)| name)).map(str::trim)
        })
        .filter(|name| !layout.contains(&format!("[`{name}`]")))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_crates_layout_comment_names_every_module() {
    let lib = std::fs::read_to_string(repo().join("src/lib.rs")).expect("src/lib.rs");
    let omitted = modules_the_layout_omits(&lib);
    assert!(omitted.is_empty(), "src/lib.rs's layout does not name {omitted:?}");
    let seeded =
        "//! - [`a`]: the first.\n//! Not `b`, nor [`b` here].\n\npub mod a;\npub mod b;\npub use c_crate as c;\n";
    assert_eq!(modules_the_layout_omits(seeded), ["b", "c"]);
}

/// The paths `dir`'s program code (comments and test modules left out) names into the crate outside
/// the modules `allowed` (the top-level module names), as `file: crate::path`.
fn reaches_outside(dir: &str, allowed: &[&str]) -> Vec<String> {
    let mut found = BTreeMap::new();
    modules(&repo().join("src"), &mut Vec::new(), &mut found);
    let mut outside = Vec::new();
    for (module, text) in found.iter().filter(|(module, _)| module.first().is_some_and(|m| m == dir)) {
        for Named { up, path, .. } in named_paths(&code(text)) {
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
fn the_cluster_layer_uses_nothing_of_the_renderers_or_the_command_line() {
    // Fixed: `cluster/snapshot.rs` wrote its messages with `output::human`.
    let outside: Vec<String> =
        reaches_outside("cluster", &["cluster", "decode", "engine", "metrics", "runtime", "selector", "time", "words"]);
    assert!(outside.is_empty(), "src/cluster may not use output or cli:\n{}", outside.join("\n"));
}

#[test]
fn output_uses_only_the_engine_and_runs_events() {
    let outside: Vec<String> = reaches_outside("output", &["engine", "output", "words"])
        .into_iter()
        .filter(|path| !path.contains(": crate::runtime::report"))
        .collect();
    assert!(outside.is_empty(), "src/output may use the engine and runtime::report only:\n{}", outside.join("\n"));
}

#[test]
fn time_uses_only_the_engine_and_words() {
    // The control plane's time is read below everything that shows it or runs on it: the cluster and
    // the runtime use `time`, never the other way round (the cluster answers `time::keeping`'s requests).
    let outside: Vec<String> = reaches_outside("time", &["engine", "time", "words"]);
    assert!(outside.is_empty(), "src/time may use the engine and words only:\n{}", outside.join("\n"));
}

#[test]
fn output_renders_without_cluster_or_clock() {
    let forbidden = [
        "tokio",
        "kube::",
        "k8s_openapi",
        "crate::cli",
        "crate::source",
        "crate::time",
        "Timekeeper",
        "SystemTime",
        "::now()",
        "println!",
    ];
    let mut found = Vec::new();
    scan(&repo().join("src/output"), &forbidden, &mut found);
    assert!(found.is_empty(), "src/output must not do IO of its own:\n{}", found.join("\n"));
}

#[test]
fn the_json_lines_of_run_and_plan_watch_are_typed() {
    // Every line is a variant of `output/lines.rs`'s enums (docs/architecture.md); `json!` is for tests.
    let mut found = Vec::new();
    for file in ["lines", "run", "watch", "lifecycle"] {
        let path = repo().join(format!("src/output/{file}.rs"));
        let text = std::fs::read_to_string(&path).expect("source file");
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (n, line) in code.lines().enumerate() {
            if ["json!", "serde_json::Value", "serde_json::{"].iter().any(|pattern| line.contains(pattern)) {
                found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "the lines are built untyped:\n{}", found.join("\n"));
}

#[test]
fn output_types_know_nothing_of_the_command_line_parser() {
    // The flags' enums live in src/cli and convert (src/cli/config.rs).
    let mut found = Vec::new();
    scan(&repo().join("src/output"), &["clap", "ValueEnum"], &mut found);
    assert!(found.is_empty(), "src/output must not depend on clap:\n{}", found.join("\n"));
}

#[test]
fn the_command_line_parses_and_dispatches_with_no_event_loop_and_no_escape_codes() {
    // Fixed: `cli/run.rs` and `cli/watch.rs` each started the live inputs and ran a loop, and wrote raw
    // escape codes beside `output/redraw.rs`; the loops live in `src/live`, the codes in `output`.
    let forbidden = ["loop {", "select!", "tokio::spawn", "\\x1b", "\\u{1b}", "\\033"];
    let mut found = Vec::new();
    scan(&repo().join("src/cli"), &forbidden, &mut found);
    assert!(found.is_empty(), "src/cli parses the flags and dispatches:\n{}", found.join("\n"));
}

#[test]
fn one_node_watch_in_the_plugin() {
    // Fixed: `cluster/lifecycle.rs` opened a second watch of every node, typed, beside the engine's.
    let mut found = Vec::new();
    scan(&repo().join("src"), &["Api::<WatchedNode>", "Api::<Node>", "v1::Node;", "v1::Node}"], &mut found);
    assert_eq!(found.len(), 1, "one node watch, in src/cluster/watch:\n{}", found.join("\n"));
    assert!(found[0].contains("src/cluster/watch/start.rs"), "{found:?}");
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
        let mut after = rest[at..].trim_start_matches("#[cfg(test)]").trim_start();
        // Past other attributes and a visibility: `#[allow(…)] pub(crate) mod tests { … }`.
        while after.starts_with("#[") {
            after = after.split_once('\n').map_or("", |(_, next)| next).trim_start();
        }
        if let Some(visible) = after.strip_prefix("pub") {
            let visible = visible.trim_start();
            after = match visible.strip_prefix('(') {
                Some(inner) => inner.split_once(')').map_or(visible, |(_, next)| next).trim_start(),
                None => visible,
            };
        }
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

/// A path a module's code names: where it starts (`None`: the crate root; `Some(n)`: `n` levels up
/// from the module), its segments, and the name it is re-exported as (`pub use … [as name]`).
#[derive(Debug)]
struct Named {
    up: Option<usize>,
    path: Vec<String>,
    reexport: Option<String>,
}

fn ident(text: &str) -> usize {
    text.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(text.len())
}

/// The paths of a `use` tree at the start of `text`, each with its alias (`as name`) if any.
fn tree(text: &str, prefix: &[String], out: &mut Vec<(Vec<String>, Option<String>)>) {
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
    // `a::{self, …}` names `a` itself.
    if segments.last().is_some_and(|s| s == "self") && segments.len() > prefix.len().max(1) {
        segments.pop();
    }
    let alias = rest.trim_start().strip_prefix("as ").map(|a| a.trim_start()).map(|a| a[..ident(a)].to_owned());
    if !segments.is_empty() {
        out.push((segments, alias));
    }
}

/// Where a path starts: `crate` (`None`), `self` (0 up), `super::super::…` (n up), or a name relative to
/// the module (0 up, the name kept); the segments after the start.
fn start_of(path: Vec<String>) -> (Option<usize>, Vec<String>) {
    let mut segments = path.into_iter().peekable();
    let up = match segments.peek().map(String::as_str) {
        Some("crate") => {
            segments.next();
            None
        }
        Some("self") => {
            segments.next();
            Some(0)
        }
        Some("super") => {
            let mut n = 0;
            while segments.peek().is_some_and(|s| s == "super") {
                segments.next();
                n += 1;
            }
            Some(n)
        }
        _ => Some(0),
    };
    (up, segments.collect())
}

/// Every path a piece of code names: those of its `use` statements (relative ones included, with
/// the name a `pub use` re-exports them as), and every other `crate::`, `self::` or `super::` path.
fn named_paths(code: &str) -> Vec<Named> {
    let mut found = Vec::new();
    let mut rest_of_code = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before = &rest[..at];
        let boundary = before.chars().next_back().is_none_or(|c| c.is_whitespace() || c == ')' || c == '{' || c == ';');
        let Some(end) = rest[at..].find(';').map(|end| at + end) else { break };
        if !boundary {
            rest_of_code.push_str(&rest[..at + 4]);
            rest = &rest[at + 4..];
            continue;
        }
        let public = {
            let head = before.trim_end();
            let head = match head.strip_suffix(')') {
                Some(inner) => inner.rfind('(').map_or(head, |open| &inner[..open]),
                None => head,
            };
            head.ends_with("pub")
        };
        rest_of_code.push_str(before);
        let mut paths = Vec::new();
        tree(&rest[at + 4..end], &[], &mut paths);
        for (path, alias) in paths {
            let name = alias.or_else(|| path.last().cloned());
            let (up, path) = start_of(path);
            found.push(Named { up, path, reexport: if public { name } else { None } });
        }
        rest = &rest[end + 1..];
    }
    rest_of_code.push_str(rest);
    let code = rest_of_code.as_str();
    for (at, _) in code.match_indices("::") {
        let before = &code[..at];
        let start = before.len() - before.chars().rev().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').count();
        let word = &code[start..at];
        let first = before[..start].chars().next_back();
        // A visibility (`pub(in crate::a)`) names where an item may be seen from, not a use.
        let visibility = before[..start].trim_end().ends_with("(in");
        if first.is_some_and(|c| c == ':') || !matches!(word, "crate" | "self" | "super") || visibility {
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
        found.extend(paths.into_iter().map(|(path, _)| Named { up, path, reexport: None }));
    }
    found
}

/// The module a path names: the deepest module on it, followed through re-exports (`pub use`) to
/// where the item it names is defined.
fn resolve(
    modules: &BTreeMap<Vec<String>, String>,
    reexports: &BTreeMap<(Vec<String>, String), Vec<String>>,
    path: &[String],
    depth: usize,
) -> Vec<String> {
    let mut target = Vec::new();
    for segment in path {
        target.push(segment.clone());
        if !modules.contains_key(&target) {
            target.pop();
            if depth < 8
                && let Some(next) = reexports.get(&(target.clone(), segment.clone()))
            {
                return resolve(modules, reexports, next, depth + 1);
            }
            break;
        }
    }
    target
}

/// Which module uses which: a module uses another when its code names an item defined there
/// (through re-exports: `pub use` makes no use).
fn uses(modules: &BTreeMap<Vec<String>, String>) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let absolute = |module: &[String], up: Option<usize>, path: Vec<String>| -> Vec<String> {
        match up {
            None => path,
            Some(up) => module[..module.len().saturating_sub(up)].iter().cloned().chain(path).collect(),
        }
    };
    let named: BTreeMap<&Vec<String>, Vec<Named>> =
        modules.iter().map(|(module, text)| (module, named_paths(&code(text)))).collect();
    let mut reexports = BTreeMap::new();
    for (module, paths) in &named {
        for path in paths {
            if let Some(name) = &path.reexport {
                reexports.insert(((*module).clone(), name.clone()), absolute(module, path.up, path.path.clone()));
            }
        }
    }
    let mut uses: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (module, paths) in &named {
        // `self` is the module (`a/b.rs` and `a/b/mod.rs` are both `a::b`), `super` its parent.
        for path in paths.iter().filter(|p| p.reexport.is_none()) {
            let target = resolve(modules, &reexports, &absolute(module, path.up, path.path.clone()), 0);
            if modules.contains_key(&target) && target != **module && !target.is_empty() {
                uses.entry((*module).clone()).or_default().insert(target);
            }
        }
    }
    uses
}

/// The cycles among `modules` (each as the module paths in it, joined with `::`), at two grains: a
/// module uses another when its code names an item defined there (through re-exports: `pub use` makes
/// no use); and a subtree uses a sibling subtree when one of its modules uses one of the sibling's
/// (`a::x::p` using `a::y::q` is `a::x` using `a::y`), so that no two parts of a module lean on each
/// other either.
fn cycles(modules: &BTreeMap<Vec<String>, String>) -> Vec<Vec<String>> {
    let uses = uses(modules);
    let mut siblings: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (from, targets) in &uses {
        for to in targets {
            let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
            if common < from.len() && common < to.len() {
                siblings.entry(from[..=common].to_vec()).or_default().insert(to[..=common].to_vec());
            }
        }
    }
    let mut found = strongly_connected(&uses);
    for cycle in strongly_connected(&siblings) {
        if !found.contains(&cycle) {
            found.push(cycle.into_iter().map(|m| format!("{m}/*")).collect());
        }
    }
    found
}

/// The strongly connected components of more than one node (`::`-joined), by Tarjan's algorithm.
fn strongly_connected(uses: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    struct Search<'m> {
        uses: &'m BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
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
            for next in self.uses.get(module).into_iter().flatten() {
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
    let mut search = Search { uses, index: BTreeMap::new(), stack: Vec::new(), found: Vec::new() };
    let nodes: BTreeSet<&Vec<String>> = uses.iter().flat_map(|(from, to)| std::iter::once(from).chain(to)).collect();
    for module in nodes {
        if !search.index.contains_key(module) {
            search.visit(module);
        }
    }
    search.found
}

#[test]
fn no_module_imports_itself_round_a_cycle() {
    let mut all = Vec::new();
    for dir in ["src", ENGINE] {
        let mut found = BTreeMap::new();
        modules(&repo().join(dir), &mut Vec::new(), &mut found);
        // Tests may reach anywhere and share their helpers (as for the uses that run up): the
        // cycles are the product's.
        let tests = test_modules(&found);
        found.retain(|module, _| !tests.iter().any(|test| module.starts_with(test)));
        all.extend(cycles(&found).iter().map(|c| format!("{dir}: {}", c.join(" ↔ "))));
    }
    assert!(all.is_empty(), "import cycles:\n{}", all.join("\n"));
}

/// A seeded module of a test's tree: its `::`-joined path (empty: the root) and its text.
fn module(path: &str, text: &str) -> (Vec<String>, String) {
    let path = if path.is_empty() { Vec::new() } else { path.split("::").map(str::to_owned).collect() };
    (path, text.to_owned())
}

#[test]
fn the_cycle_check_finds_cycles_through_super_crate_and_braces() {
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

    // Through re-exports (docs/architecture.md): r names p's `P` through the parent's `pub use`, p names r's
    // `R` the same way; the parent, a facade, uses neither.
    let facade = BTreeMap::from([
        module("", "pub mod m;"),
        module("m", "mod p;\nmod r;\npub use p::P;\npub(crate) use r::{R as Renamed, self};"),
        module("m::p", "use super::Renamed;\npub struct P;"),
        module("m::r", "pub struct R;\nfn f() -> crate::m::P { todo!() }"),
    ]);
    assert_eq!(self::cycles(&facade), [vec!["m::p".to_owned(), "m::r".to_owned()]]);
    let one_way = BTreeMap::from([
        module("", "pub mod m;"),
        module("m", "mod p;\nmod r;\npub use p::P;\npub use r::R;"),
        module("m::p", "use super::R;\npub struct P;"),
        module("m::r", "pub struct R;"),
    ]);
    assert!(self::cycles(&one_way).is_empty(), "a facade's re-exports are no use of its own");

    // Between the parts of a module: a::x's child uses a::y's, and a::y's another of a::x's.
    let parts = BTreeMap::from([
        module("a", "pub mod x;\npub mod y;"),
        module("a::x", "pub mod p;\npub mod r;"),
        module("a::x::p", "use crate::a::y::q::Q;"),
        module("a::x::r", "pub struct R;\npub(in crate::a) struct Seen;"),
        module("a::y", "pub mod q;"),
        module("a::y::q", "pub struct Q;\nfn f(_: super::super::x::r::R) {}"),
    ]);
    assert_eq!(self::cycles(&parts), [vec!["a::x/*".to_owned(), "a::y/*".to_owned()]]);
}

/// The modules declared `#[cfg(test)] mod name;`, visible to the crate or not (tests may reach
/// anywhere, and share their helpers), and theirs.
fn test_modules(found: &BTreeMap<Vec<String>, String>) -> BTreeSet<Vec<String>> {
    let mut tests = BTreeSet::new();
    for (module, text) in found {
        let mut rest = text.as_str();
        while let Some(at) = rest.find("#[cfg(test)]") {
            rest = rest[at..].trim_start_matches("#[cfg(test)]").trim_start();
            // Past the attributes and comments between it and the item.
            while rest.starts_with("#[") || rest.starts_with("//") {
                rest = rest.split_once('\n').map_or("", |(_, after)| after).trim_start();
            }
            let item = match rest.strip_prefix("pub") {
                Some(visible) => match visible.trim_start().strip_prefix('(') {
                    Some(inner) => inner.split_once(')').map_or("", |(_, after)| after).trim_start(),
                    None => visible.trim_start(),
                },
                None => rest,
            };
            if let Some(name) = item.strip_prefix("mod ").and_then(|after| after.split_once(';')).map(|(name, _)| name)
                && !name.contains('{')
            {
                tests.insert(module.iter().cloned().chain([name.trim().to_owned()]).collect());
            }
        }
    }
    tests
}

/// The uses that run up: a module using an item its parent (or an ancestor) defines, as
/// `child → parent`. A parent declares and re-exports its children and defines nothing they
/// import: what two children share lives in a child of its own.
fn running_up(found: &BTreeMap<Vec<String>, String>) -> Vec<String> {
    let tests = test_modules(found);
    let mut up = Vec::new();
    for (from, targets) in uses(found) {
        if tests.iter().any(|test| from.starts_with(test)) {
            continue;
        }
        for to in targets.iter().filter(|to| to.len() < from.len() && from.starts_with(to)) {
            up.push(format!("{} → {}", from.join("::"), to.join("::")));
        }
    }
    up
}

#[test]
fn no_module_uses_what_its_parent_defines() {
    let mut found = Vec::new();
    for dir in ["src", ENGINE] {
        let mut modules_of = BTreeMap::new();
        modules(&repo().join(dir), &mut Vec::new(), &mut modules_of);
        let dir = if dir == ENGINE { "engine" } else { dir };
        found.extend(running_up(&modules_of).into_iter().map(|edge| format!("{dir}: {edge}")));
    }
    assert!(found.is_empty(), "uses running up to a parent module:\n{}", found.join("\n"));
}

#[test]
fn the_check_of_uses_running_up_finds_a_child_using_its_parent() {
    let seeded = BTreeMap::from([
        module("", "pub mod a;"),
        module(
            "a",
            "mod x;\nmod y;\n#[cfg(test)]\n// Tests.\n#[allow(unused)]\nmod tests;\n#[cfg(test)]\npub(crate) mod cases;\n\
             pub use x::X;\npub struct Shared;",
        ),
        module("a::x", "use super::Shared;\npub struct X;"),
        module("a::y", "use super::X;"),
        module("a::tests", "use super::*;\nfn f(_: Shared) {}"),
        module("a::cases", "use super::*;\npub(crate) fn f(_: Shared) {}"),
    ]);
    // `a::y` reaches `X` through a re-export (defined in `a::x`): not up; the tests are let be, those
    // whose helpers other tests share too.
    assert_eq!(running_up(&seeded), ["a::x → a"]);
}

/// What a table of contents (a `mod.rs`, or a crate's `lib.rs`) defines beyond declaring its children and
/// re-exporting: each item that is neither a `mod name;` nor a `use`, as its first line. Comments and
/// attributes (the crate's `#![…]` included) are let be; so is, in a `lib.rs` (`lib`), an item under
/// `#[cfg(doctest)]`, the anchor of the README's doc tests.
fn defined_beyond_a_table(text: &str, lib: bool) -> Vec<String> {
    let code: String =
        text.lines().map(|line| line.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n");
    let mut found = Vec::new();
    let mut rest = code.trim_start();
    let mut doctest = false;
    while !rest.is_empty() {
        // An attribute, to its closing bracket.
        if let Some(attribute) = rest.strip_prefix("#!").or_else(|| rest.strip_prefix('#')) {
            let mut depth = 0;
            let end = attribute
                .char_indices()
                .find_map(|(i, c)| {
                    depth += match c {
                        '[' => 1,
                        ']' => -1,
                        _ => 0,
                    };
                    (depth == 0).then_some(i + 1)
                })
                .unwrap_or(attribute.len());
            doctest |= attribute[..end].contains("cfg(doctest)");
            rest = attribute[end..].trim_start();
            continue;
        }
        // An item, to its `;` outside braces, or to the brace that closes its body (a `use` tree's
        // braces are followed by its `;`), or to the end.
        let mut depth = 0;
        let end = rest
            .char_indices()
            .find_map(|(i, c)| {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 && !rest[i + 1..].trim_start().starts_with(';') {
                            return Some(i + 1);
                        }
                    }
                    ';' if depth == 0 => return Some(i + 1),
                    _ => {}
                }
                None
            })
            .unwrap_or(rest.len());
        let item = &rest[..end];
        let unqualified = match item.strip_prefix("pub") {
            Some(visible) => match visible.trim_start().strip_prefix('(') {
                Some(inner) => inner.split_once(')').map_or("", |(_, after)| after),
                None => visible,
            },
            None => item,
        }
        .trim_start();
        let declared = unqualified
            .strip_prefix("mod ")
            .and_then(|name| name.strip_suffix(';'))
            .is_some_and(|name| name.trim().chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        let reexported = unqualified.starts_with("use ") && item.ends_with(';');
        if !(declared || reexported || (lib && doctest)) {
            found.push(item.lines().next().unwrap_or_default().trim().to_owned());
        }
        doctest = false;
        rest = rest[end..].trim_start();
    }
    found
}

/// Every `mod.rs` and `lib.rs` under `dir`.
fn tables(dir: &Path, found: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("source directory") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            tables(&path, found);
        } else if path.file_name().is_some_and(|name| name == "mod.rs" || name == "lib.rs") {
            found.push(path);
        }
    }
}

#[test]
fn every_mod_rs_only_declares_its_children_and_reexports() {
    // A folder's `mod.rs` is its table of contents (docs/architecture.md): what it would define lives in
    // a child of its own. Fixed: `runtime/mod.rs` held `run`'s loop and its options, `queue/mod.rs` the
    // queue, `cli/mod.rs` the dispatch, `output/mod.rs` the plan's formats, `cluster/watch/mod.rs` the
    // watches' start, `decode/mod.rs` its tests.
    let mut files = Vec::new();
    tables(&repo().join("src"), &mut files);
    for entry in std::fs::read_dir(repo().join("crates")).expect("the crates") {
        tables(&entry.expect("a crate").path().join("src"), &mut files);
    }
    assert!(files.iter().any(|file| file.ends_with("src/runtime/mod.rs")), "{files:?}");
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("source file");
        let lib = file.file_name().is_some_and(|name| name == "lib.rs");
        let relative = file.strip_prefix(repo()).unwrap_or(file).display().to_string();
        found.extend(defined_beyond_a_table(&text, lib).into_iter().map(|item| format!("{relative}: {item}")));
    }
    assert!(found.is_empty(), "a mod.rs declares and re-exports, nothing more:\n{}", found.join("\n"));
}

#[test]
fn the_check_of_tables_of_contents_finds_an_item_defined_in_one() {
    let table = "//! The folder.\n\n#![forbid(unsafe_code)]\nmod a;\npub mod b;\n\
                 pub(crate) use a::{X, Y as Z};\npub use b::*;\npub(super) use a::{self, inner::{P, Q}};\n\
                 // fn commented_out() {}\n#[cfg(test)]\n// Tests.\n#[allow(unused)]\nmod tests;\n";
    assert!(defined_beyond_a_table(table, false).is_empty(), "{:?}", defined_beyond_a_table(table, false));
    let seeded = format!(
        "{table}/// Runs it.\npub fn run() -> u8 {{\n    let x = {{ 1 }};\n    x\n}}\nconst LIMIT: usize = 4;\n\
         #[cfg(test)]\nmod inline {{\n    use super::*;\n}}\npub struct Shared {{ a: u8 }}\n"
    );
    assert_eq!(
        defined_beyond_a_table(&seeded, false),
        ["pub fn run() -> u8 {", "const LIMIT: usize = 4;", "mod inline {", "pub struct Shared { a: u8 }"]
    );
    // The README's doc-test anchor is let be in a crate's lib.rs, and there alone.
    let anchor = "#[doc = include_str!(\"../README.md\")]\n#[cfg(doctest)]\npub struct ReadmeDoctests;\nmod a;\n";
    assert!(defined_beyond_a_table(anchor, true).is_empty());
    assert_eq!(defined_beyond_a_table(anchor, false), ["pub struct ReadmeDoctests;"]);
}
