//! MCP for agent-io: serve a [`ToolRegistry`](agentio_tools::ToolRegistry) to any MCP client,
//! and import any MCP server's tools into one.
//!
//! Both sides are built on [rmcp](https://docs.rs/rmcp), the official Rust MCP SDK: its
//! `ServerHandler`, its client, and its stdio, child-process and streamable HTTP transports.
//! This crate adds what rmcp leaves to each server: every call is validated against the schema
//! the server advertises, both ways, under the tool's AIP-14 contract.
//!
//! - [`McpServer`]: a registry as an MCP server, over stdio ([`McpServer::serve_stdio`]) or
//!   streamable HTTP ([`McpServer::serve_http`], or [`McpServer::http_service`] to mount the
//!   tower service in a router of your own). A tool's calls can run as MCP tasks
//!   ([`McpServer::with_task_support`], the Tasks extension: see [`tasks`]), and it can serve
//!   a folder of agent skills ([`McpServer::with_skills`], the Skills extension: see [`skills`]).
//! - [`McpClient`]: a connection to an MCP server (a child process or an HTTP endpoint)
//!   whose tools [`McpClient::import_into`] registers as contract-enforced tools: untrusted
//!   by default (every imported tool needs approval, whatever its annotations claim) and
//!   bounded ([`ImportOptions`]: request timeouts, pages, tools, schema size, nesting and
//!   reference expansion). [`McpClient::builder`] ([`Connect`]) gives it an rmcp
//!   `ClientHandler` that answers the server's questions (sampling, elicitation, roots) under
//!   either protocol revision, another lifecycle, or an OAuth authorization (feature `oauth`,
//!   on rmcp's OAuth client; a refused one is [`ClientError::Unauthorized`] with the server's
//!   challenge; a client with no user authorizes with `machine`: a private key JWT, a
//!   workload's JWT, or an enterprise-managed token; with feature `dpop`, tokens bound to a
//!   key of the client's, `dpop`). [`McpClient::load_skill`] loads a server's skill only when its files are the
//!   ones its entry lists ([`skills`]).
//!
//! The crate is separate from `agentio-tools` because it needs rmcp, Tokio's networking and
//! hyper; a registry that never speaks MCP does not build them.
//!
//! ```
//! use agentio_mcp::{ImportOptions, McpClient, McpServer};
//! use agentio_tools::{ToolError, ToolRegistry, tool};
//! use serde_json::json;
//!
//! #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
//! struct Sum { a: i64, b: i64, #[serde(default)] total: i64 }
//!
//! /// Adds two numbers.
//! #[tool(id = "math.add")]
//! async fn add(s: Sum) -> Result<Sum, ToolError> { Ok(Sum { total: s.a + s.b, ..s }) }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
//! runtime.block_on(async {
//!     let mut registry = ToolRegistry::new();
//!     registry.register(AddTool)?;
//!     // Serve it on a loopback port, then import it back through an MCP client.
//!     let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//!     let url = format!("http://{}/mcp", listener.local_addr()?);
//!     tokio::spawn(McpServer::new(registry)?.serve_http(listener));
//!
//!     let client = McpClient::connect_http(&url).await?;
//!     let mut local = ToolRegistry::new();
//!     // Our own server: trusted, so its read-only tool needs no approval. (By default an
//!     // imported tool is gated, whatever the server says of it.)
//!     let trusted = ImportOptions::default().trusted();
//!     let imported = client.import_into_with(&mut local, "remote", &trusted).await?;
//!     assert_eq!(imported[0].tool_id, "remote.math.add");
//!     let sum = local.call("remote.math.add", json!({ "a": 2, "b": 3 })).await?;
//!     assert_eq!(sum["total"], 5);
//!     // The advertised schema is enforced before anything is sent.
//!     let err = local.call("remote.math.add", json!({ "a": "two", "b": 3 })).await.unwrap_err();
//!     assert_eq!(err.violations()[0].pointer, "/a");
//!     Ok::<_, Box<dyn std::error::Error>>(())
//! })
//! # }
//! ```

mod answer;
pub mod auth;
mod client;
mod compose;
mod connect;
#[cfg(feature = "dpop")]
pub mod dpop;
mod front;
mod gate;
#[cfg(feature = "oauth")]
pub mod machine;
#[cfg(feature = "dpop")]
pub mod proofs;
pub mod rounds;
mod server;
pub mod sessions;
pub mod skills;
#[cfg(feature = "task-store")]
pub mod task_store;
pub mod tasks;
#[cfg(feature = "oauth")]
mod token;
mod voice;

pub use crate::answer::{MAX_INPUT_REQUESTS, MAX_INPUT_ROUNDS};
pub use crate::client::{
    ClientError, DEFAULT_REQUEST_TIMEOUT, ImportOptions, ImportedTool, McpClient, RefusedTool,
};
pub use crate::connect::Connect;
pub use crate::server::{
    APPROVAL_INPUT_KEY, DEFAULT_CALLS_PER_WORKER, DEFAULT_HEADER_READ_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_PAGE_SIZE, McpServer, ServeError,
};
/// The MCP SDK this crate is built on, for what it does not wrap.
pub use rmcp;
