//! [`CompactStr`]: a text of up to 22 bytes kept in the value itself.
//!
//! Not `compact_str`: this crate depends on nothing, and what is needed is a fraction of that crate —
//! an immutable text built once from a dump and compared (no mutation, no formatting into it), in the
//! same 24 bytes.

use std::cmp::Ordering;
use std::fmt;
use std::ops::Deref;

/// The longest text kept in place: what fits beside the length byte in the space of a boxed one.
const INLINE: usize = 22;

/// An immutable text that takes no allocation of its own up to 22 bytes: the keys of taints and
/// tolerations, of which a dump can hold hundreds of thousands, and which are mostly short
/// (`node.kubernetes.io/unreachable` is 30 bytes: that one is boxed).
///
/// 24 bytes, where a `Box<str>` takes 16 plus its block (at least 32 with the allocator's
/// header). Compares, orders and hashes as its text.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct CompactStr(Repr);

/// Every text has one representation (up to [`INLINE`] bytes always in place, the rest zero), so the
/// derived equality and hash are those of the texts.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Repr {
    /// The first `len` bytes of `bytes`.
    Inline { len: u8, bytes: [u8; INLINE] },
    /// A longer text.
    Boxed(Box<str>),
}

impl CompactStr {
    /// The text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            // Whole `&str`s were copied in: the fallback is never taken.
            Repr::Inline { len, bytes } => std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default(),
            Repr::Boxed(text) => text,
        }
    }

    /// The text's bytes (without checking them again, unlike [`as_str`](Self::as_str)).
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Repr::Boxed(text) => text.as_bytes(),
        }
    }

    /// Whether the text is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.as_bytes().is_empty()
    }
}

impl Default for CompactStr {
    fn default() -> Self {
        Self(Repr::Inline { len: 0, bytes: [0; INLINE] })
    }
}

impl From<&str> for CompactStr {
    fn from(text: &str) -> Self {
        match u8::try_from(text.len()) {
            Ok(len) if text.len() <= INLINE => {
                let mut bytes = [0; INLINE];
                bytes[..text.len()].copy_from_slice(text.as_bytes());
                Self(Repr::Inline { len, bytes })
            }
            _ => Self(Repr::Boxed(text.into())),
        }
    }
}

impl From<String> for CompactStr {
    fn from(text: String) -> Self {
        if text.len() <= INLINE { Self::from(text.as_str()) } else { Self(Repr::Boxed(text.into())) }
    }
}

impl Deref for CompactStr {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl Ord for CompactStr {
    /// The order of the texts (byte by byte, as `str`'s).
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl PartialOrd for CompactStr {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq<str> for CompactStr {
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl fmt::Display for CompactStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for CompactStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests {
    use std::hash::BuildHasher;

    use super::*;

    #[test]
    fn short_texts_are_kept_in_place_and_long_ones_boxed() {
        assert_eq!(size_of::<CompactStr>(), 24);
        let fits = "k".repeat(INLINE);
        assert!(matches!(CompactStr::from(fits.as_str()).0, Repr::Inline { .. }));
        assert!(matches!(CompactStr::from(fits.clone() + "k").0, Repr::Boxed(_)));
        assert!(matches!(CompactStr::from(fits).0, Repr::Inline { .. }), "a short String is not kept boxed");
        assert_eq!(CompactStr::default(), CompactStr::from(""));
        assert!(CompactStr::default().is_empty());
    }

    proptest::proptest! {
        /// Texts around the inline length, of any characters: each reads back as written, and
        /// compares, orders and hashes as its text.
        #[test]
        fn compact_texts_behave_as_their_texts(
            a in ".{0,30}",
            b in "[a-c]{0,24}|.{20,24}",
            key in proptest::prelude::any::<[u64; 2]>(),
        ) {
            let (x, y) = (CompactStr::from(a.as_str()), CompactStr::from(b.clone()));
            proptest::prop_assert_eq!(x.as_str(), a.as_str());
            proptest::prop_assert_eq!(&*y, b.as_str());
            proptest::prop_assert_eq!(x.cmp(&y), a.cmp(&b));
            proptest::prop_assert_eq!(x == y, a == b);
            proptest::prop_assert_eq!(x == *b.as_str(), a == b);
            let state = crate::hash::Keyed::new(crate::hash::HashKey(key));
            if a == b {
                proptest::prop_assert_eq!(state.hash_one(&x), state.hash_one(&y));
            }
        }
    }
}
