//! The search tool the registry and dispatch benches share: `SearchArgs {query, limit 1..=100,
//! filters, cursor}` in, ten hits out, in the peers' harness shape.

use agentio_core::{AgentInput, AgentOutput};
use agentio_tools::{ToolError, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, AgentInput)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchArgs {
    #[schemars(length(min = 1, max = 200))]
    pub(crate) query: String,
    #[schemars(range(min = 1, max = 100))]
    pub(crate) limit: u32,
    #[serde(default)]
    pub(crate) filters: Vec<String>,
    #[serde(default)]
    pub(crate) cursor: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, AgentOutput)]
pub(crate) struct Hit {
    pub(crate) id: String,
    pub(crate) title: String,
    #[schemars(range(min = 0.0, max = 1.0))]
    pub(crate) score: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, AgentOutput)]
pub(crate) struct SearchResult {
    pub(crate) hits: Vec<Hit>,
    pub(crate) next_cursor: Option<String>,
}

pub(crate) fn body(args: &SearchArgs) -> SearchResult {
    SearchResult {
        hits: (0..args.limit.min(10))
            .map(|i| Hit {
                id: format!("doc-{i}"),
                title: format!("{} result {i}", args.query),
                score: 1.0 / f64::from(i + 1),
            })
            .collect(),
        next_cursor: Some("page-2".into()),
    }
}

/// Searches.
#[tool(id = "kb.search", idempotent)]
pub(crate) async fn search(args: SearchArgs) -> Result<SearchResult, ToolError> {
    Ok(body(&args))
}
