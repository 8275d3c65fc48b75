//! `run` as an in-cluster controller: two processes elect a leader on a Lease in the fake API server,
//! one deletes, the other takes over when the leader dies; metrics and probes over real HTTP; the
//! manifests in `deploy/` parse, fit the binary, and grant exactly what it uses.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::Value;
use taint_evict::cli::{Cli, Command};

use crate::fake_api::rbac::{missing, unused};
use crate::fake_api::run_cluster::{deletes, node, pod, taint};
use crate::support::running::{Running, WAIT};
use crate::util::{command, repo, scratch};
use taint_evict_test_support::fake_apiserver::{FakeApiServer, Fault};

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

    // A countdown starts when the taint is seen, not at its `timeAdded` (whole seconds, which may be
    // rounded up past the instant it is added at).
    let tainted = jiff::Timestamp::now();
    server.add(node("n1", &[taint(tainted.round(jiff::Unit::Second).expect("round"))]));
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

    // The new term continues the countdowns b followed while a led (from when b saw the taint, as a
    // controller counts): soon's deadline (+4 s) passed during the failover, later's (+12 s) is kept,
    // not restarted at the takeover.
    b.expect("b deletes soon", |l| l["type"] == "deleted" && l["pod"]["name"] == "soon");
    let later = b.expect("b deletes later", |l| l["type"] == "deleted" && l["pod"]["name"] == "later");
    // b's clock stays at the control plane's earliest possible time (some 20 ms wide once probed):
    // the countdown starts when b saw the taint, a little after it was added, not at the takeover.
    let from_taint = timestamp(&later["evictAt"]).duration_since(tainted) - jiff::SignedDuration::from_secs(12);
    let slack = jiff::SignedDuration::from_millis(100);
    assert!(from_taint >= -slack && from_taint < jiff::SignedDuration::from_secs(1), "{later} ({from_taint:#})");
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
        // At start, a pod counting down and an edited pod's owner: the real tier stages them.
        ("get", "/pods"),
        ("list", "apps/replicasets"),
        ("list", "apps/statefulsets"),
        ("list", "apps/daemonsets"),
        ("list", "batch/jobs"),
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

    // The image the release workflow pushes for this version (tests/repository/workflows.rs).
    let repository = env!("CARGO_PKG_REPOSITORY").strip_prefix("https://github.com/").expect("a GitHub repository");
    assert_eq!(container["image"], format!("ghcr.io/{repository}:{}", env!("CARGO_PKG_VERSION")));

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
    let config = taint_evict::config::RunConfig::new(&run).expect("valid");
    let lease = config.election.expect("elected").lease_name;
    assert_eq!(names, [&Value::from(lease.as_str())]);

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

// ---------------------------------------------------------------------------------------------------
// The image's build context: laid out as the Dockerfile's build stage copies it
// ---------------------------------------------------------------------------------------------------

/// The instructions of a Dockerfile as `(INSTRUCTION, arguments)`: comment and empty lines dropped (within
/// a continued instruction too), a line ending in `\` joined to the next.
fn instructions(dockerfile: &str) -> Vec<(String, String)> {
    let mut instructions = Vec::new();
    let mut pending = String::new();
    for line in dockerfile.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(part) = line.strip_suffix('\\') {
            pending.push_str(part);
            pending.push(' ');
            continue;
        }
        pending.push_str(line);
        let (word, arguments) = pending.split_once(char::is_whitespace).unwrap_or((&pending, ""));
        instructions.push((word.to_uppercase(), arguments.trim().to_owned()));
        pending.clear();
    }
    instructions
}

/// `path`'s components, `.` and empty ones dropped and `..` taken back; `None` when it leaves its root.
fn components(path: &str) -> Option<Vec<String>> {
    let mut kept: Vec<String> = Vec::new();
    for component in path.split('/') {
        match component {
            "" | "." => {}
            ".." => {
                kept.pop()?;
            }
            name => kept.push(name.to_owned()),
        }
    }
    Some(kept)
}

/// One `COPY` from the build context: its sources, relative to the context, and its destination,
/// relative to the image's root (a directory when it ends in `/` or takes several sources).
#[derive(Clone, Debug)]
struct ContextCopy {
    sources: Vec<String>,
    destination: String,
    into_directory: bool,
}

/// The build stage's (the first `FROM`'s) `COPY`s from the context, and its `WORKDIR` (where its `RUN`
/// runs) relative to the image's root.
fn build_stage(dockerfile: &str) -> (Vec<ContextCopy>, String) {
    let mut workdir: Vec<String> = Vec::new();
    let mut copies = Vec::new();
    let mut stages = 0;
    // Docker's rules: a relative path is the working directory's, an absolute one the image's.
    let resolve = |workdir: &[String], path: &str| {
        let joined = if path.starts_with('/') { path.to_owned() } else { format!("{}/{path}", workdir.join("/")) };
        components(&joined).unwrap_or_else(|| panic!("{path} leaves the image's root"))
    };
    for (instruction, arguments) in instructions(dockerfile) {
        match instruction.as_str() {
            "FROM" if stages == 1 => break,
            "FROM" => stages += 1,
            "WORKDIR" => workdir = resolve(&workdir, &arguments),
            "ADD" => panic!("ADD {arguments}: the build stage's files are read from its COPYs only"),
            "COPY" => {
                let mut rest = arguments.as_str();
                let mut from_elsewhere = false;
                while let Some(flag) = rest.strip_prefix("--") {
                    let (flag, after) = flag.split_once(char::is_whitespace).unwrap_or((flag, ""));
                    let known = ["from=", "chown=", "chmod=", "link"].iter().any(|known| flag.starts_with(known));
                    assert!(known, "COPY --{flag}: a flag not read here");
                    from_elsewhere |= flag.starts_with("from=");
                    rest = after.trim_start();
                }
                // `--from` copies from another stage or image, not from the context.
                if from_elsewhere {
                    continue;
                }
                let words: Vec<String> = if rest.starts_with('[') {
                    serde_json::from_str(rest).unwrap_or_else(|e| panic!("COPY {rest}: {e}"))
                } else {
                    rest.split_whitespace().map(str::to_owned).collect()
                };
                let Some((destination, sources)) = words.split_last().filter(|(_, sources)| !sources.is_empty()) else {
                    panic!("COPY {arguments}: no source or no destination")
                };
                let into_directory = destination.ends_with('/') || sources.len() > 1;
                assert!(
                    destination.ends_with('/') || sources.len() == 1,
                    "COPY {arguments}: several sources need a destination ending in / (Docker refuses it)"
                );
                for source in sources {
                    assert!(!source.contains(['*', '?', '[']), "COPY {source}: wildcards are not read here");
                }
                copies.push(ContextCopy {
                    sources: sources.to_vec(),
                    destination: resolve(&workdir, destination).join("/"),
                    into_directory,
                });
            }
            _ => {}
        }
    }
    (copies, workdir.join("/"))
}

/// `.dockerignore` as Docker reads it: each rule is a path pattern relative to the context (`*` and `?`
/// within a component, `**` for any components; `!` takes back what an earlier rule left out), and the
/// last rule matching a path or one of its parent directories decides.
struct Ignore(Vec<(bool, Vec<String>)>);

impl Ignore {
    fn read(text: &str) -> Ignore {
        let rules = text.lines().map(str::trim).filter(|line| !line.is_empty() && !line.starts_with('#'));
        Ignore(
            rules
                .map(|rule| {
                    let (left_out, pattern) = rule.strip_prefix('!').map_or((true, rule), |kept| (false, kept));
                    assert!(!pattern.contains(['[', '\\']), "{rule}: character classes are not read here");
                    (left_out, components(pattern).unwrap_or_else(|| panic!("{rule} leaves the context")))
                })
                .collect(),
        )
    }

    /// Whether `path`, relative to the context, is left out of it.
    fn ignores(&self, path: &str) -> bool {
        let path = components(path).expect("a path in the context");
        let mut ignored = false;
        for (left_out, pattern) in &self.0 {
            if (1..=path.len()).any(|n| Self::matches(pattern, &path[..n])) {
                ignored = *left_out;
            }
        }
        ignored
    }

    fn matches(pattern: &[String], path: &[String]) -> bool {
        match pattern.split_first() {
            None => path.is_empty(),
            Some((any, rest)) if any == "**" => (0..=path.len()).any(|skip| Self::matches(rest, &path[skip..])),
            Some((first, rest)) => path.split_first().is_some_and(|(name, path)| {
                Self::wildcard(first.as_bytes(), name.as_bytes()) && Self::matches(rest, path)
            }),
        }
    }

    fn wildcard(pattern: &[u8], name: &[u8]) -> bool {
        match pattern.split_first() {
            None => name.is_empty(),
            Some((b'*', rest)) => (0..=name.len()).any(|skip| Self::wildcard(rest, &name[skip..])),
            Some((b'?', rest)) => !name.is_empty() && Self::wildcard(rest, &name[1..]),
            Some((byte, rest)) => name.first() == Some(byte) && Self::wildcard(rest, &name[1..]),
        }
    }
}

/// Lays out `root`, the image's filesystem, as `copies` leave it from this repository's working tree
/// minus what `ignore` leaves out: a directory's content goes into the destination, a file into it
/// (a directory) or to it. An error is what Docker would fail on: a source not in the context.
fn lay_out(copies: &[ContextCopy], ignore: &Ignore, root: &Path) -> Result<(), String> {
    fn copy_tree(from: &Path, relative: &str, to: &Path, ignore: &Ignore) {
        std::fs::create_dir_all(to).expect("a directory in the layout");
        for entry in std::fs::read_dir(from).expect("a directory of the context") {
            let entry = entry.expect("an entry");
            let name = entry.file_name().into_string().expect("a UTF-8 name");
            let relative = format!("{relative}/{name}");
            if ignore.ignores(&relative) {
                continue;
            }
            if entry.path().is_dir() {
                copy_tree(&entry.path(), &relative, &to.join(&name), ignore);
            } else {
                std::fs::copy(entry.path(), to.join(&name)).expect("a file copied");
            }
        }
    }
    for copy in copies {
        let destination = root.join(&copy.destination);
        for source in &copy.sources {
            let relative = components(source).ok_or_else(|| format!("COPY {source}: outside the context"))?.join("/");
            let from = repo().join(&relative);
            if !from.exists() || ignore.ignores(&relative) {
                return Err(format!("COPY {source}: not in the build context"));
            }
            if from.is_dir() {
                copy_tree(&from, &relative, &destination, ignore);
            } else {
                let to = match from.file_name() {
                    Some(name) if copy.into_directory => destination.join(name),
                    _ => destination.clone(),
                };
                std::fs::create_dir_all(to.parent().expect("a parent")).expect("a directory in the layout");
                std::fs::copy(&from, &to).expect("a file copied");
            }
        }
    }
    Ok(())
}

/// The lines of a Rust source outside its `#[cfg(test)] mod … { … }` blocks (closed, in this project's
/// layout, by a `}` as indented as their `mod`).
fn outside_tests(source: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut closing: Option<String> = None;
    let mut for_tests = false;
    for line in source.lines() {
        if let Some(close) = &closing {
            if line == close {
                closing = None;
            }
            continue;
        }
        let trimmed = line.trim_start();
        if for_tests && trimmed.ends_with('{') && trimmed.split_whitespace().any(|word| word == "mod") {
            closing = Some(format!("{}}}", &line[..line.len() - trimmed.len()]));
            continue;
        }
        for_tests = if trimmed.starts_with("#[") { for_tests || trimmed == "#[cfg(test)]" } else { false };
        lines.push(line);
    }
    lines
}

/// `files` below `directory`, recursively.
fn files_below(directory: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(directory).unwrap_or_else(|e| panic!("{}: {e}", directory.display())) {
        let path = entry.expect("an entry").path();
        if path.is_dir() { files_below(&path, files) } else { files.push(path) }
    }
}

/// `cargo` run in `directory`: its stdout, or its stderr as the error.
fn cargo(directory: &Path, args: &[&str]) -> Result<String, String> {
    let output =
        std::process::Command::new(env!("CARGO")).args(args).current_dir(directory).output().expect("cargo runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if output.status.success() { Ok(stdout) } else { Err(format!("cargo {}: {}", args.join(" "), stderr.trim())) }
}

/// Whether the laid-out `workdir` has what `cargo build --release --locked --bin kubectl-taint_evict`
/// reads, checked without compiling: every manifest loads as a build loads it (`cargo fetch`: the
/// workspace's members, the lock file, each declared target's file), each compiled target's module
/// tree (the libraries' and binaries' of the workspace) is there whole, and so is each file those
/// sources include outside their tests. (`cargo metadata` alone loads a manifest whose declared benches
/// are missing: it leaves them out, where `cargo build` stops.)
fn builds(workdir: &Path) -> Result<(), String> {
    let host = cargo(workdir, &["-vV"])?;
    let host = host.lines().find_map(|line| line.strip_prefix("host: ")).expect("cargo -vV names the host");
    cargo(workdir, &["fetch", "--locked", "--offline", "--target", host])?;
    let metadata = cargo(workdir, &["metadata", "--locked", "--offline", "--no-deps", "--format-version", "1"])?;
    let metadata: Value = serde_json::from_str(&metadata).expect("cargo metadata's JSON");
    let workdir = workdir.canonicalize().expect("the working directory");
    let compiled = ["lib", "bin", "proc-macro", "custom-build"];
    for package in metadata["packages"].as_array().expect("packages") {
        for target in package["targets"].as_array().expect("targets") {
            let kinds = target["kind"].as_array().expect("kinds");
            if !kinds.iter().any(|kind| compiled.iter().any(|c| kind == c)) {
                continue;
            }
            let root = Path::new(target["src_path"].as_str().expect("src_path"));
            let root = root.strip_prefix(&workdir).map_err(|_| format!("{}: outside the build", root.display()))?;
            let mut sources = Vec::new();
            files_below(&repo().join(root.parent().expect("a directory")), &mut sources);
            for source in sources.iter().filter(|path| path.extension().is_some_and(|e| e == "rs")) {
                let relative = source.strip_prefix(repo()).expect("in the repository");
                if !workdir.join(relative).is_file() {
                    return Err(format!("{}: not in the image", relative.display()));
                }
                let text = std::fs::read_to_string(source).expect("a source");
                for line in outside_tests(&text) {
                    for include in ["include_str!(\"", "include_bytes!(\"", "include!(\""] {
                        for (_, after) in line.match_indices(include).map(|(at, _)| line.split_at(at + include.len())) {
                            let included = after.split('"').next().expect("a path");
                            let directory = relative.parent().expect("a directory").to_str().expect("UTF-8");
                            let included = components(&format!("{directory}/{included}"))
                                .ok_or_else(|| format!("{}: {included} is outside the build", relative.display()))?
                                .join("/");
                            if !workdir.join(&included).is_file() {
                                return Err(format!(
                                    "{included} (included by {}): not in the image",
                                    relative.display()
                                ));
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

#[test]
fn the_image_builds_from_what_the_dockerfile_copies_and_from_nothing_less() {
    let dockerfile = std::fs::read_to_string(repo().join("Dockerfile")).expect("Dockerfile");
    let ignore = Ignore::read(&std::fs::read_to_string(repo().join(".dockerignore")).expect(".dockerignore"));
    // The context sent to the builder leaves out the build's output and the repository's history.
    for path in ["target", "target/release/kubectl-taint_evict", ".git/HEAD"] {
        assert!(ignore.ignores(path), ".dockerignore keeps {path} in the build context");
    }
    let (copies, workdir) = build_stage(&dockerfile);
    let build = |copies: &[ContextCopy]| -> Result<(), String> {
        let root = scratch("image-build-stage");
        lay_out(copies, &ignore, &root)?;
        builds(&root.join(&workdir))
    };
    if let Err(error) = build(&copies) {
        let copies: Vec<String> =
            copies.iter().map(|c| format!("COPY {} → /{}", c.sources.join(" "), c.destination)).collect();
        panic!("the build stage, laid out as {copies:?}, cannot build:\n{error}");
    }
    // Each source is needed: without it the build fails.
    for (at, copy) in copies.iter().enumerate() {
        for source in &copy.sources {
            let mut fewer = copies.clone();
            fewer[at].sources.retain(|s| s != source);
            assert!(build(&fewer).is_err(), "COPY {source} (to /{}): the build needs none of it", copy.destination);
        }
    }
}

#[test]
fn copies_and_ignored_paths_are_read_as_docker_reads_them() {
    let dockerfile = "# syntax=docker/dockerfile:1\nFROM rust AS build\nWORKDIR /src\nCOPY a.toml ./b.lock ./\n\
                      WORKDIR sub\nCOPY --chown=1:1 \\\n  # a comment\n  dir ../dir\nCOPY [\"x y\", \"/abs/\"]\n\
                      copy one ./renamed\nRUN true\nFROM scratch\nCOPY --from=build /src/out /out\nCOPY late /late\n";
    let (copies, workdir) = build_stage(dockerfile);
    assert_eq!(workdir, "src/sub");
    let read: Vec<(Vec<&str>, &str, bool)> = copies
        .iter()
        .map(|c| (c.sources.iter().map(String::as_str).collect(), c.destination.as_str(), c.into_directory))
        .collect();
    assert_eq!(
        read,
        [
            (vec!["a.toml", "./b.lock"], "src", true),
            (vec!["dir"], "src/dir", false),
            (vec!["x y"], "abs", true),
            (vec!["one"], "src/sub/renamed", false),
        ]
    );
    let ignore = Ignore::read("# the output\n**/target/\n/.git\n*.gz\n!keep.gz\ndocs/*.md\n");
    let ignored = |path: &str| ignore.ignores(path);
    assert!(ignored("target") && ignored("./target/release/x") && ignored("crates/engine/target/debug"));
    assert!(ignored(".git/HEAD") && ignored("dump.json.gz") && ignored("docs/in-cluster.md"));
    assert!(!ignored("keep.gz") && !ignored("data/dump.json.gz") && !ignored("docs/sub/page.md"));
    assert!(!ignored("src/target.rs") && !ignored("crates/engine/src/lib.rs"));
    let source = "fn a() {}\n#[cfg(test)]\n#[allow(x)]\nmod tests {\n    include_str!(\"t\");\n}\nfn b() {}\n";
    assert_eq!(outside_tests(source), ["fn a() {}", "#[cfg(test)]", "#[allow(x)]", "fn b() {}"]);
}
