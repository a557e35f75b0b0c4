use agentio_core::AgentInput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
#[serde(transparent)]
struct Wrapped {
    inner: Vec<String>,
}

fn main() {}
