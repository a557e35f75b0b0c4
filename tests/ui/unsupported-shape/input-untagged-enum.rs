use agentio_core::AgentInput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
#[serde(untagged)]
enum Target {
    ById { id: u64 },
    ByName { name: String },
}

fn main() {}
