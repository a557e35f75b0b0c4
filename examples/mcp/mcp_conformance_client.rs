//! The MCP conformance suite's client under test (`@modelcontextprotocol/conformance client`),
//! on agent-io's [`McpClient`].
//!
//! The suite starts a scenario's server, runs `cargo run --example mcp_conformance_client --
//! URL` and names the scenario in `MCP_CONFORMANCE_SCENARIO`. The client connects, lists the
//! tools (every page), and calls what the scenario asks for. Scenarios it does not know are
//! answered with the listing alone.

use agentio::serde_json::{Map, Value, json};
use agentio_mcp::McpClient;
use agentio_mcp::rmcp::model::CallToolRequestParams;

fn arguments(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

async fn run(url: &str, scenario: &str) -> Result<(), Box<dyn std::error::Error>> {
    let client = McpClient::connect_http(url).await?;
    let tools = client.list_tools().await?;
    match scenario {
        "tools_call" => {
            let call = CallToolRequestParams::new("add_numbers")
                .with_arguments(arguments(json!({ "a": 5, "b": 3 })));
            let answer = client.peer().call_tool(call).await?;
            eprintln!("add_numbers: {answer:?}");
        }
        "json-schema-2020-12-preservation" => {
            // Send the focal tool's inputSchema back, as received, to the echo tool.
            let focal = tools
                .iter()
                .find(|t| t.name != "echo_schema" && t.name.contains("schema"));
            let echo = tools
                .iter()
                .find(|t| t.name != focal.map_or("", |f| &f.name));
            if let (Some(focal), Some(echo)) = (focal, echo) {
                let schema = Value::Object((*focal.input_schema).clone());
                let call = CallToolRequestParams::new(echo.name.to_string())
                    .with_arguments(arguments(json!({ "schema": schema })));
                client.peer().call_tool(call).await?;
            }
        }
        _ => {}
    }
    client.close().await?;
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .ok_or("usage: mcp_conformance_client URL (the suite names the scenario in MCP_CONFORMANCE_SCENARIO)")?;
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let runtime = agentio::tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run(&url, &scenario))
}
