//! kubectl-style tables: columns padded with spaces, no borders, one block per node.

use std::io::{self, Write};

use owo_colors::OwoColorize;

use super::ColorMode;
use super::human::{countdown, printable, rfc3339};
use super::json::{basis_name, verdict_name};
use crate::engine::replay::{NodePlan, Plan, PodPlan, Verdict};

/// How a cell is coloured.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tone {
    Plain,
    Bad,
    Warn,
    Good,
    Dim,
}

struct Cell {
    text: String,
    tone: Tone,
}

impl Cell {
    fn plain(text: impl Into<String>) -> Self {
        Self { text: text.into(), tone: Tone::Plain }
    }
}

/// Rows with every cell made [`printable`], before widths are measured.
fn printable_rows(rows: Vec<Vec<Cell>>) -> Vec<Vec<Cell>> {
    let cell = |cell: Cell| match printable(&cell.text) {
        std::borrow::Cow::Borrowed(_) => cell,
        std::borrow::Cow::Owned(text) => Cell { text, tone: cell.tone },
    };
    rows.into_iter().map(|row| row.into_iter().map(cell).collect()).collect()
}

/// Writes rows as aligned columns; widths are measured on the plain text, colour is added after.
fn write_rows(rows: &[Vec<Cell>], color: ColorMode, out: &mut impl Write) -> io::Result<()> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().filter_map(|r| r.get(c)).map(|cell| cell.text.chars().count()).max().unwrap_or(0))
        .collect();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let last = c + 1 == row.len();
            let text = match (color, cell.tone) {
                (ColorMode::Plain, _) | (_, Tone::Plain) => cell.text.clone(),
                (ColorMode::Color, Tone::Bad) => cell.text.red().bold().to_string(),
                (ColorMode::Color, Tone::Warn) => cell.text.yellow().to_string(),
                (ColorMode::Color, Tone::Good) => cell.text.green().to_string(),
                (ColorMode::Color, Tone::Dim) => cell.text.dimmed().to_string(),
            };
            line.push_str(&text);
            if !last {
                let pad = widths[c] - cell.text.chars().count() + 3;
                line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// Why: the deciding taint or toleration.
fn reason(pod: &PodPlan) -> String {
    match pod.verdict {
        Verdict::EvictNow if pod.untolerated.is_empty() => "untolerated when observed (taint since removed)".to_owned(),
        Verdict::EvictNow => {
            let taints: Vec<String> = pod.untolerated.iter().map(ToString::to_string).collect();
            format!("untolerated {}", taints.join(","))
        }
        Verdict::EvictAt => format!("tolerationSeconds={}", pod.toleration_seconds.unwrap_or_default()),
        Verdict::Never => "tolerated forever".to_owned(),
        Verdict::Unaffected => "no NoExecute taint".to_owned(),
    }
}

fn verdict_tone(verdict: Verdict) -> Tone {
    match verdict {
        Verdict::EvictNow => Tone::Bad,
        Verdict::EvictAt => Tone::Warn,
        Verdict::Never => Tone::Good,
        Verdict::Unaffected => Tone::Dim,
    }
}

fn node_heading(node: &NodePlan) -> String {
    if node.taints.is_empty() {
        return format!("Node {}: no NoExecute taints", node.name);
    }
    let taints: Vec<String> = node
        .taints
        .iter()
        .map(|t| match t.time_added {
            Some(at) => format!("{t} (added {})", rfc3339(at)),
            None => format!("{t} (no timeAdded)"),
        })
        .collect();
    format!("Node {}: {}", node.name, taints.join(", "))
}

/// Writes the plan as one table per node.
pub fn render(plan: &Plan, wide: bool, color: ColorMode, out: &mut impl Write) -> io::Result<()> {
    if plan.nodes.is_empty() {
        return writeln!(out, "No node has a NoExecute taint.");
    }
    for (i, node) in plan.nodes.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        writeln!(out, "{}", printable(&node_heading(node)))?;
        if node.pods.is_empty() {
            writeln!(out, "No pods.")?;
            continue;
        }
        let mut header = vec!["NAMESPACE", "POD", "VERDICT", "DEADLINE", "IN", "REASON"];
        if wide {
            header.extend(["SINCE", "BASIS", "TOLERATION", "UID"]);
        }
        let mut rows = vec![header.into_iter().map(Cell::plain).collect::<Vec<_>>()];
        for pod in &node.pods {
            let name =
                if pod.terminating { format!("{} (terminating)", pod.key.name()) } else { pod.key.name().to_owned() };
            let mut row = vec![
                Cell::plain(pod.key.namespace()),
                Cell::plain(name),
                Cell { text: verdict_name(pod.verdict).to_owned(), tone: verdict_tone(pod.verdict) },
                Cell::plain(pod.evict_at.map_or_else(|| "-".to_owned(), rfc3339)),
                Cell {
                    text: countdown(pod.evict_at, plan.now),
                    tone: if pod.overdue { Tone::Bad } else { Tone::Plain },
                },
                Cell::plain(reason(pod)),
            ];
            if wide {
                row.extend([
                    Cell::plain(pod.since.map_or_else(|| "-".to_owned(), rfc3339)),
                    Cell::plain(pod.basis.map_or("-", basis_name)),
                    Cell::plain(pod.toleration_seconds.map_or_else(|| "-".to_owned(), |s| format!("{s}s"))),
                    Cell::plain(pod.uid.to_string()),
                ]);
            }
            rows.push(row);
        }
        write_rows(&printable_rows(rows), color, out)?;
    }
    Ok(())
}
