//! What the Events say that the objects do not: the cluster's own taint-eviction controller still
//! deleting pods, and when each node last became not ready (a swapped condition taint).

use std::collections::BTreeMap;

use kube::api::ListParams;
use kube::core::Request;

use crate::cluster::client::{Connection, PAGE_SIZE};
use crate::decode::not_ready::NotReady;
use crate::engine::lifecycle::ConditionTaint;
use crate::engine::model::NodeName;
use crate::engine::snapshot::Snapshot;
use crate::engine::time::Timestamp;

/// How many `TaintManagerEviction` events another controller (the cluster's own) reported in the
/// hour before `now`, and when the last of them was; `None` when events cannot be read.
pub async fn recent_upstream_evictions(connection: &Connection, now: Timestamp) -> Option<UpstreamEvictions> {
    let params = ListParams::default().fields("reason=TaintManagerEviction").limit(PAGE_SIZE);
    let request = Request::new("/api/v1/events").list(&params).ok()?;
    let body = connection.send(request, "list", "events").await.ok()?;
    let list: serde_json::Value = serde_json::from_str(&body).ok()?;
    upstream_evictions(&list, now)
}

/// The `TaintManagerEviction` events of another controller in the hour before `now`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UpstreamEvictions {
    /// How many.
    pub count: usize,
    /// When the last was (its `lastTimestamp`, else `eventTime`, else `firstTimestamp`).
    pub last: Timestamp,
}

/// [`recent_upstream_evictions`] of an Event list as read; `None` when there is none.
fn upstream_evictions(list: &serde_json::Value, now: Timestamp) -> Option<UpstreamEvictions> {
    let hour_ago = now.add_nanos(-3600 * 1_000_000_000);
    let times: Vec<Timestamp> = list["items"]
        .as_array()?
        .iter()
        .filter(|event| {
            let reporter = event["reportingComponent"].as_str().or_else(|| event["source"]["component"].as_str());
            reporter != Some(crate::cluster::evict::CONTROLLER)
        })
        .filter_map(|event| {
            ["lastTimestamp", "eventTime", "firstTimestamp"]
                .iter()
                .find_map(|field| event[*field].as_str().and_then(crate::decode::parse_time))
        })
        .filter(|&at| at >= hour_ago)
        .collect();
    Some(UpstreamEvictions { count: times.len(), last: times.into_iter().max()? })
}

/// The nodes of `snapshot` whose `unreachable`/`not-ready` NoExecute taint has a `timeAdded`: those
/// a swap may have given a new one.
#[must_use]
pub fn condition_tainted(snapshot: &Snapshot) -> Vec<&str> {
    let tainted = |node: &&crate::engine::snapshot::SnapshotNode| {
        node.taints.iter().any(|t| t.time_added.is_some() && ConditionTaint::from_key(&t.key).is_some())
    };
    snapshot.nodes.iter().filter(tainted).map(|node| node.name.as_str()).collect()
}

/// When the node's Events last said each of `nodes` became not ready (its newest `NodeNotReady`,
/// from its kubelet or the node lifecycle controller, with no `NodeReady` after it): the evidence
/// of a swapped condition taint (docs/upstream.md, "A taint swapped"). `None` when events cannot
/// be read.
pub async fn not_ready_since(connection: &Connection, nodes: &[&str]) -> Option<BTreeMap<NodeName, Timestamp>> {
    not_ready_spells(connection, Some(nodes)).await
}

/// [`not_ready_since`] for every node, as `run` reads it at start.
pub async fn every_not_ready_since(connection: &Connection) -> Option<BTreeMap<NodeName, Timestamp>> {
    not_ready_spells(connection, None).await
}

/// When each node (of `nodes`, or every one) last became not ready, as its Events say.
async fn not_ready_spells(connection: &Connection, nodes: Option<&[&str]>) -> Option<BTreeMap<NodeName, Timestamp>> {
    let mut spells = nodes.map_or_else(NotReady::every, NotReady::of);
    let mut params = ListParams::default().fields("involvedObject.kind=Node").limit(PAGE_SIZE);
    loop {
        let request = Request::new("/api/v1/events").list(&params).ok()?;
        let body = connection.send(request, "list", "events").await.ok()?;
        let list: serde_json::Value = serde_json::from_str(&body).ok()?;
        for event in list["items"].as_array()? {
            spells.note(event);
        }
        match list["metadata"]["continue"].as_str().filter(|token| !token.is_empty()) {
            Some(token) => params.continue_token = Some(token.to_owned()),
            None => break,
        }
    }
    Some(spells.since())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_cluster_s_own_evictions_say_when_the_last_one_was() {
        let now = super::Timestamp::from_unix_seconds(1_795_341_600); // 2026-11-22T10:00:00Z
        let list = serde_json::json!({"items": [
            {"source": {"component": "taint-eviction-controller"}, "lastTimestamp": "2026-11-22T09:10:00Z"},
            {"reportingComponent": "taint-eviction-controller", "eventTime": "2026-11-22T09:20:00.000000Z"},
            {"source": {"component": "taint-eviction-controller"}, "lastTimestamp": "2026-11-22T08:00:00Z"},
        ]});
        let found = super::upstream_evictions(&list, now).expect("two in the hour");
        assert_eq!(found.count, 2);
        assert_eq!(found.last, super::Timestamp::from_unix_seconds(1_795_341_600 - 40 * 60));
        assert_eq!(super::upstream_evictions(&serde_json::json!({"items": []}), now), None);
    }
}
