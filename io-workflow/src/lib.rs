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
//! - [`journal::Journal`]: durable runs on an embedded database file (redb): every transition
//!   recorded before the run acts on it; [`Executor::start`], [`Executor::reopen`] after the
//!   process died, [`Executor::resume`] for a suspended phase. `restate` (feature `restate`):
//!   the same executor as a Restate workflow, across machines.
//!
//! It is its own crate because it needs a YAML parser that reports positions and an async
//! scheduler, which users of `agentio-core` alone should not pay for.
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
//! - **An optional output returned as `null`** counts as not produced: it is not recorded, and a
//!   downstream input reading it is unresolvable, as a `null` static input is.
//! - **A non-object output** is refused for every phase, declared or not, with an
//!   `OutputTypeMismatchError` whose `key` is empty and `expected_type` is `"object"`; nothing is
//!   wrapped. `null` counts as `{}`.
//! - **The run state machine** is written down as a table on [`WorkflowRun`]; every other
//!   transition is an `InvalidTransitionError`, and an operation on a phase the workflow does not
//!   have an `UnknownPhaseError`; neither is recorded as an RFC event. A workflow is validated
//!   when its run starts. Task ids are `task_{run_id}_{phase}` unless the host supplies its own.
//! - **The document format is closed**: unknown keys are `UnknownKeyError` (with "did you
//!   mean"; `x-` keys are extensions), repeated keys `DuplicateKeyError`, and `openintent`,
//!   `info.name` and each phase's `assign` are required (`MissingKeyError`) as the OpenIntent
//!   workflow format says; a missing `title` is made from the phase name. A workflow built in
//!   Rust may leave `assign` out and bind agents by phase.
//! - **Types** also include enums (`Status: { enum: [approved, rejected] }`), checked at
//!   completion and in typed wiring, and `any` (present, any value); the legacy list form of
//!   `outputs` (`outputs: [revenue, label]`) declares each key required, of type `any`.
//! - **One bound core instance runs one turn at a time** (a turn takes `&mut self`), so phases
//!   that share it run in turn; `Executor::bind_core_factory` gives each task a fresh core so
//!   they run concurrently.
//! - **Durable runs** (beyond the RFC): a transition is written to the journal before the run
//!   acts on it — a claim before its agent starts, a completion before any downstream claim.
//!   Reopened, a run replays its entries through the same state machine (so the same events are
//!   emitted); a phase found claimed and not completed is offered again (`released`), since its
//!   process died with the agent's work unrecorded, unless it may run only once
//!   ([`Executor::at_most_once`], or a registry tool whose AIP-14 contract is not `idempotent`):
//!   then the run fails it with `PhaseInterruptedError`. A suspension is asked for by the agent
//!   ([`TaskContext::suspend`]) and the agent's return value is then not recorded; a resumed
//!   phase is claimed again with the answer in [`TaskContext::resumed_with`]. A run is reopened
//!   only against a workflow with its name and phases (`WorkflowMismatchError`); a recorded
//!   entry that no longer applies (an output declaration changed since) is a
//!   `CorruptJournalError` naming the entry. One process opens a journal file at a time. A run
//!   records values nested at most [`journal::MAX_RECORDED_DEPTH`] (126) levels, so that every
//!   entry written can be read back: a deeper agent output is the agent's `output_invalid`
//!   error on every backend (in memory too, so the backends agree), and a deeper trigger,
//!   initial state or resumption answer is refused before anything is recorded.
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
pub mod journal;
mod load;
mod model;
#[cfg(feature = "restate")]
pub mod restate;
mod run;
mod types;
mod validate;
mod yaml;

pub use crate::errors::{RunError, ValidationError};
pub use crate::executor::{DurableError, Executor, PhaseAgent, PhaseProgress, RunOutcome};
pub use crate::load::MAX_FILE_BYTES;
pub use crate::model::{InputDecl, InputSource, OutputDecl, Phase, TypeDef, TypeRef, Workflow};
pub use crate::run::{Progress, SuspendedPhase, Suspension, TaskContext, TaskState, WorkflowRun};
pub use crate::types::{Mismatch, json_type};
pub use crate::yaml::Position;
