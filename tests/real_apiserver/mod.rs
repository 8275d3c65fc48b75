//! The real control-plane tier: the same behaviours as against the fake API server, proven on the
//! upstream kube-apiserver, etcd and kube-controller-manager (`taint_evict_test_support::control_plane`).
//! Run exactly this tier with `cargo nextest run -E 'test(/real_apiserver/)'`. Without the binaries each test says it
//! was skipped and passes; `.ci/run` sets `TAINT_EVICT_REQUIRE_REAL_APISERVER=1` so that CI cannot skip.

mod audit;
mod audit_held;
mod connect;
mod election;
mod evict;
mod faults;
mod game_day;
mod guards;
mod harness;
mod incident;
mod jsonpath;
mod large_zone;
mod lifecycle;
mod live_lifecycle;
mod node_back;
mod outage;
mod plan;
mod profile;
mod protobuf;
mod rbac;
mod record;
mod requests;
mod review;
mod run;
mod side_by_side;
mod skew;
mod swap;
mod taint_written;

use serde_json::{Value, json};

pub use taint_evict_test_support::control_plane::{ControlPlane, Identity, Options};

/// The taint the tests put on nodes (the node-lifecycle controller's own keys stay out of the way).
pub const TAINT: &str = "example.com/drain";

/// Starts a control plane with default options, or returns from the test (skipped) when there is none.
#[macro_export]
macro_rules! control_plane {
    ($name:expr) => {
        $crate::control_plane!($name, &$crate::real_apiserver::Options::default())
    };
    ($name:expr, $options:expr) => {
        match $crate::real_apiserver::ControlPlane::start($name, $options) {
            Some(plane) => plane,
            None => return,
        }
    };
}

/// A Ready node, with `labels` and NoExecute `taints`.
pub fn node(name: &str, labels: &[(&str, &str)], taints: &[Value]) -> Value {
    let mut all = serde_json::Map::new();
    all.insert("kubernetes.io/hostname".into(), json!(name));
    for (key, value) in labels {
        all.insert((*key).into(), json!(value));
    }
    let now = jiff::Timestamp::now().round(jiff::Unit::Second).expect("round").to_string();
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": all},
           "spec": {"taints": taints},
           "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                       "lastHeartbeatTime": now, "lastTransitionTime": now}]}})
}

/// The test taint, added at `added`.
pub fn taint(added: jiff::Timestamp) -> Value {
    json!({"key": TAINT, "value": "now", "effect": "NoExecute",
           "timeAdded": added.round(jiff::Unit::Second).expect("round").to_string()})
}

/// A pod bound to `node` in `namespace`; `seconds`: no toleration of the test taint (`None`), forever
/// (`Some(None)`) or for that many seconds.
pub fn pod(namespace: &str, name: &str, node: &str, seconds: Option<Option<i64>>) -> Value {
    let tolerations = match seconds {
        None => json!([]),
        Some(None) => json!([{"key": TAINT, "operator": "Exists", "effect": "NoExecute"}]),
        Some(Some(s)) => json!([{"key": TAINT, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": s}]),
    };
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "labels": {"app": "test"}},
           "spec": {"nodeName": node, "tolerations": tolerations, "containers": [{"name": "c", "image": "app"}]}})
}

/// A namespace object.
pub fn namespace(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
}
