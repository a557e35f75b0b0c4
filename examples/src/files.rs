//! A tool with a file contract: it reads a staged CSV and writes a markdown report.

use agentio::core::files::FsRoot;
use agentio::core::{ErrorCode, define_io};
use agentio::io;
use agentio::tools::{ToolError, tool};

/// What to summarise.
#[io(input)]
#[derive(Debug)]
#[serde(deny_unknown_fields)]
pub struct SalesInput {
    /// The report's title.
    pub title: String,
    /// The scratch root, injected by the host (never by the caller).
    #[serde(
        rename = "_workflowFsRoot",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub root: Option<FsRoot>,
}

/// The summary.
#[io(output)]
#[derive(Debug)]
pub struct SalesOutput {
    /// Rows read from the CSV.
    pub rows: u32,
    /// The sum of the `amount` column.
    pub total: f64,
}

/// Summarises `data/sales.csv` (columns `region,amount`) and writes a markdown report to
/// `reports/<isoDate>/<runId>.md`.
#[define_io(
    inputs = SalesInput,
    outputs = SalesOutput,
    inputs_files = { sales => { path = "data/sales.csv", mode = "ro", content_type = "text/csv" } },
    outputs_files = { report => { path = "reports/<isoDate>/<runId>.md", mode = "rw", content_type = "text/markdown" } },
)]
#[tool(id = "sales.report", version = "1.0.0", mutates = ["workspace:/reports"], approval = "on-mutate", risk_level = 1)]
pub async fn sales_report(input: SalesInput) -> Result<SalesOutput, ToolError> {
    let root = input
        .root
        .ok_or_else(|| ToolError::internal("the host did not stage the files"))?;
    let csv = std::fs::read_to_string(root.file("sales")).map_err(|err| {
        ToolError::new(
            ErrorCode::UpstreamError,
            "the staged sales file could not be read",
        )
        .with_operator_detail(err.to_string())
    })?;
    let mut rows = 0u32;
    let mut total = 0.0;
    let mut lines = Vec::new();
    for (number, line) in csv.lines().enumerate().skip(1) {
        let Some((region, amount)) = line.split_once(',') else {
            continue;
        };
        let amount: f64 = amount.trim().parse().map_err(|_| {
            ToolError::new(
                ErrorCode::InputInvalid,
                format!("line {} of the sales file has no number", number + 1),
            )
        })?;
        rows += 1;
        total += amount;
        lines.push(format!("| {region} | {amount:.2} |"));
    }
    let report = format!(
        "# {}\n\n| region | amount |\n|---|---|\n{}\n\nTotal: {total:.2}\n",
        input.title,
        lines.join("\n")
    );
    std::fs::write(root.file("report"), report).map_err(|err| {
        ToolError::new(ErrorCode::UpstreamError, "the report could not be written")
            .with_operator_detail(err.to_string())
    })?;
    Ok(SalesOutput { rows, total })
}
