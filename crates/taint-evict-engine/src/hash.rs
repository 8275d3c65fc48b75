//! The engine's hashers, deterministic: the same key hashes the same text to the same value on every
//! run and every machine. Nothing here asks the operating system for entropy.
//!
//! Two kinds, by what a table holds:
//! - [`Keyed`]: std's SipHash-1-3 (its `DefaultHasher`) keyed by a [`HashKey`] the caller supplies, for
//!   tables keyed by what the cluster names (pods, nodes, namespaces, toleration lists), which can be as
//!   large as the cluster: a key the writer of those names does not know keeps crafted names from
//!   falling into one bucket. The engine's default key is zero; a program facing a cluster passes a
//!   secret one ([`crate::Engine::with_hash_key`], [`crate::replay::Host`]; docs/architecture.md).
//! - [`Fx`]: unkeyed and a few instructions a word, for tables as small as one node's pods (crafted names
//!   cannot make those slow) and for addresses.
//!
//! Written here rather than taken from a crate: this crate depends on nothing (its purity is a fact
//! Cargo checks), and [`Fx`] is a few lines — rustc's `FxHasher` word step (`rustc-hash` 2 has moved to
//! another function; the replay's figures in docs/benchmarks-history.md were measured with this one).

use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher, Hasher};

/// The key of the engine's keyed hashes: 128 bits, secret to whoever writes the names hashed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HashKey(pub [u64; 2]);

/// Builds std's SipHash-1-3 hashers keyed by a [`HashKey`]: the key is hashed first, so every value
/// hashed after it starts from a state only the key decides.
#[derive(Clone, Debug)]
pub struct Keyed(DefaultHasher);

impl Keyed {
    /// The hashers of `key`.
    #[must_use]
    pub fn new(key: HashKey) -> Self {
        let mut keyed = DefaultHasher::new();
        keyed.write_u64(key.0[0]);
        keyed.write_u64(key.0[1]);
        Self(keyed)
    }
}

impl Default for Keyed {
    /// The hashers of the zero key.
    fn default() -> Self {
        Self::new(HashKey::default())
    }
}

impl BuildHasher for Keyed {
    type Hasher = DefaultHasher;

    fn build_hasher(&self) -> DefaultHasher {
        self.0.clone()
    }
}

/// A multiplicative hasher (rustc's `FxHasher`): a few instructions a word where SipHash takes
/// dozens. Unkeyed, so only for tables as small as one node's pods, which crafted names cannot
/// make slow, and for addresses.
#[derive(Clone, Copy, Default)]
pub(crate) struct Fx(u64);

/// Builds [`Fx`] hashers.
pub(crate) type FxBuild = BuildHasherDefault<Fx>;

impl Fx {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let mut last = [0; 8];
        last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        self.add(u64::from_le_bytes(last));
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    fn write_usize(&mut self, word: usize) {
        self.add(word as u64);
    }

    fn finish(&self) -> u64 {
        // hashbrown takes the bucket from the low bits and the tag from the top seven.
        self.0.rotate_left(26)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_hashes_a_text_the_same_on_every_run_and_another_key_differently() {
        let key = HashKey([0x0123_4567_89ab_cdef, 42]);
        let text = "payments/api-7d9c6b8f5-c6jfs";
        assert_eq!(Keyed::new(key).hash_one(text), Keyed::new(key).hash_one(text));
        assert_ne!(Keyed::new(key).hash_one(text), Keyed::new(HashKey([1, 42])).hash_one(text));
        assert_ne!(Keyed::new(key).hash_one(text), Keyed::new(key).hash_one("payments/api-7d9c6b8f5-c6jft"));
        assert_eq!(Keyed::default().hash_one(text), Keyed::new(HashKey([0, 0])).hash_one(text));
    }
}
