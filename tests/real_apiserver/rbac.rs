//! Under the real RBAC authorizer, each command succeeds as an identity bound by exactly the
//! manifest in `deploy/` (applied with kubectl), and fails with the one-line message naming the verb
//! and resource once a rule it needs is removed.

use super::{ControlPlane, Identity, Options, node, pod};
use crate::control_plane;
use crate::real_apiserver::run::{add_taint, deleted, server_pod};
use crate::support::running::Running;
use crate::util::{Run, command, repo, run_command};

fn as_user(plane: &ControlPlane, user: &str, args: &[&str]) -> Run {
    run_command(command().args(args).arg("--kubeconfig").arg(plane.kubeconfig_of(user)), None)
}

fn apply(plane: &ControlPlane, manifest: &str) {
    let path = repo().join(manifest);
    plane.kubectl_ok(&["apply", "-f", path.to_str().expect("UTF-8 path")], None);
}

/// Removes the rule at `index` of a ClusterRole.
fn remove_rule(plane: &ControlPlane, role: &str, index: usize) {
    let patch = format!(r#"[{{"op":"remove","path":"/rules/{index}"}}]"#);
    plane.kubectl_ok(&["patch", "clusterrole", role, "--type=json", "-p", &patch], None);
}

/// Waits until the authorizer has seen a change of `user`'s grants (`kubectl auth can-i`).
fn wait_can_i(plane: &ControlPlane, user: &str, verb: &str, resource: &str, expected: bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let output = plane.kubectl(&["auth", "can-i", verb, resource, "-A", "--as", user], None);
        if output.status.success() == expected {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "can-i {verb} {resource} as {user} stays {}", !expected);
        std::thread::park_timeout(std::time::Duration::from_millis(50));
    }
}

/// As [`wait_can_i`], in one namespace.
fn wait_can_i_in(plane: &ControlPlane, user: &str, verb: &str, resource: &str, namespace: &str, expected: bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let output = plane.kubectl(&["auth", "can-i", verb, resource, "-n", namespace, "--as", user], None);
        if output.status.success() == expected {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "can-i {verb} {resource} -n {namespace} as {user} stays {}",
            !expected
        );
        std::thread::park_timeout(std::time::Duration::from_millis(50));
    }
}

/// Waits until the authorizer lets `user` create `pods/eviction` in `default`, or no longer does.
fn wait_can_evict(plane: &ControlPlane, user: &str, expected: bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let args = ["auth", "can-i", "create", "pods", "--subresource=eviction", "-n", "default", "--as", user];
    while plane.kubectl(&args, None).status.success() != expected {
        assert!(std::time::Instant::now() < deadline, "can-i create pods/eviction as {user} stays {}", !expected);
        std::thread::park_timeout(std::time::Duration::from_millis(50));
    }
}

fn cluster(plane: &ControlPlane) {
    plane.create(&[
        node("n1", &[], &[]),
        pod("default", "victim", "n1", None),
        pod("default", "patient", "n1", Some(Some(3600))),
    ]);
    add_taint(plane, "n1");
}

#[test]
fn real_apiserver_plan_and_explain_work_with_exactly_rbac_plan_and_name_a_missing_rule() {
    let options = Options { identities: vec![Identity::user("alice")], ..Options::default() };
    let plane = control_plane!("rbac-plan", &options);
    cluster(&plane);
    apply(&plane, "deploy/rbac-plan.yaml");
    plane.kubectl_ok(
        &["create", "clusterrolebinding", "plan-alice", "--clusterrole=taint-evict-plan", "--user=alice"],
        None,
    );
    for namespace in ["kube-system", "kube-node-lease"] {
        plane.kubectl_ok(
            &["-n", namespace, "create", "rolebinding", "plan-alice", "--role=taint-evict-plan", "--user=alice"],
            None,
        );
    }
    wait_can_i(&plane, "alice", "list", "pods", true);
    wait_can_i_in(&plane, "alice", "list", "leases", "kube-node-lease", true);

    // An instant after every object was created: one before them is warned about.
    let now = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1)).round(jiff::Unit::Second);
    let now = now.expect("round").to_string();
    let now = now.as_str();
    for args in [&["plan", "--now", now, "-o", "json"][..], &["plan", "n1", "--now", now, "-o", "json"][..]] {
        let as_alice = as_user(&plane, "alice", args);
        assert_eq!(as_alice.code, 0, "{args:?}: {}", as_alice.stderr);
        assert_eq!(as_alice.stderr, "", "{args:?}: every read is granted");
        let as_admin = run_command(command().args(args).arg("--kubeconfig").arg(plane.kubeconfig()), None);
        assert_eq!(as_alice.stdout, as_admin.stdout, "{args:?}");
    }
    let explain = as_user(&plane, "alice", &["explain", "-n", "default", "patient", "--now", now]);
    assert_eq!(explain.code, 0, "{}", explain.stderr);
    assert!(explain.stdout.contains("patient"), "{}", explain.stdout);

    // Without the node Leases: plan still answers, and says on stderr what it lacks.
    plane.kubectl_ok(&["-n", "kube-node-lease", "delete", "rolebinding", "plan-alice"], None);
    wait_can_i_in(&plane, "alice", "list", "leases", "kube-node-lease", false);
    let degraded = as_user(&plane, "alice", &["plan", "n1", "--now", now]);
    assert_eq!(degraded.code, 0, "{}", degraded.stderr);
    assert!(
        degraded.stderr.starts_with("warning: cannot list leases in namespace \"kube-node-lease\" (forbidden)"),
        "{}",
        degraded.stderr
    );

    // Without the pods rule: plan cannot list them, and says so in one line.
    remove_rule(&plane, "taint-evict-plan", 1);
    wait_can_i(&plane, "alice", "list", "pods", false);
    let denied = as_user(&plane, "alice", &["plan", "n1", "--now", now]);
    assert_ne!(denied.code, 0);
    let first = denied.stderr.lines().next().unwrap_or_default();
    assert!(first.starts_with("error: forbidden: cannot list pods"), "{}", denied.stderr);
    let explain = as_user(&plane, "alice", &["explain", "-n", "default", "patient", "--now", now]);
    assert!(explain.stderr.starts_with("error: forbidden: cannot get pods"), "{}", explain.stderr);
}

#[test]
fn real_apiserver_run_works_with_exactly_rbac_run_and_names_a_missing_rule() {
    let options = Options { identities: vec![Identity::user("bob")], ..Options::default() };
    let plane = control_plane!("rbac-run", &options);
    apply(&plane, "deploy/rbac-run.yaml");
    plane.kubectl_ok(&["create", "clusterrolebinding", "run-bob", "--clusterrole=taint-evict-run", "--user=bob"], None);
    for namespace in ["kube-system", "kube-node-lease", "default"] {
        plane.kubectl_ok(
            &["-n", namespace, "create", "rolebinding", "run-bob", "--role=taint-evict-run", "--user=bob"],
            None,
        );
    }
    wait_can_i(&plane, "bob", "delete", "pods", true);
    wait_can_i_in(&plane, "bob", "watch", "leases", "kube-node-lease", true);
    plane.create(&[node("n1", &[], &[]), pod("default", "victim", "n1", None)]);

    let mut run = Running::start_with(plane.kubeconfig_of("bob"), &[]);
    add_taint(&plane, "n1");
    run.expect("victim deleted", |l| deleted(l, "victim"));
    let (_, code, lines) = run.interrupt_and_read();
    assert_eq!(code, 0);
    assert!(!lines.iter().any(|l| l["type"] == "failed"), "{lines:#?}");
    assert!(!lines.iter().any(|l| l["type"] == "warning"), "every read is granted: {lines:#?}");
    let victim = server_pod(&plane, "default", "victim").expect("terminating");
    assert!(
        victim["status"]["conditions"].as_array().expect("conditions").iter().any(|c| c["type"] == "DisruptionTarget")
    );
    let events = plane.get(&["events", "-n", "default"]);
    assert!(events["items"].as_array().expect("items").iter().any(|e| e["reason"] == "TaintManagerEviction"));

    // `--mode evict` works with the same manifest (create on pods/eviction) ...
    plane.create(&[pod("default", "evictee", "n1", None)]);
    let mut run = Running::start_with(plane.kubeconfig_of("bob"), &["--mode", "evict"]);
    run.expect("evictee evicted", |l| deleted(l, "evictee"));
    let (_, code, lines) = run.interrupt_and_read();
    assert_eq!(code, 0);
    assert!(!lines.iter().any(|l| l["type"] == "failed"), "{lines:#?}");
    // ... and without that rule each attempt names what is missing.
    remove_rule(&plane, "taint-evict-run", 3);
    wait_can_evict(&plane, "bob", false);
    plane.create(&[pod("default", "kept", "n1", None)]);
    let mut run = Running::start_with(plane.kubeconfig_of("bob"), &["--mode", "evict"]);
    let failed = run.expect("the refusal", |l| l["type"] == "failed" && l["pod"]["name"] == "kept");
    let message = failed["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("create pods/eviction forbidden:"), "{failed}");
    assert!(message.ends_with("(run --mode evict needs create on pods/eviction)"), "{failed}");
    let (_, code) = run.interrupt();
    assert_eq!(code, 0);

    // Without the nodes rule, run cannot start its node watch.
    remove_rule(&plane, "taint-evict-run", 0);
    wait_can_i(&plane, "bob", "list", "nodes", false);
    let denied = as_user(&plane, "bob", &["run", "-o", "json"]);
    assert_ne!(denied.code, 0);
    assert!(denied.stderr.starts_with("error: forbidden: cannot list nodes"), "{}", denied.stderr);
}

#[test]
fn real_apiserver_run_leader_elect_works_as_the_in_cluster_service_account() {
    let options =
        Options { identities: vec![Identity::service_account("taint-evict", "taint-evict")], ..Options::default() };
    let plane = control_plane!("rbac-in-cluster", &options);
    apply(&plane, "deploy/in-cluster.yaml");
    let user = "system:serviceaccount:taint-evict:taint-evict";
    wait_can_i(&plane, user, "delete", "pods", true);
    plane.create(&[node("n1", &[], &[]), pod("default", "victim", "n1", None)]);

    let mut run = Running::launch_with(
        plane.kubeconfig_of(user),
        &["-o", "json", "--leader-elect", "--leader-elect-namespace=taint-evict"],
    );
    run.expect("leadership", |l| l["type"] == "leadership" && l["state"] == "leading");
    add_taint(&plane, "n1");
    run.expect("victim deleted", |l| deleted(l, "victim"));
    let (_, code, lines) = run.interrupt_and_read();
    assert_eq!(code, 0);
    assert!(!lines.iter().any(|l| l["type"] == "failed"), "{lines:#?}");
    let lease = plane.get(&["lease", "-n", "taint-evict", "kubectl-taint-evict"]);
    assert!(lease["spec"]["holderIdentity"].is_string() || lease["spec"]["holderIdentity"].is_null(), "{lease}");
}

/// Waits (up to 60 s) for `child` to exit; returns its code and what it wrote on stderr.
fn exited(mut child: std::process::Child) -> (i32, String) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            let mut stderr = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut stderr).expect("read");
            return (status.code().unwrap_or(-1), stderr);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("still running 60 s after its grant was revoked");
        }
        std::thread::park_timeout(std::time::Duration::from_millis(100));
    }
}

#[test]
fn real_apiserver_run_and_plan_watch_end_with_one_line_when_their_grant_is_revoked() {
    // Fixed: a watch refused for good (403) was retried forever, each time reported as a
    // reconnection.
    let options = Options { identities: vec![Identity::user("bob")], ..Options::default() };
    let mut plane = control_plane!("rbac-revoked", &options);
    apply(&plane, "deploy/rbac-run.yaml");
    plane.kubectl_ok(&["create", "clusterrolebinding", "run-bob", "--clusterrole=taint-evict-run", "--user=bob"], None);
    wait_can_i(&plane, "bob", "watch", "nodes", true);
    plane.create(&[node("n1", &[], &[])]);
    let kubeconfig = plane.kubeconfig_of("bob").to_str().expect("UTF-8").to_owned();
    let start = |args: &[&str]| {
        let mut child = command()
            .args(args)
            .args(["--kubeconfig", &kubeconfig])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .stdin(std::process::Stdio::null())
            .spawn()
            .expect("starts");
        // Its first line: it is under way. The pipe stays open: a reader gone ends `plan -w`.
        let mut out = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        std::io::BufRead::read_line(&mut out, &mut line).expect("a line");
        assert!(line.contains("\"type\":"), "{line}");
        (child, out)
    };
    let run = start(&["run", "-o", "json"]);
    let watch = start(&["plan", "-w"]);
    remove_rule(&plane, "taint-evict-run", 0);
    wait_can_i(&plane, "bob", "list", "nodes", false);
    // The watches' connections end; their next list is refused.
    plane.restart_apiserver();
    for (what, (child, _out)) in [("run", run), ("plan -w", watch)] {
        let (code, stderr) = exited(child);
        assert_eq!(code, 1, "{what}: {stderr}");
        let last = stderr.lines().rfind(|l| l.starts_with("error: ")).unwrap_or_default();
        // The node or the pod watch, resuming from its last version or listing anew: each is refused.
        assert!(last.starts_with("error: forbidden: cannot "), "{what}: {stderr}");
        assert!(last.contains("User \"bob\" cannot "), "{what}: {stderr}");
    }
}
