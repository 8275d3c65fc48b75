//! `record` on the real kube-apiserver (docs/review.md, "The record"): started as a child process,
//! it writes the lists, each change of nodes, pods, Leases and Events, deletions and its stop, with no
//! line for a write that changed nothing kept and the nodes' Lease renewals held back until a line of
//! their node, and it costs the API server one LIST and one WATCH of each (two of Events). The same
//! lines in either content type (the README's test command runs this tier with
//! `TAINT_EVICT_CONTENT_TYPE=json` too).

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::requests::{Shape, grown, requests, shown, wait_for_watches, watches};
use super::{ControlPlane, TAINT, namespace, node, pod, taint};
use crate::control_plane;
use crate::util::command;

/// How long a line may take to appear.
const WAIT: Duration = Duration::from_secs(20);

/// Every line of every record file in `dir`, in the files' order.
fn lines(dir: &Path) -> Vec<Value> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(Result::ok).map(|entry| entry.path()).collect())
        .unwrap_or_default();
    names.sort();
    names
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .flat_map(|text| {
            // A line still being written (no newline yet) is not read.
            let whole = text.rfind('\n').map_or("", |end| &text[..=end]).to_owned();
            whole.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect::<Vec<Value>>()
        })
        .collect()
}

/// Waits until a line matches `condition`, within [`WAIT`]; returns every line then.
fn expect(dir: &Path, what: &str, condition: impl Fn(&Value) -> bool) -> Vec<Value> {
    expect_lines(dir, what, |seen| seen.iter().any(&condition))
}

/// Waits until the lines satisfy `condition`, within [`WAIT`]; returns them.
pub(super) fn expect_lines(dir: &Path, what: &str, condition: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + WAIT;
    loop {
        let seen = lines(dir);
        if condition(&seen) {
            return seen;
        }
        assert!(Instant::now() < deadline, "no {what} within {WAIT:?}; lines: {seen:#?}");
        std::thread::park_timeout(Duration::from_millis(50));
    }
}

/// The lines of `key` whose object is named `name`.
fn of<'a>(lines: &'a [Value], key: &str, name: &str) -> Vec<&'a Value> {
    lines.iter().filter(|line| line[key]["metadata"]["name"] == name).collect()
}

fn lease(namespace: &str, name: &str, renewed: &str) -> Value {
    json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
           "metadata": {"name": name, "namespace": namespace},
           "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": renewed}})
}

fn renew(plane: &ControlPlane, namespace: &str, name: &str, renewed: &str) {
    let patch = json!({"spec": {"renewTime": renewed}}).to_string();
    plane.kubectl_ok(&["patch", "lease", name, "-n", namespace, "--type", "merge", "-p", &patch], None);
}

/// `t` as a Lease's MicroTime is written (`2026-11-29T10:00:00.500000Z`).
fn micro(t: jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%S.%6fZ").to_string()
}

/// `t` to the microsecond, as a Lease keeps it.
fn to_micro(t: jiff::Timestamp) -> jiff::Timestamp {
    micro(t).parse().expect("a time")
}

/// The child `record`, killed if the test ends before it stopped (it must not outlive the test).
pub(super) struct Recording(pub(super) Child);

impl Recording {
    /// Stops it with SIGTERM and returns its exit code.
    pub(super) fn terminate(&mut self) -> i32 {
        let pid = self.0.id().to_string();
        assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().expect("kill runs").success());
        self.0.wait().expect("record exits").code().unwrap_or(-1)
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Checked by hand: the first file begins with `record` naming the server; each kind is listed (the
/// events twice, by their field selectors); a pod created, labelled, annotated (not kept: no line),
/// force-deleted (`deleted`); node Lease renewals at 10:00:01 and :02 with `--leases-every 1h` are
/// held, and the later one is written before the line of its node's taint, which carries its
/// `timeAdded`; the controller manager's Lease renewed is a line each time, the scheduler's never; the
/// Event of reason TaintManagerEviction is written; SIGTERM ends it with `stopped`, exit 0. The API
/// server served one LIST and one WATCH of nodes, pods and Leases, two of Events, nothing else of
/// them. Recorded again as protobuf and as JSON, the objects' lines are the same.
#[test]
fn real_apiserver_record_writes_each_change_once_and_stops_cleanly() {
    let plane = control_plane!("record");
    let dir = std::env::temp_dir().join(format!("taint-evict-record-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // The controller manager's renewals are this machine's time: `record` keeps its clock by them.
    let start = jiff::Timestamp::now();
    let mut objects = vec![namespace("shop"), node("n1", &[], &[]), node("n2", &[], &[])];
    objects.push(lease("kube-node-lease", "n1", &micro(start)));
    objects.push(lease("kube-system", "kube-controller-manager", &micro(start)));
    objects.push(lease("kube-system", "kube-scheduler", &micro(start)));
    plane.create(&objects);
    let idle = watches(&plane);
    let before = requests(&plane);

    let mut child = Recording(
        command()
            .args(["record", "--out"])
            .arg(&dir)
            .args(["--leases-every", "1h", "--kubeconfig"])
            .arg(plane.kubeconfig())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("record starts"),
    );
    let listed = |line: &Value, kind: &str| line["listed"] == kind;
    for kind in ["nodes", "pods", "leases"] {
        expect(&dir, &format!("the {kind} listed"), |l| listed(l, kind));
    }
    let seen = expect_lines(&dir, "both event lists", |seen| seen.iter().filter(|l| listed(l, "events")).count() == 2);
    assert_eq!(seen[0]["record"], "taint-evict/v1");
    assert!(seen[0]["server"].as_str().is_some_and(|s| s.starts_with("https://")), "{}", seen[0]);
    assert!(seen[0]["recorder"].as_str().is_some_and(|s| s.starts_with("kubectl-taint-evict ")));
    let leases_listed = seen.iter().find(|l| listed(l, "leases")).expect("listed");
    assert_eq!(leases_listed["count"], 2, "the node's and the controller manager's Leases, not the scheduler's");
    assert!(of(&seen, "lease", "kube-scheduler").is_empty());

    plane.create(&[pod("shop", "p1", "n1", Some(Some(300))), pod("shop", "p2", "n2", None)]);
    expect(&dir, "p2", |l| l["pod"]["metadata"]["name"] == "p2");
    plane.kubectl_ok(&["annotate", "pod", "p1", "-n", "shop", "note=unkept"], None);
    plane.kubectl_ok(&["label", "pod", "p2", "-n", "shop", "tier=db"], None);
    let seen = expect(&dir, "p2 labelled", |l| l["pod"]["metadata"]["labels"]["tier"] == "db");
    // The annotation came before the label on the one pod watch: had it made a line, it would be here.
    let p1 = of(&seen, "pod", "p1");
    assert_eq!(p1.len(), 1, "p1 once, its annotation no line: {p1:#?}");
    assert_eq!(p1[0]["pod"]["spec"]["nodeName"], "n1");
    assert_eq!(p1[0]["pod"]["spec"]["tolerations"][0]["tolerationSeconds"], 300);
    assert!(p1[0]["pod"]["spec"].get("containers").is_none(), "containers are not kept");
    assert!(p1[0]["pod"]["metadata"].get("resourceVersion").is_none());

    let (first, latest) =
        (start + jiff::SignedDuration::from_millis(1000), start + jiff::SignedDuration::from_millis(2500));
    renew(&plane, "kube-node-lease", "n1", &micro(first));
    renew(&plane, "kube-node-lease", "n1", &micro(latest));
    let controller_renewed = jiff::Timestamp::now();
    renew(&plane, "kube-system", "kube-controller-manager", &micro(controller_renewed));
    renew(&plane, "kube-system", "kube-scheduler", &micro(controller_renewed));
    let renewed =
        |line: &Value| line["lease"]["spec"]["renewTime"].as_str().and_then(|t| t.parse::<jiff::Timestamp>().ok());
    expect(&dir, "the controller's renewal", |l| {
        l["lease"]["metadata"]["name"] == "kube-controller-manager" && renewed(l) == Some(to_micro(controller_renewed))
    });
    let added = jiff::Timestamp::now();
    let taints = json!({"spec": {"taints": [taint(added)]}}).to_string();
    plane.kubectl_ok(&["patch", "node", "n1", "--type", "merge", "-p", &taints], None);
    // The API server's admission adds `node.kubernetes.io/not-ready:NoSchedule` to a node created:
    // the test's taint is told apart by its key.
    let ours = |l: &Value| l["node"]["spec"]["taints"].as_array().is_some_and(|t| t.iter().any(|t| t["key"] == TAINT));
    let seen = expect(&dir, "n1 tainted", ours);
    let tainted = seen.iter().position(ours).expect("the taint");
    let n1_leases: Vec<(usize, &Value)> =
        seen.iter().enumerate().filter(|(_, l)| l["lease"]["metadata"]["name"] == "n1").collect();
    let renewals: Vec<Option<jiff::Timestamp>> = n1_leases.iter().map(|(_, l)| renewed(l)).collect();
    assert_eq!(renewals, [Some(to_micro(start)), Some(to_micro(latest))], "listed, then the latest held: {seen:#?}");
    assert_eq!(n1_leases[1].0 + 1, tainted, "the node's latest renewal just before its taint");
    let taint_line = &seen[tainted]["node"]["spec"]["taints"];
    let written = taint_line.as_array().and_then(|t| t.iter().find(|t| t["key"] == TAINT)).expect("ours");
    assert_eq!(written["timeAdded"], taint(added)["timeAdded"]);

    plane.kubectl_ok(&["delete", "pod", "p2", "-n", "shop", "--grace-period=0", "--force", "--wait=false"], None);
    expect(&dir, "p2 deleted", |l| l["deleted"]["name"] == "p2");
    let event = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "p2.eviction", "namespace": "shop"},
        "involvedObject": {"kind": "Pod", "namespace": "shop", "name": "p2"},
        "reason": "TaintManagerEviction", "message": "Marking for deletion Pod shop/p2", "type": "Normal",
        "source": {"component": "taint-eviction-controller"}, "count": 1,
        "firstTimestamp": "2026-11-29T10:00:03Z", "lastTimestamp": "2026-11-29T10:00:03Z"});
    plane.create(&[event]);
    expect(&dir, "the eviction's Event", |l| l["event"]["reason"] == "TaintManagerEviction");

    assert_eq!(child.terminate(), 0, "SIGTERM ends record with 0");
    let seen = lines(&dir);
    let last = seen.last().expect("lines");
    assert_eq!(last["stopped"], true, "{last}");
    assert!(seen.iter().all(|l| l["at"].as_str().is_some_and(|at| at.parse::<jiff::Timestamp>().is_ok())));
    let deleted = seen.iter().find(|l| l["deleted"]["name"] == "p2").expect("deleted");
    assert_eq!(deleted["deleted"]["kind"], "pod");
    assert_eq!(deleted["deleted"]["namespace"], "shop");
    let controller: Vec<&Value> = of(&seen, "lease", "kube-controller-manager");
    assert_eq!(controller.len(), 2, "listed, then renewed: {controller:#?}");
    assert!(of(&seen, "lease", "kube-scheduler").is_empty(), "not kept");

    // Its watches end with it; each is counted once it has.
    wait_for_watches(&plane, idle);
    let cost: Vec<(Shape, u64)> = grown(&before, &requests(&plane))
        .into_iter()
        .filter(|((verb, resource, ..), _)| {
            matches!(verb.as_str(), "LIST" | "WATCH")
                && matches!(resource.as_str(), "nodes" | "pods" | "leases" | "events")
        })
        .collect();
    let by_kind = |verb: &str, resource: &str| -> u64 {
        cost.iter().filter(|((v, r, ..), _)| v == verb && r == resource).map(|(_, n)| n).sum()
    };
    let counts = shown(&cost.iter().cloned().collect());
    for (resource, count) in [("nodes", 1), ("pods", 1), ("leases", 1), ("events", 2)] {
        assert_eq!(by_kind("LIST", resource), count, "LIST {resource}:\n{counts}");
        assert_eq!(by_kind("WATCH", resource), count, "WATCH {resource}:\n{counts}");
    }

    // The same objects read as protobuf and as JSON make the same lines, to the byte but `at`.
    let objects = |content_type: &str| -> Vec<String> {
        let out = dir.join(content_type);
        let mut recording = Recording(
            command()
                .args(["record", "--content-type", content_type, "--out"])
                .arg(&out)
                .arg("--kubeconfig")
                .arg(plane.kubeconfig())
                .stdout(Stdio::null())
                .stderr(Stdio::inherit())
                .spawn()
                .expect("record starts"),
        );
        for kind in ["nodes", "pods", "leases"] {
            expect(&out, &format!("the {kind} listed as {content_type}"), |l| l["listed"] == kind);
        }
        assert_eq!(recording.terminate(), 0);
        let mut kept: Vec<String> = lines(&out)
            .into_iter()
            .filter(|l| ["node", "pod", "lease"].iter().any(|k| l.get(*k).is_some()))
            .map(|mut l| {
                l.as_object_mut().expect("a line").remove("at");
                l.to_string()
            })
            .collect();
        kept.sort();
        kept
    };
    let (protobuf, json) = (objects("protobuf"), objects("json"));
    assert_eq!(protobuf.len(), 5, "2 nodes, p1, 2 Leases: {protobuf:#?}");
    assert_eq!(protobuf, json);
    let _ = std::fs::remove_dir_all(&dir);
}
