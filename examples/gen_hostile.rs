//! Writes valid dumps of shapes that cost the reader the most per byte (issue 12: "a pathological but
//! valid dump"), to measure `plan`'s peak memory against the dump's size.
//!
//! ```text
//! cargo run --release --example gen_hostile -- SHAPE > /tmp/SHAPE.json
//! /usr/bin/time -f %M target/release/kubectl-taint_evict plan -f /tmp/SHAPE.json -o json \
//!     --now 2026-01-01T00:00:00Z > /dev/null
//! ```
//!
//! SHAPE is one of:
//! - `tiny-pods`: 300,000 pods of ~100 bytes on one tainted node;
//! - `labels`: one node with 600,000 labels;
//! - `nodes`: 200,000 tainted nodes of ~100 bytes;
//! - `taints`: one node with 300,000 NoExecute taints and an untolerating pod;
//! - `tolerations`: 30,000 pods with 20 distinct tolerations each;
//! - `long-names`: 50,000 pods with 250-character names;
//! - `big-strings`: 300 pods with a 100 kB annotation each (bytes nothing reads).

use std::io::{BufWriter, Write};

/// The tainted node most shapes put their pods on.
const NODE: &str = r#"{"kind":"Node","metadata":{"name":"n"},"spec":{"taints":[{"key":"k","effect":"NoExecute"}]}}"#;

fn main() -> std::io::Result<()> {
    let shape = std::env::args().nth(1).unwrap_or_default();
    let mut out = BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    let mut items: Box<dyn Iterator<Item = String>> = match shape.as_str() {
        "tiny-pods" => Box::new(std::iter::once(NODE.to_owned()).chain((0..300_000).map(|i| {
            format!(r#"{{"kind":"Pod","metadata":{{"name":"p{i}","namespace":"d","uid":"u{i}"}},"spec":{{"nodeName":"n"}}}}"#)
        }))),
        "labels" => {
            let labels: Vec<String> = (0..600_000).map(|i| format!(r#""k{i}":"v""#)).collect();
            Box::new(std::iter::once(format!(
                r#"{{"kind":"Node","metadata":{{"name":"n","labels":{{{}}}}},"spec":{{"taints":[{{"key":"k","effect":"NoExecute"}}]}}}}"#,
                labels.join(",")
            )))
        }
        "nodes" => Box::new((0..200_000).map(|i| {
            format!(r#"{{"kind":"Node","metadata":{{"name":"n{i}"}},"spec":{{"taints":[{{"key":"k","effect":"NoExecute"}}]}}}}"#)
        })),
        "taints" => {
            let taints: Vec<String> = (0..300_000).map(|i| format!(r#"{{"key":"k{i}","effect":"NoExecute"}}"#)).collect();
            Box::new(
                [
                    format!(r#"{{"kind":"Node","metadata":{{"name":"n"}},"spec":{{"taints":[{}]}}}}"#, taints.join(",")),
                    r#"{"kind":"Pod","metadata":{"name":"p","namespace":"d","uid":"u"},"spec":{"nodeName":"n"}}"#.to_owned(),
                ]
                .into_iter(),
            )
        }
        "tolerations" => Box::new(std::iter::once(NODE.to_owned()).chain((0..30_000).map(|i| {
            let tolerations: Vec<String> =
                (0..20).map(|j| format!(r#"{{"key":"k{}","operator":"Exists"}}"#, i * 20 + j)).collect();
            format!(
                r#"{{"kind":"Pod","metadata":{{"name":"p{i}","namespace":"d","uid":"u{i}"}},"spec":{{"nodeName":"n","tolerations":[{}]}}}}"#,
                tolerations.join(",")
            )
        }))),
        "long-names" => Box::new(std::iter::once(NODE.to_owned()).chain((0..50_000).map(|i| {
            format!(
                r#"{{"kind":"Pod","metadata":{{"name":"{}{i}","namespace":"{}","uid":"u{i}"}},"spec":{{"nodeName":"n"}}}}"#,
                "p".repeat(240),
                "d".repeat(60)
            )
        }))),
        "big-strings" => Box::new(std::iter::once(NODE.to_owned()).chain((0..300).map(|i| {
            format!(
                r#"{{"kind":"Pod","metadata":{{"name":"p{i}","namespace":"d","uid":"u{i}","annotations":{{"a":"{}"}}}},"spec":{{"nodeName":"n"}}}}"#,
                "x".repeat(100_000)
            )
        }))),
        other => {
            eprintln!(
                "unknown shape {other:?}: one of tiny-pods, labels, nodes, taints, tolerations, long-names, big-strings"
            );
            std::process::exit(2);
        }
    };
    out.write_all(br#"{"kind":"List","items":["#)?;
    if let Some(first) = items.next() {
        out.write_all(first.as_bytes())?;
    }
    for item in items {
        out.write_all(b",")?;
        out.write_all(item.as_bytes())?;
    }
    out.write_all(b"]}")?;
    out.flush()
}
