//! The events' writer: one task writes every event `run` sends, one at a time, in the order they
//! were sent, as upstream's recorder does (client-go `tools/record`: `Eventf` queues the event on the
//! broadcaster's channel and returns; one goroutine per sink, `StartRecordingToSink`, takes them off
//! and writes each through the correlator, `recordToSink`).
//!
//! So a deletion never waits for its event, and a burst's condition PATCHes and DELETEs do not
//! compete with one event write per pod in flight: at most one event is being written at any time.
//! Unlike upstream's queue (1,000 events, dropped when full), this one is unbounded: no event is
//! dropped; each still goes through the evictor (its series aggregation, the limiter, the retry of
//! a write the server pushed back on). [`Notices::flush`] writes what is queued when `run` stops.

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::evictor::{Evictor, Notice};
use super::throttle::Throttle;
use crate::engine::model::PodRef;

/// What the writer is handed.
enum Queued {
    /// An event to write; counted in the limiter's backlog while it waits.
    Write(PodRef, Notice, Option<super::throttle::QueuedEvent>),
    /// Everything sent before has been written: write what the evictor holds back and stop.
    Flush,
}

/// Sends events to the writer; clones share its queue.
#[derive(Clone)]
pub struct Notifier {
    queue: mpsc::UnboundedSender<Queued>,
    throttle: Option<Throttle>,
}

impl Notifier {
    /// Queues an event about `pod`; it is written after every event sent before it.
    pub fn send(&self, pod: &PodRef, notice: Notice) {
        let queued = self.throttle.as_ref().map(Throttle::event_queued);
        let _ = self.queue.send(Queued::Write(pod.clone(), notice, queued));
    }
}

/// The writer task and its queue.
pub struct Notices {
    notifier: Notifier,
    writer: JoinHandle<()>,
}

impl Notices {
    /// Starts the writer: every event sent to its [`Notifier`] is written through `evictor`.
    pub fn start<E: Evictor>(evictor: E) -> Self {
        let (queue, mut queued) = mpsc::unbounded_channel();
        let throttle = evictor.throttle().cloned();
        let writer = tokio::spawn(async move {
            while let Some(next) = queued.recv().await {
                match next {
                    Queued::Write(pod, notice, counted) => {
                        evictor.notify(&pod, notice).await;
                        drop(counted);
                    }
                    Queued::Flush => break,
                }
            }
            evictor.flush().await;
        });
        Self { notifier: Notifier { queue, throttle }, writer }
    }

    /// Where to send events.
    #[must_use]
    pub fn notifier(&self) -> Notifier {
        self.notifier.clone()
    }

    /// Queues an event about `pod` (see [`Notifier::send`]).
    pub fn send(&self, pod: &PodRef, notice: Notice) {
        self.notifier.send(pod, notice);
    }

    /// Writes every event sent so far, then what the evictor holds back (the counts of series);
    /// resolves when all is written. Events sent after this are not written. Once only.
    pub async fn flush(&mut self) {
        let _ = self.notifier.queue.send(Queued::Flush);
        let _ = (&mut self.writer).await;
    }
}
