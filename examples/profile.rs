//! Small drivers of the benchmarked code paths, for profilers (issue 6: `valgrind --tool=callgrind`,
//! `perf`) and for quick timings outside criterion.
//!
//! ```text
//! cargo build --release --example profile
//! # the zone outage (engine only), setup excluded from collection:
//! valgrind --tool=callgrind --toggle-collect='*profile::outage*' \
//!     target/release/examples/profile zone-outage --nodes 500
//! # the eviction queue's timer churn, one routine at a time:
//! valgrind --tool=callgrind --toggle-collect='*profile::run_churn*' \
//!     target/release/examples/profile timer-churn --routine past-due --timers 100000
//! # the dump reader, then replay and JSON rendering, each in its own function:
//! valgrind --tool=callgrind --toggle-collect='*profile::read_dump*' \
//!     target/release/examples/profile plan --dump /tmp/dump-500.json
//! ```
//!
//! Each phase runs in an `#[inline(never)]` function named after it (`outage`, `run_churn`, `read_dump`,
//! `replay_all`, `render_json`, and `parse_ignored` with `plan --ignored-any`), so `--toggle-collect`
//! can select it and the profile names it.

// This example measures real time: the runtime's clock (clippy.toml) is for the product's code.
#![allow(clippy::disallowed_methods)]

use std::hint::black_box;
use std::time::Instant;

use clap::{Parser, Subcommand, ValueEnum};
use taint_evict::decode as file;
use taint_evict::engine::queue::{EvictionQueue, Ticket};
use taint_evict::engine::{Engine, Input};
use taint_evict::engine::{plan::Plan, replay::replay, snapshot::Snapshot};
use taint_evict::output::{ColorMode, OutputFormat, render_plan};
use taint_evict_test_support::churn;
use taint_evict_test_support::zone;

/// Drives one benchmarked path.
#[derive(Parser)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The zone outage: N nodes × P pods, every node tainted unreachable:NoExecute.
    ZoneOutage {
        /// How many nodes.
        #[arg(long, default_value_t = 500)]
        nodes: usize,
        /// How many pods per node.
        #[arg(long, default_value_t = 30)]
        pods_per_node: usize,
        /// How many times (each on a fresh engine).
        #[arg(long, default_value_t = 1)]
        repeat: usize,
    },
    /// One timer-churn routine of `benches/engine.rs` on a fresh `EvictionQueue<u32>`.
    TimerChurn {
        /// Which routine.
        #[arg(long, value_enum)]
        routine: Routine,
        /// How many timers.
        #[arg(long, default_value_t = 1_000_000)]
        timers: u32,
        /// How many times (each on a fresh queue).
        #[arg(long, default_value_t = 1)]
        repeat: usize,
    },
    /// `plan -o json` over a dump: read, replay over every node, render.
    Plan {
        /// The dump (see `examples/gen_cluster.rs`).
        #[arg(long)]
        dump: std::path::PathBuf,
        /// How many times.
        #[arg(long, default_value_t = 1)]
        repeat: usize,
        /// Only parse the dump into `serde::de::IgnoredAny` (the benchmark's floor), in `parse_ignored`.
        #[arg(long)]
        ignored_any: bool,
    },
}

/// The timer-churn routines.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum Routine {
    /// Schedules at future instants, then as many cancels.
    ScheduleCancel,
    /// Schedules due at once, drained.
    Immediate,
    /// Schedules at future instants, all fired by `pop_due`.
    PastDue,
}

#[inline(never)]
fn run_churn(routine: Routine, queue: &mut EvictionQueue<u32>, tickets: &mut Vec<Ticket>, timers: u32) {
    match routine {
        Routine::ScheduleCancel => churn::schedule_then_cancel(queue, timers),
        Routine::Immediate => churn::immediate_then_finish(queue, tickets, timers),
        Routine::PastDue => churn::past_due_pop_due(queue, timers),
    }
}

#[inline(never)]
fn outage(engine: &mut Engine, inputs: Vec<Input>) -> zone::Tally {
    zone::run_outage(engine, inputs)
}

#[inline(never)]
fn parse_ignored(bytes: &[u8]) {
    serde_json::from_slice::<serde::de::IgnoredAny>(bytes).expect("the dump is JSON");
}

#[inline(never)]
fn read_dump(bytes: &[u8]) -> Snapshot {
    file::read(bytes).expect("the dump is valid")
}

#[inline(never)]
fn replay_all(snapshot: &Snapshot) -> Plan<'_> {
    let selected: Vec<usize> = (0..snapshot.nodes.len()).collect();
    let now = file::parse_time("2026-11-22T10:00:00Z").expect("RFC 3339");
    replay(snapshot, &selected, &[], now)
}

#[inline(never)]
fn render_json(plan: &Plan, out: &mut Vec<u8>) {
    out.clear();
    render_plan(plan, OutputFormat::Json, ColorMode::Plain, None, out).expect("writing to a Vec cannot fail");
}

fn main() -> std::io::Result<()> {
    match Args::parse().command {
        Command::ZoneOutage { nodes, pods_per_node, repeat } => {
            for run in 0..repeat {
                let mut engine = zone::populated(nodes, pods_per_node);
                let inputs = zone::outage_inputs(nodes);
                let start = Instant::now();
                let tally = outage(&mut engine, inputs);
                let elapsed = start.elapsed();
                assert_eq!(tally, zone::expected(nodes, pods_per_node));
                println!("run {run}: zone outage {nodes}x{pods_per_node} in {elapsed:.3?}: {tally:?}");
                black_box(engine);
            }
        }
        Command::TimerChurn { routine, timers, repeat } => {
            for run in 0..repeat {
                let mut queue = EvictionQueue::new();
                let mut tickets = Vec::with_capacity(timers as usize);
                let start = Instant::now();
                run_churn(routine, &mut queue, &mut tickets, timers);
                let elapsed = start.elapsed();
                println!("run {run}: timer churn {routine:?} x{timers} in {elapsed:.3?}");
                black_box((queue, tickets));
            }
        }
        Command::Plan { dump, repeat, ignored_any } => {
            let bytes = std::fs::read(dump)?;
            let mut out = Vec::new();
            for run in 0..repeat {
                if ignored_any {
                    let start = Instant::now();
                    parse_ignored(&bytes);
                    println!("run {run}: parse into IgnoredAny {:.3?}; {} bytes", start.elapsed(), bytes.len());
                    continue;
                }
                let start = Instant::now();
                let snapshot = read_dump(&bytes);
                let read = start.elapsed();
                let plan = replay_all(&snapshot);
                let replayed = start.elapsed();
                render_json(&plan, &mut out);
                let rendered = start.elapsed();
                drop(plan);
                drop(snapshot);
                println!(
                    "run {run}: read {read:.3?}, replay {:.3?}, render {:.3?}, drop {:.3?}; {} bytes in, {} out",
                    replayed - read,
                    rendered - replayed,
                    start.elapsed() - rendered,
                    bytes.len(),
                    out.len()
                );
            }
        }
    }
    Ok(())
}
