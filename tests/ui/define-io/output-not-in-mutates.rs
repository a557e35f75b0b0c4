use agentio_core::define_io;
use agentio_tools::{ToolError, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, agentio_core::AgentInput)]
struct Request {
    title: String,
    #[serde(rename = "_workflowFsRoot", default)]
    root: Option<agentio_core::files::FsRoot>,
}

#[derive(Serialize, Deserialize, JsonSchema, agentio_core::AgentOutput)]
struct Report {
    title: String,
}

// A declared output file is a workspace mutation: `mutates` must cover `exports/`.
#[define_io(inputs = Request, outputs = Report, outputs_files = { csv => { path = "exports/<runId>.csv" } })]
/// Exports the sales figures.
#[tool(id = "sales.export", mutates = ["workspace:/reports/*"])]
async fn sales_export(input: Request) -> Result<Report, ToolError> {
    Ok(Report { title: input.title })
}

// No `mutates` at all.
#[define_io(inputs = Request, outputs = Report, outputs_files = { log => { path = "logs/run.txt" } })]
/// Logs the run.
#[tool(id = "sales.log")]
async fn sales_log(input: Request) -> Result<Report, ToolError> {
    Ok(Report { title: input.title })
}

fn main() {}
