//! The dump reader on arbitrary bytes: `read` (a `kubectl get nodes,pods -A -o json` dump),
//! `read_page` and `read_object` (API answers) never panic, each error is one plain line, and a dump
//! that reads is replayed over all its nodes at a fixed instant. The streaming reader (`-f -`) reads
//! exactly what `read` reads, and the checked file reader too.

#![no_main]

use libfuzzer_sys::fuzz_target;
use taint_evict::engine::replay::replay;
use taint_evict::engine::time::Timestamp;
use taint_evict::decode::bounded::{read_file, read_stream};
use taint_evict::decode::{DumpError, read, read_object, read_page};

/// 2026-11-22T10:00:00Z, the instant of `examples/incident.json`.
const NOW: Timestamp = Timestamp::from_unix_seconds(1_795_341_600);

fn one_line(error: &DumpError) {
    let message = error.to_string();
    assert!(!message.trim().is_empty(), "an empty message: {error:?}");
    assert!(!message.chars().any(char::is_control), "not one plain line: {message:?}");
}

fuzz_target!(|bytes: &[u8]| {
    if let Err(e) = read_page(bytes, "Pod") {
        one_line(&e);
    }
    if let Err(e) = read_object(bytes, "Node") {
        one_line(&e);
    }
    let expected = read(bytes).map(|s| format!("{s:?}")).map_err(|e| e.to_string());
    let streamed = read_stream(bytes).map(|s| format!("{s:?}")).map_err(|e| e.to_string());
    let whole = read_file(std::io::Cursor::new(bytes), bytes.len() as u64).map(|s| format!("{s:?}")).map_err(|e| e.to_string());
    assert_eq!(streamed, expected, "the stream reader differs");
    assert_eq!(whole, expected, "the file reader differs");
    match read(bytes) {
        Ok(snapshot) => {
            let all: Vec<usize> = (0..snapshot.nodes.len()).collect();
            let plan = replay(&snapshot, &all, &[], NOW);
            assert_eq!(plan.nodes.len(), snapshot.nodes.len());
        }
        Err(e) => one_line(&e),
    }
});
