//! Two MCP server processes behind nginx, one killed mid-load (`.ci/run` runs it; it needs
//! nginx on the `PATH` or in `/usr/sbin`).
//!
//! `mcp-scale-out` starts two instances of an [`McpServer`] (`a` and `b`, each a process of
//! this binary: `mcp-scale-out serve NAME PORT LOG`) and nginx in front of them with the
//! README's configuration, then checks, through nginx only:
//!
//! 1. **Stateless calls spread** (2026-07-28): 200 calls, each answered by the instance that
//!    ran it, reach both instances (round robin, no affinity).
//!    Then 20 tasks (the Tasks extension, stateless): each started on either instance, and
//!    every `tasks/get` for it, sent without affinity, reaches the instance that holds it (the
//!    balancer reads the instance from the task id in `Mcp-Name`).
//! 2. **Sessions stay on their instance** (2025-11-25): 8 clients `initialize` and call 20
//!    times each; every call is answered by the instance named in the session id.
//! 3. **One instance killed mid-load** (SIGKILL to `b` while 12 stateless clients and 4 session
//!    clients call without pause): stateless calls go on on `a` (nginx passes a call it could
//!    not send to `b` on to `a`; a call in flight when `b` died fails and the client sends it
//!    again); a session client whose instance died starts a new session (a `404`, or nginx's
//!    `502` for a dead instance) as the spec says. Counted: every call a client made was
//!    answered exactly once, none lost, none answered twice; every answered call was run (the
//!    instances' logs); calls run twice are only calls `b` may have run before it died without
//!    answering.
//! 4. **The killed instance restarted on its task store** (each instance keeps its tasks in
//!    `agentio_mcp::task_store`): a task `b` had ended before it died is answered as it ended,
//!    one it was running is `failed`, saying the server stopped while it ran; both polls reach
//!    `b` by their ids, and while `b` is down nginx answers them `502`.
//!
//! Exits non-zero, naming what failed.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agentio_mcp::McpServer;
use agentio_tools::{ToolContext, ToolError, ToolRegistry, tool};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput)]
struct Note {
    /// The caller's id for this call.
    call: String,
    /// Milliseconds to wait after the call is logged, before it is answered.
    #[serde(default)]
    hold_ms: u64,
}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentOutput)]
struct Noted {
    call: String,
    instance: String,
}

/// Records a call in the instance's log and says which instance ran it.
#[tool(id = "scale.note", timeout_ms = 600000)]
async fn note(note: Note, ctx: &ToolContext) -> Result<Noted, ToolError> {
    let instance = ctx.raw_context()["instance"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let log = ctx.raw_context()["log"].as_str().unwrap_or_default();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(log)
        .map_err(|e| ToolError::internal(e.to_string()))?;
    file.write_all(format!("{}\n", note.call).as_bytes())
        .map_err(|e| ToolError::internal(e.to_string()))?;
    // Only a call that asks to be held waits: a zero sleep still takes a timer a call.
    if note.hold_ms > 0 {
        tokio::time::sleep(Duration::from_millis(note.hold_ms)).await;
    }
    Ok(Noted {
        call: note.call,
        instance,
    })
}

fn serve(name: &str, port: u16, log: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let mut registry = ToolRegistry::new();
        registry.register(NoteTool).expect("a valid tool");
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("the port is free");
        // Each instance's tasks in a store of its own, beside its log.
        let store = agentio_mcp::task_store::TaskStore::open(format!("{log}.tasks"))
            .expect("the instance's task store");
        McpServer::new(registry)
            .expect("exports")
            .with_task_support("scale.note", agentio_mcp::tasks::TaskSupport::Optional)
            .expect("a tool")
            .with_task_store(store)
            .with_instance(name)
            .with_request_state_key(*b"the-instances-share-this-key-32b")
            .expect("a 32-byte key")
            .with_context(serde_json::json!({ "instance": name, "log": log }))
            .serve_http(listener)
            .await
            .expect("serves");
    });
}

/// nginx in front of the instances: the README's configuration.
fn nginx_conf(dir: &Path, listen: u16, a: u16, b: u16) -> String {
    let dir = dir.display();
    format!(
        r#"worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;

    # Every instance: stateless calls and new sessions, round robin.
    upstream mcp {{
        server 127.0.0.1:{a} max_fails=1 fail_timeout=10s;
        server 127.0.0.1:{b} max_fails=1 fail_timeout=10s;
        keepalive 32;
        # Idle connections are closed here before an instance closes them (30 s).
        keepalive_timeout 20s;
    }}
    # One per instance: a session's requests go where its id says it lives.
    upstream mcp_a {{ server 127.0.0.1:{a}; keepalive 16; keepalive_timeout 20s; }}
    upstream mcp_b {{ server 127.0.0.1:{b}; keepalive 16; keepalive_timeout 20s; }}
    # A task's requests (tasks/get, tasks/update, tasks/cancel name it in Mcp-Name): the
    # instance whose name starts its id.
    map "$http_mcp_method $http_mcp_name" $mcp_task_upstream {{
        "~^tasks/\S+ a\."   mcp_a;
        "~^tasks/\S+ b\."   mcp_b;
        default             mcp;
    }}
    map $http_mcp_session_id $mcp_upstream {{
        ~^a\.   mcp_a;
        ~^b\.   mcp_b;
        default $mcp_task_upstream;
    }}

    server {{
        listen 127.0.0.1:{listen};
        location /mcp {{
            proxy_pass http://$mcp_upstream;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            # Answers are event streams: pass each event on as it comes.
            proxy_buffering off;
            proxy_read_timeout 1h;
            # A call nginx could not send to an instance goes to the other; one it sent is
            # never sent twice (POST is not idempotent): its client decides.
            proxy_next_upstream error timeout;
        }}
    }}
}}
"#
    )
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

fn wait_listening(addr: SocketAddr, what: &str) {
    let started = Instant::now();
    while TcpStream::connect(addr).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{what} did not listen on {addr}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// An answer: the status, the session header, the body.
struct Answer {
    status: u16,
    session: Option<String>,
    body: String,
}

/// One POST through nginx (a connection of its own).
fn post(
    addr: SocketAddr,
    session: Option<&str>,
    version: &str,
    body: &str,
) -> Result<Answer, String> {
    let mut stream = TcpStream::connect(addr).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(|e| e.to_string())?;
    let session = session.map_or_else(String::new, |s| format!("Mcp-Session-Id: {s}\r\n"));
    // The request's method (and tool) in headers, as 2026-07-28 requires (SEP-2243).
    let method = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v["method"].as_str().map(str::to_owned))
        .unwrap_or_default();
    let params = serde_json::from_str::<serde_json::Value>(body)
        .map(|v| v["params"].clone())
        .unwrap_or_default();
    let name = match method.as_str() {
        "tools/call" => format!(
            "Mcp-Name: {}\r\n",
            params["name"].as_str().unwrap_or_default()
        ),
        m if m.starts_with("tasks/") => {
            format!(
                "Mcp-Name: {}\r\n",
                params["taskId"].as_str().unwrap_or_default()
            )
        }
        _ => String::new(),
    };
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n{session}Mcp-Method: {method}\r\n{name}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: {version}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        addr.port(),
        body.len()
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| e.to_string())?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").ok_or("no head")?;
    let status = head
        .get(9..12)
        .and_then(|s| s.parse().ok())
        .ok_or("no status")?;
    let session = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("mcp-session-id")
            .then(|| value.trim().to_owned())
    });
    Ok(Answer {
        status,
        session,
        body: body.to_owned(),
    })
}

/// The instance that answered `call`, when the answer is the tool's.
fn answered_by(answer: &Answer, call: &str) -> Option<String> {
    if answer.body.contains("\"isError\":true") {
        return None;
    }
    let result = json_result(answer)?;
    let output = &result["structuredContent"];
    (output["call"] == call).then(|| output["instance"].as_str().map(str::to_owned))?
}

fn stateless_call(call: &str) -> String {
    serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {
            "name": "scale.note",
            "arguments": { "call": call },
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": { "name": "scale-out", "version": "1" },
            },
        },
    })
    .to_string()
}

/// The `_meta` of a stateless request from a client that takes tasks.
fn task_meta() -> serde_json::Value {
    serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": { "io.modelcontextprotocol/tasks": {} },
        },
        "io.modelcontextprotocol/clientInfo": { "name": "scale-out", "version": "1" },
    })
}

/// A stateless `tools/call` of `scale.note` from a client that takes tasks, its body
/// holding `hold_ms` before it answers: its task's id.
fn start_task(addr: SocketAddr, call: &str, hold_ms: u64) -> Result<String, String> {
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {
            "name": "scale.note",
            "arguments": { "call": call, "hold_ms": hold_ms },
            "_meta": task_meta(),
        },
    })
    .to_string();
    let answer = post(addr, None, "2026-07-28", &body)?;
    let result =
        json_result(&answer).ok_or_else(|| format!("{} {}", answer.status, answer.body))?;
    result["taskId"]
        .as_str()
        .filter(|_| result["resultType"] == "task")
        .map(str::to_owned)
        .ok_or_else(|| format!("not a task: {result}"))
}

/// `tasks/get` of `id`, stateless: the task, or what came instead.
fn get_task(addr: SocketAddr, id: &str) -> Result<serde_json::Value, String> {
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 4, "method": "tasks/get",
        "params": { "taskId": id, "_meta": task_meta() },
    })
    .to_string();
    let answer = post(addr, None, "2026-07-28", &body)?;
    json_result(&answer).ok_or_else(|| format!("{} {}", answer.status, answer.body))
}

/// The `result` of a JSON-RPC answer (JSON, or an event stream's `data:` line).
fn json_result(answer: &Answer) -> Option<serde_json::Value> {
    let json = answer
        .body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .find(|l| l.contains("\"result\""))
        .unwrap_or(answer.body.trim());
    let value: serde_json::Value = serde_json::from_str(json).ok()?;
    (answer.status == 200 && value["result"].is_object()).then(|| value["result"].clone())
}

fn session_call(call: &str) -> String {
    serde_json::json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": "scale.note", "arguments": { "call": call } },
    })
    .to_string()
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"scale-out","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A new session through nginx; its id.
fn open_session(addr: SocketAddr) -> Result<String, String> {
    let answer = post(addr, None, "2025-11-25", INITIALIZE)?;
    let session = answer
        .session
        .filter(|_| answer.status == 200)
        .ok_or_else(|| format!("initialize: {} {}", answer.status, answer.body))?;
    let done = post(addr, Some(&session), "2025-11-25", INITIALIZED)?;
    if done.status != 202 {
        return Err(format!("initialized: {}", done.status));
    }
    Ok(session)
}

/// What the clients saw: call id -> the instances whose answers they got.
type Seen = Arc<Mutex<HashMap<String, Vec<String>>>>;

/// A stateless client: calls until `stop`, each call sent again until it is answered.
fn stateless_client(addr: SocketAddr, client: usize, stop: Arc<AtomicBool>, seen: Seen) -> usize {
    let mut retries = 0;
    for n in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let call = format!("s{client}-{n}");
        let body = stateless_call(&call);
        let started = Instant::now();
        loop {
            if let Ok(answer) = post(addr, None, "2026-07-28", &body)
                && let Some(instance) = answered_by(&answer, &call)
            {
                seen.lock()
                    .unwrap()
                    .entry(call.clone())
                    .or_default()
                    .push(instance);
                break;
            }
            retries += 1;
            assert!(
                started.elapsed() < Duration::from_secs(15),
                "call {call} was not answered in 15 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    retries
}

/// A session client: calls in its session until `stop`; a new session when its instance is
/// gone. Returns the sessions it opened and whether every answer came from its session's
/// instance.
fn session_client(
    addr: SocketAddr,
    client: usize,
    stop: Arc<AtomicBool>,
    seen: Seen,
) -> (usize, bool) {
    let mut session = open_session(addr).expect("a session");
    let mut sessions = 1;
    let mut affine = true;
    for n in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let call = format!("c{client}-{n}");
        let body = session_call(&call);
        let started = Instant::now();
        loop {
            if let Ok(answer) = post(addr, Some(&session), "2025-11-25", &body) {
                if let Some(instance) = answered_by(&answer, &call) {
                    affine &= session.starts_with(&format!("{instance}."));
                    seen.lock()
                        .unwrap()
                        .entry(call.clone())
                        .or_default()
                        .push(instance);
                    break;
                }
                // Its instance is gone (nginx: 502; a restarted one: 404): a new session.
                if matches!(answer.status, 404 | 502 | 503 | 504)
                    && let Ok(fresh) = open_session(addr)
                {
                    session = fresh;
                    sessions += 1;
                }
            }
            assert!(
                started.elapsed() < Duration::from_secs(15),
                "call {call} was not answered in 15 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    (sessions, affine)
}

fn ran(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The processes started, stopped when this ends: nginx (the last) with `SIGQUIT`, so its
/// workers stop with it; the instances with `SIGKILL`.
struct Processes(Vec<Child>);

impl Drop for Processes {
    fn drop(&mut self) {
        if let Some(mut nginx) = self.0.pop() {
            let _ = Command::new("kill")
                .args(["-QUIT", &nginx.id().to_string()])
                .status();
            let _ = nginx.wait();
        }
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn nginx() -> PathBuf {
    ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from("nginx"))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("serve") {
        serve(&args[1], args[2].parse().expect("a port"), &args[3]);
        return;
    }
    let dir = std::env::temp_dir().join(format!("agentio-scale-out-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a work directory");
    let (port_a, port_b, listen) = (free_port(), free_port(), free_port());
    let exe = std::env::current_exe().expect("this binary");
    let start = |name: &str, port: u16| {
        Command::new(&exe)
            .args(["serve", name, &port.to_string()])
            .arg(dir.join(format!("{name}.log")))
            .stdin(Stdio::null())
            .spawn()
            .expect("an instance starts")
    };
    let mut processes = Processes(vec![start("a", port_a), start("b", port_b)]);
    std::fs::write(
        dir.join("nginx.conf"),
        nginx_conf(&dir, listen, port_a, port_b),
    )
    .expect("the nginx configuration");
    let nginx = Command::new(nginx())
        .arg("-c")
        .arg(dir.join("nginx.conf"))
        .arg("-p")
        .arg(&dir)
        .args(["-g", "daemon off;"])
        .stdin(Stdio::null())
        .spawn()
        .expect("nginx starts (Debian: apt-get install nginx-light)");
    processes.0.push(nginx);
    for (port, what) in [
        (port_a, "instance a"),
        (port_b, "instance b"),
        (listen, "nginx"),
    ] {
        wait_listening(SocketAddr::from(([127, 0, 0, 1], port)), what);
    }
    let addr = SocketAddr::from(([127, 0, 0, 1], listen));

    // 1. Stateless calls spread across both instances.
    let mut by_instance: HashMap<String, usize> = HashMap::new();
    for n in 0..200 {
        let call = format!("spread-{n}");
        let answer = post(addr, None, "2026-07-28", &stateless_call(&call)).expect("nginx answers");
        let instance = answered_by(&answer, &call)
            .unwrap_or_else(|| panic!("call {call}: {} {}", answer.status, answer.body));
        *by_instance.entry(instance).or_default() += 1;
    }
    println!("stateless, 200 calls: {by_instance:?}");
    assert!(
        by_instance.get("a").is_some_and(|n| *n >= 50)
            && by_instance.get("b").is_some_and(|n| *n >= 50),
        "stateless calls did not spread across both instances: {by_instance:?}"
    );

    // 1b. A task's polls reach the instance that holds it: stateless, without affinity, the
    // balancer reads the instance from the task id in `Mcp-Name`.
    let mut task_homes: HashMap<String, usize> = HashMap::new();
    for n in 0..20 {
        let call = format!("task-{n}");
        let id = start_task(addr, &call, 0).expect("a task through nginx");
        let home = id.split('.').next().unwrap_or_default().to_owned();
        let mut polls = 0;
        let task = loop {
            polls += 1;
            let task = get_task(addr, &id).unwrap_or_else(|e| panic!("tasks/get {id}: {e}"));
            assert_eq!(task["taskId"], id.as_str(), "{task}");
            if task["status"] == "completed" || polls > 200 {
                break task;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let output = &task["result"]["structuredContent"];
        assert_eq!(output["call"], call.as_str(), "{task}");
        assert_eq!(
            output["instance"],
            home.as_str(),
            "task {id} ran elsewhere: {task}"
        );
        // Polled a few times more, each poll still finds it.
        for _ in 0..3 {
            let again = get_task(addr, &id).unwrap_or_else(|e| panic!("tasks/get {id}: {e}"));
            assert_eq!(again["status"], "completed", "{again}");
        }
        *task_homes.entry(home).or_default() += 1;
    }
    println!(
        "tasks, 20 started and polled stateless, each poll on the task's instance: {task_homes:?}"
    );
    assert!(
        task_homes.len() == 2,
        "tasks did not spread: {task_homes:?}"
    );

    // 2. Sessions stay on their instance.
    let mut homes: HashMap<String, usize> = HashMap::new();
    for client in 0..8 {
        let session = open_session(addr).expect("a session through nginx");
        let home = session.split('.').next().unwrap_or_default().to_owned();
        for n in 0..20 {
            let call = format!("affinity-{client}-{n}");
            let answer = post(addr, Some(&session), "2025-11-25", &session_call(&call))
                .expect("nginx answers");
            let instance = answered_by(&answer, &call)
                .unwrap_or_else(|| panic!("call {call}: {} {}", answer.status, answer.body));
            assert_eq!(
                instance, home,
                "session {session} was answered by {instance}"
            );
        }
        *homes.entry(home).or_default() += 1;
    }
    println!("sessions, 8 clients x 20 calls, each on its own instance: {homes:?}");
    assert!(homes.len() == 2, "new sessions did not spread: {homes:?}");

    // 2b. Tasks on `b` for after its death: one ended, one still running (its body holds).
    let on_b = |call: &str, hold_ms: u64| {
        (0..20)
            .map(|n| start_task(addr, &format!("{call}-{n}"), hold_ms).expect("a task"))
            .find(|id| id.starts_with("b."))
            .expect("round robin starts a task on b")
    };
    let ended_on_b = on_b("ended-on-b", 0);
    let running_on_b = on_b("running-on-b", 600_000);
    for _ in 0..200 {
        let task = get_task(addr, &ended_on_b).expect("tasks/get");
        if task["status"] == "completed" {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }

    // 3. Kill `b` mid-load.
    let seen: Seen = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let stateless: Vec<_> = (0..12)
        .map(|client| {
            let (stop, seen) = (Arc::clone(&stop), Arc::clone(&seen));
            std::thread::spawn(move || stateless_client(addr, client, stop, seen))
        })
        .collect();
    let sessions: Vec<_> = (0..4)
        .map(|client| {
            let (stop, seen) = (Arc::clone(&stop), Arc::clone(&seen));
            std::thread::spawn(move || session_client(addr, client, stop, seen))
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1_000));
    let before_kill = seen.lock().unwrap().len();
    processes.0[1].kill().expect("SIGKILL to instance b");
    let _ = processes.0[1].wait();
    let killed_at = Instant::now();
    std::thread::sleep(Duration::from_millis(2_000));
    let answered_after = {
        let seen = seen.lock().unwrap();
        seen.len() - before_kill
    };
    stop.store(true, Ordering::Relaxed);
    let retries: usize = stateless
        .into_iter()
        .map(|t| t.join().expect("a client"))
        .sum();
    let mut reopened = 0;
    for t in sessions {
        let (opened, affine) = t.join().expect("a client");
        assert!(
            affine,
            "a session was answered by another instance than its own"
        );
        reopened += opened - 1;
    }
    let seen = seen.lock().unwrap();
    let twice: Vec<_> = seen.iter().filter(|(_, by)| by.len() != 1).collect();
    assert!(twice.is_empty(), "calls answered more than once: {twice:?}");
    let ran_a = ran(&dir.join("a.log"));
    let ran_b = ran(&dir.join("b.log"));
    let run: HashSet<&String> = ran_a.iter().chain(&ran_b).collect();
    let lost: Vec<_> = seen.keys().filter(|call| !run.contains(call)).collect();
    assert!(lost.is_empty(), "answered calls no instance ran: {lost:?}");
    let mut counts: HashMap<&String, usize> = HashMap::new();
    for call in ran_a.iter().chain(&ran_b) {
        *counts.entry(call).or_default() += 1;
    }
    let ran_twice: Vec<_> = counts
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(c, _)| *c)
        .collect();
    // A call run twice is one `b` ran and died before answering; its client sent it again.
    for call in &ran_twice {
        assert!(
            ran_b.contains(call),
            "{call} ran twice, not on the killed instance"
        );
    }
    println!(
        "kill b mid-load: {} calls answered, each exactly once ({answered_after} in the {:.1} s after the kill); {retries} stateless retries; {reopened} sessions reopened on a; {} calls ran twice (in flight on b when it died)",
        seen.len(),
        killed_at.elapsed().as_secs_f64(),
        ran_twice.len(),
    );
    assert!(
        answered_after > 100,
        "calls did not go on after the kill: {answered_after}"
    );
    drop(seen);

    // 4. `b` restarted on its task store: its tasks' polls, routed to it by their ids, are
    // answered again; while it is down, nginx answers them 502 (the client polls again).
    let down = get_task(addr, &ended_on_b).expect_err("b is down");
    assert!(down.starts_with("502"), "a poll while b is down: {down}");
    processes.0[1] = start("b", port_b);
    wait_listening(
        SocketAddr::from(([127, 0, 0, 1], port_b)),
        "instance b again",
    );
    let ended = get_task(addr, &ended_on_b).expect("the ended task, from b's store");
    assert_eq!(ended["status"], "completed", "{ended}");
    assert_eq!(
        ended["result"]["structuredContent"]["instance"], "b",
        "{ended}"
    );
    let running = get_task(addr, &running_on_b).expect("the running task, from b's store");
    assert_eq!(running["status"], "failed", "{running}");
    assert_eq!(running["error"]["code"], -32603, "{running}");
    let said = running["error"]["message"].as_str().unwrap_or_default();
    assert!(
        said.contains("the server stopped while this task ran"),
        "{running}"
    );
    println!(
        "b restarted on its task store: its ended task answered as it ended, its running one failed (the server stopped while it ran); 502 from nginx while it was down"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
