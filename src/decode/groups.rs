//! A large regular file read a group of items at a time, never whole.
//!
//! `kubectl get -o json` writes a List: `{"apiVersion": "v1", "items": [ … ], "kind": "List", …}`.
//! Its bytes are followed as they are read (strings, escapes, nesting), and its items copied, as
//! they are, into a list document of their own, `{"items":[…]}`, of about a group's size, which the
//! readers then read as they read a whole file: what is held is a group, not the file. Anything
//! else stops it (another shape, a kind other than `List`, a repeated or escaped key, an item that
//! is not an object, a byte out of place): the caller then reads the file whole, as before, and
//! that reading says exactly what is wrong, if anything is.
//!
//! Owns: following a List's bytes to its items. Uses: nothing of the readers.

use std::io::{self, Read};

use serde::de::IgnoredAny;

/// What a group's document starts with; it ends with `]}`.
const OPEN: &[u8] = b"{\"items\":[";

/// How much of the file is read at a time.
const READ: usize = 1 << 20;

/// Hands `each` each group of the List in `source`, in order: a list document holding the next
/// items, `group` bytes of them or more (one item at least; one group at least, empty for an empty
/// List). `Ok(true)` when `source` is a List followed to its end and `each` took every group (it
/// returns `false` to stop); `Ok(false)` when it stopped, or when the file is not such a List.
pub(super) fn each_group(source: impl Read, group: usize, each: impl FnMut(Vec<u8>) -> bool) -> io::Result<bool> {
    let mut bytes = Bytes { source, buffer: vec![0; READ], at: 0, end: 0 };
    let mut sink = Sink { out: Vec::with_capacity(group + READ), group, each, groups: 0 };
    sink.out.extend_from_slice(OPEN);
    if bytes.non_blank()? != Some(b'{') {
        return Ok(false);
    }
    bytes.at += 1;
    let mut keys: Vec<Vec<u8>> = Vec::new();
    loop {
        match (bytes.non_blank()?, keys.is_empty()) {
            (Some(b'}'), _) => {
                bytes.at += 1;
                break;
            }
            (Some(b','), false) => {
                bytes.at += 1;
                if bytes.non_blank()? != Some(b'"') {
                    return Ok(false);
                }
            }
            (Some(b'"'), true) => {}
            _ => return Ok(false),
        }
        let Some(key) = bytes.key()? else { return Ok(false) };
        if keys.contains(&key) || bytes.non_blank()? != Some(b':') {
            return Ok(false);
        }
        bytes.at += 1;
        if key == b"items" {
            if !items(&mut bytes, &mut sink)? {
                return Ok(false);
            }
        } else {
            let mut value = Vec::new();
            // Small (`apiVersion`, `kind`, `metadata`): checked whole, here.
            if bytes.non_blank()?.is_none()
                || !bytes.value(&mut value)?
                || serde_json::from_slice::<IgnoredAny>(&value).is_err()
            {
                return Ok(false);
            }
            if key == b"kind" {
                // A typed list (the API server writes `kind` first) is not read in groups.
                if !is_list(&value) {
                    return Ok(false);
                }
            }
        }
        keys.push(key);
    }
    if !keys.iter().any(|key| key == b"items") || bytes.non_blank()?.is_some() {
        return Ok(false);
    }
    Ok(sink.groups > 0 || sink.flush())
}

/// Whether a `kind` says `List` (as written, without escapes).
fn is_list(kind: &[u8]) -> bool {
    serde_json::from_slice::<&str>(kind).is_ok_and(|kind| kind == "List")
}

/// Where the items go: a group's document, handed to `each` once it holds `group` bytes.
struct Sink<F> {
    out: Vec<u8>,
    group: usize,
    each: F,
    /// How many groups `each` took.
    groups: usize,
}

impl<F: FnMut(Vec<u8>) -> bool> Sink<F> {
    /// Closes the group's document and hands it on; whether `each` took it.
    fn flush(&mut self) -> bool {
        self.out.extend_from_slice(b"]}");
        // What the group did not fill is given back (an item larger than a group grew it by
        // doubling), and the next group starts at a group's size again.
        self.out.shrink_to_fit();
        let mut next = Vec::with_capacity(self.group + READ);
        next.extend_from_slice(OPEN);
        self.groups += 1;
        (self.each)(std::mem::replace(&mut self.out, next))
    }
}

/// The `items` array, at its `[`: each item copied to the sink, which hands a group on every
/// `group` bytes; `false` when the array is not one of objects, or a group was refused.
fn items<F: FnMut(Vec<u8>) -> bool>(bytes: &mut Bytes<impl Read>, sink: &mut Sink<F>) -> io::Result<bool> {
    if bytes.non_blank()? != Some(b'[') {
        return Ok(false);
    }
    bytes.at += 1;
    let mut first = true;
    loop {
        match (bytes.non_blank()?, first) {
            (Some(b']'), _) => {
                bytes.at += 1;
                break;
            }
            (Some(b','), false) => bytes.at += 1,
            (Some(b'{'), true) => {}
            _ => return Ok(false),
        }
        first = false;
        if bytes.non_blank()? != Some(b'{') {
            return Ok(false);
        }
        if sink.out.len() > OPEN.len() {
            sink.out.push(b',');
        }
        if !bytes.value(&mut sink.out)? {
            return Ok(false);
        }
        if sink.out.len() >= sink.group && !sink.flush() {
            return Ok(false);
        }
    }
    Ok(sink.out.len() == OPEN.len() || sink.flush())
}

/// The file's bytes, read a buffer at a time.
struct Bytes<R> {
    source: R,
    buffer: Vec<u8>,
    /// The next byte, and the end of what was read.
    at: usize,
    end: usize,
}

impl<R: Read> Bytes<R> {
    /// Whether there is a byte at `at`, reading more if needed.
    fn fill(&mut self) -> io::Result<bool> {
        if self.at < self.end {
            return Ok(true);
        }
        self.end = loop {
            match self.source.read(&mut self.buffer) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        };
        self.at = 0;
        Ok(self.end > 0)
    }

    /// The next byte that is not white space (not taken); `None` at the end of the file.
    fn non_blank(&mut self) -> io::Result<Option<u8>> {
        while self.fill()? {
            let b = self.buffer[self.at];
            if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                return Ok(Some(b));
            }
            self.at += 1;
        }
        Ok(None)
    }

    /// A key, at its `"`, as written; `None` when it holds an escape (the whole reading decides).
    fn key(&mut self) -> io::Result<Option<Vec<u8>>> {
        let mut key = Vec::new();
        self.at += 1;
        while self.fill()? {
            let rest = &self.buffer[self.at..self.end];
            match memchr::memchr2(b'"', b'\\', rest) {
                Some(i) if rest[i] == b'"' => {
                    key.extend_from_slice(&rest[..i]);
                    self.at += i + 1;
                    return Ok(Some(key));
                }
                Some(_) => return Ok(None),
                None => {
                    key.extend_from_slice(rest);
                    self.at = self.end;
                }
            }
        }
        Ok(None)
    }

    /// Copies one value to `out`, from its first byte: an object or array to its closing bracket, a
    /// string to its closing quote, anything else up to the next `,`, `]`, `}` or white space.
    /// `false` when the file ends first. The value's contents are not checked (its reader does that,
    /// nesting included), and only its own kind of bracket is counted: the others nest inside it,
    /// and outside its strings they cannot close it.
    fn value(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
        if !self.fill()? {
            return Ok(false);
        }
        let (open, close) = match self.buffer[self.at] {
            b'{' => (b'{', b'}'),
            b'[' => (b'[', b']'),
            b'"' => {
                out.push(b'"');
                self.at += 1;
                return self.rest_of_string(out);
            }
            _ => return self.scalar(out),
        };
        // Each read is searched for the next quote or bracket, strings for their closing quote (or
        // a backslash), and copied in one piece.
        let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
        while self.fill()? {
            let rest = &self.buffer[self.at..self.end];
            let mut i = usize::from(escaped);
            escaped = false;
            let mut closed = false;
            while i < rest.len() {
                if in_string {
                    match memchr::memchr2(b'"', b'\\', &rest[i..]) {
                        None => i = rest.len(),
                        Some(k) if rest[i + k] == b'"' => {
                            in_string = false;
                            i += k + 1;
                        }
                        Some(k) => {
                            // The byte after a backslash, here or in the next read, is not a quote.
                            escaped = i + k + 1 == rest.len();
                            i = (i + k + 2).min(rest.len());
                        }
                    }
                    continue;
                }
                let Some(k) = memchr::memchr3(b'"', open, close, &rest[i..]) else {
                    i = rest.len();
                    break;
                };
                let b = rest[i + k];
                i += k + 1;
                if b == b'"' {
                    in_string = true;
                } else if b == open {
                    depth += 1;
                } else {
                    depth -= 1;
                    if depth == 0 {
                        closed = true;
                        break;
                    }
                }
            }
            out.extend_from_slice(&rest[..i]);
            self.at += i;
            if closed {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Copies the rest of a string, after its opening quote, to its closing one.
    fn rest_of_string(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
        let mut escaped = false;
        while self.fill()? {
            let rest = &self.buffer[self.at..self.end];
            let from = usize::from(escaped);
            escaped = false;
            match memchr::memchr2(b'"', b'\\', &rest[from.min(rest.len())..]).map(|i| i + from) {
                Some(i) if rest[i] == b'"' => {
                    out.extend_from_slice(&rest[..=i]);
                    self.at += i + 1;
                    return Ok(true);
                }
                Some(i) => {
                    // A backslash: the byte after it, here or in the next read, is not a quote.
                    let skip = (i + 2).min(rest.len());
                    escaped = i + 1 == rest.len();
                    out.extend_from_slice(&rest[..skip]);
                    self.at += skip;
                }
                None => {
                    out.extend_from_slice(rest);
                    self.at = self.end;
                }
            }
        }
        Ok(false)
    }

    /// Copies a number, `true`, `false` or `null` (or what stands in its place) up to the byte
    /// after it.
    fn scalar(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
        let mut any = false;
        while self.fill()? {
            let b = self.buffer[self.at];
            if matches!(b, b',' | b'}' | b']' | b'"' | b'{' | b'[' | b' ' | b'\t' | b'\n' | b'\r') {
                break;
            }
            out.push(b);
            self.at += 1;
            any = true;
        }
        Ok(any)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The groups of `text` with a group size of `group`, as text; `None` when it is not followed.
    fn groups(text: &str, group: usize) -> Option<Vec<String>> {
        let mut groups = Vec::new();
        let followed = each_group(text.as_bytes(), group, |g| {
            groups.push(String::from_utf8(g).expect("UTF-8"));
            true
        })
        .expect("no read error");
        followed.then_some(groups)
    }

    #[test]
    fn a_list_is_cut_into_groups_of_whole_items() {
        let list = r#"{"apiVersion": "v1", "items": [ {"a": "}\"{"}, {"b": [1, {"c": null}]} ,{"d":"\\"}], "kind": "List", "metadata": {"resourceVersion": ""}}"#;
        assert_eq!(
            groups(list, 1).expect("a List"),
            [r#"{"items":[{"a": "}\"{"}]}"#, r#"{"items":[{"b": [1, {"c": null}]}]}"#, r#"{"items":[{"d":"\\"}]}"#]
        );
        assert_eq!(
            groups(list, 1 << 20).expect("a List"),
            [r#"{"items":[{"a": "}\"{"},{"b": [1, {"c": null}]},{"d":"\\"}]}"#]
        );
        assert_eq!(groups(r#"{"items":[]}"#, 10).expect("a List"), [r#"{"items":[]}"#]);
        assert_eq!(groups("{\"items\":[{}]}\n", 10).expect("a List"), [r#"{"items":[{}]}"#]);
    }

    #[test]
    fn anything_but_a_list_of_objects_is_left_to_the_whole_reading() {
        for text in [
            "",
            "[]",
            r#"{"kind": "Pod", "metadata": {"name": "p"}}"#,
            r#"{"kind": "PodList", "items": []}"#,
            r#"{"items": null}"#,
            r#"{"items": [1]}"#,
            r#"{"items": [{}, 2]}"#,
            r#"{"items": [{}], "items": []}"#,
            r#"{"ite\u006ds": []}"#,
            r#"{"items": [{}],}"#,
            r#"{"items": [{},]}"#,
            r#"{"items": [{}] "kind": "List"}"#,
            r#"{"items": [{}]} x"#,
            r#"{"items": [{}]"#,
            r#"{"items": [{"a": "}]}"#,
            r#"{"items": [], "metadata": {"a": tru}}"#,
            r#"{"items": [], "kind": 5}"#,
        ] {
            assert_eq!(groups(text, 1), None, "{text}");
        }
    }

    #[test]
    fn a_group_refused_stops_the_reading() {
        let list = r#"{"items": [{}, {}, {}]}"#;
        let mut seen = 0;
        let followed = each_group(list.as_bytes(), 1, |_| {
            seen += 1;
            seen < 2
        });
        assert!(!followed.expect("no read error"));
        assert_eq!(seen, 2);
    }
}
