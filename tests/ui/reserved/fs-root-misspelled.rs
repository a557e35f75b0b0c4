use agentio_core::AgentInput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
struct Job {
    workflow_fs_root: Option<String>,
    input_key: String,
}

fn main() {}
