//! A pseudo-terminal for the real binary, and a tiny terminal emulator to read what it drew.
//!
//! The emulator knows what a live view uses: printable characters with VT100 wrapping (pending wrap
//! at the last column), CR, LF (scrolling at the bottom, counted), cursor moves (`H`, `A`–`G`),
//! erase in line (`K`) and in display (`J`); other sequences (colours, cursor visibility) are
//! skipped.

use std::fs::File;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The screen of a terminal of `columns` × `rows`.
#[derive(Clone, Debug)]
pub struct Screen {
    columns: usize,
    rows: usize,
    cells: Vec<Vec<char>>,
    row: usize,
    column: usize,
    pending_wrap: bool,
    /// How many times output scrolled the screen up.
    pub scrolled: usize,
}

impl Screen {
    pub fn new(columns: usize, rows: usize) -> Self {
        Self {
            columns,
            rows,
            cells: vec![vec![' '; columns]; rows],
            row: 0,
            column: 0,
            pending_wrap: false,
            scrolled: 0,
        }
    }

    /// The screen after `bytes` were written to a fresh terminal.
    pub fn of(bytes: &[u8], columns: usize, rows: usize) -> Self {
        let mut screen = Self::new(columns, rows);
        screen.feed(&String::from_utf8_lossy(bytes));
        screen
    }

    /// The rows, trailing blanks removed.
    pub fn lines(&self) -> Vec<String> {
        self.cells.iter().map(|row| row.iter().collect::<String>().trim_end().to_owned()).collect()
    }

    /// The rows with something on them.
    pub fn text_rows(&self) -> Vec<String> {
        self.lines().into_iter().filter(|l| !l.is_empty()).collect()
    }

    fn line_feed(&mut self) {
        if self.row + 1 == self.rows {
            self.cells.remove(0);
            self.cells.push(vec![' '; self.columns]);
            self.scrolled += 1;
        } else {
            self.row += 1;
        }
    }

    fn erase(&mut self, row: usize, from: usize) {
        for cell in &mut self.cells[row][from..] {
            *cell = ' ';
        }
    }

    fn put(&mut self, c: char) {
        if self.pending_wrap {
            self.pending_wrap = false;
            self.column = 0;
            self.line_feed();
        }
        self.cells[self.row][self.column] = c;
        if self.column + 1 == self.columns {
            self.pending_wrap = true;
        } else {
            self.column += 1;
        }
    }

    fn csi(&mut self, params: &str, command: char) {
        let numbers: Vec<usize> = params.split(';').map(|p| p.parse().unwrap_or(0)).collect();
        let n = numbers.first().copied().filter(|&n| n > 0).unwrap_or(1);
        let first = numbers.first().copied().unwrap_or(0);
        match command {
            _ if params.starts_with('?') => {}
            'H' | 'f' => {
                self.row = (n - 1).min(self.rows - 1);
                let column = numbers.get(1).copied().filter(|&c| c > 0).unwrap_or(1);
                self.column = (column - 1).min(self.columns - 1);
                self.pending_wrap = false;
            }
            'A' => self.row = self.row.saturating_sub(n),
            'B' => self.row = (self.row + n).min(self.rows - 1),
            'C' => self.column = (self.column + n).min(self.columns - 1),
            'D' => self.column = self.column.saturating_sub(n),
            'E' | 'F' => {
                self.row = if command == 'E' { (self.row + n).min(self.rows - 1) } else { self.row.saturating_sub(n) };
                self.column = 0;
            }
            'G' => self.column = (n - 1).min(self.columns - 1),
            'K' => match first {
                0 => self.erase(self.row, self.column),
                1 => {
                    for cell in &mut self.cells[self.row][..=self.column] {
                        *cell = ' ';
                    }
                }
                _ => self.erase(self.row, 0),
            },
            'J' => match first {
                0 => {
                    self.erase(self.row, self.column);
                    for row in self.row + 1..self.rows {
                        self.erase(row, 0);
                    }
                }
                _ => {
                    for row in 0..self.rows {
                        self.erase(row, 0);
                    }
                }
            },
            _ => {}
        }
        if matches!(command, 'A' | 'B' | 'C' | 'D' | 'E' | 'F' | 'G') {
            self.pending_wrap = false;
        }
    }

    pub fn feed(&mut self, text: &str) {
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\u{1b}' => match chars.next() {
                    Some('[') => {
                        let mut params = String::new();
                        for c in chars.by_ref() {
                            if ('@'..='~').contains(&c) {
                                self.csi(&params, c);
                                break;
                            }
                            params.push(c);
                        }
                    }
                    // An OSC runs to BEL or ESC \.
                    Some(']') => {
                        while let Some(c) = chars.next() {
                            if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                                break;
                            }
                        }
                    }
                    _ => {}
                },
                '\r' => {
                    self.column = 0;
                    self.pending_wrap = false;
                }
                '\n' => {
                    self.pending_wrap = false;
                    self.line_feed();
                }
                c if c.is_control() => {}
                c => self.put(c),
            }
        }
    }
}

/// The bytes a program wrote to a pseudo-terminal, as they arrive.
pub struct Pty {
    /// The terminal side, for the program's stdout (to be closed here once it has started).
    pub slave: Option<OwnedFd>,
    output: Arc<(Mutex<Vec<u8>>, Condvar)>,
    pub columns: usize,
    pub rows: usize,
}

impl Pty {
    /// Opens a pseudo-terminal of `columns` × `rows` and starts reading its master side.
    pub fn open(columns: u16, rows: u16) -> Self {
        let (mut master, mut slave) = (0, 0);
        let size = libc::winsize { ws_row: rows, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0 };
        // SAFETY: openpty writes two descriptors into the given integers; the name and termios
        // pointers may be null, and the winsize is read only.
        let status = unsafe { libc::openpty(&mut master, &mut slave, std::ptr::null_mut(), std::ptr::null(), &size) };
        assert_eq!(status, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors were just opened and are owned by nothing else.
        let (master, slave) = unsafe { (File::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        let output = Arc::new((Mutex::new(Vec::new()), Condvar::new()));
        let written = output.clone();
        std::thread::spawn(move || {
            let mut master = master;
            let mut buffer = [0; 4096];
            // Once every slave descriptor is closed (the program ended), the read fails (EIO).
            while let Ok(n) = master.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                let (bytes, changed) = &*written;
                bytes.lock().expect("output").extend_from_slice(&buffer[..n]);
                changed.notify_all();
            }
            written.1.notify_all();
        });
        Self { slave: Some(slave), output, columns: usize::from(columns), rows: usize::from(rows) }
    }

    /// Everything written so far.
    pub fn bytes(&self) -> Vec<u8> {
        self.output.0.lock().expect("output").clone()
    }

    /// The screen once more bytes than `seen` arrived, waiting up to `timeout` (`None` after it, or
    /// when the program closed the terminal); `seen` becomes the count read.
    pub fn wait_for_more(&self, seen: &mut usize, timeout: Duration) -> Option<Screen> {
        let deadline = Instant::now() + timeout;
        let (bytes, changed) = &*self.output;
        let mut guard = bytes.lock().expect("output");
        while guard.len() == *seen {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            guard = changed.wait_timeout(guard, left).expect("output").0;
        }
        *seen = guard.len();
        Some(Screen::of(&guard, self.columns, self.rows))
    }

    /// Waits until the screen satisfies `condition` and returns it; `timeout` is only an upper
    /// bound (woken by every write), past which the test fails with `what` and the screen.
    pub fn wait_for(&self, what: &str, timeout: Duration, condition: impl Fn(&Screen) -> bool) -> Screen {
        let deadline = Instant::now() + timeout;
        let (bytes, changed) = &*self.output;
        let mut guard = bytes.lock().expect("output");
        loop {
            let screen = Screen::of(&guard, self.columns, self.rows);
            if condition(&screen) {
                return screen;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "timed out after {timeout:?} waiting for {what}; screen:\n{}",
                screen.lines().join("\n")
            );
            guard = changed.wait_timeout(guard, left).expect("output").0;
        }
    }
}

#[test]
fn the_emulator_wraps_at_the_last_column_and_erases_as_a_vt100() {
    let mut screen = Screen::new(10, 3);
    screen.feed("0123456789\u{1b}[K");
    assert_eq!(screen.lines()[0], "012345678", "erasing in the pending-wrap state erases the last column");
    screen.feed("\r\nabcdefghijXY");
    assert_eq!(screen.lines()[1..], ["abcdefghij".to_owned(), "XY".to_owned()], "a longer line wraps");
    screen.feed("\r\nz");
    assert_eq!(screen.scrolled, 1);
    screen.feed("\u{1b}[H\u{1b}[31mQ\u{1b}[0m\u{1b}[J");
    assert_eq!(screen.text_rows(), ["Q"]);
}
