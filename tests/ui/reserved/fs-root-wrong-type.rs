use agentio_core::AgentInput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
struct Job {
    #[serde(rename = "_workflowFsRoot")]
    root: u64,
}

fn main() {}
