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
//! - **A session's end** (`DELETE`) is `200` or `404` (see [`crate::sessions`]).
//!
//! rmcp's own checks (`Host`, `Origin`, `Accept`, the protocol version, the body's size) run
//! first and answer as they do; only the cases above are restated, each after rmcp answered,
//! so a call rmcp serves pays a comparison of its status and nothing more. A server mounting
//! [`McpServer::http_service`](crate::McpServer::http_service) in a router of its own gets
//! rmcp's answers.

use std::fmt;

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
    // rmcp's answer is one line of text, whole in memory: collecting it cannot wait or fail.
    let body = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(never) => match never {},
    };
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
