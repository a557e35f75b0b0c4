use agentio_core::AgentInput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
#[agent(strict)]
struct Move {
    to: (i32, i32),
}

fn main() {}
