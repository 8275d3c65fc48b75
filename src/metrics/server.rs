//! The HTTP endpoint of `--metrics-bind-address`: `/metrics`, `/healthz`, `/readyz`.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use http::{Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use super::registry::Metrics;

/// The OpenMetrics text format's media type.
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Parses `--metrics-bind-address`: `HOST:PORT`, or `:PORT` for every interface (as Kubernetes'
/// components take it).
///
/// # Errors
/// A line saying what is wrong.
pub fn parse_bind_address(text: &str) -> Result<SocketAddr, String> {
    let full = if text.starts_with(':') { format!("0.0.0.0{text}") } else { text.to_owned() };
    full.parse().map_err(|_| format!("\"{text}\" is not an address to listen on (HOST:PORT or :PORT, e.g. :8080)"))
}

fn answer(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, header::HeaderValue::from_static(content_type));
    response
}

fn route(metrics: &Metrics, request: &Request<Incoming>) -> Response<Full<Bytes>> {
    const TEXT: &str = "text/plain; charset=utf-8";
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return answer(StatusCode::METHOD_NOT_ALLOWED, TEXT, "only GET\n");
    }
    match request.uri().path() {
        "/metrics" => answer(StatusCode::OK, OPENMETRICS, metrics.encode()),
        "/healthz" | "/livez" => answer(StatusCode::OK, TEXT, "ok\n"),
        "/readyz" if metrics.is_ready() => answer(StatusCode::OK, TEXT, "ok\n"),
        "/readyz" => answer(StatusCode::SERVICE_UNAVAILABLE, TEXT, "initial lists of nodes and pods not in yet\n"),
        _ => answer(StatusCode::NOT_FOUND, TEXT, "not found: try /metrics, /healthz or /readyz\n"),
    }
}

/// Listens on `address` now (so a taken port is reported before anything else starts) and serves
/// in the background for as long as the process runs. Returns the address bound (port 0 picks one).
///
/// # Errors
/// The address cannot be bound.
pub async fn serve(address: SocketAddr, metrics: Arc<Metrics>) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind(address).await?;
    let bound = listener.local_addr()?;
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let metrics = metrics.clone();
            tokio::spawn(async move {
                let service = service_fn(move |request| {
                    let response = route(&metrics, &request);
                    async move { Ok::<_, Infallible>(response) }
                });
                // A scraper that hangs up early is its own business.
                let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
            });
        }
    });
    Ok(bound)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_addresses_as_kubernetes_components_take_them() {
        assert_eq!(parse_bind_address(":8080"), Ok("0.0.0.0:8080".parse().unwrap()));
        assert_eq!(parse_bind_address("127.0.0.1:9100"), Ok("127.0.0.1:9100".parse().unwrap()));
        assert_eq!(parse_bind_address("[::1]:9100"), Ok("[::1]:9100".parse().unwrap()));
        let error = parse_bind_address("8080").unwrap_err();
        assert!(error.contains("HOST:PORT or :PORT"), "{error}");
    }
}
