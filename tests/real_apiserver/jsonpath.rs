//! kubectl's own `-o jsonpath` and `-o custom-columns`, on the real kube-apiserver, against this
//! tool's JSONPath engine and custom columns over the same `kubectl get -o json`: both print the
//! same, template by template.

use serde_json::{Value, json};
use taint_evict::output::jsonpath::JsonPath;
use taint_evict::output::template::{CustomColumns, Printer, Rows, Template};

use super::{node, pod, taint};
use crate::control_plane;

/// Pods with labels and annotations kubectl prints through Go's JSON encoder (keys to sort, `<&>`
/// to escape, a tab and a quote), several containers with ports, and the default tolerations the
/// API server adds.
fn cluster() -> Vec<Value> {
    let added = "2026-11-23T11:58:00Z".parse().expect("instant");
    let mut objects = vec![node("node-a", &[("zone", "a")], &[taint(added)]), node("node-b", &[("zone", "b")], &[])];
    for (i, (name, node_name, seconds)) in [
        ("web-0", "node-a", None),
        ("web-1", "node-b", Some(Some(60))),
        ("db-0", "node-a", Some(None)),
        ("a-much-longer-pod-name-for-the-columns", "node-b", Some(Some(3600))),
        ("batch-7", "node-a", Some(Some(30))),
    ]
    .into_iter()
    .enumerate()
    {
        let mut object = pod("default", name, node_name, seconds);
        let tier = if i % 2 == 0 { "front" } else { "back" };
        object["metadata"]["labels"] = json!({"app": name.split('-').next(), "tier": tier,
                                              "app.kubernetes.io/name": format!("n{i}")});
        if i != 2 {
            object["metadata"]["annotations"] =
                json!({"note": "<a&b> \"quoted\"\tand é", "z-last": "1", "a-first": ""});
        }
        object["spec"]["containers"] = json!([
            {"name": "app", "image": "app:1", "ports": [{"containerPort": 8080 + i, "protocol": "TCP"}]},
            {"name": "sidecar", "image": "proxy:2", "ports": [{"containerPort": 15000 + i, "name": "admin"}]}
        ]);
        if i == 3 {
            object["spec"]["enableServiceLinks"] = json!(false);
            object["spec"]["containers"][1]["ports"] = json!([]);
        }
        objects.push(object);
    }
    objects
}

/// Templates covering each row of kubectl's JSONPath reference, and more; `true`: the output's
/// order is Go's random map order (compared as sorted words).
const TEMPLATES: [(&str, bool); 47] = [
    // text, @, $
    ("kind is {.kind}", false),
    ("{@}", false),
    ("{$.items[0].metadata.name}", false),
    ("{@.kind}", false),
    // . and []
    ("{.items[0].metadata.name}", false),
    ("{['kind']}", false),
    ("{.items[1]['metadata.name']}", false),
    (r"{.items[*].metadata.labels.app\.kubernetes\.io/name}", false),
    // ..
    ("{..containerPort}", true),
    ("{.items[*]..name}", true),
    ("{..tier}", true),
    // *
    ("{.items[*].metadata.name}", false),
    ("{.items[*].spec.containers[*].name}", false),
    ("{.items[0].metadata.labels.*}", true),
    ("{.items[0].spec.containers[0].*}", true),
    // [start:end:step], negative
    ("{.items[0].spec.containers[-1].name}", false),
    ("{.items[-1].metadata.name}", false),
    ("{.items[-2:].metadata.name}", false),
    ("{.items[0:2].metadata.name}", false),
    ("{.items[:-2].metadata.name}", false),
    ("{.items[::2].metadata.name}", false),
    ("{.items[1:4:2].metadata.name}", false),
    ("{.items[-4:-1].metadata.name}", false),
    ("{.items[2:2].metadata.name}", false),
    // [,]
    ("{.items[0,2,-1].metadata.name}", false),
    ("{.items[*]['metadata.name', 'spec.nodeName']}", false),
    ("{.items[0].metadata['name','namespace']}", false),
    // ?()
    (r#"{.items[?(@.spec.nodeName=="node-a")].metadata.name}"#, false),
    (r#"{.items[?(@.spec.nodeName!="node-a")].metadata.name}"#, false),
    ("{.items[?(@.metadata.annotations)].metadata.name}", false),
    ("{.items[*].spec.tolerations[?(@.tolerationSeconds<300)].tolerationSeconds}", false),
    ("{.items[*].spec.tolerations[?(@.tolerationSeconds>=300)].key}", false),
    ("{.items[*].spec.containers[*].ports[?(@.containerPort>15001)].containerPort}", false),
    ("{.items[?(@.spec.enableServiceLinks==false)].metadata.name}", false),
    ("{.items[?(@.metadata.name<'c')].metadata.name}", false),
    // range, end
    (r#"{range .items[*]}{.metadata.name}{"\t"}{.spec.nodeName}{"\n"}{end}"#, false),
    (r#"{range .items[*]}[{.metadata.name}, {.metadata.labels}] {end}"#, false),
    (
        r#"{range .items[*]}{.metadata.name}:{range .spec.containers[*]}{.name}={.ports[*].containerPort},{end}{"\n"}{end}"#,
        false,
    ),
    ("{range .items[?(@.spec.nodeName=='node-b')]}{.metadata.name} {end}", false),
    (r#"{range .items[*].spec.tolerations[*]}{.key}/{.tolerationSeconds};{end}"#, false),
    // quoted
    (r#"{"\""}{'\t'}{"\u00e9\n"}{'{'}"#, false),
    // values as kubectl prints them
    ("{.items[0].metadata.annotations}", false),
    ("{.items[0].metadata.annotations.note}", false),
    ("{.items[*].spec.containers[0].ports}", false),
    ("{.items[0].spec.enableServiceLinks} {.items[0].spec.terminationGracePeriodSeconds}", false),
    ("{.items[*].status}", false),
    // missing keys print nothing
    ("before {.items[*].metadata.nothing} {.nothing.at.all}after", false),
];

/// Custom columns: kubectl's table of the list's items, and this tool's.
const COLUMNS: [&str; 4] = [
    "NAME:.metadata.name,NODE:.spec.nodeName,CONTAINERS:.spec.containers[*].name,PORTS:{.spec.containers[*].ports[*].containerPort}",
    "NAME:metadata.name,LABELS:.metadata.labels,SECONDS:.spec.tolerations[*].tolerationSeconds,MISSING:.status.nothing",
    "POD:{.metadata.name},FIRST:.spec.containers[0],LINKS:.spec.enableServiceLinks,NOTE:.metadata.annotations.a-first",
    "ONE:.metadata.name",
];

fn words(text: &str) -> Vec<&str> {
    let mut words: Vec<&str> = text.split_whitespace().collect();
    words.sort_unstable();
    words
}

#[test]
fn real_apiserver_jsonpath_and_custom_columns_print_what_kubectl_prints() {
    let plane = control_plane!("jsonpath");
    plane.create(&cluster());
    let mut differ = Vec::new();
    let mut compared = 0;
    // Templates kubectl printed something for: the comparisons are not of empty answers.
    let mut printed = 0;
    for resource in ["pods", "nodes"] {
        // What kubectl's templates see: the list with `managedFields`, which `-o json` leaves out.
        let json = plane.kubectl_ok(&["get", resource, "-o", "json", "--show-managed-fields"], None);
        let document: Value = serde_json::from_str(&json).expect("kubectl's JSON");
        for (template, unordered) in TEMPLATES {
            let kubectl = plane.kubectl(&["get", resource, "-o", &format!("jsonpath={template}")], None);
            compared += 1;
            let mine = JsonPath::parse(template).expect("parses").execute_to_vec(&document);
            let theirs = String::from_utf8_lossy(&kubectl.stdout);
            printed += usize::from(kubectl.status.success() && !theirs.trim().is_empty());
            let same = match &mine {
                Ok(mine) if kubectl.status.success() => {
                    let mine = String::from_utf8_lossy(mine);
                    if unordered { words(&mine) == words(&theirs) } else { mine == theirs }
                }
                Ok(_) => false,
                Err(_) => !kubectl.status.success(),
            };
            if !same {
                let mine = mine.map(|m| String::from_utf8_lossy(&m).into_owned());
                differ.push(format!("{resource} {template}:\n  kubectl: {theirs:?}\n  ours:    {mine:?}"));
            }
        }
        for columns in COLUMNS {
            // One list's items are the rows: as a plan's pods are.
            let items = json!({"nodes": [{"pods": document["items"]}]});
            for headers in [true, false] {
                let mut args = vec!["get", resource, "-o"];
                let flag = format!("custom-columns={columns}");
                args.push(&flag);
                if !headers {
                    args.push("--no-headers");
                }
                let kubectl = plane.kubectl_ok(&args, None);
                let template = Template::CustomColumns(CustomColumns::from_spec(columns).expect("a spec"));
                let mine = Printer::new(template, headers).print(&items, Rows::PlanPods).expect("prints");
                let mine = String::from_utf8_lossy(&mine);
                compared += 1;
                if mine != kubectl {
                    differ.push(format!("{resource} {columns} (headers {headers}):\n{kubectl}\n  ours:\n{mine}"));
                }
            }
        }
    }
    assert_eq!(compared, 2 * (TEMPLATES.len() + 2 * COLUMNS.len()));
    assert!(printed > TEMPLATES.len(), "kubectl printed something for only {printed} templates");
    assert!(differ.is_empty(), "{} of {compared} differ from kubectl:\n{}", differ.len(), differ.join("\n"));
}
