//! The MCP server under concurrent load over streamable HTTP: ours ([`agentio_mcp::McpServer`],
//! validating both ways) and rmcp's `#[tool_router]` server (validating nothing), the same
//! `kb.search` tool (`search.rs`), the same rmcp HTTP service configuration
//! (`McpServer::default_http_config`, but for `json_response`: ours has it on, rmcp's server
//! has rmcp's default, off; the context row `rmcp-json` is rmcp's with it on), the same hyper
//! connection loop, each in its own process pinned to core 1 (`taskset -c 1`, a one-worker
//! Tokio runtime); the load generator is this process, pinned to core 0, on a current-thread
//! runtime: one HTTP/1.1 keep-alive connection per client (hyper's client), each client sending
//! its next call when the last is answered.
//!
//! For each server, both protocol revisions:
//! - **2025-11-25, sessions**: each client `initialize`s, sends `notifications/initialized`,
//!   then calls `tools/call` in its session (`Mcp-Session-Id`);
//! - **2026-07-28, stateless**: each call carries its protocol version and capabilities in
//!   `_meta` and the `MCP-Protocol-Version` header, no session;
//!
//! at 1, 16 and 256 concurrent clients: calls per second, p50 / p99 / max latency, errors (a
//! status other than 200, or an answer without the tool's `structuredContent`), the server's
//! RSS at rest and its peak under load. Ours and rmcp's are measured in alternating rounds, and
//! each round starts them afresh: every pass starts three processes (ours, rmcp's, and a second
//! rmcp process as a control), warms each up, unmeasured, then measures them one after the
//! other, each pass in the other order than the last (ours, rmcp, control; control, rmcp,
//! ours; ...); their rounds are pooled. So drift on the machine, any cost of going first, and
//! whatever one process happens to get (two processes of one server started once and measured
//! for a whole run differed by up to 6% at one client), reach both alike, and the control's
//! ratio to rmcp shows what the measurement cannot tell apart. The official SDKs' servers
//! (context rows) are started once, warmed up, and measured one round a cell.
//! Then memory per session: 10,000 sessions opened and left idle, the RSS they add divided by
//! 10,000.
//!
//! Run with `cargo bench -p agentio-benches --bench mcp_load` (about five minutes);
//! `-- --quick` for a short run (two passes of 0.4 s rounds). The table it prints is the README's.
#![allow(missing_docs)]

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentio_mcp::McpServer;
use agentio_tools::ToolRegistry;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::{ServerHandler, tool_handler, tool_router};

mod search;
use search::{SearchArgs, SearchResult, SearchTool};

const CONCURRENCY: [usize; 3] = [1, 16, 256];
/// The servers measured against each other in every round: ours, rmcp's, and the control, a
/// second rmcp process, whose ratio to the first is what the measurement itself cannot tell
/// apart (two processes of one server answer alike).
const MEASURED: [Server; 3] = [Server::Ours, Server::Rmcp, Server::Rmcp];
const SESSIONS: usize = 10_000;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Server {
    Ours,
    Rmcp,
    /// A context row: rmcp's server with rmcp's `json_response` on, as ours has it (a
    /// stateless call answered by its first message is one JSON body, not an event stream).
    RmcpJson,
    /// Context rows: the official Python and TypeScript SDKs' servers, when
    /// `MCP_LOAD_PYTHON` (a Python with the pinned `mcp`) and `MCP_LOAD_NODE` (a Node beside
    /// the pinned SDK's `node_modules`, with `tests/typescript/load_server.mjs` copied there as
    /// `MCP_LOAD_TS_SERVER`) are set.
    Python,
    TypeScript,
}

impl Server {
    fn name(self) -> &'static str {
        match self {
            Server::Ours => "ours",
            Server::Rmcp => "rmcp",
            Server::RmcpJson => "rmcp-json",
            Server::Python => "Python SDK",
            Server::TypeScript => "TypeScript SDK",
        }
    }

    /// The command that serves the tool on `port`, pinned to core 1.
    fn command(self, port: u16) -> Option<Command> {
        let mut command = Command::new("taskset");
        command.args(["-c", "1"]);
        match self {
            Server::Ours | Server::Rmcp | Server::RmcpJson => {
                command
                    .arg(std::env::current_exe().expect("this binary"))
                    .args(["serve", self.name(), &port.to_string()]);
            }
            Server::Python => {
                let python = std::env::var_os("MCP_LOAD_PYTHON")?;
                let script = concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/../tests/python/load_server.py"
                );
                command.arg(python).arg(script).arg(port.to_string());
            }
            Server::TypeScript => {
                let node = std::env::var_os("MCP_LOAD_NODE")?;
                let script = std::env::var_os("MCP_LOAD_TS_SERVER")?;
                command.arg(node).arg(script).arg(port.to_string());
            }
        }
        Some(command)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Revision {
    Sessions,
    Stateless,
}

impl Revision {
    fn name(self) -> &'static str {
        match self {
            Revision::Sessions => "2025-11-25 (sessions)",
            Revision::Stateless => "2026-07-28 (stateless)",
        }
    }
}

// ---- the servers ----

/// rmcp's own way to write the tool: `#[tool_router]`, structured output through `Json<T>`.
#[derive(Clone)]
struct RmcpSearch {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl RmcpSearch {
    /// Searches.
    #[rmcp::tool(name = "kb.search")]
    async fn search(
        &self,
        Parameters(args): Parameters<SearchArgs>,
    ) -> Result<Json<SearchResult>, rmcp::ErrorData> {
        Ok(Json(search::body(&args)))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for RmcpSearch {}

fn serve(server: &str, port: u16) {
    // A one-worker multi-thread runtime (what `#[tokio::main]` gives, on the one core), or
    // with `MCP_LOAD_RUNTIME=current` a current-thread one.
    let runtime = if std::env::var("MCP_LOAD_RUNTIME").is_ok_and(|v| v == "current") {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
    }
    .expect("a runtime");
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("the port is free");
        match server {
            "ours" => {
                let mut registry = ToolRegistry::new();
                registry.register(SearchTool).expect("a valid tool");
                McpServer::new(registry)
                    .expect("exports to MCP")
                    .serve_http(listener)
                    .await
                    .expect("serves");
            }
            "rmcp" | "rmcp-json" => {
                let service = StreamableHttpService::new(
                    || {
                        Ok(RmcpSearch {
                            tool_router: RmcpSearch::tool_router(),
                        })
                    },
                    Arc::new(LocalSessionManager::default()),
                    McpServer::default_http_config().with_json_response(server == "rmcp-json"),
                );
                loop {
                    let (stream, _) = listener.accept().await.expect("accepts");
                    // rmcp's service as a tower service (what its examples mount in axum,
                    // without axum's router), with `TCP_NODELAY` as `McpServer::serve_http`
                    // sets it. No timer, as `axum::serve` gives none: ours also times each
                    // request's head and a body that has to be waited for (its default).
                    let _ = stream.set_nodelay(true);
                    let service = hyper_util::service::TowerToHyperService::new(service.clone());
                    tokio::spawn(async move {
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    });
                }
            }
            other => panic!("no server `{other}`"),
        }
    });
}

/// A server process, pinned to core 1.
struct Running {
    /// None for a server started elsewhere (`drive`).
    child: Option<Child>,
    addr: SocketAddr,
}

impl Running {
    fn start(server: Server, port: u16) -> Option<Running> {
        let mut command = server.command(port)?;
        if matches!(server, Server::Python | Server::TypeScript) {
            // The Python SDK logs every session it opens.
            command.stdout(Stdio::null()).stderr(Stdio::null());
        }
        let mut child = command
            .stdin(Stdio::null())
            .spawn()
            .expect("taskset (util-linux) starts the server");
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let started = Instant::now();
        while std::net::TcpStream::connect(addr).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "{} did not listen",
                server.name()
            );
            if let Ok(Some(status)) = child.try_wait() {
                panic!("{} exited: {status}", server.name());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(Running {
            child: Some(child),
            addr,
        })
    }

    /// A server started elsewhere (its memory not sampled).
    fn attach(addr: SocketAddr) -> Running {
        Running { child: None, addr }
    }

    /// The server's resident set, in KiB.
    fn rss_kib(&self) -> u64 {
        self.child
            .as_ref()
            .and_then(|child| rss_of(child.id()))
            .unwrap_or(0)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

// ---- the load generator ----

const ARGUMENTS: &str = r#"{"query":"invoices","limit":10,"filters":["billing"]}"#;

fn call_body(revision: Revision, id: u64) -> String {
    match revision {
        Revision::Sessions => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"kb.search","arguments":{ARGUMENTS}}}}}"#
        ),
        Revision::Stateless => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"kb.search","arguments":{ARGUMENTS},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{{"name":"load","version":"1"}}}}}}}}"#
        ),
    }
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"load","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// One client: a keep-alive connection and, for the sessions revision, its session.
struct Client {
    sender: SendRequest<Full<Bytes>>,
    /// `127.0.0.1:PORT`: the Python SDK refuses a `Host` without the port.
    host: String,
    revision: Revision,
    session: Option<String>,
    next_id: u64,
}

/// What one POST got: the status, the session header, the body.
struct Answer {
    status: u16,
    session: Option<String>,
    body: Bytes,
}

impl Client {
    async fn connect(addr: SocketAddr, revision: Revision) -> Result<Client, String> {
        let stream = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| e.to_string())?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(connection);
        let mut client = Client {
            sender,
            host: addr.to_string(),
            revision,
            session: None,
            next_id: 1,
        };
        if revision == Revision::Sessions {
            let answer = client.post(INITIALIZE.to_owned(), "initialize").await?;
            if answer.status != 200 {
                return Err(format!("initialize: {}", answer.status));
            }
            client.session = Some(answer.session.ok_or("initialize: no session id")?);
            let answer = client
                .post(INITIALIZED.to_owned(), "notifications/initialized")
                .await?;
            if answer.status != 202 {
                return Err(format!("initialized: {}", answer.status));
            }
        }
        Ok(client)
    }

    async fn post(&mut self, body: String, method: &str) -> Result<Answer, String> {
        let mut request = hyper::Request::post("/mcp")
            .header("host", &self.host)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-method", method);
        request = match self.revision {
            Revision::Sessions => request.header("mcp-protocol-version", "2025-11-25"),
            Revision::Stateless => request.header("mcp-protocol-version", "2026-07-28"),
        };
        if method == "tools/call" {
            request = request.header("mcp-name", "kb.search");
        }
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        self.sender.ready().await.map_err(|e| e.to_string())?;
        let response = self
            .sender
            .send_request(request)
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok(Answer {
            status,
            session,
            body,
        })
    }

    /// One `tools/call`; whether it was answered with the tool's result.
    async fn call(&mut self) -> bool {
        let id = self.next_id;
        self.next_id += 1;
        match self.post(call_body(self.revision, id), "tools/call").await {
            Ok(answer) => {
                answer.status == 200
                    && memchr(&answer.body, b"\"structuredContent\"")
                    && !memchr(&answer.body, b"\"isError\":true")
            }
            Err(_) => false,
        }
    }
}

fn memchr(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// What one round of load measured.
#[derive(Default)]
struct Round {
    latencies_us: Vec<u32>,
    errors: usize,
    elapsed: Duration,
    peak_rss_kib: u64,
}

/// `clients` clients calling for `duration` (after a warm-up of a fifth of it).
fn load(
    runtime: &tokio::runtime::Runtime,
    server: &Running,
    revision: Revision,
    clients: usize,
    duration: Duration,
) -> Round {
    let addr = server.addr;
    let pid = server.child.as_ref().map(Child::id);
    runtime.block_on(async move {
        let mut connected = Vec::with_capacity(clients);
        for _ in 0..clients {
            connected.push(
                Client::connect(addr, revision)
                    .await
                    .expect("a client connects"),
            );
        }
        let warm_up = Instant::now() + duration / 5;
        let end = warm_up + duration;
        let tasks: Vec<_> = connected
            .into_iter()
            .map(|mut client| {
                tokio::spawn(async move {
                    let mut latencies = Vec::new();
                    let mut errors = 0;
                    loop {
                        let started = Instant::now();
                        if started >= end {
                            break;
                        }
                        let ok = client.call().await;
                        if started >= warm_up {
                            latencies.push(started.elapsed().as_micros() as u32);
                            errors += usize::from(!ok);
                        }
                    }
                    (latencies, errors)
                })
            })
            .collect();
        let sampler = tokio::spawn(async move {
            let mut peak = 0;
            while Instant::now() < end {
                tokio::time::sleep(Duration::from_millis(100)).await;
                if let Some(rss) = pid.and_then(rss_of) {
                    peak = peak.max(rss);
                }
            }
            peak
        });
        tokio::time::sleep_until(warm_up.into()).await;
        let started = Instant::now();
        let mut round = Round::default();
        for task in tasks {
            let (latencies, errors) = task.await.expect("a client task");
            round.latencies_us.extend(latencies);
            round.errors += errors;
        }
        round.elapsed = started.elapsed();
        round.peak_rss_kib = sampler.await.expect("the sampler");
        round
    })
}

fn rss_of(pid: u32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Opens `count` sessions (64 at a time) and leaves them idle; how many opened.
fn open_sessions(runtime: &tokio::runtime::Runtime, addr: SocketAddr, count: usize) -> usize {
    runtime.block_on(async move {
        let workers = 64;
        let tasks: Vec<_> = (0..workers)
            .map(|w| {
                tokio::spawn(async move {
                    let mut client = Client::connect(addr, Revision::Stateless)
                        .await
                        .expect("connects");
                    client.revision = Revision::Sessions;
                    let mut opened = 0;
                    for _ in (w..count).step_by(workers) {
                        client.session = None;
                        let Ok(answer) = client.post(INITIALIZE.to_owned(), "initialize").await
                        else {
                            continue;
                        };
                        let Some(session) = answer.session.filter(|_| answer.status == 200) else {
                            continue;
                        };
                        client.session = Some(session);
                        if let Ok(done) = client
                            .post(INITIALIZED.to_owned(), "notifications/initialized")
                            .await
                        {
                            opened += usize::from(done.status == 202);
                        }
                    }
                    opened
                })
            })
            .collect();
        let mut opened = 0;
        for task in tasks {
            opened += task.await.expect("a worker");
        }
        opened
    })
}

// ---- the report ----

struct Cell {
    calls: usize,
    calls_per_s: f64,
    p50_ms: f64,
    p99_ms: f64,
    max_ms: f64,
    errors: usize,
    peak_rss_kib: u64,
}

fn summarize(rounds: Vec<Round>) -> Cell {
    let mut latencies: Vec<u32> = Vec::new();
    let mut errors = 0;
    let mut elapsed = 0.0;
    let mut peak = 0;
    for round in rounds {
        latencies.extend(round.latencies_us);
        errors += round.errors;
        elapsed += round.elapsed.as_secs_f64();
        peak = peak.max(round.peak_rss_kib);
    }
    latencies.sort_unstable();
    let at = |q: f64| {
        let i = ((latencies.len() as f64 * q) as usize).min(latencies.len().saturating_sub(1));
        f64::from(latencies.get(i).copied().unwrap_or(0)) / 1000.0
    };
    Cell {
        calls: latencies.len(),
        calls_per_s: latencies.len() as f64 / elapsed,
        p50_ms: at(0.50),
        p99_ms: at(0.99),
        max_ms: f64::from(latencies.last().copied().unwrap_or(0)) / 1000.0,
        errors,
        peak_rss_kib: peak,
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.first().map(String::as_str) == Some("serve") {
        let port = args[2].parse().expect("a port");
        serve(&args[1], port);
        return;
    }
    // `drive ADDR sessions|stateless CLIENTS SECONDS`: load one running server (to profile it).
    if args.first().map(String::as_str) == Some("drive") {
        let addr: SocketAddr = args[1].parse().expect("an address");
        let revision = if args[2] == "sessions" {
            Revision::Sessions
        } else {
            Revision::Stateless
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let server = Running::attach(addr);
        let round = load(
            &runtime,
            &server,
            revision,
            args[3].parse().expect("clients"),
            Duration::from_secs(args[4].parse().expect("seconds")),
        );
        let cell = summarize(vec![round]);
        println!(
            "{:.0} calls/s, p50 {:.3} ms, p99 {:.3} ms, errors {}",
            cell.calls_per_s, cell.p50_ms, cell.p99_ms, cell.errors
        );
        return;
    }
    // The load generator on core 0, the servers on core 1.
    if std::env::var_os("MCP_LOAD_PINNED").is_none() {
        let status = Command::new("taskset")
            .args(["-c", "0"])
            .arg(std::env::current_exe().expect("this binary"))
            .args(&args)
            .env("MCP_LOAD_PINNED", "1")
            .status()
            .expect("taskset (util-linux) runs the load generator");
        std::process::exit(status.code().unwrap_or(1));
    }
    let quick = args.iter().any(|a| a == "--quick");
    // Each cell: the measured servers in alternating rounds, pooled.
    let (round, rounds_per_cell) = if quick {
        (Duration::from_millis(400), 2)
    } else {
        // An even number: each server goes first in half of the pairs.
        (Duration::from_millis(1_000), 6)
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");

    // Ours and rmcp's, each shown once (the control is shown by its ratio).
    let pair = &MEASURED[..2];
    let context = [Server::RmcpJson, Server::Python, Server::TypeScript];
    // Ports the system hands out, not fixed ones: the load generator's own connections take
    // local ports from the same range.
    let next_port = || {
        std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port()
    };
    let others: Vec<(Server, Running)> = context
        .iter()
        .filter_map(|server| Some((*server, Running::start(*server, next_port())?)))
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    // Warm-up, not measured: the context servers (and this generator) serve both revisions
    // once, so their one round per cell does not carry a cold process's start (lazily built
    // state, the allocator's first growth, cold caches). Ours and rmcp's start afresh for
    // every round, and are warmed up then.
    for (_, server) in &others {
        for revision in [Revision::Sessions, Revision::Stateless] {
            load(&runtime, server, revision, 16, round / 2);
        }
    }

    println!(
        "| revision | clients | server | calls/s | p50 ms | p99 ms | max ms | errors | peak RSS MiB |"
    );
    println!("|---|---:|---|---:|---:|---:|---:|---:|---:|");
    let row = |revision: Revision, clients: usize, server: Server, cell: &Cell| {
        let served = cell.calls_per_s > 0.0 && cell.errors * 2 < cell.calls;
        if served {
            println!(
                "| {} | {clients} | {} | {:.0} | {:.3} | {:.3} | {:.2} | {} | {:.1} |",
                revision.name(),
                server.name(),
                cell.calls_per_s,
                cell.p50_ms,
                cell.p99_ms,
                cell.max_ms,
                cell.errors,
                cell.peak_rss_kib as f64 / 1024.0
            );
        } else {
            println!(
                "| {} | {clients} | {} | does not serve this revision | | | | | |",
                revision.name(),
                server.name()
            );
        }
    };
    let mut failed = false;
    let mut ratios = Vec::new();
    for revision in [Revision::Sessions, Revision::Stateless] {
        for clients in CONCURRENCY {
            let mut rounds: Vec<Vec<Round>> = MEASURED.iter().map(|_| Vec::new()).collect();
            // Each pass starts the three processes afresh and warms each up (unmeasured), then
            // measures them one after the other, each pass in the other order than the last
            // (ours, rmcp, control; control, rmcp, ours; ...): a drift on the machine, a cost
            // of going first, and whatever one process happens to get (where its memory lies,
            // how its core wakes), reach each of them alike, and the control shows what is left.
            for pass in 0..rounds_per_cell {
                let fresh: Vec<Running> = MEASURED
                    .iter()
                    .map(|server| {
                        Running::start(*server, next_port()).expect("our own servers start")
                    })
                    .collect();
                for server in &fresh {
                    load(&runtime, server, revision, 16, round / 4);
                }
                for j in 0..fresh.len() {
                    let i = if pass % 2 == 0 {
                        j
                    } else {
                        fresh.len() - 1 - j
                    };
                    rounds[i].push(load(&runtime, &fresh[i], revision, clients, round));
                }
            }
            let cells: Vec<Cell> = rounds.into_iter().map(summarize).collect();
            for (server, cell) in pair.iter().zip(&cells) {
                row(revision, clients, *server, cell);
            }
            failed |= cells.iter().any(|cell| cell.errors > 0);
            for (server, running) in &others {
                let cell = summarize(vec![load(&runtime, running, revision, clients, round)]);
                row(revision, clients, *server, &cell);
            }
            let ratio = |a: &Cell, b: &Cell| (a.calls_per_s / b.calls_per_s, a.p99_ms / b.p99_ms);
            ratios.push((
                revision,
                clients,
                ratio(&cells[0], &cells[1]),
                ratio(&cells[2], &cells[1]),
            ));
        }
    }
    println!();
    println!(
        "| revision | clients | calls/s ours ÷ rmcp | p99 ours ÷ rmcp | calls/s control ÷ rmcp | p99 control ÷ rmcp |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for (revision, clients, (throughput, p99), (control, control_p99)) in &ratios {
        println!(
            "| {} | {clients} | {throughput:.3} | {p99:.3} | {control:.3} | {control_p99:.3} |",
            revision.name()
        );
    }
    drop(others);

    // Memory: fresh processes, 10,000 sessions opened and left idle.
    println!();
    println!(
        "| server | RSS at rest MiB | {SESSIONS} idle sessions opened | RSS after MiB | KiB per session | one more session |"
    );
    println!("|---|---:|---:|---:|---:|---|");
    // rmcp-json keeps sessions as rmcp's server does (its setting is for stateless calls).
    let sdks = context.iter().filter(|server| **server != Server::RmcpJson);
    for server in pair.iter().chain(sdks) {
        let Some(running) = Running::start(*server, next_port()) else {
            continue;
        };
        std::thread::sleep(Duration::from_millis(300));
        let before = running.rss_kib();
        let opened = open_sessions(&runtime, running.addr, SESSIONS);
        let one_more = open_sessions(&runtime, running.addr, 1);
        std::thread::sleep(Duration::from_millis(300));
        let after = running.rss_kib();
        println!(
            "| {} | {:.1} | {opened} | {:.1} | {:.1} | {} |",
            server.name(),
            before as f64 / 1024.0,
            after as f64 / 1024.0,
            (after.saturating_sub(before)) as f64 / opened.max(1) as f64,
            if one_more == 1 { "opened" } else { "refused" }
        );
        if *server == Server::Ours {
            // Ours holds at most `DEFAULT_MAX_SESSIONS` (10,000): all of them opened, the
            // one past the bound refused.
            failed |= opened != SESSIONS || one_more != 0;
        } else if *server == Server::Rmcp {
            failed |= opened != SESSIONS;
        }
    }
    if failed {
        eprintln!(
            "errors under load, or sessions that did not open (or one past our bound that did)"
        );
        std::process::exit(1);
    }
}
