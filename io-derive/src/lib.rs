//! The macros of agent-io. Use them through `io_core`, which re-exports them; the generated
//! code names `::io_core` and `::io_typed_tool`, or `::agent_io::core` and `::agent_io::tools` in a
//! crate that depends only on the `agent-io` facade (override with `#[agent(crate = "...")]`).
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
mod naming;
mod paths;
mod tool;
mod ty;

use proc_macro::TokenStream;

/// Implements `io_core::AgentInput` for a type that also derives `Serialize`, `Deserialize`
/// and `JsonSchema`.
///
/// Compile-time checks: the type is a JSON object (a struct with named fields, or an
/// internally or adjacently tagged enum); a field serialized as `_workflowFsRoot` is an
/// `Option<FsRoot>` (recommended: `FsRoot::file(key)` gives a staged file's path),
/// `Option<PathBuf>` or `Option<String>`; a field that looks like that reserved name but is not
/// spelled like it is refused.
///
/// Options, in `#[agent(...)]`: `crate = "path"` (where `io_core` is); `strict` (the input
/// must have an OpenAI strict form, for function calling with `strict: true`: the same rules as
/// a strict output, checked at compile time, so `ToolRegistry::export(Export::OpenAiChat {
/// strict: true })` cannot refuse it for its shape).
#[proc_macro_derive(AgentInput, attributes(agent))]
pub fn derive_agent_input(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::derive(&input, expand::Side::Input).into()
}

/// Implements `io_core::AgentOutput` for a type that also derives `Serialize`, `Deserialize`
/// and `JsonSchema`.
///
/// Options, in `#[agent(...)]`: `crate = "path"`; `strict` (OpenAI strict structured outputs:
/// the type must be a struct with named fields and no field may be a map, a
/// `serde_json::Value` or `#[serde(flatten)]`); `name = "..."` (the structured-output name,
/// by default the type's name).
#[proc_macro_derive(AgentOutput, attributes(agent))]
pub fn derive_agent_output(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::derive(&input, expand::Side::Output).into()
}

/// On an `impl AgentCore for T` block: adds `type Input = io_core::TurnInput;` and
/// `type Output = io_core::TurnOutput;` when the block leaves them out (associated-type
/// defaults are not stable Rust). Takes an optional `crate = "path"`.
#[proc_macro_attribute]
pub fn agent_core(args: TokenStream, item: TokenStream) -> TokenStream {
    agent_core::expand(args.into(), item.into()).into()
}

/// A tool contract (AIP-14), checked at compile time, on an `impl TypedTool for T` block or on
/// an `async fn` with one input (optionally followed by `&ToolContext`).
///
/// On an impl block it writes `TypedTool::ID` and `TypedTool::contract()`. On a function it
/// also generates `NameTool`, a unit struct whose `execute_typed` calls the function. The
/// description is the doc comment unless `description = "..."` is given. Each field of the
/// contract is an argument (`id`, `version`, `name`, `description`, `idempotent`, `mutates`,
/// `requires(...)`, `approval`, `risk_level`, `cost_class`, `timeout_ms`, `retry(...)`,
/// `default_implementation`, `driver_constraints(...)`, `implements`, `tags`, `context`,
/// `examples`, `metadata`, `crate`), checked against the rules of TOOL.schema.json with an
/// error at the offending value.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(args.into(), item.into()).into()
}

/// AIP-16 IO blocks for a struct or enum, an `impl` block (of a tool or a core) or a function:
///
/// ```text
/// #[define_io(
///     inputs = ReportInput,
///     outputs = ReportOutput,
///     inputs_files = { sales => { path = "data/sales.csv", mode = "ro", content_type = "text/csv" } },
///     outputs_files = { report => { path = "reports/<isoDate>/<runId>.md", mode = "rw" } },
///     max_input_bytes = 10485760, // optional: each staged input at most 10 MiB
/// )]
/// ```
///
/// Implements `io_core::files::DefinesIo` (on a function, for a generated `NameIo` struct; a
/// `#[tool]` on the same function is pointed at it; on an `impl TypedTool` block, the tool's
/// `file_contract()` returns it). Checked at compile time: keys are plain file names, paths
/// are workspace-relative without `..` and with only the AIP-16 tokens, modes are `ro`/`rw`,
/// an input type that declares files can receive `_workflowFsRoot`, and, when a `#[tool]` on
/// the same item is visible, each output file is covered by the tool's `mutates` (a declared
/// output file is a workspace mutation).
#[proc_macro_attribute]
pub fn define_io(args: TokenStream, item: TokenStream) -> TokenStream {
    define_io::expand(args.into(), item.into()).into()
}
