//! Deleting a pod as upstream does, with a UID precondition: the `DisruptionTarget` condition on its
//! status first, then DELETE; events `TaintManagerEviction` (`DeviceTaintManagerEviction` for a device
//! taint's) as the cluster's controllers send them,
//! repeated ones aggregated into series as upstream's recorder does ([`super::series`]).
//!
//! Or, with `--mode evict`, evicting it through the Eviction API (`policy/v1`, `pods/NAME/eviction`),
//! which checks the pod's PodDisruptionBudget first and sets the `DisruptionTarget` condition itself
//! (reason `EvictionByEvictionAPI`, Kubernetes 1.26 and later): no status PATCH of ours then. A
//! budget's refusal (429 naming the budget in its causes) is [`Outcome::Blocked`].

use std::future::Future;
use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event, EventSeries};
use k8s_openapi::api::policy::v1::Eviction;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use kube::{Api, Client};
use serde_json::json;

use super::series::{Series, SeriesCache, Write};
use super::watch::WatchedPod;
use crate::engine::model::{PodKey, PodRef, Uid};
use crate::engine::time::Timestamp;
use crate::metrics::FailureReason;
use crate::runtime::{Controller, Evictor, Notice, Outcome, Throttle};

/// The reporting controller named on events, so they can be told from the cluster's own.
pub const CONTROLLER: &str = "kubectl-taint-evict";

/// How a due pod is removed (`run --mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// The `DisruptionTarget` condition, then DELETE: what upstream's controller does; no
    /// PodDisruptionBudget is consulted.
    #[default]
    Delete,
    /// POST `pods/NAME/eviction` (`policy/v1`): the API server refuses while the pod's
    /// PodDisruptionBudget allows no disruption.
    Evict,
}

/// Deletes pods in the cluster, or, in a dry run, only says it would.
#[derive(Clone)]
pub struct KubeEvictor {
    client: Client,
    /// `reportingInstance` of the events (the pod's name in a cluster).
    instance: String,
    dry_run: bool,
    /// Every write waits for its turn here (`--qps`, `--burst`, the server's `Retry-After`).
    throttle: Throttle,
    mode: Mode,
    /// The events written recently, shared by the clones.
    recent: Arc<Mutex<Recent>>,
}

/// What makes two events one series: upstream's `eventKey` (type, reason, action, reporting
/// controller and instance, and the regarding object, UID included), and the note. Type, reason and
/// the reporting controller and instance are the same on every event one evictor writes, and the
/// note and action follow from the pod and the notice, so the pod, its UID and the notice are the key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct EventKey {
    pod: PodKey,
    uid: Uid,
    notice: Notice,
}

/// The events written recently, and whether a task waits to write the counts of ended series.
#[derive(Debug)]
struct Recent {
    cache: SeriesCache<EventKey>,
    sweeping: bool,
}

impl KubeEvictor {
    /// An evictor writing through `client` (nothing at all when `dry_run`), each write paced by
    /// `throttle` (the client should report the server's pushback to it: [`super::pushback`]).
    #[must_use]
    pub fn new(client: Client, dry_run: bool, instance: Option<String>, throttle: Throttle) -> Self {
        let recent = Recent { cache: SeriesCache::new(throttle.clock().now()), sweeping: false };
        Self {
            client,
            instance: instance.unwrap_or_else(|| CONTROLLER.to_owned()),
            dry_run,
            throttle,
            mode: Mode::Delete,
            recent: Arc::new(Mutex::new(recent)),
        }
    }

    /// Removes pods as `mode` says (DELETE by default). A dry run in [`Mode::Evict`] sends each
    /// eviction with `dryRun=All`: the API server checks the budget and changes nothing.
    #[must_use]
    pub fn with_mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// One eviction through the Eviction API, with the UID as precondition (so a replacement is never
    /// evicted), as `kubectl drain` sends it.
    ///
    /// Not kube's `Api::evict`: it writes the options as `delete_options`, a field the API server does
    /// not know and drops, and the precondition with it.
    async fn evict_through_api(&self, pod: &PodRef) -> Outcome {
        let api: Api<WatchedPod> = Api::namespaced(self.client.clone(), pod.key.namespace());
        let eviction = Eviction {
            metadata: ObjectMeta {
                name: Some(pod.key.name().into()),
                namespace: Some(pod.key.namespace().into()),
                ..ObjectMeta::default()
            },
            delete_options: Some(meta::DeleteOptions {
                preconditions: Some(meta::Preconditions { uid: Some(pod.uid.to_string()), resource_version: None }),
                ..meta::DeleteOptions::default()
            }),
        };
        let params = PostParams { dry_run: self.dry_run, ..PostParams::default() };
        self.throttle.admit().await;
        match api.create_subresource::<_, kube::core::Status>("eviction", pod.key.name(), &params, &eviction).await {
            Ok(_) => Outcome::Deleted,
            Err(kube::Error::Api(status)) if status.code == 429 && budget_refusal(&status).is_some() => {
                let (budget, message) = budget_refusal(&status).expect("just matched");
                Outcome::Blocked { budget: format!("{}/{budget}", pod.key.namespace()), message }
            }
            Err(error) => outcome(error, "create pods/eviction"),
        }
    }
}

/// The budget a 429 from the Eviction API names, and the server's words about it: `details.causes`
/// holds `{reason: DisruptionBudget, message: "The disruption budget NAME needs N healthy pods and
/// has M currently"}` (or `… NAME is still being processed by the server.`), as `checkAndDecrement`
/// and `createTooManyRequestsError` in upstream's `pkg/registry/core/pod/storage/eviction.go` write
/// it. A 429 without it (API Priority and Fairness) is the server's pushback, not a budget's refusal.
#[must_use]
pub fn budget_refusal(status: &kube::core::Status) -> Option<(String, String)> {
    let cause = status.details.as_ref()?.causes.iter().find(|cause| cause.reason == "DisruptionBudget")?;
    let named = cause.message.strip_prefix("The disruption budget ")?;
    let budget = named.split_whitespace().next()?.to_owned();
    Some((budget, cause.message.trim_end_matches('.').to_owned()))
}

/// The permissions the refused step needs, in words.
fn needs(step: &str) -> &'static str {
    if step.contains("eviction") {
        "run --mode evict needs create on pods/eviction"
    } else {
        "run needs patch on pods/status and delete on pods"
    }
}

impl KubeEvictor {
    fn recent(&self) -> std::sync::MutexGuard<'_, Recent> {
        self.recent.lock().expect("recent events")
    }

    /// The Event of `key`'s occurrences `series` (a series from the second on).
    fn event(&self, key: &EventKey, series: &Series) -> Event {
        let (note, action, type_) = match &key.notice {
            Notice::Marking(Controller::NodeTaints) => {
                (format!("Marking for deletion Pod {}", key.pod), "Delete", "Normal")
            }
            Notice::Cancelling(Controller::NodeTaints) => {
                (format!("Cancelling deletion of Pod {}", key.pod), "CancelDelete", "Normal")
            }
            // The device-taint controller's events name no pod (they are about it).
            Notice::Marking(Controller::DeviceTaints) => ("Marking for deletion".to_owned(), "Delete", "Normal"),
            Notice::Cancelling(Controller::DeviceTaints) => {
                ("Cancelling deletion".to_owned(), "CancelDelete", "Normal")
            }
            Notice::Blocked { budget } => {
                let note = format!("Eviction of Pod {} refused by PodDisruptionBudget {budget}; retrying", key.pod);
                (note, "Evict", "Warning")
            }
        };
        let namespace = key.pod.namespace();
        Event {
            metadata: ObjectMeta {
                // Upstream's name: the object's, then the first occurrence's time in hex nanoseconds.
                name: Some(format!("{}.{:x}", key.pod.name(), series.first.as_nanos())),
                namespace: Some(namespace.into()),
                ..ObjectMeta::default()
            },
            event_time: Some(MicroTime(wall(series.first))),
            series: (series.count > 1).then(|| event_series(series)),
            type_: Some(type_.into()),
            reason: Some(key.notice.controller().event_reason().into()),
            note: Some(note),
            action: Some(action.into()),
            reporting_controller: Some(CONTROLLER.into()),
            reporting_instance: Some(self.instance.clone()),
            regarding: Some(ObjectReference {
                api_version: Some("v1".into()),
                kind: Some("Pod".into()),
                name: Some(key.pod.name().into()),
                namespace: Some(namespace.into()),
                uid: Some(key.uid.to_string()),
                ..ObjectReference::default()
            }),
            ..Event::default()
        }
    }

    /// Sends a write through the throttle; one the server pushed back on is sent again when the
    /// pushback ends.
    async fn send<T, F: Future<Output = Result<T, kube::Error>>>(
        &self,
        write: impl Fn() -> F,
    ) -> Result<T, kube::Error> {
        loop {
            self.throttle.admit().await;
            let started = self.throttle.now();
            match write().await {
                Err(kube::Error::Api(status))
                    if matches!(status.code, 429 | 503) && self.throttle.pushed_back_since(started) => {}
                result => return result,
            }
        }
    }

    /// A new Event for `key` (mirrors `recordEvent`'s create).
    async fn create(&self, key: &EventKey, series: &Series) -> Result<Event, kube::Error> {
        let event = self.event(key, series);
        let api = Api::<Event>::namespaced(self.client.clone(), key.pod.namespace());
        let params = PostParams::default();
        self.send(|| api.create(&params, &event)).await
    }

    /// Writes the series of `key`'s Event (mirrors `recordEvent`: a strategic-merge PATCH of
    /// `series`; an Event gone meanwhile is created again, with its series; one created meanwhile
    /// by the first occurrence's POST is patched again).
    async fn write_series(&self, key: &EventKey, series: &Series) {
        let name = format!("{}.{:x}", key.pod.name(), series.first.as_nanos());
        let api = Api::<Event>::namespaced(self.client.clone(), key.pod.namespace());
        let patch = Patch::Strategic(json!({"series": event_series(series)}));
        let params = PatchParams::default();
        let patched = self.send(|| api.patch(&name, &params, &patch)).await;
        if !matches!(&patched, Err(kube::Error::Api(status)) if status.code == 404) {
            return;
        }
        match self.create(key, series).await {
            Err(kube::Error::Api(status)) if status.code == 409 => {
                let _ = self.send(|| api.patch(&name, &params, &patch)).await;
            }
            _ => {}
        }
    }

    /// Writes the counts of `series`, side by side (each write still waits for its turn).
    async fn write_all(&self, series: &[(EventKey, Series)]) {
        futures::future::join_all(series.iter().map(|(key, series)| self.write_series(key, series))).await;
    }

    /// Writes the last counts of the series that ended, and keeps one task waiting for the next
    /// to end while counts are waiting.
    async fn write_finished(&self, finished: Vec<(EventKey, Series)>) {
        let arm = {
            let mut recent = self.recent();
            let arm = !recent.sweeping && recent.cache.poll_timeout().is_some();
            recent.sweeping |= arm;
            arm
        };
        if arm {
            let sweeper = self.clone();
            tokio::spawn(async move { sweeper.sweep().await });
        }
        self.write_all(&finished).await;
    }

    /// Waits for each generation of the cache to end and writes the counts of the series that
    /// ended with it (upstream's `finishSeries`, every `finishTime`); ends when no count waits.
    async fn sweep(self) {
        let clock = self.throttle.clock();
        loop {
            let next = self.recent().cache.poll_timeout();
            let Some(at) = next else {
                let mut recent = self.recent();
                // Checked again under the lock that clears the flag: an occurrence in between
                // saw the flag set and armed nothing.
                if recent.cache.poll_timeout().is_none() {
                    recent.sweeping = false;
                    return;
                }
                continue;
            };
            tokio::time::sleep_until(clock.deadline(at)).await;
            let finished = {
                let mut recent = self.recent();
                recent.cache.sweep(clock.now());
                recent.cache.take_finished()
            };
            self.write_all(&finished).await;
        }
    }
}

/// `series` as the Event's `series` field.
fn event_series(series: &Series) -> EventSeries {
    EventSeries {
        count: i32::try_from(series.count).unwrap_or(i32::MAX),
        last_observed_time: MicroTime(wall(series.last)),
    }
}

fn wall(at: Timestamp) -> jiff::Timestamp {
    jiff::Timestamp::from_nanosecond(at.as_nanos()).unwrap_or(jiff::Timestamp::UNIX_EPOCH)
}

/// How a failed request ends the attempt: 404, 409 and a refused UID mean the pod is gone or replaced.
fn outcome(error: kube::Error, step: &str) -> Outcome {
    match error {
        kube::Error::Api(status) if status.code == 404 => Outcome::Gone(format!("not found: {}", status.message)),
        kube::Error::Api(status) if status.code == 409 => Outcome::Gone(format!("replaced: {}", status.message)),
        // A status patch naming another UID is refused as a change of the immutable field.
        kube::Error::Api(status) if status.code == 422 && status.message.contains("metadata.uid") => {
            Outcome::Gone(format!("replaced: {}", status.message))
        }
        kube::Error::Api(status) if status.code == 403 => Outcome::Failed {
            reason: FailureReason::Forbidden,
            message: format!("{step} forbidden: {} ({})", status.message, needs(step)),
        },
        kube::Error::Api(status) => Outcome::Failed {
            reason: FailureReason::of_status(status.code),
            message: format!("{step} failed: {} ({})", status.message, status.code),
        },
        // The innermost cause ("connection refused"), not kube's wrapper ("ServiceError: client error").
        other => Outcome::Failed {
            reason: FailureReason::Transport,
            message: format!("{step} failed: {}", super::error::root_cause(&other)),
        },
    }
}

impl Evictor for KubeEvictor {
    fn is_dry_run(&self) -> bool {
        self.dry_run
    }

    fn throttle(&self) -> Option<&Throttle> {
        Some(&self.throttle)
    }

    async fn evict(&self, pod: &PodRef, controller: Controller) -> Outcome {
        if self.mode == Mode::Evict {
            return self.evict_through_api(pod).await;
        }
        if self.dry_run {
            return Outcome::Deleted;
        }
        // The answers (the whole pod, twice) are decoded into the slim type: only what is needed.
        let api: Api<WatchedPod> = Api::namespaced(self.client.clone(), pod.key.namespace());
        let name = pod.key.name();
        // Mirrors addConditionAndDeletePod: the condition first (carrying the UID, so a replacement is
        // never marked), then the DELETE with the UID as precondition (upstream sends none,
        // kubernetes/kubernetes#141568).
        let (reason, message) = controller.condition();
        let condition = json!({
            "metadata": {"uid": pod.uid.text().as_str()},
            "status": {"conditions": [{
                "type": "DisruptionTarget",
                "status": "True",
                "reason": reason,
                "message": message,
                "lastTransitionTime": self.throttle.clock().api_now().to_string(),
            }]}
        });
        self.throttle.admit().await;
        if let Err(error) = api.patch_status(name, &PatchParams::default(), &Patch::Strategic(condition)).await {
            return outcome(error, "patch pods/status");
        }
        let preconditions = Preconditions { uid: Some(pod.uid.to_string()), resource_version: None };
        let params = DeleteParams { preconditions: Some(preconditions), ..DeleteParams::default() };
        self.throttle.admit().await;
        match api.delete(name, &params).await {
            Ok(_) => Outcome::Deleted,
            Err(error) => outcome(error, "delete pods"),
        }
    }

    async fn notify(&self, pod: &PodRef, notice: Notice) {
        if self.dry_run {
            return;
        }
        // O(1) under the lock: a lookup in the cache of recent events (kube-rs' recorder was not
        // used: it scans every cached event on each publish, which made a burst quadratic).
        let key = EventKey { pod: pod.key.clone(), uid: pod.uid.clone(), notice };
        let (write, finished) = {
            let mut recent = self.recent();
            let write = recent.cache.observe(key.clone(), self.throttle.clock().now());
            (write, recent.cache.take_finished())
        };
        // An event that cannot be written does not stop a deletion.
        match write {
            Write::Create(series) => drop(self.create(&key, &series).await),
            Write::Series(series) => self.write_series(&key, &series).await,
            Write::Counted => {}
        }
        if !finished.is_empty() || matches!(write, Write::Counted) {
            self.write_finished(finished).await;
        }
    }

    async fn flush(&self) {
        if self.dry_run {
            return;
        }
        let unwritten = self.recent().cache.drain();
        self.write_all(&unwritten).await;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use http_body_util::{BodyExt, Full};
    use hyper::body::Bytes;
    use serde_json::Value;

    use super::*;
    use crate::cluster::series::FINISH_TIME;
    use crate::time::Clock;

    /// A request the evictor sent: method, path, content type and JSON body.
    type Sent = (String, String, String, Value);

    /// An evictor whose client answers in memory: `status` for each request (by method), an Event
    /// or a kube `Status` as the API server would; every request is logged.
    fn evictor(status: fn(&str) -> u16, dry_run: bool) -> (KubeEvictor, Arc<Mutex<Vec<Sent>>>) {
        let log = Arc::new(Mutex::new(Vec::new()));
        let sent = log.clone();
        let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
            let sent = sent.clone();
            async move {
                let (parts, body) = request.into_parts();
                let bytes = body.collect().await?.to_bytes();
                let content_type = parts.headers.get("content-type").map_or("", |v| v.to_str().unwrap_or(""));
                let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                let method = parts.method.as_str().to_owned();
                sent.lock().unwrap().push((method.clone(), parts.uri.path().to_owned(), content_type.to_owned(), body));
                let code = status(&method);
                let reply = if code < 300 {
                    json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {}})
                } else {
                    json!({"apiVersion": "v1", "kind": "Status", "status": "Failure", "code": code, "message": "refused"})
                };
                let response = http::Response::builder()
                    .status(code)
                    .header("content-type", "application/json")
                    .body(Full::new(Bytes::from(reply.to_string())))
                    .expect("a response");
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(response)
            }
        });
        let client = Client::new(service, "default");
        let clock = Clock::starting_at(Timestamp::from_unix_seconds(1_700_000_000));
        (KubeEvictor::new(client, dry_run, None, Throttle::unlimited(clock)), log)
    }

    fn ok(_: &str) -> u16 {
        200
    }

    fn pod() -> PodRef {
        PodRef { key: PodKey::new("default", "web-0"), uid: "uid-1".into(), node: "n1".into() }
    }

    fn sent(log: &Mutex<Vec<Sent>>) -> Vec<(String, Value)> {
        log.lock().unwrap().iter().map(|(method, _, _, body)| (method.clone(), body.clone())).collect()
    }

    fn series_patch(count: u32, seconds: u64) -> Value {
        let last = Timestamp::from_unix_seconds(1_700_000_000 + i64::try_from(seconds).unwrap());
        json!({"series": {"count": count, "lastObservedTime": MicroTime(wall(last))}})
    }

    /// Lets `span` of paused time pass a tenth of a second at a time, so that the timers due on the
    /// way fire and the writes they start run as it goes (one `advance` over the whole span would jump
    /// past the timers that a woken task arms again).
    async fn pass(span: Duration) {
        let step = Duration::from_millis(100);
        let steps = u32::try_from(span.as_millis() / step.as_millis()).unwrap();
        for _ in 0..steps {
            tokio::time::advance(step).await;
        }
        tokio::time::advance(span - step * steps).await;
    }

    #[tokio::test(start_paused = true)]
    async fn repeated_event_is_one_post_then_the_series_at_once_and_its_last_count_when_it_ends() {
        let (evictor, log) = evictor(ok, false);
        for _ in 0..4 {
            evictor.notify(&pod(), Notice::Cancelling(Controller::NodeTaints)).await;
            pass(Duration::from_secs(10)).await;
        }
        let requests = sent(&log);
        assert_eq!(requests.len(), 2, "{requests:#?}");
        assert_eq!(requests[0].0, "POST");
        assert_eq!(requests[0].1["note"], "Cancelling deletion of Pod default/web-0");
        assert_eq!(requests[0].1["regarding"]["uid"], "uid-1");
        assert!(requests[0].1["series"].is_null(), "a first occurrence has no series");
        let name = requests[0].1["metadata"]["name"].as_str().unwrap().to_owned();
        assert_eq!(requests[1], ("PATCH".to_owned(), series_patch(2, 10)));
        // Counted since: written when the series ends, one generation after the last occurrence.
        pass(FINISH_TIME).await;
        assert_eq!(sent(&log).len(), 2, "not yet: the series has not ended");
        pass(FINISH_TIME).await;
        let requests = log.lock().unwrap().clone();
        assert_eq!(requests.len(), 3, "{requests:#?}");
        let (method, path, content_type, body) = &requests[2];
        assert_eq!((method.as_str(), body), ("PATCH", &series_patch(4, 30)));
        assert_eq!(path, &format!("/apis/events.k8s.io/v1/namespaces/default/events/{name}"));
        assert_eq!(content_type, "application/strategic-merge-patch+json");
    }

    #[tokio::test(start_paused = true)]
    async fn series_of_an_event_gone_creates_it_again_with_its_series() {
        let (evictor, log) = evictor(|method| if method == "PATCH" { 404 } else { 201 }, false);
        evictor.notify(&pod(), Notice::Marking(Controller::NodeTaints)).await;
        pass(Duration::from_secs(10)).await;
        evictor.notify(&pod(), Notice::Marking(Controller::NodeTaints)).await;
        let requests = sent(&log);
        let methods: Vec<&str> = requests.iter().map(|(method, _)| method.as_str()).collect();
        assert_eq!(methods, ["POST", "PATCH", "POST"]);
        let (first, again) = (&requests[0].1, &requests[2].1);
        assert_eq!(again["metadata"]["name"], first["metadata"]["name"], "upstream's name, again");
        assert_eq!(again["eventTime"], first["eventTime"]);
        assert_eq!(again["series"], series_patch(2, 10)["series"]);
        assert_eq!(again["note"], "Marking for deletion Pod default/web-0");
    }

    #[tokio::test(start_paused = true)]
    async fn counts_held_back_are_written_when_run_stops_and_a_dry_run_writes_nothing() {
        let (writing, log) = evictor(ok, false);
        for _ in 0..3 {
            writing.notify(&pod(), Notice::Cancelling(Controller::NodeTaints)).await;
            pass(Duration::from_secs(1)).await;
        }
        writing.flush().await;
        let requests = sent(&log);
        assert_eq!(requests.len(), 3, "{requests:#?}");
        assert_eq!(requests[2], ("PATCH".to_owned(), series_patch(3, 2)));
        let (dry, log) = evictor(ok, true);
        for _ in 0..3 {
            dry.notify(&pod(), Notice::Cancelling(Controller::NodeTaints)).await;
        }
        dry.flush().await;
        assert!(sent(&log).is_empty());
    }
}
