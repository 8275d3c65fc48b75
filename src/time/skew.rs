//! How far this machine's clock is from the control plane's, read off what the API server says.
//!
//! Every instant the tool compares is written by the control plane's clocks (a taint's `timeAdded`,
//! a Lease's `renewTime`), so "now" must be the control plane's too. Each answer bounds the offset
//! `ahead` = this machine's clock minus the control plane's:
//!
//! - an HTTP `Date` header (the API server's clock, whole seconds, stamped while the request was
//!   between being sent and its answer arriving): `send - (date + 1 s) < ahead <= arrived - date`;
//! - a Lease renewal stamp (`renewTime`, microseconds, written by its holder's clock before it was
//!   seen): `ahead <= seen - renewTime`. The kube-controller-manager's Lease is the clock of the very
//!   process that adds the taints and runs the eviction queue; node Leases are kubelets' clocks.
//!
//! [`Skew`] keeps the recent readings and intersects them. The interval narrows as answers come in (a
//! request that straddles one of the server's second boundaries pins it). Readings that contradict
//! the newest ones (this machine suspended and resumed, a clock stepped) are dropped: the estimate
//! follows the newest consistent run of readings. Pure: the local instants come in as values.

use std::collections::VecDeque;

use crate::engine::time::{NANOS_PER_SECOND, Timestamp};

/// Where a reading of the control plane's clock came from, best first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    /// The `kube-system/kube-controller-manager` Lease's `renewTime`: the controller's own clock.
    ControllerLease,
    /// A node Lease's `renewTime`: a kubelet's clock.
    NodeLease,
    /// The API server's `Date` header.
    DateHeader,
}

impl Source {
    /// The name the JSON output uses.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ControllerLease => "kube-controller-manager-lease",
            Self::NodeLease => "node-lease",
            Self::DateHeader => "date-header",
        }
    }

    /// How the warning names it.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Self::ControllerLease => "from the kube-controller-manager Lease",
            Self::NodeLease => "from the node Leases",
            Self::DateHeader => "from the API server's Date header",
        }
    }

    /// How often the stamp is renewed while its writer is alive: a stamp just read is at most this
    /// old. Used only when no `Date` header bounds the offset from below.
    fn renew_period(self) -> i64 {
        match self {
            // kube-controller-manager's --leader-elect-retry-period.
            Self::ControllerLease => 2 * NANOS_PER_SECOND,
            // The kubelet's node Lease renew interval.
            Self::NodeLease => 10 * NANOS_PER_SECOND,
            Self::DateHeader => NANOS_PER_SECOND,
        }
    }
}

/// One reading: bounds on `ahead`, in nanoseconds, taken at the local instant `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reading {
    /// Where it came from.
    pub source: Source,
    /// The local instant of the reading (its answer's arrival).
    pub at: Timestamp,
    /// `ahead` is greater than this (`None`: no lower bound, a Lease stamp).
    pub lo: Option<i64>,
    /// `ahead` is at most this.
    pub hi: i64,
}

impl Reading {
    /// A `Date` header (`date`, whole seconds) on an answer to a request sent at local `sent` that
    /// arrived at local `arrived`.
    #[must_use]
    pub fn date(date: Timestamp, sent: Timestamp, arrived: Timestamp) -> Self {
        let lo = nanos(sent.nanos_since(date)) - NANOS_PER_SECOND;
        Self { source: Source::DateHeader, at: arrived, lo: Some(lo), hi: nanos(arrived.nanos_since(date)) }
    }

    /// A Lease's `renewTime` (`stamp`, by its holder's clock) read at local `seen`: it may have been
    /// written long before.
    #[must_use]
    pub fn lease(source: Source, stamp: Timestamp, seen: Timestamp) -> Self {
        Self { source, at: seen, lo: None, hi: nanos(seen.nanos_since(stamp)) }
    }

    /// A Lease's `renewTime` seen by a watch at local `seen`: a renewal reaches a watch within
    /// [`WATCH_DELIVERY`] of its write.
    #[must_use]
    pub fn watched_lease(source: Source, stamp: Timestamp, seen: Timestamp) -> Self {
        let hi = nanos(seen.nanos_since(stamp));
        Self { source, at: seen, lo: Some(hi.saturating_sub(WATCH_DELIVERY)), hi }
    }
}

/// The most a watch is taken to need to deliver a write (nanoseconds): on a working control plane
/// an update reaches a watch within milliseconds.
pub const WATCH_DELIVERY: i64 = 100_000_000;

fn nanos(n: i128) -> i64 {
    i64::try_from(n).unwrap_or(if n < 0 { i64::MIN } else { i64::MAX })
}

/// The estimate: `ahead` lies in `lo..=hi` (nanoseconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Estimate {
    /// The smallest `ahead` the readings allow.
    pub lo: i64,
    /// The largest `ahead` the readings allow: the control plane's time read as this machine's minus
    /// this is never later than the control plane's own.
    pub hi: i64,
    /// The best source that bounds it.
    pub source: Source,
}

impl Estimate {
    /// The warning that this machine's clock is more than a second off the control plane's.
    #[must_use]
    pub fn warning(&self) -> Option<String> {
        let offset = self.offset();
        if offset.abs() <= NANOS_PER_SECOND {
            return None;
        }
        let seconds = |nanos: i64| nanos.unsigned_abs() as f64 / 1e9;
        let side = if offset > 0 { "ahead of" } else { "behind" };
        Some(format!(
            "this machine's clock is {:.1} s {side} the control plane (±{:.2} s, {}): times below are the control \
             plane's",
            seconds(offset),
            seconds(self.uncertainty()),
            self.source.describe(),
        ))
    }

    /// The most likely offset: the middle of the interval.
    #[must_use]
    pub fn offset(&self) -> i64 {
        self.lo + (self.hi - self.lo) / 2
    }

    /// Half the interval's width.
    #[must_use]
    pub fn uncertainty(&self) -> i64 {
        (self.hi - self.lo) / 2
    }
}

/// The recent readings, and the estimate they give.
#[derive(Clone, Debug, Default)]
pub struct Skew {
    readings: VecDeque<Reading>,
}

/// Readings older than this (before the newest) are dropped: clocks drift apart over hours.
const WINDOW: i64 = 10 * 60 * NANOS_PER_SECOND;
/// The most readings kept.
const KEPT: usize = 256;

impl Skew {
    /// Adds a reading (taken after the ones before it).
    pub fn observe(&mut self, reading: Reading) {
        while self.readings.front().is_some_and(|r| reading.at.nanos_since(r.at) > i128::from(WINDOW))
            || self.readings.len() >= KEPT
        {
            self.readings.pop_front();
        }
        self.readings.push_back(reading);
    }

    /// The estimate, or `None` before any reading.
    ///
    /// The `Date` headers' interval is the newest headers intersected back to the first that would
    /// leave it empty; older readings of every source are ignored from there.
    ///
    /// The controller manager's Lease, watched, is its own clock within a watch's delivery: it is
    /// followed, narrowed by the headers where they agree (where they do not, the controller's clock
    /// is off the API server's, and the controller's is the one that times the evictions).
    /// Otherwise, within the headers' interval, the best Lease source that narrows it sets the upper
    /// bound (one whose bound falls below the interval says its writer's clock is ahead of the API
    /// server's: the controller's clock is followed then, a kubelet's ignored). Without a header, the
    /// best Lease source alone, taken as renewed at most one renew period before it was seen.
    #[must_use]
    pub fn estimate(&self) -> Option<Estimate> {
        let mut dates: Option<(i64, i64)> = None;
        // The first header of the newest consistent run, when an older one contradicts it.
        let mut since = None;
        let mut first = None;
        for reading in self.readings.iter().rev().filter(|r| r.source == Source::DateHeader) {
            let lo = reading.lo.unwrap_or(i64::MIN);
            let next = match dates {
                None => (lo, reading.hi),
                Some((a, b)) => (a.max(lo), b.min(reading.hi)),
            };
            if next.0 > next.1 {
                since = first;
                break;
            }
            dates = Some(next);
            first = Some(reading.at);
        }
        let recent = |r: &&Reading| since.is_none_or(|since| r.at >= since);
        let bound = |source| self.readings.iter().filter(recent).filter(|r| r.source == source).map(|r| r.hi).min();
        let leases = [Source::ControllerLease, Source::NodeLease].map(|source| bound(source).map(|hi| (source, hi)));
        let watched = self.readings.iter().filter(recent).filter(|r| r.source == Source::ControllerLease);
        if let Some(lo) = watched.filter_map(|r| r.lo).min() {
            let hi = leases[0].map_or(lo + WATCH_DELIVERY, |(_, hi)| hi);
            let lo = lo.min(hi - WATCH_DELIVERY);
            let source = Source::ControllerLease;
            return Some(match dates {
                Some((a, b)) if a.max(lo) <= b.min(hi) => Estimate { lo: a.max(lo), hi: b.min(hi), source },
                _ => Estimate { lo, hi, source },
            });
        }
        let Some((lo, hi)) = dates else {
            let (source, hi) = leases.into_iter().flatten().next()?;
            return Some(Estimate { lo: hi - source.renew_period(), hi, source });
        };
        for (source, bound) in leases.into_iter().flatten() {
            if bound >= hi {
                continue;
            }
            if bound >= lo {
                return Some(Estimate { lo, hi: bound, source });
            }
            if source == Source::ControllerLease {
                return Some(Estimate { lo: bound - (hi - lo), hi: bound, source });
            }
        }
        Some(Estimate { lo, hi, source: Source::DateHeader })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = NANOS_PER_SECOND;
    const MS: i64 = 1_000_000;

    fn t(nanos: i64) -> Timestamp {
        Timestamp::from_nanos(1_795_341_600 * i128::from(S) + i128::from(nanos))
    }

    /// The `Date` header a server whose clock is `ahead` behind this machine's writes at local `at`.
    fn date_at(ahead: i64, at: i64) -> Timestamp {
        let server = t(at - ahead).as_nanos();
        Timestamp::from_nanos(server - server.rem_euclid(i128::from(S)))
    }

    #[test]
    fn a_date_header_bounds_the_offset_within_a_second_and_the_round_trip() {
        let ahead = 90 * S + 200 * MS;
        let mut skew = Skew::default();
        skew.observe(Reading::date(date_at(ahead, 10 * MS), t(0), t(20 * MS)));
        let estimate = skew.estimate().expect("an estimate");
        assert!(estimate.lo < ahead && ahead <= estimate.hi, "{estimate:?}");
        assert!(estimate.hi - estimate.lo <= S + 20 * MS, "{estimate:?}");
        assert_eq!(estimate.source, Source::DateHeader);
        assert!((estimate.offset() - ahead).abs() <= S / 2 + 20 * MS);
    }

    #[test]
    fn requests_that_straddle_a_second_boundary_narrow_it() {
        let ahead = -45 * S + 370 * MS;
        let mut skew = Skew::default();
        // Requests 100 ms apart over three seconds, each with a 4 ms round trip.
        for i in 0..30 {
            let sent = i * 100 * MS;
            skew.observe(Reading::date(date_at(ahead, sent + 2 * MS), t(sent), t(sent + 4 * MS)));
        }
        let estimate = skew.estimate().expect("an estimate");
        assert!(estimate.lo < ahead && ahead <= estimate.hi, "{estimate:?}");
        assert!(estimate.hi - estimate.lo <= 110 * MS, "{estimate:?}");
    }

    #[test]
    fn the_controller_lease_sets_the_upper_bound_within_the_watch_latency() {
        let ahead = 60 * S;
        let mut skew = Skew::default();
        skew.observe(Reading::date(date_at(ahead, 500 * MS), t(0), t(S)));
        // Renewed every 2 s; each renewal seen 3 ms after it was written.
        for i in 0..5 {
            let written = i * 2 * S + 700 * MS;
            skew.observe(Reading::lease(Source::ControllerLease, t(written - ahead), t(written + 3 * MS)));
        }
        let estimate = skew.estimate().expect("an estimate");
        assert_eq!(estimate.source, Source::ControllerLease);
        assert_eq!(estimate.hi, ahead + 3 * MS);
        assert!(estimate.lo < ahead);
    }

    #[test]
    fn a_controller_clock_ahead_of_the_api_server_is_followed_and_a_kubelet_clock_is_not() {
        let mut skew = Skew::default();
        skew.observe(Reading::date(date_at(0, 0), t(0), t(10 * MS)));
        // A kubelet 30 s ahead: its stamp is 30 s "in the future"; ignored.
        skew.observe(Reading::lease(Source::NodeLease, t(30 * S), t(20 * MS)));
        assert_eq!(skew.estimate().expect("an estimate").source, Source::DateHeader);
        // The controller's clock 5 s ahead of the API server's: followed.
        skew.observe(Reading::lease(Source::ControllerLease, t(5 * S), t(30 * MS)));
        let estimate = skew.estimate().expect("an estimate");
        assert_eq!(estimate.source, Source::ControllerLease);
        assert_eq!(estimate.hi, -5 * S + 30 * MS);
        assert!(estimate.lo < estimate.hi);
    }

    #[test]
    fn a_watched_controller_lease_is_followed_and_narrowed_by_the_headers_that_agree() {
        let ahead = 60 * S;
        // Probes narrowed the headers to 20 ms around the API server's clock; the controller's
        // renewals reach the watch 4 ms after they are written, by a clock `behind` the API server's.
        let skew = |behind: i64| {
            let mut skew = Skew::default();
            // Two requests either side of the server's second boundary (at local 0).
            skew.observe(Reading::date(date_at(ahead, -11 * MS), t(-12 * MS), t(-10 * MS)));
            skew.observe(Reading::date(date_at(ahead, 11 * MS), t(10 * MS), t(12 * MS)));
            let stamp = t(S - ahead - behind);
            skew.observe(Reading::watched_lease(Source::ControllerLease, stamp, t(S + 4 * MS)));
            skew.estimate().expect("an estimate")
        };
        let agree = skew(0);
        assert_eq!(agree.source, Source::ControllerLease);
        assert_eq!((agree.lo, agree.hi), (ahead - 12 * MS, ahead + 4 * MS));
        // The controller's clock 500 ms behind the API server's: the controller's is followed.
        let behind = skew(500 * MS);
        assert_eq!(behind.source, Source::ControllerLease);
        assert_eq!((behind.lo, behind.hi), (ahead + 504 * MS - WATCH_DELIVERY, ahead + 504 * MS));
    }

    #[test]
    fn without_a_date_header_a_lease_gives_its_renew_period_as_the_interval() {
        let mut skew = Skew::default();
        skew.observe(Reading::lease(Source::NodeLease, t(-3 * S), t(0)));
        assert_eq!(skew.estimate(), Some(Estimate { lo: -7 * S, hi: 3 * S, source: Source::NodeLease }));
    }

    #[test]
    fn a_jump_drops_the_readings_before_it() {
        let mut skew = Skew::default();
        skew.observe(Reading::date(date_at(0, 0), t(0), t(5 * MS)));
        skew.observe(Reading::lease(Source::ControllerLease, t(S), t(S + 5 * MS)));
        // Suspended for an hour: this machine's monotonic clock stood still while the server's ran.
        let ahead = -3600 * S;
        skew.observe(Reading::date(date_at(ahead, 2 * S), t(2 * S), t(2 * S + 5 * MS)));
        let estimate = skew.estimate().expect("an estimate");
        assert_eq!(estimate.source, Source::DateHeader, "the controller stamp before the jump is dropped");
        assert!(estimate.lo < ahead && ahead <= estimate.hi, "{estimate:?}");
    }

    #[test]
    fn readings_older_than_the_window_are_dropped() {
        let mut skew = Skew::default();
        skew.observe(Reading::lease(Source::ControllerLease, t(0), t(0)));
        skew.observe(Reading::lease(Source::NodeLease, t(WINDOW), t(WINDOW + S)));
        assert_eq!(skew.estimate().map(|e| e.source), Some(Source::NodeLease));
    }
}
