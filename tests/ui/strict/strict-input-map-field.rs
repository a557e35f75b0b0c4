use std::collections::BTreeMap;

use agentio_core::AgentInput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A strict input is written by a model under strict mode, so strict mode must describe it.
#[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
#[agent(strict)]
struct Filters {
    query: String,
    weights: BTreeMap<String, f64>,
}

fn main() {}
