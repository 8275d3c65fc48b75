//! Carrying out deletions: bounded concurrency, one at a time per pod, retries with capped exponential
//! backoff (upstream tries 5 times 10 ms apart and gives up, kubernetes/kubernetes#140639; here a
//! deletion is retried until the pod is gone or `run` stops).
//!
//! An eviction a PodDisruptionBudget refuses ([`Outcome::Blocked`], `--mode evict`) is retried on a
//! backoff of its own (5 s doubling to 30 s) and, while it waits, holds no permit: pods blocked by
//! their budgets never keep other pods from going at their deadlines.
//!
//! The doubling is written out (`delay * 2`, capped) rather than taken from kube's watcher backoff:
//! those delays are part of `run`'s documented behaviour, tested on tokio's paused clock, and jitter
//! would only make them harder to state.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Semaphore, mpsc, watch};

use super::events::Notifier;
use super::evictor::{Controller, Evictor, Notice, Outcome};
use super::ledger::Recorded;
use super::throttle::Throttle;
use crate::engine::model::{PodKey, PodRef};
use crate::engine::queue::{Ticket, Work};
use crate::engine::time::Timestamp;
use crate::metrics::{FailureReason, Metrics};
use crate::runtime::report::{Report, RunEvent};
use crate::time::Clock;

/// The first retry's delay.
pub const FIRST_RETRY: Duration = Duration::from_secs(1);
/// The longest delay between retries.
pub const MAX_RETRY: Duration = Duration::from_secs(30);
/// The first retry of an eviction a PodDisruptionBudget refused (upstream's `kubectl drain` retries
/// every 5 s); it doubles up to [`MAX_BLOCKED_RETRY`].
pub const FIRST_BLOCKED_RETRY: Duration = Duration::from_secs(5);
/// The longest delay between retries of a blocked eviction: how late a pod may go once its budget
/// allows it.
pub const MAX_BLOCKED_RETRY: Duration = Duration::from_secs(30);

/// A deletion to carry out.
#[derive(Clone, Debug)]
pub struct Job {
    /// The pod.
    pub pod: PodRef,
    /// Its deletion and clock.
    pub work: Work,
    /// The engine's ticket for it.
    pub ticket: Ticket,
    /// Whose decision it carries out.
    pub controller: Controller,
    /// Counted by `--max-deletions` with a Lease: nothing is sent before the count is written.
    pub recorded: Option<Recorded>,
    /// When `--max-deletions` counted it (the slot it holds), if it did.
    pub counted_at: Option<Timestamp>,
    /// Refused by a PodDisruptionBudget and handed back to `run`, which retries it (see
    /// [`Executor::handing_back_refusals`]).
    pub refused: Option<Refused>,
}

impl Job {
    /// A job for the engine's decision `ticket` on `pod`.
    #[must_use]
    pub fn new(pod: PodRef, work: Work, ticket: Ticket, controller: Controller) -> Self {
        Self { pod, work, ticket, controller, recorded: None, counted_at: None, refused: None }
    }
}

/// Where a refused eviction stands when handed back.
#[derive(Clone, Debug)]
pub struct Refused {
    /// The pod counted in `taint_evict_blocked_pods` under its budget, until it goes or is given up.
    pub blocked: Arc<crate::metrics::Blocked>,
    /// The next refusal's backoff.
    pub delay: Duration,
    /// The attempts made.
    pub attempts: u32,
    /// When to try again.
    pub retry_at: Timestamp,
}

/// A finished deletion, reported back to the engine.
#[derive(Debug)]
pub struct Done {
    /// The job.
    pub job: Job,
    /// How it ended (`None`: abandoned, because `run` is stopping or the deletion was withdrawn).
    pub outcome: Option<Outcome>,
    /// Its retries stopped because a watch broke ([`Executor::suspend`]): the decision waits for
    /// the re-lists.
    pub suspended: bool,
}

/// A pod's running job and the ones queued behind it.
struct Running {
    ticket: Ticket,
    /// Stops the task at once (leadership lost).
    task: tokio::task::AbortHandle,
    /// Set when the running job is withdrawn: it makes no further attempt.
    withdrawn: watch::Sender<bool>,
    waiting: VecDeque<Job>,
}

/// Runs jobs on tokio tasks; results come back on the channel given to [`Executor::new`].
pub struct Executor<E> {
    evictor: E,
    clock: Clock,
    permits: Arc<Semaphore>,
    /// Per pod: the running job, and the jobs waiting behind it.
    running: HashMap<PodKey, Running>,
    done: mpsc::UnboundedSender<Done>,
    report: mpsc::UnboundedSender<Report>,
    stopping: watch::Receiver<bool>,
    /// Set while a watch is interrupted: the jobs make no further attempt.
    suspended: watch::Sender<bool>,
    /// Pods whose last attempt failed, with the reason, until one succeeds.
    failing: Arc<Mutex<HashMap<PodKey, (PodRef, String)>>>,
    metrics: Arc<Metrics>,
    /// Where the jobs' events go: the events' writer.
    notifier: Notifier,
    /// A refused eviction ends its job ([`Job::refused`]) instead of waiting in it for its retry.
    hand_back: bool,
}

/// Where an executor's results, reports and events go.
pub struct Outlets {
    /// Finished jobs.
    pub done: mpsc::UnboundedSender<Done>,
    /// What happens, for the output.
    pub report: mpsc::UnboundedSender<Report>,
    /// The events' writer.
    pub notifier: Notifier,
}

impl<E: Evictor> Executor<E> {
    /// An executor running at most `concurrency` deletions at once.
    pub fn new(
        evictor: E,
        clock: Clock,
        concurrency: usize,
        outlets: Outlets,
        stopping: watch::Receiver<bool>,
        metrics: Arc<Metrics>,
    ) -> Self {
        let permits = Arc::new(Semaphore::new(concurrency.max(1)));
        let failing = Arc::default();
        let Outlets { done, report, notifier } = outlets;
        let running = HashMap::new();
        let suspended = watch::Sender::new(false);
        Self {
            evictor,
            clock,
            permits,
            running,
            done,
            report,
            stopping,
            suspended,
            failing,
            metrics,
            notifier,
            hand_back: false,
        }
    }

    /// An eviction a PodDisruptionBudget refuses comes back as done ([`Outcome::Blocked`], with
    /// [`Job::refused`]) for `run` to retry when its backoff ends: under `--max-deletions`, a refusal
    /// is no deletion and frees its slot, and the retry takes one again.
    #[must_use]
    pub fn handing_back_refusals(mut self) -> Self {
        self.hand_back = true;
        self
    }

    /// The pod's deletion is no longer wanted while `run` holds it refused: it is no longer failing.
    pub fn forget(&self, key: &PodKey) {
        self.failing.lock().expect("failing pods").remove(key);
    }

    /// The engine decided the deletion with ticket `old` again, as `new`: the job under way for it
    /// goes on under the new ticket (its result comes back under the old one). Returns whether one
    /// was under way.
    pub fn renew(&mut self, key: &PodKey, old: Ticket, new: Ticket) -> bool {
        let Some(running) = self.running.get_mut(key) else { return false };
        if running.ticket == old && !*running.withdrawn.borrow() {
            running.ticket = new;
            return true;
        }
        false
    }

    /// The evictor.
    pub fn evictor(&self) -> &E {
        &self.evictor
    }

    /// Jobs started or waiting.
    #[must_use]
    pub fn in_flight(&self) -> usize {
        self.running.values().map(|running| running.waiting.len() + 1).sum()
    }

    /// Whether a job of pod `key` is started or waiting.
    #[must_use]
    pub fn has(&self, key: &PodKey) -> bool {
        self.running.contains_key(key)
    }

    /// Pods whose last deletion attempt failed, with the reason, by pod.
    #[must_use]
    pub fn failing(&self) -> Vec<(PodRef, String)> {
        let mut failing: Vec<_> = self.failing.lock().expect("failing pods").values().cloned().collect();
        failing.sort_by(|a, b| a.0.key.cmp(&b.0.key));
        failing
    }

    /// Starts `job`, or queues it behind the pod's running one.
    pub fn submit(&mut self, job: Job) {
        match self.running.get_mut(&job.pod.key) {
            Some(running) => running.waiting.push_back(job),
            None => {
                let key = job.pod.key.clone();
                let running = self.spawn(job);
                self.running.insert(key, running);
            }
        }
    }

    /// The engine no longer wants the deletion with `ticket`: a queued job is dropped, a running one
    /// makes no further attempt (the attempt under way, if any, completes).
    pub fn withdraw(&mut self, key: &PodKey, ticket: Ticket) {
        if let Some(running) = self.running.get_mut(key) {
            running.waiting.retain(|job| job.ticket != ticket);
            if running.ticket == ticket {
                // Kept even once its task has ended: its result may still be on its way.
                running.withdrawn.send_replace(true);
            }
        }
    }

    /// A watch broke: every job makes no further attempt (an attempt under way completes) and comes
    /// back [`Done::suspended`], queued ones too, until [`Executor::resume`]. Returns how many jobs
    /// were started or waiting.
    pub fn suspend(&mut self) -> usize {
        self.suspended.send_replace(true);
        self.in_flight()
    }

    /// The watches are listed again: jobs submitted from now on are carried out.
    pub fn resume(&mut self) {
        self.suspended.send_replace(false);
    }

    /// Stops every job at once, mid-request if need be, and forgets the queued ones (leadership was
    /// lost: another instance decides now). Returns how many jobs were started or waiting.
    pub fn abort(&mut self) -> usize {
        let abandoned = self.in_flight();
        for (_, running) in self.running.drain() {
            running.task.abort();
        }
        self.failing.lock().expect("failing pods").clear();
        abandoned
    }

    /// Marks `done` finished and starts the pod's next job, if one waits. Returns whether the
    /// engine withdrew the job before its result was taken (after its task ended, too).
    pub fn finished(&mut self, done: &Done) -> bool {
        let key = &done.job.pod.key;
        let withdrawn = self.running.get(key).is_some_and(|running| *running.withdrawn.borrow());
        let next = self.running.get_mut(key).and_then(|running| running.waiting.pop_front());
        match next {
            Some(job) => {
                let waiting = self.running.remove(key).map(|r| r.waiting).unwrap_or_default();
                let mut running = self.spawn(job);
                running.waiting = waiting;
                self.running.insert(key.clone(), running);
            }
            None => {
                self.running.remove(key);
            }
        }
        withdrawn
    }

    fn spawn(&self, job: Job) -> Running {
        let (withdrawn_tx, mut withdrawn) = watch::channel(false);
        let ticket = job.ticket;
        let evictor = self.evictor.clone();
        let permits = self.permits.clone();
        let clock = self.clock.clone();
        let done = self.done.clone();
        let report = self.report.clone();
        let mut stopping = self.stopping.clone();
        let mut suspended = self.suspended.subscribe();
        let failing = self.failing.clone();
        let metrics = self.metrics.clone();
        let notifier = self.notifier.clone();
        let hand_back = self.hand_back;
        // A retry of a refusal handed back is the same eviction: it says nothing new as it starts.
        let retry = job.refused.is_some();
        // A free permit is taken here, so that deletions due together start (and say so) in the order
        // they were submitted, deadline first; the others wait for theirs in the task.
        let ready = permits.clone().try_acquire_owned().ok();
        let dry_run = evictor.is_dry_run();
        if ready.is_some() && !retry {
            let event = RunEvent::Evicting { pod: job.pod.clone(), work: job.work, dry_run };
            let _ = report.send(Report { at: clock.now(), event });
        }
        let task = tokio::spawn(async move {
            // Due from now until done, for the live view's backlog (also while it waits for a permit).
            let mut due = evictor.throttle().map(Throttle::deletion_due);
            let event = |event| Report { at: clock.now(), event };
            let permit = match ready {
                Some(permit) => permit,
                None => {
                    let Ok(permit) = permits.clone().acquire_owned().await else { return };
                    if !retry {
                        let _ =
                            report.send(event(RunEvent::Evicting { pod: job.pod.clone(), work: job.work, dry_run }));
                    }
                    permit
                }
            };
            let mut permit = Some(permit);
            // Upstream's recorder queues the event and goes on; so does this: the events' writer
            // writes it, after those sent before, and the deletion never waits for it (a shutdown
            // flushes the queue).
            if !retry {
                notifier.send(&job.pod, Notice::Marking(job.controller));
            }
            let mut delay = FIRST_RETRY;
            let mut blocked_delay = job.refused.as_ref().map_or(FIRST_BLOCKED_RETRY, |refused| refused.delay);
            // The budget refusing this pod now, counted in the metrics while it does.
            let mut blocked: Option<Arc<crate::metrics::Blocked>> =
                job.refused.as_ref().map(|refused| refused.blocked.clone());
            // Handed back to `run` after a refusal.
            let mut handed_back: Option<Refused> = None;
            let mut recorded = job.recorded.clone();
            // The engine withdrew the job while it waited: no further attempt; a blocked pod says so.
            let give_up = |blocked: Option<&crate::metrics::Blocked>| {
                failing.lock().expect("failing pods").remove(&job.pod.key);
                if let Some(blocked) = blocked {
                    let budget = blocked.budget().to_owned();
                    let _ = report.send(event(RunEvent::Withdrawn { pod: job.pod.clone(), budget }));
                }
            };
            let mut attempt = job.refused.as_ref().map_or(0, |refused| refused.attempts);
            let mut held = false;
            let outcome = loop {
                if *suspended.borrow_and_update() {
                    held = true;
                    break None;
                }
                if let Some(recorded) = recorded.take() {
                    tokio::select! {
                        () = recorded.written() => {}
                        _ = stopping.wait_for(|stop| *stop) => break None,
                        _ = withdrawn.wait_for(|gone| *gone) => {
                            give_up(blocked.as_deref());
                            break None;
                        }
                        _ = suspended.wait_for(|held| *held) => {
                            held = true;
                            break None;
                        }
                    }
                }
                if permit.is_none() {
                    tokio::select! {
                        acquired = permits.clone().acquire_owned() => match acquired {
                            Ok(acquired) => permit = Some(acquired),
                            Err(_) => break None,
                        },
                        _ = stopping.wait_for(|stop| *stop) => break None,
                        _ = withdrawn.wait_for(|gone| *gone) => {
                            give_up(blocked.as_deref());
                            break None;
                        }
                        _ = suspended.wait_for(|held| *held) => {
                            held = true;
                            break None;
                        }
                    }
                }
                attempt += 1;
                let started = clock.instant();
                let (resume, backs_off) = match evictor.evict(&job.pod, job.controller).await {
                    Outcome::Blocked { budget, message } => {
                        // A refusal for this pod only: it waits on its own backoff without holding a
                        // permit or counting in the limiter's backlog, and the writer goes on.
                        metrics.failed(FailureReason::DisruptionBudget);
                        if blocked.as_ref().is_none_or(|b| b.budget() != budget) {
                            drop(blocked.take());
                            blocked = Some(Arc::new(metrics.blocked(budget.clone())));
                            notifier.send(&job.pod, Notice::Blocked { budget: budget.clone() });
                        }
                        let reason = format!("blocked by PodDisruptionBudget {budget}: {message}");
                        failing.lock().expect("failing pods").insert(job.pod.key.clone(), (job.pod.clone(), reason));
                        let resume = clock.instant() + blocked_delay;
                        blocked_delay = (blocked_delay * 2).min(MAX_BLOCKED_RETRY);
                        let retry_at = clock.wall_at(resume);
                        let _ = report.send(event(RunEvent::Blocked {
                            pod: job.pod.clone(),
                            budget: budget.clone(),
                            message: message.clone(),
                            attempt,
                            retry_at,
                        }));
                        if let (true, Some(blocked)) = (hand_back, &blocked) {
                            let (blocked, delay, attempts) = (blocked.clone(), blocked_delay, attempt);
                            handed_back = Some(Refused { blocked, delay, attempts, retry_at });
                            break Some(Outcome::Blocked { budget, message });
                        }
                        permit = None;
                        due = None;
                        (resume, false)
                    }
                    Outcome::Failed { reason: kind, message: reason } => {
                        blocked = None;
                        // A 429 or 503 with `Retry-After` holds every write until then; this
                        // attempt is retried at that instant, without growing the backoff.
                        let held = evictor
                            .throttle()
                            .filter(|_| matches!(kind, FailureReason::Throttled | FailureReason::ServerError))
                            .filter(|throttle| throttle.pushed_back_since(started))
                            .and_then(Throttle::held_until);
                        metrics.failed(if held.is_some() { FailureReason::Throttled } else { kind });
                        failing
                            .lock()
                            .expect("failing pods")
                            .insert(job.pod.key.clone(), (job.pod.clone(), reason.clone()));
                        let resume = held.unwrap_or_else(|| clock.instant() + delay);
                        let retry_at = clock.wall_at(resume);
                        let failed = RunEvent::Failed { pod: job.pod.clone(), reason, attempt, retry_at };
                        let _ = report.send(event(failed));
                        (resume, held.is_none())
                    }
                    other => {
                        failing.lock().expect("failing pods").remove(&job.pod.key);
                        break Some(other);
                    }
                };
                tokio::select! {
                    () = tokio::time::sleep_until(resume) => {}
                    _ = stopping.wait_for(|stop| *stop) => break None,
                    _ = withdrawn.wait_for(|gone| *gone) => {
                        give_up(blocked.as_deref());
                        break None;
                    }
                    _ = suspended.wait_for(|held| *held) => {
                        held = true;
                        break None;
                    }
                }
                if backs_off {
                    delay = (delay * 2).min(MAX_RETRY);
                }
                if due.is_none() {
                    due = evictor.throttle().map(Throttle::deletion_due);
                }
            };
            // A job the engine withdrew meanwhile is not held to come back after the lists.
            if held && *withdrawn.borrow() {
                give_up(blocked.as_deref());
                held = false;
            }
            drop((blocked, permit, due));
            let job = Job { refused: handed_back, recorded: None, ..job };
            let _ = done.send(Done { job, outcome, suspended: held });
        });
        Running { ticket, task: task.abort_handle(), withdrawn: withdrawn_tx, waiting: VecDeque::new() }
    }
}

#[cfg(test)]
// The loop's tests on tokio's paused clock measure its time directly.
#[allow(clippy::disallowed_methods)]
mod tests;
