//! The example tools served over MCP: a knowledge-base search, a note writer that asks the
//! client's user before each write (through MCP elicitation), and a report renderer.
//!
//! Run it with `cargo run --example mcp_server` (stdio; an MCP host starts it for you, see the
//! README for the configuration to paste), or `cargo run --example mcp_server -- --http 8080`
//! for streamable HTTP at `http://127.0.0.1:8080/mcp`. Notes are written under
//! `$AGENT_IO_NOTES_DIR`, or a folder in the system's temp dir.
//!
//! Everything the MCP client sees was declared once in Rust: the schemas, the annotations
//! (`readOnlyHint`, `destructiveHint`, ...), and the contract the server enforces on each call.

use agentio::serde_json::json;
use agentio::tools::tool_registry;
use agentio_examples::tools::{AppendNoteTool, KbSearch, RenderReportTool};
use agentio_mcp::McpServer;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = tool_registry![KbSearch, AppendNoteTool, RenderReportTool]?;
    let notes = std::env::var_os("AGENT_IO_NOTES_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("agent-io-mcp-example"));
    let server = McpServer::new(registry)?
        .with_server_info("agentio-examples", env!("CARGO_PKG_VERSION"))
        .with_instructions("Search the knowledge base before answering how-to questions.")
        // `notes.append` needs to know where the workspace is; MCP clients cannot say, so the
        // host does, for every call.
        .with_context(json!({ "workspace_root": notes }));

    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = agentio::tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        match args.as_slice() {
            [] => server.serve_stdio().await?,
            [flag, port] if flag == "--http" => {
                let listener =
                    agentio::tokio::net::TcpListener::bind(("127.0.0.1", port.parse()?)).await?;
                // stdout is free here (stdio is not the transport).
                println!("serving MCP at http://{}/mcp", listener.local_addr()?);
                server.serve_http(listener).await?;
            }
            _ => return Err("usage: mcp_server [--http PORT]".into()),
        }
        Ok::<_, Box<dyn std::error::Error>>(())
    })
}
