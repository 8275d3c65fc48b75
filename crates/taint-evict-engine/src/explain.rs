//! Why a pod's tolerations do or do not cover each NoExecute taint: the matcher's reasoning, step by
//! step, for `kubectl taint-evict explain`.

use super::model::{Taint, Toleration};
use super::tolerate::{Mismatch, check};

/// How one taint was matched against a pod's tolerations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaintMatch {
    /// The NoExecute taint, in node order.
    pub taint: Taint,
    /// The index of the first toleration that tolerates it (the one upstream uses).
    pub used: Option<usize>,
    /// The tolerations tried before it (all of them when none matched), with the rule that failed.
    pub rejected: Vec<(usize, Mismatch)>,
}

/// For each taint, which toleration upstream uses and why the ones before it did not match.
#[must_use]
pub fn explain(taints: &[Taint], tolerations: &[Toleration]) -> Vec<TaintMatch> {
    taints
        .iter()
        .map(|taint| {
            let mut rejected = Vec::new();
            let mut used = None;
            for (i, toleration) in tolerations.iter().enumerate() {
                match check(toleration, taint) {
                    Ok(()) => {
                        used = Some(i);
                        break;
                    }
                    Err(why) => rejected.push((i, why)),
                }
            }
            TaintMatch { taint: taint.clone(), used, rejected }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Effect;
    use crate::text::CompactStr;

    #[test]
    fn explain_stops_at_the_first_match_and_keeps_the_reasons_before_it() {
        let taint = Taint::new("k", "v", Effect::NoExecute);
        let tolerations = [
            Toleration { key: "k".into(), operator: "Equal".into(), value: "w".into(), effect: None, seconds: None },
            Toleration {
                key: "k".into(),
                operator: "Exists".into(),
                value: Box::default(),
                effect: None,
                seconds: Some(5),
            },
            Toleration {
                key: CompactStr::default(),
                operator: "Exists".into(),
                value: Box::default(),
                effect: None,
                seconds: None,
            },
        ];
        let matches = explain(std::slice::from_ref(&taint), &tolerations);
        assert_eq!(matches, [TaintMatch { taint, used: Some(1), rejected: vec![(0, Mismatch::Value)] }]);
    }

    #[test]
    fn explain_lists_every_rejection_for_an_untolerated_taint() {
        let taint = Taint::new("k", "", Effect::NoExecute);
        let tolerations = [Toleration {
            key: "k".into(),
            operator: "Exists".into(),
            value: Box::default(),
            effect: Some(Effect::NoSchedule),
            seconds: None,
        }];
        let matches = explain(&[taint], &tolerations);
        assert_eq!(matches[0].used, None);
        assert_eq!(matches[0].rejected, [(0, Mismatch::Effect)]);
    }
}
