//! Timing helpers shared by the benches: per-sample records that can be quoted after a run.
//!
//! Every bench routine goes through [`timed`] inside criterion's `iter_custom`, so setup and drop are
//! excluded from the timing and each sample's mean time per iteration is kept. Criterion calls the
//! closure once per warm-up round and then exactly once per sample, so the last `sample_size` records
//! are the measured samples: [`report`] prints their median, min, max and max/median in one line.

use std::cell::RefCell;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Whether this run measures (`cargo bench`) rather than smoke-tests (`cargo test`/nextest run bench
/// targets once, in test mode): full-size workloads only when measuring.
#[must_use]
pub fn measuring() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test" || a == "--list")
}

/// Runs `routine` on a fresh `setup()` value `iters` times, timing only `routine`; the output is
/// dropped outside the timing. Records the mean time per iteration in `log`.
pub fn timed<S, R>(
    iters: u64,
    log: &RefCell<Vec<Duration>>,
    mut setup: impl FnMut() -> S,
    mut routine: impl FnMut(S) -> R,
) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let input = setup();
        let start = Instant::now();
        let output = routine(input);
        total += start.elapsed();
        drop(black_box(output));
    }
    log.borrow_mut().push(total.div_f64(iters as f64));
    total
}

/// Median, min and max of the last `samples` records.
#[must_use]
pub fn stats(log: &RefCell<Vec<Duration>>, samples: usize) -> Option<(Duration, Duration, Duration)> {
    let log = log.borrow();
    if log.len() < samples || samples == 0 {
        return None;
    }
    let mut last: Vec<Duration> = log[log.len() - samples..].to_vec();
    last.sort();
    let median = if samples % 2 == 1 { last[samples / 2] } else { (last[samples / 2 - 1] + last[samples / 2]) / 2 };
    Some((median, last[0], last[samples - 1]))
}

/// Prints one quotable line: `BENCH name: median … (min … max …, max/median …) target ≤ … PASS`.
pub fn report(name: &str, log: &RefCell<Vec<Duration>>, samples: usize, target: Option<Duration>) {
    if !measuring() {
        return;
    }
    let Some((median, min, max)) = stats(log, samples) else { return };
    let verdict = match target {
        Some(target) => format!(
            "; target <= {target:.3?}: {} ({:.2}x the target)",
            if median <= target { "PASS" } else { "MISS" },
            median.as_secs_f64() / target.as_secs_f64()
        ),
        None => String::new(),
    };
    println!(
        "BENCH {name}: median {median:.3?} (min {min:.3?}, max {max:.3?}, max/median {:.2}, {samples} samples){verdict}",
        max.as_secs_f64() / median.as_secs_f64(),
    );
}
