use agentio_tools::{ToolError, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
struct Query {
    text: String,
}

/// Finds things.
#[tool(id = "Files.Read")]
async fn find(input: Query) -> Result<Query, ToolError> {
    Ok(input)
}

fn main() {}
