//! The election's timing, as client-go's `LeaderElector` runs it: a candidate tries the lock every
//! retry period (jittered); a leader renews every retry period and stops leading as soon as it has
//! not renewed for the renew deadline, or finds another holder, before its claim can run out for the
//! others. What one attempt does is the [`Lock`]'s business (`cluster::lease` for a Lease).

use std::future::Future;
use std::hash::{BuildHasher, Hasher, RandomState};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use crate::metrics::Metrics;
use crate::runtime::ledger::Counted;
use crate::runtime::report::{LeaderState, Report, RunEvent};
use crate::time::Clock;

/// How one attempt on the lock ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tried {
    /// The lock is ours (acquired or renewed).
    Held,
    /// Another instance holds it.
    HeldBy(String),
    /// The lock could not be read or written; the reason in one line.
    Failed(String),
}

/// A lock candidates compete for.
pub trait Lock: Send + 'static {
    /// One attempt to take or renew the lock.
    fn try_acquire_or_renew(&mut self) -> impl Future<Output = Tried> + Send;
    /// Gives the lock up, if held.
    fn release(&mut self) -> impl Future<Output = ()> + Send;
}

/// The election's periods.
#[derive(Clone, Copy, Debug)]
pub struct Periods {
    /// How long a leader keeps trying to renew before it stops leading.
    pub renew_deadline: Duration,
    /// How often the lock is tried (and a leader renews).
    pub retry_period: Duration,
}

/// Who this candidate is and where it reports.
pub struct Candidate<L> {
    /// The lock.
    pub lock: L,
    /// The periods.
    pub periods: Periods,
    /// The lock's name for messages (`NAMESPACE/NAME`).
    pub lease: String,
    /// This instance's identity.
    pub identity: String,
    /// The clock reports are stamped with.
    pub clock: Clock,
    /// Where leadership changes and warnings go.
    pub report: mpsc::UnboundedSender<Report>,
    /// The `leader` gauge.
    pub metrics: Arc<Metrics>,
    /// A lone `run` (no `--leader-elect`): renewals that fail do not end its turn, only another
    /// holder does; it says nothing of leading unless it waited for another first.
    pub lone: bool,
    /// Changes when `--max-deletions`' count does: a leader writes the lock at once, not at its next
    /// renewal, so that the deletion counted waits no longer than one write.
    pub counted: Option<watch::Receiver<Counted>>,
}

/// A random number, different in every call and every process (no generator dependency).
pub(crate) fn random() -> u64 {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(u64::from(std::process::id()));
    hasher.finish()
}

/// `retry` stretched by a random factor in [1, 2.2), as client-go's `JitterUntil(…, 1.2, …)`: the
/// candidates do not all try at the same instant.
fn jittered(retry: Duration) -> Duration {
    let fraction = (random() >> 11) as f64 / (1u64 << 53) as f64;
    retry.mul_f64(1.0 + 1.2 * fraction)
}

impl<L: Lock> Candidate<L> {
    fn say(&self, state: LeaderState, holder: Option<String>, reason: Option<String>) {
        let event =
            RunEvent::Leadership { state, lease: self.lease.clone(), identity: self.identity.clone(), holder, reason };
        let _ = self.report.send(Report { at: self.clock.now(), event });
    }

    fn warn(&self, message: String) {
        let _ = self.report.send(Report { at: self.clock.now(), event: RunEvent::Warning { message } });
    }

    fn set_leading(&self, leading: &watch::Sender<bool>, value: bool) {
        self.metrics.set_leader(value);
        leading.send_replace(value);
    }

    /// Tries until the lock is ours: `Some(followed)`, whether another held it meanwhile; `None`
    /// if told to stop first.
    async fn acquire(&mut self, stop: &mut watch::Receiver<bool>) -> Option<bool> {
        let mut holder_said: Option<String> = None;
        let mut failing = false;
        loop {
            let tried = tokio::time::timeout(self.periods.renew_deadline, self.lock.try_acquire_or_renew()).await;
            match tried.unwrap_or_else(|_| Tried::Failed(format!("lease {}: no answer in time", self.lease))) {
                Tried::Held => return Some(holder_said.is_some()),
                Tried::HeldBy(holder) => {
                    failing = false;
                    if holder_said.as_ref() != Some(&holder) {
                        self.say(LeaderState::Following, Some(holder.clone()), None);
                        holder_said = Some(holder);
                    }
                }
                Tried::Failed(message) => {
                    if !failing {
                        self.warn(format!("leader election: {message}; retrying"));
                    }
                    failing = true;
                }
            }
            let next = self.clock.instant() + jittered(self.periods.retry_period);
            tokio::select! {
                () = tokio::time::sleep_until(next) => {}
                _ = stop.wait_for(|stop| *stop) => return None,
            }
        }
    }

    /// Renews every retry period until renewal fails for the renew deadline, another instance
    /// holds the lock, or `stop`. Returns `true` when told to stop (still leading).
    async fn keep(&mut self, leading: &watch::Sender<bool>, stop: &mut watch::Receiver<bool>) -> bool {
        let mut renewed = self.clock.instant();
        let mut counted = self.counted.clone();
        loop {
            let recount = async {
                let changed = match &mut counted {
                    Some(counted) => counted.changed().await.is_ok(),
                    None => false,
                };
                if !changed {
                    std::future::pending::<()>().await;
                }
            };
            tokio::select! {
                () = tokio::time::sleep_until(self.clock.instant() + self.periods.retry_period) => {}
                () = recount => {}
                _ = stop.wait_for(|stop| *stop) => return true,
            }
            loop {
                let deadline = renewed + self.periods.renew_deadline;
                let why = match tokio::time::timeout_at(deadline, self.lock.try_acquire_or_renew()).await {
                    Ok(Tried::Held) => {
                        renewed = self.clock.instant();
                        break;
                    }
                    Ok(Tried::HeldBy(holder)) => {
                        self.set_leading(leading, false);
                        self.say(LeaderState::Lost, Some(holder), Some("another instance holds the lease".into()));
                        return false;
                    }
                    Ok(Tried::Failed(message)) => message,
                    Err(_) => "no answer in time".to_owned(),
                };
                if self.clock.instant() >= deadline && !self.lone {
                    self.set_leading(leading, false);
                    let seconds = self.periods.renew_deadline.as_secs_f64();
                    self.say(LeaderState::Lost, None, Some(format!("not renewed within {seconds}s: {why}")));
                    return false;
                }
                let next = self.clock.instant() + self.periods.retry_period;
                let next = if self.lone { next } else { deadline.min(next) };
                tokio::select! {
                    () = tokio::time::sleep_until(next) => {}
                    _ = stop.wait_for(|stop| *stop) => return true,
                }
            }
        }
    }
}

/// Runs the election until `stop` turns true, then gives the lock up if held. `leading` says, at
/// every moment, whether this instance may decide and delete.
pub async fn elect<L: Lock>(
    mut candidate: Candidate<L>,
    leading: watch::Sender<bool>,
    mut stop: watch::Receiver<bool>,
) {
    candidate.set_leading(&leading, false);
    let mut waited = false;
    loop {
        let Some(followed) = candidate.acquire(&mut stop).await else { return };
        waited |= followed;
        candidate.set_leading(&leading, true);
        // A lone `run` that took the Lease at once leads as it always did: no line.
        if !candidate.lone || waited {
            candidate.say(LeaderState::Leading, Some(candidate.identity.clone()), None);
        }
        if candidate.keep(&leading, &mut stop).await {
            candidate.set_leading(&leading, false);
            candidate.lock.release().await;
            return;
        }
    }
}

#[cfg(test)]
// The tests measure tokio's paused time directly.
#[allow(clippy::disallowed_methods)]
mod tests {
    use std::collections::VecDeque;

    use std::sync::Mutex;
    use tokio::time::Instant;

    use super::*;

    /// A lock answering from a script, one answer per attempt (the last one repeats), recording
    /// when each attempt was made.
    #[derive(Clone, Default)]
    struct Scripted {
        answers: Arc<Mutex<VecDeque<Tried>>>,
        attempts: Arc<Mutex<Vec<Duration>>>,
        released: Arc<Mutex<bool>>,
        origin: Arc<Mutex<Option<Instant>>>,
    }

    impl Lock for Scripted {
        async fn try_acquire_or_renew(&mut self) -> Tried {
            let origin = *self.origin.lock().unwrap().get_or_insert_with(Instant::now);
            self.attempts.lock().unwrap().push(origin.elapsed());
            let mut answers = self.answers.lock().unwrap();
            let answer = if answers.len() > 1 { answers.pop_front() } else { answers.front().cloned() };
            answer.expect("a scripted answer")
        }

        async fn release(&mut self) {
            *self.released.lock().unwrap() = true;
        }
    }

    fn candidate(lock: Scripted) -> (Candidate<Scripted>, mpsc::UnboundedReceiver<Report>) {
        let (report, reports) = mpsc::unbounded_channel();
        let periods = Periods { renew_deadline: Duration::from_secs(10), retry_period: Duration::from_secs(2) };
        let clock = Clock::starting_at(crate::engine::time::Timestamp::from_unix_seconds(0));
        let identity = "me".to_owned();
        let candidate = Candidate {
            lock,
            periods,
            lease: "ns/lease".into(),
            identity,
            clock,
            report,
            metrics: Arc::default(),
            lone: false,
            counted: None,
        };
        (candidate, reports)
    }

    /// Waits (on the paused clock, at most two virtual minutes) until `leading` is `value`; returns
    /// the virtual time it took.
    async fn until(leading: &mut watch::Receiver<bool>, value: bool) -> Duration {
        let start = Instant::now();
        let changed = tokio::time::timeout(Duration::from_secs(120), leading.wait_for(|v| *v == value)).await;
        changed.expect("leadership changes within two minutes").expect("the election runs");
        start.elapsed()
    }

    #[tokio::test(start_paused = true)]
    async fn a_leader_that_cannot_renew_stops_leading_at_the_renew_deadline() {
        let lock = Scripted::default();
        // Held at 0, renewed at 2 and 4, then every attempt fails.
        lock.answers.lock().unwrap().extend([Tried::Held, Tried::Held, Tried::Held, Tried::Failed("down".into())]);
        let (candidate, mut reports) = candidate(lock.clone());
        let (leading_tx, mut leading) = watch::channel(false);
        let (_stop, stop) = watch::channel(false);
        tokio::spawn(elect(candidate, leading_tx, stop));
        assert_eq!(until(&mut leading, true).await, Duration::ZERO);
        // The last renewal was at 4 s: leadership ends at 4 + 10 s, not at the lease's expiry.
        assert_eq!(until(&mut leading, false).await, Duration::from_secs(14));
        let attempts = lock.attempts.lock().unwrap().clone();
        let seconds: Vec<u64> = attempts.iter().map(Duration::as_secs).take(8).collect();
        assert_eq!(seconds, [0, 2, 4, 6, 8, 10, 12, 14], "renewals every retry period");
        let lost = std::iter::from_fn(|| reports.try_recv().ok()).find_map(|r| match r.event {
            RunEvent::Leadership { state: LeaderState::Lost, reason, .. } => reason,
            _ => None,
        });
        assert_eq!(lost.as_deref(), Some("not renewed within 10s: down"));
    }

    #[tokio::test(start_paused = true)]
    async fn another_holder_ends_leadership_at_once_and_stop_releases() {
        let lock = Scripted::default();
        let other = || Tried::HeldBy("other".into());
        lock.answers.lock().unwrap().extend([Tried::Held, other(), other(), Tried::Held]);
        let (candidate, _reports) = candidate(lock.clone());
        let (leading_tx, mut leading) = watch::channel(false);
        let (stop_tx, stop) = watch::channel(false);
        let election = tokio::spawn(elect(candidate, leading_tx, stop));
        until(&mut leading, true).await;
        // The first renewal (at 2 s) finds another holder: no waiting for the renew deadline.
        assert_eq!(until(&mut leading, false).await, Duration::from_secs(2));
        // Back to candidate: held by the other at once, taken at the next (jittered) try.
        let again = until(&mut leading, true).await;
        assert!(again >= Duration::from_secs(2) && again < Duration::from_millis(4_400), "{again:?}");
        stop_tx.send_replace(true);
        election.await.expect("the election ends");
        assert!(!*leading.borrow());
        assert!(*lock.released.lock().unwrap(), "the lock is given up on stop");
    }

    #[tokio::test(start_paused = true)]
    async fn a_lone_run_keeps_its_turn_through_failed_renewals_and_ends_it_when_another_holds_the_lease() {
        let lock = Scripted::default();
        let down = || Tried::Failed("down".into());
        // Held at 0, then 10 failed renewals (20 s, past the renew deadline), held again, then
        // another holder.
        let mut answers = vec![Tried::Held];
        answers.extend(std::iter::repeat_with(down).take(10));
        answers.extend([Tried::Held, Tried::HeldBy("other".into())]);
        lock.answers.lock().unwrap().extend(answers);
        let (mut candidate, mut reports) = candidate(lock.clone());
        candidate.lone = true;
        let (leading_tx, mut leading) = watch::channel(false);
        let (_stop, stop) = watch::channel(false);
        tokio::spawn(elect(candidate, leading_tx, stop));
        assert_eq!(until(&mut leading, true).await, Duration::ZERO);
        // Leading until the renewal that finds the other holder: 11 retries later.
        assert_eq!(until(&mut leading, false).await, Duration::from_secs(24));
        let states: Vec<LeaderState> = std::iter::from_fn(|| reports.try_recv().ok())
            .filter_map(|r| match r.event {
                RunEvent::Leadership { state, .. } => Some(state),
                _ => None,
            })
            .collect();
        assert_eq!(
            states,
            [LeaderState::Lost, LeaderState::Following],
            "taking a free lease says nothing; losing it does"
        );
    }

    #[test]
    fn jitter_stays_within_client_go_bounds() {
        for _ in 0..100 {
            let d = jittered(Duration::from_secs(2));
            assert!(d >= Duration::from_secs(2) && d < Duration::from_millis(4_400), "{d:?}");
        }
    }
}
