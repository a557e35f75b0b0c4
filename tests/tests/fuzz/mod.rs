//! The project's own fuzzing, on stable Rust under `cargo test`: each target replays its
//! checked-in corpus (`tests/fuzz/corpus/<target>/`, seeded from the examples and every
//! hostile-input reproducer) and then mutates it for a second (longer in `.ci/run`).
//!
//! A short run is part of `cargo test`. The long run, ten minutes a target:
//!
//! ```text
//! AGENT_IO_FUZZ_SECONDS=600 cargo test --release -p agentio-tests --test suite -- fuzz:: --test-threads 1
//! ```
//!
//! Replay a run with `AGENT_IO_FUZZ_SEED=<the seed it printed>`.

mod engine;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use agentio_core::files::{
    FS_ROOT_FIELD, FileHost, RunVars, Workspace, check_relative, check_template, interpolate,
    run_with_files,
};
use agentio_core::{
    AgentContext, AgentCore, AgentError, AgentInput, AgentOutput, AgentRuntime, ErrorCode,
};
use agentio_tools::{ToolError, ToolManifest, ToolRegistry, tool};
use agentio_workflow::Workflow;
use engine::{Target, fuzz};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// JSON's own tokens and its edge values: part of every JSON target's dictionary.
const JSON_SYNTAX: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b":",
    b",",
    b"\"",
    b"null",
    b"-1",
    b"1e308",
    b"18446744073709551616",
    b"\"\\u0000\"",
    b"[[[[[[[[",
];

/// A dictionary: JSON's tokens, then `more`.
fn json_and(more: &[&'static [u8]]) -> Vec<&'static [u8]> {
    [JSON_SYNTAX, more].concat()
}

/// The erased-input target's tokens, after JSON's.
const INPUT_TOKENS: &[&[u8]] = &[
    b"true",
    b"0.5",
    b"\"_workflowFsRoot\"",
    b"\"kind\"",
    b"\"tag\"",
    b"\"\xc2\xa0\"",
    b"{\"a\":{\"a\":",
];

const YAML_TOKENS: &[&[u8]] = &[
    b"---",
    b"\n",
    b"  ",
    b"- ",
    b": ",
    b"&a ",
    b"*a",
    b"[",
    b"]",
    b"{",
    b"}",
    b"\xc2\xa0",
    b"\xe3\x80\x80",
    b"\"",
    b"'",
    b"#",
    b"!!str ",
    b"~",
    b"<<: *a",
    b"approval: ",
    b"mutates: [",
    b"execute: x",
    b"outputs:",
    b"inputs:",
    b"depends_on: [",
    b"array<",
    b">",
    b"$trigger.",
    b"\t",
    b"\r\n",
    b"...",
];

const PATH_TOKENS: &[&[u8]] = &[
    b"/",
    b"..",
    b".",
    b"\\",
    b"\0",
    b"<runId>",
    b"<workflowId>",
    b"<toolId>",
    b"<isoDate>",
    b"<",
    b">",
    b"link",
    b"data",
    b"out-link",
    b"\n",
    b"C:",
    b"//",
    b"\xc2\xa0",
];

// --- erased input into a core and a tool -------------------------------------------------

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Action {
    Move { x: i32, y: i32 },
    Say { text: String },
    Wait,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Place {
    #[schemars(length(min = 1, max = 40))]
    name: String,
    tags: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentInput)]
#[serde(deny_unknown_fields)]
struct Order {
    #[schemars(range(min = 1, max = 100))]
    count: u8,
    place: Place,
    actions: Vec<Action>,
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    extra: Value,
    #[serde(default)]
    scores: std::collections::BTreeMap<String, f64>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentOutput)]
struct Receipt {
    actions: usize,
}

struct Orders;

impl AgentCore for Orders {
    type Input = Order;
    type Output = Receipt;
    fn core_type(&self) -> &str {
        "orders"
    }
    async fn run_turn(
        &mut self,
        input: Order,
        _: &mut AgentContext,
    ) -> Result<Receipt, AgentError> {
        Ok(Receipt {
            actions: input.actions.len(),
        })
    }
}

/// Takes an order.
#[tool(id = "fuzz.order")]
async fn take_order(input: Order) -> Result<Receipt, ToolError> {
    Ok(Receipt {
        actions: input.actions.len(),
    })
}

fn value_of(bytes: &[u8]) -> Value {
    let (wrap, body) = match bytes.split_first() {
        Some((&b'W', rest)) => (
            rest.first().copied().unwrap_or(0) as usize * 8,
            rest.get(1..).unwrap_or(&[]),
        ),
        _ => (0, bytes),
    };
    let mut value = serde_json::from_slice(body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
    // Built without recursion (`json!` would serialize the inner value recursively).
    for _ in 0..wrap {
        let mut map = serde_json::Map::new();
        map.insert("extra".into(), value);
        value = Value::Object(map);
    }
    value
}

fn check_error(err: &AgentError) {
    assert!(
        err.message().len() < 16 * 1024,
        "a {}-byte message",
        err.message().len()
    );
    assert!(err.violations().len() <= agentio_core::MAX_VIOLATIONS + 1);
    for violation in err.violations() {
        assert!(violation.pointer.is_empty() || violation.pointer.starts_with('/'));
        assert!(violation.pointer.len() <= agentio_core::limits::MAX_POINTER_BYTES + 4);
    }
    let envelope = err.to_envelope();
    assert_eq!(envelope["ok"], false);
}

#[test]
fn erased_input() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let mut registry = ToolRegistry::new();
    registry.register(TakeOrderTool).unwrap();
    let core = std::sync::Mutex::new(AgentRuntime::new(Orders));
    fuzz(
        Target {
            name: "erased_input",
            dictionary: &json_and(INPUT_TOKENS),
            max_len: 64 * 1024,
        },
        |bytes| {
            // Two copies built from the bytes: a deep value cannot be cloned recursively.
            let input = value_of(bytes);
            // The oracle: nothing the schema refuses runs. The other way round is known not to
            // hold exactly: JSON Schema counts `-0` and `1e2` as integers and schemars gives
            // `i32` no range, where serde refuses them; such an input is still refused, with a
            // `decode` violation that points at the value.
            let valid = Order::validate_input(&input).is_ok();
            let turn = pollster::block_on(core.lock().unwrap().run_turn(input));
            let input = value_of(bytes);
            match &turn {
                Ok(out) => assert!(valid, "accepted an input its schema refuses: {out}"),
                Err(err) => {
                    if valid {
                        let decode = err.violations().first().map(|v| v.keyword.as_str());
                        assert_eq!(decode, Some("decode"), "refused a valid input: {err}");
                    }
                    assert_eq!(err.code(), &ErrorCode::InputInvalid, "{err}");
                    check_error(err);
                }
            }
            let call = runtime.block_on(registry.call("fuzz.order", input));
            assert_eq!(
                call.is_ok(),
                turn.is_ok(),
                "the tool and the core disagree: {call:?}"
            );
            if let Err(err) = &call {
                check_error(err);
            }
        },
    );
}

// --- TOOL.md --------------------------------------------------------------------------------

#[test]
fn tool_md() {
    fuzz(
        Target {
            name: "tool_md",
            dictionary: YAML_TOKENS,
            max_len: 256 * 1024,
        },
        |bytes| {
            let text = String::from_utf8_lossy(bytes);
            match ToolManifest::parse(&text) {
                Ok(manifest) => {
                    // What parses renders and parses back to the same contract.
                    let again = ToolManifest::parse(&manifest.render())
                        .unwrap_or_else(|e| panic!("a parsed manifest did not round-trip: {e}"));
                    assert_eq!(again.contract, manifest.contract);
                }
                Err(err) => {
                    assert!(!err.problems.is_empty());
                    assert!(err.to_string().len() < 256 * 1024);
                }
            }
        },
    );
}

// --- workflow documents ----------------------------------------------------------------------

#[test]
fn workflow_yaml() {
    fuzz(
        Target {
            name: "workflow_yaml",
            dictionary: YAML_TOKENS,
            max_len: 256 * 1024,
        },
        |bytes| {
            let text = String::from_utf8_lossy(bytes);
            match Workflow::from_yaml(&text) {
                Ok(workflow) => {
                    assert!(
                        workflow.validate().is_empty(),
                        "a loaded workflow has problems"
                    );
                    let _ = workflow.levels();
                }
                Err(errors) => {
                    assert!(!errors.is_empty());
                    for error in &errors {
                        let shown = error.to_string();
                        assert!(shown.len() < 64 * 1024, "a {}-byte error", shown.len());
                        let _ = error.to_json();
                    }
                }
            }
        },
    );
}

// --- paths ----------------------------------------------------------------------------------

struct Sandbox {
    base: PathBuf,
    workspace: Workspace,
}

impl Sandbox {
    fn new(name: &str) -> Self {
        let base =
            std::env::temp_dir().join(format!("agent-io-fuzz-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("workspace/data")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(base.join("outside/secret.txt"), "SECRET").unwrap();
        std::fs::write(base.join("workspace/data/in.txt"), "inside").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(base.join("outside"), base.join("workspace/out-link"))
                .unwrap();
            std::os::unix::fs::symlink(
                base.join("outside/secret.txt"),
                base.join("workspace/link"),
            )
            .unwrap();
            std::os::unix::fs::symlink("data", base.join("workspace/inner-link")).unwrap();
        }
        let workspace = Workspace::open(base.join("workspace")).unwrap();
        Sandbox { base, workspace }
    }

    fn outside(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut files: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(self.base.join("outside"))
            .unwrap()
            .map(|e| {
                let path = e.unwrap().path();
                let content = std::fs::read(&path).unwrap_or_default();
                (path, content)
            })
            .collect();
        files.sort();
        files
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

fn split3(bytes: &[u8]) -> [String; 3] {
    let mut parts = bytes
        .splitn(3, |b| *b == b'\n')
        .map(|p| String::from_utf8_lossy(p).into_owned());
    [
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    ]
}

#[test]
fn paths() {
    let sandbox = Sandbox::new("paths");
    let before = sandbox.outside();
    fuzz(
        Target {
            name: "paths",
            dictionary: PATH_TOKENS,
            max_len: 4096,
        },
        |bytes| {
            let [template, run_id, unit_id] = split3(bytes);
            let vars = RunVars {
                run_id,
                unit_id,
                iso_date: "2026-11-22".into(),
            };
            if check_template(&template).is_err() {
                return;
            }
            let Ok(path) = interpolate(&template, &vars) else {
                return;
            };
            check_relative(&path).expect("interpolate returned a path check_relative refuses");
            assert!(!path.starts_with('/') && !path.split(['/', '\\']).any(|s| s == ".."));
            if let Ok(Some(mut opened)) = sandbox.workspace.open_input(&path) {
                let mut text = String::new();
                let _ = std::io::Read::read_to_string(&mut opened.file, &mut text);
                assert_ne!(text, "SECRET", "{path} read a file outside the workspace");
            }
            if sandbox
                .workspace
                .write_file(&path, &mut "fuzz".as_bytes())
                .is_ok()
            {
                let written = sandbox.workspace.root().join(&path);
                let real = std::fs::canonicalize(&written).expect("the written file exists");
                assert!(
                    real.starts_with(sandbox.workspace.root()),
                    "{} is outside",
                    real.display()
                );
                let _ = std::fs::remove_file(&written);
            }
        },
    );
    assert_eq!(
        sandbox.outside(),
        before,
        "something outside the workspace changed"
    );
}

// --- the file lifecycle under a concurrent symlink swap ----------------------------------

#[cfg(unix)]
#[test]
fn file_lifecycle() {
    let sandbox = Sandbox::new("lifecycle");
    std::fs::create_dir_all(sandbox.base.join("workspace/reports")).unwrap();
    let before = sandbox.outside();
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, reports, data, outside) = (
            stop.clone(),
            sandbox.base.join("workspace/reports"),
            sandbox.base.join("workspace/data"),
            sandbox.base.join("outside"),
        );
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                for folder in [&reports, &data] {
                    let parked = folder.with_extension("parked");
                    if std::fs::rename(folder, &parked).is_ok() {
                        let _ = std::os::unix::fs::symlink(&outside, folder);
                        std::thread::yield_now();
                        let _ = std::fs::remove_file(folder);
                        if std::fs::rename(&parked, folder).is_err() {
                            let _ = std::fs::remove_dir_all(&parked);
                        }
                    }
                }
            }
        })
    };
    let mutates = vec![
        "workspace:/reports".to_owned(),
        "workspace:/data".to_owned(),
    ];
    fuzz(
        Target {
            name: "file_lifecycle",
            dictionary: PATH_TOKENS,
            max_len: 1024,
        },
        |bytes| {
            let [input_path, output_path, actions] = split3(bytes);
            let io = agentio_core::__private::io_handle::<Value, Value>(
                &[("in", Box::leak(input_path.into_boxed_str()), None, None)],
                &[("out", Box::leak(output_path.into_boxed_str()), None, None)],
            );
            let host = FileHost::new(&sandbox.workspace).with_mutates(&mutates);
            let vars = RunVars {
                run_id: "r".into(),
                unit_id: "u".into(),
                iso_date: "2026-11-22".into(),
            };
            let secret = sandbox.base.join("outside/secret.txt");
            let (result, record) = pollster::block_on(run_with_files(
                &io,
                host,
                &vars,
                json!({}),
                |input: Value| {
                    let root = PathBuf::from(input[FS_ROOT_FIELD].as_str().unwrap_or_default());
                    if let Ok(text) = std::fs::read_to_string(root.join("in")) {
                        assert_ne!(text, "SECRET", "a staged input came from outside");
                    }
                    let out = root.join("out");
                    match actions.bytes().next().unwrap_or(0) % 4 {
                        0 => drop(std::fs::write(&out, "report")),
                        1 => drop(std::os::unix::fs::symlink(&secret, &out)),
                        2 => drop(std::fs::hard_link(&secret, &out)),
                        _ => drop(std::fs::create_dir(&out)),
                    }
                    async { Ok(json!({})) }
                },
            ));
            let _ = result;
            for synced in &record.synced {
                assert!(
                    synced.workspace_path.starts_with("reports")
                        || synced.workspace_path.starts_with("data")
                );
                assert_ne!(synced.sha256, sha_of(b"SECRET"), "a secret was synced");
            }
        },
    );
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    assert_eq!(
        sandbox.outside(),
        before,
        "something outside the workspace changed"
    );
}

fn sha_of(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

// --- MCP over streamable HTTP ----------------------------------------------------------------

/// The `serve_http` target's tokens, after JSON's.
const MCP_TOKENS: &[&[u8]] = &[
    b"\"\\ud800\"",
    b"\xff",
    b"\"jsonrpc\":\"2.0\",",
    b"\"id\":",
    b"\"method\":",
    b"\"params\":",
    b"\"result\":{}",
    b"\"error\":{\"code\":1,\"message\":\"m\"}",
    b"\"initialize\"",
    b"\"ping\"",
    b"\"tools/list\"",
    b"\"tools/call\"",
    b"\"resources/list\"",
    b"\"prompts/list\"",
    b"\"logging/setLevel\"",
    b"\"completion/complete\"",
    b"\"tasks/get\"",
    b"\"tasks/result\"",
    b"\"tasks/cancel\"",
    b"\"notifications/initialized\"",
    b"\"notifications/cancelled\"",
    b"\"fixture.add\"",
    b"\"fixture.record\"",
    b"\"fixture.refuse\"",
    b"\"fixture.count\"",
    b"\"arguments\":",
    b"\"_meta\":",
    b"\"progressToken\":",
    b"\"cursor\":",
    b"\"requestState\":",
    b"\"inputResponses\":",
    b"\"task\":{\"ttl\":1}",
    b"\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"",
    b"\"io.modelcontextprotocol/clientCapabilities\":{\"elicitation\":{},\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}}",
    b"\"io.modelcontextprotocol/clientInfo\":{\"name\":\"f\",\"version\":\"1\"}",
    b"\"rs1.AAAA.BBBB\"",
];

/// One request to the server at `addr` over a fresh connection, its answer read until it is
/// whole (by its length, its last chunk, or the connection's end): the status, the head and the
/// body (de-chunked). A `100 Continue` before it is skipped.
async fn mcp_exchange(
    addr: std::net::SocketAddr,
    head: &str,
    body: &[u8],
) -> (u16, String, Vec<u8>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut request = format!("{head}Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    request.extend_from_slice(body);
    // The server may answer (and close) before it has read all of a refused request.
    let _ = stream.write_all(&request).await;
    let mut answer = Vec::new();
    let mut buffer = [0u8; 16 * 1024];
    loop {
        let read = stream.read(&mut buffer).await.unwrap_or(0);
        answer.extend_from_slice(&buffer[..read]);
        if let Some(whole) = whole_answer(&answer, read == 0) {
            return whole;
        }
        assert!(
            read > 0,
            "the connection closed mid-answer: {:?}",
            String::from_utf8_lossy(&answer)
        );
    }
}

/// The answer in `bytes` once it is whole (`ended`: the connection closed): its status, head
/// and body.
fn whole_answer(bytes: &[u8], ended: bool) -> Option<(u16, String, Vec<u8>)> {
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8(bytes[..end].to_vec()).expect("a head in ASCII");
    let status: u16 = head[9..12].parse().expect("a status line");
    let rest = &bytes[end + 4..];
    if status == 100 {
        return whole_answer(rest, ended);
    }
    let header = |name| crate::mcp_common::header(&head, name);
    if header("transfer-encoding").is_some_and(|te| te.eq_ignore_ascii_case("chunked")) {
        let mut body = Vec::new();
        let mut rest = rest;
        while let Some(line) = rest.windows(2).position(|w| w == b"\r\n") {
            let size = usize::from_str_radix(std::str::from_utf8(&rest[..line]).unwrap(), 16)
                .expect("a chunk size in hex");
            rest = &rest[line + 2..];
            if size == 0 {
                return Some((status, head, body));
            }
            if rest.len() < size + 2 {
                break;
            }
            body.extend_from_slice(&rest[..size]);
            rest = &rest[size + 2..];
        }
        // Not ended, and waiting for this client: a request of the server's (a question the
        // call asks, with the capability declared in its `_meta`) is the last event so far.
        // That is what this client reads: it does not answer.
        let asks = [
            &b"\"method\":\"elicitation/create\""[..],
            b"\"method\":\"sampling/createMessage\"",
            b"\"method\":\"roots/list\"",
        ];
        let waiting = body.ends_with(b"\n\n")
            && asks
                .iter()
                .any(|ask| body.windows(ask.len()).any(|w| w == *ask));
        return waiting.then_some((status, head, body));
    }
    let length = header("content-length").map(|n| n.parse::<usize>().expect("a length"));
    match length {
        Some(length) if rest.len() >= length => Some((status, head, rest[..length].to_vec())),
        Some(_) => None,
        None => ended.then(|| (status, head, rest.to_vec())),
    }
}

/// A JSON-RPC message the server sent: 2.0, and a result or an error whose message is bounded.
fn check_server_message(message: &Value, sent: usize) {
    assert_eq!(message["jsonrpc"], "2.0", "{message}");
    if let Some(error) = message.get("error") {
        assert!(error["code"].is_i64(), "an error without a code: {message}");
        let text = error["message"].as_str().expect("an error's message");
        assert!(
            text.len() <= 16 * 1024,
            "a {}-byte error message",
            text.len()
        );
    } else {
        assert!(
            message.get("result").is_some() || message.get("method").is_some(),
            "neither a result, an error, nor a request: {message}"
        );
    }
    // What the server says about a request is bounded by the request, not grown from it.
    let said = message.to_string().len();
    assert!(
        said <= 2 * sent + 64 * 1024,
        "{said} bytes said about {sent} bytes"
    );
}

/// Bodies posted to `McpServer::serve_http` as a client would post them (in a session on
/// 2025-11-25, outside one, and stateless on 2026-07-28; the first byte picks, see `head`):
/// every answer is a status below 500; a `400` is a JSON-RPC error without an `id`; an event
/// stream or a JSON answer carries JSON-RPC messages only, each bounded; and the server, and
/// the session, go on serving.
#[test]
fn mcp_http() {
    let runtime = crate::mcp_common::runtime();
    let mut registry = ToolRegistry::new();
    // The fixture's tools, but not `fixture.work` (it works as long as it is asked: 200 s).
    registry
        .register(agentio_tests::mcp_fixture::AddTool)
        .unwrap();
    registry
        .register(agentio_tests::mcp_fixture::RecordTool)
        .unwrap();
    registry
        .register(agentio_tests::mcp_fixture::RefuseTool)
        .unwrap();
    registry
        .register(agentio_tests::mcp_fixture::CountTool)
        .unwrap();
    // Bodies open sessions of their own (`initialize` outside a session): idle ones go after
    // 30 s, so a long run stays far below the bound on open sessions.
    let server = agentio_mcp::McpServer::new(registry)
        .unwrap()
        .with_session_idle(std::time::Duration::from_secs(30));
    let (addr, serving) = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        (addr, tokio::spawn(server.serve_http(listener)))
    });
    let head = |session: Option<&str>, version: &str| {
        let session = session.map_or_else(String::new, |s| format!("Mcp-Session-Id: {s}\r\n"));
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\n{session}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: {version}\r\nConnection: close\r\n"
        )
    };
    let open_session = || {
        runtime.block_on(async {
        let initialize = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}"#;
        let (status, head_of, _) =
            mcp_exchange(addr, &head(None, "2025-11-25"), initialize).await;
        assert_eq!(status, 200, "{head_of}");
        let session = crate::mcp_common::header(&head_of, "mcp-session-id")
            .expect("a session id")
            .to_owned();
        let initialized = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let (status, _, _) =
            mcp_exchange(addr, &head(Some(&session), "2025-11-25"), initialized).await;
        assert_eq!(status, 202);
        session
    })
    };
    // A body that `initialize`s in the session is refused (a session is initialized once); the
    // next body gets a session of its own all the same, as it did when rmcp answered a second
    // `initialize` and took its capabilities (with elicitation declared, a gated call then
    // waited for an answer this client never gives).
    let session = std::sync::Mutex::new(open_session());
    let list = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    fuzz(
        Target {
            name: "mcp_http",
            dictionary: &json_and(MCP_TOKENS),
            max_len: 64 * 1024,
        },
        |bytes| {
            let mut session = session.lock().unwrap_or_else(|e| e.into_inner());
            if bytes.windows(10).any(|w| w == b"initialize") {
                let closing = format!(
                    "DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\nConnection: close\r\n"
                );
                let (status, _, _) = runtime.block_on(mcp_exchange(addr, &closing, b""));
                assert_eq!(status, 200, "the session's end");
                *session = open_session();
            }
            let (request_head, body) = match bytes.split_first() {
                Some((b'S', body)) => (head(Some(&session), "2025-11-25"), body),
                Some((b'N', body)) => (head(None, "2025-11-25"), body),
                Some((b'H', rest)) => {
                    // A header line of the input's own, then the body.
                    let at = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
                    let line = String::from_utf8_lossy(&rest[..at]).replace('\r', "");
                    let mut head = head(Some(&session), "2025-11-25");
                    head.push_str(&line);
                    head.push_str("\r\n");
                    (head, rest.get(at + 1..).unwrap_or_default())
                }
                Some((b'L', body)) => {
                    // The SEP-2243 headers a client derives from the body, where it has them.
                    let message: Value = serde_json::from_slice(body).unwrap_or_default();
                    let safe = |v: &Value| {
                        v.as_str()
                            .filter(|s| s.bytes().all(|b| b.is_ascii_graphic()))
                            .map(str::to_owned)
                    };
                    let mut head = head(None, "2026-07-28");
                    if let Some(method) = safe(&message["method"]) {
                        head.push_str(&format!("Mcp-Method: {method}\r\n"));
                    }
                    if let Some(name) = safe(&message["params"]["name"]) {
                        head.push_str(&format!("Mcp-Name: {name}\r\n"));
                    }
                    (head, body)
                }
                _ => (head(Some(&session), "2025-11-25"), bytes),
            };
            let (status, answer_head, answer) = runtime.block_on(async {
                tokio::time::timeout(
                    std::time::Duration::from_secs(8),
                    mcp_exchange(addr, &request_head, body),
                )
                .await
                .expect("an answer within 8 s")
            });
            assert!(status < 500, "{status}: {answer_head}");
            let content_type =
                crate::mcp_common::header(&answer_head, "content-type").unwrap_or_default();
            if content_type.starts_with("application/json") {
                let message: Value = serde_json::from_slice(&answer).unwrap_or_else(|e| {
                    panic!(
                        "{status}: not JSON ({e}): {}",
                        String::from_utf8_lossy(&answer)
                    )
                });
                check_server_message(&message, body.len());
                if status != 200 && status != 202 {
                    // A refusal is a JSON-RPC error: for a body that is not a message, without
                    // an `id` (none could be read); for a request (2026-07-28's headers, its
                    // `_meta`, an unknown method: `404`), answering its `id`.
                    let code = message["error"]["code"].as_i64();
                    assert!(code.is_some(), "{status}: {message}");
                    let notification = serde_json::from_slice::<Value>(body)
                        .is_ok_and(|sent| sent.get("method").is_some() && sent.get("id").is_none());
                    // Without an `id`: a body that is not a message (`-32700`, `-32600`), or a
                    // refusal of the transport before the body was read (`-32000`; `-32001`
                    // for a session not here, `404`).
                    if message.get("id").is_none() && !notification {
                        assert!(
                            matches!(
                                (status, code),
                                (_, Some(-32700 | -32600 | -32000)) | (404, Some(-32001))
                            ),
                            "{status}: {message}"
                        );
                    }
                    // What it quotes of the request is cut short.
                    let said = message["error"]["message"].as_str().unwrap_or_default();
                    assert!(said.len() <= 2048, "a {}-byte refusal", said.len());
                    let data = message["error"]
                        .get("data")
                        .map_or(0, |d| d.to_string().len());
                    assert!(data <= 8192, "a refusal with {data} bytes of data");
                }
            } else if content_type.starts_with("text/event-stream") {
                let text = std::str::from_utf8(&answer).expect("an event stream in UTF-8");
                for data in text.lines().filter_map(|l| l.strip_prefix("data:")) {
                    let data = data.trim();
                    if !data.is_empty() {
                        let message: Value = serde_json::from_str(data)
                            .unwrap_or_else(|e| panic!("an event that is not JSON ({e}): {data}"));
                        check_server_message(&message, body.len());
                    }
                }
            } else {
                // Every refusal of a request is a JSON-RPC error (rmcp's in a line of text
                // restated). Answered without a message: a notification's acceptance, and a
                // head HTTP itself could not read (hyper's `400` or `431`, the connection
                // closed: no request reached the server).
                let unread_head = matches!(status, 400 | 431)
                    && crate::mcp_common::header(&answer_head, "connection") == Some("close");
                assert!(status == 202 || unread_head, "{answer_head}");
                assert!(answer.is_empty(), "{status}: {} bytes", answer.len());
            }
        },
    );
    // The server and the session go on.
    let session = session.into_inner().unwrap_or_else(|e| e.into_inner());
    runtime.block_on(async {
        let (status, _, answer) =
            mcp_exchange(addr, &head(Some(&session), "2025-11-25"), list).await;
        assert_eq!(status, 200);
        assert!(String::from_utf8_lossy(&answer).contains("fixture.add"));
        assert!(!serving.is_finished());
        serving.abort();
    });
}

// --- an MCP server that lies, to our client ---------------------------------------------------

/// The client targets' tokens (a lying server's answers), after JSON's.
const MCP_SERVER_TOKENS: &[&[u8]] = &[
    b"\n",
    b"\"\\ud800\"",
    b"{\"a\":{\"a\":",
    b"\"tools\":",
    b"\"name\":",
    b"\"inputSchema\":",
    b"\"outputSchema\":",
    b"\"annotations\":{\"readOnlyHint\":true,\"destructiveHint\":false}",
    b"\"nextCursor\":\"again\"",
    b"\"structuredContent\":",
    b"\"content\":[{\"type\":\"text\",\"text\":\"t\"}]",
    b"\"isError\":true",
    b"\"type\":\"object\"",
    b"\"type\":\"string\"",
    b"\"properties\":",
    b"\"required\":[\"a\"]",
    b"\"additionalProperties\":false",
    b"\"$ref\":\"#/$defs/a\"",
    b"\"$ref\":\"http://127.0.0.1:9/s.json\"",
    b"\"$defs\":{\"a\":{\"$ref\":\"#/$defs/a\"}}",
    b"\"pattern\":\"(a+)+$\"",
    b"\"pattern\":\"[\"",
    b"\"format\":\"email\"",
    b"\"$schema\":\"https://json-schema.org/draft/2020-12/schema\"",
    b"\"resultType\":\"input_required\"",
    b"\"taskId\":\"t\"",
];

/// What the fake server answers `initialize` with: a server with tools.
const FAKE_INITIALIZE: &str = r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}"#;

/// What the fake server answers `server/discover` with (2026-07-28).
const FAKE_DISCOVER: &str = r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"private","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fake","version":"1"}}}"#;

/// A server on `io` that answers `initialize` (with `initialize`) and `server/discover`
/// properly, each method of `answers` with its answer, and anything else with `{}`: as the
/// `result` of a message with the request's id, written as it is (a newline in it ends the
/// line there), `@URI@` in it the request's `uri` (escaped as in a JSON string).
async fn lying_server(
    io: tokio::io::DuplexStream,
    initialize: &'static str,
    answers: Vec<(&'static str, Vec<u8>)>,
) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let (read, mut write) = tokio::io::split(io);
    let mut lines = tokio::io::BufReader::new(read).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) else {
            continue;
        };
        let result = match method {
            "initialize" => initialize.as_bytes(),
            "server/discover" => FAKE_DISCOVER.as_bytes(),
            _ => answers
                .iter()
                .find(|(answered, _)| *answered == method)
                .map_or(&b"{}"[..], |(_, answer)| &answer[..]),
        };
        // The URI asked for, as it is written inside a JSON string.
        let uri = serde_json::to_string(message["params"]["uri"].as_str().unwrap_or_default())
            .unwrap_or_default();
        let uri = &uri[1..uri.len() - 1];
        let mut out = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":"#).into_bytes();
        out.extend_from_slice(&replace_bytes(result, b"@URI@", uri.as_bytes()));
        out.extend_from_slice(b"}\n");
        if write.write_all(&out).await.is_err() {
            break;
        }
    }
}

/// `bytes` with every `from` replaced by `to`.
fn replace_bytes(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at..].starts_with(from) {
            out.extend_from_slice(to);
            at += from.len();
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    out
}

/// Whether rmcp reads `answer` (the `result` the fake servers send) as a message: the line
/// sent ends the message only when the answer has no newline.
fn readable(answer: &[u8]) -> bool {
    let mut line = br#"{"jsonrpc":"2.0","id":1,"result":"#.to_vec();
    match answer.iter().position(|&b| b == b'\n') {
        Some(at) => line.extend_from_slice(&answer[..at]),
        None => {
            line.extend_from_slice(answer);
            line.push(b'}');
        }
    }
    serde_json::from_slice::<rmcp::model::ServerJsonRpcMessage>(&line).is_ok()
}

/// A server's answers to `tools/list` and `tools/call` (the input, split at its first
/// newline; on 2026-07-28 when it starts with `D`), to `McpClient`: the import ends within its bounds with what it could register
/// and a bounded error naming the rest; every imported tool's contract is one the registry
/// took; a call through the registry returns only output its schema accepts, or a bounded
/// error; a direct `call_tool` returns what was sent or a bounded error. Nothing answered with
/// a message hangs.
#[test]
fn mcp_client() {
    use agentio_mcp::{ImportOptions, McpClient};
    let runtime = crate::mcp_common::runtime();
    // Each `tools/list` page: a server that answers a line rmcp cannot read is waited for this
    // long (an answer it can read comes in microseconds; one that misses the bound is a
    // timeout, which the import reports like any other failure).
    let bound = std::time::Duration::from_millis(20);
    fuzz(
        Target {
            name: "mcp_client",
            dictionary: &json_and(MCP_SERVER_TOKENS),
            max_len: 64 * 1024,
        },
        |bytes| {
            // `D` first: the client discovers a 2026-07-28 server; otherwise it `initialize`s.
            let (lifecycle, bytes) = match bytes.split_first() {
                Some((b'D', rest)) => (
                    rmcp::ClientLifecycleMode::Discover {
                        preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
                    },
                    rest,
                ),
                _ => (rmcp::ClientLifecycleMode::Initialize, bytes),
            };
            let at = bytes
                .iter()
                .position(|&b| b == b'\n')
                .unwrap_or(bytes.len());
            let list = bytes[..at].to_vec();
            let call = bytes.get(at + 1..).unwrap_or_default().to_vec();
            runtime.block_on(async {
                let (client_side, server_side) = tokio::io::duplex(1 << 20);
                let server = tokio::spawn(lying_server(
                    server_side,
                    FAKE_INITIALIZE,
                    vec![("tools/list", list), ("tools/call", call.clone())],
                ));
                let (read, write) = tokio::io::split(client_side);
                let client = McpClient::builder()
                    .lifecycle(lifecycle)
                    .io(read, write, 1 << 20)
                    .await
                    .expect("the handshake is the server's own, and honest");
                let options = ImportOptions::default()
                    .trusted()
                    .with_request_timeout(bound);
                // Every call approved: each reaches the server, whatever the import gated.
                let mut registry = ToolRegistry::new().with_approver(std::sync::Arc::new(
                    |_: &agentio_tools::ApprovalRequest| agentio_tools::ApprovalDecision::Approve,
                ));
                let imported = tokio::time::timeout(
                    std::time::Duration::from_secs(8),
                    client.import_into_with(&mut registry, "remote", &options),
                )
                .await
                .expect("the import ends");
                // What was imported: all of it, or (an error naming the rest) what could be.
                let ids: Vec<String> = registry.contracts().map(|c| c.id.clone()).collect();
                match imported {
                    Ok(imported) => {
                        let named: Vec<&str> =
                            imported.iter().map(|t| t.tool_id.as_str()).collect();
                        assert_eq!(named, ids.iter().map(String::as_str).collect::<Vec<_>>());
                    }
                    Err(err) => {
                        let said = err.to_string();
                        assert!(said.len() <= 256 * 1024, "a {}-byte error", said.len());
                    }
                }
                // rmcp skips a line it cannot read as a message, so a call answered with one
                // waits for its timeout (the contract's, 30 s; none for `call_tool`); one
                // answered with a message ends at once.
                let readable = readable(&call);
                let within = if readable { 8 } else { 0 };
                for id in &ids {
                    let Ok(called) = tokio::time::timeout(
                        std::time::Duration::from_secs(within),
                        registry.call(id, json!({})),
                    )
                    .await
                    else {
                        assert!(!readable, "a call answered with a message did not end");
                        continue;
                    };
                    match called {
                        Ok(output) => {
                            if let Some(schema) = registry.output_boundary(id) {
                                assert!(
                                    schema.validate(&output).is_ok(),
                                    "output its schema refuses: {output}"
                                );
                            }
                        }
                        Err(err) => check_error(&err),
                    }
                }
                let direct = tokio::time::timeout(
                    std::time::Duration::from_secs(within),
                    client.call_tool(rmcp::model::CallToolRequestParams::new("x")),
                )
                .await;
                assert!(
                    direct.is_ok() || !readable,
                    "a call answered with a message did not end"
                );
                if let Ok(Err(err)) = direct {
                    let said = err.to_string();
                    assert!(said.len() <= 64 * 1024, "a {}-byte error", said.len());
                }
                server.abort();
            });
        },
    );
}

// --- an MCP server over HTTP that lies, to our client -------------------------------------------

/// One request read from `stream`: its head and its body (by its `Content-Length`).
async fn read_request(stream: &mut tokio::net::TcpStream) -> Option<(String, Vec<u8>)> {
    use tokio::io::AsyncReadExt;
    let mut bytes = Vec::new();
    let mut buffer = [0u8; 8192];
    loop {
        if let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
            let length = crate::mcp_common::header(&head, "content-length")
                .and_then(|n| n.parse::<usize>().ok())
                .unwrap_or(0);
            if bytes.len() >= end + 4 + length {
                return Some((head, bytes[end + 4..end + 4 + length].to_vec()));
            }
        }
        let read = stream.read(&mut buffer).await.ok()?;
        if read == 0 {
            return None;
        }
        bytes.extend_from_slice(&buffer[..read]);
    }
}

/// An HTTP MCP server on `listener` that answers `initialize` properly (a session `s1`), a
/// notification `202`, a `GET` `405` and a `DELETE` `200`, and any other request with
/// `answer`: its first byte picks the status and type (`J`: `200` JSON, `E`: `200` event
/// stream, `A`: `401` with the first line as `WWW-Authenticate`, `4`: `400`, `5`: `500`, `N`:
/// `404`, `X`: the rest is the whole answer after `HTTP/1.1 `), `@ID@` in it is the request's
/// id. Every answer closes its connection.
async fn lying_http_server(listener: tokio::net::TcpListener, answer: Vec<u8>) {
    use tokio::io::AsyncWriteExt;
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            return;
        };
        let answer = answer.clone();
        tokio::spawn(async move {
            let Some((head, body)) = read_request(&mut stream).await else {
                return;
            };
            let message: Value = serde_json::from_slice(&body).unwrap_or_default();
            let id = message.get("id").map(Value::to_string);
            let method = message["method"].as_str().unwrap_or_default();
            let whole = |status: &str, headers: &str, body: &[u8]| {
                let mut out = format!(
                    "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                )
                .into_bytes();
                out.extend_from_slice(body);
                out
            };
            let out = if head.starts_with("GET ") {
                whole("405 Method Not Allowed", "", b"")
            } else if head.starts_with("DELETE ") {
                whole("200 OK", "", b"")
            } else if id.is_none() {
                whole("202 Accepted", "", b"")
            } else if method == "initialize" {
                let body = format!(
                    r#"{{"jsonrpc":"2.0","id":{},"result":{FAKE_INITIALIZE}}}"#,
                    id.unwrap_or_default()
                );
                whole(
                    "200 OK",
                    "Content-Type: application/json\r\nMcp-Session-Id: s1\r\n",
                    body.as_bytes(),
                )
            } else {
                let id = id.unwrap_or_default();
                let (kind, rest) = answer
                    .split_first()
                    .map_or((b'J', &[][..]), |(k, r)| (*k, r));
                let body = replace_bytes(rest, b"@ID@", id.as_bytes());
                match kind {
                    b'E' => whole("200 OK", "Content-Type: text/event-stream\r\n", &body),
                    b'A' => {
                        let line = body.iter().position(|&b| b == b'\n').unwrap_or(body.len());
                        let challenge =
                            String::from_utf8_lossy(&body[..line]).replace(['\r', '\n'], "");
                        whole(
                            "401 Unauthorized",
                            &format!("WWW-Authenticate: {challenge}\r\n"),
                            body.get(line + 1..).unwrap_or_default(),
                        )
                    }
                    b'4' => whole(
                        "400 Bad Request",
                        "Content-Type: application/json\r\n",
                        &body,
                    ),
                    b'5' => whole("500 Internal Server Error", "", &body),
                    b'N' => whole("404 Not Found", "", &body),
                    b'X' => {
                        let mut out = b"HTTP/1.1 ".to_vec();
                        out.extend_from_slice(&body);
                        out
                    }
                    _ => whole("200 OK", "Content-Type: application/json\r\n", &body),
                }
            };
            let _ = stream.write_all(&out).await;
            let _ = stream.shutdown().await;
        });
    }
}

/// A server over streamable HTTP whose answers to `tools/list` and `tools/call` are the input
/// (see `lying_http_server`), to `McpClient` with a token: the import ends within its bounds,
/// with a bounded error when it fails (a refused authorization naming the server's challenge,
/// at most 4 KiB of it and `…`), and a direct call ends with what was sent or a bounded error, or
/// waits (rmcp's client waits for an answer it can read; the call has no timeout of its own).
#[test]
fn mcp_http_client() {
    use agentio_mcp::{ClientError, ImportOptions, McpClient};
    let runtime = crate::mcp_common::runtime();
    fuzz(
        Target {
            name: "mcp_http_client",
            dictionary: &json_and(MCP_SERVER_TOKENS),
            max_len: 64 * 1024,
        },
        |bytes| {
            runtime.block_on(async {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let url = format!("http://{}/mcp", listener.local_addr().unwrap());
                let server = tokio::spawn(lying_http_server(listener, bytes.to_vec()));
                let client = McpClient::builder()
                    .lifecycle(rmcp::ClientLifecycleMode::Initialize)
                    .http_with_token(&url, "token")
                    .await
                    .expect("the handshake is the server's own, and honest");
                let options = ImportOptions::default()
                    .trusted()
                    .with_request_timeout(std::time::Duration::from_millis(300));
                let mut registry = ToolRegistry::new();
                let imported = tokio::time::timeout(
                    std::time::Duration::from_secs(8),
                    client.import_into_with(&mut registry, "remote", &options),
                )
                .await
                .expect("the import ends");
                if let Err(err) = &imported {
                    let said = err.to_string();
                    assert!(said.len() <= 256 * 1024, "a {}-byte error", said.len());
                    if let ClientError::Unauthorized { challenge } = err {
                        assert!(
                            challenge.len() <= 4096 + '…'.len_utf8(),
                            "a {}-byte challenge",
                            challenge.len()
                        );
                    }
                }
                let direct = tokio::time::timeout(
                    std::time::Duration::from_millis(300),
                    client.call_tool(rmcp::model::CallToolRequestParams::new("x")),
                )
                .await;
                if let Ok(Err(err)) = direct {
                    let said = err.to_string();
                    assert!(said.len() <= 64 * 1024, "a {}-byte error", said.len());
                }
                server.abort();
            });
        },
    );
}

// --- skills from a server that lies -------------------------------------------------------------

/// What the skills target's fake server answers `initialize` with: the Skills extension.
const FAKE_INITIALIZE_SKILLS: &str = r#"{"protocolVersion":"2025-11-25","capabilities":{"resources":{},"extensions":{"io.modelcontextprotocol/skills":{}}},"serverInfo":{"name":"fake","version":"1"}}"#;

/// A server's answers to `skills/list` and `resources/read` (the input, split at its first
/// newline; `@URI@` in the second is the URI asked for), to `McpClient`'s skills: every skill
/// listed keeps the extension's rules; a `SKILL.md` loaded, and every file of a loaded skill
/// read, has the size and digest its entry promised; a failure is a bounded error.
#[test]
fn mcp_skills() {
    use agentio_mcp::McpClient;
    use rmcp::model::SkillResources;
    let runtime = crate::mcp_common::runtime();
    let tokens: &[&[u8]] = &[
        b"\n",
        b"\"skills\":",
        b"\"uri\":\"skill://demo/SKILL.md\"",
        b"\"uri\":\"@URI@\"",
        b"\"uri\":\"skill://demo/../../etc/passwd\"",
        b"\"frontmatter\":",
        b"\"resources\":\"dynamic\"",
        b"\"digest\":\"sha256:",
        b"\"size\":",
        b"\"contents\":",
        b"\"text\":",
        b"\"blob\":\"AAAA\"",
        b"---\\n",
        b"name: ",
        b"description: ",
        b"&a [*a, *a]",
        b"\"nextCursor\":\"again\"",
    ];
    fuzz(
        Target {
            name: "mcp_skills",
            dictionary: &json_and(tokens),
            max_len: 64 * 1024,
        },
        |bytes| {
            let at = bytes
                .iter()
                .position(|&b| b == b'\n')
                .unwrap_or(bytes.len());
            let list = bytes[..at].to_vec();
            let read = bytes.get(at + 1..).unwrap_or_default().to_vec();
            // An answer rmcp cannot read is waited for until the request's timeout (30 s):
            // asked only when it can be read.
            let (list_readable, read_readable) = (readable(&list), readable(&read));
            runtime.block_on(async {
                let (client_side, server_side) = tokio::io::duplex(1 << 20);
                let server = tokio::spawn(lying_server(
                    server_side,
                    FAKE_INITIALIZE_SKILLS,
                    vec![("skills/list", list), ("resources/read", read)],
                ));
                let (reader, writer) = tokio::io::split(client_side);
                let client = McpClient::builder()
                    .lifecycle(rmcp::ClientLifecycleMode::Initialize)
                    .io(reader, writer, 1 << 20)
                    .await
                    .expect("the handshake is the server's own, and honest");
                let bounded = |err: &agentio_mcp::ClientError| {
                    let said = err.to_string();
                    assert!(said.len() <= 64 * 1024, "a {}-byte error", said.len());
                };
                let within = std::time::Duration::from_secs(8);
                let listed = if list_readable {
                    tokio::time::timeout(within, client.list_skills())
                        .await
                        .expect("skills/list ends")
                } else {
                    Ok(Vec::new())
                };
                let skills = listed.unwrap_or_else(|err| {
                    bounded(&err);
                    Vec::new()
                });
                for skill in skills.iter().take(4) {
                    assert!(skill.validate().is_ok(), "listed: {skill:?}");
                    if !read_readable {
                        continue;
                    }
                    let loaded = tokio::time::timeout(within, client.load_skill(skill))
                        .await
                        .expect("the load ends");
                    let loaded = match loaded {
                        Ok(loaded) => loaded,
                        Err(err) => {
                            bounded(&err);
                            continue;
                        }
                    };
                    let SkillResources::Files(files) = &skill.resources else {
                        continue;
                    };
                    let promised = |uri: &str, bytes: &[u8]| {
                        if let Some(entry) = files.iter().find(|file| file.uri == uri) {
                            assert_eq!(entry.size, bytes.len() as u64, "{uri}");
                            assert_eq!(entry.digest, rmcp::model::sha256_digest(bytes), "{uri}");
                        }
                    };
                    promised(&skill.uri, loaded.instructions().as_bytes());
                    for file in files.iter().take(4) {
                        let read = tokio::time::timeout(
                            within,
                            client.read_skill_file(&loaded, &file.uri),
                        )
                        .await
                        .expect("the read ends");
                        match read {
                            Ok(read) => promised(&read.uri, &read.bytes),
                            Err(err) => bounded(&err),
                        }
                    }
                }
                server.abort();
            });
        },
    );
}
