use agentio_core::AgentInput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
enum Command {
    Stop,
    Move { x: f64, y: f64 },
}

fn main() {}
