//! The roll-up per owner: for each workload (the controller its pods name in `ownerReferences`),
//! how many of its running pods a plan deletes, by when, and whether any is left running.

use super::model::{Basis, OwnerLoss, Plan, Verdict};
use crate::snapshot::{Owner, Snapshot};

/// The running pods of each owner of a snapshot, counted once for the many roll-ups of an audit
/// (docs/audit.md): sorted by owner, a count each, searched by halving (a cluster can have an owner
/// per pod, and a table of exactly them is half a hash table's size).
#[derive(Clone, Debug, Default)]
pub struct Replicas<'a>(Vec<(Key<'a>, usize)>);

/// An owner: its namespace and its controller reference.
type Key<'a> = (&'a str, &'a Owner);

impl<'a> Replicas<'a> {
    /// Counts the running pods of `snapshot`'s owners.
    #[must_use]
    pub fn count(snapshot: &'a Snapshot) -> Self {
        let owned = || {
            let running = snapshot.pods.iter().filter(|pod| pod.runs());
            running.filter_map(|pod| Some(((pod.pod.key.namespace(), pod.owner.as_ref()?), 1)))
        };
        let mut counts: Vec<(Key<'a>, usize)> = Vec::with_capacity(owned().count());
        counts.extend(owned());
        Self(tally(counts))
    }

    /// The running pods of `owner`, when it has any.
    fn of(&self, owner: &Key<'_>) -> Option<usize> {
        self.0.binary_search_by(|(key, _)| key.cmp(owner)).ok().map(|at| self.0[at].1)
    }
}

/// `counts` sorted by key, each key once with the sum of its counts, and no room to spare.
fn tally<K: Ord>(mut counts: Vec<(K, usize)>) -> Vec<(K, usize)> {
    counts.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
    counts.dedup_by(|(later, more), (first, count)| {
        let same = later == first;
        if same {
            *count += *more;
        }
        same
    });
    counts.shrink_to_fit();
    counts
}

/// The owners losing pods in `plan` (replayed from `snapshot`): those that lose every running pod
/// first, then by their first deletion, then by namespace, kind and name. Pods of nodes the plan
/// does not show count as running on. `replicas`: the snapshot's, counted once (else counted here).
///
/// Each pod deleted is one loss, then the losses of one owner are folded into one: a list sorted
/// once rather than a table grown by doubling, so that a zone of 50,000 owners costs its losses alone.
#[must_use]
pub fn owner_losses<'a>(
    plan: &Plan<'a>,
    snapshot: &'a Snapshot,
    replicas: Option<&Replicas<'_>>,
) -> Vec<OwnerLoss<'a>> {
    let deleted = || {
        let pods = plan.nodes.iter().flat_map(|node| &node.pods);
        pods.filter(|pod| matches!(pod.verdict, Verdict::EvictNow | Verdict::EvictAt)).filter_map(|pod| {
            let (owner, at) = (pod.pod.owner.as_ref()?, pod.evict_at?);
            if !pod.pod.runs() {
                return None;
            }
            let latest = match pod.basis {
                Some(Basis::PredictedTaint) => pod.evict_at_latest,
                _ => Some(at),
            };
            let namespace = pod.pod.pod.key.namespace_arc();
            Some(OwnerLoss { namespace, owner, pods: 0, deleted: 1, first: at, last: latest })
        })
    };
    let mut losses: Vec<OwnerLoss<'a>> = Vec::with_capacity(deleted().count());
    losses.extend(deleted());
    if losses.is_empty() {
        return Vec::new();
    }
    losses.sort_unstable_by(|a, b| key(a).cmp(&key(b)));
    losses.dedup_by(|later, first| {
        let same = key(later) == key(first);
        if same {
            first.deleted += later.deleted;
            first.first = first.first.min(later.first);
            first.last = first.last.zip(later.last).map(|(a, b)| a.max(b));
        }
        same
    });
    losses.shrink_to_fit();
    match replicas {
        Some(replicas) => {
            for loss in &mut losses {
                loss.pods = replicas.of(&key(loss)).map_or(0, |pods| u32::try_from(pods).unwrap_or(u32::MAX));
            }
        }
        None => {
            for pod in snapshot.pods.iter().filter(|pod| pod.runs()) {
                let Some(owner) = pod.owner.as_ref() else { continue };
                let wanted = (pod.pod.key.namespace(), owner);
                if let Ok(at) = losses.binary_search_by(|loss| key(loss).cmp(&wanted)) {
                    losses[at].pods = losses[at].pods.saturating_add(1);
                }
            }
        }
    }
    losses.sort_by(|a, b| {
        let (a_key, b_key) = ((a.first, a.namespace, a.owner), (b.first, b.namespace, b.owner));
        b.none_left().cmp(&a.none_left()).then_with(|| a_key.cmp(&b_key))
    });
    losses
}

/// Whose loss `loss` is: its owner in its namespace.
fn key<'a>(loss: &OwnerLoss<'a>) -> Key<'a> {
    (&**loss.namespace, loss.owner)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::model::{Pod, PodKey};
    use crate::plan::model::{NodePlan, PodPlan};
    use crate::snapshot::SnapshotPod;
    use crate::time::Timestamp;

    const NOW: i64 = 1_795_341_600; // 2026-11-22T10:00:00Z

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_unix_seconds(NOW + seconds)
    }

    fn owner(kind: &str, name: &str) -> Owner {
        Owner::new(kind, name, "")
    }

    fn pod(namespace: &str, name: &str, node: &str, owner: Option<&Owner>) -> SnapshotPod {
        SnapshotPod {
            pod: Pod {
                key: PodKey::new(namespace, name),
                uid: name.into(),
                node: Some(node.into()),
                tolerations: Arc::default(),
            },
            bound_at: None,
            phase: "Running".into(),
            terminating: false,
            deletion_timestamp: None,
            ready: crate::snapshot::PodReady::No,
            claims: None,
            owner: owner.cloned(),
            tolerations_edited: None,
        }
    }

    /// A plan of `zone-a`'s nodes: each pod of `snapshot` on a node of `down` with its verdict,
    /// deadline and (for a predicted taint) latest deadline.
    fn plan<'a>(snapshot: &'a Snapshot, fate: &dyn Fn(&SnapshotPod) -> PodPlanFate) -> Plan<'a> {
        let mut nodes: Vec<NodePlan<'a>> = Vec::new();
        for pod in &snapshot.pods {
            let PodPlanFate::Shown(verdict, evict_at, latest, basis) = fate(pod) else { continue };
            let name = pod.pod.node.clone().expect("bound");
            let node = match nodes.iter_mut().position(|n| n.name == name) {
                Some(i) => &mut nodes[i],
                None => {
                    nodes.push(NodePlan {
                        name,
                        taints: Arc::default(),
                        taints_written: None,
                        pods: Vec::new(),
                        lifecycle: None,
                    });
                    nodes.last_mut().expect("pushed")
                }
            };
            node.pods.push(PodPlan {
                pod,
                verdict,
                evict_at,
                evict_at_latest: latest,
                since: None,
                basis: Some(basis),
                toleration_seconds: None,
                untolerated: Arc::default(),
                overdue: false,
                stuck: false,
                tolerations_edited: None,
                devices: None,
            });
        }
        Plan { now: at(0), nodes, zones: None, device_taints: None, owners: None, assumed: None }
    }

    enum PodPlanFate {
        Shown(Verdict, Option<Timestamp>, Option<Timestamp>, Basis),
        NotShown,
    }

    #[test]
    fn owners_spread_across_zones_lose_what_the_down_zone_holds() {
        let (web, db, agent, job) = (
            owner("ReplicaSet", "web-7d9c"),
            owner("StatefulSet", "db"),
            owner("DaemonSet", "agent"),
            owner("Job", "report"),
        );
        let snapshot = Snapshot {
            pods: vec![
                // web: two replicas in zone a (down), one in zone b.
                pod("shop", "web-1", "a1", Some(&web)),
                pod("shop", "web-2", "a2", Some(&web)),
                pod("shop", "web-3", "b1", Some(&web)),
                // db: every replica in zone a.
                pod("shop", "db-0", "a1", Some(&db)),
                pod("shop", "db-1", "a2", Some(&db)),
                // agent: tolerates the taints forever.
                pod("kube-system", "agent-a1", "a1", Some(&agent)),
                pod("kube-system", "agent-b1", "b1", Some(&agent)),
                // report: done on b1 already, running on a1.
                SnapshotPod { phase: "Succeeded".into(), ..pod("batch", "report-old", "b1", Some(&job)) },
                pod("batch", "report-new", "a1", Some(&job)),
                // A bare pod has no owner to roll up.
                pod("shop", "debug", "a1", None),
                // A namesake in another namespace is another owner.
                pod("staging", "web-1", "b1", Some(&web)),
            ],
            ..Snapshot::default()
        };
        let plan = plan(&snapshot, &|pod| {
            let zone_a = pod.pod.node.as_ref().is_some_and(|n| n.as_str().starts_with('a'));
            match (zone_a, pod.pod.key.name()) {
                (false, _) => PodPlanFate::NotShown,
                (true, name) if name.starts_with("agent") => {
                    PodPlanFate::Shown(Verdict::Never, None, None, Basis::PredictedTaint)
                }
                (true, "db-1") => PodPlanFate::Shown(Verdict::EvictAt, Some(at(340)), None, Basis::PredictedTaint),
                (true, "web-2") => {
                    PodPlanFate::Shown(Verdict::EvictAt, Some(at(350)), Some(at(360)), Basis::PredictedTaint)
                }
                (true, _) => PodPlanFate::Shown(Verdict::EvictAt, Some(at(345)), Some(at(347)), Basis::PredictedTaint),
            }
        });
        let losses = owner_losses(&plan, &snapshot, None);
        let replicas = Replicas::count(&snapshot);
        assert_eq!(owner_losses(&plan, &snapshot, Some(&replicas)), losses, "counted once or here: the same");
        // Namespace, name, pods, deleted, none left, first, last.
        type Row<'a> = (&'a str, &'a str, u32, u32, bool, Timestamp, Option<Timestamp>);
        let rows: Vec<Row<'_>> = losses
            .iter()
            .map(|l| (&**l.namespace, l.owner.name(), l.pods, l.deleted, l.none_left(), l.first, l.last))
            .collect();
        assert_eq!(
            rows,
            [
                // Every running pod goes: first the StatefulSet (its last one's window is open-ended),
                // then the Job (its finished pod is not a replica).
                ("shop", "db", 2, 2, true, at(340), None),
                ("batch", "report", 1, 1, true, at(345), Some(at(347))),
                // One replica of web is left, in zone b; staging's web is another owner.
                ("shop", "web-7d9c", 3, 2, false, at(345), Some(at(360))),
            ]
        );
    }

    #[test]
    fn terminating_and_unbound_pods_are_not_replicas_and_a_plan_without_deletions_has_no_roll_up() {
        let web = owner("ReplicaSet", "web");
        let snapshot = Snapshot {
            pods: vec![
                pod("shop", "web-1", "a1", Some(&web)),
                SnapshotPod { terminating: true, ..pod("shop", "web-2", "b1", Some(&web)) },
                SnapshotPod {
                    pod: Pod { node: None, ..pod("shop", "web-3", "b1", Some(&web)).pod },
                    ..pod("shop", "web-3", "b1", Some(&web))
                },
            ],
            ..Snapshot::default()
        };
        let deleted = plan(&snapshot, &|pod| match pod.pod.key.name() {
            "web-1" => PodPlanFate::Shown(Verdict::EvictNow, Some(at(0)), None, Basis::TaintTimeAdded),
            _ => PodPlanFate::NotShown,
        });
        let losses = owner_losses(&deleted, &snapshot, None);
        assert_eq!(losses.len(), 1);
        assert_eq!((losses[0].pods, losses[0].deleted, losses[0].none_left()), (1, 1, true));
        assert_eq!(losses[0].last, Some(at(0)), "a deletion that is not predicted is due at its instant");
        let kept = plan(&snapshot, &|pod| match pod.pod.key.name() {
            "web-1" => PodPlanFate::Shown(Verdict::Never, None, None, Basis::TaintTimeAdded),
            _ => PodPlanFate::NotShown,
        });
        assert!(owner_losses(&kept, &snapshot, None).is_empty());
    }
}
