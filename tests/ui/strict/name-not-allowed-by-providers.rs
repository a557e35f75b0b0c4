use agentio_core::AgentOutput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
#[agent(strict, name = "weather report!")]
struct Report {
    summary: String,
}

fn main() {}
