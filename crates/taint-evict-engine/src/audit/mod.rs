//! `audit`: what a cluster's tolerations leave exposed before any node goes bad, each finding a
//! rule, a severity and its evidence (the pods, their owner, the toleration at fault). The rules
//! read the pods as the taint-eviction controller reads them (docs/upstream.md) and the node
//! lifecycle controller's flags (docs/node-lifecycle.md).

mod finding;
mod rules;

pub use finding::{Finding, Rule, Severity};
pub use rules::toleration_findings;
