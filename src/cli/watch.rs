//! `plan -w`: a read-only live view of the plan, from the watches `run` uses, through the same
//! engine, writing nothing to the cluster. On a terminal the screen is redrawn in place; piped, one
//! JSON line per change.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::config::WatchConfig;
use super::screen_size;
use crate::cluster;
use crate::cluster::timekeeping;
use crate::cluster::watch::{self, NodeScope};
use crate::engine::observe::{Observed, Seen};
use crate::engine::time::Timestamp;
use crate::error::{Error, Result};
use crate::metrics::Metrics;
use crate::output::ColorMode;
use crate::output::redraw::frame;
use crate::output::watch::{WatchView, to_json};
use crate::runtime::report::{Report, RunEvent};
use crate::runtime::{Driver, NodeChange, PodChange, Step};

/// How often the screen's countdowns are redrawn.
const TICK: Duration = Duration::from_millis(250);

/// `kubectl taint-evict plan -w`.
pub fn watch(args: &WatchConfig) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::Runtime(e.to_string()))?;
    runtime.block_on(follow(args))
}

fn scope(args: &WatchConfig) -> NodeScope {
    match (&args.selector, args.nodes.is_empty()) {
        (Some(selector), _) => NodeScope::Labels(selector.clone()),
        (None, false) => NodeScope::Named(args.nodes.clone()),
        (None, true) => NodeScope::All,
    }
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
                let _ = serde_json::to_writer(&mut *text, &to_json(seen));
                text.push(b'\n');
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
            (Screen::Lines(_), RunEvent::Connection { .. } | RunEvent::Foreseen(_) | RunEvent::Warning { .. }) => {
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
                let size = screen_size::size();
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
            let _ = self.out.write_all(b"\x1b[H\x1b[2J\x1b[?25l");
        }
    }

    fn finish(&mut self) {
        if let Screen::Live { .. } = self.screen {
            // The last screen stays; the cursor comes back under it.
            let _ = self.out.write_all(b"\x1b[?25h\r\n");
        }
        let _ = self.out.flush();
    }
}

async fn follow(args: &WatchConfig) -> Result<()> {
    let connection = cluster::connect(&args.connect).await?;
    // Fail now, with the denied verb and resource, rather than retrying a watch forever.
    cluster::snapshot::preflight(&connection, args.selector.as_ref().map(|s| s.as_str()), None).await?;
    let controller_acquired = cluster::read_controller_acquired(&connection).await?;
    // The control plane's time, read off the answers as they come.
    let clock = connection.time.clock().clone();
    let narrowed = timekeeping::narrow_in_background(&connection);
    timekeeping::keep(&connection);
    let live = std::io::stdout().is_terminal() && !args.json && args.template.is_none();
    let screen = if live {
        Screen::Live { view: WatchView::default(), color: args.color, dirty: true, drawn_at: None }
    } else {
        let template = args.template.clone().map(|t| Box::new(crate::output::template::Printer::new(t, args.headers)));
        Screen::Lines(template)
    };
    let mut printer =
        Printer { screen, namespace: args.namespace.clone(), out: std::io::stdout(), closed: false, failure: None };
    let (report_tx, mut reports) = mpsc::unbounded_channel();
    // The silent nodes the node lifecycle controller is about to taint, as `plan` shows them.
    let shown = super::run::Shown { selector: args.selector.as_ref(), nodes: &args.nodes };
    let minor =
        super::run::foresee_nodes(&connection, shown, &args.lifecycle, &report_tx, clock.clone(), narrowed).await?;
    let metrics = Arc::new(Metrics::new());
    let watch::Watches { nodes, pods, mut fatal, .. } =
        watch::spawn(&connection.client, scope(args), None, report_tx.clone(), clock.clone(), metrics, None);
    let pods = super::run::gate_comparison_operators(pods, &args.lifecycle, minor, report_tx, clock.clone());
    let mut driver = Driver::new(nodes, pods, clock.clone());
    let mut failure = None;
    let not_ready = cluster::snapshot::every_not_ready_since(&connection).await.unwrap_or_default();
    let monitor_period = args.lifecycle.flags(minor).node_monitor_period;
    let edited = cluster::snapshot::every_tolerations_written(&connection).await;
    let mut observer =
        crate::host::observer(controller_acquired).with_not_ready(not_ready, monitor_period).with_edited(edited);
    let shutdown = super::run::interrupted();
    tokio::pin!(shutdown);
    let mut tick = tokio::time::interval(TICK);
    let mut text = Vec::new();
    let mut foreseen = Vec::new();
    printer.start();
    while !printer.closed {
        tokio::select! {
            biased;
            () = &mut shutdown => break,
            Some(error) = fatal.recv() => {
                // A watch failed for good: the view ends with the error.
                failure = Some(error);
                break;
            }
            step = driver.next(observer.poll_timeout()) => match step {
                Some(Step::Node(NodeChange::Listed(list), now)) => observer.handle_nodes_listed(list, now),
                Some(Step::Node(NodeChange::Applied(node), now)) => observer.handle_node_applied(node, now),
                Some(Step::Node(NodeChange::Deleted(name), now)) => observer.handle_node_deleted(name, now),
                Some(Step::Pod(PodChange::Listed(list), now)) => observer.handle_pods_listed(list, now),
                Some(Step::Pod(PodChange::Applied(pod), now)) => observer.handle_pod_applied(pod, now),
                Some(Step::Pod(PodChange::Deleted(key), now)) => observer.handle_pod_deleted(key, now),
                // `plan -w` carries nothing out: a re-list follows, and replaces what it showed.
                Some(
                    Step::Node(NodeChange::Interrupted, _)
                    | Step::Pod(PodChange::Interrupted | PodChange::Resumed, _),
                ) => {}
                Some(Step::Timeout(now)) => observer.handle_timeout(now),
                // The view follows node taints only.
                Some(Step::Device(..)) => {}
                None => break,
            },
            Some(report) = reports.recv() => match report.event {
                // The state at the start comes first (synced, taints, pods), then what is foreseen.
                RunEvent::Foreseen(_) if !observer.is_synced() => foreseen.push(report),
                _ => printer.report(&report, &mut text),
            },
            _ = tick.tick(), if live => {}
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
