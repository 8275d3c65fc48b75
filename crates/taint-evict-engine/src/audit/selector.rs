//! A label selector as a PodDisruptionBudget writes it (`matchLabels` and `matchExpressions`), and
//! which pod labels it selects, as the API server's `LabelSelectorAsSelector` reads it
//! (docs/audit.md, "Rendered manifests").

use std::collections::BTreeMap;

/// A `matchExpressions` entry's `operator`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelectorOperator {
    /// The label is one of the values.
    In,
    /// The label is none of the values, or not there.
    NotIn,
    /// The label is there, whatever its value.
    Exists,
    /// The label is not there.
    DoesNotExist,
}

impl SelectorOperator {
    /// The operator named `name`, as written; `None` for any other word.
    #[must_use]
    pub fn named(name: &str) -> Option<Self> {
        match name {
            "In" => Some(Self::In),
            "NotIn" => Some(Self::NotIn),
            "Exists" => Some(Self::Exists),
            "DoesNotExist" => Some(Self::DoesNotExist),
            _ => None,
        }
    }
}

/// One `matchExpressions` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    /// The label's key.
    pub key: Box<str>,
    /// How its value is compared.
    pub operator: SelectorOperator,
    /// The values, for `In` and `NotIn`.
    pub values: Vec<Box<str>>,
}

/// A `spec.selector`: every label of `match_labels` and every requirement must hold; with neither,
/// it selects every pod (`{}`, as policy/v1 reads it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSelector {
    /// `matchLabels`: each key with its value.
    pub match_labels: BTreeMap<Box<str>, Box<str>>,
    /// `matchExpressions`.
    pub match_expressions: Vec<Requirement>,
}

impl LabelSelector {
    /// Whether it selects a pod with `labels`.
    #[must_use]
    pub fn selects(&self, labels: &BTreeMap<Box<str>, Box<str>>) -> bool {
        let labelled = self.match_labels.iter().all(|(key, value)| labels.get(key) == Some(value));
        labelled
            && self.match_expressions.iter().all(|requirement| {
                let value = labels.get(&requirement.key);
                match requirement.operator {
                    SelectorOperator::In => value.is_some_and(|value| requirement.values.contains(value)),
                    SelectorOperator::NotIn => value.is_none_or(|value| !requirement.values.contains(value)),
                    SelectorOperator::Exists => value.is_some(),
                    SelectorOperator::DoesNotExist => value.is_none(),
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<Box<str>, Box<str>> {
        pairs.iter().map(|(key, value)| ((*key).into(), (*value).into())).collect()
    }

    fn requirement(key: &str, operator: SelectorOperator, values: &[&str]) -> Requirement {
        Requirement { key: key.into(), operator, values: values.iter().map(|value| (*value).into()).collect() }
    }

    #[test]
    fn match_labels_and_each_operator_select_as_the_api_server_does() {
        let web = labels(&[("app", "web"), ("tier", "front")]);
        let worker = labels(&[("app", "worker")]);
        // `{}` selects every pod.
        assert!(LabelSelector::default().selects(&web) && LabelSelector::default().selects(&labels(&[])));
        let app_web = LabelSelector { match_labels: labels(&[("app", "web")]), ..LabelSelector::default() };
        assert!(app_web.selects(&web) && !app_web.selects(&worker));
        let expressions = |requirements: Vec<Requirement>| LabelSelector {
            match_labels: BTreeMap::new(),
            match_expressions: requirements,
        };
        let one_of = expressions(vec![requirement("app", SelectorOperator::In, &["web", "api"])]);
        assert!(one_of.selects(&web) && !one_of.selects(&worker));
        // `NotIn` selects a pod without the label too.
        let not_front = expressions(vec![requirement("tier", SelectorOperator::NotIn, &["front"])]);
        assert!(!not_front.selects(&web) && not_front.selects(&worker));
        let tiered = expressions(vec![requirement("tier", SelectorOperator::Exists, &[])]);
        assert!(tiered.selects(&web) && !tiered.selects(&worker));
        let untiered = expressions(vec![requirement("tier", SelectorOperator::DoesNotExist, &[])]);
        assert!(!untiered.selects(&web) && untiered.selects(&worker));
        // Every label and every requirement must hold.
        let both = LabelSelector { match_labels: labels(&[("app", "web")]), ..untiered };
        assert!(!both.selects(&web) && !both.selects(&worker));
        assert_eq!(SelectorOperator::named("Exists"), Some(SelectorOperator::Exists));
        assert_eq!(SelectorOperator::named("exists"), None);
    }
}
