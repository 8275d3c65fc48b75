//! The engine stays pure and rendering stays IO-free: a scan of their sources for forbidden paths.

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

#[test]
fn output_renders_without_cluster_or_clock() {
    let forbidden =
        ["tokio", "kube::", "k8s_openapi", "crate::cli", "crate::source", "SystemTime", "::now()", "println!"];
    let mut found = Vec::new();
    scan(&repo().join("src/output"), &forbidden, &mut found);
    assert!(found.is_empty(), "src/output must not do IO of its own:\n{}", found.join("\n"));
}
