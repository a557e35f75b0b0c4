use io_typed_tool::{ToolError, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, io_core::AgentInput, io_core::AgentOutput)]
struct Query {
    text: String,
}

/// Finds things.
#[tool(id = "files.find", mutates = ["workspace:/index"], approval = "auto")]
async fn find(input: Query) -> Result<Query, ToolError> {
    Ok(input)
}

fn main() {}
