//! Typed tools and their AIP-14 contracts.
//!
//! - [`TypedTool`]: a native Rust tool with typed input and output; [`tool`] writes its
//!   contract and checks it at compile time. `#[tool]` also turns an `async fn` into a tool.
//! - [`ToolPlugin`]: the JSON-in, JSON-out form every typed tool has, and what non-Rust tools
//!   implement.
//! - [`ToolRegistry`]: calls tools by id and enforces their contracts at the boundary.
//! - [`Export`]: the registry's tools as OpenAI, Anthropic, Gemini and MCP definitions, each
//!   schema in its client's profile, with provider-safe names that map back.
//! - [`dispatch`]: the model round trip: a provider's response in ([`dispatch::ModelTurn`],
//!   or a stream through [`dispatch::StreamedTurn`]), every call run by
//!   [`ToolRegistry::dispatch`], each answered in the provider's next-turn shape.
//! - [`ToolManifest`]: TOOL.md files, rendered and parsed; [`check_manifest`] ties a Rust tool
//!   to its checked-in TOOL.md; [`assert_examples`] runs a contract's examples.
//!
//! # Decisions where the specifications are silent or disagree
//!
//! - **`TypedTool` and `ToolPlugin`** are not supertrait and subtrait (that would be circular):
//!   every `TypedTool` is a `ToolPlugin` through a blanket impl, erased once at registration.
//! - **Approval without an approver** is a denial: an `always` tool never runs without a yes.
//!   A contract that names no approval class gets `on-mutate` when it declares `mutates`
//!   (as the reference `defineTool` does); TOOL.schema.json refuses `auto` with `mutates`, so
//!   rendered files always spell `approval` out.
//! - **Retries** apply only to idempotent tools with a `retry` policy, and only to errors marked
//!   retryable (`timeout`, `rate_limited`, `upstream_error` by default). `max_attempts` counts
//!   the first attempt. `timeout_ms` bounds each attempt. The macro refuses `retry` without
//!   `idempotent`, since it could never apply.
//! - **A context that breaks `contextSchema`** is `context_invalid`, not `input_invalid`: the
//!   host supplies the context, and a model told its input is invalid would change the input.
//! - **Fields TOOL.schema.json lacks** (`contextSchema`, `implements`) are written under
//!   `metadata.agent-io` so rendered files validate against the published schema, and read back
//!   from there. IO.schema.json is registered under both of its addresses; nothing is fetched.
//! - **`approval` missing from a TOOL.md** is `auto`, or `on-mutate` with `mutates`; a host can
//!   have `auto` calls shown to its approver too ([`ToolRegistry::with_approval_of_every_call`]).
//! - **Errors of non-idempotent tools** are never `retryable` for the caller.
//! - **Timeouts** are a hard ceiling on multi-thread runtimes with two workers or more, even for
//!   bodies that block; see [`ToolRegistry`] for what a one-worker host gets.
//! - **Declared output files are mutations**: a tool's `outputsFiles` must be covered by its
//!   `mutates` (compile time, registration and sync); `workspace:/dir/*` covers the folder.
//! - **Undeclared mutations**: a body that writes through [`ToolContext::authorize_mutation`]
//!   is refused (`unauthorised`) for any resource outside `mutates`. In-process Rust cannot be
//!   observed from outside, so this is the enforcement point; every audit record carries the
//!   contract's `mutates` for the rest.
//!
//! # AIP-14 clauses and the tests that hold them
//!
//! Tests named below live in the repository's `tests/tests/integration/tools.rs`; UI tests
//! under `tests/ui/contract/`.
//!
#![doc = include_str!("../CLAUSES.md")]
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

mod action;
mod call;
mod caller;
pub mod capabilities;
pub mod chain;
mod check;
pub mod content;
mod contract;
mod core_tool;
pub mod dispatch;
mod drift;
mod examples;
mod export;
mod frontmatter;
mod manifest;
pub mod manifest_limits;
mod registry;
mod tool_result;
mod typed;
pub mod voice;

pub use crate::action::Action;
pub use crate::call::{Cancellation, Progress, ProgressReporter, ProgressSink};
pub use crate::caller::Caller;
pub use crate::capabilities::{Capabilities, HttpClient, HttpRequest, HttpResponse, SecretStore};
pub use crate::check::{ContractProblem, RegistrationError};
pub use crate::contract::{
    Approval, Backoff, CostClass, DEFAULT_TIMEOUT_MS, DriverConstraints, DriverKind,
    MUTATION_CLASSES, Requires, RetryPolicy, ToolContract, ToolExample,
};
pub use crate::core_tool::CoreTool;
pub use crate::drift::{BLESS_VAR, Difference, DriftError, check_manifest};
pub use crate::examples::{
    ExampleFailure, assert_examples, assert_examples_with_context, check_examples,
};
pub use crate::export::{Export, ExportError, ExportReport, MAX_PROVIDER_NAME};
pub use crate::frontmatter::{METADATA_KEY, REMOVED_FIELDS, frontmatter_violations, tool_schema};
pub use crate::manifest::{ManifestError, ManifestProblem, ToolManifest};
pub use crate::registry::{
    ApprovalDecision, ApprovalOutcome, ApprovalRequest, Approver, AuditLog, AuditRecord, AuditSink,
    CallOptions, ToolRegistry,
};
pub use crate::tool_result::{ContentRefusal, tool_result};
#[doc(hidden)]
pub use crate::typed::DecodedInput;
pub use crate::typed::{ToolContext, ToolError, ToolPlugin, TypedTool};
pub use agentio_core::ErrorCode;
// Documented (and its examples tested) here: see agentio-core's re-exports of the derives.
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
pub use agentio_derive::tool;

/// AIP-14's `defineTool`, in Rust's naming: checks a hand-built contract (as registration
/// would) and hands it back. The contract type has no `execute` field, and deserializing one
/// that carries it fails, so a body can never ride on a contract.
///
/// ```
/// use agentio_tools::{ToolContract, define_tool};
/// use serde_json::json;
/// let ok = define_tool(ToolContract::new("echo", "1.0.0", "Echoes.", json!({"type": "object"}), json!({})));
/// assert!(ok.is_ok());
/// let bad = define_tool(ToolContract::new("Echo!", "1", "", json!({"type": "string"}), json!({})));
/// assert!(bad.unwrap_err().problems.len() >= 3);
/// ```
pub fn define_tool(contract: ToolContract) -> Result<ToolContract, RegistrationError> {
    contract.check()?;
    Ok(contract)
}

/// Builds a [`ToolRegistry`] from tool types, refusing at compile time two tools with the same
/// id. Each entry is a type (built with `Default`) or `Type => value`:
///
/// ```
/// # use agentio_tools::{ToolContext, ToolError, TypedTool, tool, tool_registry};
/// # #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
/// # struct Nothing {}
/// /// Says nothing.
/// #[tool(id = "quiet")]
/// async fn quiet(input: Nothing) -> Result<Nothing, ToolError> { Ok(input) }
///
/// let registry = tool_registry![QuietTool].unwrap();
/// assert!(registry.contract("quiet").is_some());
/// ```
#[macro_export]
macro_rules! tool_registry {
    ($($tool:ty $(=> $value:expr)?),* $(,)?) => {{
        const _: () = $crate::__private::assert_unique_ids(&[$(<$tool as $crate::TypedTool>::ID),*]);
        (|| -> ::core::result::Result<$crate::ToolRegistry, $crate::RegistrationError> {
            let mut registry = $crate::ToolRegistry::new();
            $( registry.register::<$tool>($crate::__tool_value!($tool $(, $value)?))?; )*
            ::core::result::Result::Ok(registry)
        })()
    }};
}

#[doc(hidden)]
#[macro_export]
macro_rules! __tool_value {
    ($tool:ty) => {
        <$tool as ::core::default::Default>::default()
    };
    ($tool:ty, $value:expr) => {
        $value
    };
}

/// What the macros' expansions name. Not public API.
#[doc(hidden)]
pub mod __private {
    pub use agentio_core;
    pub use serde_json;

    use agentio_core::{AgentInput, AgentOutput};
    use schemars::JsonSchema;
    use schemars::generate::SchemaSettings;

    use crate::ToolContract;

    pub fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    /// A contract with `T`'s id and schemas and `ToolContract::new`'s defaults; the macro
    /// sets only what differs.
    pub fn base_contract<T: crate::TypedTool>(version: &str, description: &str) -> ToolContract {
        ToolContract::new(
            T::ID,
            version,
            description,
            <T::Input as AgentInput>::input_schema().clone(),
            <T::Output as AgentOutput>::output_schema().clone(),
        )
    }

    /// What a `#[tool]` function's future gives (a shorter signature to compile, per tool).
    pub type ToolResult<T> = Result<T, crate::ToolError>;

    pub fn context_schema<C: JsonSchema>() -> serde_json::Value {
        SchemaSettings::draft2020_12()
            .for_deserialize()
            .into_generator()
            .into_root_schema_for::<C>()
            .to_value()
    }

    const fn same(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }

    /// The error types a `#[tool]` function may return: `ToolError` itself, and the common
    /// ones a body reaches for first. Any other becomes `internal` with its text as operator
    /// detail (what a model sees says only that the tool failed).
    #[diagnostic::on_unimplemented(
        message = "a `#[tool]` function's error type `{Self}` does not become a `ToolError`",
        label = "this error type",
        note = "return `Result<_, ToolError>` (build one with `ToolError::new(code, message)` or `ToolError::internal(...)`), or an error of type `String`, `&'static str`, `Box<dyn std::error::Error + Send + Sync>` or `serde_json::Error`; for another type, `.map_err(|e| ToolError::internal(e.to_string()))`"
    )]
    pub trait IntoToolError {
        /// The error as a `ToolError`.
        fn into_tool_error(self) -> crate::ToolError;
    }

    impl IntoToolError for agentio_core::AgentError {
        fn into_tool_error(self) -> crate::ToolError {
            self
        }
    }

    fn failed(detail: String) -> crate::ToolError {
        agentio_core::AgentError::from(detail)
    }

    impl IntoToolError for String {
        fn into_tool_error(self) -> crate::ToolError {
            failed(self)
        }
    }

    impl IntoToolError for &'static str {
        fn into_tool_error(self) -> crate::ToolError {
            failed(self.to_owned())
        }
    }

    impl IntoToolError for Box<dyn std::error::Error + Send + Sync> {
        fn into_tool_error(self) -> crate::ToolError {
            failed(self.to_string())
        }
    }

    impl IntoToolError for serde_json::Error {
        fn into_tool_error(self) -> crate::ToolError {
            agentio_core::AgentError::from(self)
        }
    }

    /// What a `#[tool]` function's error becomes.
    pub fn tool_error<E: IntoToolError>(error: E) -> crate::ToolError {
        error.into_tool_error()
    }

    pin_project_lite::pin_project! {
        /// A `#[tool]` function's future with its error made a `ToolError`: a field and a
        /// `map_err`, not a second `async` state machine per tool (compile time).
        pub struct ToolFuture<F, E> {
            #[pin]
            future: F,
            convert: fn(E) -> crate::ToolError,
        }
    }

    /// `future`, its error passed through `convert`. The macro passes [`tool_error`] named at
    /// the error type: the coercion to a `fn` pointer is where `E: IntoToolError` is checked,
    /// once, at that span.
    pub fn tool_future<F, T, E>(future: F, convert: fn(E) -> crate::ToolError) -> ToolFuture<F, E>
    where
        F: std::future::Future<Output = Result<T, E>>,
    {
        ToolFuture { future, convert }
    }

    impl<F, T, E> std::future::Future for ToolFuture<F, E>
    where
        F: std::future::Future<Output = Result<T, E>>,
    {
        type Output = Result<T, crate::ToolError>;

        fn poll(
            self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Self::Output> {
            let this = self.project();
            let convert = *this.convert;
            this.future.poll(cx).map(|result| result.map_err(convert))
        }
    }

    /// Fails const evaluation when two ids are equal.
    pub const fn assert_unique_ids(ids: &[&str]) {
        let mut i = 0;
        while i < ids.len() {
            let mut j = i + 1;
            while j < ids.len() {
                if same(ids[i], ids[j]) {
                    panic!(
                        "two tools in this `tool_registry!` have the same id; tool ids must be unique in a registry"
                    );
                }
                j += 1;
            }
            i += 1;
        }
    }

    // `tool_registry!` runs these in a `const`; a UI test (`duplicate-id-in-registry`) shows
    // the compile error. Here they run as plain functions, so mutation runs see them.
    #[cfg(test)]
    mod tests {
        use super::{assert_unique_ids, same};

        #[test]
        fn ids_are_the_same_only_byte_for_byte() {
            assert!(same("kb.search", "kb.search"));
            assert!(same("", ""));
            assert!(!same("kb.search", "kb.searcH"));
            assert!(!same("kb.search", "kb.searc"));
            assert!(!same("a", "b"));
            assert!(!same("ab", "ba"));
        }

        #[test]
        fn distinct_ids_pass() {
            assert_unique_ids(&[]);
            assert_unique_ids(&["one"]);
            assert_unique_ids(&["a", "b", "c", "ab", "ba"]);
        }

        #[test]
        fn a_repeated_id_is_refused_wherever_it_is() {
            for ids in [
                ["a", "a", "b", "c"],
                ["a", "b", "c", "a"],
                ["a", "b", "c", "c"],
                ["b", "a", "c", "a"],
            ] {
                let refused = std::panic::catch_unwind(|| assert_unique_ids(&ids));
                assert!(refused.is_err(), "{ids:?}");
            }
        }
    }
}
