use agentio_core::define_io;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
struct Report {
    title: String,
}

#[define_io(inputs = Report, outputs = Report, input_files = { sales => { path = "data/sales.csv" } })]
struct SalesReport;

fn main() {}
