//! The MCP fixture server the client tests drive (Rust's rmcp client, Python's `mcp` SDK).
//!
//! `mcp-fixture stdio` serves over stdin and stdout; `mcp-fixture http` binds a loopback port
//! and prints `http://127.0.0.1:PORT/mcp` as its first line, then serves until killed.
//! `mcp-fixture http-auth` does the same as an OAuth protected resource (tokens verified
//! against the fixture JWKS, `fixture.record` requiring the scope `notes:write`), and prints a
//! second line: a JSON object of tokens (`valid`, `wrong_audience`, `expired`, `no_scope`).
//! With `AGENT_IO_FIXTURE_VOICE` set, it also serves the voice tools (`voice.chart`,
//! `voice.chatty`, `voice.ask`, `voice.muse`, ...: content, log lines, questions) and an rmcp
//! handler's resource (`docs://readme`) beside them.
//! With `AGENT_IO_AUDIT_FILE` set, every call's audit record is appended there as a JSON line,
//! so a client test can see what the server did with a call it answered nothing to.
//! With `AGENT_IO_TASK_STORE` set to a file, `fixture.work` may run as an MCP task, and the
//! server keeps its tasks there (`agentio_mcp::task_store`), for the test that kills the
//! process mid-task and starts another on the same file.

use std::io::Write;
use std::sync::{Arc, Mutex};

use agentio_tools::{AuditRecord, AuditSink};

use agentio_mcp::McpServer;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "stdio".into());
    let mut registry = agentio_tests::mcp_fixture::registry();
    if let Some(path) = std::env::var_os("AGENT_IO_AUDIT_FILE") {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        registry = registry.with_audit_sink(Arc::new(JsonLines(Mutex::new(file))));
    }
    if mode == "http-auth" {
        agentio_tests::mcp_fixture::add_whoami(&mut registry);
    }
    // The tools that speak beyond their output (content, log lines, questions), for the
    // clients that check those.
    if std::env::var_os("AGENT_IO_FIXTURE_VOICE").is_some() {
        agentio_tests::voice_fixture::add_to(&mut registry);
    }
    let mut server = McpServer::new(registry)?
        .with_server_info("agent-io-fixture", env!("CARGO_PKG_VERSION"))
        .with_page_size(2);
    // ... with an rmcp handler's resource beside them.
    if std::env::var_os("AGENT_IO_FIXTURE_VOICE").is_some() {
        server = server.with_handler(agentio_tests::voice_fixture::Docs);
    }
    if let Some(path) = std::env::var_os("AGENT_IO_TASK_STORE") {
        let store = agentio_mcp::task_store::TaskStore::open(path)?;
        server = server
            .with_task_support("fixture.work", agentio_mcp::tasks::TaskSupport::Optional)?
            .with_task_store(store);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        match mode.as_str() {
            "stdio" => server.serve_stdio().await?,
            "http" => {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
                println!("http://{}/mcp", listener.local_addr()?);
                server.serve_http(listener).await?;
            }
            #[cfg(feature = "jwt")]
            "http-auth" => {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
                let url = format!("http://{}/mcp", listener.local_addr()?);
                let server = agentio_tests::auth_fixture::protect(server, &url)?;
                use agentio_tests::auth_fixture::token;
                let tokens = serde_json::json!({
                    "valid": token(&url, 600, "notes:read notes:write", "alice"),
                    "no_scope": token(&url, 600, "notes:read", "bob"),
                    "wrong_audience": token("http://elsewhere.example/mcp", 600, "notes:write", "mallory"),
                    "expired": token(&url, -3600, "notes:write", "alice"),
                });
                println!("{url}");
                println!("{tokens}");
                server.serve_http(listener).await?;
            }
            other => {
                return Err(format!(
                    "unknown mode `{other}`: use stdio, http or (built with `--features jwt`) http-auth"
                )
                .into());
            }
        }
        Ok(())
    })
}

/// Audit records as JSON lines.
struct JsonLines(Mutex<std::fs::File>);

impl AuditSink for JsonLines {
    fn record(&self, record: AuditRecord) {
        if let (Ok(mut file), Ok(line)) = (self.0.lock(), serde_json::to_string(&record)) {
            let _ = writeln!(file, "{line}");
        }
    }
}
