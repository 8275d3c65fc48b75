//! The node lifecycle controller's taints foreseen for `run` and `plan -w`: the nodes' health
//! (Ready condition, zone labels, taints) as the one node watch reads it (`HealthChange`) and the
//! node Leases' renewals, fed to the same pure prediction `plan` makes, once a second. Each node whose
//! expected taint window (or hold) changes is reported as a [`RunEvent::Foreseen`]; so is a node the
//! controller no longer needs to act on. Neither command taints nodes itself.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use tokio::sync::mpsc;

use crate::cluster::lifecycle::LeaseChange;
use crate::cluster::watch::HealthChange;
use crate::engine::lifecycle::{
    ControllerLease, Drain, Flags, NodeForecast, NodeHealth, Observation, ZoneKey, back_forecast, predict, unsettled,
};
use crate::engine::model::NodeName;
use crate::engine::time::Timestamp;
use crate::runtime::report::{Report, RunEvent};
use crate::time::Clock;

/// How often the prediction is made again (silence grows with time, not only with events).
const EVERY: Duration = Duration::from_secs(1);

/// What the prediction needs besides the watches.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The controller's flags.
    pub flags: Flags,
    /// A Ready node not heard from for longer than this is silent.
    pub silent_after: Duration,
    /// The controller manager Lease, as read at start.
    pub controller: Option<ControllerLease>,
    /// What to say of the settings (a value of the controller's pod that does not read, or that
    /// they are assumed) once a prediction first rests on them, as `plan` says it.
    pub notes: Vec<String>,
}

/// Starts the prediction from the node health the node watch sends on `nodes` and the Lease
/// renewals on `leases` (`None`: the Leases may not be watched); reports go to `report`. Nothing is
/// predicted before `ready` says so (the clock narrowed to the control plane's) or is dropped.
pub fn spawn(
    settings: Settings,
    nodes: mpsc::UnboundedReceiver<HealthChange>,
    leases: Option<mpsc::Receiver<LeaseChange>>,
    report: mpsc::UnboundedSender<Report>,
    clock: Clock,
    mut ready: tokio::sync::watch::Receiver<bool>,
) {
    tokio::spawn(async move {
        let _ = ready.wait_for(|ready| *ready).await;
        foresee(nodes, leases, settings, report, clock).await;
    });
}

/// The nodes' health and Leases as the watches report them, predicted once a second.
async fn foresee(
    mut changes: mpsc::UnboundedReceiver<HealthChange>,
    leases: Option<mpsc::Receiver<LeaseChange>>,
    mut settings: Settings,
    report: mpsc::UnboundedSender<Report>,
    clock: Clock,
) {
    let mut nodes: BTreeMap<String, (NodeHealth, bool)> = BTreeMap::new();
    let mut renewed: HashMap<String, Option<Timestamp>> = HashMap::new();
    // Predicted once both listings are in: a node without its Lease yet looks silent.
    let watched = leases.is_some();
    let (mut nodes_listed, mut leases_listed) = (false, !watched);
    // Without the Lease watch, a channel that never says anything.
    let (_none, never) = mpsc::channel(1);
    let mut leases = leases.unwrap_or(never);
    let mut shown: BTreeMap<NodeName, NodeForecast> = BTreeMap::new();
    let mut drains: BTreeMap<ZoneKey, Drain> = BTreeMap::new();
    let mut notes = std::mem::take(&mut settings.notes).into_iter();
    let mut tick = tokio::time::interval(EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            change = changes.recv() => match change {
                None => return,
                Some(HealthChange::Listed(list)) => {
                    nodes = list.into_iter().map(|(h, v)| (h.name.to_string(), (h, v))).collect();
                    nodes_listed = true;
                }
                Some(HealthChange::Applied(h, v)) => {
                    nodes.insert(h.name.to_string(), (*h, v));
                }
                Some(HealthChange::Deleted(name)) => {
                    nodes.remove(&name);
                }
                Some(HealthChange::Interrupted) => nodes_listed = false,
            },
            Some(change) = leases.recv() => match change {
                LeaseChange::Listed(list) => {
                    renewed = list.into_iter().collect();
                    leases_listed = true;
                }
                LeaseChange::Renewed(name, at) => {
                    renewed.insert(name, at);
                }
                LeaseChange::Interrupted => leases_listed = !watched,
            },
            _ = tick.tick(), if nodes_listed && leases_listed => {
                let now = clock.now();
                let (forecasts, zones) = forecast(&nodes, &renewed, &settings, now);
                let drained = drains_changed(&mut drains, zones).map(|(zone, drain)| RunEvent::Drain { zone, drain });
                let foreseen: Vec<RunEvent> =
                    drained.chain(changed(&mut shown, forecasts).into_iter().map(RunEvent::Foreseen)).collect();
                let mut events = Vec::new();
                if !foreseen.is_empty() {
                    events.extend(notes.by_ref().map(|message| RunEvent::Assumed { message }));
                }
                events.extend(foreseen);
                for event in events {
                    if report.send(Report { at: now, event }).is_err() {
                        return;
                    }
                }
            }
        }
    }
}

/// The forecast of every shown node at `now`, and the drain of each zone predicted at scale.
fn forecast(
    nodes: &BTreeMap<String, (NodeHealth, bool)>,
    renewed: &HashMap<String, Option<Timestamp>>,
    settings: &Settings,
    now: Timestamp,
) -> (Vec<NodeForecast>, Vec<(ZoneKey, Drain)>) {
    let health: Vec<NodeHealth> = nodes
        .values()
        .map(|(node, _)| {
            let mut node = node.clone();
            node.lease_renewed = renewed.get(node.name.as_str()).copied().flatten();
            node
        })
        .collect();
    let observation = Observation {
        now,
        nodes: health,
        controller: settings.controller.clone(),
        flags: settings.flags,
        silent_after: settings.silent_after,
    };
    let count = unsettled(&observation);
    let (predicted, zones) = if count == 0 {
        (Vec::new(), Vec::new())
    } else {
        let prediction = predict(&observation);
        let zones = prediction.zones.into_iter().filter_map(|zone| Some((zone.zone, zone.drain?))).collect();
        (prediction.nodes, zones)
    };
    let mut forecasts: BTreeMap<NodeName, NodeForecast> =
        predicted.into_iter().map(|forecast| (forecast.name.clone(), forecast)).collect();
    // A node back that still carries the controller's taint (settled, so not predicted): the
    // controller removes the taint at its next pass, as `plan` says.
    for node in &observation.nodes {
        if let Some(back) = back_forecast(node, now, settings.silent_after) {
            forecasts.insert(back.name.clone(), back);
        }
    }
    let visible = |name: &NodeName| nodes.get(name.as_str()).is_some_and(|(_, visible)| *visible);
    (forecasts.into_values().filter(|forecast| visible(&forecast.name)).collect(), zones)
}

/// The zones' drains that differ from those last reported (updating `shown`): a zone drained anew,
/// or its queue's length or slots moved by a second or more. A zone no longer drained is said by its
/// nodes' own forecasts.
fn drains_changed(
    shown: &mut BTreeMap<ZoneKey, Drain>,
    zones: Vec<(ZoneKey, Drain)>,
) -> impl Iterator<Item = (ZoneKey, Drain)> {
    let moved = |a: Timestamp, b: Timestamp| a.nanos_since(b).abs() >= 1_000_000_000;
    let mut news = Vec::new();
    let mut now = BTreeMap::new();
    for (zone, drain) in zones {
        let kept = match shown.remove(&zone) {
            Some(before)
                if before.nodes == drain.nodes
                    && before.every == drain.every
                    && !moved(before.first, drain.first)
                    && !moved(before.last, drain.last) =>
            {
                before
            }
            _ => {
                news.push((zone.clone(), drain));
                drain
            }
        };
        now.insert(zone, kept);
    }
    *shown = now;
    news.into_iter()
}

/// Whether `now` says something `before` (the forecast last reported) did not: another taint, basis,
/// place in the zone's queue or hold, or a window moved by a second or more. A window predicted from
/// a moving "now" slides by milliseconds at every pass: that is no news.
fn news(before: &NodeForecast, now: &NodeForecast) -> bool {
    let moved = |a: Timestamp, b: Timestamp| a.nanos_since(b).abs() >= 1_000_000_000;
    let taints = match (before.taint, now.taint) {
        (None, None) => false,
        (Some(a), Some(b)) => {
            let latest = match (a.latest, b.latest) {
                (Some(x), Some(y)) => moved(x, y),
                (x, y) => x.is_some() != y.is_some(),
            };
            (a.key, a.basis, a.queued_with) != (b.key, b.basis, b.queued_with)
                || moved(a.earliest, b.earliest)
                || latest
        }
        _ => true,
    };
    taints || before.held != now.held
}

/// The forecasts that differ from those last reported (updating `shown`), and a cleared one for each
/// node reported before that needs no action any more.
fn changed(shown: &mut BTreeMap<NodeName, NodeForecast>, forecasts: Vec<NodeForecast>) -> Vec<NodeForecast> {
    let mut out = Vec::new();
    let mut acting: BTreeMap<NodeName, NodeForecast> = BTreeMap::new();
    for forecast in forecasts.into_iter().filter(|f| f.taint.is_some() || f.held.is_some()) {
        // What was reported stays the reference until something is news against it.
        let kept = match shown.remove(&forecast.name) {
            Some(before) if !news(&before, &forecast) => before,
            _ => {
                out.push(forecast.clone());
                forecast
            }
        };
        acting.insert(kept.name.clone(), kept);
    }
    for (name, mut before) in std::mem::take(shown) {
        if !acting.contains_key(&name) {
            before.taint = None;
            before.held = None;
            out.push(before);
        }
    }
    *shown = acting;
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::lifecycle::{Basis, ConditionTaint, PredictedTaint};

    fn forecast(earliest_ms: i64, basis: Basis) -> NodeForecast {
        let at = |ms: i64| Timestamp::from_nanos(1_795_341_600_000_000_000 + i128::from(ms) * 1_000_000);
        NodeForecast {
            name: "n1".into(),
            zone: Default::default(),
            ready: None,
            last_heartbeat: None,
            taint: Some(PredictedTaint {
                key: ConditionTaint::Unreachable,
                earliest: at(earliest_ms),
                latest: Some(at(earliest_ms + 5_000)),
                basis,
                queued_with: 0,
                drained: false,
            }),
            held: None,
        }
    }

    /// Node `name`, `Ready=True` since @990 s, last heard from then, in the default zone.
    fn ready(name: &str) -> NodeHealth {
        use crate::engine::lifecycle::{Ready, ReadyCondition};
        let t = Timestamp::from_unix_seconds;
        NodeHealth {
            name: name.into(),
            zone: Default::default(),
            excluded: false,
            created: Some(t(0)),
            ready: Some(Box::new(ReadyCondition {
                status: Ready::True,
                reason: "KubeletReady".into(),
                last_heartbeat: Some(t(990)),
                last_transition: Some(t(990)),
            })),
            lease_renewed: None,
            taints: Vec::new().into(),
            down: false,
            ready_pods: 0,
        }
    }

    #[test]
    fn a_node_back_that_still_carries_the_unreachable_taint_is_foreseen_recovered_until_untainted() {
        use crate::engine::lifecycle::HeldReason;
        use crate::engine::model::{Effect, Taint};

        let t = Timestamp::from_unix_seconds;
        let node = |name: &str, taints: Vec<Taint>| NodeHealth { taints: taints.into(), ..ready(name) };
        let unreachable = Taint::new("node.kubernetes.io/unreachable", "", Effect::NoExecute);
        let settings = Settings {
            flags: Flags::defaults_for(29),
            silent_after: Duration::from_secs(12),
            controller: None,
            notes: Vec::new(),
        };
        // Every node heartbeating: nothing is unsettled, yet n1 (shown) and n2 (not shown) are back
        // with the taint still on.
        let nodes: BTreeMap<String, (NodeHealth, bool)> = [
            ("n1".to_owned(), (node("n1", vec![unreachable.clone()]), true)),
            ("n2".to_owned(), (node("n2", vec![unreachable]), false)),
            ("n3".to_owned(), (node("n3", Vec::new()), false)),
        ]
        .into();
        let renewed: HashMap<String, Option<Timestamp>> =
            ["n1", "n2", "n3"].into_iter().map(|n| (n.to_owned(), Some(t(998)))).collect();
        let (forecasts, zones) = super::forecast(&nodes, &renewed, &settings, t(1000));
        assert!(zones.is_empty(), "nothing drained: {zones:?}");
        assert_eq!(forecasts.len(), 1, "{forecasts:?}");
        assert_eq!(forecasts[0].name.as_str(), "n1");
        assert_eq!(forecasts[0].held.as_ref().map(|held| held.reason), Some(HeldReason::Recovered));
        let mut shown = BTreeMap::new();
        assert_eq!(changed(&mut shown, forecasts).len(), 1, "said once");
        // The taint removed: cleared.
        let mut untainted = nodes.clone();
        untainted.insert("n1".to_owned(), (node("n1", Vec::new()), true));
        let cleared = changed(&mut shown, super::forecast(&untainted, &renewed, &settings, t(1001)).0);
        assert!(cleared.len() == 1 && cleared[0].held.is_none(), "{cleared:?}");
    }

    #[test]
    fn a_window_sliding_by_milliseconds_is_announced_once_until_it_moved_a_second() {
        // Fixed: a window predicted from a moving "now" slid by ~2 ms a pass, and each pass
        // that crossed a second boundary was announced again: about once a second per silent node.
        let mut shown = BTreeMap::new();
        // 990 ms past a second: the window crosses into the next one 5 passes in.
        assert_eq!(changed(&mut shown, vec![forecast(990, Basis::LostHeartbeat)]).len(), 1);
        let quiet: usize =
            (1..500).map(|pass| changed(&mut shown, vec![forecast(990 + 2 * pass, Basis::LostHeartbeat)]).len()).sum();
        assert_eq!(quiet, 0, "998 ms of sliding is no news");
        assert_eq!(changed(&mut shown, vec![forecast(1_990, Basis::LostHeartbeat)]).len(), 1, "a second is");
        assert_eq!(changed(&mut shown, vec![forecast(1_992, Basis::NotReady)]).len(), 1, "so is another basis");
        let cleared = changed(&mut shown, Vec::new());
        assert_eq!(cleared.len(), 1);
        assert!(cleared[0].taint.is_none() && cleared[0].held.is_none());
    }

    #[test]
    fn a_zone_of_240_silent_nodes_is_said_once_as_its_drain_and_each_node_as_one_of_its_slots() {
        let t = Timestamp::from_unix_seconds;
        let zone = ZoneKey::new("r", "za");
        let silent = |name: &str| NodeHealth { zone: zone.clone(), ..ready(name) };
        let settings = Settings {
            flags: Flags::defaults_for(29),
            silent_after: Duration::from_secs(12),
            controller: None,
            notes: Vec::new(),
        };
        // Beside a healthy zone: with every zone down, the controller would taint none.
        let healthy = |name: &str| NodeHealth { zone: ZoneKey::new("r", "zb"), ..silent(name) };
        let mut nodes: BTreeMap<String, (NodeHealth, bool)> =
            (0..240).map(|i| format!("a{i:03}")).map(|name| (name.clone(), (silent(&name), true))).collect();
        nodes.extend((0..10).map(|i| format!("b{i:03}")).map(|name| (name.clone(), (healthy(&name), true))));
        let renewed: HashMap<String, Option<Timestamp>> =
            nodes.keys().map(|n| (n.clone(), Some(if n.starts_with('a') { t(990) } else { t(1009) }))).collect();
        let (forecasts, zones) = super::forecast(&nodes, &renewed, &settings, t(1010));
        let forecasts: Vec<NodeForecast> = forecasts.into_iter().filter(|f| f.taint.is_some()).collect();
        assert_eq!(forecasts.len(), 240);
        assert_eq!(zones.len(), 1, "{zones:?}");
        let (drained, drain) = &zones[0];
        assert_eq!((drained, drain.nodes), (&zone, 240));
        let taint = forecasts[0].taint.expect("a taint foreseen");
        assert!(taint.drained && taint.queued_with == 239, "{taint:?}");
        let line = crate::output::lifecycle::line(&forecasts[0]);
        assert!(line.contains("(zone za, one of its queue's slots)"), "{line}");
        assert!(!line.contains("other nodes may be tainted first"), "{line}");
        // Said once: the same drain a pass later is no news; a drain of another length is.
        let mut shown = BTreeMap::new();
        assert_eq!(drains_changed(&mut shown, zones.clone()).count(), 1);
        let (_, again) = super::forecast(&nodes, &renewed, &settings, t(1011));
        assert_eq!(drains_changed(&mut shown, again).count(), 0, "a pass later: no news");
        let fewer: BTreeMap<String, (NodeHealth, bool)> = nodes.into_iter().skip(10).collect();
        let (_, shorter) = super::forecast(&fewer, &renewed, &settings, t(1012));
        assert_eq!(drains_changed(&mut shown, shorter).count(), 1, "230 nodes queued: news");
    }
}
