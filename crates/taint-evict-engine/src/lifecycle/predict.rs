//! The prediction: every reading of the snapshot the controller could be in, each replayed exactly.
//!
//! What a snapshot cannot tell is few numbers: the pass phase (known to about a second when the
//! controller wrote a timestamp, else anywhere in one period), how long passes take, where a token
//! falls within the 100 ms tainting tick, and what a whole-second timestamp truncated. Phases are
//! sampled densely (every [`STEP`], plus each instant where a node changes pass); each sample is
//! replayed in a "low" reading (every unknown at its earliest) and a "high" one (at its latest).
//! Within one reading the NLC is deterministic except for the queue's order, and the instants at
//! which a zone queue serves do not depend on that order: a node's earliest slot is the first one
//! after it is queued, its latest the first one at which no other queued node is left. Windows are
//! the hull over every reading, widened by [`STEP`].
//!
//! Cost: one replay per phase sample and reading, each linear in the nodes plus quadratic in the
//! nodes queued in one zone. Fine for a few dozen silent nodes; with hundreds failing at once it
//! would take seconds (the readings grow with them too): past [`MAX_UNSETTLED`] such nodes
//! [`Forecaster::predict`] drains each zone's queue instead (`lifecycle/drain.rs`), from each node's
//! instants bounded over a few phase samples.
//!
//! One simplification: a health pass is taken as one step. Upstream's tainting loop runs beside the
//! pass, so a node queued early in the pass that tips its zone into partial disruption (or every
//! zone into full disruption) can be tainted in the few milliseconds before the pass ends; here it
//! is held (spec vector 7, "usually: never").

use std::time::Duration;

use super::client::{WRITES_OF_TAINT, throttled, writes_of_silent};
use super::drain::{
    Bounds, ClientWait, Fate, Slots, TICK_SLACK, Zones, drain as drain_zones, interval, rate, zone_state,
};
use super::health::{
    Basis, ConditionTaint, Drain, Flags, Held, HeldReason, NodeForecast, NodeHealth, Observation, PredictedTaint,
    Prediction, Ready, ZoneForecast, ZoneKey, ZoneState, is_unsettled,
};
use crate::time::Timestamp;

const MS: i128 = 1_000_000;
const SECOND: i128 = 1_000_000_000;

/// From leader acquisition to the first pass: informer sync (measured 0.10–0.11 s in small clusters).
const SYNC: (i128, i128) = (50 * MS, 500 * MS);

/// How long one health pass takes; the next one starts a monitor period after it ends (measured
/// 1.5–2 ms in small clusters).
const PASS_DURATION: (i128, i128) = (MS / 20, 3 * MS);

/// Timestamps written as whole seconds hide up to this much.
const TRUNCATION: i128 = SECOND;

/// At most this many nodes with an ambiguous pass are each read against all the others.
const MAX_SINGLED_OUT: usize = 16;

/// The most nodes failing at once (silent or not ready) the exact search is made for: it grows with
/// the square of their number, about a second for this many. Past it, each zone's queue is drained
/// instead ([`Method::Drain`]).
pub const MAX_UNSETTLED: usize = 200;

/// Spacing of the phase samples; every window is widened by it.
const STEP: i128 = 20 * MS;

/// The drain reads the pass phase at this many anchors (of each pass duration), however unsure it is.
const DRAIN_SAMPLES: i128 = 16;

/// How a prediction is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Every reading of the snapshot replayed exactly: windows as narrow as the snapshot allows, in
    /// time growing with the square of the nodes failing at once.
    Search,
    /// Each zone's queue drained at its last state's rate in an order nobody sees: a node's window
    /// spans from when it may be queued to the slot by which its zone's queue has served every node
    /// that may be ahead of it. Linear in the nodes (after a sort); for outages past
    /// [`MAX_UNSETTLED`].
    Drain,
}

impl Method {
    /// The method for this many nodes unsettled at once.
    #[must_use]
    pub fn for_unsettled(unsettled: usize) -> Self {
        if unsettled > MAX_UNSETTLED { Self::Drain } else { Self::Search }
    }
}

/// Predicts, for every node, when the NLC adds its `unreachable`/`not-ready` NoExecute taint, or that
/// it will not; and every zone's state. Nodes that keep heartbeating are assumed to keep doing so,
/// and silent ones to stay silent.
#[must_use]
pub fn predict(observation: &Observation) -> Prediction {
    Forecaster::new(observation).predict()
}

/// What every prediction over one observation shares: the pass phase, the leader, the zones, each
/// node's course as observed and what the settled ones add up to per zone. [`Forecaster::predict`]
/// predicts the observation; [`Forecaster::predict_down`] the same with some nodes going down, as
/// [`predict`] would with those nodes marked `down`, at the cost of the nodes that move only.
pub struct Forecaster<'o> {
    observation: &'o Observation,
    timing: Timing,
    leader: Leader,
    zones: Vec<ZoneKey>,
    /// Each node's course as observed.
    courses: Vec<Course>,
    /// The zone's last NLC taint since the leader started, per zone.
    last_taint: Vec<Option<i128>>,
    phase: Phase,
    recoveries: Recoveries,
    /// The nodes as observed: those that may move, and the settled ones' sums.
    scene: Scene,
    /// How many nodes are unsettled as observed ([`unsettled`](super::health::unsettled)).
    unsettled: usize,
    /// The writes of the nodes marked since the leader started ([`marked`]).
    marked: Marked,
}

impl<'o> Forecaster<'o> {
    /// Reads `observation` once.
    #[must_use]
    pub fn new(observation: &'o Observation) -> Self {
        let timing = Timing::new(&observation.flags);
        let leader = Leader::read(observation);
        let zones: Vec<ZoneKey> = {
            let mut keys: Vec<ZoneKey> = observation.nodes.iter().map(|node| node.zone.clone()).collect();
            keys.sort();
            keys.dedup();
            keys
        };
        let zone_of = |key: &ZoneKey| zones.binary_search(key).expect("every node's zone is listed");
        let courses: Vec<Course> = observation
            .nodes
            .iter()
            .map(|node| Course::read(node, node.down, observation, &leader, zone_of(&node.zone)))
            .collect();
        let last_taint = last_taints(observation, &leader, zones.len(), &zone_of);
        let marked = marked(observation, &leader);
        let phase = Phase::estimate(observation, &leader, &timing, marked.overrun);
        let recoveries = recoveries(observation, zones.len(), &zone_of);
        let scene = Scene::new(&courses, zones.len());
        let unsettled = observation
            .nodes
            .iter()
            .filter(|node| is_unsettled(node, observation.now, observation.silent_after))
            .count();
        Self { observation, timing, leader, zones, courses, last_taint, phase, recoveries, scene, unsettled, marked }
    }

    /// How many nodes would be unsettled with the nodes of `down` (indices into the observation's
    /// nodes) going down: the prediction's search grows with their square.
    #[must_use]
    pub fn unsettled_with(&self, down: &[usize]) -> usize {
        let observation = self.observation;
        let settled_now =
            |&&i: &&usize| !is_unsettled(&observation.nodes[i], observation.now, observation.silent_after);
        self.unsettled + down.iter().filter(settled_now).count()
    }

    /// The prediction of the observation, every node and zone: by the exact search up to
    /// [`MAX_UNSETTLED`] nodes unsettled, past it by each zone's drain.
    #[must_use]
    pub fn predict(&self) -> Prediction {
        self.predict_by(self.method(&self.scene, self.unsettled))
    }

    /// The method for `scene`, `unsettled` nodes failing: the exact search replays the controller
    /// pass by pass, which holds only while its passes keep their period; once its own client may
    /// hold one back (more writes than its burst), each zone is drained (docs/node-lifecycle.md,
    /// "The controller's own client").
    fn method(&self, scene: &Scene, unsettled: usize) -> Method {
        if self.throttled(scene) > 0 { Method::Drain } else { Method::for_unsettled(unsettled) }
    }

    /// The prediction of the observation by `method`.
    #[must_use]
    pub fn predict_by(&self, method: Method) -> Prediction {
        let observation = self.observation;
        let (results, always_master, slots) = self.outcomes(&self.scene, method);
        let mut outcomes: Vec<Outcomes> = vec![Outcomes::default(); observation.nodes.len()];
        for (&i, outcome) in self.scene.moving.iter().zip(results) {
            outcomes[i] = outcome;
        }
        let initial = self.scene.initial_states(&observation.flags);
        let master_now = initial.iter().all(|zone| zone.0 == 0 || zone.1 == ZoneState::FullDisruption)
            && initial.iter().any(|zone| zone.0 > 0);
        let nodes = observation
            .nodes
            .iter()
            .zip(outcomes)
            .map(|(node, outcome)| forecast(node, outcome, always_master, self.leader.leaderless))
            .collect();
        let zones = self
            .zones
            .iter()
            .zip(initial)
            .enumerate()
            .map(|(index, (zone, (nodes, state, not_ready)))| ZoneForecast {
                zone: zone.clone(),
                state,
                nodes,
                not_ready,
                rate_per_second: if master_now { 0.0 } else { rate(state, nodes, &observation.flags) },
                drain: slots.iter().find(|slots| slots.zone == index).map(|slots| Drain {
                    nodes: slots.nodes,
                    // To the millisecond: a float32 rate of 0.1 gives 9.999999851 s.
                    every: Duration::from_millis(u64::try_from((slots.every + MS / 2) / MS).unwrap_or(u64::MAX)),
                    first: Timestamp::from_nanos(slots.first - STEP),
                    last: Timestamp::from_nanos(slots.last + STEP),
                }),
            })
            .collect();
        Prediction { nodes, zones, phase_known: self.phase.known, at: observation.now }
    }

    /// The forecasts of the nodes of `down` (indices into the observation's nodes, ascending) had
    /// they gone down: [`predict`]'s, with those nodes marked `down`, in the same order.
    #[must_use]
    pub fn predict_down(&self, down: &[usize]) -> Vec<NodeForecast> {
        self.forecast_down(down, None)
    }

    /// [`Forecaster::predict_down`] by `method`.
    #[must_use]
    pub fn predict_down_by(&self, down: &[usize], method: Method) -> Vec<NodeForecast> {
        self.forecast_down(down, Some(method))
    }

    /// [`Forecaster::predict_down`] by `method`, else by the method for the scene.
    fn forecast_down(&self, down: &[usize], method: Option<Method>) -> Vec<NodeForecast> {
        let observation = self.observation;
        let overrides: Vec<(usize, Course)> = down
            .iter()
            .map(|&i| {
                let node = &observation.nodes[i];
                let zone = self.courses[i].zone().0;
                (i, Course::read(node, true, observation, &self.leader, zone))
            })
            .collect();
        let scene = self.scene_with(&overrides);
        let method = method.unwrap_or_else(|| self.method(&scene, self.unsettled_with(down)));
        let (results, always_master, _) = self.outcomes(&scene, method);
        let mut results = scene.moving.iter().copied().zip(results).peekable();
        down.iter()
            .map(|&i| {
                while results.peek().is_some_and(|(moving, _)| *moving < i) {
                    results.next();
                }
                let outcome = match results.peek() {
                    Some((moving, _)) if *moving == i => results.next().map(|(_, outcome)| outcome).unwrap_or_default(),
                    _ => Outcomes::default(),
                };
                forecast(&observation.nodes[i], outcome, always_master, self.leader.leaderless)
            })
            .collect()
    }

    /// The outcome of each node of `scene` that may move, whether every reading ends in master
    /// disruption mode, and (by the drain) each zone's slots.
    fn outcomes(&self, scene: &Scene, method: Method) -> (Vec<Outcomes>, bool, Vec<Slots>) {
        match method {
            // Passes one period apart: the controller as long as its client keeps up
            // ([`Forecaster::method`]).
            Method::Search => {
                let (results, always_master) = self.replay(scene);
                (results, always_master, Vec::new())
            }
            Method::Drain => self.drain(scene),
        }
    }

    /// The most the controller's own client may hold back the passes that mark `scene`'s silent
    /// nodes: the writes of them all, past the client's burst, at its rate. Split over several
    /// passes, each one's wait is no more than its share, so this bounds their sum.
    fn throttled(&self, scene: &Scene) -> i128 {
        let writes: u64 = scene
            .moving
            .iter()
            .zip(&scene.courses)
            .map(|(&i, course)| match course {
                // And the taint's, which the tainting loop waits for.
                Course::Silent { .. } => writes_of_silent(self.observation.nodes[i].ready_pods) + WRITES_OF_TAINT,
                // Its status; its pods were never marked ready by this controller's pass.
                Course::NeverReady { .. } => writes_of_silent(0) + WRITES_OF_TAINT,
                Course::Settled { .. } => 0,
                _ => WRITES_OF_TAINT,
            })
            .sum();
        // Those since the leader started may have left the bucket short: both counted at once.
        throttled(self.marked.writes + writes, &self.observation.flags)
    }

    /// Each node that may move bounded over a few readings of the pass phase, then every zone's
    /// queue drained (docs/node-lifecycle.md, "At scale"): linear in the nodes, after a sort.
    fn drain(&self, scene: &Scene) -> (Vec<Outcomes>, bool, Vec<Slots>) {
        let observation = self.observation;
        let courses = &scene.courses;
        // A node's instants move with the anchor by at most the anchors' spacing between two
        // samples (a later grid never picks a later pass), so the bounds widen by that spacing.
        let step = ((self.phase.anchor.1 - self.phase.anchor.0) / DRAIN_SAMPLES).max(STEP);
        let worlds = self.phase.worlds_every(step, &[], &self.timing, self.leader.start);
        let readings = [vec![false; courses.len()], vec![true; courses.len()]];
        let mut bounds: Vec<Option<Bounds>> = vec![None; courses.len()];
        let shift = self.throttled(scene);
        for world in &worlds {
            for high in &readings {
                let replay = Replay {
                    world,
                    scene,
                    high,
                    timing: &self.timing,
                    flags: &observation.flags,
                    now: observation.now.as_nanos(),
                    recoveries: &self.recoveries,
                    shift,
                };
                for (i, course) in courses.iter().enumerate() {
                    let (from, job) = replay.plan(i, course);
                    let Some(job) = job else { continue };
                    let from = from.unwrap_or(i128::MAX);
                    let (zone, counted) = course.zone();
                    let bound = bounds[i].get_or_insert(Bounds {
                        zone,
                        counted,
                        not_ready: (from, from),
                        release: (job.release, job.release),
                        key: job.key,
                        basis: job.basis,
                        swap: job.swap,
                    });
                    bound.not_ready = (bound.not_ready.0.min(from), bound.not_ready.1.max(from));
                    bound.release = (bound.release.0.min(job.release), bound.release.1.max(job.release));
                }
            }
        }
        let margin = step + STEP;
        let widen = |(low, high): (i128, i128)| (low.saturating_sub(margin), high.saturating_add(margin));
        // A pass held back by the controller's client takes its zone states when its writes are
        // through, and every pass after starts that much later: each instant to come, at the latest.
        let now = observation.now.as_nanos();
        let held = |(low, high): (i128, i128)| (low, if high > now { high.saturating_add(shift) } else { high });
        let index: Vec<usize> = (0..courses.len()).filter(|&i| bounds[i].is_some()).collect();
        let nodes: Vec<Bounds> = bounds
            .into_iter()
            .flatten()
            .map(|bound| Bounds {
                not_ready: held(widen(bound.not_ready)),
                release: held(widen(bound.release)),
                ..bound
            })
            .collect();
        // The marking writes (those before now too) are through by the last pass that marks a node,
        // its own wait past it; a tick's taints are one per zone draining, at most.
        let marked_by = nodes.iter().map(|node| node.not_ready.1).filter(|&at| at < i128::MAX).max().max(Some(now));
        let draining = u64::try_from(scene.sizes.iter().filter(|&&size| size > 0).count()).unwrap_or(u64::MAX);
        let client = ClientWait {
            marking: shift,
            marking_through: marked_by.map_or(i128::MIN, |at| at.saturating_add(shift)),
            taints: throttled(draining * WRITES_OF_TAINT, &observation.flags),
        };
        let zones = Zones {
            sizes: &scene.sizes,
            settled_not_ready: &scene.settled_not_ready,
            last_taint: &self.last_taint,
            client,
        };
        let period = self.timing.period + PASS_DURATION.1;
        let (fates, slots, master) =
            drain_zones(&nodes, &zones, &observation.flags, observation.now.as_nanos(), period);
        let mut results: Vec<Outcomes> = vec![Outcomes::default(); courses.len()];
        for ((&i, node), fate) in index.iter().zip(&nodes).zip(fates) {
            let queued =
                slots.iter().find(|slots| slots.zone == node.zone && !node.swap).map_or(0, |slots| slots.nodes);
            let result = &mut results[i];
            result.key = Some(node.key);
            result.basis = Some(node.basis);
            match fate {
                Fate::Tainted(earliest, latest) => {
                    result.served = true;
                    result.earliest = Some(earliest);
                    result.latest = latest;
                    result.unserved = latest.is_none().then_some(HeldReason::PartialDisruption);
                    result.queued_with = queued.saturating_sub(1);
                    result.drained = queued > 0;
                }
                Fate::Held(reason) => result.unserved = Some(reason),
            }
        }
        (results, master, slots)
    }

    /// The scene as observed, with the courses of `overrides` (ascending) in place of the observed ones.
    fn scene_with(&self, overrides: &[(usize, Course)]) -> Scene {
        let gone: Vec<usize> = overrides.iter().map(|(i, _)| *i).collect();
        let mut scene = self.scene.without(&gone, &self.courses);
        scene.add(overrides);
        scene
    }

    /// Replays every reading of `scene`: the outcome of each node that may move, and whether every
    /// reading ends in master disruption mode.
    fn replay(&self, scene: &Scene) -> (Vec<Outcomes>, bool) {
        let observation = self.observation;
        let courses = &scene.courses;
        let mut results: Vec<Outcomes> = vec![Outcomes::default(); courses.len()];
        // Settled nodes do the same in every reading: they are summed per zone once, and each
        // reading plans only the others (a game day's 50 silent nodes among thousands).
        let mut plans: Vec<Plan> = vec![(None, None); courses.len()];
        let mut by_zone: Vec<Vec<usize>> = vec![Vec::new(); self.zones.len()];
        for (i, course) in courses.iter().enumerate() {
            by_zone[course.zone().0].push(i);
        }
        let mut always_master = true;
        let shift = self.throttled(scene);
        for world in self.phase.worlds(courses, &self.timing, self.leader.start) {
            for high in readings(&world, courses, &self.timing) {
                let replay = Replay {
                    world: &world,
                    scene,
                    high: &high,
                    timing: &self.timing,
                    flags: &observation.flags,
                    now: observation.now.as_nanos(),
                    recoveries: &self.recoveries,
                    shift,
                };
                for (i, course) in courses.iter().enumerate() {
                    plans[i] = replay.plan(i, course);
                }
                always_master &= replay.run(&plans, &by_zone, &self.last_taint, &mut results);
            }
        }
        (results, always_master)
    }
}

/// The nodes of one prediction: those that may move (every course but `Settled`), each replayed,
/// and per zone what the settled ones add up to, the same in every reading.
#[derive(Clone, Debug)]
struct Scene {
    /// The observation's index of each node that may move, ascending.
    moving: Vec<usize>,
    /// Their courses.
    courses: Vec<Course>,
    /// Per zone: the counted nodes (settled or not).
    sizes: Vec<usize>,
    /// Per zone: the counted settled nodes not ready.
    settled_not_ready: Vec<usize>,
}

impl Scene {
    /// The scene of `courses` (every node's).
    fn new(courses: &[Course], zones: usize) -> Self {
        let mut scene =
            Self { moving: Vec::new(), courses: Vec::new(), sizes: vec![0; zones], settled_not_ready: vec![0; zones] };
        for (i, course) in courses.iter().enumerate() {
            let (zone, counted) = course.zone();
            scene.sizes[zone] += usize::from(counted);
            match *course {
                Course::Settled { not_ready, .. } => scene.settled_not_ready[zone] += usize::from(counted && not_ready),
                _ => {
                    scene.moving.push(i);
                    scene.courses.push(course.clone());
                }
            }
        }
        scene
    }

    /// This scene without the nodes of `gone` (ascending), whose courses were `courses[i]`: no longer
    /// moving, nor summed if settled. Their zones keep counting them.
    fn without(&self, gone: &[usize], courses: &[Course]) -> Self {
        let mut settled_not_ready = self.settled_not_ready.clone();
        for &i in gone {
            if let Course::Settled { zone, counted: true, not_ready: true } = courses[i] {
                settled_not_ready[zone] -= 1;
            }
        }
        let kept = |(i, _): &(&usize, &Course)| gone.binary_search(i).is_err();
        let (moving, courses) =
            self.moving.iter().zip(&self.courses).filter(kept).map(|(&i, course)| (i, course.clone())).unzip();
        Self { moving, courses, sizes: self.sizes.clone(), settled_not_ready }
    }

    /// Adds the nodes of `nodes` (ascending, none of them in the scene) with their courses.
    fn add(&mut self, nodes: &[(usize, Course)]) {
        let mut merged: Vec<(usize, Course)> = Vec::with_capacity(self.moving.len() + nodes.len());
        let mut mine = self.moving.iter().copied().zip(self.courses.drain(..)).peekable();
        for (i, course) in nodes {
            while let Some(next) = mine.next_if(|(j, _)| j < i) {
                merged.push(next);
            }
            match *course {
                Course::Settled { zone, counted, not_ready } => {
                    self.settled_not_ready[zone] += usize::from(counted && not_ready);
                }
                _ => merged.push((*i, course.clone())),
            }
        }
        merged.extend(mine);
        (self.moving, self.courses) = merged.into_iter().unzip();
    }

    /// Each zone at the snapshot: (counted nodes, state, not ready).
    fn initial_states(&self, flags: &Flags) -> Vec<(usize, ZoneState, usize)> {
        let mut not_ready = self.settled_not_ready.clone();
        for course in &self.courses {
            let (zone, counted) = course.zone();
            not_ready[zone] += usize::from(counted && course.not_ready_now());
        }
        self.sizes.iter().zip(not_ready).map(|(&size, nr)| (size, zone_state((size, nr), flags), nr)).collect()
    }
}

/// Which end of its own uncertain instant each node takes, in the readings of one world.
///
/// A node whose heartbeat (or post, or creation) is known only to the second may fall on either side
/// of a pass, independently of the others. A few such nodes: every combination; more: each one at
/// one end with the others at the other, which bounds each node's own window.
fn readings(world: &World, courses: &[Course], timing: &Timing) -> Vec<Vec<bool>> {
    let base = vec![world.high; courses.len()];
    let ambiguous: Vec<usize> = (0..courses.len())
        .filter(|&i| courses[i].span(timing).is_some_and(|(low, high)| world.after(low) != world.after(high)))
        .collect();
    let with = |chosen: &dyn Fn(usize, usize) -> bool| {
        let mut high = base.clone();
        for (position, &i) in ambiguous.iter().enumerate() {
            high[i] = chosen(position, i);
        }
        high
    };
    if ambiguous.is_empty() {
        return vec![base];
    }
    if ambiguous.len() <= 4 {
        return (0..1usize << ambiguous.len()).map(|bits| with(&|position, _| bits >> position & 1 == 1)).collect();
    }
    let mut readings = vec![with(&|_, _| false), with(&|_, _| true)];
    // Past a few dozen simultaneous failures the queue's random order dwarfs a pass more or less,
    // and the readings would cost more than they tell: the first ones are read apart.
    for &one in ambiguous.iter().take(MAX_SINGLED_OUT) {
        readings.push(with(&|_, i| i == one));
        readings.push(with(&|_, i| i != one));
    }
    readings
}

/// The flags as nanoseconds.
struct Timing {
    period: i128,
    grace: i128,
    startup_grace: i128,
}

impl Timing {
    fn new(flags: &Flags) -> Self {
        Self {
            period: nanos(flags.node_monitor_period).max(MS),
            grace: nanos(flags.node_monitor_grace_period),
            startup_grace: nanos(flags.node_startup_grace_period),
        }
    }
}

fn nanos(duration: Duration) -> i128 {
    i128::try_from(duration.as_nanos()).unwrap_or(i128::MAX / 4)
}

/// What the controller Lease says about the current leader.
struct Leader {
    /// When the current leader started, if known.
    start: Option<i128>,
    /// No live leader: nothing happens until one acquires (at `now` at the earliest).
    leaderless: bool,
}

impl Leader {
    fn read(observation: &Observation) -> Self {
        let now = observation.now.as_nanos();
        let Some(lease) = &observation.controller else { return Self { start: None, leaderless: false } };
        let alive = match (lease.renewed, lease.duration) {
            (Some(renewed), Some(duration)) => renewed.as_nanos() + nanos(duration) > now,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if alive {
            Self { start: lease.acquired.map(Timestamp::as_nanos), leaderless: false }
        } else {
            Self { start: Some(now), leaderless: true }
        }
    }
}

/// What the snapshot says will happen to one node, before the pass phase is fixed.
#[derive(Clone, Debug)]
enum Course {
    /// Nothing to predict: healthy and heartbeating, or already carrying the matching taint.
    Settled { zone: usize, counted: bool, not_ready: bool },
    /// `Ready=True` but silent since the heartbeat in `heartbeat` (low, high).
    Silent { zone: usize, counted: bool, heartbeat: (i128, i128) },
    /// `Ready` not `True` and no matching taint: queued after the pass that saw `since` (low, high).
    Unhealthy { zone: usize, counted: bool, status: Ready, since: Option<(i128, i128)>, swap: bool },
    /// Never posted `Ready`: marked `Unknown` (and queued) after the startup grace from `since`.
    NeverReady { zone: usize, counted: bool, since: (i128, i128) },
    /// Tainted by the previous leader, whose successor has not run its first pass yet: removed and
    /// re-added at that pass.
    Retaint { zone: usize, counted: bool, key: ConditionTaint, not_ready: bool },
}

impl Course {
    /// `down`: the node's kubelet is taken to stop by now (a what-if), whatever it did.
    fn read(node: &NodeHealth, down: bool, observation: &Observation, leader: &Leader, zone: usize) -> Self {
        let now = observation.now.as_nanos();
        let counted = !node.excluded;
        let silent_after = nanos(observation.silent_after);
        let lease = node.lease_renewed.map(Timestamp::as_nanos);
        let taint = node.condition_taint();
        let Some(ready) = &node.ready else {
            let created = node.created.map_or(now, Timestamp::as_nanos);
            return match lease {
                // Down (a what-if): its renewals stop by now.
                Some(renewed) if down => Self::NeverReady { zone, counted, since: (renewed.max(created), now) },
                Some(renewed) if now - renewed <= silent_after => Self::Settled { zone, counted, not_ready: true },
                Some(renewed) => {
                    Self::NeverReady { zone, counted, since: (renewed.max(created), renewed.max(created)) }
                }
                None => Self::NeverReady { zone, counted, since: (created, created + TRUNCATION) },
            };
        };
        let wanted = ConditionTaint::for_status(ready.status);
        if let (Some(key), Some((present, added))) = (wanted, taint) {
            let before_leader = matches!((added, leader.start), (Some(added), Some(start))
                if added.as_nanos() + TRUNCATION <= start && now < start + SYNC.1);
            if present == key && before_leader {
                return Self::Retaint { zone, counted, key, not_ready: true };
            }
            if present == key {
                return Self::Settled { zone, counted, not_ready: true };
            }
        }
        match ready.status {
            Ready::True => {
                let beat = ready.last_heartbeat.map(Timestamp::as_nanos);
                let low = lease.max(beat);
                let high = lease.max(beat.map(|beat| beat + TRUNCATION));
                // Without its Lease a node cannot be called silent: a healthy kubelet rewrites
                // `lastHeartbeatTime` only when its status changes, or every 5 minutes.
                match (low, high) {
                    // Down (a what-if): the last heartbeat is the last one recorded, or any instant
                    // up to now.
                    _ if down => {
                        let low = low.unwrap_or(now).min(now);
                        Self::Silent { zone, counted, heartbeat: (low, now.max(high.unwrap_or(now))) }
                    }
                    (Some(low), Some(high)) if lease.is_some() && now - low > silent_after => {
                        Self::Silent { zone, counted, heartbeat: (low, high) }
                    }
                    _ => Self::Settled { zone, counted, not_ready: false },
                }
            }
            status => {
                let since = ready.last_transition.map(|at| (at.as_nanos(), at.as_nanos() + TRUNCATION));
                Self::Unhealthy { zone, counted, status, since, swap: taint.is_some() }
            }
        }
    }

    fn zone(&self) -> (usize, bool) {
        match *self {
            Self::Settled { zone, counted, .. }
            | Self::Silent { zone, counted, .. }
            | Self::Unhealthy { zone, counted, .. }
            | Self::NeverReady { zone, counted, .. }
            | Self::Retaint { zone, counted, .. } => (zone, counted),
        }
    }

    /// Whether the node counts as not ready at the snapshot.
    fn not_ready_now(&self) -> bool {
        match *self {
            Self::Settled { not_ready, .. } | Self::Retaint { not_ready, .. } => not_ready,
            Self::Silent { .. } => false,
            Self::Unhealthy { .. } | Self::NeverReady { .. } => true,
        }
    }

    /// The instant, known to within a span, whose first pass after decides when this node is
    /// queued.
    fn span(&self, timing: &Timing) -> Option<Span> {
        match *self {
            Self::Silent { heartbeat, .. } => Some(heartbeat),
            Self::Unhealthy { status: Ready::False, since, swap: false, .. } => since,
            Self::NeverReady { since: (low, high), .. } => {
                Some((low + timing.startup_grace, high + timing.startup_grace))
            }
            _ => None,
        }
    }

    /// The plan of a settled node, the same in every reading (`None` for another course).
    fn settled_plan(&self) -> Plan {
        match *self {
            Self::Settled { not_ready, .. } => (not_ready.then_some(i128::MIN), None),
            _ => (None, None),
        }
    }

    /// Instants at which a pass landing exactly there changes what this node does.
    fn critical(&self, flags: &Timing) -> Vec<i128> {
        match *self {
            Self::Settled { .. } | Self::Retaint { .. } => Vec::new(),
            Self::Silent { heartbeat: (low, high), .. } => vec![low, high],
            Self::Unhealthy { since: Some((low, high)), .. } => vec![low, high],
            Self::Unhealthy { since: None, .. } => Vec::new(),
            Self::NeverReady { since: (low, high), .. } => vec![low + flags.startup_grace, high + flags.startup_grace],
        }
    }
}

/// How much the passes since the leader started may have overrun, held back by the controller's
/// client as they marked nodes `Unknown`: each pass starts a period after the previous one ends, so
/// every later pass is that much later at most (docs/node-lifecycle.md, "The controller's own
/// client").
fn marked(observation: &Observation, leader: &Leader) -> Marked {
    let writes = observation
        .nodes
        .iter()
        .filter_map(|node| {
            let ready = node.ready.as_ref().filter(|ready| ready.is_written_by_controller())?;
            // Without a time, it may be as recent as can be.
            let at = ready.last_transition.map_or(i128::MAX, Timestamp::as_nanos);
            leader.start.is_none_or(|start| at + TRUNCATION > start).then(|| writes_of_silent(node.ready_pods))
        })
        .sum();
    Marked { writes, overrun: throttled(writes, &observation.flags) }
}

/// What the markings since the leader started cost the controller's client ([`marked`]).
#[derive(Clone, Copy, Debug)]
struct Marked {
    /// Their requests.
    writes: u64,
    /// How much they may have held the passes back.
    overrun: i128,
}

/// The last NLC-written NoExecute taint of each zone since the leader started (whole seconds).
fn last_taints(
    observation: &Observation,
    leader: &Leader,
    zones: usize,
    zone_of: &dyn Fn(&ZoneKey) -> usize,
) -> Vec<Option<i128>> {
    let mut last = vec![None; zones];
    for node in &observation.nodes {
        let Some((_, Some(added))) = node.condition_taint() else { continue };
        let added = added.as_nanos();
        if leader.start.is_some_and(|start| added + TRUNCATION <= start) {
            continue;
        }
        let slot = &mut last[zone_of(&node.zone)];
        *slot = (*slot).max(Some(added));
    }
    last
}

/// Per zone, then for the whole cluster: the latest `Ready=True` transition of a counted node (whole
/// seconds, so low and high): a recovery that may have ended a partial disruption or master mode.
fn recoveries(observation: &Observation, zones: usize, zone_of: &dyn Fn(&ZoneKey) -> usize) -> Recoveries {
    let mut per_zone = vec![None; zones];
    let mut all = None;
    for node in observation.nodes.iter().filter(|node| !node.excluded) {
        let Some(ready) = node.ready.as_ref().filter(|ready| ready.status == Ready::True) else { continue };
        let Some(at) = ready.last_transition.map(Timestamp::as_nanos) else { continue };
        let at = Some((at, at + TRUNCATION));
        let slot = &mut per_zone[zone_of(&node.zone)];
        *slot = (*slot).max(at);
        all = all.max(at);
    }
    Recoveries { per_zone, any: all }
}

/// An instant known to lie between a low and a high end (nanoseconds).
type Span = (i128, i128);

/// The latest recoveries (`Ready=True` transitions): per zone, and anywhere.
struct Recoveries {
    per_zone: Vec<Option<Span>>,
    any: Option<Span>,
}

/// The pass phase: the range of instants one pass may have started at, and how sure that is.
struct Phase {
    /// Anchor pass, earliest and latest.
    anchor: (i128, i128),
    known: bool,
}

/// One reading of the snapshot: a concrete pass grid and every other unknown at one end.
struct World {
    anchor: i128,
    /// The time from one pass to the next, after the anchor.
    period: i128,
    /// The same before the anchor: the low reading (everything as early as can be) counts back with
    /// the longest passes, forward with the shortest; the high one the other way round.
    before: i128,
    /// The leader's first pass, if it matters.
    first: Option<i128>,
    start: Option<i128>,
    high: bool,
}

impl World {
    /// The first pass at or after `t`.
    fn at_or_after(&self, t: i128) -> i128 {
        let t = self.first.map_or(t, |first| t.max(first));
        if t <= self.anchor {
            self.anchor - (self.anchor - t).div_euclid(self.before) * self.before
        } else {
            let k = (t - self.anchor + self.period - 1).div_euclid(self.period);
            self.anchor + k * self.period
        }
    }

    /// The first pass strictly after `t`.
    fn after(&self, t: i128) -> i128 {
        self.at_or_after(t + 1)
    }

    fn pick(&self, (low, high): (i128, i128)) -> i128 {
        if self.high { high } else { low }
    }
}

impl Phase {
    /// `marked`: how much the passes since the leader started may have overrun, marking nodes
    /// through the controller's client ([`marked`]): the passes after such a pass are later than
    /// those before by up to that much, so no one grid reaches back over it, and the phase is taken
    /// as unknown.
    fn estimate(observation: &Observation, leader: &Leader, flags: &Timing, marked: i128) -> Self {
        let now = observation.now.as_nanos();
        let written = observation
            .nodes
            .iter()
            .filter_map(|node| node.ready.as_ref())
            .filter(|ready| ready.is_written_by_controller())
            .filter_map(|ready| ready.last_transition.map(Timestamp::as_nanos))
            .filter(|at| leader.start.is_none_or(|start| at + TRUNCATION > start + SYNC.0))
            .max();
        let candidates =
            [written.map(|at| (at, at + TRUNCATION - 1)), leader.start.map(|start| (start + SYNC.0, start + SYNC.1))];
        // Each estimate, carried forward to the pass before `now` (widening by the pass durations),
        // then intersected: the pass grid is one.
        let project = |(low, high): (i128, i128)| {
            let passes = (now - low).max(0) / flags.period;
            (low + passes * (flags.period + PASS_DURATION.0), high + passes * (flags.period + PASS_DURATION.1))
        };
        let mut best: Option<(i128, i128)> = None;
        for range in candidates.into_iter().flatten().filter(|_| marked == 0).map(project) {
            if range.1 - range.0 >= flags.period {
                continue;
            }
            best = Some(match best {
                None => range,
                Some(known) => {
                    let k = (known.0 - range.0 + flags.period / 2).div_euclid(flags.period);
                    let range = (range.0 + k * flags.period, range.1 + k * flags.period);
                    let both = (known.0.max(range.0), known.1.min(range.1));
                    if both.0 <= both.1 {
                        both
                    } else if range.1 - range.0 < known.1 - known.0 {
                        range
                    } else {
                        known
                    }
                }
            });
        }
        match best {
            Some(anchor) => Self { anchor, known: true },
            None => Self { anchor: (now, now + flags.period - 1), known: false },
        }
    }

    fn worlds(&self, courses: &[Course], flags: &Timing, start: Option<i128>) -> Vec<World> {
        self.worlds_every(STEP, courses, flags, start)
    }

    /// The worlds of anchors `step` apart (and those the courses' critical instants add).
    fn worlds_every(&self, step: i128, courses: &[Course], flags: &Timing, start: Option<i128>) -> Vec<World> {
        let (low, high) = self.anchor;
        let mut points: Vec<i128> = Vec::new();
        let mut at = low;
        while at < high {
            points.push(at);
            at += step;
        }
        points.push(high);
        let critical: Vec<i128> = courses.iter().flat_map(|course| course.critical(flags)).collect();
        let mut worlds = Vec::new();
        for (period, is_high) in [(flags.period + PASS_DURATION.0, false), (flags.period + PASS_DURATION.1, true)] {
            let mut anchors = points.clone();
            for &c in &critical {
                let base = low + (c - low).rem_euclid(period);
                for anchor in [base, base + 1, base - period, base - period + 1] {
                    if (low..=high).contains(&anchor) {
                        anchors.push(anchor);
                    }
                }
            }
            anchors.sort_unstable();
            anchors.dedup();
            for anchor in anchors {
                let before = if is_high { flags.period + PASS_DURATION.0 } else { flags.period + PASS_DURATION.1 };
                let mut world = World { anchor, period, before, first: None, start, high: is_high };
                world.first = start.map(|start| world.at_or_after(start + SYNC.0));
                worlds.push(world);
            }
        }
        worlds
    }
}

/// A node's plan in one reading: when it stops counting as ready (`i128::MIN`: already), and its
/// job.
type Plan = (Option<i128>, Option<Job>);

/// A node's job in one reading.
#[derive(Clone, Copy, Debug)]
struct Job {
    key: ConditionTaint,
    basis: Basis,
    /// When it enters its zone queue (or, for a swap, is written).
    release: i128,
    /// A swap between the two keys: immediate, no token.
    swap: bool,
    /// When it was (or will be) queued, before clamping to the snapshot: a node queued well before
    /// the snapshot that a token could have served, yet untainted, means its zone was held until
    /// recently.
    queued: i128,
}

/// What happened to one node over all readings.
#[derive(Clone, Debug, Default)]
struct Outcomes {
    earliest: Option<i128>,
    latest: Option<i128>,
    /// Some reading never taints it.
    unserved: Option<HeldReason>,
    served: bool,
    key: Option<ConditionTaint>,
    basis: Option<Basis>,
    queued_with: usize,
    /// Its window is a slot of its zone's drain.
    drained: bool,
}

struct Replay<'a> {
    world: &'a World,
    /// The nodes that may move (those `high` and the plans are indexed by), and the others' sums.
    scene: &'a Scene,
    /// Per node: whether it takes the high end of its own uncertain instant.
    high: &'a [bool],
    timing: &'a Timing,
    flags: &'a Flags,
    now: i128,
    /// Per zone, then for the whole cluster: the latest `Ready=True` transition (low, high).
    recoveries: &'a Recoveries,
    /// How far the passes may drift off one grid, held back by the controller's client (those
    /// since the leader started and those to come).
    shift: i128,
}

impl Replay<'_> {
    /// When the node stops counting as ready (`i128::MIN`: already), and its job.
    fn pick(&self, i: usize, (low, high): Span) -> i128 {
        if self.high[i] { high } else { low }
    }

    fn plan(&self, i: usize, course: &Course) -> Plan {
        let world = self.world;
        let now = self.now;
        let restarted = |at: i128| world.start.is_some_and(|start| at < start);
        let first_pass = || world.start.map_or(now, |start| world.at_or_after(start)).max(now);
        // Passes held back by the controller's client drift off the grid by up to `shift`: in the
        // low reading a pass may then come as soon as the rules allow, off the grid (the pass under
        // way at the snapshot may have started that long before it), the next a period after it.
        let drifts = self.shift > 0 && !world.high;
        let soonest = |grid: i128, loose: i128| if drifts { grid.min(loose) } else { grid };
        // The pass after one is a period after it ends, at the soonest.
        let next = |grid: i128, after: i128| if drifts { after + self.timing.period } else { grid };
        match *course {
            Course::Settled { .. } => course.settled_plan(),
            Course::Retaint { key, .. } => {
                let release = first_pass();
                (
                    Some(i128::MIN),
                    Some(Job { key, basis: Basis::ControllerRestart, release, swap: false, queued: i128::MAX }),
                )
            }
            Course::Silent { heartbeat, .. } => {
                let heartbeat = self.pick(i, heartbeat);
                let probe = world.after(heartbeat);
                let unknown = world.after(probe + self.timing.grace).max(world.after(now));
                let unknown = soonest(unknown, (heartbeat + self.timing.grace + 1).max(now - self.shift));
                let basis = if restarted(heartbeat) { Basis::ControllerRestart } else { Basis::LostHeartbeat };
                let job = Job {
                    key: ConditionTaint::Unreachable,
                    basis,
                    release: next(world.after(unknown), unknown).max(now + 1),
                    swap: false,
                    queued: i128::MAX,
                };
                (Some(unknown), Some(job))
            }
            Course::Unhealthy { status, since, swap, .. } => {
                let key = ConditionTaint::for_status(status).expect("unhealthy means not True");
                if swap {
                    let basis = if key == ConditionTaint::NotReady { Basis::NotReady } else { Basis::LostHeartbeat };
                    return (
                        Some(i128::MIN),
                        Some(Job { key, basis, release: world.after(now), swap: true, queued: i128::MAX }),
                    );
                }
                // (counted not ready from, queued at, why)
                let (from, queued, basis) = match (status, since.map(|since| (since.0, self.pick(i, since)))) {
                    (_, Some((_, since))) if restarted(since) => (i128::MIN, first_pass(), Basis::ControllerRestart),
                    (Ready::False, Some((_, since))) => {
                        let seen = soonest(world.after(since), since + 1);
                        (seen.min(now), seen, Basis::NotReady)
                    }
                    (_, Some((written, _))) => {
                        // The NLC wrote the transition in a pass: the first at or after its second.
                        let unknown = soonest(world.at_or_after(written), written).min(now);
                        (unknown, next(world.after(unknown), unknown), Basis::LostHeartbeat)
                    }
                    (Ready::False, None) => (i128::MIN, soonest(world.after(now), now + 1), Basis::NotReady),
                    (_, None) => (i128::MIN, soonest(world.after(now), now + 1), Basis::LostHeartbeat),
                };
                (Some(from), Some(Job { key, basis, release: queued.max(now), swap: false, queued }))
            }
            Course::NeverReady { since, .. } => {
                let since = self.pick(i, since);
                let unknown = world.after(since + self.timing.startup_grace).max(world.after(now));
                let unknown = soonest(unknown, (since + self.timing.startup_grace + 1).max(now + 1));
                let job = Job {
                    key: ConditionTaint::Unreachable,
                    basis: Basis::NeverReady,
                    release: unknown,
                    swap: false,
                    queued: i128::MAX,
                };
                (Some(i128::MIN), Some(job))
            }
        }
    }

    /// Replays this reading into `results`; whether it ends in master disruption mode.
    /// `plans` holds each node's plan in this reading, `by_zone` the nodes that may have a job, per
    /// zone.
    fn run(
        &self,
        plans: &[Plan],
        by_zone: &[Vec<usize>],
        last_taint: &[Option<i128>],
        results: &mut [Outcomes],
    ) -> bool {
        let world = self.world;
        let timeline = self.timeline(plans);
        for (zone, &last) in last_taint.iter().enumerate() {
            let members: Vec<usize> =
                by_zone[zone].iter().copied().filter(|&i| plans[i].1.is_some_and(|job| !job.swap)).collect();
            if members.is_empty() {
                // Nobody queued: the zone's tokens matter to no one.
                continue;
            }
            let mut releases: Vec<i128> = members.iter().map(|&i| plans[i].1.expect("filtered").release).collect();
            releases.sort_unstable();
            let changes = &timeline.changes[zone];
            let interval = timeline.initial[zone];
            // The zone's last taint is known to the second: its token went somewhere in that
            // second. Which node the next token finds queued depends on where, so every instant in
            // it that orders the next token differently against a queueing is tried.
            let intervals: Vec<i128> = std::iter::once(interval).chain(changes.iter().map(|c| c.1)).flatten().collect();
            let consumed: Vec<Option<i128>> = match last {
                Some(added) => {
                    // Written before the snapshot.
                    let (low, high) = (added.min(self.now), (added + TRUNCATION - 1).min(self.now));
                    let mut consumed = vec![Some(low), Some(high)];
                    // The m-th token after it meets a queueing (at once, or one tick later).
                    for (&release, &interval) in releases.iter().flat_map(|r| intervals.iter().map(move |i| (r, i))) {
                        for m in 1..=i128::try_from(releases.len()).unwrap_or(i128::MAX) {
                            let at = release - m * interval;
                            if at + TICK_SLACK < low {
                                break;
                            }
                            let near = [at - TICK_SLACK - 1, at - TICK_SLACK, at - 1, at, at + 1];
                            consumed.extend(near.into_iter().filter(|t| (low..=high).contains(t)).map(Some));
                        }
                    }
                    consumed
                }
                None => vec![None],
            };
            let mut floor = i128::MIN;
            if let Some(interval) = interval
                && members.iter().any(|&i| {
                    let queued = plans[i].1.expect("filtered").queued;
                    let token = last.map_or(i128::MIN / 2, |added| added.min(self.now) + interval);
                    queued.max(token) < self.now - TICK_SLACK
                })
            {
                // A node that should have been tainted already is not: the zone's rate was 0 until a
                // recent pass (partial disruption or master mode ended by a recovery), and
                // `SwapLimiter` drained the new bucket. That pass is the one after the recovery, if
                // one is recent enough, and at the latest the next one.
                let recovered = self.recoveries.per_zone[zone].or(self.recoveries.any);
                let change = recovered.map(|at| world.after(world.pick(at))).filter(|&x| x + interval > self.now);
                if let Some(change) = change.or_else(|| world.high.then(|| world.at_or_after(self.now))) {
                    floor = change + interval;
                }
            }
            // `--node-eviction-rate 0`: the zone's queue was made a token bucket of rate 0 and burst
            // 1, whose one token goes to the first node queued; a taint of the zone seen spent it.
            let spare = self.flags.node_eviction_rate <= 0.0 && last.is_none() && !timeline.master_at(i128::MIN);
            let queue = ZoneReplay { releases: &releases, changes, interval, spare, now: self.now };
            let variants = consumed.iter().flat_map(|c| [(c, 0), (c, TICK_SLACK)]);
            for ((&consumed, tick), drain) in variants.flat_map(|v| [(v, false), (v, true)]) {
                let services = serve(&queue, consumed, floor, tick, drain);
                // Services come in time order. A node's latest is the first service at or after its
                // release by which every other node queued then has been served: that depends on the
                // service only, so it is found once for each, from the last.
                let mut latest_from: Vec<Option<i128>> = vec![None; services.len() + 1];
                for (k, &s) in services.iter().enumerate().rev() {
                    let others = releases.partition_point(|&r| r <= s).saturating_sub(1);
                    latest_from[k] = if others <= k { Some(s) } else { latest_from[k + 1] };
                }
                for &i in &members {
                    let job = plans[i].1.expect("filtered");
                    // A token ready just before the node is queued may be used by a tick just after.
                    let slack = TICK_SLACK - tick;
                    let first = services.partition_point(|&s| s + slack < job.release);
                    let earliest = services.get(first).map(|&s| s.max(job.release));
                    let latest = latest_from[services.partition_point(|&s| s < job.release)];
                    results[i].record(job, earliest, latest, timeline.reason(self.flags), &services);
                }
            }
        }
        let tick = if world.high { TICK_SLACK } else { 0 };
        for (i, (_, job)) in plans.iter().enumerate() {
            let Some(job) = job.filter(|job| job.swap) else { continue };
            let at = job.release + tick;
            let served = (!timeline.master_at(job.release)).then_some(at);
            results[i].record(job, served, served, HeldReason::AllZonesDown, &[]);
        }
        timeline.master.is_some()
    }

    /// Zone states from now on: the rate interval each zone starts with, and its changes.
    fn timeline(&self, plans: &[Plan]) -> Timeline {
        // Past flips too (those the controller wrote a time for): a state change just before the
        // snapshot rebuilt the zone's bucket.
        let mut flips: Vec<i128> = plans.iter().filter_map(|plan| plan.0).filter(|&at| at > i128::MIN).collect();
        flips.sort_unstable();
        flips.dedup();
        // Per zone: how many nodes are counted, and when each counted one stops being ready.
        // Settled nodes not ready count from the start; the others from their plan.
        let zones = self.scene.sizes.len();
        let sizes = &self.scene.sizes;
        let mut from: Vec<Vec<i128>> =
            self.scene.settled_not_ready.iter().map(|&settled| vec![i128::MIN; settled]).collect();
        for (course, plan) in self.scene.courses.iter().zip(plans) {
            let (zone, counted) = course.zone();
            if counted {
                from[zone].extend(plan.0);
            }
        }
        for zone in &mut from {
            zone.sort_unstable();
        }
        let counts = |at: i128| -> Vec<(usize, usize)> {
            sizes.iter().zip(&from).map(|(&size, from)| (size, from.partition_point(|&f| f <= at))).collect()
        };
        let states = |counts: &[(usize, usize)]| -> Vec<ZoneState> {
            counts.iter().map(|&c| zone_state(c, self.flags)).collect()
        };
        let interval_of = |state: ZoneState, size: usize| interval(rate(state, size, self.flags));
        let counts_now = counts(i128::MIN);
        let mut current = states(&counts_now);
        let mut master = all_full(&counts_now, &current).then_some(i128::MIN);
        let initial: Vec<Option<i128>> = if master.is_some() {
            vec![None; zones]
        } else {
            current.iter().zip(&counts_now).map(|(&state, c)| interval_of(state, c.0)).collect()
        };
        let mut changes = vec![Vec::new(); zones];
        for at in flips {
            if master.is_some() {
                break;
            }
            let counts_then = counts(at);
            let next = states(&counts_then);
            if all_full(&counts_then, &next) {
                // Master disruption mode: every limiter to 0 (no recovery is predicted, so for good).
                master = Some(at);
                for zone_changes in &mut changes {
                    zone_changes.push((at, None));
                }
                break;
            }
            for zone in 0..zones {
                if next[zone] != current[zone] {
                    changes[zone].push((at, interval_of(next[zone], counts_then[zone].0)));
                }
            }
            current = next;
        }
        Timeline { initial, changes, master }
    }
}

/// Whether every zone with counted nodes is fully disrupted (and there is one).
fn all_full(counts: &[(usize, usize)], states: &[ZoneState]) -> bool {
    counts.iter().any(|c| c.0 > 0)
        && counts.iter().zip(states).all(|(c, state)| c.0 == 0 || *state == ZoneState::FullDisruption)
}

/// The zone rates from the snapshot on, in one reading.
struct Timeline {
    /// Each zone's token interval at the snapshot (`None`: rate 0).
    initial: Vec<Option<i128>>,
    /// Each zone's later interval changes, in time order.
    changes: Vec<Vec<(i128, Option<i128>)>>,
    /// When master disruption mode holds from (`i128::MIN`: already).
    master: Option<i128>,
}

impl Timeline {
    fn master_at(&self, at: i128) -> bool {
        self.master.is_some_and(|since| since <= at)
    }

    /// Why a node queued would wait for ever.
    fn reason(&self, flags: &Flags) -> HeldReason {
        if self.master.is_some() {
            HeldReason::AllZonesDown
        } else if flags.node_eviction_rate <= 0.0 {
            HeldReason::NoEvictionRate
        } else {
            HeldReason::PartialDisruption
        }
    }
}

/// The instants at which a zone queue serves someone (mirrors `RateLimitedTimedQueue.Try` with a
/// burst-1 token bucket and `SwapLimiter`). They do not depend on which node is served: only on when
/// nodes are queued and on the rate. `consumed` is the zone's last token use before the snapshot;
/// `floor` the earliest instant a token can be had after it. Queueing and rate changes at one pass
/// instant come before a token use at that instant (a pass is taken as one step).
///
/// Whether the old bucket still had a token at a rate change decides whether the new one starts
/// drained; when the last token use was within a tick of the change, `drain` picks.
fn serve(zone: &ZoneReplay<'_>, consumed: Option<i128>, floor: i128, tick: i128, drain: bool) -> Vec<i128> {
    let (releases, changes) = (zone.releases, zone.changes);
    let mut interval = zone.interval;
    let mut spare = zone.spare;
    let mut t_free = i128::MIN / 2;
    let mut services = Vec::new();
    let (mut released, mut changed, mut cursor, mut consumption) = (0, 0, zone.now, consumed);
    loop {
        let pending = released - services.len();
        let next_release = releases.get(released).copied();
        let next_change = changes.get(changed).map(|c| c.0);
        let next_service = match (pending > 0, interval) {
            (false, _) => None,
            (true, Some(_)) => Some(t_free.max(cursor).max(floor) + tick),
            // The rate-0 bucket's one token.
            (true, None) => spare.then(|| cursor.max(floor) + tick),
        };
        // The earliest of the four (written out: this is the prediction's innermost loop).
        let mut first = next_release;
        for candidate in [next_change, consumption, next_service] {
            if let Some(at) = candidate
                && first.is_none_or(|first| at < first)
            {
                first = Some(at);
            }
        }
        let Some(at) = first else { return services };
        cursor = cursor.max(at);
        if next_release == Some(at) {
            released += 1;
        } else if next_change == Some(at) {
            let new = changes[changed].1;
            changed += 1;
            if new != interval {
                let had_token = spare || (interval.is_some() && t_free <= at && (t_free + TICK_SLACK <= at || !drain));
                spare = false;
                t_free = match new {
                    Some(new) if !had_token => at + new,
                    _ => at,
                };
                interval = new;
            }
        } else if consumption == Some(at) {
            consumption = None;
            spare = false;
            t_free = interval.map_or(i128::MIN / 2, |interval| at + interval);
        } else {
            services.push(at);
            match interval {
                Some(interval) => t_free = at + interval,
                None => spare = false,
            }
        }
    }
}

/// One zone's queue in one reading.
struct ZoneReplay<'a> {
    releases: &'a [i128],
    changes: &'a [(i128, Option<i128>)],
    /// The token interval before any change (`None`: rate 0).
    interval: Option<i128>,
    /// At rate 0, whether the bucket still holds the one token it was made with.
    spare: bool,
    now: i128,
}

impl Outcomes {
    fn record(
        &mut self,
        job: Job,
        earliest: Option<i128>,
        latest: Option<i128>,
        reason: HeldReason,
        services: &[i128],
    ) {
        self.key.get_or_insert(job.key);
        self.basis.get_or_insert(job.basis);
        if let Some(earliest) = earliest {
            self.served = true;
            self.earliest = Some(self.earliest.map_or(earliest, |e| e.min(earliest)));
        }
        match latest {
            Some(latest) => self.latest = Some(self.latest.map_or(latest, |l| l.max(latest))),
            None => self.unserved = Some(self.unserved.map_or(reason, |held| held.min(reason))),
        }
        if let (Some(earliest), Some(latest)) = (earliest, latest) {
            // Services are in time order.
            let ahead =
                services.partition_point(|&s| s < latest).saturating_sub(services.partition_point(|&s| s < earliest));
            self.queued_with = self.queued_with.max(ahead);
        }
    }
}

fn forecast(node: &NodeHealth, outcome: Outcomes, master: bool, leaderless: bool) -> NodeForecast {
    let ready = node.ready.as_ref().map(|ready| ready.status);
    let last_heartbeat = node.lease_renewed.max(node.ready.as_ref().and_then(|ready| ready.last_heartbeat));
    let held_for = |reason| Held { reason, zone: node.zone.clone() };
    let mut forecast = NodeForecast {
        name: node.name.clone(),
        zone: node.zone.clone(),
        ready,
        last_heartbeat,
        taint: None,
        held: None,
    };
    if master && node.condition_taint().is_some() {
        forecast.held = Some(held_for(HeldReason::AllZonesDown));
        return forecast;
    }
    let (Some(key), Some(basis)) = (outcome.key, outcome.basis) else { return forecast };
    match (outcome.served, outcome.earliest) {
        (true, Some(earliest)) => {
            let latest = outcome.latest.filter(|_| outcome.unserved.is_none() && !leaderless);
            forecast.taint = Some(PredictedTaint {
                key,
                earliest: Timestamp::from_nanos(earliest - STEP),
                latest: latest.map(|latest| Timestamp::from_nanos(latest + STEP)),
                basis: if leaderless { Basis::ControllerRestart } else { basis },
                queued_with: outcome.queued_with,
                drained: outcome.drained,
            });
        }
        _ => forecast.held = Some(held_for(outcome.unserved.unwrap_or(HeldReason::PartialDisruption))),
    }
    forecast
}
