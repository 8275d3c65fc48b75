//! The API server's clock, read off the `Date` header of every answer: a layer under the client
//! notes when each request left and when its answer arrived (this machine's monotonic time), and
//! hands the three instants to the [`Timekeeper`].

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::header::DATE;
use http::{Request, Response};

use super::clock::Timekeeper;
use super::skew::Reading;
use crate::engine::time::Timestamp;

/// The layer reading the server's clock off every answer.
#[derive(Clone, Debug)]
pub struct DateLayer(pub Timekeeper);

impl<S> tower::Layer<S> for DateLayer {
    type Service = DateService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        DateService { inner, keeper: self.0.clone() }
    }
}

/// The service [`DateLayer`] makes.
#[derive(Clone, Debug)]
pub struct DateService<S> {
    inner: S,
    keeper: Timekeeper,
}

impl<S, B, R> tower::Service<Request<B>> for DateService<S>
where
    S: tower::Service<Request<B>, Response = Response<R>>,
    S::Future: Send + 'static,
{
    type Response = Response<R>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let keeper = self.keeper.clone();
        let sent = keeper.clock().local_now();
        let answer = self.inner.call(request);
        Box::pin(async move {
            let response = answer.await?;
            let arrived = keeper.clock().local_now();
            if let Some(date) = response.headers().get(DATE).and_then(|value| http_date(value.as_bytes())) {
                keeper.observe(Reading::date(date, sent, arrived));
            }
            Ok(response)
        })
    }
}

/// An HTTP date (`Wed, 25 Nov 2026 22:04:25 GMT`, RFC 9110's IMF-fixdate, which RFC 2822 reads).
fn http_date(value: &[u8]) -> Option<Timestamp> {
    static PARSER: jiff::fmt::rfc2822::DateTimeParser = jiff::fmt::rfc2822::DateTimeParser::new();
    let at = PARSER.parse_timestamp(value).ok()?;
    Some(Timestamp::from_nanos(at.as_nanosecond()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::clock::Clock;
    use crate::time::skew::Source;

    #[test]
    fn an_http_date_is_read_to_the_second() {
        assert_eq!(http_date(b"Wed, 25 Nov 2026 22:04:25 GMT"), Some(Timestamp::from_unix_seconds(1_795_644_265)));
        assert_eq!(http_date(b"yesterday"), None);
    }

    #[tokio::test(start_paused = true)]
    async fn every_answer_s_date_corrects_the_clock() {
        use tower::{Layer, Service, ServiceExt};
        // This machine reads 22:05:55.5 while the server's answers say 22:04:25: 90.5 s ahead.
        let local = Timestamp::from_nanos(1_795_644_355_500_000_000);
        let keeper = Timekeeper::new(Clock::starting_at(local));
        let server = tower::service_fn(|_: Request<()>| async {
            // The answer takes 20 ms of the paused clock.
            tokio::time::advance(std::time::Duration::from_millis(20)).await;
            let response = Response::builder().header(DATE, "Wed, 25 Nov 2026 22:04:25 GMT").body(());
            Ok::<_, std::convert::Infallible>(response.expect("a response"))
        });
        let mut client = DateLayer(keeper.clone()).layer(server);
        let request = Request::get("/version").body(()).expect("a request");
        client.ready().await.expect("ready").call(request).await.expect("an answer");
        let estimate = keeper.estimate().expect("an estimate");
        assert_eq!(estimate.source, Source::DateHeader);
        // sent at .5 - 1 s after 22:04:25 at the latest, arrived 20 ms later.
        assert_eq!((estimate.lo, estimate.hi), (89_500_000_000, 90_520_000_000));
        assert_eq!(keeper.clock().ahead(), estimate.offset());
    }
}
