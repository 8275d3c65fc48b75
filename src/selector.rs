//! Kubernetes label selectors (`-l`), parsed and matched as the API server does for nodes.
//!
//! Supported: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, joined by commas.
//!
//! Owns: label selectors. Uses: nothing else of the crate.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// One requirement of a selector.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Requirement {
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

/// A parsed label selector; matches when every requirement holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector {
    text: String,
    requirements: Vec<Requirement>,
}

/// Why a selector does not parse.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid label selector {selector:?}: {reason}")]
pub struct SelectorError {
    selector: String,
    reason: String,
}

impl Selector {
    /// Whether `labels` satisfy every requirement.
    #[must_use]
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|r| match r {
            Requirement::In(k, values) => labels.get(k).is_some_and(|v| values.contains(v)),
            Requirement::NotIn(k, values) => labels.get(k).is_none_or(|v| !values.contains(v)),
            Requirement::Exists(k) => labels.contains_key(k),
            Requirement::DoesNotExist(k) => !labels.contains_key(k),
        })
    }

    /// The label keys the requirements name.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.requirements.iter().map(|r| match r {
            Requirement::In(k, _)
            | Requirement::NotIn(k, _)
            | Requirement::Exists(k)
            | Requirement::DoesNotExist(k) => k.as_str(),
        })
    }

    /// The selector as the user wrote it (sent to the API server as is).
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn valid_key(key: &str) -> bool {
    let name = key.rsplit('/').next().unwrap_or(key);
    !name.is_empty()
        && name.len() <= 63
        && key.matches('/').count() <= 1
        && key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

fn valid_value(value: &str) -> bool {
    value.len() <= 63 && value.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Splits on commas outside parentheses.
fn terms(text: &str) -> Vec<&str> {
    let (mut depth, mut start, mut out) = (0i32, 0, Vec::new());
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out
}

impl FromStr for Selector {
    type Err = SelectorError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let fail = |reason: String| SelectorError { selector: text.to_owned(), reason };
        let mut requirements = Vec::new();
        for term in terms(text) {
            let term = term.trim();
            let check_key = |key: &str| -> Result<String, SelectorError> {
                if valid_key(key) { Ok(key.to_owned()) } else { Err(fail(format!("{key:?} is not a valid label key"))) }
            };
            let check_value = |value: &str| -> Result<String, SelectorError> {
                if valid_value(value) {
                    Ok(value.to_owned())
                } else {
                    Err(fail(format!("{value:?} is not a valid label value")))
                }
            };
            let requirement = if term.is_empty() {
                return Err(fail("empty requirement".into()));
            } else if let Some(key) = term.strip_prefix('!') {
                Requirement::DoesNotExist(check_key(key.trim())?)
            } else if let Some((key, value)) = term.split_once("!=") {
                Requirement::NotIn(check_key(key.trim())?, vec![check_value(value.trim())?])
            } else if let Some((key, value)) = term.split_once("==").or_else(|| term.split_once('=')) {
                Requirement::In(check_key(key.trim())?, vec![check_value(value.trim())?])
            } else if let Some((key, rest)) = term.split_once(char::is_whitespace) {
                let rest = rest.trim();
                let (operator, list) = rest
                    .split_once('(')
                    .ok_or_else(|| fail(format!("expected \"in (…)\" or \"notin (…)\" after {key:?}")))?;
                let list = list.strip_suffix(')').ok_or_else(|| fail("missing \")\"".into()))?;
                let values = list.split(',').map(|v| check_value(v.trim())).collect::<Result<Vec<_>, _>>()?;
                match operator.trim() {
                    "in" => Requirement::In(check_key(key)?, values),
                    "notin" => Requirement::NotIn(check_key(key)?, values),
                    other => return Err(fail(format!("unknown operator {other:?}"))),
                }
            } else {
                Requirement::Exists(check_key(term)?)
            };
            requirements.push(requirement);
        }
        Ok(Self { text: text.to_owned(), requirements })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn selector_matches_every_operator() {
        let l = labels(&[("zone", "a"), ("role", "worker")]);
        for (text, expected) in [
            ("zone=a", true),
            ("zone==b", false),
            ("zone!=b", true),
            ("zone in (a, b),role", true),
            ("zone notin (a)", false),
            ("!gpu", true),
            ("gpu", false),
            ("topology.kubernetes.io/zone", false),
        ] {
            let selector: Selector = text.parse().expect(text);
            assert_eq!(selector.matches(&l), expected, "{text}");
        }
    }

    #[test]
    fn selector_rejects_malformed_text() {
        for text in ["", "a=b,", "zone in (a", "zone within (a)", "bad key=x", "k=v v"] {
            assert!(text.parse::<Selector>().is_err(), "{text:?} should not parse");
        }
    }
}
