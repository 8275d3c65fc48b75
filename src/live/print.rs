//! `run`'s printer: its reports written as they come (text, JSON lines or log records), and on a
//! terminal the next deletions kept listed under the log, their countdowns redrawn every second.

use std::io::Write;

use tokio::sync::{mpsc, oneshot};

use crate::config::Printing;
use crate::output::ColorMode;
use crate::output::redraw::block;
use crate::output::run::{LiveView, write_json, write_log, write_text};
use crate::runtime::Throttle;
use crate::runtime::report::{Report, RunEvent};
use crate::screen_size::size;
use crate::time::Clock;

/// The most reports written in one go: a burst is written in batches, one write and one flush
/// each, and the live view is redrawn once per batch.
const BATCH: usize = 512;

/// Prints reports until the summary; if stdout's reader goes away or a write fails, stops
/// printing and sends why on `unrecorded`, so that `run` stops enforcing.
pub async fn print(
    mut reports: mpsc::UnboundedReceiver<Report>,
    printing: Printing,
    clock: Clock,
    throttle: Throttle,
    unrecorded: oneshot::Sender<std::io::Error>,
) {
    let (color, live) = match printing {
        Printing::Text { color, live } => (color, live),
        _ => (ColorMode::Plain, false),
    };
    let mut view = LiveView::default();
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
    let mut out = std::io::stdout();
    let mut drawn = 0;
    let mut batch = Vec::with_capacity(BATCH);
    let mut text = Vec::new();
    // What is foreseen is said after the state at the start (synced, then the pods), whichever
    // reaches the printer first.
    let mut synced = false;
    let mut foreseen: Vec<Report> = Vec::new();
    let closed = super::closed::closed();
    tokio::pin!(closed);
    loop {
        tokio::select! {
            received = reports.recv_many(&mut batch, BATCH) => if received == 0 { break },
            () = &mut closed => {
                let _ = unrecorded.send(std::io::ErrorKind::BrokenPipe.into());
                return;
            }
            _ = tick.tick(), if live => {
                view.set_backlog(throttle.backlog().map(|b| (b.deletions, b.drains_at)));
                drawn = block(&mut out, drawn, &view.render(clock.now(), color), size().columns);
                continue;
            }
        }
        text.clear();
        let mut last = false;
        for report in batch.drain(..) {
            match &report.event {
                RunEvent::Foreseen(_) | RunEvent::Drain { .. } | RunEvent::Assumed { .. } if !synced => {
                    foreseen.push(report);
                    continue;
                }
                RunEvent::Synced { .. } => synced = true,
                _ => {}
            }
            let summary = matches!(report.event, RunEvent::Summary(_));
            // Held back until synced, or said before the summary of a run stopped before it.
            let held = if synced || summary { std::mem::take(&mut foreseen) } else { Vec::new() };
            let (first, then) = if summary { (held, vec![report]) } else { (vec![report], held) };
            for report in first.into_iter().chain(then) {
                view.observe(&report);
                // Writing into memory cannot fail.
                let _ = match printing {
                    Printing::Text { color, .. } => write_text(&report, color, &mut text),
                    Printing::Json => write_json(&report, &mut text),
                    Printing::Log { json } => write_log(&report, json, &mut text),
                };
            }
            last = summary;
            if last {
                break;
            }
        }
        if live {
            drawn = block(&mut out, drawn, &[], size().columns);
        }
        if let Err(error) = out.write_all(&text).and_then(|()| out.flush()) {
            // Nothing more can be recorded: nothing more may be done.
            let _ = unrecorded.send(error);
            return;
        }
        if live && !last {
            view.set_backlog(throttle.backlog().map(|b| (b.deletions, b.drains_at)));
            drawn = block(&mut out, 0, &view.render(clock.now(), color), size().columns);
        }
        if last {
            return;
        }
    }
}
