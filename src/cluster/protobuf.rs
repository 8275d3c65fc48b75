//! Reading pods, nodes and Leases as protobuf, as kube-controller-manager does: a layer under the
//! client asks for `application/vnd.kubernetes.protobuf` (JSON as the fallback a server may answer
//! with) on every read of them, LIST, GET and WATCH alike, and hands the client the JSON of the fields
//! the readers read ([`crate::decode::protobuf`]): the API server is spared encoding JSON (most of its
//! cost for a large LIST), and everything above reads JSON as before, through one builder.
//!
//! Writes, reads of anything else, and a read that asks for JSON itself (`Accept: application/json`:
//! it wants a field the rewrite leaves out, such as a pod's `managedFields`) are left as they are. A watch's frames are rewritten as
//! they arrive, one JSON line per event; an error's `Status` is rewritten too, so that its message is
//! the one the JSON path shows.
//!
//! Owns: [`ContentType`], [`Answers`] and the layer. Uses: the decoder's protobuf reader.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Poll};

use futures::{StreamExt, TryStreamExt};
use http::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE};
use http::{HeaderValue, Method, Request, Response};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Body, Bytes, Frame};

use crate::decode::protobuf::{ProtobufError, Transcoder, watch_event_to_json};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The protobuf media type.
const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
/// What a read that wants JSON itself asks for.
pub const JSON: &str = "application/json";
/// What a read asks for with `--content-type protobuf` (client-go's order for built-in types).
const ACCEPT_PROTOBUF: &str = "application/vnd.kubernetes.protobuf, application/json";

/// `--content-type`: what reads of pods, nodes and Leases ask the API server for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ContentType {
    /// Protobuf, with JSON as the fallback: the API server's cheapest encoding.
    #[default]
    Protobuf,
    /// JSON only.
    Json,
}

/// Which content types the reads of pods, nodes and Leases were answered in, so far.
#[derive(Clone, Debug, Default)]
pub struct Answers(Arc<AtomicU8>);

const ANSWERED_PROTOBUF: u8 = 1;
const ANSWERED_JSON: u8 = 2;

impl Answers {
    fn note(&self, bit: u8) {
        self.0.fetch_or(bit, Ordering::Relaxed);
    }

    /// `protobuf`, `json`, or `protobuf and json` (a server that answered some reads in each);
    /// `None` before any read.
    #[must_use]
    pub fn described(&self) -> Option<&'static str> {
        match self.0.load(Ordering::Relaxed) {
            ANSWERED_PROTOBUF => Some("protobuf"),
            ANSWERED_JSON => Some("json"),
            0 => None,
            _ => Some("protobuf and json"),
        }
    }
}

/// The layer: asks for `asked` and notes what came in `answers`.
#[derive(Clone, Debug)]
pub struct ProtobufLayer {
    /// What to ask for.
    pub asked: ContentType,
    /// Where the answers' content types are noted.
    pub answers: Answers,
}

impl<S> tower::Layer<S> for ProtobufLayer {
    type Service = ProtobufService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ProtobufService { inner, asked: self.asked, answers: self.answers.clone() }
    }
}

/// The service [`ProtobufLayer`] makes.
#[derive(Clone, Debug)]
pub struct ProtobufService<S> {
    inner: S,
    asked: ContentType,
    answers: Answers,
}

/// The body the layer answers with.
pub type TranscodedBody = UnsyncBoxBody<Bytes, BoxError>;

impl<S, B, R> tower::Service<Request<B>> for ProtobufService<S>
where
    S: tower::Service<Request<B>, Response = Response<R>>,
    S::Future: Send + 'static,
    R: Body<Data = Bytes> + Send + 'static,
    R::Error: Into<BoxError>,
{
    type Response = Response<TranscodedBody>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        let asks_json = request.headers().get(ACCEPT).is_some_and(|accept| accept == JSON);
        let kind = read_of(request.method(), request.uri().path()).filter(|_| !asks_json);
        if kind.is_some() && self.asked == ContentType::Protobuf {
            request.headers_mut().insert(ACCEPT, HeaderValue::from_static(ACCEPT_PROTOBUF));
        }
        let answers = self.answers.clone();
        let answer = self.inner.call(request);
        Box::pin(async move {
            let response = answer.await?;
            let Some(kind) = kind else { return Ok(response.map(passed)) };
            let media = response.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default();
            let Some(parameters) = media.strip_prefix(PROTOBUF) else {
                answers.note(ANSWERED_JSON);
                return Ok(response.map(passed));
            };
            answers.note(ANSWERED_PROTOBUF);
            let watch = parameters.split(';').any(|p| p.trim() == "stream=watch");
            let (mut parts, body) = response.into_parts();
            parts.headers.remove(CONTENT_LENGTH);
            parts.headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            let body = if watch { watch_lines(body, kind) } else { whole(body) };
            Ok(Response::from_parts(parts, body))
        })
    }
}

/// A body as it came.
fn passed<R>(body: R) -> TranscodedBody
where
    R: Body<Data = Bytes> + Send + 'static,
    R::Error: Into<BoxError>,
{
    body.map_err(Into::into).boxed_unsync()
}

/// An answer that is not a watch (an object, a list page, a `Status`), rewritten as it comes: a
/// list's items as each is complete ([`Transcoder`]).
fn whole<R>(body: R) -> TranscodedBody
where
    R: Body<Data = Bytes> + Send + 'static,
    R::Error: Into<BoxError>,
{
    let chunks = body.into_data_stream().map_err(Into::into);
    let json = futures::stream::unfold(Some((Box::pin(chunks), Transcoder::default())), |state| async move {
        let (mut chunks, mut transcoder) = state?;
        loop {
            let mut out = Vec::new();
            let written = match chunks.next().await {
                Some(Ok(chunk)) => transcoder.feed(&chunk, &mut out).map(|()| Some(transcoder)),
                Some(Err(error)) => return Some((Err(error), None)),
                None => transcoder.finish(&mut out).map(|()| None),
            };
            match written {
                Err(error) => return Some((Err(error.into()), None)),
                Ok(None) => return Some((Ok(Frame::data(Bytes::from(out))), None)),
                Ok(Some(more)) if out.is_empty() => transcoder = more,
                Ok(Some(more)) => return Some((Ok(Frame::data(Bytes::from(out))), Some((chunks, more)))),
            }
        }
    });
    StreamBody::new(json).boxed_unsync()
}

/// A watch's frames (a 4-byte big-endian length, then a `WatchEvent`), rewritten as JSON lines as
/// they arrive: every frame complete in a chunk read goes out at once.
fn watch_lines<R>(body: R, kind: &'static str) -> TranscodedBody
where
    R: Body<Data = Bytes> + Send + 'static,
    R::Error: Into<BoxError>,
{
    let chunks = body.into_data_stream().map_err(Into::into);
    let lines =
        futures::stream::unfold((Box::pin(chunks), Vec::<u8>::new()), move |(mut chunks, mut buffer)| async move {
            loop {
                match complete_frames(&mut buffer, kind) {
                    Err(error) => return Some((Err(error.into()), (chunks, Vec::new()))),
                    Ok(lines) if !lines.is_empty() => {
                        return Some((Ok(Frame::data(Bytes::from(lines))), (chunks, buffer)));
                    }
                    Ok(_) => {}
                }
                match chunks.next().await? {
                    Ok(chunk) => buffer.extend_from_slice(&chunk),
                    Err(error) => return Some((Err(error), (chunks, Vec::new()))),
                }
            }
        });
    StreamBody::new(lines).boxed_unsync()
}

/// The JSON lines of the complete frames at the start of `buffer`, which keeps the rest.
fn complete_frames(buffer: &mut Vec<u8>, kind: &str) -> Result<Vec<u8>, ProtobufError> {
    let mut lines = Vec::new();
    let mut at = 0;
    while let Some(header) = buffer.get(at..at + 4) {
        let length = u32::from_be_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let Some(frame) = buffer.get(at + 4..at + 4 + length) else { break };
        lines.extend(watch_event_to_json(frame, kind)?);
        at += 4 + length;
    }
    buffer.drain(..at);
    Ok(lines)
}

/// The kind a request reads, when it reads pods, nodes or Leases (a GET of a collection or of one
/// object, not of a subresource); `None` for anything else.
#[must_use]
pub fn read_of(method: &Method, path: &str) -> Option<&'static str> {
    if method != Method::GET {
        return None;
    }
    let segments: Vec<&str> = path.trim_end_matches('/').split('/').skip(1).collect();
    let (resource, rest) = match segments.as_slice() {
        ["api", "v1", "namespaces", _, resource, rest @ ..] | ["api", "v1", resource, rest @ ..] => (*resource, rest),
        ["apis", "coordination.k8s.io", "v1", "namespaces", _, "leases", rest @ ..]
        | ["apis", "coordination.k8s.io", "v1", "leases", rest @ ..] => ("leases", rest),
        _ => return None,
    };
    if rest.len() > 1 {
        return None;
    }
    match resource {
        "pods" => Some("Pod"),
        "nodes" => Some("Node"),
        "leases" => Some("Lease"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::protobuf::tests::{V, enveloped, msg};
    use http_body_util::Full;

    #[test]
    fn only_reads_of_pods_nodes_and_leases_ask_for_protobuf() {
        let get = Method::GET;
        assert_eq!(read_of(&get, "/api/v1/pods"), Some("Pod"));
        assert_eq!(read_of(&get, "/api/v1/namespaces/prod/pods/web-1"), Some("Pod"));
        assert_eq!(read_of(&get, "/api/v1/nodes/n1"), Some("Node"));
        assert_eq!(read_of(&get, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"), Some("Lease"));
        assert_eq!(read_of(&get, "/api/v1/namespaces/prod/pods/web-1/log"), None);
        assert_eq!(read_of(&get, "/api/v1/namespaces/prod/events"), None);
        assert_eq!(read_of(&get, "/apis/policy/v1/poddisruptionbudgets"), None);
        assert_eq!(read_of(&get, "/apis/resource.k8s.io/v1/resourceclaims"), None);
        assert_eq!(read_of(&Method::DELETE, "/api/v1/namespaces/prod/pods/web-1"), None);
        assert_eq!(read_of(&Method::PUT, "/apis/coordination.k8s.io/v1/namespaces/x/leases/y"), None);
    }

    #[test]
    fn frames_are_rewritten_once_complete_and_the_rest_waits() {
        let pod = msg(&[(1, V::M(msg(&[(1, V::S("p")), (3, V::S("d")), (6, V::S("9"))])))]);
        let event = msg(&[(1, V::S("ADDED")), (2, V::M(msg(&[(1, V::M(enveloped("v1", "Pod", pod)))])))]);
        let mut stream = Vec::new();
        for _ in 0..2 {
            stream.extend_from_slice(&u32::try_from(event.len()).expect("short").to_be_bytes());
            stream.extend_from_slice(&event);
        }
        // The first frame and half of the second.
        let cut = 4 + event.len() + 2 + event.len() / 2;
        let mut buffer = stream[..cut].to_vec();
        let lines = complete_frames(&mut buffer, "Pod").expect("reads");
        let expected = "{\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"d\",\"resourceVersion\":\"9\"}}}\n";
        assert_eq!(String::from_utf8(lines).expect("UTF-8"), expected);
        assert_eq!(buffer.len(), cut - 4 - event.len());
        buffer.extend_from_slice(&stream[cut..]);
        assert_eq!(String::from_utf8(complete_frames(&mut buffer, "Pod").expect("reads")).expect("UTF-8"), expected);
        assert!(buffer.is_empty());
    }

    #[tokio::test]
    async fn a_protobuf_answer_reaches_the_client_as_json_and_a_json_one_as_it_came() {
        use tower::{Layer, Service, ServiceExt};
        let status =
            msg(&[(2, V::S("Failure")), (3, V::S("nodes \"x\" not found")), (4, V::S("NotFound")), (6, V::I(404))]);
        let protobuf = enveloped("v1", "Status", status);
        let server = tower::service_fn(move |request: Request<()>| {
            let protobuf = protobuf.clone();
            async move {
                let accept = request.headers().get(ACCEPT).map(|v| v.to_str().unwrap_or_default().to_owned());
                let (media, body) = match accept.as_deref() {
                    Some(ACCEPT_PROTOBUF) => (PROTOBUF, protobuf),
                    _ => ("application/json", b"{\"kind\":\"Status\"}".to_vec()),
                };
                let response =
                    Response::builder().status(404).header(CONTENT_TYPE, media).body(Full::new(Bytes::from(body)));
                Ok::<_, std::convert::Infallible>(response.expect("a response"))
            }
        });
        for (asked, expected, answered) in [
            (
                ContentType::Protobuf,
                r#"{"apiVersion":"v1","kind":"Status","status":"Failure","message":"nodes \"x\" not found","reason":"NotFound","code":404}"#,
                "protobuf",
            ),
            (ContentType::Json, r#"{"kind":"Status"}"#, "json"),
        ] {
            let answers = Answers::default();
            let mut client = ProtobufLayer { asked, answers: answers.clone() }.layer(server.clone());
            let request = Request::get("/api/v1/nodes/x").body(()).expect("a request");
            let response = client.ready().await.expect("ready").call(request).await.expect("an answer");
            let body = response.into_body().collect().await.expect("a body").to_bytes();
            assert_eq!(String::from_utf8(body.to_vec()).expect("UTF-8"), expected);
            assert_eq!(answers.described(), Some(answered));
        }
    }
}
