//! Repeated events aggregated into series, as client-go's events.k8s.io/v1 recorder does
//! (`tools/events/event_broadcaster.go`): the first occurrence of an event is a new Event; the
//! next isomorphic one (same key) turns it into a series (`series.count` 2) written at once; later
//! ones only count, and the count is written when the series ends ([`FINISH_TIME`] without an
//! occurrence), with the first occurrence [`REFRESH_TIME`] or more after the last write while it goes
//! on (upstream rewrites every series each [`REFRESH_TIME`], a scan of its whole cache), and when
//! `run` stops.
//!
//! Pure: time comes in as a value, and the cache says what to write instead of writing it. Each
//! occurrence costs O(1): at most three hash operations, plus, when it ends a generation, dropping
//! the old one, which the inserts that filled it have paid for (no occurrence scans the cache). The cache is bounded by two generations of
//! at most [`MAX_ENTRIES`]` / 2` keys each (upstream's map grows until its sweep, and its sweep and
//! refresh scan the whole map under its lock): a key seen again moves to the young generation, and
//! the old one is dropped whole when a generation ends ([`FINISH_TIME`], or the young one is full),
//! so a key is dropped at the earliest one generation after it was last seen.

use std::collections::HashMap;
use std::hash::Hash;
use std::time::Duration;

use crate::engine::time::Timestamp;

/// A series with no occurrence for this long has ended: its count is written a last time, and the
/// next occurrence is a new Event (upstream's `finishTime`).
pub const FINISH_TIME: Duration = Duration::from_secs(6 * 60);
/// A series that goes on has its count written again at its first occurrence this long after the
/// last write (upstream's `refreshTime`, which also keeps the Event from the API server's
/// `--event-ttl`, one hour by default).
pub const REFRESH_TIME: Duration = Duration::from_secs(30 * 60);
/// The keys kept at most: core/v1's `EventCorrelator` keeps an LRU of this many
/// (`maxLruCacheEntries`, `tools/record/events_cache.go`).
pub const MAX_ENTRIES: usize = 4096;

/// One Event as it is, or is to be, in the cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Series {
    /// The first occurrence: the Event's `eventTime` (and its name's suffix).
    pub first: Timestamp,
    /// Occurrences so far (1: a single event, no `series` yet).
    pub count: u32,
    /// The latest occurrence: `series.lastObservedTime`.
    pub last: Timestamp,
}

/// What an occurrence asks to be written now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum Write {
    /// A first occurrence: a new Event (POST).
    Create(Series),
    /// The series of an Event, to be written now (PATCH of `series`).
    Series(Series),
    /// Counted: written when the series ends, or refreshes, or when `run` stops.
    Counted,
}

#[derive(Debug)]
struct Entry {
    series: Series,
    /// The count last handed out to be written.
    written: u32,
    /// When it was.
    written_at: Timestamp,
}

impl Entry {
    fn unwritten(&self) -> bool {
        self.series.count > self.written
    }
}

/// The events seen recently, by key (upstream's `eventKey`), in two generations.
#[derive(Debug)]
pub struct SeriesCache<K> {
    young: HashMap<K, Entry>,
    old: HashMap<K, Entry>,
    /// When the young generation began.
    since: Timestamp,
    /// Keys per generation.
    capacity: usize,
    /// Entries (both generations) whose count has not been handed out to be written.
    unwritten: usize,
    /// Ended series with a count to write, for [`SeriesCache::take_finished`].
    finished: Vec<(K, Series)>,
}

impl<K: Hash + Eq + Clone> SeriesCache<K> {
    /// A cache of at most [`MAX_ENTRIES`] keys.
    #[must_use]
    pub fn new(now: Timestamp) -> Self {
        Self::with_capacity(now, MAX_ENTRIES)
    }

    /// A cache of at most `entries` keys (at least 2).
    #[must_use]
    pub fn with_capacity(now: Timestamp, entries: usize) -> Self {
        Self {
            young: HashMap::new(),
            old: HashMap::new(),
            since: now,
            capacity: (entries / 2).max(1),
            unwritten: 0,
            finished: Vec::new(),
        }
    }

    /// Keys kept.
    #[must_use]
    pub fn len(&self) -> usize {
        self.young.len() + self.old.len()
    }

    /// Whether no key is kept.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// An occurrence of the event `key` at `now` (mirrors `recordToSink`: a new key is created, the
    /// second occurrence starts the series and is written, later ones are counted). A key last seen
    /// [`FINISH_TIME`] ago or more starts anew: its series has ended.
    pub fn observe(&mut self, key: K, now: Timestamp) -> Write {
        self.sweep(now);
        if let Some(entry) = self.young.get_mut(&key) {
            return count(&key, entry, now, &mut self.unwritten, &mut self.finished);
        }
        let promoted = self.old.remove(&key);
        if self.young.len() >= self.capacity {
            self.rotate(now);
        }
        match promoted {
            Some(mut entry) => {
                let write = count(&key, &mut entry, now, &mut self.unwritten, &mut self.finished);
                self.young.insert(key, entry);
                write
            }
            None => {
                let series = Series { first: now, count: 1, last: now };
                self.young.insert(key, Entry { series, written: 1, written_at: now });
                Write::Create(series)
            }
        }
    }

    /// Ends the generation if [`FINISH_TIME`] has passed since it began: the old one's keys were
    /// not seen for that long, so their series have ended.
    pub fn sweep(&mut self, now: Timestamp) {
        if ended(self.since, now) {
            self.rotate(now);
        }
    }

    /// When [`SeriesCache::sweep`] should next be called: when the generation ends, if a count is
    /// waiting to be written.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        (self.unwritten > 0).then(|| self.since.add_nanos(nanos(FINISH_TIME)))
    }

    /// Ended series whose last count is still to be written (PATCH), oldest generation first.
    pub fn take_finished(&mut self) -> Vec<(K, Series)> {
        std::mem::take(&mut self.finished)
    }

    /// Every count not yet written, as when `run` stops: the series are handed out as ended, and
    /// the cache is left empty.
    pub fn drain(&mut self) -> Vec<(K, Series)> {
        let mut finished = self.take_finished();
        for (key, entry) in self.old.drain().chain(self.young.drain()) {
            if entry.unwritten() {
                finished.push((key, entry.series));
            }
        }
        self.unwritten = 0;
        finished
    }

    /// Drops the old generation (handing out the counts it had not written) and starts a new one.
    fn rotate(&mut self, now: Timestamp) {
        for (key, entry) in self.old.drain() {
            if entry.unwritten() {
                self.unwritten -= 1;
                self.finished.push((key, entry.series));
            }
        }
        // The emptied map's allocation is reused for the next young generation.
        std::mem::swap(&mut self.young, &mut self.old);
        self.since = now;
    }
}

/// Counts an occurrence on `key`'s entry; `unwritten` counts the entries with a count to write, and
/// a series that ended with one goes to `finished`.
fn count<K: Clone>(
    key: &K,
    entry: &mut Entry,
    now: Timestamp,
    unwritten: &mut usize,
    finished: &mut Vec<(K, Series)>,
) -> Write {
    let was_unwritten = entry.unwritten();
    if ended(entry.series.last, now) {
        if was_unwritten {
            *unwritten -= 1;
            finished.push((key.clone(), entry.series));
        }
        let series = Series { first: now, count: 1, last: now };
        *entry = Entry { series, written: 1, written_at: now };
        return Write::Create(series);
    }
    entry.series.count = entry.series.count.saturating_add(1);
    entry.series.last = now;
    if entry.series.count == 2 || now.nanos_since(entry.written_at) >= i128::from(nanos(REFRESH_TIME)) {
        if was_unwritten {
            *unwritten -= 1;
        }
        entry.written = entry.series.count;
        entry.written_at = now;
        return Write::Series(entry.series);
    }
    if !was_unwritten {
        *unwritten += 1;
    }
    Write::Counted
}

fn nanos(duration: Duration) -> i64 {
    i64::try_from(duration.as_nanos()).unwrap_or(i64::MAX)
}

/// Whether [`FINISH_TIME`] has passed from `since` to `now`.
fn ended(since: Timestamp, now: Timestamp) -> bool {
    now.nanos_since(since) >= i128::from(nanos(FINISH_TIME))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pod's UID and the event's note: what tells two events apart here.
    type Key = (&'static str, &'static str);

    const CANCELLING: Key = ("uid-1", "Cancelling deletion of Pod default/web-0");

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_unix_seconds(1_700_000_000 + seconds)
    }

    fn series(first: i64, count: u32, last: i64) -> Series {
        Series { first: at(first), count, last: at(last) }
    }

    #[test]
    fn first_occurrence_is_a_new_event_and_the_second_starts_the_series_written_at_once() {
        let mut cache = SeriesCache::new(at(0));
        assert_eq!(cache.observe(CANCELLING, at(0)), Write::Create(series(0, 1, 0)));
        assert_eq!(cache.poll_timeout(), None, "nothing waits to be written");
        assert_eq!(cache.observe(CANCELLING, at(10)), Write::Series(series(0, 2, 10)));
        assert_eq!(cache.poll_timeout(), None, "the count 2 is written with the occurrence");
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn later_occurrences_are_counted_and_their_count_written_when_the_series_ends() {
        let mut cache = SeriesCache::new(at(0));
        let _ = cache.observe(CANCELLING, at(0));
        let _ = cache.observe(CANCELLING, at(10));
        for (seconds, expected) in [(20, 3), (30, 4), (40, 5)] {
            assert_eq!(cache.observe(CANCELLING, at(seconds)), Write::Counted, "occurrence {expected}");
        }
        let six_minutes = i64::try_from(FINISH_TIME.as_secs()).unwrap();
        assert_eq!(cache.poll_timeout(), Some(at(six_minutes)), "the generation's end");
        cache.sweep(at(six_minutes - 1));
        assert!(cache.take_finished().is_empty(), "not before the generation ends");
        cache.sweep(at(six_minutes));
        assert!(cache.take_finished().is_empty(), "seen within the generation that ended: not finished yet");
        assert_eq!(cache.poll_timeout(), Some(at(2 * six_minutes)));
        cache.sweep(at(2 * six_minutes));
        assert_eq!(cache.take_finished(), vec![(CANCELLING, series(0, 5, 40))], "the last count, once");
        assert_eq!(cache.poll_timeout(), None, "nothing left to write");
        assert!(cache.is_empty(), "the ended series is dropped");
    }

    #[test]
    fn occurrence_after_the_window_is_a_new_event() {
        let six_minutes = i64::try_from(FINISH_TIME.as_secs()).unwrap();
        let mut cache = SeriesCache::new(at(0));
        let _ = cache.observe(CANCELLING, at(0));
        let _ = cache.observe(CANCELLING, at(100));
        assert_eq!(cache.observe(CANCELLING, at(100 + six_minutes - 1)), Write::Counted, "just within");
        let again = 100 + 2 * six_minutes - 1;
        assert_eq!(cache.observe(CANCELLING, at(again)), Write::Create(series(again, 1, again)), "after it");
        assert_eq!(cache.take_finished(), vec![(CANCELLING, series(0, 3, 100 + six_minutes - 1))]);
    }

    #[test]
    fn another_note_or_another_uid_is_another_event() {
        let mut cache = SeriesCache::new(at(0));
        let marking = ("uid-1", "Marking for deletion Pod default/web-0");
        let replacement = ("uid-2", "Cancelling deletion of Pod default/web-0");
        assert_eq!(cache.observe(CANCELLING, at(0)), Write::Create(series(0, 1, 0)));
        assert_eq!(cache.observe(marking, at(1)), Write::Create(series(1, 1, 1)));
        assert_eq!(cache.observe(replacement, at(2)), Write::Create(series(2, 1, 2)));
        assert_eq!(cache.observe(CANCELLING, at(3)), Write::Series(series(0, 2, 3)));
        assert_eq!(cache.len(), 3);
    }

    #[test]
    fn a_series_that_goes_on_is_written_every_refresh_time() {
        let refresh = i64::try_from(REFRESH_TIME.as_secs()).unwrap();
        let mut cache = SeriesCache::new(at(0));
        let _ = cache.observe(CANCELLING, at(0));
        let _ = cache.observe(CANCELLING, at(1));
        let mut written = Vec::new();
        // One occurrence a minute for an hour (within the window each time); the count 2 was
        // written at 1 s, so the next writes are due at 1,801 s and 3,601 s.
        for minute in 1..=61 {
            if let Write::Series(series) = cache.observe(CANCELLING, at(minute * 60)) {
                written.push(series.count);
            }
        }
        assert_eq!(written, vec![33, 63], "counts written every {refresh} s");
        assert!(cache.take_finished().is_empty(), "the series has not ended");
    }

    #[test]
    fn the_cache_keeps_at_most_its_capacity_and_hands_out_what_it_drops() {
        const KEYS: [&str; 10] = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"];
        let mut cache = SeriesCache::with_capacity(at(0), 4);
        for key in KEYS {
            let _ = cache.observe((key, "note"), at(0));
            let _ = cache.observe((key, "note"), at(1));
            assert_eq!(cache.observe((key, "note"), at(2)), Write::Counted);
            assert!(cache.len() <= 4, "{} keys kept after {key}", cache.len());
        }
        let dropped = cache.take_finished();
        let kept = cache.drain();
        assert_eq!(dropped.len() + kept.len(), KEYS.len(), "every unwritten count is handed out once");
        assert!(dropped.iter().chain(&kept).all(|(_, series)| series.count == 3));
        assert!(cache.is_empty());
        assert_eq!(cache.poll_timeout(), None);
    }

    #[test]
    fn a_key_seen_again_moves_to_the_young_generation_and_outlives_the_old_one() {
        let mut cache = SeriesCache::with_capacity(at(0), 4);
        let _ = cache.observe(("a", "note"), at(0));
        let _ = cache.observe(("b", "note"), at(0));
        let _ = cache.observe(("c", "note"), at(0)); // the young generation was full: a and b are old
        assert_eq!(cache.observe(("a", "note"), at(1)), Write::Series(series(0, 2, 1)), "a is found in the old one");
        let _ = cache.observe(("d", "note"), at(2)); // full again: b is dropped
        assert_eq!(cache.observe(("b", "note"), at(3)), Write::Create(series(3, 1, 3)), "b was dropped");
        assert_eq!(cache.observe(("a", "note"), at(4)), Write::Counted, "a was kept");
    }

    #[test]
    fn drain_hands_out_every_count_not_yet_written() {
        let mut cache = SeriesCache::new(at(0));
        let other = ("uid-2", "Cancelling deletion of Pod default/web-1");
        for seconds in 0..4 {
            let _ = cache.observe(CANCELLING, at(seconds));
        }
        let _ = cache.observe(other, at(0));
        let _ = cache.observe(other, at(1));
        assert_eq!(cache.drain(), vec![(CANCELLING, series(0, 4, 3))], "the other's count 2 is written already");
        assert!(cache.is_empty());
    }
}
