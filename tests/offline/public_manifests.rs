//! `audit -f` of well-known projects' install manifests, kept byte for byte with their licences
//! under `tests/data/manifests/public/` (each folder notes the repository, commit and path its file
//! came from): what audit finds in real manifests, each finding checked by hand against the file
//! (docs/audit.md, "Rendered manifests").

use serde_json::Value;

use super::audit::json;
use super::manifests::findings;
use crate::util::run;

const PUBLIC: &str = "tests/data/manifests/public";
const PROFILE: &str = "tests/data/manifests/profiles/three-zones.yaml";

/// The `ManifestAudit` document of `audit -f PATH -o json`, with `--profile` of three zones or not.
fn audited(path: &str, profile: bool) -> Value {
    let mut args = vec!["audit", "-f", path, "-o", "json"];
    if profile {
        args.extend(["--profile", PROFILE]);
    }
    json(&run(&args, None))
}

/// The findings of `project`'s folder as [`findings`] writes them, the same with the profile of three
/// zones and a 50 s grace period as without: no toleration there is shorter than either grace
/// period, and a single replica is `replicas-on-one-node`, never `replicas-in-one-zone` too.
fn project(project: &str) -> (Value, Vec<String>) {
    let document = audited(&format!("{PUBLIC}/{project}"), false);
    let found = findings(&document);
    assert_eq!(findings(&audited(&format!("{PUBLIC}/{project}"), true)), found, "{project} with --profile");
    (document, found)
}

#[test]
fn metrics_servers_deployment_writes_no_replicas_so_one_nodes_outage_takes_it() {
    let (document, found) = project("metrics-server");
    let file = format!("{PUBLIC}/metrics-server/deployment.yaml");
    // The Deployment (its object from line 2, after the leading `---`) writes no `replicas`: the API
    // server makes it 1. It writes no toleration: admission adds `not-ready` and `unreachable` for
    // 300 s, more than any grace period.
    assert_eq!(
        found,
        vec![format!("replicas-on-one-node high kube-system/Deployment/metrics-server {file}:2 spec.replicas")]
    );
    assert_eq!(document["findings"][0]["unwritten"], "not written: 1 by default");
    assert_eq!(document["findings"][0]["document"], 1);
    // Kustomize's output names no chart template.
    assert_eq!(document["findings"][0]["source"], Value::Null);
    assert_eq!((document["templates"].as_u64(), document["files"].as_u64()), (Some(1), Some(1)));
}

#[test]
fn kube_state_metrics_writes_one_replica() {
    let (document, found) = project("kube-state-metrics");
    let file = format!("{PUBLIC}/kube-state-metrics/deployment.yaml");
    // `replicas: 1` at line 10, written; no toleration, so admission's 300 s.
    assert_eq!(
        found,
        vec![format!("replicas-on-one-node high kube-system/Deployment/kube-state-metrics {file}:10 spec.replicas")]
    );
    assert_eq!(document["findings"][0]["unwritten"], Value::Null);
}

#[test]
fn node_problem_detectors_daemonset_tolerates_every_no_execute_taint() {
    let (document, found) = project("node-problem-detector");
    let file = format!("{PUBLIC}/node-problem-detector/node-problem-detector.yaml");
    // Its second toleration (line 86) is `effect: NoExecute, operator: Exists` with no key: every
    // NoExecute taint, an operator's maintenance taint too; low, as a DaemonSet's. The first is for
    // NoSchedule, which no rule reads. The `not-ready` and `unreachable` tolerations for ever that
    // the DaemonSet controller appends are a DaemonSet's own: no `tolerates-node-loss-forever`. No
    // replicas rule reads a DaemonSet.
    assert_eq!(
        found,
        vec![format!(
            "tolerates-every-taint low kube-system/DaemonSet/node-problem-detector {file}:86 spec.template.spec.tolerations[1]"
        )]
    );
    assert_eq!(document["findings"][0]["unwritten"], Value::Null);
}

#[test]
fn ingress_nginxs_helm_rendered_manifest_runs_its_controller_as_one_replica() {
    let (document, found) = project("ingress-nginx");
    let file = format!("{PUBLIC}/ingress-nginx/deploy.yaml");
    // Of 19 documents, three hold pod templates: the controller's Deployment (the tenth, its object
    // from line 293, under its `# Source:` comment) writes no `replicas`, so 1; the admission
    // webhook's two Jobs write no toleration (admission's 300 s) and are their Job's, not bare pods.
    assert_eq!(
        found,
        vec![format!(
            "replicas-on-one-node high ingress-nginx/Deployment/ingress-nginx-controller {file}:293 spec.replicas"
        )]
    );
    assert_eq!(document["findings"][0]["document"], 10);
    assert_eq!(document["findings"][0]["unwritten"], "not written: 1 by default");
    assert_eq!(document["templates"].as_u64(), Some(3));
    assert_eq!(
        document["skipped"],
        serde_json::json!({
            "ClusterRole": 2, "ClusterRoleBinding": 2, "ConfigMap": 1, "IngressClass": 1, "Namespace": 1,
            "Role": 2, "RoleBinding": 2, "Service": 2, "ServiceAccount": 2, "ValidatingWebhookConfiguration": 1
        })
    );
}

#[test]
fn each_finding_of_ingress_nginxs_manifest_names_the_chart_template_helm_rendered_it_from() {
    let file = format!("{PUBLIC}/ingress-nginx/deploy.yaml");
    let template = "ingress-nginx/templates/controller-deployment.yaml";
    // Line 292, `# Source: ingress-nginx/templates/controller-deployment.yaml`, comes after the `---`
    // of line 291 and before the Deployment's first line, 293.
    let document = audited(&file, false);
    assert_eq!(document["findings"][0]["source"], template);
    let table = run(&["audit", "-f", &file], None);
    assert_eq!(table.code, 0, "{}", table.stderr);
    assert!(
        table.stdout.contains(&format!(
            "\n  {file}:293 (document 10) spec.replicas (not written: 1 by default), from {template}\n"
        )),
        "{}",
        table.stdout
    );
    // SARIF: the location stays the rendered file's line; the template ends the message and is a
    // property of the result.
    let log = json(&run(&["audit", "-f", &file, "-o", "sarif"], None));
    let result = &log["runs"][0]["results"][0];
    let physical = &result["locations"][0]["physicalLocation"];
    assert_eq!(
        (&physical["artifactLocation"]["uri"], &physical["region"]["startLine"]),
        (&file.clone().into(), &293.into())
    );
    assert_eq!(result["properties"]["source"], template);
    let message = result["message"]["text"].as_str().unwrap_or_default();
    assert!(message.ends_with(&format!(" (rendered from {template})")), "{message}");
    // A file with no `# Source:` comment: no property, and the message as JSON's.
    let plain = json(&run(&["audit", "-f", &format!("{PUBLIC}/kube-state-metrics"), "-o", "sarif"], None));
    let plain = &plain["runs"][0]["results"][0];
    assert_eq!(plain["properties"].get("source"), None);
    assert!(plain["message"]["text"].as_str().is_some_and(|m| !m.contains("rendered from")), "{plain}");
}

#[test]
fn the_public_folder_is_read_whole_each_projects_findings_in_order_of_severity() {
    // The four folders as one directory (their licences and notes are not manifests): the three
    // high findings first, in the order of their files' paths, then the low one.
    let document = audited(PUBLIC, false);
    let rules: Vec<String> =
        findings(&document).iter().map(|f| f.split(' ').take(3).collect::<Vec<_>>().join(" ")).collect();
    assert_eq!(
        rules,
        vec![
            "replicas-on-one-node high ingress-nginx/Deployment/ingress-nginx-controller",
            "replicas-on-one-node high kube-system/Deployment/kube-state-metrics",
            "replicas-on-one-node high kube-system/Deployment/metrics-server",
            "tolerates-every-taint low kube-system/DaemonSet/node-problem-detector",
        ]
    );
    assert_eq!((document["templates"].as_u64(), document["files"].as_u64()), (Some(6), Some(4)));
}
