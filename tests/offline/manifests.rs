//! `audit -f` of rendered manifests: each template as the cluster will admit it, the rules on
//! tolerations and on where replicas can land, every finding pointing at its file, line and field
//! path; a dump still read as one (docs/audit.md, "Rendered manifests").

use serde_json::Value;

use super::audit::json;
use crate::util::{Run, run, scratch};

const SHOP: &str = "tests/data/manifests/shop";
const RENDERED: &str = "tests/data/manifests/shop/rendered.yaml";
const AGENT: &str = "tests/data/manifests/shop/extra/agent.json";
const PROFILE: &str = "tests/data/manifests/profiles/three-zones.yaml";

fn audit(args: &[&str], stdin: Option<&[u8]>) -> Run {
    run(&[&["audit"][..], args].concat(), stdin)
}

/// Each finding as `rule severity namespace/kind/name file:line path`.
pub(crate) fn findings(document: &Value) -> Vec<String> {
    let findings = document["findings"].as_array().expect("findings");
    findings
        .iter()
        .map(|f| {
            let field = |name: &str| f[name].as_str().unwrap_or_default().to_owned();
            format!(
                "{} {} {}/{}/{} {}:{} {}",
                field("rule"),
                field("severity"),
                field("namespace"),
                field("kind"),
                field("name"),
                field("file"),
                f["line"],
                field("path")
            )
        })
        .collect()
}

/// Writes `text` to a scratch file named `name`, returning its path.
fn file(test: &str, name: &str, text: &str) -> String {
    let path = scratch(test).join(name);
    std::fs::write(&path, text).expect("a scratch file");
    path.to_string_lossy().into_owned()
}

#[test]
fn a_directory_of_rendered_manifests_is_checked_each_finding_at_its_file_line_and_field_path() {
    let document = json(&audit(&["-f", SHOP, "-o", "json"], None));
    assert_eq!(document["kind"], "ManifestAudit");
    // Checked by hand against the files: ledger tolerates `unreachable` for ever (line 93) and
    // writes no `replicas` (1 by default, its object at line 77); the bare pod `debug` tolerates
    // no maintenance taint; api tolerates `unreachable` for 10 s, under the 40 s grace of 1.29;
    // the DaemonSet's keyless toleration tolerates everything. web (3 replicas spread over zones),
    // api's 2 replicas (apart by anti-affinity), the CronJob and the DaemonSet's condition
    // tolerations (the controller's) break nothing; the Service is skipped.
    assert_eq!(
        findings(&document),
        vec![
            format!(
                "tolerates-node-loss-forever high shop/StatefulSet/ledger {RENDERED}:93 spec.template.spec.tolerations[0]"
            ),
            format!("replicas-on-one-node high shop/StatefulSet/ledger {RENDERED}:77 spec.replicas"),
            format!("bare-pod-deleted-at-once medium ops/Pod/debug {AGENT}:37 items[2].spec"),
            format!("deleted-on-a-blip medium shop/Deployment/api {RENDERED}:49 spec.template.spec.tolerations[1]"),
            format!(
                "tolerates-every-taint low kube-system/DaemonSet/node-agent {AGENT}:15 items[0].spec.template.spec.tolerations[0]"
            ),
        ]
    );
    assert_eq!((document["templates"].as_u64(), document["files"].as_u64()), (Some(6), Some(2)));
    assert_eq!(document["skipped"], serde_json::json!({"Service": 1}));
    let ledger = &document["findings"][1];
    assert_eq!(
        (ledger["document"].as_u64(), ledger["unwritten"].as_str()),
        (Some(4), Some("not written: 1 by default"))
    );
}

#[test]
fn admission_is_applied_as_the_cluster_applies_it_before_the_rules() {
    let manifests = "\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  template:
    spec:
      tolerations:
      - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 10}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: plain}
spec:
  replicas: 2
  template:
    spec:
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  template:
    spec:
      tolerations:
      - {key: node.kubernetes.io/not-ready, effect: NoSchedule}
";
    let path = file("admission", "admitted.yaml", manifests);
    // The DaemonSet controller replaces the DaemonSet's own 10 s `unreachable` with its own, for ever
    // (and a DaemonSet's pods are never judged for it); the API server gives the Deployment and the
    // Job (its `not-ready` toleration is for NoSchedule) the default 300 s: nothing to find.
    let document = json(&audit(&["-f", &path, "-o", "json"], None));
    assert_eq!(findings(&document), Vec::<String>::new());
    assert_eq!(document["templates"].as_u64(), Some(3));
}

#[test]
fn the_grace_period_is_the_kubernetes_versions_or_the_flags() {
    let manifests = "\
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  replicas: 2
  template:
    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - topologyKey: kubernetes.io/hostname
      tolerations:
      - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 45}
";
    let path = file("grace", "api.yaml", manifests);
    let rules = |extra: &[&str]| {
        let document = json(&audit(&[&["-f", path.as_str(), "-o", "json"][..], extra].concat(), None));
        document["findings"].as_array().expect("findings").iter().map(|f| f["message"].to_string()).collect::<Vec<_>>()
    };
    // 45 s is more than 1.29's 40 s grace, less than 1.32's 50 s, and than a grace given of 60 s.
    assert_eq!(rules(&["--kube-version", "1.29"]), Vec::<String>::new());
    let at_32 = rules(&["--kube-version", "1.32"]);
    assert_eq!(at_32.len(), 1);
    assert!(at_32[0].contains("for 45s, less than the controller's 50s grace period"), "{at_32:?}");
    let given = rules(&["--node-monitor-grace-period", "60s"]);
    assert!(given[0].contains("60s grace period (given)"), "{given:?}");
}

#[test]
fn a_json_file_naming_a_node_is_a_dump_and_other_json_is_manifests() {
    let dump = audit(&["-f", "examples/two-zones.json", "--now", "2026-11-22T10:00:00Z", "-o", "json"], None);
    assert_eq!(json(&dump)["kind"], "EvictionAudit");
    let pod = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "debug", "namespace": "ops"},
  "spec": {"containers": [{"name": "sh", "image": "busybox"}]}}"#;
    let path = file("json", "pod.json", pod);
    // The pod spec begins on the second line.
    let document = json(&audit(&["-f", &path, "-o", "json"], None));
    assert_eq!(findings(&document), vec![format!("bare-pod-deleted-at-once medium ops/Pod/debug {path}:2 spec")]);
    // From stdin, YAML is manifests.
    let document = json(&audit(&["-f", "-", "-o", "json"], Some(b"kind: Pod\nmetadata: {name: debug}\n")));
    assert_eq!(findings(&document), vec!["bare-pod-deleted-at-once medium /Pod/debug stdin:1 spec".to_owned()]);
}

#[test]
fn bad_manifests_are_one_error_naming_the_file_and_line() {
    let path = file("bad", "bad.yaml", "kind: Pod\n---\nkind: Deployment\nspec:\n  replicas: three\n");
    let failed = audit(&["-f", &path], None);
    assert_eq!(failed.code, 1, "{}", failed.stderr);
    let first = failed.stderr.lines().next().unwrap_or_default();
    assert!(first.starts_with(&format!("error: {path}:5: ")), "{}", failed.stderr);
    assert!(
        failed.stderr.lines().nth(1).is_some_and(|hint| hint.starts_with("hint: audit -f reads rendered manifests"))
    );
    // No more than --max-response-size, from stdin as from a file.
    let large = audit(&["-f", "-", "--max-response-size", "1Ki"], Some("kind: Pod\n".repeat(200).as_bytes()));
    assert_eq!(large.code, 1, "{}", large.stderr);
    assert!(large.stderr.starts_with("error: stdin: larger than 1 KiB (--max-response-size)"), "{}", large.stderr);
    // A YAML dump is not manifests: its Node says so, at its line.
    let failed = audit(&["-f", "-"], Some(b"kind: List\nitems:\n- kind: Node\n  metadata: {name: n1}\n"));
    assert_eq!(failed.code, 1);
    assert!(failed.stderr.starts_with("error: stdin:3: a Node: a cluster's dump is read as JSON"), "{}", failed.stderr);
}

#[test]
fn fail_on_and_namespace_read_the_manifests_findings() {
    let failed = audit(&["-f", SHOP, "--fail-on", "high", "--summary"], None);
    assert_eq!(failed.code, 3, "{}", failed.stderr);
    assert_eq!(failed.stdout.lines().next(), Some("5 findings: 2 high, 2 medium, 1 low"));
    assert!(failed.stderr.contains("error: 2 finding(s) at or above high (--fail-on high)"), "{}", failed.stderr);
    let ops = audit(&["-f", SHOP, "-n", "ops", "--fail-on", "high"], None);
    assert_eq!(ops.code, 0, "{}", ops.stderr);
    assert!(
        ops.stdout.starts_with("1 finding: 0 high, 1 medium, 0 low\n1 pod template read from 2 files"),
        "{}",
        ops.stdout
    );
}

/// What SARIF 2.1.0's schema requires of the parts `-o sarif` writes (`sarif-schema-2.1.0.json`:
/// `required`, `enum` and `minimum` of each object used), checked without the network.
fn check_sarif(log: &Value) -> Vec<String> {
    let mut wrong = Vec::new();
    let mut need = |ok: bool, what: &str| {
        if !ok {
            wrong.push(what.to_owned());
        }
    };
    need(log["version"] == "2.1.0", "sarifLog.version is 2.1.0");
    let runs = log["runs"].as_array();
    need(runs.is_some(), "sarifLog.runs is an array");
    for run in runs.into_iter().flatten() {
        let driver = &run["tool"]["driver"];
        need(driver["name"].is_string(), "run.tool.driver.name is a string");
        let rules = driver["rules"].as_array().cloned().unwrap_or_default();
        for rule in &rules {
            need(rule["id"].is_string(), "reportingDescriptor.id is a string");
            need(rule["shortDescription"]["text"].is_string(), "multiformatMessageString.text is a string");
        }
        for result in run["results"].as_array().into_iter().flatten() {
            need(result["message"]["text"].is_string(), "result.message has text");
            let level = result["level"].as_str().unwrap_or_default();
            need(["none", "note", "warning", "error"].contains(&level), "result.level is in its enum");
            let index = result["ruleIndex"].as_u64().and_then(|i| usize::try_from(i).ok());
            let rule = index.and_then(|i| rules.get(i));
            need(rule.is_some_and(|rule| rule["id"] == result["ruleId"]), "result.ruleIndex names result.ruleId");
            for location in result["locations"].as_array().into_iter().flatten() {
                let physical = &location["physicalLocation"];
                let uri = physical["artifactLocation"]["uri"].as_str().unwrap_or_default();
                need(
                    !uri.is_empty() && !uri.contains(' ') && !uri.starts_with('/'),
                    "artifactLocation.uri is a relative URI",
                );
                need(physical["region"]["startLine"].as_u64().is_some_and(|l| l >= 1), "region.startLine >= 1");
                for logical in location["logicalLocations"].as_array().into_iter().flatten() {
                    need(logical["fullyQualifiedName"].is_string(), "logicalLocation.fullyQualifiedName is a string");
                }
            }
        }
    }
    wrong
}

#[test]
fn sarif_has_every_field_its_schema_requires_each_result_at_its_file_line_and_field_path() {
    let printed = audit(&["-f", SHOP, "-o", "sarif"], None);
    let log = json(&printed);
    assert_eq!(check_sarif(&log), Vec::<String>::new());
    let results = log["runs"][0]["results"].as_array().expect("results");
    assert_eq!(results.len(), 5);
    let first = &results[0];
    assert_eq!(first["ruleId"], "tolerates-node-loss-forever");
    assert_eq!(first["level"], "error");
    let location = &first["locations"][0];
    assert_eq!(location["physicalLocation"]["artifactLocation"]["uri"], RENDERED);
    assert_eq!(location["physicalLocation"]["region"]["startLine"], 93);
    assert_eq!(
        location["logicalLocations"][0]["fullyQualifiedName"],
        "shop/StatefulSet/ledger: spec.template.spec.tolerations[0]"
    );
    // The checker finds what the schema refuses.
    let mut broken = log.clone();
    broken["version"] = "2.0.0".into();
    broken["runs"][0]["results"][0]["level"] = "high".into();
    broken["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0.into();
    assert_eq!(check_sarif(&broken).len(), 3);
    // SARIF points at files: a dump has none.
    let refused = audit(&["-f", "examples/two-zones.json", "-o", "sarif"], None);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(refused.stderr.starts_with("error: -o sarif is for rendered manifests"), "{}", refused.stderr);
}

/// The GitHub Actions job of docs/audit.md's "In CI", parsed.
fn ci_job() -> Value {
    let page = std::fs::read_to_string(crate::util::repo().join("docs/audit.md")).expect("docs/audit.md");
    let section = page.split_once("\n## In CI\n").expect("an \"In CI\" section").1;
    let block = section.split_once("```yaml\n").expect("a YAML block").1.split_once("```").expect("its end").0;
    serde_saphyr::from_str(block).expect("the job is YAML")
}

#[test]
fn the_ci_job_of_the_docs_uploads_the_sarif_its_audit_step_writes_and_fails_on_high_findings() {
    let job = ci_job();
    let job = &job["jobs"]["taint-evict-audit"];
    assert_eq!(job["permissions"]["security-events"], "write", "code scanning needs it");
    let steps = job["steps"].as_array().expect("steps");
    let audits: Vec<&str> = steps
        .iter()
        .filter_map(|step| step["run"].as_str())
        .filter(|run| run.starts_with("kubectl taint-evict audit"))
        .collect();
    assert_eq!(audits.len(), 2, "{audits:?}");
    let upload = steps
        .iter()
        .find(|step| step["uses"].as_str().is_some_and(|u| u.starts_with("github/codeql-action/upload-sarif@v")));
    let upload = upload.expect("an upload-sarif step");
    assert_eq!(upload["if"], "always()", "the findings are uploaded when the last step fails");
    // Each audit step, run on this repository's manifests in place of the chart's.
    let args = |run: &str| -> (Vec<String>, Option<String>) {
        let (command, into) = match run.split_once(" > ") {
            Some((command, into)) => (command, Some(into.trim().to_owned())),
            None => (run, None),
        };
        let words = command.strip_prefix("kubectl taint-evict ").expect("the plugin").split_whitespace();
        let here = |word: &str| match word {
            "rendered" => SHOP.to_owned(),
            "ci/cluster-profile.yaml" => PROFILE.to_owned(),
            word => word.to_owned(),
        };
        (words.map(here).collect(), into)
    };
    let (sarif_args, into) = args(audits[0]);
    assert_eq!(into.as_deref(), upload["with"]["sarif_file"].as_str(), "the upload reads what the audit writes");
    let sarif_args: Vec<&str> = sarif_args.iter().map(String::as_str).collect();
    let log = json(&run(&sarif_args, None));
    assert_eq!(check_sarif(&log), Vec::<String>::new());
    // The profile's three zones add api's `replicas-in-one-zone`.
    assert_eq!(log["runs"][0]["results"].as_array().map(Vec::len), Some(6));
    let (gate, _) = args(audits[1]);
    let gate: Vec<&str> = gate.iter().map(String::as_str).collect();
    assert_eq!(run(&gate, None).code, 3, "two high findings fail the job");
}

#[test]
fn a_profile_says_the_clusters_version_grace_period_default_tolerations_and_zones() {
    let document = json(&audit(&["-f", SHOP, "--profile", PROFILE, "-o", "json"], None));
    let rules: Vec<String> = findings(&document).into_iter().filter(|f| f.contains("Deployment/api")).collect();
    // Three zones: api's two replicas, apart on nodes only, can share a zone (its `replicas` at
    // line 36); its 10 s is measured against the profile's 50 s.
    assert_eq!(
        rules,
        vec![
            format!("deleted-on-a-blip medium shop/Deployment/api {RENDERED}:49 spec.template.spec.tolerations[1]"),
            format!("replicas-in-one-zone medium shop/Deployment/api {RENDERED}:36 spec.replicas"),
        ]
    );
    let blip = &document["findings"].as_array().expect("findings").iter().find(|f| f["rule"] == "deleted-on-a-blip");
    let message = blip.and_then(|f| f["message"].as_str()).unwrap_or_default();
    assert!(message.contains("50s grace period (from --profile)"), "{message}");
    // The API server's default tolerations, as the profile says: 30 s is under the grace period.
    let dir = scratch("profile");
    let profile = dir.join("short.yaml");
    std::fs::write(&profile, "apiServer:\n  default-unreachable-toleration-seconds: 30\n").expect("a profile");
    let web = file(
        "profile-web",
        "web.yaml",
        "kind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 1\n  template:\n    spec: {}\n",
    );
    let document = json(&audit(&["-f", &web, "--profile", &profile.to_string_lossy(), "-o", "json"], None));
    let said: Vec<(String, String)> = document["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| (f["rule"].as_str().unwrap_or_default().to_owned(), f["path"].as_str().unwrap_or_default().to_owned()))
        .collect();
    assert_eq!(
        said,
        vec![
            ("replicas-on-one-node".to_owned(), "spec.replicas".to_owned()),
            ("deleted-on-a-blip".to_owned(), "spec.template.spec.tolerations[1]".to_owned()),
        ]
    );
    assert_eq!(document["findings"][1]["unwritten"], "added by the API server's admission");
    // A key that is no part of a profile is a usage error; so is a profile for a dump.
    std::fs::write(&profile, "zone:\n  a: 1\n").expect("a profile");
    let refused = audit(&["-f", SHOP, "--profile", &profile.to_string_lossy()], None);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    let dump = audit(&["-f", "examples/two-zones.json", "--profile", PROFILE], None);
    assert_eq!(dump.code, 2, "{}", dump.stderr);
    assert!(
        dump.stderr.starts_with("error: --profile describes the cluster rendered manifests will run on"),
        "{}",
        dump.stderr
    );
}
