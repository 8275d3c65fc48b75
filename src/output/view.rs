//! How a plan is laid out for people: the colour decision, the width (and a line cut to it), the order.

/// The order of the pods in a table (`--sort-by`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SortBy {
    /// Deadline (pods without one last), then namespace, then name: the document's order.
    #[default]
    Deadline,
    /// Namespace, then name.
    Namespace,
    /// Name, then namespace.
    Name,
}

/// Whether to colour output. Decided once, from `--color`, the terminal and `NO_COLOR`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorMode {
    /// ANSI colours.
    Color,
    /// Plain text.
    Plain,
}

/// How the human forms of a plan are laid out: decided by the command line, the terminal and the
/// environment, never by the renderers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct View {
    /// Colour or not.
    pub color: ColorMode,
    /// The width to fit the table in (`COLUMNS`, or the terminal's); `None`: as wide as it takes.
    pub width: Option<usize>,
    /// Column headers, node headings and summaries (`--no-headers` turns them off).
    pub headers: bool,
    /// Only the summary lines (`--summary`).
    pub summary: bool,
    /// The deletions over time instead of the pods (`--timeline`); in JSON and YAML, the
    /// `timeline` field.
    pub timeline: bool,
    /// The pods' order in a table.
    pub sort: SortBy,
}

impl View {
    /// The view of a pipe: no colour, no width, headers, every pod, by deadline.
    #[must_use]
    pub fn plain() -> Self {
        Self {
            color: ColorMode::Plain,
            width: None,
            headers: true,
            summary: false,
            timeline: false,
            sort: SortBy::Deadline,
        }
    }
}

/// `text` cut to `width` characters, the last one `…`, when it is longer.
#[must_use]
pub fn cut(text: &str, width: Option<usize>) -> std::borrow::Cow<'_, str> {
    match width {
        Some(width) if text.chars().count() > width => {
            let mut short: String = text.chars().take(width.saturating_sub(1)).collect();
            short.push('…');
            std::borrow::Cow::Owned(short)
        }
        _ => std::borrow::Cow::Borrowed(text),
    }
}
