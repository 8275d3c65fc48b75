//! The building blocks of the streaming reader (`stream`): strings borrowed from the input, keys
//! compared as bytes, `null` as absent, and [`Fast`], which `raw` implements for its small structs
//! (taints, tolerations) so that they are read with their strings borrowed. Each refuses what the
//! exact reader refuses (a repeated field, a value of another type); see `stream` for what happens then.
//!
//! Owns: serde visitors and seeds that know no field names. Uses: serde only (the bottom layer).

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// A string, borrowed from the input unless it holds escapes.
pub(super) struct Str<'a>(pub(super) Cow<'a, str>);

impl<'de> Deserialize<'de> for Str<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct StrVisitor;
        impl<'de> Visitor<'de> for StrVisitor {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(StrVisitor)
    }
}

/// An object's key, as bytes: compared with the names the reader knows before (and instead of)
/// checking that it is UTF-8.
pub(super) struct Key<'a>(pub(super) Cow<'a, [u8]>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_bytes<E>(self, v: &'de [u8]) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.to_vec())))
            }
            // Deserializers other than serde_json's reader (a `serde_json::Value`, or serde's buffer
            // for a tagged enum) answer a request for bytes with the string.
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v.as_bytes())))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.as_bytes().to_vec())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.into_bytes())))
            }
        }
        deserializer.deserialize_bytes(KeyVisitor)
    }
}

impl<'a> Key<'a> {
    /// Refuses a key serde_json would not read as a string: bytes are read unchecked, so check the
    /// unknown keys here (known ones are plain ASCII). Control characters are refused even when
    /// escaped, which only sends such input to the exact readers.
    pub(super) fn check<E: serde::de::Error>(&self) -> Result<(), E> {
        let bytes = &*self.0;
        // One pass without branches for the usual printable ASCII; the rest is checked in full.
        let plain = !bytes.iter().fold(false, |other, &b| other | !(0x20..0x80).contains(&b));
        if plain || (bytes.iter().all(|&b| b >= 0x20) && std::str::from_utf8(bytes).is_ok()) {
            Ok(())
        } else {
            Err(E::custom("not a string"))
        }
    }

    /// The key (or a string value read the same way) as text, refused as [`Key::check`] refuses it.
    pub(super) fn into_text<E: serde::de::Error>(self) -> Result<Cow<'a, str>, E> {
        self.check()?;
        match self.0 {
            Cow::Borrowed(bytes) => std::str::from_utf8(bytes).map(Cow::Borrowed).map_err(E::custom),
            Cow::Owned(bytes) => String::from_utf8(bytes).map(Cow::Owned).map_err(E::custom),
        }
    }
}

/// The next map value as an optional string (`null` is absent).
pub(super) fn text<'de, M: MapAccess<'de>>(map: &mut M) -> Result<Option<Cow<'de, str>>, M::Error> {
    Ok(map.next_value::<Option<Str<'de>>>()?.map(|s| s.0))
}

/// Refuses a field seen before, as a derived `Deserialize` does.
pub(super) fn once<E: serde::de::Error>(seen: &mut bool) -> Result<(), E> {
    if std::mem::replace(seen, true) { Err(E::custom("duplicate field")) } else { Ok(()) }
}

/// `DeserializeSeed` for a visitor that is its own seed: it asks the deserializer for what `$how` reads.
macro_rules! seed {
    ([$($generics:tt)*] $type:ty => $how:ident) => {
        impl $($generics)* serde::de::DeserializeSeed<'de> for $type {
            type Value = <Self as serde::de::Visitor<'de>>::Value;
            fn deserialize<D: serde::de::Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
                deserializer.$how(self)
            }
        }
    };
}
pub(super) use seed;

/// `seed` for a value that may be `null` (then `None`).
pub(super) struct Opt<S>(pub(super) S);

seed!([<'de, S: DeserializeSeed<'de>>] Opt<S> => deserialize_option);

impl<'de, S: DeserializeSeed<'de>> Visitor<'de> for Opt<S> {
    type Value = Option<S::Value>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value or null")
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        self.0.deserialize(deserializer).map(Some)
    }
}

/// Reads one of the exact reader's small structs from an object, borrowing its strings (the derived
/// `Deserialize` copies every `Option<Cow<str>>`).
pub(super) trait Fast<'de>: Sized {
    fn read<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error>;
}

/// A field of a [`Fast`] struct.
pub(super) trait FastField<'de>: Sized {
    fn read<M: MapAccess<'de>>(map: &mut M) -> Result<Self, M::Error>;
}

impl<'de> FastField<'de> for Option<Cow<'de, str>> {
    fn read<M: MapAccess<'de>>(map: &mut M) -> Result<Self, M::Error> {
        text(map)
    }
}

impl<'de> FastField<'de> for Option<i64> {
    fn read<M: MapAccess<'de>>(map: &mut M) -> Result<Self, M::Error> {
        map.next_value()
    }
}

impl<'de> FastField<'de> for Option<bool> {
    fn read<M: MapAccess<'de>>(map: &mut M) -> Result<Self, M::Error> {
        map.next_value()
    }
}

/// Appends an array's elements to a list.
pub(super) struct Extend<'v, T>(pub(super) &'v mut Vec<T>);

seed!([<'de, T: Fast<'de>>] Extend<'_, T> => deserialize_seq);

impl<'de, T: Fast<'de>> Visitor<'de> for Extend<'_, T> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(element) = seq.next_element_seed(Element(PhantomData))? {
            self.0.push(element);
        }
        Ok(())
    }
}

/// One element of an [`Extend`]ed array.
struct Element<T>(PhantomData<T>);

impl<'de, T: Fast<'de>> DeserializeSeed<'de> for Element<T> {
    type Value = T;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        T::read(deserializer)
    }
}
