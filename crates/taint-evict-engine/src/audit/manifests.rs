//! The audit of rendered manifests: the rules on each pod template alone (`templates`), then the
//! rules on each PodDisruptionBudget over the templates it selects (`budgets`), as one list
//! (docs/audit.md, "Rendered manifests").

use super::budgets::{Budget, budget_findings};
use super::templates::{Cluster, Template, TemplateFinding, template_findings};

/// The findings of `templates`, each taken as `cluster` admits it, and of `budgets` on the templates
/// they select: the most severe first; within a severity, the templates' findings (in their order,
/// each one's by rule), then the budgets' (in their order, each budget's in the templates').
#[must_use]
pub fn manifest_findings(templates: &[Template], budgets: &[Budget], cluster: &Cluster) -> Vec<TemplateFinding> {
    let mut found = template_findings(templates, cluster);
    found.extend(budget_findings(templates, budgets, cluster));
    // Stable: each severity's findings in the order they came.
    found.sort_by_key(|finding| std::cmp::Reverse(finding.severity));
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::{Admission, Apart, HOSTNAME, LabelSelector, Scaled, Severity, Wanted};
    use crate::lifecycle::{Flags, UNREACHABLE};
    use crate::model::{Effect, Toleration};

    #[test]
    fn the_budgets_findings_come_after_the_templates_within_each_severity() {
        let labelled = |name: &str, replicas: i64| Template {
            kind: "Deployment".into(),
            name: name.into(),
            replicas: Some(replicas),
            apart_on: vec![Apart::AntiAffinity { key: HOSTNAME.into() }],
            labels: [("app".into(), name.into())].into(),
            ..Template::default()
        };
        let budget = |app: &str, wanted| Budget {
            name: app.into(),
            wanted: Some(wanted),
            selector: Some(LabelSelector {
                match_labels: [("app".into(), app.into())].into(),
                ..LabelSelector::default()
            }),
            ..Budget::default()
        };
        let mut blip = labelled("api", 2);
        blip.tolerations = vec![Toleration {
            key: UNREACHABLE.into(),
            operator: "Exists".into(),
            value: Box::default(),
            effect: Some(Effect::NoExecute),
            seconds: Some(10),
        }];
        let templates = vec![blip, labelled("web", 3)];
        let budgets = [
            budget("web", Wanted::MinAvailable(Scaled::Count(3))),
            budget("api", Wanted::MinAvailable(Scaled::Count(2))),
            budget("web", Wanted::MaxUnavailable(Scaled::Count(1))),
        ];
        // Three zones: api's and web's replicas, apart on nodes only, can share a zone (medium, in
        // the templates' order); api's 10 s is a blip (medium, before its placement). The budgets
        // on web (all 3 needed: high; 2 needed: medium) and api (both needed: high) are broken by
        // a zone that takes every replica: the high ones first, in the budgets' order.
        let cluster =
            Cluster { flags: Flags::defaults_for(29), admission: Admission::default(), zones: Some(3), nodes: None };
        let found = manifest_findings(&templates, &budgets, &cluster);
        let rules: Vec<(&str, Severity, usize, Option<usize>)> =
            found.iter().map(|f| (f.rule.id(), f.severity, f.template, f.budget.map(|b| b.budget))).collect();
        assert_eq!(
            rules,
            vec![
                ("budget-broken-by-an-outage", Severity::High, 1, Some(0)),
                ("budget-broken-by-an-outage", Severity::High, 0, Some(1)),
                ("deleted-on-a-blip", Severity::Medium, 0, None),
                ("replicas-in-one-zone", Severity::Medium, 0, None),
                ("replicas-in-one-zone", Severity::Medium, 1, None),
                ("budget-broken-by-an-outage", Severity::Medium, 1, Some(2)),
            ]
        );
    }
}
