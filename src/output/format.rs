//! The format `plan` prints in (`-o`): the table, JSON, YAML, names, or a kubectl template.

use super::template;

/// How `plan` prints.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum OutputFormat {
    /// A table per node, fitted to the terminal.
    #[default]
    Table,
    /// The table with every value in full, and `SINCE BASIS TOLERATION UID`.
    Wide,
    /// The `EvictionPlan` document as JSON.
    Json,
    /// The same document as YAML.
    Yaml,
    /// `pod/NAME`, one per line, as kubectl prints it (the namespace is `-n`'s).
    Name,
    /// A kubectl template (`jsonpath`, `custom-columns`) over the JSON document; a custom-columns
    /// table has a row per pod.
    Template(template::Template),
}
