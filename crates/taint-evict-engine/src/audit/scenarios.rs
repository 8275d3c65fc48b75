//! The outages an audit predicts: one per zone and one per node, each as `plan --down` predicts it
//! (docs/game-day.md): the node lifecycle controller's taints for the nodes going down, the
//! deletions they bring, and the owners that lose pods.

use std::collections::BTreeSet;

use crate::lifecycle::{NodeForecast, Observation, ZoneKey, predict, unsettled};
use crate::model::NodeName;
use crate::plan::{Assumed, OwnerLoss};
use crate::planner::{Evidence, Foresight, Request, build};
use crate::replay::Host;
use crate::snapshot::Snapshot;

/// What goes down in a scenario: every kubelet of a zone, or one node's.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Down {
    /// The zone's nodes (nodes without a zone label are one zone, as upstream counts them).
    Zone(ZoneKey),
    /// One node.
    Node(NodeName),
}

/// What a scenario predicts.
#[derive(Clone, Debug)]
pub enum Outcome<'a> {
    /// Predicted: the owners losing pods ([`crate::plan::owner_losses`]'s order: those left with
    /// none first), and what the controller does to each node going down (its taint's window, or
    /// why it holds it back).
    Predicted {
        /// The owners losing pods.
        owners: Vec<OwnerLoss<'a>>,
        /// The nodes going down, in the observation's order.
        nodes: Vec<NodeForecast>,
    },
    /// More nodes would be silent or not ready at once than `max_unsettled`: not predicted.
    TooLarge(usize),
}

/// One outage and what it brings.
#[derive(Clone, Debug)]
pub struct Scenario<'a> {
    /// What goes down.
    pub down: Down,
    /// What follows.
    pub outcome: Outcome<'a>,
}

/// What every scenario shares.
#[derive(Clone, Copy)]
pub struct Setting<'a> {
    /// Node health as read (`now` included; a dump read late, judged when it was taken): the nodes
    /// of each scenario go down from it.
    pub observation: &'a Observation,
    /// A scenario with more nodes unsettled than this is not predicted (the prediction's search
    /// grows with their square).
    pub max_unsettled: usize,
    /// Only this namespace's owners.
    pub namespace: Option<&'a str>,
    /// Only the outages of these nodes (sorted) and of their zones; `None`: every node's.
    pub only: Option<&'a [NodeName]>,
    /// Who runs the replay's parts.
    pub host: Host<'a>,
}

/// The scenarios over `snapshot`: one per zone (by key), then one per node (by name), each
/// predicted as `plan --down` with those nodes predicts it.
#[must_use]
pub fn scenarios<'s>(snapshot: &'s Snapshot, setting: &Setting<'_>) -> Vec<Scenario<'s>> {
    let observed = setting.observation;
    let audited = |name: &NodeName| setting.only.is_none_or(|only| only.binary_search(name).is_ok());
    let nodes = observed.nodes.iter().filter(|node| audited(&node.name));
    let zones: BTreeSet<&ZoneKey> = nodes.clone().map(|node| &node.zone).collect();
    let mut names: Vec<&NodeName> = nodes.map(|node| &node.name).collect();
    names.sort();
    let downs = zones
        .into_iter()
        .map(|zone| Down::Zone(zone.clone()))
        .chain(names.into_iter().map(|name| Down::Node(name.clone())));
    downs.map(|down| Scenario { outcome: outcome(snapshot, setting, &down), down }).collect()
}

/// What follows when `down` goes down.
fn outcome<'s>(snapshot: &'s Snapshot, setting: &Setting<'_>, down: &Down) -> Outcome<'s> {
    let mut observation = setting.observation.clone();
    let goes_down = |name: &NodeName, zone: &ZoneKey| match down {
        Down::Zone(key) => zone == key,
        Down::Node(node) => name == node,
    };
    let mut names = Vec::new();
    for node in &mut observation.nodes {
        if goes_down(&node.name, &node.zone) {
            node.down = true;
            names.push(node.name.clone());
        }
    }
    let unsettled = unsettled(&observation);
    if unsettled > setting.max_unsettled {
        return Outcome::TooLarge(unsettled);
    }
    let prediction = predict(&observation);
    let selected: Vec<usize> =
        snapshot.nodes.iter().enumerate().filter(|(_, node)| names.contains(&node.name)).map(|(i, _)| i).collect();
    let assumed = Assumed { changes: Vec::new(), down: names, down_selector: None };
    let request = Request {
        selected: &selected,
        what_if: &[],
        now: observation.now,
        flags: observation.flags,
        assumed: Some(&assumed),
        namespace: setting.namespace,
        host: setting.host,
    };
    let foresight = Foresight { observation: &observation, prediction: Some(&prediction) };
    let evidence = Evidence { lifecycle: Some(foresight), ..Evidence::default() };
    let (plan, _) = build(snapshot, &request, &evidence);
    // The forecasts are in the observation's order: those of the nodes marked down.
    let going = prediction.nodes.into_iter().zip(&observation.nodes).filter(|(_, node)| node.down);
    let nodes = going.map(|(forecast, _)| forecast).collect();
    Outcome::Predicted { owners: plan.owners.unwrap_or_default(), nodes }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::lifecycle::{Flags, HeldReason, NOT_READY, NodeHealth, Ready, ReadyCondition, UNREACHABLE};
    use crate::model::{Effect, Pod, PodKey, Toleration};
    use crate::snapshot::{Owner, SnapshotNode, SnapshotPod};
    use crate::time::Timestamp;

    fn t(seconds: i64) -> Timestamp {
        Timestamp::from_unix_seconds(1_795_341_600 + seconds)
    }

    /// A node of `zone` heartbeating: its Lease renewed a second before `now` (t(0)).
    fn healthy(name: &str, zone: &str) -> NodeHealth {
        NodeHealth {
            name: name.into(),
            zone: ZoneKey::new("r1", zone),
            excluded: false,
            created: Some(t(-86_400)),
            ready: Some(Box::new(ReadyCondition {
                status: Ready::True,
                reason: "KubeletReady".into(),
                last_heartbeat: Some(t(-1)),
                last_transition: Some(t(-86_400)),
            })),
            lease_renewed: Some(t(-1)),
            taints: Vec::new().into(),
            down: false,
        }
    }

    /// `DefaultTolerationSeconds`' two tolerations (300 s).
    fn pod(name: &str, node: &str, owner: &Arc<Owner>) -> SnapshotPod {
        let toleration = |key: &str| Toleration {
            key: key.into(),
            operator: "Exists".into(),
            value: Box::default(),
            effect: Some(Effect::NoExecute),
            seconds: Some(300),
        };
        let tolerations = Arc::from([toleration(NOT_READY), toleration(UNREACHABLE)]);
        let pod = Pod { key: PodKey::new("shop", name), uid: name.into(), node: Some(node.into()), tolerations };
        SnapshotPod { owner: Some(Arc::clone(owner)), ..SnapshotPod::running(pod, Some(t(-3600))) }
    }

    fn owner(kind: &str, name: &str) -> Arc<Owner> {
        Arc::new(Owner { kind: kind.into(), name: name.into(), uid: format!("{name}-uid").into() })
    }

    /// Zone `za`: three nodes, the StatefulSet `db`'s two replicas and one of `web`'s; zone `zb`: one
    /// node, `web`'s other replica.
    fn cluster() -> (Snapshot, Observation) {
        let nodes = [("za-1", "za"), ("za-2", "za"), ("za-3", "za"), ("zb-1", "zb")];
        let (db, web) = (owner("StatefulSet", "db"), owner("ReplicaSet", "web"));
        let snapshot = Snapshot {
            nodes: nodes.iter().map(|(name, _)| SnapshotNode::new((*name).into(), Default::default(), [])).collect(),
            pods: vec![
                pod("db-0", "za-1", &db),
                pod("db-1", "za-2", &db),
                pod("web-a", "za-3", &web),
                pod("web-b", "zb-1", &web),
            ],
            ..Snapshot::default()
        };
        let observation = Observation {
            now: t(0),
            nodes: nodes.iter().map(|(name, zone)| healthy(name, zone)).collect(),
            controller: None,
            flags: Flags::defaults_for(29),
            silent_after: Duration::from_secs(12),
        };
        (snapshot, observation)
    }

    fn setting(observation: &Observation, max_unsettled: usize) -> Setting<'_> {
        Setting { observation, max_unsettled, namespace: None, only: None, host: Host::default() }
    }

    /// Each scenario's owners losing pods: (kind/name, deleted, of, none left).
    fn losses<'a>(scenario: &Scenario<'a>) -> Vec<(String, usize, usize, bool)> {
        let Outcome::Predicted { owners, .. } = &scenario.outcome else { panic!("{:?} not predicted", scenario.down) };
        owners
            .iter()
            .map(|o| (format!("{}/{}", o.owner.kind, o.owner.name), o.deleted, o.pods, o.none_left()))
            .collect()
    }

    #[test]
    fn one_scenario_per_zone_then_per_node_with_the_owners_each_leaves_without_replicas() {
        let (snapshot, observation) = cluster();
        let setting = setting(&observation, 200);
        let scenarios = scenarios(&snapshot, &setting);
        let downs: Vec<String> = scenarios
            .iter()
            .map(|s| match &s.down {
                Down::Zone(zone) => format!("zone {}", zone.name()),
                Down::Node(node) => format!("node {node}"),
            })
            .collect();
        assert_eq!(downs, ["zone za", "zone zb", "node za-1", "node za-2", "node za-3", "node zb-1"]);
        let db_gone = ("StatefulSet/db".to_owned(), 2, 2, true);
        assert_eq!(losses(&scenarios[0]), vec![db_gone, ("ReplicaSet/web".to_owned(), 1, 2, false)]);
        assert_eq!(losses(&scenarios[1]), vec![("ReplicaSet/web".to_owned(), 1, 2, false)]);
        assert_eq!(losses(&scenarios[2]), vec![("StatefulSet/db".to_owned(), 1, 2, false)]);
        // `za` down is fully disrupted while `zb` is not: tainted at the normal rate, one node per 10 s.
        let Outcome::Predicted { owners, nodes } = &scenarios[0].outcome else { panic!("predicted") };
        assert_eq!(nodes.iter().map(|n| n.name.as_str()).collect::<Vec<_>>(), ["za-1", "za-2", "za-3"]);
        assert!(nodes.iter().all(|n| n.taint.is_some() && n.held.is_none()), "{nodes:?}");
        // The taints come 40 s of grace and a pass or two after the last heartbeat, then 300 s each:
        // the last of `db` within the three slots of the zone's queue.
        let db = &owners[0];
        assert!(db.first >= t(340) && db.first <= t(360), "first deletion {:?}", db.first);
        let last = db.last.expect("no zone holds its taints");
        assert!(last >= t(360) && last <= t(380), "last deletion {last:?}");
    }

    #[test]
    fn a_cluster_of_one_zone_losing_it_is_held_and_loses_nothing() {
        // Every zone fully disrupted: the controller adds no NoExecute taint (master disruption mode).
        let (mut snapshot, mut observation) = cluster();
        observation.nodes.retain(|node| node.zone.name() == "za");
        snapshot.nodes.retain(|node| node.name.as_str().starts_with("za"));
        snapshot.pods.retain(|pod| pod.pod.node.as_ref().is_some_and(|node| node.as_str().starts_with("za")));
        let setting = setting(&observation, 200);
        let scenarios = scenarios(&snapshot, &setting);
        let Outcome::Predicted { owners, nodes } = &scenarios[0].outcome else { panic!("predicted") };
        assert!(owners.is_empty(), "{owners:?}");
        let held: Vec<_> = nodes.iter().map(|n| n.held.as_ref().map(|held| held.reason)).collect();
        assert_eq!(held, [Some(HeldReason::AllZonesDown); 3]);
        // One node of three: Normal, tainted; `db` loses one of two.
        assert_eq!(losses(&scenarios[1]), vec![("StatefulSet/db".to_owned(), 1, 2, false)]);
    }

    #[test]
    fn only_the_outages_of_the_nodes_asked_for_and_of_their_zones() {
        let (snapshot, observation) = cluster();
        let only = [NodeName::from("zb-1")];
        let setting = Setting { only: Some(&only), ..setting(&observation, 200) };
        let downs: Vec<Down> = scenarios(&snapshot, &setting).into_iter().map(|s| s.down).collect();
        assert_eq!(downs, [Down::Zone(ZoneKey::new("r1", "zb")), Down::Node("zb-1".into())]);
    }

    #[test]
    fn a_scenario_too_large_to_search_says_how_many_nodes_it_would_take() {
        let (snapshot, observation) = cluster();
        let setting = setting(&observation, 2);
        let scenarios = scenarios(&snapshot, &setting);
        assert!(matches!(scenarios[0].outcome, Outcome::TooLarge(3)), "{:?}", scenarios[0].outcome);
        assert!(matches!(scenarios[1].outcome, Outcome::Predicted { .. }));
    }
}
