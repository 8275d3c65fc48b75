//! Bad input: one line that says what is wrong (and a hint where one helps), the documented exit
//! code, no panic.

use crate::util::{run, run_command, scratch};

const INCIDENT: &str = "examples/incident.json";

/// Asserts the exit code and the exact first stderr line; returns stderr.
fn fails(args: &[&str], stdin: Option<&[u8]>, code: i32, first_line: &str) -> String {
    let result = run(args, stdin);
    assert_eq!(result.code, code, "exit code of {args:?}; stderr: {}", result.stderr);
    assert_eq!(result.stderr.lines().next(), Some(first_line), "stderr of {args:?}");
    assert!(result.stdout.is_empty(), "nothing on stdout for {args:?}: {}", result.stdout);
    assert!(!result.stderr.contains("panicked"), "{}", result.stderr);
    result.stderr
}

#[test]
fn missing_file_is_named() {
    fails(&["plan", "-f", "no/such/dump.json"], None, 1, "error: cannot read no/such/dump.json: no such file");
}

#[test]
fn non_json_input_names_the_position() {
    let stderr = fails(
        &["plan", "-f", "-"],
        Some(b"nodes:\n  - a\n"),
        1,
        "error: stdin: not valid JSON: expected ident at line 1 column 2 (it looks like YAML: write the dump with -o json)",
    );
    assert!(stderr.contains("hint: the file must be what `kubectl get nodes,pods -A -o json` prints"), "{stderr}");
}

#[test]
fn wrong_kind_is_named() {
    fails(
        &["plan", "-f", "-"],
        Some(br#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"}}"#),
        1,
        "error: stdin: expected a v1 List as `kubectl get nodes,pods -A -o json` prints it, found kind \"Deployment\"",
    );
}

#[test]
fn malformed_item_names_the_file_item_and_field() {
    let dir = scratch("malformed-item");
    let path = dir.join("dump.json");
    let dump = r#"{"apiVersion":"v1","kind":"List","items":[
        {"kind":"Node","metadata":{"name":"n1"}},
        {"kind":"Pod","metadata":{"name":"api-0","namespace":"web"},"spec":{"nodeName":"n1","tolerations":[
            {"key":"a","operator":"Exists"},{"key":"b","operator":"Exists","tolerationSeconds":"300"}]}}]}"#;
    std::fs::write(&path, dump).expect("write dump");
    let path = path.to_str().expect("UTF-8");
    let expected = format!(
        "error: {path}: item 1 (Pod web/api-0): spec.tolerations[1].tolerationSeconds: invalid type: string \"300\", expected an integer"
    );
    fails(&["plan", "-f", path], None, 1, &expected);
}

#[test]
fn bad_taint_flag_is_a_usage_error() {
    fails(
        &["plan", "-f", INCIDENT, "--taint", "unreachable", "worker-3"],
        None,
        2,
        "error: invalid value 'unreachable' for '--taint <KEY[=VALUE]:EFFECT>': expected KEY[=VALUE]:EFFECT such as node.kubernetes.io/unreachable:NoExecute",
    );
    fails(
        &["plan", "-f", INCIDENT, "--taint", "k=v:NoExecution", "worker-3"],
        None,
        2,
        "error: invalid value 'k=v:NoExecution' for '--taint <KEY[=VALUE]:EFFECT>': unknown effect \"NoExecution\": expected NoExecute, NoSchedule or PreferNoSchedule",
    );
}

#[test]
fn bad_remove_taint_flag_is_a_usage_error() {
    fails(
        &["plan", "-f", INCIDENT, "--remove-taint", "a/b/c", "worker-3"],
        None,
        2,
        "error: invalid value 'a/b/c' for '--remove-taint <KEY[:EFFECT]>': invalid taint key \"a/b/c\"",
    );
}

#[test]
fn bad_now_flag_is_a_usage_error() {
    fails(
        &["plan", "-f", INCIDENT, "--now", "yesterday"],
        None,
        2,
        "error: invalid value 'yesterday' for '--now <RFC3339>': expected an RFC 3339 time such as 2026-11-22T10:00:00Z",
    );
}

#[test]
fn bad_selector_is_a_usage_error() {
    fails(
        &["plan", "-f", INCIDENT, "-l", "zone in (a"],
        None,
        2,
        "error: invalid value 'zone in (a' for '--selector <SELECTOR>': invalid label selector \"zone in (a\": missing \")\"",
    );
}

#[test]
fn what_if_without_a_node_is_a_usage_error() {
    fails(
        &["plan", "-f", INCIDENT, "--taint", "a:NoExecute"],
        None,
        2,
        "error: --taint and --remove-taint need NODE or -l SELECTOR",
    );
}

#[test]
fn unknown_node_is_named_with_the_input() {
    let stderr = fails(
        &["plan", "-f", INCIDENT, "worker-3", "node-x"],
        None,
        1,
        "error: node \"node-x\" not found in examples/incident.json",
    );
    assert!(stderr.contains("hint: "), "{stderr}");
}

#[test]
fn unknown_pod_for_explain_is_named() {
    fails(
        &["explain", "ghost", "-n", "web", "-f", INCIDENT],
        None,
        1,
        "error: pod \"web/ghost\" not found in examples/incident.json",
    );
}

#[test]
fn unknown_subcommand_is_a_usage_error() {
    let result = run(&["evict-everything"], None);
    assert_eq!(result.code, 2);
    assert!(result.stderr.starts_with("error: unrecognized subcommand 'evict-everything'"), "{}", result.stderr);
}

// Never a false all-clear: a dump without the nodes or the pods is refused, not read as a calm cluster.

/// The incident dump without the items of `kind`, as `kubectl get` writes it when `kind` is left out.
fn incident_without(kind: &str) -> Vec<u8> {
    let text = std::fs::read_to_string(crate::util::repo().join(INCIDENT)).expect("the incident dump");
    let mut dump: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    dump["items"].as_array_mut().expect("items").retain(|item| item["kind"] != kind);
    serde_json::to_vec(&dump).expect("JSON")
}

#[test]
fn dump_without_nodes_is_an_error_not_an_all_clear() {
    let stderr = fails(
        &["plan", "-f", "-"],
        Some(&incident_without("Node")),
        1,
        "error: stdin: the dump has no Node objects: write it with `kubectl get nodes,pods -A -o json`",
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn dump_without_pods_is_an_error_not_no_pods() {
    fails(
        &["plan", "-f", "-", "-o", "json"],
        Some(&incident_without("Pod")),
        1,
        "error: stdin: the dump has no Pod objects: write it with `kubectl get nodes,pods -A -o json`",
    );
}

#[test]
fn dump_without_pods_still_says_when_no_node_is_tainted() {
    // Every node ready too: a node whose kubelet went silent is about to be tainted (docs/node-lifecycle.md).
    // Nor a Lease: the kubelets' renewals are as old as the dump, and without --now it is read now.
    let mut dump: serde_json::Value = serde_json::from_slice(&incident_without("Pod")).expect("JSON");
    dump["items"].as_array_mut().expect("items").retain(|item| item["kind"] != "Lease");
    let text = serde_json::to_string(&dump)
        .expect("JSON")
        .replace("NoExecute", "NoSchedule")
        .replace("\"status\":\"Unknown\"", "\"status\":\"True\"")
        .replace("\"status\":\"False\"", "\"status\":\"True\"");
    let result = run(&["plan", "-f", "-"], Some(text.as_bytes()));
    assert_eq!((result.code, result.stdout.trim()), (0, "No node has a NoExecute taint."), "{}", result.stderr);
}

#[test]
fn selector_matching_no_node_says_so() {
    let stderr = fails(
        &["plan", "-f", INCIDENT, "-l", "zone=nowhere"],
        None,
        1,
        "error: no node matched -l zone=nowhere in examples/incident.json",
    );
    assert!(stderr.contains("hint: `kubectl get nodes --show-labels`"), "{stderr}");
}

#[test]
fn a_node_named_twice_is_shown_once() {
    // Fixed: `plan worker-4 worker-4` printed the node twice, with different pods.
    let now = "2026-01-01T00:00:00Z";
    let once = run(&["plan", "-f", INCIDENT, "--now", now, "worker-4"], None);
    let twice = run(&["plan", "-f", INCIDENT, "--now", now, "worker-4", "worker-4"], None);
    assert_eq!(twice.code, 0, "{}", twice.stderr);
    assert_eq!(twice.stdout, once.stdout);
    let mixed = run(&["plan", "-f", INCIDENT, "--now", now, "worker-4", "worker-3", "worker-4", "-o", "json"], None);
    let plan: serde_json::Value = serde_json::from_str(&mixed.stdout).expect("JSON");
    let nodes: Vec<&str> = plan["nodes"].as_array().expect("nodes").iter().filter_map(|n| n["name"].as_str()).collect();
    assert_eq!(nodes, ["worker-4", "worker-3"]);
}

#[test]
fn a_pod_listed_twice_with_different_uids_is_refused() {
    // Fixed: the first of two same-named pods got the other's deadline.
    let text = std::fs::read_to_string(crate::util::repo().join(INCIDENT)).expect("the incident dump");
    let mut dump: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let items = dump["items"].as_array_mut().expect("items");
    let mut copy = items.iter().find(|i| i["metadata"]["name"] == "debug-shell").expect("debug-shell").clone();
    let first_uid = copy["metadata"]["uid"].as_str().expect("a uid").to_owned();
    copy["metadata"]["uid"] = "re-created".into();
    copy["spec"]["tolerations"] = serde_json::json!([{"operator": "Exists"}]);
    items.push(copy);
    let bytes = serde_json::to_vec(&dump).expect("JSON");
    let expected = format!(
        "error: stdin: the dump holds pod \"default/debug-shell\" twice (uids {first_uid} and re-created): write it with one `kubectl get nodes,pods -A -o json`"
    );
    fails(&["plan", "-f", "-"], Some(&bytes), 1, &expected);
    fails(&["explain", "debug-shell", "-f", "-"], Some(&bytes), 1, &expected);
}

#[test]
fn a_node_listed_twice_is_refused() {
    let text = std::fs::read_to_string(crate::util::repo().join(INCIDENT)).expect("the incident dump");
    let mut dump: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let items = dump["items"].as_array_mut().expect("items");
    let node = items.iter().find(|i| i["kind"] == "Node").expect("a node").clone();
    let name = node["metadata"]["name"].as_str().expect("a name").to_owned();
    items.push(node);
    let bytes = serde_json::to_vec(&dump).expect("JSON");
    let expected = format!(
        "error: stdin: the dump holds node \"{name}\" twice: write it with one `kubectl get nodes,pods -A -o json`"
    );
    fails(&["plan", "-f", "-"], Some(&bytes), 1, &expected);
}

#[test]
fn pod_missing_from_the_namespace_says_where_it_is() {
    // Fixed: the hint said `(default "default")` whatever the namespace came from.
    let stderr = fails(
        &["explain", "frontend-7d9c6b8f5-c6jfs", "-f", INCIDENT],
        None,
        1,
        "error: pod \"default/frontend-7d9c6b8f5-c6jfs\" not found in examples/incident.json",
    );
    assert_eq!(
        stderr.lines().nth(1),
        Some("hint: a pod \"frontend-7d9c6b8f5-c6jfs\" is in namespace \"web\": add -n web")
    );
    let stderr = fails(
        &["explain", "ghost", "-f", INCIDENT],
        None,
        1,
        "error: pod \"default/ghost\" not found in examples/incident.json",
    );
    assert_eq!(stderr.lines().nth(1), Some("hint: without -n, the pod is looked up in namespace \"default\""));
    let stderr = fails(
        &["explain", "ghost", "-n", "web", "-f", INCIDENT],
        None,
        1,
        "error: pod \"web/ghost\" not found in examples/incident.json",
    );
    assert_eq!(stderr.lines().nth(1), Some("hint: the pod is looked up in namespace \"web\", given with -n"));
}

#[test]
fn removing_a_taint_the_node_does_not_have_warns() {
    // Fixed: a what-if removal of a taint that is not there changed nothing, silently.
    let now = "2026-11-22T10:00:00Z";
    let result =
        run(&["plan", "-f", INCIDENT, "--now", now, "worker-3", "--remove-taint", "example.com/gpu:NoExecute"], None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(
        result.stderr.lines().next(),
        Some("warning: --remove-taint example.com/gpu:NoExecute: node \"worker-3\" has no such taint")
    );
    // The other warning says the dump was written without Leases (docs/node-lifecycle.md).
    assert!(result.stderr.lines().skip(1).all(|line| line.contains("no Leases")), "{}", result.stderr);
    let plain = run(&["plan", "-f", INCIDENT, "--now", now, "worker-3"], None);
    assert_eq!(result.stdout, plain.stdout, "the plan is the one without the removal");
    let matched = run(
        &["plan", "-f", INCIDENT, "--now", now, "worker-3", "--remove-taint", "node.kubernetes.io/unreachable"],
        None,
    );
    assert_eq!(matched.code, 0, "{}", matched.stderr);
    assert!(!matched.stderr.contains("--remove-taint"), "{}", matched.stderr);
}

#[test]
fn times_past_the_api_range_are_out_of_range_not_malformed() {
    // Fixed: they were "not RFC 3339".
    fails(
        &["plan", "-f", INCIDENT, "--now", "9999-12-31T23:59:59Z"],
        None,
        2,
        "error: invalid value '9999-12-31T23:59:59Z' for '--now <RFC3339>': out of range: the last time supported is 9999-12-30T22:00:00Z",
    );
    let dump = br#"{"kind":"List","items":[{"kind":"Node","metadata":{"name":"n"},"spec":{"taints":[{"key":"k","effect":"NoExecute","timeAdded":"10000-01-01T00:00:00Z"}]}}]}"#;
    fails(
        &["plan", "-f", "-"],
        Some(dump),
        1,
        "error: stdin: item 0 (Node n): spec.taints[0].timeAdded: \"10000-01-01T00:00:00Z\" is out of range: the last time supported is 9999-12-30T22:00:00Z",
    );
}

#[test]
fn countdowns_use_one_letter_units() {
    // Fixed: `1day 8h` beside `4m 30s`.
    let result = run(&["plan", "-f", INCIDENT, "--now", "2026-12-31T23:59:59Z", "worker-3"], None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert!(result.stdout.contains("overdue by 39d 14h 2m 49s"), "{}", result.stdout);
    assert!(!result.stdout.contains("day") && !result.stdout.contains("month"), "{}", result.stdout);
}

#[test]
fn a_now_before_the_dump_names_the_lease_the_taint_and_the_pods_it_lies_before() {
    // Fixed: a `--now` before the dump clamped every later stamp to it without a word and
    // printed a plausible, wrong plan.
    let result = run(&["plan", "-f", INCIDENT, "--now", "2026-11-22T09:00:00Z"], None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let warnings: Vec<&str> = result.stderr.lines().filter(|line| !line.contains("kube-node-lease")).collect();
    assert_eq!(
        warnings,
        [
            "warning: --now 2026-11-22T09:00:00Z is 59m 58s before the input was taken (the kube-controller-manager \
             Lease was renewed at 2026-11-22T09:59:58.402117Z): the plan is of a time the input had already passed",
            "warning: taint node.kubernetes.io/unreachable:NoExecute of node \"worker-3\" was added at \
             2026-11-22T09:57:10Z, 57m 10s after --now 2026-11-22T09:00:00Z: its countdowns are taken to start at \
             2026-11-22T09:00:00Z",
            "warning: pod monitoring/netprobe-7f6c5d8b9-tw6zn was bound at 2026-11-22T09:58:30Z, 58m 30s after --now \
             2026-11-22T09:00:00Z (and 3 more pods): it is taken as bound at 2026-11-22T09:00:00Z",
        ]
    );
    let after = run(&["plan", "-f", INCIDENT, "--now", "2026-11-22T10:00:00Z"], None);
    assert!(after.stderr.lines().all(|line| line.contains("kube-node-lease")), "{}", after.stderr);
}

#[test]
fn a_now_that_is_no_date_is_asked_for_as_rfc_3339_and_an_offset_past_23_hours_is_refused() {
    // Fixed: `1732269600` and `20261122` were "out of range …9999-12-30"; `+24:00` was taken.
    for now in ["1732269600", "20261122", "2026-11-22T10:00:00+24:00"] {
        fails(
            &["plan", "-f", INCIDENT, "--now", now],
            None,
            2,
            &format!(
                "error: invalid value '{now}' for '--now <RFC3339>': expected an RFC 3339 time such as 2026-11-22T10:00:00Z"
            ),
        );
    }
    let within = run(&["plan", "-f", INCIDENT, "--now", "2026-11-22T10:00:00+23:59"], None);
    assert_eq!(within.code, 0, "{}", within.stderr);
}

#[test]
fn a_dump_that_is_compressed_utf_16_or_behind_a_byte_order_mark_is_named() {
    // Fixed: each was "expected value at line 1 column 1" and nothing more.
    let dir = scratch("encodings");
    let cases: [(&str, &[u8], &str); 3] = [
        ("gzip.json", b"\x1f\x8b\x08\x00\x00", "it is gzip-compressed: decompress it first, e.g. with gunzip"),
        ("utf16.json", b"\xff\xfe{\x00}\x00", "it is UTF-16 text, as PowerShell's > writes it"),
        ("bom.json", b"\xef\xbb\xbf{\"kind\":\"List\",\"items\":[]}", "it starts with a UTF-8 byte-order mark"),
    ];
    for (name, bytes, what) in cases {
        let path = dir.join(name);
        std::fs::write(&path, bytes).expect("write");
        let path = path.to_str().expect("UTF-8").to_owned();
        let result = run(&["plan", "-f", &path], None);
        assert_eq!(result.code, 1, "{name}: {}", result.stderr);
        let first = result.stderr.lines().next().unwrap_or_default();
        assert!(first.starts_with(&format!("error: {path}: not valid JSON: ")) && first.contains(what), "{first}");
    }
}

#[test]
fn an_unhealthy_zone_threshold_above_one_is_taken_and_said_to_disable_partial_disruption() {
    // kube-controller-manager validates none of its node-lifecycle flags: mirrored,
    // and what such a value means is said in one line.
    let result =
        run(&["plan", "-f", INCIDENT, "--now", "2026-11-22T10:00:00Z", "--unhealthy-zone-threshold", "2"], None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(
        result.stderr.lines().next(),
        Some(
            "warning: --unhealthy-zone-threshold 2 is above 1: no zone can be partially disrupted (no share of a \
             zone's nodes reaches it), as in kube-controller-manager, which accepts it too"
        )
    );
    let usual =
        run(&["plan", "-f", INCIDENT, "--now", "2026-11-22T10:00:00Z", "--unhealthy-zone-threshold", "0.55"], None);
    assert!(!usual.stderr.contains("--unhealthy-zone-threshold"), "{}", usual.stderr);
}

#[test]
fn a_silent_after_that_makes_every_node_silent_is_refused_or_warned() {
    for value in ["0s", "1ns", "999ms"] {
        fails(
            &["plan", "-f", INCIDENT, "--silent-after", value],
            None,
            2,
            &format!(
                "error: invalid value '{value}' for '--silent-after <DURATION>': expected 1s or more, not {value}: a \
                 node is silent when its Lease was last renewed longer ago than this, and kubelets renew every 10s \
                 by default"
            ),
        );
    }
    // Three kubelets renewed 2, 3 and 4 s before --now (no controller Lease in the dump): 1s takes
    // every node as silent.
    let node = |name: &str, renewed: &str| {
        format!(
            r#"{{"kind":"Node","metadata":{{"name":"{name}"}},"status":{{"conditions":[{{"type":"Ready",
            "status":"True","lastHeartbeatTime":"{renewed}","lastTransitionTime":"2026-11-22T08:00:00Z"}}]}}}},
            {{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{{"name":"{name}",
            "namespace":"kube-node-lease"}},"spec":{{"renewTime":"{renewed}"}}}}"#
        )
    };
    let dump = format!(
        r#"{{"kind":"List","items":[{},{},{},{{"kind":"Pod","metadata":{{"name":"p","namespace":"d"}},
            "spec":{{"nodeName":"a"}}}}]}}"#,
        node("a", "2026-11-22T09:59:58.000000Z"),
        node("b", "2026-11-22T09:59:57.000000Z"),
        node("c", "2026-11-22T09:59:56.000000Z")
    );
    let now = ["--now", "2026-11-22T10:00:00Z"];
    let result = run(&[&["plan", "-f", "-", "--silent-after", "1s"][..], &now].concat(), Some(dump.as_bytes()));
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(
        result.stderr.lines().next(),
        Some(
            "warning: --silent-after 1s takes 3 nodes as silent whose kubelet renewed its Lease within the last 10s \
             (the kubelet's default interval): keep it only if your kubelets renew more often"
        )
    );
    // 3s takes some, not every node: one of them may really be silent; nothing to say.
    let result = run(&[&["plan", "-f", "-", "--silent-after", "3s"][..], &now].concat(), Some(dump.as_bytes()));
    assert!(!result.stderr.contains("--silent-after"), "{}", result.stderr);
    // 5s takes none that the default would not: nothing to say.
    let result = run(&["plan", "-f", INCIDENT, "--now", "2026-11-22T10:00:00Z", "--silent-after", "5s"], None);
    assert_eq!(result.stderr, "");
    let result = run(&["plan", "-f", INCIDENT, "--now", "2026-11-22T10:00:00Z"], None);
    assert_eq!(result.stderr, "", "the default says nothing");
}

#[test]
fn a_kube_version_no_release_has_is_warned() {
    let result = run(&["plan", "-f", INCIDENT, "--now", "2026-11-22T10:00:00Z", "--kube-version", "1.99"], None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(
        result.stderr.lines().next(),
        Some(
            "warning: --kube-version 1.99: no release this build knows (the newest is 1.37): its controllers are \
             taken to behave as 1.37's"
        )
    );
    let result = run(&["plan", "-f", INCIDENT, "--now", "2026-11-22T10:00:00Z", "--kube-version", "1.37"], None);
    assert_eq!(result.stderr, "");
}

#[test]
fn a_content_type_variable_that_names_none_is_named() {
    let result = run_command(
        crate::util::command().args(["plan", "-f", INCIDENT]).env("TAINT_EVICT_CONTENT_TYPE", "garbage"),
        None,
    );
    assert_eq!(result.code, 2, "{}", result.stderr);
    assert_eq!(
        result.stderr,
        "error: TAINT_EVICT_CONTENT_TYPE=\"garbage\" is not a content type: expected protobuf or json\n\
         hint: it sets --content-type's default: unset it, or set it to protobuf or json\n"
    );
    // The flag given on the command line wins over the variable, and is named itself when wrong.
    let result = run_command(
        crate::util::command()
            .args(["plan", "-f", INCIDENT, "--now", "2026-11-22T10:00:00Z", "--content-type", "json"])
            .env("TAINT_EVICT_CONTENT_TYPE", "garbage"),
        None,
    );
    assert_eq!(result.code, 0, "{}", result.stderr);
}

#[test]
fn max_deletions_below_one_gets_one_message_negative_or_zero() {
    // Fixed: `-1` was clap's "unexpected argument '-1' found", `0` a range message.
    for value in ["-1", "0"] {
        fails(
            &["run", "--max-deletions", value],
            None,
            2,
            &format!(
                "error: invalid value '{value}' for '--max-deletions <N>': expected 1 or more deletions per window, \
                 not {value} (leave --max-deletions out for no cap)"
            ),
        );
    }
}
