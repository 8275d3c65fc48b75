//! The node lifecycle controller (NLC) of kube-controller-manager, predicted from one snapshot.
//!
//! The NLC is what puts `node.kubernetes.io/unreachable:NoExecute` and
//! `node.kubernetes.io/not-ready:NoExecute` on a node whose kubelet went silent (or reported
//! `Ready=False`). [`predict`] answers, for every node not yet carrying the matching taint, the
//! earliest and latest instant the taint can be added, or that the controller holds it back (a small
//! zone in partial disruption, or every zone down). It follows `pkg/controller/nodelifecycle` of
//! Kubernetes 1.29–1.34 rule by rule: the grace period counted from the pass that saw the last
//! heartbeat, the one-pass delay between `Ready=Unknown` and the zone queue, the per-zone token
//! bucket (burst 1, tried every 100 ms), the zone states and their rates, master disruption mode,
//! and a leader change restarting all of it. Up to [`MAX_UNSETTLED`] nodes failing at once every
//! reading is replayed exactly ([`Method::Search`]); past it each zone's queue is drained
//! ([`Method::Drain`], docs/node-lifecycle.md "At scale").
//!
//! Like the rest of the engine this module is pure: inputs are values (`now` included), and the
//! answer is a value. What an observer cannot see (the pass phase, the order in which simultaneous
//! failures leave the queue, the exact token state) widens the window instead of being guessed.
//!
//! ```
//! use std::time::Duration;
//! use taint_evict_engine::lifecycle::*;
//! use taint_evict_engine::time::Timestamp;
//!
//! let t = Timestamp::from_unix_seconds;
//! let node = |name: &str, renewed: i64| NodeHealth {
//!     name: name.into(),
//!     zone: ZoneKey::new("eu", "eu-1a"),
//!     excluded: false,
//!     created: Some(t(0)),
//!     ready: Some(Box::new(ReadyCondition {
//!         status: Ready::True,
//!         reason: "KubeletReady".into(),
//!         last_heartbeat: Some(t(renewed)),
//!         last_transition: Some(t(0)),
//!     })),
//!     lease_renewed: Some(t(renewed)),
//!     taints: Vec::new().into(),
//!     down: false,
//!     ready_pods: 0,
//! };
//! // node-x last renewed its Lease at 1000 s; its five neighbours a second ago.
//! let mut nodes: Vec<NodeHealth> = (0..5).map(|i| node(&format!("ok-{i}"), 1019)).collect();
//! nodes.push(node("node-x", 1000));
//! let prediction = predict(&Observation {
//!     now: t(1020),
//!     nodes,
//!     controller: None, // no leader Lease: the pass phase is unknown
//!     flags: Flags::defaults_for(29),
//!     silent_after: Duration::from_secs(12),
//! });
//! let x = prediction.nodes.iter().find(|n| n.name.as_str() == "node-x").unwrap();
//! let taint = x.taint.expect("node-x will be tainted");
//! assert_eq!((taint.key, taint.basis), (ConditionTaint::Unreachable, Basis::LostHeartbeat));
//! // Grace 40 s from the pass that saw the heartbeat, one pass more to be queued: 45–50 s later.
//! assert!(taint.earliest >= t(1044) && taint.latest.unwrap() <= t(1052));
//! ```

mod client;
mod drain;
mod health;
mod predict;
mod settings;
mod stuck;

pub use health::*;
pub use predict::{Forecaster, MAX_UNSETTLED, Method, predict};
pub use settings::{Given, SettingValue, Settings, Source, Sources};
pub use stuck::{kubelet_gone, stuck_since};

#[cfg(test)]
pub(crate) mod vectors;

#[cfg(test)]
mod nlc_sim;
