//! The harness itself: where the binaries come from, and that no process outlives a test that fails
//! or is killed.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use taint_evict_test_support::control_plane::{REQUIRE, assets};

const CHILD_MODE: &str = "TAINT_EVICT_TEST_CHILD_MODE";
const CHILD_PIDS: &str = "TAINT_EVICT_TEST_CHILD_PIDS";
const CHILD_TEST: &str = "real_apiserver::harness::child_starts_a_control_plane_then_fails_or_hangs";

#[test]
fn the_binaries_are_found_or_the_tier_says_it_did_not_run() {
    match assets() {
        Ok(assets) => {
            eprintln!("real_apiserver: control plane binaries from {}", assets.origin);
            for binary in ["etcd", "kube-apiserver"] {
                assert!(assets.dir.join(binary).is_file(), "{binary} in {}", assets.dir.display());
            }
        }
        Err(reason) => {
            assert!(std::env::var_os(REQUIRE).is_none_or(|v| v != "1"), "{REQUIRE}=1 but: {reason}");
            eprintln!("real_apiserver: SKIPPED, the real control-plane tests did not run: {reason}");
        }
    }
}

/// Not a test of its own: the child process of the two tests below (it does nothing unless they set
/// its mode).
#[test]
#[ignore = "run by the tests of the harness in a child process"]
fn child_starts_a_control_plane_then_fails_or_hangs() {
    let Some(mode) = std::env::var_os(CHILD_MODE) else { return };
    let plane = crate::control_plane!("child");
    let pids: Vec<String> = plane.pids().iter().map(|(_, pid)| pid.to_string()).collect();
    let file = std::env::var_os(CHILD_PIDS).expect("where to write the pids");
    std::fs::write(Path::new(&file).with_extension("tmp"), pids.join("\n")).expect("write the pids");
    std::fs::rename(Path::new(&file).with_extension("tmp"), &file).expect("publish the pids");
    if mode == "hang" {
        loop {
            std::thread::park();
        }
    }
    panic!("a test that fails with a control plane running");
}

/// Runs the child test in `mode`, returns the pids of its control plane once they are written.
fn child(mode: &str, name: &str) -> (std::process::Child, Vec<u32>) {
    let pids_file = std::env::temp_dir().join(format!("taint-evict-child-pids-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&pids_file);
    let child = Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", CHILD_TEST, "--ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD_MODE, mode)
        .env(CHILD_PIDS, &pids_file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the child test starts");
    let deadline = Instant::now() + Duration::from_secs(90);
    let pids = loop {
        if let Ok(text) = std::fs::read_to_string(&pids_file) {
            break text.lines().map(|l| l.parse().expect("a pid")).collect::<Vec<u32>>();
        }
        assert!(Instant::now() < deadline, "the child wrote no pids within 90 s");
        std::thread::park_timeout(Duration::from_millis(50));
    };
    let _ = std::fs::remove_file(&pids_file);
    assert!(pids.len() >= 2, "etcd and kube-apiserver: {pids:?}");
    (child, pids)
}

/// Whether `pid` is a live process (a zombie waiting for its reaper counts as gone).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')))
}

/// Removes the directory the child's control plane kept (a failing test keeps its logs).
fn remove_kept_logs(child: u32) {
    let _ = std::fs::remove_dir_all(std::env::temp_dir().join(format!("taint-evict-cp-{child}-child")));
}

fn assert_all_gone(pids: &[u32]) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while pids.iter().any(|&pid| alive(pid)) {
        let left: Vec<u32> = pids.iter().copied().filter(|&pid| alive(pid)).collect();
        assert!(Instant::now() < deadline, "still running 20 s after the test ended: {left:?}");
        std::thread::park_timeout(Duration::from_millis(50));
    }
}

#[test]
fn a_failing_test_leaves_no_process_behind() {
    if assets().is_err() {
        return the_binaries_are_found_or_the_tier_says_it_did_not_run();
    }
    let (mut child, pids) = child("panic", "panic");
    let status = child.wait().expect("the child ends");
    assert!(!status.success(), "the child test fails");
    assert_all_gone(&pids);
    remove_kept_logs(child.id());
}

#[test]
fn a_killed_test_leaves_no_process_behind() {
    if assets().is_err() {
        return the_binaries_are_found_or_the_tier_says_it_did_not_run();
    }
    let (mut child, pids) = child("hang", "kill");
    assert!(pids.iter().all(|&pid| alive(pid)), "the control plane runs while the test hangs");
    child.kill().expect("SIGKILL the test");
    child.wait().expect("reaped");
    assert_all_gone(&pids);
    remove_kept_logs(child.id());
}
