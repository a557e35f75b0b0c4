use agentio_core::AgentInput;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, AgentInput)]
struct Query {
    text: String,
}

fn main() {}
