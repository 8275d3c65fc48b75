//! The fake API server itself, driven by kube-rs as the plugin drives it: a `watcher` through initial
//! objects, live changes, bookmarks and a `410 Expired` relist; raw watches (selectors, replay from a
//! version, timeouts); DELETE preconditions; PATCH of pod status; Events from a `Recorder`; faults on
//! writes; and the waits the `run` tests block on.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::events::v1::Event;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, Preconditions, WatchEvent, WatchParams,
};
use kube::runtime::events::{Event as Note, EventType, Recorder, Reporter};
use kube::runtime::watcher;
use kube::{Client, Config, Resource, ResourceExt};
use serde_json::{Value, json};

use crate::util::scratch;
use taint_evict_test_support::fake_apiserver::{FakeApiServer, Fault, Recorded};

/// The most any one wait may take; waits end as soon as their condition holds.
const WAIT: Duration = Duration::from_secs(10);

/// A kube-rs client of `server`, and the runtime it runs on (the test thread stays free to block).
fn client(server: &FakeApiServer) -> (tokio::runtime::Runtime, Client) {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("a client runtime");
    let config = Config::new(server.url().parse().expect("the server URL"));
    let client = {
        let _inside = runtime.enter();
        Client::try_from(config).expect("a client")
    };
    (runtime, client)
}

fn pod(name: &str, node: Option<&str>) -> Value {
    let mut pod = json!({"kind": "Pod", "apiVersion": "v1",
        "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}")},
        "spec": {"containers": [{"name": "app", "image": "registry.example/app:1"}]},
        "status": {"phase": "Running"}});
    if let Some(node) = node {
        pod["spec"]["nodeName"] = json!(node);
    }
    pod
}

fn node(name: &str, zone: &str) -> Value {
    json!({"kind": "Node", "apiVersion": "v1", "metadata": {"name": name, "labels": {"zone": zone}}})
}

fn server_with(name: &str, objects: &[Value]) -> FakeApiServer {
    let server = FakeApiServer::start(&scratch(name));
    for object in objects {
        server.add(object.clone());
    }
    server
}

fn resource_version(object: &Value) -> &str {
    object["metadata"]["resourceVersion"].as_str().expect("a resourceVersion")
}

/// Runs a kube-rs `watcher` on pods and reports each of its items as one line.
fn watch_pods(runtime: &tokio::runtime::Runtime, client: Client, config: watcher::Config) -> mpsc::Receiver<String> {
    let (report, reports) = mpsc::channel();
    runtime.spawn(async move {
        let mut items = watcher(Api::<Pod>::all(client), config).boxed();
        while let Some(item) = items.next().await {
            let line = match item {
                Ok(watcher::Event::Init) => "Init".to_owned(),
                Ok(watcher::Event::InitApply(pod)) => format!("InitApply {}", pod.name_any()),
                Ok(watcher::Event::InitDone) => "InitDone".to_owned(),
                Ok(watcher::Event::Apply(pod)) => format!("Apply {}", pod.name_any()),
                Ok(watcher::Event::Delete(pod)) => format!("Delete {}", pod.name_any()),
                Err(watcher::Error::WatchError(status)) => format!("Error {} {}", status.code, status.reason),
                Err(other) => format!("Error {other}"),
            };
            if report.send(line).is_err() {
                break;
            }
        }
    });
    reports
}

/// The watcher's next reports, each within [`WAIT`].
fn next(reports: &mpsc::Receiver<String>, count: usize) -> Vec<String> {
    (0..count)
        .map(|i| reports.recv_timeout(WAIT).unwrap_or_else(|e| panic!("watcher report {} of {count}: {e}", i + 1)))
        .collect()
}

fn watches<'a>(requests: &'a [Recorded], path: &str) -> Vec<&'a Recorded> {
    requests.iter().filter(|r| r.is_watch() && r.path == path).collect()
}

#[test]
fn watcher_sees_initial_pods_live_changes_and_relists_after_compaction() {
    let server = server_with(
        "fake-watcher",
        &[node("n1", "a"), pod("p1", Some("n1")), pod("p2", Some("n1")), pod("pending", None)],
    );
    let (runtime, client) = client(&server);
    let reports = watch_pods(&runtime, client, watcher::Config::default().fields("spec.nodeName!="));
    assert_eq!(next(&reports, 4), ["Init", "InitApply p1", "InitApply p2", "InitDone"], "bound pods only");

    let requests = server.wait_for("the first pod watch", WAIT, |rs| !watches(rs, "/api/v1/pods").is_empty());
    let list = requests.iter().find(|r| r.path == "/api/v1/pods" && !r.is_watch()).expect("the initial LIST");
    assert_eq!((list.param("limit"), list.param("fieldSelector")), ("500", "spec.nodeName!="), "{list}");
    assert_eq!(list.param("resourceVersion"), "", "the default list semantic sends no version: {list}");
    let watch = watches(&requests, "/api/v1/pods")[0];
    let listed_at = server.object("Pod", "default", "pending").map(|p| resource_version(&p).to_owned());
    assert_eq!(Some(watch.param("resourceVersion").to_owned()), listed_at, "watch from the LIST's version");
    assert_eq!(
        [watch.param("allowWatchBookmarks"), watch.param("timeoutSeconds"), watch.param("fieldSelector")],
        ["true", "290", "spec.nodeName!="]
    );

    server.add(pod("p3", Some("n1")));
    server.add(pod("pending", Some("n1")));
    let mut relabelled = pod("p2", Some("n1"));
    relabelled["metadata"]["labels"] = json!({"tier": "web"});
    server.add(relabelled);
    server.remove("Pod", "default", "p1");
    assert_eq!(
        next(&reports, 4),
        ["Apply p3", "Apply pending", "Apply p2", "Delete p1"],
        "a pod that gets bound is new to a watch of bound pods"
    );

    // A bookmark moves the watcher's version on, so it resumes from there when the watch ends.
    server.add(node("n2", "b"));
    server.bookmark();
    server.close_watches();
    let node_version = server.object("Node", "", "n2").map(|n| resource_version(&n).to_owned()).expect("n2");
    server.wait_for("a watch resumed from the bookmark", WAIT, |rs| {
        watches(rs, "/api/v1/pods").last().is_some_and(|w| w.param("resourceVersion") == node_version)
    });

    server.compact();
    server.close_watches();
    let mut relisted = next(&reports, 6);
    // The list's order is the server's business (the fake's changes when objects are deleted).
    relisted[2..5].sort();
    assert_eq!(
        relisted,
        ["Error 410 Expired", "Init", "InitApply p2", "InitApply p3", "InitApply pending", "InitDone"],
        "410 Expired on the resumed watch means list again"
    );
    server.add(pod("p4", Some("n1")));
    assert_eq!(next(&reports, 1), ["Apply p4"], "watching again after the relist");
    let requests = server.requests();
    let resumed = watches(&requests, "/api/v1/pods");
    assert_eq!(resumed.len(), 4, "first, after the bookmark, expired, after the relist: {requests:#?}");
    assert_eq!(resumed[2].param("resourceVersion"), node_version);
}

#[test]
fn a_watch_replays_the_log_from_its_version_through_its_selector_and_ends_at_its_timeout() {
    let server = server_with("fake-watch-replay", &[node("n1", "a"), node("n2", "b")]);
    let (runtime, client) = client(&server);
    let nodes: Api<Node> = Api::all(client);
    runtime.block_on(async {
        let listed = nodes.list(&ListParams::default()).await.expect("LIST nodes");
        let from = listed.metadata.resource_version.expect("a list version");
        server.add(node("n3", "a"));
        server.add(node("n2", "a"));
        server.add(node("n1", "b"));
        server.remove("Node", "", "n3");

        let params = WatchParams::default().labels("zone=a").timeout(1);
        let started = Instant::now();
        let mut events = nodes.watch(&params, &from).await.expect("WATCH nodes").boxed();
        let mut seen = Vec::new();
        while let Some(event) = tokio::time::timeout(WAIT, events.next()).await.expect("the watch ends in time") {
            seen.push(match event.expect("a watch event") {
                WatchEvent::Added(n) => format!("ADDED {}", n.name_any()),
                WatchEvent::Modified(n) => format!("MODIFIED {}", n.name_any()),
                WatchEvent::Deleted(n) => format!("DELETED {}", n.name_any()),
                other => format!("{other:?}"),
            });
        }
        assert_eq!(
            seen,
            ["ADDED n3", "ADDED n2", "DELETED n1", "DELETED n3"],
            "objects entering and leaving the selection are ADDED and DELETED"
        );
        assert!(started.elapsed() >= Duration::from_millis(900), "ended by timeoutSeconds=1, not before");

        let mut current = nodes.watch(&WatchParams::default().labels("zone=a"), "0").await.expect("WATCH").boxed();
        let first = current.next().await.expect("an event").expect("a watch event");
        assert!(matches!(&first, WatchEvent::Added(n) if n.name_any() == "n2"), "{first:?}");
        server.close_watches();
        assert!(current.next().await.is_none(), "closing the watches ends the stream");
    });
}

#[test]
fn a_watch_from_a_compacted_version_gets_one_410_expired_event() {
    let server = server_with("fake-watch-expired", &[pod("p1", Some("n1"))]);
    let (runtime, client) = client(&server);
    let pods: Api<Pod> = Api::all(client);
    runtime.block_on(async {
        let from = pods.list(&ListParams::default()).await.expect("LIST").metadata.resource_version.expect("a version");
        server.compact();
        let mut events = pods.watch(&WatchParams::default(), &from).await.expect("the watch starts (200)").boxed();
        match events.next().await.expect("one event") {
            Ok(WatchEvent::Error(status)) => {
                assert_eq!((status.code, status.reason.as_str()), (410, "Expired"));
                let floor = from.parse::<u64>().expect("numeric") + 1;
                assert_eq!(status.message, format!("too old resource version: {from} ({floor})"));
            }
            other => panic!("expected an ERROR event, got {other:?}"),
        }
        assert!(events.next().await.is_none(), "the stream ends after the error");
        let listed = pods.list(&ListParams::default()).await.expect("LIST");
        let again = listed.metadata.resource_version.expect("a version");
        let mut fresh = pods.watch(&WatchParams::default(), &again).await.expect("WATCH").boxed();
        server.add(pod("p2", Some("n1")));
        let next = fresh.next().await.expect("an event").expect("a watch event");
        assert!(
            matches!(&next, WatchEvent::Added(p) if p.name_any() == "p2"),
            "the listed version is current: {next:?}"
        );
    });
}

#[test]
fn delete_checks_the_uid_precondition_and_honours_dry_run() {
    let server = server_with("fake-delete", &[pod("p1", Some("n1"))]);
    let (runtime, client) = client(&server);
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let with_uid = |uid: &str| DeleteParams {
        preconditions: Some(Preconditions { uid: Some(uid.to_owned()), resource_version: None }),
        ..DeleteParams::default()
    };
    runtime.block_on(async {
        let before = pods.list(&ListParams::default()).await.expect("LIST").metadata.resource_version.expect("rv");

        let conflict = pods.delete("p1", &with_uid("uid-old")).await.expect_err("a stale uid");
        let kube::Error::Api(status) = conflict else { panic!("an API error: {conflict:?}") };
        assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
        assert_eq!(
            status.message,
            "Operation cannot be fulfilled on Pod \"p1\": the UID in the precondition (uid-old) does not match the \
             UID in record (uid-p1). The object might have been deleted and then recreated"
        );
        assert!(server.object("Pod", "default", "p1").is_some(), "a conflict deletes nothing");

        let dry = DeleteParams { dry_run: true, ..with_uid("uid-p1") };
        let answered = pods.delete("p1", &dry).await.expect("a dry run").left().expect("the pod");
        assert_eq!(answered.name_any(), "p1");
        assert_eq!(server.pods().len(), 1, "a dry run deletes nothing");

        let deleted = pods.delete("p1", &with_uid("uid-p1")).await.expect("the right uid").left().expect("the pod");
        assert_eq!(deleted.uid().as_deref(), Some("uid-p1"));
        assert!(server.object("Pod", "default", "p1").is_none() && server.pods().is_empty());

        let gone = pods.delete("p1", &with_uid("uid-p1")).await.expect_err("already gone");
        let kube::Error::Api(status) = gone else { panic!("an API error: {gone:?}") };
        assert_eq!((status.code, status.message.as_str()), (404, "pods \"p1\" not found"));

        let mut events = pods.watch(&WatchParams::default(), &before).await.expect("WATCH").boxed();
        let event = events.next().await.expect("an event").expect("a watch event");
        assert!(matches!(&event, WatchEvent::Deleted(p) if p.name_any() == "p1"), "{event:?}");
    });
    let deletes: Vec<Recorded> = server.requests().into_iter().filter(|r| r.method == "DELETE").collect();
    assert_eq!(deletes.len(), 4);
    assert!(
        deletes.iter().all(|r| r.path == "/api/v1/namespaces/default/pods/p1" && r.content_type == "application/json")
    );
    assert_eq!(deletes[0].body, Some(json!({"preconditions": {"uid": "uid-old"}})), "kube-rs sends DeleteOptions");
    assert_eq!(
        deletes[1].body.as_ref().map(|b| b["dryRun"].clone()),
        Some(json!(["All"])),
        "kube-rs puts dryRun in the body, not the query: {}",
        deletes[1]
    );
}

fn condition(kind: &str, status: &str) -> Value {
    json!({"type": kind, "status": status, "lastTransitionTime": "2026-11-22T08:00:00Z"})
}

fn condition_types(pod: &Pod) -> Vec<(String, String)> {
    let conditions = pod.status.as_ref().and_then(|s| s.conditions.clone()).unwrap_or_default();
    conditions.into_iter().map(|c| (c.type_, c.status)).collect()
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected.iter().map(|(k, s)| ((*k).to_owned(), (*s).to_owned())).collect()
}

#[test]
fn status_patch_merges_conditions_by_type() {
    let mut scheduled = pod("p1", Some("n1"));
    scheduled["status"]["conditions"] = json!([condition("PodScheduled", "True"), condition("Ready", "True")]);
    let server = server_with("fake-patch-status", &[scheduled]);
    let (runtime, client) = client(&server);
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let disruption = json!({"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager",
                            "message": "Taint manager: deleting due to NoExecute taint"});
    runtime.block_on(async {
        let before = server.object("Pod", "default", "p1").map(|p| resource_version(&p).to_owned());
        let patch = json!({"metadata": {"uid": "uid-p1"}, "status": {"conditions": [disruption]}});
        let patched = pods.patch_status("p1", &PatchParams::default(), &Patch::Strategic(&patch)).await.expect("PATCH");
        assert_eq!(
            condition_types(&patched),
            pairs(&[("PodScheduled", "True"), ("Ready", "True"), ("DisruptionTarget", "True")])
        );
        assert_ne!(patched.resource_version(), before, "a write moves the version on");

        // client-go's two-way patches carry `$setElementOrder`; an existing condition merges in place.
        let ready = json!({"status": {"$setElementOrder/conditions": [{"type": "Ready"}],
                                       "conditions": [{"type": "Ready", "status": "False"}]}});
        let patched = pods.patch_status("p1", &PatchParams::default(), &Patch::Strategic(&ready)).await.expect("PATCH");
        assert_eq!(
            condition_types(&patched),
            pairs(&[("PodScheduled", "True"), ("Ready", "False"), ("DisruptionTarget", "True")])
        );
        let stored = server.object("Pod", "default", "p1").expect("p1");
        assert_eq!(stored["status"]["conditions"][1]["lastTransitionTime"], "2026-11-22T08:00:00Z", "merged, kept");
        assert_eq!(stored["status"]["phase"], "Running");

        let stale =
            json!({"metadata": {"uid": "uid-old"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        let invalid =
            pods.patch_status("p1", &PatchParams::default(), &Patch::Strategic(&stale)).await.expect_err("stale");
        let kube::Error::Api(status) = invalid else { panic!("an API error: {invalid:?}") };
        assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
        assert_eq!(
            status.message,
            "Pod \"p1\" is invalid: metadata.uid: Invalid value: \"uid-old\": field is immutable"
        );

        // A JSON merge patch replaces the whole list, as on a real server.
        let merge = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        let replaced = pods.patch_status("p1", &PatchParams::default(), &Patch::Merge(&merge)).await.expect("PATCH");
        assert_eq!(condition_types(&replaced), pairs(&[("Ready", "True")]));

        let missing = pods.patch_status("ghost", &PatchParams::default(), &Patch::Strategic(&patch)).await;
        assert!(matches!(missing, Err(kube::Error::Api(s)) if s.code == 404), "a missing pod is 404");
    });
    let requests = server.requests();
    let first = requests.iter().find(|r| r.method == "PATCH").expect("a PATCH");
    assert_eq!(
        (first.path.as_str(), first.content_type.as_str()),
        ("/api/v1/namespaces/default/pods/p1/status", "application/strategic-merge-patch+json")
    );
    assert_eq!(first.body.as_ref().map(|b| b["metadata"]["uid"].clone()), Some(json!("uid-p1")));
}

#[test]
fn recorder_events_are_stored_patched_and_listed_back() {
    let server = server_with("fake-events", &[pod("p1", Some("n1"))]);
    let (runtime, client) = client(&server);
    let reporter = Reporter { controller: "kubectl-taint-evict".into(), instance: None };
    let recorder = Recorder::new(client.clone(), reporter);
    let note = |reason: &str, text: &str| Note {
        type_: EventType::Normal,
        reason: reason.into(),
        note: Some(text.into()),
        action: "Evict".into(),
        secondary: None,
    };
    runtime.block_on(async {
        let p1: Pod = Api::namespaced(client.clone(), "default").get("p1").await.expect("GET p1");
        let reference = p1.object_ref(&());
        let marking = note("TaintManagerEviction", "Marking for deletion Pod default/p1");
        recorder.publish(&marking, &reference).await.expect("POST an Event");
        recorder.publish(&marking, &reference).await.expect("PATCH its series");
        recorder.publish(&note("Other", "something else"), &reference).await.expect("POST another");

        let events: Api<Event> = Api::all(client.clone());
        let listed = events.list(&ListParams::default().fields("reason=TaintManagerEviction")).await.expect("LIST");
        assert_eq!(listed.items.len(), 1, "the field selector filters by reason");
        let event = &listed.items[0];
        assert_eq!(event.note.as_deref(), Some("Marking for deletion Pod default/p1"));
        assert_eq!(event.reporting_controller.as_deref(), Some("kubectl-taint-evict"));
        assert_eq!(event.series.as_ref().map(|s| s.count), Some(2), "the repeat patched the series");
        assert_eq!(event.regarding.as_ref().and_then(|r| r.uid.as_deref()), Some("uid-p1"));

        let generated = Event {
            metadata: kube::api::ObjectMeta { generate_name: Some("p1.".into()), ..Default::default() },
            reason: Some("Generated".into()),
            ..Event::default()
        };
        let created = Api::<Event>::namespaced(client.clone(), "default")
            .create(&PostParams::default(), &generated)
            .await
            .expect("POST with generateName");
        assert!(created.name_any().starts_with("p1.") && created.name_any().len() > 3, "{}", created.name_any());

        let core = http::Request::get("/api/v1/namespaces/default/events?fieldSelector=reason%3DOther")
            .body(Vec::new())
            .expect("a request");
        let text = client.request_text(core).await.expect("LIST core/v1 events");
        let list: Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(list["items"].as_array().map(Vec::len), Some(1), "{list}");
    });
    server.wait_until_state("three Events", WAIT, |view| view.events().len() == 3);
    assert_eq!(server.events().len(), 3);
    let requests = server.requests();
    let writes: Vec<(&str, &str)> = requests
        .iter()
        .filter(|r| r.path.contains("/events") && r.method != "GET")
        .map(|r| (r.method.as_str(), r.content_type.as_str()))
        .collect();
    assert_eq!(
        writes,
        [
            ("POST", "application/json"),
            ("PATCH", "application/merge-patch+json"),
            ("POST", "application/json"),
            ("POST", "application/json")
        ]
    );
    let post = requests.iter().find(|r| r.method == "POST").expect("a POST");
    assert_eq!(post.path, "/apis/events.k8s.io/v1/namespaces/default/events");
}

#[test]
fn faults_apply_to_watches_and_writes_and_may_be_transient() {
    let server = server_with("fake-faults", &[pod("p1", Some("n1")), pod("p2", Some("n1"))]);
    let (runtime, client) = client(&server);
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    server.fail_times("DELETE", "/api/v1/namespaces/default/pods/p1", Fault::Status(500, "etcd timed out".into()), 1);
    server.fail("PATCH", "/api/v1/namespaces/default/pods/p2/status", Fault::Drop);
    server.fail("POST", "/apis/events.k8s.io/", Fault::Status(403, "events.events.k8s.io is forbidden".into()));
    server.fail_times("GET", "/api/v1/namespaces/default/pods", Fault::Status(503, "unavailable".into()), 1);
    runtime.block_on(async {
        let failed = pods.delete("p1", &DeleteParams::default()).await.expect_err("the scripted 500");
        assert!(matches!(&failed, kube::Error::Api(s) if s.code == 500 && s.message == "etcd timed out"), "{failed:?}");
        assert!(server.object("Pod", "default", "p1").is_some());
        pods.delete("p1", &DeleteParams::default()).await.expect("the fault hit once only");

        let patch = json!({"status": {"phase": "Failed"}});
        let dropped = pods.patch_status("p2", &PatchParams::default(), &Patch::Merge(&patch)).await;
        assert!(dropped.is_err(), "the connection was dropped");
        assert_eq!(server.object("Pod", "default", "p2").expect("p2")["status"]["phase"], "Running");

        let event = Event {
            metadata: kube::api::ObjectMeta { name: Some("e1".into()), ..Default::default() },
            ..Event::default()
        };
        let forbidden =
            Api::<Event>::namespaced(client.clone(), "default").create(&PostParams::default(), &event).await;
        assert!(matches!(forbidden, Err(kube::Error::Api(s)) if s.code == 403));

        // kube-rs retries 429, 503 and 504 by itself (`Config::default_retry`): the caller never sees this one.
        let mut watch = pods.watch(&WatchParams::default(), "0").await.expect("retried past the 503").boxed();
        let first = watch.next().await.expect("an event").expect("a watch event");
        assert!(matches!(&first, WatchEvent::Added(p) if p.name_any() == "p2"), "{first:?}");
    });
    assert!(server.events().is_empty());
    let requests = server.requests();
    assert_eq!(requests.iter().filter(|r| r.is_watch()).count(), 2, "the 503, then its retry: {requests:#?}");
}

#[test]
fn waits_end_when_their_condition_holds_and_fail_naming_what_they_waited_for() {
    let server = server_with("fake-waits", &[pod("p1", Some("n1"))]);
    let (runtime, client) = client(&server);
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let getter = pods.clone();
    runtime.block_on(async move { getter.get("p1").await.expect("GET p1") });

    let failure = catch_unwind(AssertUnwindSafe(|| {
        server.wait_for("a DELETE of p1", Duration::from_millis(200), |rs| rs.iter().any(|r| r.method == "DELETE"))
    }))
    .expect_err("nothing deletes p1");
    let message = failure.downcast_ref::<String>().expect("a formatted panic message");
    assert!(message.contains("a DELETE of p1"), "{message}");
    assert!(message.contains("GET /api/v1/namespaces/default/pods/p1"), "{message}");

    runtime.spawn(async move { pods.delete("p1", &DeleteParams::default()).await.map(|_| ()) });
    server.wait_until_state("p1 is gone", WAIT, |view| {
        view.object("Pod", "default", "p1").is_none() && view.pods().is_empty()
    });
    let seen = server.wait_for("the DELETE", WAIT, |rs| rs.iter().any(|r| r.method == "DELETE"));
    assert_eq!(seen.last().map(|r| r.path.as_str()), Some("/api/v1/namespaces/default/pods/p1"));
    server.wait_until_state("two requests", WAIT, |view| view.requests().len() == 2);
}
