//! `audit` of rendered manifests: each pod template taken as the cluster will see it (what the
//! DaemonSet controller and the API server's admission add to its pods), and the rules checked on the
//! template alone: the rules on tolerations, as a running pod is checked, and where its replicas can
//! land (docs/audit.md, "Rendered manifests").

use std::collections::BTreeMap;

use super::disruption::Breach;
use super::finding::{Rule, Severity};
use super::rules::broken_tolerations;
use crate::lifecycle::{Flags, NOT_READY, UNREACHABLE, ZONE_LABELS};
use crate::model::{Effect, Operator, Toleration};

/// The node label each node has its own value of, as the scheduler spreads over it.
pub const HOSTNAME: &str = "kubernetes.io/hostname";

/// The taints of node conditions the DaemonSet controller tolerates for its pods, with `NoSchedule`
/// (`pkg/controller/daemon/util/daemonset_util.go`, `AddOrUpdateDaemonPodTolerations`).
const DAEMON_NO_SCHEDULE: [&str; 4] = [
    "node.kubernetes.io/disk-pressure",
    "node.kubernetes.io/memory-pressure",
    "node.kubernetes.io/pid-pressure",
    "node.kubernetes.io/unschedulable",
];

/// The one a DaemonSet's pods on the host's network tolerate too.
const NETWORK_UNAVAILABLE: &str = "node.kubernetes.io/network-unavailable";

/// One pod template of a manifest, as written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Template {
    /// The object's kind: `Deployment`, `StatefulSet`, `DaemonSet`, `ReplicaSet`, `Job`, `CronJob`
    /// or `Pod`.
    pub kind: Box<str>,
    /// `metadata.namespace`, empty when not written.
    pub namespace: Box<str>,
    /// `metadata.name`.
    pub name: Box<str>,
    /// A Pod's controller's kind, from its `ownerReferences` (the `controller: true` entry), as
    /// `kubectl get pods -o yaml` writes it; `None` for a pod no object owns, and for a template.
    pub controller: Option<Box<str>>,
    /// `spec.replicas` as written; `None` when not (the API server's default is 1).
    pub replicas: Option<i64>,
    /// The template's `tolerations`, as written.
    pub tolerations: Vec<Toleration>,
    /// `hostNetwork`.
    pub host_network: bool,
    /// What keeps its replicas apart: each `topologySpreadConstraints` with
    /// `whenUnsatisfiable: DoNotSchedule`, then each required `podAntiAffinity` term.
    pub apart_on: Vec<Apart>,
    /// Its pods' labels: the template's `metadata.labels` (a Pod's own).
    pub labels: BTreeMap<Box<str>, Box<str>>,
}

/// A required rule keeping a template's replicas apart over a node label (a topology key).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Apart {
    /// A `topologySpreadConstraints` entry with `whenUnsatisfiable: DoNotSchedule`: no value of
    /// `key` holds more than `max_skew` replicas over another.
    Spread {
        /// `topologyKey`.
        key: Box<str>,
        /// `maxSkew` (1 when not written).
        max_skew: i64,
    },
    /// A `requiredDuringSchedulingIgnoredDuringExecution` `podAntiAffinity` term: one replica per
    /// value of `key`.
    AntiAffinity {
        /// `topologyKey`.
        key: Box<str>,
    },
}

impl Apart {
    /// The node label it keeps replicas apart on.
    #[must_use]
    pub fn key(&self) -> &str {
        match self {
            Self::Spread { key, .. } | Self::AntiAffinity { key } => key,
        }
    }
}

impl Template {
    /// Whether its pods are a DaemonSet's: its template's, or a Pod it made.
    #[must_use]
    pub fn daemon_set(&self) -> bool {
        &*self.kind == "DaemonSet" || self.controller.as_deref() == Some("DaemonSet")
    }

    /// Whether it is a Pod no object owns: nothing makes it again.
    #[must_use]
    pub fn bare(&self) -> bool {
        &*self.kind == "Pod" && self.controller.is_none()
    }

    /// Whether it makes replicas the scheduler places as one owner's: a Deployment's, a ReplicaSet's,
    /// a StatefulSet's.
    #[must_use]
    pub fn replicated(&self) -> bool {
        matches!(&*self.kind, "Deployment" | "ReplicaSet" | "StatefulSet")
    }
}

/// What the API server's `DefaultTolerationSeconds` admission gives a pod tolerating neither
/// condition taint: `--default-not-ready-toleration-seconds` and
/// `--default-unreachable-toleration-seconds` (300 each by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admission {
    /// The `not-ready` toleration's seconds.
    pub not_ready_seconds: i64,
    /// The `unreachable` toleration's seconds.
    pub unreachable_seconds: i64,
}

impl Default for Admission {
    fn default() -> Self {
        Self { not_ready_seconds: 300, unreachable_seconds: 300 }
    }
}

/// What the cluster a manifest is checked against does with its templates.
#[derive(Clone, Debug)]
pub struct Cluster {
    /// The node lifecycle controller's settings (its grace period).
    pub flags: Flags,
    /// The API server's admission defaults.
    pub admission: Admission,
    /// How many zones hold nodes; `None` when not known (the zone rule is then not checked).
    pub zones: Option<usize>,
    /// How many nodes; `None` when not known (taken as several).
    pub nodes: Option<usize>,
}

fn exists(key: &str, effect: Effect, seconds: Option<i64>) -> Toleration {
    Toleration { key: key.into(), operator: Operator::Exists, value: Box::default(), effect: Some(effect), seconds }
}

/// upstream's `AddOrUpdateTolerationInPodSpec`: a toleration with the same key, operator, value and
/// effect is replaced in place (unless equal, seconds included); else `toleration` is appended.
fn add_or_update(tolerations: &mut Vec<Toleration>, toleration: Toleration) {
    let same = |t: &Toleration| {
        t.key == toleration.key
            && t.operator == toleration.operator
            && t.value == toleration.value
            && t.effect == toleration.effect
    };
    match tolerations.iter().position(same) {
        Some(index) => tolerations[index] = toleration,
        None => tolerations.push(toleration),
    }
}

/// The tolerations `template`'s pods run with: the DaemonSet controller's added to a DaemonSet's
/// template (`AddOrUpdateDaemonPodTolerations`: `not-ready` and `unreachable` for ever with
/// `NoExecute`, the pressure and `unschedulable` taints with `NoSchedule`, `network-unavailable` too
/// on the host's network), then the `DefaultTolerationSeconds` admission's, each added when no
/// toleration with that key or no key has `NoExecute` or no effect
/// (`plugin/pkg/admission/defaulttolerationseconds/admission.go`). Those written keep their index.
#[must_use]
pub fn admitted(template: &Template, admission: Admission) -> Vec<Toleration> {
    let mut tolerations = template.tolerations.clone();
    // The controller adds its own to the template it makes pods from: a Pod it made has them already.
    if &*template.kind == "DaemonSet" {
        add_or_update(&mut tolerations, exists(NOT_READY, Effect::NoExecute, None));
        add_or_update(&mut tolerations, exists(UNREACHABLE, Effect::NoExecute, None));
        for key in DAEMON_NO_SCHEDULE {
            add_or_update(&mut tolerations, exists(key, Effect::NoSchedule, None));
        }
        if template.host_network {
            add_or_update(&mut tolerations, exists(NETWORK_UNAVAILABLE, Effect::NoSchedule, None));
        }
    }
    let covers = |key: &str| {
        tolerations
            .iter()
            .any(|t| (&*t.key == key || t.key.is_empty()) && t.effect.as_ref().is_none_or(|e| *e == Effect::NoExecute))
    };
    let (not_ready, unreachable) = (covers(NOT_READY), covers(UNREACHABLE));
    if !not_ready {
        add_or_update(&mut tolerations, exists(NOT_READY, Effect::NoExecute, Some(admission.not_ready_seconds)));
    }
    if !unreachable {
        add_or_update(&mut tolerations, exists(UNREACHABLE, Effect::NoExecute, Some(admission.unreachable_seconds)));
    }
    tolerations
}

/// A rule one template breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TemplateFinding {
    /// The rule.
    pub rule: Rule,
    /// How badly.
    pub severity: Severity,
    /// The template's index in the list checked.
    pub template: usize,
    /// The toleration at fault, its index in the tolerations admitted (those written first, at
    /// their index).
    pub toleration: Option<usize>,
    /// The taint it concerns.
    pub taint: Option<&'static str>,
    /// Its `tolerationSeconds`, when that is the fault.
    pub seconds: Option<i64>,
    /// The replicas the template asks for (1 when not written), for the rules on placement and on
    /// budgets.
    pub replicas: Option<i64>,
    /// The budget one outage breaks and how, for [`Rule::BudgetBrokenByAnOutage`]: the template is
    /// the one whose replicas the outage takes.
    pub budget: Option<Breach>,
}

/// Whether replicas kept apart on `keys` are kept apart on `wanted`: apart in zones is apart on
/// nodes too.
fn apart(keys: &[Apart], wanted: &[&str]) -> bool {
    keys.iter().any(|key| wanted.contains(&key.key()))
}

/// The findings of `templates`, each taken as `cluster` admits it: the most severe first, then in
/// the templates' order, then by rule.
#[must_use]
pub fn template_findings(templates: &[Template], cluster: &Cluster) -> Vec<TemplateFinding> {
    let grace_seconds = i64::try_from(cluster.flags.node_monitor_grace_period.as_secs()).unwrap_or(i64::MAX);
    let mut found = Vec::new();
    for (index, template) in templates.iter().enumerate() {
        let tolerations = admitted(template, cluster.admission);
        for (rule, severity, toleration, taint, seconds) in
            broken_tolerations(&tolerations, template.daemon_set(), template.bare(), grace_seconds)
        {
            let finding = TemplateFinding {
                rule,
                severity,
                template: index,
                toleration,
                taint,
                seconds,
                replicas: None,
                budget: None,
            };
            found.push(finding);
        }
        if !template.replicated() {
            continue;
        }
        let replicas = template.replicas.unwrap_or(1);
        let several_nodes = cluster.nodes.is_none_or(|nodes| nodes > 1);
        let place = |rule, severity| TemplateFinding {
            rule,
            severity,
            template: index,
            toleration: None,
            taint: None,
            seconds: None,
            replicas: Some(replicas),
            budget: None,
        };
        let on_nodes: Vec<&str> = std::iter::once(HOSTNAME).chain(ZONE_LABELS.iter().copied()).collect();
        if replicas == 1 && several_nodes {
            found.push(place(Rule::ReplicasOnOneNode, Severity::High));
        } else if replicas > 1 && several_nodes && !apart(&template.apart_on, &on_nodes) {
            found.push(place(Rule::ReplicasOnOneNode, Severity::Medium));
        } else if replicas > 1
            && cluster.zones.is_some_and(|zones| zones > 1)
            && !apart(&template.apart_on, &ZONE_LABELS)
        {
            found.push(place(Rule::ReplicasInOneZone, Severity::Medium));
        }
    }
    // Stable: within a severity, the templates' order and each one's rules stay.
    found.sort_by_key(|finding| std::cmp::Reverse(finding.severity));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toleration(key: &str, operator: &str, effect: Option<Effect>, seconds: Option<i64>) -> Toleration {
        Toleration { key: key.into(), operator: operator.into(), value: Box::default(), effect, seconds }
    }

    fn template(kind: &str, tolerations: Vec<Toleration>) -> Template {
        Template { kind: kind.into(), name: "web".into(), tolerations, ..Template::default() }
    }

    fn cluster(zones: Option<usize>) -> Cluster {
        Cluster { flags: Flags::defaults_for(29), admission: Admission::default(), zones, nodes: None }
    }

    /// A finding as a test reads it: rule id, severity, template, toleration, seconds.
    type Said = (&'static str, Severity, usize, Option<usize>, Option<i64>);

    fn said(found: &[TemplateFinding]) -> Vec<Said> {
        found.iter().map(|f| (f.rule.id(), f.severity, f.template, f.toleration, f.seconds)).collect()
    }

    #[test]
    fn admission_appends_the_two_default_tolerations_unless_one_with_that_key_or_no_key_covers_noexecute() {
        let written = vec![toleration("gpu", "Exists", Some(Effect::NoSchedule), None)];
        let expected = [
            written[0].clone(),
            exists(NOT_READY, Effect::NoExecute, Some(300)),
            exists(UNREACHABLE, Effect::NoExecute, Some(300)),
        ];
        assert_eq!(admitted(&template("Deployment", written.clone()), Admission::default()), expected);
        // Its own `unreachable` for 10 s (effect empty: every effect) stays; only `not-ready` is added.
        let own = vec![toleration(UNREACHABLE, "Exists", None, Some(10))];
        let shorter = Admission { not_ready_seconds: 60, ..Admission::default() };
        let expected = [own[0].clone(), exists(NOT_READY, Effect::NoExecute, Some(60))];
        assert_eq!(admitted(&template("Deployment", own.clone()), shorter), expected);
        // A keyless NoSchedule toleration covers neither: both are added.
        let keyless = vec![toleration("", "Exists", Some(Effect::NoSchedule), None)];
        assert_eq!(admitted_default(&template("Pod", keyless)).len(), 3);
    }

    fn admitted_default(template: &Template) -> Vec<Toleration> {
        admitted(template, Admission::default())
    }

    #[test]
    fn a_daemon_sets_own_condition_toleration_is_replaced_in_place_by_the_controllers_for_ever() {
        let own = vec![
            toleration("example.com/maintenance", "Exists", Some(Effect::NoExecute), None),
            toleration(UNREACHABLE, "Exists", Some(Effect::NoExecute), Some(10)),
        ];
        let mut agent = template("DaemonSet", own.clone());
        agent.host_network = true;
        let admitted = admitted_default(&agent);
        let keys: Vec<(&str, Option<i64>)> = admitted.iter().map(|t| (&*t.key, t.seconds)).collect();
        assert_eq!(
            keys,
            vec![
                ("example.com/maintenance", None),
                (UNREACHABLE, None),
                (NOT_READY, None),
                ("node.kubernetes.io/disk-pressure", None),
                ("node.kubernetes.io/memory-pressure", None),
                ("node.kubernetes.io/pid-pressure", None),
                ("node.kubernetes.io/unschedulable", None),
                (NETWORK_UNAVAILABLE, None),
            ]
        );
        // Written `operator` empty is `Equal`: not the controller's `Exists`, so appended beside it.
        let equal = vec![toleration(NOT_READY, "", Some(Effect::NoExecute), Some(5))];
        let admitted = admitted_default(&template("DaemonSet", equal));
        let keys: Vec<(&str, Option<i64>)> = admitted.iter().take(3).map(|t| (&*t.key, t.seconds)).collect();
        assert_eq!(keys, vec![(NOT_READY, Some(5)), (NOT_READY, None), (UNREACHABLE, None)]);
        assert_eq!(admitted.len(), 7);
    }

    #[test]
    fn the_rules_on_tolerations_read_the_template_as_admitted() {
        let short = template("Deployment", vec![toleration(UNREACHABLE, "Exists", Some(Effect::NoExecute), Some(10))]);
        let forever = template("StatefulSet", vec![toleration(NOT_READY, "Exists", Some(Effect::NoExecute), None)]);
        let agent = template("DaemonSet", vec![toleration(UNREACHABLE, "Exists", Some(Effect::NoExecute), Some(10))]);
        let bare = template("Pod", Vec::new());
        // A Pod a ReplicaSet made (`kubectl get pods -o yaml`) is no bare pod; one a DaemonSet made is
        // the DaemonSet's, its 10 s its own.
        let owned = Template { controller: Some("ReplicaSet".into()), ..template("Pod", Vec::new()) };
        let daemon_pod = Template {
            controller: Some("DaemonSet".into()),
            ..template("Pod", vec![toleration(UNREACHABLE, "Exists", Some(Effect::NoExecute), Some(10))])
        };
        let mut templates = vec![short, forever, agent, bare, owned, daemon_pod];
        for template in &mut templates[..2] {
            template.replicas = Some(2);
            template.apart_on = vec![Apart::AntiAffinity { key: HOSTNAME.into() }];
        }
        let found = template_findings(&templates, &cluster(None));
        assert_eq!(
            said(&found),
            vec![
                ("tolerates-node-loss-forever", Severity::High, 1, Some(0), None),
                ("deleted-on-a-blip", Severity::Medium, 0, Some(0), Some(10)),
                ("bare-pod-deleted-at-once", Severity::Medium, 3, None, None),
            ]
        );
    }

    #[test]
    fn replicas_that_can_share_a_node_or_a_zone_are_found_from_the_template_alone() {
        let apart_on = |replicas: Option<i64>, keys: &[&str]| Template {
            kind: "Deployment".into(),
            replicas,
            apart_on: keys.iter().map(|key| Apart::Spread { key: (*key).into(), max_skew: 1 }).collect(),
            ..Template::default()
        };
        let templates = vec![
            apart_on(None, &[]),
            apart_on(Some(3), &[]),
            apart_on(Some(3), &[HOSTNAME]),
            apart_on(Some(3), &["topology.kubernetes.io/zone"]),
            apart_on(Some(0), &[]),
        ];
        let found = template_findings(&templates, &cluster(Some(3)));
        let rules: Vec<(&str, Severity, usize, Option<i64>)> =
            found.iter().map(|f| (f.rule.id(), f.severity, f.template, f.replicas)).collect();
        assert_eq!(
            rules,
            vec![
                ("replicas-on-one-node", Severity::High, 0, Some(1)),
                ("replicas-on-one-node", Severity::Medium, 1, Some(3)),
                ("replicas-in-one-zone", Severity::Medium, 2, Some(3)),
            ]
        );
        // Zones not known: the zone rule is not checked; one node: neither is.
        assert_eq!(template_findings(&templates[2..3], &cluster(None)), vec![]);
        let one_node = Cluster { nodes: Some(1), ..cluster(Some(1)) };
        assert_eq!(template_findings(&templates, &one_node), vec![]);
    }
}
