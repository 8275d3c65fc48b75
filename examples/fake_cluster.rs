//! A fake Kubernetes API server on loopback, loaded with a dump, for trying `plan` and `run` without
//! a cluster:
//!
//! ```sh
//! cargo run --example fake_cluster -- examples/incident.json
//! # prints the kubeconfig to use; then type commands:
//! #   taint NODE KEY[=VALUE]      add KEY[=VALUE]:NoExecute (timeAdded now)
//! #   untaint NODE                remove every NoExecute taint
//! #   quit
//! ```
//!
//! It is the same fake the integration tests use (`crates/test-support/src/fake_apiserver.rs`).

// This example measures real time: the runtime's clock (clippy.toml) is for the product's code.
#![allow(clippy::disallowed_methods)]

use std::io::BufRead;

use serde_json::{Value, json};
use taint_evict_test_support::fake_apiserver;

fn main() {
    let dump = std::env::args().nth(1).unwrap_or_else(|| "examples/incident.json".to_owned());
    let text = std::fs::read_to_string(&dump).unwrap_or_else(|e| panic!("cannot read {dump}: {e}"));
    let list: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{dump} is not JSON: {e}"));
    let dir = std::env::temp_dir().join(format!("taint-evict-fake-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory for the kubeconfig");
    let server = fake_apiserver::FakeApiServer::start(&dir);
    server.load(&list);
    println!("fake API server at {} with {dump}", server.url());
    println!("export KUBECONFIG={}", server.kubeconfig().display());
    println!("commands: taint NODE KEY[=VALUE] | untaint NODE | quit");
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["taint", node, spec] => {
                let Some(mut object) = server.object("Node", "", node) else {
                    println!("no node {node}");
                    continue;
                };
                let (key, value) = spec.split_once('=').unwrap_or((spec, ""));
                let taint = json!({"key": key, "value": value, "effect": "NoExecute",
                                   "timeAdded": jiff::Timestamp::now().round(jiff::Unit::Second).expect("round").to_string()});
                let taints = object["spec"]["taints"].as_array().cloned().unwrap_or_default();
                object["spec"]["taints"] = Value::Array(taints.into_iter().chain([taint]).collect());
                server.add(object);
                println!("tainted {node} with {spec}:NoExecute");
            }
            ["untaint", node] => {
                let Some(mut object) = server.object("Node", "", node) else {
                    println!("no node {node}");
                    continue;
                };
                let taints = object["spec"]["taints"].as_array().cloned().unwrap_or_default();
                object["spec"]["taints"] =
                    Value::Array(taints.into_iter().filter(|t| t["effect"] != "NoExecute").collect());
                server.add(object);
                println!("removed the NoExecute taints of {node}");
            }
            ["quit"] => break,
            [] => {}
            _ => println!("commands: taint NODE KEY[=VALUE] | untaint NODE | quit"),
        }
    }
}
