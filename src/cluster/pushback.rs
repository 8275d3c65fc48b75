//! The server's pushback, read where it is visible: a 429 or 503 answer to a write with a
//! `Retry-After` header (an API Priority and Fairness rejection is a 429 with one) holds every
//! write of `run` until then ([`Throttle::push_back`]). kube's errors carry the status, not the
//! headers, so a layer under the client reads them.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use http::{Method, Request, Response, StatusCode, header::RETRY_AFTER};

use crate::runtime::Throttle;

/// Where pushback is reported: nowhere until `run` names its throttle.
#[derive(Clone, Debug, Default)]
pub struct Pushback(Arc<Mutex<Option<Throttle>>>);

impl Pushback {
    /// Reports the server's pushback to `throttle` from now on.
    pub fn report_to(&self, throttle: Throttle) {
        *self.0.lock().expect("pushback target") = Some(throttle);
    }

    fn observe<B>(&self, method: &Method, response: &Response<B>) {
        if *method == Method::GET
            || !matches!(response.status(), StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE)
        {
            return;
        }
        // The API server sends whole seconds; an HTTP date (allowed by RFC 9110) is not honoured.
        let Some(seconds) = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.trim().parse::<u64>().ok())
        else {
            return;
        };
        if let Some(throttle) = self.0.lock().expect("pushback target").as_ref() {
            throttle.push_back(Duration::from_secs(seconds));
        }
    }
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

impl<S, B, R> tower::Service<Request<B>> for PushbackService<S>
where
    S: tower::Service<Request<B>, Response = Response<R>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let method = request.method().clone();
        let answer = self.inner.call(request);
        let pushback = self.pushback.clone();
        Box::pin(async move {
            let response = answer.await?;
            pushback.observe(&method, &response);
            Ok(response)
        })
    }
}

#[cfg(test)]
// The tests measure tokio's paused time directly.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;
    use crate::engine::time::Timestamp;
    use crate::runtime::Clock;

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
}
