//! Engine memory per pod in the zone-outage state (issue 6): 150,000 pods on 5,000 nodes, 120,000
//! armed timers and 15,000 deletions in flight.
//!
//! ```text
//! cargo run --release --example engine_memory [-- NODES PODS_PER_NODE]
//! ```
//!
//! Method: a counting `#[global_allocator]` wraps `std::alloc::System` and keeps the bytes currently
//! allocated (sizes as requested, `alloc` + `realloc` − `dealloc`) and the number of live blocks.
//! Bytes per pod = (allocated after the outage − allocated before the engine was built) / pods; the
//! engine owns everything allocated in between (pods are built one at a time and moved into it, every
//! action is drained and dropped). Nothing else runs in the process. As a cross-check it also prints
//! an estimate of glibc's footprint (each block rounded up to 16 bytes with its 8-byte header, at
//! least 32) and the change in resident memory from `/proc/self/statm`.

use std::mem::size_of;

use taint_evict::engine::model::{PodKey, PodRef, Taint, Toleration};
use taint_evict::engine::queue::{Entry, Work};
use taint_evict::engine::time::Timestamp;
use taint_evict::engine::{Action, Engine};
use taint_evict_test_support::counting::{self, Reading, read, reset_peak};
use taint_evict_test_support::zone;

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

fn per(after: Reading, before: Reading, n: usize) -> (f64, f64, f64, f64) {
    let n = n as f64;
    (
        (after.bytes - before.bytes) as f64 / n,
        (after.blocks - before.blocks) as f64 / n,
        (after.footprint - before.footprint) as f64 / n,
        (after.rss as f64 - before.rss as f64) / n,
    )
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>().expect("sizes are integers"));
    let nodes = args.next().unwrap_or(5_000);
    let pods_per_node = args.next().unwrap_or(30);
    let pods = nodes * pods_per_node;

    let before = read();
    let mut engine: Engine = zone::populated(nodes, pods_per_node);
    let synced = read();
    reset_peak();
    let tally = zone::run_outage(&mut engine, zone::outage_inputs(nodes));
    let after = read();
    assert_eq!(tally, zone::expected(nodes, pods_per_node));
    assert_eq!(engine.armed(), tally.scheduled_at_window);

    println!(
        "engine memory, zone outage {nodes}x{pods_per_node}: {pods} pods, {} armed timers, {} deletions in flight",
        engine.armed(),
        tally.evict_now
    );
    println!(
        "method: counting #[global_allocator] over std::alloc::System (live bytes as requested = alloc + realloc - dealloc); \
         per pod = (after - before) / {pods}"
    );
    let (bytes, blocks, glibc, rss) = per(synced, before, pods);
    println!(
        "synced (pods and untainted nodes, no timers): {bytes:.0} bytes per pod ({blocks:.1} blocks; ~{glibc:.0} with glibc's \
         per-block overhead; RSS delta {rss:.0})"
    );
    let (bytes, blocks, glibc, rss) = per(after, before, pods);
    println!(
        "RESULT after the outage (timers armed): {bytes:.0} bytes per pod ({} bytes in total, {blocks:.1} blocks per pod; \
         ~{glibc:.0} with glibc's per-block overhead; RSS delta {rss:.0}); target <= 300: {}",
        after.bytes - before.bytes,
        if bytes <= 300.0 { "PASS" } else { "MISS" }
    );
    println!(
        "transient: the outage's allocation peaked {:.0} bytes per pod above the synced engine (actions, node lists)",
        (after.peak - synced.bytes) as f64 / pods as f64 - (after.bytes - synced.bytes) as f64 / pods as f64
    );
    let timers = (after.bytes - synced.bytes) as f64 / (tally.scheduled_at_window + tally.evict_now) as f64;
    println!("the outage's queue entries: {timers:.0} bytes per entry (armed or in flight)");
    println!(
        "sizes: Timestamp {}, Work {}, Entry {}, PodKey {}, PodRef {}, Action {}, Taint {}, Toleration {}",
        size_of::<Timestamp>(),
        size_of::<Work>(),
        size_of::<Entry>(),
        size_of::<PodKey>(),
        size_of::<PodRef>(),
        size_of::<Action>(),
        size_of::<Taint>(),
        size_of::<Toleration>()
    );
    drop(engine);
    let dropped = read();
    println!("after dropping the engine: {} bytes still allocated vs {} before", dropped.bytes, before.bytes);
}
