//! The outages an audit predicts: one per zone and one per node, each as `plan --down` predicts it
//! (docs/game-day.md): the node lifecycle controller's taints for the nodes going down, the
//! deletions they bring, and the owners that lose pods.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use crate::lifecycle::{Forecaster, Method, NodeForecast, NodeHealth, Observation, Prediction, ZoneKey};
use crate::model::NodeName;
use crate::plan::{Assumed, OwnerLoss};
use crate::planner::{Evidence, Foresight, Request, Tables, build};
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
    /// A scenario with more nodes unsettled than this is predicted by each zone's drain
    /// ([`Method::Drain`]) rather than the exact search, which grows with their square.
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
///
/// They share one reading of the observation ([`Forecaster`]) and of the snapshot ([`Tables`]): a
/// scenario costs the nodes it takes down, their pods, and the readings of the controller's pass
/// phase, not the whole cluster.
#[must_use]
pub fn scenarios<'s>(snapshot: &'s Snapshot, setting: &Setting<'_>) -> Vec<Scenario<'s>> {
    let observed = setting.observation;
    let audited = |name: &NodeName| setting.only.is_none_or(|only| only.binary_search(name).is_ok());
    let nodes: Vec<usize> = (0..observed.nodes.len()).filter(|&i| audited(&observed.nodes[i].name)).collect();
    let mut zones: BTreeMap<&ZoneKey, Vec<usize>> = BTreeMap::new();
    for &i in &nodes {
        zones.entry(&observed.nodes[i].zone).or_default().push(i);
    }
    let mut by_name = nodes.clone();
    by_name.sort_by(|&a, &b| observed.nodes[a].name.cmp(&observed.nodes[b].name));
    let shared = Shared::new(snapshot, setting);
    // The zones one after another, each replayed in parts of its own: a zone's outage holds as much
    // as a plan of its nodes, and two at once would hold twice that.
    let mut done: Vec<Scenario<'s>> = zones
        .into_iter()
        .map(|(zone, down)| Scenario { down: Down::Zone(zone.clone()), outcome: shared.outcome(&down) })
        .collect();
    let downs: Vec<Down> = by_name.iter().map(|&i| Down::Node(observed.nodes[i].name.clone())).collect();
    // The nodes' outages, small, every `parts`-th in one part.
    let parts = if downs.len() >= IN_TWO_FROM { 2 } else { 1 };
    let parted: Vec<Mutex<Vec<Scenario<'s>>>> = (0..parts).map(|_| Mutex::default()).collect();
    setting.host.parts.each(parts, &|part| {
        let mine = by_name.iter().zip(&downs).skip(part).step_by(parts);
        let scenarios = mine.map(|(&i, down)| Scenario { down: down.clone(), outcome: shared.outcome(&[i]) });
        *parted[part].lock().unwrap_or_else(PoisonError::into_inner) = scenarios.collect();
    });
    let mut parted: Vec<std::vec::IntoIter<Scenario<'s>>> =
        parted.into_iter().map(|part| part.into_inner().unwrap_or_else(PoisonError::into_inner).into_iter()).collect();
    done.extend((0..downs.len()).filter_map(|i| parted[i % parts].next()));
    done
}

/// How many nodes' outages make [`scenarios`] predict them in two parts.
const IN_TWO_FROM: usize = 64;

/// What every scenario reads once.
struct Shared<'s, 'a> {
    snapshot: &'s Snapshot,
    setting: &'a Setting<'a>,
    forecaster: Forecaster<'a>,
    tables: Tables<'s>,
}

impl<'s, 'a> Shared<'s, 'a> {
    fn new(snapshot: &'s Snapshot, setting: &'a Setting<'a>) -> Self {
        Self {
            snapshot,
            setting,
            forecaster: Forecaster::new(setting.observation),
            tables: Tables::new(snapshot, setting.host.key),
        }
    }

    /// What follows when the observed nodes of `down` (indices, ascending) go down.
    fn outcome(&self, down: &[usize]) -> Outcome<'s> {
        let observed = self.setting.observation;
        let method = if self.forecaster.unsettled_with(down) > self.setting.max_unsettled {
            Method::Drain
        } else {
            Method::Search
        };
        let forecasts = self.forecaster.predict_down_by(down, method);
        // The plan reads the health and the forecasts of the nodes it shows: those going down.
        let observation = Observation {
            nodes: down.iter().map(|&i| NodeHealth { down: true, ..observed.nodes[i].clone() }).collect(),
            controller: observed.controller.clone(),
            ..*observed
        };
        let prediction = Prediction { nodes: forecasts, zones: Vec::new(), phase_known: false, at: observed.now };
        let names: Vec<NodeName> = observation.nodes.iter().map(|node| node.name.clone()).collect();
        // The snapshot's node of each name, as `plan --down` takes it.
        let mut selected: Vec<usize> = names.iter().filter_map(|name| self.tables.named().first(name)).collect();
        selected.sort_unstable();
        let assumed = Assumed { changes: Vec::new(), down: names, down_selector: None };
        let request = Request {
            selected: &selected,
            what_if: &[],
            now: observed.now,
            flags: observed.flags,
            assumed: Some(&assumed),
            namespace: self.setting.namespace,
            host: self.setting.host,
            tables: Some(&self.tables),
        };
        let foresight = Foresight { observation: &observation, prediction: Some(&prediction) };
        let evidence = Evidence { lifecycle: Some(foresight), ..Evidence::default() };
        let (plan, _) = build(self.snapshot, &request, &evidence);
        Outcome::Predicted { owners: plan.owners.unwrap_or_default(), nodes: prediction.nodes }
    }
}

#[cfg(test)]
pub(crate) mod tests {
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
            ready_pods: 0,
        }
    }

    /// `DefaultTolerationSeconds`' two tolerations (300 s), bound an hour before t(0).
    fn pod(name: &str, node: &str, owner: &Owner) -> SnapshotPod {
        bound_pod(name, node, owner, t(-3600))
    }

    /// Pod `shop/name` of `owner` running on `node` since `bound_at`, with `DefaultTolerationSeconds`'
    /// two tolerations (300 s).
    pub(crate) fn bound_pod(name: &str, node: &str, owner: &Owner, bound_at: Timestamp) -> SnapshotPod {
        let toleration = |key: &str| Toleration {
            key: key.into(),
            operator: "Exists".into(),
            value: Box::default(),
            effect: Some(Effect::NoExecute),
            seconds: Some(300),
        };
        let tolerations = Arc::from([toleration(NOT_READY), toleration(UNREACHABLE)]);
        let pod = Pod { key: PodKey::new("shop", name), uid: name.into(), node: Some(node.into()), tolerations };
        SnapshotPod { owner: Some(owner.clone()), ..SnapshotPod::running(pod, Some(bound_at)) }
    }

    pub(crate) fn owner(kind: &str, name: &str) -> Owner {
        Owner::new(kind, name, &format!("{name}-uid"))
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
    fn losses<'a>(scenario: &Scenario<'a>) -> Vec<(String, u32, u32, bool)> {
        let Outcome::Predicted { owners, .. } = &scenario.outcome;
        owners
            .iter()
            .map(|o| (format!("{}/{}", o.owner.kind(), o.owner.name()), o.deleted, o.pods, o.none_left()))
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
        let Outcome::Predicted { owners, nodes } = &scenarios[0].outcome;
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
        let Outcome::Predicted { owners, nodes } = &scenarios[0].outcome;
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
    fn a_scenario_too_large_to_search_is_predicted_by_its_zones_drain() {
        let (snapshot, observation) = cluster();
        let drained = scenarios(&snapshot, &setting(&observation, 2));
        let searched = scenarios(&snapshot, &setting(&observation, 200));
        let windows = |scenario: &Scenario<'_>| -> Vec<Option<(Timestamp, Option<Timestamp>)>> {
            let Outcome::Predicted { nodes, .. } = &scenario.outcome;
            nodes.iter().map(|node| node.taint.map(|taint| (taint.earliest, taint.latest))).collect()
        };
        // Zone za's three nodes: each window holds the exact search's.
        let (wide, exact) = (windows(&drained[0]), windows(&searched[0]));
        assert_eq!(wide.len(), 3);
        for (wide, exact) in wide.iter().zip(&exact) {
            let ((wide_from, wide_to), (exact_from, exact_to)) = (wide.expect("tainted"), exact.expect("tainted"));
            assert!(wide_from <= exact_from && exact_to <= wide_to, "{wide:?} holds {exact:?}");
        }
        // One node's outage is searched as before.
        assert_eq!(windows(&drained[2]), windows(&searched[2]));
    }

    /// Runs the parts last first.
    struct Backwards;

    impl crate::replay::Parts for Backwards {
        fn map<'a>(
            &self,
            parts: usize,
            run: &(dyn Fn(usize) -> crate::replay::Part<'a> + Sync),
        ) -> Vec<crate::replay::Part<'a>> {
            let mut done: Vec<_> = (0..parts).rev().map(run).collect();
            done.reverse();
            done
        }

        fn each(&self, parts: usize, run: &(dyn Fn(usize) + Sync)) {
            (0..parts).rev().for_each(run);
        }
    }

    #[test]
    fn many_outages_are_predicted_in_parts_run_in_any_order_and_kept_in_order() {
        // 70 nodes over two zones, a `web` replica on each: 72 outages, past the two-part bound.
        let (mut snapshot, mut observation) = cluster();
        let web = owner("ReplicaSet", "web");
        for i in 0..66 {
            let (name, zone) = (format!("n-{i:02}"), if i % 2 == 0 { "za" } else { "zb" });
            observation.nodes.push(healthy(&name, zone));
            snapshot.nodes.push(SnapshotNode::new(name.as_str().into(), Default::default(), []));
            snapshot.pods.push(pod(&format!("web-{i}"), &name, &web));
        }
        let inline = scenarios(&snapshot, &setting(&observation, 200));
        assert!(inline.len() >= IN_TWO_FROM, "{} outages", inline.len());
        let backwards =
            Setting { host: Host { parts: &Backwards, key: Default::default() }, ..setting(&observation, 200) };
        let shown = |scenarios: &[Scenario<'_>]| scenarios.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>();
        assert_eq!(shown(&scenarios(&snapshot, &backwards)), shown(&inline));
        // Zones first, then nodes by name, each predicted as when taken down alone.
        let downs: Vec<&Down> = inline.iter().map(|s| &s.down).collect();
        assert!(matches!(downs[..2], [Down::Zone(_), Down::Zone(_)]), "{downs:?}");
        assert!(downs[2..].windows(2).all(|pair| pair[0] < pair[1]), "{downs:?}");
        let only = [NodeName::from("n-07")];
        let alone = scenarios(&snapshot, &Setting { only: Some(&only), ..setting(&observation, 200) });
        let in_all = inline.iter().find(|s| s.down == Down::Node("n-07".into())).expect("n-07's outage");
        assert_eq!(format!("{:?}", alone[1]), format!("{in_all:?}"));
    }
}
