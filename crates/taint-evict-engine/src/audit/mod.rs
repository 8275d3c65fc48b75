//! `audit`: what a cluster's tolerations and spread leave exposed before any node goes bad: each
//! finding a rule, a severity and its evidence (the pods, their owner, the toleration at fault), and
//! each zone's and node's outage predicted as `plan --down` predicts it; or, from rendered manifests,
//! each pod template as the cluster will admit it (`templates`). The rules
//! read the pods as the taint-eviction controller reads them (docs/upstream.md) and the node
//! lifecycle controller's flags (docs/node-lifecycle.md).

mod finding;
mod placement;
mod replicas;
mod rules;
mod scenarios;
mod templates;

pub use finding::{Finding, Findings, Rule, Severity};
pub use placement::placement_findings;
pub use replicas::replica_findings;
pub use rules::toleration_findings;
pub use scenarios::{Down, Outcome, Scenario, Setting, scenarios};
pub use templates::{Admission, Cluster, HOSTNAME, Template, TemplateFinding, admitted, template_findings};

#[cfg(test)]
mod vectors;
