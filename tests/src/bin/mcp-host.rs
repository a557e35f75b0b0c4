//! A host on agent-io's MCP client that answers its server's questions: the client side of
//! `tests/python/test_mcp_client_answers.py`, where the official Python `mcp` SDK's server asks.
//!
//! `mcp-host REVISION TOOL... -- COMMAND ARGS...` starts `COMMAND` as an MCP server over stdio,
//! speaking `REVISION` (`2025-11-25`: the `initialize` handshake, questions arrive as requests
//! from the server; `2026-07-28`: `server/discover`, questions arrive as `input_required`
//! results), imports its tools into a registry (gated, the host's user approving each call), calls
//! each `TOOL` with `{}` through the registry (validated both ways), and prints one JSON line a call:
//! `{"tool": .., "output": ..}` or `{"tool": .., "error": ..}`. The host's user answers every
//! form with `{"name": "Ada", "age": 36}` (or the JSON in `AGENT_IO_HOST_ANSWER`) and its model every prompt with `hi`, from
//! `host-model`; `{"asked": N}` closes the output with how many questions it answered.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use agentio_mcp::McpClient;
use agentio_mcp::rmcp::ClientLifecycleMode;
use agentio_mcp::rmcp::model::ProtocolVersion;
use agentio_tests::host_fixture::Host;
use agentio_tools::{ApprovalDecision, ApprovalRequest, ToolRegistry};
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: mcp-host REVISION TOOL... -- COMMAND ARGS...";
    let split = args.iter().position(|a| a == "--").ok_or(usage)?;
    let (revision, tools) = args[..split].split_first().ok_or(usage)?;
    let (program, program_args) = args[split + 1..].split_first().ok_or(usage)?;
    let lifecycle = match revision.as_str() {
        "2025-11-25" => ClientLifecycleMode::Initialize,
        "2026-07-28" => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
        other => return Err(format!("unknown revision `{other}`; {usage}").into()),
    };
    let mut command = tokio::process::Command::new(program);
    command.args(program_args);
    let answer = match std::env::var("AGENT_IO_HOST_ANSWER") {
        Ok(text) => serde_json::from_str(&text)?,
        Err(_) => json!({ "name": "Ada", "age": 36 }),
    };
    let host = Host::answering(answer);
    let asked = host.asked.clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let client = McpClient::builder()
            .handler(host)
            .lifecycle(lifecycle)
            .spawn(command)
            .await?;
        // The host's user approves each call the server's tools make (an imported tool with no
        // read-only hint is gated, as it should be).
        let approve_all = |_: &ApprovalRequest| ApprovalDecision::Approve;
        let mut registry = ToolRegistry::new().with_approver(Arc::new(approve_all));
        client.import_into(&mut registry, "py").await?;
        for tool in tools {
            let line = match registry.call(&format!("py.{tool}"), json!({})).await {
                Ok(output) => json!({ "tool": tool, "output": output }),
                Err(error) => json!({ "tool": tool, "error": error.to_string() }),
            };
            println!("{line}");
        }
        println!("{}", json!({ "asked": asked.load(Ordering::SeqCst) }));
        client.close().await?;
        Ok(())
    })
}
