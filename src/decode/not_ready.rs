//! When each node last became not ready, as its Events say: its newest `NodeNotReady` (from its
//! kubelet or the node lifecycle controller) with no `NodeReady` after it, the evidence of a swapped
//! condition taint (docs/upstream.md, "A taint swapped"). Read from a live list of Events or from a
//! record's.

use std::collections::BTreeMap;

use serde_json::Value;

use super::parse_time;
use crate::engine::model::NodeName;
use crate::engine::time::Timestamp;

/// Each node's newest `NodeNotReady` and `NodeReady`, as Events are told.
#[derive(Debug, Default)]
pub struct NotReady {
    newest: BTreeMap<String, (Option<Timestamp>, Option<Timestamp>)>,
    /// Only the nodes named at the start, or every node.
    only_named: bool,
}

impl NotReady {
    /// Of every node whose Events are told.
    #[must_use]
    pub fn every() -> Self {
        Self::default()
    }

    /// Of these nodes only.
    #[must_use]
    pub fn of(nodes: &[&str]) -> Self {
        Self { newest: nodes.iter().map(|&node| (node.to_owned(), (None, None))).collect(), only_named: true }
    }

    /// Told one Event (of any kind: those about other things are passed over).
    pub fn note(&mut self, event: &Value) {
        if event["involvedObject"]["kind"].as_str().is_some_and(|kind| kind != "Node") {
            return;
        }
        let Some(name) = event["involvedObject"]["name"].as_str() else { return };
        let seen = if self.only_named {
            match self.newest.get_mut(name) {
                Some(seen) => seen,
                None => return,
            }
        } else {
            self.newest.entry(name.to_owned()).or_default()
        };
        let slot = match event["reason"].as_str() {
            Some("NodeNotReady") => &mut seen.0,
            Some("NodeReady") => &mut seen.1,
            _ => return,
        };
        let at = [&event["lastTimestamp"], &event["series"]["lastObservedTime"], &event["eventTime"]]
            .into_iter()
            .chain([&event["firstTimestamp"]])
            .find_map(|field| field.as_str().and_then(parse_time));
        if let Some(at) = at {
            *slot = (*slot).max(Some(at));
        }
    }

    /// When each node not ready since became so.
    #[must_use]
    pub fn since(self) -> BTreeMap<NodeName, Timestamp> {
        let spells = self.newest.into_iter().filter_map(|(node, (not_ready, ready))| match (not_ready, ready) {
            (Some(not_ready), ready) if ready.is_none_or(|ready| ready < not_ready) => {
                Some((node.as_str().into(), not_ready))
            }
            _ => None,
        });
        spells.collect()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_node_not_ready_since_its_newest_not_ready_event_unless_ready_came_after() {
        // n1: not ready at 10:00, ready at 10:05, not ready again at 10:07: since 10:07. n2: ready
        // after its not ready: not in the answer. n3 is not asked about.
        let events = [
            json!({"involvedObject": {"kind": "Node", "name": "n1"}, "reason": "NodeNotReady", "lastTimestamp": "2026-11-29T10:00:00Z"}),
            json!({"involvedObject": {"kind": "Node", "name": "n1"}, "reason": "NodeReady", "lastTimestamp": "2026-11-29T10:05:00Z"}),
            json!({"involvedObject": {"kind": "Node", "name": "n1"}, "reason": "NodeNotReady", "eventTime": "2026-11-29T10:07:00.000000Z"}),
            json!({"involvedObject": {"kind": "Node", "name": "n2"}, "reason": "NodeNotReady", "lastTimestamp": "2026-11-29T10:00:00Z"}),
            json!({"involvedObject": {"kind": "Node", "name": "n2"}, "reason": "NodeReady", "lastTimestamp": "2026-11-29T10:01:00Z"}),
            json!({"involvedObject": {"kind": "Node", "name": "n3"}, "reason": "NodeNotReady", "lastTimestamp": "2026-11-29T10:00:00Z"}),
            json!({"involvedObject": {"kind": "Pod", "name": "n1"}, "reason": "NodeNotReady", "lastTimestamp": "2026-11-29T11:00:00Z"}),
        ];
        let mut asked = NotReady::of(&["n1", "n2"]);
        let mut every = NotReady::every();
        for event in &events {
            asked.note(event);
            every.note(event);
        }
        let at = |text: &str| parse_time(text).expect("a time");
        assert_eq!(asked.since(), BTreeMap::from([("n1".into(), at("2026-11-29T10:07:00Z"))]));
        assert_eq!(
            every.since(),
            BTreeMap::from([("n1".into(), at("2026-11-29T10:07:00Z")), ("n3".into(), at("2026-11-29T10:00:00Z"))])
        );
    }
}
