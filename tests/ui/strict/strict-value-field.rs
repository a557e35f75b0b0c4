use agentio_core::AgentOutput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
#[agent(strict)]
struct Extraction {
    title: String,
    extra: serde_json::Value,
}

fn main() {}
