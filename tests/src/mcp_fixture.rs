//! The tools the MCP tests serve: one of each behaviour a client must see.

use std::time::Duration;

use agentio_core::{AgentInput, AgentOutput, ErrorCode};
use agentio_tools::{Progress, ToolContext, ToolError, ToolRegistry, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Two bounded integers.
#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentInput)]
#[serde(deny_unknown_fields)]
pub struct AddInput {
    /// The first addend.
    #[schemars(range(min = -1000, max = 1000))]
    pub a: i64,
    /// The second addend.
    #[schemars(range(min = -1000, max = 1000))]
    pub b: i64,
}

/// A sum.
#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentOutput)]
pub struct Sum {
    /// `a + b`.
    pub sum: i64,
}

/// Adds two integers between -1000 and 1000.
#[tool(id = "fixture.add", idempotent)]
pub async fn add(input: AddInput) -> Result<Sum, ToolError> {
    Ok(Sum {
        sum: input.a + input.b,
    })
}

/// How long to work.
#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentInput)]
pub struct WorkInput {
    /// Steps of 20 ms each.
    #[schemars(range(min = 1, max = 10000))]
    pub steps: u32,
}

/// What was done.
#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentOutput)]
pub struct WorkDone {
    /// Steps completed.
    pub steps: u32,
}

/// Works `steps` × 20 ms, reporting progress after each step.
#[tool(id = "fixture.work", timeout_ms = 600000)]
pub async fn work(input: WorkInput, ctx: &ToolContext) -> Result<WorkDone, ToolError> {
    for step in 1..=input.steps {
        tokio::time::sleep(Duration::from_millis(20)).await;
        ctx.report_progress(
            Progress::new(f64::from(step))
                .with_total(f64::from(input.steps))
                .with_message(format!("step {step} of {}", input.steps)),
        );
    }
    Ok(WorkDone { steps: input.steps })
}

/// A line for the ledger.
#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
pub struct Entry {
    /// The text recorded.
    pub text: String,
}

/// Records a line in the ledger; a person approves every call.
#[tool(id = "fixture.record", approval = "always", mutates = ["external:ledger"], risk_level = 2)]
pub async fn record(entry: Entry) -> Result<Entry, ToolError> {
    Ok(entry)
}

/// Fails the way a tool body fails: with a domain code of its own.
#[tool(id = "fixture.refuse")]
pub async fn refuse(_entry: Entry) -> Result<Entry, ToolError> {
    Err(ToolError::new(
        ErrorCode::Other("ledger:closed".into()),
        "the ledger is closed for the day",
    ))
}

/// A word count; a plain number, so its output is not an object.
#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentOutput)]
#[serde(transparent)]
pub struct Count(pub u64);

/// Counts the words of a text (its output is a bare number).
#[tool(id = "fixture.count")]
pub async fn count(entry: Entry) -> Result<Count, ToolError> {
    Ok(Count(entry.text.split_whitespace().count() as u64))
}

/// Every fixture tool in one registry.
pub fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry.register(AddTool).expect("fixture.add registers");
    registry.register(WorkTool).expect("fixture.work registers");
    registry
        .register(RecordTool)
        .expect("fixture.record registers");
    registry
        .register(RefuseTool)
        .expect("fixture.refuse registers");
    registry
        .register(CountTool)
        .expect("fixture.count registers");
    registry
}

/// `auth.whoami`: answers the caller its context carries (`{ "subject", "scopes" }`, or
/// `{ "subject": null }` without one).
struct WhoAmI;

impl agentio_tools::ToolPlugin for WhoAmI {
    fn tool_contract(&self) -> agentio_tools::ToolContract {
        agentio_tools::ToolContract::new(
            "auth.whoami",
            "1.0.0",
            "Says who is calling.",
            serde_json::json!({ "type": "object" }),
            serde_json::json!({ "type": "object" }),
        )
    }

    fn execute<'a>(
        &'a self,
        _input: serde_json::Value,
        ctx: &'a agentio_tools::ToolContext,
    ) -> agentio_core::BoxFuture<'a, Result<serde_json::Value, agentio_tools::ToolError>> {
        let answer = match ctx.caller() {
            Some(caller) => {
                serde_json::json!({ "subject": caller.subject, "scopes": caller.scopes })
            }
            None => serde_json::json!({ "subject": null }),
        };
        Box::pin(async move { Ok(answer) })
    }
}

/// Registers `auth.whoami` in `registry`.
pub fn add_whoami(registry: &mut agentio_tools::ToolRegistry) {
    registry
        .register_plugin(std::sync::Arc::new(WhoAmI))
        .expect("auth.whoami registers");
}
