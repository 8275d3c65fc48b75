//! The server's pushback, read where it is visible: a 429 or 503 answer to a write with a
//! `Retry-After` header (an API Priority and Fairness rejection is a 429 with one) holds every
//! write of `run` until then ([`Throttle::push_back`]). kube's errors carry the status, not the
//! headers, so a layer under the client reads them.
//!
//! One 429 with `Retry-After` is not pushback: the Eviction API's refusal while a PodDisruptionBudget
//! is still being processed (`NewTooManyRequests(…, 10)` in upstream's `eviction.go`; its refusal
//! while the budget allows no disruption has no `Retry-After`). It refuses that pod only, so it must
//! not hold the writer: the body of a 429 to a POST of `pods/NAME/eviction` is read, and a `Status`
//! naming a `DisruptionBudget` cause is handed on without holding anything. API Priority and
//! Fairness writes its 429 as plain text, which names no budget.
//!
//! A read pushed back on is sent again once its `Retry-After` has passed, as client-go does
//! (`Connection::send`): the layer leaves the seconds in the [`ReadRetryAfter`] the request carries.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use http::{Method, Request, Response, StatusCode, header::RETRY_AFTER};
use http_body_util::{BodyExt, Either, Full};
use hyper::body::Bytes;

use crate::runtime::Throttle;

/// Where pushback is reported: nowhere until `run` names its throttle.
#[derive(Clone, Debug, Default)]
pub struct Pushback(Arc<Mutex<Option<Throttle>>>);

impl Pushback {
    /// Reports the server's pushback to `throttle` from now on.
    pub fn report_to(&self, throttle: Throttle) {
        *self.0.lock().expect("pushback target") = Some(throttle);
    }

    /// The `Retry-After` of a write the server pushed back on, in seconds.
    fn retry_after<B>(method: &Method, response: &Response<B>) -> Option<u64> {
        if *method == Method::GET {
            return None;
        }
        pushed_back(response)
    }

    fn hold(&self, seconds: u64) {
        if let Some(throttle) = self.0.lock().expect("pushback target").as_ref() {
            throttle.push_back(Duration::from_secs(seconds));
        }
    }

    #[cfg(test)]
    fn observe<B>(&self, method: &Method, response: &Response<B>) {
        if let Some(seconds) = Self::retry_after(method, response) {
            self.hold(seconds);
        }
    }
}

/// The `Retry-After` of a 429 or 503 answer, in seconds.
fn pushed_back<B>(response: &Response<B>) -> Option<u64> {
    if !matches!(response.status(), StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE) {
        return None;
    }
    // The API server sends whole seconds; an HTTP date (allowed by RFC 9110) is not honoured.
    response
        .headers()
        .get(RETRY_AFTER)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse().ok())
}

/// Where the answer to a read that carries it leaves its `Retry-After`, in seconds, when the
/// server pushed back on it (429 or 503).
#[derive(Clone, Debug, Default)]
pub struct ReadRetryAfter(Arc<Mutex<Option<u64>>>);

impl ReadRetryAfter {
    /// The seconds the server asked to wait, once.
    pub fn take(&self) -> Option<u64> {
        self.0.lock().expect("a read's Retry-After").take()
    }

    fn set(&self, seconds: u64) {
        *self.0.lock().expect("a read's Retry-After") = Some(seconds);
    }
}

/// Whether the answer to `path` may be a PodDisruptionBudget's refusal: a 429 to an eviction.
fn may_be_budget_refusal<B>(path: &str, response: &Response<B>) -> bool {
    response.status() == StatusCode::TOO_MANY_REQUESTS && path.ends_with("/eviction")
}

/// Whether a 429's body is the Eviction API's refusal by a PodDisruptionBudget.
fn is_budget_refusal(body: &[u8]) -> bool {
    serde_json::from_slice::<kube::core::Status>(body)
        .is_ok_and(|status| super::evict::budget_refusal(&status).is_some())
}

/// The layer reading pushback off every answer.
#[derive(Clone, Debug)]
pub struct PushbackLayer(pub Pushback);

impl<S> tower::Layer<S> for PushbackLayer {
    type Service = PushbackService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        PushbackService { inner, pushback: self.0.clone() }
    }
}

/// The service [`PushbackLayer`] makes.
#[derive(Clone, Debug)]
pub struct PushbackService<S> {
    inner: S,
    pushback: Pushback,
}

/// An answer as the server sent it, or, when its body had to be read, that body again.
pub type PushbackBody<R> = Either<R, Full<Bytes>>;

impl<S, B, R> tower::Service<Request<B>> for PushbackService<S>
where
    S: tower::Service<Request<B>, Response = Response<R>>,
    S::Future: Send + 'static,
    S::Error: From<R::Error>,
    R: hyper::body::Body<Data = Bytes> + Send + 'static,
{
    type Response = Response<PushbackBody<R>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let method = request.method().clone();
        let path = request.uri().path().to_owned();
        let read = request.extensions().get::<ReadRetryAfter>().cloned().filter(|_| method == Method::GET);
        let answer = self.inner.call(request);
        let pushback = self.pushback.clone();
        Box::pin(async move {
            let response = answer.await?;
            if let (Some(read), Some(seconds)) = (read, pushed_back(&response)) {
                read.set(seconds);
            }
            let Some(seconds) = Pushback::retry_after(&method, &response) else {
                return Ok(response.map(Either::Left));
            };
            if !may_be_budget_refusal(&path, &response) {
                pushback.hold(seconds);
                return Ok(response.map(Either::Left));
            }
            // A small `Status` (or API Priority and Fairness's line of text): read it, then hand
            // the same bytes on.
            let (parts, body) = response.into_parts();
            let body = body.collect().await?.to_bytes();
            if !is_budget_refusal(&body) {
                pushback.hold(seconds);
            }
            Ok(Response::from_parts(parts, Either::Right(Full::new(body))))
        })
    }
}

#[cfg(test)]
// The tests measure tokio's paused time directly.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;
    use crate::engine::time::Timestamp;
    use crate::time::Clock;

    fn answer(code: u16, retry_after: Option<&str>) -> Response<()> {
        let mut response = Response::builder().status(code);
        if let Some(seconds) = retry_after {
            response = response.header(RETRY_AFTER, seconds);
        }
        response.body(()).expect("a response")
    }

    #[tokio::test(start_paused = true)]
    async fn only_a_write_refused_with_429_or_503_and_retry_after_holds_the_writer() {
        let throttle = Throttle::unlimited(Clock::starting_at(Timestamp::from_unix_seconds(0)));
        let pushback = Pushback::default();
        pushback.report_to(throttle.clone());
        let start = tokio::time::Instant::now();
        for (method, code, retry_after) in [
            (Method::GET, 429, Some("9")),
            (Method::DELETE, 500, Some("9")),
            (Method::DELETE, 429, None),
            (Method::POST, 503, Some("soon")),
        ] {
            pushback.observe(&method, &answer(code, retry_after));
            assert_eq!(throttle.held_until(), None, "{method} {code} {retry_after:?}");
        }
        pushback.observe(&Method::POST, &answer(503, Some("4")));
        assert_eq!(throttle.held_until(), Some(start + Duration::from_secs(4)));
        pushback.observe(&Method::DELETE, &answer(429, Some(" 7 ")));
        assert_eq!(throttle.held_until(), Some(start + Duration::from_secs(7)));
    }

    type Answer = Result<Response<Full<Bytes>>, tower::BoxError>;

    /// The answers a scripted inner service gives, one per call.
    fn service(
        answers: Vec<(u16, &'static str, &'static str)>,
    ) -> impl tower::Service<
        Request<()>,
        Response = Response<Full<Bytes>>,
        Error = tower::BoxError,
        Future = std::future::Ready<Answer>,
    > {
        let answers = Arc::new(Mutex::new(answers.into_iter()));
        tower::service_fn(move |_: Request<()>| {
            let (code, content_type, body) = answers.lock().expect("answers").next().expect("an answer");
            let response = Response::builder()
                .status(code)
                .header(RETRY_AFTER, "10")
                .header(http::header::CONTENT_TYPE, content_type)
                .body(Full::new(Bytes::from(body)))
                .expect("a response");
            std::future::ready(Ok(response))
        })
    }

    #[tokio::test(start_paused = true)]
    async fn a_budget_refusing_an_eviction_holds_no_write_and_priority_and_fairness_holds_them_all() {
        use tower::{Layer, Service, ServiceExt};
        // `createTooManyRequestsError` in upstream's eviction.go: Retry-After 10, the budget a cause.
        let budget = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","code":429,
            "reason":"TooManyRequests","message":"Cannot evict pod as it would violate the pod's disruption budget.",
            "details":{"causes":[{"reason":"DisruptionBudget",
            "message":"The disruption budget web is still being processed by the server."}],"retryAfterSeconds":10}}"#;
        let apf = "Too many requests, please try again later.\n";
        let throttle = Throttle::unlimited(Clock::starting_at(Timestamp::from_unix_seconds(0)));
        let pushback = Pushback::default();
        pushback.report_to(throttle.clone());
        let answers = vec![(429, "application/json", budget), (429, "text/plain; charset=utf-8", apf)];
        let mut client = PushbackLayer(pushback).layer(service(answers));
        let eviction = || Request::post("/api/v1/namespaces/default/pods/a/eviction").body(()).expect("request");

        let refused = client.ready().await.expect("ready").call(eviction()).await.expect("an answer");
        assert_eq!(throttle.held_until(), None, "a budget's refusal is for that pod only");
        let body = refused.into_body().collect().await.expect("the body").to_bytes();
        assert_eq!(body, budget.as_bytes(), "the body read is handed on whole");

        let start = tokio::time::Instant::now();
        let pushed = client.ready().await.expect("ready").call(eviction()).await.expect("an answer");
        assert_eq!(throttle.held_until(), Some(start + Duration::from_secs(10)), "API Priority and Fairness");
        assert_eq!(pushed.into_body().collect().await.expect("the body").to_bytes(), apf.as_bytes());
    }
}
