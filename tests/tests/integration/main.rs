//! Integration tests of agent-io, in one binary so the suite links once.

mod erased;
mod hygiene;
mod soundness;
mod tools;
