use agentio_core::AgentInput;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, AgentInput)]
struct Query {
    text: String,
}

fn main() {}
