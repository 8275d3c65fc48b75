//! An in-process fake Kubernetes API server over real HTTP on `127.0.0.1:0`.
//!
//! It serves what a client of nodes, pods, leases and events uses: `/version` (its minor version
//! settable), discovery, GET/LIST of nodes, pods and Leases (one namespace's or every one's; label and field selectors, `limit` and `continue`), WATCH of nodes and pods
//! (resource versions, selectors, `410 Expired`, bookmarks on request), each read of nodes, pods and
//! Leases (and its errors) as protobuf when asked for it (`Accept`, as the real server; or JSON only,
//! as a server that cannot), DELETE of pods (uid and
//! resourceVersion preconditions, `dryRun`), PATCH of `pods/status` (strategic-merge or merge patch),
//! POST/PATCH/LIST of Events, the Eviction API (`pods/NAME/eviction`, with PodDisruptionBudgets:
//! a selector and `status.disruptionsAllowed`, decremented by each eviction, 429 naming the budget
//! at 0), and kube-style `Status` errors. Tests load objects into it, change them
//! while a client watches, script faults (any status code, slow answers, dropped connections) and read
//! back every request it saw, or block until a request or a state shows up. A temporary kubeconfig
//! points at it, so the real binary (or kubectl) talks to it like to any cluster.
//!
//! Like etcd, one counter numbers every write (`metadata.resourceVersion`), and a log of changes lets a
//! watch resume from any version not yet compacted away.
//!
//! It is a harness for the protocol, not a mock of the plugin: nothing in the plugin knows about it.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Bytes, Frame, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

/// One request the server received.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    /// `GET`, `DELETE`, …
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The decoded query parameters.
    pub query: BTreeMap<String, String>,
    /// The request body, when it is JSON.
    pub body: Option<Value>,
    /// The `Content-Type` header, or `""`.
    pub content_type: String,
    /// The `Accept-Encoding` header (the compressions the client takes), or `""`.
    pub accept_encoding: String,
    /// When the request arrived (its body read), on the wall clock.
    pub at: jiff::Timestamp,
}

impl Recorded {
    /// A query parameter's value, or `""`.
    pub fn param(&self, name: &str) -> &str {
        self.query.get(name).map_or("", String::as_str)
    }

    /// Whether this is a WATCH (a GET with `watch=true`).
    pub fn is_watch(&self) -> bool {
        self.method == "GET" && matches!(self.param("watch"), "true" | "1")
    }
}

impl fmt::Display for Recorded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.method, self.path)?;
        let mut separator = '?';
        for (name, value) in &self.query {
            write!(f, "{separator}{name}={value}")?;
            separator = '&';
        }
        if let Some(body) = &self.body {
            write!(f, " {body}")?;
        }
        Ok(())
    }
}

/// What a scripted fault does to a matching request.
#[derive(Clone, Debug)]
pub enum Fault {
    /// Answer with this status code and message (a kube `Status`).
    Status(u16, String),
    /// Push back: this status code (429 or 503) with `Retry-After: SECONDS`. A 429 has the plain-text
    /// body of an API Priority and Fairness rejection, a 503 a kube `Status`.
    RetryAfter(u16, u64),
    /// Answer normally, after this long.
    Slow(Duration),
    /// Close the connection without answering.
    Drop,
    /// Answer 200 with a JSON body that never ends: a NodeList whose items never end, as a server
    /// (or a proxy) that never ends its answer.
    EndlessList,
    /// Answer a WATCH (only: other requests are answered as usual) with an event that never ends:
    /// one JSON line, a Node with an annotation that grows forever.
    EndlessEvent,
}

impl Fault {
    /// Whether the fault applies to `request`.
    fn applies(&self, request: &Recorded) -> bool {
        !matches!(self, Self::EndlessEvent) || request.is_watch()
    }
}

#[derive(Clone, Debug)]
struct Rule {
    method: &'static str,
    path_prefix: String,
    fault: Fault,
    /// How many more requests it hits; `None`: all of them.
    remaining: Option<usize>,
}

/// The kinds of object the server stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Resource {
    Nodes,
    Pods,
    Leases,
    Events,
    Budgets,
    Slices,
    Claims,
    TaintRules,
    ReplicaSets,
}

impl Resource {
    fn of_kind(kind: &str) -> Option<Self> {
        match kind {
            "Node" => Some(Self::Nodes),
            "Pod" => Some(Self::Pods),
            "Lease" => Some(Self::Leases),
            "Event" => Some(Self::Events),
            "PodDisruptionBudget" => Some(Self::Budgets),
            "ResourceSlice" => Some(Self::Slices),
            "ResourceClaim" => Some(Self::Claims),
            "DeviceTaintRule" => Some(Self::TaintRules),
            "ReplicaSet" => Some(Self::ReplicaSets),
            _ => None,
        }
    }

    /// A `resource.k8s.io` resource by its plural name.
    fn of_dra_plural(plural: &str) -> Option<Self> {
        match plural {
            "resourceslices" => Some(Self::Slices),
            "resourceclaims" => Some(Self::Claims),
            "devicetaintrules" => Some(Self::TaintRules),
            _ => None,
        }
    }

    fn kind(self) -> &'static str {
        match self {
            Self::Nodes => "Node",
            Self::Pods => "Pod",
            Self::Leases => "Lease",
            Self::Events => "Event",
            Self::Budgets => "PodDisruptionBudget",
            Self::Slices => "ResourceSlice",
            Self::Claims => "ResourceClaim",
            Self::TaintRules => "DeviceTaintRule",
            Self::ReplicaSets => "ReplicaSet",
        }
    }
}

/// One write, as a watch replays it.
#[derive(Debug)]
struct Change {
    resource_version: u64,
    resource: Resource,
    /// `ADDED`, `MODIFIED` or `DELETED`.
    kind: &'static str,
    /// The object after the write (for `DELETED`, its last state at the deletion's version).
    object: Value,
    /// The object before a `MODIFIED` write: a watch with a selector sees an object that starts or
    /// stops matching as `ADDED` or `DELETED`, as from the real API server.
    previous: Option<Value>,
}

/// Which objects a LIST or a WATCH selects.
#[derive(Clone, Debug)]
struct Selection {
    resource: Resource,
    namespace: Option<String>,
    labels: String,
    fields: String,
}

impl Selection {
    fn new(resource: Resource, namespace: Option<&str>, r: &Recorded) -> Self {
        Self {
            resource,
            namespace: namespace.map(str::to_owned),
            labels: r.param("labelSelector").to_owned(),
            fields: r.param("fieldSelector").to_owned(),
        }
    }

    fn selects(&self, object: &Value) -> bool {
        self.namespace.as_ref().is_none_or(|ns| object["metadata"]["namespace"] == ns.as_str())
            && labels_match(object, &self.labels)
            && fields_match(object, &self.fields)
    }
}

/// One open WATCH.
struct Watch {
    selection: Selection,
    bookmarks: bool,
    lines: mpsc::UnboundedSender<Bytes>,
}

impl Watch {
    /// What this watch sees of `change`, if anything.
    fn event(&self, change: &Change) -> Option<Value> {
        if change.resource != self.selection.resource {
            return None;
        }
        let now = self.selection.selects(&change.object);
        let before = change.previous.as_ref().is_some_and(|p| self.selection.selects(p));
        let kind = match (change.kind, before, now) {
            ("MODIFIED", true, true) => "MODIFIED",
            ("MODIFIED", false, true) => "ADDED",
            ("MODIFIED", true, false) => "DELETED",
            ("ADDED" | "DELETED", _, true) => change.kind,
            _ => return None,
        };
        Some(json!({"type": kind, "object": change.object}))
    }

    /// Sends one event; false once the client has gone.
    fn send(&self, event: &Value) -> bool {
        self.lines.send(Bytes::from(format!("{event}\n"))).is_ok()
    }
}

#[derive(Default)]
struct State {
    nodes: Vec<Value>,
    pods: Vec<Value>,
    leases: Vec<Value>,
    events: Vec<Value>,
    budgets: Vec<Value>,
    slices: Vec<Value>,
    claims: Vec<Value>,
    taint_rules: Vec<Value>,
    replica_sets: Vec<Value>,
    /// The Kubernetes minor release whose `resource.k8s.io` versions are served; `None`: the group
    /// is not served.
    dra: Option<u32>,
    /// Where each object is in its list, by (resource, namespace, name): lookups stay O(1) with
    /// hundreds of thousands of objects.
    index: std::collections::HashMap<(Resource, String, String), usize>,
    requests: Vec<Recorded>,
    rules: Vec<Rule>,
    /// The most items one LIST page holds, whatever `limit` asks (servers may return fewer).
    max_page: Option<usize>,
    /// Whether reads are answered in JSON whatever they ask for.
    json_only: bool,
    /// Whether a DELETE of a pod bound to a node only marks it terminating, as on a real cluster whose
    /// node has no running kubelet to finish the deletion.
    kubelet_gone: bool,
    /// The version of the latest write.
    resource_version: u64,
    /// Versions below this one are compacted away: watching from them is `410 Expired`.
    compacted: u64,
    /// Every write after `compacted`, oldest first.
    log: Vec<Change>,
    watches: Vec<Watch>,
    /// Numbers the names made from `generateName`.
    generated: u64,
    /// The minor version `/version` answers (Kubernetes `1.minor`).
    minor: u32,
}

impl State {
    fn objects(&self, resource: Resource) -> &Vec<Value> {
        match resource {
            Resource::Nodes => &self.nodes,
            Resource::Pods => &self.pods,
            Resource::Leases => &self.leases,
            Resource::Events => &self.events,
            Resource::Budgets => &self.budgets,
            Resource::Slices => &self.slices,
            Resource::Claims => &self.claims,
            Resource::TaintRules => &self.taint_rules,
            Resource::ReplicaSets => &self.replica_sets,
        }
    }

    fn objects_mut(&mut self, resource: Resource) -> &mut Vec<Value> {
        match resource {
            Resource::Nodes => &mut self.nodes,
            Resource::Pods => &mut self.pods,
            Resource::Leases => &mut self.leases,
            Resource::Events => &mut self.events,
            Resource::Budgets => &mut self.budgets,
            Resource::Slices => &mut self.slices,
            Resource::Claims => &mut self.claims,
            Resource::TaintRules => &mut self.taint_rules,
            Resource::ReplicaSets => &mut self.replica_sets,
        }
    }

    fn position(&self, resource: Resource, namespace: &str, name: &str) -> Option<usize> {
        self.index.get(&(resource, namespace.to_owned(), name.to_owned())).copied()
    }

    fn find(&self, resource: Resource, namespace: &str, name: &str) -> Option<&Value> {
        self.position(resource, namespace, name).map(|i| &self.objects(resource)[i])
    }

    fn next_version(&mut self) -> u64 {
        self.resource_version += 1;
        self.resource_version
    }

    /// Stores `object` (its `kind` says where), adding or replacing by namespace and name, and tells
    /// the watches. Returns what was stored, or `None` for a kind the server does not keep.
    fn put(&mut self, mut object: Value) -> Option<Value> {
        let resource = Resource::of_kind(object["kind"].as_str()?)?;
        let version = self.next_version();
        object["metadata"]["resourceVersion"] = json!(version.to_string());
        let (namespace, name) = id(&object);
        let previous = match self.position(resource, &namespace, &name) {
            Some(index) => Some(std::mem::replace(&mut self.objects_mut(resource)[index], object.clone())),
            None => {
                let objects = self.objects_mut(resource);
                objects.push(object.clone());
                let at = objects.len() - 1;
                self.index.insert((resource, namespace.clone(), name.clone()), at);
                None
            }
        };
        let kind = if previous.is_some() { "MODIFIED" } else { "ADDED" };
        self.record(Change { resource_version: version, resource, kind, object: object.clone(), previous });
        Some(object)
    }

    /// Removes one object and tells the watches; the `DELETED` object carries the deletion's version.
    fn delete(&mut self, resource: Resource, namespace: &str, name: &str) -> Option<Value> {
        let index = self.position(resource, namespace, name)?;
        let objects = self.objects_mut(resource);
        let mut object = objects.swap_remove(index);
        let moved = objects.get(index).map(id);
        self.index.remove(&(resource, namespace.to_owned(), name.to_owned()));
        if let Some((moved_namespace, moved_name)) = moved {
            self.index.insert((resource, moved_namespace, moved_name), index);
        }
        let version = self.next_version();
        object["metadata"]["resourceVersion"] = json!(version.to_string());
        let change =
            Change { resource_version: version, resource, kind: "DELETED", object: object.clone(), previous: None };
        self.record(change);
        Some(object)
    }

    fn record(&mut self, change: Change) {
        self.watches.retain(|watch| match watch.event(&change) {
            Some(event) => watch.send(&event),
            None => !watch.lines.is_closed(),
        });
        self.log.push(change);
    }

    fn bookmark(&mut self) {
        let version = self.resource_version.to_string();
        self.watches
            .retain(|watch| !watch.bookmarks || watch.send(&bookmark(watch.selection.resource, &version, false)));
    }

    fn compact(&mut self) {
        // Other writes move a real cluster's revision on before etcd compacts: every version handed
        // out so far becomes too old, also for a watch that had seen the latest write.
        self.compacted = self.next_version();
        self.log.clear();
    }

    /// Keeps the newest `keep` writes of the log, as etcd's compaction keeps a window: a watch resumed
    /// from a version inside it is served, one from before it gets `410 Expired`.
    fn compact_to(&mut self, keep: usize) {
        let drop = self.log.len().saturating_sub(keep);
        if drop == 0 {
            return;
        }
        self.compacted = self.log.get(drop).map_or(self.resource_version, |change| change.resource_version - 1);
        self.log.drain(..drop);
    }

    fn generate_name(&mut self, prefix: &str) -> String {
        self.generated += 1;
        format!("{prefix}{:05x}", self.generated)
    }
}

/// `(namespace, name)`, `""` for a cluster-scoped object's namespace.
fn id(object: &Value) -> (String, String) {
    let field = |key: &str| object["metadata"][key].as_str().unwrap_or_default().to_owned();
    (field("namespace"), field("name"))
}

fn bookmark(resource: Resource, version: &str, initial_events_end: bool) -> Value {
    let mut metadata = json!({"resourceVersion": version});
    if initial_events_end {
        metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    json!({"type": "BOOKMARK", "object": {"kind": resource.kind(), "apiVersion": "v1", "metadata": metadata}})
}

/// The state and the condition variable that tells waiting tests it changed.
#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("fake API server state")
    }

    /// Runs `change` on the state, then wakes every waiting test.
    fn update<R>(&self, change: impl FnOnce(&mut State) -> R) -> R {
        let result = change(&mut self.lock());
        self.changed.notify_all();
        result
    }
}

/// A read-only look at the server's state, for [`FakeApiServer::wait_until_state`].
pub struct FakeView<'a> {
    state: &'a State,
}

impl FakeView<'_> {
    /// One stored object by `kind` (`Node`, `Pod`, `Lease`, `Event`), namespace (`""` for a node) and
    /// name.
    pub fn object(&self, kind: &str, namespace: &str, name: &str) -> Option<&Value> {
        self.state.find(Resource::of_kind(kind)?, namespace, name)
    }

    /// Every stored pod.
    pub fn pods(&self) -> &[Value] {
        &self.state.pods
    }

    /// Every stored Event (as it was posted).
    pub fn events(&self) -> &[Value] {
        &self.state.events
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> &[Recorded] {
        &self.state.requests
    }
}

/// The running server. Dropping it stops the server.
pub struct FakeApiServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    kubeconfig: PathBuf,
    /// Always `Some` until dropped; shut down in the background so that the server may be dropped
    /// inside another runtime (a test's own `#[tokio::test]`).
    runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for FakeApiServer {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl FakeApiServer {
    /// Starts an empty server and writes a kubeconfig for it into `dir`.
    pub fn start(dir: &Path) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime for the fake API server");
        let shared = Arc::new(Shared::default());
        shared.lock().resource_version = 1000;
        shared.lock().minor = 33;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        listener.set_nonblocking(true).expect("a non-blocking listener");
        let addr = listener.local_addr().expect("bound address");
        let listener = {
            let _inside = runtime.enter();
            tokio::net::TcpListener::from_std(listener).expect("a tokio listener")
        };
        let served = shared.clone();
        runtime.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                // As Go's net/http (the real API server) does: no Nagle delay on small answers.
                let _ = stream.set_nodelay(true);
                let shared = served.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |request| handle(shared.clone(), request));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        let kubeconfig = dir.join("kubeconfig");
        std::fs::write(&kubeconfig, kubeconfig_yaml(addr)).expect("write the kubeconfig");
        Self { addr, shared, kubeconfig, runtime: Some(runtime) }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The kubeconfig that points at this server (context `fake`, namespace `default`).
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    fn view<R>(&self, read: impl FnOnce(&FakeView<'_>) -> R) -> R {
        read(&FakeView { state: &self.shared.lock() })
    }

    /// Loads every Node, Pod, Lease and Event of a `v1` `List`.
    pub fn load(&self, list: &Value) {
        for item in list["items"].as_array().into_iter().flatten() {
            self.add(item.clone());
        }
    }

    /// Adds (or replaces, by namespace and name) one object: watches see `ADDED` (or `MODIFIED`).
    pub fn add(&self, object: Value) {
        self.shared.update(|state| state.put(object));
    }

    /// Deletes one object by `kind` (`Node`, `Pod`, …), namespace (`""` for a node) and name: watches
    /// see `DELETED`. Returns the object, if there was one.
    pub fn remove(&self, kind: &str, namespace: &str, name: &str) -> Option<Value> {
        let resource = Resource::of_kind(kind)?;
        self.shared.update(|state| state.delete(resource, namespace, name))
    }

    /// Sends a `BOOKMARK` at the current version to every watch that allowed bookmarks.
    pub fn bookmark(&self) {
        self.shared.update(State::bookmark);
    }

    /// Compacts the history: every resource version handed out so far is too old to watch from, so a
    /// watch resumed from one gets `410 Expired` and its client must list again.
    pub fn compact(&self) {
        self.shared.update(State::compact);
    }

    /// Keeps only the newest `keep` writes to watch from (older versions are `410 Expired`): what a
    /// long run's writes hold stays bounded, as an API server's history is.
    pub fn compact_to(&self, keep: usize) {
        self.shared.update(|state| state.compact_to(keep));
    }

    /// Ends every open watch, as an API server restart does; clients resume from their last version.
    pub fn close_watches(&self) {
        self.shared.update(|state| state.watches.clear());
    }

    /// One stored object (see [`FakeView::object`]).
    pub fn object(&self, kind: &str, namespace: &str, name: &str) -> Option<Value> {
        self.view(|view| view.object(kind, namespace, name).cloned())
    }

    /// Every stored pod.
    pub fn pods(&self) -> Vec<Value> {
        self.view(|view| view.pods().to_vec())
    }

    /// Every stored Event, as it was posted (and patched).
    pub fn events(&self) -> Vec<Value> {
        self.view(|view| view.events().to_vec())
    }

    /// Scripts `fault` for every `method` request whose path starts with `path_prefix`.
    pub fn fail(&self, method: &'static str, path_prefix: &str, fault: Fault) {
        self.add_rule(method, path_prefix, fault, None);
    }

    /// Scripts `fault` for the next `times` matching requests only (a transient failure).
    pub fn fail_times(&self, method: &'static str, path_prefix: &str, fault: Fault, times: usize) {
        self.add_rule(method, path_prefix, fault, Some(times));
    }

    /// Removes every scripted fault (the API server is healthy again).
    pub fn heal(&self) {
        self.shared.update(|state| state.rules.clear());
    }

    fn add_rule(&self, method: &'static str, path_prefix: &str, fault: Fault, remaining: Option<usize>) {
        let rule = Rule { method, path_prefix: path_prefix.to_owned(), fault, remaining };
        self.shared.update(|state| state.rules.push(rule));
    }

    /// Answers `/version` as Kubernetes `1.minor` (1.33 unless told).
    pub fn serve_version(&self, minor: u32) {
        self.shared.update(|state| state.minor = minor);
    }

    /// Serves `resource.k8s.io` as Kubernetes `1.minor` does (1.33: ResourceSlices and ResourceClaims
    /// in v1beta1, DeviceTaintRules in v1alpha3; 1.36: slices and claims in v1, v1beta2 and v1beta1,
    /// rules in v1beta2; 1.37: everything in v1 and v1beta2, slices and claims in v1beta1 too). The
    /// objects are stored as added, whatever version is asked for.
    pub fn serve_dra(&self, minor: u32) {
        self.shared.update(|state| state.dra = Some(minor));
    }

    /// From now on, answers JSON to every read, also one that asks for protobuf first (as a server
    /// does for a type it cannot encode as protobuf).
    pub fn json_only(&self) {
        self.shared.update(|state| state.json_only = true);
    }

    /// Caps every LIST page at `items` items.
    pub fn cap_pages(&self, items: usize) {
        self.shared.update(|state| state.max_page = Some(items));
    }

    /// From now on a DELETE of a pod bound to a node sets `deletionTimestamp` (now plus its grace
    /// period) and keeps the pod, as the real API server does when no kubelet finishes the deletion;
    /// a DELETE of a pod already terminating changes nothing. Without this, deleted pods vanish at
    /// once (a kubelet that finishes every deletion instantly).
    pub fn without_kubelets(&self) {
        self.shared.update(|state| state.kubelet_gone = true);
    }

    /// Sets a stored PodDisruptionBudget's `status.disruptionsAllowed` (there is no disruption
    /// controller: the test plays it), and makes its status current (`observedGeneration`).
    pub fn allow_disruptions(&self, namespace: &str, name: &str, allowed: i64) {
        self.shared.update(|state| {
            let mut budget = state.find(Resource::Budgets, namespace, name).expect("the budget exists").clone();
            budget["status"]["disruptionsAllowed"] = json!(allowed);
            budget["status"]["observedGeneration"] = budget["metadata"]["generation"].clone();
            state.put(budget);
        });
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.view(|view| view.requests().to_vec())
    }

    /// Blocks until `condition` holds for the requests received so far and returns them. Woken by
    /// every request and every change, so `timeout` is only an upper bound: past it, the test fails
    /// with `what` and every request seen.
    pub fn wait_for(&self, what: &str, timeout: Duration, condition: impl Fn(&[Recorded]) -> bool) -> Vec<Recorded> {
        let state = self.wait(what, timeout, |state| condition(&state.requests));
        state.requests.clone()
    }

    /// Blocks until `condition` holds for the server's state (e.g. "pod X is gone"), as
    /// [`wait_for`](Self::wait_for) does for requests.
    pub fn wait_until_state(&self, what: &str, timeout: Duration, condition: impl Fn(&FakeView<'_>) -> bool) {
        drop(self.wait(what, timeout, |state| condition(&FakeView { state })));
    }

    fn wait(&self, what: &str, timeout: Duration, condition: impl Fn(&State) -> bool) -> MutexGuard<'_, State> {
        let (state, waited) = self
            .shared
            .changed
            .wait_timeout_while(self.shared.lock(), timeout, |state| !condition(state))
            .expect("fake API server state");
        if waited.timed_out() {
            let seen: Vec<String> = state.requests.iter().map(|r| format!("  {r}")).collect();
            drop(state);
            panic!("timed out after {timeout:?} waiting for {what}; requests seen:\n{}", seen.join("\n"));
        }
        state
    }
}

fn kubeconfig_yaml(addr: SocketAddr) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: http://{addr}\n\
         contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\n    namespace: default\n\
         current-context: fake\nusers:\n- name: fake\n  user:\n    token: fake-token\n"
    )
}

type ResponseBody = BoxBody<Bytes, std::io::Error>;
type Reply = Result<Response<ResponseBody>, std::io::Error>;

fn respond(code: u16, body: ResponseBody) -> Reply {
    let response = Response::builder()
        .status(StatusCode::from_u16(code).expect("a valid status code"))
        .header("content-type", "application/json")
        .body(body)
        .expect("a valid response");
    Ok(response)
}

/// A 429 as API Priority and Fairness writes it (plain text), or a 503 `Status`; both with
/// `Retry-After`.
fn pushback(code: u16, seconds: u64) -> Reply {
    let (content_type, body) = match code {
        429 => ("text/plain; charset=utf-8", "Too many requests, please try again later.\n".to_owned()),
        _ => ("application/json", status(code, "the server is currently unable to handle the request").to_string()),
    };
    let response = Response::builder()
        .status(StatusCode::from_u16(code).expect("a valid status code"))
        .header("content-type", content_type)
        .header("retry-after", seconds.to_string())
        .body(Full::new(Bytes::from(body)).map_err(|never| match never {}).boxed())
        .expect("a valid response");
    Ok(response)
}

fn reply(code: u16, body: &Value) -> Reply {
    respond(code, Full::new(Bytes::from(body.to_string())).map_err(|never| match never {}).boxed())
}

/// A kube `Status` failure, as the API server writes it.
pub fn status(code: u16, message: &str) -> Value {
    let reason = match code {
        400 => "BadRequest",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "NotFound",
        405 => "MethodNotAllowed",
        409 => "Conflict",
        410 => "Expired",
        415 => "UnsupportedMediaType",
        422 => "Invalid",
        429 => "TooManyRequests",
        _ => "InternalError",
    };
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": message, "reason": reason, "code": code})
}

/// A `Status` failure about one object, with the `details` the API server adds.
fn failure(code: u16, message: &str, kind: &str, name: &str) -> Reply {
    let mut body = status(code, message);
    body["details"] = json!({"name": name, "kind": kind});
    reply(code, &body)
}

/// `pods "NAME" not found`.
fn not_found(resource: &str, name: &str) -> Reply {
    failure(404, &format!("{resource} \"{name}\" not found"), resource, name)
}

async fn handle(shared: Arc<Shared>, request: Request<Incoming>) -> Reply {
    let accept = request.headers().get("accept").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    // What the plugin reads as protobuf is what this server answers in it.
    let read = taint_evict::cluster::protobuf::read_of(request.method(), request.uri().path());
    let protobuf = read.filter(|_| accept.starts_with(PROTOBUF));
    let protobuf = protobuf.filter(|_| !shared.lock().json_only);
    let watch = request.uri().query().is_some_and(|q| q.split('&').any(|p| p == "watch=true" || p == "watch=1"));
    let answer = answer(shared, request).await?;
    match protobuf {
        // API Priority and Fairness rejects in plain text, whatever was asked for.
        Some(kind) if answer.extensions().get::<Endless>().is_none() && !plain_text(&answer) => {
            as_protobuf(answer, kind, watch).await
        }
        _ => Ok(answer),
    }
}

/// Marks an answer that never ends: it goes as JSON, whatever was asked (a server may answer JSON).
#[derive(Clone, Copy)]
struct Endless;

/// A 200 answer of `head`, then `pattern` over and over, forever.
fn endless(head: &str, pattern: &str) -> Reply {
    let chunk = Bytes::from(pattern.repeat((64 << 10) / pattern.len()));
    let body = EndlessBody { head: Some(Bytes::from(head.to_owned())), chunk };
    let mut response = respond(200, body.boxed())?;
    response.extensions_mut().insert(Endless);
    Ok(response)
}

/// The body of [`endless`].
struct EndlessBody {
    head: Option<Bytes>,
    chunk: Bytes,
}

impl Body for EndlessBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        let this = self.get_mut();
        let data = this.head.take().unwrap_or_else(|| this.chunk.clone());
        Poll::Ready(Some(Ok(Frame::data(data))))
    }
}

/// Whether an answer is plain text (an API Priority and Fairness rejection).
fn plain_text(answer: &Response<ResponseBody>) -> bool {
    answer.headers().get("content-type").is_some_and(|v| v.as_bytes().starts_with(b"text/plain"))
}

/// The protobuf media type.
const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// A JSON answer as the real server sends it in protobuf: one enveloped object (a list, an object, a
/// `Status`), or a watch's events in length-prefixed frames.
async fn as_protobuf(response: Response<ResponseBody>, kind: &'static str, watch: bool) -> Reply {
    use taint_evict::decode::protobuf::{encode, encode_watch_event};
    let (mut parts, body) = response.into_parts();
    let media =
        if watch && parts.status.is_success() { "application/vnd.kubernetes.protobuf;stream=watch" } else { PROTOBUF };
    parts.headers.insert("content-type", hyper::header::HeaderValue::from_static(media));
    parts.headers.remove("content-length");
    if watch && parts.status.is_success() {
        // One JSON line a frame (`Watch::send`): one protobuf frame each.
        let frames = body.map_frame(move |frame| {
            frame.map_data(|line| {
                let event: Value = serde_json::from_slice(&line).expect("the fake's own JSON");
                let event = encode_watch_event(&event, kind).expect("encodes");
                let mut framed = u32::try_from(event.len()).expect("a frame under 4 GiB").to_be_bytes().to_vec();
                framed.extend(event);
                Bytes::from(framed)
            })
        });
        return Ok(Response::from_parts(parts, frames.boxed()));
    }
    let bytes = body.collect().await?.to_bytes();
    let mut value: Value = serde_json::from_slice(&bytes).expect("the fake's own JSON");
    if value.get("kind").is_none() {
        value["kind"] = json!(kind);
    }
    let encoded = encode(&value).expect("encodes");
    Ok(Response::from_parts(parts, Full::new(Bytes::from(encoded)).map_err(|never| match never {}).boxed()))
}

/// The answer to one request, as JSON.
async fn answer(shared: Arc<Shared>, request: Request<Incoming>) -> Reply {
    let (parts, body) = request.into_parts();
    let bytes = body.collect().await.map_err(std::io::Error::other)?.to_bytes();
    let recorded = Recorded {
        method: parts.method.to_string(),
        path: parts.uri.path().to_owned(),
        query: form_urlencoded::parse(parts.uri.query().unwrap_or("").as_bytes()).into_owned().collect(),
        body: serde_json::from_slice(&bytes).ok(),
        content_type: parts.headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned(),
        accept_encoding: parts.headers.get("accept-encoding").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned(),
        at: jiff::Timestamp::now(),
    };
    // A request without a fault is recorded and answered in one step: once a test sees it in the log,
    // its answer is decided (a watch is open and gets every later change).
    let outcome = shared.update(|state| {
        state.requests.push(recorded.clone());
        match take_fault(state, &recorded) {
            Some(fault) => Err(fault),
            None => Ok(route(state, &recorded)),
        }
    });
    match outcome {
        Ok(answer) => answer,
        Err(Fault::Status(code, message)) => reply(code, &status(code, &message)),
        Err(Fault::RetryAfter(code, seconds)) => pushback(code, seconds),
        Err(Fault::Drop) => Err(std::io::Error::other("connection dropped by the test")),
        Err(Fault::EndlessList) => endless(
            r#"{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":["#,
            r#"{"kind":"Node","apiVersion":"v1","metadata":{"name":"n","uid":"u"},"spec":{"taints":[]}},"#,
        ),
        Err(Fault::EndlessEvent) => endless(
            r#"{"type":"ADDED","object":{"kind":"Node","apiVersion":"v1","metadata":{"name":"n","resourceVersion":"2","annotations":{"a":""#,
            "x",
        ),
        Err(Fault::Slow(delay)) => {
            // Simulated server latency (not synchronisation): the answer leaves this much later.
            tokio::time::sleep_until(tokio::time::Instant::now() + delay).await;
            shared.update(|state| route(state, &recorded))
        }
    }
}

/// The fault of the first rule that matches the request, counting down a transient one.
fn take_fault(state: &mut State, r: &Recorded) -> Option<Fault> {
    let index = state
        .rules
        .iter()
        .position(|rule| rule.method == r.method && r.path.starts_with(&rule.path_prefix) && rule.fault.applies(r))?;
    let rule = &mut state.rules[index];
    let fault = rule.fault.clone();
    if let Some(remaining) = &mut rule.remaining {
        *remaining -= 1;
        if *remaining == 0 {
            state.rules.remove(index);
        }
    }
    Some(fault)
}

fn route(state: &mut State, r: &Recorded) -> Reply {
    use Resource::{Events, Leases, Nodes, Pods};
    let segments: Vec<&str> = r.path.trim_matches('/').split('/').collect();
    match (r.method.as_str(), segments.as_slice()) {
        ("GET", ["version"]) => {
            let minor = state.minor;
            let git = format!("v1.{minor}.0");
            reply(200, &json!({"major": "1", "minor": minor.to_string(), "gitVersion": git, "platform": "linux/amd64"}))
        }
        ("GET", ["api"]) => reply(
            200,
            &json!({"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}),
        ),
        ("GET", ["apis"]) => reply(200, &api_groups()),
        ("GET", ["api", "v1"]) => reply(
            200,
            &json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "v1", "resources": [
            {"name": "nodes", "singularName": "node", "namespaced": false, "kind": "Node", "verbs": ["get", "list", "watch"], "shortNames": ["no"]},
            {"name": "pods", "singularName": "pod", "namespaced": true, "kind": "Pod", "verbs": ["get", "list", "watch", "delete"], "shortNames": ["po"]},
            {"name": "pods/status", "singularName": "", "namespaced": true, "kind": "Pod", "verbs": ["get", "patch"]},
            {"name": "pods/eviction", "singularName": "", "namespaced": true, "group": "policy", "version": "v1", "kind": "Eviction", "verbs": ["create"]},
            {"name": "events", "singularName": "event", "namespaced": true, "kind": "Event", "verbs": ["create", "get", "list", "patch"], "shortNames": ["ev"]}]}),
        ),
        ("GET", ["apis", "coordination.k8s.io", "v1"]) => reply(
            200,
            &json!({"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": "coordination.k8s.io/v1", "resources": [
            {"name": "leases", "singularName": "lease", "namespaced": true, "kind": "Lease", "verbs": ["create", "get", "list", "update"]}]}),
        ),
        ("GET", ["apis", "events.k8s.io", "v1"]) => reply(
            200,
            &json!({"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": "events.k8s.io/v1", "resources": [
            {"name": "events", "singularName": "event", "namespaced": true, "kind": "Event", "verbs": ["create", "get", "list", "patch"], "shortNames": ["ev"]}]}),
        ),
        ("GET", ["apis", "resource.k8s.io"]) => match state.dra.map(dra_versions) {
            Some(versions) => {
                let entries: Vec<Value> = versions
                    .iter()
                    .map(|(version, _)| json!({"groupVersion": format!("resource.k8s.io/{version}"), "version": version}))
                    .collect();
                reply(
                    200,
                    &json!({"kind": "APIGroup", "apiVersion": "v1", "name": "resource.k8s.io",
                                   "versions": entries, "preferredVersion": entries[0]}),
                )
            }
            None => reply(404, &status(404, "the server could not find the requested resource")),
        },
        ("GET", ["apis", "resource.k8s.io", version]) => {
            match state.dra.map(dra_versions).and_then(|all| all.into_iter().find(|(v, _)| v == version)) {
                Some((version, resources)) => {
                    let resources: Vec<Value> = resources
                        .iter()
                        .map(|plural| {
                            let kind = Resource::of_dra_plural(plural).map_or("", Resource::kind);
                            json!({"name": plural, "namespaced": *plural == "resourceclaims", "kind": kind,
                                   "verbs": ["get", "list", "watch"]})
                        })
                        .collect();
                    reply(
                        200,
                        &json!({"kind": "APIResourceList", "apiVersion": "v1",
                                       "groupVersion": format!("resource.k8s.io/{version}"), "resources": resources}),
                    )
                }
                None => reply(404, &status(404, "the server could not find the requested resource")),
            }
        }
        ("GET", ["apis", "resource.k8s.io", version, plural]) if dra_serves(state, version, plural) => {
            let resource = Resource::of_dra_plural(plural).expect("served");
            collection(state, r, &format!("resource.k8s.io/{version}"), Selection::new(resource, None, r))
        }
        ("GET", ["apis", "resource.k8s.io", version, "namespaces", ns, plural])
            if dra_serves(state, version, plural) =>
        {
            let resource = Resource::of_dra_plural(plural).expect("served");
            collection(state, r, &format!("resource.k8s.io/{version}"), Selection::new(resource, Some(ns), r))
        }
        ("GET", ["apis", "apps", "v1", "namespaces", ns, "replicasets"]) => {
            collection(state, r, "apps/v1", Selection::new(Resource::ReplicaSets, Some(ns), r))
        }
        ("GET", ["apis", "apps", "v1", "replicasets"]) => {
            collection(state, r, "apps/v1", Selection::new(Resource::ReplicaSets, None, r))
        }
        ("GET", ["api", "v1", "nodes"]) => collection(state, r, "v1", Selection::new(Nodes, None, r)),
        ("GET", ["api", "v1", "nodes", name]) => get(state, Nodes, "", name, "nodes"),
        ("GET", ["api", "v1", "pods"]) => collection(state, r, "v1", Selection::new(Pods, None, r)),
        ("GET", ["api", "v1", "namespaces"]) => namespaces(state),
        ("GET", ["api", "v1", "namespaces", ns, "pods"]) => {
            collection(state, r, "v1", Selection::new(Pods, Some(ns), r))
        }
        (
            "GET",
            ["api", "v1", "namespaces", ns, "pods", name] | ["api", "v1", "namespaces", ns, "pods", name, "status"],
        ) => get(state, Pods, ns, name, "pods"),
        ("DELETE", ["api", "v1", "namespaces", ns, "pods", name]) => delete_pod(state, r, ns, name),
        ("POST", ["api", "v1", "namespaces", ns, "pods", name, "eviction"]) => evict_pod(state, r, ns, name),
        ("PATCH", ["api", "v1", "namespaces", ns, "pods", name, "status"]) => patch_pod_status(state, r, ns, name),
        ("GET", ["apis", "coordination.k8s.io", "v1", "leases"]) => {
            collection(state, r, "coordination.k8s.io/v1", Selection::new(Leases, None, r))
        }
        ("GET", ["apis", "coordination.k8s.io", "v1", "namespaces", ns, "leases"]) => {
            collection(state, r, "coordination.k8s.io/v1", Selection::new(Leases, Some(ns), r))
        }
        ("GET", ["apis", "coordination.k8s.io", "v1", "namespaces", ns, "leases", name]) => {
            get(state, Leases, ns, name, "leases.coordination.k8s.io")
        }
        ("POST", ["apis", "coordination.k8s.io", "v1", "namespaces", ns, "leases"]) => create_lease(state, r, ns),
        ("PUT", ["apis", "coordination.k8s.io", "v1", "namespaces", ns, "leases", name]) => {
            replace_lease(state, r, ns, name)
        }
        ("GET", ["api", "v1", "events"]) => collection(state, r, "v1", Selection::new(Events, None, r)),
        ("GET", ["apis", "events.k8s.io", "v1", "events"]) => {
            collection(state, r, "events.k8s.io/v1", Selection::new(Events, None, r))
        }
        ("GET", ["api", "v1", "namespaces", ns, "events"]) => {
            collection(state, r, "v1", Selection::new(Events, Some(ns), r))
        }
        ("GET", ["apis", "events.k8s.io", "v1", "namespaces", ns, "events"]) => {
            collection(state, r, "events.k8s.io/v1", Selection::new(Events, Some(ns), r))
        }
        ("POST", ["api", "v1", "namespaces", ns, "events"]) => create_event(state, r, ns, "v1", "events"),
        ("POST", ["apis", "events.k8s.io", "v1", "namespaces", ns, "events"]) => {
            create_event(state, r, ns, "events.k8s.io/v1", "events.events.k8s.io")
        }
        ("GET", ["api", "v1", "namespaces", ns, "events", name]) => get(state, Events, ns, name, "events"),
        ("GET", ["apis", "events.k8s.io", "v1", "namespaces", ns, "events", name]) => {
            get(state, Events, ns, name, "events.events.k8s.io")
        }
        ("PATCH", ["api", "v1", "namespaces", ns, "events", name]) => patch_event(state, r, ns, name, "events"),
        ("PATCH", ["apis", "events.k8s.io", "v1", "namespaces", ns, "events", name]) => {
            patch_event(state, r, ns, name, "events.events.k8s.io")
        }
        ("GET", _) => reply(404, &status(404, "the server could not find the requested resource")),
        _ => reply(405, &status(405, "method not allowed")),
    }
}

/// The `resource.k8s.io` versions Kubernetes `1.minor` serves, most preferred first, with the
/// resources each serves (device taints: alpha 1.33, beta 1.36, GA 1.37).
fn dra_versions(minor: u32) -> Vec<(String, Vec<&'static str>)> {
    const BOTH: [&str; 2] = ["resourceslices", "resourceclaims"];
    const ALL: [&str; 3] = ["resourceslices", "resourceclaims", "devicetaintrules"];
    let versions: Vec<(&str, &[&str])> = match minor {
        ..=33 => vec![("v1beta1", &BOTH), ("v1alpha3", &["devicetaintrules"])],
        34..=35 => vec![("v1", &BOTH), ("v1beta2", &BOTH), ("v1beta1", &BOTH), ("v1alpha3", &["devicetaintrules"])],
        36 => vec![("v1", &BOTH), ("v1beta2", &ALL), ("v1beta1", &BOTH)],
        _ => vec![("v1", &ALL), ("v1beta2", &ALL), ("v1beta1", &BOTH)],
    };
    versions.into_iter().map(|(v, resources)| (v.to_owned(), resources.to_vec())).collect()
}

fn dra_serves(state: &State, version: &str, plural: &str) -> bool {
    let versions = state.dra.map(dra_versions).unwrap_or_default();
    versions.iter().any(|(v, resources)| v == version && resources.contains(&plural))
}

fn api_groups() -> Value {
    let group = |name: &str| {
        let version = json!({"groupVersion": format!("{name}/v1"), "version": "v1"});
        json!({"name": name, "versions": [version.clone()], "preferredVersion": version})
    };
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": [group("coordination.k8s.io"), group("events.k8s.io")]})
}

fn get(state: &State, resource: Resource, namespace: &str, name: &str, plural: &str) -> Reply {
    match state.find(resource, namespace, name) {
        Some(object) => reply(200, object),
        None => not_found(plural, name),
    }
}

/// A LIST, or a WATCH with `watch=true`.
/// The namespaces a cluster always has, and those of the objects stored, as a NamespaceList.
fn namespaces(state: &State) -> Reply {
    let mut names: std::collections::BTreeSet<&str> =
        ["default", "kube-node-lease", "kube-public", "kube-system"].into();
    for object in state.pods.iter().chain(&state.leases).chain(&state.events) {
        names.extend(object["metadata"]["namespace"].as_str());
    }
    let items: Vec<Value> =
        names.iter().map(|name| json!({"metadata": {"name": name}, "status": {"phase": "Active"}})).collect();
    let metadata = json!({"resourceVersion": state.resource_version.to_string()});
    reply(200, &json!({"kind": "NamespaceList", "apiVersion": "v1", "metadata": metadata, "items": items}))
}

fn collection(state: &mut State, r: &Recorded, api_version: &str, selection: Selection) -> Reply {
    if r.is_watch() {
        return watch(state, r, selection);
    }
    // The continue token is the position in the stored list where the next page starts, so each page
    // costs its own length, not the whole list's (150,000 pods are served in 300 pages).
    let start: usize = match r.param("continue") {
        "" => 0,
        token => match token.parse() {
            Ok(offset) => offset,
            Err(_) => return reply(410, &status(410, "the provided continue parameter is too old")),
        },
    };
    let limit = r.param("limit").parse::<usize>().ok().filter(|&l| l > 0).unwrap_or(usize::MAX);
    let limit = state.max_page.map_or(limit, |cap| cap.min(limit));
    let objects = state.objects(selection.resource);
    let mut selected = objects.iter().enumerate().skip(start).filter(|(_, o)| selection.selects(o));
    let page: Vec<Value> = selected
        .by_ref()
        .take(limit)
        .map(|(_, item)| {
            // The API server leaves kind and apiVersion out of typed list items.
            let mut item = item.clone();
            if let Some(object) = item.as_object_mut() {
                object.remove("kind");
                object.remove("apiVersion");
            }
            item
        })
        .collect();
    let mut metadata = json!({"resourceVersion": state.resource_version.to_string()});
    if let Some((next, _)) = selected.next() {
        metadata["continue"] = json!(next.to_string());
        // As on the real server, only an unfiltered list says how many items remain.
        if selection.namespace.is_none() && selection.labels.is_empty() && selection.fields.is_empty() {
            metadata["remainingItemCount"] = json!(objects.len() - next);
        }
    }
    let kind = format!("{}List", selection.resource.kind());
    reply(200, &json!({"kind": kind, "apiVersion": api_version, "metadata": metadata, "items": page}))
}

/// Opens a watch: the events after `resourceVersion` (or, from `""`/`"0"`, the current objects as
/// `ADDED`), then every change as it happens, one JSON object a line, until `timeoutSeconds` pass or
/// the test closes the watches.
fn watch(state: &mut State, r: &Recorded, selection: Selection) -> Reply {
    let (lines, received) = mpsc::unbounded_channel();
    let watch = Watch { selection, bookmarks: r.param("allowWatchBookmarks") == "true", lines };
    match r.param("resourceVersion") {
        "" | "0" => {
            for object in state.objects(watch.selection.resource).iter().filter(|o| watch.selection.selects(o)) {
                watch.send(&json!({"type": "ADDED", "object": object}));
            }
            if r.param("sendInitialEvents") == "true" {
                let version = state.resource_version.to_string();
                watch.send(&bookmark(watch.selection.resource, &version, true));
            }
        }
        from => {
            let Ok(from) = from.parse::<u64>() else {
                return reply(400, &status(400, &format!("invalid resource version: {from:?}")));
            };
            if from < state.compacted {
                // The real API server answers 200 and sends the error as the only event.
                let message = format!("too old resource version: {from} ({})", state.compacted);
                watch.send(&json!({"type": "ERROR", "object": status(410, &message)}));
                drop(watch);
                return respond(200, WatchBody::new(received, Duration::ZERO).boxed());
            }
            for change in state.log.iter().filter(|c| c.resource_version > from) {
                if let Some(event) = watch.event(change) {
                    watch.send(&event);
                }
            }
        }
    }
    state.watches.push(watch);
    // Without `timeoutSeconds` the real server picks 30 to 60 minutes.
    let timeout = Duration::from_secs(r.param("timeoutSeconds").parse().unwrap_or(1800));
    respond(200, WatchBody::new(received, timeout).boxed())
}

/// A streaming (chunked) watch response: it ends when every sender is gone or at its deadline.
struct WatchBody {
    lines: mpsc::UnboundedReceiver<Bytes>,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

impl WatchBody {
    fn new(lines: mpsc::UnboundedReceiver<Bytes>, timeout: Duration) -> Self {
        Self { lines, deadline: Box::pin(tokio::time::sleep_until(tokio::time::Instant::now() + timeout)) }
    }
}

impl Body for WatchBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        let this = self.get_mut();
        if let Poll::Ready(line) = this.lines.poll_recv(cx) {
            return Poll::Ready(line.map(|line| Ok(Frame::data(line))));
        }
        if this.deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Poll::Pending
    }
}

/// DELETE of one pod: the uid and resourceVersion preconditions are checked first, as the API server's
/// `BeforeDelete` does; `dryRun` (in the query or, as kube-rs sends it, in the body) changes nothing.
fn delete_pod(state: &mut State, r: &Recorded, namespace: &str, name: &str) -> Reply {
    let options = r.body.clone().unwrap_or_else(|| json!({}));
    let Some(pod) = state.find(Resource::Pods, namespace, name) else { return not_found("pods", name) };
    for (field, label, why) in
        [("uid", "UID", "deleted and then recreated"), ("resourceVersion", "ResourceVersion", "modified")]
    {
        let wanted = &options["preconditions"][field];
        let actual = pod["metadata"][field].as_str().unwrap_or_default();
        if let Some(wanted) = wanted.as_str()
            && wanted != actual
        {
            let message = format!(
                "Operation cannot be fulfilled on Pod \"{name}\": the {label} in the precondition ({wanted}) does \
                 not match the {label} in record ({actual}). The object might have been {why}"
            );
            return failure(409, &message, "Pod", name);
        }
    }
    let dry_run =
        r.param("dryRun") == "All" || options["dryRun"].as_array().is_some_and(|d| d.iter().any(|v| v == "All"));
    if dry_run {
        return reply(200, pod);
    }
    let bound = pod["spec"]["nodeName"].as_str().is_some_and(|n| !n.is_empty());
    let grace =
        options["gracePeriodSeconds"].as_i64().or_else(|| pod["spec"]["terminationGracePeriodSeconds"].as_i64());
    if state.kubelet_gone && bound && grace != Some(0) {
        if pod["metadata"]["deletionTimestamp"].is_string() {
            return reply(200, pod);
        }
        let grace = grace.unwrap_or(30);
        let mut terminating = pod.clone();
        let at = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(grace);
        terminating["metadata"]["deletionTimestamp"] = json!(at.round(jiff::Unit::Second).expect("round").to_string());
        terminating["metadata"]["deletionGracePeriodSeconds"] = json!(grace);
        let stored = state.put(terminating).expect("pods are stored");
        return reply(200, &stored);
    }
    let deleted = state.delete(Resource::Pods, namespace, name).expect("the pod was just found");
    reply(200, &deleted)
}

/// The Eviction API (`POST pods/NAME/eviction`), as upstream's `EvictionREST.Create`
/// (`pkg/registry/core/pod/storage/eviction.go`) answers it: a pod that is pending, finished or
/// already terminating is deleted without looking at budgets; otherwise the one PodDisruptionBudget
/// of its namespace whose selector matches it must allow a disruption (`429 TooManyRequests` with
/// the budget as a `DisruptionBudget` cause when not: no `Retry-After` when it allows none,
/// `Retry-After: 10` while its status is behind its spec), and the eviction takes one away. The
/// pod gets the `DisruptionTarget` condition (`EvictionByEvictionAPI`), then is deleted with the
/// eviction's `deleteOptions` (the UID precondition is checked first here; upstream checks it at
/// the delete, after taking the disruption). `dryRun=All` checks everything and changes nothing.
fn evict_pod(state: &mut State, r: &Recorded, namespace: &str, name: &str) -> Reply {
    let Some(eviction) = r.body.clone().filter(|b| b["kind"] == "Eviction") else {
        return reply(400, &status(400, "the body is not an Eviction"));
    };
    if eviction["metadata"]["name"] != name {
        return reply(400, &status(400, "name in URL does not match name in Eviction object"));
    }
    let options = eviction.get("deleteOptions").cloned().filter(Value::is_object).unwrap_or_else(|| json!({}));
    let Some(pod) = state.find(Resource::Pods, namespace, name).cloned() else { return not_found("pods", name) };
    if let Some(wanted) = options["preconditions"]["uid"].as_str()
        && pod["metadata"]["uid"] != wanted
    {
        let message = format!(
            "Operation cannot be fulfilled on Pod \"{name}\": the UID in the precondition ({wanted}) does not match \
             the UID in record ({}). The object might have been deleted and then recreated",
            pod["metadata"]["uid"].as_str().unwrap_or_default()
        );
        return failure(409, &message, "Pod", name);
    }
    let dry_run =
        r.param("dryRun") == "All" || options["dryRun"].as_array().is_some_and(|d| d.iter().any(|v| v == "All"));
    let phase = pod["status"]["phase"].as_str().unwrap_or("Pending");
    let ignores_budgets =
        matches!(phase, "Pending" | "Succeeded" | "Failed") || pod["metadata"]["deletionTimestamp"].is_string();
    if !ignores_budgets {
        let budgets: Vec<Value> = state
            .budgets
            .iter()
            .filter(|b| b["metadata"]["namespace"] == namespace && selects_by_labels(&b["spec"]["selector"], &pod))
            .cloned()
            .collect();
        if budgets.len() > 1 {
            let message =
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.";
            return reply(500, &status(500, message));
        }
        if let Some(budget) = budgets.into_iter().next() {
            let budget_name = budget["metadata"]["name"].as_str().unwrap_or_default().to_owned();
            let generation = budget["metadata"]["generation"].as_i64().unwrap_or(1);
            if budget["status"]["observedGeneration"].as_i64().unwrap_or(0) < generation {
                let cause = format!("The disruption budget {budget_name} is still being processed by the server.");
                return budget_refusal(&cause, 10);
            }
            let allowed = budget["status"]["disruptionsAllowed"].as_i64().unwrap_or(0);
            if allowed == 0 {
                let cause = format!(
                    "The disruption budget {budget_name} needs {} healthy pods and has {} currently",
                    budget["status"]["desiredHealthy"].as_i64().unwrap_or(0),
                    budget["status"]["currentHealthy"].as_i64().unwrap_or(0)
                );
                return budget_refusal(&cause, 0);
            }
            if !dry_run {
                let mut taken = budget;
                taken["status"]["disruptionsAllowed"] = json!(allowed - 1);
                state.put(taken);
            }
        }
    }
    let success = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201});
    if dry_run {
        return reply(201, &success);
    }
    let mut marked = pod;
    let conditions = marked["status"]["conditions"].as_array().cloned().unwrap_or_default();
    let mut conditions: Vec<Value> = conditions.into_iter().filter(|c| c["type"] != "DisruptionTarget").collect();
    conditions.push(json!({"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI",
        "message": "Eviction API: evicting", "lastTransitionTime": jiff::Timestamp::now().round(jiff::Unit::Second).expect("round").to_string()}));
    marked["status"]["conditions"] = json!(conditions);
    state.put(marked);
    let delete = Recorded { body: Some(options), query: BTreeMap::new(), ..r.clone() };
    match delete_pod(state, &delete, namespace, name) {
        Ok(answer) if answer.status().is_success() => reply(201, &success),
        other => other,
    }
}

/// A PodDisruptionBudget's refusal of an eviction, as `NewTooManyRequests` writes it (`Retry-After`
/// only when `retry_after` is not 0, as the API server's response writer sends it).
fn budget_refusal(cause: &str, retry_after: u64) -> Reply {
    let mut body = status(429, "Cannot evict pod as it would violate the pod's disruption budget.");
    body["details"] = json!({"causes": [{"reason": "DisruptionBudget", "message": cause}]});
    if retry_after > 0 {
        body["details"]["retryAfterSeconds"] = json!(retry_after);
    }
    let mut response = reply(429, &body)?;
    if retry_after > 0 {
        response.headers_mut().insert("retry-after", retry_after.to_string().parse().expect("a header value"));
    }
    Ok(response)
}

/// Whether a budget's `spec.selector` (`matchLabels` and `matchExpressions` with `In`, `NotIn`,
/// `Exists`, `DoesNotExist`) selects the pod; an empty selector selects nothing, as upstream says.
fn selects_by_labels(selector: &Value, pod: &Value) -> bool {
    let labels = &pod["metadata"]["labels"];
    let match_labels = selector["matchLabels"].as_object().cloned().unwrap_or_default();
    let expressions = selector["matchExpressions"].as_array().cloned().unwrap_or_default();
    if match_labels.is_empty() && expressions.is_empty() {
        return false;
    }
    match_labels.iter().all(|(key, value)| labels[key] == *value)
        && expressions.iter().all(|e| {
            let key = e["key"].as_str().unwrap_or_default();
            let values = e["values"].as_array().cloned().unwrap_or_default();
            let value = &labels[key];
            match e["operator"].as_str() {
                Some("In") => values.contains(value),
                Some("NotIn") => !values.contains(value),
                Some("Exists") => !value.is_null(),
                Some("DoesNotExist") => value.is_null(),
                _ => false,
            }
        })
}

/// PATCH of `pods/status`: only the status changes; `status.conditions` merges by `type` under a
/// strategic-merge patch and is replaced under a merge patch, as on the real server. A `metadata.uid`
/// in the patch that is not the pod's is rejected as the real server does (`422`, uid is immutable).
fn patch_pod_status(state: &mut State, r: &Recorded, namespace: &str, name: &str) -> Reply {
    let Some(strategic) = is_strategic(r) else { return unsupported_patch(r) };
    let Some(patch) = r.body.as_ref().filter(|b| b.is_object()) else {
        return reply(400, &status(400, "the patch is not a JSON object"));
    };
    let Some(pod) = state.find(Resource::Pods, namespace, name) else { return not_found("pods", name) };
    if let Some(uid) = patch["metadata"]["uid"].as_str()
        && pod["metadata"]["uid"] != uid
    {
        let message = format!("Pod \"{name}\" is invalid: metadata.uid: Invalid value: \"{uid}\": field is immutable");
        return failure(422, &message, "Pod", name);
    }
    let mut patched = pod.clone();
    if let Some(status) = patch.get("status") {
        merge(&mut patched["status"], status, strategic);
    }
    if r.param("dryRun") == "All" {
        return reply(200, &patched);
    }
    let stored = state.put(patched).expect("a pod");
    reply(200, &stored)
}

/// The Lease in a create or update body, checked as the API server does for the parts it checks.
/// A refusal is the `Status` to answer with.
fn lease_body(r: &Recorded, namespace: &str) -> Result<Value, Value> {
    let Some(mut lease) = r.body.clone().filter(|b| b["kind"] == "Lease") else {
        return Err(status(400, "the body is not a Lease"));
    };
    if lease["metadata"]["name"].as_str().is_none_or(str::is_empty) {
        return Err(status(422, "Lease.coordination.k8s.io is invalid: metadata.name: Required value"));
    }
    lease["metadata"]["namespace"] = json!(namespace);
    Ok(lease)
}

/// POST of a Lease: `409 AlreadyExists` when one by that name exists (how two candidates racing to
/// create it learn who won).
fn create_lease(state: &mut State, r: &Recorded, namespace: &str) -> Reply {
    let mut lease = match lease_body(r, namespace) {
        Ok(lease) => lease,
        Err(refusal) => {
            return reply(refusal["code"].as_u64().and_then(|c| u16::try_from(c).ok()).unwrap_or(400), &refusal);
        }
    };
    let name = lease["metadata"]["name"].as_str().unwrap_or_default().to_owned();
    if state.find(Resource::Leases, namespace, &name).is_some() {
        let mut body = status(409, &format!("leases.coordination.k8s.io \"{name}\" already exists"));
        body["reason"] = json!("AlreadyExists");
        body["details"] = json!({"name": name, "group": "coordination.k8s.io", "kind": "leases"});
        return reply(409, &body);
    }
    lease["metadata"]["uid"] = json!(format!("lease-{}", state.next_version()));
    let stored = state.put(lease).expect("a lease");
    reply(201, &stored)
}

/// PUT of a Lease: replaces it; a `resourceVersion` that is not the stored one is `409 Conflict`
/// (optimistic concurrency: of two candidates updating from the same read, one wins).
fn replace_lease(state: &mut State, r: &Recorded, namespace: &str, name: &str) -> Reply {
    let mut lease = match lease_body(r, namespace) {
        Ok(lease) => lease,
        Err(refusal) => {
            return reply(refusal["code"].as_u64().and_then(|c| u16::try_from(c).ok()).unwrap_or(400), &refusal);
        }
    };
    let Some(current) = state.find(Resource::Leases, namespace, name) else {
        return not_found("leases.coordination.k8s.io", name);
    };
    if let Some(wanted) = lease["metadata"]["resourceVersion"].as_str()
        && current["metadata"]["resourceVersion"] != wanted
    {
        let message = format!(
            "Operation cannot be fulfilled on leases.coordination.k8s.io \"{name}\": the object has been modified; \
             please apply your changes to the latest version and try again"
        );
        return failure(409, &message, "leases", name);
    }
    lease["metadata"]["uid"] = current["metadata"]["uid"].clone();
    let stored = state.put(lease).expect("a lease");
    reply(200, &stored)
}

/// POST of an Event: stored as sent, named from `generateName` if it has no name.
fn create_event(state: &mut State, r: &Recorded, namespace: &str, api_version: &str, plural: &str) -> Reply {
    let Some(mut event) = r.body.clone().filter(Value::is_object) else {
        return reply(400, &status(400, "the event is not a JSON object"));
    };
    if event["metadata"]["namespace"].as_str().is_some_and(|ns| ns != namespace) {
        let message = "the namespace of the provided object does not match the namespace sent on the request";
        return reply(400, &status(400, message));
    }
    let name = match (event["metadata"]["name"].as_str(), event["metadata"]["generateName"].as_str()) {
        (Some(name), _) if !name.is_empty() => name.to_owned(),
        (_, Some(prefix)) => state.generate_name(prefix),
        _ => {
            return reply(
                422,
                &status(422, "Event is invalid: metadata.name: Required value: name or generateName is required"),
            );
        }
    };
    if state.find(Resource::Events, namespace, &name).is_some() {
        return failure(409, &format!("{plural} \"{name}\" already exists"), plural, &name);
    }
    event["kind"] = json!("Event");
    event["apiVersion"] = json!(api_version);
    event["metadata"]["name"] = json!(name);
    event["metadata"]["namespace"] = json!(namespace);
    if event["metadata"]["uid"].is_null() {
        event["metadata"]["uid"] = json!(format!("fake-event-{}", state.resource_version + 1));
    }
    let stored = state.put(event).expect("an Event");
    reply(201, &stored)
}

/// PATCH of an Event (the kube-rs `Recorder` merge-patches a repeated event's `series`).
fn patch_event(state: &mut State, r: &Recorded, namespace: &str, name: &str, plural: &str) -> Reply {
    let Some(strategic) = is_strategic(r) else { return unsupported_patch(r) };
    let Some(patch) = r.body.as_ref().filter(|b| b.is_object()) else {
        return reply(400, &status(400, "the patch is not a JSON object"));
    };
    let Some(event) = state.find(Resource::Events, namespace, name) else { return not_found(plural, name) };
    let mut patched = event.clone();
    merge(&mut patched, patch, strategic);
    for field in ["kind", "apiVersion"] {
        patched[field] = event[field].clone();
    }
    for field in ["name", "namespace", "uid"] {
        patched["metadata"][field] = event["metadata"][field].clone();
    }
    let stored = state.put(patched).expect("an Event");
    reply(200, &stored)
}

/// Whether a PATCH is a strategic-merge patch (`true`) or a JSON merge patch (`false`); `None` for
/// other media types (JSON patch and apply are not served).
fn is_strategic(r: &Recorded) -> Option<bool> {
    match media_type(r) {
        "application/strategic-merge-patch+json" => Some(true),
        "application/merge-patch+json" => Some(false),
        _ => None,
    }
}

fn media_type(r: &Recorded) -> &str {
    r.content_type.split(';').next().unwrap_or_default().trim()
}

fn unsupported_patch(r: &Recorded) -> Reply {
    let message = format!(
        "the body of the request was in an unknown format - accepted media types include: \
         application/merge-patch+json, application/strategic-merge-patch+json (fake: got {:?})",
        media_type(r)
    );
    reply(415, &status(415, &message))
}

/// The merge key of the lists a strategic-merge patch merges item by item (the ones pod status has).
fn merge_key(field: &str) -> Option<&'static str> {
    match field {
        "conditions" => Some("type"),
        "podIPs" | "hostIPs" => Some("ip"),
        _ => None,
    }
}

/// Applies a JSON merge patch (RFC 7386) to `target`; if `strategic`, lists with a merge key merge
/// item by item (`$patch: delete` removes one), and other `$` directives are ignored.
fn merge(target: &mut Value, patch: &Value, strategic: bool) {
    let Some(fields) = patch.as_object() else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(target) = target else { unreachable!("just made an object") };
    for (field, value) in fields {
        if strategic && field.starts_with('$') {
            continue;
        }
        if value.is_null() {
            target.remove(field);
            continue;
        }
        let slot = target.entry(field.clone()).or_insert(Value::Null);
        match (merge_key(field).filter(|_| strategic), value.as_array()) {
            (Some(key), Some(items)) => merge_list(slot, items, key),
            _ => merge(slot, value, strategic),
        }
    }
}

fn merge_list(target: &mut Value, items: &[Value], key: &str) {
    if !target.is_array() {
        *target = json!([]);
    }
    let Value::Array(list) = target else { unreachable!("just made an array") };
    for item in items {
        let existing = list.iter().position(|e| e[key] == item[key]);
        match (existing, item["$patch"] == "delete") {
            (Some(index), true) => {
                list.remove(index);
            }
            (None, true) => {}
            (Some(index), false) => merge(&mut list[index], item, true),
            (None, false) => {
                let mut fresh = Value::Null;
                merge(&mut fresh, item, true);
                list.push(fresh);
            }
        }
    }
}

/// The comma-separated terms of a selector; commas inside `in (…)` sets do not split.
fn terms(selector: &str) -> Vec<&str> {
    let mut terms = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in selector.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                terms.push(selector[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    terms.push(selector[start..].trim());
    terms.retain(|t| !t.is_empty());
    terms
}

/// Label selectors: `k=v`, `k==v`, `k!=v`, `k`, `!k`, `k in (a,b)`, `k notin (a,b)`.
fn labels_match(object: &Value, selector: &str) -> bool {
    let labels = &object["metadata"]["labels"];
    let set = |values: &str| -> Vec<String> {
        values.trim().trim_matches(|c| c == '(' || c == ')').split(',').map(|v| v.trim().to_owned()).collect()
    };
    terms(selector).into_iter().all(|term| {
        if let Some(key) = term.strip_prefix('!') {
            labels.get(key.trim()).is_none()
        } else if let Some((key, values)) = term.split_once(" notin ") {
            labels[key.trim()].as_str().is_none_or(|v| !set(values).iter().any(|s| s == v))
        } else if let Some((key, values)) = term.split_once(" in ") {
            labels[key.trim()].as_str().is_some_and(|v| set(values).iter().any(|s| s == v))
        } else if let Some((key, value)) = term.split_once("!=") {
            labels[key.trim()] != value.trim()
        } else if let Some((key, value)) = term.split_once("==").or_else(|| term.split_once('=')) {
            labels[key.trim()] == value.trim()
        } else {
            labels.get(term).is_some()
        }
    })
}

/// Field selectors (`path=v`, `path==v`, `path!=v`) on dotted paths such as `spec.nodeName` or
/// `reason`; a missing field is `""`, so `spec.nodeName!=` selects bound pods.
fn fields_match(object: &Value, selector: &str) -> bool {
    let field = |path: &str| {
        let value = path.split('.').fold(object, |v, key| &v[key]);
        match value {
            Value::Null => String::new(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    };
    terms(selector).into_iter().all(|term| {
        if let Some((path, value)) = term.split_once("!=") {
            field(path) != value
        } else if let Some((path, value)) = term.split_once("==").or_else(|| term.split_once('=')) {
            field(path) == value
        } else {
            false
        }
    })
}
