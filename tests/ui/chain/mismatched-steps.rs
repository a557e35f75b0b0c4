use agentio_tools::chain::Then;
use agentio_tools::{ToolError, tool};

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
struct Query {
    q: String,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
struct Summary {
    text: String,
}

/// Searches.
#[tool(id = "kb.search")]
async fn search(q: Query) -> Result<Summary, ToolError> {
    Ok(Summary { text: q.q })
}

/// Summarizes.
#[tool(id = "kb.summarize")]
async fn summarize(s: Summary) -> Result<Summary, ToolError> {
    Ok(s)
}

fn main() {
    // Fine: `Summary` feeds `summarize`.
    let _ok = SearchTool.then(SummarizeTool);
    // Wrong way round: `summarize` returns a `Summary`, `search` takes a `Query`.
    let _bad = SummarizeTool.then(SearchTool);
}
