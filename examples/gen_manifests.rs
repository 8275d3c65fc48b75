//! Writes synthetic rendered manifests, as `helm template` writes them (BENCHMARKS.md, `audit` of
//! rendered manifests).
//!
//! ```text
//! cargo run --release --example gen_manifests -- --documents 10000 --out /tmp/manifests.yaml
//! cargo run --release --example gen_manifests -- --documents 10000 --per-file 5 --out /tmp/manifests
//! ```
//!
//! Deterministic: document `i` is a Deployment, a StatefulSet, a DaemonSet or a PodDisruptionBudget by
//! `i % 4`, with one to three replicas, tolerations of `unreachable` for 0 to 600 s or none, and a
//! required spread over zones for one owner in three, so that every rule of docs/audit.md finds some.

use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use clap::Parser;

/// Writes synthetic rendered manifests.
#[derive(Parser)]
struct Args {
    /// How many documents.
    #[arg(long, default_value_t = 10_000)]
    documents: usize,
    /// Documents per file: with it, `--out` is a directory of files; without, one file.
    #[arg(long)]
    per_file: Option<usize>,
    /// Where to write.
    #[arg(long)]
    out: PathBuf,
}

/// Document `i`, starting with its `---` line.
fn document(i: usize) -> String {
    let name = format!("app-{i:05}");
    let namespace = format!("team-{}", i % 17);
    let mut text = String::new();
    let _ = writeln!(text, "---\n# Source: chart/templates/{name}.yaml");
    if i % 4 == 3 {
        let _ = writeln!(
            text,
            "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: {name}\n  namespace: {namespace}\n\
             spec:\n  minAvailable: 1\n  selector:\n    matchLabels:\n      app: {name}"
        );
        return text;
    }
    let (api, kind) = match i % 4 {
        0 => ("apps/v1", "Deployment"),
        1 => ("apps/v1", "StatefulSet"),
        _ => ("apps/v1", "DaemonSet"),
    };
    let _ = writeln!(
        text,
        "apiVersion: {api}\nkind: {kind}\nmetadata:\n  name: {name}\n  namespace: {namespace}\n  labels:\n    app: {name}\nspec:"
    );
    if kind != "DaemonSet" {
        let _ = writeln!(text, "  replicas: {}", 1 + i % 3);
    }
    let _ = writeln!(
        text,
        "  selector:\n    matchLabels:\n      app: {name}\n  template:\n    metadata:\n      labels:\n        app: {name}\n    spec:"
    );
    if i.is_multiple_of(3) {
        let _ = writeln!(
            text,
            "      topologySpreadConstraints:\n      - maxSkew: 1\n        topologyKey: topology.kubernetes.io/zone\n        \
             whenUnsatisfiable: DoNotSchedule\n        labelSelector:\n          matchLabels:\n            app: {name}"
        );
    }
    if !i.is_multiple_of(5) {
        let seconds = (i % 7) * 100;
        let _ = writeln!(
            text,
            "      tolerations:\n      - key: node.kubernetes.io/unreachable\n        operator: Exists\n        \
             effect: NoExecute\n        tolerationSeconds: {seconds}"
        );
    }
    let _ = writeln!(
        text,
        "      containers:\n      - name: app\n        image: registry.example/{name}:1.0.{i}\n        \
         resources:\n          requests:\n            cpu: 100m\n            memory: 128Mi"
    );
    text
}

fn write(path: &Path, documents: std::ops::Range<usize>) -> std::io::Result<()> {
    let mut file = std::io::BufWriter::new(fs::File::create(path)?);
    for i in documents {
        file.write_all(document(i).as_bytes())?;
    }
    file.flush()
}

fn main() -> std::io::Result<()> {
    let args = Args::parse();
    match args.per_file {
        None => write(&args.out, 0..args.documents)?,
        Some(per_file) => {
            let per_file = per_file.max(1);
            fs::create_dir_all(&args.out)?;
            for (n, start) in (0..args.documents).step_by(per_file).enumerate() {
                let path = args.out.join(format!("chart-{n:05}.yaml"));
                write(&path, start..(start + per_file).min(args.documents))?;
            }
        }
    }
    eprintln!("wrote {} documents to {}", args.documents, args.out.display());
    Ok(())
}
