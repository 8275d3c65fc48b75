//! `record` over a generated stretch of a cluster's changes (`crates/test-support/src/hour.rs`, the
//! benchmark's generator at a small size): the requests it makes do not grow with the changes, its
//! lines' instants follow the control plane's time through the controller manager's Lease however
//! fast the changes come, and `review` of what it wrote judges each of the incident's deletions.

use std::time::Duration;

use serde_json::Value;
use taint_evict_test_support::fake_apiserver::FakeApiServer;
use taint_evict_test_support::hour::{Config, Hour};
use taint_evict_test_support::recording::{Recording, contents, record_files, requests_by_kind};

use crate::util::{command, instant, scratch};

/// 30 nodes of 10 pods for 15 minutes: the rollout of 20 pods at 1 min, the zone silent at 2 min.
fn small() -> Config {
    let mut config = Config::hour(30, 10);
    config.seconds = 900;
    config.incident_at = 120;
    config.rollout_at = 60;
    config.rollout = 20;
    config
}

#[test]
fn record_follows_a_generated_quarter_hour_with_a_handful_of_requests_and_review_judges_its_incident() {
    let dir = scratch("record-hour");
    let out = dir.join("record");
    let server = FakeApiServer::start(&dir);
    let mut hour = Hour::load(small(), &server);
    hour.renew_controller(&server, jiff::Timestamp::now());
    let recording = Recording::start(command(), &server, &out, &[]);
    recording.wait_watching(&server, Duration::from_secs(60));
    // 15 minutes at 30 times their pace: 30 s.
    let tally = hour.play(&server, 30.0);
    let last = hour.last_controller_renewal();
    let _ = recording.wait_for_text(&last, Duration::from_secs(60));
    assert!(recording.stop().success(), "record stops with 0 on SIGTERM");

    // By hand: 20 healthy nodes renew 90 times in 900 s, the 10 silent ones 12 times before 120 s;
    // 450 controller renewals; the 10 silent nodes marked by 170 s (50 s past their last renewal, on
    // a 5 s pass), tainted one every 10 s from 170 s; each has 1 DaemonSet pod (tolerated for ever),
    // 1 Job pod (deleted at once) and 8 Deployment pods (300 s): 90 deletions, the last at 560 s.
    assert_eq!(
        (tally.renewals, tally.controller, tally.marked, tally.tainted, tally.evicted),
        (20 * 90 + 10 * 12, 450, 10, 10, 90),
        "{tally:?}"
    );
    assert!(tally.writes > 2_500, "{tally:?}");

    // One LIST and one WATCH of each kind (two of Events, by their field selectors), whatever the
    // thousands of writes; a GET /version and its probes besides.
    let requests = requests_by_kind(&server.requests());
    for kind in ["/api/v1/nodes", "/api/v1/pods", "/apis/coordination.k8s.io/v1/leases"] {
        assert_eq!(requests.get(&format!("LIST {kind}")), Some(&1), "{requests:#?}");
        assert_eq!(requests.get(&format!("WATCH {kind}")), Some(&1), "{requests:#?}");
    }
    for fields in ["involvedObject.kind=Node", "reason=TaintManagerEviction"] {
        assert_eq!(requests.get(&format!("LIST /api/v1/events?fieldSelector={fields}")), Some(&1), "{requests:#?}");
        assert_eq!(requests.get(&format!("WATCH /api/v1/events?fieldSelector={fields}")), Some(&1), "{requests:#?}");
    }
    // Besides, only the clock's probes: one GET /version, then at most 4 rounds of 8 to narrow the
    // clock (the fake sends no `Date` header: none narrows it), again after 4 minutes (not reached).
    assert!(requests.get("GET /version").is_some_and(|n| (1..=33).contains(n)), "{requests:#?}");
    assert_eq!(requests.len(), 11, "nothing else: {requests:#?}");

    // The node Leases held back to one a minute: the healthy nodes' renewals of 15 minutes in about
    // 15 lines each, not 90, with the list's 31 Leases and the controller's 450 renewals on top.
    let found = contents(&out);
    let leases = found.lines["lease"];
    assert!((31 + 450 + 20 * 15..=31 + 450 + 20 * 17 + 10 * 4).contains(&leases), "{found:?}");
    assert_eq!(found.lines["stopped"], 1, "{found:?}");

    // The lines' instants are the hour's: each controller renewal is written within its 2 s retry
    // period of its renewTime (the recorder's clock follows the renewals; 30 times faster than the
    // hour, it trails by up to one period), and the last line comes after the hour's last renewal.
    let lines: Vec<Value> = record_files(&out)
        .iter()
        .flat_map(|path| {
            std::fs::read_to_string(path)
                .expect("a record file")
                .lines()
                .map(|l| serde_json::from_str(l).expect("JSON"))
                .collect::<Vec<Value>>()
        })
        .collect();
    let controller: Vec<&Value> =
        lines.iter().filter(|l| l["lease"]["metadata"]["name"] == "kube-controller-manager").collect();
    assert!(controller.len() > 450, "{}", controller.len());
    for line in &controller[1..] {
        let (at, renewed) =
            (instant(line["at"].as_str().unwrap()), instant(line["lease"]["spec"]["renewTime"].as_str().unwrap()));
        assert!((at - renewed).abs() <= 2_500_000_000, "{line}");
    }
    let stopped = lines.last().expect("lines");
    assert!(instant(stopped["at"].as_str().unwrap()) >= instant(&last), "{stopped}");

    // Review: the 90 deletions of the incident, each by the controller (its Event), none early, none
    // missed. With 6 s of slack: the deletions come 200 ms after they are due, and at 30 times the
    // hour's pace 100 ms of this machine's time (a debug build behind on a busy machine) is 3 s of
    // the hour. Nodes and pods come on two watches: a deletion that overtakes its node's taint (7 ms
    // of this machine's time apart) is judged with nothing due, so most, not all, are on time.
    let review =
        command().args(["review", out.to_str().unwrap(), "-o", "json", "--slack", "6s"]).output().expect("review runs");
    assert!(review.status.success(), "{}", String::from_utf8_lossy(&review.stderr));
    let review: Value = serde_json::from_slice(&review.stdout).expect("JSON");
    let counts = &review["counts"];
    assert!(counts["onTime"].as_u64().is_some_and(|n| n >= 80), "{counts}");
    for none in ["early", "notDeleted", "pending", "byOther"] {
        assert_eq!(counts[none], 0, "{counts}");
    }
    let judged: u64 = counts.as_object().expect("counts").values().filter_map(Value::as_u64).sum();
    assert_eq!(judged, 90, "{counts}");
}
