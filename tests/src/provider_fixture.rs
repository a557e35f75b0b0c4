//! The tools a model calls in the provider round-trip tests (Rust's, and the providers' own
//! Python SDKs through `provider-turn`): a forecast, a sum, a chart (content instead of an
//! output), a report (an output with an image attached), a gated delete and a slow wait.

use agentio_core::{AgentInput, AgentOutput};
use agentio_tools::content::{Content, Contents};
use agentio_tools::{
    ApprovalDecision, ApprovalRequest, ToolContext, ToolError, ToolRegistry, tool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A city.
#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentInput)]
pub struct City {
    /// The city's name.
    pub city: String,
}

/// A forecast.
#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentOutput)]
pub struct Forecast {
    /// Tomorrow's weather.
    pub summary: String,
}

/// Two numbers.
#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentInput)]
pub struct Pair {
    /// The first.
    pub a: i64,
    /// The second.
    pub b: i64,
}

/// A sum.
#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentOutput)]
pub struct Sum {
    /// a + b.
    pub sum: i64,
}

/// No arguments.
#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
pub struct Nothing {}

/// A note's id.
#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentInput)]
pub struct NoteId {
    /// Which note.
    pub id: String,
}

/// The first bytes of a PNG.
pub const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";

/// Tomorrow's weather in a city.
#[tool(id = "weather.forecast")]
pub async fn forecast(city: City) -> Result<Forecast, ToolError> {
    Ok(Forecast {
        summary: format!("sunny in {}", city.city),
    })
}

/// Adds two numbers.
#[tool(id = "math.add")]
pub async fn add(pair: Pair) -> Result<Sum, ToolError> {
    Ok(Sum {
        sum: pair.a + pair.b,
    })
}

/// Draws a chart.
#[tool(id = "chart.draw")]
pub async fn draw(_: Nothing) -> Result<Contents, ToolError> {
    Ok(Contents::from(vec![
        Content::text("the chart:"),
        Content::image(PNG, "image/png"),
    ]))
}

/// Reports, with the chart attached.
#[tool(id = "chart.report")]
pub async fn report(_: Nothing, ctx: &ToolContext) -> Result<Forecast, ToolError> {
    ctx.attach(Content::image(PNG, "image/png"));
    Ok(Forecast {
        summary: "see the chart".into(),
    })
}

/// Deletes a note (gated: it mutates).
#[tool(id = "notes.delete", mutates = ["database:notes"], approval = "on-mutate")]
pub async fn delete(note: NoteId) -> Result<Nothing, ToolError> {
    let _ = note.id;
    Ok(Nothing {})
}

/// Waits longer than it may.
#[tool(id = "slow.wait", timeout_ms = 20)]
pub async fn wait(_: Nothing) -> Result<Nothing, ToolError> {
    tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    Ok(Nothing {})
}

/// The tools, with an approver that denies every call (so `notes_delete` is answered
/// `approval_denied`).
pub fn registry() -> ToolRegistry {
    let deny = |_: &ApprovalRequest| ApprovalDecision::Deny {
        reason: "the user said no".into(),
    };
    let mut registry = ToolRegistry::new().with_approver(std::sync::Arc::new(deny));
    registry.register(ForecastTool).expect("a valid tool");
    registry.register(AddTool).expect("a valid tool");
    registry.register(DrawTool).expect("a valid tool");
    registry.register(ReportTool).expect("a valid tool");
    registry.register(DeleteTool).expect("a valid tool");
    registry.register(WaitTool).expect("a valid tool");
    registry
}
