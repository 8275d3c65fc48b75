//! Reading a dump's bytes so that input that is not a dump cannot take the process down.
//!
//! A stream (stdin, a pipe, a device) is checked as JSON while it arrives, so `/dev/zero`,
//! `/dev/urandom` or a binary file fail at their first wrong byte instead of being read to the end
//! first; an endless run of white space (`yes " "`) fails after [`MAX_BLANK_RUN`] bytes. A regular
//! file has a size, and its first [`PREFIX`] bytes are checked before the rest is read: a file of
//! [`GROUPED_FROM`] bytes or more that is a List is then read a group of items at a time (see
//! `groups`), so that its bytes are never all held; a smaller one, or one of another shape, is read
//! in one allocation of its size. Either way the bytes then go to [`read`](super::read), which says
//! exactly what is wrong and where; this module only decides when to stop reading.
//!
//! Neither is read past [`MaxSize`] (`--max-response-size`, 2 GiB unless given): a regular file larger
//! than that is refused before it is read, and a stream once that many bytes came (an endless list of
//! items that is valid JSON all along). The live cluster's answers are held to the same bound
//! (`cluster::bound`).
//!
//! Owns: reading a dump's bytes from a stream or a file, and the size bound. Uses: the facade
//! ([`read_keeping`]), the streaming reader and the builder (a group at a time).

use std::io::{self, BufReader, Cursor, Read, Seek, SeekFrom};

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::build::Builder;
use super::read::read_keeping;
use super::{DumpError, Keep, groups, stream};
use crate::engine::snapshot::Snapshot;

/// The longest run of white space (outside strings) a dump may hold. kubectl indents by a few spaces
/// per level; a megabyte of nothing is not a dump.
pub const MAX_BLANK_RUN: usize = 1 << 20;

/// The deepest nesting read: serde_json's limit, which the exact reader applies. The check below
/// skips values without one, so it counts for itself.
pub const MAX_DEPTH: usize = 128;

/// How much of a regular file is checked before the rest is read.
pub const PREFIX: usize = 64 << 10;

/// The size from which a regular file is read a group of items at a time: below it, the file takes
/// less than the program itself.
pub const GROUPED_FROM: u64 = 4 << 20;

/// The most bytes of items a group holds: as many as the streaming reader splits between two
/// threads, so that a group of a large file is read as fast as the whole file would be.
const GROUP: usize = 8 << 20;

/// The fewest bytes of items a group holds: a group is read on one thread, with the cutter and node
/// health beside it, so a smaller one would only add hand-overs.
const SMALLEST_GROUP: usize = 1 << 20;

/// How many bytes of items a group of a file of `size` bytes holds: a 32nd of the file, within
/// [`SMALLEST_GROUP`]..=[`GROUP`], so that the groups in flight (three) hold a tenth of the file.
fn group_for(size: u64) -> usize {
    usize::try_from(size / 32).unwrap_or(usize::MAX).clamp(SMALLEST_GROUP, GROUP)
}

/// `--max-response-size`: the most bytes a dump, or one answer of the API server (a list page, an
/// object), may hold. One event of a watch holds one object: it may take a 32nd of this, 64 MiB at
/// least (and never more than the whole). See docs/errors.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaxSize(u64);

impl MaxSize {
    /// 2 GiB: a LIST of 150,000 pods from the watch cache is one page of about 1 GB of JSON.
    pub const DEFAULT: Self = Self(2 << 30);

    /// The least one event of a watch may take: the API server stores no object larger than a few
    /// MiB (etcd's 1.5 MiB by default), so this leaves room for any JSON of one.
    const EVENT_AT_LEAST: u64 = 64 << 20;

    /// A bound of `bytes`; `None` for 0.
    #[must_use]
    pub const fn new(bytes: u64) -> Option<Self> {
        if bytes > 0 { Some(Self(bytes)) } else { None }
    }

    /// The bound, in bytes.
    #[must_use]
    pub fn bytes(self) -> u64 {
        self.0
    }

    /// The most bytes one event of a watch may take.
    #[must_use]
    pub fn event(self) -> u64 {
        (self.0 / 32).max(Self::EVENT_AT_LEAST).min(self.0)
    }

    /// Parses `--max-response-size`: bytes, or a number with a unit as Kubernetes writes quantities
    /// (`512Mi`, `2Gi`, `2G`; `MiB` and `GiB` are taken too).
    ///
    /// # Errors
    /// What is wrong with `text`, in words.
    pub fn parse(text: &str) -> Result<Self, String> {
        let usage = || format!("expected a size such as 2Gi, 512Mi or 1000000 (bytes), not {text:?}");
        let digits = text.bytes().take_while(u8::is_ascii_digit).count();
        let (number, unit) = text.split_at(digits);
        let number: u64 = number.parse().map_err(|_| usage())?;
        let unit: u64 = match unit.strip_suffix('B').filter(|binary| binary.ends_with('i')).unwrap_or(unit) {
            "" => 1,
            "k" => 1_000,
            "M" => 1_000_000,
            "G" => 1_000_000_000,
            "T" => 1_000_000_000_000,
            "Ki" => 1 << 10,
            "Mi" => 1 << 20,
            "Gi" => 1 << 30,
            "Ti" => 1 << 40,
            _ => return Err(usage()),
        };
        let bytes = number.checked_mul(unit).ok_or_else(|| format!("{text:?} is more bytes than can be counted"))?;
        Self::new(bytes).ok_or_else(|| format!("expected a size of 1 byte or more such as 2Gi, not {text:?}"))
    }
}

impl Default for MaxSize {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// `2 GiB`, `64 MiB`: the largest unit that says it exactly.
impl std::fmt::Display for MaxSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let unit = ["TiB", "GiB", "MiB", "KiB"]
            .iter()
            .zip([40, 30, 20, 10])
            .find(|(_, shift)| self.0.is_multiple_of(1 << shift));
        match unit {
            Some((unit, shift)) => write!(f, "{} {unit}", self.0 >> shift),
            None => write!(f, "{} bytes", self.0),
        }
    }
}

/// What is read beside the snapshot, from the same bytes: from the whole file, or from each group of
/// its items, whose parts then make what the whole would.
pub trait Beside: Sync {
    /// What is read.
    type Out: Send;
    /// What one group's items give, and what the groups read so far give together (`default`:
    /// none yet).
    type Part: Send + Default;
    /// Reads the whole file's bytes.
    fn whole(&self, bytes: &[u8]) -> Self::Out;
    /// Reads one group's list document; `None` when that fails (the file is then read whole, and
    /// the error is the whole reading's).
    fn part(&self, bytes: &[u8]) -> Option<Self::Part>;
    /// Adds what a later group gives to what the groups before it gave: as each group is read, so
    /// that no group's part is kept apart.
    fn add(&self, before: &mut Self::Part, later: Self::Part);
    /// What every group together gives.
    fn join(&self, all: Self::Part) -> Self::Out;
}

/// Nothing read beside the snapshot.
impl Beside for () {
    type Out = ();
    type Part = ();
    fn whole(&self, _: &[u8]) {}
    fn part(&self, _: &[u8]) -> Option<()> {
        Some(())
    }
    fn add(&self, (): &mut (), (): ()) {}
    fn join(&self, (): ()) {}
}

/// Why reading stopped before a snapshot was made.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The operating system failed the read.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The bytes are not a dump.
    #[error(transparent)]
    Dump(#[from] DumpError),
    /// The dump is larger than `--max-response-size`; reading stopped there.
    #[error("the dump is larger than {0} (--max-response-size)")]
    TooLarge(MaxSize),
}

/// Reads a dump from a stream, checking the JSON as it arrives. See the module docs.
///
/// # Errors
/// A read failure, or what is wrong with the input (at its first wrong byte).
pub fn read_stream(source: impl Read) -> Result<Snapshot, ReadError> {
    read_stream_then(source, &Keep::default(), &(), MaxSize::DEFAULT).map(|(snapshot, ())| snapshot)
}

/// [`read_stream`], and what `beside` reads of the same bytes (which are dropped after it); no more
/// than `max` bytes are read.
///
/// # Errors
/// As [`read_stream`], and [`ReadError::TooLarge`] past `max`.
pub fn read_stream_then<B: Beside>(
    source: impl Read,
    keep: &Keep,
    beside: &B,
    max: MaxSize,
) -> Result<(Snapshot, B::Out), ReadError> {
    let mut tee = Tee::new(source, Vec::new(), max);
    let checked = check(&mut tee);
    if let Some(error) = tee.failed.take() {
        return Err(ReadError::Io(error));
    }
    if tee.too_large {
        return Err(ReadError::TooLarge(max));
    }
    let bytes = tee.copy;
    if let Some(at) = tee.blank_since {
        return Err(DumpError::Json(format!(
            "more than {} MiB of white space from byte {at} on (is the input endless?)",
            MAX_BLANK_RUN >> 20
        ))
        .into());
    }
    finish_then(&bytes, checked, keep, |bytes| beside.whole(bytes))
}

/// Reads a regular file of `size` bytes: the first [`PREFIX`] bytes are checked before the rest is
/// read, into one allocation of the file's size, or, from [`GROUPED_FROM`] bytes on, a group of items
/// at a time (a 32nd of the file, 1 to 8 MiB; see the module docs).
///
/// # Errors
/// A read failure, or what is wrong with the input.
pub fn read_file(source: impl Read + Seek + Send, size: u64) -> Result<Snapshot, ReadError> {
    read_file_then(source, size, &Keep::default(), &(), MaxSize::DEFAULT).map(|(snapshot, ())| snapshot)
}

/// [`read_file`], and what `beside` reads of the same bytes; a file larger than `max` is not read.
///
/// # Errors
/// As [`read_file`], and [`ReadError::TooLarge`] past `max`.
pub fn read_file_then<B: Beside>(
    source: impl Read + Seek + Send,
    size: u64,
    keep: &Keep,
    beside: &B,
    max: MaxSize,
) -> Result<(Snapshot, B::Out), ReadError> {
    read_file_in_groups(source, size, keep, beside, GROUPED_FROM, group_for(size), max)
}

/// [`read_file_then`], in groups of `group` bytes from `grouped_from` bytes on.
fn read_file_in_groups<B: Beside>(
    mut source: impl Read + Seek + Send,
    size: u64,
    keep: &Keep,
    beside: &B,
    grouped_from: u64,
    group: usize,
    max: MaxSize,
) -> Result<(Snapshot, B::Out), ReadError> {
    if size > max.bytes() {
        return Err(ReadError::TooLarge(max));
    }
    // A file that grows while it is read is read no further than the bound, and one byte past it.
    let past = max.bytes().saturating_add(1);
    let capacity = usize::try_from(size).unwrap_or(usize::MAX).saturating_add(1);
    let mut bytes = Vec::new();
    let grouped = size >= grouped_from;
    bytes
        .try_reserve_exact(if grouped { PREFIX } else { capacity })
        .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
    source.by_ref().take(PREFIX as u64).read_to_end(&mut bytes)?;
    let mut prefix = serde_json::Deserializer::from_slice(&bytes);
    if let Err(error) = IgnoredAny::deserialize(&mut prefix).and_then(|_| prefix.end())
        && !error.is_eof()
    {
        return finish_then(&bytes, Err(error), keep, |bytes| beside.whole(bytes));
    }
    if grouped {
        let rest = (&mut source).take(past.saturating_sub(PREFIX as u64));
        if let Some(read) = read_grouped(Cursor::new(&bytes).chain(rest), keep, beside, group)? {
            return Ok(read);
        }
        // Not a List read in groups: the whole file, as a smaller one is read.
        source.seek(SeekFrom::Start(0))?;
        bytes = Vec::new();
        bytes.try_reserve_exact(capacity).map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
    }
    let read = bytes.len() as u64;
    source.take(past.saturating_sub(read)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max.bytes() {
        return Err(ReadError::TooLarge(max));
    }
    finish_then(&bytes, Ok(()), keep, |bytes| beside.whole(bytes))
}

/// The snapshot and what `beside` reads, a group of `source`'s items at a time: one thread cuts the
/// file into groups while each group before is read as a whole file would be (`beside` on a thread
/// of its own); `None` when `source` is not a List, or a group is not read (the caller reads the file
/// whole, to say exactly what is wrong).
fn read_grouped<B: Beside>(
    source: impl Read + Send,
    keep: &Keep,
    beside: &B,
    group: usize,
) -> io::Result<Option<(Snapshot, B::Out)>> {
    let mut whole = Builder::new(keep.clone());
    let mut together = B::Part::default();
    std::thread::scope(|scope| {
        // One group waits while one is read and the next is cut: the bytes held are three groups'.
        let (give, groups) = std::sync::mpsc::sync_channel::<Vec<u8>>(1);
        let cutter = scope.spawn(move || groups::each_group(source, group, |bytes| give.send(bytes).is_ok()));
        let mut read_all = true;
        for bytes in groups {
            let (list, part) = std::thread::scope(|scope| {
                let part = scope.spawn(|| beside.part(&bytes));
                let list = stream::read_list(&bytes, None, true, keep);
                (list, part.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            });
            match (list, part) {
                (Some(list), Some(part)) if list.has_items => {
                    whole.absorb(list.snapshot);
                    beside.add(&mut together, part);
                }
                // Dropping the receiver stops the cutter.
                _ => {
                    read_all = false;
                    break;
                }
            }
        }
        let followed = cutter.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        Ok((followed && read_all).then(|| (whole.finish(), beside.join(together))))
    })
}

/// [`finish`], with `then` over the same bytes on a second thread: a second reading of a large dump
/// (`plan` reads node health apart) then costs no wall-clock time on a machine with two cores.
fn finish_then<T: Send>(
    bytes: &[u8],
    checked: Result<(), serde_json::Error>,
    keep: &Keep,
    then: impl FnOnce(&[u8]) -> T + Send,
) -> Result<(Snapshot, T), ReadError> {
    std::thread::scope(|scope| {
        let other = scope.spawn(|| then(bytes));
        let snapshot = finish(bytes, checked, keep);
        let other = other.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        Ok((snapshot?, other))
    })
}

/// The snapshot, or the exact reader's words for what the check found.
fn finish(bytes: &[u8], checked: Result<(), serde_json::Error>, keep: &Keep) -> Result<Snapshot, ReadError> {
    match (read_keeping(bytes, keep), checked) {
        (Ok(snapshot), Ok(())) => Ok(snapshot),
        (Err(error), _) => Err(error.into()),
        // The check stopped reading, so `bytes` is a prefix: it must not pass for the whole input.
        (Ok(_), Err(error)) => Err(DumpError::Json(error.to_string()).into()),
    }
}

/// Checks that `tee` yields one JSON document and nothing after it, reading no further than needed.
fn check<R: Read>(tee: &mut Tee<R>) -> Result<(), serde_json::Error> {
    let mut json = serde_json::Deserializer::from_reader(BufReader::with_capacity(PREFIX, tee));
    IgnoredAny::deserialize(&mut json)?;
    json.end()
}

/// Keeps a copy of what passes through, and watches for endless white space and for the bound.
struct Tee<R> {
    source: R,
    copy: Vec<u8>,
    /// The most bytes kept; reading stops past it.
    max: u64,
    /// More than `max` bytes came; reading has stopped.
    too_large: bool,
    /// Inside a string, and just after a backslash in one.
    in_string: bool,
    escaped: bool,
    /// The white space run so far (outside strings).
    blank: usize,
    /// Open arrays and objects; reading stops past [`MAX_DEPTH`].
    depth: usize,
    /// Where the run that went over the limit began; reading has stopped.
    blank_since: Option<usize>,
    /// A read error, kept to report as such (serde_json would call it a JSON error).
    failed: Option<io::Error>,
}

impl<R> Tee<R> {
    fn new(source: R, copy: Vec<u8>, max: MaxSize) -> Self {
        Self {
            source,
            copy,
            max: max.bytes(),
            too_large: false,
            in_string: false,
            escaped: false,
            blank: 0,
            depth: 0,
            blank_since: None,
            failed: None,
        }
    }

    /// Keeps `bytes`, growing the copy by doubling but never past the bound; `false`, keeping
    /// nothing, when they would pass it.
    fn keep(&mut self, bytes: &[u8]) -> bool {
        let len = self.copy.len() as u64 + bytes.len() as u64;
        if len > self.max {
            self.too_large = true;
            return false;
        }
        if self.copy.capacity() - self.copy.len() < bytes.len() {
            let wanted = (self.copy.capacity() as u64).saturating_mul(2).clamp(len, self.max);
            self.copy.reserve_exact(usize::try_from(wanted).unwrap_or(usize::MAX) - self.copy.len());
        }
        self.copy.extend_from_slice(bytes);
        true
    }

    /// Follows the strings, nesting and white space in `bytes`; `false` once a run is too long or
    /// the nesting too deep (the exact reader then names the place).
    fn scan(&mut self, bytes: &[u8]) -> bool {
        for (i, &b) in bytes.iter().enumerate() {
            if self.in_string {
                match (self.escaped, b) {
                    (true, _) => self.escaped = false,
                    (false, b'\\') => self.escaped = true,
                    (false, b'"') => self.in_string = false,
                    _ => {}
                }
            } else if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                self.blank += 1;
                if self.blank > MAX_BLANK_RUN {
                    self.blank_since = Some(self.copy.len() + i + 1 - self.blank);
                    return false;
                }
            } else {
                self.blank = 0;
                match b {
                    b'"' => self.in_string = true,
                    b'[' | b'{' => {
                        self.depth += 1;
                        if self.depth > MAX_DEPTH {
                            return false;
                        }
                    }
                    b']' | b'}' => self.depth = self.depth.saturating_sub(1),
                    _ => {}
                }
            }
        }
        true
    }
}

impl<R: Read> Read for Tee<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.blank_since.is_some() || self.depth > MAX_DEPTH || self.failed.is_some() || self.too_large {
            return Ok(0);
        }
        let n = loop {
            match self.source.read(buf) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.failed = Some(e);
                    return Ok(0);
                }
            }
        };
        let more = self.scan(&buf[..n]);
        if !self.keep(&buf[..n]) {
            return Ok(0);
        }
        Ok(if more { n } else { 0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An endless source of `pattern` (after `head`), counting what it gave. Past 64 MiB it fails
    /// the read, so that a reader that would read on forever fails its test instead of taking the
    /// machine's memory.
    struct Endless {
        head: &'static [u8],
        pattern: &'static [u8],
        given: usize,
    }

    impl Endless {
        fn new(pattern: &'static [u8]) -> Self {
            Self { head: b"", pattern, given: 0 }
        }
    }

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.given > 64 << 20 {
                return Err(io::Error::other("read on past 64 MiB of an endless source"));
            }
            for (i, b) in buf.iter_mut().enumerate() {
                let at = self.given + i;
                *b = match self.head.get(at) {
                    Some(b) => *b,
                    None => self.pattern[(at - self.head.len()) % self.pattern.len()],
                };
            }
            self.given += buf.len();
            Ok(buf.len())
        }
    }

    /// Any position is the same endless pattern's.
    impl Seek for Endless {
        fn seek(&mut self, _: SeekFrom) -> io::Result<u64> {
            Ok(0)
        }
    }

    fn endless(pattern: &'static [u8]) -> (Result<Snapshot, ReadError>, usize) {
        let mut source = Endless::new(pattern);
        let result = read_stream(&mut source);
        (result, source.given)
    }

    #[test]
    fn endless_zeros_fail_at_the_first_byte_after_one_buffer() {
        let (result, given) = endless(b"\0");
        assert_eq!(result.expect_err("not JSON").to_string(), "not valid JSON: expected value at line 1 column 1");
        assert!(given <= PREFIX, "read {given} bytes");
    }

    #[test]
    fn endless_white_space_fails_after_the_limit() {
        let (result, given) = endless(b" \n");
        assert_eq!(
            result.expect_err("blank").to_string(),
            "not valid JSON: more than 1 MiB of white space from byte 0 on (is the input endless?)"
        );
        assert!(given <= MAX_BLANK_RUN + 2 * PREFIX, "read {given} bytes");
    }

    #[test]
    fn endless_nesting_fails_at_the_limit() {
        let (result, given) = endless(b"[{\"a\":");
        assert_eq!(
            result.expect_err("deep").to_string(),
            "not valid JSON: recursion limit exceeded at line 1 column 380"
        );
        assert!(given <= 2 * PREFIX, "read {given} bytes");
    }

    #[test]
    fn a_failing_read_is_a_read_error_not_a_json_error() {
        let source = br#"{"kind":"List","items":["#.chain(Failing);
        assert!(matches!(read_stream(source), Err(ReadError::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe));
    }

    struct Failing;

    impl Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
    }

    #[test]
    fn white_space_inside_strings_is_not_counted() {
        let mut text = br#"{"kind":"List","items":[{"kind":"Node","metadata":{"name":"n","labels":{"a":""#.to_vec();
        text.extend(std::iter::repeat_n(b' ', MAX_BLANK_RUN + 10));
        text.extend(br#"\" "}}}]}"#);
        let snapshot = read_stream(text.as_slice()).expect("a dump");
        assert_eq!(snapshot.nodes.len(), 1);
    }

    #[test]
    fn a_document_followed_by_garbage_fails_where_the_garbage_starts() {
        let error = read_stream(&br#"{"kind":"List","items":[]} x"#[..]).expect_err("trailing");
        assert_eq!(error.to_string(), "not valid JSON: trailing characters at line 1 column 28");
    }

    #[test]
    fn a_regular_file_of_zeros_fails_before_it_is_read_whole() {
        let mut source = Endless::new(b"\0");
        let error = read_file(&mut source, 1 << 30).expect_err("not JSON");
        assert_eq!(error.to_string(), "not valid JSON: expected value at line 1 column 1");
        assert_eq!(source.given, PREFIX, "only the prefix is read");
    }

    /// A list whose items never end: valid JSON as far as it goes.
    fn endless_items() -> Endless {
        Endless {
            head: br#"{"kind":"List","items":["#,
            pattern: br#"{"kind":"Node","metadata":{"name":"n"}},"#,
            given: 0,
        }
    }

    const ONE_MIB: MaxSize = MaxSize(1 << 20);

    #[test]
    fn an_endless_stream_of_items_stops_at_the_bound() {
        let mut source = endless_items();
        let error = read_stream_then(&mut source, &Keep::default(), &(), ONE_MIB).expect_err("endless");
        assert_eq!(error.to_string(), "the dump is larger than 1 MiB (--max-response-size)");
        assert!(source.given <= (1 << 20) + 2 * PREFIX, "read {} bytes", source.given);
    }

    #[test]
    fn a_file_larger_than_the_bound_is_not_read_and_one_growing_past_it_stops_there() {
        let eight_mib = MaxSize(8 << 20);
        // Refused before a byte is read; declared small (read whole) or large (read in groups) and
        // growing: read no further than the bound and a byte (twice, when the groups fail first).
        for (size, max, read_at_most) in [
            ((1 << 20) + 1, ONE_MIB, 0),
            (1000, ONE_MIB, (1 << 20) + 1),
            (GROUPED_FROM, eight_mib, 2 * ((8 << 20) + 1)),
        ] {
            let mut source = endless_items();
            let error = read_file_then(&mut source, size, &Keep::default(), &(), max).expect_err("too large");
            assert!(matches!(error, ReadError::TooLarge(m) if m == max), "{size}: {error}");
            assert!(source.given <= read_at_most, "{size}: read {} bytes", source.given);
        }
        let dump = include_bytes!("../../examples/incident.json");
        let exact = MaxSize::new(dump.len() as u64).expect("not empty");
        assert!(read_file_then(Cursor::new(dump), dump.len() as u64, &Keep::default(), &(), exact).is_ok());
        assert!(read_stream_then(&dump[..], &Keep::default(), &(), exact).is_ok(), "the bound itself is allowed");
    }

    #[test]
    fn sizes_read_as_kubernetes_quantities_and_an_event_takes_a_32nd_at_least_64_mib() {
        let parsed = |text| MaxSize::parse(text).map(MaxSize::bytes);
        assert_eq!(parsed("2Gi"), Ok(2 << 30));
        assert_eq!(parsed("512Mi"), Ok(512 << 20));
        assert_eq!(parsed("64MiB"), Ok(64 << 20));
        assert_eq!(parsed("2G"), Ok(2_000_000_000));
        assert_eq!(parsed("1048576"), Ok(1 << 20));
        for bad in ["", "0", "2 Gi", "Gi", "-1", "2gi", "1.5Gi", "2MB", "99999999999Ti"] {
            assert!(MaxSize::parse(bad).is_err(), "{bad:?} was taken");
        }
        assert_eq!(MaxSize::DEFAULT.to_string(), "2 GiB");
        assert_eq!(MaxSize(1536 << 20).to_string(), "1536 MiB");
        assert_eq!(MaxSize(1000).to_string(), "1000 bytes");
        assert_eq!(MaxSize::DEFAULT.event(), 64 << 20);
        assert_eq!(MaxSize(8 << 30).event(), 256 << 20);
        assert_eq!(MaxSize(256 << 20).event(), 64 << 20);
        assert_eq!(MaxSize(16 << 20).event(), 16 << 20);
    }

    /// `dump` read whole and a group at a time (`group` bytes), snapshot and node health as text,
    /// and whether the groups were read (rather than the whole file again).
    fn whole_and_grouped(dump: &[u8], group: usize) -> ([String; 2], bool) {
        let beside = crate::decode::lifecycle::HealthBeside;
        let read = |grouped_from| {
            let read = read_file_in_groups(
                Cursor::new(dump),
                dump.len() as u64,
                &Keep::default(),
                &beside,
                grouped_from,
                group,
                MaxSize::DEFAULT,
            );
            format!("{:?}", read.map_err(|e| e.to_string()))
        };
        let grouped = read_grouped(dump, &Keep::default(), &beside, group).expect("no read error").is_some();
        ([read(u64::MAX), read(0)], grouped)
    }

    #[test]
    fn a_group_is_a_32nd_of_the_file_from_one_to_eight_mib() {
        assert_eq!(group_for(GROUPED_FROM), 1 << 20);
        assert_eq!(group_for(64 << 20), 2 << 20);
        assert_eq!(group_for(256 << 20), GROUP);
        assert_eq!(group_for(1 << 40), GROUP);
    }

    #[test]
    fn a_list_read_a_group_at_a_time_is_read_as_whole() {
        let dumps: [&[u8]; 4] = [
            include_bytes!("../../examples/incident.json"),
            include_bytes!("../../tests/data/nlc/b-rate-limit-4-of-12.json"),
            include_bytes!("../../tests/data/nlc/d-all-zones-down.json"),
            br#"{"items": []}"#,
        ];
        for dump in dumps {
            for group in [1, 700, 5000, 1 << 20] {
                let ([whole, grouped], read_in_groups) = whole_and_grouped(dump, group);
                assert!(whole.starts_with("Ok("), "{whole}");
                assert!(read_in_groups, "groups of {group} bytes");
                assert_eq!(grouped, whole, "groups of {group} bytes");
            }
        }
    }

    #[test]
    fn what_groups_do_not_read_is_read_whole_as_before() {
        let dump = include_str!("../../tests/data/nlc/b-rate-limit-4-of-12.json");
        let bad_time = dump.replacen("\"creationTimestamp\": \"", "\"creationTimestamp\": \"x", 1);
        let kinds = dump.replacen("{", "{\"kind\": \"List\",", 1);
        let typed = dump.replacen("\"kind\": \"List\"", "\"kind\": \"NodeList\"", 1);
        let garbage = format!("{dump} x");
        for text in [&bad_time, &kinds, &typed, &garbage] {
            let ([whole, grouped], read_in_groups) = whole_and_grouped(text.as_bytes(), 1);
            assert!(!read_in_groups, "{}", &text[..60]);
            assert!(grouped == whole, "read as before: {}", &text[..60]);
            if text == &bad_time || text == &garbage {
                assert!(whole.contains("Err("), "an error: {}", &text[..60]);
            }
        }
    }

    #[test]
    fn stream_and_file_read_what_the_slice_reader_reads() {
        let dump = include_bytes!("../../examples/incident.json");
        let expected = crate::decode::read(dump).expect("the example");
        let streamed = read_stream(&dump[..]).expect("streamed");
        let whole = read_file(Cursor::new(&dump[..]), dump.len() as u64).expect("read whole");
        assert_eq!(format!("{streamed:?}"), format!("{expected:?}"));
        assert_eq!(format!("{whole:?}"), format!("{expected:?}"));
    }
}
