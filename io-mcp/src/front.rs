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
//!   `Content-Type` that is not JSON is still rmcp's `415`, its text made a JSON-RPC error as
//!   below.) For JSON that is not a message the
//!   SDKs differ (Python says `-32602`, TypeScript `-32700`); `-32600` is JSON-RPC 2.0's own
//!   code for it ("the JSON sent is not a valid Request object"), so that is the one given.
//! - **A session refused for the bound** is `503` (see [`crate::sessions`]).
//! - **A request body that has not arrived** within
//!   [`McpServer::with_header_read_timeout`](crate::McpServer::with_header_read_timeout) of
//!   when the server starts reading it ([`TimedBody`]) is `408 Request Timeout`, and the
//!   connection closed; rmcp says `500` (it failed to read the body).
//! - **A session's end** (`DELETE`) is `200` or `404` (see [`crate::sessions`]).
//! - **A refusal in plain text** (rmcp's `403`, `404`, `400`, `405`, `406`, `415`, `500`, and
//!   this module's `408` and `503`) is a JSON-RPC error with the same status and headers, as
//!   the official SDKs' servers answer: `-32001` for a session not found, `-32000` for the
//!   others, the text as its message (see [`structured`]).
//! - **A JSON-RPC refusal quoting what the client sent** (rmcp's `400`s for a 2026-07-28
//!   request whose headers or `_meta` do not match, which quote the value whole) has each of
//!   its texts cut to [`ECHO_MAX`] bytes, as this server's own errors quote a client.
//!
//! A call answered as an event stream is written in one piece when the server is busy. rmcp's
//! answer to a call in a session (and to a stateless one that sends something before its
//! answer: a stateless call answered by its first message is one JSON body, see
//! [`McpServer::default_http_config`](crate::McpServer::default_http_config)) is a head and an
//! event stream, and hyper writes what it has as soon as it has it: the head (and a session's
//! priming event) before the tool has run, then the message, then, on the stateless revision,
//! the stream's end: two or three writes and as many packets a call. When other calls are in
//! flight, the answer waits until its stream has ended (see [`read_ahead`]; at most
//! [`READ_AHEAD_MAX`] of it), and goes out in one write: where the server's time is what
//! limits, a system call or two less a call (the load bench in the README: 1.2x to 1.3x rmcp's
//! calls a second at 16 and 256 session clients).
//!
//! A call alone on the server in a session gets its head when its call starts: the front waits
//! (reading the stream ahead, as above) until the handler gives the request's [`HeadCue`],
//! which it does as the registry call is about to run, and lets the front write the head
//! before it goes on (see [`HeadCue::call_starts`]). With the server otherwise idle, the write
//! costs it nothing another call needed, and it wakes the client while the tool runs; written
//! when the request is read, as rmcp writes it, the head comes so long before the message that
//! the client (on a virtual machine, its core) is asleep again when the message comes, and is
//! woken twice. The load bench in the README, eight fresh pairs at one session client: 1.09x
//! the calls a second of the same server writing the head at once. Later loses: holding the
//! head until the whole answer (0.93x of rmcp's calls against 0.95x for writing it at once,
//! in an earlier run) or until the tool has run (0.96x of the cue before it, eight pairs).
//! A request that gives no cue (not a call, an unknown tool, a task) is held until its answer
//! has ended, or until the runtime has nothing else to run (a handler waiting on something),
//! and goes out in one piece. A stateless call has no cue: its answer is mostly one JSON body,
//! which a call alone was measured to answer faster than an event stream with a cue (the
//! stream ran 0.98x the JSON body's calls a second, eight fresh pairs); and a call alone
//! without a cue (a stream on the stateless revision, or a server mounting
//! [`McpServer::http_service`](crate::McpServer::http_service) in a router of its own) gets
//! its head at once, as rmcp sends it.
//!
//! On a busy server a call's answer, once ready (held whole, or a stateless call's JSON), goes
//! out after the tasks ready to run (one Tokio `yield_now`). A call's last steps wake one
//! another (its tool, rmcp's session worker, the connection), and Tokio runs a task woken by
//! the running one next (its LIFO slot), ahead of the connections whose requests wait in the
//! run queue: so calls already under way finish in a burst while new ones wait, and at 256
//! clients the slowest hundredth of calls took 1.2x to 1.4x rmcp's (p99: 73 ms against 52 ms
//! on the stateless revision, where a JSON answer goes out with no further wake) while the
//! median took half as long. Behind the tasks ready to run, that p99 was 0.9x to 1.05x rmcp's
//! in three fresh pairs per revision, with calls a second as before. A call alone on the
//! server has nothing to wait behind, and goes at once.
//!
//! A call (`POST`) first takes a place in the server's gate ([`crate::gate`]), and holds it
//! until its answer is ready to go out: a call answered as an event stream while others are in
//! flight holds it while its stream is read ahead, one alone only until its head.
//!
//! Event streams are kept alive here, not by rmcp: a stream with nothing to send for rmcp's
//! `sse_keep_alive` (15 s) sends the comment `:` as rmcp's would, so a proxy does not close a
//! long call's stream or a session's `GET` stream as idle. rmcp times it with a Tokio timer a
//! stream, and registering it, the earliest timer on a server whose only other one is a
//! session's five minutes, woke the runtime's driver on every call (an `eventfd` write and an
//! `epoll_wait` to read it); here it is one of the watchdog's deadlines (`agentio_core`'s
//! `__Deadline`: a lock and a map insert). `serve_http` turns rmcp's off and passes its time
//! here.
//!
//! rmcp's own checks (`Host`, `Origin`, `Accept`, the protocol version, the body's size) run
//! first and answer as they do; only the cases above are restated, each after rmcp answered,
//! so a call rmcp serves pays a comparison of its status and nothing more. A server mounting
//! [`McpServer::http_service`](crate::McpServer::http_service) in a router of its own gets
//! rmcp's answers.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
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
/// lists (why each, in [`crate::sessions`]'s for the `503` and a session's end), a refusal in
/// plain text as a JSON-RPC error ([`structured`]).
pub(crate) async fn answer<S, B>(
    service: &rmcp::transport::StreamableHttpService<S, Sessions>,
    sessions: &Sessions,
    streams: &Streams,
    request: http::Request<B>,
) -> http::Response<HttpBody>
where
    S: rmcp::ServerHandler + Send + 'static,
    B: http_body::Body + Send + 'static,
    B::Error: fmt::Display,
{
    let response = restated(service, sessions, streams, request).await;
    if response.status().is_success() {
        return response;
    }
    structured(response).await
}

/// [`answer`] before a refusal in plain text is made a JSON-RPC error.
async fn restated<S, B>(
    service: &rmcp::transport::StreamableHttpService<S, Sessions>,
    sessions: &Sessions,
    streams: &Streams,
    mut request: http::Request<B>,
) -> http::Response<HttpBody>
where
    S: rmcp::ServerHandler + Send + 'static,
    B: http_body::Body + Send + 'static,
    B::Error: fmt::Display,
{
    if request.method() != http::Method::DELETE {
        // A call's place in the gate, until its answer is ready to go out.
        let _pass = match &streams.gate {
            Some(gate) if request.method() == http::Method::POST => Some(gate.enter().await),
            _ => None,
        };
        let opening = !request.headers().contains_key(HEADER_SESSION_ID);
        let entered = streams.in_flight.enter(&request);
        // A request alone on the server in a session: its head waits for its call to start.
        let cue = waits_for_its_call(&request, entered.as_ref()).then(|| {
            let cue = HeadCue::default();
            request.extensions_mut().insert(cue.clone());
            cue
        });
        let mut response = service.handle(request).await;
        if is_event_stream(&response) {
            return streams.send(response, entered, cue).await;
        }
        if response.status() == http::StatusCode::OK {
            // A stateless call's JSON answer.
            take_turn(entered.as_ref()).await;
            return response;
        }
        if response.status() == http::StatusCode::UNSUPPORTED_MEDIA_TYPE {
            return unread_body(response).await;
        }
        if response.status() == http::StatusCode::BAD_REQUEST {
            return clipped(response).await;
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

/// Whether `response` is an event stream (rmcp's answer to a call in a session, or a `GET`'s
/// stream; its errors are not streams).
fn is_event_stream(response: &http::Response<HttpBody>) -> bool {
    response.status() == http::StatusCode::OK && is_of_type(response, b"text/event-stream")
}

/// Whether `response`'s `Content-Type` starts with `media_type`.
fn is_of_type(response: &http::Response<HttpBody>, media_type: &[u8]) -> bool {
    response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(media_type))
}

/// The calls (`POST`s) a server is answering: from their request to the end of their answer.
#[derive(Debug, Default)]
struct InFlight(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl InFlight {
    /// `request` counted, when it is a call (a `POST`; a `GET` opens a stream that may stay
    /// open for the session's life, and a `DELETE` ends one).
    fn enter<B>(&self, request: &http::Request<B>) -> Option<Entered> {
        if request.method() != http::Method::POST {
            return None;
        }
        let before = self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Some(Entered {
            count: self.0.clone(),
            alone: before == 0,
        })
    }
}

/// A call counted in [`InFlight`] until this is dropped.
struct Entered {
    count: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// No other call was in flight when this one came.
    alone: bool,
}

impl Drop for Entered {
    fn drop(&mut self) {
        self.count
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// How [`McpServer::serve_http`](crate::McpServer::serve_http) sends event streams: the calls
/// in flight (whether a call waits for its stream to end), and the keep-alive.
#[derive(Debug, Default)]
pub(crate) struct Streams {
    in_flight: InFlight,
    /// A comment (`:`) sent on a stream silent this long: rmcp's `sse_keep_alive`, on the
    /// watchdog's deadlines (rmcp's own is a Tokio timer, a system call a call: see the
    /// module's documentation).
    keep_alive: Option<Duration>,
    /// The calls run at once (see [`crate::gate`]); `None`: no bound.
    gate: Option<std::sync::Arc<crate::gate::Gate>>,
}

impl Streams {
    /// No call in flight yet; streams kept alive every `keep_alive`; no gate.
    pub(crate) fn new(keep_alive: Option<Duration>) -> Self {
        Streams {
            in_flight: InFlight::default(),
            keep_alive,
            gate: None,
        }
    }

    /// These streams with `gate` in front of their calls.
    pub(crate) fn with_gate(mut self, gate: Option<std::sync::Arc<crate::gate::Gate>>) -> Self {
        self.gate = gate;
        self
    }

    /// An event stream as the module's documentation says: a call's, when other calls are in
    /// flight, read ahead until it ends (see [`read_ahead`]) and sent after the tasks ready to
    /// run (`entered` is the call, `None` for a `GET`); the answer of a call alone in a
    /// session, read ahead until its call starts (`cue`); kept alive.
    async fn send(
        &self,
        response: http::Response<HttpBody>,
        entered: Option<Entered>,
        cue: Option<HeadCue>,
    ) -> http::Response<HttpBody> {
        let (parts, mut body) = response.into_parts();
        let mut ready = std::collections::VecDeque::new();
        let busy = entered.as_ref().is_some_and(|entered| !entered.alone);
        let ended = match &cue {
            _ if busy => read_ahead(&mut body, &mut ready, None).await,
            Some(cue) => {
                let ended = read_ahead(&mut body, &mut ready, Some(cue)).await;
                cue.forget();
                ended
            }
            None => false,
        };
        take_turn(entered.as_ref()).await;
        let replay = Replay {
            ready,
            rest: (!ended).then_some(body),
            keep_alive: self.keep_alive.map(|every| KeepAlive { every, due: None }),
            _entered: entered,
        };
        http::Response::from_parts(parts, replay.boxed())
    }
}

/// Whether `request`'s answer waits for its call to start ([`HeadCue`]): a call (`entered`)
/// alone on the server, in a session.
fn waits_for_its_call<B>(request: &http::Request<B>, entered: Option<&Entered>) -> bool {
    request.headers().contains_key(HEADER_SESSION_ID)
        && entered.is_some_and(|entered| entered.alone)
}

/// The cue a call alone on the server in a session gives when it starts (the tool is about to
/// run): its answer's head, held until then, goes out (see the module's documentation). In the
/// request's extensions, where the handler finds it (rmcp hands a handler the request's
/// `http::request::Parts`).
#[derive(Clone, Debug, Default)]
pub(crate) struct HeadCue(std::sync::Arc<Cue>);

#[derive(Debug, Default)]
struct Cue {
    given: std::sync::atomic::AtomicBool,
    /// The front, waiting for it.
    waiting: futures::task::AtomicWaker,
}

impl HeadCue {
    /// Gives the cue: `true` when the front was waiting for it (and is woken), `false` when
    /// the head has gone out already (the stream ended, or the runtime had nothing else to
    /// run).
    pub(crate) fn give(&self) -> bool {
        self.0
            .given
            .store(true, std::sync::atomic::Ordering::Release);
        self.0.waiting.take().map(std::task::Waker::wake).is_some()
    }

    /// Whether the cue has been given; if not, `cx` is woken when it is.
    fn given(&self, cx: &Context<'_>) -> bool {
        self.0.waiting.register(cx.waker());
        self.0.given.load(std::sync::atomic::Ordering::Acquire)
    }

    /// No longer waited for: a cue given from now on wakes nothing.
    fn forget(&self) {
        drop(self.0.waiting.take());
    }

    /// The call starts: the cue given and, when the front was waiting for it, the front's turn
    /// taken first. The front, woken by the running task, waits in Tokio's LIFO slot; this
    /// task, woken by itself, goes to the back of the run queue; so the head is written before
    /// the tool runs (on one worker) and the call goes on after it.
    pub(crate) async fn call_starts(self) {
        if self.give() {
            let mut yielded = false;
            std::future::poll_fn(|cx| {
                if std::mem::replace(&mut yielded, true) {
                    return Poll::Ready(());
                }
                cx.waker().wake_by_ref();
                Poll::Pending
            })
            .await;
        }
    }
}

/// On a busy server (another call in flight when `entered` came), waits behind the tasks ready
/// to run, so that a ready answer does not go out ahead of the calls queued before it (see the
/// module's documentation); a call alone, or no call (a `GET`), goes at once.
async fn take_turn(entered: Option<&Entered>) {
    if entered.is_some_and(|entered| !entered.alone) {
        tokio::task::yield_now().await;
    }
}

/// The most of a held answer read ahead: past it, the answer goes out with what it has (rmcp
/// bounds a call's stream, so a tool sending faster than its client reads waits; reading
/// ahead without a bound would lift that).
const READ_AHEAD_MAX: usize = 64 * 1024;

/// Reads `body` into `ready` until it ends (`true`: the call answered), until
/// [`READ_AHEAD_MAX`] bytes are read, until `cue` is given (the call has started), or until
/// the runtime has nothing else to run (Tokio's `yield_now` wakes it then: a tool waiting on
/// I/O or a timer, or running on another worker thread, does not hold its call's head back;
/// nor does a stream that stays open, nor a request whose handler gives no cue).
async fn read_ahead(
    body: &mut HttpBody,
    ready: &mut std::collections::VecDeque<http_body::Frame<bytes::Bytes>>,
    cue: Option<&HeadCue>,
) -> bool {
    let mut idle = std::pin::pin!(tokio::task::yield_now());
    let mut read = 0;
    std::future::poll_fn(|cx| {
        if cue.is_some_and(|cue| cue.given(cx)) {
            return Poll::Ready(false);
        }
        let mut moved = false;
        loop {
            match http_body::Body::poll_frame(Pin::new(&mut *body), cx) {
                Poll::Ready(Some(Ok(frame))) => {
                    read += frame.data_ref().map_or(0, bytes::Bytes::len);
                    ready.push_back(frame);
                    if read >= READ_AHEAD_MAX {
                        return Poll::Ready(false);
                    }
                    moved = true;
                }
                Poll::Ready(Some(Err(never))) => match never {},
                Poll::Ready(None) => return Poll::Ready(true),
                Poll::Pending => break,
            }
        }
        // Woken by the stream, not by the runtime's idleness: wait for that afresh.
        if moved {
            idle.set(tokio::task::yield_now());
        }
        idle.as_mut().poll(cx).map(|()| false)
    })
    .await
}

/// An event stream's frames read ahead, then the rest of it, kept alive.
struct Replay {
    ready: std::collections::VecDeque<http_body::Frame<bytes::Bytes>>,
    rest: Option<HttpBody>,
    keep_alive: Option<KeepAlive>,
    _entered: Option<Entered>,
}

/// A stream's keep-alive: a comment when it has been silent `every`.
struct KeepAlive {
    every: Duration,
    /// When the next comment is due: set when the stream has nothing to send, cleared when it
    /// sends something.
    due: Option<Pin<Box<dyn hyper::rt::Sleep>>>,
}

/// The keep-alive comment (rmcp's).
const KEEP_ALIVE: &[u8] = b":\n\n";

impl http_body::Body for Replay {
    type Data = bytes::Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<bytes::Bytes>, Self::Error>>> {
        let this = &mut *self;
        if let Some(frame) = this.ready.pop_front() {
            return Poll::Ready(Some(Ok(frame)));
        }
        let Some(rest) = this.rest.as_mut() else {
            return Poll::Ready(None);
        };
        match http_body::Body::poll_frame(Pin::new(rest), cx) {
            Poll::Ready(None) => {
                this.rest = None;
                Poll::Ready(None)
            }
            Poll::Ready(frame) => {
                if let Some(keep_alive) = &mut this.keep_alive {
                    keep_alive.due = None;
                }
                Poll::Ready(frame)
            }
            Poll::Pending => {
                let Some(keep_alive) = &mut this.keep_alive else {
                    return Poll::Pending;
                };
                let every = keep_alive.every;
                let due = keep_alive
                    .due
                    .get_or_insert_with(|| hyper::rt::Timer::sleep(&WatchdogTimer, every));
                ready!(due.as_mut().poll(cx));
                keep_alive.due = None;
                let comment = bytes::Bytes::from_static(KEEP_ALIVE);
                Poll::Ready(Some(Ok(http_body::Frame::data(comment))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ready.is_empty() && self.rest.as_ref().is_none_or(|rest| rest.is_end_stream())
    }
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
    json(http::StatusCode::BAD_REQUEST, refusal(error))
}

/// `error` as a JSON-RPC error answering no `id` (none could be read).
fn refusal(error: ErrorData) -> Vec<u8> {
    // Serializing rmcp's error type cannot fail: its fields are strings, numbers and JSON.
    serde_json::to_vec(&JsonRpcError::new(None, error)).unwrap_or_default()
}

/// The most of a client's text an error echoes back: [`clipped`].
const ECHO_MAX: usize = 512;

/// rmcp's JSON-RPC refusals (`400`: a 2026-07-28 request whose headers or `_meta` do not
/// match or are not supported) quote the value they refuse, whole: a protocol version of 20 KB
/// came back as a 20 KB message. Restated with every text in the error cut to [`ECHO_MAX`]
/// bytes (ending in `…`), as this server's own errors quote what a client sent; an answer that
/// short already, or that is not JSON, is passed on as it is.
async fn clipped(response: http::Response<HttpBody>) -> http::Response<HttpBody> {
    let (mut parts, body) = response.into_parts();
    let body = whole(body).await;
    if body.len() <= ECHO_MAX {
        return http::Response::from_parts(parts, full(body));
    }
    let Ok(mut message) = serde_json::from_slice::<serde_json::Value>(&body) else {
        return http::Response::from_parts(parts, full(body));
    };
    // rmcp's error: a message and its data, a few levels deep; walked without recursion all
    // the same.
    let mut stack = vec![&mut message];
    while let Some(value) = stack.pop() {
        match value {
            serde_json::Value::String(text) => agentio_core::limits::clip(text, ECHO_MAX),
            serde_json::Value::Array(items) => stack.extend(items),
            serde_json::Value::Object(map) => stack.extend(map.values_mut()),
            _ => {}
        }
    }
    // Serializing a value read from JSON cannot fail.
    let body = serde_json::to_vec(&message).unwrap_or_default();
    parts.headers.remove(http::header::CONTENT_LENGTH);
    http::Response::from_parts(parts, full(body.into()))
}

/// The JSON-RPC error code of a refusal for a session this server does not hold (the
/// TypeScript SDK's server's).
const SESSION_NOT_FOUND: i32 = -32001;

/// The JSON-RPC error code of the other refusals of the transport (the TypeScript SDK's
/// server's: the start of JSON-RPC's range for a server's own errors).
const REFUSED: i32 = -32000;

/// A refusal in plain text (rmcp's `403` for a `Host` or `Origin` it does not allow, `404` for
/// a session it does not hold, `400` for a request without one, `405`, `406`, `415`, `500`;
/// this module's `408` and `503`) restated as the official SDKs' servers answer them: a
/// JSON-RPC error with no `id` (none was read), `-32001` for a session not found and `-32000`
/// for the others, as the TypeScript SDK's server says, the text as its message (cut to
/// [`ECHO_MAX`] bytes), and the status and the other headers (`Allow`, `Connection`) as they
/// were. A client reads the status; one that reads the body as JSON, as it reads every other
/// answer of this server, finds the reason where it looks for one. An answer already JSON is
/// kept as it is.
async fn structured(response: http::Response<HttpBody>) -> http::Response<HttpBody> {
    if is_of_type(&response, b"application/json") {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let body = whole(body).await;
    let mut message = String::from_utf8_lossy(&body).into_owned();
    agentio_core::limits::clip(&mut message, ECHO_MAX);
    let code = if parts.status == http::StatusCode::NOT_FOUND {
        SESSION_NOT_FOUND
    } else {
        REFUSED
    };
    let body = refusal(ErrorData::new(rmcp::model::ErrorCode(code), message, None));
    parts.headers.remove(http::header::CONTENT_LENGTH);
    parts.headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    http::Response::from_parts(parts, full(body.into()))
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
    fn rmcps_json_refusals_echo_a_clients_text_cut_to_a_bound_and_the_rest_as_said() {
        block_on(async {
            let long = "9".repeat(20_000);
            let said = serde_json::json!({
                "jsonrpc": "2.0", "id": 5,
                "error": {
                    "code": -32020,
                    "message": format!("MCP-Protocol-Version header (2026-07-28) does not match request _meta protocolVersion ({long})"),
                    "data": { "requested": long, "supported": ["2025-11-25", long], "n": 1 },
                },
            });
            let (status, body) =
                answered(clipped(json(http::StatusCode::BAD_REQUEST, said.to_string())).await)
                    .await;
            assert_eq!(status, http::StatusCode::BAD_REQUEST);
            let restated: serde_json::Value = serde_json::from_str(&body).unwrap();
            let message = restated["error"]["message"].as_str().unwrap();
            assert!(message.starts_with("MCP-Protocol-Version header (2026-07-28) does not match request _meta protocolVersion (999"), "{message}");
            assert!(
                message.ends_with('…') && message.len() == ECHO_MAX + '…'.len_utf8(),
                "{message}"
            );
            let requested = restated["error"]["data"]["requested"].as_str().unwrap();
            assert_eq!(requested, format!("{}…", &long[..ECHO_MAX]));
            // Everything else as rmcp said it.
            assert_eq!(restated["id"], 5);
            assert_eq!(restated["error"]["code"], -32020);
            // In an array too.
            assert_eq!(
                restated["error"]["data"]["supported"],
                serde_json::json!(["2025-11-25", requested])
            );
            assert_eq!(restated["error"]["data"]["n"], 1);
            // Short, or not JSON: byte for byte as said.
            let short = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"missing required Mcp-Method header"}}"#;
            let not_json = format!("Bad Request: {long}");
            for kept in [short.to_owned(), not_json] {
                let answer = clipped(json(http::StatusCode::BAD_REQUEST, kept.clone())).await;
                assert_eq!(
                    answered(answer).await,
                    (http::StatusCode::BAD_REQUEST, kept)
                );
            }
        });
    }

    #[test]
    fn a_refusal_in_plain_text_is_restated_as_a_json_rpc_error_and_json_is_kept() {
        block_on(async {
            let mut rmcp = text(
                http::StatusCode::METHOD_NOT_ALLOWED,
                bytes::Bytes::from_static(b"Method Not Allowed"),
            );
            rmcp.headers_mut()
                .insert(http::header::ALLOW, http::HeaderValue::from_static("POST"));
            rmcp.headers_mut()
                .insert(http::header::CONTENT_LENGTH, http::HeaderValue::from(18));
            let restated = structured(rmcp).await;
            assert_eq!(restated.headers()[http::header::ALLOW], "POST");
            assert_eq!(
                restated.headers()[http::header::CONTENT_TYPE],
                "application/json"
            );
            assert!(
                restated
                    .headers()
                    .get(http::header::CONTENT_LENGTH)
                    .is_none()
            );
            let (status, body) = answered(restated).await;
            assert_eq!(status, http::StatusCode::METHOD_NOT_ALLOWED);
            assert_eq!(
                body,
                r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Method Not Allowed"}}"#
            );
            // A session not found: -32001; a long text cut to the bound.
            let long = format!("Not Found: {}", "x".repeat(5_000));
            let (status, body) =
                answered(structured(text(http::StatusCode::NOT_FOUND, long.into())).await).await;
            assert_eq!(status, http::StatusCode::NOT_FOUND);
            let error: serde_json::Value = serde_json::from_str(&body).unwrap();
            assert_eq!(error["error"]["code"], SESSION_NOT_FOUND);
            let message = error["error"]["message"].as_str().unwrap();
            assert!(message.starts_with("Not Found: xxx"), "{message}");
            assert_eq!(message.len(), ECHO_MAX + '…'.len_utf8(), "{message}");
            // Already JSON: as it was, byte for byte.
            let said = r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32020,"message":"no"}}"#;
            let kept = structured(json(http::StatusCode::BAD_REQUEST, said)).await;
            assert_eq!(
                answered(kept).await,
                (http::StatusCode::BAD_REQUEST, said.to_owned())
            );
        });
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

    use http_body::Body as _;

    const PRIMING: &str = "data: \nid: 0/0\nretry: 3000\n\n";
    const MESSAGE: &str = "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\nid: 1/0\n\n";

    type Events = futures::channel::mpsc::UnboundedSender<
        Result<http_body::Frame<bytes::Bytes>, std::convert::Infallible>,
    >;

    /// An answer streaming the events sent to it, as rmcp answers a call in a session.
    fn event_stream() -> (Events, http::Response<HttpBody>) {
        let (events, stream) = futures::channel::mpsc::unbounded();
        let mut response = http::Response::new(http_body_util::StreamBody::new(stream).boxed());
        response.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("text/event-stream"),
        );
        (events, response)
    }

    /// A call's stream with its session's priming event sent.
    fn primed() -> (Events, http::Response<HttpBody>) {
        let (events, response) = event_stream();
        send(&events, PRIMING);
        (events, response)
    }

    fn send(events: &Events, event: &'static str) {
        let frame = http_body::Frame::data(bytes::Bytes::from_static(event.as_bytes()));
        events.unbounded_send(Ok(frame)).unwrap();
    }

    /// The frames `body` has ready now, and whether it ended.
    fn ready_now(body: &mut HttpBody) -> (Vec<String>, bool) {
        use futures::FutureExt as _;
        let mut frames = Vec::new();
        loop {
            match body.frame().now_or_never() {
                Some(Some(Ok(frame))) => {
                    let data = frame.into_data().unwrap();
                    frames.push(String::from_utf8(data.to_vec()).unwrap());
                }
                Some(None) => return (frames, true),
                Some(Some(Err(never))) => match never {},
                None => return (frames, false),
            }
        }
    }

    /// A call's event stream as the front door sends it, without keep-alive.
    async fn sent(
        response: http::Response<HttpBody>,
        entered: Entered,
    ) -> http::Response<HttpBody> {
        Streams::default().send(response, Some(entered), None).await
    }

    /// A call's event stream as a busy server (another call in flight) sends it.
    async fn busy(response: http::Response<HttpBody>) -> HttpBody {
        let in_flight = InFlight::default();
        let _other = in_flight.enter(&post()).unwrap();
        let entered = in_flight.enter(&post()).unwrap();
        sent(response, entered).await.into_body()
    }

    fn post() -> http::Request<()> {
        http::Request::post("/mcp").body(()).unwrap()
    }

    #[test]
    fn only_calls_are_counted_in_flight_until_their_answers_end() {
        let in_flight = InFlight::default();
        for method in [http::Method::GET, http::Method::DELETE] {
            let request = http::Request::builder().method(method).body(()).unwrap();
            assert!(in_flight.enter(&request).is_none());
        }
        let first = in_flight.enter(&post()).unwrap();
        assert!(first.alone);
        let second = in_flight.enter(&post()).unwrap();
        assert!(!second.alone);
        drop(first);
        assert!(!in_flight.enter(&post()).unwrap().alone);
        drop(second);
        // A streamed answer keeps its call in flight until its body is dropped.
        let (_events, response) = event_stream();
        let entered = in_flight.enter(&post()).unwrap();
        assert!(entered.alone);
        let answer = block_on(sent(response, entered));
        assert!(!in_flight.enter(&post()).unwrap().alone);
        drop(answer);
        assert!(in_flight.enter(&post()).unwrap().alone);
    }

    #[test]
    fn only_an_event_stream_is_held_or_kept_alive() {
        let (_events, stream) = event_stream();
        assert!(is_event_stream(&stream));
        let mut refused = event_stream().1;
        *refused.status_mut() = http::StatusCode::NOT_FOUND;
        assert!(!is_event_stream(&refused));
        assert!(!is_event_stream(&json(http::StatusCode::OK, "{}")));
        let mut untyped = event_stream().1;
        untyped.headers_mut().remove(http::header::CONTENT_TYPE);
        assert!(!is_event_stream(&untyped));
    }

    #[test]
    fn a_busy_servers_call_is_answered_in_one_piece_when_its_stream_ends() {
        block_on(async {
            let (events, response) = primed();
            // The call's answer, made by another task while the answer is held; then its end.
            tokio::spawn(async move { send(&events, MESSAGE) });
            let mut body = busy(response).await;
            assert_eq!(
                ready_now(&mut body),
                (vec![PRIMING.into(), MESSAGE.into()], true)
            );
            assert!(body.is_end_stream());
        });
    }

    #[test]
    fn a_busy_servers_call_is_held_while_its_stream_moves() {
        block_on(async {
            let (events, response) = primed();
            // The connection's task holds the answer; a notification comes, then, from another
            // task, the answer and the stream's end: the runtime is never idle in between.
            let answered = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let seen = answered.clone();
            let held = tokio::spawn(async move {
                let body = busy(response).await;
                (body, seen.load(std::sync::atomic::Ordering::Relaxed))
            });
            tokio::spawn(async move {
                send(&events, "data: {\"method\":\"notifications/progress\"}\n\n");
                tokio::spawn(async move {
                    send(&events, MESSAGE);
                    answered.store(true, std::sync::atomic::Ordering::Relaxed);
                });
            });
            let (mut body, after_the_answer) = held.await.unwrap();
            assert!(after_the_answer, "sent before its stream ended");
            let (frames, ended) = ready_now(&mut body);
            assert_eq!(frames.len(), 3, "{frames:?}");
            assert!(ended);
        });
    }

    #[test]
    fn a_busy_servers_stream_that_stays_open_goes_out_with_what_it_has() {
        block_on(async {
            let (events, response) = primed();
            let answering = events.clone();
            tokio::spawn(async move { send(&answering, MESSAGE) });
            let mut body = busy(response).await;
            assert_eq!(
                ready_now(&mut body),
                (vec![PRIMING.into(), MESSAGE.into()], false)
            );
            // The rest of the stream follows.
            send(&events, "data: {}\n\n");
            drop(events);
            assert_eq!(ready_now(&mut body), (vec!["data: {}\n\n".into()], true));
            assert!(body.is_end_stream());
        });
    }

    #[test]
    fn a_held_answer_reads_ahead_no_more_than_its_bound() {
        use futures::SinkExt as _;
        use std::sync::atomic::{AtomicUsize, Ordering};
        block_on(async {
            // A call's stream bounded as rmcp bounds it, and a tool sending notifications of
            // 1 KiB one after another, faster than its client reads them.
            let (mut events, stream) = futures::channel::mpsc::channel(4);
            let mut response = event_stream().1;
            *response.body_mut() = http_body_util::StreamBody::new(stream).boxed();
            let notification = bytes::Bytes::from(format!("data: {}\n\n", "x".repeat(1016)));
            let sent = std::sync::Arc::new(AtomicUsize::new(0));
            let counted = sent.clone();
            tokio::spawn(async move {
                for _ in 0..200 {
                    let frame = http_body::Frame::data(notification.clone());
                    events
                        .send(Ok::<_, std::convert::Infallible>(frame))
                        .await
                        .unwrap();
                    counted.fetch_add(1, Ordering::Relaxed);
                }
            });
            let mut body = busy(response).await;
            // Sent out once the bound is read: the tool is still waiting on its stream.
            // (All of the bound was read ahead: 64 frames, and at most the stream's 4 and the
            // one the tool was sending.)
            let when_sent = sent.load(Ordering::Relaxed);
            assert!(
                (64..100).contains(&when_sent),
                "{when_sent} sent before the answer went out"
            );
            // Nothing is lost: the rest follows.
            let mut frames = 0;
            while let Some(frame) = body.frame().await {
                assert_eq!(frame.unwrap().into_data().unwrap().len(), 1024);
                frames += 1;
            }
            assert_eq!(frames, 200);
        });
    }

    #[test]
    fn a_held_answer_goes_out_once_the_server_has_nothing_else_to_run() {
        // Held whole on a busy server, or alone in a session for a cue not given.
        for alone in [false, true] {
            held_until_idle(alone);
        }
    }

    fn held_until_idle(alone: bool) {
        block_on(async {
            let (events, response) = primed();
            // The tool waits on a timer: its answer is not ready once the runtime is idle.
            let answering = events.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(200)).await;
                send(&answering, MESSAGE);
            });
            let started = std::time::Instant::now();
            let cue = HeadCue::default();
            let mut body = if alone {
                cued(response, cue.clone()).await.into_body()
            } else {
                busy(response).await
            };
            assert!(started.elapsed() < Duration::from_millis(200));
            assert_eq!(ready_now(&mut body), (vec![PRIMING.into()], false));
            // Given late (the call starts after its head went out), the cue wakes no one.
            if alone {
                assert!(!cue.give());
            }
            let message = body.frame().await.unwrap().unwrap().into_data().unwrap();
            assert_eq!(message, MESSAGE.as_bytes());
        });
    }

    #[test]
    fn a_held_stream_ended_before_it_is_read_is_sent_whole() {
        block_on(async {
            let (events, response) = primed();
            drop(events);
            let mut body = busy(response).await;
            assert!(!body.is_end_stream());
            assert_eq!(ready_now(&mut body), (vec![PRIMING.into()], true));
            assert!(body.is_end_stream());
        });
    }

    /// Whether a task spawned before `answer` ran by the time `answer` was given.
    fn ran_before<F: std::future::Future>(answer: impl FnOnce() -> F) -> bool {
        block_on(async {
            let ran = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let running = ran.clone();
            tokio::spawn(async move { running.store(true, std::sync::atomic::Ordering::Relaxed) });
            answer().await;
            ran.load(std::sync::atomic::Ordering::Relaxed)
        })
    }

    #[test]
    fn a_busy_servers_answer_goes_out_after_the_tasks_ready_to_run() {
        let streams = Streams::default();
        // A stateless call's JSON answer, and an event stream that has ended before it is
        // read (nothing to wait for in either): with another call in flight, the task ready
        // to run runs first; alone, the answer goes at once.
        let other = streams.in_flight.enter(&post()).unwrap();
        assert!(ran_before(|| {
            let entered = streams.in_flight.enter(&post());
            async move { take_turn(entered.as_ref()).await }
        }));
        assert!(ran_before(|| {
            let (events, response) = primed();
            drop(events);
            let entered = streams.in_flight.enter(&post());
            streams.send(response, entered, None)
        }));
        drop(other);
        assert!(!ran_before(|| {
            let entered = streams.in_flight.enter(&post());
            async move { take_turn(entered.as_ref()).await }
        }));
        assert!(!ran_before(|| {
            let (events, response) = primed();
            drop(events);
            let entered = streams.in_flight.enter(&post());
            streams.send(response, entered, None)
        }));
        // Not a call (a `GET`'s stream): at once.
        assert!(!ran_before(|| take_turn(None)));
    }

    #[test]
    fn a_call_alone_without_a_cue_gets_its_head_at_once() {
        use futures::FutureExt as _;
        let in_flight = InFlight::default();
        let (events, response) = primed();
        let entered = in_flight.enter(&post()).unwrap();
        // Not a poll more than it takes: nothing is read ahead, and nothing lost.
        let answer = sent(response, entered).now_or_never().unwrap();
        let mut body = answer.into_body();
        assert_eq!(ready_now(&mut body), (vec![PRIMING.into()], false));
        send(&events, MESSAGE);
        assert_eq!(ready_now(&mut body), (vec![MESSAGE.into()], false));
    }

    /// A call alone on the server in a session, its stream primed, held for `cue`.
    async fn cued(response: http::Response<HttpBody>, cue: HeadCue) -> http::Response<HttpBody> {
        let entered = InFlight::default().enter(&post()).unwrap();
        assert!(entered.alone);
        Streams::default()
            .send(response, Some(entered), Some(cue))
            .await
    }

    #[test]
    fn a_call_alone_in_a_session_gets_its_head_when_its_call_starts() {
        // As `serve_http` runs on one worker: the front (the connection's task) and the call
        // (rmcp's handler task) on the same thread.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_time()
            .build()
            .unwrap();
        let front = runtime.spawn(async {
            let (events, response) = primed();
            let cue = HeadCue::default();
            let starting = cue.clone();
            let call = tokio::spawn(async move {
                // Not yet: the front waits for the call to start.
                assert!(!starting.0.given.load(std::sync::atomic::Ordering::Acquire));
                starting.call_starts().await;
                // The tool runs after the front's turn: its head has gone out without it.
                send(&events, MESSAGE);
                events
            });
            let mut body = cued(response, cue).await.into_body();
            assert_eq!(ready_now(&mut body), (vec![PRIMING.into()], false));
            let _events = call.await.unwrap();
            assert_eq!(ready_now(&mut body), (vec![MESSAGE.into()], false));
        });
        runtime.block_on(front).unwrap();
    }

    #[test]
    fn a_call_alone_answered_before_its_cue_is_sent_whole() {
        // Answered before its call would start (an error, or a request that is not a call):
        // sent whole, and a cue given after it wakes nothing (the call goes on at once). (A cue
        // never given, the handler waiting on something: `held_until_idle`.)
        block_on(async {
            let (events, response) = primed();
            send(&events, MESSAGE);
            drop(events);
            let cue = HeadCue::default();
            let mut body = cued(response, cue.clone()).await.into_body();
            assert_eq!(
                ready_now(&mut body),
                (vec![PRIMING.into(), MESSAGE.into()], true)
            );
            assert!(!cue.give());
        });
    }

    #[test]
    fn only_a_call_alone_in_a_session_waits_for_its_call_to_start() {
        let in_flight = InFlight::default();
        let in_session = || {
            http::Request::post("/mcp")
                .header(HEADER_SESSION_ID, "s-1")
                .body(())
                .unwrap()
        };
        let alone = in_flight.enter(&in_session()).unwrap();
        assert!(waits_for_its_call(&in_session(), Some(&alone)));
        // Stateless, or opening a session: no session id.
        assert!(!waits_for_its_call(&post(), Some(&alone)));
        // Another call in flight: held whole instead (`read_ahead`).
        let second = in_flight.enter(&in_session()).unwrap();
        assert!(!waits_for_its_call(&in_session(), Some(&second)));
        // Not a call (a `GET`'s stream).
        assert!(!waits_for_its_call(&in_session(), None));
    }

    #[test]
    fn a_cue_wakes_the_front_only_while_it_waits() {
        struct Count(std::sync::atomic::AtomicUsize);
        impl futures::task::ArcWake for Count {
            fn wake_by_ref(count: &std::sync::Arc<Self>) {
                count.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
        let woken =
            |count: &std::sync::Arc<Count>| count.0.load(std::sync::atomic::Ordering::Relaxed);
        // No front waiting (no `serve_http`, or its head gone out): nothing to wake.
        assert!(!HeadCue::default().give());
        let count = std::sync::Arc::new(Count(0.into()));
        let waker = futures::task::waker(count.clone());
        let cx = Context::from_waker(&waker);
        let cue = HeadCue::default();
        assert!(!cue.given(&cx));
        assert_eq!(woken(&count), 0);
        assert!(cue.give());
        assert_eq!(woken(&count), 1);
        assert!(cue.given(&cx));
        // Forgotten (the front stopped waiting): given again, it wakes no one.
        cue.forget();
        assert!(!cue.give());
        assert_eq!(woken(&count), 1);
    }

    #[test]
    fn a_silent_stream_is_kept_alive_at_its_time_from_its_last_event() {
        use futures::FutureExt as _;
        block_on(async {
            let every = Duration::from_millis(80);
            let streams = Streams::new(Some(every));
            let (events, response) = primed();
            // A `GET`'s stream: not held, nothing read ahead. Its silence is timed from the
            // poll that finds it silent, inside `ready_now`: the clock is read before it.
            let silent = std::time::Instant::now();
            let mut body = streams
                .send(response, None, None)
                .now_or_never()
                .unwrap()
                .into_body();
            assert_eq!(ready_now(&mut body), (vec![PRIMING.into()], false));
            let comment = body.frame().await.unwrap().unwrap().into_data().unwrap();
            assert_eq!(comment, KEEP_ALIVE);
            assert!(silent.elapsed() >= every, "{:?}", silent.elapsed());
            // An event puts the next comment off until the stream is silent that long again.
            assert!(body.frame().now_or_never().is_none());
            tokio::time::sleep(every / 2).await;
            send(&events, MESSAGE);
            let event = body.frame().now_or_never().unwrap().unwrap().unwrap();
            assert_eq!(event.into_data().unwrap(), MESSAGE.as_bytes());
            let spoke = std::time::Instant::now();
            let comment = body.frame().await.unwrap().unwrap().into_data().unwrap();
            assert_eq!(comment, KEEP_ALIVE);
            assert!(spoke.elapsed() >= every, "{:?}", spoke.elapsed());
            // It ends with its stream.
            drop(events);
            assert!(body.frame().await.is_none());
            assert!(body.is_end_stream());
        });
    }

    #[test]
    fn without_a_keep_alive_a_silent_stream_stays_silent() {
        use futures::FutureExt as _;
        block_on(async {
            let (_events, response) = event_stream();
            let streams = Streams::default();
            let mut body = streams
                .send(response, None, None)
                .now_or_never()
                .unwrap()
                .into_body();
            let waited = tokio::time::timeout(Duration::from_millis(100), body.frame()).await;
            assert!(waited.is_err());
        });
    }
}
