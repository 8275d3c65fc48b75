//! Timing whole processes (the plugin, kubectl) for the live benches: one run, and the median with
//! its spread.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The median, p10 and p90 of `samples`.
pub fn median_and_spread(mut samples: Vec<Duration>) -> (Duration, Duration, Duration) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.1), at(0.9))
}

/// Runs `command` to its end, its output discarded, and returns how long it took; it must succeed.
pub fn timed(command: &mut Command) -> Duration {
    let start = Instant::now();
    let status = command.stdout(Stdio::null()).stderr(Stdio::inherit()).status().expect("the command runs");
    let elapsed = start.elapsed();
    assert!(status.success(), "{command:?} failed");
    elapsed
}
