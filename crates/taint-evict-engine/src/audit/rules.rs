//! The rules an audit checks on each pod's tolerations alone, before any scenario: each pod is asked
//! what the condition taints, and a taint it does not name, would do to it, as the taint-eviction
//! controller decides ([`tolerance`]).

use std::collections::BTreeMap;

use super::finding::{Finding, Findings, Rule, Severity};
use crate::lifecycle::{Flags, NOT_READY, UNREACHABLE};
use crate::model::{Effect, Operator, Taint, Toleration};
use crate::snapshot::{Owner, Snapshot, SnapshotPod};
use crate::tolerate::{Tolerance, TolerationWindow, tolerance, tolerates};

/// A `NoExecute` taint no toleration names: what an operator's own maintenance taint would be.
const UNNAMED: &str = "taint-evict.audit/unnamed";

/// Whether the pod is one an audit looks at: not terminating, not finished.
fn live(pod: &SnapshotPod) -> bool {
    !pod.terminating && !matches!(&*pod.phase, "Succeeded" | "Failed")
}

fn is_daemon_set(owner: Option<&Owner>) -> bool {
    owner.is_some_and(|owner| owner.kind() == "DaemonSet")
}

/// What one pod breaks: (rule, severity, toleration index, taint key, seconds).
pub(super) type Broken = (Rule, Severity, Option<usize>, Option<&'static str>, Option<i64>);

fn broken(pod: &SnapshotPod, grace_seconds: i64) -> Vec<Broken> {
    let owner = pod.owner.as_ref();
    broken_tolerations(&pod.pod.tolerations, is_daemon_set(owner), owner.is_none(), grace_seconds)
}

/// What one pod's `tolerations` break, the pod a DaemonSet's (`daemon_set`) or no object's (`bare`):
/// the rules a running pod and a pod template are both checked with.
pub(super) fn broken_tolerations(
    tolerations: &[Toleration],
    daemon_set: bool,
    bare: bool,
    grace_seconds: i64,
) -> Vec<Broken> {
    let used = |taint: &Taint| tolerations.iter().position(|t| tolerates(t, taint));
    let mut found = Vec::new();
    if !daemon_set {
        let (mut forever, mut blip) = (false, false);
        for key in [UNREACHABLE, NOT_READY] {
            let taint = Taint::new(key, "", Effect::NoExecute);
            match tolerance(std::slice::from_ref(&taint), tolerations) {
                Tolerance::Tolerated(TolerationWindow::Forever) if !forever => {
                    forever = true;
                    found.push((Rule::ToleratesNodeLossForever, Severity::High, used(&taint), Some(key), None));
                }
                Tolerance::Tolerated(TolerationWindow::After { seconds, .. }) if seconds < grace_seconds && !blip => {
                    blip = true;
                    found.push((Rule::DeletedOnABlip, Severity::Medium, used(&taint), Some(key), Some(seconds)));
                }
                _ => {}
            }
        }
    }
    let unnamed = Taint::new(UNNAMED, "", Effect::NoExecute);
    if bare && tolerance(std::slice::from_ref(&unnamed), tolerations) == Tolerance::Untolerated {
        found.push((Rule::BarePodDeletedAtOnce, Severity::Medium, None, None, None));
    }
    let every = |t: &Toleration| {
        t.key.is_empty() && t.operator == Operator::Exists && t.effect.as_ref().is_none_or(|e| *e == Effect::NoExecute)
    };
    if let Some(index) = tolerations.iter().position(every) {
        let severity = if daemon_set { Severity::Low } else { Severity::Medium };
        found.push((Rule::ToleratesEveryTaint, severity, Some(index), None, None));
    }
    found
}

/// The findings of the rules on tolerations over `snapshot`'s pods (those not terminating and not
/// finished), one per rule and owner (or per pod with no owner): the most severe first, then by
/// rule, namespace, owner and pod name. `flags` gives the node lifecycle controller's grace period.
#[must_use]
pub fn toleration_findings<'a>(snapshot: &'a Snapshot, flags: &Flags) -> Findings<'a> {
    let grace_seconds = i64::try_from(flags.node_monitor_grace_period.as_secs()).unwrap_or(i64::MAX);
    type Key<'a> = (Rule, &'a str, Option<&'a Owner>, Option<&'a str>);
    let mut findings: BTreeMap<Key<'a>, (Finding<'a>, Vec<&'a SnapshotPod>)> = BTreeMap::new();
    for pod in snapshot.pods.iter().filter(|pod| live(pod)) {
        let namespace = pod.pod.key.namespace();
        let owner = pod.owner.as_ref();
        let bare = owner.is_none().then(|| pod.pod.key.name());
        for (rule, severity, toleration, taint, seconds) in broken(pod, grace_seconds) {
            let (_, pods) = findings.entry((rule, namespace, owner, bare)).or_insert_with(|| {
                let finding = Finding {
                    rule,
                    severity,
                    namespace,
                    owner,
                    pods: &[],
                    toleration,
                    taint,
                    seconds,
                    scenario: None,
                    at: None,
                    place: None,
                };
                (finding, Vec::new())
            });
            pods.push(pod);
        }
    }
    let mut findings: Vec<(Finding<'a>, Vec<&'a SnapshotPod>)> = findings.into_values().collect();
    // Stable: within a severity, the map's order (rule, namespace, owner, pod name) stays.
    findings.sort_by_key(|(finding, _)| std::cmp::Reverse(finding.severity));
    Findings::of_others(findings)
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::model::{Pod, PodKey};

    fn toleration(key: &str, operator: &str, effect: Option<Effect>, seconds: Option<i64>) -> Toleration {
        Toleration { key: key.into(), operator: operator.into(), value: Box::default(), effect, seconds }
    }

    /// What the API server's `DefaultTolerationSeconds` admission gives every pod that names neither.
    fn defaults() -> Vec<Toleration> {
        vec![
            toleration(NOT_READY, "Exists", Some(Effect::NoExecute), Some(300)),
            toleration(UNREACHABLE, "Exists", Some(Effect::NoExecute), Some(300)),
        ]
    }

    fn owner(kind: &str, name: &str) -> Owner {
        Owner::new(kind, name, &format!("{name}-uid"))
    }

    fn pod(name: &str, owner: Option<&Owner>, tolerations: Vec<Toleration>) -> SnapshotPod {
        let pod = Pod {
            key: PodKey::new("default", name),
            uid: name.into(),
            node: Some("n1".into()),
            tolerations: tolerations.into(),
        };
        SnapshotPod { owner: owner.cloned(), ..SnapshotPod::running(pod, None) }
    }

    /// A finding as a test reads it: rule id, severity, owner name, pod names, toleration, seconds.
    type Said = (String, Severity, Option<String>, Vec<String>, Option<usize>, Option<i64>);

    fn audit(pods: Vec<SnapshotPod>) -> Vec<Said> {
        let snapshot = Snapshot { pods, ..Snapshot::default() };
        let findings = toleration_findings(&snapshot, &Flags::defaults_for(29));
        findings
            .iter()
            .map(|f| {
                let pods = f.pods.iter().map(|p| p.pod.key.name().to_owned()).collect();
                (
                    f.rule.id().to_owned(),
                    f.severity,
                    f.owner.map(|o| o.name().to_string()),
                    pods,
                    f.toleration,
                    f.seconds,
                )
            })
            .collect()
    }

    #[test]
    fn a_replica_set_with_the_default_tolerations_breaks_no_rule() {
        let web = owner("ReplicaSet", "web");
        assert_eq!(audit(vec![pod("web-1", Some(&web), defaults()), pod("web-2", Some(&web), defaults())]), vec![]);
    }

    #[test]
    fn tolerating_node_loss_forever_is_found_once_per_owner_and_not_for_daemon_sets() {
        let db = owner("StatefulSet", "db");
        let agent = owner("DaemonSet", "agent");
        let forever = || vec![toleration(UNREACHABLE, "Exists", Some(Effect::NoExecute), None), defaults()[0].clone()];
        let found = audit(vec![
            pod("db-0", Some(&db), forever()),
            pod("db-1", Some(&db), forever()),
            pod("agent-x", Some(&agent), forever()),
        ]);
        let db_pods = vec!["db-0".to_owned(), "db-1".to_owned()];
        assert_eq!(
            found,
            vec![("tolerates-node-loss-forever".into(), Severity::High, Some("db".into()), db_pods, Some(0), None)]
        );
    }

    #[test]
    fn each_condition_taint_is_judged_by_its_first_matching_toleration() {
        // As upstream matches: `unreachable` by its own 600 s toleration (first), `not-ready` by the
        // keyless `Exists` before its own 300 s one — for ever.
        let web = owner("ReplicaSet", "web");
        let mut tolerations = vec![
            toleration(UNREACHABLE, "Exists", Some(Effect::NoExecute), Some(600)),
            toleration("", "Exists", Some(Effect::NoExecute), None),
        ];
        tolerations.extend(defaults());
        let snapshot = Snapshot { pods: vec![pod("web-1", Some(&web), tolerations)], ..Snapshot::default() };
        let found = toleration_findings(&snapshot, &Flags::defaults_for(29));
        let said: Vec<_> = found.iter().map(|f| (f.rule, f.taint, f.toleration)).collect();
        assert_eq!(
            said,
            vec![
                (Rule::ToleratesNodeLossForever, Some(NOT_READY), Some(1)),
                (Rule::ToleratesEveryTaint, None, Some(1))
            ]
        );
    }

    #[test]
    fn seconds_shorter_than_the_grace_period_are_deleted_on_a_blip() {
        let web = owner("ReplicaSet", "web");
        let short = vec![
            toleration(NOT_READY, "Exists", Some(Effect::NoExecute), Some(300)),
            toleration(UNREACHABLE, "Exists", Some(Effect::NoExecute), Some(10)),
        ];
        let at_grace = vec![
            toleration(NOT_READY, "Exists", Some(Effect::NoExecute), Some(40)),
            toleration(UNREACHABLE, "Exists", Some(Effect::NoExecute), Some(40)),
        ];
        let api = owner("ReplicaSet", "api");
        let found = audit(vec![pod("web-1", Some(&web), short), pod("api-1", Some(&api), at_grace)]);
        assert_eq!(
            found,
            vec![(
                "deleted-on-a-blip".into(),
                Severity::Medium,
                Some("web".into()),
                vec!["web-1".into()],
                Some(1),
                Some(10)
            )]
        );
        // From 1.32 the grace period is 50 s: 40 s is short then.
        let snapshot = Snapshot {
            pods: vec![pod("api-1", Some(&api), vec![toleration(UNREACHABLE, "Exists", None, Some(40))])],
            ..Snapshot::default()
        };
        let found = toleration_findings(&snapshot, &Flags::defaults_for(32));
        assert_eq!(
            found.iter().map(|f| (f.rule, f.seconds)).collect::<Vec<_>>(),
            vec![(Rule::DeletedOnABlip, Some(40))]
        );
    }

    #[test]
    fn a_bare_pod_is_found_unless_it_tolerates_every_taint_and_finished_or_terminating_pods_are_not_audited() {
        let everything = vec![toleration("", "Exists", None, None)];
        let mut done = pod("done", None, defaults());
        done.phase = "Succeeded".into();
        let mut leaving = pod("leaving", None, defaults());
        leaving.terminating = true;
        let found = audit(vec![pod("debug", None, defaults()), pod("sticky", None, everything), done, leaving]);
        let rules: Vec<(&str, Vec<String>)> = found.iter().map(|f| (f.0.as_str(), f.3.clone())).collect();
        assert_eq!(
            rules,
            vec![
                ("tolerates-node-loss-forever", vec!["sticky".to_owned()]),
                ("bare-pod-deleted-at-once", vec!["debug".to_owned()]),
                ("tolerates-every-taint", vec!["sticky".to_owned()]),
            ]
        );
    }

    #[test]
    fn tolerating_every_taint_is_low_for_a_daemon_set_and_not_found_for_another_effect() {
        let agent = owner("DaemonSet", "agent");
        let web = owner("ReplicaSet", "web");
        let no_schedule = vec![toleration("", "Exists", Some(Effect::NoSchedule), None)];
        let found = audit(vec![
            pod("agent-x", Some(&agent), vec![toleration("", "Exists", Some(Effect::NoExecute), None)]),
            pod("web-1", Some(&web), [no_schedule, defaults()].concat()),
        ]);
        assert_eq!(
            found,
            vec![(
                "tolerates-every-taint".into(),
                Severity::Low,
                Some("agent".into()),
                vec!["agent-x".into()],
                Some(0),
                None
            )]
        );
    }
}
