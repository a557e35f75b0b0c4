use std::collections::BTreeMap;
use agentio_core::AgentOutput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
#[agent(strict)]
struct Report {
    sections: Option<Vec<BTreeMap<String, String>>>,
}

fn main() {}
