//! The rules that need no prediction: an owner whose every running replica shares one node, or one
//! zone, in a cluster of several; and an outage the audit could not predict, said as a finding
//! rather than passed over (docs/audit.md).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::finding::{Finding, Findings, Rule, Severity};
use crate::model::NodeName;
use crate::snapshot::{Owner, Snapshot, SnapshotPod};

/// One finding per owner (not a DaemonSet's, whose pods are per node by design) whose running
/// replicas all run on one node ([`Rule::ReplicasOnOneNode`]) of a cluster of several nodes, else in
/// one zone ([`Rule::ReplicasInOneZone`]) of a cluster of several zones; `zones` gives each node's
/// zone name (the controller's: a node without zone labels is in `""`). Owners `reported` already
/// (sorted: a predicted outage takes them all) are left out, and with `only` (sorted), the owners whose
/// replicas run elsewhere: as `audit -l` keeps the outages of those nodes. By namespace and owner.
#[must_use]
pub fn placement_findings<'a>(
    snapshot: &'a Snapshot,
    zones: &'a HashMap<NodeName, String>,
    reported: &[(&str, &Owner)],
    only: Option<&[NodeName]>,
) -> Findings<'a> {
    let every_zone: BTreeSet<&str> =
        snapshot.nodes.iter().filter_map(|node| zones.get(&node.name)).map(String::as_str).collect();
    let mut owners: BTreeMap<(&'a str, &'a Owner), Vec<&'a SnapshotPod>> = BTreeMap::new();
    for pod in snapshot.pods.iter().filter(|pod| pod.runs()) {
        let Some(owner) = pod.owner.as_ref() else { continue };
        // An owner an outage reported already is not gathered: a cluster can have an owner per pod.
        let key = (pod.pod.key.namespace(), owner);
        if owner.kind() != "DaemonSet" && reported.binary_search(&key).is_err() {
            owners.entry(key).or_default().push(pod);
        }
    }
    let found = owners.into_iter().filter_map(|((namespace, owner), pods)| {
        let nodes: BTreeSet<&NodeName> = pods.iter().filter_map(|pod| pod.pod.node.as_ref()).collect();
        if only.is_some_and(|only| nodes.iter().any(|node| only.binary_search(node).is_err())) {
            return None;
        }
        let in_zones: BTreeSet<&str> = nodes.iter().filter_map(|node| zones.get(*node)).map(String::as_str).collect();
        let (rule, place) = match (nodes.iter().next(), in_zones.iter().next()) {
            (Some(node), _) if nodes.len() == 1 && snapshot.nodes.len() > 1 => (Rule::ReplicasOnOneNode, node.as_str()),
            (_, Some(zone)) if in_zones.len() == 1 && every_zone.len() > 1 => (Rule::ReplicasInOneZone, *zone),
            _ => return None,
        };
        let finding = Finding {
            rule,
            severity: Severity::High,
            namespace,
            owner: Some(owner),
            pods: &[],
            toleration: None,
            taint: None,
            seconds: None,
            scenario: None,
            at: None,
            place: Some(place),
        };
        Some((finding, pods))
    });
    Findings::of_others(found.collect::<Vec<_>>())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::scenarios::tests::{bound_pod, owner};
    use crate::snapshot::SnapshotNode;
    use crate::time::Timestamp;

    #[test]
    fn replicas_sharing_a_node_or_a_zone_are_found_unless_an_outage_said_so() {
        let t = Timestamp::from_unix_seconds;
        let (db, web, one, agent) = (
            owner("StatefulSet", "db"),
            owner("ReplicaSet", "web"),
            owner("ReplicaSet", "one"),
            owner("DaemonSet", "a"),
        );
        let nodes = [("za-1", "za"), ("za-2", "za"), ("zb-1", "zb")];
        let zones: HashMap<NodeName, String> = nodes.iter().map(|(n, z)| ((*n).into(), (*z).to_owned())).collect();
        let snapshot = Snapshot {
            nodes: nodes.iter().map(|(name, _)| SnapshotNode::new((*name).into(), Default::default(), [])).collect(),
            pods: vec![
                bound_pod("db-0", "za-1", &db, t(0)),
                bound_pod("db-1", "za-2", &db, t(0)),
                bound_pod("web-0", "za-1", &web, t(0)),
                bound_pod("web-1", "zb-1", &web, t(0)),
                bound_pod("one-0", "zb-1", &one, t(0)),
                bound_pod("a-0", "zb-1", &agent, t(0)),
            ],
            ..Snapshot::default()
        };
        let found = placement_findings(&snapshot, &zones, &[], None);
        let said: Vec<(Rule, &str, Option<&str>, usize)> =
            found.iter().map(|f| (f.rule, f.owner.expect("an owner").name(), f.place, f.pods.len())).collect();
        assert_eq!(
            said,
            [(Rule::ReplicasOnOneNode, "one", Some("zb-1"), 1), (Rule::ReplicasInOneZone, "db", Some("za"), 2)]
        );
        assert!(found.iter().all(|f| f.severity == Severity::High));
        // An owner a predicted outage reported already is not said twice.
        let reported = [("shop", &db)];
        let found = placement_findings(&snapshot, &zones, &reported, None);
        assert_eq!(found.iter().map(|f| f.owner.expect("an owner").name()).collect::<Vec<_>>(), ["one"]);
    }
}
