use agentio_core::AgentOutput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
#[agent(strict)]
#[serde(tag = "kind")]
enum Decision {
    Approve { reason: String },
    Reject { reason: String },
}

fn main() {}
