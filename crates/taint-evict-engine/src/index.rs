//! The engine's lookup tables: pods by key, and shared copies of repeated values.
//!
//! Written here rather than taken from a crate, on purpose: this crate depends on nothing (its purity is
//! a fact Cargo checks), and what a crate would bring is a few lines — [`PodIndex`] stores 8 bytes a pod
//! where a `HashMap<PodKey, u32>` would store the key a second time. Their hashers are `hash`'s.

use std::collections::HashSet;
use std::hash::{BuildHasher, Hash};
use std::sync::Arc;

use super::hash::{FxBuild, HashKey, Keyed};
use super::model::PodKey;

/// A bucket of [`PodIndex`]: a pod number and the top half of its key's hash, or empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Bucket {
    id: u32,
    hash: u32,
}

const EMPTY: Bucket = Bucket { id: u32::MAX, hash: 0 };

/// Pod numbers by pod key: an open-addressing table (linear probing, backward-shift deletion) that
/// stores only the number and 32 bits of the key's hash. The keys stay in the engine's pod table,
/// where a lookup reads them through the caller's `key_of`, so no key is stored twice. Hashing is
/// keyed ([`Keyed`]), since pod names come from the cluster.
#[derive(Debug, Default)]
pub(crate) struct PodIndex {
    buckets: Vec<Bucket>,
    len: usize,
    hasher: Keyed,
}

impl PodIndex {
    /// An empty index hashing with `key`.
    pub(crate) fn with_key(key: HashKey) -> Self {
        Self { buckets: Vec::new(), len: 0, hasher: Keyed::new(key) }
    }

    /// How many pods the index holds.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The 32 bits of `key`'s hash the index works with.
    pub(crate) fn hash(&self, key: &PodKey) -> u32 {
        (self.hasher.hash_one(key) >> 32) as u32
    }

    /// The number of the pod with `key`, reading each candidate's key through `key_of`.
    pub(crate) fn get<'a>(&self, key: &PodKey, key_of: impl Fn(u32) -> &'a PodKey) -> Option<u32> {
        self.position(self.hash(key), key, key_of).map(|i| self.buckets[i].id)
    }

    /// Adds pod `id`, whose key hashes to `hash` (from [`PodIndex::hash`]) and is not in the index.
    /// `id` must be below `u32::MAX`.
    pub(crate) fn insert(&mut self, hash: u32, id: u32) {
        debug_assert_ne!(id, EMPTY.id, "the largest number marks empty buckets");
        if (self.len + 1) * 4 > self.buckets.len() * 3 {
            self.grow();
        }
        let mask = self.buckets.len() - 1;
        let mut i = hash as usize & mask;
        while self.buckets[i] != EMPTY {
            i = (i + 1) & mask;
        }
        self.buckets[i] = Bucket { id, hash };
        self.len += 1;
    }

    /// Removes the pod with `key` and returns its number.
    pub(crate) fn remove<'a>(&mut self, key: &PodKey, key_of: impl Fn(u32) -> &'a PodKey) -> Option<u32> {
        let mut hole = self.position(self.hash(key), key, key_of)?;
        let id = self.buckets[hole].id;
        let mask = self.buckets.len() - 1;
        // Backward-shift deletion: move up every following bucket of the run that may sit in the hole.
        let mut i = (hole + 1) & mask;
        while self.buckets[i] != EMPTY {
            let home = self.buckets[i].hash as usize & mask;
            if (i.wrapping_sub(home) & mask) >= (i.wrapping_sub(hole) & mask) {
                self.buckets[hole] = self.buckets[i];
                hole = i;
            }
            i = (i + 1) & mask;
        }
        self.buckets[hole] = EMPTY;
        self.len -= 1;
        Some(id)
    }

    /// The bucket holding `key`.
    fn position<'a>(&self, hash: u32, key: &PodKey, key_of: impl Fn(u32) -> &'a PodKey) -> Option<usize> {
        if self.buckets.is_empty() {
            return None;
        }
        let mask = self.buckets.len() - 1;
        let mut i = hash as usize & mask;
        loop {
            let bucket = self.buckets[i];
            if bucket == EMPTY {
                return None;
            }
            if bucket.hash == hash && key_of(bucket.id) == key {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// Doubles the table (at least 16 buckets), placing every pod again by its stored hash.
    fn grow(&mut self) {
        let size = (self.buckets.len() * 2).max(16);
        let old = std::mem::replace(&mut self.buckets, vec![EMPTY; size]);
        let mask = self.buckets.len() - 1;
        for bucket in old.into_iter().filter(|&bucket| bucket != EMPTY) {
            let mut i = bucket.hash as usize & mask;
            while self.buckets[i] != EMPTY {
                i = (i + 1) & mask;
            }
            self.buckets[i] = bucket;
        }
    }
}

/// One shared copy of each distinct value (namespaces, toleration lists): values that many pods carry
/// are kept once. Values no pod holds any more are dropped each time the set has doubled.
#[derive(Debug)]
///
/// A value that is already the shared copy (the dump reader shares equal lists and namespaces
/// before they reach the engine) is found by its address, without hashing its contents.
pub(crate) struct Interner<T: ?Sized> {
    /// Hashed with the engine's key: the values come from the cluster.
    values: HashSet<Arc<T>, Keyed>,
    /// The addresses of `values`' copies, which the set keeps alive.
    addresses: HashSet<usize, FxBuild>,
    sweep_at: usize,
}

impl<T: ?Sized> Interner<T> {
    /// An empty set hashing its values with `key`.
    pub(crate) fn with_key(key: HashKey) -> Self {
        Self { values: HashSet::with_hasher(Keyed::new(key)), addresses: HashSet::default(), sweep_at: 64 }
    }
}

impl<T: ?Sized> Default for Interner<T> {
    fn default() -> Self {
        Self::with_key(HashKey::default())
    }
}

fn address<T: ?Sized>(value: &Arc<T>) -> usize {
    Arc::as_ptr(value).cast::<()>() as usize
}

impl<T: ?Sized + Hash + Eq> Interner<T> {
    /// The shared copy of `value`, which becomes the shared copy if there was none.
    pub(crate) fn intern(&mut self, value: Arc<T>) -> Arc<T> {
        if self.addresses.contains(&address(&value)) {
            return value;
        }
        if let Some(shared) = self.values.get(&*value) {
            return shared.clone();
        }
        if self.values.len() >= self.sweep_at {
            self.values.retain(|shared| Arc::strong_count(shared) > 1);
            self.addresses.clear();
            self.addresses.extend(self.values.iter().map(address));
            self.sweep_at = 2 * self.values.len() + 64;
        }
        self.addresses.insert(address(&value));
        self.values.insert(value.clone());
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_index_finds_inserts_and_removes_through_the_callers_keys() {
        let keys: Vec<PodKey> = (0..1000).map(|i| PodKey::new(format!("ns-{}", i % 7), format!("pod-{i}"))).collect();
        let key_of = |id: u32| &keys[id as usize];
        let mut index = PodIndex::default();
        for (id, key) in keys.iter().enumerate() {
            index.insert(index.hash(key), id as u32);
        }
        assert_eq!(index.len(), 1000);
        for (id, key) in keys.iter().enumerate() {
            assert_eq!(index.get(key, key_of), Some(id as u32));
        }
        assert_eq!(index.get(&PodKey::new("ns-0", "pod-1"), key_of), None);
        for (id, key) in keys.iter().enumerate().filter(|(id, _)| id % 3 != 0) {
            assert_eq!(index.remove(key, key_of), Some(id as u32));
        }
        assert_eq!(index.remove(&keys[1], key_of), None);
        for (id, key) in keys.iter().enumerate() {
            let expected = (id % 3 == 0).then_some(id as u32);
            assert_eq!(index.get(key, key_of), expected, "{key}");
        }
        assert_eq!(index.len(), 334);
    }

    #[test]
    fn interner_shares_equal_values_and_forgets_unused_ones() {
        let mut interner = Interner::<str>::default();
        let a = interner.intern(Arc::from("web"));
        let b = interner.intern(Arc::from("web"));
        assert!(Arc::ptr_eq(&a, &b));
        drop((a, b));
        for i in 0..200 {
            drop(interner.intern(Arc::from(format!("ns-{i}"))));
        }
        assert!(interner.values.len() < 200, "{} unused values kept", interner.values.len());
        assert_eq!(interner.addresses.len(), interner.values.len());
    }

    #[test]
    fn interner_knows_its_shared_copies_by_address_and_equal_values_by_content() {
        let mut interner = Interner::<[u32]>::default();
        let shared = interner.intern(Arc::from([1, 2, 3]));
        assert!(Arc::ptr_eq(&interner.intern(shared.clone()), &shared));
        let equal = interner.intern(Arc::from([1, 2, 3]));
        assert!(Arc::ptr_eq(&equal, &shared), "an equal list at another address gets the shared copy");
        let other = interner.intern(Arc::from([1, 2]));
        assert!(!Arc::ptr_eq(&other, &shared));
        assert_eq!(*other, [1, 2]);
    }
}
