//! One watch's events forwarded as the runtime's changes: a (re-)list as one complete list, then
//! each change.

use futures::StreamExt;
use kube::runtime::watcher::{self, Event};
use tokio::sync::mpsc;

use super::outage::Health;

/// What one object is to the engine.
pub(super) enum View<T, C> {
    /// Its view.
    Seen(T),
    /// Not seen (outside the node scope, or unreadable): the change its update makes instead (a node
    /// relabelled out of `-l` has left the scope), or none. In a (re-)list, that change is said
    /// before the list.
    Unseen(Option<C>),
}

/// How one watch's objects become the runtime's changes.
pub(super) struct Adapter<ViewOf, Deleted, T, C> {
    /// What an object is to the engine.
    pub(super) view: ViewOf,
    /// A deleted object's change, or `None` to ignore it.
    pub(super) deleted: Deleted,
    pub(super) listed: fn(Vec<T>) -> C,
    pub(super) applied: fn(T) -> C,
    /// Said once when the watch breaks, before it lists again (`None`: nothing is said).
    pub(super) interrupted: Option<fn() -> C>,
}

/// Forwards one watch's events as changes: a (re-)list as one complete list, then each change.
pub(super) async fn forward<K, T, C>(
    events: impl futures::Stream<Item = Result<Event<K>, watcher::Error>>,
    adapter: Adapter<impl Fn(K) -> View<T, C>, impl Fn(K) -> Option<C>, T, C>,
    mut health: Health,
    changes: mpsc::Sender<C>,
    mut observe: impl FnMut(&C),
) {
    let mut events = std::pin::pin!(events);
    let mut listing = Vec::new();
    // The changes the objects of a list under way make instead of being seen.
    let mut instead = Vec::new();
    let mut interrupted = false;
    while let Some(event) = events.next().await {
        let change = match event {
            Err(error) => {
                if health.failed(&error) {
                    return;
                }
                if !std::mem::replace(&mut interrupted, true)
                    && let Some(said) = adapter.interrupted
                    && changes.send(said()).await.is_err()
                {
                    return;
                }
                continue;
            }
            Ok(Event::Init) => {
                // Said before the list is requested: nothing is known of the connection yet.
                listing.clear();
                instead.clear();
                continue;
            }
            Ok(Event::InitApply(object)) => {
                match (adapter.view)(object) {
                    View::Seen(seen) => listing.push(seen),
                    View::Unseen(Some(change)) => instead.push(change),
                    View::Unseen(None) => {}
                }
                None
            }
            Ok(Event::InitDone) => {
                interrupted = false;
                for change in instead.drain(..) {
                    observe(&change);
                    if changes.send(change).await.is_err() {
                        return;
                    }
                }
                Some((adapter.listed)(std::mem::take(&mut listing)))
            }
            Ok(Event::Apply(object)) => match (adapter.view)(object) {
                View::Seen(seen) => Some((adapter.applied)(seen)),
                View::Unseen(instead) => instead,
            },
            Ok(Event::Delete(object)) => (adapter.deleted)(object),
        };
        health.ok();
        let Some(change) = change else { continue };
        observe(&change);
        if changes.send(change).await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::engine::time::Timestamp;
    use crate::metrics::Metrics;
    use crate::time::Clock;

    /// A node shown, then listed again out of the scope: it leaves before the list, which lacks it.
    #[tokio::test]
    async fn an_object_listed_again_out_of_view_says_its_change_before_the_list() {
        let (report, _reports) = mpsc::unbounded_channel();
        let (fatal, _fatal) = mpsc::unbounded_channel();
        let clock = Clock::starting_at(Timestamp::from_unix_seconds(1_795_341_600));
        let health = Health::new("nodes", report, clock, Arc::new(Metrics::new()), fatal);
        let shown = std::sync::Mutex::new(std::collections::HashSet::new());
        let adapter = Adapter {
            view: |(name, admitted): (&'static str, bool)| {
                let mut shown = shown.lock().expect("shown");
                if admitted {
                    shown.insert(name);
                    View::Seen(name.to_owned())
                } else {
                    View::Unseen(shown.remove(name).then(|| format!("left {name}")))
                }
            },
            deleted: |(name, _): (&'static str, bool)| Some(format!("deleted {name}")),
            listed: |names: Vec<String>| format!("listed {}", names.join(",")),
            applied: |name: String| format!("applied {name}"),
            interrupted: None,
        };
        let events = futures::stream::iter([
            Ok(Event::Init),
            Ok(Event::InitApply(("n1", true))),
            Ok(Event::InitApply(("n2", true))),
            Ok(Event::InitDone),
            Ok(Event::Init),
            Ok(Event::InitApply(("n1", false))),
            Ok(Event::InitApply(("n2", true))),
            Ok(Event::InitApply(("n3", false))),
            Ok(Event::InitDone),
        ]);
        let (tx, mut rx) = mpsc::channel(16);
        let mut observed = Vec::new();
        forward(events, adapter, health, tx, |change: &String| observed.push(change.clone())).await;
        let mut changes = Vec::new();
        while let Ok(change) = rx.try_recv() {
            changes.push(change);
        }
        assert_eq!(changes, ["listed n1,n2", "left n1", "listed n2"]);
        assert_eq!(observed, changes, "each change is observed as it is sent");
    }
}
