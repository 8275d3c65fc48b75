//! The evaluation instant: `--now`, else the control plane's time as a live read measured it, else
//! this machine's clock (a dump); with how the control plane's time was read, and the warnings when
//! this machine's clock is off it or the input is stamped after it.

use crate::engine::time::Timestamp;
use crate::output::ClockDoc;
use crate::time::future::{self, NowFrom};
use crate::time::skew::Estimate;
use crate::words::printable;

use super::input::{LiveTime, Loaded};
use crate::config::Input;

/// The evaluation instant and how the control plane's time was read. Warns once when this machine's
/// clock is more than a second off it, and for each kind of stamp in the input later than it.
pub(super) fn evaluated_at(input: &Input, loaded: &Loaded) -> (Timestamp, Option<ClockDoc>) {
    let (now, clock) = now(input, loaded);
    let estimate = loaded.time.and_then(|time| time.estimate).filter(|_| clock.is_some());
    if let Some(warning) = estimate.as_ref().and_then(Estimate::warning) {
        eprintln!("warning: {warning}");
    }
    let from = match (input.now, &loaded.time) {
        (Some(_), _) => NowFrom::Flag,
        (None, Some(_)) => NowFrom::ControlPlane,
        (None, None) => NowFrom::ThisMachine,
    };
    let health = loaded.health.as_ref().and_then(|health| health.as_ref().ok());
    let renewed = health.and_then(|health| health.controller.as_ref()).and_then(|lease| lease.renewed);
    for warning in future::warnings(&loaded.snapshot, renewed, now, from) {
        eprintln!("warning: {}", printable(&warning));
    }
    (now, clock)
}

/// The evaluation instant: `--now`, else the control plane's time as the live read measured it,
/// else this machine's clock (a dump; the only place `plan` reads it). With how the control plane's
/// time was read, for `-o json|yaml`, when it was.
#[must_use]
fn now(args: &Input, loaded: &Loaded) -> (Timestamp, Option<ClockDoc>) {
    if let Some(now) = args.now {
        return (now, None);
    }
    match loaded.time {
        Some(LiveTime { now, estimate }) => {
            let doc = estimate.map(|e| ClockDoc::new(e.offset(), e.uncertainty(), e.source.as_str()));
            // Known to milliseconds at best: a taint without `timeAdded` starts its countdowns at
            // `now`, and its deadlines are printed without nanoseconds that mean nothing.
            let millis = now.as_nanos() - now.as_nanos().rem_euclid(1_000_000);
            (Timestamp::from_nanos(millis), doc)
        }
        None => (crate::time::Clock::system().now(), None),
    }
}
