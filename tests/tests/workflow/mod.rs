//! RFC-0024 workflows: wiring, validation, the loader, run states and the `agentio-workflow`
//! command.

mod durable;
mod loader;
mod run;
mod states;
