//! `plan -w` against the fake API server: in an 80×24 pseudo-terminal, and piped as JSON lines. The
//! cluster's controller is played by the test, deleting pods directly on the fake. Every wait is on
//! a condition with a deadline.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::fake_api::run_cluster::{TAINT, node, pod, taint};
use crate::support::running::Running;
use crate::support::terminal::{Pty, Screen};
use crate::util::{command, run, scratch};
use taint_evict_test_support::fake_apiserver::FakeApiServer;

const WAIT: Duration = Duration::from_secs(20);

fn interrupt(child: &mut Child) -> i32 {
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill runs");
    assert!(status.success());
    child.wait().expect("plan -w exits").code().unwrap_or(-1)
}

/// The row of pod `name` (`default/NAME`), if on the screen.
fn row<'a>(screen: &'a [String], name: &str) -> Option<&'a String> {
    let pod = format!(" default/{name} ");
    screen.iter().find(|l| l.contains(&pod))
}

/// Every row on the screen is a row of the view as last drawn: one heading, one column header, node
/// lines, pod rows each shown once, at most the `… and N more` line; nothing wrapped, nothing left.
fn assert_no_stale_rows(screen: &Screen) {
    let rows = screen.text_rows();
    assert!(screen.lines().len() <= 24);
    assert_eq!(screen.scrolled, 0, "the screen never scrolls: {rows:#?}");
    assert_eq!(rows.iter().filter(|l| l.starts_with("── ")).count(), 1, "one heading: {rows:#?}");
    assert!(rows[0].starts_with("── "), "{rows:#?}");
    assert!(rows.iter().filter(|l| l.starts_with("STATE ")).count() <= 1, "{rows:#?}");
    let mut names = Vec::new();
    for line in &rows[1..] {
        let known = line.starts_with("node ")
            || line.starts_with("STATE ")
            || line.starts_with("… and ")
            || line.contains(" default/");
        assert!(known, "a stale or wrapped row {line:?} in {rows:#?}");
        if let Some(name) = line.split_whitespace().find(|w| w.starts_with("default/")) {
            names.push(name.to_owned());
        }
        assert!(line.chars().count() < 80, "{line:?}");
    }
    let count = names.len();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), count, "each pod once: {rows:#?}");
}

/// Seconds in `in 9m 55s`, `overdue by 12s`.
fn seconds(text: &str) -> i64 {
    text.split_whitespace()
        .filter_map(|part| {
            let (number, unit) = part.split_at(part.find(|c: char| !c.is_ascii_digit())?);
            let n: i64 = number.parse().ok()?;
            Some(match unit {
                "h" => n * 3600,
                "m" => n * 60,
                "s" => n,
                _ => return None,
            })
        })
        .sum()
}

#[test]
fn plan_watch_redraws_an_80x24_terminal_in_place_counting_down_and_marks_the_controllers_deletion_done() {
    let server = FakeApiServer::start(&scratch("plan-watch-pty"));
    let tainted_at = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(10);
    server.add(node("n1", &[taint(tainted_at)]));
    server.add(pod("bare", "n1", None));
    server.add(pod("tol600", "n1", Some(Some(600))));
    server.add(pod("forever", "n1", Some(None)));
    let mut pty = Pty::open(80, 24);
    let slave = pty.slave.take().expect("the terminal side");
    let kubeconfig = server.kubeconfig().to_str().expect("UTF-8").to_owned();
    let mut child = command()
        .args(["plan", "-w", "--kubeconfig", &kubeconfig])
        .env_remove("COLUMNS")
        .env_remove("LINES")
        .stdin(Stdio::null())
        .stdout(Stdio::from(slave))
        .stderr(Stdio::inherit())
        .spawn()
        .expect("plan -w starts");
    // The child holds the terminal now (the Command, and with it this side's copy, is dropped).

    let screen = pty.wait_for("bare due and tol600 scheduled", WAIT, |s| {
        let rows = s.lines();
        row(&rows, "bare").is_some_and(|r| r.starts_with("overdue by")) && row(&rows, "tol600").is_some()
    });
    assert_no_stale_rows(&screen);
    let rows = screen.lines();
    assert!(rows[0].contains("1 tainted node · 1 due · 1 scheduled · 0 done"), "{rows:#?}");
    assert!(rows.iter().any(|l| l == &format!("node n1: {TAINT}:NoExecute")), "{rows:#?}");
    assert!(row(&rows, "forever").is_none(), "tolerated forever: nothing to follow");
    // The countdown: tol600 is deleted 600 s after the taint's timeAdded.
    let deadline = tainted_at.round(jiff::Unit::Second).expect("round") + jiff::SignedDuration::from_secs(600);
    let tol600 = row(&rows, "tol600").expect("tol600").clone();
    let clock = deadline.to_string();
    let time_of_day = clock.split_once('T').expect("RFC 3339").1;
    assert!(tol600.contains(time_of_day), "deadline {time_of_day} in {tol600:?}");
    // The screen read may have been drawn a moment before: what it shows is at most a few seconds more.
    let left = deadline.as_second() - jiff::Timestamp::now().as_second();
    let shown = seconds(tol600.split("  ").next().expect("state"));
    assert!(tol600.starts_with("in 9m") && (left - 2..=left + 5).contains(&shown), "{tol600:?}, {left}s left");
    // It ticks: a later screen shows less time left.
    pty.wait_for("the countdown to tick", WAIT, |s| {
        row(&s.lines(), "tol600").is_some_and(|r| seconds(r.split("  ").next().unwrap_or("")) < shown)
    });

    // The cluster's controller deletes the overdue pod; a new pod comes.
    server.remove("Pod", "default", "bare");
    server.add(pod("newcomer", "n1", Some(Some(300))));
    let screen = pty.wait_for("bare done and the newcomer scheduled", WAIT, |s| {
        let rows = s.lines();
        row(&rows, "bare").is_some_and(|r| r.starts_with("done, ")) && row(&rows, "newcomer").is_some()
    });
    assert_no_stale_rows(&screen);
    let rows = screen.lines();
    let bare = row(&rows, "bare").expect("bare");
    assert!(bare.starts_with("done, ") && bare.contains("s late"), "about 10 s after its deadline: {bare:?}");
    assert!(rows[0].contains("0 due · 2 scheduled · 1 done"), "{rows:#?}");

    // More pods than rows: the screen is cut to its height, and counts the rest.
    for i in 0..30 {
        server.add(pod(&format!("many-{i:02}"), "n1", Some(Some(900))));
    }
    let screen = pty.wait_for("the screen full", WAIT, |s| {
        s.lines()[23].starts_with("… and ") && s.lines()[0].contains("32 scheduled")
    });
    assert_no_stale_rows(&screen);

    assert_eq!(interrupt(&mut child), 0, "Ctrl-C ends the watch cleanly");
    // The last screen stays, the cursor shown again on the line under it (the full screen scrolls once).
    let last = pty.wait_for("the cursor back under the screen", WAIT, |s| s.scrolled == 1);
    let bytes = pty.bytes();
    let shown = bytes.windows(6).rposition(|w| w == b"\x1b[?25h").expect("the cursor shown again");
    assert!(bytes[shown + 6..].iter().all(|b| matches!(b, b'\r' | b'\n')), "nothing drawn after");
    assert!(last.lines()[22].starts_with("… and "), "{:#?}", last.lines());
    assert!(server.requests().iter().all(|r| r.method == "GET"), "plan -w writes nothing");
}

/// `plan -w` with stdout piped: one JSON line per change.
fn piped(server: &FakeApiServer) -> Running {
    let kubeconfig = server.kubeconfig().to_str().expect("UTF-8").to_owned();
    Running::spawn(command().args(["plan", "-w", "--kubeconfig", &kubeconfig]))
}

fn is(kind: &'static str, name: &'static str) -> impl Fn(&Value) -> bool {
    move |l: &Value| l["type"] == kind && l["pod"]["name"] == name
}

#[test]
fn plan_watch_piped_prints_one_json_line_per_change() {
    let server = FakeApiServer::start(&scratch("plan-watch-json"));
    let tainted_at = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(10);
    server.add(node("n1", &[taint(tainted_at)]));
    server.add(node("n2", &[]));
    server.add(pod("bare", "n1", None));
    server.add(pod("tol600", "n1", Some(Some(600))));
    let mut watch = piped(&server);
    let synced = watch.expect("the first lists", |l| l["type"] == "synced");
    assert_eq!((synced["taintedNodes"].as_u64(), synced["pods"].as_u64()), (Some(1), Some(2)));
    let taints = watch.expect("n1's taints", |l| l["type"] == "taints" && l["node"] == "n1");
    assert_eq!(
        taints["taints"],
        json!([{"key": TAINT, "value": "", "effect": "NoExecute",
        "timeAdded": tainted_at.round(jiff::Unit::Second).expect("round").to_string()}])
    );
    let due = watch.expect("bare due", is("due", "bare"));
    assert_eq!(due["reason"], "untolerated");
    let scheduled = watch.expect("tol600 scheduled", is("scheduled", "tol600"));
    assert_eq!(scheduled["tolerationSeconds"], 600);
    assert_eq!(scheduled["pod"], json!({"namespace": "default", "name": "tol600", "uid": "uid-tol600", "node": "n1"}));

    // The cluster's controller deletes bare; n2 gets tainted; n1's taint is removed.
    server.remove("Pod", "default", "bare");
    let done = watch.expect("bare done", is("done", "bare"));
    assert_eq!(done["how"], "deleted");
    let late = done["lateSeconds"].as_f64().expect("lateSeconds");
    assert!((9.0..60.0).contains(&late), "deleted about 10 s after its deadline: {late}");
    server.add(node("n2", &[taint(jiff::Timestamp::now())]));
    watch.expect("n2's taints", |l| l["type"] == "taints" && l["node"] == "n2");
    server.add(node("n1", &[]));
    watch.expect("tol600 cancelled", is("cancelled", "tol600"));
    watch.expect("n1 untainted", |l| l["type"] == "taints" && l["node"] == "n1" && l["taints"] == json!([]));
    for line in &watch.seen {
        assert!(line["time"].is_string(), "{line}");
    }
    assert_eq!(interrupt(&mut watch.child), 0);
    assert!(server.requests().iter().all(|r| r.method == "GET"), "plan -w writes nothing");
}

#[test]
fn plan_watch_prints_each_line_through_a_jsonpath_template() {
    let server = FakeApiServer::start(&scratch("plan-watch-jsonpath"));
    server.add(node("n1", &[taint(jiff::Timestamp::now())]));
    server.add(pod("bare", "n1", None));
    let kubeconfig = server.kubeconfig().to_str().expect("UTF-8").to_owned();
    // A template that writes a small JSON object of its own per line.
    let template = r#"jsonpath={'{"type":"'}{.type}{'","who":"'}{.pod.name}{.node}{'"}'}{"\n"}"#;
    let mut watch = Running::spawn(command().args(["plan", "-w", "--kubeconfig", &kubeconfig, "-o", template]));
    watch.expect("synced", |l| l == &json!({"type": "synced", "who": ""}));
    watch.expect("n1's taints", |l| l == &json!({"type": "taints", "who": "n1"}));
    watch.expect("bare due", |l| l == &json!({"type": "due", "who": "bare"}));
    assert!(watch.seen.iter().all(|l| l.as_object().is_some_and(|o| o.len() == 2)), "{:?}", watch.seen);
    assert_eq!(interrupt(&mut watch.child), 0);
}

#[test]
fn plan_watch_refuses_a_file_in_one_line() {
    let out = run(&["plan", "-w", "-f", "examples/incident.json"], None);
    assert_eq!(out.code, 2);
    assert_eq!(out.stderr, "error: -w/--watch follows the live cluster: it cannot read a file (-f)\n");
    let out = run(&["plan", "--watch", "--taint", "a:NoExecute", "n1"], None);
    assert_eq!((out.code, out.stderr.lines().count()), (2, 1), "{}", out.stderr);
}

#[test]
fn plan_watch_whose_reader_goes_away_exits_quietly_with_0_on_a_quiet_cluster() {
    // `plan -w -o json | head -1`: nothing more is written on a quiet cluster, and yet the view ends.
    use std::io::{BufRead, BufReader, Read};

    let server = FakeApiServer::start(&scratch("plan-watch-closed"));
    server.add(node("n1", &[]));
    server.add(pod("web", "n1", Some(Some(600))));
    let kubeconfig = server.kubeconfig().to_str().expect("UTF-8").to_owned();
    let mut child = command()
        .args(["plan", "-w", "--kubeconfig", &kubeconfig, "-o", "json"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    // The start's lines: synced, then n1 foreseen (it has no health to read); then nothing changes.
    let (mut synced, mut foreseen) = (false, false);
    while !synced || !foreseen {
        let line = lines.next().expect("a line before stdout ends").expect("a line");
        let line: Value = serde_json::from_str(&line).expect("a JSON line");
        synced |= line["type"] == "synced";
        foreseen |= line["type"] == "foreseen";
    }
    drop(lines);

    let pid = child.id().to_string();
    let mut stderr = child.stderr.take().expect("stderr");
    let (tx, exited) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        let _ = tx.send((child.wait().expect("plan -w exits"), text));
    });
    // Noticed as the pipe closes: within a few seconds, not at the next change.
    match exited.recv_timeout(Duration::from_secs(10)) {
        Ok((status, stderr)) => {
            assert_eq!(status.code(), Some(0), "{stderr}");
            assert_eq!(stderr, "", "quietly");
        }
        Err(_) => {
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
            panic!("plan -w went on after its reader was gone");
        }
    }
}
