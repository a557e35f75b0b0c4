//! Typed workflow I/O contracts (RFC-0024): the executor owns the wiring; cores and tools see
//! a pre-populated input and return a plain value.
//!
//! - [`Workflow`]: the document (`openintent`, `info`, `types`, `workflow` phases), loaded from
//!   YAML with every problem reported at once with its line and column, or built in Rust.
//! - [`WorkflowRun`]: claim-time resolution, pre-handoff population, completion-time
//!   validation, downstream unblocking and suspension, as a state machine.
//! - [`Executor`]: binds `assign` names to cores, tools or functions, checks typed wiring
//!   before anything runs, and runs independent phases concurrently.
//! - The named errors ([`ValidationError`], [`RunError`]) serialize as the RFC's payloads.
//!
//! It is its own crate because it needs a YAML parser that reports positions and an async
//! scheduler, which users of `io-core` alone should not pay for.
//!
//! # Decisions on the RFC's open questions
//!
//! - **Array element typing**: `array<T>` checks every element against `T`.
//! - **Nested validation depth**: deep. A named type's value is an object whose declared fields
//!   are all present with their types, recursively; extra fields are allowed.
//! - **`integer`** is accepted beside the RFC's primitives, so an output can be wired into a
//!   Rust integer field safely; a `number` output wired to an integer field is a wiring error.
//! - **Several type mismatches** in one completion give one `OutputTypeMismatchError` per key
//!   (with the place inside nested values in the message); missing keys give one
//!   `MissingOutputError` listing them all. All are emitted as events.
//! - **An optional output returned as `null`** counts as not produced.
//! - **A non-object output** of a phase with declared outputs is an `OutputTypeMismatchError`
//!   with an empty `key` and `expected_type: "object"`.
//! - **One bound core instance runs one turn at a time** (a turn takes `&mut self`), so phases
//!   that share it run in turn; `Executor::bind_core_factory` gives each task a fresh core so
//!   they run concurrently.
//! - **Load-time errors** carry `line` and `column` beyond the RFC's fields; runtime errors carry
//!   exactly the RFC's fields.
//!
//! # RFC-0024 clauses and the tests that hold them
//!
#![doc = include_str!("../CLAUSES.md")]
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

pub mod cli;
mod errors;
mod executor;
mod load;
mod model;
mod run;
mod types;
mod validate;
mod yaml;

pub use crate::errors::{RunError, ValidationError};
pub use crate::executor::{Executor, PhaseAgent, RunOutcome};
pub use crate::model::{InputDecl, InputSource, OutputDecl, Phase, TypeDef, TypeRef, Workflow};
pub use crate::run::{Progress, SuspendedPhase, TaskContext, TaskState, WorkflowRun};
pub use crate::types::{Mismatch, json_type};
pub use crate::yaml::Position;
