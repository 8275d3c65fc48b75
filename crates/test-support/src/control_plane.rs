//! A real Kubernetes control plane for tests: etcd and kube-apiserver (and, on request,
//! kube-controller-manager with the node-lifecycle and taint-eviction controllers) started from the
//! upstream binaries on free loopback ports, in a temporary directory with their own CA and identities.
//!
//! The binaries come from `KUBEBUILDER_ASSETS` (a directory holding `etcd`, `kube-apiserver` and
//! optionally `kube-controller-manager`, as controller-runtime's envtest names it) or are unpacked once
//! from `../shared/envtest/*.xz` into `target/tmp/envtest-…` after their sums are checked. Where neither
//! exists, [`ControlPlane::start`] says so and returns `None`: the caller skips. With
//! `TAINT_EVICT_REQUIRE_REAL_APISERVER=1` (set by `.ci/run`) a missing binary fails the test instead.
//!
//! Every process started here dies with the test: `Drop` stops it, and each child also carries
//! `PR_SET_PDEATHSIG`, so a test killed outright (a timeout's SIGKILL) leaves nothing behind either.
//! Start-up costs about 2.5 s (etcd 0.4 s, kube-apiserver ready 2.1 s on the 2-core machine); nextest
//! runs each test in its own process, so each test gets its own control plane and shares nothing.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The admin identity's bearer token (group `system:masters`).
const ADMIN_TOKEN: &str = "admin-token";

/// How long the control plane may take to become ready.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// Where the binaries came from.
pub struct Assets {
    pub dir: PathBuf,
    pub origin: String,
}

/// The environment variable that turns "no binaries: skipped" into a failure.
pub const REQUIRE: &str = "TAINT_EVICT_REQUIRE_REAL_APISERVER";

/// The binaries, found or unpacked once per test process; `Err` says why there are none.
pub fn assets() -> Result<&'static Assets, String> {
    static ASSETS: OnceLock<Result<Assets, String>> = OnceLock::new();
    ASSETS.get_or_init(find_assets).as_ref().map_err(Clone::clone)
}

fn find_assets() -> Result<Assets, String> {
    if let Some(dir) = std::env::var_os("KUBEBUILDER_ASSETS").filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        for binary in ["etcd", "kube-apiserver"] {
            if !dir.join(binary).is_file() {
                return Err(format!("KUBEBUILDER_ASSETS={} has no {binary}", dir.display()));
            }
        }
        return Ok(Assets { origin: format!("KUBEBUILDER_ASSETS={}", dir.display()), dir });
    }
    let packed = repository().join("../shared/envtest");
    let sums_file = packed.join("SHA256SUMS");
    let sums = std::fs::read_to_string(&sums_file).map_err(|_| {
        format!(
            "no kube-apiserver/etcd binaries: set KUBEBUILDER_ASSETS to a directory holding them, or put the \
             envtest assets in {} (README: Tests against a real control plane)",
            packed.display()
        )
    })?;
    let expected: BTreeMap<String, String> = sums
        .lines()
        .filter_map(|line| line.split_once(char::is_whitespace))
        .map(|(sum, name)| (name.trim().trim_start_matches('*').to_owned(), sum.to_owned()))
        .collect();
    // One directory per set of sums, shared by every test process of this target directory.
    let key: String = expected.values().map(|s| &s[..8]).collect::<Vec<_>>().join("");
    let dir = target_tmp().join(format!("envtest-{key}"));
    let origin = format!("{} (unpacked into {})", packed.display(), dir.display());
    if dir.join("kube-apiserver").is_file() {
        return Ok(Assets { dir, origin });
    }
    let staging = dir.with_extension(format!("staging-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(|e| format!("{}: {e}", staging.display()))?;
    for (name, sum) in &expected {
        let target = staging.join(name);
        let file = std::fs::File::create(&target).map_err(|e| format!("{}: {e}", target.display()))?;
        let status = Command::new("xz")
            .arg("-dc")
            .arg(packed.join(format!("{name}.xz")))
            .stdout(file)
            .status()
            .map_err(|e| format!("xz (needed to unpack {name}): {e}"))?;
        if !status.success() {
            return Err(format!("xz could not unpack {name}.xz"));
        }
        let actual = sha256(&target)?;
        if &actual != sum {
            return Err(format!("{name}: sha256 {actual}, expected {sum} (SHA256SUMS)"));
        }
        std::fs::set_permissions(&target, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .map_err(|e| format!("{}: {e}", target.display()))?;
    }
    // Another test process may have won the race: then its directory is as good as ours.
    if std::fs::rename(&staging, &dir).is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    Ok(Assets { dir, origin })
}

/// The repository's root: this crate is its `crates/test-support`.
fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .expect("the crate is in the repository's crates/")
}

/// The `tmp/` of the target directory the running test or bench was built in (it runs as
/// `TARGET/PROFILE/deps/NAME`): the directory Cargo names `CARGO_TARGET_TMPDIR` to the tests' and
/// benches' own crates.
fn target_tmp() -> PathBuf {
    let executable = std::env::current_exe().expect("the running executable's path");
    let target = executable.ancestors().nth(3).expect("a test or bench runs from TARGET/PROFILE/deps/");
    target.join("tmp")
}

fn sha256(path: &Path) -> Result<String, String> {
    let output = Command::new("sha256sum").arg(path).output().map_err(|e| format!("sha256sum: {e}"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.split_whitespace().next().map(str::to_owned).ok_or_else(|| format!("sha256sum {}: no output", path.display()))
}

/// An identity the API server knows besides the admin: its user name and groups.
#[derive(Clone, Debug)]
pub struct Identity {
    pub user: String,
    pub groups: Vec<String>,
}

impl Identity {
    /// A plain user, in no group (RBAC grants it nothing until something is bound to it).
    pub fn user(name: &str) -> Self {
        Self { user: name.to_owned(), groups: Vec::new() }
    }

    /// The user a ServiceAccount's token authenticates as.
    pub fn service_account(namespace: &str, name: &str) -> Self {
        Self {
            user: format!("system:serviceaccount:{namespace}:{name}"),
            groups: vec!["system:serviceaccounts".to_owned(), format!("system:serviceaccounts:{namespace}")],
        }
    }
}

/// What to start.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Also run kube-controller-manager with `node-lifecycle-controller,taint-eviction-controller`.
    pub controller_manager: bool,
    /// Identities besides the admin, each with a kubeconfig of its own.
    pub identities: Vec<Identity>,
    /// More flags for kube-controller-manager (`--node-monitor-grace-period=10s`, …).
    pub controller_manager_args: Vec<String>,
    /// An audit policy: kube-apiserver then writes its audit log ([`ControlPlane::audit_log`]).
    pub audit_policy: Option<PathBuf>,
}

/// A running etcd + kube-apiserver (+ kube-controller-manager), stopped on drop.
pub struct ControlPlane {
    dir: PathBuf,
    binaries: PathBuf,
    etcd: Child,
    etcd_url: String,
    apiserver: Option<Child>,
    apiserver_port: u16,
    /// A second kube-apiserver over the same etcd (as behind a load balancer), when started.
    second: Option<Child>,
    controller_manager: Option<Child>,
    controller_manager_args: Vec<String>,
    audit_policy: Option<PathBuf>,
    kubeconfigs: BTreeMap<String, PathBuf>,
    heartbeats: Vec<(Arc<AtomicBool>, std::thread::JoinHandle<()>)>,
}

/// Prints why the real control plane is not there; fails instead when CI requires it.
fn skip(reason: &str) {
    if std::env::var_os(REQUIRE).is_some_and(|v| v == "1") {
        panic!("{REQUIRE}=1 but the real control plane cannot start: {reason}");
    }
    eprintln!("real_apiserver: SKIPPED, did not run: {reason}");
}

impl ControlPlane {
    /// Starts etcd and kube-apiserver (and what `options` asks for), or returns `None` after saying why
    /// the binaries are not there.
    pub fn start(name: &str, options: &Options) -> Option<Self> {
        let assets = match assets() {
            Ok(assets) => assets,
            Err(reason) => {
                skip(&reason);
                return None;
            }
        };
        let dir = std::env::temp_dir().join(format!("taint-evict-cp-{}-{name}", std::process::id()));
        let mut last = String::new();
        // A free port can be taken by another process between our probe and the server's bind: retry
        // (a failed attempt's processes and directory go with it).
        for _ in 0..3 {
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("a directory for the control plane");
            match Self::try_start(&dir, &assets.dir, options) {
                Ok(plane) => return Some(plane),
                Err(e) => last = e,
            }
        }
        panic!("the control plane did not start: {last}");
    }

    fn try_start(dir: &Path, binaries: &Path, options: &Options) -> Result<Self, String> {
        write_credentials(dir, &options.identities)?;
        let (client, peer, secure) = (free_port(), free_port(), free_port());
        let etcd_url = format!("http://127.0.0.1:{client}");
        let data = dir.join("etcd-data");
        let _ = std::fs::remove_dir_all(&data);
        let etcd = spawn(
            Command::new(binaries.join("etcd"))
                .arg("--data-dir")
                .arg(&data)
                .args(["--name", "test", "--listen-client-urls", &etcd_url, "--advertise-client-urls", &etcd_url])
                .args(["--listen-peer-urls", &format!("http://127.0.0.1:{peer}")])
                .args(["--initial-advertise-peer-urls", &format!("http://127.0.0.1:{peer}")])
                .args(["--initial-cluster", &format!("test=http://127.0.0.1:{peer}")])
                .args(["--log-level", "warn"]),
            &dir.join("etcd.log"),
        )?;
        let mut plane = Self {
            dir: dir.to_owned(),
            binaries: binaries.to_owned(),
            etcd,
            etcd_url,
            apiserver: None,
            apiserver_port: secure,
            second: None,
            controller_manager: None,
            controller_manager_args: options.controller_manager_args.clone(),
            audit_policy: options.audit_policy.clone(),
            kubeconfigs: BTreeMap::new(),
            heartbeats: Vec::new(),
        };
        plane.wait_for("etcd", |p| {
            http_get(p.etcd_port(), "/health").is_some_and(|(code, body)| code == 200 && body.contains("\"true\""))
        })?;
        plane.kubeconfigs.insert("admin".to_owned(), write_kubeconfig(dir, "admin", secure, ADMIN_TOKEN)?);
        for (index, identity) in options.identities.iter().enumerate() {
            let path = write_kubeconfig(dir, &identity.user, secure, &token(index))?;
            plane.kubeconfigs.insert(identity.user.clone(), path);
        }
        plane.start_apiserver()?;
        if options.controller_manager {
            plane.start_controller_manager()?;
        }
        Ok(plane)
    }

    fn etcd_port(&self) -> u16 {
        self.etcd_url.rsplit(':').next().and_then(|p| p.parse().ok()).expect("etcd's port")
    }

    /// Starts kube-apiserver on its port against the same etcd, and waits until `/readyz` says ok.
    fn start_apiserver(&mut self) -> Result<(), String> {
        let port = self.apiserver_port;
        let child = self.spawn_apiserver(port, "kube-apiserver.log")?;
        self.apiserver = Some(child);
        self.wait_for("kube-apiserver /readyz", move |_| readyz(port))
    }

    /// Starts a second kube-apiserver over the same etcd, on a port of its own (two API servers
    /// behind a load balancer, reached here one by one); returns the admin's kubeconfig for it.
    pub fn start_second_apiserver(&mut self) -> PathBuf {
        let port = free_port();
        let child = self.spawn_apiserver(port, "kube-apiserver-2.log").expect("a second kube-apiserver starts");
        self.second = Some(child);
        self.wait_for("the second kube-apiserver's /readyz", move |_| readyz(port)).expect("it gets ready");
        write_kubeconfig(&self.dir, "admin-2", port, ADMIN_TOKEN).expect("its kubeconfig")
    }

    /// Stops kube-controller-manager (its controllers act no more until it starts again).
    pub fn stop_controller_manager(&mut self) {
        if let Some(child) = self.controller_manager.take() {
            stop(child);
        }
    }

    /// Starts kube-controller-manager again, with the flags it was started with.
    pub fn start_controller_manager_again(&mut self) {
        self.start_controller_manager().expect("kube-controller-manager starts again");
    }

    /// Kills kube-apiserver at once (SIGKILL): its clients' connections break without a goodbye.
    pub fn kill_apiserver(&mut self) {
        if let Some(mut child) = self.apiserver.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts kube-apiserver again on its port (after [`ControlPlane::kill_apiserver`]).
    pub fn start_apiserver_again(&mut self) {
        self.start_apiserver().expect("kube-apiserver starts again");
    }

    /// The audit log kube-apiserver writes with [`Options::audit_policy`].
    pub fn audit_log(&self) -> PathBuf {
        self.dir.join("audit.log")
    }

    fn spawn_apiserver(&self, port: u16, log: &str) -> Result<Child, String> {
        let d = &self.dir;
        let path = |name: &str| d.join(name).to_str().expect("UTF-8 path").to_owned();
        let audit: Vec<String> = self
            .audit_policy
            .iter()
            .flat_map(|policy| {
                [
                    format!("--audit-policy-file={}", policy.display()),
                    format!("--audit-log-path={}", self.audit_log().display()),
                    "--audit-log-format=json".to_owned(),
                    "--audit-log-mode=blocking".to_owned(),
                ]
            })
            .collect();
        spawn(
            Command::new(self.binaries.join("kube-apiserver"))
                .args(audit)
                .arg(format!("--etcd-servers={}", self.etcd_url))
                .args(["--bind-address=127.0.0.1", &format!("--secure-port={port}")])
                .arg(format!("--tls-cert-file={}", path("server.crt")))
                .arg(format!("--tls-private-key-file={}", path("server.key")))
                .arg(format!("--client-ca-file={}", path("ca.crt")))
                .arg(format!("--token-auth-file={}", path("tokens.csv")))
                .arg("--authorization-mode=Node,RBAC")
                .arg("--service-account-issuer=https://kubernetes.default.svc")
                .arg(format!("--service-account-key-file={}", path("sa.pub")))
                .arg(format!("--service-account-signing-key-file={}", path("sa.key")))
                .args(["--service-cluster-ip-range=10.0.0.0/24", "--disable-admission-plugins=ServiceAccount"])
                .args(["--endpoint-reconciler-type=none", "--v=0"]),
            &self.dir.join(log),
        )
    }

    fn start_controller_manager(&mut self) -> Result<(), String> {
        let binary = self.binaries.join("kube-controller-manager");
        if !binary.is_file() {
            return Err(format!("{} is missing", binary.display()));
        }
        let kubeconfig = self.kubeconfig().to_str().expect("UTF-8 path").to_owned();
        let extra = self.controller_manager_args.clone();
        // `--controllers` adds to the list when given twice: a test's own list replaces this one.
        let controllers = (!extra.iter().any(|arg| arg.starts_with("--controllers=")))
            .then_some("--controllers=node-lifecycle-controller,taint-eviction-controller");
        let child = spawn(
            Command::new(binary)
                .arg(format!("--kubeconfig={kubeconfig}"))
                .args(controllers)
                .args(["--leader-elect=false", "--use-service-account-credentials=false", "--secure-port=0"])
                .arg("--v=2")
                .args(extra),
            &self.dir.join("kube-controller-manager.log"),
        )?;
        self.controller_manager = Some(child);
        Ok(())
    }

    /// Waits until `ready` holds, failing early when a process of ours has exited.
    fn wait_for(&mut self, what: &str, ready: impl Fn(&Self) -> bool) -> Result<(), String> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if ready(self) {
                return Ok(());
            }
            for (name, child) in [("etcd", Some(&mut self.etcd)), ("kube-apiserver", self.apiserver.as_mut())] {
                if let Some(Ok(Some(status))) = child.map(Child::try_wait) {
                    let log = std::fs::read_to_string(self.dir.join(format!("{name}.log"))).unwrap_or_default();
                    let tail: Vec<&str> = log.lines().rev().take(5).collect();
                    return Err(format!("{name} exited ({status}) before {what}: {tail:?}"));
                }
            }
            if Instant::now() > deadline {
                return Err(format!("{what} not ready within {START_TIMEOUT:?}"));
            }
            std::thread::park_timeout(Duration::from_millis(50));
        }
    }

    /// The admin's kubeconfig (context `test`, namespace `default`).
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfigs["admin"]
    }

    /// The kubeconfig of an identity given in [`Options::identities`].
    pub fn kubeconfig_of(&self, user: &str) -> &Path {
        self.kubeconfigs.get(user).unwrap_or_else(|| panic!("no identity {user} was asked for"))
    }

    /// The instants (nanoseconds since the epoch) the taint-eviction controller logged `"Deleting pod"`,
    /// by pod name, from klog's header time (UTC, today).
    pub fn controller_deletions(&self) -> BTreeMap<String, Vec<i128>> {
        let today = jiff::Timestamp::now().strftime("%Y-%m-%d").to_string();
        let mut deletions: BTreeMap<String, Vec<i128>> = BTreeMap::new();
        for line in self.log("kube-controller-manager").lines() {
            if !(line.contains("\"Deleting pod\"") && line.contains("taint-eviction-controller")) {
                continue;
            }
            // I1123 20:10:11.123456   4242 taint_eviction.go:…] "Deleting pod" … pod="default/t3"
            let Some(at) =
                line.get(6..21).and_then(|clock| format!("{today}T{clock}Z").parse::<jiff::Timestamp>().ok())
            else {
                continue;
            };
            let pod = line.split("pod=\"").nth(1).and_then(|rest| rest.split('"').next()).unwrap_or_default();
            let name = pod.rsplit('/').next().unwrap_or_default().to_owned();
            deletions.entry(name).or_default().push(at.as_nanosecond());
        }
        deletions
    }

    /// The processes this control plane runs now, by name.
    pub fn pids(&self) -> Vec<(&'static str, u32)> {
        let mut pids = vec![("etcd", self.etcd.id())];
        pids.extend(self.apiserver.as_ref().map(|c| ("kube-apiserver", c.id())));
        pids.extend(self.controller_manager.as_ref().map(|c| ("kube-controller-manager", c.id())));
        pids
    }

    /// The real `kubectl` as the admin.
    pub fn kubectl(&self, args: &[&str], stdin: Option<&[u8]>) -> Output {
        let mut command = Command::new("kubectl");
        command.arg("--kubeconfig").arg(self.kubeconfig()).args(args);
        command.env_remove("KUBECONFIG").stdout(Stdio::piped()).stderr(Stdio::piped());
        command.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
        let mut child = command.spawn().expect("kubectl starts");
        if let Some(bytes) = stdin {
            child.stdin.take().expect("stdin").write_all(bytes).expect("kubectl reads its input");
        }
        child.wait_with_output().expect("kubectl finishes")
    }

    /// `kubectl` that must succeed; its standard output.
    pub fn kubectl_ok(&self, args: &[&str], stdin: Option<&[u8]>) -> String {
        let output = self.kubectl(args, stdin);
        assert!(output.status.success(), "kubectl {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).expect("UTF-8 output")
    }

    /// Creates `objects` (JSON, any kind) with `kubectl create`, in batches.
    pub fn create(&self, objects: &[Value]) {
        for batch in objects.chunks(500) {
            let list = json!({"apiVersion": "v1", "kind": "List", "items": batch});
            self.kubectl_ok(&["create", "-f", "-", "-o", "name"], Some(list.to_string().as_bytes()));
        }
    }

    /// `kubectl get … -o json`, parsed.
    pub fn get(&self, args: &[&str]) -> Value {
        let mut all = vec!["get"];
        all.extend(args);
        all.extend(["-o", "json"]);
        serde_json::from_str(&self.kubectl_ok(&all, None)).expect("kubectl prints JSON")
    }

    /// Stops kube-apiserver and starts it again on the same port over the same etcd.
    pub fn restart_apiserver(&mut self) {
        self.stop_apiserver();
        self.start_apiserver().expect("kube-apiserver restarts");
    }

    /// Stops kube-apiserver (SIGTERM, then SIGKILL) and waits until it is gone.
    fn stop_apiserver(&mut self) {
        if let Some(child) = self.apiserver.take() {
            stop(child);
        }
    }

    /// What a process of this control plane (`etcd`, `kube-apiserver`, `kube-controller-manager`) has
    /// logged so far.
    pub fn log(&self, process: &str) -> String {
        std::fs::read_to_string(self.dir.join(format!("{process}.log"))).unwrap_or_default()
    }

    /// Compacts etcd's history up to its current revision: a watch resumed from before gets 410 Gone.
    pub fn compact_etcd(&self) -> i64 {
        let port = self.etcd_port();
        // The v3 gRPC gateway: read the current revision, then compact to it (physically, at once).
        let range = http_post(port, "/v3/kv/range", &json!({"key": "AA=="})).expect("etcd answers a range");
        let revision: i64 = range["header"]["revision"].as_str().and_then(|r| r.parse().ok()).expect("a revision");
        http_post(port, "/v3/kv/compaction", &json!({"revision": revision.to_string(), "physical": true}))
            .expect("etcd compacts");
        revision
    }

    /// Keeps `nodes` healthy for the node-lifecycle controller: renews each node's Lease in
    /// `kube-node-lease` every second (as a kubelet does every 10 s) until the returned guard drops.
    pub fn keep_healthy(&mut self, nodes: &[&str]) -> Heartbeats {
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicBool::new(false));
        let nodes: Vec<String> = nodes.iter().map(|n| (*n).to_owned()).collect();
        let kubeconfig = self.kubeconfig().to_owned();
        let (flag, finished) = (stop.clone(), done.clone());
        let handle = std::thread::spawn(move || {
            heartbeat_loop(&kubeconfig, &nodes, &flag);
            finished.store(true, Ordering::SeqCst);
        });
        let thread = handle.thread().clone();
        self.heartbeats.push((stop.clone(), handle));
        Heartbeats { stop, done, thread }
    }
}

/// Stops the heartbeats it stands for when dropped (or when [`Heartbeats::stop`] is called).
pub struct Heartbeats {
    stop: Arc<AtomicBool>,
    done: Arc<AtomicBool>,
    thread: std::thread::Thread,
}

impl Heartbeats {
    /// Asks the loop to stop; a renewal under way still completes.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.unpark();
    }

    /// Stops the loop and returns once its last renewal has been written (at most 30 s): every
    /// renewal of these nodes reached the API server before the return.
    pub fn stop_and_wait(&self) {
        self.stop();
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.done.load(Ordering::SeqCst) {
            assert!(Instant::now() < deadline, "the heartbeat loop did not stop within 30 s");
            std::thread::park_timeout(Duration::from_millis(10));
        }
    }
}

impl Drop for Heartbeats {
    fn drop(&mut self) {
        self.stop();
    }
}

/// How many Leases one `kubectl apply` renews: each batch is stamped when it starts, so a renewal
/// reaches the API server at most one batch's writes after its `renewTime`.
const HEARTBEAT_BATCH: usize = 50;

fn heartbeat_loop(kubeconfig: &Path, nodes: &[String], stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        for batch in nodes.chunks(HEARTBEAT_BATCH) {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            renew(kubeconfig, batch);
        }
        std::thread::park_timeout(Duration::from_secs(1));
    }
}

/// Renews the Leases of `nodes`, stamped now.
fn renew(kubeconfig: &Path, nodes: &[String]) {
    let now = jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string();
    let leases: Vec<Value> = nodes
        .iter()
        .map(|node| {
            json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                   "metadata": {"name": node, "namespace": "kube-node-lease"},
                   "spec": {"holderIdentity": node, "leaseDurationSeconds": 40, "renewTime": now}})
        })
        .collect();
    let list = json!({"apiVersion": "v1", "kind": "List", "items": leases}).to_string();
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["apply", "--server-side", "--force-conflicts", "--field-manager=heartbeat", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("kubectl starts");
    let _ = child.stdin.take().expect("stdin").write_all(list.as_bytes());
    let _ = child.wait();
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        for (stop, _) in &self.heartbeats {
            stop.store(true, Ordering::SeqCst);
        }
        for (_, handle) in self.heartbeats.drain(..) {
            let _ = handle.join();
        }
        if let Some(child) = self.controller_manager.take() {
            stop(child);
        }
        self.stop_apiserver();
        if let Some(child) = self.second.take() {
            stop(child);
        }
        let _ = self.etcd.kill();
        let _ = self.etcd.wait();
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        } else {
            eprintln!("control plane logs kept in {}", self.dir.display());
        }
    }
}

/// SIGTERM, up to 5 s to exit, then SIGKILL; always reaped.
fn stop(mut child: Child) {
    // SAFETY: `kill` with a pid we own (not yet reaped, so not reused) and a valid signal number.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::park_timeout(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Spawns `command` with its output into `log`, to die with the thread that started it.
fn spawn(command: &mut Command, log: &Path) -> Result<Child, String> {
    let out = std::fs::OpenOptions::new().create(true).append(true).open(log).map_err(|e| format!("{e}"))?;
    let err = out.try_clone().map_err(|e| format!("{e}"))?;
    command.stdin(Stdio::null()).stdout(out).stderr(err);
    // SAFETY: the closure runs in the child between fork and exec and only calls async-signal-safe
    // `prctl`; if the test (the parent) dies, even by SIGKILL, the kernel sends the child SIGKILL.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.spawn().map_err(|e| format!("{:?}: {e}", command.get_program()))
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free port")
}

fn token(index: usize) -> String {
    format!("identity-token-{index}")
}

/// libfaketime, which shifts a process's wall clock (Debian's `faketime`; `.ci/run` installs it).
pub fn libfaketime() -> Option<PathBuf> {
    let triplets = ["x86_64-linux-gnu", "aarch64-linux-gnu"];
    let dirs = triplets.iter().map(|t| format!("/usr/lib/{t}/faketime")).chain(["/usr/lib/faketime".to_owned()]);
    dirs.map(|dir| PathBuf::from(dir).join("libfaketime.so.1")).find(|path| path.is_file())
}

/// The CA, the serving certificate for 127.0.0.1, the service-account key pair and the token file.
fn write_credentials(dir: &Path, identities: &[Identity]) -> Result<(), String> {
    let openssl = |args: &[&str]| -> Result<(), String> {
        let mut command = Command::new("openssl");
        // Certificates valid from a day ago: a client whose clock is behind (the clock-skew tests run
        // the binary up to a minute in the past) must not see them as not yet valid.
        if let Some(library) = libfaketime() {
            command.env("LD_PRELOAD", library).env("FAKETIME", "-1d");
        }
        let output = command.args(args).current_dir(dir).output().map_err(|e| format!("openssl: {e}"))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!("openssl {args:?}: {}", String::from_utf8_lossy(&output.stderr)))
        }
    };
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
    openssl(
        &[&["req", "-x509"], &ec[..], &["-keyout", "ca.key", "-out", "ca.crt", "-days", "3", "-subj", "/CN=test-ca"]]
            .concat(),
    )?;
    openssl(&[&["req"], &ec[..], &["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"]].concat())?;
    std::fs::write(dir.join("san.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n").map_err(|e| e.to_string())?;
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.crt",
        "-days",
        "3",
        "-extfile",
        "san.cnf",
    ])?;
    openssl(&["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "sa.key"])?;
    openssl(&["pkey", "-in", "sa.key", "-pubout", "-out", "sa.pub"])?;
    let mut tokens = format!("{ADMIN_TOKEN},admin,admin-uid,\"system:masters\"\n");
    for (index, identity) in identities.iter().enumerate() {
        let groups = identity.groups.join(",");
        tokens.push_str(&format!("{},{},uid-{index},\"{groups}\"\n", token(index), identity.user));
    }
    std::fs::write(dir.join("tokens.csv"), tokens).map_err(|e| e.to_string())
}

fn write_kubeconfig(dir: &Path, user: &str, port: u16, token: &str) -> Result<PathBuf, String> {
    let ca = dir.join("ca.crt");
    let file = user.replace(':', "_");
    let path = dir.join(format!("kubeconfig-{file}"));
    let yaml = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n    server: https://127.0.0.1:{port}\n    \
         certificate-authority: {}\ncontexts:\n- name: test\n  context:\n    cluster: test\n    user: test\n    \
         namespace: default\ncurrent-context: test\nusers:\n- name: test\n  user:\n    token: {token}\n",
        ca.display()
    );
    std::fs::write(&path, yaml).map_err(|e| e.to_string())?;
    Ok(path)
}

/// Whether kube-apiserver on `port` says it is ready (`/readyz` answers 200; anonymous requests are
/// allowed to read it).
fn readyz(port: u16) -> bool {
    let output = Command::new("curl")
        .args(["-sk", "-m", "2", "-o", "/dev/null", "-w", "%{http_code}"])
        .arg(format!("https://127.0.0.1:{port}/readyz"))
        .output();
    output.is_ok_and(|o| o.stdout == b"200")
}

/// A plain-HTTP GET on loopback: the status code and the body.
fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    http(port, &format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"))
}

fn http_post(port: u16, path: &str, body: &Value) -> Option<Value> {
    let body = body.to_string();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    let (code, text) = http(port, &request)?;
    (code == 200).then(|| serde_json::from_str(&text).ok()).flatten()
}

fn http(port: u16, request: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    stream.write_all(request.as_bytes()).ok()?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).ok()?;
    let text = String::from_utf8_lossy(&response);
    let (head, body) = text.split_once("\r\n\r\n")?;
    let code = head.split_whitespace().nth(1)?.parse().ok()?;
    // etcd's gateway answers chunked: the JSON object sits between the chunk sizes.
    let body = match (body.find('{'), body.rfind('}')) {
        (Some(start), Some(end)) => body[start..=end].to_owned(),
        _ => body.to_owned(),
    };
    Some((code, body))
}
