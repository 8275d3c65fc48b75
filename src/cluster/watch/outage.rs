//! What the node and pod watches share when they fail: the retry delays, and an outage reported
//! once (and its end once), not a line per retry.
//!
//! Owns: [`WatchBackoff`] and [`Health`]. Uses: the clock (`time`), the runtime's reports, the metrics, and
//! `error`'s root cause.

use std::sync::Arc;
use std::time::Duration;

use kube::runtime::utils::{Backoff, ResetTimerBackoff};
use kube::runtime::watcher;
use tokio::sync::mpsc;

use crate::cluster::error::ClusterError;
use crate::metrics::Metrics;
use crate::runtime::report::{Report, RunEvent};
use crate::time::Clock;

/// The first retry delay of a failed watch.
const RETRY_MIN: Duration = Duration::from_millis(200);
/// The longest retry delay of a failed watch.
const RETRY_MAX: Duration = Duration::from_secs(5);
/// Healthy time after which the delay starts again from [`RETRY_MIN`].
const RETRY_RESET: Duration = Duration::from_secs(5);

/// Watch retry delays: from 200 ms doubling to 5 s. client-go's reflector (and kube's default) waits
/// from 800 ms up to 30 s and resets after 2 minutes; an enforcer that must see a taint's removal
/// before a deadline catches up sooner (one client, so no jitter is needed).
#[derive(Debug)]
pub(super) struct WatchBackoff {
    next: Duration,
}

impl Iterator for WatchBackoff {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        let delay = self.next;
        self.next = (self.next * 2).min(RETRY_MAX);
        Some(delay)
    }
}

impl Backoff for WatchBackoff {
    fn reset(&mut self) {
        self.next = RETRY_MIN;
    }
}

pub(super) fn backoff() -> ResetTimerBackoff<WatchBackoff> {
    ResetTimerBackoff::new(WatchBackoff { next: RETRY_MIN }, RETRY_RESET)
}

/// Reports a watch outage once, and its end once (not a line per retry).
pub(super) struct Health {
    what: &'static str,
    /// The namespace the watch is scoped to, for the resource an error names; `None`: the cluster.
    namespace: Option<String>,
    /// Since when the watch has been failing.
    failing: Option<crate::engine::time::Timestamp>,
    report: mpsc::UnboundedSender<Report>,
    clock: Clock,
    metrics: Arc<Metrics>,
    /// Where a failure that no retry can mend is said: the command ends with it.
    fatal: mpsc::UnboundedSender<ClusterError>,
}

impl Health {
    /// The health of watch `what` (`nodes`, `pods`), reported on `report`; a permanent failure is
    /// sent on `fatal`.
    pub(super) fn new(
        what: &'static str,
        report: mpsc::UnboundedSender<Report>,
        clock: Clock,
        metrics: Arc<Metrics>,
        fatal: mpsc::UnboundedSender<ClusterError>,
    ) -> Self {
        Self { what, namespace: None, failing: None, report, clock, metrics, fatal }
    }

    /// The same, for a watch scoped to `namespace`.
    pub(super) fn in_namespace(self, namespace: Option<&str>) -> Self {
        Self { namespace: namespace.map(str::to_owned), ..self }
    }

    /// The runtime's clock, which the watch's own waits follow.
    pub(super) fn clock(&self) -> Clock {
        self.clock.clone()
    }

    /// Reports a failed list or watch; `true` when it is permanent (a request the server refuses as
    /// malformed, forbidden or not found, one that cannot be built, or an answer past
    /// `--max-response-size`): the watch must stop, and the command ends with the error. Anything
    /// else is retried.
    pub(super) fn failed(&mut self, error: &watcher::Error) -> bool {
        if let Some(permanent) = permanent(error, self.what, self.namespace.as_deref()) {
            let _ = self.fatal.send(permanent);
            return true;
        }
        self.metrics.watch_restarted(self.what);
        if self.failing.is_none() {
            let now = self.clock.now();
            self.failing = Some(now);
            let event = RunEvent::Connection {
                watch: self.what.to_owned(),
                connected: false,
                reason: Some(watch_reason(error)),
                since: now,
            };
            let _ = self.report.send(Report { at: now, event });
        }
        false
    }

    pub(super) fn ok(&mut self) {
        if let Some(since) = self.failing.take() {
            let event = RunEvent::Connection { watch: self.what.to_owned(), connected: true, reason: None, since };
            let _ = self.report.send(Report { at: self.clock.now(), event });
        }
    }
}

/// The error to end the command with, when `error` is one no retry can mend.
pub(super) fn permanent(error: &watcher::Error, what: &str, namespace: Option<&str>) -> Option<ClusterError> {
    let (verb, error) = match error {
        watcher::Error::InitialListFailed(e) => ("list", e),
        watcher::Error::WatchStartFailed(e) | watcher::Error::WatchFailed(e) => ("watch", e),
        _ => return None,
    };
    let resource = match (what, namespace) {
        (what, Some(namespace)) => format!("{what} in namespace \"{namespace}\""),
        ("pods", None) => "pods at the cluster scope".to_owned(),
        (other, None) => other.to_owned(),
    };
    // The same answer would come again: a server that does not end its answer, or that sends an
    // event larger than any object.
    if let Some(large) = crate::cluster::error::find_cause::<crate::cluster::bound::TooLarge>(error) {
        return Some(ClusterError::too_large(large, verb, &resource));
    }
    match error {
        kube::Error::Api(status) if status.code == 403 => {
            Some(ClusterError::Forbidden { verb, resource, message: status.message.clone() })
        }
        kube::Error::Api(status) if matches!(status.code, 400 | 404 | 405) => {
            Some(ClusterError::ApiFailed { verb, resource, code: status.code, message: status.message.clone() })
        }
        kube::Error::BuildRequest(e) => Some(ClusterError::unsendable(verb, &resource, e)),
        _ => None,
    }
}

/// Why a watch failed, in an operator's words: the server's message, or the network's innermost
/// cause (`connection refused`), not kube's `ServiceError: client error (Connect)`.
fn watch_reason(error: &watcher::Error) -> String {
    let kube = match error {
        watcher::Error::InitialListFailed(e) | watcher::Error::WatchStartFailed(e) | watcher::Error::WatchFailed(e) => {
            e
        }
        other => return crate::cluster::error::root_cause(other),
    };
    match kube {
        kube::Error::Api(status) if !status.message.is_empty() => format!("{} ({})", status.message, status.code),
        other => crate::cluster::error::root_cause(other),
    }
}
