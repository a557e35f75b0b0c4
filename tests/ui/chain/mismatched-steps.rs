use io_typed_tool::chain::Then;
use io_typed_tool::{ToolError, tool};

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, io_core::AgentInput, io_core::AgentOutput)]
struct Query {
    q: String,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, io_core::AgentInput, io_core::AgentOutput)]
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
