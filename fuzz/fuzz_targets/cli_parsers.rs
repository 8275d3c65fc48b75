//! The parsers of what an operator types, on arbitrary text: the label selector (`-l`), the what-if
//! taints (`--taint`, `--remove-taint`), `--now` and object names never panic, and each refusal is
//! one plain line.

#![no_main]

use std::str::FromStr;

use libfuzzer_sys::fuzz_target;
use taint_evict::cli::{parse_namespace, parse_node_name, parse_now, parse_pod_name, parse_remove_taint, parse_taint};
use taint_evict::selector::Selector;

fn one_line<T>(result: Result<T, String>) {
    if let Err(message) = result {
        assert!(!message.trim().is_empty(), "an empty message");
        assert!(!message.chars().any(char::is_control), "not one plain line: {message:?}");
    }
}

fuzz_target!(|bytes: &[u8]| {
    let Ok(text) = std::str::from_utf8(bytes) else { return };
    if let Err(error) = Selector::from_str(text) {
        one_line::<()>(Err(error.to_string()));
    }
    one_line(parse_taint(text));
    one_line(parse_remove_taint(text));
    one_line(parse_now(text));
    one_line(parse_node_name(text));
    one_line(parse_pod_name(text));
    one_line(parse_namespace(text));
});
