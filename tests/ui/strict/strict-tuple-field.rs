use agentio_core::AgentOutput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
#[agent(strict)]
struct Route {
    name: String,
    waypoints: Vec<(f64, f64)>,
}

fn main() {}
