use agentio_core::AgentInput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
struct Routed {
    #[schemars(extend("x-mcp-header" = "My Region"))]
    region: String,
    #[schemars(extend("x-mcp-header" = "Zone"))]
    zone: String,
    #[schemars(extend("x-mcp-header" = "zone"))]
    zone_again: String,
}

fn main() {}
