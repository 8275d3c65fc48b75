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

/// A kubeadm cluster's dump: eight nodes, seven in zones eu-west-1a (3), eu-west-1b (2) and
/// eu-west-1c (2) and one without a zone label; kube-controller-manager with
/// `--node-monitor-grace-period=45s --node-eviction-rate=0.05`, kube-apiserver with
/// `--default-unreachable-toleration-seconds=120`.
const KUBEADM: &str = "tests/data/manifests/profiles/kubeadm-dump.json";

/// The findings of an audit of `-f SHOP` with the profile `flags` name.
fn shop_with(flags: &[&str]) -> (Value, String) {
    let result = audit(&[&["-f", SHOP, "-o", "json"][..], flags].concat(), None);
    assert_eq!(result.code, 0, "{}", result.stderr);
    (json(&result), result.stderr)
}

#[test]
fn a_profile_taken_from_a_dump_gives_its_zones_grace_period_and_default_tolerations_and_reads_back_as_written() {
    let (without, _) = shop_with(&[]);
    let (taken, stderr) = shop_with(&["--profile-from", KUBEADM]);
    // Nothing assumed: the grace period is read from the controller's pod, the default tolerations
    // from the API server's, the zones from the nodes (a dump says no version, which only the grace
    // period's default would need).
    assert_eq!(stderr, "");
    // Four zones (three labelled, and the zone "" of the node without a label): api's two replicas,
    // apart on nodes only, can share a zone, found at its `replicas` (line 36), which no run
    // without a profile finds.
    let zone = format!("replicas-in-one-zone medium shop/Deployment/api {RENDERED}:36 spec.replicas");
    assert!(findings(&taken).contains(&zone), "{:#?}", findings(&taken));
    assert!(!findings(&without).contains(&zone));
    let message = |document: &Value| {
        let found =
            document["findings"].as_array().expect("findings").iter().find(|f| f["rule"] == "deleted-on-a-blip");
        found.and_then(|f| f["message"].as_str()).unwrap_or_default().to_owned()
    };
    // api's 10 s against the 45 s its pod says, not 1.29's 40 s.
    assert!(
        message(&taken).contains("less than the controller's 45s grace period (read from its pod)"),
        "{}",
        message(&taken)
    );
    assert!(message(&without).contains("40s grace period (assumed: the default)"), "{}", message(&without));
    // What `profile` writes of the dump is the same profile: the same findings, but for where the
    // grace period is said to come from.
    let written = run(&["profile", "-f", KUBEADM], None);
    assert_eq!((written.code, written.stderr.as_str()), (0, ""));
    let kept = file("profile-written", "cluster-profile.yaml", &written.stdout);
    let (from_file, stderr) = shop_with(&["--profile", &kept]);
    assert_eq!(stderr, "");
    assert_eq!(findings(&from_file), findings(&taken));
    assert!(message(&from_file).contains("45s grace period (from --profile)"), "{}", message(&from_file));
    // The API server's default tolerations, read from its pod: at 30 s instead of 120 s, the
    // toleration admission adds to a template without one is under the 45 s grace period.
    let short = std::fs::read_to_string(crate::util::repo().join(KUBEADM))
        .expect("the dump")
        .replace("--default-unreachable-toleration-seconds=120", "--default-unreachable-toleration-seconds=30");
    let short = file("profile-short", "dump.json", &short);
    let web = file(
        "profile-from-web",
        "web.yaml",
        "kind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  template:\n    spec: {}\n",
    );
    let blips = |dump: &str| {
        let document = json(&audit(&["-f", &web, "--profile-from", dump, "-o", "json"], None));
        let found = document["findings"].as_array().expect("findings").iter();
        found
            .filter(|f| f["rule"] == "deleted-on-a-blip")
            .map(|f| f["path"].as_str().unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(blips(&short), ["spec.template.spec.tolerations[1]"]);
    assert_eq!(blips(KUBEADM), Vec::<String>::new());
}

#[test]
fn the_profile_flags_exclude_each_other_and_are_for_rendered_manifests_only() {
    let usage = |args: &[&str], first: &str| {
        let result = audit(args, None);
        assert_eq!(result.code, 2, "{args:?}: {}", result.stderr);
        assert!(result.stderr.starts_with(first), "{args:?}: {}", result.stderr);
    };
    let settings = file("profile-settings", "settings.yaml", "node-monitor-grace-period: 10s\n");
    let read_as_is =
        "describes the cluster rendered manifests will run on: a dump or the live cluster is read as it is";
    usage(
        &["-f", "examples/two-zones.json", "--profile-from", KUBEADM],
        &format!("error: --profile-from {read_as_is}"),
    );
    usage(
        &["-f", "examples/two-zones.json", "--profile-from-cluster"],
        &format!("error: --profile-from-cluster {read_as_is}"),
    );
    usage(
        &["-f", SHOP, "--profile", PROFILE, "--profile-from", KUBEADM],
        "error: the argument '--profile <FILE>' cannot be used with",
    );
    usage(
        &["-f", SHOP, "--profile-from", KUBEADM, "--profile-from-cluster"],
        "error: the argument '--profile-from <DUMP>' cannot be used with",
    );
    usage(
        &["-f", SHOP, "--profile-from-cluster", "--controller-settings", &settings],
        "error: the argument '--profile-from-cluster' cannot be used with",
    );
    usage(&["-f", "-", "--profile-from", "-"], "error: --profile-from - and -f - both read stdin");
}

#[test]
fn a_dump_that_does_not_read_and_a_cluster_out_of_reach_are_the_errors_plan_gives() {
    let yaml = file("profile-yaml", "dump.yaml", "apiVersion: v1\nkind: List\nitems: []\n");
    let pods = file(
        "profile-pods",
        "pods.json",
        "{\"kind\": \"List\", \"items\": [{\"kind\": \"Pod\", \"metadata\": {\"name\": \"p\", \"namespace\": \"a\"}, \"spec\": {}}]}",
    );
    for dump in ["missing.json", yaml.as_str(), pods.as_str()] {
        let plan = run(&["plan", "-f", dump], None);
        assert_eq!(plan.code, 1, "{}", plan.stderr);
        for args in [&["profile", "-f", dump][..], &["audit", "-f", SHOP, "--profile-from", dump]] {
            let result = run(args, None);
            assert_eq!(
                (result.code, result.stdout.as_str(), result.stderr.as_str()),
                (1, "", plan.stderr.as_str()),
                "{args:?}"
            );
        }
    }
    // Port 9 (discard) takes no connection: the error and hint every live command gives.
    let server = ["--server", "http://127.0.0.1:9"];
    let plan = run(&[&["plan"][..], &server].concat(), None);
    assert!(plan.stderr.starts_with("error: cannot connect to http://127.0.0.1:9: "), "{}", plan.stderr);
    for args in [&["profile"][..], &["audit", "-f", SHOP, "--profile-from-cluster"]] {
        let result = run(&[args, &server].concat(), None);
        assert_eq!(
            (result.code, result.stdout.as_str(), result.stderr.as_str()),
            (1, "", plan.stderr.as_str()),
            "{args:?}"
        );
    }
}

const BUDGETS: &str = "tests/data/manifests/budgets";
const BUDGETS_RENDERED: &str = "tests/data/manifests/budgets/rendered.yaml";
const BATCH: &str = "tests/data/manifests/budgets/extra/batch.json";

#[test]
fn a_budget_one_outage_breaks_is_found_at_what_it_asks_with_zones_known_or_not() {
    let document = json(&audit(&["-f", BUDGETS, "-o", "json"], None));
    // Checked by hand against the files, zones not known (one node's outage, a zone's spread read
    // as the hostname's): cart (3, zone maxSkew 1: 1 per node, leaving 2) meets minAvailable 2;
    // search (3, maxSkew 2: 2 on a node, leaving 1) is under minAvailable 67%, 3 of 3 rounded up
    // (high, every replica); db (3, anti-affinity on hostnames: 1, leaving 2) meets maxUnavailable
    // 1's 2; queue (replicas not written: 1) is taken whole, under maxUnavailable 0's 1 (high),
    // its budget selecting it by `app In (queue, queue-canary)`; web (4, hostname maxSkew 2: 2,
    // leaving 2) is under maxUnavailable 25%'s 3 (1 of 4 rounded up may go); batch's `{}` budget
    // selects worker (2, nothing apart: both on a node) and not the CronJob, leaving 0 under
    // maxUnavailable 1's 1. `orphan` (no selector) and ops' `cart` (no template in ops) select
    // nothing. queue's and worker's replicas-on-one-node stand as before. Budgets after the
    // templates' findings within a severity, in the order read (batch.json's path sorts first).
    assert_eq!(
        findings(&document),
        vec![
            format!("replicas-on-one-node high store/Deployment/queue {BUDGETS_RENDERED}:121 spec.replicas"),
            format!(
                "budget-broken-by-an-outage high store/PodDisruptionBudget/search {BUDGETS_RENDERED}:76 spec.minAvailable"
            ),
            format!(
                "budget-broken-by-an-outage high store/PodDisruptionBudget/queue {BUDGETS_RENDERED}:146 spec.maxUnavailable"
            ),
            format!("replicas-on-one-node medium batch/Deployment/worker {BATCH}:10 items[0].spec.replicas"),
            format!(
                "budget-broken-by-an-outage medium batch/PodDisruptionBudget/everything {BATCH}:34 items[2].spec.maxUnavailable"
            ),
            format!(
                "budget-broken-by-an-outage medium store/PodDisruptionBudget/web {BUDGETS_RENDERED}:188 spec.maxUnavailable"
            ),
        ]
    );
    // Budgets are read, not skipped.
    assert_eq!((document["templates"].as_u64(), document["budgets"].as_u64()), (Some(7), Some(8)));
    assert_eq!(document["skipped"], serde_json::json!({"Service": 1}));
    let messages: Vec<&str> =
        document["findings"].as_array().expect("findings").iter().filter_map(|f| f["message"].as_str()).collect();
    assert_eq!(
        messages[1],
        "one node's outage can take 2 of the 3 replicas of Deployment/search (taint eviction does not ask the \
         budget), leaving 1, below minAvailable 67% (3 of 3, rounded up): the budget is broken and every voluntary \
         eviction (a drain) is refused until they run again"
    );
    assert!(messages[5].contains("leaving 2, below the 3 healthy maxUnavailable 25% requires (1 of 4 may go"));

    // Three zones of 4 nodes: a zone's outage. cart (zone maxSkew 1: (3 + 2) / 3 = 1 per zone)
    // still meets its budget; search's zone maxSkew 2 lets (3 + 4) / 3 = 2 gather in one zone,
    // leaving 1 (high as before); db's and web's replicas, apart on nodes only, can all share a
    // zone: db's budget (needing 2) and web's (needing 3) are left 0, and both templates are
    // replicas-in-one-zone; queue and worker as before, a zone taking them whole.
    let document = json(&audit(&["-f", BUDGETS, "--profile", PROFILE, "-o", "json"], None));
    assert_eq!(
        findings(&document),
        vec![
            format!("replicas-on-one-node high store/Deployment/queue {BUDGETS_RENDERED}:121 spec.replicas"),
            format!(
                "budget-broken-by-an-outage high store/PodDisruptionBudget/search {BUDGETS_RENDERED}:76 spec.minAvailable"
            ),
            format!(
                "budget-broken-by-an-outage high store/PodDisruptionBudget/queue {BUDGETS_RENDERED}:146 spec.maxUnavailable"
            ),
            format!("replicas-on-one-node medium batch/Deployment/worker {BATCH}:10 items[0].spec.replicas"),
            format!("replicas-in-one-zone medium store/StatefulSet/db {BUDGETS_RENDERED}:88 spec.replicas"),
            format!("replicas-in-one-zone medium store/Deployment/web {BUDGETS_RENDERED}:160 spec.replicas"),
            format!(
                "budget-broken-by-an-outage medium batch/PodDisruptionBudget/everything {BATCH}:34 items[2].spec.maxUnavailable"
            ),
            format!(
                "budget-broken-by-an-outage medium store/PodDisruptionBudget/db {BUDGETS_RENDERED}:115 spec.maxUnavailable"
            ),
            format!(
                "budget-broken-by-an-outage medium store/PodDisruptionBudget/web {BUDGETS_RENDERED}:188 spec.maxUnavailable"
            ),
        ]
    );
    let db = &document["findings"][7]["message"];
    assert_eq!(
        db,
        "a zone's outage can take all 3 replicas of StatefulSet/db (taint eviction does not ask the budget), leaving \
         0, below the 2 healthy maxUnavailable 1 requires: the budget is broken and every voluntary eviction (a \
         drain) is refused until they run again"
    );
    // -n keeps a namespace's budgets with its templates.
    let batch = json(&audit(&["-f", BUDGETS, "-n", "batch", "-o", "json"], None));
    assert_eq!(batch["budgets"].as_u64(), Some(1));
    assert_eq!(findings(&batch).len(), 2, "{batch}");
}

#[test]
fn a_budgets_finding_is_in_the_table_and_in_sarif_with_its_rule() {
    let table = audit(&["-f", BUDGETS, "--profile", PROFILE], None);
    assert_eq!(table.code, 0, "{}", table.stderr);
    // 3 high (queue's placement, search's and queue's budgets), 6 medium, as above.
    let mut lines = table.stdout.lines();
    assert_eq!(lines.next(), Some("9 findings: 3 high, 6 medium, 0 low"));
    assert_eq!(lines.next(), Some("7 pod templates and 8 PodDisruptionBudgets read from 2 files; skipped: 1 Service"));
    assert!(
        table.stdout.contains(&format!(
            "high  budget-broken-by-an-outage  store/PodDisruptionBudget/search\n  {BUDGETS_RENDERED}:76 (document 4) \
             spec.minAvailable, from store/templates/search-budget.yaml\n  a zone's outage can take 2 of the 3 \
             replicas of Deployment/search"
        )),
        "{}",
        table.stdout
    );
    let log = json(&audit(&["-f", BUDGETS, "--profile", PROFILE, "-o", "sarif"], None));
    assert_eq!(check_sarif(&log), Vec::<String>::new());
    let rules = log["runs"][0]["tool"]["driver"]["rules"].as_array().expect("rules");
    assert!(rules.iter().any(|rule| rule["id"] == "budget-broken-by-an-outage"));
    let results = log["runs"][0]["results"].as_array().expect("results");
    let search = &results[1];
    assert_eq!(
        (search["ruleId"].as_str(), search["level"].as_str()),
        (Some("budget-broken-by-an-outage"), Some("error"))
    );
    let location = &search["locations"][0];
    assert_eq!(location["physicalLocation"]["region"]["startLine"], 76);
    assert_eq!(
        location["logicalLocations"][0]["fullyQualifiedName"],
        "store/PodDisruptionBudget/search: spec.minAvailable"
    );
    // Zones not known, the warning says which outage budgets face.
    let unknown = audit(&["-f", BUDGETS, "--summary"], None);
    assert!(
        unknown
            .stderr
            .contains("zones not known (replicas-in-one-zone is not checked; budgets face one node's outage)"),
        "{}",
        unknown.stderr
    );
}

#[test]
fn a_budget_whose_value_does_not_read_is_an_error_at_its_line() {
    let path = file(
        "budget",
        "budget.yaml",
        "kind: PodDisruptionBudget\nmetadata: {name: web}\nspec:\n  minAvailable: 120%\n  selector: {}\n",
    );
    let failed = audit(&["-f", &path], None);
    assert_eq!(failed.code, 1, "{}", failed.stderr);
    let first = failed.stderr.lines().next().unwrap_or_default();
    assert_eq!(
        first,
        format!("error: {path}:4: minAvailable: \"120%\" is not a number of pods nor a percent from 0% to 100%")
    );
}
