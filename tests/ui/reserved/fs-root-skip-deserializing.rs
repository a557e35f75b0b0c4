use agentio_core::AgentInput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
struct Job {
    #[serde(rename = "_workflowFsRoot", skip_deserializing)]
    root: Option<String>,
}

fn main() {}
