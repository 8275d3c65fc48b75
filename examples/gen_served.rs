//! Writes a valid dump at the extremes a cluster allows: see `crates/test-support/src/served.rs` for the
//! shapes and what makes them valid.
//!
//! ```text
//! cargo run --release --example gen_served -- SHAPE > /tmp/served-SHAPE.json
//! /usr/bin/time -f %M target/release/kubectl-taint_evict plan -f /tmp/served-SHAPE.json -o json \
//!     --now 2026-01-01T00:00:00Z > /dev/null
//! ```

use std::io::{BufWriter, Write};

use taint_evict_test_support::served;

fn main() -> std::io::Result<()> {
    let shape = std::env::args().nth(1).unwrap_or_default();
    let mut out = BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    if let Err(error) = served::write(&shape, &mut out).and_then(|()| out.flush()) {
        eprintln!("{error}");
        std::process::exit(2);
    }
    Ok(())
}
