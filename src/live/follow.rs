//! `plan -w`: a read-only live view of the plan, from the watches `run` uses, through the same
//! engine, writing nothing to the cluster. On a terminal the screen is redrawn in place; piped, one
//! JSON line per change.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::inputs::{self, Live, Nodes, Reading};
use super::signal::interrupted;
use crate::cluster::watch::Watches;
use crate::config::WatchConfig;
use crate::engine::observe::{Observed, Seen};
use crate::engine::time::Timestamp;
use crate::error::{Error, Result};
use crate::metrics::Metrics;
use crate::output::ColorMode;
use crate::output::redraw::{ENTER_SCREEN, LEAVE_SCREEN, frame};
use crate::output::watch::{WatchView, write_json};
use crate::runtime::report::{Report, RunEvent};
use crate::runtime::{Driver, NodeChange, PodChange, Step};
use crate::screen_size::size;

/// How often the screen's countdowns are redrawn.
const TICK: Duration = Duration::from_millis(250);

/// `kubectl taint-evict plan -w`.
///
/// # Errors
/// A connection or RBAC failure at start, a watch failing for good, a template failing on a line.
pub fn watch(args: &WatchConfig) -> Result<()> {
    inputs::runtime()?.block_on(follow(args))
}

/// Where changes are shown.
enum Screen {
    /// Redrawn in place on a terminal.
    Live { view: WatchView, color: ColorMode, dirty: bool, drawn_at: Option<Timestamp> },
    /// JSON lines, each through the template when one is given (`-o jsonpath=…`).
    Lines(Option<Box<crate::output::template::Printer>>),
}

struct Printer {
    screen: Screen,
    namespace: Option<String>,
    out: std::io::Stdout,
    /// The reader went away (a closed pipe): the watch ends.
    closed: bool,
    /// The template failed on a line: the watch ends with it.
    failure: Option<Error>,
}

impl Printer {
    fn shows(&self, seen: &Seen) -> bool {
        let pod = match &seen.what {
            Observed::Scheduled { pod, .. }
            | Observed::Due { pod, .. }
            | Observed::Cancelled { pod, .. }
            | Observed::Done { pod, .. } => pod,
            Observed::Synced { .. } | Observed::Taints { .. } => return true,
        };
        self.namespace.as_deref().is_none_or(|ns| pod.key.namespace() == ns)
    }

    fn seen(&mut self, seen: &Seen, text: &mut Vec<u8>) {
        if !self.shows(seen) {
            return;
        }
        match &mut self.screen {
            Screen::Live { view, dirty, .. } => {
                view.observe(seen);
                *dirty = true;
            }
            Screen::Lines(_) => {
                // Writing into memory cannot fail.
                let _ = write_json(seen, text);
            }
        }
    }

    fn report(&mut self, report: &Report, text: &mut Vec<u8>) {
        match (&mut self.screen, &report.event) {
            (Screen::Live { view, dirty, .. }, RunEvent::Connection { watch, connected, since, .. }) => {
                view.connection(watch, *connected, *since);
                *dirty = true;
            }
            (Screen::Live { view, dirty, .. }, RunEvent::Foreseen(forecast)) => {
                view.foreseen(forecast);
                *dirty = true;
            }
            (
                Screen::Lines(_),
                RunEvent::Connection { .. }
                | RunEvent::Foreseen(_)
                | RunEvent::Drain { .. }
                | RunEvent::Assumed { .. }
                | RunEvent::Warning { .. },
            ) => {
                let _ = crate::output::run::write_json(report, text);
            }
            _ => {}
        }
    }

    /// Writes what is pending; on a terminal, redraws when something changed or a second passed.
    fn flush(&mut self, text: &[u8], now: Timestamp) {
        let bytes = match &mut self.screen {
            Screen::Lines(None) => text.to_vec(),
            Screen::Lines(Some(template)) => match through(template, text) {
                Ok(bytes) => bytes,
                Err(error) => {
                    self.failure = Some(error);
                    self.closed = true;
                    return;
                }
            },
            Screen::Live { view, color, dirty, drawn_at } => {
                let second = |at: Timestamp| at.as_nanos().div_euclid(1_000_000_000);
                if !*dirty && drawn_at.is_some_and(|at| second(at) == second(now)) {
                    return;
                }
                *dirty = false;
                *drawn_at = Some(now);
                let size = size();
                frame(&view.render(now, size, *color), size).into_bytes()
            }
        };
        if bytes.is_empty() {
            return;
        }
        if self.out.write_all(&bytes).and_then(|()| self.out.flush()).is_err() {
            self.closed = true;
        }
    }

    fn start(&mut self) {
        if let Screen::Live { .. } = self.screen {
            // Clear the screen, hide the cursor.
            let _ = self.out.write_all(ENTER_SCREEN.as_bytes());
        }
    }

    fn finish(&mut self) {
        if let Screen::Live { .. } = self.screen {
            // The last screen stays; the cursor comes back under it.
            let _ = self.out.write_all(LEAVE_SCREEN.as_bytes());
        }
        let _ = self.out.flush();
    }
}

async fn follow(args: &WatchConfig) -> Result<()> {
    let nodes = Nodes { names: &args.nodes, selector: args.selector.as_ref() };
    // Every namespace is watched; `-n` filters what is shown.
    let live = Live::connect(&args.connect, nodes, None, Reading::Middle).await?;
    let clock = live.clock.clone();
    let tty = std::io::stdout().is_terminal() && !args.json && args.template.is_none();
    let screen = if tty {
        Screen::Live { view: WatchView::default(), color: args.color, dirty: true, drawn_at: None }
    } else {
        let template = args.template.clone().map(|t| Box::new(crate::output::template::Printer::new(t, args.headers)));
        Screen::Lines(template)
    };
    let mut printer =
        Printer { screen, namespace: args.namespace.clone(), out: std::io::stdout(), closed: false, failure: None };
    let (report_tx, mut reports) = mpsc::unbounded_channel();
    let history = live.history().await?;
    // The silent nodes the node lifecycle controller is about to taint, as `plan` shows them.
    let foresight = live.foresee(&args.lifecycle, &report_tx, history.controller).await;
    let monitor_period = foresight.flags.node_monitor_period;
    let metrics = Arc::new(Metrics::new());
    let edited = crate::runtime::Edits::default();
    let Watches { nodes: node_changes, pods, mut fatal, .. } =
        live.watch(nodes, None, &args.lifecycle, foresight, &report_tx, metrics, None, false, edited.clone());
    drop(report_tx);
    let mut driver = Driver::new(node_changes, pods, clock.clone());
    let mut failure = None;
    let mut observer =
        crate::host::observer(history.controller_acquired).with_not_ready(history.not_ready, monitor_period);
    // The pods edited mid-countdown are found in the first lists, before the first list of pods.
    let mut edited = Some(edited);
    let shutdown = interrupted();
    tokio::pin!(shutdown);
    // A pipe whose reader goes (`plan -w | head -1`) ends the view as it closes, not at the next line,
    // which on a quiet cluster may come hours later.
    let reader_gone = super::closed::closed();
    tokio::pin!(reader_gone);
    let mut tick = tokio::time::interval(TICK);
    let mut text = Vec::new();
    let mut foreseen = Vec::new();
    printer.start();
    while !printer.closed {
        tokio::select! {
            biased;
            () = &mut shutdown => break,
            () = &mut reader_gone => {
                printer.closed = true;
                break;
            }
            Some(error) = fatal.recv() => {
                // A watch failed for good: the view ends with the error.
                failure = Some(error);
                break;
            }
            step = driver.next(observer.poll_timeout()) => match step {
                Some(Step::Node(NodeChange::Listed(list), now)) => observer.handle_nodes_listed(list, now),
                Some(Step::Node(NodeChange::Applied(node), now)) => observer.handle_node_applied(node, now),
                Some(Step::Node(NodeChange::Deleted(name), now)) => observer.handle_node_deleted(name, now),
                Some(Step::Node(NodeChange::Left(name), now)) => observer.handle_node_left(name, now),
                Some(Step::Pod(PodChange::Listed(list), now)) => {
                    if let Some(edited) = edited.take() {
                        observer = observer.with_edited(edited.take());
                    }
                    observer.handle_pods_listed(list, now);
                }
                Some(Step::Pod(PodChange::Applied(pod), now)) => observer.handle_pod_applied(pod, now),
                Some(Step::Pod(PodChange::Deleted(key), now)) => observer.handle_pod_deleted(key, now),
                // `plan -w` carries nothing out: a re-list follows, and replaces what it showed.
                Some(
                    Step::Node(NodeChange::Interrupted, _)
                    | Step::Pod(PodChange::Interrupted | PodChange::Resumed, _),
                ) => {}
                Some(Step::Timeout(now)) => observer.handle_timeout(now),
                // The view follows node taints only.
                Some(Step::Device(..) | Step::Replicas(_)) => {}
                None => break,
            },
            Some(report) = reports.recv() => match report.event {
                // The state at the start comes first (synced, taints, pods), then what is foreseen.
                RunEvent::Foreseen(_) | RunEvent::Drain { .. } | RunEvent::Assumed { .. } if !observer.is_synced() => {
                    foreseen.push(report);
                }
                _ => printer.report(&report, &mut text),
            },
            _ = tick.tick(), if tty => {}
        }
        while let Some(seen) = observer.poll_seen() {
            printer.seen(&seen, &mut text);
        }
        if observer.is_synced() {
            for report in foreseen.drain(..) {
                printer.report(&report, &mut text);
            }
        }
        printer.flush(&text, clock.now());
        text.clear();
    }
    printer.finish();
    if let Some(error) = printer.failure {
        return Err(error);
    }
    match failure {
        Some(error) => Err(error.into()),
        None => Ok(()),
    }
}

/// JSON lines, each printed through the template as its own document.
fn through(template: &mut crate::output::template::Printer, lines: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for line in lines.split(|&b| b == b'\n').filter(|line| !line.is_empty()) {
        let document: serde_json::Value = serde_json::from_slice(line).map_err(std::io::Error::other)?;
        let text = template
            .print(&document, crate::output::template::Rows::Document)
            .map_err(|e| Error::TemplateFailed { format: template.name(), reason: e.0 })?;
        out.extend_from_slice(&text);
    }
    Ok(out)
}
