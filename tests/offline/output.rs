//! What the operator sees: the table and JSON for the bundled example (snapshots), colour rules, the
//! YAML twin of the JSON document, and `kubectl taint-evict` through kubectl's plugin dispatch.

use std::process::Command;

use crate::util::{command, run, run_command, scratch};

const NOW: &str = "2026-11-22T10:00:00Z";
const INCIDENT: &str = "examples/incident.json";

#[test]
fn incident_table() {
    let result = run(&["plan", "-f", INCIDENT, "--now", NOW], None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    insta::assert_snapshot!(result.stdout);
}

#[test]
fn incident_wide_table_for_one_namespace() {
    let result =
        run(&["plan", "-f", INCIDENT, "--now", NOW, "-o", "wide", "-n", "payments", "worker-3", "worker-2"], None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    insta::assert_snapshot!(result.stdout);
}

#[test]
fn incident_json() {
    let result = run(&["plan", "-f", INCIDENT, "--now", NOW, "-o", "json"], None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    insta::assert_snapshot!(result.stdout);
}

#[test]
fn incident_explain() {
    let result =
        run(&["explain", "-f", INCIDENT, "--now", NOW, "-n", "payments", "fraud-scorer-5d7b8c9f6-gq2xw"], None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    insta::assert_snapshot!(result.stdout);
}

#[test]
fn explain_names_the_rejected_tolerations_of_an_untolerated_taint() {
    let result =
        run(&["explain", "-f", INCIDENT, "--now", NOW, "-n", "web", "frontend-7d9c6b8f5-c6jfs", "-o", "json"], None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let doc: serde_json::Value = serde_json::from_str(&result.stdout).expect("JSON");
    assert_eq!(doc["kind"], "EvictionExplanation");
    assert_eq!(doc["verdict"], "evict-now");
    let taint = &doc["taints"][0];
    assert_eq!(taint["taint"]["key"], "example.com/maintenance");
    assert!(taint["usedToleration"].is_null());
    assert_eq!(taint["rejected"][0]["reason"], "key differs");
}

#[test]
fn yaml_is_the_json_document() {
    let json = run(&["plan", "-f", INCIDENT, "--now", NOW, "-o", "json"], None);
    let yaml = run(&["plan", "-f", INCIDENT, "--now", NOW, "-o", "yaml"], None);
    assert_eq!(yaml.code, 0, "{}", yaml.stderr);
    let from_json: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let from_yaml: serde_json::Value = serde_saphyr::from_str(&yaml.stdout).expect("YAML");
    assert_eq!(from_json, from_yaml);
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let plain = run(&["plan", "-f", INCIDENT, "--now", NOW], None);
    assert!(!plain.stdout.contains('\u{1b}'), "no colour into a pipe");
    let forced = run(&["plan", "-f", INCIDENT, "--now", NOW, "--color", "always"], None);
    assert!(forced.stdout.contains("\u{1b}[31"), "--color always colours evict-now red");
    let never = run_command(
        command().args(["plan", "-f", INCIDENT, "--now", NOW, "--color", "never"]).env("NO_COLOR", "1"),
        None,
    );
    assert_eq!(never.stdout, plain.stdout);
}

#[test]
fn what_if_taint_on_a_clean_node() {
    let result = run(
        &[
            "plan",
            "-f",
            INCIDENT,
            "--now",
            NOW,
            "-o",
            "json",
            "--taint",
            "node.kubernetes.io/unreachable:NoExecute",
            "worker-1",
        ],
        None,
    );
    assert_eq!(result.code, 0, "{}", result.stderr);
    let doc: serde_json::Value = serde_json::from_str(&result.stdout).expect("JSON");
    let node = &doc["nodes"][0];
    assert_eq!(node["taints"][0]["timeAdded"], NOW);
    let pod = &node["pods"][0];
    assert_eq!(
        (pod["verdict"].as_str(), pod["evictAt"].as_str(), pod["basis"].as_str()),
        (Some("evict-at"), Some("2026-11-22T10:05:00Z"), Some("now"))
    );
}

#[test]
fn selector_picks_nodes_by_label() {
    let result = run(
        &["plan", "-f", INCIDENT, "--now", NOW, "-o", "json", "-l", "kubernetes.io/hostname in (worker-1,worker-4)"],
        None,
    );
    assert_eq!(result.code, 0, "{}", result.stderr);
    let doc: serde_json::Value = serde_json::from_str(&result.stdout).expect("JSON");
    let names: Vec<&str> = doc["nodes"].as_array().expect("nodes").iter().filter_map(|n| n["name"].as_str()).collect();
    assert_eq!(names, ["worker-1", "worker-4"]);
}

#[test]
fn kubectl_dispatches_to_the_plugin_on_path() {
    if Command::new("kubectl").arg("version").arg("--client").output().is_err() {
        eprintln!("kubectl is not installed: plugin dispatch not tested");
        return;
    }
    let dir = scratch("kubectl-dispatch");
    let plugin = dir.join("kubectl-taint_evict");
    // A link, not a copy: kubectl follows it, and the debug binary is ~170 MB.
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_kubectl-taint_evict"), &plugin).expect("link the plugin");
    let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default());
    let args = ["taint-evict", "plan", "-f", INCIDENT, "--now", NOW, "-o", "json"];
    let through_kubectl =
        run_command(Command::new("kubectl").args(args).env("PATH", path).current_dir(crate::util::repo()), None);
    assert_eq!(through_kubectl.code, 0, "{}", through_kubectl.stderr);
    let direct = run(&args[1..], None);
    assert_eq!(through_kubectl.stdout, direct.stdout);
}

/// Runs `plan` on the bundled example with `COLUMNS` set.
fn plan_at(columns: &str, args: &[&str]) -> crate::util::Run {
    let base = ["plan", "-f", INCIDENT, "--now", NOW];
    run_command(command().args(base).args(args).env("COLUMNS", columns), None)
}

/// The longest line of `text`, in characters.
fn longest(text: &str) -> usize {
    text.lines().map(|line| line.chars().count()).max().unwrap_or(0)
}

#[test]
fn at_50_columns_the_names_give_way_and_verdict_deadline_and_time_left_stay_whole() {
    // On a real terminal 50 columns wide.
    let table = plan_in_terminal(50, &[("TERM", "dumb")], &["worker-3"]);
    assert!(longest(&table) <= 50, "{table}");
    let json = run(&["plan", "worker-3", "-f", INCIDENT, "--now", NOW, "-o", "json"], None);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let pods = doc["nodes"][0]["pods"].as_array().expect("pods");
    let rows: Vec<&str> = table.lines().skip_while(|l| !l.starts_with("NAME")).skip(1).take(pods.len()).collect();
    assert_eq!(rows.len(), pods.len(), "{table}");
    for (row, pod) in rows.iter().zip(pods) {
        let cells: Vec<&str> = row.split_whitespace().collect();
        // A pod being deleted already is shown terminating; the document keeps the controller's verdict.
        let verdict =
            if pod["terminating"] == true { "terminating" } else { pod["verdict"].as_str().expect("verdict") };
        assert_eq!(cells[2], verdict, "{row}");
        let deadline = pod["evictAt"].as_str().map_or("-", |at| &at[11..19]);
        assert_eq!(cells[3], deadline, "{row}");
        assert!(!cells.last().expect("a cell").ends_with('…'), "the time left is whole: {row}");
    }
}

#[test]
fn a_pod_whose_deletion_is_issued_counts_as_terminating_not_overdue() {
    // At 10:05 web/frontend-7d9c6b8f5-lm8d2, terminating, is past its deadline (10:02:10).
    let later = ["plan", "worker-3", "-f", INCIDENT, "--now", "2026-11-22T10:05:00Z"];
    let json = run(&[&later[..], &["-o", "json"]].concat(), None);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let pods = doc["nodes"][0]["pods"].as_array().expect("pods");
    let overdue = pods.iter().filter(|p| p["overdue"] == true && p["terminating"] == false).count();
    assert!(pods.iter().any(|p| p["overdue"] == true && p["terminating"] == true), "{doc:#}");
    let table = run(&later, None).stdout;
    let counts = table.lines().nth(1).expect("the node's counts");
    assert!(counts.contains(", 1 terminating; ") && counts.ends_with(&format!("; {overdue} overdue")), "{counts}");
}

#[test]
fn incident_table_at_80_columns() {
    let result = plan_at("80", &[]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert!(longest(&result.stdout) <= 80, "{}", result.stdout);
    // Every pod's row still says its namespace, name, verdict, deadline and time left.
    let json = run(&["plan", "-f", INCIDENT, "--now", NOW, "-o", "json"], None);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    for pod in doc["nodes"].as_array().expect("nodes").iter().flat_map(|n| n["pods"].as_array().expect("pods")) {
        let name = pod["name"].as_str().expect("name");
        let row = result.stdout.lines().find(|l| l.split_whitespace().nth(1) == Some(name)).expect("a row per pod");
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells[0], pod["namespace"].as_str().expect("namespace"), "{row}");
        // A pod being deleted already is shown terminating; the document keeps the controller's verdict.
        let verdict =
            if pod["terminating"] == true { "terminating" } else { pod["verdict"].as_str().expect("verdict") };
        assert_eq!(cells[2], verdict, "{row}");
        let (deadline, left) = match pod["evictAt"].as_str() {
            Some(at) => (
                at[11..19].to_owned(),
                if at < NOW {
                    "overdue"
                } else if at == NOW {
                    "now"
                } else {
                    "in"
                },
            ),
            None => ("-".to_owned(), "-"),
        };
        assert_eq!(cells[3], deadline, "{row}");
        assert_eq!(cells[4], left, "{row}");
    }
    insta::assert_snapshot!(result.stdout);
}

#[test]
fn table_narrows_the_reason_before_anything_else() {
    let wide_enough = plan_at("160", &[]);
    assert_eq!(wide_enough.stdout, run(&["plan", "-f", INCIDENT, "--now", NOW], None).stdout, "160 columns is enough");
    let at_100 = plan_at("100", &[]);
    assert!(longest(&at_100.stdout) <= 100, "{}", at_100.stdout);
    assert!(at_100.stdout.contains("untolerated maintenance"), "the short reason: {}", at_100.stdout);
    let at_40 = plan_at("40", &[]);
    assert!(longest(&at_40.stdout) <= 40, "cut as a last resort: {}", at_40.stdout);
    // Colour codes take no columns: the same text, coloured, cut at the same places.
    let at_70 = plan_at("70", &[]);
    assert!(longest(&at_70.stdout) <= 70, "{}", at_70.stdout);
    let coloured = plan_at("70", &["--color", "always"]);
    assert!(coloured.stdout.contains('\u{1b}'), "{}", coloured.stdout);
    assert_eq!(without_colour(&coloured.stdout), at_70.stdout);
}

/// `text` without SGR sequences (`ESC [ … m`).
fn without_colour(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            chars.by_ref().find(|&c| c == 'm');
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn wide_keeps_every_value_in_full_at_any_width() {
    let at_80 = plan_at("80", &["-o", "wide"]);
    assert_eq!(at_80.code, 0, "{}", at_80.stderr);
    assert_eq!(at_80.stdout, run(&["plan", "-f", INCIDENT, "--now", NOW, "-o", "wide"], None).stdout);
    assert!(at_80.stdout.contains("2026-11-22T10:02:10Z   in 2m 10s"), "{}", at_80.stdout);
    assert!(at_80.stdout.contains("frontend-7d9c6b8f5-lm8d2 (terminating)"), "{}", at_80.stdout);
}

#[test]
fn incident_summary() {
    let result = plan_at("80", &["--summary"]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert!(longest(&result.stdout) <= 80, "{}", result.stdout);
    insta::assert_snapshot!(result.stdout);
}

#[test]
fn nodes_are_shown_most_urgent_first() {
    // worker-4's first deadline is now, worker-3's passed: worker-3 comes first whatever the order given.
    let result = run(&["plan", "-f", INCIDENT, "--now", NOW, "--summary", "worker-4", "worker-3"], None);
    let nodes: Vec<&str> = result.stdout.lines().skip(1).filter_map(|l| l.split(':').next()).collect();
    assert_eq!(nodes, ["worker-3", "worker-4"], "{}", result.stdout);
}

#[test]
fn incident_timeline() {
    let result = plan_at("80", &["--timeline"]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert!(longest(&result.stdout) <= 80, "{}", result.stdout);
    assert!(result.stdout.contains("Biggest cliff: 4 pods at 10:02:10"), "{}", result.stdout);
    insta::assert_snapshot!(result.stdout);
}

#[test]
fn timeline_in_json_is_the_chart_as_data() {
    let result = run(&["plan", "-f", INCIDENT, "--now", NOW, "-o", "json", "--timeline"], None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let doc: serde_json::Value = serde_json::from_str(&result.stdout).expect("JSON");
    let timeline = &doc["timeline"].clone();
    assert_eq!((timeline["step"].as_str(), timeline["stepSeconds"].as_i64()), (Some("5m"), Some(300)));
    assert_eq!((timeline["dueNow"].as_u64(), timeline["never"].as_u64()), (Some(3), Some(5)));
    let buckets = timeline["buckets"].as_array().expect("buckets");
    assert_eq!(buckets[0], serde_json::json!({"from": NOW, "to": "2026-11-22T10:05:00Z", "pods": 5}));
    assert_eq!(buckets.iter().filter_map(|b| b["pods"].as_u64()).sum::<u64>(), 7);
    assert_eq!(timeline["biggestCliff"], serde_json::json!({"at": "2026-11-22T10:02:10Z", "pods": 4}));
    // Without --timeline the document is the one it always was (see the incident_json snapshot).
    let without = run(&["plan", "-f", INCIDENT, "--now", NOW, "-o", "json"], None);
    let mut doc = doc;
    doc.as_object_mut().expect("object").remove("timeline");
    assert_eq!(doc, serde_json::from_str::<serde_json::Value>(&without.stdout).expect("JSON"));
    let yaml = run(&["plan", "-f", INCIDENT, "--now", NOW, "-o", "yaml", "--timeline"], None);
    let from_yaml: serde_json::Value = serde_saphyr::from_str(&yaml.stdout).expect("YAML");
    assert_eq!(from_yaml["timeline"], *timeline);
}

#[test]
fn no_headers_prints_only_the_pods() {
    let result = run(&["plan", "-f", INCIDENT, "--now", NOW, "--no-headers"], None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let lines: Vec<&str> = result.stdout.lines().collect();
    assert_eq!(lines.len(), 16, "one line per pod: {}", result.stdout);
    assert!(lines[0].starts_with("default ") && lines[0].contains("debug-shell"), "{}", result.stdout);
    assert!(!result.stdout.contains("NAMESPACE") && !result.stdout.contains("Node "), "{}", result.stdout);
}

#[test]
fn output_name_lists_pods_as_kubectl_names_in_sort_order() {
    let by_deadline = run(&["plan", "-f", INCIDENT, "--now", NOW, "-o", "name"], None);
    assert_eq!(by_deadline.code, 0, "{}", by_deadline.stderr);
    let names: Vec<&str> = by_deadline.stdout.lines().collect();
    assert_eq!(names.len(), 16);
    // Fixed: `pod/NAMESPACE/NAME` was refused by kubectl and by `explain`.
    assert_eq!(names[..3], ["pod/debug-shell", "pod/postgres-0", "pod/frontend-7d9c6b8f5-c6jfs"]);
    let explain = run(&["explain", names[1], "-n", "payments", "-f", INCIDENT, "--now", NOW], None);
    assert_eq!(explain.code, 0, "{}", explain.stderr);
    let by_name = run(&["plan", "-f", INCIDENT, "--now", NOW, "-o", "name", "--sort-by", "name"], None);
    let names: Vec<&str> = by_name.stdout.lines().map(|l| l.rsplit('/').next().unwrap_or_default()).collect();
    assert!(names.is_sorted(), "{names:?}");
    let by_namespace = run(&["plan", "-f", INCIDENT, "--now", NOW, "-o", "name", "--sort-by=namespace"], None);
    let keys: Vec<&str> = by_namespace.stdout.lines().collect();
    assert_eq!(keys[..2], ["pod/nightly-report-29922300-7xk2m", "pod/queue-worker-6b5d8f7c9-m9qzt"], "batch first");
}

#[test]
fn sort_by_orders_each_nodes_table() {
    let result = run(&["plan", "-f", INCIDENT, "--now", NOW, "--sort-by", "namespace", "worker-3"], None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    // The pods' rows: after the heading, the summary and the column names; before the stuck pods' lines.
    let rows = result.stdout.lines().skip(3).take_while(|l| !l.starts_with("Stuck terminating"));
    let namespaces: Vec<&str> = rows.filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(namespaces.first(), Some(&"batch"), "{}", result.stdout);
    assert!(namespaces.is_sorted(), "{}", result.stdout);
}

#[test]
fn summary_and_timeline_refuse_the_formats_they_do_not_fit() {
    let summary = run(&["plan", "-f", INCIDENT, "--now", NOW, "-o", "json", "--summary"], None);
    assert_eq!(summary.code, 2, "{}", summary.stderr);
    assert!(summary.stderr.contains("--summary is for the table"), "{}", summary.stderr);
    let timeline = run(&["plan", "-f", INCIDENT, "--now", NOW, "-o", "name", "--timeline"], None);
    assert_eq!(timeline.code, 2, "{}", timeline.stderr);
    // kubectl lets --no-headers and --sort-by through for JSON: the document is unchanged.
    let json = run(&["plan", "-f", INCIDENT, "--now", NOW, "-o", "json", "--no-headers", "--sort-by", "name"], None);
    assert_eq!(json.stdout, run(&["plan", "-f", INCIDENT, "--now", NOW, "-o", "json"], None).stdout);
}

#[test]
fn node_and_pod_arguments_take_kubectl_type_prefixes() {
    let plain = run(&["plan", "-f", INCIDENT, "--now", NOW, "worker-4"], None);
    let typed = run(&["plan", "-f", INCIDENT, "--now", NOW, "node/worker-4"], None);
    assert_eq!(typed.code, 0, "{}", typed.stderr);
    assert_eq!(typed.stdout, plain.stdout);
    let wrong = run(&["plan", "-f", INCIDENT, "--now", NOW, "pod/worker-4"], None);
    assert_eq!(wrong.code, 2, "{}", wrong.stderr);
    let pod = "fraud-scorer-5d7b8c9f6-gq2xw";
    let explain = |name: &str| run(&["explain", "-f", INCIDENT, "--now", NOW, "-n", "payments", name], None);
    let typed = explain(&format!("pod/{pod}"));
    assert_eq!(typed.code, 0, "{}", typed.stderr);
    assert_eq!(typed.stdout, explain(pod).stdout);
}

#[test]
fn explain_yaml_is_the_json_document() {
    let args = ["explain", "-f", INCIDENT, "--now", NOW, "-n", "payments", "postgres-0", "-o"];
    let json = run(&[&args[..], &["json"]].concat(), None);
    let yaml = run(&[&args[..], &["yaml"]].concat(), None);
    assert_eq!(yaml.code, 0, "{}", yaml.stderr);
    let from_json: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let from_yaml: serde_json::Value = serde_saphyr::from_str(&yaml.stdout).expect("YAML");
    assert_eq!(from_json, from_yaml);
}

/// Runs `plan` on the example with stdout on a pseudo-terminal `columns` wide (Linux's `openpty`); returns what the
/// terminal received, without its carriage returns.
#[cfg(target_os = "linux")]
fn plan_in_terminal(columns: u16, env: &[(&str, &str)], args: &[&str]) -> String {
    use std::io::Read;
    use std::os::fd::FromRawFd;
    let (mut leader, mut follower) = (0, 0);
    let size = libc::winsize { ws_row: 24, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: openpty writes two descriptors into the locals; the size is read only.
    let opened = unsafe { libc::openpty(&mut leader, &mut follower, std::ptr::null_mut(), std::ptr::null(), &size) };
    assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: each descriptor was just opened and is owned by exactly one File from here on.
    let (mut leader, follower) = unsafe { (std::fs::File::from_raw_fd(leader), std::fs::File::from_raw_fd(follower)) };
    let mut command = command();
    command.args(["plan", "-f", INCIDENT, "--now", NOW]).args(args).envs(env.iter().copied());
    let mut child = command
        .stdin(std::process::Stdio::null())
        .stdout(follower)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the binary starts");
    // The follower's last copy is the child's: once it exits, reading the leader ends (EIO).
    drop(command);
    let mut received = Vec::new();
    let mut buffer = [0; 4096];
    loop {
        match leader.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => received.extend_from_slice(&buffer[..n]),
        }
    }
    assert!(child.wait().expect("the binary finishes").success());
    String::from_utf8(received).expect("UTF-8").replace('\r', "")
}

#[test]
#[cfg(target_os = "linux")]
fn a_terminal_gets_its_width_and_colour_unless_it_is_dumb() {
    let on_80 = plan_in_terminal(80, &[("TERM", "xterm")], &[]);
    assert!(on_80.contains('\u{1b}'), "colour on a terminal: {on_80}");
    let dumb = plan_in_terminal(80, &[("TERM", "dumb")], &[]);
    assert!(!dumb.contains('\u{1b}'), "no colour on a dumb terminal: {dumb}");
    assert!(longest(&dumb) <= 80, "{dumb}");
    assert_eq!(dumb, plan_at("80", &[]).stdout, "the terminal's width is used as COLUMNS is");
    let columns_first = plan_in_terminal(200, &[("TERM", "dumb"), ("COLUMNS", "80")], &[]);
    assert_eq!(columns_first, dumb, "COLUMNS overrides the terminal's width");
}

#[test]
fn explain_text_is_wrapped_to_the_terminal_width_as_the_table_is_fitted() {
    // Fixed: lines reached 101–110 characters with COLUMNS=80.
    for pod in ["fraud-scorer-5d7b8c9f6-gq2xw", "postgres-0"] {
        let args = ["explain", "-n", "payments", pod, "-f", INCIDENT, "--now", NOW];
        let wrapped = run_command(command().args(args).env("COLUMNS", "80"), None);
        assert_eq!(wrapped.code, 0, "{}", wrapped.stderr);
        assert!(wrapped.stdout.lines().all(|line| line.chars().count() <= 80), "{}", wrapped.stdout);
        // The same words, only cut into more lines; into a pipe, nothing is cut.
        let whole = run(&args, None);
        let words = |text: &str| text.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(words(&wrapped.stdout), words(&whole.stdout));
        assert!(whole.stdout.lines().any(|line| line.chars().count() > 80), "{}", whole.stdout);
    }
}

#[test]
fn explain_says_when_a_huge_toleration_wraps_as_upstreams_nanoseconds_do() {
    // Fixed: tolerationSeconds of 10^12 gives a deadline in 2149 (Go's time.Duration wraps),
    // faithfully; explain said nothing of why.
    let dump = r#"{"apiVersion":"v1","kind":"List","items":[
        {"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},
         "spec":{"taints":[{"key":"k","effect":"NoExecute","timeAdded":"2026-11-22T09:00:00Z"}]}},
        {"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default","uid":"u1"},
         "spec":{"nodeName":"n1","tolerations":[{"key":"k","operator":"Exists","effect":"NoExecute",
                 "tolerationSeconds":1000000000000}]},"status":{"phase":"Running"}}]}"#;
    let result = run(&["explain", "p", "-f", "-", "--now", NOW], Some(dump.as_bytes()));
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert!(result.stdout.contains("Verdict: evict-at 2149-09-17T09:40:19.684212736Z"), "{}", result.stdout);
    assert!(
        result.stdout.contains(
            "1000000000000s is past the 292 years a Go time.Duration holds: the controller's nanoseconds wrap, to a \
             window of 44859d 40m 19s"
        ),
        "{}",
        result.stdout
    );
}

/// A dump of `kubectl get --show-managed-fields -o json`: node n1 tainted with `kubectl taint` (no
/// `timeAdded`) at 09:58:12; `keep` false drops its `managedFields`, as `kubectl get -o json` does.
fn tainted_by_hand(keep: bool) -> String {
    let managed = r#","managedFields":[
        {"manager":"kubelet","operation":"Update","time":"2026-11-22T09:00:00Z","fieldsV1":{"f:metadata":{"f:labels":{}}}},
        {"manager":"kubectl-taint","operation":"Update","time":"2026-11-22T09:58:12Z","fieldsV1":{"f:spec":{"f:taints":{}}}}]"#;
    format!(
        r#"{{"kind":"List","items":[
        {{"kind":"Node","metadata":{{"name":"n1"{}}},"spec":{{"taints":[{{"key":"maint","value":"true","effect":"NoExecute"}}]}}}},
        {{"kind":"Pod","metadata":{{"name":"p","namespace":"web","uid":"u","creationTimestamp":"2026-11-22T09:00:00Z"}},
         "spec":{{"nodeName":"n1","tolerations":[{{"key":"maint","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}}]}}}}]}}"#,
        if keep { managed } else { "" }
    )
}

#[test]
fn a_taint_without_time_added_counts_from_its_write_asked_at_any_time() {
    let dump = tainted_by_hand(true);
    for now in ["2026-11-22T10:00:00Z", "2026-11-22T10:02:00Z", "2026-11-23T10:00:00Z"] {
        let result = run(&["plan", "-f", "-", "--now", now, "-o", "json"], Some(dump.as_bytes()));
        assert_eq!(result.code, 0, "{}", result.stderr);
        let plan: serde_json::Value = serde_json::from_str(&result.stdout).expect("JSON");
        let node = &plan["nodes"][0];
        assert_eq!(
            node["taintsWritten"],
            serde_json::json!({"time": "2026-11-22T09:58:12Z", "manager": "kubectl-taint"})
        );
        assert_eq!(node["pods"][0]["evictAt"], "2026-11-22T10:03:12Z", "asked at {now}");
        assert_eq!(node["pods"][0]["basis"], "taint-written");
    }
    let table = run(&["plan", "-f", "-", "--now", NOW], Some(dump.as_bytes()));
    assert!(
        table.stdout.starts_with("Node n1: maint=true:NoExecute (no timeAdded; written 09:58:12 by kubectl-taint)\n")
    );
    let explain = run(&["explain", "-f", "-", "--now", NOW, "-n", "web", "p"], Some(dump.as_bytes()));
    assert!(explain.stdout.contains("Clock started: 2026-11-22T09:58:12Z (taint-written)\n  The taint has no timeAdded: counted from when kubectl-taint last wrote"), "{}", explain.stdout);

    // Without `managedFields`: from `now`, and explain says what cannot be known.
    let dump = tainted_by_hand(false);
    let table = run(&["plan", "-f", "-", "--now", NOW], Some(dump.as_bytes()));
    assert!(table.stdout.starts_with("Node n1: maint=true:NoExecute (no timeAdded, so now)\n"), "{}", table.stdout);
    let explain = run(&["explain", "-f", "-", "--now", NOW, "-n", "web", "p", "-o", "json"], Some(dump.as_bytes()));
    let explain: serde_json::Value = serde_json::from_str(&explain.stdout).expect("JSON");
    assert_eq!(explain["basis"], "now");
    let note = explain["basisNote"].as_str().expect("a note");
    assert!(note.contains("does not say when it was written") && note.contains("the deadline be earlier"), "{note}");
    assert!(explain.get("taintsWritten").is_none());
}

/// Five nodes of zone za, za-0 and za-1 silent since 09:59:40 (their Leases), each with a pod
/// tolerating `unreachable` for 30 s; the controller's Lease renewed at 09:59:59.5.
fn two_silent_nodes_of_one_zone() -> String {
    let mut items = Vec::new();
    let mut node = |name: &str, renewed: &str| {
        items.push(serde_json::json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name,
            "creationTimestamp": "2026-11-22T08:00:00Z", "labels": {"topology.kubernetes.io/region": "r",
            "topology.kubernetes.io/zone": "za"}}, "status": {"conditions": [{"type": "Ready", "status": "True",
            "reason": "KubeletReady", "lastHeartbeatTime": renewed, "lastTransitionTime": "2026-11-22T08:00:00Z"}]}}));
        items.push(
            serde_json::json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name,
            "namespace": "kube-node-lease"}, "spec": {"holderIdentity": name, "leaseDurationSeconds": 40,
            "renewTime": renewed}}),
        );
    };
    for name in ["za-ok0", "za-ok1", "za-ok2"] {
        node(name, "2026-11-22T09:59:59Z");
    }
    for name in ["za-0", "za-1"] {
        node(name, "2026-11-22T09:59:40Z");
    }
    for name in ["za-0", "za-1"] {
        items.push(serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": format!("p-{name}"),
            "namespace": "d", "uid": name, "creationTimestamp": "2026-11-22T09:00:00Z"}, "spec": {"nodeName": name,
            "tolerations": [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
            "tolerationSeconds": 30}]}}));
    }
    items.push(serde_json::json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata":
        {"name": "kube-controller-manager", "namespace": "kube-system"}, "spec": {"holderIdentity": "x",
        "leaseDurationSeconds": 15, "acquireTime": "2026-11-22T08:00:00.500000Z", "renewTime": "2026-11-22T09:59:59.500000Z"}}));
    serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string()
}

#[test]
fn with_node_eviction_rate_0_two_nodes_queued_together_tie_for_one_taint() {
    let dump = two_silent_nodes_of_one_zone();
    let plan = |rate: &str| {
        let result = run(&["plan", "-f", "-", "--now", NOW, "--node-eviction-rate", rate], Some(dump.as_bytes()));
        assert_eq!(result.code, 0, "{}", result.stderr);
        result.stdout
    };
    let tied = plan("0");
    assert!(tied.starts_with("1 of 2 nodes expected to be tainted (one of za-0, za-1); 2 pods:"), "{tied}");
    assert_eq!(tied.matches("(zone za; rate 0: only one of za-0, za-1 is tainted)").count(), 2, "{tied}");
    // At the default rate both are tainted, one after the other.
    let both = plan("0.1");
    assert!(both.starts_with("2 nodes expected to be tainted; 2 pods:"), "{both}");
    assert!(!both.contains("only one of"), "{both}");
}

#[test]
fn removing_the_taint_of_a_node_still_unreachable_predicts_it_put_back() {
    let args = ["plan", "worker-3", "--remove-taint", "node.kubernetes.io/unreachable", "-f", INCIDENT, "--now", NOW];
    let result = run(&[&args[..], &["-o", "json"]].concat(), None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    let plan: serde_json::Value = serde_json::from_str(&result.stdout).expect("JSON");
    let node = &plan["nodes"][0];
    assert_eq!(node["predictedTaint"]["key"], "node.kubernetes.io/unreachable", "{plan:#}");
    assert!(node["predictedTaint"]["earliest"].as_str().expect("earliest") >= NOW, "not before the removal");
    let pods = node["pods"].as_array().expect("pods");
    assert!(pods.iter().all(|pod| pod["verdict"] != "unaffected"), "{plan:#}");
    let netprobe = pods.iter().find(|pod| pod["name"] == "netprobe-7f6c5d8b9-tw6zn").expect("netprobe");
    assert_eq!((&netprobe["verdict"], &netprobe["basis"]), (&"evict-at".into(), &"predicted-taint".into()));
}

#[test]
fn explain_says_a_terminating_pod_on_an_untainted_node_is_terminating_not_that_nothing_happens() {
    let dump = r#"{"kind":"List","items":[{"kind":"Node","metadata":{"name":"n1"},"spec":{}},
        {"kind":"Pod","metadata":{"name":"p","namespace":"d","uid":"u","creationTimestamp":"2026-11-22T09:00:00Z",
         "deletionTimestamp":"2026-11-22T09:59:30Z"},"spec":{"nodeName":"n1"}}]}"#;
    let result = run(&["explain", "-n", "d", "p", "-f", "-", "--now", NOW], Some(dump.as_bytes()));
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert!(
        result.stdout.ends_with(
            "Result: the pod is terminating: its deletion was issued already; the node is not NoExecute-tainted now.\n"
        ),
        "{}",
        result.stdout
    );
    assert!(!result.stdout.contains("nothing to do"), "{}", result.stdout);
}

/// Two nodes after an outage: n1 tainted, its pod `a` deleted already and stuck terminating, `b`
/// not; n2 untainted with a pod being deleted.
const TERMINATING_DUMP: &[u8] = br#"{"kind":"List","items":[
{"kind":"Node","metadata":{"name":"n1"},"spec":{"taints":[{"key":"node.kubernetes.io/unreachable","effect":"NoExecute","timeAdded":"2026-11-22T09:00:00Z"}]}},
{"kind":"Node","metadata":{"name":"n2"}},
{"kind":"Pod","metadata":{"name":"a","namespace":"web","uid":"u1","deletionTimestamp":"2026-11-22T09:30:00Z"},"spec":{"nodeName":"n1"}},
{"kind":"Pod","metadata":{"name":"b","namespace":"web","uid":"u2"},"spec":{"nodeName":"n1"}},
{"kind":"Pod","metadata":{"name":"c","namespace":"web","uid":"u3","deletionTimestamp":"2026-11-22T09:30:00Z"},"spec":{"nodeName":"n2"}}
]}"#;

#[test]
fn terminating_pods_are_not_counted_due_now_in_the_first_line() {
    // Fixed: the line said "2 due now" where the node line said "1 overdue; 1 terminating".
    let result = run(&["plan", "-f", "-", "--now", NOW, "n1", "n2"], Some(TERMINATING_DUMP));
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(
        result.stdout.lines().next(),
        Some("1 of 2 nodes tainted; 3 pods: 2 terminating, 1 due now, 0 within 5m, 0 later, 0 never")
    );
}

#[test]
fn the_timeline_counts_terminating_pods_apart_not_due_now() {
    // Fixed: the chart said "2 due now" where the first line said "2 terminating, 1 due now".
    let result = run(&["plan", "-f", "-", "--now", NOW, "n1", "n2", "--timeline"], Some(TERMINATING_DUMP));
    assert_eq!(result.code, 0, "{}", result.stderr);
    let lines: Vec<&str> = result.stdout.lines().collect();
    assert_eq!(lines[0], "Deletions per 1s from 10:00:00: 2 terminating, 1 due now, 0 ahead, 0 never", "{lines:#?}");
    assert!(lines[1].starts_with("due now  1  █"), "{lines:#?}");
    let json = run(&["plan", "-f", "-", "--now", NOW, "n1", "n2", "--timeline", "-o", "json"], Some(TERMINATING_DUMP));
    assert_eq!(json.code, 0, "{}", json.stderr);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let timeline = &doc["timeline"];
    assert_eq!((timeline["terminating"].as_u64(), timeline["dueNow"].as_u64()), (Some(2), Some(1)), "{timeline:#}");
}

#[test]
fn a_terminating_pod_is_shown_terminating_whatever_its_nodes_taints() {
    // Fixed: `c`, being deleted on an untainted node, was shown `unaffected`, and `a` `evict-now`.
    let verdicts = |stdout: &str| -> Vec<(String, String)> {
        let rows = stdout.lines().filter(|l| l.starts_with("web "));
        rows.map(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            let verdict = cells.iter().find(|c| ["terminating", "evict-now", "unaffected"].contains(c));
            (cells[1].to_owned(), verdict.map_or_else(String::new, |v| (*v).to_owned()))
        })
        .collect()
    };
    let expected: Vec<(String, String)> =
        [("a", "terminating"), ("b", "evict-now"), ("c", "terminating")].map(|(p, v)| (p.into(), v.into())).into();
    for format in [&[][..], &["-o", "wide"][..]] {
        let result =
            run(&[&["plan", "-f", "-", "--now", NOW, "n1", "n2"][..], format].concat(), Some(TERMINATING_DUMP));
        assert_eq!(result.code, 0, "{}", result.stderr);
        assert_eq!(verdicts(&result.stdout), expected, "{}", result.stdout);
        assert!(!result.stdout.contains("unaffected"), "{}", result.stdout);
        let lines: Vec<&str> = result.stdout.lines().collect();
        assert!(lines.contains(&"2 pods: 1 evict-now, 1 terminating; no deadline ahead; 1 overdue"), "{lines:#?}");
        assert!(lines.contains(&"1 pod: 1 terminating"), "{lines:#?}");
    }
    // The document keeps the controller's decision as `verdict` and says `terminating`.
    let json = run(&["plan", "-f", "-", "--now", NOW, "n1", "n2", "-o", "json"], Some(TERMINATING_DUMP));
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let pods: Vec<&serde_json::Value> =
        doc["nodes"].as_array().expect("nodes").iter().flat_map(|n| n["pods"].as_array().expect("pods")).collect();
    let terminating: Vec<(&str, bool)> =
        pods.iter().map(|p| (p["name"].as_str().expect("name"), p["terminating"] == true)).collect();
    assert_eq!(terminating, [("a", true), ("b", false), ("c", true)]);
    // `explain` says the same of `c`, in text and in JSON.
    let explain = run(&["explain", "-n", "web", "c", "-f", "-", "--now", NOW], Some(TERMINATING_DUMP));
    assert_eq!(explain.code, 0, "{}", explain.stderr);
    assert!(explain.stdout.contains("\nVerdict: terminating: its deletion was issued already\n"), "{}", explain.stdout);
    assert!(!explain.stdout.contains("Verdict: unaffected"), "{}", explain.stdout);
    let explain = run(&["explain", "-n", "web", "c", "-f", "-", "--now", NOW, "-o", "json"], Some(TERMINATING_DUMP));
    let doc: serde_json::Value = serde_json::from_str(&explain.stdout).expect("JSON");
    assert_eq!((&doc["terminating"], &doc["verdict"]), (&true.into(), &"unaffected".into()), "{doc:#}");
}
