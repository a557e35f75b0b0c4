//! Integration tests of agent-io, in one binary so the suite links once.

mod erased;
mod files;
mod hygiene;
mod soundness;
mod tools;
mod workflow;
