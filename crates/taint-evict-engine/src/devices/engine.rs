//! `run`'s device-taint controller: the DRA objects and the pods that name claims, kept current by
//! their changes. After each change every such pod is evaluated again ([`DeviceTaints::pod`]: they
//! are few, a claim per GPU pod), and its deadline kept, replaced or dropped; the actions are those
//! of the node-taint [`Engine`](crate::Engine), so one runtime carries both out.
//!
//! As upstream's controller (1.35+): the deadline is absolute (a taint's `timeAdded` plus the
//! tolerated time), so it is the same after a restart; a pod already terminating is left alone;
//! dropping a pending deletion says `Cancelling deletion` (a deleted pod's silently); a pod is
//! deleted at most once (by UID).

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::Arc;

use super::taints::{Claim, ClaimUse, DeviceTaints, DeviceTolerance, Devices, Rule, Slice};
use crate::Action;
use crate::model::{PodKey, PodRef, Uid};
use crate::queue::{Cause, Ticket, Work};
use crate::time::Timestamp;

/// A pod as the device-taint controller reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DevicePod {
    /// The pod (bound to a node).
    pub pod: PodRef,
    /// The claims it names.
    pub uses: Vec<ClaimUse>,
    /// `metadata.deletionTimestamp` is set.
    pub terminating: bool,
}

/// A change the device-taint controller is told of.
#[derive(Clone, Debug)]
pub enum DeviceInput {
    /// Every ResourceSlice, listed anew.
    SlicesListed(Vec<Slice>),
    /// A slice added or changed.
    SliceApplied(Slice),
    /// A slice deleted, by name.
    SliceDeleted(Arc<str>),
    /// Every ResourceClaim, listed anew.
    ClaimsListed(Vec<Claim>),
    /// A claim added or changed.
    ClaimApplied(Claim),
    /// A claim deleted: namespace and name.
    ClaimDeleted(Arc<str>, Arc<str>),
    /// Every DeviceTaintRule, listed anew.
    RulesListed(Vec<Rule>),
    /// A rule added or changed.
    RuleApplied(Rule),
    /// A rule deleted, by name.
    RuleDeleted(Arc<str>),
    /// Every bound pod that names a claim, listed anew.
    PodsListed(Vec<DevicePod>),
    /// A pod added or changed (one that names no claim is forgotten).
    PodApplied(DevicePod),
    /// A pod deleted.
    PodDeleted(PodKey),
    /// The deletion of [`Action::Evict`] with this ticket ended.
    EvictionFinished {
        /// The pod.
        pod: PodKey,
        /// The ticket of its [`Action::Evict`].
        ticket: Ticket,
    },
}

/// A pending deletion.
#[derive(Clone, Debug)]
struct Pending {
    pod: PodRef,
    work: Work,
    ticket: Ticket,
    /// Its [`Action::Evict`] was given.
    fired: bool,
}

/// The device-taint controller, driven as the [`Engine`](crate::Engine) is: `handle*` in,
/// `poll_*` out.
#[derive(Debug)]
pub struct DeviceEngine {
    minor: u32,
    /// The DRA objects, and the claims of the pods that name any (`uses`, the one place they are kept).
    devices: Devices,
    /// The bound pods that name a claim, and whether each is terminating.
    pods: BTreeMap<PodKey, (PodRef, bool)>,
    pending: BTreeMap<PodKey, Pending>,
    /// The UIDs deleted once: never again.
    deleted: HashSet<Uid>,
    next_ticket: u64,
    actions: VecDeque<Action>,
}

impl DeviceEngine {
    /// The controller of Kubernetes `1.minor`, knowing nothing yet.
    #[must_use]
    pub fn new(minor: u32) -> Self {
        Self {
            minor,
            devices: Devices::default(),
            pods: BTreeMap::new(),
            pending: BTreeMap::new(),
            deleted: HashSet::new(),
            next_ticket: 0,
            actions: VecDeque::new(),
        }
    }

    /// Applies `input` at `now` and evaluates the pods again (unless it changed nothing they read).
    pub fn handle(&mut self, input: DeviceInput, now: Timestamp) {
        let devices = &mut self.devices;
        match input {
            DeviceInput::SlicesListed(slices) => devices.slices = slices,
            DeviceInput::SliceApplied(slice) => upsert(&mut devices.slices, slice, |a, b| a.name == b.name),
            DeviceInput::SliceDeleted(name) => devices.slices.retain(|s| s.name != name),
            DeviceInput::ClaimsListed(claims) => devices.claims = claims,
            DeviceInput::ClaimApplied(claim) => {
                upsert(&mut devices.claims, claim, |a, b| (&a.namespace, &a.name) == (&b.namespace, &b.name));
            }
            DeviceInput::ClaimDeleted(namespace, name) => {
                devices.claims.retain(|c| (&c.namespace, &c.name) != (&namespace, &name));
            }
            DeviceInput::RulesListed(rules) => devices.rules = rules,
            DeviceInput::RuleApplied(rule) => upsert(&mut devices.rules, rule, |a, b| a.name == b.name),
            DeviceInput::RuleDeleted(name) => devices.rules.retain(|r| r.name != name),
            DeviceInput::PodsListed(pods) => {
                let pods = pods.into_iter().filter(|p| !p.uses.is_empty());
                let (pods, uses) = pods
                    .map(|p| {
                        let key = p.pod.key.clone();
                        ((key.clone(), (p.pod, p.terminating)), (key, p.uses))
                    })
                    .unzip();
                (self.pods, devices.uses) = (pods, uses);
            }
            // A change of a pod that names no claim, and named none, changes nothing: most pods.
            DeviceInput::PodApplied(pod) if pod.uses.is_empty() && !self.pods.contains_key(&pod.pod.key) => return,
            DeviceInput::PodDeleted(key) if !self.pods.contains_key(&key) => return,
            DeviceInput::PodApplied(pod) if pod.uses.is_empty() => {
                self.pods.remove(&pod.pod.key);
                devices.uses.remove(&pod.pod.key);
            }
            DeviceInput::PodApplied(DevicePod { pod, uses, terminating }) => {
                let same = self.pods.get(&pod.key) == Some(&(pod.clone(), terminating))
                    && devices.uses.get(&pod.key) == Some(&uses);
                if same {
                    return;
                }
                devices.uses.insert(pod.key.clone(), uses);
                self.pods.insert(pod.key.clone(), (pod, terminating));
            }
            DeviceInput::PodDeleted(key) => {
                self.pods.remove(&key);
                devices.uses.remove(&key);
            }
            DeviceInput::EvictionFinished { pod, ticket } => {
                if self.pending.get(&pod).is_some_and(|p| p.ticket == ticket)
                    && let Some(done) = self.pending.remove(&pod)
                {
                    self.deleted.insert(done.pod.uid);
                }
                return;
            }
        }
        self.evaluate(now);
    }

    /// Starts afresh at `now` from what it knows (a new term as leader): the deletions pending are
    /// forgotten, unannounced, and evaluated again; those due are given again.
    pub fn restart(&mut self, now: Timestamp) {
        self.pending.clear();
        self.actions.clear();
        self.evaluate(now);
    }

    /// Gives [`Action::Evict`] for every deadline due at `now`.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        for pending in self.pending.values_mut().filter(|p| !p.fired && p.work.fire <= now) {
            pending.fired = true;
            let (pod, work, ticket) = (pending.pod.clone(), pending.work, pending.ticket);
            self.actions.push_back(Action::Evict { pod, work, ticket });
        }
    }

    /// When [`DeviceEngine::handle_timeout`] must be called next.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.pending.values().filter(|p| !p.fired).map(|p| p.work.fire).min()
    }

    /// The next decision to carry out, oldest first.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// The deletions pending (not yet given to carry out).
    pub fn scheduled(&self) -> impl Iterator<Item = (&PodRef, &Work)> {
        self.pending.values().filter(|p| !p.fired).map(|p| (&p.pod, &p.work))
    }

    /// Each pod's deletion as the controller wants it now, against the one pending.
    fn evaluate(&mut self, now: Timestamp) {
        let taints = DeviceTaints::new(&self.devices, self.minor);
        let mut wanted: BTreeMap<PodKey, (PodRef, Work)> = BTreeMap::new();
        for (key, (pod, terminating)) in &self.pods {
            if *terminating || self.deleted.contains(&pod.uid) {
                continue;
            }
            let report = taints.pod(key, &pod.uid);
            let Some(deciding) = report.deciding() else { continue };
            let Some(fire) = deciding.deadline else { continue };
            let cause = match deciding.tolerance {
                DeviceTolerance::For(seconds) => Cause::Expired { seconds },
                DeviceTolerance::Untolerated | DeviceTolerance::Forever => Cause::Untolerated,
            };
            let created = deciding.taint.time_added.unwrap_or(fire);
            wanted.insert(key.clone(), (pod.clone(), Work { created, fire, cause }));
        }
        let gone: Vec<PodKey> = self.pending.keys().filter(|key| !wanted.contains_key(*key)).cloned().collect();
        for key in gone {
            let Some(pending) = self.pending.remove(&key) else { continue };
            let action = match (pending.fired, self.pods.contains_key(&key)) {
                (true, _) => Action::Withdrawn { pod: pending.pod, ticket: pending.ticket },
                // A pod deleted takes its deletion with it, silently.
                (false, false) => continue,
                (false, true) => Action::Cancelled { pod: pending.pod, work: pending.work },
            };
            self.actions.push_back(action);
        }
        for (key, (pod, work)) in wanted {
            if let Some(pending) = self.pending.get(&key) {
                if pending.work.fire == work.fire && pending.pod.uid == pod.uid {
                    continue;
                }
                if pending.fired {
                    self.actions.push_back(Action::Withdrawn { pod: pending.pod.clone(), ticket: pending.ticket });
                }
            }
            self.next_ticket += 1;
            let ticket = Ticket::foreign(self.next_ticket);
            let fired = work.fire <= now;
            self.actions.push_back(if fired {
                Action::Evict { pod: pod.clone(), work, ticket }
            } else {
                Action::Scheduled { pod: pod.clone(), work }
            });
            self.pending.insert(key, Pending { pod, work, ticket, fired });
        }
    }
}

fn upsert<T>(list: &mut Vec<T>, item: T, same: impl Fn(&T, &T) -> bool) {
    match list.iter_mut().find(|existing| same(existing, &item)) {
        Some(existing) => *existing = item,
        None => list.push(item),
    }
}
