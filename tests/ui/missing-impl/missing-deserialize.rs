use agentio_core::AgentOutput;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema, AgentOutput)]
struct Answer {
    text: String,
}

fn main() {}
