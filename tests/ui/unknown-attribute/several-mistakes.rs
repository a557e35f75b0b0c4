use std::collections::HashMap;
use agentio_core::AgentOutput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
#[agent(strict, nmae = "x")]
struct Report {
    by_key: HashMap<String, u8>,
    raw: serde_json::Value,
    #[serde(rename = "_workflowFsRoot")]
    root: Option<String>,
}

fn main() {}
