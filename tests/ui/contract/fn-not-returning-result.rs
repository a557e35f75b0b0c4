use io_typed_tool::tool;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, io_core::AgentInput, io_core::AgentOutput)]
struct Query {
    text: String,
}

/// Finds things.
#[tool(id = "files.find")]
async fn find(input: Query) -> Query {
    input
}

fn main() {}
