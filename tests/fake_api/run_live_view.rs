//! `run`'s live view in an 80×24 pseudo-terminal: its block under the log is redrawn every second,
//! and no redraw leaves a copy of it behind (fixed: lines longer than the terminal wrapped, and
//! moving back over the block left their first rows on the screen).

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::fake_api::run_cluster::{node, pod, taint};
use crate::support::terminal::Pty;
use crate::util::{command, scratch};
use taint_evict_test_support::fake_apiserver::FakeApiServer;

const WAIT: Duration = Duration::from_secs(20);

/// The seconds left on the first live row (`  in 9m 58s  …`).
fn first_countdown(rows: &[String]) -> Option<u64> {
    let row = rows.iter().find(|r| r.starts_with("  in "))?;
    let parts: Vec<&str> = row.split_whitespace().skip(1).take_while(|w| w.ends_with(['m', 's'])).collect();
    Some(
        parts
            .iter()
            .filter_map(|p| {
                let (n, unit) = p.split_at(p.len() - 1);
                n.parse::<u64>().ok().map(|n| if unit == "m" { n * 60 } else { n })
            })
            .sum(),
    )
}

#[test]
fn run_live_view_at_80_columns_leaves_no_copy_of_its_block_on_redraw() {
    let server = FakeApiServer::start(&scratch("run-live-view"));
    let long =
        ["a-pod-with-a-name-long-enough-to-wrap-the-live-row", "b-pod-with-a-name-long-enough-to-wrap-the-live-row"];
    server.add(node("n1", &[taint(jiff::Timestamp::now())]));
    for name in long {
        server.add(pod(name, "n1", Some(Some(600))));
    }
    let mut pty = Pty::open(80, 24);
    let slave = pty.slave.take().expect("the terminal side");
    let kubeconfig = server.kubeconfig().to_str().expect("UTF-8").to_owned();
    let mut child = command()
        .args(["run", "--dry-run", "--kubeconfig", &kubeconfig])
        .env_remove("COLUMNS")
        .env_remove("LINES")
        .stdin(Stdio::null())
        .stdout(Stdio::from(slave))
        .stderr(Stdio::inherit())
        .spawn()
        .expect("run starts");
    let first = pty.wait_for("the live block", WAIT, |s| first_countdown(&s.lines()).is_some());
    let start = first_countdown(&first.lines()).expect("a countdown");
    // Three redraws later (one a second), read once the block is drawn whole (a screen read mid-redraw
    // can hold its first row only):
    let screen = pty.wait_for("three redraws", WAIT, |s| {
        let rows = s.lines();
        let drawn = rows.iter().filter(|r| r.starts_with("  in ")).count() >= 2;
        drawn && first_countdown(&rows).is_some_and(|left| left + 3 <= start)
    });
    let rows = screen.lines();
    let headings = rows.iter().filter(|r| r.starts_with("── ")).count();
    let live_rows = rows.iter().filter(|r| r.starts_with("  in ")).count();
    assert_eq!((headings, live_rows), (1, 2), "one block, drawn once: {rows:#?}");
    assert!(rows.iter().all(|r| !r.starts_with("  in ") || r.chars().count() < 80), "{rows:#?}");
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill runs");
    assert!(status.success());
    assert_eq!(child.wait().expect("run exits").code(), Some(0));
}
