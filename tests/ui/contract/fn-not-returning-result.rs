use agentio_tools::tool;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
struct Query {
    text: String,
}

/// Finds things.
#[tool(id = "files.find")]
async fn find(input: Query) -> Query {
    input
}

fn main() {}
