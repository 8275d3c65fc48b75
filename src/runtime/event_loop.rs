//! `run`'s loop: the watches' changes fed to the engine, its due deletions handed to the executor,
//! what happened reported; with an election, one term as leader after another.

use std::future::Future;
use std::sync::Arc;

use futures::FutureExt;

use tokio::sync::{mpsc, watch};

use super::absent::Absent;
use super::cap::Cap;
use super::carried::Carried;
use super::changes::{NodeChange, PodChange};
use super::driver::{Driver, Step};
use super::engine_input::{device_pod_input, node_change_input, pod_change_input};
use super::events::Notices;
use super::evictor::{Controller, Evictor, Notice, Outcome};
use super::executor::{Done, Executor, Job, Outlets, Refused};
use super::gaps::Gaps;
use super::ledger::Ledger;
use super::lists::Lists;
use super::options::{Leadership, RunOptions, Sources};
use super::replicas::{Guard, Replicas};
use super::report::{HeldBy, LetGo, Report, RunEvent, Summary};
use super::terminating::Terminating;
use crate::engine::devices::{DeviceEngine, DeviceInput};
use crate::engine::lifecycle::ConditionTaint;
use crate::engine::model::{Node, NodeName, PodKey, PodRef};
use crate::engine::queue::{EntryState, Ticket, Work};
use crate::engine::snapshot::{Owner, Snapshot};
use crate::engine::start::Seeding;
use crate::engine::time::Timestamp;
use crate::engine::{Action, Engine, Input};
use crate::metrics::Metrics;
use crate::time::Clock;

/// Runs until `shutdown` resolves (or both sources end), then drains and returns the summary (also
/// sent as the last report).
///
/// Nothing is decided before both initial lists are in. With an election, the lists are kept up to
/// date while another instance leads, and each term as leader starts from a replay of them, as `run`
/// starts; a term ends at once when leadership is lost (deletions under way are abandoned).
pub async fn run<E: Evictor>(
    mut options: RunOptions,
    sources: Sources,
    evictor: E,
    clock: Clock,
    report: mpsc::UnboundedSender<Report>,
    shutdown: impl Future<Output = ()>,
) -> Summary {
    let Sources { nodes, pods, devices, replicas: replica_pods, controller_acquired, mut leadership } = sources;
    // Without a watch of its own, the replicas are counted from the pods followed.
    let replicas_apart = replica_pods.is_some();
    let mut driver = Driver::new(nodes, pods, clock.clone()).with_devices(devices).with_replicas(replica_pods);
    let device_minor = options.device_minor;
    let keep_last_ready = options.policy.keep_last_ready;
    let max_deletions = options.policy.max_deletions;
    let ledger = leadership.ledger().cloned().unwrap_or_default();
    let notices = Notices::start(evictor.clone());
    let absent = Absent::new(options.asked.clone());
    let seeding = Seeding {
        restart_countdowns: options.policy.restart_countdowns,
        not_ready: std::mem::take(&mut options.not_ready),
        monitor_period: options.node_monitor_period,
        edited: std::collections::BTreeMap::new(),
    };
    let mut run = Loop {
        summary: Summary { dry_run: evictor.is_dry_run(), ..Summary::default() },
        dry_run: evictor.is_dry_run(),
        evictor,
        clock,
        report,
        metrics: options.metrics.clone(),
        options,
        terminating: Terminating::default(),
        replicas: keep_last_ready.then(Replicas::default),
        replicas_apart,
        replicas_listed: !replicas_apart,
        gaps: Gaps::default(),
        devices: device_minor.map(DeviceEngine::new),
        shadow: None,
        notices,
        absent,
        cap: Cap::new(max_deletions, ledger.clone(), leadership.ledger().is_some()),
        carried: Carried::new(ledger),
        seeding,
    };
    tokio::pin!(shutdown);

    let mut lists = Lists::default();
    let keep = leadership.is_elected();
    // A standby's engine is seeded once the Lease its leader holds was read: the countdowns it
    // carries take the replay's place (a Lease never read leaves the next term to seed from the lists).
    let ledger = leadership.ledger().cloned();
    let read = |ledger: &Option<Ledger>| ledger.as_ref().is_none_or(Ledger::adopted);
    loop {
        // Listing, then following: keep the lists current until both are in and this instance leads.
        while !lists.complete() || !run.replicas_listed || !leadership.leading() {
            tokio::select! {
                biased;
                () = &mut shutdown => return run.finish(None).await,
                step = driver.next(run.shadow.as_ref().and_then(Engine::poll_timeout)) => match step {
                    Some(step) => run.follow(&mut lists, step),
                    None => return run.finish(None).await,
                },
                _ = leadership.changed(), if lists.complete() => {}
                () = read_from_another(ledger.as_ref()), if lists.complete() && run.replicas_listed && !read(&ledger) => {}
            }
            if lists.complete() && run.replicas_listed {
                run.metrics.set_ready();
                // A leader says it after its `synced` line; this instance follows (or lists again),
                // its engine following every countdown as the leader's does, deciding nothing.
                if !leadership.leading() {
                    run.check_absent(lists.node_names());
                    if run.shadow.is_none() && read(&ledger) {
                        let snapshot = lists.copy(controller_acquired);
                        let mut engine = run.seeded(&snapshot);
                        while engine.poll_action().is_some() {}
                        run.shadow = Some(engine);
                    }
                }
            }
        }
        // The changes already received are taken before the term begins: the lists may have been
        // read well before (a start-up's other reads, a wait for the Lease), and a pod deleted since
        // must not be seeded as the lists had it, to be deleted again.
        for _ in 0..QUEUED_BEFORE_A_TERM {
            match driver.next(None).now_or_never() {
                Some(Some(step)) => run.follow(&mut lists, step),
                _ => break,
            }
        }
        let snapshot = lists.snapshot(keep, controller_acquired);
        let engine = match run.shadow.take() {
            Some(engine) => engine,
            None => run.seeded(&snapshot),
        };
        let mut term = run.begin(engine, snapshot.nodes.iter().map(|node| &node.name), snapshot.pods.len());
        drop(snapshot);
        let ended = run.lead(&mut term, &mut driver, &mut leadership, &mut lists, keep, &mut shutdown).await;
        match ended {
            Ended::Stop => return run.finish(Some(term)).await,
            Ended::Lost => {
                lists.take_back(&term.engine, &run.terminating);
                let abandoned = term.executor.abort();
                run.metrics.set_scheduled(0);
                if abandoned > 0 {
                    run.send(RunEvent::Warning {
                        message: format!("leadership lost: {abandoned} deletions under way abandoned"),
                    });
                }
                // It follows on, deciding nothing: the next term continues its countdowns.
                run.shadow = Some(term.engine);
            }
        }
    }
}

/// Resolves once `ledger` has read a Lease held by another; never without one.
async fn read_from_another(ledger: Option<&Ledger>) {
    match ledger {
        Some(ledger) => ledger.read_from_another().await,
        None => std::future::pending().await,
    }
}

/// What `--keep-last-ready` says of a pod whose deletion is due.
enum Verdict {
    /// Not guarded (or the guard is off).
    Free,
    /// Another replica of its workload is ready (by name): it may go.
    Spare(String),
    /// The last ready replica of the workload of this controller: held; `true` when the workload
    /// has no other pod.
    Last(Owner, bool),
}

/// How a term as leader ended.
enum Ended {
    /// Shutdown, or the sources ended.
    Stop,
    /// Leadership was lost.
    Lost,
}

/// One term as leader: the engine and the deletions it started.
struct Term<E> {
    engine: Engine,
    executor: Executor<E>,
    done: mpsc::UnboundedReceiver<Done>,
    stop: watch::Sender<bool>,
    /// Deletions due while a watch is interrupted, or whose retries an interruption stopped: each
    /// waits for the re-lists, which the engine decides again from (it withdraws those it no longer
    /// wants), and is then carried out.
    held: Vec<Job>,
    /// Deletions due past `--max-deletions`, in the order they fell due: each goes when the window
    /// frees a slot.
    capped: std::collections::VecDeque<Job>,
    /// Deletions of the last ready replica of a workload (`--keep-last-ready`), with its controller:
    /// each goes once another replica is ready, or once the pod is no longer a ready one.
    kept: Vec<(Job, Owner)>,
    /// With `--max-deletions`: evictions a PodDisruptionBudget refused, their slot freed, each
    /// waiting for its retry ([`Refused::retry_at`]), when it takes a slot again.
    refused: Vec<Job>,
    /// Deletions under way that the engine decided again (a taint change that leaves the pod due):
    /// their results come back under the first ticket, told to the engine under the new one.
    renewed: std::collections::HashMap<(PodKey, Ticket), Ticket>,
}

impl<E: Evictor> Term<E> {
    /// The engine decided `old` again as `new` (with `work`): a deletion `run` holds (held, capped,
    /// kept, refused) takes the new ticket in place, keeping its place, its slot and the earlier
    /// deadline; one under way goes on. Returns whether there was one.
    fn renew(&mut self, key: &PodKey, old: Ticket, new: Ticket, work: Work) -> bool {
        let same = |job: &&mut Job| job.ticket == old && job.pod.key == *key;
        let waiting = self.held.iter_mut().chain(&mut self.capped).chain(self.kept.iter_mut().map(|(job, _)| job));
        if let Some(job) = waiting.chain(&mut self.refused).find(same) {
            job.ticket = new;
            if work.fire < job.work.fire {
                job.work = work;
            }
            return true;
        }
        if self.executor.renew(key, old, new) {
            self.renewed.insert((key.clone(), old), new);
            return true;
        }
        false
    }
}

/// What lasts across terms.
struct Loop<E> {
    summary: Summary,
    dry_run: bool,
    evictor: E,
    clock: Clock,
    report: mpsc::UnboundedSender<Report>,
    metrics: Arc<Metrics>,
    options: RunOptions,
    /// Pods already being deleted: their work is done without another DELETE.
    terminating: Terminating,
    /// With `--keep-last-ready`: the pods of workloads, and which are ready.
    replicas: Option<Replicas>,
    /// The replicas have a watch of their own (the pods on every node), not the pods followed.
    replicas_apart: bool,
    /// The replicas' first list is in (at once when they are the pods followed): no term begins before.
    replicas_listed: bool,
    /// The watches interrupted and not yet listed again.
    gaps: Gaps,
    /// The device-taint controller, when device taints are enforced: it follows the DRA objects
    /// across terms, and acts while leading.
    devices: Option<DeviceEngine>,
    /// While another instance leads: the engine, following every change as the leader's does and
    /// deciding nothing, so that a term taking over continues each countdown as it ran (a deletion
    /// that fell due meanwhile and is not carried out is due at once), not the replay's reconstruction.
    shadow: Option<Engine>,
    /// The events' writer: every event goes through it, one at a time.
    notices: Notices,
    /// The nodes asked for and missing from the lists, said once.
    absent: Absent,
    /// `--max-deletions`, counted across terms (and, with a Lease, across leaders and restarts).
    cap: Cap,
    /// The countdowns a replay cannot see, carried to the next `run` on the Lease.
    carried: Carried,
    /// How each engine is seeded: the countdowns restarted or continued, and what the first
    /// seeding's replay keeps (the taints swapped, the pods edited: the first term's only).
    seeding: Seeding,
}

/// At most this many changes already received are taken before a term begins (the watches' queues
/// hold 1,024 each): a cluster that changes faster than they are taken does not hold the term back.
const QUEUED_BEFORE_A_TERM: usize = 4096;

impl<E: Evictor> Loop<E> {
    fn send(&self, event: RunEvent) {
        let _ = self.report.send(Report { at: self.clock.now(), event });
    }

    /// Follows a change while no term runs: the lists kept current, and what lasts across terms.
    fn follow(&mut self, lists: &mut Lists, step: Step) {
        match step {
            Step::Node(change, now) => {
                self.gaps.node(&change, now);
                self.follow_absent(&change);
                if let Some(input) = node_change_input(&change)
                    && let Some(mut shadow) = self.shadow.take()
                {
                    let before = Carried::taints_before(&shadow, &change);
                    shadow.handle(input, now);
                    for (node, before) in before {
                        self.carried.taints_changed(&shadow, node, &before);
                    }
                    self.shadow = Some(shadow);
                }
                lists.node(change);
            }
            Step::Pod(change, now) => {
                self.gaps.pod(&change, now);
                self.terminating.track(&change);
                if let Some(input) = pod_change_input(&change)
                    && let Some(mut shadow) = self.shadow.take()
                {
                    let before = Carried::tolerations_before(&shadow, &change);
                    shadow.handle(input, now);
                    for (pod, before) in before {
                        self.carried.tolerations_changed(&shadow, pod, &before);
                    }
                    self.shadow = Some(shadow);
                }
                if !self.replicas_apart {
                    self.follow_replicas(&change);
                }
                if let Some(input) = device_pod_input(&change) {
                    self.follow_devices(input, now);
                }
                lists.pod(change);
                self.metrics.set_pods(lists.pod_count());
            }
            Step::Device(input, now) => self.follow_devices(input, now),
            Step::Replicas(change) => self.follow_replicas(&change),
            Step::Timeout(now) => {
                if let Some(shadow) = &mut self.shadow {
                    shadow.handle_timeout(now);
                }
            }
        }
        // Decided by another instance: what falls due waits in the engine for a term of this one.
        if let Some(shadow) = &mut self.shadow {
            while shadow.poll_action().is_some() {}
        }
    }

    /// Notes a list of nodes for the next check of the nodes asked for, and a node that came.
    fn follow_absent(&mut self, change: &NodeChange) {
        match change {
            NodeChange::Listed(_) => self.absent.listed(),
            NodeChange::Applied(node) => self.absent.seen(&node.name),
            NodeChange::Deleted(_) | NodeChange::Left(_) | NodeChange::Interrupted => {}
        }
    }

    /// Says which nodes asked for the latest list lacks, if it was not said before.
    fn check_absent<'a>(&mut self, nodes: impl IntoIterator<Item = &'a NodeName>) {
        if let Some(message) = self.absent.check(nodes) {
            self.send(RunEvent::Warning { message });
        }
    }

    /// While not leading: the device-taint controller follows the change, deciding nothing.
    fn follow_devices(&mut self, input: DeviceInput, now: Timestamp) {
        if let Some(devices) = &mut self.devices {
            devices.handle(input, now);
            while devices.poll_action().is_some() {}
        }
    }

    /// An engine seeded from `snapshot` (docs/run.md, its start: overdue at once, others keep the
    /// replay's deadlines, the countdowns the Lease carries continued; or every countdown
    /// restarted), through the engine's start-up path that `plan -w` shares. Its first decisions
    /// wait in it.
    fn seeded(&mut self, snapshot: &Snapshot) -> Engine {
        let mut engine = crate::host::engine();
        self.seeding.edited.extend(self.options.edited.take());
        let carried = &mut self.carried;
        let continued = |work, nodes: &[Node]| carried.continued(work, snapshot, nodes);
        self.seeding.seed(&mut engine, snapshot, self.clock.now(), crate::host::host(), continued);
        engine
    }

    /// Begins a term with `engine` (seeded from the lists, or followed since while another instance
    /// led: it knows every countdown as it ran) and starts what is due, `nodes` the nodes listed.
    fn begin<'a>(&mut self, engine: Engine, nodes: impl IntoIterator<Item = &'a NodeName>, pods: usize) -> Term<E> {
        let (done_tx, done) = mpsc::unbounded_channel();
        let (stop, stop_rx) = watch::channel(false);
        let outlets = Outlets { done: done_tx, report: self.report.clone(), notifier: self.notices.notifier() };
        let executor = Executor::new(
            self.evictor.clone(),
            self.clock.clone(),
            self.options.policy.concurrency,
            outlets,
            stop_rx,
            self.metrics.clone(),
        );
        let executor = if self.cap.limit().is_some() { executor.handing_back_refusals() } else { executor };
        let mut term = Term {
            engine,
            executor,
            done,
            stop,
            held: Vec::new(),
            capped: std::collections::VecDeque::new(),
            kept: Vec::new(),
            refused: Vec::new(),
            renewed: std::collections::HashMap::new(),
        };
        let now = self.clock.now();
        self.cap.begin(now);
        self.carried.hand_over();
        if let Some(devices) = &mut self.devices {
            devices.restart(now);
        }
        // The deletions that fell due while another instance led (or before a first term) and are
        // not carried out: due now. The engine's own first decisions follow.
        let queued: Vec<Action> = std::iter::from_fn(|| term.engine.poll_action()).collect();
        let fresh: std::collections::HashSet<Ticket> = queued
            .iter()
            .filter_map(|action| match action {
                Action::Evict { ticket, .. } => Some(*ticket),
                _ => None,
            })
            .collect();
        let earlier: Vec<Action> = term
            .engine
            .pending()
            .filter(|(_, entry)| entry.state == EntryState::InFlight && !fresh.contains(&entry.ticket))
            .map(|(pod, entry)| Action::Evict { pod, work: entry.work, ticket: entry.ticket })
            .collect();
        let nodes: Vec<&NodeName> = nodes.into_iter().collect();
        let terminating = earlier
            .iter()
            .chain(&queued)
            .filter(|action| matches!(action, Action::Evict { pod, .. } if self.terminating.contains(pod)))
            .count();
        self.send(RunEvent::Synced {
            nodes: nodes.len(),
            pods,
            scheduled: term.engine.armed(),
            terminating,
            due: earlier.len() + fresh.len() - terminating,
            restarted_countdowns: self.options.policy.restart_countdowns,
        });
        self.check_absent(nodes);
        for action in earlier.into_iter().chain(queued) {
            self.act(&mut term, action, Controller::NodeTaints);
        }
        self.drain_actions(&mut term);
        term
    }

    /// Feeds changes to the engine and carries out its decisions until shutdown or lost leadership.
    async fn lead(
        &mut self,
        term: &mut Term<E>,
        driver: &mut Driver,
        leadership: &mut Leadership,
        lists: &mut Lists,
        keep: bool,
        shutdown: &mut std::pin::Pin<&mut impl Future<Output = ()>>,
    ) -> Ended {
        loop {
            tokio::select! {
                biased;
                () = shutdown.as_mut() => return Ended::Stop,
                leading = leadership.changed() => if !leading {
                    return Ended::Lost;
                },
                step = driver.next(self.poll_timeout(term)) => match step {
                    Some(Step::Node(change, now)) => {
                        self.interrupted(term, matches!(change, NodeChange::Interrupted));
                        self.gaps.node(&change, now);
                        let before = Carried::taints_before(&term.engine, &change);
                        if let Some(input) = node_change_input(&change) {
                            term.engine.handle(input, now);
                        }
                        for (node, before) in before {
                            self.carried.taints_changed(&term.engine, node, &before);
                        }
                        self.follow_absent(&change);
                        if let NodeChange::Listed(nodes) = &change {
                            self.check_absent(nodes.iter().map(|node| &node.name));
                        }
                        if keep {
                            lists.node(change);
                        }
                    }
                    Some(Step::Pod(change, now)) => {
                        self.interrupted(term, matches!(change, PodChange::Interrupted));
                        self.gaps.pod(&change, now);
                        self.terminating.track(&change);
                        if !self.replicas_apart {
                            self.follow_replicas(&change);
                        }
                        let before = Carried::tolerations_before(&term.engine, &change);
                        if let Some(input) = pod_change_input(&change) {
                            term.engine.handle(input, now);
                        }
                        for (pod, before) in before {
                            self.carried.tolerations_changed(&term.engine, pod, &before);
                        }
                        if let (Some(devices), Some(input)) = (&mut self.devices, device_pod_input(&change)) {
                            devices.handle(input, now);
                        }
                        self.metrics.set_pods(term.engine.pod_count());
                        if keep {
                            lists.bound(&change);
                        }
                    }
                    Some(Step::Replicas(change)) => self.follow_replicas(&change),
                    Some(Step::Device(input, now)) => {
                        if let Some(devices) = &mut self.devices {
                            devices.handle(input, now);
                        }
                    }
                    Some(Step::Timeout(now)) => {
                        term.engine.handle_timeout(now);
                        if let Some(devices) = &mut self.devices {
                            devices.handle_timeout(now);
                        }
                    }
                    None => return Ended::Stop,
                },
                Some(done) = term.done.recv() => self.finished(term, done, driver.now()),
            }
            self.drain_actions(term);
            self.release(term);
            if self.gaps.open().is_none() {
                self.rekeep(term);
                self.uncap(term);
                self.retry_refused(term);
            }
            self.count_held(term);
        }
    }

    /// Sets the held deletions' gauge, by what holds them.
    fn count_held(&self, term: &Term<E>) {
        let counts = [term.held.len(), term.capped.len(), term.kept.len()];
        for (by, count) in HeldBy::ALL.into_iter().zip(counts) {
            self.metrics.set_held(by.as_str(), count);
        }
    }

    /// A watch broke (`interrupted`): the deletions under way make no further attempt on decisions
    /// taken before it; they wait with those that fall due meanwhile (docs/run.md, "Continuous
    /// watches").
    fn interrupted(&mut self, term: &mut Term<E>, interrupted: bool) {
        if interrupted && self.gaps.open().is_none() {
            let suspended = term.executor.suspend();
            if suspended > 0 {
                self.send(RunEvent::Warning {
                    message: format!(
                        "a watch broke: {suspended} deletions under way make no further attempt until the nodes \
                         and pods are listed again"
                    ),
                });
            }
        }
    }

    /// Once every watch is listed again, the deletions held are carried out: the engine has decided
    /// again from the new lists, and withdrawn those it no longer wants.
    fn release(&mut self, term: &mut Term<E>) {
        if self.gaps.open().is_some() {
            return;
        }
        // Resumed whether or not anything was held: a gap with nothing under way would otherwise
        // leave every later deletion suspended at its start.
        term.executor.resume();
        // Each was decided while a watch was broken, on lists of two instants, or before the gap and
        // still waiting (capped, kept, refused): decided again on the lists of now, it goes only if
        // still due for the same cause (withdrawn ones are dropped).
        let now = self.clock.now();
        let waiting = term.held.iter().chain(&term.capped).chain(term.kept.iter().map(|(job, _)| job));
        let reconsider: Vec<Input> = waiting
            .chain(&term.refused)
            .filter(|job| job.controller == Controller::NodeTaints)
            .map(|job| Input::Reconsider { pod: job.pod.key.clone(), ticket: job.ticket })
            .collect();
        for input in reconsider {
            term.engine.handle(input, now);
        }
        self.drain_actions(term);
        if term.held.is_empty() {
            return;
        }
        let held = std::mem::take(&mut term.held);
        self.send(RunEvent::Released { count: held.len() });
        for job in held {
            self.start(term, job);
        }
    }

    /// Holds `job` until the interrupted watches are listed again, and says so.
    fn hold(&mut self, term: &mut Term<E>, job: Job) {
        if let Some((since, watches)) = self.gaps.open() {
            self.send(RunEvent::Held { pod: job.pod.clone(), work: job.work, watches, since });
        }
        term.held.push(job);
    }

    /// The earliest deadline of both controllers.
    fn poll_timeout(&self, term: &Term<E>) -> Option<Timestamp> {
        let devices = self.devices.as_ref().and_then(DeviceEngine::poll_timeout);
        // While a watch is broken the capped deletions wait for the lists, not for a slot: a slot free
        // now would fire the timer again and again.
        let waiting = !term.capped.is_empty() && self.gaps.open().is_none();
        let slot = self.cap.next_slot(self.clock.now()).filter(|_| waiting);
        let retry = Self::next_retry(term).filter(|_| self.gaps.open().is_none());
        term.engine.poll_timeout().into_iter().chain(devices).chain(slot).chain(retry).min()
    }

    /// Starts `job`, unless `--keep-last-ready` holds it (the pod is the last ready replica of its
    /// workload) or `--max-deletions` is reached; either way, says so.
    fn start(&mut self, term: &mut Term<E>, job: Job) {
        if let Verdict::Last(owner, only) = self.guard(term, &job.pod) {
            let (pod, work, dry_run) = (job.pod.clone(), job.work, self.dry_run);
            self.send(RunEvent::Kept { pod, work, owner: owner.clone(), only, dry_run });
            term.kept.push((job, owner));
            return;
        }
        self.start_or_cap(term, job);
    }

    /// What `--keep-last-ready` says of `pod` now ([`Verdict::Free`] when it is off). The pods
    /// whose deletion `run` has under way or holds are going: they do not count as ready replicas
    /// (the ones it keeps do: they stay).
    fn guard(&self, term: &Term<E>, pod: &PodRef) -> Verdict {
        let Some(replicas) = &self.replicas else { return Verdict::Free };
        let taken = |key: &PodKey| {
            term.executor.has(key)
                || term.held.iter().any(|job| job.pod.key == *key)
                || term.capped.iter().any(|job| job.pod.key == *key)
                || term.refused.iter().any(|job| job.pod.key == *key)
        };
        // A node the node lifecycle controller lost carries its NoExecute taint: the pods it marked
        // not ready there count as ready, as their kubelet last said.
        let lost = |node: &NodeName| {
            term.engine
                .taints(node)
                .iter()
                .any(|taint| taint.is_no_execute() && ConditionTaint::from_key(&taint.key).is_some())
        };
        match replicas.guard(pod, taken, lost) {
            Guard::Free => Verdict::Free,
            Guard::Spare(replica) => Verdict::Spare(replica.name().to_owned()),
            Guard::Last { workload, only } => Verdict::Last(workload.owner.clone(), only),
        }
    }

    /// Decides again on the deletions `--keep-last-ready` holds: each whose pod has a ready replica
    /// beside it now, or is no longer a ready replica itself, goes ahead (and says so).
    fn rekeep(&mut self, term: &mut Term<E>) {
        let mut at = 0;
        while at < term.kept.len() {
            let why = match self.guard(term, &term.kept[at].0.pod) {
                Verdict::Last(..) => {
                    at += 1;
                    continue;
                }
                Verdict::Spare(replica) => LetGo::Spare { replica },
                Verdict::Free => LetGo::NotReady,
            };
            let (job, owner) = term.kept.remove(at);
            self.send(RunEvent::Unkept { pod: job.pod.clone(), owner, why, dry_run: self.dry_run });
            if self.terminating.contains(&job.pod) {
                self.already_terminating(term, job);
            } else {
                self.start_or_cap(term, job);
            }
        }
    }

    /// Follows a pod change for `--keep-last-ready`.
    fn follow_replicas(&mut self, change: &PodChange) {
        let Some(replicas) = &mut self.replicas else { return };
        match change {
            PodChange::Listed(pods) => {
                self.replicas_listed = true;
                replicas.listed(pods);
            }
            PodChange::Applied(pod) => replicas.applied(pod),
            PodChange::Deleted(key) => replicas.deleted(key),
            PodChange::Interrupted | PodChange::Resumed => {}
        }
    }

    /// `job`'s pod is already being deleted: its work is done without another DELETE.
    fn already_terminating(&mut self, term: &mut Term<E>, job: Job) {
        if self.terminating.ours(&job.pod) {
            // Deleted by this run and counted then.
            return self.evicted(term, job.controller, job.pod.key, job.ticket);
        }
        self.summary.gone += 1;
        let reason = "already terminating: its deletion was issued before".to_owned();
        self.send(RunEvent::Gone { pod: job.pod.clone(), reason });
        self.evicted(term, job.controller, job.pod.key, job.ticket);
    }

    /// Starts `job`, unless `--max-deletions` is reached: then it waits for a slot, and says so.
    fn start_or_cap(&mut self, term: &mut Term<E>, job: Job) {
        // Those held before it go first, while slots are free; past them, it is held only once the
        // window is really full.
        self.uncap(term);
        let now = self.clock.now();
        match (self.cap.limit(), self.cap.next_slot(now)) {
            (Some((max, window)), Some(slot)) if slot > now => {
                self.send(RunEvent::Capped { pod: job.pod.clone(), work: job.work, max, window, until: slot });
                term.capped.push_back(job);
            }
            (cap, _) => {
                let job = if cap.is_some() { self.count(job, now) } else { job };
                term.executor.submit(job);
            }
        }
    }

    /// Starts the deletions `--max-deletions` held back, as the window frees slots.
    fn uncap(&mut self, term: &mut Term<E>) {
        let now = self.clock.now();
        self.cap.prune(now);
        while !term.capped.is_empty() && self.cap.next_slot(now).is_some_and(|slot| slot <= now) {
            let job = term.capped.pop_front().expect("not empty");
            let job = self.count(job, now);
            term.executor.submit(job);
        }
    }

    /// Counts `job`, started `now`, in `--max-deletions`' window; with a Lease, the job waits until
    /// the count is written on it.
    fn count(&mut self, mut job: Job, now: Timestamp) -> Job {
        job.counted_at = Some(now);
        job.recorded = self.cap.count(now);
        job
    }

    /// A PodDisruptionBudget refused `job`'s eviction: no deletion, so its slot is free again; it
    /// waits for its retry, when it takes a slot again (or is capped).
    fn refused(&mut self, term: &mut Term<E>, mut job: Job) {
        if let Some(at) = job.counted_at.take() {
            self.cap.give_back(at);
        }
        job.recorded = None;
        term.refused.push(job);
    }

    /// A refused eviction no longer wanted is given up, as the executor gives up a refusal: its
    /// slot is free, it is no longer failing, and it says so.
    fn give_up(&mut self, term: &mut Term<E>, job: &mut Job) {
        if let Some(at) = job.counted_at.take() {
            self.cap.give_back(at);
        }
        term.executor.forget(&job.pod.key);
        let budget = job.refused.as_ref().map(|refused| refused.blocked.budget().to_owned());
        self.send(RunEvent::Withdrawn { pod: job.pod.clone(), budget: budget.unwrap_or_default() });
    }

    /// The refused evictions whose retry is due go again, each taking a slot or capped.
    fn retry_refused(&mut self, term: &mut Term<E>) {
        let now = self.clock.now();
        let due = |job: &Job| job.refused.as_ref().is_none_or(|refused| refused.retry_at <= now);
        if !term.refused.iter().any(due) {
            return;
        }
        let (due, waiting): (Vec<Job>, Vec<Job>) = std::mem::take(&mut term.refused).into_iter().partition(due);
        term.refused = waiting;
        for job in due {
            self.start_or_cap(term, job);
        }
    }

    /// When the next refused eviction is retried.
    fn next_retry(term: &Term<E>) -> Option<Timestamp> {
        term.refused.iter().filter_map(|job| job.refused.as_ref().map(|refused: &Refused| refused.retry_at)).min()
    }

    fn drain_actions(&mut self, term: &mut Term<E>) {
        loop {
            let actions: Vec<Action> = std::iter::from_fn(|| term.engine.poll_action()).collect();
            if actions.is_empty() {
                break;
            }
            self.act_all(term, actions, Controller::NodeTaints);
        }
        loop {
            let actions: Vec<Action> =
                std::iter::from_fn(|| self.devices.as_mut().and_then(DeviceEngine::poll_action)).collect();
            if actions.is_empty() {
                break;
            }
            self.act_all(term, actions, Controller::DeviceTaints);
        }
        let devices = self.devices.as_ref().map_or(0, |devices| devices.scheduled().count());
        self.metrics.set_scheduled(term.engine.armed() + devices);
    }

    /// Carries out a batch of `controller`'s decisions. A deletion withdrawn and decided again in the
    /// same batch (upstream cancels and adds the work again when a taint change leaves the pod due)
    /// is the same deletion: it keeps its place, its slot and its deadline, and says nothing
    /// (no `dropped`, `withdrawn`, `capped` again).
    fn act_all(&mut self, term: &mut Term<E>, actions: Vec<Action>, controller: Controller) {
        let mut renewed = std::collections::HashSet::new();
        for (at, action) in actions.iter().enumerate() {
            let Action::Withdrawn { pod, ticket } = action else { continue };
            let again = actions[at + 1..].iter().enumerate().find_map(|(later, action)| match action {
                Action::Evict { pod: due, work, ticket: new } if due.key == pod.key => {
                    Some((at + 1 + later, *work, *new))
                }
                _ => None,
            });
            if let Some((later, work, new)) = again
                && !self.terminating.contains(pod)
                && term.renew(&pod.key, *ticket, new, work)
            {
                renewed.extend([at, later]);
            }
        }
        for (at, action) in actions.into_iter().enumerate() {
            if !renewed.contains(&at) {
                self.act(term, action, controller);
            }
        }
    }

    /// Carries out one of `controller`'s decisions.
    fn act(&mut self, term: &mut Term<E>, action: Action, controller: Controller) {
        if let Action::Evict { pod, .. } | Action::Cancelled { pod, .. } = &action
            && controller == Controller::NodeTaints
        {
            self.carried.ended(&pod.key);
        }
        match action {
            // A pod this run deleted, terminating: the engine's decisions on it are not news.
            Action::Scheduled { pod, .. } | Action::Cancelled { pod, .. } if self.terminating.ours(&pod) => {}
            Action::Scheduled { pod, work } => self.send(RunEvent::Scheduled { pod, work }),
            Action::Cancelled { pod, work } => {
                self.summary.cancelled += 1;
                self.metrics.cancelled();
                self.notices.send(&pod, Notice::Cancelling(controller));
                self.send(RunEvent::Cancelled { pod, work });
            }
            Action::Evict { pod, work, ticket } if self.terminating.contains(&pod) => {
                self.already_terminating(term, Job::new(pod, work, ticket, controller));
            }
            Action::Evict { pod, work, ticket } if self.gaps.open().is_some() => {
                self.hold(term, Job::new(pod, work, ticket, controller));
            }
            Action::Evict { pod, work, ticket } => self.start(term, Job::new(pod, work, ticket, controller)),
            Action::Withdrawn { pod, ticket } => {
                let same = |job: &Job| job.ticket == ticket && job.pod.key == pod.key;
                if let Some(at) = term.held.iter().position(same) {
                    // Held, and no longer wanted: never sent.
                    let job = term.held.remove(at);
                    self.send(RunEvent::Dropped { pod: job.pod });
                } else if let Some(at) = term.capped.iter().position(same) {
                    let job = term.capped.remove(at).expect("found");
                    self.send(RunEvent::Dropped { pod: job.pod });
                } else if let Some(at) = term.refused.iter().position(same) {
                    // Refused, and no longer wanted: given up, as the executor gives up a refusal.
                    let mut job = term.refused.remove(at);
                    self.give_up(term, &mut job);
                } else if let Some(at) = term.kept.iter().position(|(job, _)| same(job)) {
                    let (job, owner) = term.kept.remove(at);
                    let dry_run = self.dry_run;
                    self.send(RunEvent::Unkept { pod: job.pod, owner, why: LetGo::NotDue, dry_run });
                } else {
                    term.executor.withdraw(&pod.key, ticket);
                }
            }
        }
    }

    /// Tells `controller` its deletion of `pod` ended.
    fn evicted(&mut self, term: &mut Term<E>, controller: Controller, pod: PodKey, ticket: Ticket) {
        let now = self.clock.now();
        match (controller, &mut self.devices) {
            (Controller::DeviceTaints, Some(devices)) => {
                devices.handle(DeviceInput::EvictionFinished { pod, ticket }, now)
            }
            _ => term.engine.handle(Input::EvictionFinished { pod, ticket }, now),
        }
    }

    fn finished(&mut self, term: &mut Term<E>, done: Done, now: Timestamp) {
        let withdrawn = term.executor.finished(&done);
        let Done { mut job, outcome, suspended } = done;
        // Decided again while under way: it goes on, and is told, under the new ticket.
        if let Some(new) = term.renewed.remove(&(job.pod.key.clone(), job.ticket)) {
            job.ticket = new;
        }
        if suspended && !withdrawn {
            // Its retries stopped at an interruption: it waits for the re-lists.
            return self.hold(term, job);
        }
        if matches!(outcome, Some(Outcome::Blocked { .. })) && job.refused.is_some() {
            if !withdrawn {
                return self.refused(term, job);
            }
            // Withdrawn before its refusal came back: given up, never retried.
            self.give_up(term, &mut job);
        }
        match outcome {
            Some(Outcome::Deleted) => {
                self.summary.deleted += 1;
                if !self.dry_run {
                    self.terminating.deleted(&job.pod);
                }
                if let Some(replicas) = &mut self.replicas {
                    replicas.carried_out(&job.pod);
                }
                if !self.dry_run {
                    self.metrics.deleted(now.nanos_since(job.work.fire) as f64 / 1e9);
                }
                self.send(RunEvent::Deleted { pod: job.pod.clone(), work: job.work, dry_run: self.dry_run });
            }
            Some(Outcome::Gone(reason)) => {
                self.summary.gone += 1;
                self.send(RunEvent::Gone { pod: job.pod.clone(), reason });
            }
            Some(Outcome::Failed { .. } | Outcome::Blocked { .. }) | None => {}
        }
        self.evicted(term, job.controller, job.pod.key, job.ticket);
    }

    /// Stops deciding, lets the deletions under way finish (up to the drain timeout), reports and
    /// returns the summary.
    async fn finish(mut self, term: Option<Term<E>>) -> Summary {
        let Some(mut term) = term else {
            self.send(RunEvent::Stopping { in_flight: 0 });
            let summary = self.summary.clone();
            self.send(RunEvent::Summary(summary.clone()));
            return summary;
        };
        let _ = term.stop.send(true);
        self.send(RunEvent::Stopping { in_flight: term.executor.in_flight() });
        let drain = tokio::time::sleep(self.options.policy.drain_timeout);
        tokio::pin!(drain);
        while term.executor.in_flight() > 0 {
            tokio::select! {
                Some(done) = term.done.recv() => self.finished(&mut term, done, self.clock.now()),
                () = &mut drain => break,
            }
        }
        // Then the events: those queued, and the counts of series the evictor holds back.
        let _ = tokio::time::timeout_at(drain.deadline(), self.notices.flush()).await;
        let mut summary = std::mem::take(&mut self.summary);
        summary.failed = term.executor.failing();
        summary.failed.sort_by(|a, b| a.0.key.cmp(&b.0.key));
        let mut scheduled: Vec<(PodRef, Timestamp)> = term
            .engine
            .pending()
            .filter(|(_, entry)| entry.state == EntryState::Armed)
            .map(|(pod, entry)| (pod, entry.work.fire))
            .collect();
        if let Some(devices) = &self.devices {
            scheduled.extend(devices.scheduled().map(|(pod, work)| (pod.clone(), work.fire)));
        }
        scheduled.sort_by(|a, b| (a.1, &a.0.key).cmp(&(b.1, &b.0.key)));
        summary.scheduled = scheduled;
        summary.held = held(&term);
        self.send(RunEvent::Summary(summary.clone()));
        summary
    }
}

/// The deletions `term` holds, with their deadlines and what holds them, by deadline.
fn held<E>(term: &Term<E>) -> Vec<(PodRef, Timestamp, HeldBy)> {
    let jobs = term.held.iter().map(|job| (job, HeldBy::WatchGap));
    let jobs = jobs.chain(term.capped.iter().map(|job| (job, HeldBy::MaxDeletions)));
    let jobs = jobs.chain(term.kept.iter().map(|(job, _)| (job, HeldBy::KeepLastReady)));
    let mut held: Vec<_> = jobs.map(|(job, by)| (job.pod.clone(), job.work.fire, by)).collect();
    held.sort_by(|a, b| (a.1, &a.0.key).cmp(&(b.1, &b.0.key)));
    held
}

#[cfg(test)]
// The loop's tests on tokio's paused clock measure its time directly.
#[allow(clippy::disallowed_methods)]
mod tests;
