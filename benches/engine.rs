//! Engine benchmarks (targets: BENCHMARKS.md): the zone outage, and timer churn in the eviction queue.
//!
//! `cargo bench --bench engine` runs them all; `-- zone_outage`, `-- timer_churn` or `-- next_deadline`
//! one group. Besides criterion's report, each benchmark prints one `BENCH …` line with the median,
//! min, max and max/median of its samples, and its target. Under `cargo test`/nextest the workloads
//! shrink and each routine runs once, as a smoke test that keeps the assertions honest.

// Benchmarks measure real time: the runtime's clock (clippy.toml) is for the product's code.
#![allow(clippy::disallowed_methods)]

use std::cell::RefCell;
use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use taint_evict::engine::queue::EvictionQueue;
use taint_evict_test_support::churn;
use taint_evict_test_support::timing::{measuring, report, timed};
use taint_evict_test_support::zone;

const SAMPLES: usize = 10;

/// 5,000 nodes × 30 pods: every node gets `unreachable:NoExecute`, one pass each, one thread.
fn zone_outage(c: &mut Criterion) {
    let (nodes, pods_per_node) = if measuring() { (5_000, 30) } else { (50, 30) };
    let tallies = RefCell::new(Vec::new());
    let log = RefCell::new(Vec::new());
    let mut group = c.benchmark_group("zone_outage");
    group
        .sample_size(SAMPLES)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .throughput(Throughput::Elements((nodes * pods_per_node) as u64));
    group.bench_function(BenchmarkId::from_parameter(format!("{nodes}x{pods_per_node}")), |b| {
        b.iter_custom(|iters| {
            timed(
                iters,
                &log,
                // Not timed: the synced engine and the node updates the informer would deliver.
                || (zone::populated(nodes, pods_per_node), zone::outage_inputs(nodes)),
                |(mut engine, inputs)| {
                    let tally = zone::run_outage(&mut engine, inputs);
                    tallies.borrow_mut().push(tally);
                    engine // dropped after the timing
                },
            )
        });
    });
    group.finish();

    // Checked after the timing: every pass decided exactly what the outage must decide.
    let expected = zone::expected(nodes, pods_per_node);
    let tallies = tallies.into_inner();
    assert!(tallies.iter().all(|t| *t == expected), "zone outage decided {tallies:?}, expected {expected:?}");
    if let Some(tally) = tallies.last() {
        println!(
            "CHECK zone_outage/{nodes}x{pods_per_node}: {} passes, each {} scheduled at +{}s and {} evictions due now, {} other actions",
            tallies.len(),
            tally.scheduled_at_window,
            zone::WINDOW_SECONDS,
            tally.evict_now,
            tally.other
        );
    }
    report(&format!("zone_outage/{nodes}x{pods_per_node}"), &log, SAMPLES, Some(Duration::from_millis(60)));
}

/// 1M schedules + 1M cancels; 1M immediate schedules drained; 1M past-due timers fired by `pop_due`.
fn timer_churn(c: &mut Criterion) {
    let n: u32 = if measuring() { 1_000_000 } else { 10_000 };
    let mut group = c.benchmark_group("timer_churn");
    group
        .sample_size(SAMPLES)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(4))
        .throughput(Throughput::Elements(u64::from(n)));
    let target = Duration::from_millis(400).mul_f64(f64::from(n) / 1e6);

    let log = RefCell::new(Vec::new());
    group.bench_function(BenchmarkId::new("schedule_then_cancel", n), |b| {
        b.iter_custom(|iters| {
            timed(iters, &log, EvictionQueue::<u32>::new, |mut queue| {
                churn::schedule_then_cancel(&mut queue, n);
                queue
            })
        });
    });
    report(&format!("timer_churn/schedule_then_cancel/{n}"), &log, SAMPLES, Some(target));

    let log = RefCell::new(Vec::new());
    group.bench_function(BenchmarkId::new("immediate_then_finish", n), |b| {
        b.iter_custom(|iters| {
            timed(
                iters,
                &log,
                || (EvictionQueue::<u32>::new(), Vec::with_capacity(n as usize)),
                |(mut queue, mut tickets)| {
                    churn::immediate_then_finish(&mut queue, &mut tickets, n);
                    (queue, tickets)
                },
            )
        });
    });
    report(&format!("timer_churn/immediate_then_finish/{n}"), &log, SAMPLES, Some(target));

    let log = RefCell::new(Vec::new());
    group.bench_function(BenchmarkId::new("past_due_pop_due", n), |b| {
        b.iter_custom(|iters| {
            timed(iters, &log, EvictionQueue::<u32>::new, |mut queue| {
                churn::past_due_pop_due(&mut queue, n);
                queue
            })
        });
    });
    report(&format!("timer_churn/past_due_pop_due/{n}"), &log, SAMPLES, Some(target));
    group.finish();
}

/// `next_deadline()` (what `Engine::poll_timeout` returns) with 1k and 1M armed timers: must be O(1).
fn next_deadline(c: &mut Criterion) {
    let sizes: &[u32] = if measuring() { &[1_000, 1_000_000] } else { &[1_000] };
    let mut group = c.benchmark_group("next_deadline");
    group.sample_size(50).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    for &n in sizes {
        let mut queue = EvictionQueue::<u32>::new();
        for k in 0..n {
            let _ = queue.add(k, churn::future_work(k));
        }
        let earliest = (0..n).map(|k| churn::future_work(k).fire).min();
        assert_eq!(queue.next_deadline(), earliest);
        group.bench_with_input(BenchmarkId::from_parameter(n), &queue, |b, queue| {
            b.iter(|| black_box(queue).next_deadline());
        });
    }
    group.finish();
}

criterion_group!(benches, zone_outage, timer_churn, next_deadline);
criterion_main!(benches);
