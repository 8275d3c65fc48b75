//! `audit`: what a cluster's tolerations and spread leave exposed before any node goes bad: each
//! finding a rule, a severity and its evidence (the pods, their owner, the toleration at fault), and
//! each zone's and node's outage predicted as `plan --down` predicts it; or, from rendered manifests,
//! each pod template as the cluster will admit it (`templates`), and the budgets one outage breaks
//! (`budgets`), together (`manifests`). The rules read the pods as the taint-eviction controller
//! reads them (docs/upstream.md) and the node lifecycle controller's flags (docs/node-lifecycle.md).

mod budgets;
mod disruption;
mod finding;
mod manifests;
mod placement;
mod replicas;
mod rules;
mod scenarios;
mod selector;
mod templates;

pub use budgets::{Budget, budget_findings};
pub use disruption::{Breach, Outage, Scaled, Wanted};
pub use finding::{Finding, Findings, Rule, Severity};
pub use manifests::manifest_findings;
pub use placement::placement_findings;
pub use replicas::replica_findings;
pub use rules::toleration_findings;
pub use scenarios::{Down, Outcome, Scenario, Setting, scenarios};
pub use selector::{LabelSelector, Requirement, SelectorOperator};
pub use templates::{Admission, Apart, Cluster, HOSTNAME, Template, TemplateFinding, admitted, template_findings};

#[cfg(test)]
mod vectors;
