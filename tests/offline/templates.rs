//! `-o jsonpath`, `-o custom-columns` and their `-file` forms through the binary: over the very
//! document `-o json` prints, with kubectl's errors for what cannot be parsed.

use serde_json::Value;
use taint_evict::output::jsonpath::JsonPath;

use crate::util::{run, scratch};

const NOW: &str = "2026-11-22T10:00:00Z";
const INCIDENT: &str = "examples/incident.json";

fn plan(extra: &[&str]) -> crate::util::Run {
    let mut args = vec!["plan", "-f", INCIDENT, "--now", NOW];
    args.extend_from_slice(extra);
    run(&args, None)
}

#[test]
fn plan_jsonpath_ranges_over_nodes_and_their_pods() {
    let result = plan(&[
        "worker-4",
        "-o",
        r#"jsonpath={range .nodes[*]}{.name}: {.taints[*].key}{"\n"}{range .pods[*]}{"\t"}{.namespace}/{.name} {.verdict} {.evictAt}{"\n"}{end}{end}"#,
    ]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(
        result.stdout,
        "worker-4: example.com/maintenance\n\
         \tweb/frontend-7d9c6b8f5-c6jfs evict-now 2026-11-22T10:00:00Z\n\
         \tbatch/queue-worker-6b5d8f7c9-m9qzt evict-at 2026-11-22T11:00:00Z\n\
         \tpayments/ledger-sync-84f7c6d9b-n2vxh never null\n"
    );
}

#[test]
fn plan_jsonpath_is_the_engine_over_the_json_document() {
    let json = plan(&["-o", "json", "--timeline"]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let document: Value = serde_json::from_str(&json.stdout).expect("JSON");
    for template in [
        "{.kind} {.now}",
        "{.nodes[*].name}",
        "{.nodes[-1:].pods[0]}",
        r#"{.nodes[*].pods[?(@.verdict=="evict-now")].name}"#,
        "{.nodes[*].pods[?(@.verdict==\"evict-at\")]['name', 'tolerationSeconds']}",
        "{.nodes[0].pods[?(@.uid>'8')].name}",
        "{..timeAdded}",
        "{.timeline}",
        "{.nodes[0].pods[1:7:2].name}",
        r#"{range .nodes[*].pods[*]}{.name}{"\t"}{.untolerated[*].key}{"\n"}{end}"#,
    ] {
        let result = plan(&["-o", &format!("jsonpath={template}"), "--timeline"]);
        assert_eq!(result.code, 0, "{template}: {}", result.stderr);
        let mut expected = Vec::new();
        JsonPath::parse(template).expect("parses").execute(&document, &mut expected).expect("runs");
        assert!(!expected.is_empty(), "{template} finds something");
        assert_eq!(result.stdout.as_bytes(), expected, "{template}");
    }
}

#[test]
fn plan_custom_columns_have_a_row_per_pod() {
    let columns = "NAMESPACE:.namespace,POD:.name,VERDICT:verdict,DEADLINE:{.evictAt},UNTOLERATED:.untolerated[*].key";
    let result = plan(&["worker-4", "-o", &format!("custom-columns={columns}")]);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(
        result.stdout,
        "NAMESPACE   POD                            VERDICT     DEADLINE               UNTOLERATED\n\
         web         frontend-7d9c6b8f5-c6jfs       evict-now   2026-11-22T10:00:00Z   example.com/maintenance\n\
         batch       queue-worker-6b5d8f7c9-m9qzt   evict-at    2026-11-22T11:00:00Z   <none>\n\
         payments    ledger-sync-84f7c6d9b-n2vxh    never       <nil>                  <none>\n"
    );
    let rows = plan(&["-o", &format!("custom-columns={columns}"), "--no-headers"]);
    assert_eq!(rows.code, 0, "{}", rows.stderr);
    assert_eq!(rows.stdout.lines().count(), 16, "every pod of both tainted nodes, no header: {}", rows.stdout);
    assert!(rows.stdout.starts_with("default       debug-shell   "), "{}", rows.stdout);
}

#[test]
fn templates_from_files() {
    let dir = scratch("templates-from-files");
    let columns = dir.join("columns.txt");
    std::fs::write(&columns, "POD        VERDICT\n.name   {.verdict}\n").expect("write");
    let path = dir.join("template.txt");
    std::fs::write(&path, "{range .nodes[*]}{.name}={.pods[*].name}{\"\\n\"}{end}").expect("write");
    let table = plan(&["worker-4", "-o", &format!("custom-columns-file={}", columns.display())]);
    assert_eq!(table.code, 0, "{}", table.stderr);
    assert_eq!(
        table.stdout,
        "POD                            VERDICT\n\
         frontend-7d9c6b8f5-c6jfs       evict-now\n\
         queue-worker-6b5d8f7c9-m9qzt   evict-at\n\
         ledger-sync-84f7c6d9b-n2vxh    never\n"
    );
    let text = plan(&["worker-4", "-o", &format!("jsonpath-file={}", path.display())]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert_eq!(
        text.stdout,
        "worker-4=frontend-7d9c6b8f5-c6jfs queue-worker-6b5d8f7c9-m9qzt ledger-sync-84f7c6d9b-n2vxh\n"
    );
}

#[test]
fn explain_through_a_template() {
    let pod = ["explain", "-f", INCIDENT, "--now", NOW, "-n", "payments", "fraud-scorer-5d7b8c9f6-gq2xw"];
    let path =
        run(&[&pod[..], &["-o", r#"jsonpath={.verdict} {.evictAt} {.taints[0].taint.key}{"\n"}"#]].concat(), None);
    assert_eq!(path.code, 0, "{}", path.stderr);
    assert_eq!(path.stdout, "evict-at 2026-11-22T10:07:10Z node.kubernetes.io/unreachable\n");
    let table =
        run(&[&pod[..], &["-o", "custom-columns=POD:.name,NODE:.node,SECONDS:.tolerationSeconds"]].concat(), None);
    assert_eq!(table.code, 0, "{}", table.stderr);
    assert_eq!(
        table.stdout,
        "POD                            NODE       SECONDS\nfraud-scorer-5d7b8c9f6-gq2xw   worker-3   600\n"
    );
}

#[test]
fn template_errors_are_one_line_with_kubectls_words() {
    for (args, code, first_line) in [
        (&["-o", "jsonpath"][..], 2, "error: template format specified but no template given: -o jsonpath=TEMPLATE"),
        (&["-o", "jsonpath="], 2, "error: template format specified but no template given: -o jsonpath=TEMPLATE"),
        (
            &["-o", "custom-columns="],
            2,
            "error: custom-columns format specified but no custom columns given: -o custom-columns=NAME:.path,…",
        ),
        (&["-o", "jsonpath={.nodes[0"], 2, r#"error: -o jsonpath template "{.nodes[0": unterminated array"#),
        (
            &["-o", "jsonpath={.nodes[?(@.name=='a']}"],
            2,
            r#"error: -o jsonpath template "{.nodes[?(@.name=='a']}": unterminated filter"#,
        ),
        (
            &["-o", "custom-columns=NAME"],
            2,
            r#"error: -o custom-columns template "NAME": unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>"#,
        ),
        (&["-o", "jsonpath-file=no-such-template.txt"], 1, "error: cannot read no-such-template.txt: no such file"),
        (&["-o", "custom-columns-file=no-such-columns.txt"], 1, "error: cannot read no-such-columns.txt: no such file"),
        (
            &["-o", "jsonpath={.nodes[*].nope}", "--allow-missing-template-keys=false"],
            1,
            "error: -o jsonpath: the template failed on the document: nope is not found",
        ),
        (
            &["-o", "jsonpath={.nodes[9]}"],
            1,
            "error: -o jsonpath: the template failed on the document: array index out of bounds: index 9, length 2",
        ),
        (
            &["-o", "jsonpath={.kind}", "--summary"],
            2,
            "error: --summary is for the table (-o table or wide), not -o jsonpath",
        ),
        (
            &["-o", "custom-columns=POD:.name", "--timeline"],
            2,
            "error: --timeline is for the table, -o json, -o yaml and -o jsonpath, not -o custom-columns",
        ),
    ] {
        let result = plan(args);
        assert_eq!(result.code, code, "{args:?}: {}", result.stderr);
        assert!(result.stdout.is_empty(), "{args:?} prints nothing: {}", result.stdout);
        assert_eq!(result.stderr.lines().next(), Some(first_line), "{args:?}");
        assert!(result.stderr.lines().count() <= 2, "{args:?}: an error and a hint at most: {}", result.stderr);
    }
    let bogus = plan(&["-o", "jsonpat={.kind}"]);
    assert_eq!(bogus.code, 2);
    assert!(
        bogus.stderr.contains("[possible values: table, wide, json, yaml, name, jsonpath=, jsonpath-file="),
        "{}",
        bogus.stderr
    );
}
