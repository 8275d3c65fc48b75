//! Connecting as kubectl connects (docs/connecting.md): its connection flags over the kubeconfig, an exec plugin
//! that fails or is missing, and a request that can never be sent, against the real kube-apiserver.

use std::path::Path;

use super::{Identity, Options, node, pod, taint};
use crate::support::connect_proxy::ConnectProxy;
use crate::util::{Run, command, run_command, scratch};

const NOW: &str = "2099-01-01T00:00:00Z";

/// The value of `key:` in a kubeconfig the harness wrote (one cluster, one user).
fn field(kubeconfig: &Path, key: &str) -> String {
    let text = std::fs::read_to_string(kubeconfig).expect("the kubeconfig");
    let line = text.lines().map(str::trim).find_map(|line| line.strip_prefix(&format!("{key}: ")));
    line.unwrap_or_else(|| panic!("no {key} in {text}")).to_owned()
}

/// The binary with `args` and no kubeconfig but what `args` say.
fn bare(args: &[&str]) -> Run {
    run_command(command().args(args), None)
}

fn plane_with_bob() -> Option<super::ControlPlane> {
    let options = Options { identities: vec![Identity::user("bob")], ..Options::default() };
    let plane = super::ControlPlane::start("connect-flags", &options)?;
    let added = "2026-11-23T11:58:00Z".parse().expect("instant");
    plane.create(&[node("n1", &[], &[taint(added)]), pod("default", "victim", "n1", None)]);
    Some(plane)
}

#[test]
fn real_apiserver_server_and_token_flags_need_no_kubeconfig_and_override_it() {
    let Some(plane) = plane_with_bob() else { return };
    let admin = plane.kubeconfig();
    let (server, ca, token) = (field(admin, "server"), field(admin, "certificate-authority"), field(admin, "token"));
    let with_kubeconfig =
        run_command(command().args(["plan", "--now", NOW, "-o", "json", "--kubeconfig"]).arg(admin), None);
    assert_eq!(with_kubeconfig.code, 0, "{}", with_kubeconfig.stderr);

    // No kubeconfig at all: the flags say everything, as `kubectl -s URL --token T` does.
    let flags =
        bare(&["plan", "--now", NOW, "-o", "json", "-s", &server, "--token", &token, "--certificate-authority", &ca]);
    assert_eq!(flags.code, 0, "{}", flags.stderr);
    assert_eq!(flags.stdout, with_kubeconfig.stdout);

    // Over bob's kubeconfig (no RBAC): the admin token replaces bob's credentials.
    let bob = plane.kubeconfig_of("bob").to_str().expect("UTF-8").to_owned();
    let denied = bare(&["plan", "--now", NOW, "--kubeconfig", &bob]);
    assert_ne!(denied.code, 0);
    assert!(denied.stderr.starts_with("error: forbidden: cannot list nodes"), "{}", denied.stderr);
    let admin_token = bare(&["plan", "--now", NOW, "-o", "json", "--kubeconfig", &bob, "--token", &token]);
    assert_eq!(admin_token.code, 0, "{}", admin_token.stderr);
    assert_eq!(admin_token.stdout, with_kubeconfig.stdout);
}

#[test]
fn real_apiserver_flags_alone_connect_over_a_kubeconfig_without_a_context_and_tls_is_checked_as_kubectl_does() {
    let Some(plane) = plane_with_bob() else { return };
    let admin = plane.kubeconfig();
    let (server, ca, token) = (field(admin, "server"), field(admin, "certificate-authority"), field(admin, "token"));
    let expected = bare(&["plan", "--now", NOW, "-o", "json", "--kubeconfig", admin.to_str().expect("UTF-8")]);
    assert_eq!(expected.code, 0, "{}", expected.stderr);

    // A kubeconfig with no context (as `kubectl config view` of a fresh one), in a KUBECONFIG list with
    // a file that does not exist: the flags make the connection.
    let empty = scratch("connect-no-context").join("config");
    std::fs::write(&empty, "apiVersion: v1\nkind: Config\n").expect("write the kubeconfig");
    let list = format!("{}:/no/such/kubeconfig", empty.display());
    let flags = ["plan", "--now", NOW, "-o", "json", "--server", &server, "--token", &token];
    let with_ca =
        run_command(command().args(flags).args(["--certificate-authority", &ca]).env("KUBECONFIG", &list), None);
    assert_eq!(with_ca.code, 0, "{}", with_ca.stderr);
    assert_eq!(with_ca.stdout, expected.stdout);
    let insecure = run_command(command().args(flags).arg("--insecure-skip-tls-verify").env("KUBECONFIG", &list), None);
    assert_eq!(insecure.code, 0, "{}", insecure.stderr);
    assert_eq!(insecure.stdout, expected.stdout);

    // Without a CA the server's certificate is not trusted: the hint names the flags that say whom to trust.
    let untrusted = bare(&flags);
    assert_eq!(untrusted.code, 1, "{}", untrusted.stderr);
    let mut lines = untrusted.stderr.lines();
    let first = lines.next().unwrap_or_default();
    assert!(first.starts_with(&format!("error: TLS handshake with {server} failed: ")), "{}", untrusted.stderr);
    let hint = lines.next().unwrap_or_default();
    assert!(
        hint.starts_with("hint: give the CA that signed the server's certificate with --certificate-authority PATH")
            && hint.contains("--insecure-skip-tls-verify"),
        "{}",
        untrusted.stderr
    );
}

#[test]
fn real_apiserver_user_and_as_flags_pick_the_identity_and_rbac_names_it() {
    let Some(plane) = plane_with_bob() else { return };
    let admin = plane.kubeconfig();
    let (server, ca) = (field(admin, "server"), field(admin, "certificate-authority"));
    let (admin_token, bob_token) = (field(admin, "token"), field(plane.kubeconfig_of("bob"), "token"));
    // One kubeconfig, two users; the context is the admin's.
    let both = scratch("connect-users").join("kubeconfig");
    std::fs::write(
        &both,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n    server: {server}\n    \
             certificate-authority: {ca}\ncontexts:\n- name: test\n  context:\n    cluster: test\n    user: admin\n\
             current-context: test\nusers:\n- name: admin\n  user:\n    token: {admin_token}\n- name: bob\n  user:\n    \
             token: {bob_token}\n"
        ),
    )
    .expect("write the kubeconfig");
    let both = both.to_str().expect("UTF-8");
    assert_eq!(bare(&["plan", "--now", NOW, "--kubeconfig", both]).code, 0);

    let as_bob = bare(&["plan", "--now", NOW, "--kubeconfig", both, "--user", "bob"]);
    assert_ne!(as_bob.code, 0);
    assert!(as_bob.stderr.contains("User \"bob\" cannot list resource \"nodes\""), "{}", as_bob.stderr);
    let nobody = bare(&["plan", "--now", NOW, "--kubeconfig", both, "--user", "carol"]);
    assert_eq!(nobody.code, 1);
    assert!(nobody.stderr.contains("no user \"carol\" in it (users: admin, bob)"), "{}", nobody.stderr);

    // The admin may impersonate: alice has no rights, alice in system:masters has them all.
    let as_alice = bare(&["plan", "--now", NOW, "--kubeconfig", both, "--as", "alice"]);
    assert_ne!(as_alice.code, 0);
    assert!(as_alice.stderr.contains("User \"alice\" cannot list resource \"nodes\""), "{}", as_alice.stderr);
    let master = bare(&["plan", "--now", NOW, "--kubeconfig", both, "--as", "alice", "--as-group", "system:masters"]);
    assert_eq!(master.code, 0, "{}", master.stderr);
}

#[test]
fn real_apiserver_a_failing_or_missing_exec_plugin_says_what_the_plugin_says() {
    let Some(plane) = plane_with_bob() else { return };
    let admin = plane.kubeconfig();
    let (server, ca) = (field(admin, "server"), field(admin, "certificate-authority"));
    let dir = scratch("connect-exec");
    let kubeconfig = |name: &str, exec: &str| {
        let path = dir.join(name);
        std::fs::write(
            &path,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n    server: {server}\n    \
                 certificate-authority: {ca}\ncontexts:\n- name: test\n  context:\n    cluster: test\n    user: sso\n\
                 current-context: test\nusers:\n- name: sso\n  user:\n    exec:\n      apiVersion: \
                 client.authentication.k8s.io/v1\n{exec}"
            ),
        )
        .expect("write the kubeconfig");
        path.to_str().expect("UTF-8").to_owned()
    };
    let failing = kubeconfig(
        "failing",
        "      command: sh\n      args: [\"-c\", \"echo 'sso session expired; run: corp-login' >&2; exit 1\"]\n      \
         interactiveMode: Never\n",
    );
    let run = bare(&["plan", "--now", NOW, "--kubeconfig", &failing]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("the exec plugin failed (exit status: 1): sso session expired; run: corp-login"),
        "{}",
        run.stderr
    );
    let missing = kubeconfig(
        "missing",
        "      command: corp-credentials\n      installHint: Install corp-credentials from the IT portal\n      \
         interactiveMode: Never\n",
    );
    let run = bare(&["plan", "--now", NOW, "--kubeconfig", &missing]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "the exec plugin \"corp-credentials\" is not installed: Install corp-credentials from the IT portal"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn real_apiserver_a_selector_too_long_for_a_url_ends_plan_run_and_plan_watch_with_one_line() {
    let Some(plane) = plane_with_bob() else { return };
    let kubeconfig = plane.kubeconfig().to_str().expect("UTF-8").to_owned();
    // 85 KB of terms: its URL would pass HTTP's 64 KiB.
    let selector: Vec<String> = (0..5000).map(|i| format!("key-{i:05}=value")).collect();
    let selector = selector.join(",");
    for args in [&["plan"][..], &["run", "-o", "json"][..], &["plan", "-w"][..]] {
        let run = run_command(
            command().args(args).args(["-l", &selector, "--kubeconfig", &kubeconfig, "--request-timeout", "10s"]),
            None,
        );
        let first: String = run.stderr.lines().next().unwrap_or_default().chars().take(300).collect();
        assert_eq!(run.code, 1, "{args:?}: {first}");
        assert_eq!(first, "error: cannot list nodes: its URL would be longer than HTTP allows (64 KiB)", "{args:?}");
        assert!(!run.stderr.contains("panicked"), "{args:?}");
    }
}

#[test]
fn real_apiserver_proxy_url_and_https_proxy_reach_the_server_through_a_connect_or_socks5_proxy() {
    let Some(plane) = plane_with_bob() else { return };
    let proxy = ConnectProxy::start();
    let admin = plane.kubeconfig();
    let (server, ca, token) = (field(admin, "server"), field(admin, "certificate-authority"), field(admin, "token"));
    let dir = scratch("connect-proxy");
    let direct = run_command(without_proxies(command().args(["plan", "--now", NOW, "--kubeconfig"]).arg(admin)), None);
    assert_eq!(direct.code, 0, "{}", direct.stderr);
    assert_eq!(proxy.tunnels(), 0);

    // The kubeconfig's proxy-url, HTTP CONNECT and SOCKS5.
    let mut after_url = 0;
    for url in [proxy.url(), proxy.socks5_url()] {
        let proxied = dir.join(url.split(':').next().expect("a scheme"));
        std::fs::write(
            &proxied,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n    server: {server}\n    \
                 certificate-authority: {ca}\n    proxy-url: {url}\ncontexts:\n- name: test\n  context:\n    \
                 cluster: test\n    user: admin\ncurrent-context: test\nusers:\n- name: admin\n  user:\n    \
                 token: {token}\n"
            ),
        )
        .expect("write the kubeconfig");
        let through =
            run_command(without_proxies(command().args(["plan", "--now", NOW, "--kubeconfig"]).arg(&proxied)), None);
        assert_eq!(through.code, 0, "{url}: {}", through.stderr);
        assert_eq!(through.stdout, direct.stdout, "{url}");
        assert!(proxy.tunnels() > after_url, "the kubeconfig's proxy-url {url} was not used");
        after_url = proxy.tunnels();
    }

    // HTTPS_PROXY as kubectl reads it, and NO_PROXY over it.
    let mut env = command();
    without_proxies(env.args(["plan", "--now", NOW, "--kubeconfig"]).arg(admin)).env("HTTPS_PROXY", proxy.url());
    let via_env = run_command(&mut env, None);
    assert_eq!(via_env.code, 0, "{}", via_env.stderr);
    assert!(proxy.tunnels() > after_url, "HTTPS_PROXY was not used");
    let before = proxy.tunnels();
    let mut env = command();
    without_proxies(env.args(["plan", "--now", NOW, "--kubeconfig"]).arg(admin))
        .env("HTTPS_PROXY", proxy.url())
        .env("NO_PROXY", "127.0.0.1");
    let excluded = run_command(&mut env, None);
    assert_eq!(excluded.code, 0, "{}", excluded.stderr);
    assert_eq!(proxy.tunnels(), before, "NO_PROXY was not honoured");
}

/// The command without the machine's proxy settings.
fn without_proxies(command: &mut std::process::Command) -> &mut std::process::Command {
    for name in ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"] {
        command.env_remove(name);
    }
    command
}
