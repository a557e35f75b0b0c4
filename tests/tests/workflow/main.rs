//! RFC-0024 workflows: wiring, validation, the loader, run states and the `agentio-workflow`
//! command. A binary of its own, apart from `integration`: a change to agentio-workflow relinks
//! only this one (the mutation runs of agentio-workflow take half the time).

mod loader;
mod run;
mod states;
