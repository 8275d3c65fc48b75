//! The metric families `run` counts in, and their registry.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// Upstream's buckets for `taint_eviction_controller_pod_deletion_duration_seconds`.
pub const DELETION_BUCKETS: [f64; 12] = [0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10.0, 30.0, 60.0, 120.0, 180.0, 240.0];

type Labels = Vec<(&'static str, &'static str)>;
/// `budget="NAMESPACE/NAME"`: the label of the pods blocked by one PodDisruptionBudget.
type BudgetLabels = Vec<(&'static str, String)>;

/// Why a deletion attempt failed, as the `reason` label of `taint_evict_deletion_failures_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureReason {
    /// 403: the service account may not patch the status or delete the pod.
    Forbidden,
    /// 429: the API server asked to slow down.
    Throttled,
    /// 5xx.
    ServerError,
    /// Another 4xx.
    Rejected,
    /// No HTTP answer: connection refused or reset, TLS, timeout.
    Transport,
    /// 429 from the Eviction API: a PodDisruptionBudget refused the eviction (`--mode evict`).
    DisruptionBudget,
}

impl FailureReason {
    /// The label value.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Forbidden => "forbidden",
            Self::Throttled => "throttled",
            Self::ServerError => "server_error",
            Self::Rejected => "rejected",
            Self::Transport => "transport",
            Self::DisruptionBudget => "pdb",
        }
    }

    /// The reason for an HTTP status code.
    #[must_use]
    pub fn of_status(code: u16) -> Self {
        match code {
            403 => Self::Forbidden,
            429 => Self::Throttled,
            500.. => Self::ServerError,
            _ => Self::Rejected,
        }
    }
}

/// Every metric `run` keeps, and whether it is ready. Cheap to update (atomics); shared by the loop,
/// the executor, the watches, the election and the HTTP endpoint.
pub struct Metrics {
    registry: Registry,
    deletions: Counter,
    deletion_seconds: Histogram,
    scheduled: Gauge,
    pods: Gauge,
    cancellations: Counter,
    failures: Family<Labels, Counter>,
    watch_restarts: Family<Labels, Counter>,
    blocked: Family<BudgetLabels, Gauge>,
    held: Family<Labels, Gauge>,
    /// Pods blocked per budget; the gauge family follows it under its lock, so that a budget's
    /// series leaves and comes back without racing another pod's change.
    blocked_counts: std::sync::Mutex<std::collections::HashMap<String, i64>>,
    leader: Gauge<i64, AtomicI64>,
    ready: AtomicBool,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").field("ready", &self.is_ready()).finish_non_exhaustive()
    }
}

impl Metrics {
    /// Fresh metrics, all zero, not ready.
    #[must_use]
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let deletions = Counter::default();
        registry.register(
            "taint_eviction_controller_pod_deletions",
            "Total number of Pods deleted by the taint eviction controller since its start.",
            deletions.clone(),
        );
        let deletion_seconds = Histogram::new(DELETION_BUCKETS);
        registry.register(
            "taint_eviction_controller_pod_deletion_duration_seconds",
            "Seconds between a Pod's eviction deadline and its successful deletion.",
            deletion_seconds.clone(),
        );
        let scheduled = Gauge::default();
        registry.register("taint_evict_scheduled_evictions", "Deletion timers armed now.", scheduled.clone());
        let pods = Gauge::default();
        registry.register(
            "taint_evict_watched_pods",
            "Pods kept in memory: those bound to the watched nodes.",
            pods.clone(),
        );
        let cancellations = Counter::default();
        registry.register(
            "taint_evict_cancellations",
            "Armed deletions cancelled (taint removed, toleration changed, pod gone).",
            cancellations.clone(),
        );
        let failures = Family::default();
        registry.register(
            "taint_evict_deletion_failures",
            "Deletion attempts that failed and are retried, by reason.",
            failures.clone(),
        );
        let watch_restarts = Family::default();
        registry.register(
            "taint_evict_watch_restarts",
            "Times a watch failed and was restarted, by resource.",
            watch_restarts.clone(),
        );
        let blocked = Family::default();
        registry.register(
            "taint_evict_blocked_pods",
            "Pods due whose eviction a PodDisruptionBudget refuses now (--mode evict), by budget.",
            blocked.clone(),
        );
        let held = Family::default();
        registry.register(
            "taint_evict_held_deletions",
            "Deletions due and held now, by what holds them: watchGap (a watch interrupted), maxDeletions, \
             keepLastReady.",
            held.clone(),
        );
        let leader = Gauge::default();
        registry.register(
            "taint_evict_leader",
            "1 while this instance decides and deletes, 0 while another one does.",
            leader.clone(),
        );
        Self {
            registry,
            deletions,
            deletion_seconds,
            scheduled,
            pods,
            cancellations,
            failures,
            watch_restarts,
            blocked,
            held,
            blocked_counts: std::sync::Mutex::default(),
            leader,
            ready: AtomicBool::new(false),
        }
    }

    /// A pod was deleted `late_seconds` after its deadline.
    pub fn deleted(&self, late_seconds: f64) {
        self.deletions.inc();
        self.deletion_seconds.observe(late_seconds.max(0.0));
    }

    /// `armed` deletion timers are armed now.
    pub fn set_scheduled(&self, armed: usize) {
        self.scheduled.set(i64::try_from(armed).unwrap_or(i64::MAX));
    }

    /// `pods` pods are kept now.
    pub fn set_pods(&self, pods: usize) {
        self.pods.set(i64::try_from(pods).unwrap_or(i64::MAX));
    }

    /// An armed deletion was cancelled.
    pub fn cancelled(&self) {
        self.cancellations.inc();
    }

    /// A deletion attempt failed.
    pub fn failed(&self, reason: FailureReason) {
        self.failures.get_or_create(&vec![("reason", reason.as_str())]).inc();
    }

    /// The watch of `resource` (`nodes`, `pods`) failed and is being restarted.
    pub fn watch_restarted(&self, resource: &'static str) {
        self.watch_restarts.get_or_create(&vec![("resource", resource)]).inc();
    }

    /// One more pod is blocked by `budget` (`NAMESPACE/NAME`) until the guard is dropped: when it is
    /// evicted, gone, blocked by another budget, or `run` stops trying.
    #[must_use]
    pub fn blocked(self: &std::sync::Arc<Self>, budget: String) -> Blocked {
        self.count_blocked(&budget, 1);
        Blocked { metrics: self.clone(), budget }
    }

    fn count_blocked(&self, budget: &str, change: i64) {
        let mut counts = self.blocked_counts.lock().expect("blocked pods");
        let count = counts.entry(budget.to_owned()).or_default();
        *count += change;
        let labels = vec![("budget", budget.to_owned())];
        if *count > 0 {
            self.blocked.get_or_create(&labels).set(*count);
        } else {
            // A budget that blocks nothing any more leaves the exposition, as a deleted object's would.
            counts.remove(budget);
            self.blocked.remove(&labels);
        }
    }

    /// `count` due deletions are held now `by` (`watchGap`, `maxDeletions`, `keepLastReady`).
    pub fn set_held(&self, by: &'static str, count: usize) {
        self.held.get_or_create(&vec![("by", by)]).set(i64::try_from(count).unwrap_or(i64::MAX));
    }

    /// This instance leads (decides and deletes) or not.
    pub fn set_leader(&self, leading: bool) {
        self.leader.set(i64::from(leading));
    }

    /// The initial lists are in: `/readyz` answers 200 from now on.
    pub fn set_ready(&self) {
        self.ready.store(true, Ordering::Release);
    }

    /// Whether the initial lists are in.
    #[must_use]
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }

    /// The metrics in the OpenMetrics text format (Prometheus reads it).
    #[must_use]
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut text, &self.registry);
        text
    }
}

/// A pod counted in `taint_evict_blocked_pods` (see [`Metrics::blocked`]).
#[derive(Debug)]
pub struct Blocked {
    metrics: std::sync::Arc<Metrics>,
    budget: String,
}

impl Blocked {
    /// The budget, `NAMESPACE/NAME`.
    #[must_use]
    pub fn budget(&self) -> &str {
        &self.budget
    }
}

impl Drop for Blocked {
    fn drop(&mut self) {
        self.metrics.count_blocked(&self.budget, -1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample<'a>(text: &'a str, series: &str) -> Option<&'a str> {
        text.lines().find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
    }

    #[test]
    fn upstream_names_and_buckets_with_real_seconds() {
        let metrics = Metrics::new();
        metrics.deleted(0.003);
        metrics.deleted(1.7);
        let text = metrics.encode();
        assert_eq!(sample(&text, "taint_eviction_controller_pod_deletions_total"), Some("2"));
        let count = "taint_eviction_controller_pod_deletion_duration_seconds_count";
        assert_eq!(sample(&text, count), Some("2"));
        let bucket = |le: &str| {
            sample(&text, &format!("taint_eviction_controller_pod_deletion_duration_seconds_bucket{{le=\"{le}\"}}"))
        };
        assert_eq!(bucket("0.005"), Some("1"));
        assert_eq!(bucket("1.0"), Some("1"));
        assert_eq!(bucket("2.5"), Some("2"));
        assert_eq!(bucket("240.0"), Some("2"));
        assert_eq!(bucket("+Inf"), Some("2"));
        assert!(text.ends_with("# EOF\n"));
    }

    #[test]
    fn labelled_counters_gauges_and_readiness() {
        let metrics = Metrics::new();
        metrics.failed(FailureReason::of_status(503));
        metrics.failed(FailureReason::of_status(503));
        metrics.failed(FailureReason::of_status(403));
        metrics.watch_restarted("pods");
        metrics.set_scheduled(7);
        metrics.set_leader(true);
        metrics.cancelled();
        let text = metrics.encode();
        assert_eq!(sample(&text, "taint_evict_deletion_failures_total{reason=\"server_error\"}"), Some("2"));
        assert_eq!(sample(&text, "taint_evict_deletion_failures_total{reason=\"forbidden\"}"), Some("1"));
        assert_eq!(sample(&text, "taint_evict_watch_restarts_total{resource=\"pods\"}"), Some("1"));
        assert_eq!(sample(&text, "taint_evict_scheduled_evictions"), Some("7"));
        assert_eq!(sample(&text, "taint_evict_cancellations_total"), Some("1"));
        assert_eq!(sample(&text, "taint_evict_leader"), Some("1"));
        assert!(!metrics.is_ready());
        metrics.set_ready();
        assert!(metrics.is_ready());
        assert_eq!(FailureReason::of_status(429), FailureReason::Throttled);
        assert_eq!(FailureReason::of_status(400), FailureReason::Rejected);
    }

    #[test]
    fn blocked_pods_are_counted_by_budget_and_a_budget_blocking_none_leaves_the_exposition() {
        let metrics = std::sync::Arc::new(Metrics::new());
        let series = |budget: &str| format!("taint_evict_blocked_pods{{budget=\"{budget}\"}}");
        let first = metrics.blocked("web/frontend".into());
        let second = metrics.blocked("web/frontend".into());
        let other = metrics.blocked("db/postgres".into());
        metrics.failed(FailureReason::DisruptionBudget);
        let text = metrics.encode();
        assert_eq!(sample(&text, &series("web/frontend")), Some("2"), "{text}");
        assert_eq!(sample(&text, &series("db/postgres")), Some("1"), "{text}");
        assert_eq!(sample(&text, "taint_evict_deletion_failures_total{reason=\"pdb\"}"), Some("1"), "{text}");
        assert_eq!(first.budget(), "web/frontend");
        drop((first, other));
        let text = metrics.encode();
        assert_eq!(sample(&text, &series("web/frontend")), Some("1"), "{text}");
        assert_eq!(sample(&text, &series("db/postgres")), None, "{text}");
        drop(second);
        assert!(!metrics.encode().contains("budget="), "{}", metrics.encode());
    }
}
