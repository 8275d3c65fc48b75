//! `plan -o json` over a dump of 150,000 pods / 5,000 nodes, against serde_json's bare parse (BENCHMARKS.md).
//!
//! `cargo bench --bench plan` generates the dump in memory once (`crates/test-support/src/cluster.rs`, seed 1,
//! the same bytes as `cargo run --release --example gen_cluster -- --nodes 5000 --pods-per-node 30
//! --seed 1`), then measures in the same run:
//! - `plan/parse_ignored_any`: `serde_json::from_slice::<serde::de::IgnoredAny>` on the bytes, the floor;
//! - `plan/read_replay_render_json`: `decode::read_keeping` as `plan -f` reads (no pod owner outside a game day) + `replay` over every node + the JSON plan
//!   rendered into a `Vec<u8>`, everything dropped inside the timing, as the binary does;
//! - `plan_breakdown/*`: the three stages of the second one alone, to say where the time goes, and
//!   the `--summary` and `--timeline` renderings of the same plan (target: less than the JSON's).
//!
//! It prints one `BENCH …` line per benchmark and a `RATIO …` line: the median of the second over the
//! median of the first (target ≤ 1.5×).

// Benchmarks measure real time: the runtime's clock (clippy.toml) is for the product's code.
#![allow(clippy::disallowed_methods)]

use std::cell::RefCell;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use taint_evict::decode as file;

/// What `plan -f` keeps of a dump outside a game day: no pod's owner.
fn as_plan_reads() -> file::Keep {
    file::Keep { owners: false, ..file::Keep::default() }
}
use taint_evict::engine::time::Timestamp;
use taint_evict::engine::{plan::Plan, snapshot::Snapshot};
use taint_evict::host::replay;
use taint_evict::output::{ColorMode, OutputFormat, View, render_plan, render_plan_view};
use taint_evict_test_support::cluster;
use taint_evict_test_support::timing::{measuring, report, stats, timed};

const SAMPLES: usize = 10;
const RATIO_TARGET: f64 = 1.5;

fn now() -> Timestamp {
    file::parse_time(cluster::NOW).expect("NOW is RFC 3339")
}

fn run_plan(snapshot: &Snapshot) -> Plan<'_> {
    let selected: Vec<usize> = (0..snapshot.nodes.len()).collect();
    replay(snapshot, &selected, &[], now())
}

fn render(plan: &Plan, out: &mut Vec<u8>) {
    out.clear();
    render_plan(plan, OutputFormat::Json, ColorMode::Plain, None, out).expect("writing to a Vec cannot fail");
}

fn plan(c: &mut Criterion) {
    let config = if measuring() {
        cluster::Config { nodes: 5_000, pods_per_node: 30, seed: 1, healthy: false }
    } else {
        cluster::Config { nodes: 20, pods_per_node: 30, seed: 1, healthy: false }
    };
    let started = Instant::now();
    let mut dump = Vec::new();
    cluster::generate(&config, &mut dump).expect("writing to a Vec cannot fail");
    let pods = config.nodes * config.pods_per_node;
    if measuring() {
        println!(
            "DUMP {} nodes, {pods} pods: {} bytes ({:.0} bytes per pod), generated in {:.1?}",
            config.nodes,
            dump.len(),
            dump.len() as f64 / pods as f64,
            started.elapsed()
        );
    }
    let label = format!("{}x{}", config.nodes, config.pods_per_node);
    let out = RefCell::new(Vec::new());

    let mut group = c.benchmark_group("plan");
    group
        .sample_size(SAMPLES)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8))
        .throughput(Throughput::Bytes(dump.len() as u64));
    let parse_log = RefCell::new(Vec::new());
    group.bench_function(format!("parse_ignored_any/{label}"), |b| {
        b.iter_custom(|iters| {
            timed(
                iters,
                &parse_log,
                || (),
                |()| serde_json::from_slice::<serde::de::IgnoredAny>(&dump).expect("the dump is JSON"),
            )
        });
    });
    let plan_log = RefCell::new(Vec::new());
    group.bench_function(format!("read_replay_render_json/{label}"), |b| {
        b.iter_custom(|iters| {
            timed(
                iters,
                &plan_log,
                || (),
                |()| {
                    let snapshot = file::read_keeping(&dump, &as_plan_reads()).expect("the dump is valid");
                    let plan = run_plan(&snapshot);
                    render(&plan, &mut out.borrow_mut());
                    // Dropped inside the timing: the binary frees them too.
                    drop(plan);
                    drop(snapshot);
                },
            )
        });
    });
    group.finish();

    // Checked outside the timing, whether or not the benchmarks above ran (a filter may skip them).
    let snapshot = file::read_keeping(&dump, &as_plan_reads()).expect("the dump is valid");
    let plan = run_plan(&snapshot);
    assert_eq!(plan.nodes.len(), config.nodes);
    assert_eq!(plan.nodes.iter().map(|n| n.pods.len()).sum::<usize>(), pods, "the plan reports every pod");
    let mut rendered = Vec::new();
    render(&plan, &mut rendered);
    let document: serde_json::Value = serde_json::from_slice(&rendered).expect("the plan is JSON");
    assert_eq!(document["kind"], "EvictionPlan");

    let target = stats(&parse_log, SAMPLES).map(|(median, _, _)| median.mul_f64(RATIO_TARGET));
    report(&format!("plan/parse_ignored_any/{label}"), &parse_log, SAMPLES, None);
    report(&format!("plan/read_replay_render_json/{label}"), &plan_log, SAMPLES, target);
    if let (true, Some((parse, parse_min, _)), Some((whole, whole_min, _))) =
        (measuring(), stats(&parse_log, SAMPLES), stats(&plan_log, SAMPLES))
    {
        let ratio = whole.as_secs_f64() / parse.as_secs_f64();
        println!(
            "RATIO plan/{label}: read+replay+render {whole:.3?} / parse into IgnoredAny {parse:.3?} = {ratio:.2}x \
             (min/min {:.2}x), output {} bytes; target <= {RATIO_TARGET}x: {}",
            whole_min.as_secs_f64() / parse_min.as_secs_f64(),
            rendered.len(),
            if ratio <= RATIO_TARGET { "PASS" } else { "MISS" },
        );
    }

    // Where the time goes: each stage alone, on the same dump.
    let mut group = c.benchmark_group("plan_breakdown");
    group
        .sample_size(SAMPLES)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(6));
    let read_log = RefCell::new(Vec::new());
    group.bench_function(format!("read/{label}"), |b| {
        b.iter_custom(|iters| {
            timed(iters, &read_log, || (), |()| file::read_keeping(&dump, &as_plan_reads()).expect("the dump is valid"))
        });
    });
    let replay_log = RefCell::new(Vec::new());
    group.bench_function(format!("replay/{label}"), |b| {
        b.iter_custom(|iters| timed(iters, &replay_log, || (), |()| run_plan(&snapshot)));
    });
    let render_log = RefCell::new(Vec::new());
    group.bench_function(format!("render_json/{label}"), |b| {
        b.iter_custom(|iters| timed(iters, &render_log, || (), |()| render(&plan, &mut out.borrow_mut())));
    });
    // `--summary` and `--timeline` over the same plan: each must cost less than the JSON.
    let mut views = Vec::new();
    for (name, view) in [
        ("render_summary", View { summary: true, ..View::plain() }),
        ("render_timeline", View { timeline: true, ..View::plain() }),
    ] {
        let log = RefCell::new(Vec::new());
        group.bench_function(format!("{name}/{label}"), |b| {
            b.iter_custom(|iters| {
                timed(
                    iters,
                    &log,
                    || (),
                    |()| {
                        let mut out = out.borrow_mut();
                        out.clear();
                        render_plan_view(&plan, OutputFormat::Table, &view, None, &mut *out).expect("a Vec takes it");
                    },
                )
            });
        });
        views.push((name, log));
    }
    group.finish();
    for (stage, log) in [("read", &read_log), ("replay", &replay_log), ("render_json", &render_log)] {
        report(&format!("plan_breakdown/{stage}/{label}"), log, SAMPLES, None);
    }
    let json = stats(&render_log, SAMPLES).map(|(median, _, _)| median);
    for (name, log) in &views {
        report(&format!("plan_breakdown/{name}/{label}"), log, SAMPLES, json);
    }
}

criterion_group!(benches, plan);
criterion_main!(benches);
