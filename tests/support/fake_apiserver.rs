//! An in-process fake Kubernetes API server over real HTTP on `127.0.0.1:0`.
//!
//! It serves what a client of nodes, pods and leases uses: `/version`, discovery, GET/LIST of nodes
//! (label selectors), LIST of pods (field selectors `spec.nodeName=`/`!=`, `limit` and `continue`),
//! GET of pods and Leases, and kube-style `Status` errors. Tests load objects into it, script faults
//! (any status code, slow answers, dropped connections) and read back every request it saw. A
//! temporary kubeconfig points at it, so the real binary (or kubectl) talks to it like to any cluster.
//!
//! It is a harness for the protocol, not a mock of the plugin: nothing in the plugin knows about it.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

/// One request the server received.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    /// `GET`, `DELETE`, …
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The decoded query parameters.
    pub query: BTreeMap<String, String>,
}

impl Recorded {
    /// A query parameter's value, or `""`.
    pub fn param(&self, name: &str) -> &str {
        self.query.get(name).map_or("", String::as_str)
    }
}

/// What a scripted fault does to a matching request.
#[derive(Clone, Debug)]
pub enum Fault {
    /// Answer with this status code and message (a kube `Status`).
    Status(u16, String),
    /// Answer normally, after this long.
    Slow(Duration),
    /// Close the connection without answering.
    Drop,
}

#[derive(Clone, Debug)]
struct Rule {
    method: &'static str,
    path_prefix: String,
    fault: Fault,
}

#[derive(Default)]
struct State {
    nodes: Vec<Value>,
    pods: Vec<Value>,
    leases: Vec<Value>,
    requests: Vec<Recorded>,
    rules: Vec<Rule>,
    /// The most items one LIST page holds, whatever `limit` asks (servers may return fewer).
    max_page: Option<usize>,
    resource_version: u64,
}

/// The running server. Dropping it stops the server.
pub struct FakeApiServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    kubeconfig: PathBuf,
    _runtime: tokio::runtime::Runtime,
}

impl FakeApiServer {
    /// Starts an empty server and writes a kubeconfig for it into `dir`.
    pub fn start(dir: &Path) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime for the fake API server");
        let state = Arc::new(Mutex::new(State { resource_version: 1000, ..State::default() }));
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).expect("bind a loopback port");
        let addr = listener.local_addr().expect("bound address");
        let served = state.clone();
        runtime.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let state = served.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |request| handle(state.clone(), request));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        let kubeconfig = dir.join("kubeconfig");
        std::fs::write(&kubeconfig, kubeconfig_yaml(addr)).expect("write the kubeconfig");
        Self { addr, state, kubeconfig, _runtime: runtime }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The kubeconfig that points at this server (context `fake`, namespace `default`).
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("fake API server state")
    }

    /// Loads every Node, Pod and Lease of a `v1` `List`.
    pub fn load(&self, list: &Value) {
        for item in list["items"].as_array().into_iter().flatten() {
            self.add(item.clone());
        }
    }

    /// Adds (or replaces, by namespace and name) one object.
    pub fn add(&self, object: Value) {
        let mut state = self.state();
        state.resource_version += 1;
        let version = state.resource_version.to_string();
        let mut object = object;
        object["metadata"]["resourceVersion"] = json!(version);
        let bucket = match object["kind"].as_str() {
            Some("Node") => &mut state.nodes,
            Some("Pod") => &mut state.pods,
            Some("Lease") => &mut state.leases,
            _ => return,
        };
        let id = |o: &Value| (o["metadata"]["namespace"].clone(), o["metadata"]["name"].clone());
        bucket.retain(|o| id(o) != id(&object));
        bucket.push(object);
    }

    /// Scripts `fault` for every `method` request whose path starts with `path_prefix`.
    pub fn fail(&self, method: &'static str, path_prefix: &str, fault: Fault) {
        self.state().rules.push(Rule { method, path_prefix: path_prefix.to_owned(), fault });
    }

    /// Caps every LIST page at `items` items.
    pub fn cap_pages(&self, items: usize) {
        self.state().max_page = Some(items);
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.state().requests.clone()
    }
}

fn kubeconfig_yaml(addr: SocketAddr) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: http://{addr}\n\
         contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\n    namespace: default\n\
         current-context: fake\nusers:\n- name: fake\n  user:\n    token: fake-token\n"
    )
}

type Reply = Result<Response<Full<Bytes>>, std::io::Error>;

fn reply(code: u16, body: &Value) -> Reply {
    let response = Response::builder()
        .status(StatusCode::from_u16(code).expect("a valid status code"))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("a valid response");
    Ok(response)
}

/// A kube `Status` failure, as the API server writes it.
pub fn status(code: u16, message: &str) -> Value {
    let reason = match code {
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "NotFound",
        409 => "Conflict",
        410 => "Expired",
        429 => "TooManyRequests",
        _ => "InternalError",
    };
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": message, "reason": reason, "code": code})
}

async fn handle(state: Arc<Mutex<State>>, request: Request<Incoming>) -> Reply {
    let recorded = Recorded {
        method: request.method().to_string(),
        path: request.uri().path().to_owned(),
        query: form_urlencoded::parse(request.uri().query().unwrap_or("").as_bytes()).into_owned().collect(),
    };
    let fault = {
        let mut state = state.lock().expect("state");
        state.requests.push(recorded.clone());
        state
            .rules
            .iter()
            .find(|r| r.method == recorded.method && recorded.path.starts_with(&r.path_prefix))
            .map(|r| r.fault.clone())
    };
    match fault {
        Some(Fault::Status(code, message)) => return reply(code, &status(code, &message)),
        Some(Fault::Drop) => return Err(std::io::Error::other("connection dropped by the test")),
        // Simulated server latency (not synchronisation): the answer leaves this much later.
        Some(Fault::Slow(delay)) => tokio::time::sleep_until(tokio::time::Instant::now() + delay).await,
        None => {}
    }
    let state = state.lock().expect("state");
    route(&state, &recorded)
}

fn route(state: &State, r: &Recorded) -> Reply {
    if r.method != "GET" {
        return reply(405, &status(405, "method not allowed"));
    }
    let segments: Vec<&str> = r.path.trim_matches('/').split('/').collect();
    match segments.as_slice() {
        ["version"] => {
            reply(200, &json!({"major": "1", "minor": "33", "gitVersion": "v1.33.0", "platform": "linux/amd64"}))
        }
        ["api"] => reply(
            200,
            &json!({"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}),
        ),
        ["apis"] => reply(
            200,
            &json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": [{
            "name": "coordination.k8s.io", "versions": [{"groupVersion": "coordination.k8s.io/v1", "version": "v1"}],
            "preferredVersion": {"groupVersion": "coordination.k8s.io/v1", "version": "v1"}}]}),
        ),
        ["api", "v1"] => reply(
            200,
            &json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "v1", "resources": [
            {"name": "nodes", "singularName": "node", "namespaced": false, "kind": "Node", "verbs": ["get", "list", "watch"], "shortNames": ["no"]},
            {"name": "pods", "singularName": "pod", "namespaced": true, "kind": "Pod", "verbs": ["get", "list", "watch", "delete"], "shortNames": ["po"]}]}),
        ),
        ["apis", "coordination.k8s.io", "v1"] => reply(
            200,
            &json!({"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": "coordination.k8s.io/v1", "resources": [
            {"name": "leases", "singularName": "lease", "namespaced": true, "kind": "Lease", "verbs": ["get", "list"]}]}),
        ),
        ["api", "v1", "nodes"] => {
            list(state, r, "NodeList", state.nodes.iter().filter(|n| labels_match(n, r.param("labelSelector"))))
        }
        ["api", "v1", "nodes", name] => get(&state.nodes, None, name, "nodes"),
        ["api", "v1", "pods"] => {
            list(state, r, "PodList", state.pods.iter().filter(|p| fields_match(p, r.param("fieldSelector"))))
        }
        ["api", "v1", "namespaces", ns, "pods"] => list(
            state,
            r,
            "PodList",
            state
                .pods
                .iter()
                .filter(|p| p["metadata"]["namespace"] == *ns && fields_match(p, r.param("fieldSelector"))),
        ),
        ["api", "v1", "namespaces", ns, "pods", name] => get(&state.pods, Some(ns), name, "pods"),
        ["apis", "coordination.k8s.io", "v1", "namespaces", ns, "leases", name] => {
            get(&state.leases, Some(ns), name, "leases.coordination.k8s.io")
        }
        _ => reply(404, &status(404, "the server could not find the requested resource")),
    }
}

fn get(objects: &[Value], namespace: Option<&str>, name: &str, resource: &str) -> Reply {
    let found = objects
        .iter()
        .find(|o| o["metadata"]["name"] == name && namespace.is_none_or(|ns| o["metadata"]["namespace"] == ns));
    match found {
        Some(object) => reply(200, object),
        None => reply(404, &status(404, &format!("{resource} \"{name}\" not found"))),
    }
}

fn list<'a>(state: &State, r: &Recorded, kind: &str, items: impl Iterator<Item = &'a Value>) -> Reply {
    let items: Vec<&Value> = items.collect();
    let start: usize = match r.param("continue") {
        "" => 0,
        token => match token.parse() {
            Ok(offset) => offset,
            Err(_) => return reply(410, &status(410, "the provided continue parameter is too old")),
        },
    };
    let limit = r.param("limit").parse::<usize>().ok().filter(|&l| l > 0).unwrap_or(usize::MAX);
    let limit = state.max_page.map_or(limit, |cap| cap.min(limit));
    let end = start.saturating_add(limit).min(items.len());
    let page: Vec<Value> = items[start.min(end)..end]
        .iter()
        .map(|item| {
            // The API server leaves kind and apiVersion out of typed list items.
            let mut item = (*item).clone();
            if let Some(object) = item.as_object_mut() {
                object.remove("kind");
                object.remove("apiVersion");
            }
            item
        })
        .collect();
    let mut metadata = json!({"resourceVersion": state.resource_version.to_string()});
    if end < items.len() {
        metadata["continue"] = json!(end.to_string());
        metadata["remainingItemCount"] = json!(items.len() - end);
    }
    reply(200, &json!({"kind": kind, "apiVersion": "v1", "metadata": metadata, "items": page}))
}

/// Equality-based label selectors (`k=v`, `k==v`, `k!=v`, `k`, `!k`), enough for the tests.
fn labels_match(object: &Value, selector: &str) -> bool {
    let labels = &object["metadata"]["labels"];
    selector.split(',').filter(|t| !t.is_empty()).all(|term| {
        if let Some(key) = term.strip_prefix('!') {
            labels.get(key).is_none()
        } else if let Some((key, value)) = term.split_once("!=") {
            labels[key] != value
        } else if let Some((key, value)) = term.split_once("==").or_else(|| term.split_once('=')) {
            labels[key] == value
        } else if let Some((key, set)) = term.split_once(" in ") {
            let values: Vec<&str> = set.trim_matches(|c| c == '(' || c == ')').split(',').map(str::trim).collect();
            labels[key.trim()].as_str().is_some_and(|v| values.contains(&v))
        } else {
            labels.get(term).is_some()
        }
    })
}

/// The pod field selectors the API server supports for `spec.nodeName`.
fn fields_match(pod: &Value, selector: &str) -> bool {
    let node = pod["spec"]["nodeName"].as_str().unwrap_or("");
    selector.split(',').filter(|t| !t.is_empty()).all(|term| {
        if let Some(value) = term.strip_prefix("spec.nodeName!=") {
            node != value
        } else if let Some(value) = term.strip_prefix("spec.nodeName==").or_else(|| term.strip_prefix("spec.nodeName="))
        {
            node == value
        } else {
            false
        }
    })
}
