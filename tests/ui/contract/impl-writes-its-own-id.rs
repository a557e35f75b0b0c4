use agentio_tools::{ToolContext, ToolError, TypedTool, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
struct Query {
    text: String,
}

struct Finder;

/// Finds things.
#[tool(id = "files.find")]
impl TypedTool for Finder {
    type Input = Query;
    type Output = Query;
    const ID: &'static str = "files.search";

    async fn execute_typed(&self, input: Query, _ctx: &ToolContext) -> Result<Query, ToolError> {
        Ok(input)
    }
}

fn main() {}
