use agentio_core::AgentInput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
#[agent(crate = 5)]
struct Query {
    text: String,
}

fn main() {}
