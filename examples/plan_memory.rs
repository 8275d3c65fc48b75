//! Where `plan -f DUMP -o json`'s memory goes, phase by phase (issue 6: peak RSS ≤ 1.5× the dump).
//!
//! ```text
//! cargo run --release --example gen_cluster -- --nodes 5000 --pods-per-node 30 --seed 1 --out /tmp/dump.json
//! cargo run --release --example plan_memory -- /tmp/dump.json
//! ```
//!
//! Runs the binary's phases in its order (read the file, `decode::read`, drop the bytes, replay
//! over every node, render JSON through a `BufWriter` to a sink) under the counting allocator of
//! `crates/test-support/src/counting.rs`, and prints for each phase the heap bytes live at its end and the
//! peak during it, relative to the dump's size. `/usr/bin/time -v` on the real binary gives the RSS;
//! this says which phase makes the peak and what is live then.

use std::io::{BufWriter, Write};

use taint_evict::decode as file;
use taint_evict::engine::replay::replay;
use taint_evict::output::{ColorMode, OutputFormat, render_plan};
use taint_evict_test_support::counting::{self, read, reset_peak};

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

fn main() -> std::io::Result<()> {
    let path = std::env::args().nth(1).expect("usage: plan_memory DUMP");
    let base = read();
    let mb = |bytes: usize| bytes as f64 / 1e6;
    let phase = |name: &str, dump: usize| {
        let now = read();
        println!(
            "{name:<28} live {:>7.1} MB ({:.2}x the dump) in {:>9} blocks (~{:.1} MB with glibc's overhead), \
             peak during the phase {:>7.1} MB ({:.2}x), RSS {:>7.1} MB ({:.2}x)",
            mb(now.bytes - base.bytes),
            (now.bytes - base.bytes) as f64 / dump as f64,
            now.blocks - base.blocks,
            mb(now.footprint - base.footprint),
            mb(now.peak - base.bytes),
            (now.peak - base.bytes) as f64 / dump as f64,
            mb(now.rss),
            now.rss as f64 / dump as f64,
        );
        reset_peak();
    };

    let bytes = std::fs::read(&path)?;
    let dump = bytes.len();
    println!("dump {path}: {:.1} MB", mb(dump));
    phase("read the file", dump);
    let snapshot = file::read(&bytes).expect("the dump is valid");
    phase("decode::read", dump);
    drop(bytes);
    phase("bytes dropped (snapshot)", dump);
    let selected: Vec<usize> = (0..snapshot.nodes.len()).collect();
    let plan = replay(&snapshot, &selected, &[], file::parse_time("2026-11-22T10:00:00Z").expect("RFC 3339"));
    phase("replay (snapshot + plan)", dump);
    let mut out = BufWriter::new(std::io::sink());
    render_plan(&plan, OutputFormat::Json, ColorMode::Plain, None, &mut out)?;
    out.flush()?;
    phase("render -o json", dump);
    drop(plan);
    drop(snapshot);
    phase("everything dropped", dump);
    Ok(())
}
