//! The byte-level reader under the streaming reader (`stream`): a serde [`Deserializer`] over a
//! list's bytes that walks the objects and arrays the readers visit itself, and skips the values
//! nothing reads (annotations, managedFields, containers, most of `status`) with one validating scan
//! of their bytes ([`Reader::skip`]) instead of serde_json's skipping.
//!
//! The skip accepts exactly what serde_json's `IgnoredAny` accepts from a slice: the same grammar
//! (whitespace, literals, numbers, strings with their escapes and no raw control characters, commas
//! and colons where they belong), nesting as deep as the input goes, and, as serde_json, strings that
//! are not UTF-8 (it checks UTF-8 only in strings it returns). Objects, arrays, `null` and plain
//! strings (no escapes) are read here; every other value (escaped strings, numbers, the list's
//! `metadata`) is first skipped to find its end, then handed to serde_json on its bytes alone. So
//! where the reader accepts input, serde_json reading the whole would accept it and read the same;
//! where it does not, the streaming reader gives up as it did before, and the exact reader names the
//! error.
//!
//! Owns: the scanning of JSON bytes. Uses: serde and serde_json only (the bottom layer, beside
//! `seeds`).

use std::sync::mpsc::Receiver;

use serde::de::{self, DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::Error;
use serde_json::de::SliceRead;

/// A cursor over JSON bytes that deserializes from them. See the module docs.
pub(super) struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// The open objects (`{`) and arrays (`[`) of the value being skipped.
    stack: Vec<u8>,
    /// How many objects and arrays the readers are inside (those they visit, not those skipped).
    depth: usize,
    /// Where another reader has read the rest of the list's items, if it has.
    handoff: Option<Handoff>,
    /// Whether the reader took the handoff.
    handed_over: bool,
}

/// The depth of the elements of a list's `items` (the list object, then the array).
const ITEMS_DEPTH: usize = 2;

/// The rest of a list's items, read by another reader from the element at byte `at` on: when this
/// reader arrives at that element, `resume` tells it where the other one's reading of the items ended
/// (the closing `]`), or `None` if it gave up.
struct Handoff {
    at: usize,
    resume: Receiver<Option<usize>>,
}

/// The usual answer of a reader.
type Result<T> = std::result::Result<T, Error>;

/// The error of input the reader does not accept (its text is never shown: the exact reader then
/// reads the input again and names what is wrong).
fn refused() -> Error {
    Error::custom("not accepted by the fast reader")
}

/// Bytes, eight at a time.
const ONES: u64 = u64::MAX / 255;

impl<'a> Reader<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, pos: 0, stack: Vec::new(), depth: 0, handoff: None, handed_over: false }
    }

    /// A reader of `bytes` from byte `at` on.
    pub(super) fn at(bytes: &'a [u8], at: usize) -> Self {
        Reader { pos: at, ..Self::new(bytes) }
    }

    /// Lets another reader read the list's items from the element at byte `at` on. See [`Handoff`].
    pub(super) fn hand_over_at(&mut self, at: usize, resume: Receiver<Option<usize>>) {
        self.handoff = Some(Handoff { at, resume });
    }

    /// Whether the items from the handoff's element on were left to the other reader.
    pub(super) fn handed_over(&self) -> bool {
        self.handed_over
    }

    /// Reads array elements with `visitor` from the reader's position, which is at an element (one
    /// after the first of its array, its comma consumed), to the array's `]`, where the reader stops;
    /// returns the visitor's value and the position of the `]`.
    pub(super) fn rest_of_array<V: Visitor<'a>>(&mut self, visitor: V) -> Result<(V::Value, usize)> {
        let value = visitor.visit_seq(Elements { reader: &mut *self, first: true })?;
        match self.whitespace() {
            Some(b']') => Ok((value, self.pos)),
            _ => Err(refused()),
        }
    }

    /// Refuses anything but whitespace after the value read.
    pub(super) fn end(&mut self) -> Result<()> {
        match self.whitespace() {
            None => Ok(()),
            Some(_) => Err(refused()),
        }
    }

    /// Where the reader is: the byte after what it read.
    #[cfg(test)]
    pub(super) fn position(&self) -> usize {
        self.pos
    }

    /// Skips JSON whitespace (space, tab, line feed, carriage return) and returns the next byte.
    #[inline]
    fn whitespace(&mut self) -> Option<u8> {
        loop {
            let byte = *self.bytes.get(self.pos)?;
            if byte > b' ' || !matches!(byte, b' ' | b'\n' | b'\t' | b'\r') {
                return Some(byte);
            }
            self.pos += 1;
            // Indentation: runs of spaces, eight at a time.
            while let Some(chunk) = self.bytes.get(self.pos..self.pos + 8) {
                let other = u64::from_le_bytes(chunk.try_into().expect("eight bytes")) ^ (ONES * u64::from(b' '));
                if other != 0 {
                    self.pos += other.trailing_zeros() as usize / 8;
                    break;
                }
                self.pos += 8;
            }
        }
    }

    /// Consumes `byte`, which must come next after whitespace.
    fn expect(&mut self, byte: u8) -> Result<()> {
        if self.whitespace() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(refused())
        }
    }

    /// Scans a string whose opening quote is at `pos`, to the byte after its closing quote; returns
    /// whether it holds escapes. Raw control characters are refused; escapes are checked as serde_json
    /// checks them (a `\u` takes four hex digits, whatever code point they make).
    #[inline]
    fn string(&mut self) -> Result<bool> {
        let bytes = self.bytes;
        let mut at = self.pos + 1;
        let mut escaped = false;
        loop {
            // To the next quote, backslash or control character, eight bytes at a time.
            while let Some(chunk) = bytes.get(at..at + 8) {
                let chars = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
                let control = chars.wrapping_sub(ONES * 0x20) & !chars;
                let quote = chars ^ (ONES * u64::from(b'"'));
                let quote = quote.wrapping_sub(ONES) & !quote;
                let backslash = chars ^ (ONES * u64::from(b'\\'));
                let backslash = backslash.wrapping_sub(ONES) & !backslash;
                let found = (control | quote | backslash) & (ONES << 7);
                if found != 0 {
                    at += found.trailing_zeros() as usize / 8;
                    break;
                }
                at += 8;
            }
            while at < bytes.len() && !matches!(bytes[at], b'"' | b'\\' | 0..0x20) {
                at += 1;
            }
            match bytes.get(at) {
                Some(b'"') => {
                    self.pos = at + 1;
                    return Ok(escaped);
                }
                Some(b'\\') => {
                    escaped = true;
                    match bytes.get(at + 1) {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => at += 2,
                        Some(b'u') => match bytes.get(at + 2..at + 6) {
                            Some(hex) if hex.iter().all(u8::is_ascii_hexdigit) => at += 6,
                            _ => return Err(refused()),
                        },
                        _ => return Err(refused()),
                    }
                }
                _ => return Err(refused()),
            }
        }
    }

    /// A plain string (no escapes) at `pos`, its bytes borrowed; `None` (the reader unmoved) for
    /// anything else, which the caller hands to serde_json.
    fn plain_string(&mut self) -> Result<Option<&'a [u8]>> {
        if self.whitespace() != Some(b'"') {
            return Ok(None);
        }
        let start = self.pos;
        if self.string()? {
            self.pos = start;
            return Ok(None);
        }
        Ok(Some(&self.bytes[start + 1..self.pos - 1]))
    }

    /// Consumes `word` (the rest of `null`, `true` or `false`).
    fn literal(&mut self, word: &[u8]) -> Result<()> {
        if self.bytes[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(refused())
        }
    }

    /// Consumes digits; returns how many.
    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.bytes.get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
        self.pos - start
    }

    /// Consumes a number as JSON writes it: `-`, then `0` or digits not starting with `0`, then an
    /// optional fraction and exponent, each with at least one digit.
    fn number(&mut self) -> Result<()> {
        if self.bytes[self.pos] == b'-' {
            self.pos += 1;
        }
        match self.bytes.get(self.pos) {
            Some(b'0') => {
                self.pos += 1;
                if self.bytes.get(self.pos).is_some_and(u8::is_ascii_digit) {
                    return Err(refused());
                }
            }
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(refused()),
        }
        if self.bytes.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(refused());
            }
        }
        if matches!(self.bytes.get(self.pos), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.bytes.get(self.pos), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(refused());
            }
        }
        Ok(())
    }

    /// Consumes an object's key and its colon (after `{` or a comma).
    fn key_and_colon(&mut self) -> Result<()> {
        if self.whitespace() != Some(b'"') {
            return Err(refused());
        }
        self.string()?;
        self.expect(b':')
    }

    /// Skips one value, checking it as serde_json checks a value it ignores. See the module docs.
    pub(super) fn skip(&mut self) -> Result<()> {
        let base = self.stack.len();
        loop {
            // A value.
            match self.whitespace() {
                Some(b'"') => {
                    self.string()?;
                }
                Some(b'{') => {
                    self.pos += 1;
                    if self.whitespace() == Some(b'}') {
                        self.pos += 1;
                    } else {
                        self.key_and_colon()?;
                        self.stack.push(b'{');
                        continue;
                    }
                }
                Some(b'[') => {
                    self.pos += 1;
                    if self.whitespace() == Some(b']') {
                        self.pos += 1;
                    } else {
                        self.stack.push(b'[');
                        continue;
                    }
                }
                Some(b'n') => self.literal(b"null")?,
                Some(b't') => self.literal(b"true")?,
                Some(b'f') => self.literal(b"false")?,
                Some(b'-' | b'0'..=b'9') => self.number()?,
                _ => return Err(refused()),
            }
            // After a value: the next one in the innermost container, or the containers' ends.
            loop {
                let Some(&frame) = self.stack.last().filter(|_| self.stack.len() > base) else {
                    return Ok(());
                };
                match self.whitespace() {
                    Some(b',') => {
                        self.pos += 1;
                        if frame == b'{' {
                            self.key_and_colon()?;
                        }
                        break;
                    }
                    Some(b']') if frame == b'[' => {}
                    Some(b'}') if frame == b'{' => {}
                    _ => {
                        self.stack.truncate(base);
                        return Err(refused());
                    }
                }
                self.pos += 1;
                self.stack.pop();
            }
        }
    }

    /// Skips the next value and hands its bytes alone to serde_json's `read`.
    fn forward<T>(
        &mut self,
        read: impl FnOnce(&mut serde_json::Deserializer<SliceRead<'a>>) -> Result<T>,
    ) -> Result<T> {
        self.whitespace();
        let start = self.pos;
        let skipped = self.skip();
        // The stack is left empty: an error stops the reading.
        self.stack.clear();
        skipped?;
        let mut deserializer = serde_json::Deserializer::from_slice(&self.bytes[start..self.pos]);
        let value = read(&mut deserializer)?;
        deserializer.end()?;
        Ok(value)
    }
}

/// What the reader hands to serde_json, method by method.
macro_rules! forward {
    ($($method:ident($($arg:ident: $type:ty),*)),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, $($arg: $type,)* visitor: V) -> Result<V::Value> {
                self.forward(|deserializer| de::Deserializer::$method(deserializer, $($arg,)* visitor))
            }
        )*
    };
}

impl<'de> de::Deserializer<'de> for &mut Reader<'de> {
    type Error = Error;

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.expect(b'{')?;
        self.depth += 1;
        let value = visitor.visit_map(Entries { reader: &mut *self, first: true })?;
        self.depth -= 1;
        self.expect(b'}')?;
        Ok(value)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.expect(b'[')?;
        self.depth += 1;
        let value = visitor.visit_seq(Elements { reader: &mut *self, first: true })?;
        self.depth -= 1;
        self.expect(b']')?;
        Ok(value)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.whitespace() == Some(b'n') {
            self.literal(b"null")?;
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let skipped = self.skip();
        self.stack.clear();
        skipped?;
        visitor.visit_unit()
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.plain_string()? {
            // serde_json refuses a string that is not UTF-8 too.
            Some(text) => visitor.visit_borrowed_str(std::str::from_utf8(text).map_err(|_| refused())?),
            None => self.forward(|deserializer| de::Deserializer::deserialize_str(deserializer, visitor)),
        }
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.plain_string()? {
            Some(bytes) => visitor.visit_borrowed_bytes(bytes),
            None => self.forward(|deserializer| de::Deserializer::deserialize_bytes(deserializer, visitor)),
        }
    }

    forward! {
        deserialize_any(), deserialize_bool(), deserialize_i8(), deserialize_i16(), deserialize_i32(),
        deserialize_i64(), deserialize_i128(), deserialize_u8(), deserialize_u16(), deserialize_u32(),
        deserialize_u64(), deserialize_u128(), deserialize_f32(), deserialize_f64(), deserialize_char(),
        deserialize_string(), deserialize_byte_buf(), deserialize_unit(), deserialize_identifier(),
        deserialize_unit_struct(name: &'static str),
        deserialize_newtype_struct(name: &'static str),
        deserialize_tuple(len: usize),
        deserialize_tuple_struct(name: &'static str, len: usize),
        deserialize_struct(name: &'static str, fields: &'static [&'static str]),
        deserialize_enum(name: &'static str, variants: &'static [&'static str]),
    }
}

/// An object's entries, as serde_json's `MapAccess` reads them (a comma between entries, none after
/// the last, every key a string).
struct Entries<'r, 'a> {
    reader: &'r mut Reader<'a>,
    first: bool,
}

impl<'de> MapAccess<'de> for Entries<'_, 'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        match self.reader.whitespace() {
            Some(b'}') => return Ok(None),
            Some(b',') if !self.first => self.reader.pos += 1,
            Some(_) if self.first => self.first = false,
            _ => return Err(refused()),
        }
        if self.reader.whitespace() != Some(b'"') {
            return Err(refused());
        }
        seed.deserialize(Name(&mut *self.reader)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        self.reader.expect(b':')?;
        seed.deserialize(&mut *self.reader)
    }
}

/// An array's elements, as serde_json's `SeqAccess` reads them.
struct Elements<'r, 'a> {
    reader: &'r mut Reader<'a>,
    first: bool,
}

impl<'de> SeqAccess<'de> for Elements<'_, 'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        match self.reader.whitespace() {
            Some(b']') => return Ok(None),
            Some(b',') if !self.first => {
                self.reader.pos += 1;
                if matches!(self.reader.whitespace(), Some(b']') | None) {
                    return Err(refused());
                }
                if self.reader.depth == ITEMS_DEPTH
                    && let Some(handoff) = self.reader.handoff.take_if(|h| h.at == self.reader.pos)
                    && let Ok(Some(end)) = handoff.resume.recv()
                {
                    // The other reader has read every item from here on: go on after them.
                    self.reader.pos = end;
                    self.reader.handed_over = true;
                    return Ok(None);
                }
            }
            Some(_) if self.first => self.first = false,
            _ => return Err(refused()),
        }
        seed.deserialize(&mut *self.reader).map(Some)
    }
}

/// An object's key (the reader at its opening quote), read as a string or as bytes.
struct Name<'r, 'a>(&'r mut Reader<'a>);

impl<'de> de::Deserializer<'de> for Name<'_, 'de> {
    type Error = Error;

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        de::Deserializer::deserialize_bytes(self.0, visitor)
    }

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        de::Deserializer::deserialize_str(self.0, visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    //! The skip against serde_json's: on any bytes, both accept or both refuse, and stop at the
    //! same byte.

    use proptest::prelude::*;
    use serde::de::{Deserializer as _, IgnoredAny};

    use super::Reader;

    /// Where the reader's skip of the value at the start of `bytes` ends, if it accepts it.
    fn fast_skip(bytes: &[u8]) -> Option<usize> {
        let mut reader = Reader::new(bytes);
        reader.deserialize_ignored_any(IgnoredAny).ok().map(|_| reader.position())
    }

    /// The skip and serde_json's agree on `bytes`: both accept it whole or both refuse it; the skip
    /// stops where serde_json's stream stops; what the skip consumed serde_json reads as one value.
    fn agree(bytes: &[u8]) -> Result<(), TestCaseError> {
        let text = String::from_utf8_lossy(bytes);
        let whole = serde_json::from_slice::<IgnoredAny>(bytes).is_ok();
        let mut reader = Reader::new(bytes);
        let fast_whole = reader.deserialize_ignored_any(IgnoredAny).is_ok() && reader.end().is_ok();
        prop_assert_eq!(fast_whole, whole, "whole input {:?}", text);
        let mut stream = serde_json::Deserializer::from_slice(bytes).into_iter::<IgnoredAny>();
        if let Some(Ok(_)) = stream.next() {
            prop_assert_eq!(fast_skip(bytes), Some(stream.byte_offset()), "first value of {:?}", text);
        }
        if let Some(end) = fast_skip(bytes) {
            prop_assert!(serde_json::from_slice::<IgnoredAny>(&bytes[..end]).is_ok(), "first value of {:?}", text);
        }
        Ok(())
    }

    /// Pieces JSON is made of, valid and not, for texts close to JSON.
    const PIECES: &[&str] = &[
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        " ",
        "\n    ",
        "\t",
        "\r",
        "\"",
        "\"a\"",
        "\"key\":",
        "\"\\n\"",
        "\"\\u00e9\"",
        "\"\\uD800\"",
        "\"\\u12\"",
        "\"\\x\"",
        "\"\u{1}\"",
        "\"é\"",
        "null",
        "nul",
        "true",
        "false",
        "fals",
        "0",
        "-0",
        "01",
        "-",
        "1.5",
        "1.",
        ".5",
        "1e5",
        "1E+5",
        "1e-",
        "-12.5e-3",
        "18446744073709551616",
        "\\",
        "x",
    ];

    fn near_json() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(prop::sample::select(PIECES), 1..24).prop_map(|pieces| pieces.concat().into_bytes())
    }

    /// A valid JSON value, printed compact or indented.
    fn json_value() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::Bool),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(serde_json::Value::from),
            any::<String>().prop_map(serde_json::Value::String),
            "[ -~]{0,20}".prop_map(serde_json::Value::String),
        ];
        leaf.prop_recursive(5, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
                prop::collection::btree_map("[a-z\"\\\\]{0,6}", inner, 0..6)
                    .prop_map(|map| serde_json::Value::Object(map.into_iter().collect())),
            ]
        })
    }

    fn printed(value: &serde_json::Value, pretty: bool) -> Vec<u8> {
        if pretty { serde_json::to_vec_pretty(value) } else { serde_json::to_vec(value) }.expect("a value prints")
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

        #[test]
        fn skip_accepts_what_serde_json_accepts_and_stops_where_it_stops(bytes in near_json()) {
            agree(&bytes)?;
        }

        #[test]
        fn skip_reads_every_valid_value_and_refuses_it_damaged(
            value in json_value(),
            pretty: bool,
            cut: prop::sample::Index,
            at: prop::sample::Index,
            byte: u8,
        ) {
            let mut bytes = printed(&value, pretty);
            prop_assert_eq!(fast_skip(&bytes), Some(bytes.len()));
            agree(&bytes)?;
            // A prefix, one byte changed, one byte inserted, and a value followed by more.
            agree(&bytes[..cut.index(bytes.len())])?;
            let i = at.index(bytes.len());
            let old = std::mem::replace(&mut bytes[i], byte);
            agree(&bytes)?;
            bytes[i] = old;
            bytes.insert(i, byte);
            agree(&bytes)?;
            bytes.remove(i);
            bytes.extend_from_slice(b" ,1");
            agree(&bytes)?;
        }
    }

    #[test]
    fn deep_nesting_is_skipped_without_recursion() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(fast_skip(deep.as_bytes()), Some(deep.len()));
        assert_eq!(fast_skip(&deep.as_bytes()[1..]), Some(deep.len() - 2));
    }

    #[test]
    fn strings_that_are_not_utf8_are_skipped_as_serde_json_skips_them() {
        let bytes = b"[\"\xff\xfe\", 1]";
        assert!(serde_json::from_slice::<IgnoredAny>(bytes).is_ok());
        assert_eq!(fast_skip(bytes), Some(bytes.len()));
    }
}
