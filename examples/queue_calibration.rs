//! What the eviction queue's building blocks cost on this machine, a million operations each (issue 6:
//! why timer churn misses its target, and what would meet it).
//!
//! ```text
//! cargo run --release --example queue_calibration
//! ```
//!
//! Entries mimic the queue's: `Entry` is 64 bytes because `Timestamp` is an `i128` (16-byte aligned);
//! the same fields with `i64` instants take 40. Keys are dense `u32`s, as the engine's pod ids are.

// This example measures real time: the runtime's clock (clippy.toml) is for the product's code.
#![allow(clippy::disallowed_methods)]

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::hint::black_box;
use std::time::Instant;

const N: u32 = 1_000_000;

/// The queue's entry today: two `i128` instants, the cause's seconds, a ticket, a state.
#[derive(Clone, Copy)]
struct Entry128 {
    _created: i128,
    _fire: i128,
    _seconds: i64,
    _ticket: u64,
    _state: u8,
}

/// The same with `i64` instants.
#[derive(Clone, Copy)]
struct Entry64 {
    _created: i64,
    _fire: i64,
    _seconds: i64,
    _ticket: u64,
    _state: u8,
}

/// A multiplicative hasher for integer keys (FxHash's constant).
#[derive(Default)]
struct Mul(u64);

impl Hasher for Mul {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }

    fn write_u32(&mut self, i: u32) {
        self.0 = (self.0.rotate_left(5) ^ u64::from(i)).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

/// A scrambled deadline within a day, in nanoseconds (splitmix64's finalizer).
fn fire(k: u32) -> i64 {
    let mut z = u64::from(k).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((z ^ (z >> 31)) % 86_400) as i64 * 1_000_000_000
}

fn e128(k: u32) -> Entry128 {
    Entry128 { _created: 0, _fire: i128::from(fire(k)), _seconds: 300, _ticket: u64::from(k), _state: 0 }
}

fn e64(k: u32) -> Entry64 {
    Entry64 { _created: 0, _fire: fire(k), _seconds: 300, _ticket: u64::from(k), _state: 0 }
}

/// Times `insert` for every key then `remove` for every key.
fn map<M>(name: &str, mut map: M, insert: impl Fn(&mut M, u32), remove: impl Fn(&mut M, u32)) {
    let start = Instant::now();
    for k in 0..N {
        insert(&mut map, k);
    }
    let inserted = start.elapsed();
    for k in 0..N {
        remove(&mut map, k);
    }
    println!("{name:<44} 1M inserts {inserted:>9.3?}, 1M removes {:>9.3?}", start.elapsed() - inserted);
}

fn main() {
    type MulMap<V> = HashMap<u32, V, BuildHasherDefault<Mul>>;
    for round in 1..=2 {
        println!("round {round}");
        map(
            "HashMap<u32, Entry128> (SipHash, as today)",
            HashMap::new(),
            |m, k| {
                m.insert(k, e128(k));
            },
            |m, k| {
                black_box(m.remove(&k));
            },
        );
        map(
            "HashMap<u32, Entry128> (multiplicative hash)",
            MulMap::default(),
            |m, k| {
                m.insert(k, e128(k));
            },
            |m, k| {
                black_box(m.remove(&k));
            },
        );
        map(
            "HashMap<u32, Entry64> (multiplicative hash)",
            MulMap::default(),
            |m, k| {
                m.insert(k, e64(k));
            },
            |m, k| {
                black_box(m.remove(&k));
            },
        );
        map(
            "Vec<Option<Entry64>> indexed by key (slab)",
            Vec::<Option<Entry64>>::new(),
            |v, k| {
                if v.len() <= k as usize {
                    v.resize(k as usize + 1, None);
                }
                v[k as usize] = Some(e64(k));
            },
            |v, k| {
                black_box(v[k as usize].take());
            },
        );

        let start = Instant::now();
        let mut heap = BinaryHeap::new();
        for k in 0..N {
            heap.push(Reverse((i128::from(fire(k)), u64::from(k), k)));
        }
        let pushed = start.elapsed();
        while let Some(top) = heap.pop() {
            black_box(top);
        }
        println!(
            "{:<44} 1M pushes  {pushed:>9.3?}, 1M pops    {:>9.3?}",
            "BinaryHeap<(i128, u64, u32)> (32 B, as today)",
            start.elapsed() - pushed
        );
        let start = Instant::now();
        let mut heap = BinaryHeap::new();
        for k in 0..N {
            heap.push(Reverse((fire(k), k)));
        }
        let pushed = start.elapsed();
        while let Some(top) = heap.pop() {
            black_box(top);
        }
        println!(
            "{:<44} 1M pushes  {pushed:>9.3?}, 1M pops    {:>9.3?}",
            "BinaryHeap<(i64, u32)> (16 B)",
            start.elapsed() - pushed
        );
        let start = Instant::now();
        let mut tree = BTreeMap::new();
        for k in 0..N {
            tree.insert((fire(k), u64::from(k)), k);
        }
        let inserted = start.elapsed();
        while let Some(first) = tree.pop_first() {
            black_box(first);
        }
        println!(
            "{:<44} 1M inserts {inserted:>9.3?}, 1M pop_first {:>9.3?}",
            "BTreeMap<(i64, u64), u32>",
            start.elapsed() - inserted
        );
        let start = Instant::now();
        let mut due: Vec<(i64, u32)> = (0..N).map(|k| (fire(k), k)).collect();
        due.sort_unstable();
        black_box(&due);
        println!("{:<44} {:>9.3?}", "collect + sort_unstable of 1M (i64, u32)", start.elapsed());
    }
}
