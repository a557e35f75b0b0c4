use io_typed_tool::{ToolError, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, io_core::AgentInput, io_core::AgentOutput)]
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
