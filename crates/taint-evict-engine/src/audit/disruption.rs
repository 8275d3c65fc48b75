//! What a PodDisruptionBudget asks, a number of pods or a percent of them, and what one outage does
//! to it (docs/audit.md, "Rendered manifests").

/// A `spec.minAvailable` or `spec.maxUnavailable` value: a number of pods, or a percent of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scaled {
    /// A number of pods.
    Count(i64),
    /// A percent, from 0 to 100.
    Percent(i64),
}

impl Scaled {
    /// Its number of pods out of `of`: a percent rounded up, as the disruption controller scales it
    /// (`intstr.GetScaledValueFromIntOrPercent(value, of, true)`).
    #[must_use]
    pub fn of(self, of: i64) -> i64 {
        match self {
            Self::Count(count) => count,
            Self::Percent(percent) => {
                let scaled = (i128::from(percent) * i128::from(of) + 99).div_euclid(100);
                i64::try_from(scaled).unwrap_or(i64::MAX)
            }
        }
    }
}

/// What a budget asks: its `minAvailable` or its `maxUnavailable`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wanted {
    /// `spec.minAvailable`: the pods that must stay healthy.
    MinAvailable(Scaled),
    /// `spec.maxUnavailable`: the pods that may be unavailable.
    MaxUnavailable(Scaled),
}

impl Wanted {
    /// The healthy pods it needs of `replicas`, as the disruption controller's `desiredHealthy`.
    #[must_use]
    pub fn needed(self, replicas: i64) -> i64 {
        match self {
            Self::MinAvailable(value) => value.of(replicas),
            Self::MaxUnavailable(value) => replicas.saturating_sub(value.of(replicas)),
        }
    }
}

/// The outage the rule takes: a zone's, when the cluster has zones, else a node's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outage {
    /// One zone's.
    Zone,
    /// One node's.
    Node,
}

/// What one outage does to a budget, for [`super::Rule::BudgetBrokenByAnOutage`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Breach {
    /// The budget's index in the list checked.
    pub budget: usize,
    /// What it asks.
    pub wanted: Wanted,
    /// The healthy replicas it needs.
    pub needed: i64,
    /// The most replicas the outage takes.
    pub taken: i64,
    /// The outage.
    pub outage: Outage,
}
