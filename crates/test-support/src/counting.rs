//! A counting global allocator for the memory examples (`examples/engine_memory.rs`,
//! `examples/plan_memory.rs`). The global allocator is a binary's own: each of them declares
//! `#[global_allocator] static ALLOCATOR: counting::Counting = counting::Counting;`.
//!
//! It forwards every call to `std::alloc::System` and keeps, with relaxed atomics: the bytes currently
//! allocated (sizes as requested: `alloc` + `realloc` − `dealloc`), their peak since the last
//! [`reset_peak`], the number of live blocks, and an estimate of glibc's footprint (each block rounded
//! up to 16 bytes with its 8-byte header, at least 32 bytes).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The system allocator, counting.
pub struct Counting;

static BYTES: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static BLOCKS: AtomicUsize = AtomicUsize::new(0);
static FOOTPRINT: AtomicUsize = AtomicUsize::new(0);

/// What glibc's malloc takes for a block of `size` bytes on x86_64.
fn footprint(size: usize) -> usize {
    (size + 8).div_ceil(16).max(2) * 16
}

fn grew(size: usize) {
    let now = BYTES.fetch_add(size, Relaxed) + size;
    PEAK.fetch_max(now, Relaxed);
}

// SAFETY: every call is forwarded unchanged to `System`; the counters only observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            grew(layout.size());
            BLOCKS.fetch_add(1, Relaxed);
            FOOTPRINT.fetch_add(footprint(layout.size()), Relaxed);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            grew(layout.size());
            BLOCKS.fetch_add(1, Relaxed);
            FOOTPRINT.fetch_add(footprint(layout.size()), Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) };
        BYTES.fetch_sub(layout.size(), Relaxed);
        BLOCKS.fetch_sub(1, Relaxed);
        FOOTPRINT.fetch_sub(footprint(layout.size()), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            grew(new_size);
            BYTES.fetch_sub(layout.size(), Relaxed);
            FOOTPRINT.fetch_add(footprint(new_size), Relaxed);
            FOOTPRINT.fetch_sub(footprint(layout.size()), Relaxed);
        }
        new
    }
}

/// The counters at one instant, plus the resident set size from `/proc/self/statm`.
#[derive(Clone, Copy, Debug)]
pub struct Reading {
    /// Bytes allocated, as requested.
    pub bytes: usize,
    /// Peak of `bytes` since the last [`reset_peak`].
    pub peak: usize,
    /// Live blocks.
    pub blocks: usize,
    /// Estimated glibc footprint of the live blocks.
    pub footprint: usize,
    /// Resident set size.
    pub rss: usize,
}

/// Reads the counters.
#[must_use]
pub fn read() -> Reading {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    Reading {
        bytes: BYTES.load(Relaxed),
        peak: PEAK.load(Relaxed),
        blocks: BLOCKS.load(Relaxed),
        footprint: FOOTPRINT.load(Relaxed),
        rss: pages * 4096,
    }
}

/// Starts a new peak at the current allocation.
pub fn reset_peak() {
    PEAK.store(BYTES.load(Relaxed), Relaxed);
}
