//! Saying when the nodes `run` was asked to enforce on are not there: a NODE named that does not
//! exist, a `-l` that matches no node. `plan` refuses the same input; `run` says so and keeps
//! watching, since a node may join (docs/run.md).
//!
//! Checked at each complete list of nodes (the first, and each re-list), not at each change; an
//! absence is said once, and again only if the node came and went between two lists.
//!
//! Owns: [`Asked`] and the absences said. Uses: the engine's node names.

use std::collections::BTreeSet;

use crate::engine::model::NodeName;

/// The nodes `run` was asked to enforce on, as the command line put them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Asked {
    /// Every node: no absence to say.
    #[default]
    Every,
    /// These, by name.
    Named(Vec<NodeName>),
    /// Those matching `-l`, as given.
    Selected(String),
}

/// The absences said so far, and whether a list came in since the last check.
#[derive(Debug, Default)]
pub(super) struct Absent {
    asked: Asked,
    /// The named nodes said to be missing, and not seen since.
    said: BTreeSet<NodeName>,
    /// Whether "no node matched" was said, and no node seen since.
    said_none: bool,
    /// A list of nodes came in and was not checked yet.
    listed: bool,
}

impl Absent {
    pub(super) fn new(asked: Asked) -> Self {
        Self { asked, ..Self::default() }
    }

    /// A complete list of nodes came in: the next [`Absent::check`] reads it.
    pub(super) fn listed(&mut self) {
        self.listed = true;
    }

    /// A node came or changed between two lists: if it goes again, that is said again.
    pub(super) fn seen(&mut self, name: &NodeName) {
        self.said.remove(name);
        self.said_none = false;
    }

    /// What to say about the nodes asked for and missing from `nodes`, the latest list, if a list
    /// came in since the last check and there is something not said before.
    pub(super) fn check<'a>(&mut self, nodes: impl IntoIterator<Item = &'a NodeName>) -> Option<String> {
        if !std::mem::take(&mut self.listed) {
            return None;
        }
        let mut nodes = nodes.into_iter();
        match &self.asked {
            Asked::Every => None,
            Asked::Selected(selector) => {
                let none = nodes.next().is_none();
                let say = none && !self.said_none;
                self.said_none = none;
                say.then(|| {
                    format!(
                        "no node matched -l {selector}: run keeps watching and enforces the pods of nodes that \
                         start matching"
                    )
                })
            }
            Asked::Named(names) => {
                let present: BTreeSet<&NodeName> = nodes.collect();
                let mut missing: Vec<&NodeName> = Vec::new();
                for name in names {
                    if !present.contains(name) && !missing.contains(&name) {
                        missing.push(name);
                    }
                }
                let new: Vec<String> = missing
                    .iter()
                    .filter(|name| !self.said.contains(**name))
                    .map(|name| format!("\"{name}\""))
                    .collect();
                self.said = missing.into_iter().cloned().collect();
                match new.len() {
                    0 => None,
                    1 => {
                        Some(format!("node {} not found: run keeps watching and enforces its pods if it joins", new[0]))
                    }
                    _ => Some(format!(
                        "nodes {} not found: run keeps watching and enforces their pods if they join",
                        new.join(", ")
                    )),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(names: &[&str]) -> Vec<NodeName> {
        names.iter().map(|name| NodeName::from(*name)).collect()
    }

    fn listed(absent: &mut Absent, nodes: &[&str]) -> Option<String> {
        absent.listed();
        absent.check(&names(nodes))
    }

    #[test]
    fn a_missing_named_node_is_said_once_per_absence_at_a_list() {
        let mut absent = Absent::new(Asked::Named(names(&["w3", "n1", "w3"])));
        let said = listed(&mut absent, &["n1", "n2"]);
        assert_eq!(
            said.as_deref(),
            Some(r#"node "w3" not found: run keeps watching and enforces its pods if it joins"#)
        );
        assert_eq!(listed(&mut absent, &["n1"]), None, "a re-list that finds it missing still says nothing more");
        assert_eq!(absent.check(&names(&[])), None, "nothing is checked between lists");
        absent.seen(&NodeName::from("w3"));
        assert_eq!(listed(&mut absent, &["n1", "w3"]), None);
        let gone_again = listed(&mut absent, &["n1"]);
        assert!(gone_again.is_some_and(|said| said.starts_with(r#"node "w3" not found"#)), "it came and went");
    }

    #[test]
    fn several_missing_nodes_are_one_line_in_the_order_named() {
        let mut absent = Absent::new(Asked::Named(names(&["w3", "n1", "w1"])));
        let said = listed(&mut absent, &["n1"]);
        assert_eq!(
            said.as_deref(),
            Some(r#"nodes "w3", "w1" not found: run keeps watching and enforces their pods if they join"#)
        );
    }

    #[test]
    fn a_selector_matching_no_node_is_said_once_until_a_node_matches() {
        let mut absent = Absent::new(Asked::Selected("zone=nowhere".into()));
        let said = listed(&mut absent, &[]);
        assert_eq!(
            said.as_deref(),
            Some(
                "no node matched -l zone=nowhere: run keeps watching and enforces the pods of nodes that start matching"
            )
        );
        assert_eq!(listed(&mut absent, &[]), None);
        assert_eq!(listed(&mut absent, &["n1"]), None);
        assert!(listed(&mut absent, &[]).is_some(), "matched, then no longer");
        let mut every = Absent::new(Asked::Every);
        assert_eq!(listed(&mut every, &[]), None);
    }
}
