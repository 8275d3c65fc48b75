//! `audit` against a whole-cluster `plan` over one healthy dump of 150,000 pods / 5,000 nodes in three
//! zones (BENCHMARKS.md).
//!
//! `cargo bench --bench audit` generates the dump in memory once (`crates/test-support/src/cluster.rs`,
//! seed 1, every node healthy: the bytes of `cargo run --release --example gen_cluster -- --nodes 5000
//! --pods-per-node 30 --seed 1 --healthy`), then measures in the same run:
//! - `audit/plan_every_node`: a `plan -f` of every node: the dump read as `plan` reads it (node health
//!   beside), every node replayed, the JSON plan rendered;
//! - `audit/audit`: an `audit -f`: the dump read as `audit` reads it (no node label without `-l`,
//!   every pod's owner, node health beside), every zone's and every node's outage predicted, the findings, the
//!   JSON audit rendered.
//!
//! Everything is dropped inside the timing, as the binaries do. It prints one `BENCH …` line per
//! benchmark and a `RATIO …` line: the audit's median over the plan's (target ≤ 3×).

// Benchmarks measure real time: the runtime's clock (clippy.toml) is for the product's code.
#![allow(clippy::disallowed_methods)]

use std::cell::RefCell;
use std::io::Cursor;
use std::time::Duration;

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use taint_evict::decode::bounded::{MaxSize, read_file_then};
use taint_evict::decode::lifecycle::HealthBeside;
use taint_evict::decode::{Keep, KeepLabels, parse_time};
use taint_evict::engine::audit::{Outcome, Setting, replica_findings, scenarios, toleration_findings};
use taint_evict::engine::lifecycle::{Flags, MAX_UNSETTLED, Observation};
use taint_evict::engine::snapshot::Snapshot;
use taint_evict::engine::time::Timestamp;
use taint_evict::output::audit::{Audit, EvictionAudit};
use taint_evict::output::json::write_json;
use taint_evict::output::{ColorMode, OutputFormat, render_plan};
use taint_evict_test_support::cluster;
use taint_evict_test_support::timing::{measuring, report, stats, timed};

const SAMPLES: usize = 10;
const RATIO_TARGET: f64 = 3.0;
/// `audit`'s and `plan`'s default for the controller's version and `--silent-after`.
const MINOR: u32 = 29;
const SILENT_AFTER: Duration = Duration::from_secs(12);

fn now() -> Timestamp {
    parse_time(cluster::NOW).expect("NOW is RFC 3339")
}

/// The dump read as `keep` says, with node health beside, as `-f` reads a file (in groups of items on
/// both cores).
fn read(dump: &[u8], keep: &Keep) -> (Snapshot, Observation) {
    let size = dump.len() as u64;
    let read = read_file_then(Cursor::new(dump), size, keep, &HealthBeside, MaxSize::DEFAULT);
    let (snapshot, health) = read.expect("the dump is valid");
    let observation = health.expect("node health").observe(now(), Flags::defaults_for(MINOR), SILENT_AFTER);
    (snapshot, observation)
}

/// `plan -f DUMP -l <every node>`: a verdict for every pod.
fn plan_every_node(dump: &[u8], out: &mut Vec<u8>) -> usize {
    let (snapshot, observation) =
        read(dump, &Keep { labels: KeepLabels::Only(Default::default()), owners: false, workloads: false });
    let selected: Vec<usize> = (0..snapshot.nodes.len()).collect();
    let plan = taint_evict::host::replay(&snapshot, &selected, &[], now());
    out.clear();
    render_plan(&plan, OutputFormat::Json, ColorMode::Plain, None, out).expect("writing to a Vec cannot fail");
    drop(observation);
    plan.nodes.iter().map(|node| node.pods.len()).sum()
}

/// `audit -f DUMP -o json`: (scenarios predicted, findings).
fn audit(dump: &[u8], out: &mut Vec<u8>) -> (usize, usize) {
    let (snapshot, observation) =
        read(dump, &Keep { labels: KeepLabels::Only(Default::default()), owners: true, workloads: true });
    let setting = Setting {
        observation: &observation,
        max_unsettled: MAX_UNSETTLED,
        namespace: None,
        only: None,
        host: taint_evict::host::host(),
    };
    let scenarios = scenarios(&snapshot, &setting);
    let mut findings = replica_findings(&snapshot, &scenarios);
    findings.extend(toleration_findings(&snapshot, &observation.flags));
    let audit = Audit {
        now: now(),
        settings: taint_evict::engine::lifecycle::Settings::resolve(observation.flags, &[]),
        findings: &findings,
        scenarios: &scenarios,
        workloads: &snapshot.workloads,
    };
    out.clear();
    write_json(&EvictionAudit::new(&audit), out).expect("writing to a Vec cannot fail");
    let predicted = scenarios.iter().filter(|s| matches!(s.outcome, Outcome::Predicted { .. })).count();
    (predicted, findings.len())
}

fn bench(c: &mut Criterion) {
    let config =
        cluster::Config { nodes: if measuring() { 5_000 } else { 30 }, pods_per_node: 30, seed: 1, healthy: true };
    let mut dump = Vec::new();
    cluster::generate(&config, &mut dump).expect("writing to a Vec cannot fail");
    let label = format!("{}x{}", config.nodes, config.pods_per_node);
    let out = RefCell::new(Vec::new());

    let mut group = c.benchmark_group("audit");
    group.sample_size(SAMPLES).sampling_mode(SamplingMode::Flat).warm_up_time(Duration::from_secs(1));
    let plan_log = RefCell::new(Vec::new());
    group.bench_function(format!("plan_every_node/{label}"), |b| {
        b.iter_custom(|iters| timed(iters, &plan_log, || (), |()| plan_every_node(&dump, &mut out.borrow_mut())));
    });
    let audit_log = RefCell::new(Vec::new());
    group.bench_function(format!("audit/{label}"), |b| {
        b.iter_custom(|iters| timed(iters, &audit_log, || (), |()| audit(&dump, &mut out.borrow_mut())));
    });
    group.finish();

    // Checked outside the timing, whether or not the benchmarks above ran (a filter may skip them).
    let mut rendered = Vec::new();
    assert_eq!(plan_every_node(&dump, &mut rendered), config.nodes * config.pods_per_node, "a verdict per pod");
    let (predicted, findings) = audit(&dump, &mut rendered);
    // Every node's outage and every zone's (past 200 nodes by the zone's drain).
    assert_eq!(predicted, config.nodes + 3, "the outages predicted");
    let document: serde_json::Value = serde_json::from_slice(&rendered).expect("the audit is JSON");
    assert_eq!(document["kind"], "EvictionAudit");

    let target = stats(&plan_log, SAMPLES).map(|(median, _, _)| median.mul_f64(RATIO_TARGET));
    report(&format!("audit/plan_every_node/{label}"), &plan_log, SAMPLES, None);
    report(&format!("audit/audit/{label}"), &audit_log, SAMPLES, target);
    if let (true, Some((plan, plan_min, _)), Some((whole, whole_min, _))) =
        (measuring(), stats(&plan_log, SAMPLES), stats(&audit_log, SAMPLES))
    {
        let ratio = whole.as_secs_f64() / plan.as_secs_f64();
        println!(
            "RATIO audit/{label}: audit {whole:.3?} / plan of every node {plan:.3?} = {ratio:.2}x (min/min {:.2}x), \
             {predicted} outages, {findings} findings; target <= {RATIO_TARGET}x: {}",
            whole_min.as_secs_f64() / plan_min.as_secs_f64(),
            if ratio <= RATIO_TARGET { "PASS" } else { "MISS" },
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
