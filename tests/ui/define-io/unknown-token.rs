use agentio_core::define_io;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
struct Report {
    title: String,
}

#[define_io(inputs = Report, outputs = Report, outputs_files = { report => { path = "reports/<user>/<runId>.md" } })]
struct SalesReport;

fn main() {}
