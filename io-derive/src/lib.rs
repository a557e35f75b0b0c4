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
mod naming;
mod paths;
mod shape;
mod tool;
mod ty;
#[cfg(test)]
mod ui_replay;

use proc_macro::TokenStream;

/// Implements `agentio_core::AgentInput` for a type that also derives `Serialize`, `Deserialize`
/// and `JsonSchema`.
///
/// Compile-time checks: the type is a JSON object (a struct with named fields, or an
/// internally or adjacently tagged enum); a field serialized as `_workflowFsRoot` is an
/// `Option<FsRoot>` (recommended: `FsRoot::file(key)` gives a staged file's path),
/// `Option<PathBuf>` or `Option<String>`; a field that looks like that reserved name but is not
/// spelled like it is refused.
///
/// ```
/// use agentio_core::AgentInput;
/// use serde_json::json;
///
/// /// A question for the knowledge base.
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput)]
/// #[serde(deny_unknown_fields)]
/// struct Ask {
///     /// What to look up.
///     question: String,
///     /// How many answers, 1 to 10.
///     #[schemars(range(min = 1, max = 10))]
///     limit: Option<u8>,
/// }
///
/// assert!(Ask::validate_input(&json!({ "question": "refunds?" })).is_ok());
/// let err = Ask::validate_input(&json!({ "question": 1, "limit": 50 })).unwrap_err();
/// let pointers: Vec<_> = err.violations().iter().map(|v| v.pointer.as_str()).collect();
/// assert_eq!(pointers, ["/question", "/limit"]);
/// assert_eq!(Ask::input_schema()["required"], json!(["question"]));
/// ```
///
/// Options, in `#[agent(...)]`: `crate = "path"` (where `agentio_core` is); `strict` (the input
/// must have an OpenAI strict form, for function calling with `strict: true`: the same rules as
/// a strict output, checked at compile time, so `ToolRegistry::export(Export::OpenAiChat {
/// strict: true })` cannot refuse it for its shape); `validate = path::to::function` (the
/// type's cross-field rules, a `fn(&Self, &mut agentio_core::rules::Rules)` run after the schema
/// wherever a value of the type is checked; see `agentio_core::rules`).
#[proc_macro_derive(AgentInput, attributes(agent))]
pub fn derive_agent_input(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::derive(&input, expand::Side::Input).into()
}

/// Implements `agentio_core::AgentOutput` for a type that also derives `Serialize`, `Deserialize`
/// and `JsonSchema`.
///
/// Options, in `#[agent(...)]`: `crate = "path"`; `strict` (OpenAI strict structured outputs:
/// the type must be a struct with named fields, no field may be a map, a `serde_json::Value`,
/// a tuple or `#[serde(flatten)]`, and none may be left out by `skip_serializing_if`, since
/// strict mode requires every property); `name = "..."` (the structured-output name,
/// by default the type's name); `validate = path::to::function` (cross-field rules, as for
/// `AgentInput`: one function serves both directions).
///
/// ```
/// use agentio_core::AgentOutput;
/// use serde_json::json;
///
/// /// A verdict, in OpenAI's strict structured-output form too.
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentOutput)]
/// #[agent(strict, name = "verdict")]
/// struct Verdict {
///     approved: bool,
///     reason: Option<String>,
/// }
///
/// assert!(Verdict::validate_output(&json!({ "approved": true, "reason": null })).is_ok());
/// let format = Verdict::structured_output_format().expect("a strict output");
/// assert_eq!(format["json_schema"]["name"], "verdict");
/// assert_eq!(format["json_schema"]["schema"]["required"], json!(["approved", "reason"]));
/// ```
#[proc_macro_derive(AgentOutput, attributes(agent))]
pub fn derive_agent_output(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::derive(&input, expand::Side::Output).into()
}

/// On an `impl AgentCore for T` block: adds `type Input = agentio_core::TurnInput;` and
/// `type Output = agentio_core::TurnOutput;` when the block leaves them out (associated-type
/// defaults are not stable Rust). Takes an optional `crate = "path"`.
///
/// ```
/// use agentio_core::{AgentContext, AgentCore, AgentError, AgentRuntime, TurnInput, TurnOutput, agent_core};
///
/// struct Echo;
///
/// #[agent_core]
/// impl AgentCore for Echo {
///     fn core_type(&self) -> &str { "echo" }
///
///     async fn run_turn(&mut self, input: TurnInput, _ctx: &mut AgentContext) -> Result<TurnOutput, AgentError> {
///         Ok(TurnOutput::new(format!("you said: {}", input.message)))
///     }
/// }
///
/// let mut runtime = AgentRuntime::new(Echo);
/// let out = pollster::block_on(runtime.run_turn(serde_json::json!({ "message": "hi" }))).unwrap();
/// assert_eq!(out["response"], "you said: hi");
/// ```
#[proc_macro_attribute]
pub fn agent_core(args: TokenStream, item: TokenStream) -> TokenStream {
    agent_core::expand(args.into(), item.into()).into()
}

/// serde's, schemars' and the agent derives on a struct or enum, with the paths they need: one
/// line in place of `#[derive(Serialize, Deserialize, JsonSchema, AgentInput)]` plus
/// `#[serde(crate = "...")]` and `#[schemars(crate = "...")]`, which serde's and schemars'
/// derives need in a crate that reaches them only through the `agentio` facade.
///
/// - `#[io]`: `Serialize`, `Deserialize` and `JsonSchema` (a type nested in an input or output);
/// - `#[io(input)]`: and `AgentInput`; `#[io(output)]`: and `AgentOutput`; `#[io(input, output)]`:
///   both;
/// - `crate = "path"`: where `agentio_core` is, when it is renamed or re-exported.
///
/// A derive the item already lists is not added again, and a `crate = ...` it already gives is
/// kept. Put `#[io]` above the item's own `#[derive(...)]`, so that it sees them. Every other
/// attribute (`#[serde(...)]`, `#[schemars(...)]`, `#[agent(...)]`, doc comments) works as
/// with the derives written out.
///
/// ```
/// use agentio_core::{AgentInput, AgentOutput, io};
/// use serde_json::json;
///
/// /// A question for the knowledge base.
/// #[io(input)]
/// #[serde(deny_unknown_fields)]
/// struct Ask {
///     question: String,
///     #[schemars(range(min = 1, max = 10))]
///     limit: Option<u8>,
/// }
///
/// /// One hit (nested in the output: no agent derive of its own).
/// #[io]
/// #[derive(Debug, Clone)]
/// struct Hit { title: String }
///
/// #[io(output)]
/// #[agent(strict)]
/// struct Hits { hits: Vec<Hit> }
///
/// assert!(Ask::validate_input(&json!({ "question": "refunds?" })).is_ok());
/// assert!(Ask::validate_input(&json!({ "question": "refunds?", "limit": 50 })).is_err());
/// assert!(Hits::structured_output_format().is_some());
/// ```
#[proc_macro_attribute]
pub fn io(args: TokenStream, item: TokenStream) -> TokenStream {
    io_type::expand(args.into(), item.into()).into()
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
///
/// The error type of a tool function is `ToolError`, or one a body reaches for first (`String`,
/// `&'static str`, `Box<dyn Error + Send + Sync>`, `serde_json::Error`: those become `internal`).
/// `tool_registry![name]` takes the generated type or the function's name.
///
/// ```
/// use agentio_tools::{ToolContext, ToolError, tool, tool_registry};
/// use serde_json::json;
///
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput)]
/// struct Query { q: String }
///
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentOutput)]
/// struct Hits { titles: Vec<String> }
///
/// /// Who is calling: supplied by the host with each call, never by the model.
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Tenant { id: String }
///
/// /// Searches the tenant's knowledge base, best match first.
/// #[tool(
///     id = "kb.search",
///     version = "1.2.0",
///     name = "Knowledge base search",
///     idempotent,
///     retry(max_attempts = 3, backoff = "exponential", initial_ms = 50),
///     timeout_ms = 2000,
///     requires(network = ["kb.example.com"], secrets = ["kb-token"]),
///     cost_class = "metered",
///     tags = ["read-only"],
///     context = Tenant,
/// )]
/// async fn search(query: Query, ctx: &ToolContext) -> Result<Hits, ToolError> {
///     let tenant: Tenant = ctx.context()?;
///     Ok(Hits { titles: vec![format!("{}: {}", tenant.id, query.q)] })
/// }
///
/// let registry = tool_registry![search].unwrap();
/// let contract = registry.contract("kb.search").unwrap();
/// assert_eq!(contract.retry.as_ref().unwrap().max_attempts, 3);
/// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
/// let options = agentio_tools::CallOptions { context: json!({ "id": "acme" }), ..Default::default() };
/// let out = runtime.block_on(registry.call_with("kb.search", json!({ "q": "refunds" }), options)).unwrap();
/// assert_eq!(out["titles"][0], "acme: refunds");
/// ```
///
/// With files: `#[define_io]` on the same function gives the tool its file contract (either
/// attribute may come first), and its output files must be covered by `mutates`. Elsewhere,
/// `io = SomeType` points a tool at a type that carries `#[define_io(...)]`:
///
/// ```
/// use agentio_core::{define_io, files::FsRoot};
/// use agentio_tools::{ToolError, TypedTool, tool};
///
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput)]
/// struct Request {
///     title: String,
///     #[serde(rename = "_workflowFsRoot", default)]
///     root: Option<FsRoot>,
/// }
///
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentOutput)]
/// struct Done { bytes: u64 }
///
/// /// Writes a report from the staged sales file.
/// #[define_io(
///     inputs = Request,
///     outputs = Done,
///     inputs_files = { sales => { path = "data/sales.csv", mode = "ro" } },
///     outputs_files = { report => { path = "reports/<runId>.md", mode = "rw" } },
/// )]
/// #[tool(id = "sales.report", mutates = ["workspace:/reports"])]
/// async fn report(input: Request) -> Result<Done, ToolError> {
///     let root = input.root.ok_or("the host stages the files")?;
///     let csv = std::fs::read_to_string(root.file("sales")).map_err(|e| e.to_string())?;
///     std::fs::write(root.file("report"), format!("# {}\n{csv}", input.title)).map_err(|e| e.to_string())?;
///     Ok(Done { bytes: csv.len() as u64 })
/// }
///
/// let io = ReportTool::file_contract().unwrap();
/// assert!(io.inputs_files().contains_key("sales"));
/// ```
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
/// Implements `agentio_core::files::DefinesIo` (on a function, for a generated `NameIo` struct; a
/// `#[tool]` on the same function is pointed at it; on an `impl TypedTool` block, the tool's
/// `file_contract()` returns it). Checked at compile time: keys are plain file names, paths
/// are workspace-relative without `..` and with only the AIP-16 tokens, modes are `ro`/`rw`,
/// an input type that declares files can receive `_workflowFsRoot`, and, when a `#[tool]` on
/// the same item is visible, each output file is covered by the tool's `mutates` (a declared
/// output file is a workspace mutation).
///
/// (`agentio_core::files::define_io_handle`, the function, is the run-time form: it builds the same
/// `IoHandle` from an `IoDefinition` value, for blocks known only at run time.)
///
/// ```
/// use agentio_core::{define_io, files::{DefinesIo, FsRoot}};
///
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput)]
/// struct Scan {
///     locale: String,
///     #[serde(rename = "_workflowFsRoot", default)]
///     root: Option<FsRoot>,
/// }
///
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentOutput)]
/// struct Text { text: String }
///
/// /// An OCR unit: reads an uploaded image, writes its text next to it.
/// #[define_io(
///     inputs = Scan,
///     outputs = Text,
///     inputs_files = { image => { path = "uploads/scan.png", content_type = "image/png" } },
///     outputs_files = { text => { path = "uploads/<isoDate>-<runId>.txt" } },
///     max_input_bytes = 10485760,
/// )]
/// struct Ocr;
///
/// let io = Ocr::io_handle();
/// assert!(io.inputs()["properties"]["_workflowFsRoot"].is_object());
/// assert_eq!(io.max_input_bytes(), Some(10_485_760));
/// assert_eq!(io.outputs_files()["text"].path, "uploads/<isoDate>-<runId>.txt");
/// ```
#[proc_macro_attribute]
pub fn define_io(args: TokenStream, item: TokenStream) -> TokenStream {
    define_io::expand(args.into(), item.into()).into()
}
