//! The node watch's events as the node lifecycle prediction reads them: every node's health, and
//! whether the command shows it. The one node watch serves both the engine (the nodes in scope) and
//! the prediction (every node: zones are counted over all of them).
//!
//! Owns: [`HealthChange`], [`Tap`]. Uses: the decoded nodes, the node scope.

use kube::runtime::watcher::{self, Event};
use tokio::sync::mpsc;

use super::decoded::WatchedNode;
use super::scope::NodeScope;
use crate::engine::lifecycle::NodeHealth;

/// A change of the nodes' health, with whether each node is shown.
#[derive(Debug)]
pub enum HealthChange {
    /// A complete (re-)list.
    Listed(Vec<(NodeHealth, bool)>),
    /// A node added or changed.
    Applied(Box<NodeHealth>, bool),
    /// A node deleted.
    Deleted(String),
    /// The watch broke: nothing is foreseen from it until it has listed again.
    Interrupted,
}

/// Turns the node watch's events into [`HealthChange`]s as they pass, collecting each listing.
pub(super) struct Tap {
    scope: NodeScope,
    listing: Vec<(NodeHealth, bool)>,
    changes: mpsc::UnboundedSender<HealthChange>,
}

impl Tap {
    pub(super) fn new(scope: NodeScope, changes: mpsc::UnboundedSender<HealthChange>) -> Self {
        Self { scope, listing: Vec::new(), changes }
    }

    fn health(&self, node: &WatchedNode) -> Option<(NodeHealth, bool)> {
        node.health().map(|health| (health.clone(), self.scope.admits(node.node())))
    }

    /// Sees one event of the node watch.
    pub(super) fn see(&mut self, event: &Result<Event<WatchedNode>, watcher::Error>) {
        let change = match event {
            Ok(Event::Init) => {
                self.listing.clear();
                None
            }
            Ok(Event::InitApply(node)) => {
                let seen = self.health(node);
                self.listing.extend(seen);
                None
            }
            Ok(Event::InitDone) => Some(HealthChange::Listed(std::mem::take(&mut self.listing))),
            Ok(Event::Apply(node)) => {
                self.health(node).map(|(health, shown)| HealthChange::Applied(Box::new(health), shown))
            }
            Ok(Event::Delete(node)) => Some(HealthChange::Deleted(node.node().name.as_str().to_owned())),
            Err(_) => Some(HealthChange::Interrupted),
        };
        if let Some(change) = change {
            // The prediction may have ended (the command is stopping): nothing more to tell it.
            let _ = self.changes.send(change);
        }
    }
}
