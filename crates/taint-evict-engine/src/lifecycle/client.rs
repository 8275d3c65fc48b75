//! The controller's own client: kube-controller-manager reaches the API server through client-go's
//! token bucket (`--kube-api-qps`, `--kube-api-burst`), so the pass that marks many nodes `Unknown`
//! lasts as long as its writes take to get through it (docs/node-lifecycle.md, "The controller's own
//! client").
//!
//! What a node lost costs that client, in the pass that finds it silent
//! (`pkg/controller/nodelifecycle/node_lifecycle_controller.go`, `monitorNodeHealth`, and
//! `pkg/controller/util/node/controller_utils.go`, `MarkPodsNotReady`, of `kubernetes/kubernetes`):
//! its status, with `Ready=Unknown`; an Event `NodeNotReady`; and for each of its pods whose `Ready`
//! is `True`, the pod's status and an Event. The Events are sent by the recorder beside the pass, on
//! the same client: they are counted, as they may take tokens ahead of the pass's writes.

use super::health::Flags;

/// Nanoseconds in a second.
const SECOND: f64 = 1e9;

/// client-go's rate when `--kube-api-qps` is 0 (`rest.DefaultQPS`).
const DEFAULT_QPS: f32 = 5.0;

/// client-go's burst when `--kube-api-burst` is 0 (`rest.DefaultBurst`).
const DEFAULT_BURST: u32 = 10;

/// The requests of one taint: the node read (from the API server's cache), then patched
/// (`AddOrUpdateTaintOnNode`).
pub(super) const WRITES_OF_TAINT: u64 = 2;

/// The requests the controller makes in the pass that finds a node silent, the node's `ready_pods`
/// pods `Ready` then: its status and Event, each pod's status and Event.
#[must_use]
pub(super) fn writes_of_silent(ready_pods: u32) -> u64 {
    2 + 2 * u64::from(ready_pods)
}

/// The most a run of `writes` requests made at once waits on the controller's client: the bucket
/// full at first (`burst` at once), then `qps` a second. 0 when the client is not limited (a negative
/// `--kube-api-qps`) or the run fits the burst.
#[must_use]
pub(super) fn throttled(writes: u64, flags: &Flags) -> i128 {
    let qps = if flags.kube_api_qps == 0.0 { DEFAULT_QPS } else { flags.kube_api_qps };
    let burst = if flags.kube_api_burst == 0 { DEFAULT_BURST } else { flags.kube_api_burst };
    if qps.is_nan() || qps < 0.0 {
        return 0;
    }
    let waiting = writes.saturating_sub(u64::from(burst));
    #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
    let nanos = (waiting as f64 / f64::from(qps) * SECOND).ceil() as i128;
    nanos
}

#[cfg(test)]
mod tests {
    use super::{Flags, throttled, writes_of_silent};

    fn client(qps: f32, burst: u32) -> Flags {
        Flags { kube_api_qps: qps, kube_api_burst: burst, ..Flags::defaults_for(29) }
    }

    #[test]
    fn a_run_past_the_burst_waits_for_the_rest_at_the_rate() {
        // 240 nodes, no pod ready: 480 requests, 30 at once, 450 at 20 a second.
        assert_eq!(throttled(240 * writes_of_silent(0), &client(20.0, 30)), 22_500_000_000);
        assert_eq!(throttled(30, &client(20.0, 30)), 0, "the burst goes at once");
        assert_eq!(throttled(480, &client(1000.0, 1000)), 0);
    }

    #[test]
    fn client_go_reads_0_as_its_defaults_and_a_negative_rate_as_no_limit() {
        assert_eq!(throttled(15, &client(0.0, 0)), 1_000_000_000, "5 a second past a burst of 10");
        assert_eq!(throttled(1_000_000, &client(-1.0, 30)), 0);
    }

    #[test]
    fn each_ready_pod_costs_its_status_and_an_event() {
        assert_eq!(writes_of_silent(30), 62);
    }
}
