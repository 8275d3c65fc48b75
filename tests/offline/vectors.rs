//! Every conformance vector in `tests/data/vectors/` (copied from the specification), run through the
//! binary as the vectors' README describes. The directory is read at test time, so new vectors are
//! picked up.

use serde_json::Value;

use crate::util::{data, instant, read_json, run};

fn compare(name: &str, expected: &Value, actual: &Value, mismatches: &mut Vec<String>) {
    let expected_nodes = expected["nodes"].as_array().expect("expected.nodes");
    for node in expected_nodes {
        let node_name = node["name"].as_str().expect("node name");
        let Some(got) = actual["nodes"].as_array().and_then(|ns| ns.iter().find(|n| n["name"] == node["name"])) else {
            mismatches.push(format!("{name}: node {node_name}: missing from the output"));
            continue;
        };
        let got_pods = got["pods"].as_array().expect("pods");
        let want_pods = node["pods"].as_array().expect("pods");
        let id = |p: &Value| format!("{}/{}", p["namespace"].as_str().unwrap_or(""), p["name"].as_str().unwrap_or(""));
        let mut got_ids: Vec<String> = got_pods.iter().map(id).collect();
        let mut want_ids: Vec<String> = want_pods.iter().map(id).collect();
        got_ids.sort();
        want_ids.sort();
        if got_ids != want_ids {
            mismatches.push(format!("{name}: node {node_name}: pods {got_ids:?}, expected {want_ids:?}"));
        }
        for want in want_pods {
            let Some(pod) = got_pods.iter().find(|p| id(p) == id(want)) else { continue };
            let fields = want.as_object().expect("pod object");
            for (field, value) in fields {
                let matches = match field.as_str() {
                    "evictAt" | "since" => match (value.as_str(), pod[field].as_str()) {
                        (Some(w), Some(g)) => instant(w) == instant(g),
                        _ => value.is_null() && pod[field].is_null(),
                    },
                    _ => pod[field] == *value,
                };
                if !matches {
                    mismatches.push(format!(
                        "{name}: {node_name} {}: {field} is {}, expected {value}",
                        id(want),
                        pod[field]
                    ));
                }
            }
        }
    }
}

#[test]
fn every_public_vector_matches_its_expected_plan() {
    let dir = data("vectors");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 90, "expected the vectors, found {} files in {}", files.len(), dir.display());
    let mut mismatches = Vec::new();
    for file in &files {
        let case = read_json(file);
        let name = case["name"].as_str().unwrap_or_else(|| file.to_str().unwrap_or("?")).to_owned();
        let args: Vec<&str> = case["args"].as_array().expect("args").iter().map(|a| a.as_str().expect("arg")).collect();
        let now = case["now"].as_str().expect("now");
        let mut argv = vec![args[0], "-f", "-", "--now", now, "-o", "json"];
        argv.extend(&args[1..]);
        let cluster = serde_json::to_vec(&case["cluster"]).expect("cluster serializes");
        let result = run(&argv, Some(&cluster));
        if result.code != 0 {
            mismatches.push(format!("{name}: exit code {}: {}", result.code, result.stderr.trim()));
            continue;
        }
        let output: Value = serde_json::from_str(&result.stdout).expect("plan -o json prints JSON");
        compare(&name, &case["expected"], &output, &mut mismatches);
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches over {} vectors:\n{}",
        mismatches.len(),
        files.len(),
        mismatches.join("\n")
    );
}
