//! `run`'s report of a node the node lifecycle controller is expected to taint (or holds back):
//! its text line and its row in the live view (its JSON line is a `foreseen` line of
//! `output/lines.rs`).

use super::human::printable_display as shown;
use super::human::{count, rfc3339, short_key, time_of_day, until};
use crate::engine::lifecycle::{Drain, HeldReason, NodeForecast, Ready, ZoneForecast, ZoneKey};
use crate::words::std_duration;

/// What a zone predicted at scale says once for all its nodes: its queue drained one node per
/// token, in an order nobody sees (docs/node-lifecycle.md, "At scale"); `None` for a zone predicted
/// node by node.
#[must_use]
pub fn drain_line(zone: &ZoneForecast) -> Option<String> {
    Some(drain_text(&zone.zone, &zone.drain?))
}

/// What zone `zone`'s drain says once for all its nodes.
#[must_use]
pub fn drain_text(zone: &ZoneKey, drain: &Drain) -> String {
    let nodes = if drain.nodes == 1 { "1 node".to_owned() } else { format!("{} nodes", count(drain.nodes)) };
    format!(
        "zone {}: {nodes} tainted one every {} from {} to {}, in an order nobody sees: each node's window spans them",
        shown(zone),
        std_duration(drain.every),
        rfc3339(drain.first),
        rfc3339(drain.last),
    )
}

/// What is expected of the node, in words (without its name).
fn expected(forecast: &NodeForecast) -> String {
    if let Some(taint) = forecast.taint {
        let when = match taint.latest {
            Some(latest) => format!("{}–{}", time_of_day(taint.earliest, false), until(taint.earliest, latest)),
            None => format!("from {} unless its zone holds it back", time_of_day(taint.earliest, false)),
        };
        let queue = match taint.queued_with {
            0 => String::new(),
            // Said once for the zone, by its drain (docs/node-lifecycle.md, "At scale").
            _ if taint.drained => ", one of its queue's slots".to_owned(),
            1 => ", 1 other node may be tainted first".to_owned(),
            n => format!(", {n} other nodes may be tainted first"),
        };
        return format!("{} taint expected {when} (zone {}{queue})", short_key(taint.key), shown(&forecast.zone));
    }
    match forecast.held.as_ref().map(|held| held.reason) {
        Some(HeldReason::PartialDisruption) => {
            format!(
                "held: zone {} partially disrupted — the controller adds no NoExecute taints here",
                shown(&forecast.zone)
            )
        }
        Some(HeldReason::AllZonesDown) => {
            "held: every zone is fully disrupted — the controller adds no NoExecute taints".to_owned()
        }
        Some(HeldReason::Recovered) => {
            "back (Ready=True, heartbeating) — the controller removes its taint at its next pass".to_owned()
        }
        Some(HeldReason::NoEvictionRate) => format!(
            "held: --node-eviction-rate is 0 — zone {}'s queue had one taint to give and gave it",
            shown(&forecast.zone)
        ),
        None => "no taint expected any more (healthy again, or tainted)".to_owned(),
    }
}

/// The text line of a `foreseen` event.
#[must_use]
pub fn line(forecast: &NodeForecast) -> String {
    let ready = forecast.ready.map_or("never posted", Ready::as_str);
    let heartbeat = forecast.last_heartbeat.map_or_else(|| "none".to_owned(), |at| time_of_day(at, false));
    if forecast.taint.is_none() && forecast.held.is_none() {
        return format!("node {}: {}", shown(&forecast.name), expected(forecast));
    }
    format!("node {}: Ready={ready}, last heartbeat {heartbeat}; {}", shown(&forecast.name), expected(forecast))
}

/// The live view's row for a node not yet tainted.
#[must_use]
pub fn row(forecast: &NodeForecast) -> String {
    format!("  node {:<18} {}", shown(&forecast.name), expected(forecast))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::lifecycle::{Basis, ConditionTaint, PredictedTaint, ZoneKey};
    use crate::engine::time::Timestamp;
    use crate::output::ColorMode;
    use crate::output::run::LiveView;
    use crate::runtime::report::{Report, RunEvent};

    fn forecast(taint: bool) -> NodeForecast {
        let t = Timestamp::from_unix_seconds;
        NodeForecast {
            name: "n1".into(),
            zone: ZoneKey::new("r", "z"),
            ready: Some(Ready::True),
            last_heartbeat: Some(t(1_000)),
            taint: taint.then_some(PredictedTaint {
                key: ConditionTaint::Unreachable,
                earliest: t(1_045),
                latest: Some(t(1_050)),
                basis: Basis::LostHeartbeat,
                queued_with: 0,
                drained: false,
            }),
            held: None,
        }
    }

    #[test]
    fn live_view_lists_a_node_about_to_be_tainted_until_it_is_cleared() {
        let mut view = LiveView::default();
        let at = Timestamp::from_unix_seconds(1_010);
        view.observe(&Report { at, event: RunEvent::Foreseen(forecast(true)) });
        let lines = view.render(at, ColorMode::Plain);
        assert_eq!(
            lines.last().map(String::as_str),
            Some("  node n1                 unreachable taint expected 00:17:25–00:17:30 (zone z)")
        );
        view.observe(&Report { at, event: RunEvent::Foreseen(forecast(false)) });
        assert!(!view.render(at, ColorMode::Plain).iter().any(|l| l.contains("n1")));
    }

    #[test]
    fn a_foreseen_line_says_the_window_and_a_cleared_one_says_so() {
        assert_eq!(
            line(&forecast(true)),
            "node n1: Ready=True, last heartbeat 00:16:40; unreachable taint expected 00:17:25–00:17:30 (zone z)"
        );
        assert_eq!(line(&forecast(false)), "node n1: no taint expected any more (healthy again, or tainted)");
        let report = Report { at: Timestamp::from_unix_seconds(1_010), event: RunEvent::Foreseen(forecast(true)) };
        let mut line = Vec::new();
        crate::output::run::write_json(&report, &mut line).expect("a Vec");
        let json: serde_json::Value = serde_json::from_slice(&line).expect("JSON");
        assert_eq!(
            (&json["type"], &json["predictedTaint"]["latest"]),
            (&"foreseen".into(), &"1970-01-01T00:17:30Z".into())
        );
    }

    #[test]
    fn a_window_across_midnight_says_the_date_it_ends_on() {
        // Fixed: `23:59:50–00:00:20` read as a window of a day less 30 seconds.
        let midnight = 1_795_392_000; // 2026-11-23T00:00:00Z
        let mut across = forecast(true);
        let taint = across.taint.as_mut().expect("taint");
        taint.earliest = Timestamp::from_unix_seconds(midnight - 10);
        taint.latest = Some(Timestamp::from_nanos((i128::from(midnight) + 20) * 1_000_000_000 - 1));
        assert!(
            line(&across).ends_with("unreachable taint expected 23:59:50–2026-11-23T00:00:20 (zone z)"),
            "{}",
            line(&across)
        );
    }
}
