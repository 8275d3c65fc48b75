//! After an incident: each `unreachable`/`not-ready` NoExecute taint a node got, against when the node
//! lifecycle controller should have added it (docs/review.md, "Node taints").
//!
//! What a record saw of node health comes in as [`NodeMoment`]s, in order: each node as written,
//! its Lease's renewals, the controller manager's Lease. When a node goes silent (its last renewal
//! `silent_after` ago) or is seen not ready, the lifecycle prediction is made as `plan` would have
//! made it then, from everything the record held then: that window is the one its taint is judged
//! against. Not just before the taint: the prediction says what is to come, never earlier than its
//! own instant, so made then it could never find a taint late. What changed between the silence and
//! the taint and moved it (the zone's state, a new leader) is named beside the verdict.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use crate::lifecycle::{
    Basis, ConditionTaint, ControllerLease, Flags, HeldReason, NodeForecast, NodeHealth, Observation, Ready, ZoneKey,
    ZoneState, predict,
};
use crate::model::NodeName;
use crate::time::Timestamp;

/// Who wrote a node, when the source says (an audit log).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Writer {
    /// The node lifecycle controller (kube-controller-manager's `node-controller` client).
    Controller,
    /// Someone else, by name.
    Other(Box<str>),
}

/// One thing a record saw of node health.
#[derive(Clone, Debug)]
pub enum NodeSeen {
    /// A node as written then (its `lease_renewed` is not read: renewals come as
    /// [`NodeSeen::Renewed`]), and who wrote it when the source says.
    Node {
        /// What the controller reads of it.
        health: NodeHealth,
        /// Its writer, when known.
        by: Option<Writer>,
    },
    /// A node deleted.
    NodeGone(NodeName),
    /// A node's Lease renewed (`spec.renewTime`).
    Renewed {
        /// The node.
        node: NodeName,
        /// Its `renewTime`.
        renewed: Timestamp,
    },
    /// The controller manager's Lease as written.
    Controller(ControllerLease),
    /// The record saw nothing from this moment's instant to `until`.
    Gap {
        /// When it saw again.
        until: Timestamp,
    },
}

/// What was seen of node health, and when.
#[derive(Clone, Debug)]
pub struct NodeMoment {
    /// When.
    pub at: Timestamp,
    /// What.
    pub seen: NodeSeen,
}

/// How the review reads node health.
#[derive(Clone, Copy, Debug)]
pub struct Reading {
    /// The controller's settings.
    pub flags: Flags,
    /// A `Ready=True` node not heard from for longer than this is silent (`--silent-after`).
    pub silent_after: Duration,
    /// Two renewals of a node at most this far apart are taken as its kubelet heartbeating between
    /// them: a recorder writes one renewal each `--leases-every` and holds the others back.
    pub bridged: Duration,
    /// A taint within this of its window is within it.
    pub slack: i128,
}

/// The window the prediction gave, made when the node went silent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Foreseen {
    /// When the node went silent (its last heartbeat and `silent_after`; the prediction is made a
    /// nanosecond later, once it is silent), or was seen not ready.
    pub at: Timestamp,
    /// The taint foreseen.
    pub key: ConditionTaint,
    /// Its earliest instant.
    pub earliest: Timestamp,
    /// Its latest; `None` when the zone may hold it back for good.
    pub latest: Option<Timestamp>,
    /// Why it is expected.
    pub basis: Basis,
}

/// A taint judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaintVerdict {
    /// Added within the window.
    Within,
    /// Added this many nanoseconds before the window.
    Early(i128),
    /// Added this many nanoseconds after the window.
    Late(i128),
    /// Foreseen before the record's end and not added by then.
    NotTainted,
    /// Added by someone other than the controller: not judged.
    HandMade,
    /// Added by the controller, but the record never showed the node silent or not ready before it.
    NotSeenSilent,
    /// Added, though the prediction made when the node went silent held it back for this reason.
    Held(HeldReason),
}

/// What moved a taint between the node's silence and its taint (or the record's end).
#[derive(Clone, Debug, PartialEq)]
pub enum Why {
    /// The node's zone was not in its normal state just before the taint (or at the end), and the
    /// node waited longer than the grace period and two passes (or its taint came late).
    Zone {
        /// The zone.
        zone: ZoneKey,
        /// Its state.
        state: ZoneState,
        /// Its counted nodes not ready.
        not_ready: usize,
        /// Its counted nodes.
        nodes: usize,
        /// The taint rate the state gives it, a second.
        rate: f32,
    },
    /// A new leader of the controller started meanwhile: every node's grace started again.
    Restart {
        /// When its term started.
        at: Timestamp,
        /// When the leader before it last renewed, when seen: no controller acted from then.
        last_renewed: Option<Timestamp>,
    },
}

/// One node's condition taint, judged.
#[derive(Clone, Debug, PartialEq)]
pub struct TaintReview {
    /// The node.
    pub node: NodeName,
    /// Its zone.
    pub zone: ZoneKey,
    /// The taint added (or foreseen, when not added).
    pub key: ConditionTaint,
    /// When the record saw it added (its `timeAdded` when seen later, in a list after a gap);
    /// `None`: not added.
    pub added: Option<Timestamp>,
    /// Its writer, when the source says.
    pub by: Option<Writer>,
    /// The node's last heartbeat before its silence.
    pub heartbeat: Option<Timestamp>,
    /// The record held no renewal of its Lease: its silence was read from its `Ready` condition's
    /// `lastHeartbeatTime`, which a kubelet with a Lease writes only every few minutes.
    pub without_lease: bool,
    /// The window, when foreseen.
    pub foreseen: Option<Foreseen>,
    /// The judgement.
    pub verdict: TaintVerdict,
    /// What moved it.
    pub why: Vec<Why>,
    /// A gap of the record falls between the silence and the taint: the judgement is not known.
    pub in_gap: bool,
}

/// A node as the review follows it.
struct Followed {
    /// As last written.
    health: NodeHealth,
    /// Its last Lease renewal seen; `None`: none yet (its silence is read from its status).
    renewed: Option<Timestamp>,
    /// Until when it is taken as heard: the next renewal (or line) the record holds, when it
    /// bridges the one before.
    bridged_until: Option<Timestamp>,
    /// The window made when it went silent, why it was held back (if it was), and its last
    /// heartbeat then.
    foreseen: Option<(Foreseen, Option<HeldReason>, Option<Timestamp>)>,
}

/// Each condition taint added during the record, and each foreseen and not added by `end`, from
/// `moments` in the order of their instants.
#[must_use]
pub fn review_taints(moments: &[NodeMoment], end: Timestamp, reading: &Reading) -> Vec<TaintReview> {
    let bridged = nanos(reading.bridged);
    let silent_after = nanos(reading.silent_after);
    // Each node's renewals, in order: a renewal followed by the next within `bridged` was no silence.
    let mut renewals: HashMap<NodeName, Vec<Timestamp>> = HashMap::new();
    for moment in moments {
        if let NodeSeen::Renewed { node, renewed } = &moment.seen {
            renewals.entry(node.clone()).or_default().push(*renewed);
        }
    }
    for list in renewals.values_mut() {
        list.sort();
    }
    // Each node's lines, for a node without a Lease: its status says whether it went silent.
    let mut lines: HashMap<NodeName, Vec<(Timestamp, Option<Ready>)>> = HashMap::new();
    for moment in moments {
        if let NodeSeen::Node { health, .. } = &moment.seen {
            let status = health.ready.as_ref().map(|ready| ready.status);
            lines.entry(health.name.clone()).or_default().push((moment.at, status));
        }
    }
    // The next of each after an instant, by a binary search: a day's record holds 1,440 renewals a node.
    let next_line = |node: &NodeName, after: Timestamp| {
        let list = lines.get(node)?;
        list.get(list.partition_point(|(at, _)| *at <= after)).copied()
    };
    let next_renewal = |node: &NodeName, after: Timestamp| {
        let list = renewals.get(node)?;
        list.get(list.partition_point(|at| *at <= after)).copied()
    };
    let mut terms_renewed: HashMap<Option<Timestamp>, Timestamp> = HashMap::new();
    for moment in moments {
        if let NodeSeen::Controller(lease) = &moment.seen
            && let Some(renewed) = lease.renewed
        {
            let last = terms_renewed.entry(lease.acquired).or_insert(renewed);
            *last = (*last).max(renewed);
        }
    }
    let mut review = Review {
        nodes: BTreeMap::new(),
        controller: None,
        terms_renewed,
        terms: Vec::new(),
        gaps: Vec::new(),
        found: Vec::new(),
    };
    // When each Ready node goes silent, if nothing is heard before.
    let mut silences: BTreeSet<(Timestamp, NodeName)> = BTreeSet::new();
    let mut next_silence: HashMap<NodeName, Timestamp> = HashMap::new();
    let mut schedule = |silences: &mut BTreeSet<(Timestamp, NodeName)>, name: &NodeName, at: Option<Timestamp>| {
        if let Some(old) = next_silence.remove(name) {
            silences.remove(&(old, name.clone()));
        }
        if let Some(at) = at {
            silences.insert((at, name.clone()));
            next_silence.insert(name.clone(), at);
        }
    };
    for moment in moments {
        review.silent_until(&mut silences, moment.at, reading);
        match &moment.seen {
            NodeSeen::Node { health, by } => {
                review.node(health, by.as_ref(), moment.at, reading);
                if let Some(followed) = review.nodes.get_mut(&health.name)
                    && followed.renewed.is_none()
                    && is_ready(health)
                {
                    // No Lease renewal seen: a node the record shows `Ready=True` again (or to its
                    // end) was heard until then; one it shows marked `Unknown` next went silent
                    // after its last status heartbeat.
                    let next = next_line(&health.name, moment.at);
                    let silent = next.is_some_and(|(_, status)| status == Some(Ready::Unknown));
                    followed.bridged_until = if silent { None } else { Some(next.map_or(FOREVER, |(at, _)| at)) };
                    let beat = health.ready.as_ref().and_then(|ready| ready.last_heartbeat);
                    let at = beat.filter(|_| silent).map(|beat| beat.add_nanos(silent_after as i64 + 1));
                    schedule(&mut silences, &health.name, at);
                }
            }
            NodeSeen::NodeGone(name) => {
                review.nodes.remove(name);
                schedule(&mut silences, name, None);
            }
            NodeSeen::Renewed { node, renewed } => {
                let next = next_renewal(node, *renewed);
                let bridges = next.filter(|next| next.nanos_since(*renewed) <= bridged);
                if let Some(followed) = review.nodes.get_mut(node) {
                    followed.renewed = Some(followed.renewed.map_or(*renewed, |last| last.max(*renewed)));
                    followed.bridged_until = bridges;
                    // Heard again: a silence foreseen and not tainted is over.
                    if followed.health.condition_taint().is_none() && is_ready(&followed.health) {
                        followed.foreseen = None;
                    }
                }
                let silent = if bridges.is_some() { None } else { Some(renewed.add_nanos(silent_after as i64 + 1)) };
                schedule(&mut silences, node, silent);
            }
            NodeSeen::Controller(lease) => review.controller(lease),
            NodeSeen::Gap { until } => review.gaps.push((moment.at, *until)),
        }
    }
    let end = moments.last().map_or(end, |m| end.max(m.at));
    review.silent_until(&mut silences, end, reading);
    review.finish(end, reading)
}

fn nanos(duration: Duration) -> i128 {
    i128::try_from(duration.as_nanos()).unwrap_or(i128::MAX)
}

fn is_ready(health: &NodeHealth) -> bool {
    health.ready.as_ref().is_some_and(|ready| ready.status == Ready::True)
}

/// A leader's term of the controller as the record saw it start.
struct Term {
    at: Timestamp,
    last_renewed: Option<Timestamp>,
}

struct Review {
    nodes: BTreeMap<NodeName, Followed>,
    controller: Option<ControllerLease>,
    /// Each term's (by its `acquireTime`) last renewal in the whole record: its leader renewed
    /// throughout, as a recorder writes its Lease on every change.
    terms_renewed: HashMap<Option<Timestamp>, Timestamp>,
    terms: Vec<Term>,
    gaps: Vec<(Timestamp, Timestamp)>,
    found: Vec<TaintReview>,
}

impl Review {
    /// The observation `plan` would have read at `now`: each node heard within a bridge of renewals
    /// taken as heard at `now`, the others at their last renewal (else their `Ready` heartbeat).
    fn observe(&self, now: Timestamp, reading: &Reading) -> Observation {
        let nodes = self
            .nodes
            .values()
            .map(|followed| {
                let mut health = followed.health.clone();
                health.lease_renewed = match (followed.renewed, followed.bridged_until) {
                    (Some(_), Some(until)) if until >= now => Some(now),
                    (Some(renewed), _) => Some(renewed),
                    (None, Some(until)) if until >= now => Some(now),
                    (None, _) => health.ready.as_ref().and_then(|ready| ready.last_heartbeat),
                };
                health
            })
            .collect();
        let controller = self.controller.as_ref().map(|lease| {
            // The same term written again later: its leader renewed throughout.
            let mut lease = lease.clone();
            if self.terms_renewed.get(&lease.acquired).is_some_and(|until| *until >= now) {
                lease.renewed = lease.renewed.max(Some(now));
            }
            lease
        });
        Observation { now, nodes, controller, flags: reading.flags, silent_after: reading.silent_after }
    }

    fn forecast(&self, now: Timestamp, reading: &Reading, name: &NodeName) -> (Option<NodeForecast>, Vec<Why>) {
        let prediction = predict(&self.observe(now, reading));
        let forecast = prediction.nodes.into_iter().find(|n| &n.name == name);
        let zone = forecast.as_ref().and_then(|f| prediction.zones.iter().find(|z| z.zone == f.zone));
        let why = zone
            .filter(|z| z.state != ZoneState::Normal)
            .map(|z| Why::Zone {
                zone: z.zone.clone(),
                state: z.state,
                not_ready: z.not_ready,
                nodes: z.nodes,
                rate: z.rate_per_second,
            })
            .into_iter()
            .collect();
        (forecast, why)
    }

    /// Each node that went silent before `until`, foreseen when it did.
    fn silent_until(&mut self, silences: &mut BTreeSet<(Timestamp, NodeName)>, until: Timestamp, reading: &Reading) {
        while let Some((at, name)) = silences.first().cloned().filter(|(at, _)| *at < until) {
            silences.remove(&(at, name.clone()));
            // Silent once not heard for longer than `silent_after`: predicted a nanosecond after.
            self.foresee(&name, at, at.add_nanos(-1), reading);
        }
    }

    /// The prediction for `name` made at `at`, kept when it foresees (or holds back) a taint.
    fn foresee(&mut self, name: &NodeName, at: Timestamp, shown: Timestamp, reading: &Reading) {
        let Some(followed) = self.nodes.get(name) else { return };
        if followed.foreseen.is_some() || followed.health.condition_taint().is_some() {
            return;
        }
        let (forecast, _) = self.forecast(at, reading, name);
        let Some(forecast) = forecast else { return };
        let kept = match (forecast.taint, &forecast.held) {
            (Some(taint), _) => Some((
                Foreseen {
                    at: shown,
                    key: taint.key,
                    earliest: taint.earliest,
                    latest: taint.latest,
                    basis: taint.basis,
                },
                None,
            )),
            (None, Some(held)) if held.reason != HeldReason::Recovered => {
                let key = if forecast.ready == Some(Ready::False) {
                    ConditionTaint::NotReady
                } else {
                    ConditionTaint::Unreachable
                };
                let foreseen = Foreseen { at: shown, key, earliest: at, latest: None, basis: Basis::LostHeartbeat };
                Some((foreseen, Some(held.reason)))
            }
            _ => None,
        };
        if let (Some((foreseen, held)), Some(followed)) = (kept, self.nodes.get_mut(name)) {
            followed.foreseen = Some((foreseen, held, forecast.last_heartbeat));
        }
    }

    fn controller(&mut self, lease: &ControllerLease) {
        if let Some(last) = &self.controller
            && last.acquired != lease.acquired
            && let Some(at) = lease.acquired
        {
            let last_renewed = self.terms_renewed.get(&last.acquired).copied().or(last.renewed);
            self.terms.push(Term { at, last_renewed });
        }
        self.controller = Some(lease.clone());
    }

    fn node(&mut self, health: &NodeHealth, by: Option<&Writer>, at: Timestamp, reading: &Reading) {
        let before = self.nodes.get(&health.name).map(|followed| followed.health.condition_taint());
        let after = health.condition_taint();
        if let (Some(None), Some((key, time_added))) = (before, after) {
            // A list after a gap sees it late: its `timeAdded` says when (to the second).
            let added = time_added.filter(|added| at.nanos_since(*added) > 2 * SECOND).unwrap_or(at);
            self.judge(health, key, added, by, at, reading);
        }
        let followed = self.nodes.entry(health.name.clone()).or_insert_with(|| Followed {
            health: health.clone(),
            renewed: None,
            bridged_until: None,
            foreseen: None,
        });
        followed.health = health.clone();
        let heard = followed.renewed.is_none()
            && is_ready(health)
            && health
                .ready
                .as_ref()
                .and_then(|r| r.last_heartbeat)
                .is_some_and(|beat| at.nanos_since(beat) <= nanos(reading.silent_after));
        if after.is_some() || heard {
            // Tainted, or its kubelet heard again: what was foreseen is spent.
            followed.foreseen = None;
        }
        if !is_ready(health) && after.is_none() {
            // Seen not ready (or marked `Unknown`): foreseen now, if not already.
            self.foresee(&health.name, at, at, reading);
        }
    }

    fn judge(
        &mut self,
        health: &NodeHealth,
        key: ConditionTaint,
        added: Timestamp,
        by: Option<&Writer>,
        at: Timestamp,
        reading: &Reading,
    ) {
        let followed = self.nodes.get(&health.name);
        let foreseen = followed.and_then(|f| f.foreseen);
        let without_lease = followed.is_some_and(|f| f.renewed.is_none());
        let matches = match key {
            ConditionTaint::Unreachable => health.ready.as_ref().is_some_and(|r| r.status == Ready::Unknown),
            ConditionTaint::NotReady => health.ready.as_ref().is_some_and(|r| r.status == Ready::False),
        };
        let hand_made = matches!(by, Some(Writer::Other(_))) || !matches;
        let mut review = TaintReview {
            node: health.name.clone(),
            zone: health.zone.clone(),
            key,
            added: Some(added),
            by: by.cloned(),
            heartbeat: foreseen.and_then(|(_, _, beat)| beat),
            without_lease,
            foreseen: foreseen.map(|(f, _, _)| f),
            verdict: TaintVerdict::HandMade,
            why: Vec::new(),
            in_gap: false,
        };
        if !hand_made {
            review.verdict = match foreseen {
                None => TaintVerdict::NotSeenSilent,
                Some((_, Some(held), _)) => TaintVerdict::Held(held),
                Some((window, None, _)) => verdict(&window, added, reading.slack),
            };
            if let Some((window, _, beat)) = foreseen {
                // Just before the taint: the zone then, when it made the node wait (a window past
                // the grace and two passes from its heartbeat, or a taint late), and the leaders
                // since the silence.
                let flags = &reading.flags;
                let plain = nanos(flags.node_monitor_grace_period) + 2 * nanos(flags.node_monitor_period) + SECOND;
                let waited = beat.is_none_or(|beat| window.earliest.nanos_since(beat) > plain);
                if waited || matches!(review.verdict, TaintVerdict::Late(_)) {
                    review.why = self.forecast(at.add_nanos(-1), reading, &health.name).1;
                }
                review.why.extend(self.restarts(window.at, added));
                review.in_gap = self.gaps.iter().any(|&(from, to)| from <= added && window.at <= to);
            }
        }
        self.found.push(review);
    }

    fn restarts(&self, from: Timestamp, to: Timestamp) -> Vec<Why> {
        self.terms
            .iter()
            .filter(|term| from < term.at && term.at <= to)
            .map(|term| Why::Restart { at: term.at, last_renewed: term.last_renewed })
            .collect()
    }

    fn finish(mut self, end: Timestamp, reading: &Reading) -> Vec<TaintReview> {
        let due: Vec<(NodeName, Foreseen, Option<Timestamp>)> = self
            .nodes
            .values()
            .filter(|f| f.health.condition_taint().is_none())
            // Without a Lease a kubelet's status heartbeat may be minutes old on a healthy node: not
            // tainted is said only of a node whose Lease went silent, or seen not ready.
            .filter(|f| f.renewed.is_some() || !is_ready(&f.health))
            .filter_map(|f| match f.foreseen {
                Some((window, None, beat)) => window
                    .latest
                    .filter(|latest| end.nanos_since(*latest) > reading.slack)
                    .map(|_| (f.health.name.clone(), window, beat)),
                _ => None,
            })
            .collect();
        for (name, window, beat) in due {
            let (_, why) = self.forecast(end, reading, &name);
            let mut why = why;
            why.extend(self.restarts(window.at, end));
            let in_gap = self.gaps.iter().any(|&(from, to)| from <= end && window.at <= to);
            let followed = &self.nodes[&name];
            self.found.push(TaintReview {
                node: name.clone(),
                zone: followed.health.zone.clone(),
                key: window.key,
                added: None,
                by: None,
                heartbeat: beat,
                without_lease: followed.renewed.is_none(),
                foreseen: Some(window),
                verdict: TaintVerdict::NotTainted,
                why,
                in_gap,
            });
        }
        self.found.sort_by(|a, b| {
            let at = |r: &TaintReview| r.added.or(r.foreseen.and_then(|f| f.latest));
            at(a).cmp(&at(b)).then_with(|| a.node.cmp(&b.node))
        });
        self.found
    }
}

const SECOND: i128 = 1_000_000_000;

/// Past any record's end.
const FOREVER: Timestamp = Timestamp::from_nanos(i128::MAX / 2);

/// `added` against `window`, within `slack` of it.
fn verdict(window: &Foreseen, added: Timestamp, slack: i128) -> TaintVerdict {
    let before = window.earliest.nanos_since(added);
    if before > slack {
        return TaintVerdict::Early(before);
    }
    match window.latest.map(|latest| added.nanos_since(latest)) {
        Some(after) if after > slack => TaintVerdict::Late(after),
        _ => TaintVerdict::Within,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::lifecycle::ReadyCondition;
    use crate::model::{Effect, Taint};

    const S: i128 = SECOND;

    fn t(seconds: i64) -> Timestamp {
        Timestamp::from_unix_seconds(seconds)
    }

    /// A node of `zone`, `Ready` `status`, its last status heartbeat at `beat`, with `taint` added then.
    fn node(name: &str, zone: &str, status: Ready, beat: i64, taint: Option<(ConditionTaint, i64)>) -> NodeHealth {
        let taints: Arc<[Taint]> = match taint {
            Some((key, added)) => {
                let mut taint = Taint::new(key.key(), "", Effect::NoExecute);
                taint.time_added = Some(t(added));
                Arc::new([taint])
            }
            None => Arc::new([]),
        };
        NodeHealth {
            name: name.into(),
            zone: ZoneKey::new("eu", zone),
            excluded: false,
            created: Some(t(-10_000)),
            ready: Some(Box::new(ReadyCondition {
                status,
                reason: if status == Ready::Unknown { "NodeStatusUnknown".into() } else { "KubeletReady".into() },
                last_heartbeat: Some(t(beat)),
                last_transition: Some(t(-10_000)),
            })),
            lease_renewed: None,
            taints,
            down: false,
            ready_pods: 0,
        }
    }

    fn seen(at: i64, seen: NodeSeen) -> NodeMoment {
        NodeMoment { at: t(at), seen }
    }

    fn written(at: i64, health: NodeHealth) -> NodeMoment {
        seen(at, NodeSeen::Node { health, by: None })
    }

    /// Renewals of `name` every 10 s from `from` to `to`.
    fn renewals(name: &str, from: i64, to: i64) -> Vec<NodeMoment> {
        (from..=to).step_by(10).map(|at| seen(at, NodeSeen::Renewed { node: name.into(), renewed: t(at) })).collect()
    }

    /// The controller's Lease of the term acquired at `acquired`, renewed at `renewed`.
    fn leader(at: i64, acquired: i64, renewed: i64) -> NodeMoment {
        seen(
            at,
            NodeSeen::Controller(ControllerLease {
                acquired: Some(t(acquired)),
                renewed: Some(t(renewed)),
                duration: Some(Duration::from_secs(15)),
            }),
        )
    }

    fn reading(flags: Flags) -> Reading {
        Reading { flags, silent_after: Duration::from_secs(12), bridged: Duration::from_secs(72), slack: S }
    }

    fn sorted(mut moments: Vec<NodeMoment>) -> Vec<NodeMoment> {
        moments.sort_by_key(|m| m.at);
        moments
    }

    fn unreachable(name: &str, zone: &str, at: i64) -> NodeHealth {
        node(name, zone, Ready::Unknown, 0, Some((ConditionTaint::Unreachable, at)))
    }

    /// Each review as `node verdict window added`, the window to the millisecond.
    fn said(found: &[TaintReview]) -> Vec<String> {
        let ms = |at: Timestamp| format!("{:.3}", at.as_nanos() as f64 / 1e9);
        found
            .iter()
            .map(|r| {
                let window = r.foreseen.map_or_else(
                    || "-".to_owned(),
                    |f| format!("{}-{}", ms(f.earliest), f.latest.map_or_else(|| "?".to_owned(), ms)),
                );
                let added = r.added.map_or_else(|| "-".to_owned(), ms);
                format!("{} {:?} {window} {added}", r.node, r.verdict)
            })
            .collect()
    }

    #[test]
    fn a_taint_on_time_and_one_made_by_hand() {
        let mut moments = vec![leader(0, -1_000, 0), leader(400, -1_000, 400)];
        for name in ["a-0", "a-1", "a-2"] {
            moments.push(written(0, node(name, "a", Ready::True, 0, None)));
        }
        moments.extend(renewals("a-0", 0, 100));
        moments.extend(renewals("a-1", 0, 400));
        moments.extend(renewals("a-2", 0, 400));
        moments.push(written(146, unreachable("a-0", "a", 146)));
        let mut hand = node("a-1", "a", Ready::True, 0, Some((ConditionTaint::Unreachable, 200)));
        moments.push(written(200, hand.clone()));
        hand.taints = Arc::new([]);
        moments.push(written(210, hand));
        let by_alice = unreachable("a-2", "a", 300);
        moments.push(seen(300, NodeSeen::Node { health: by_alice, by: Some(Writer::Other("alice".into())) }));
        let found = review_taints(&sorted(moments), t(400), &reading(Flags::defaults_for(29)));
        // a-0 last renews at 100, silent from 112 (12 s later): foreseen then. The leader's term began
        // at -1,000: a pass every 5 s from -1,000 and 0.05-0.5 s of sync, each 0.05-3 ms long, so
        // the pass after the renewal is 100.04-101.32; 40 s of grace later the next pass (145.04 to
        // 146.32) marks it Unknown and queues it, its zone's token at hand: tainted then. At 146:
        // within. a-1 gets the taint while Ready=True, a-2 by alice: both by hand, not judged.
        assert_eq!(
            said(&found),
            vec!["a-0 Within 145.041-146.317 146.000", "a-1 HandMade - 200.000", "a-2 HandMade - 300.000",]
        );
        assert_eq!(found[0].heartbeat, Some(t(100)));
        assert_eq!(found[0].foreseen.map(|f| f.at), Some(t(112)));
        assert_eq!(found[2].by, Some(Writer::Other("alice".into())));
    }

    #[test]
    fn a_controller_down_makes_a_taint_late() {
        // The leader of the term from -1,000 last renews at 105; a new one takes over at 200.
        let mut moments =
            vec![leader(0, -1_000, 0), leader(105, -1_000, 105), leader(200, 200, 200), leader(400, 200, 400)];
        for name in ["b-0", "b-1"] {
            moments.push(written(0, node(name, "b", Ready::True, 0, None)));
        }
        moments.extend(renewals("b-0", 0, 100));
        moments.extend(renewals("b-1", 0, 400));
        moments.push(written(246, unreachable("b-0", "b", 246)));
        let found = review_taints(&sorted(moments), t(400), &reading(Flags::defaults_for(29)));
        // Foreseen at 112 as a-0 above (the leader alive then: renewed at 105, for 15 s): 145.04 to
        // 146.32. No leader from 105 to 200; the new one starts every node's grace again, and taints
        // b-0 at 246: 99.683 s after the window, the restart named.
        assert_eq!(said(&found), vec!["b-0 Late(99683000000) 145.041-146.317 246.000"]);
        assert_eq!(found[0].why, vec![Why::Restart { at: t(200), last_renewed: Some(t(105)) }]);
    }

    #[test]
    fn a_partially_disrupted_zone_taints_at_the_secondary_rate() {
        let mut moments = vec![leader(0, -1_000, 0), leader(400, -1_000, 400)];
        for name in ["c-0", "c-1", "c-2"] {
            moments.push(written(0, unreachable(name, "c", -5)));
        }
        for name in ["c-3", "c-4", "c-5"] {
            moments.push(written(0, node(name, "c", Ready::True, 0, None)));
        }
        moments.extend(renewals("c-3", 0, 100));
        moments.extend(renewals("c-4", 0, 50));
        moments.extend(renewals("c-5", 0, 400));
        moments.push(written(96, unreachable("c-4", "c", 96)));
        moments.push(written(196, unreachable("c-3", "c", 196)));
        let flags = Flags { large_cluster_size_threshold: 4, ..Flags::defaults_for(29) };
        let found = review_taints(&sorted(moments), t(400), &reading(flags));
        // Six nodes in zone c, three Unknown and tainted: 3/6 not ready, under 0.55: normal. c-4
        // last renews at 50, is foreseen at 62 and tainted at 96 (95.04-96.29, as a-0 above 50 s
        // earlier). Then 4/6 are not ready: partially disrupted, and with 6 nodes, more than the
        // threshold of 4, large: the secondary rate, one taint each 100 s. c-3 (last renewal 100)
        // is queued at 145-146 and waits for the token 100 s after c-4's: 195.98-197.13. Tainted
        // at 196: within, the zone's state named.
        assert_eq!(said(&found), vec!["c-4 Within 95.041-96.287 96.000", "c-3 Within 195.980-197.130 196.000"]);
        assert_eq!(found[0].why, vec![]);
        assert_eq!(
            found[1].why,
            vec![Why::Zone {
                zone: ZoneKey::new("eu", "c"),
                state: ZoneState::PartialDisruption,
                not_ready: 4,
                nodes: 6,
                rate: 0.01
            }]
        );
    }

    #[test]
    fn a_node_not_tainted_by_the_end_and_one_without_a_lease() {
        let mut moments = vec![leader(0, -1_000, 0), leader(400, -1_000, 400)];
        for name in ["e-0", "e-1", "e-2", "e-3"] {
            moments.push(written(0, node(name, "e", Ready::True, 0, None)));
        }
        moments.extend(renewals("e-0", 0, 100));
        moments.extend(renewals("e-1", 0, 400));
        // e-2 has no Lease: its status heartbeats, the last at 200.
        for beat in (10..=200).step_by(10) {
            moments.push(written(beat, node("e-2", "e", Ready::True, beat, None)));
        }
        moments.push(written(246, unreachable("e-2", "e", 246)));
        let found = review_taints(&sorted(moments), t(400), &reading(Flags::defaults_for(29)));
        // e-0 is foreseen at 112 as a-0 above (145.04-146.32) and never tainted by 400: not tainted.
        // e-3 has no Lease and no line after its first: `Ready=True` to the end, so heard throughout
        // (its heartbeat at 0 is no silence), and not listed.
        // e-2's silence is read from its status heartbeat (no Lease): the last at 200, silent from
        // 212; the pass phase read from 0.05-0.5 s of sync after -1,000, the heartbeat to the second:
        // 245.04-251.14. Tainted at 246: within, said to rest on no Lease.
        assert_eq!(said(&found), vec!["e-0 NotTainted 145.041-146.317 -", "e-2 Within 245.042-251.136 246.000"]);
        assert_eq!((found[0].without_lease, found[1].without_lease), (false, true));
    }

    #[test]
    fn a_taint_before_its_window_is_early_and_one_across_a_gap_is_not_known() {
        let mut moments = vec![leader(0, -1_000, 0), leader(400, -1_000, 400)];
        for name in ["f-0", "f-1", "f-2"] {
            moments.push(written(0, node(name, "f", Ready::True, 0, None)));
        }
        moments.extend(renewals("f-0", 0, 100));
        moments.extend(renewals("f-1", 0, 200));
        moments.extend(renewals("f-2", 0, 400));
        // f-0 (last renewal 100, foreseen 145.04-146.32 as a-0 above) is marked and tainted at 120
        // by the controller's own client, as with a grace of 15 s: 25.04 s early.
        let f0 = unreachable("f-0", "f", 120);
        moments.push(seen(120, NodeSeen::Node { health: f0, by: Some(Writer::Controller) }));
        // f-1 (last renewal 200: 100 s after a-0's, so 20 passes more, each up to 3 ms:
        // 245.04-246.38) is tainted at 246, seen only in a list after a gap from 230 to 260, dated
        // by its `timeAdded`: within, but across the gap.
        moments.push(seen(230, NodeSeen::Gap { until: t(260) }));
        moments.push(written(260, unreachable("f-1", "f", 246)));
        let found = review_taints(&sorted(moments), t(400), &reading(Flags::defaults_for(29)));
        assert_eq!(
            said(&found),
            vec!["f-0 Early(25041450000) 145.041-146.317 120.000", "f-1 Within 245.042-246.377 246.000"]
        );
        assert_eq!(found[0].by, Some(Writer::Controller));
        assert_eq!((found[0].in_gap, found[1].in_gap), (false, true));
    }
}
