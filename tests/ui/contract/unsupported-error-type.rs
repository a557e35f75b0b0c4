use agentio_tools::tool;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
struct Line {
    text: String,
}

/// Reads a line from disk.
#[tool(id = "disk.read")]
async fn read(input: Line) -> Result<Line, std::io::Error> {
    Ok(input)
}

fn main() {}
