//! The test suite of agent-io, in one binary so that it links once: every module below linked
//! the same crates as a binary of its own. (`schema_cache` stays apart: it installs a counting
//! global allocator. The compile-fail cases are the `agentio-ui-tests` package, `tests/ui/`.)
//!
//! One part alone: `cargo test -p agentio-tests --test suite -- workflow::` (or `integration::`,
//! `mcp::`, `fuzz::`, `compat::`, `residual::`, `promptos::`).

mod compat;
mod dispatch;
mod fuzz;
mod integration;
mod mcp;
mod mcp_client_answers;
mod mcp_common;
mod mcp_hostile;
mod mcp_machine;
mod mcp_skills;
mod mcp_tasks;
mod mcp_voice;
mod promptos;
mod residual;
mod workflow;
