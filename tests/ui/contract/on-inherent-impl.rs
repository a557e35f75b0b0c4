use agentio_tools::tool;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
struct Query {
    text: String,
}

struct Finder;

/// Finds things.
#[tool(id = "files.find")]
impl Finder {
    fn new() -> Self {
        Finder
    }
}

fn main() {
    let _ = Finder::new();
}
