//! The rule on PodDisruptionBudgets: a budget one outage breaks. Taint eviction never asks a budget
//! (the taint-eviction controller deletes pods directly), so a zone's or a node's outage can leave
//! fewer healthy replicas than the budget needs; until they run again, every voluntary eviction of
//! its pods, a drain's, is refused (docs/audit.md, "Rendered manifests").

use std::collections::BTreeMap;

use super::disruption::{Breach, Outage, Wanted};
use super::finding::{Rule, Severity};
use super::selector::LabelSelector;
use super::templates::{Apart, Cluster, HOSTNAME, Template, TemplateFinding};
use crate::lifecycle::ZONE_LABELS;

/// One PodDisruptionBudget, as written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Budget {
    /// `metadata.namespace`, empty when not written.
    pub namespace: Box<str>,
    /// `metadata.name`.
    pub name: Box<str>,
    /// What it asks; `None` when it writes neither (it then refuses nothing).
    pub wanted: Option<Wanted>,
    /// `spec.selector`; `None` when not written (it selects no pod).
    pub selector: Option<LabelSelector>,
}

impl Budget {
    /// Whether it counts `template`'s pods: of its namespace, its selector selecting their labels.
    #[must_use]
    pub fn selects(&self, template: &Template) -> bool {
        self.namespace == template.namespace
            && self.selector.as_ref().is_some_and(|selector| selector.selects(&template.labels))
    }
}

/// The most of `replicas` one value of `apart`'s key can hold, out of `values` values (`None`: as
/// many as there are replicas, or more): one for a required anti-affinity; for a spread of
/// `maxSkew` s over d values, `(replicas + (d - 1) * s) / d`, for the others hold at least its
/// count less s.
fn most_on_one(apart: &Apart, replicas: i64, values: Option<usize>) -> i64 {
    let most = match *apart {
        Apart::AntiAffinity { .. } => 1,
        Apart::Spread { max_skew, .. } => {
            let skew = i128::from(max_skew.max(1));
            match values.and_then(|values| i128::try_from(values).ok()).filter(|values| *values > 0) {
                None => skew,
                Some(values) => (i128::from(replicas) + (values - 1) * skew).div_euclid(values),
            }
        }
    };
    i64::try_from(most.min(i128::from(replicas))).unwrap_or(replicas)
}

/// The most of `template`'s `replicas` one outage of `cluster` takes, and which: with two zones or
/// more, one zone's, as its required spread or anti-affinity over a zone's key lets them gather
/// (every replica without); else one node's, as its spread or anti-affinity over the hostname lets
/// them gather on one of the nodes (`None`: many), a zone's key read as the hostname's when the zones
/// are not known, as [`super::Rule::ReplicasOnOneNode`] reads it.
#[must_use]
fn taken(template: &Template, replicas: i64, cluster: &Cluster) -> (i64, Outage) {
    let zonal = |apart: &&Apart| ZONE_LABELS.contains(&apart.key());
    if let Some(zones) = cluster.zones.filter(|zones| *zones > 1) {
        let most = template.apart_on.iter().filter(zonal).map(|apart| most_on_one(apart, replicas, Some(zones)));
        return (most.min().unwrap_or(replicas), Outage::Zone);
    }
    let most = template.apart_on.iter().filter_map(|apart| match apart {
        _ if apart.key() == HOSTNAME => Some(most_on_one(apart, replicas, cluster.nodes)),
        Apart::AntiAffinity { .. } if zonal(&apart) => Some(most_on_one(apart, replicas, None)),
        Apart::Spread { .. } if zonal(&apart) && cluster.zones.is_none() => Some(most_on_one(apart, replicas, None)),
        _ => None,
    });
    (most.min().unwrap_or(replicas), Outage::Node)
}

/// The budgets one outage breaks ([`Rule::BudgetBrokenByAnOutage`]): for each budget (in their
/// order) and each Deployment's, ReplicaSet's or StatefulSet's template it selects (in theirs), with
/// R its replicas (1 when not written), a finding when the most one outage takes leaves fewer than
/// the budget needs; high when it needs every replica, so that the loss of any one breaks it. Not
/// sorted by severity.
#[must_use]
pub fn budget_findings(templates: &[Template], budgets: &[Budget], cluster: &Cluster) -> Vec<TemplateFinding> {
    // The replicated templates of each namespace, in their order: a budget selects in its own.
    let mut by_namespace: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (index, template) in templates.iter().enumerate().filter(|(_, template)| template.replicated()) {
        by_namespace.entry(&template.namespace).or_default().push(index);
    }
    let mut found = Vec::new();
    for (index, budget) in budgets.iter().enumerate() {
        let Some(wanted) = budget.wanted else { continue };
        for &template_index in by_namespace.get(&*budget.namespace).into_iter().flatten() {
            let template = &templates[template_index];
            if !budget.selects(template) {
                continue;
            }
            let replicas = template.replicas.unwrap_or(1);
            let needed = wanted.needed(replicas);
            if replicas <= 0 || needed <= 0 {
                continue;
            }
            let (taken, outage) = taken(template, replicas, cluster);
            if replicas - taken >= needed {
                continue;
            }
            found.push(TemplateFinding {
                rule: Rule::BudgetBrokenByAnOutage,
                severity: if needed >= replicas { Severity::High } else { Severity::Medium },
                template: template_index,
                toleration: None,
                taint: None,
                seconds: None,
                replicas: Some(replicas),
                budget: Some(Breach { budget: index, wanted, needed, taken, outage }),
            });
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::{Admission, Requirement, Scaled, SelectorOperator};
    use crate::lifecycle::Flags;

    const ZONE: &str = "topology.kubernetes.io/zone";

    fn cluster(zones: Option<usize>, nodes: Option<usize>) -> Cluster {
        Cluster { flags: Flags::defaults_for(29), admission: Admission::default(), zones, nodes }
    }

    fn spread(key: &str, max_skew: i64) -> Apart {
        Apart::Spread { key: key.into(), max_skew }
    }

    fn anti(key: &str) -> Apart {
        Apart::AntiAffinity { key: key.into() }
    }

    /// A Deployment `web` of namespace `shop`, labelled `app: web`.
    fn web(replicas: Option<i64>, apart_on: Vec<Apart>) -> Template {
        Template {
            kind: "Deployment".into(),
            namespace: "shop".into(),
            name: "web".into(),
            replicas,
            apart_on,
            labels: [("app".into(), "web".into())].into(),
            ..Template::default()
        }
    }

    /// A budget of namespace `shop` selecting `app: web`.
    fn budget(wanted: Wanted) -> Budget {
        let selector =
            LabelSelector { match_labels: [("app".into(), "web".into())].into(), ..LabelSelector::default() };
        Budget { namespace: "shop".into(), name: "web".into(), wanted: Some(wanted), selector: Some(selector) }
    }

    /// Each finding as `(template, replicas, needed, taken, outage)`.
    fn said(templates: &[Template], budgets: &[Budget], cluster: &Cluster) -> Vec<(usize, i64, i64, i64, Outage)> {
        budget_findings(templates, budgets, cluster)
            .into_iter()
            .filter_map(|f| Some((f.template, f.replicas?, f.budget?.needed, f.budget?.taken, f.budget?.outage)))
            .collect()
    }

    use Scaled::{Count, Percent};
    use Wanted::{MaxUnavailable, MinAvailable};

    #[test]
    fn a_percent_is_rounded_up_as_the_disruption_controller_scales_it() {
        // 67% of 3 is 2.01, up to 3; 66% is 1.98, up to 2; 50% of 3 is 1.5, up to 2; 0% is 0.
        assert_eq!([Percent(67).of(3), Percent(66).of(3), Percent(50).of(3), Percent(0).of(3)], [3, 2, 2, 0]);
        assert_eq!(Percent(100).of(i64::MAX), i64::MAX);
        // maxUnavailable leaves the rest: 3 - 1 = 2; 3 - 2 (50%, rounded up) = 1; 3 - 0 = 3.
        let needed =
            [MaxUnavailable(Count(1)), MaxUnavailable(Percent(50)), MaxUnavailable(Count(0))].map(|w| w.needed(3));
        assert_eq!(needed, [2, 1, 3]);
    }

    #[test]
    fn with_zones_known_the_most_one_zone_holds_is_what_the_zone_spread_lets_it() {
        let three = cluster(Some(3), Some(12));
        let min_two = [budget(MinAvailable(Count(2)))];
        // Nothing spreads them over zones: a zone's outage can take all 3, leaving 0 < 2.
        assert_eq!(said(&[web(Some(3), vec![])], &min_two, &three), vec![(0, 3, 2, 3, Outage::Zone)]);
        // Kept apart on nodes only, the same: nodes are no zones.
        let on_nodes = web(Some(3), vec![spread(HOSTNAME, 1), anti(HOSTNAME)]);
        assert_eq!(said(&[on_nodes], &min_two, &three), vec![(0, 3, 2, 3, Outage::Zone)]);
        // maxSkew 1 over 3 zones: (3 + 2 * 1) / 3 = 1 per zone, leaving 2: met.
        assert_eq!(said(&[web(Some(3), vec![spread(ZONE, 1)])], &min_two, &three), vec![]);
        // maxSkew 2: (3 + 2 * 2) / 3 = 2 in one zone (2, 1, 0), leaving 1 < 2.
        assert_eq!(said(&[web(Some(3), vec![spread(ZONE, 2)])], &min_two, &three), vec![(0, 3, 2, 2, Outage::Zone)]);
        // maxSkew 1, 2 zones, 5 replicas: (5 + 1) / 2 = 3 in one, leaving 2.
        let two = cluster(Some(2), Some(8));
        let five = web(Some(5), vec![spread(ZONE, 1)]);
        assert_eq!(said(&[five], &[budget(MinAvailable(Count(3)))], &two), vec![(0, 5, 3, 3, Outage::Zone)]);
        // The tightest of several keeps: the anti-affinity over zones, one per zone, leaving 4.
        let both = web(Some(5), vec![spread(ZONE, 2), anti(ZONE)]);
        assert_eq!(said(&[both], &[budget(MinAvailable(Count(4)))], &two), vec![]);
        // A skew larger than the replicas: all of them in one zone.
        assert_eq!(
            said(&[web(Some(2), vec![spread(ZONE, 5)])], &[budget(MinAvailable(Count(1)))], &three),
            vec![(0, 2, 1, 2, Outage::Zone)]
        );
    }

    #[test]
    fn each_way_of_writing_the_budget_is_read_as_the_healthy_replicas_it_needs() {
        let three = cluster(Some(3), Some(12));
        let spread_one = [web(Some(3), vec![spread(ZONE, 1)])];
        let of = |wanted| said(&spread_one, &[budget(wanted)], &three);
        // One zone takes 1 of 3, leaving 2: minAvailable 67% needs 3 (rounded up), 66% needs 2.
        assert_eq!(of(MinAvailable(Percent(67))), vec![(0, 3, 3, 1, Outage::Zone)]);
        assert_eq!(of(MinAvailable(Percent(66))), vec![]);
        // maxUnavailable 0 needs all 3; 1 needs 2; 50% lets 2 go (rounded up), needing 1.
        assert_eq!(of(MaxUnavailable(Count(0))), vec![(0, 3, 3, 1, Outage::Zone)]);
        assert_eq!(of(MaxUnavailable(Count(1))), vec![]);
        assert_eq!(of(MaxUnavailable(Percent(50))), vec![]);
        // maxUnavailable 50% of 3 unspread: all 3 taken, leaving 0 < 1.
        let unspread = [web(Some(3), vec![])];
        assert_eq!(said(&unspread, &[budget(MaxUnavailable(Percent(50)))], &three), vec![(0, 3, 1, 3, Outage::Zone)]);
        // minAvailable 0 and maxUnavailable 100% need none; a budget writing neither refuses nothing.
        assert_eq!(said(&unspread, &[budget(MinAvailable(Count(0)))], &three), vec![]);
        assert_eq!(said(&unspread, &[budget(MaxUnavailable(Percent(100)))], &three), vec![]);
        let neither = Budget { wanted: None, ..budget(MinAvailable(Count(1))) };
        assert_eq!(said(&unspread, &[neither], &three), vec![]);
        // `replicas` not written is 1: minAvailable 1 needs it, and any outage takes it.
        assert_eq!(
            said(&[web(None, vec![])], &[budget(MinAvailable(Count(1)))], &three),
            vec![(0, 1, 1, 1, Outage::Zone)]
        );
        // `replicas: 0` is not checked.
        assert_eq!(said(&[web(Some(0), vec![])], &[budget(MaxUnavailable(Count(0)))], &three), vec![]);
    }

    #[test]
    fn with_zones_not_known_the_most_one_node_holds_is_taken() {
        let unknown = cluster(None, None);
        let min_two = [budget(MinAvailable(Count(2)))];
        // Nothing keeps them apart: one node can hold all 3.
        assert_eq!(said(&[web(Some(3), vec![])], &min_two, &unknown), vec![(0, 3, 2, 3, Outage::Node)]);
        // Spread over hostnames with maxSkew 1, one per node, leaving 2; maxSkew 2, two, leaving 1.
        assert_eq!(said(&[web(Some(3), vec![spread(HOSTNAME, 1)])], &min_two, &unknown), vec![]);
        assert_eq!(
            said(&[web(Some(3), vec![spread(HOSTNAME, 2)])], &min_two, &unknown),
            vec![(0, 3, 2, 2, Outage::Node)]
        );
        // A zone's key is read as the hostname's, as replicas-on-one-node reads it.
        assert_eq!(said(&[web(Some(3), vec![spread(ZONE, 1)])], &min_two, &unknown), vec![]);
        assert_eq!(said(&[web(Some(3), vec![anti(HOSTNAME)])], &min_two, &unknown), vec![]);
        assert_eq!(said(&[web(Some(3), vec![anti(ZONE)])], &min_two, &unknown), vec![]);
        // One zone of 2 nodes: maxSkew 1 over them is (3 + 1) / 2 = 2 on one node, leaving 1; the
        // zone's spread keeps nothing apart in a single zone.
        let one_zone = cluster(Some(1), Some(2));
        assert_eq!(
            said(&[web(Some(3), vec![spread(HOSTNAME, 1)])], &min_two, &one_zone),
            vec![(0, 3, 2, 2, Outage::Node)]
        );
        assert_eq!(said(&[web(Some(3), vec![spread(ZONE, 1)])], &min_two, &one_zone), vec![(0, 3, 2, 3, Outage::Node)]);
    }

    #[test]
    fn a_budget_counts_the_replicated_templates_of_its_namespace_its_selector_selects() {
        let three = cluster(Some(3), Some(12));
        let other_namespace = Template { namespace: "ops".into(), ..web(Some(3), vec![]) };
        let other_app = Template { labels: [("app".into(), "api".into())].into(), ..web(Some(3), vec![]) };
        let agent = Template { kind: "DaemonSet".into(), ..web(None, vec![]) };
        let templates = [other_namespace, other_app, agent, web(Some(3), vec![])];
        let wanted = MinAvailable(Count(2));
        // `app: web` in `shop`: only the last (the DaemonSet's pods are per node, not counted).
        assert_eq!(said(&templates, &[budget(wanted)], &three), vec![(3, 3, 2, 3, Outage::Zone)]);
        // `{}` selects every pod of the namespace: `api` and `web`; no selector selects none.
        let every = Budget { selector: Some(LabelSelector::default()), ..budget(wanted) };
        assert_eq!(said(&templates, &[every], &three).iter().map(|b| b.0).collect::<Vec<_>>(), vec![1, 3]);
        let none = Budget { selector: None, ..budget(wanted) };
        assert_eq!(said(&templates, &[none], &three), vec![]);
        // `app in (api, web)`, `app notin (web)`.
        let expression = |operator, values: &[&str]| Budget {
            selector: Some(LabelSelector {
                match_labels: [].into(),
                match_expressions: vec![Requirement {
                    key: "app".into(),
                    operator,
                    values: values.iter().map(|value| (*value).into()).collect(),
                }],
            }),
            ..budget(wanted)
        };
        let found = said(&templates, &[expression(SelectorOperator::In, &["api", "web"])], &three);
        assert_eq!(found.iter().map(|b| b.0).collect::<Vec<_>>(), vec![1, 3]);
        let found = said(&templates, &[expression(SelectorOperator::NotIn, &["web"])], &three);
        assert_eq!(found.iter().map(|b| b.0).collect::<Vec<_>>(), vec![1]);
    }
}
