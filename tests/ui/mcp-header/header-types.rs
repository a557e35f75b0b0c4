use agentio_core::AgentInput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
struct Routed {
    #[schemars(extend("x-mcp-header" = "Region"))]
    region: Option<String>,
    #[schemars(extend("x-mcp-header" = "Score"))]
    score: f64,
}

#[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
#[serde(tag = "kind")]
enum Placed {
    Here {
        #[schemars(extend("x-mcp-header" = "Place"))]
        place: String,
    },
}

fn main() {}
