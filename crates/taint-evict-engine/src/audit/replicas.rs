//! The rule the scenarios decide: an owner that loses every running replica in one outage.

use std::collections::BTreeMap;

use super::finding::{Finding, Rule, Severity};
use super::scenarios::{Down, Outcome, Scenario};
use crate::snapshot::{Owner, Snapshot};

/// One finding per owner left with no running replica by some scenario: the smallest outage that
/// does it (a node's before a zone's, then by name), with its pods and when the last one goes. By
/// namespace and owner.
#[must_use]
pub fn replica_findings<'a>(snapshot: &'a Snapshot, scenarios: &[Scenario<'a>]) -> Vec<Finding<'a>> {
    let mut found: BTreeMap<(&'a str, &'a Owner), Finding<'a>> = BTreeMap::new();
    let by_size = scenarios
        .iter()
        .filter(|s| matches!(s.down, Down::Node(_)))
        .chain(scenarios.iter().filter(|s| matches!(s.down, Down::Zone(_))));
    for scenario in by_size {
        let Outcome::Predicted { owners, .. } = &scenario.outcome else { continue };
        for loss in owners.iter().filter(|loss| loss.none_left()) {
            found.entry((loss.namespace, loss.owner)).or_insert_with(|| Finding {
                rule: Rule::LosesEveryReplica,
                severity: Severity::High,
                namespace: loss.namespace,
                owner: Some(loss.owner),
                pods: Vec::new(),
                toleration: None,
                taint: None,
                seconds: None,
                scenario: Some(scenario.down.clone()),
                at: loss.last,
            });
        }
    }
    if found.is_empty() {
        return Vec::new();
    }
    for pod in snapshot.pods.iter().filter(|pod| pod.runs()) {
        let Some(owner) = pod.owner.as_deref() else { continue };
        if let Some(finding) = found.get_mut(&(pod.pod.key.namespace(), owner)) {
            finding.pods.push(pod);
        }
    }
    found.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::NodeName;
    use crate::plan::OwnerLoss;
    use crate::time::Timestamp;

    #[test]
    fn an_owner_is_found_once_by_its_smallest_outage_with_its_running_pods() {
        let db = Owner { kind: "StatefulSet".into(), name: "db".into(), uid: "u".into() };
        let t = Timestamp::from_unix_seconds;
        let loss = |deleted, last| OwnerLoss { namespace: "shop", owner: &db, pods: 2, deleted, first: t(10), last };
        let zone = crate::lifecycle::ZoneKey::new("r", "za");
        let scenarios = vec![
            Scenario {
                down: Down::Zone(zone),
                outcome: Outcome::Predicted { owners: vec![loss(2, Some(t(30)))], nodes: Vec::new() },
            },
            Scenario {
                down: Down::Node(NodeName::from("n1")),
                outcome: Outcome::Predicted { owners: vec![loss(1, Some(t(20)))], nodes: Vec::new() },
            },
            Scenario {
                down: Down::Node(NodeName::from("n2")),
                outcome: Outcome::Predicted { owners: vec![loss(2, None)], nodes: Vec::new() },
            },
        ];
        let snapshot = Snapshot::default();
        let found = replica_findings(&snapshot, &scenarios);
        assert_eq!(found.len(), 1);
        // n2's outage (a node's) before the zone's, though the zone's window is closed.
        assert_eq!((found[0].scenario.clone(), found[0].at), (Some(Down::Node(NodeName::from("n2"))), None));
        assert_eq!(found[0].rule, Rule::LosesEveryReplica);
    }
}
