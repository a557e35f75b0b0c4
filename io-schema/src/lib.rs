//! The JSON Schema engine of agent-io: it knows JSON Schema (Draft 2020-12), serde and
//! schemars, and nothing of agents or tools. `agentio-core` builds its boundaries on it and
//! re-exports it; see the README for a tour.
//!
//! Its modules are layered, each using only those below it:
//!
//! - vocabulary: [`pointer`](mod@pointer) (JSON pointers), `types` (JSON type sets), [`Violation`],
//!   `report` ([`profiles::Refusal`], [`profiles::Relaxation`]), `refs` (a schema's root
//!   references);
//! - bounds and rules: [`limits`] (untrusted JSON), [`rules`] (cross-field rules), [`bounds`];
//! - forms of a schema: `strict` (OpenAI strict mode), [`profiles`] (every client);
//! - checking: [`residual`] (what serde leaves to check), [`compat`] (schema inclusion);
//! - the boundary: [`BoundarySchema`] (built once per type, validation, [`SchemaError`]) and
//!   its decoding and encoding.
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

mod boundary;
pub mod bounds;
mod codec;
pub mod compat;
mod error;
mod formats;
mod headers;
pub mod limits;
pub mod pointer;
pub mod profiles;
mod refs;
mod report;
pub mod residual;
pub mod rules;
mod strict;
mod types;
mod violation;

pub use crate::boundary::{BoundarySchema, Direction, MAX_VIOLATIONS};
pub use crate::error::{SchemaError, SchemaErrorCode};
pub use crate::strict::StrictModeError;
pub use crate::violation::Violation;
