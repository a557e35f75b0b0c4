use agentio_core::AgentOutput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
#[agent(name = "weather_report")]
struct Report {
    summary: String,
}

fn main() {}
