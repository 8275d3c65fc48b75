//! The timer-churn workloads (BENCHMARKS.md), on `EvictionQueue<u32>` directly: a million schedules then a
//! million cancels; a million schedules due at once, drained; a million past-due timers fired by
//! `pop_due`. Each starts from an empty queue, as the engine's queue does.
//!
//! Shared by `benches/engine.rs` and `examples/profile.rs`, so both run exactly the same routines.

use std::hint::black_box;

use taint_evict::engine::queue::{Added, Cause, EvictionQueue, Ticket, Work};
use taint_evict::engine::time::Timestamp;

/// When every piece of work is created.
pub const T0: Timestamp = Timestamp::from_unix_seconds(1_795_341_600);

/// A scrambled but deterministic offset in `1..=spread` seconds for key `k` (splitmix64's finalizer),
/// so deadlines reach the queue out of order, as different tolerations and start times make them.
#[must_use]
pub fn offset(k: u32, spread: u64) -> i64 {
    let mut z = u64::from(k).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z % spread) as i64 + 1
}

fn seconds(s: i64) -> i64 {
    s * 1_000_000_000
}

/// Work created at [`T0`] firing up to a day later (armed).
#[must_use]
pub fn future_work(k: u32) -> Work {
    let seconds_later = offset(k, 86_400);
    Work { created: T0, fire: T0.add_nanos(seconds(seconds_later)), cause: Cause::Expired { seconds: seconds_later } }
}

/// Work due at once (`fire == created`): `add` fires it without a timer.
#[must_use]
pub fn immediate_work() -> Work {
    Work { created: T0, fire: T0, cause: Cause::Untolerated }
}

/// An instant after every [`future_work`] deadline.
#[must_use]
pub fn after_every_deadline() -> Timestamp {
    T0.add_nanos(seconds(86_400 + 1))
}

/// `n` schedules at future instants, then `n` cancels.
pub fn schedule_then_cancel(queue: &mut EvictionQueue<u32>, n: u32) {
    for k in 0..n {
        assert!(matches!(queue.add(k, future_work(k)), Added::Armed(_)));
    }
    assert_eq!(queue.armed(), n as usize);
    for k in 0..n {
        black_box(queue.cancel(&k));
    }
    assert!(queue.is_empty() && queue.next_deadline().is_none());
}

/// `n` schedules due at once, then drained: every deletion reports its completion. `tickets` is an
/// empty buffer with room for `n`.
pub fn immediate_then_finish(queue: &mut EvictionQueue<u32>, tickets: &mut Vec<Ticket>, n: u32) {
    for k in 0..n {
        let Added::Fired(ticket) = queue.add(k, immediate_work()) else {
            panic!("work due at once fires without a timer")
        };
        tickets.push(ticket);
    }
    assert_eq!(queue.armed(), 0);
    for (k, ticket) in (0..n).zip(tickets.iter()) {
        assert!(queue.finish(&k, *ticket));
    }
    assert!(queue.is_empty());
}

/// `n` schedules at future instants, then every one fired by `pop_due` at an instant after them all.
pub fn past_due_pop_due(queue: &mut EvictionQueue<u32>, n: u32) {
    for k in 0..n {
        assert!(matches!(queue.add(k, future_work(k)), Added::Armed(_)));
    }
    let now = after_every_deadline();
    let mut fired = 0;
    let mut last = T0;
    while let Some((_, entry)) = queue.pop_due(now) {
        debug_assert!(entry.work.fire >= last, "pop_due fires in deadline order");
        last = entry.work.fire;
        fired += 1;
    }
    assert_eq!(fired, n);
    assert!(queue.next_deadline().is_none());
}
