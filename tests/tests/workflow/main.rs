//! RFC-0024 workflows: wiring, validation, the loader, run states and the `agent-io-workflow`
//! command. A binary of its own, apart from `integration`: a change to io-workflow relinks
//! only this one (the mutation runs of io-workflow take half the time).

mod loader;
mod run;
mod states;
