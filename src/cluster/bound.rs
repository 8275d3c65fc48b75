//! Holding every answer of the API server to `--max-response-size` as it streams in: a layer under
//! the client counts each body's bytes and fails it once past the bound, so that a server (or a proxy)
//! that never ends its answer costs no more memory than the bound, whatever `--request-timeout` says.
//!
//! An answer is bounded whole (a list page, an object, a `Status`). A watch never ends by design: each
//! of its events is bounded instead, to [`MaxSize::event`] (one object: 64 MiB by default), as it
//! arrives in either encoding: a JSON line, or a protobuf frame, refused from its length prefix before
//! its bytes come. See docs/errors.md.
//!
//! Owns: [`BoundLayer`] and [`TooLarge`]. Uses: the decoder's size bound.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::header::CONTENT_TYPE;
use http::{Request, Response};
use http_body_util::BodyExt;
use http_body_util::combinators::UnsyncBoxBody;
use hyper::body::{Body, Bytes, Frame, SizeHint};

use crate::decode::bounded::MaxSize;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// An answer, or one event of a watch, larger than `--max-response-size` allows: its body ends with
/// this error there.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{} is larger than {} (--max-response-size)", if *.event { "an event" } else { "the answer" }, self.bound())]
pub struct TooLarge {
    /// The server's URL, for messages.
    pub server: Arc<str>,
    /// The bound set.
    pub limit: MaxSize,
    /// Whether one event of a watch passed its bound (a 32nd of `limit`, 64 MiB at least), rather
    /// than a whole answer `limit`.
    pub event: bool,
}

impl TooLarge {
    /// The bound that was passed, in words (`64 MiB`).
    #[must_use]
    pub fn bound(&self) -> String {
        if self.event {
            MaxSize::new(self.limit.event()).unwrap_or(self.limit).to_string()
        } else {
            self.limit.to_string()
        }
    }
}

/// The layer: bounds the answers of the server at `server` to `limit`.
#[derive(Clone, Debug)]
pub struct BoundLayer {
    /// The server's URL, for messages.
    pub server: Arc<str>,
    /// `--max-response-size`.
    pub limit: MaxSize,
}

impl<S> tower::Layer<S> for BoundLayer {
    type Service = BoundService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        BoundService { inner, bound: self.clone() }
    }
}

/// The service [`BoundLayer`] makes.
#[derive(Clone, Debug)]
pub struct BoundService<S> {
    inner: S,
    bound: BoundLayer,
}

/// The body the layer answers with.
pub type BoundedBody = UnsyncBoxBody<Bytes, BoxError>;

impl<S, B, R> tower::Service<Request<B>> for BoundService<S>
where
    S: tower::Service<Request<B>, Response = Response<R>>,
    S::Future: Send + 'static,
    R: Body<Data = Bytes> + Send + 'static,
    R::Error: Into<BoxError>,
{
    type Response = Response<BoundedBody>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let watch = is_watch(request.uri().query().unwrap_or_default());
        let bound = self.bound.clone();
        let answer = self.inner.call(request);
        Box::pin(async move {
            let response = answer.await?;
            let media = response.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default();
            // A watch that fails at once answers with one `Status`, bounded as any answer.
            let count = match (watch && response.status().is_success(), media.contains("protobuf")) {
                (false, _) => Count::Whole { seen: 0 },
                (true, false) => Count::Lines { line: 0 },
                (true, true) => Count::Frames { header: [0; 4], have: 0, left: 0 },
            };
            Ok(response.map(|body| {
                Bounded { body: Some(body.map_err(Into::into).boxed_unsync()), count, bound }.boxed_unsync()
            }))
        })
    }
}

/// Whether a query asks for a watch (`watch=true`, or `watch=1` as some clients write it).
fn is_watch(query: &str) -> bool {
    query.split('&').any(|pair| matches!(pair, "watch=true" | "watch=1"))
}

/// What is counted of a body, and how far it has come.
#[derive(Clone, Copy, Debug)]
enum Count {
    /// The whole answer: the bytes so far.
    Whole { seen: u64 },
    /// A JSON watch, one event a line: the bytes of the line under way.
    Lines { line: u64 },
    /// A protobuf watch, one event a frame (a 4-byte big-endian length, then that many bytes): the
    /// length prefix under way (`have` of its 4 bytes), else the bytes of the frame still to come.
    Frames { header: [u8; 4], have: usize, left: u64 },
}

impl Count {
    /// Counts `bytes`; `Err(event)` once past the bound (`event`: an event's bound).
    fn add(&mut self, bytes: &[u8], limit: MaxSize) -> Result<(), bool> {
        match self {
            Self::Whole { seen } => {
                *seen += bytes.len() as u64;
                if *seen > limit.bytes() {
                    return Err(false);
                }
            }
            Self::Lines { line } => {
                let mut start = 0;
                for end in memchr::memchr_iter(b'\n', bytes) {
                    if *line + (end - start) as u64 > limit.event() {
                        return Err(true);
                    }
                    (*line, start) = (0, end + 1);
                }
                *line += (bytes.len() - start) as u64;
                if *line > limit.event() {
                    return Err(true);
                }
            }
            Self::Frames { header, have, left } => {
                let mut rest = bytes;
                while !rest.is_empty() {
                    if *have < 4 {
                        let take = (4 - *have).min(rest.len());
                        header[*have..*have + take].copy_from_slice(&rest[..take]);
                        *have += take;
                        rest = &rest[take..];
                        if *have == 4 {
                            *left = u64::from(u32::from_be_bytes(*header));
                            if *left > limit.event() {
                                return Err(true);
                            }
                        }
                    } else {
                        let take = usize::try_from(*left).unwrap_or(usize::MAX).min(rest.len());
                        *left -= take as u64;
                        rest = &rest[take..];
                    }
                    if *have == 4 && *left == 0 {
                        *have = 0;
                    }
                }
            }
        }
        Ok(())
    }
}

/// A body that ends with [`TooLarge`] once past its bound (and stops reading: the connection is
/// dropped with it).
struct Bounded {
    body: Option<BoundedBody>,
    count: Count,
    bound: BoundLayer,
}

impl Bounded {
    fn too_large(&mut self, event: bool) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        self.body = None;
        let error = TooLarge { server: self.bound.server.clone(), limit: self.bound.limit, event };
        Poll::Ready(Some(Err(error.into())))
    }
}

impl Body for Bounded {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        let Some(body) = this.body.as_mut() else { return Poll::Ready(None) };
        // An answer that says its length up front is refused before it is read.
        if let Count::Whole { seen: 0 } = this.count
            && body.size_hint().lower() > this.bound.limit.bytes()
        {
            return this.too_large(false);
        }
        let frame = match Pin::new(body).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => frame,
            other => return other,
        };
        if let Some(data) = frame.data_ref()
            && let Err(event) = this.count.add(data, this.bound.limit)
        {
            return this.too_large(event);
        }
        Poll::Ready(Some(Ok(frame)))
    }

    fn is_end_stream(&self) -> bool {
        self.body.as_ref().is_none_or(Body::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.body.as_ref().map(Body::size_hint).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower::{Layer, Service, ServiceExt};

    /// `chunks` through the layer as an answer to `uri` in `media`, bounded to `limit`: the bytes
    /// that came through before the end, and the error it ended with.
    async fn through(uri: &str, media: &str, chunks: Vec<Vec<u8>>, limit: MaxSize) -> (usize, Option<String>) {
        let media = media.to_owned();
        let server = tower::service_fn(move |_: Request<()>| {
            let chunks = chunks.clone();
            let media = media.clone();
            async move {
                let frames =
                    futures::stream::iter(chunks.into_iter().map(|c| Ok::<_, BoxError>(Frame::data(Bytes::from(c)))));
                let body = http_body_util::StreamBody::new(frames);
                Ok::<_, std::convert::Infallible>(
                    Response::builder().header(CONTENT_TYPE, media).body(body).expect("an answer"),
                )
            }
        });
        let mut client = BoundLayer { server: "https://k".into(), limit }.layer(server);
        let request = Request::get(uri).body(()).expect("a request");
        let mut body = client.ready().await.expect("ready").call(request).await.expect("an answer").into_body();
        let mut came = 0;
        while let Some(frame) = body.frame().await {
            match frame {
                Ok(frame) => came += frame.data_ref().map_or(0, Bytes::len),
                Err(error) => return (came, Some(error.to_string())),
            }
        }
        (came, None)
    }

    const KIB: MaxSize = match MaxSize::new(1024) {
        Some(size) => size,
        None => unreachable!(),
    };

    #[tokio::test]
    async fn an_answer_past_the_bound_ends_with_an_error_at_the_chunk_that_passes_it() {
        let chunks = vec![vec![b'x'; 600], vec![b'x'; 600], vec![b'x'; 600]];
        let (came, error) = through("/api/v1/nodes", "application/json", chunks.clone(), KIB).await;
        assert_eq!((came, error.as_deref()), (600, Some("the answer is larger than 1 KiB (--max-response-size)")));
        let (came, error) = through("/api/v1/nodes", "application/json", chunks[..1].to_vec(), KIB).await;
        assert_eq!((came, error), (600, None));
    }

    #[tokio::test]
    async fn a_json_watch_bounds_each_line_not_the_stream() {
        let limit = MaxSize::new(64).expect("not 0");
        assert_eq!(limit.event(), 64);
        let line = |n: usize| [vec![b'x'; n], vec![b'\n']].concat();
        // Many short events, across chunks: far past the bound in all.
        let short: Vec<Vec<u8>> = (0..100).map(|_| [line(30), line(33)[..20].to_vec()].concat()).collect();
        let (came, error) = through("/api/v1/pods?watch=true", "application/json", short, limit).await;
        assert_eq!((came, error), (5100, None));
        // One line of 65 bytes, whether it is cut across chunks, ends one or sits between two.
        let long = |cut: usize| {
            let all = [line(10), line(65), line(10)].concat();
            vec![all[..cut].to_vec(), all[cut..].to_vec()]
        };
        for cut in [1, 11, 40, 76, 80] {
            let (_, error) = through("/api/v1/pods?watch=1", "application/json", long(cut), limit).await;
            assert_eq!(
                error.as_deref(),
                Some("an event is larger than 64 bytes (--max-response-size)"),
                "cut at {cut}"
            );
        }
        let (_, error) = through("/api/v1/pods?watch=1", "application/json", vec![line(64), line(64)], limit).await;
        assert_eq!(error, None, "64 bytes and its line break are within the bound");
    }

    #[tokio::test]
    async fn a_protobuf_watch_refuses_a_frame_from_its_length_before_its_bytes() {
        let limit = MaxSize::new(64).expect("not 0");
        let frame = |n: u32| [n.to_be_bytes().to_vec(), vec![0; n as usize]].concat();
        let media = "application/vnd.kubernetes.protobuf;stream=watch";
        // Frames cut anywhere, the length prefix included.
        let stream: Vec<u8> = (0..50).flat_map(|_| frame(64)).collect();
        let chunks: Vec<Vec<u8>> = stream.chunks(3).map(<[u8]>::to_vec).collect();
        let (came, error) = through("/api/v1/nodes?watch=true", media, chunks, limit).await;
        assert_eq!((came, error), (50 * 68, None));
        let chunks = vec![frame(10), frame(65)[..6].to_vec()];
        let (came, error) = through("/api/v1/nodes?watch=true", media, chunks, limit).await;
        assert_eq!((came, error.as_deref()), (14, Some("an event is larger than 64 bytes (--max-response-size)")));
        // A frame of 4 GiB announced: refused from its length alone.
        let chunks = vec![u32::MAX.to_be_bytes().to_vec()];
        let (_, error) = through("/api/v1/nodes?watch=true", media, chunks, MaxSize::DEFAULT).await;
        assert_eq!(error.as_deref(), Some("an event is larger than 64 MiB (--max-response-size)"));
    }
}
