//! The taint-eviction engine: upstream's decisions, with no IO and no clock.
//!
//! This module is pure: it imports std and nothing that talks to a network, spawns a task or a
//! thread, reads the time or draws entropy. Inputs come in as values with the instant they happen at;
//! decisions come out as values. What only the operating system has comes from the caller: the key
//! of the keyed hashes ([`Engine::with_hash_key`]), and threads for a replay's parts ([`replay::Host`]).
//! `plan` (a replay of a snapshot on a virtual clock, [`replay`]) and `run` (live watches and a real
//! timer) drive the same [`Engine`], so one code path decides when a pod dies.
//!
//! # Calling the engine
//!
//! The API follows quinn-proto's four families:
//! - `handle(input, now)` feeds an input ([`Input`]); `handle_timeout(now)` fires due timers;
//! - `poll_action()` returns the next [`Action`] to carry out, `poll_timeout()` the instant at which
//!   `handle_timeout` must be called next;
//! - getters take `&self`.
//!
//! After every `handle*` call, drain `poll_action()` and re-arm the one timer from `poll_timeout()`.
//! Instants passed in must not decrease. `handle` fires the timers due at or before `now` first, so at
//! one instant timers fire before the input is applied (the contract's tie rule); the caller orders
//! node inputs before pod inputs (upstream's worker priority).
//!
//! ```
//! use std::sync::Arc;
//! use taint_evict_engine::{Action, Engine, Input, model::*, time::Timestamp};
//!
//! let t = Timestamp::from_unix_seconds;
//! let mut engine = Engine::new();
//! let tolerations: Arc<[Toleration]> = Arc::new([Toleration {
//!     key: "node.kubernetes.io/unreachable".into(),
//!     operator: Operator::Exists,
//!     value: Box::default(),
//!     effect: Some(Effect::NoExecute),
//!     seconds: Some(300),
//! }]);
//! let pod = Pod { key: PodKey::new("web", "api-0"), uid: "u1".into(), node: Some("n1".into()), tolerations };
//! engine.handle(Input::PodUpserted(pod), t(0));
//! let taint = Taint::new("node.kubernetes.io/unreachable", "", Effect::NoExecute);
//! engine.handle(Input::NodeUpserted(Node { name: "n1".into(), taints: vec![taint].into() }), t(100));
//! assert!(matches!(engine.poll_action(), Some(Action::Scheduled { .. })));
//! assert_eq!(engine.poll_timeout(), Some(t(400)));
//! engine.handle_timeout(t(400));
//! assert!(matches!(engine.poll_action(), Some(Action::Evict { .. })));
//! ```
//!
//! Owns: the engine and its model, time and queue, the snapshot `plan` reads, the replay, the plan it
//! makes and the lifecycle prediction (the events `run` reports are the plugin's). Uses: std only (this
//! crate has no dependencies; `tests/repository/layering.rs` of the plugin also checks that no module of it leans
//! on another round a cycle).

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

// The README's example is a doc test too.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub mod audit;
pub mod decide;
pub mod devices;
mod engine;
pub mod explain;
pub mod hash;
mod index;
pub mod lifecycle;
pub mod model;
pub mod observe;
pub mod plan;
pub mod planner;
#[cfg(test)]
mod proptests;
pub mod queue;
pub mod replay;
pub mod review;
#[cfg(test)]
mod sim;
mod slab;
pub mod snapshot;
pub mod start;
pub mod taint_review;
pub mod text;
pub mod time;
pub mod tolerate;
pub mod workloads;

pub use engine::{Action, Engine, Input};
