//! A slab: values stored by a dense integer index, in fixed-size chunks.
//!
//! The engine numbers its pods and nodes densely (freed numbers are reused), so a table indexed by
//! that number replaces a hash map: no hashing, no probing. Chunks rather than one `Vec` keep the
//! spare capacity under one chunk (a doubling `Vec` wastes up to half of itself) and make growth free
//! of copying. The first chunk grows with the table, so that a small table (an engine replaying one
//! node) stays small.
//!
//! Not the `slab` crate: there the slab picks each value's key, here the engine's numbering does (the
//! queue and the pod table share one number), and `slab` grows one `Vec` by doubling, which is the
//! copying and the spare half this avoids (docs/benchmarks-history.md, "What would close the misses", item 1).

use std::fmt;

/// Values per chunk.
const CHUNK: usize = 1024;

/// Values of type `T` by index. An index that was never written reads as empty.
pub(crate) struct Slab<T> {
    /// Chunks of at most `CHUNK` cells; every chunk but the first is allocated whole.
    chunks: Vec<Vec<Option<T>>>,
    len: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Self { chunks: Vec::new(), len: 0 }
    }
}

impl<T> Slab<T> {
    /// How many indexes hold a value.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The value at `index`.
    pub(crate) fn get(&self, index: usize) -> Option<&T> {
        self.chunks.get(index / CHUNK).and_then(|chunk| chunk.get(index % CHUNK)).and_then(Option::as_ref)
    }

    /// The value at `index`, mutably.
    pub(crate) fn get_mut(&mut self, index: usize) -> Option<&mut T> {
        self.chunks.get_mut(index / CHUNK).and_then(|chunk| chunk.get_mut(index % CHUNK)).and_then(Option::as_mut)
    }

    /// Stores `value` at `index` if it is empty and returns `true`; otherwise leaves it and returns
    /// `false`.
    pub(crate) fn insert_vacant(&mut self, index: usize, value: T) -> bool {
        let cell = self.cell(index);
        if cell.is_some() {
            return false;
        }
        *cell = Some(value);
        self.len += 1;
        true
    }

    /// Stores `value` at `index` and returns what was there.
    pub(crate) fn replace(&mut self, index: usize, value: T) -> Option<T> {
        let old = self.cell(index).replace(value);
        if old.is_none() {
            self.len += 1;
        }
        old
    }

    /// Empties `index` and returns what was there.
    pub(crate) fn take(&mut self, index: usize) -> Option<T> {
        let old =
            self.chunks.get_mut(index / CHUNK).and_then(|chunk| chunk.get_mut(index % CHUNK)).and_then(Option::take);
        if old.is_some() {
            self.len -= 1;
        }
        old
    }

    /// Every value with its index, in index order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, &T)> {
        self.chunks.iter().enumerate().flat_map(|(c, chunk)| {
            chunk.iter().enumerate().filter_map(move |(i, cell)| cell.as_ref().map(|value| (c * CHUNK + i, value)))
        })
    }

    /// Empties every index and frees the storage.
    pub(crate) fn clear(&mut self) {
        self.chunks = Vec::new();
        self.len = 0;
    }

    /// The cell at `index`, growing the slab to hold it.
    fn cell(&mut self, index: usize) -> &mut Option<T> {
        let (chunk, offset) = (index / CHUNK, index % CHUNK);
        if self.chunks.get(chunk).is_none_or(|cells| offset >= cells.len()) {
            self.grow(chunk, offset);
        }
        &mut self.chunks[chunk][offset]
    }

    /// Makes room for cell `offset` of chunk `chunk`.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, chunk: usize, offset: usize) {
        if chunk >= self.chunks.len() {
            self.chunks.resize_with(chunk + 1, Vec::new);
        }
        let cells = &mut self.chunks[chunk];
        let len = if chunk == 0 { (offset + 1).next_power_of_two().clamp(16, CHUNK) } else { CHUNK };
        cells.reserve_exact(len - cells.len());
        cells.resize_with(len, || None);
    }
}

impl<T: fmt::Debug> fmt::Debug for Slab<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slab_stores_by_index_across_chunks() {
        let mut slab = Slab::default();
        assert!(slab.insert_vacant(3, "a"));
        assert!(!slab.insert_vacant(3, "b"), "an occupied index is left as it is");
        assert_eq!(slab.replace(CHUNK + 5, "c"), None);
        assert_eq!(slab.get(3), Some(&"a"));
        assert_eq!(slab.get(4), None);
        assert_eq!(slab.get(10 * CHUNK), None, "beyond the end reads as empty");
        assert_eq!(slab.len(), 2);
        assert_eq!(slab.iter().collect::<Vec<_>>(), [(3, &"a"), (CHUNK + 5, &"c")]);
        assert_eq!(slab.take(3), Some("a"));
        assert_eq!(slab.take(3), None);
        assert_eq!(slab.len(), 1);
        slab.clear();
        assert_eq!(slab.get(CHUNK + 5), None);
        assert_eq!(slab.len(), 0);
    }
}
