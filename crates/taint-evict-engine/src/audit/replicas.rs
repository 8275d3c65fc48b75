//! The rule the scenarios decide: an owner that loses every running replica in one outage.

use super::finding::Findings;
use super::scenarios::{Down, Outcome, Scenario};
use crate::plan::OwnerLoss;
use crate::snapshot::{Owner, Snapshot, SnapshotPod};

/// One finding per owner left with no running replica by some scenario: the smallest outage that
/// does it (a node's before a zone's, then by name), with its running pods and when the last one
/// goes. By namespace and owner.
#[must_use]
pub fn replica_findings<'a>(snapshot: &'a Snapshot, scenarios: &'a [Scenario<'a>]) -> Findings<'a> {
    let by_size = || {
        let nodes = scenarios.iter().filter(|s| matches!(s.down, Down::Node(_)));
        nodes.chain(scenarios.iter().filter(|s| matches!(s.down, Down::Zone(_)))).enumerate().flat_map(
            |(rank, scenario)| {
                let Outcome::Predicted { owners, .. } = &scenario.outcome;
                owners.iter().filter(|loss| loss.none_left()).map(move |loss| (rank, &scenario.down, loss))
            },
        )
    };
    // Sized once, as `owned` below: a cluster can have an owner per pod, each lost in an outage.
    let mut losses: Vec<(usize, &'a Down, &'a OwnerLoss<'a>)> = Vec::with_capacity(by_size().count());
    losses.extend(by_size());
    losses.sort_unstable_by(|(a_rank, _, a), (b_rank, _, b)| key(a).cmp(&key(b)).then(a_rank.cmp(b_rank)));
    losses.dedup_by(|(_, _, later), (_, _, first)| key(later) == key(first));
    // Each running pod of those owners, by owner, in the snapshot's order.
    let mut owned: Vec<(usize, &'a SnapshotPod)> =
        Vec::with_capacity(losses.iter().map(|(_, _, loss)| loss.pods as usize).sum());
    if !losses.is_empty() {
        for pod in snapshot.pods.iter().filter(|pod| pod.runs()) {
            let Some(owner) = pod.owner.as_ref() else { continue };
            let wanted = (pod.pod.key.namespace(), owner);
            if let Ok(at) = losses.binary_search_by(|(_, _, loss)| key(loss).cmp(&wanted)) {
                owned.push((at, pod));
            }
        }
    }
    owned.sort_by_key(|(at, _)| *at);
    let mut start = 0;
    let mut ranges = Vec::with_capacity(losses.len());
    for (at, (_, down, loss)) in losses.into_iter().enumerate() {
        let end = start + owned[start..].iter().take_while(|(of, _)| *of == at).count();
        ranges.push((down, loss, start..end));
        start = end;
    }
    Findings::of_losses(ranges, owned.into_iter().map(|(_, pod)| pod).collect())
}

/// What a loss is of: its owner in its namespace.
fn key<'a>(loss: &OwnerLoss<'a>) -> (&'a str, &'a Owner) {
    (&**loss.namespace, loss.owner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::finding::{Rule, Severity};
    use crate::audit::scenarios::tests::{bound_pod, owner};
    use crate::model::NodeName;
    use crate::time::Timestamp;

    #[test]
    fn an_owner_is_found_once_by_its_smallest_outage_with_its_running_pods() {
        let (db, web) = (owner("StatefulSet", "db"), owner("ReplicaSet", "web"));
        let (t, shop) = (Timestamp::from_unix_seconds, std::sync::Arc::from("shop"));
        let loss =
            |owner, pods, deleted, last| OwnerLoss { namespace: &shop, owner, pods, deleted, first: t(10), last };
        let zone = crate::lifecycle::ZoneKey::new("r", "za");
        let scenarios = vec![
            Scenario {
                down: Down::Zone(zone),
                outcome: Outcome::Predicted { owners: vec![loss(&db, 2, 2, Some(t(30)))], nodes: Vec::new() },
            },
            Scenario {
                down: Down::Node(NodeName::from("n1")),
                outcome: Outcome::Predicted { owners: vec![loss(&db, 2, 1, Some(t(20)))], nodes: Vec::new() },
            },
            Scenario {
                down: Down::Node(NodeName::from("n2")),
                outcome: Outcome::Predicted {
                    owners: vec![loss(&db, 2, 2, None), loss(&web, 1, 1, Some(t(40)))],
                    nodes: Vec::new(),
                },
            },
        ];
        let mut leaving = bound_pod("db-2", "n1", &db, t(0));
        leaving.terminating = true;
        let pods = vec![
            bound_pod("db-1", "n2", &db, t(0)),
            bound_pod("web-1", "n2", &web, t(0)),
            leaving,
            bound_pod("db-0", "n1", &db, t(0)),
        ];
        let snapshot = Snapshot { pods, ..Snapshot::default() };
        let findings = replica_findings(&snapshot, &scenarios);
        let found: Vec<_> = findings.iter().collect();
        // By namespace and owner (its kind first); each with its running pods in the snapshot's order.
        let said: Vec<(&str, Vec<&str>)> = found
            .iter()
            .map(|f| (f.owner.expect("an owner").name(), f.pods.iter().map(|p| p.pod.key.name()).collect()))
            .collect();
        assert_eq!(said, [("web", vec!["web-1"]), ("db", vec!["db-1", "db-0"])]);
        // db: n2's outage (a node's) before the zone's, though the zone's window is closed.
        assert_eq!((found[1].scenario, found[1].at), (Some(&Down::Node(NodeName::from("n2"))), None));
        assert!(found.iter().all(|f| f.rule == Rule::LosesEveryReplica && f.severity == Severity::High));
    }
}
