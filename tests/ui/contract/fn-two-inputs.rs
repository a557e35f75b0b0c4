use agentio_tools::{ToolError, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
struct Query {
    text: String,
}

/// Finds things.
#[tool(id = "files.find")]
async fn find(input: Query, limit: usize) -> Result<Query, ToolError> {
    let _ = limit;
    Ok(input)
}

fn main() {}
