//! A game day's words in the table, `--summary` and `--timeline` views: what the what-if assumed
//! (a line before the plan) and, per owner, how many of its running pods go, when, and what is left
//! (a table after it).

use std::io::{self, Write};

use super::human::{count, printable, short_time, to_second};
use super::view::{View, cut};
use crate::engine::plan::{Assumed, OwnerLoss, Plan};
use crate::engine::time::Timestamp;

/// The most node names the line of a game day lists before counting the rest.
const NAMED: usize = 5;

/// The line that says which nodes go down: `What if: worker-1 and worker-2's kubelets stop
/// heartbeating now (10:00:00) (--down-selector zone=za)`. `None` without `--down`.
#[must_use]
pub fn down_line(assumed: &Assumed, now: Timestamp) -> Option<String> {
    let (first, rest) = assumed.down.split_at(assumed.down.len().min(NAMED));
    let (last, _) = first.split_last()?;
    let mut names: Vec<&str> = first.iter().map(|name| name.as_str()).collect();
    let more = match rest.len() {
        0 => String::new(),
        n => format!(" and {} more", count(n)),
    };
    let nodes = if assumed.down.len() == 1 {
        format!("{}'s kubelet stops", last.as_str())
    } else if more.is_empty() {
        names.pop();
        format!("{} and {}'s kubelets stop", names.join(", "), last.as_str())
    } else {
        format!("{}{more}: their kubelets stop", names.join(", "))
    };
    let selector = assumed.down_selector.as_ref().map(|s| format!(" (--down-selector {s})")).unwrap_or_default();
    Some(format!("What if: {nodes} heartbeating now ({}){selector}", short_time(to_second(now, false), now)))
}

/// Writes the line of [`down_line`], when the plan has one.
pub fn write_down_line(plan: &Plan, view: &View, out: &mut impl Write) -> io::Result<()> {
    match plan.assumed.as_ref().and_then(|assumed| down_line(assumed, plan.now)) {
        Some(line) => writeln!(out, "{}", cut(&printable(&line), view.width)),
        None => Ok(()),
    }
}

/// Writes the roll-up per owner, after a blank line, when the plan has one: a heading that counts
/// the owners left with no pod, then a row per owner (those left with none first).
pub fn write_roll_up(plan: &Plan, view: &View, out: &mut impl Write) -> io::Result<()> {
    let Some(owners) = &plan.owners else { return Ok(()) };
    writeln!(out)?;
    if owners.is_empty() {
        return writeln!(out, "No owner loses a pod.");
    }
    let none_left = owners.iter().filter(|owner| owner.none_left()).count();
    let heading = format!(
        "{} {} pods; {} with none left",
        count(owners.len()),
        if owners.len() == 1 { "owner loses" } else { "owners lose" },
        count(none_left)
    );
    writeln!(out, "{}", cut(&heading, view.width))?;
    let rows: Vec<[String; 6]> = owners.iter().map(|owner| row(owner, plan.now)).collect();
    let headers = ["NAMESPACE", "OWNER", "DELETED", "FIRST", "LAST", "LEFT"];
    let mut widths = headers.map(str::len);
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 6]| {
        let mut line = String::new();
        for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
            if i > 0 {
                line.push_str("   ");
            }
            line.push_str(&format!("{cell:<width$}"));
        }
        line.trim_end().to_owned()
    };
    if view.headers {
        writeln!(out, "{}", cut(&line(headers), view.width))?;
    }
    for row in &rows {
        let cells = [&*row[0], &*row[1], &*row[2], &*row[3], &*row[4], &*row[5]];
        writeln!(out, "{}", cut(&line(cells), view.width))?;
    }
    Ok(())
}

/// One owner's cells.
fn row(owner: &OwnerLoss<'_>, now: Timestamp) -> [String; 6] {
    let left = owner.pods - owner.deleted;
    [
        printable(owner.namespace).into_owned(),
        printable(&format!("{}/{}", owner.owner.kind(), owner.owner.name())).into_owned(),
        format!("{} of {}", count(owner.deleted as usize), count(owner.pods as usize)),
        short_time(to_second(owner.first, false), now),
        owner.last.map_or_else(|| "open".to_owned(), |last| short_time(to_second(last, true), now)),
        if left == 0 { "none".to_owned() } else { count(left as usize) },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::snapshot::Owner;

    const NOW: Timestamp = Timestamp::from_unix_seconds(1_795_341_600); // 2026-11-22T10:00:00Z

    fn assumed(down: &[&str], selector: Option<&str>) -> Assumed {
        Assumed {
            changes: Vec::new(),
            down: down.iter().map(|name| (*name).into()).collect(),
            down_selector: selector.map(str::to_owned),
        }
    }

    #[test]
    fn the_down_line_names_the_nodes_and_counts_those_beyond_five() {
        assert_eq!(down_line(&assumed(&[], None), NOW), None);
        assert_eq!(
            down_line(&assumed(&["w1"], None), NOW).as_deref(),
            Some("What if: w1's kubelet stops heartbeating now (10:00:00)")
        );
        assert_eq!(
            down_line(&assumed(&["w1", "w2", "w3"], Some("zone=za")), NOW).as_deref(),
            Some("What if: w1, w2 and w3's kubelets stop heartbeating now (10:00:00) (--down-selector zone=za)")
        );
        let many: Vec<String> = (1..=7).map(|i| format!("w{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(
            down_line(&assumed(&many, None), NOW).as_deref(),
            Some("What if: w1, w2, w3, w4, w5 and 2 more: their kubelets stop heartbeating now (10:00:00)")
        );
    }

    #[test]
    fn the_roll_up_lists_each_owner_with_what_is_left() {
        let (db, web) = (Owner::new("StatefulSet", "db", "u-db"), Owner::new("ReplicaSet", "web-7d9c", "u-web"));
        let at = |s: i64| Timestamp::from_unix_seconds(1_795_341_600 + s);
        let shop = std::sync::Arc::from("shop");
        let owners = vec![
            OwnerLoss { namespace: &shop, owner: &db, pods: 2, deleted: 2, first: at(340), last: None },
            OwnerLoss {
                namespace: &shop,
                owner: &web,
                pods: 3,
                deleted: 2,
                first: Timestamp::from_nanos(at(345).as_nanos() + 900_000_000),
                last: Some(Timestamp::from_nanos(at(359).as_nanos() + 1)),
            },
        ];
        let plan =
            Plan { now: NOW, nodes: Vec::new(), zones: None, device_taints: None, owners: Some(owners), assumed: None };
        let mut out = Vec::new();
        write_roll_up(&plan, &View::plain(), &mut out).expect("a Vec takes it");
        assert_eq!(
            String::from_utf8(out).expect("UTF-8"),
            "\n2 owners lose pods; 1 with none left\n\
             NAMESPACE   OWNER                 DELETED   FIRST      LAST       LEFT\n\
             shop        StatefulSet/db        2 of 2    10:05:40   open       none\n\
             shop        ReplicaSet/web-7d9c   2 of 3    10:05:45   10:06:00   1\n"
        );
        let empty = Plan { owners: Some(Vec::new()), ..plan };
        let mut out = Vec::new();
        write_roll_up(&empty, &View::plain(), &mut out).expect("a Vec takes it");
        assert_eq!(out, b"\nNo owner loses a pod.\n");
    }
}
