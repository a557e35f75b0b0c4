//! The front door of [`McpServer::serve_http`](crate::McpServer::serve_http): rmcp's
//! streamable HTTP service, with its answer restated where it differs from what the official
//! Python and TypeScript SDKs' servers (and the conformance suite's own) answer, so that their
//! clients, and any client written to the spec, read it:
//!
//! - **A body that is not a JSON-RPC message** is `400 Bad Request` with a JSON-RPC error
//!   (no `id`: none could be read): `-32700` (parse error) for a body that is not JSON, naming
//!   where it stopped (`Parse error: EOF while parsing a value at line 1 column 24` for the 24
//!   bytes `{"jsonrpc":"2.0","id":1,`), and `-32600` (invalid request) for JSON that is not a
//!   JSON-RPC message. rmcp answers both `415 Unsupported Media Type` with a line of text, a
//!   status that tells a client its `Content-Type` is wrong when it was right. (A
//!   `Content-Type` that is not JSON is still rmcp's `415`.) For JSON that is not a message the
//!   SDKs differ (Python says `-32602`, TypeScript `-32700`); `-32600` is JSON-RPC 2.0's own
//!   code for it ("the JSON sent is not a valid Request object"), so that is the one given.
//! - **A session refused for the bound** is `503` (see [`crate::sessions`]).
//! - **A request body that has not arrived** within
//!   [`McpServer::with_header_read_timeout`](crate::McpServer::with_header_read_timeout) of
//!   when the server starts reading it ([`TimedBody`]) is `408 Request Timeout`, and the
//!   connection closed; rmcp says `500` (it failed to read the body).
//! - **A session's end** (`DELETE`) is `200` or `404` (see [`crate::sessions`]).
//!
//! rmcp's own checks (`Host`, `Origin`, `Accept`, the protocol version, the body's size) run
//! first and answer as they do; only the cases above are restated, each after rmcp answered,
//! so a call rmcp serves pays a comparison of its status and nothing more. A server mounting
//! [`McpServer::http_service`](crate::McpServer::http_service) in a router of its own gets
//! rmcp's answers.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use http_body_util::BodyExt;
use rmcp::model::{ErrorData, JsonRpcError};
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use rmcp::transport::streamable_http_server::session::SessionManager;

use crate::sessions::Sessions;

/// The body of an HTTP answer (rmcp's).
pub(crate) type HttpBody =
    http_body_util::combinators::BoxBody<bytes::Bytes, std::convert::Infallible>;

/// How rmcp's answer to a body it could not read as a JSON-RPC message starts (then serde's
/// error).
const UNREAD_BODY: &[u8] = b"fail to deserialize request body ";

/// serde's words, in rmcp's answer, for JSON that is none of the JSON-RPC messages (the
/// `expecting` of rmcp's message type).
const NOT_A_MESSAGE: &str = "unrecognized JSON-RPC message";

/// How rmcp's answer to a body that failed to arrive starts (then [`BodyError`]'s words).
const FAILED_BODY: &[u8] = b"Failed to read request body: ";

/// [`BodyError::Late`]'s words, up to the time.
const LATE_BODY: &str = "the request body did not arrive within ";

/// A request body that must arrive within `within` of its first read that had to wait (a body
/// sent with its head never waits, and never sets a timer): a client feeding a body a byte at
/// a time cannot hold a connection longer than that. Late, it ends in [`BodyError::Late`].
pub(crate) struct TimedBody<B> {
    inner: B,
    within: Option<Duration>,
    deadline: Option<Pin<Box<dyn hyper::rt::Sleep>>>,
}

impl<B> TimedBody<B> {
    pub(crate) fn new(inner: B, within: Option<Duration>) -> Self {
        TimedBody {
            inner,
            within,
            deadline: None,
        }
    }
}

/// Why a [`TimedBody`] ended.
#[derive(Debug)]
pub(crate) enum BodyError<E> {
    /// The body's own error (the connection failed).
    Body(E),
    /// The body had not arrived in this time.
    Late(Duration),
}

impl<E: fmt::Display> fmt::Display for BodyError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BodyError::Body(e) => e.fmt(f),
            BodyError::Late(within) => write!(f, "{LATE_BODY}{} s", within.as_secs_f64()),
        }
    }
}

impl<B> http_body::Body for TimedBody<B>
where
    B: http_body::Body + Unpin,
{
    type Data = B::Data;
    type Error = BodyError<B::Error>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<B::Data>, Self::Error>>> {
        let this = &mut *self;
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|frame| frame.map_err(BodyError::Body)));
        }
        let Some(within) = this.within else {
            return Poll::Pending;
        };
        let deadline = this
            .deadline
            .get_or_insert_with(|| hyper::rt::Timer::sleep(&WatchdogTimer, within));
        match deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(BodyError::Late(within)))),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// hyper's timer for [`McpServer::serve_http`](crate::McpServer::serve_http)'s wait for a
/// request's head (and [`TimedBody`]'s): the deadlines of `agentio_core`'s watchdog thread,
/// not Tokio's timer. hyper sets a new timer for every
/// request on a connection; a Tokio timer, the earliest one whenever the server has no other,
/// would cost a system call a request (see `agentio_core::__Deadline`), and the watchdog's
/// costs a lock and a map insert. Where the watchdog's thread cannot be started, Tokio's.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WatchdogTimer;

/// A deadline of the watchdog's, as hyper's `Sleep`.
struct WatchdogSleep(agentio_core::__Deadline);

impl Future for WatchdogSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.0).poll(cx)
    }
}

impl hyper::rt::Sleep for WatchdogSleep {}

impl hyper::rt::Timer for WatchdogTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        match agentio_core::__Deadline::after(duration) {
            Some(deadline) => Box::pin(WatchdogSleep(deadline)),
            None => hyper_util::rt::TokioTimer::new().sleep(duration),
        }
    }

    fn sleep_until(&self, at: std::time::Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        match agentio_core::__Deadline::at(Some(at)) {
            Some(deadline) => Box::pin(WatchdogSleep(deadline)),
            None => hyper_util::rt::TokioTimer::new().sleep_until(at),
        }
    }
}

/// One request to rmcp's service, its answer restated in the cases the module's documentation
/// lists (why each, in [`crate::sessions`]'s for the `503` and a session's end).
pub(crate) async fn answer<S, B>(
    service: &rmcp::transport::StreamableHttpService<S, Sessions>,
    sessions: &Sessions,
    request: http::Request<B>,
) -> http::Response<HttpBody>
where
    S: rmcp::ServerHandler + Send + 'static,
    B: http_body::Body + Send + 'static,
    B::Error: fmt::Display,
{
    if request.method() != http::Method::DELETE {
        let opening = !request.headers().contains_key(HEADER_SESSION_ID);
        let mut response = service.handle(request).await;
        if response.status() == http::StatusCode::UNSUPPORTED_MEDIA_TYPE {
            return unread_body(response).await;
        }
        if response.status() == http::StatusCode::INTERNAL_SERVER_ERROR {
            response = late_body(response).await;
        }
        if opening
            && response.status() == http::StatusCode::INTERNAL_SERVER_ERROR
            && sessions.open().await >= sessions.max
        {
            *response.status_mut() = http::StatusCode::SERVICE_UNAVAILABLE;
        }
        return response;
    }
    // A session's end. Whether the session is here is asked before rmcp closes it (closing is
    // idempotent).
    let held = match request
        .headers()
        .get(HEADER_SESSION_ID)
        .and_then(|value| value.to_str().ok())
    {
        Some(id) => sessions.has_session(&id.into()).await.unwrap_or(false),
        None => false,
    };
    let mut response = service.handle(request).await;
    // (Without the header rmcp answers `400`: a `202` always named a session.)
    if response.status() == http::StatusCode::ACCEPTED {
        if held {
            *response.status_mut() = http::StatusCode::OK;
        } else {
            // rmcp's words for a session it does not hold, on its other methods.
            response = text(
                http::StatusCode::NOT_FOUND,
                bytes::Bytes::from_static(b"Not Found: Session not found"),
            );
        }
    }
    response
}

/// rmcp's `415`: restated as `400` with a JSON-RPC error when it is rmcp's answer to a body it
/// could not read (see the module's documentation), kept as it is otherwise (a `Content-Type`
/// that is not JSON).
async fn unread_body(response: http::Response<HttpBody>) -> http::Response<HttpBody> {
    let (parts, body) = response.into_parts();
    let body = whole(body).await;
    let Some(detail) = body.strip_prefix(UNREAD_BODY) else {
        return http::Response::from_parts(parts, full(body));
    };
    let detail = String::from_utf8_lossy(detail);
    let error = if detail.starts_with(NOT_A_MESSAGE) {
        ErrorData::invalid_request(
            format!("Invalid Request: the body is JSON but not a JSON-RPC 2.0 message ({detail})"),
            None,
        )
    } else {
        ErrorData::parse_error(format!("Parse error: {detail}"), None)
    };
    // Serializing rmcp's error type cannot fail: its fields are strings, numbers and JSON.
    let body = serde_json::to_vec(&JsonRpcError::new(None, error)).unwrap_or_default();
    json(http::StatusCode::BAD_REQUEST, body)
}

/// rmcp's `500`: restated as `408 Request Timeout` (the connection closed) when it is rmcp's
/// answer to a [`TimedBody`] that did not arrive in time, kept as it is otherwise.
async fn late_body(response: http::Response<HttpBody>) -> http::Response<HttpBody> {
    let (parts, body) = response.into_parts();
    let body = whole(body).await;
    let late = body
        .strip_prefix(FAILED_BODY)
        .is_some_and(|detail| detail.starts_with(LATE_BODY.as_bytes()));
    if !late {
        return http::Response::from_parts(parts, full(body));
    }
    let mut answer = text(
        http::StatusCode::REQUEST_TIMEOUT,
        body.slice(FAILED_BODY.len()..),
    );
    answer.headers_mut().insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("close"),
    );
    answer
}

/// The bytes of one of rmcp's error answers: a line of text, whole in memory, so collecting
/// it cannot wait or fail.
async fn whole(body: HttpBody) -> bytes::Bytes {
    match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(never) => match never {},
    }
}

/// An answer of `status` with `body`.
fn text(status: http::StatusCode, body: bytes::Bytes) -> http::Response<HttpBody> {
    let mut response = http::Response::new(full(body));
    *response.status_mut() = status;
    response
}

/// An answer of `status` with the JSON `body`.
pub(crate) fn json(
    status: http::StatusCode,
    body: impl Into<bytes::Bytes>,
) -> http::Response<HttpBody> {
    let mut response = text(status, body.into());
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

fn full(body: bytes::Bytes) -> HttpBody {
    http_body_util::Full::new(body)
        .map_err(|never| match never {})
        .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_on<F: std::future::Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
            .block_on(future)
    }

    async fn answered(response: http::Response<HttpBody>) -> (http::StatusCode, String) {
        let status = response.status();
        let body = whole(response.into_body()).await;
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    #[test]
    fn the_watchdog_timer_sleeps_for_its_time_and_until_its_instant() {
        use hyper::rt::Timer;
        use std::time::Instant;
        let started = Instant::now();
        block_on(WatchdogTimer.sleep(Duration::from_millis(40)));
        assert!(started.elapsed() >= Duration::from_millis(40));
        let at = Instant::now() + Duration::from_millis(40);
        block_on(WatchdogTimer.sleep_until(at));
        assert!(Instant::now() >= at);
        // Reset to an earlier instant: ready then, not at the first one.
        let mut sleep = WatchdogTimer.sleep(Duration::from_secs(60));
        let at = Instant::now() + Duration::from_millis(20);
        WatchdogTimer.reset(&mut sleep, at);
        block_on(sleep);
        assert!(Instant::now() >= at);
        assert!(started.elapsed() < Duration::from_secs(30));
    }

    #[test]
    fn only_rmcps_500_for_a_late_body_is_restated_as_408() {
        block_on(async {
            let late = BodyError::<std::convert::Infallible>::Late(Duration::from_millis(1500));
            let rmcp = text(
                http::StatusCode::INTERNAL_SERVER_ERROR,
                format!("Failed to read request body: {late}").into(),
            );
            let restated = late_body(rmcp).await;
            assert_eq!(
                restated.headers().get(http::header::CONNECTION).unwrap(),
                "close"
            );
            assert_eq!(
                answered(restated).await,
                (
                    http::StatusCode::REQUEST_TIMEOUT,
                    "the request body did not arrive within 1.5 s".to_owned()
                )
            );
            // Another failure to read the body, or another 500: as rmcp said it.
            for said in [
                "Failed to read request body: connection reset",
                "Internal Server Error: the request body did not arrive within 1 s",
            ] {
                let kept =
                    late_body(text(http::StatusCode::INTERNAL_SERVER_ERROR, said.into())).await;
                assert!(kept.headers().get(http::header::CONNECTION).is_none());
                assert_eq!(
                    answered(kept).await,
                    (http::StatusCode::INTERNAL_SERVER_ERROR, said.to_owned())
                );
            }
        });
    }

    #[test]
    fn a_timed_body_passes_its_frames_and_errors_through_and_ends_late_at_its_time() {
        use http_body_util::BodyExt as _;
        block_on(async {
            // Whole: its bytes, and no timer is needed.
            let whole = TimedBody::new(
                http_body_util::Full::new(bytes::Bytes::from_static(b"{}")),
                Some(Duration::from_millis(1)),
            );
            assert_eq!(whole.collect().await.unwrap().to_bytes(), "{}");
            // One that never ends: late at its time, not before.
            let (_sender, never) = futures::channel::mpsc::channel::<
                Result<http_body::Frame<bytes::Bytes>, std::io::Error>,
            >(1);
            let started = std::time::Instant::now();
            let within = Duration::from_millis(50);
            let err = TimedBody::new(http_body_util::StreamBody::new(never), Some(within))
                .collect()
                .await
                .unwrap_err();
            assert!(started.elapsed() >= within);
            assert!(matches!(err, BodyError::Late(d) if d == within), "{err}");
            // Its own error, as it is.
            let failing = http_body_util::StreamBody::new(futures::stream::iter([Err::<
                http_body::Frame<bytes::Bytes>,
                _,
            >(
                std::io::Error::other("reset"),
            )]));
            let err = TimedBody::new(failing, None).collect().await.unwrap_err();
            assert_eq!(err.to_string(), "reset");
            // Without a time, a body that never ends waits.
            let (_sender, never) = futures::channel::mpsc::channel::<
                Result<http_body::Frame<bytes::Bytes>, std::io::Error>,
            >(1);
            let waiting = TimedBody::new(http_body_util::StreamBody::new(never), None).collect();
            assert!(
                tokio::time::timeout(Duration::from_millis(100), waiting)
                    .await
                    .is_err()
            );
        });
    }
}
