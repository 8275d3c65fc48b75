//! A watch that lists again after every failure.
//!
//! kube-runtime's watcher resumes a broken watch from its last resource version and lists again
//! only on 410 Gone; what it missed then comes as events, with nothing to say when they have all come.
//! `run` must not act on a decision older than a gap until it knows the state again (docs/run.md,
//! "Continuous watches"), so after any error the watch starts over: a fresh list, whose end
//! (`InitDone`) says the state is known again. Errors are passed on, so the backoff around this
//! stream spaces the new lists.
//!
//! Owns: [`relisting`]. Uses: kube's watcher types.

use futures::stream::{BoxStream, Stream, StreamExt};
use kube::runtime::watcher::{self, Event};

/// The watch `start` makes, started again after each error it yields.
pub(crate) fn relisting<K: Send + 'static>(
    start: impl Fn() -> BoxStream<'static, Result<Event<K>, watcher::Error>> + Send + 'static,
) -> impl Stream<Item = Result<Event<K>, watcher::Error>> + Send {
    futures::stream::unfold(None, move |current: Option<BoxStream<'static, _>>| {
        let mut watch = current.unwrap_or_else(&start);
        async move {
            let event = watch.next().await?;
            // After an error, the next poll starts a new watch (with its list).
            let next = event.is_ok().then_some(watch);
            Some((event, next))
        }
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn an_error_starts_the_watch_again_with_its_list() {
        let started = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&started);
        let stream = relisting(move || {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            let events: Vec<Result<Event<u32>, watcher::Error>> = if n == 0 {
                vec![Ok(Event::Init), Ok(Event::InitDone), Ok(Event::Apply(1)), Err(watcher::Error::NoResourceVersion)]
            } else {
                vec![Ok(Event::Init), Ok(Event::InitApply(2)), Ok(Event::InitDone)]
            };
            futures::stream::iter(events).boxed()
        });
        let seen: Vec<String> = stream
            .map(|event| match event {
                Ok(Event::Init) => "init".to_owned(),
                Ok(Event::InitApply(n)) => format!("list {n}"),
                Ok(Event::InitDone) => "listed".to_owned(),
                Ok(Event::Apply(n)) => format!("apply {n}"),
                Ok(Event::Delete(n)) => format!("delete {n}"),
                Err(_) => "error".to_owned(),
            })
            .collect()
            .await;
        assert_eq!(seen, ["init", "listed", "apply 1", "error", "init", "list 2", "listed"]);
        assert_eq!(started.load(Ordering::SeqCst), 2, "started again once, after the error");
    }
}
