//! Typed tools and their AIP-14 contracts.
//!
//! This crate is where `TypedTool`, the tool contract, the enforcing registry and TOOL.md
//! rendering live; it is being built (see the project's tool-contract issue). Today it only
//! re-exports the boundary error that every tool failure uses.

pub use io_core::{AgentError as ToolError, ErrorCode};
