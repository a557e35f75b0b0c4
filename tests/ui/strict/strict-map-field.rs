use std::collections::HashMap;
use agentio_core::AgentOutput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
#[agent(strict)]
struct Scores {
    summary: String,
    by_team: HashMap<String, u32>,
}

fn main() {}
