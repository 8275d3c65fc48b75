//! The prediction at scale: each zone's queue drained slot by slot, in time linear in its nodes (after
//! a sort), for outages past what the exact search can replay (docs/node-lifecycle.md, "At scale").
//!
//! What it is given of each node is the span of instants it may stop counting as ready and the span
//! it may enter its zone's queue, over every reading of the pass phase. From those alone:
//!
//! - the zone's states only rise as its nodes go (normal, partial, full disruption: `ComputeZoneState`),
//!   so the state it ends in, and the span of instants it enters it, are known; so is master disruption
//!   mode (every zone fully disrupted), which ends every taint;
//! - once in its last state the zone's queue serves one node per token of that state's rate, its bucket
//!   at worst drained when the state came; before, it may serve at any rate or none;
//! - which node a token finds is the queue's order, which nobody sees: a node's earliest taint is when
//!   it may be queued, its latest the first slot of the slowest drain (every node queued as late as it
//!   can be) by which every node that may be queued by then has been served.
//!
//! A zone that ends at rate 0 (partially disrupted and not larger than `--large-cluster-size-threshold`,
//! or every zone down) taints only before it gets there: a node that may be queued before that gets an
//! open window, the others are held.

use super::health::{Basis, ConditionTaint, Flags, HeldReason, ZoneState};

/// A due token is used at the next tick of the tainting loop (every 100 ms, sliding) and written.
pub(super) const TICK_SLACK: i128 = 110_000_000;

/// One node that may move, as every reading of the pass phase bounds it (nanoseconds).
#[derive(Clone, Copy, Debug)]
pub(super) struct Bounds {
    /// Its zone (an index).
    pub(super) zone: usize,
    /// Counted in its zone's state.
    pub(super) counted: bool,
    /// When it stops counting as ready, earliest and latest (`i128::MIN`: already).
    pub(super) not_ready: (i128, i128),
    /// When it enters the zone queue (or, for a swap, is written), earliest and latest.
    pub(super) release: (i128, i128),
    /// Which taint.
    pub(super) key: ConditionTaint,
    /// Why.
    pub(super) basis: Basis,
    /// A swap between the two keys: written at once, no token.
    pub(super) swap: bool,
}

/// What the zones' drains say of one node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fate {
    /// Tainted no earlier than the first, no later than the second (`None`: the zone may hold it for
    /// good).
    Tainted(i128, Option<i128>),
    /// Never tainted.
    Held(HeldReason),
}

/// One zone's queue drained at its last state's rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Slots {
    /// The zone (an index).
    pub(super) zone: usize,
    /// Nodes queued.
    pub(super) nodes: usize,
    /// Nanoseconds between tokens.
    pub(super) every: i128,
    /// The first slot (the first node queued, at the earliest).
    pub(super) first: i128,
    /// The last slot (the slowest drain's last service).
    pub(super) last: i128,
}

/// What every zone holds apart from the nodes that move.
pub(super) struct Zones<'a> {
    /// Per zone: counted nodes.
    pub(super) sizes: &'a [usize],
    /// Per zone: counted settled nodes not ready.
    pub(super) settled_not_ready: &'a [usize],
    /// Per zone: its last taint seen since the leader started (a rate-0 bucket's one token spent).
    pub(super) last_taint: &'a [Option<i128>],
    /// How long the controller's own client may hold back a taint's write.
    pub(super) client: ClientWait,
}

/// How long the controller's own client may hold back a taint's write after its token is taken
/// (docs/node-lifecycle.md, "The controller's own client"): behind the writes that mark nodes
/// `Unknown`, until they are through; and behind the other zones' taints of the same tick.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ClientWait {
    /// The most the marking writes hold back any write.
    pub(super) marking: i128,
    /// When the marking writes are through, at the latest.
    pub(super) marking_through: i128,
    /// The most one tick's taints of every zone hold back the last of them.
    pub(super) taints: i128,
}

impl ClientWait {
    /// The most a taint whose token is taken at `at` waits on the client.
    fn at(&self, at: i128) -> i128 {
        let marking = if at < self.marking_through { self.marking } else { 0 };
        marking + self.taints
    }
}

/// The fate of each node of `nodes`, every zone's drain, and whether every zone ends fully disrupted
/// (master disruption mode). `now` is the observation's instant, `period` the longest time from one
/// pass to the next.
pub(super) fn drain(
    nodes: &[Bounds],
    zones: &Zones<'_>,
    flags: &Flags,
    now: i128,
    period: i128,
) -> (Vec<Fate>, Vec<Slots>, bool) {
    let count = zones.sizes.len();
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); count];
    for (i, node) in nodes.iter().enumerate() {
        members[node.zone].push(i);
    }
    // Each zone's last state, and the span of instants it enters it.
    let ends: Vec<(ZoneState, i128, i128)> =
        (0..count).map(|zone| end(zone, &members[zone], nodes, zones, flags)).collect();
    let master = ends.iter().zip(zones.sizes).any(|(_, &size)| size > 0)
        && ends.iter().zip(zones.sizes).all(|(end, &size)| size == 0 || end.0 == ZoneState::FullDisruption);
    // Master disruption mode from when the last zone is fully disrupted.
    let master_from = ends.iter().zip(zones.sizes).filter(|(_, size)| **size > 0).map(|(end, _)| end.2).max();
    let mut fates = vec![Fate::Held(HeldReason::PartialDisruption); nodes.len()];
    let mut slots = Vec::new();
    for zone in 0..count {
        let (state, may_have_entered, entered) = ends[zone];
        let every = if master { None } else { interval(rate(state, zones.sizes[zone], flags)) };
        let (swaps, queued): (Vec<usize>, Vec<usize>) = members[zone].iter().partition(|&&i| nodes[i].swap);
        for i in swaps {
            let (low, high) = nodes[i].release;
            fates[i] = match master_from.filter(|_| master) {
                Some(from) if low >= from => Fate::Held(HeldReason::AllZonesDown),
                Some(_) => Fate::Tainted(low, None),
                None => Fate::Tainted(low, Some(high + TICK_SLACK + zones.client.at(high + TICK_SLACK))),
            };
        }
        if queued.is_empty() {
            continue;
        }
        let Some(every) = every else {
            // The zone ends at rate 0: a node may be tainted only while it is not there yet.
            let (reason, until) = if master {
                (HeldReason::AllZonesDown, master_from.unwrap_or(i128::MIN))
            } else if flags.node_eviction_rate <= 0.0 {
                // A rate-0 bucket's one token, unless a taint of the zone spent it.
                let until = if zones.last_taint[zone].is_some() { i128::MIN } else { i128::MAX };
                (HeldReason::NoEvictionRate, until)
            } else {
                (HeldReason::PartialDisruption, entered)
            };
            for &i in &queued {
                let low = nodes[i].release.0;
                fates[i] =
                    if low < until.saturating_add(TICK_SLACK) { Fate::Tainted(low, None) } else { Fate::Held(reason) };
            }
            continue;
        };
        // The slowest drain: nothing served before the zone is in its last state (at the latest, and
        // a pass after now when it may already be: a bucket swapped just before may be drained),
        // then one node per token, each token used up to a tick late, every node queued at its
        // latest.
        let start = if may_have_entered <= now { entered.max(now + period) } else { entered };
        let mut latest_queued: Vec<i128> = queued.iter().map(|&i| nodes[i].release.1).collect();
        latest_queued.sort_unstable();
        let mut earliest_queued: Vec<i128> = queued.iter().map(|&i| nodes[i].release.0).collect();
        earliest_queued.sort_unstable();
        let mut services = Vec::with_capacity(latest_queued.len());
        let mut token = start + every;
        for &release in &latest_queued {
            let at = token.max(release) + TICK_SLACK;
            services.push(at);
            token = at + every;
        }
        // When each slot's taint is written at the latest, its write held back by the client: of the
        // slots up to it, the latest.
        let mut written = Vec::with_capacity(services.len());
        let mut latest_write = i128::MIN;
        for &s in &services {
            latest_write = latest_write.max(s.saturating_add(zones.client.at(s)));
            written.push(latest_write);
        }
        // A node's latest is the first slot at or after it is queued by which every node that may be
        // queued by then has been served, whatever the order: found once for each slot, from the last.
        let mut latest_from: Vec<Option<usize>> = vec![None; services.len() + 1];
        let mut ahead = earliest_queued.len();
        for (k, &s) in services.iter().enumerate().rev() {
            while ahead > 0 && earliest_queued[ahead - 1] > s {
                ahead -= 1;
            }
            latest_from[k] = if ahead <= k + 1 { Some(k) } else { latest_from[k + 1] };
        }
        for &i in &queued {
            let (low, high) = nodes[i].release;
            let k = services.partition_point(|&s| s < high);
            fates[i] = Fate::Tainted(low, Some(latest_from[k].map_or(i128::MAX, |slot| written[slot])));
        }
        let first = earliest_queued[0];
        let last = written.last().copied().unwrap_or(first);
        slots.push(Slots { zone, nodes: queued.len(), every, first, last });
    }
    (fates, slots, master)
}

/// The state zone `zone` ends in once its nodes that move have all stopped counting as ready, and the
/// earliest and latest instant it enters it (`i128::MIN`: already in it).
fn end(zone: usize, members: &[usize], nodes: &[Bounds], zones: &Zones<'_>, flags: &Flags) -> (ZoneState, i128, i128) {
    let size = zones.sizes[zone];
    let settled = zones.settled_not_ready[zone];
    let mut low: Vec<i128> = Vec::new();
    let mut high: Vec<i128> = Vec::new();
    for &i in members.iter().filter(|&&i| nodes[i].counted) {
        low.push(nodes[i].not_ready.0);
        high.push(nodes[i].not_ready.1);
    }
    low.sort_unstable();
    high.sort_unstable();
    let last = zone_state((size, settled + low.len()), flags);
    // The fewest not ready that put the zone in its last state: states only rise with the count.
    let fewest = (settled..=settled + low.len()).find(|&n| zone_state((size, n), flags) == last).unwrap_or(settled);
    if fewest <= settled {
        return (last, i128::MIN, i128::MIN);
    }
    let k = fewest - settled - 1;
    (last, low[k], high[k])
}

/// Mirrors `ComputeZoneState` (pkg/controller/nodelifecycle): float32 arithmetic as upstream.
#[allow(clippy::cast_precision_loss)]
pub(super) fn zone_state((total, not_ready): (usize, usize), flags: &Flags) -> ZoneState {
    let ready = total.saturating_sub(not_ready);
    if ready == 0 && not_ready > 0 {
        ZoneState::FullDisruption
    } else if not_ready > 2 && (not_ready as f32) / (total as f32) >= flags.unhealthy_zone_threshold {
        ZoneState::PartialDisruption
    } else {
        ZoneState::Normal
    }
}

/// Mirrors `setLimiterInZone` with `HealthyQPSFunc` / `ReducedQPSFunc`: the zone's taint rate.
pub(super) fn rate(state: ZoneState, size: usize, flags: &Flags) -> f32 {
    let large = u32::try_from(size).unwrap_or(u32::MAX) > flags.large_cluster_size_threshold;
    match state {
        ZoneState::Normal | ZoneState::FullDisruption => flags.node_eviction_rate,
        ZoneState::PartialDisruption if large => flags.secondary_node_eviction_rate,
        ZoneState::PartialDisruption => 0.0,
    }
}

/// Nanoseconds between tokens of a bucket with this rate; `None` for rate 0 (never).
#[allow(clippy::cast_possible_truncation)]
pub(super) fn interval(rate: f32) -> Option<i128> {
    (rate > 0.0).then(|| (1e9 / f64::from(rate)).round() as i128)
}
