//! kubectl's JSONPath templates (`-o jsonpath=…`), parsed and run over a JSON document as kubectl
//! runs them, and printed as kubectl prints what they find (docs/output.md).
//!
//! Written here rather than taken from a crate: the JSONPath crates follow RFC 9535 (or Goessner's
//! original), while kubectl's dialect is a template language of its own: text around `{…}` actions,
//! `{range …}…{end}`, quoted text, `[?(@.x=="v")]` filters compared as Go's templates compare,
//! `['a.b']` keys read as paths, unions evaluated one after the other, and Go's way of printing
//! (strings raw, numbers as `fmt` writes them, maps and lists as compact JSON with sorted keys).
//! The grammar and the evaluation follow kubectl's, quirks included, so that a template prints here
//! what `kubectl get -o jsonpath` prints over the same JSON; maps are walked in key order where
//! kubectl's order is Go's random map order (`*` and `..` over an object).

use std::fmt;

use serde_json::Value;

/// A template that cannot be parsed, or that fails on a document: kubectl's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateError(pub String);

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TemplateError {}

type Result<T> = std::result::Result<T, TemplateError>;

fn error<T>(message: impl Into<String>) -> Result<T> {
    Err(TemplateError(message.into()))
}

/// One bound of a slice `[start:end:step]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
struct Param {
    value: i64,
    known: bool,
    /// `end` made from `start` (`[n]` is `[n:n+1]`).
    derived: bool,
}

/// A parsed piece of a template.
#[derive(Clone, Debug, PartialEq)]
enum Node {
    /// Text printed as it is (outside `{…}`, or quoted inside).
    Text(Vec<u8>),
    /// The pieces of one `{…}` action, in order.
    List(Vec<Node>),
    /// `.name`: a key of an object.
    Field(String),
    /// `[start:end:step]`, `[n]`, `[*]`.
    Array([Param; 3]),
    /// `[?(left OP right)]`, or `[?(left)]` (`op` is `exists`).
    Filter {
        left: Vec<Node>,
        right: Vec<Node>,
        op: String,
    },
    Int(i64),
    Float(f64),
    Bool(bool),
    /// `*`: every value of an object or list.
    Wildcard,
    /// `..`: the value and everything under it.
    Recursive,
    /// `[a,b]`: each alternative over the same input, one after the other.
    Union(Vec<Vec<Node>>),
    /// `range`, `end` (anything else is an error once run).
    Identifier(String),
}

/// A parsed template.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonPath {
    nodes: Vec<Node>,
    allow_missing_keys: bool,
}

impl JsonPath {
    /// Parses `template`. Missing keys print nothing unless [`JsonPath::allow_missing_keys`] says
    /// otherwise (kubectl's `--allow-missing-template-keys` defaults to true).
    ///
    /// # Errors
    /// kubectl's words for the first thing that cannot be parsed (`unterminated array`).
    pub fn parse(template: &str) -> Result<Self> {
        Ok(Self { nodes: parse(template)?, allow_missing_keys: true })
    }

    /// Whether a key no value has is an error (`false`) or nothing (`true`).
    #[must_use]
    pub fn allow_missing_keys(mut self, allow: bool) -> Self {
        self.allow_missing_keys = allow;
        self
    }

    /// Runs the template over `data` and appends what it prints to `out`; nothing is appended when
    /// it fails.
    ///
    /// # Errors
    /// A key not found (when not allowed), an index out of bounds, a comparison of unlike values.
    pub fn execute(&self, data: &Value, out: &mut Vec<u8>) -> Result<()> {
        let groups = self.find_results(data)?;
        for group in &groups {
            print_results(group, out);
        }
        Ok(())
    }

    /// What the template prints over `data`.
    ///
    /// # Errors
    /// As [`JsonPath::execute`].
    pub fn execute_to_vec(&self, data: &Value) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.execute(data, &mut out)?;
        Ok(out)
    }

    /// What each piece of the template finds in `data`, one list per piece.
    fn find_results<'a>(&'a self, data: &'a Value) -> Result<Vec<Vec<Val<'a>>>> {
        let mut run = Run { path: self, begin_range: 0, in_range: 0, end_range: 0, last_end: None };
        run.find(Val::Json(data), 0)
    }

    /// Every value the template finds in `data` as kubectl's custom columns write a cell: `<none>`
    /// for nothing, else each value as Go's `fmt` prints it, joined by commas.
    ///
    /// # Errors
    /// As [`JsonPath::execute`].
    pub fn cell(&self, data: &Value) -> Result<String> {
        let groups = self.find_results(data)?;
        let mut values = Vec::new();
        if groups.first().is_none_or(Vec::is_empty) {
            values.push("<none>".to_owned());
        }
        for value in groups.iter().flatten() {
            let mut text = Vec::new();
            go_print(*value, &mut text);
            values.push(escape_terminal(&String::from_utf8_lossy(&text)));
        }
        Ok(values.join(","))
    }
}

/// Terminal control characters made visible, as kubectl does in its tables.
fn escape_terminal(text: &str) -> String {
    text.replace('\u{1b}', "^[").replace('\r', "\\r")
}

// ---------------------------------------------------------------------------------------------
// Parsing

struct Parser<'t> {
    input: &'t str,
    pos: usize,
    start: usize,
    width: usize,
}

impl<'t> Parser<'t> {
    fn next(&mut self) -> Option<char> {
        let Some(c) = self.input[self.pos..].chars().next() else {
            self.width = 0;
            return None;
        };
        self.width = c.len_utf8();
        self.pos += self.width;
        Some(c)
    }

    fn peek(&mut self) -> Option<char> {
        let c = self.next();
        self.backup();
        c
    }

    fn backup(&mut self) {
        self.pos -= self.width;
    }

    /// The text since the last call.
    fn consume(&mut self) -> &'t str {
        let text = &self.input[self.start..self.pos];
        self.start = self.pos;
        text
    }

    fn rest(&self) -> &'t str {
        &self.input[self.pos..]
    }

    /// The byte two before the position: the one before a quote just read.
    fn escaped(&self) -> bool {
        self.pos >= 2 && self.input.as_bytes()[self.pos - 2] == b'\\'
    }

    /// The whole template: text, and actions.
    fn template(&mut self) -> Result<Vec<Node>> {
        let mut root = Vec::new();
        loop {
            loop {
                if self.rest().starts_with('{') {
                    break;
                }
                if self.next().is_none() {
                    if self.pos > self.start {
                        root.push(Node::Text(self.consume().as_bytes().to_vec()));
                    }
                    return Ok(root);
                }
            }
            if self.pos > self.start {
                root.push(Node::Text(self.consume().as_bytes().to_vec()));
            }
            self.pos += 1;
            self.consume();
            root.push(Node::List(self.action()?));
        }
    }

    /// Inside `{…}`, up to and with the closing `}`.
    fn action(&mut self) -> Result<Vec<Node>> {
        let mut list = Vec::new();
        loop {
            let rest = self.rest();
            if rest.starts_with('}') {
                self.pos += 1;
                self.consume();
                return Ok(list);
            }
            if rest.starts_with("[?(") {
                self.filter(&mut list)?;
                continue;
            }
            if rest.starts_with("..") {
                self.recursive(&mut list)?;
                continue;
            }
            match self.next() {
                None | Some('\r' | '\n') => return error("unclosed action"),
                Some(' ' | '@' | '$') => {
                    self.consume();
                }
                Some('[') => self.array(&mut list)?,
                Some(quote @ ('"' | '\'')) => self.quote(&mut list, quote)?,
                Some('.') => self.field(&mut list),
                Some(c) if c == '+' || c == '-' || c.is_numeric() => {
                    self.backup();
                    self.number(&mut list)?;
                }
                Some(c) if alphanumeric(c) => {
                    self.backup();
                    self.identifier(&mut list);
                }
                Some(c) => return error(format!("unrecognized character in action: U+{:04X} '{c}'", u32::from(c))),
            }
        }
    }

    fn identifier(&mut self, list: &mut Vec<Node>) {
        while !terminator(self.next()) {}
        self.backup();
        let value = self.consume();
        list.push(match value {
            "true" => Node::Bool(true),
            "false" => Node::Bool(false),
            _ => Node::Identifier(value.to_owned()),
        });
    }

    fn recursive(&mut self, list: &mut Vec<Node>) -> Result<()> {
        if list.last() == Some(&Node::Recursive) {
            return error("invalid multiple recursive descent");
        }
        self.pos += 2;
        self.consume();
        list.push(Node::Recursive);
        if self.peek().is_some_and(alphanumeric) {
            self.field(list);
        }
        Ok(())
    }

    fn number(&mut self, list: &mut Vec<Node>) -> Result<()> {
        if matches!(self.peek(), Some('+' | '-')) {
            self.next();
        }
        loop {
            match self.next() {
                Some(c) if c == '.' || c.is_numeric() => {}
                _ => {
                    self.backup();
                    break;
                }
            }
        }
        let value = self.consume();
        if let Ok(int) = value.parse::<i64>() {
            list.push(Node::Int(int));
        } else if let Some(float) = go_parse_float(value) {
            list.push(Node::Float(float));
        } else {
            return error(format!("cannot parse number {value}"));
        }
        Ok(())
    }

    fn array(&mut self, list: &mut Vec<Node>) -> Result<()> {
        loop {
            match self.next() {
                None | Some('\n') => return error("unterminated array"),
                Some(']') => break,
                Some(_) => {}
            }
        }
        let text = self.consume();
        let mut inner = &text[1..text.len() - 1];
        if inner == "*" {
            inner = ":";
        }
        let alternatives: Vec<&str> = inner.split(',').collect();
        if alternatives.len() > 1 {
            let mut union = Vec::new();
            for alternative in alternatives {
                union.push(sub_action(&format!("[{}]", alternative.trim_matches(' ')))?);
            }
            list.push(Node::Union(union));
            return Ok(());
        }
        // `['a.b']` is `.a.b`.
        if let Some(key) = inner.strip_prefix('\'').and_then(|k| k.strip_suffix('\'')).filter(|k| !k.contains('\'')) {
            list.extend(sub_action(&format!(".{key}"))?);
            return Ok(());
        }
        let Some(groups) = slice_groups(inner) else {
            return error(format!("invalid array index {inner}"));
        };
        let mut params = [Param::default(); 3];
        for (i, group) in groups.iter().enumerate() {
            if group.is_empty() {
                if i == 1 {
                    params[1] = Param { value: params[0].value + 1, known: true, derived: true };
                }
                continue;
            }
            let digits = if i > 0 { &group[1..] } else { group };
            if i > 0 && digits.is_empty() {
                continue;
            }
            let Ok(value) = digits.parse::<i64>() else {
                return error(format!("array index {digits} is not a number"));
            };
            params[i] = Param { value, known: true, derived: false };
        }
        list.push(Node::Array(params));
        Ok(())
    }

    fn filter(&mut self, list: &mut Vec<Node>) -> Result<()> {
        self.pos += 3;
        self.consume();
        let (mut begin, mut end, mut pair) = (false, false, '"');
        loop {
            match self.next() {
                None | Some('\n') => return error("unterminated filter"),
                Some(quote @ ('"' | '\'')) => {
                    if !begin {
                        begin = true;
                        pair = quote;
                        continue;
                    }
                    if !self.escaped() && quote == pair {
                        end = true;
                    }
                }
                Some(')') if begin == end => break,
                Some(_) => {}
            }
        }
        if self.next() != Some(']') {
            return error("unclosed array expect ]");
        }
        let text = self.consume();
        let text = &text[..text.len() - 2];
        match comparison(text) {
            None => list.push(Node::Filter { left: sub_action(text)?, right: Vec::new(), op: "exists".to_owned() }),
            Some((left, op, right)) => {
                list.push(Node::Filter { left: sub_action(left)?, right: sub_action(right)?, op: op.to_owned() });
            }
        }
        Ok(())
    }

    fn quote(&mut self, list: &mut Vec<Node>, end: char) -> Result<()> {
        loop {
            match self.next() {
                None | Some('\n') => return error("unterminated quoted string"),
                Some(c) if c == end && !self.escaped() => break,
                Some(_) => {}
            }
        }
        let value = self.consume();
        match unquote(value) {
            Some(text) => list.push(Node::Text(text)),
            None => return error(format!("unquote string {value} error invalid syntax")),
        }
        Ok(())
    }

    fn field(&mut self, list: &mut Vec<Node>) {
        self.consume();
        loop {
            let c = self.next();
            if c == Some('\\') {
                self.next();
            } else if terminator(c) {
                self.backup();
                break;
            }
        }
        let value = self.consume();
        list.push(if value == "*" { Node::Wildcard } else { Node::Field(value.replace('\\', "")) });
    }
}

fn parse(template: &str) -> Result<Vec<Node>> {
    Parser { input: template, pos: 0, start: 0, width: 0 }.template()
}

/// The nodes of `text` read as the inside of one action (a union's alternative, a filter's side).
fn sub_action(text: &str) -> Result<Vec<Node>> {
    match parse(&format!("{{{text}}}"))?.into_iter().next() {
        Some(Node::List(nodes)) => Ok(nodes),
        _ => Ok(Vec::new()),
    }
}

/// Whether `c` ends a name.
fn terminator(c: Option<char>) -> bool {
    matches!(c, None | Some(' ' | '\t' | '\r' | '\n' | '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}'))
}

fn alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphabetic() || c.is_numeric()
}

/// `start`, `:end`, `:step` of a slice (each empty when absent), or `None` for anything else.
fn slice_groups(text: &str) -> Option<[&str; 3]> {
    fn bound(text: &str, at: usize) -> usize {
        let bytes = text.as_bytes();
        let mut end = at;
        if bytes.get(end) == Some(&b'-') {
            end += 1;
        }
        while bytes.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
        end
    }
    let first = bound(text, 0);
    let mut groups = [&text[..first], "", ""];
    let mut at = first;
    for group in &mut groups[1..] {
        if text.as_bytes().get(at) == Some(&b':') {
            let end = bound(text, at + 1);
            *group = &text[at..end];
            at = end;
        }
    }
    (at == text.len()).then_some(groups)
}

/// A filter's `left OP right`, split where the first run of `!<>=` starts (`None`: no operator).
fn comparison(text: &str) -> Option<(&str, &str, &str)> {
    let operator = |c: char| matches!(c, '!' | '<' | '>' | '=');
    let start = text.find(operator)?;
    if start == 0 {
        return None;
    }
    let mut end = start + text[start..].find(|c| !operator(c)).unwrap_or(text.len() - start);
    if end == text.len() {
        // The right side takes at least one character.
        if end - start < 2 {
            return None;
        }
        end -= 1;
    }
    Some((&text[..start], &text[start..end], &text[end..]))
}

/// A number as Go's `strconv.ParseFloat` reads the digits and dots this parser gathers.
fn go_parse_float(text: &str) -> Option<f64> {
    let digits = text.trim_start_matches(['+', '-']);
    if digits.is_empty() || digits == "." || !digits.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// A quoted string's value, with Go's escapes (`\n`, `\t`, `\x41`, `\u00e9`, `\101`…).
fn unquote(quoted: &str) -> Option<Vec<u8>> {
    let bytes = quoted.as_bytes();
    let quote = *bytes.first()?;
    if bytes.len() < 2 || bytes[bytes.len() - 1] != quote || !matches!(quote, b'"' | b'\'') {
        return None;
    }
    let mut rest = &quoted[1..quoted.len() - 1];
    let mut out = Vec::with_capacity(rest.len());
    while let Some(c) = rest.chars().next() {
        if c == char::from(quote) {
            return None;
        }
        if c != '\\' {
            let mut buffer = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
            rest = &rest[c.len_utf8()..];
            continue;
        }
        let escape = *rest.as_bytes().get(1)?;
        rest = &rest[2..];
        let simple = match escape {
            b'a' => Some(7),
            b'b' => Some(8),
            b'f' => Some(12),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'v' => Some(11),
            b'\\' => Some(b'\\'),
            b'\'' | b'"' if escape == quote => Some(escape),
            _ => None,
        };
        if let Some(byte) = simple {
            out.push(byte);
            continue;
        }
        match escape {
            b'x' | b'u' | b'U' => {
                let n = match escape {
                    b'x' => 2,
                    b'u' => 4,
                    _ => 8,
                };
                let hex = rest.get(..n)?;
                let value = u32::from_str_radix(hex, 16).ok().filter(|_| hex.bytes().all(|b| b.is_ascii_hexdigit()))?;
                rest = &rest[n..];
                if escape == b'x' {
                    out.push(u8::try_from(value).ok()?);
                } else {
                    let c = char::from_u32(value)?;
                    let mut buffer = [0; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
                }
            }
            b'0'..=b'7' => {
                let digits = rest.as_bytes().get(..2)?;
                let mut value = u32::from(escape - b'0');
                for digit in digits {
                    if !(b'0'..=b'7').contains(digit) {
                        return None;
                    }
                    value = value << 3 | u32::from(digit - b'0');
                }
                rest = &rest[2..];
                out.push(u8::try_from(value).ok()?);
            }
            _ => return None,
        }
    }
    Some(out)
}

// ---------------------------------------------------------------------------------------------
// Evaluation

/// A value found: a part of the document, or a value the template itself gives.
#[derive(Clone, Copy, Debug)]
enum Val<'a> {
    Json(&'a Value),
    Text(&'a [u8]),
    Int(i64),
    Float(f64),
    Bool(bool),
    /// A byte of a string walked with `*`.
    Byte(u8),
    /// What a range over nothing runs its body on (Go's invalid value).
    Nothing,
}

impl Val<'_> {
    /// JSON `null` (Go's nil interface).
    fn is_nil(self) -> bool {
        matches!(self, Val::Json(Value::Null))
    }

    /// The name of its type in kubectl's messages.
    fn type_name(self) -> &'static str {
        match self {
            Val::Json(Value::Object(_)) => "map[string]interface {}",
            Val::Json(Value::Array(_)) => "[]interface {}",
            Val::Json(Value::String(_)) | Val::Text(_) => "string",
            Val::Json(Value::Number(n)) if go_int(n).is_some() => "int64",
            Val::Json(Value::Number(_)) | Val::Float(_) => "float64",
            Val::Json(Value::Bool(_)) | Val::Bool(_) => "bool",
            Val::Json(Value::Null) => "interface {}",
            Val::Int(_) => "int",
            Val::Byte(_) => "uint8",
            Val::Nothing => "<invalid reflect.Value>",
        }
    }
}

/// The integer a JSON number is to kubectl (it reads numbers as `int64` when they fit, else
/// `float64`).
fn go_int(number: &serde_json::Number) -> Option<i64> {
    number.as_i64()
}

fn go_float_of(number: &serde_json::Number) -> f64 {
    number.as_f64().unwrap_or(f64::NAN)
}

fn children<'a>(value: Val<'a>) -> Vec<Val<'a>> {
    match value {
        Val::Json(Value::Object(map)) => sorted(map).into_iter().map(|(_, v)| Val::Json(v)).collect(),
        Val::Json(Value::Array(items)) => items.iter().map(Val::Json).collect(),
        Val::Json(Value::String(text)) => text.bytes().map(Val::Byte).collect(),
        Val::Text(text) => text.iter().copied().map(Val::Byte).collect(),
        _ => Vec::new(),
    }
}

/// An object's entries in key order (as Go's JSON encoder and `fmt` write them).
fn sorted(map: &serde_json::Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    entries
}

/// One run of a template: the state of `range` and `end`, as kubectl keeps it.
struct Run<'a> {
    path: &'a JsonPath,
    begin_range: u32,
    in_range: u32,
    end_range: u32,
    /// The index of the last `{end}` met.
    last_end: Option<usize>,
}

impl<'a> Run<'a> {
    /// The results of the template's pieces from `start` on over `data`, up to the `{end}` that
    /// closes the range being run.
    fn find(&mut self, data: Val<'a>, start: usize) -> Result<Vec<Vec<Val<'a>>>> {
        let nodes = &self.path.nodes;
        let current = [data];
        let mut full = Vec::new();
        let mut i = start;
        while i < nodes.len() {
            let results = self.walk(&current, &nodes[i])?;
            if self.end_range > 0 && self.end_range <= self.in_range {
                self.end_range -= 1;
                self.last_end = Some(i);
                break;
            }
            if self.begin_range > 0 {
                self.begin_range -= 1;
                self.in_range += 1;
                if results.is_empty() {
                    // The body runs once on nothing, to find its `{end}`.
                    self.find(Val::Nothing, i + 1)?;
                } else {
                    for value in results {
                        full.extend(self.find(value, i + 1)?);
                    }
                }
                self.in_range -= 1;
                if let Some(end) = self.last_end.filter(|&end| end > i) {
                    i = end;
                }
                i += 1;
                continue;
            }
            full.push(results);
            i += 1;
        }
        Ok(full)
    }

    fn walk(&mut self, input: &[Val<'a>], node: &'a Node) -> Result<Vec<Val<'a>>> {
        match node {
            Node::List(nodes) => self.list(input, nodes),
            Node::Text(text) => Ok(vec![Val::Text(text)]),
            Node::Field(name) => self.field(input, name),
            Node::Array(params) => array(input, *params),
            Node::Filter { left, right, op } => self.filter(input, left, right, op),
            Node::Int(value) => Ok(vec![Val::Int(*value); input.len()]),
            Node::Float(value) => Ok(vec![Val::Float(*value); input.len()]),
            Node::Bool(value) => Ok(vec![Val::Bool(*value); input.len()]),
            Node::Wildcard => Ok(input.iter().filter(|v| !v.is_nil()).flat_map(|v| children(*v)).collect()),
            Node::Recursive => {
                let mut found = Vec::new();
                recursive(input, &mut found);
                Ok(found)
            }
            Node::Union(alternatives) => {
                let mut found = Vec::new();
                for alternative in alternatives {
                    found.extend(self.list(input, alternative)?);
                }
                Ok(found)
            }
            Node::Identifier(name) => match name.as_str() {
                "range" => {
                    self.begin_range += 1;
                    Ok(input.to_vec())
                }
                "end" if self.in_range > 0 => {
                    self.end_range += 1;
                    Ok(Vec::new())
                }
                "end" => error("not in range, nothing to end"),
                _ => error(format!("unrecognized identifier {name}")),
            },
        }
    }

    fn list(&mut self, input: &[Val<'a>], nodes: &'a [Node]) -> Result<Vec<Val<'a>>> {
        let mut current = input.to_vec();
        for node in nodes {
            current = self.walk(&current, node)?;
        }
        Ok(current)
    }

    fn field(&self, input: &[Val<'a>], name: &str) -> Result<Vec<Val<'a>>> {
        if input.is_empty() {
            return Ok(Vec::new());
        }
        let found: Vec<Val<'a>> = input
            .iter()
            .filter_map(|value| match value {
                Val::Json(Value::Object(map)) => map.get(name).map(Val::Json),
                _ => None,
            })
            .collect();
        if found.is_empty() && !self.path.allow_missing_keys {
            return error(format!("{name} is not found"));
        }
        Ok(found)
    }

    fn filter(&mut self, input: &[Val<'a>], left: &'a [Node], right: &'a [Node], op: &str) -> Result<Vec<Val<'a>>> {
        let mut found = Vec::new();
        for value in input {
            let Val::Json(Value::Array(items)) = value else {
                let shown = match value {
                    Val::Json(Value::Null) => "<nil>".to_owned(),
                    other => {
                        let mut text = Vec::new();
                        go_print(*other, &mut text);
                        String::from_utf8_lossy(&text).into_owned()
                    }
                };
                return error(format!("{shown} is not array or slice and cannot be filtered"));
            };
            for item in items {
                let current = [Val::Json(item)];
                let lefts = self.list(&current, left);
                if op == "exists" {
                    if lefts.is_ok_and(|l| !l.is_empty()) {
                        found.push(Val::Json(item));
                    }
                    continue;
                }
                let lefts = lefts?;
                let Some(&l) = one(&lefts)? else { continue };
                let rights = self.list(&current, right)?;
                let Some(&r) = one(&rights)? else { continue };
                let pass = match op {
                    "<" => less(l, r)?,
                    ">" => !(less(l, r)? || equal(l, r)?),
                    "==" => equal(l, r)?,
                    "!=" => !equal(l, r)?,
                    "<=" => less(l, r)? || equal(l, r)?,
                    ">=" => !less(l, r)?,
                    _ => return error(format!("unrecognized filter operator {op}")),
                };
                if pass {
                    found.push(Val::Json(item));
                }
            }
        }
        Ok(found)
    }
}

/// The single value a filter's side found, `None` for none.
fn one<'v, 'a>(values: &'v [Val<'a>]) -> Result<Option<&'v Val<'a>>> {
    match values {
        [] => Ok(None),
        [value] => Ok(Some(value)),
        _ => error("can only compare one element at a time"),
    }
}

fn array<'a>(input: &[Val<'a>], node: [Param; 3]) -> Result<Vec<Val<'a>>> {
    let mut found = Vec::new();
    for value in input {
        if value.is_nil() {
            continue;
        }
        let Val::Json(Value::Array(items)) = value else {
            return error(format!("{} is not array or slice", value.type_name()));
        };
        let mut params = node;
        let len = i64::try_from(items.len()).unwrap_or(i64::MAX);
        if !params[0].known {
            params[0].value = 0;
        }
        if params[0].value < 0 {
            params[0].value += len;
        }
        if !params[1].known {
            params[1].value = len;
        }
        if params[1].value < 0 || (params[1].value == 0 && params[1].derived) {
            params[1].value += len;
        }
        let (start, end) = (params[0].value, params[1].value);
        if start == end {
            // Zero items asked for: kubectl stops here, with what it found so far.
            return Ok(found);
        }
        if start >= len || start < 0 {
            return error(format!("array index out of bounds: index {start}, length {len}"));
        }
        if end > len || end < 0 {
            return error(format!("array index out of bounds: index {}, length {len}", end - 1));
        }
        if start > end {
            return error(format!("starting index {start} is greater than ending index {end}"));
        }
        let step = if params[2].known {
            if params[2].value <= 0 {
                return error("step must be > 0");
            }
            usize::try_from(params[2].value).unwrap_or(usize::MAX)
        } else {
            1
        };
        let (start, end) = (usize::try_from(start).unwrap_or(0), usize::try_from(end).unwrap_or(0));
        found.extend(items[start..end].iter().step_by(step).map(Val::Json));
    }
    Ok(found)
}

/// `..`: each value with children, then everything under it, depth first.
fn recursive<'a>(input: &[Val<'a>], found: &mut Vec<Val<'a>>) {
    for value in input {
        if value.is_nil() {
            continue;
        }
        let children = children(*value);
        if !children.is_empty() {
            found.push(*value);
            recursive(&children, found);
        }
    }
}

/// A value as Go's templates compare it.
#[derive(Clone, Copy, PartialEq, PartialOrd)]
enum Basic<'a> {
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(&'a [u8]),
}

fn basic<'a>(value: Val<'a>) -> Result<Basic<'a>> {
    Ok(match value {
        Val::Json(Value::Bool(b)) => Basic::Bool(*b),
        Val::Bool(b) => Basic::Bool(b),
        Val::Json(Value::String(s)) => Basic::Str(s.as_bytes()),
        Val::Text(s) => Basic::Str(s),
        Val::Json(Value::Number(n)) => match go_int(n) {
            Some(int) => Basic::Int(int),
            None => Basic::Float(go_float_of(n)),
        },
        Val::Int(int) => Basic::Int(int),
        Val::Float(float) => Basic::Float(float),
        Val::Byte(byte) => Basic::Uint(u64::from(byte)),
        Val::Json(Value::Null | Value::Object(_) | Value::Array(_)) | Val::Nothing => {
            return error("invalid type for comparison");
        }
    })
}

fn equal(left: Val, right: Val) -> Result<bool> {
    Ok(match (basic(left)?, basic(right)?) {
        (Basic::Bool(a), Basic::Bool(b)) => a == b,
        (Basic::Int(a), Basic::Int(b)) => a == b,
        (Basic::Uint(a), Basic::Uint(b)) => a == b,
        (Basic::Float(a), Basic::Float(b)) => a == b,
        (Basic::Str(a), Basic::Str(b)) => a == b,
        (Basic::Int(a), Basic::Uint(b)) | (Basic::Uint(b), Basic::Int(a)) => u64::try_from(a).is_ok_and(|a| a == b),
        _ => return error("incompatible types for comparison"),
    })
}

fn less(left: Val, right: Val) -> Result<bool> {
    Ok(match (basic(left)?, basic(right)?) {
        (Basic::Bool(_), Basic::Bool(_)) => return error("invalid type for comparison"),
        (Basic::Int(a), Basic::Int(b)) => a < b,
        (Basic::Uint(a), Basic::Uint(b)) => a < b,
        (Basic::Float(a), Basic::Float(b)) => a < b,
        (Basic::Str(a), Basic::Str(b)) => a < b,
        (Basic::Int(a), Basic::Uint(b)) => u64::try_from(a).map_or(true, |a| a < b),
        (Basic::Uint(a), Basic::Int(b)) => u64::try_from(b).is_ok_and(|b| a < b),
        _ => return error("incompatible types for comparison"),
    })
}

// ---------------------------------------------------------------------------------------------
// Printing, as Go prints

/// One piece's results: maps and lists as compact JSON, the rest as text, separated by spaces.
fn print_results(results: &[Val], out: &mut Vec<u8>) {
    for (i, value) in results.iter().enumerate() {
        match value {
            Val::Json(json @ (Value::Object(_) | Value::Array(_))) => go_json(json, out),
            Val::Json(Value::Null) => out.extend_from_slice(b"null"),
            Val::Nothing => out.extend_from_slice(b"<no value>"),
            other => go_print(*other, out),
        }
        if i + 1 != results.len() {
            out.push(b' ');
        }
    }
}

/// A value as Go's `fmt.Print` writes it: `map[k:v]`, `[a b]`, `<nil>`.
fn go_print(value: Val, out: &mut Vec<u8>) {
    match value {
        Val::Json(json) => go_print_json(json, out),
        Val::Text(text) => out.extend_from_slice(text),
        Val::Int(int) => out.extend_from_slice(int.to_string().as_bytes()),
        Val::Float(float) => out.extend_from_slice(go_float(float, false).as_bytes()),
        Val::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        Val::Byte(byte) => out.extend_from_slice(byte.to_string().as_bytes()),
        Val::Nothing => out.extend_from_slice(b"<no value>"),
    }
}

fn go_print_json(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"<nil>"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Number(n) => out.extend_from_slice(number(n, false).as_bytes()),
        Value::String(s) => out.extend_from_slice(s.as_bytes()),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b' ');
                }
                go_print_json(item, out);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            out.extend_from_slice(b"map[");
            for (i, (key, item)) in sorted(map).into_iter().enumerate() {
                if i > 0 {
                    out.push(b' ');
                }
                out.extend_from_slice(key.as_bytes());
                out.push(b':');
                go_print_json(item, out);
            }
            out.push(b']');
        }
    }
}

/// A JSON number as kubectl holds it (`int64`, else `float64`), written by `fmt` or as JSON.
fn number(n: &serde_json::Number, json: bool) -> String {
    match go_int(n) {
        Some(int) => int.to_string(),
        None => go_float(go_float_of(n), json),
    }
}

/// A value as Go's `encoding/json` writes it, compact: keys sorted, `<`, `>` and `&` escaped.
fn go_json(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Number(n) => out.extend_from_slice(number(n, true).as_bytes()),
        Value::String(s) => go_json_string(s, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                go_json(item, out);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            out.push(b'{');
            for (i, (key, item)) in sorted(map).into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                go_json_string(key, out);
                out.push(b':');
                go_json(item, out);
            }
            out.push(b'}');
        }
    }
}

fn go_json_string(text: &str, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    for c in text.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            '\u{8}' => out.extend_from_slice(b"\\b"),
            '\u{c}' => out.extend_from_slice(b"\\f"),
            '\u{2028}' => out.extend_from_slice(b"\\u2028"),
            '\u{2029}' => out.extend_from_slice(b"\\u2029"),
            c if c < ' ' || matches!(c, '<' | '>' | '&') => {
                let byte = c as usize;
                out.extend_from_slice(b"\\u00");
                out.push(HEX[byte >> 4]);
                out.push(HEX[byte & 0xf]);
            }
            c => {
                let mut buffer = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
            }
        }
    }
    out.push(b'"');
}

/// A float as Go writes it, with the shortest digits that read back: `fmt`'s `%v` (an exponent
/// below 1e-4 and from 1e6 on, `1e+06`) or `encoding/json`'s (below 1e-6 and from 1e21 on).
fn go_float(value: f64, json: bool) -> String {
    if !value.is_finite() {
        return if value.is_nan() {
            "NaN".into()
        } else if value > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    // The shortest digits that read back as `value`, and where the point goes.
    let scientific = format!("{:e}", value.abs());
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let use_exponent = if json { value.abs() < 1e-6 || value.abs() >= 1e21 } else { !(-4..6).contains(&exponent) };
    let mut out = String::new();
    if value < 0.0 {
        out.push('-');
    }
    if use_exponent {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exponent < 0 { '-' } else { '+' });
        let magnitude = exponent.unsigned_abs();
        if json {
            // Go's JSON trims `e-07` to `e-7`; its positive exponents have two digits already.
            out.push_str(&magnitude.to_string());
        } else {
            out.push_str(&format!("{magnitude:02}"));
        }
        return out;
    }
    let point = exponent + 1;
    if point <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', point.unsigned_abs() as usize));
        out.push_str(&digits);
    } else {
        let point = point as usize;
        if digits.len() <= point {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', point - digits.len()));
        } else {
            out.push_str(&digits[..point]);
            out.push('.');
            out.push_str(&digits[point..]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn run(template: &str, data: &Value) -> String {
        let mut out = Vec::new();
        JsonPath::parse(template).expect("parses").execute(data, &mut out).expect("runs");
        String::from_utf8(out).expect("UTF-8")
    }

    fn fails(template: &str, data: &Value, allow_missing: bool) -> String {
        let path = match JsonPath::parse(template) {
            Ok(path) => path.allow_missing_keys(allow_missing),
            Err(e) => return e.0,
        };
        path.execute(data, &mut Vec::new()).expect_err("fails").0
    }

    /// The input of kubectl's JSONPath reference page
    /// (https://kubernetes.io/docs/reference/kubectl/jsonpath/).
    fn reference_input() -> Value {
        json!({
          "kind": "List",
          "items":[
            {
              "kind":"None",
              "metadata":{
                "name":"127.0.0.1",
                "labels":{
                  "kubernetes.io/hostname":"127.0.0.1"
                }
              },
              "status":{
                "capacity":{"cpu":"4"},
                "addresses":[{"type": "LegacyHostIP", "address":"127.0.0.1"}]
              }
            },
            {
              "kind":"None",
              "metadata":{"name":"127.0.0.2"},
              "status":{
                "capacity":{"cpu":"8"},
                "addresses":[
                  {"type": "LegacyHostIP", "address":"127.0.0.2"},
                  {"type": "another", "address":"127.0.0.3"}
                ]
              }
            }
          ],
          "users":[
            {
              "name": "myself",
              "user": {}
            },
            {
              "name": "e2e",
              "user": {"username": "admin", "password": "secret"}
            }
          ]
        })
    }

    /// Each row of the page's function table. Three of its results are written as kubectl printed
    /// them long ago (`[127.0.0.1 127.0.0.2]`, `map[cpu:4]`, a tab shown as spaces); kubectl today
    /// prints what these rows say (and client-go's own tests expect), which is also what the real
    /// kube-apiserver tier checks against the real kubectl.
    #[test]
    fn the_reference_pages_function_table() {
        let input = reference_input();
        // text
        assert_eq!(run("kind is {.kind}", &input), "kind is List");
        // @: the same as input (compact JSON, keys sorted).
        let same = run("{@}", &input);
        assert_eq!(serde_json::from_str::<Value>(&same).expect("JSON"), input);
        assert!(
            same.starts_with(r#"{"items":[{"kind":"None","metadata":{"labels":{"kubernetes.io/hostname""#),
            "{same}"
        );
        // . or []
        assert_eq!(run("{.kind}", &input), "List");
        assert_eq!(run("{['kind']}", &input), "List");
        assert_eq!(run(r"{['name\.type']}", &json!({"name.type": "List"})), "List");
        // ..
        assert_eq!(run("{..name}", &input), "127.0.0.1 127.0.0.2 myself e2e");
        // * (the page: `[127.0.0.1 127.0.0.2]`)
        assert_eq!(run("{.items[*].metadata.name}", &input), "127.0.0.1 127.0.0.2");
        // [start:end:step]
        assert_eq!(run("{.users[0].name}", &input), "myself");
        // [,] (the page: `… map[cpu:4] map[cpu:8]`)
        assert_eq!(
            run("{.items[*]['metadata.name', 'status.capacity']}", &input),
            r#"127.0.0.1 127.0.0.2 {"cpu":"4"} {"cpu":"8"}"#
        );
        // ?()
        assert_eq!(run(r#"{.users[?(@.name=="e2e")].user.password}"#, &input), "secret");
        // range, end (the page: `[127.0.0.1, map[cpu:4]] [127.0.0.2, map[cpu:8]]`)
        assert_eq!(
            run("{range .items[*]}[{.metadata.name}, {.status.capacity}] {end}", &input),
            r#"[127.0.0.1, {"cpu":"4"}] [127.0.0.2, {"cpu":"8"}] "#
        );
        // '' (the page shows the tab as spaces)
        assert_eq!(run(r"{range .items[*]}{.metadata.name}{'\t'}{end}", &input), "127.0.0.1\t127.0.0.2\t");
        // \ (escapes a terminating character)
        assert_eq!(run(r"{.items[0].metadata.labels.kubernetes\.io/hostname}", &input), "127.0.0.1");
        // The page's examples further down.
        assert_eq!(run("{.items[0].metadata.name}", &input), "127.0.0.1");
        assert_eq!(
            run(r#"{range .items[*]}{.metadata.name}{"\t"}{.kind}{"\n"}{end}"#, &input),
            "127.0.0.1\tNone\n127.0.0.2\tNone\n"
        );
    }

    #[test]
    fn slices_negative_indices_and_steps() {
        let data = json!({"c": [{"n": "f0"}, {"n": "f1"}, {"n": "f2"}, {"n": "f3"}, {"n": "f4"}, {"n": "f5"}]});
        for (template, expected) in [
            ("{.c[0].n}", "f0"),
            ("{.c[-1].n}", "f5"),
            ("{.c[-2:].n}", "f4 f5"),
            ("{.c[0:-1].n}", "f0 f1 f2 f3 f4"),
            ("{.c[:2].n}", "f0 f1"),
            ("{.c[1:4:2].n}", "f1 f3"),
            ("{.c[::3].n}", "f0 f3"),
            ("{.c[0:0].n}", ""),
            ("{.c[6:6].n}", ""),
            ("{.c[-6].n}", "f0"),
            ("{.c[0,2,-1].n}", "f0 f2 f5"),
            ("{.c}", r#"[{"n":"f0"},{"n":"f1"},{"n":"f2"},{"n":"f3"},{"n":"f4"},{"n":"f5"}]"#),
        ] {
            assert_eq!(run(template, &data), expected, "{template}");
        }
        for (template, message) in [
            ("{.c[-7].n}", "array index out of bounds: index -1, length 6"),
            ("{.c[3:1].n}", "starting index 3 is greater than ending index 1"),
            ("{.c[-1:-2].n}", "starting index 5 is greater than ending index 4"),
            ("{.c[0:6:0].n}", "step must be > 0"),
            ("{.c[9]}", "array index out of bounds: index 9, length 6"),
            ("{.c[0].n[0]}", "string is not array or slice"),
        ] {
            assert_eq!(fails(template, &data, true), message, "{template}");
        }
    }

    #[test]
    fn filters_compare_as_go_templates_do() {
        let data = json!({"p": [
            {"id": "i1", "x": 4, "y": -5, "f": 1.5, "ok": true},
            {"id": "i2", "x": -2, "y": -5, "z": 1, "f": 2.5, "ok": false},
            {"id": "i3", "x": 8, "y": 3, "f": 0.5},
            {"id": "i4", "y": 4, "n": null}
        ]});
        for (template, expected) in [
            ("{.p[?(@.z)].id}", "i2"),
            ("{.p[?(@.x<5)].id}", "i1 i2"),
            ("{.p[?(@.x>=4)].id}", "i1 i3"),
            ("{.p[?(@.x != 4)].id}", "i2 i3"),
            ("{.p[?(@.y<=-5)].id}", "i1 i2"),
            ("{.p[?(@.f>1.0)].id}", "i1 i2"),
            ("{.p[?(@.ok==true)].id}", "i1"),
            (r#"{.p[?(@.id=="i3")].x}"#, "8"),
            ("{.p[?(@.id>'i2')].id}", "i3 i4"),
            ("{.p[?(.x==-2)].id}", "i2"),
            ("{.p[-1].n}", "null"),
        ] {
            assert_eq!(run(template, &data), expected, "{template}");
        }
        assert_eq!(fails("{.p[?(@.f>1)].id}", &data, true), "incompatible types for comparison");
        assert_eq!(fails("{.p[?(@.x<>1)].id}", &data, true), "unrecognized filter operator <>");
        assert_eq!(fails("{.p[?(@.z==1)].id}", &data, false), "z is not found");
        assert_eq!(
            fails("{.p[0][?(@.x)]}", &data, true),
            "map[id:i1 f:1.5 ok:true x:4 y:-5] is not array or slice and cannot be filtered"
                .replace("id:i1 f:1.5 ok:true", "f:1.5 id:i1 ok:true")
        );
    }

    #[test]
    fn ranges_nest_and_quoted_text_escapes() {
        let data = json!({"items": [
            {"metadata": {"name": "pod1"}, "spec": {"containers": [{"name": "foo"}, {"name": "bar"}]}},
            {"metadata": {"name": "pod2"}, "spec": {"containers": [{"name": "baz"}]}}
        ]});
        assert_eq!(
            run(
                r#"{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}{"+"}{end}"#,
                &data
            ),
            "pod1:foo,bar,+pod2:baz,+"
        );
        assert_eq!(run(r"{range .none[*]}{.x}{end}after", &data), "after");
        assert_eq!(run(r#"{"{"}{"\x41\u00e9\101"}"#, &data), "{AéA");
        assert_eq!(run(r#"{'it'}{'s'}{'\''}"#, &data), "its'");
        assert_eq!(fails("{range .items[*]}{@}{end}{end}", &data, true), "not in range, nothing to end");
        assert_eq!(fails("{hello}", &data, true), "unrecognized identifier hello");
    }

    #[test]
    fn recursive_descent_wildcards_and_escaped_keys() {
        let data =
            json!({"a": {"name": "x", "b": [{"name": "y"}], "l": {"kubernetes.io/hostname": "h", "k8s-app": 2}}});
        assert_eq!(run("{..name}", &data), "x y");
        assert_eq!(run("{...name}", &data), "x y");
        assert_eq!(run("{.a.l.*}", &data), "2 h");
        assert_eq!(run(r"{.a.l.kubernetes\.io/hostname}", &data), "h");
        assert_eq!(run("{.a.l.k8s-app}", &data), "2");
        assert_eq!(run("{$.a.b[*]}", &data), r#"{"name":"y"}"#);
        assert_eq!(run("{..b[0].name}", &data), "y");
        assert_eq!(fails("{....name}", &data, true), "invalid multiple recursive descent");
    }

    #[test]
    fn missing_keys_print_nothing_unless_refused() {
        let data = json!({"a": 1});
        assert_eq!(run("before-{.hello}after", &data), "before-after");
        assert_eq!(fails("{.hello}", &data, false), "hello is not found");
    }

    #[test]
    fn malformed_templates_say_what_is_wrong() {
        for (template, message) in [
            ("{.a", "unclosed action"),
            ("{.a[0}", "unterminated array"),
            ("{.a[x]}", "invalid array index x"),
            (r#"{"abc}"#, "unterminated quoted string"),
            ("{.a[?(@.b==1}", "unterminated filter"),
            ("{.a[?(@.b==1)}", "unclosed array expect ]"),
            ("{!}", "unrecognized character in action: U+0021 '!'"),
            ("{+}", "cannot parse number +"),
            (r#"{"\q"}"#, r#"unquote string "\q" error invalid syntax"#),
        ] {
            assert_eq!(JsonPath::parse(template).expect_err(template).0, message, "{template}");
        }
    }

    #[test]
    fn values_print_as_go_prints_them() {
        let data = json!({"i": 10, "f": 2.5, "whole": 2.0, "big": 1234567.5, "tiny": 0.00001, "t": true,
                          "s": "<a&b>", "m": {"b": [1, 2.0, null], "a": "x\u{2028}"}});
        assert_eq!(
            run("{.i} {.f} {.whole} {.big} {.tiny} {.t} {.s}", &data),
            "10 2.5 2 1.2345675e+06 1e-05 true <a&b>"
        );
        assert_eq!(run("{.m}", &data), r#"{"a":"x\u2028","b":[1,2,null]}"#);
        assert_eq!(
            run("{.big}{.m.b}{.s}", &json!({"big": 1e21, "m": {"b": [1e-7, 1234567.5]}, "s": ["<"]})),
            r#"1e+21[1e-7,1234567.5]["\u003c"]"#
        );
        let cell = |template: &str| JsonPath::parse(template).expect("parses").cell(&data).expect("runs");
        assert_eq!(cell("{.m}"), "map[a:x\u{2028} b:[1 2 <nil>]]");
        assert_eq!(cell("{.m.b[*]}"), "1,2,<nil>");
        assert_eq!(cell("{.nothing}"), "<none>");
        assert_eq!(cell("{.s}"), "<a&b>");
    }
}
