//! What `record` writes, line by line (docs/review.md, "Its lines"): the watches' lists bracketed by
//! `list` and `listed`, an object only when what is kept of it changed (a 64-bit hash of its line
//! kept per object, not the object), the nodes' Lease renewals at most every `--leases-every` and at
//! once before a line of their node, `deleted`, `gap` and `stopped`. No IO and no clock: each call
//! takes its instant, and the lines accumulate until [`Recorder::take`].
//!
//! Owns: [`Recorder`]. Uses: the watches' [`Seen`], the words' JSON strings and RFC 3339.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write as _;

use crate::cluster::watch::{RECORDED, Recorded, RecordedKind, Seen};
use crate::engine::time::Timestamp;
use crate::words::{RFC3339_MAX, json_string, rfc3339_ascii};

/// The format a record's first line names.
pub const FORMAT: &str = "taint-evict/v1";
/// The nodes' Leases' namespace.
const NODE_LEASES: &str = "kube-node-lease";
/// The controller manager's Lease, written on every change.
const CONTROLLER_LEASE: (&str, &str) = ("kube-system", "kube-controller-manager");

/// What was last written of one object: its line's hash, the watch and the list it came from.
#[derive(Clone, Copy)]
struct Written {
    hash: u64,
    watch: u8,
    list: u32,
}

/// One watch, as the recorder follows it.
#[derive(Default)]
struct Following {
    /// A list asked for and not yet answered: when it began (its `list` line is written with its
    /// first object or its end, so that a list that fails, again and again while the API server is
    /// down, writes nothing).
    begun: Option<Timestamp>,
    /// The list under way: the objects written in it so far.
    listing: Option<u64>,
    /// The lists begun (each object written is marked with the one it was last seen in).
    lists: u32,
    /// Since when it is broken, when it is.
    broke: Option<Timestamp>,
    /// A new file begun: its lines wait for its list, which the file begins with.
    awaiting: bool,
}

/// A node Lease's renewal held back, to be written once `--leases-every` has passed: its line's
/// object, as written (a few hundred bytes, not the parsed object).
struct Held {
    at: Timestamp,
    key: u64,
    object: Vec<u8>,
}

/// The recorder's state: what was written of each object, the watches, the Leases held.
pub struct Recorder {
    leases_every: i128,
    written: HashMap<u64, Written>,
    watches: [Following; RECORDED.len()],
    /// Each node Lease's renewal held back, by node.
    held: HashMap<String, Held>,
    /// When each node's Lease was last written (the recorder's instant).
    lease_written: HashMap<String, Timestamp>,
    out: Vec<u8>,
}

impl Recorder {
    /// A recorder writing each node's Lease at most every `leases_every`.
    #[must_use]
    pub fn new(leases_every: std::time::Duration) -> Self {
        Self {
            leases_every: leases_every.as_nanos() as i128,
            written: HashMap::new(),
            watches: Default::default(),
            held: HashMap::new(),
            lease_written: HashMap::new(),
            out: Vec::with_capacity(1 << 16),
        }
    }

    /// The lines written since the last call, each complete.
    pub fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }

    /// Hands the lines written since the last call, each complete, to `write`; the buffer is kept.
    ///
    /// # Errors
    /// `write`'s.
    pub fn write_out<T, E>(&mut self, write: impl FnOnce(&[u8]) -> Result<T, E>) -> Result<T, E> {
        let written = write(&self.out);
        self.out.clear();
        written
    }

    /// How many objects the recorder knows (one hash each).
    #[must_use]
    pub fn known(&self) -> usize {
        self.written.len()
    }

    /// A file begins: its `record` line. Every watch then waits for its list (the caller asks for
    /// them): what it sees before is left out, as that list will say it.
    pub fn begin(&mut self, at: Timestamp, recorder: &str, server: &str) {
        self.open(at);
        self.out.extend_from_slice(b",\"record\":");
        string(FORMAT, &mut self.out);
        self.out.extend_from_slice(b",\"recorder\":");
        string(recorder, &mut self.out);
        self.out.extend_from_slice(b",\"server\":");
        string(server, &mut self.out);
        // How far apart two renewals of a node written may be while its kubelet renewed between them
        // (docs/review.md, "Node taints").
        self.out.extend_from_slice(b",\"leasesEvery\":");
        let every = std::time::Duration::from_nanos(u64::try_from(self.leases_every).unwrap_or(u64::MAX));
        string(&humantime::format_duration(every).to_string(), &mut self.out);
        self.out.extend_from_slice(b"}\n");
        for watch in &mut self.watches {
            watch.awaiting = true;
            watch.listing = None;
        }
    }

    /// What one watch saw, at `at`.
    pub fn see(&mut self, seen: Seen, at: Timestamp) {
        match seen {
            Seen::Listing { watch } => {
                let following = &mut self.watches[watch];
                following.awaiting = false;
                following.listing = None;
                following.begun = Some(at);
            }
            Seen::Object { watch, recorded } => {
                self.answered(watch);
                self.object(watch, recorded, at);
            }
            Seen::Listed { watch } => {
                self.answered(watch);
                let following = &mut self.watches[watch];
                if following.awaiting {
                    return;
                }
                let Some(count) = following.listing.take() else { return };
                let list = following.lists;
                // An object of this watch the list did not hold is gone: its hash goes too.
                self.written.retain(|_, written| usize::from(written.watch) != watch || written.list == list);
                self.bracket(at, "listed", watch);
                let _ = writeln!(self.out, ",\"count\":{count}}}");
            }
            Seen::Deleted { watch, recorded } => {
                let kind = RECORDED[watch].kind;
                if self.watches[watch].awaiting || !kept(kind, &recorded) {
                    return;
                }
                self.written.remove(&key(kind, &recorded));
                if kind == RecordedKind::Lease && is_node_lease(&recorded) {
                    self.held.remove(&recorded.name);
                    self.lease_written.remove(&recorded.name);
                }
                self.open(at);
                self.out.extend_from_slice(b",\"deleted\":{\"kind\":");
                string(kind.line(), &mut self.out);
                if let Some(namespace) = &recorded.namespace {
                    self.out.extend_from_slice(b",\"namespace\":");
                    string(namespace, &mut self.out);
                }
                self.out.extend_from_slice(b",\"name\":");
                string(&recorded.name, &mut self.out);
                self.out.extend_from_slice(b",\"uid\":");
                string(&recorded.uid, &mut self.out);
                self.out.extend_from_slice(b"}}\n");
            }
            Seen::Broke { watch } => {
                let following = &mut self.watches[watch];
                following.listing = None;
                following.begun = None;
                following.broke.get_or_insert(at);
            }
        }
    }

    /// The list of `watch` begun is answered: its `gap` (when it follows a break) and `list` lines, at
    /// the instant it began.
    fn answered(&mut self, watch: usize) {
        let following = &mut self.watches[watch];
        let Some(begun) = following.begun.take() else { return };
        following.listing = Some(0);
        following.lists += 1;
        if let Some(from) = following.broke.take() {
            self.bracket(begun, "gap", watch);
            self.out.extend_from_slice(b",\"from\":");
            instant(from, &mut self.out);
            self.out.extend_from_slice(b"}\n");
        }
        self.bracket(begun, "list", watch);
        self.out.extend_from_slice(b"}\n");
    }

    /// Writes the node Leases' renewals held back whose `--leases-every` has passed by `now`.
    pub fn tick(&mut self, now: Timestamp) {
        let due: Vec<String> = self
            .held
            .keys()
            .filter(|node| self.lease_written.get(*node).is_none_or(|last| now.nanos_since(*last) >= self.leases_every))
            .cloned()
            .collect();
        for node in due {
            self.release(&node, now);
        }
    }

    /// Writes every renewal held back: before a file ends, or the recorder stops.
    pub fn release_all(&mut self, now: Timestamp) {
        let mut nodes: Vec<String> = self.held.keys().cloned().collect();
        nodes.sort_unstable();
        for node in nodes {
            self.release(&node, now);
        }
    }

    /// The recorder stops: the renewals held back, then `stopped`.
    pub fn stop(&mut self, at: Timestamp) {
        self.release_all(at);
        self.open(at);
        self.out.extend_from_slice(b",\"stopped\":true}\n");
    }

    fn object(&mut self, watch: usize, recorded: Recorded, at: Timestamp) {
        let kind = RECORDED[watch].kind;
        if self.watches[watch].awaiting || !kept(kind, &recorded) {
            return;
        }
        let mut line = Vec::with_capacity(512);
        // A `Value` writes its members in one order (sorted), so an object written twice the same is
        // the same bytes.
        let _ = serde_json::to_writer(&mut line, &recorded.object);
        let hash = hash_of(&line);
        let key = key(kind, &recorded);
        let listing = self.watches[watch].listing.is_some();
        let node_lease = kind == RecordedKind::Lease && is_node_lease(&recorded);
        if !listing && self.written.get(&key).is_some_and(|written| written.hash == hash) {
            return;
        }
        if node_lease && !listing {
            let recent =
                self.lease_written.get(&recorded.name).is_some_and(|last| at.nanos_since(*last) < self.leases_every);
            if recent {
                self.held.insert(recorded.name, Held { at, key, object: line });
                return;
            }
        }
        // A node's heartbeat goes before any line of its node.
        match kind {
            RecordedKind::Node => self.release(&recorded.name, at),
            RecordedKind::Event => {
                let about = &recorded.object["involvedObject"];
                if about["kind"] == "Node"
                    && let Some(node) = about["name"].as_str()
                {
                    let node = node.to_owned();
                    self.release(&node, at);
                }
            }
            RecordedKind::Pod | RecordedKind::Lease => {}
        }
        if node_lease {
            self.held.remove(&recorded.name);
            self.lease_written.insert(recorded.name.clone(), at);
        }
        let following = &mut self.watches[watch];
        if let Some(count) = &mut following.listing {
            *count += 1;
        }
        let list = following.lists;
        self.written.insert(key, Written { hash, watch: watch as u8, list });
        self.line(at, kind, &line);
    }

    /// Writes the renewal of `node`'s Lease held back, if any (as seen, at its instant).
    fn release(&mut self, node: &str, now: Timestamp) {
        let Some(Held { at, key, object: line }) = self.held.remove(node) else { return };
        let watch = RECORDED.iter().position(|w| w.kind == RecordedKind::Lease).unwrap_or_default();
        let list = self.watches[watch].lists;
        self.written.insert(key, Written { hash: hash_of(&line), watch: watch as u8, list });
        self.lease_written.insert(node.to_owned(), now);
        self.line(at, RecordedKind::Lease, &line);
    }

    fn line(&mut self, at: Timestamp, kind: RecordedKind, object: &[u8]) {
        self.open(at);
        self.out.push(b',');
        string(kind.line(), &mut self.out);
        self.out.push(b':');
        self.out.extend_from_slice(object);
        self.out.extend_from_slice(b"}\n");
    }

    /// `{"at":…,"KEY":"WHAT"` and the watch's field selector, if it has one.
    fn bracket(&mut self, at: Timestamp, key: &str, watch: usize) {
        self.open(at);
        self.out.push(b',');
        string(key, &mut self.out);
        self.out.push(b':');
        string(RECORDED[watch].kind.listed(), &mut self.out);
        if let Some(fields) = RECORDED[watch].fields {
            self.out.extend_from_slice(b",\"fieldSelector\":");
            string(fields, &mut self.out);
        }
    }

    /// `{"at":…`.
    fn open(&mut self, at: Timestamp) {
        self.out.extend_from_slice(b"{\"at\":");
        instant(at, &mut self.out);
    }
}

/// Whether the record keeps `recorded`: of the Leases, the nodes' and the controller manager's.
fn kept(kind: RecordedKind, recorded: &Recorded) -> bool {
    kind != RecordedKind::Lease
        || is_node_lease(recorded)
        || (recorded.namespace.as_deref(), recorded.name.as_str()) == (Some(CONTROLLER_LEASE.0), CONTROLLER_LEASE.1)
}

fn is_node_lease(recorded: &Recorded) -> bool {
    recorded.namespace.as_deref() == Some(NODE_LEASES)
}

/// An object's key: its kind and UID (its name where it has none).
fn key(kind: RecordedKind, recorded: &Recorded) -> u64 {
    let mut hasher = DefaultHasher::new();
    kind.hash(&mut hasher);
    if recorded.uid.is_empty() {
        recorded.namespace.hash(&mut hasher);
        recorded.name.hash(&mut hasher);
    } else {
        recorded.uid.hash(&mut hasher);
    }
    hasher.finish()
}

fn hash_of(line: &[u8]) -> u64 {
    let mut hasher = DefaultHasher::new();
    line.hash(&mut hasher);
    hasher.finish()
}

fn string(text: &str, out: &mut Vec<u8>) {
    // Writing to a `Vec` cannot fail.
    let _ = json_string(out, text);
}

/// An instant as RFC 3339 in UTC, to the nanosecond (a fraction only when it has one).
fn instant(at: Timestamp, out: &mut Vec<u8>) {
    let mut buffer = [0; RFC3339_MAX];
    out.push(b'"');
    out.extend_from_slice(rfc3339_ascii(at.as_nanos(), &mut buffer).unwrap_or(b"0001-01-01T00:00:00Z"));
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::{Value, json};

    use super::*;

    const NODES: usize = 0;
    const PODS: usize = 1;
    const LEASES: usize = 2;
    const NODE_EVENTS: usize = 3;

    /// 2026-11-29T10:00:00Z plus `seconds`.
    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_unix_seconds(1_795_946_400 + seconds)
    }

    fn object(namespace: Option<&str>, name: &str, uid: &str, object: Value) -> Recorded {
        Recorded { namespace: namespace.map(str::to_owned), name: name.to_owned(), uid: uid.to_owned(), object }
    }

    fn pod(phase: &str) -> Recorded {
        object(Some("shop"), "web-0", "u-1", json!({"metadata": {"name": "web-0"}, "status": {"phase": phase}}))
    }

    /// `at(seconds)` as the API writes it.
    fn text(seconds: i64) -> String {
        jiff::Timestamp::from_second(1_795_946_400 + seconds).expect("in range").to_string()
    }

    fn lease(renewed: i64) -> Recorded {
        let renew = text(renewed);
        object(Some(NODE_LEASES), "node-1", "l-1", json!({"spec": {"renewTime": renew}}))
    }

    fn node(ready: &str) -> Recorded {
        object(None, "node-1", "n-1", json!({"status": {"conditions": [{"type": "Ready", "status": ready}]}}))
    }

    fn lines(recorder: &mut Recorder) -> Vec<Value> {
        String::from_utf8(recorder.take())
            .expect("UTF-8")
            .lines()
            .map(|line| serde_json::from_str(line).expect("a JSON line"))
            .collect()
    }

    /// A recorder past its first file's lists of `watches`, empty.
    fn listed(watches: &[usize]) -> Recorder {
        let mut recorder = Recorder::new(Duration::from_secs(60));
        recorder.begin(at(0), "kubectl-taint-evict 0", "https://example");
        for &watch in watches {
            recorder.see(Seen::Listing { watch }, at(0));
            recorder.see(Seen::Listed { watch }, at(0));
        }
        recorder.take();
        recorder
    }

    /// Checked by hand: the header, then each list's objects between its `list` and `listed` with
    /// their count; the events' lines name their field selector; `at` is RFC 3339 in UTC.
    #[test]
    fn a_file_begins_with_its_header_and_each_list_bracketed() {
        let mut recorder = Recorder::new(Duration::from_secs(60));
        recorder.begin(at(0), "kubectl-taint-evict 1.0", "https://cluster:6443");
        recorder.see(Seen::Listing { watch: PODS }, at(1));
        recorder.see(Seen::Object { watch: PODS, recorded: pod("Running") }, at(1));
        recorder.see(Seen::Listed { watch: PODS }, at(2));
        recorder.see(Seen::Listing { watch: NODE_EVENTS }, at(2));
        recorder.see(Seen::Listed { watch: NODE_EVENTS }, at(2));
        let lines = lines(&mut recorder);
        assert_eq!(
            lines,
            [
                json!({"at": "2026-11-29T10:00:00Z", "record": "taint-evict/v1",
                       "recorder": "kubectl-taint-evict 1.0", "server": "https://cluster:6443", "leasesEvery": "1m"}),
                json!({"at": "2026-11-29T10:00:01Z", "list": "pods"}),
                json!({"at": "2026-11-29T10:00:01Z", "pod": pod("Running").object}),
                json!({"at": "2026-11-29T10:00:02Z", "listed": "pods", "count": 1}),
                json!({"at": "2026-11-29T10:00:02Z", "list": "events", "fieldSelector": "involvedObject.kind=Node"}),
                json!({"at": "2026-11-29T10:00:02Z", "listed": "events", "fieldSelector": "involvedObject.kind=Node", "count": 0}),
            ]
        );
    }

    /// A pod written again unchanged makes no line; changed, one; deleted, a `deleted` line; listed
    /// again after that, it is written in the list even though unchanged.
    #[test]
    fn an_object_is_written_when_what_is_kept_of_it_changes() {
        let mut recorder = listed(&[PODS]);
        recorder.see(Seen::Object { watch: PODS, recorded: pod("Pending") }, at(1));
        recorder.see(Seen::Object { watch: PODS, recorded: pod("Pending") }, at(2));
        recorder.see(Seen::Object { watch: PODS, recorded: pod("Running") }, at(3));
        recorder.see(Seen::Deleted { watch: PODS, recorded: pod("Running") }, at(4));
        recorder.see(Seen::Object { watch: PODS, recorded: pod("Running") }, at(5));
        recorder.see(Seen::Listing { watch: PODS }, at(6));
        recorder.see(Seen::Object { watch: PODS, recorded: pod("Running") }, at(6));
        recorder.see(Seen::Listed { watch: PODS }, at(6));
        let lines = lines(&mut recorder);
        let said: Vec<String> = lines
            .iter()
            .map(|line| {
                let key = ["pod", "deleted", "list", "listed"].into_iter().find(|k| line.get(*k).is_some());
                format!("{} {}", line["at"].as_str().unwrap_or_default(), key.unwrap_or("?"))
            })
            .collect();
        assert_eq!(
            said,
            [
                "2026-11-29T10:00:01Z pod",
                "2026-11-29T10:00:03Z pod",
                "2026-11-29T10:00:04Z deleted",
                "2026-11-29T10:00:05Z pod",
                "2026-11-29T10:00:06Z list",
                "2026-11-29T10:00:06Z pod",
                "2026-11-29T10:00:06Z listed",
            ]
        );
        assert_eq!(lines[2]["deleted"], json!({"kind": "pod", "namespace": "shop", "name": "web-0", "uid": "u-1"}));
        assert_eq!(recorder.known(), 1);
    }

    /// A relist without an object it had: that object's hash goes (memory stays the objects there).
    #[test]
    fn a_list_forgets_the_objects_it_no_longer_holds() {
        let mut recorder = listed(&[PODS]);
        recorder.see(Seen::Object { watch: PODS, recorded: pod("Running") }, at(1));
        assert_eq!(recorder.known(), 1);
        recorder.see(Seen::Listing { watch: PODS }, at(2));
        recorder.see(Seen::Listed { watch: PODS }, at(2));
        assert_eq!(recorder.known(), 0);
    }

    /// Renewals every 10 s with --leases-every 60s: the first is written, those within 60 s of it held
    /// (the latest replacing the one before), written before the node's line at 25 s (the renewal of
    /// 20 s, at its own instant), then the next due at 25 + 60 s by `tick`; the controller manager's
    /// Lease is written on every change.
    #[test]
    fn node_leases_are_written_at_most_every_period_and_before_their_node() {
        let mut recorder = listed(&[NODES, LEASES]);
        for seconds in [0, 10, 20] {
            recorder.see(Seen::Object { watch: LEASES, recorded: lease(seconds) }, at(seconds));
        }
        recorder.see(Seen::Object { watch: NODES, recorded: node("Unknown") }, at(25));
        for seconds in [30, 40, 80] {
            recorder.see(Seen::Object { watch: LEASES, recorded: lease(seconds) }, at(seconds));
        }
        recorder.tick(at(84));
        recorder.tick(at(85));
        for seconds in [86, 88] {
            let controller = object(
                Some("kube-system"),
                "kube-controller-manager",
                "c-1",
                json!({"spec": {"renewTime": text(seconds)}}),
            );
            recorder.see(Seen::Object { watch: LEASES, recorded: controller }, at(seconds));
        }
        let other = object(Some("kube-system"), "kube-scheduler", "s-1", json!({"spec": {}}));
        recorder.see(Seen::Object { watch: LEASES, recorded: other }, at(89));
        recorder.stop(at(90));
        let said: Vec<String> = lines(&mut recorder)
            .iter()
            .map(|line| match (line.get("lease"), line.get("node")) {
                (Some(lease), _) => {
                    format!(
                        "{} lease {}",
                        line["at"].as_str().unwrap_or_default(),
                        lease["spec"]["renewTime"].as_str().unwrap_or_default()
                    )
                }
                (_, Some(_)) => format!("{} node", line["at"].as_str().unwrap_or_default()),
                _ => format!("{} other", line["at"].as_str().unwrap_or_default()),
            })
            .collect();
        assert_eq!(
            said,
            [
                "2026-11-29T10:00:00Z lease 2026-11-29T10:00:00Z",
                "2026-11-29T10:00:20Z lease 2026-11-29T10:00:20Z",
                "2026-11-29T10:00:25Z node",
                "2026-11-29T10:01:20Z lease 2026-11-29T10:01:20Z",
                "2026-11-29T10:01:26Z lease 2026-11-29T10:01:26Z",
                "2026-11-29T10:01:28Z lease 2026-11-29T10:01:28Z",
                "2026-11-29T10:01:30Z other",
            ]
        );
    }

    /// A watch broken at 5 s and listed again at 9 s: a `gap` from 5 s at 9 s, then its list; a second
    /// error while broken does not move `from`.
    #[test]
    fn a_broken_watch_leaves_a_gap_before_its_next_list() {
        let mut recorder = listed(&[PODS]);
        recorder.see(Seen::Broke { watch: PODS }, at(5));
        recorder.see(Seen::Broke { watch: PODS }, at(7));
        recorder.see(Seen::Listing { watch: PODS }, at(9));
        recorder.see(Seen::Listed { watch: PODS }, at(10));
        let lines = lines(&mut recorder);
        assert_eq!(lines[0], json!({"at": "2026-11-29T10:00:09Z", "gap": "pods", "from": "2026-11-29T10:00:05Z"}));
        assert_eq!(lines[1], json!({"at": "2026-11-29T10:00:09Z", "list": "pods"}));
    }

    /// While the API server is down, each list asked for fails: nothing is written for them; the list
    /// that is answered (begun at 12 s, its first object at 13 s) says the gap from the first break.
    #[test]
    fn lists_that_fail_write_nothing() {
        let mut recorder = listed(&[PODS]);
        recorder.see(Seen::Broke { watch: PODS }, at(5));
        for seconds in [6, 8, 10] {
            recorder.see(Seen::Listing { watch: PODS }, at(seconds));
            recorder.see(Seen::Broke { watch: PODS }, at(seconds));
        }
        assert!(recorder.take().is_empty());
        recorder.see(Seen::Listing { watch: PODS }, at(12));
        recorder.see(Seen::Object { watch: PODS, recorded: pod("Running") }, at(13));
        let lines = lines(&mut recorder);
        assert_eq!(lines[0], json!({"at": "2026-11-29T10:00:12Z", "gap": "pods", "from": "2026-11-29T10:00:05Z"}));
        assert_eq!(lines[1], json!({"at": "2026-11-29T10:00:12Z", "list": "pods"}));
        assert_eq!(lines[2]["at"], "2026-11-29T10:00:13Z");
    }

    /// After a new file's header, what a watch sees before its list is left out (its list says it);
    /// the list is written whole, the unchanged pod included.
    #[test]
    fn a_new_file_waits_for_each_list() {
        let mut recorder = listed(&[PODS]);
        recorder.see(Seen::Object { watch: PODS, recorded: pod("Running") }, at(1));
        recorder.take();
        recorder.begin(at(2), "kubectl-taint-evict 0", "https://example");
        recorder.see(Seen::Object { watch: PODS, recorded: pod("Failed") }, at(2));
        recorder.see(Seen::Listed { watch: PODS }, at(2));
        recorder.see(Seen::Listing { watch: PODS }, at(3));
        recorder.see(Seen::Object { watch: PODS, recorded: pod("Running") }, at(3));
        recorder.see(Seen::Listed { watch: PODS }, at(3));
        let keys: Vec<String> = lines(&mut recorder)
            .iter()
            .map(|line| {
                let keys = ["record", "list", "listed", "pod", "deleted", "gap", "stopped"];
                keys.into_iter().find(|key| line.get(*key).is_some()).unwrap_or_default().to_owned()
            })
            .collect();
        assert_eq!(keys, ["record", "list", "pod", "listed"]);
    }
}
