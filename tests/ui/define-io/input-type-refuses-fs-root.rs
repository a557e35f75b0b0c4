use agentio_core::define_io;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
#[serde(deny_unknown_fields)]
struct Strict {
    title: String,
}

#[define_io(inputs = Strict, outputs = Strict, inputs_files = { sales => { path = "data/sales.csv" } })]
struct SalesReport;

fn main() {}
