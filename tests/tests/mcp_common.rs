//! What the MCP parts of the suite share: a runtime, an agent-io server wired to an rmcp
//! client over an in-memory pipe, and one raw HTTP exchange.

use agentio_mcp::{Connect, McpClient, McpServer};
use rmcp::service::RunningService;
use rmcp::{ClientHandler, RoleClient, ServerHandler};

/// A runtime with two workers, as a server on a small machine has.
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// One raw HTTP/1.1 exchange with the server at `address`: `request` sent (it says
/// `Connection: close`), and the answer read to its end; the status line's code and the whole
/// head and body. The answer is read while the request is sent: a server may answer before
/// it has read all of it (a body past its bound) and close, and what it said is still read.
pub(crate) async fn raw_http(
    address: impl tokio::net::ToSocketAddrs,
    request: &str,
) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let (mut read, mut write) = stream.split();
    let mut answer = Vec::new();
    // A send or a read cut short by the server's close leaves what was read: the status
    // below fails on an answer that never came.
    let (_, _) = tokio::join!(
        write.write_all(request.as_bytes()),
        read.read_to_end(&mut answer)
    );
    let text = String::from_utf8_lossy(&answer).into_owned();
    (text[9..12].parse().unwrap(), text)
}

/// A raw `initialize` of the 2025-11-25 revision (a session's first request).
pub(crate) const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// The notification that ends a session's handshake, raw.
pub(crate) const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// One raw HTTP/1.1 request of the 2025-11-25 revision to `addr` (in session `session`), with
/// this `Content-Type`, closing its connection after the answer.
pub(crate) fn session_request(
    addr: std::net::SocketAddr,
    method: &str,
    session: Option<&str>,
    content_type: &str,
    body: &str,
) -> String {
    let session = session.map_or_else(String::new, |s| format!("Mcp-Session-Id: {s}\r\n"));
    format!(
        "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\n{session}Content-Type: {content_type}\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// The session id an `initialize`'s answer gives.
pub(crate) fn session_of(answer: &str) -> String {
    header(answer, "mcp-session-id")
        .unwrap_or_else(|| panic!("no session id: {answer}"))
        .to_owned()
}

/// The value of the header `name` (any case) in an HTTP `head`, trimmed; the first, if several.
pub(crate) fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|line| {
        let (field, value) = line.split_once(':')?;
        field.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

/// `server` (any rmcp handler) served on one end of an in-memory pipe; the other end.
pub(crate) fn spawn<S: ServerHandler>(server: S) -> tokio::io::DuplexStream {
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = rmcp::ServiceExt::serve(server, server_side).await {
            let _ = running.waiting().await;
        }
    });
    client_side
}

/// `server` to `client` with the `initialize` handshake (2025-11-25: the client's
/// capabilities declared once for the session; questions are server-to-client requests).
pub(crate) async fn connect_initialize<C: ClientHandler>(
    client: C,
    server: McpServer,
) -> RunningService<RoleClient, C> {
    rmcp::ServiceExt::serve(client, spawn(server))
        .await
        .unwrap()
}

/// `server` to `client` on protocol 2026-07-28 (no `initialize`: each request carries the
/// client's capabilities; questions come back as `input_required` results, which rmcp's
/// client answers through its handler and retries).
pub(crate) async fn connect_2026<C: ClientHandler>(
    client: C,
    server: McpServer,
) -> RunningService<RoleClient, C> {
    let client_side = spawn(server);
    let lifecycle = rmcp::ClientLifecycleMode::Discover {
        preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
    };
    rmcp::ClientServiceExt::serve_with_lifecycle(client, client_side, lifecycle)
        .await
        .unwrap()
}

/// `server` (any rmcp handler), served over an in-memory pipe to the client `connect` makes.
pub(crate) async fn serve<S: ServerHandler>(server: S, connect: Connect) -> McpClient {
    let client_side = spawn(server);
    let (read, write) = tokio::io::split(client_side);
    connect.io(read, write, 1 << 20).await.unwrap()
}

/// What a sealed `requestState` carries (rmcp's `rs1.<body>.<tag>`: the body is an expiry of
/// eight bytes, then the JSON; signed, not encrypted, so anyone can read it).
pub(crate) fn sealed_payload(state: &str) -> serde_json::Value {
    use base64::Engine;
    let body = state.split('.').nth(1).expect("rs1.<body>.<tag>");
    let body = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(body)
        .expect("base64url");
    serde_json::from_slice(&body[8..]).expect("JSON after the expiry")
}
