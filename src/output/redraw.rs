//! Lines for a live view drawn in place on a terminal: cut to its width, and a frame that replaces
//! the previous one without leaving any of it behind.
//!
//! A line longer than the terminal wraps onto the next row, so a view that counts its lines to move
//! back over them (or that fills the screen) would leave copies behind. Every live line is therefore
//! cut to one column less than the width: a line that ends in the last column leaves the cursor in
//! the terminal's pending-wrap state, where erasing to the end of the line erases that column too.

/// The size of the terminal a view is drawn on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TermSize {
    /// Columns.
    pub columns: usize,
    /// Rows.
    pub rows: usize,
}

impl Default for TermSize {
    /// A VT100's 80×24, when the terminal does not say.
    fn default() -> Self {
        Self { columns: 80, rows: 24 }
    }
}

/// `line` cut to at most `width - 1` columns, with `…` in the last one kept when it is cut. ANSI
/// escape sequences (colours) take no column and are kept whole; a cut coloured line ends with a
/// reset. Every character counts as one column (names are ASCII in Kubernetes; the view's own
/// marks, `─` and `…`, are one column wide).
#[must_use]
pub fn fit(line: &str, width: usize) -> String {
    let room = width.saturating_sub(1);
    if visible_width(line) <= room {
        return line.to_owned();
    }
    if room == 0 {
        return String::new();
    }
    let mut out = String::with_capacity(line.len().min(room * 4 + 8));
    let mut used = 0;
    let mut escaped = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            escaped = true;
            out.push(c);
            // CSI: ESC [ parameters final-byte (@ to ~).
            if chars.peek() == Some(&'[') {
                out.extend(chars.next());
                for c in chars.by_ref() {
                    out.push(c);
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            continue;
        }
        if used + 1 == room {
            out.push('…');
            break;
        }
        out.push(c);
        used += 1;
    }
    if escaped {
        out.push_str("\u{1b}[0m");
    }
    out
}

/// How many columns `line` takes: its characters, escape sequences left out.
#[must_use]
pub fn visible_width(line: &str) -> usize {
    let mut width = 0;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            continue;
        }
        width += 1;
    }
    width
}

/// A whole-screen frame: cursor home, each line (cut to the width) followed by erase-to-end-of-line,
/// then erase below; at most `size.rows` lines, and no newline after the last, so the screen never
/// scrolls and nothing of the previous frame is left.
#[must_use]
pub fn frame(lines: &[String], size: TermSize) -> String {
    let mut out = String::from("\u{1b}[H");
    for (i, line) in lines.iter().take(size.rows.max(1)).enumerate() {
        if i > 0 {
            out.push_str("\r\n");
        }
        out.push_str(&fit(line, size.columns));
        out.push_str("\u{1b}[K");
    }
    out.push_str("\u{1b}[J");
    out
}

/// Clears the screen and hides the cursor: a full-screen view (`plan -w`) begins.
pub const ENTER_SCREEN: &str = "\u{1b}[H\u{1b}[2J\u{1b}[?25l";

/// Shows the cursor again under the last frame: a full-screen view ends.
pub const LEAVE_SCREEN: &str = "\u{1b}[?25h\r\n";

/// Replaces the `drawn` lines of a live block under a log (`run`'s next deletions) with `lines`,
/// each cut to `columns`; returns how many are drawn now.
///
/// Each line is cut to the terminal's width (read at every redraw by the caller: it may be resized):
/// a longer line would wrap onto a second row, and moving back `drawn` lines would leave its first
/// row behind.
pub fn block(out: &mut impl std::io::Write, drawn: usize, lines: &[String], columns: usize) -> usize {
    if drawn > 0 {
        // Move to the block's first line and clear it and everything below.
        let _ = write!(out, "\u{1b}[{drawn}F\u{1b}[J");
    }
    for line in lines {
        let _ = writeln!(out, "{}", fit(line, columns));
    }
    let _ = out.flush();
    lines.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_lines_are_cut_to_the_terminal_width_so_moving_back_over_them_leaves_no_copy() {
        // Fixed: at 80 columns the status line wrapped, and each redraw left a copy of it.
        let lines = vec![format!("── {} ──", "9 scheduled, 0 deleted · ".repeat(5)), "  in 5s  web/a on n1".to_owned()];
        let mut out = Vec::new();
        let drawn = block(&mut out, 0, &lines, 80);
        let drawn = block(&mut out, drawn, &lines, 80);
        assert_eq!(drawn, 2);
        let text = String::from_utf8(out).expect("UTF-8");
        assert!(text.contains("\x1b[2F\x1b[J"), "{text:?}");
        for line in text.split('\n') {
            let line = line.replace("\x1b[2F\x1b[J", "");
            assert!(visible_width(&line) < 80, "{line}");
        }
    }

    #[test]
    fn fit_cuts_to_one_column_less_than_the_width_and_keeps_colours_whole() {
        assert_eq!(fit("short", 80), "short");
        let long = "x".repeat(100);
        let cut = fit(&long, 80);
        assert_eq!(visible_width(&cut), 79);
        assert!(cut.ends_with('…'));
        assert_eq!(fit(&"y".repeat(79), 80), "y".repeat(79), "a line that fits is kept");
        let coloured = format!("\u{1b}[2m{}\u{1b}[0m", "─".repeat(90));
        let cut = fit(&coloured, 40);
        assert_eq!(visible_width(&cut), 39);
        assert!(cut.starts_with("\u{1b}[2m") && cut.ends_with("…\u{1b}[0m"), "{cut:?}");
        assert_eq!(fit("abc", 1), "", "no room: nothing");
        assert_eq!(fit("abc", 2), "…");
    }

    #[test]
    fn frame_never_writes_more_rows_than_the_terminal_has() {
        let lines: Vec<String> = (0..30).map(|i| format!("line {i} {}", "z".repeat(90))).collect();
        let size = TermSize { columns: 80, rows: 24 };
        let text = frame(&lines, size);
        assert_eq!(text.matches("\r\n").count(), 23);
        assert!(text.starts_with("\u{1b}[H") && text.ends_with("\u{1b}[K\u{1b}[J"));
        for row in text.split("\r\n") {
            let row = row.trim_start_matches("\u{1b}[H").replace("\u{1b}[K", "").replace("\u{1b}[J", "");
            assert!(visible_width(&row) < 80, "{row}");
        }
    }
}
