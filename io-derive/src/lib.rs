//! The macros of agent-io. Use them through `agentio_core`, which re-exports them; the generated
//! code names `::agentio_core` and `::agentio_tools`, or `::agentio::core` and `::agentio::tools` in a
//! crate that depends only on the `agentio` facade (override with `#[agent(crate = "...")]`).
//!
//! - `#[derive(AgentInput)]` and `#[derive(AgentOutput)]`: schema-carrying boundary types.
//! - `#[agent_core]`: fills in the default turn types on an `impl AgentCore` block.
//!
//! Each entry point parses and hands over to its module; the rules live in `check`, the
//! generated code in `expand`.

mod agent_core;
mod attr;
mod check;
mod define_io;
mod expand;
mod io_type;
mod mcp_header;
mod naming;
mod paths;
mod shape;
mod side;
mod tool;
mod ty;
#[cfg(test)]
mod ui_replay;

use proc_macro::TokenStream;

/// The derive behind `agentio_core::AgentInput`, where it is documented.
#[proc_macro_derive(AgentInput, attributes(agent))]
pub fn derive_agent_input(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::derive(&input, side::Side::Input).into()
}

/// The derive behind `agentio_core::AgentOutput`, where it is documented.
#[proc_macro_derive(AgentOutput, attributes(agent))]
pub fn derive_agent_output(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::derive(&input, side::Side::Output).into()
}

/// The attribute behind `agentio_core::agent_core`, where it is documented.
#[proc_macro_attribute]
pub fn agent_core(args: TokenStream, item: TokenStream) -> TokenStream {
    agent_core::expand(args.into(), item.into()).into()
}

/// The attribute behind `agentio_core::io`, where it is documented.
#[proc_macro_attribute]
pub fn io(args: TokenStream, item: TokenStream) -> TokenStream {
    io_type::expand(args.into(), item.into()).into()
}

/// The attribute behind `agentio_tools::tool`, where it is documented.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(args.into(), item.into()).into()
}

/// The attribute behind `agentio_core::define_io`, where it is documented.
#[proc_macro_attribute]
pub fn define_io(args: TokenStream, item: TokenStream) -> TokenStream {
    define_io::expand(args.into(), item.into()).into()
}
