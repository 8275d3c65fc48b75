//! Engine benchmarks (issue 6): the zone outage, and timer churn in the eviction queue.
//!
//! `cargo bench --bench engine` runs them all; `-- zone_outage`, `-- timer_churn` or `-- next_deadline`
//! one group. Besides criterion's report, each benchmark prints one `BENCH …` line with the median,
//! min, max and max/median of its samples, and its target. Under `cargo test`/nextest the workloads
//! shrink and each routine runs once, as a smoke test that keeps the assertions honest.

use std::cell::RefCell;
use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use taint_evict::engine::queue::{Added, Cause, EvictionQueue, Work};
use taint_evict::engine::time::Timestamp;

#[path = "support/timing.rs"]
mod timing;
#[path = "support/zone.rs"]
mod zone;

use timing::{measuring, report, timed};

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

const T0: Timestamp = Timestamp::from_unix_seconds(1_795_341_600);

/// A scrambled but deterministic offset in `1..=spread` seconds for key `k` (splitmix64's finalizer),
/// so deadlines reach the heap out of order, as different tolerations and start times make them.
fn offset(k: u32, spread: u64) -> i64 {
    let mut z = u64::from(k).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z % spread) as i64 + 1
}

fn seconds(s: i64) -> i64 {
    s * 1_000_000_000
}

/// Work created at `T0` firing `offset` seconds later (armed).
fn future_work(k: u32) -> Work {
    let seconds_later = offset(k, 86_400);
    Work { created: T0, fire: T0.add_nanos(seconds(seconds_later)), cause: Cause::Expired { seconds: seconds_later } }
}

/// Work due at once (`fire == created`): `add` fires it without a timer.
fn immediate_work() -> Work {
    Work { created: T0, fire: T0, cause: Cause::Untolerated }
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
                for k in 0..n {
                    assert!(matches!(queue.add(k, future_work(k)), Added::Armed(_)));
                }
                assert_eq!(queue.armed(), n as usize);
                for k in 0..n {
                    black_box(queue.cancel(&k));
                }
                assert!(queue.is_empty() && queue.next_deadline().is_none());
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
                    for k in 0..n {
                        let Added::Fired(ticket) = queue.add(k, immediate_work()) else {
                            panic!("work due at once fires without a timer")
                        };
                        tickets.push(ticket);
                    }
                    assert_eq!(queue.armed(), 0);
                    // Drained: every deletion reports its completion.
                    for (k, ticket) in (0..n).zip(tickets.iter()) {
                        assert!(queue.finish(&k, *ticket));
                    }
                    assert!(queue.is_empty());
                    (queue, tickets)
                },
            )
        });
    });
    report(&format!("timer_churn/immediate_then_finish/{n}"), &log, SAMPLES, Some(target));

    let log = RefCell::new(Vec::new());
    let now = T0.add_nanos(seconds(86_400 + 1));
    group.bench_function(BenchmarkId::new("past_due_pop_due", n), |b| {
        b.iter_custom(|iters| {
            timed(iters, &log, EvictionQueue::<u32>::new, |mut queue| {
                for k in 0..n {
                    assert!(matches!(queue.add(k, future_work(k)), Added::Armed(_)));
                }
                let mut fired = 0;
                let mut last = T0;
                while let Some((_, entry)) = queue.pop_due(now) {
                    debug_assert!(entry.work.fire >= last, "pop_due fires in deadline order");
                    last = entry.work.fire;
                    fired += 1;
                }
                assert_eq!(fired, n);
                assert!(queue.next_deadline().is_none());
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
            let _ = queue.add(k, future_work(k));
        }
        let earliest = (0..n).map(|k| future_work(k).fire).min();
        assert_eq!(queue.next_deadline(), earliest);
        group.bench_with_input(BenchmarkId::from_parameter(n), &queue, |b, queue| {
            b.iter(|| black_box(queue).next_deadline());
        });
    }
    group.finish();
}

criterion_group!(benches, zone_outage, timer_churn, next_deadline);
criterion_main!(benches);
