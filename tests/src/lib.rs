//! Shared fixtures of the agent-io test suite (the tests themselves are under `tests/`).

#[cfg(feature = "jwt")]
pub mod auth_fixture;
pub mod durable_fixture;
pub mod host_fixture;
pub mod mcp_fixture;
pub mod provider_fixture;
pub mod voice_fixture;
