//! Writes a synthetic `kubectl get nodes,pods -A -o json` dump (BENCHMARKS.md).
//!
//! ```text
//! cargo run --release --example gen_cluster -- --nodes 5000 --pods-per-node 30 --seed 1 --out /tmp/dump.json
//! ```
//!
//! Seeded and deterministic; see `crates/test-support/src/cluster.rs` for what the objects hold. The dump is
//! taken at 2026-11-22T10:00:00Z: use `plan --now 2026-11-22T10:00:00Z` on it.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use clap::Parser;
use taint_evict_test_support::cluster;

/// Writes a synthetic cluster dump.
#[derive(Parser)]
struct Args {
    /// How many nodes.
    #[arg(long, default_value_t = 5_000)]
    nodes: usize,
    /// How many pods on each node.
    #[arg(long, default_value_t = 30)]
    pods_per_node: usize,
    /// The PRNG seed: the same seed and sizes give the same bytes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Every node healthy (an audit's input); else about 90% carry the `unreachable` taints.
    #[arg(long)]
    healthy: bool,
    /// Where to write the dump (`-` for stdout).
    #[arg(long)]
    out: PathBuf,
}

fn main() -> std::io::Result<()> {
    let args = Args::parse();
    let config = cluster::Config {
        nodes: args.nodes,
        pods_per_node: args.pods_per_node,
        seed: args.seed,
        healthy: args.healthy,
    };
    let mut out: Box<dyn Write> = if args.out.as_os_str() == "-" {
        Box::new(BufWriter::with_capacity(1 << 20, std::io::stdout().lock()))
    } else {
        Box::new(BufWriter::with_capacity(1 << 20, File::create(&args.out)?))
    };
    cluster::generate(&config, &mut out)?;
    out.flush()?;
    if args.out.as_os_str() != "-" {
        let bytes = std::fs::metadata(&args.out)?.len();
        let pods = args.nodes * args.pods_per_node;
        eprintln!(
            "wrote {} ({} nodes, {pods} pods, {bytes} bytes, {:.0} bytes per pod); plan it with --now {}",
            args.out.display(),
            args.nodes,
            bytes as f64 / pods.max(1) as f64,
            cluster::NOW
        );
    }
    Ok(())
}
