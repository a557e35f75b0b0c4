use agentio_core::AgentOutput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
#[agent(strict)]
struct Answer {
    text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    source: Option<String>,
}

fn main() {}
