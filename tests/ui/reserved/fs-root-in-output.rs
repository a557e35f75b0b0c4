use agentio_core::AgentOutput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
struct Done {
    #[serde(rename = "_workflowFsRoot")]
    root: Option<String>,
}

fn main() {}
