//! Rendering: plans and explanations as tables, JSON, YAML and kubectl's templates (`jsonpath`,
//! `custom-columns`), written to any `io::Write`.
//!
//! Renderers take the colour decision and the terminal's width as arguments ([`ColorMode`],
//! [`View`]) and never read the clock or the terminal themselves; `now` comes from the plan.
//!
//! Owns: every rendering for people and machines. Uses: the engine's values and `run`'s events
//! (`runtime::report`); never the cluster, the decoder or the CLI.

pub mod audit;
pub mod eviction_plan;
pub mod explain;
mod format;
pub mod human;
pub mod json;
pub mod jsonpath;
pub mod lifecycle;
mod lines;
pub mod manifests;
pub mod node_taints;
pub mod owners;
mod plan;
pub mod profile;
pub mod redraw;
pub mod review;
pub mod run;
pub mod settings;
pub mod summary;
pub mod table;
pub mod template;
pub mod timeline;
mod view;
pub mod watch;
pub mod wire;
mod yaml;

pub use format::OutputFormat;
pub use plan::{plan_document, render_plan, render_plan_settings, render_plan_view};
pub use view::{ColorMode, SortBy, View};
pub use wire::{ClockDoc, Live};
