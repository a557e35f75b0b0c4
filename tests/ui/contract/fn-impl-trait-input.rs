use agentio_core::{AgentInput, AgentOutput};
use agentio_tools::{ToolError, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
struct Query { q: String }

#[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
struct Hits { titles: Vec<String> }

/// Searches.
#[tool(id = "kb.search")]
async fn search(query: impl Into<Query>) -> Result<Hits, ToolError> {
    Ok(Hits { titles: vec![query.into().q] })
}

fn main() {}
