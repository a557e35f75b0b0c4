//! agent-io: typed I/O for Rust agents and tools, in one dependency.
//!
//! This crate re-exports the others behind features — [`core`] (always: the derives, the
//! boundary, the erased runtime, file contracts), [`tools`] (feature `tools`: typed tools, the
//! registry, TOOL.md, provider exports) and [`workflow`] (feature `workflows`) — together with
//! the crates their derives and calls need: [`serde`], [`serde_json`], [`schemars`] and
//! [`tokio`]. agent-io's own derives and attributes find their crates through this one.
//! serde's and schemars' derives need to be told where they are, once per type:
//!
//! ```
//! use agentio::prelude::*;
//!
//! /// A question.
//! #[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
//! #[serde(crate = "agentio::serde")]
//! #[schemars(crate = "agentio::schemars")]
//! struct Ask {
//!     question: String,
//! }
//!
//! /// An answer.
//! #[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
//! #[serde(crate = "agentio::serde")]
//! #[schemars(crate = "agentio::schemars")]
//! struct Answer {
//!     text: String,
//! }
//!
//! /// Answers by echoing.
//! #[tool(id = "demo.echo")]
//! async fn echo(input: Ask) -> Result<Answer, ToolError> {
//!     Ok(Answer { text: input.question })
//! }
//!
//! let registry = tool_registry![echo].expect("a valid contract");
//! let runtime = agentio::tokio::runtime::Builder::new_current_thread()
//!     .enable_time()
//!     .build()
//!     .expect("a runtime");
//! let out = runtime.block_on(registry.call("demo.echo", json!({ "question": "hi" })));
//! assert_eq!(out.expect("a valid call")["text"], "hi");
//! ```
//!
//! | crate | what it holds | feature |
//! |---|---|---|
//! | [`core`] (`agentio-core`) | `AgentInput`/`AgentOutput`, schemas and validation, `AgentError`, `AgentCore`, `AgentRuntime`, file contracts, schema profiles | always |
//! | [`tools`] (`agentio-tools`) | `#[tool]`, `TypedTool`, `ToolPlugin`, `ToolRegistry`, TOOL.md, provider exports | `tools` (default) |
//! | [`workflow`] (`agentio-workflow`) | RFC-0024 workflows, the executor, the command line | `workflows` (default) |
//! | `mcp` (`agentio-mcp`) | `McpServer` and `McpClient`: a registry over MCP, an MCP server's tools in a registry | `mcp` |
//! | `promptos` (`agentio-promptos`) | PromptOS task input, `scc.submit.v1`, verdicts, scope pins, the gateway | `promptos` |

pub use agentio_core as core;
pub use schemars;
pub use serde;
pub use serde_json;
pub use tokio;

pub use agentio_core::files;
pub use agentio_core::{
    AgentContext, AgentCore, AgentError, AgentInput, AgentOutput, AgentRuntime, ErrorCode,
    agent_core, define_io,
};

#[cfg(feature = "tools")]
pub use agentio_tools as tools;
#[cfg(feature = "tools")]
pub use agentio_tools::{
    Export, ToolContext, ToolContract, ToolError, ToolRegistry, TypedTool, tool, tool_registry,
};

#[cfg(feature = "workflows")]
pub use agentio_workflow as workflow;

/// MCP: [`McpServer`](agentio_mcp::McpServer) serves a registry to any MCP client, and
/// [`McpClient`](agentio_mcp::McpClient) imports an MCP server's tools (feature `mcp`).
#[cfg(feature = "mcp")]
pub use agentio_mcp as mcp;

/// PromptOS: typed [`TaskInput`](agentio_promptos::TaskInput), [`Submit`](agentio_promptos::Submit) and
/// [`Verdict`](agentio_promptos::Verdict), scope pins, and the gateway (feature `promptos`).
#[cfg(feature = "promptos")]
pub use agentio_promptos as promptos;

/// The names a program using agent-io reaches for first.
///
/// ```
/// use agentio::prelude::*;
/// let err = AgentError::new(ErrorCode::InputInvalid, "bad");
/// assert_eq!(err.to_envelope()["ok"], json!(false));
/// ```
pub mod prelude {
    pub use crate::schemars::JsonSchema;
    pub use crate::serde::{Deserialize, Serialize};
    pub use crate::serde_json::{Value, json};
    pub use agentio_core::{
        AgentContext, AgentCore, AgentError, AgentInput, AgentOutput, AgentRuntime, ErrorCode,
        agent_core, define_io,
    };

    #[cfg(feature = "tools")]
    pub use agentio_tools::{
        Export, ToolContext, ToolError, ToolRegistry, TypedTool, tool, tool_registry,
    };

    #[cfg(feature = "workflows")]
    pub use agentio_workflow::{Executor, Phase, TypeRef, Workflow};
}
