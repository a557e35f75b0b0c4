use agentio_tools::{ToolError, tool, tool_registry};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
struct Query {
    text: String,
}

/// Finds files.
#[tool(id = "find")]
async fn find_files(input: Query) -> Result<Query, ToolError> {
    Ok(input)
}

/// Finds notes.
#[tool(id = "find")]
async fn find_notes(input: Query) -> Result<Query, ToolError> {
    Ok(input)
}

fn main() {
    let _registry = tool_registry![FindFilesTool, FindNotesTool];
}
