#![doc = include_str!("../README.md")]
//!
//! # This crate
//!
//! The facade: it re-exports the crates of the family behind features, with the crates their
//! macros and calls need ([`serde`], [`serde_json`], [`schemars`], [`tokio`]), and a [`prelude`]
//! of what a tool or core author touches.
//!
//! | module | package | what it holds | feature |
//! |---|---|---|---|
//! | [`schema`] | `agentio-schema` | the JSON Schema engine: `BoundarySchema`, validation and `SchemaError`, residual validation, client profiles, schema inclusion, limits, rules | always |
//! | [`core`] | `agentio-core` | `AgentInput`/`AgentOutput`, `AgentError`, `AgentCore`, `AgentRuntime`, file contracts (re-exports `schema` at its old paths) | always |
//! | [`tools`] | `agentio-tools` | `#[tool]`, `TypedTool`, `ToolPlugin`, `ToolRegistry`, TOOL.md, provider exports | `tools` (default) |
//! | [`workflow`] | `agentio-workflow` | RFC-0024 workflows, the executor, durable runs (an embedded journal), the command line | `workflows` (default; `restate` adds `workflow::restate`, runs on a Restate server) |
//! | `mcp` | `agentio-mcp` | `McpServer` and `McpClient`: a registry over MCP, an MCP server's tools in a registry; `mcp::auth` for authenticated streamable HTTP, `mcp::tasks` for long calls as MCP tasks, `mcp::skills` for agent skills served and loaded | `mcp` (`jwt` adds `mcp::auth::JwtVerifier`; `oauth` adds `mcp::Connect::http_authorized`, a client of an OAuth-protected server, and `mcp::machine`, a client with no user: a private key JWT with `jwt` too, a workload's JWT, an enterprise-managed token; `dpop` adds `mcp::dpop`, the client's tokens bound to a key of its own (RFC 9449); `task-store` adds `mcp::task_store`, tasks whose records outlive the server process) |
//! | `promptos` | `agentio-promptos` | PromptOS task input, `scc.submit.v1`, verdicts, scope pins, the gateway | `promptos` |
// The macros name the facade `::agentio` wherever they expand, here too.
#[allow(unused_extern_crates)]
extern crate self as agentio;

pub use agentio_core as core;
pub use agentio_schema as schema;
pub use schemars;
pub use serde;
pub use serde_json;
pub use tokio;

pub use agentio_core::files;
pub use agentio_core::{
    AgentContext, AgentCore, AgentError, AgentInput, AgentOutput, AgentRuntime, ErrorCode,
    agent_core, define_io, io,
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

/// The names a program using agent-io reaches for first: the derives and `#[io]`, the core and
/// tool traits, the registry with its call options, progress and registration errors, and the
/// workflow builder.
///
/// ```
/// use agentio::prelude::*;
/// let err = AgentError::new(ErrorCode::InputInvalid, "bad");
/// assert_eq!(err.to_envelope()["ok"], json!(false));
/// # #[cfg(feature = "tools")] {
/// let options = CallOptions { context: json!({ "tenant": "acme" }), ..Default::default() };
/// assert_eq!(options.context["tenant"], "acme");
/// let progress = Progress::new(1.0).with_total(4.0);
/// assert_eq!(progress.total, Some(4.0));
/// # }
/// ```
pub mod prelude {
    pub use crate::schemars::JsonSchema;
    pub use crate::serde::{Deserialize, Serialize};
    pub use crate::serde_json::{Value, json};
    pub use agentio_core::{
        AgentContext, AgentCore, AgentError, AgentInput, AgentOutput, AgentRuntime, ErrorCode,
        agent_core, define_io, io,
    };

    #[cfg(feature = "tools")]
    pub use agentio_tools::{
        CallOptions, Export, Progress, RegistrationError, ToolContext, ToolError, ToolRegistry,
        TypedTool, tool, tool_registry,
    };

    #[cfg(feature = "workflows")]
    pub use agentio_workflow::{Executor, Phase, TypeRef, Workflow};
}
