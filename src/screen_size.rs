//! The terminal's size: `COLUMNS` and `LINES` when set (as a shell or a test pins them), else what
//! the terminal on stdout says; for the live views, else 80×24; for tables, else as wide as it takes.

use std::io::IsTerminal;

use crate::output::redraw::TermSize;

/// A positive number from an environment variable.
fn env_size(name: &str) -> Option<usize> {
    std::env::var(name).ok()?.trim().parse().ok().filter(|&n| n > 0)
}

/// The columns and rows of the terminal stdout is, if it is one.
fn asked() -> Option<(usize, usize)> {
    let stdout = std::io::stdout();
    if !stdout.is_terminal() {
        return None;
    }
    terminal_size::terminal_size_of(&stdout).map(|(width, height)| (usize::from(width.0), usize::from(height.0)))
}

/// The width to fit tables in: `COLUMNS`, else the terminal's when stdout is one; `None` (as wide as
/// it takes) into a pipe or a file.
#[must_use]
pub fn table_width() -> Option<usize> {
    env_size("COLUMNS").or_else(|| asked().map(|(columns, _)| columns)).filter(|&n| n > 0)
}

/// The size of the terminal stdout is, read anew at each call (the terminal may be resized).
#[must_use]
pub fn size() -> TermSize {
    let (columns, rows) = (env_size("COLUMNS"), env_size("LINES"));
    let told = if columns.is_none() || rows.is_none() { asked() } else { None };
    let default = TermSize::default();
    TermSize {
        columns: columns.or(told.map(|t| t.0)).filter(|&n| n > 0).unwrap_or(default.columns),
        rows: rows.or(told.map(|t| t.1)).filter(|&n| n > 0).unwrap_or(default.rows),
    }
}
