//! Why a dump, a list page or an object could not be decoded, in messages that name the item and
//! the field.
//!
//! Owns: [`DumpError`] and the way objects and input text are quoted in it. Uses: nothing of the
//! decoder (the bottom layer, beside `raw`).

/// Why a dump could not be read. The messages name the item and field; the caller adds the file.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DumpError {
    /// The input is not JSON.
    #[error("not valid JSON: {0}")]
    Json(String),
    /// The document is JSON but not a `List`.
    #[error("expected a v1 List as `kubectl get nodes,pods -A -o json` prints it, found {0}")]
    NotAList(String),
    /// One item has a field of the wrong shape or value.
    #[error("item {index} ({object}): {}{message}", located(.path))]
    BadItem {
        /// The item's index in `items`.
        index: usize,
        /// `Kind namespace/name`, as far as it is known.
        object: String,
        /// The field, as a JSON path (`spec.tolerations[1].tolerationSeconds`).
        path: String,
        /// What is wrong with it.
        message: String,
    },
    /// The document is JSON, but it (or a field outside its items) has the wrong shape: an API
    /// server's answer that is not the object or list asked for.
    #[error("{}{message}", located(.path))]
    BadShape {
        /// The field, as a JSON path; empty for the document itself.
        path: String,
        /// What is wrong with it.
        message: String,
    },
}

/// `path: `, or nothing for the document (or item) itself.
fn located(path: &str) -> String {
    if path.is_empty() { String::new() } else { format!("{path}: ") }
}

/// `text` with control and other invisible characters escaped (`\n`, `\u{202e}`), so that a message
/// quoting the input stays one honest line.
pub(super) fn printable(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' | '\'' | '\\' => c.to_string(),
            c => c.escape_debug().to_string(),
        })
        .collect()
}

/// `Kind namespace/name`, `Kind name` or `Kind`, one line whatever the names hold.
pub(super) fn object_name(kind: &str, namespace: &str, name: &str) -> String {
    printable(&match (namespace.is_empty(), name.is_empty()) {
        (_, true) => kind.to_owned(),
        (true, false) => format!("{kind} {name}"),
        (false, false) => format!("{kind} {namespace}/{name}"),
    })
}
