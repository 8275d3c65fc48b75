//! `run` as an in-cluster controller: two processes elect a leader on a Lease in the fake API server,
//! one deletes, the other takes over when the leader dies; metrics and probes over real HTTP; the
//! manifests in `deploy/` parse, fit the binary, and grant exactly what it uses.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::Value;
use taint_evict::cli::{Cli, Command};

use crate::rbac::{missing, unused};
use crate::run_cluster::{deletes, node, pod, taint};
use crate::support::fake_apiserver::{FakeApiServer, Fault};
use crate::support::running::{Running, WAIT};
use crate::util::{command, repo, scratch};

const LEASE_DURATION: Duration = Duration::from_secs(3);
const RETRY_PERIOD: Duration = Duration::from_millis(500);

/// `run --leader-elect` with short periods (3 s / 2 s / 0.5 s), log records as JSON, metrics on `port`.
fn candidate(server: &FakeApiServer, port: u16) -> Running {
    let address = format!("127.0.0.1:{port}");
    Running::launch(
        server,
        &[
            "--log-format=json",
            "--leader-elect",
            "--leader-elect-namespace=taint-evict",
            "--leader-elect-lease-duration=3s",
            "--leader-elect-renew-deadline=2s",
            "--leader-elect-retry-period=500ms",
            "--metrics-bind-address",
            &address,
        ],
    )
}

pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("bound").port()
}

/// One HTTP/1.1 GET: the status code and the body.
fn get(port: u16, path: &str) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let code = response.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = response.split_once("\r\n\r\n").map(|(_, body)| body.to_owned()).unwrap_or_default();
    Ok((code, body))
}

/// Polls `path` until it answers `code` (the endpoint starts with the process).
pub fn wait_for_answer(port: u16, path: &str, code: u16) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        match get(port, path) {
            Ok((answered, body)) if answered == code => return body,
            _ if Instant::now() > deadline => panic!("{path} on :{port} did not answer {code} within {WAIT:?}"),
            // Polling a condition with a deadline: the next attempt waits for the scheduler only.
            _ => std::thread::yield_now(),
        }
    }
}

/// The metrics as `series → value`, parsed from the OpenMetrics text.
pub fn scrape(port: u16) -> std::collections::BTreeMap<String, f64> {
    let (code, body) = get(port, "/metrics").expect("metrics answer");
    assert_eq!(code, 200, "{body}");
    assert!(body.ends_with("# EOF\n"), "OpenMetrics ends with # EOF: {body}");
    body.lines()
        .filter(|line| !line.starts_with('#'))
        .map(|line| {
            let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("not a sample: {line}"));
            (series.to_owned(), value.parse().unwrap_or_else(|_| panic!("not a number: {line}")))
        })
        .collect()
}

fn leadership(state: &'static str) -> impl Fn(&Value) -> bool {
    move |line: &Value| line["type"] == "leadership" && line["state"] == state
}

fn timestamp(value: &Value) -> jiff::Timestamp {
    value.as_str().and_then(|t| t.parse().ok()).unwrap_or_else(|| panic!("not a time: {value}"))
}

#[test]
fn two_instances_one_deletes_and_the_other_takes_over_when_the_leader_dies() {
    let server = FakeApiServer::start(&scratch("in-cluster-election"));
    server.add(node("n1", &[]));
    for (name, seconds) in [("now", None), ("soon", Some(Some(4))), ("later", Some(Some(12)))] {
        server.add(pod(name, "n1", seconds));
    }
    let (port_a, port_b) = (free_port(), free_port());
    let mut a = candidate(&server, port_a);
    let leading = a.expect("a leads", leadership("leading"));
    let identity_a = leading["identity"].as_str().expect("identity").to_owned();
    assert_eq!(leading["level"], "info");
    assert!(leading["msg"].as_str().is_some_and(|m| m.contains("deciding and deleting")), "{leading}");
    a.expect("a seeded", |l| l["type"] == "synced");

    let mut b = candidate(&server, port_b);
    let following = b.expect("b follows", leadership("following"));
    assert_eq!(following["holder"], identity_a.as_str());
    assert_ne!(following["identity"], identity_a.as_str());
    // A follower is ready (its lists are in) and says it does not lead.
    wait_for_answer(port_b, "/readyz", 200);
    assert_eq!(get(port_b, "/healthz").expect("healthz").0, 200);
    assert_eq!(scrape(port_b)["taint_evict_leader"], 0.0);
    assert_eq!(scrape(port_a)["taint_evict_leader"], 1.0);

    let tainted = jiff::Timestamp::now().round(jiff::Unit::Second).expect("round");
    server.add(node("n1", &[taint(tainted)]));
    a.expect("a deletes the untolerated pod", |l| l["type"] == "deleted" && l["pod"]["name"] == "now");

    // The leader dies without releasing the lease.
    let renewed_last = |server: &FakeApiServer| {
        let lease = server.object("Lease", "taint-evict", "kubectl-taint-evict").expect("the lease");
        timestamp(&lease["spec"]["renewTime"])
    };
    a.child.kill().expect("kill the leader");
    a.child.wait().expect("the leader exits");
    let last_renewal = renewed_last(&server);
    let took_over = b.expect("b takes over", leadership("leading"));
    let takeover = timestamp(&took_over["time"]).duration_since(last_renewal);
    // Free once unchanged for the lease duration on b's clock: seen at most one jittered retry period
    // (≤ 2.2 × 0.5 s) after the renewal, taken at the first try after, plus the requests' own time.
    let bound = LEASE_DURATION + RETRY_PERIOD.mul_f64(2.0 * 2.2) + Duration::from_millis(500);
    assert!(
        takeover >= jiff::SignedDuration::try_from(LEASE_DURATION).expect("fits") && takeover.unsigned_abs() <= bound,
        "b took over {takeover:#} after the last renewal (lease duration {LEASE_DURATION:?}, bound {bound:?})"
    );
    println!("takeover {takeover:#} after the leader's last renewal");

    // The new term starts from the replay: soon's deadline (+4 s) passed during the failover, later's
    // (+12 s) is kept, not restarted at the takeover.
    b.expect("b deletes soon", |l| l["type"] == "deleted" && l["pod"]["name"] == "soon");
    let later = b.expect("b deletes later", |l| l["type"] == "deleted" && l["pod"]["name"] == "later");
    assert_eq!(timestamp(&later["evictAt"]), tainted + jiff::SignedDuration::from_secs(12));
    assert!(later["lateSeconds"].as_f64().is_some_and(|late| (0.0..1.0).contains(&late)), "{later}");

    // Exactly once each, and each by one instance.
    let requests = server.requests();
    for name in ["now", "soon", "later"] {
        assert_eq!(deletes(&requests, name), 1, "{name} deleted once");
    }
    assert!(!a.seen.iter().any(|l| l["type"] == "deleted" && l["pod"]["name"] != "now"), "{:#?}", a.seen);
    assert!(!b.seen.iter().any(|l| l["type"] == "deleted" && l["pod"]["name"] == "now"), "{:#?}", b.seen);

    let metrics = scrape(port_b);
    assert_eq!(metrics["taint_evict_leader"], 1.0);
    assert_eq!(metrics["taint_eviction_controller_pod_deletions_total"], 2.0);
    assert_eq!(metrics["taint_eviction_controller_pod_deletion_duration_seconds_count"], 2.0);
    assert_eq!(metrics["taint_eviction_controller_pod_deletion_duration_seconds_bucket{le=\"+Inf\"}"], 2.0);
    assert_eq!(metrics["taint_evict_scheduled_evictions"], 0.0);

    // A clean stop gives the lease up at once.
    let (summary, code) = b.interrupt();
    assert_eq!((code, summary["deleted"].as_u64()), (0, Some(2)), "{summary}");
    let lease = server.object("Lease", "taint-evict", "kubectl-taint-evict").expect("the lease");
    assert_eq!(lease["spec"].get("holderIdentity"), None, "released: {lease}");
    assert_eq!(lease["spec"]["leaseTransitions"], 1, "one change of holder: {lease}");

    // The in-cluster manifest grants every request both instances made, and nothing more.
    assert_eq!(missing(&server, "deploy/in-cluster.yaml"), Vec::<(String, String)>::new());
    // `create pods/eviction` is for `--mode evict` (the Deployment deletes): rbac.rs runs both modes.
    // The series of a repeated event is a PATCH: the flapping node of `run_cluster` stages it.
    // The DRA watches: `rbac.rs` stages a server that serves them.
    let elsewhere = [
        ("create", "/pods/eviction"),
        ("patch", "events.k8s.io/events"),
        ("list", "resource.k8s.io/resourceslices"),
        ("watch", "resource.k8s.io/resourceslices"),
        ("list", "resource.k8s.io/resourceclaims"),
        ("watch", "resource.k8s.io/resourceclaims"),
        ("list", "resource.k8s.io/devicetaintrules"),
        ("watch", "resource.k8s.io/devicetaintrules"),
    ];
    assert_eq!(unused(&server, "deploy/in-cluster.yaml", &elsewhere), Vec::<(String, String)>::new(), "nothing more");
}

#[test]
fn a_taken_metrics_port_is_one_line_and_exit_1() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let address = taken.local_addr().expect("bound").to_string();
    let output = command().args(["run", "--metrics-bind-address", &address]).output().expect("runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let first = stderr.lines().next().unwrap_or_default();
    assert!(first.starts_with(&format!("error: cannot listen on {address} (--metrics-bind-address): ")), "{stderr}");
    assert!(stderr.contains("hint: another process holds the port"), "{stderr}");
}

#[test]
fn leader_election_without_lease_permission_names_the_verb_and_resource() {
    let server = FakeApiServer::start(&scratch("in-cluster-lease-forbidden"));
    let denied = "leases.coordination.k8s.io \"kubectl-taint-evict\" is forbidden: User \"dev\" cannot get resource";
    server.fail(
        "GET",
        "/apis/coordination.k8s.io/v1/namespaces/default/leases/kubectl-taint-evict",
        Fault::Status(403, denied.into()),
    );
    let kubeconfig = server.kubeconfig().to_str().expect("UTF-8").to_owned();
    let output = command().args(["run", "--leader-elect", "--kubeconfig", &kubeconfig]).output().expect("runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let first = stderr.lines().next().unwrap_or_default();
    assert!(first.starts_with("error: "), "{stderr}");
    assert!(first.contains("get") && first.contains("leases.coordination.k8s.io in namespace \"default\""), "{stderr}");
}

#[test]
fn election_periods_that_cannot_work_are_usage_errors() {
    for (args, says) in [
        (["--leader-elect-lease-duration=5s", "--leader-elect-renew-deadline=10s"], "--leader-elect-lease-duration"),
        (["--leader-elect-renew-deadline=2s", "--leader-elect-retry-period=2s"], "--leader-elect-renew-deadline"),
    ] {
        let output = command().args(["run", "--leader-elect"]).args(args).output().expect("runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with(&format!("error: {says} must be longer")), "{args:?}: {stderr}");
    }
}

// ---------------------------------------------------------------------------------------------------
// The manifests
// ---------------------------------------------------------------------------------------------------

fn documents(path: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.split("\n---")
        .map(|document| serde_saphyr::from_str::<Value>(document).unwrap_or_else(|e| panic!("{path}: {e}")))
        .filter(|document| !document.is_null())
        .collect()
}

fn named<'a>(documents: &'a [Value], kind: &str, name: &str) -> Option<&'a Value> {
    documents.iter().find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
}

#[test]
fn every_manifest_parses_with_kind_and_name() {
    let mut files = 0;
    for entry in std::fs::read_dir(repo().join("deploy")).expect("deploy/") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let relative = format!("deploy/{}", path.file_name().and_then(|n| n.to_str()).expect("a name"));
            for document in documents(&relative) {
                assert!(document["apiVersion"].is_string(), "{relative}: {document}");
                assert!(document["kind"].is_string(), "{relative}: {document}");
                assert!(document["metadata"]["name"].is_string(), "{relative}: {document}");
            }
            files += 1;
        }
    }
    assert_eq!(files, 3, "rbac-plan, rbac-run and in-cluster");
}

#[test]
fn the_deployment_runs_the_elected_controller_safely_with_probes_on_its_metrics_port() {
    let documents = documents("deploy/in-cluster.yaml");
    let deployment = named(&documents, "Deployment", "taint-evict").expect("the Deployment");
    let namespace = deployment["metadata"]["namespace"].as_str().expect("namespaced");
    assert!(named(&documents, "Namespace", namespace).is_some(), "its namespace is created");
    assert_eq!(deployment["spec"]["replicas"], 2);
    let pod = &deployment["spec"]["template"]["spec"];
    let account = pod["serviceAccountName"].as_str().expect("a service account");
    let sa = named(&documents, "ServiceAccount", account).expect("the ServiceAccount");
    assert_eq!(sa["metadata"]["namespace"], namespace);
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(pod["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");
    let container = &pod["containers"][0];
    let security = &container["securityContext"];
    assert_eq!(security["allowPrivilegeEscalation"], false);
    assert_eq!(security["readOnlyRootFilesystem"], true);
    assert_eq!(security["capabilities"]["drop"][0], "ALL");
    assert!(
        container["resources"]["requests"]["memory"].is_string()
            && container["resources"]["requests"]["cpu"].is_string()
    );

    // The arguments are the binary's own: parsed by its command line.
    let args: Vec<&str> = container["args"].as_array().expect("args").iter().filter_map(Value::as_str).collect();
    let cli = Cli::try_parse_from(std::iter::once("kubectl-taint_evict").chain(args.iter().copied()))
        .unwrap_or_else(|e| panic!("{args:?}: {e}"));
    let Command::Run(run) = cli.command else { panic!("{args:?} is not `run`") };
    assert!(run.election.leader_elect);
    let metrics = run.metrics_bind_address.expect("metrics on");
    let port = &container["ports"][0];
    assert_eq!(port["containerPort"], metrics.port());
    for (probe, path) in [("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")] {
        assert_eq!(container[probe]["httpGet"]["path"], path);
        assert_eq!(container[probe]["httpGet"]["port"], port["name"]);
    }

    // The election's Role names the lease the binary uses by default, in the controller's namespace
    // (the binary's default namespace in a pod).
    let election = named(&documents, "Role", "taint-evict-leader-election").expect("the election's Role");
    assert_eq!(election["metadata"]["namespace"], namespace);
    let names: Vec<&Value> = election["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .flat_map(|r| r["resourceNames"].as_array())
        .flatten()
        .collect();
    assert_eq!(names, [&Value::from(run.election.leader_elect_lease_name.as_str())]);

    // Every binding points at a role of the file and at the service account.
    for binding in documents.iter().filter(|d| d["kind"] == "RoleBinding" || d["kind"] == "ClusterRoleBinding") {
        let role = &binding["roleRef"];
        let target = named(&documents, role["kind"].as_str().expect("kind"), role["name"].as_str().expect("name"));
        let target = target.unwrap_or_else(|| panic!("{binding}: no such role"));
        assert_eq!(target["metadata"]["namespace"], binding["metadata"]["namespace"], "{binding}");
        assert_eq!(binding["subjects"][0]["name"], account, "{binding}");
        assert_eq!(binding["subjects"][0]["namespace"], namespace, "{binding}");
    }
}

#[test]
fn the_dockerfile_builds_the_binary_cargo_defines_and_runs_it_as_the_deployment_does() {
    let dockerfile = std::fs::read_to_string(repo().join("Dockerfile")).expect("Dockerfile");
    let stages: Vec<&str> = dockerfile.lines().filter(|l| l.starts_with("FROM ")).collect();
    assert_eq!(stages.len(), 2, "multi-stage: {stages:?}");
    assert!(stages[1].contains("distroless/static") || stages[1].contains("scratch"), "{stages:?}");
    assert!(dockerfile.contains("cargo build --release --locked --bin kubectl-taint_evict"));
    assert!(dockerfile.contains("ENTRYPOINT [\"/kubectl-taint_evict\"]"));
    assert!(dockerfile.lines().any(|l| l.starts_with("USER 65532")), "non-root");
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).expect("Cargo.toml");
    assert!(manifest.contains("name = \"kubectl-taint_evict\""), "the binary's name");
    // CMD is valid for the binary as well.
    let cmd = dockerfile.lines().find_map(|l| l.strip_prefix("CMD ")).expect("CMD");
    let args: Vec<String> = serde_json::from_str(cmd).expect("CMD is a JSON array");
    Cli::try_parse_from(std::iter::once("kubectl-taint_evict".to_owned()).chain(args)).expect("CMD parses");
}
