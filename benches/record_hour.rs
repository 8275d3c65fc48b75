//! `record` over a generated hour of a 5,000-node, 150,000-pod cluster's changes
//! (`crates/test-support/src/hour.rs`: 1.8 M node Lease renewals, the nodes' status every 5 minutes,
//! a rollout, Jobs, one zone silent from minute 20 and its pods deleted as the taint-eviction
//! controller would), played into the fake API server `SPEED` times faster than the hour, the
//! release binary as a child: the requests it made, its memory and CPU, what it wrote, how long.
//!
//! ```text
//! cargo bench --bench record_hour [-- NODES PODS_PER_NODE SPEED]     # 5000 30 20: 3 min of play
//! ```
//!
//! The record is left in the directory it prints, for `review DIR -o json` (BENCHMARKS.md).

// A harness measures in real time: the runtime's clock (clippy.toml) is for the product's code.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

use taint_evict_test_support::fake_apiserver::FakeApiServer;
use taint_evict_test_support::hour::{Config, Hour};
use taint_evict_test_support::recording::{Recording, contents, requests_by_kind};

fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let number = |i: usize, default: f64| args.get(i).and_then(|a| a.parse::<f64>().ok()).unwrap_or(default);
    let (nodes, pods_per_node, speed) = (number(0, 5000.0) as usize, number(1, 30.0) as usize, number(2, 20.0));
    let dir = std::env::temp_dir().join(format!("taint-evict-bench-record-hour-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let out = dir.join("record");

    let server = FakeApiServer::start(&dir);
    let loading = Instant::now();
    let mut hour = Hour::load(Config::hour(nodes, pods_per_node), &server);
    println!("loaded {nodes} nodes, {} pods in {:.1} s", nodes * pods_per_node, loading.elapsed().as_secs_f64());

    hour.renew_controller(&server, jiff::Timestamp::now());
    let started = Instant::now();
    // One file for the hour: each new file lists every kind again, and the fake API server's answer to
    // a LIST of 150,000 pods costs this process several GB (18 GB killed it with the default 256Mi).
    let flags = ["--file-size", "1Gi"];
    let recording = Recording::start(Command::new(env!("CARGO_BIN_EXE_kubectl-taint_evict")), &server, &out, &flags);
    recording.wait_watching(&server, Duration::from_secs(600));
    let listed = started.elapsed();
    let (listed_peak, listed_rss) = recording.memory();
    println!(
        "record listed and watching in {:.2} s: peak RSS {:.1} MiB, RSS {:.1} MiB (load {})",
        listed.as_secs_f64(),
        listed_peak as f64 / 1024.0,
        listed_rss as f64 / 1024.0,
        load_average()
    );

    let playing = Instant::now();
    let tally = hour.play(&server, speed);
    let played = playing.elapsed();
    let behind = recording.wait_for_text(&hour.last_controller_renewal(), Duration::from_secs(1800));
    let (peak, rss) = recording.memory();
    let cpu = recording.cpu_seconds();
    println!(
        "played the hour in {:.1} s ({speed}x), record caught up {:.2} s after: {tally:?}",
        played.as_secs_f64(),
        behind.as_secs_f64()
    );
    let status = recording.stop();
    assert!(status.success(), "record exits 0 on SIGTERM: {status}");

    let requests = requests_by_kind(&server.requests());
    let total: usize = requests.values().sum();
    println!("requests: {total} in all");
    for (what, count) in &requests {
        println!("  {count:>4} {what}");
    }
    let found = contents(&out);
    let lines: BTreeMap<&str, usize> = found.lines.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    println!(
        "BENCH record_hour: {} lines, {:.1} MB in {} files, {lines:?}; peak RSS {:.1} MiB, RSS at the end {:.1} MiB, \
         CPU {cpu:.1} s, wall {:.1} s (list {:.1} s + play {:.1} s + {:.1} s behind); load {}",
        found.total(),
        found.bytes as f64 / 1e6,
        found.files,
        peak as f64 / 1024.0,
        rss as f64 / 1024.0,
        (listed + played + behind).as_secs_f64(),
        listed.as_secs_f64(),
        played.as_secs_f64(),
        behind.as_secs_f64(),
        load_average()
    );
    if let Some((from, to)) = &found.span {
        println!("the record's instants: {from} to {to}; the hour: {} + 3600 s", hour.start());
    }
    println!("the record: {}", out.display());
}
