//! The registry: tools by id, called with JSON, under their contracts.
//!
//! A call goes through the stages its files are named after, in order: `call_1_entry` (the
//! entry points), `call_2_lookup` (the tool by id), `call_3_admission` (the input and context
//! checked, the run prepared), `call_4_approval` (the host's approver asked), `call_5_attempts`
//! (timeouts, retries, cancellation, the output checked) and `call_6_audit` (the record
//! written). `register` and `skills` hold what happens before calls: registration and chains
//! of tools.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use agentio_core::AgentError;
use agentio_core::BoundarySchema;
use agentio_core::BoxFuture;
use agentio_core::ToolCall;
use agentio_core::ToolInvoker;
use agentio_core::files::FileObserver;
use agentio_core::files::Workspace;
use serde_json::Value;

use crate::check::RegistrationError;
use crate::contract::ToolContract;
use crate::typed::ToolError;
use crate::typed::ToolPlugin;
use crate::typed::TypedTool;

mod approval;
mod audit;
mod call_1_entry;
mod call_2_lookup;
mod call_3_admission;
mod call_4_approval;
mod call_5_attempts;
mod call_6_audit;
mod options;
mod register;
mod skills;

pub use approval::{ApprovalDecision, ApprovalOutcome, ApprovalRequest, Approver};
pub use audit::{AuditLog, AuditRecord, AuditSink};
pub use options::CallOptions;

pub(super) struct RegisteredTool {
    pub(super) plugin: Arc<dyn ToolPlugin>,
    /// The contract's id, shared with every call's context instead of copied per call.
    pub(super) id: Arc<str>,
    /// The contract's `mutates`, shared with every call's context instead of copied per call.
    pub(super) mutates: Arc<[String]>,
    pub(super) contract: ToolContract,
    pub(super) inputs: Schema,
    pub(super) outputs: Schema,
    pub(super) context: Option<BoundarySchema>,
}

pub(super) enum Schema {
    Shared(&'static BoundarySchema),
    Owned(Box<BoundarySchema>),
}

impl Schema {
    fn get(&self) -> &BoundarySchema {
        match self {
            Schema::Shared(schema) => schema,
            Schema::Owned(schema) => schema,
        }
    }
}

/// Tools by id, called with JSON under their contracts.
///
/// [`ToolRegistry::call`] enforces each tool's contract at the boundary, in this order: the
/// tool exists (`not_found`); a `null` input counts as `{}` and the input matches the schema
/// (`input_invalid`); the host context matches `contextSchema` (`context_invalid`); the
/// approval class is honoured through the host's [`Approver`] (`approval_denied`); the body
/// runs with `timeout_ms` per attempt (`timeout`), a panic contained (`internal`), and
/// retryable failures of idempotent tools retried per `retry`; the output matches the schema
/// (`output_invalid`, the value withheld). Every call leaves one [`AuditRecord`].
///
/// Timeouts and retry waits use Tokio's timer: call from a Tokio runtime with time enabled.
/// Outside one, a call fails with `internal` instead of panicking.
///
/// `timeout_ms` is a hard wall-clock ceiling. On a **multi-thread** runtime with two workers or
/// more each attempt runs as its own task, so even a body that blocks its thread
/// (`std::thread::sleep`, a busy loop, blocking I/O) is answered `timeout` at the ceiling; the
/// task is aborted, and a thread that never yields runs on until it returns, its result
/// dropped. On a runtime with **one worker** (current-thread, or multi-thread with
/// `worker_threads(1)`, which `#[tokio::main]` gives on one CPU) the body shares the only
/// thread, so the timer fires no earlier than the body's next `.await`: a body that blocks is
/// answered when it returns, and a result that comes after the ceiling is still `timeout`,
/// never a success. (A task of its own would not change that there: the body would still block
/// the one worker its caller needs; it would only cost every call a spawn.) Hosts that run
/// blocking tools should use a multi-thread runtime with two workers or more. On a one-worker
/// runtime the body runs inside the caller's task, so task-locals the caller set
/// (`tokio::task_local!`) are visible to it; with two workers or more it runs in a task of its
/// own, and they are not. A result that arrives exactly at the
/// ceiling counts as within it. A ceiling of a second or more is judged by the kernel's coarse
/// clock, exact to its tick (4 ms at `HZ=250`; a read costs a quarter of a precise one), and
/// judged fail-closed: a result that came within two ticks of such a ceiling may be answered
/// `timeout`; one that came after it never is a success.
///
/// An error from a tool that is not idempotent always reaches the caller with
/// `retryable: false`: the host does not retry such a tool, so a caller must not either.
///
/// ```
/// use agentio_tools::{ApprovalDecision, ApprovalRequest, AuditLog, ToolError, ToolRegistry, tool};
/// use serde_json::json;
/// use std::sync::Arc;
///
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
/// struct Note { text: String }
///
/// /// Saves a note; it changes the workspace, so the host approves each call.
/// #[tool(id = "notes.save", mutates = ["workspace:/notes"])]
/// async fn save(note: Note) -> Result<Note, ToolError> { Ok(note) }
///
/// let audit = Arc::new(AuditLog::default());
/// let approve = |_: &ApprovalRequest| ApprovalDecision::Approve;
/// let mut registry = ToolRegistry::new()
///     .with_approver(Arc::new(approve))
///     .with_audit_sink(audit.clone());
/// registry.register(SaveTool)?;
///
/// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
/// let saved = runtime.block_on(registry.call("notes.save", json!({ "text": "hi" })))?;
/// assert_eq!(saved, json!({ "text": "hi" }));
/// // A bad call never reaches the body, and says where it is wrong.
/// let err = runtime.block_on(registry.call("notes.save", json!({ "text": 1 }))).unwrap_err();
/// assert_eq!(err.violations()[0].pointer, "/text");
/// assert_eq!(audit.records().len(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ToolRegistry {
    /// The registered tools, in the order they were registered (never removed).
    entries: Vec<RegisteredTool>,
    /// identity (`id@major`) -> its place in `entries`, ordered by identity.
    tools: BTreeMap<String, usize>,
    /// id -> the places of the identities registered under it: a bare id resolves in one
    /// lookup.
    pub(crate) majors: HashMap<String, Vec<usize>, foldhash::fast::RandomState>,
    /// Each tool's provider name and MCP name -> what
    /// [`Self::tool_for_provider_name`] answers for it: built on the first lookup after a
    /// registration (a name depends on how many majors its id has), then read once per call
    /// a model makes.
    pub(crate) names: std::sync::OnceLock<HashMap<String, String, foldhash::fast::RandomState>>,
    approver: Option<Arc<dyn Approver>>,
    review_every_call: bool,
    audit: Option<Arc<dyn AuditSink>>,
    workspace: Option<Workspace>,
    file_observer: Option<Arc<dyn FileObserver>>,
    /// The AIP-39 actions tools may `implement`, by reference.
    actions: Vec<crate::action::Action>,
    /// What the host lends tool bodies (`requires.tools`, `secrets`, `network`).
    capabilities: Option<crate::capabilities::Capabilities>,
}

impl Default for ToolRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolRegistry {
    /// An empty registry with no approver (gated calls are denied) and no audit sink.
    ///
    /// ```
    /// use agentio_tools::{ApprovalDecision, ApprovalRequest, ToolError, ToolRegistry, tool};
    /// use serde_json::json;
    /// use std::sync::Arc;
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Refund { cents: u32 }
    ///
    /// /// Refunds a payment.
    /// #[tool(id = "pay.refund", mutates = ["external:payments"], approval = "always")]
    /// async fn refund(r: Refund) -> Result<Refund, ToolError> { Ok(r) }
    ///
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let mut registry = ToolRegistry::new();
    /// registry.register(RefundTool).unwrap();
    /// // Gated by its contract, and nobody to ask: denied, and the body never runs.
    /// let denied = runtime.block_on(registry.call("pay.refund", json!({ "cents": 500 }))).unwrap_err();
    /// assert_eq!(denied.code().as_str(), "approval_denied");
    /// ```
    pub fn new() -> Self {
        ToolRegistry {
            entries: Vec::new(),
            tools: BTreeMap::new(),
            majors: HashMap::default(),
            names: std::sync::OnceLock::new(),
            approver: None,
            review_every_call: false,
            audit: None,
            workspace: None,
            file_observer: None,
            actions: Vec::new(),
            capabilities: None,
        }
    }

    /// The workspace tools with a file contract read from and write to (AIP-16: each call
    /// stages the declared inputs into a private scratch root and syncs the declared outputs
    /// back), and who hears about each file ([`Self::with_file_observer`]).
    ///
    /// ```
    /// use agentio_core::files::{FileEvent, FsRoot, Workspace};
    /// use agentio_core::{AgentInput, AgentOutput, define_io};
    /// use agentio_tools::{ApprovalDecision, ApprovalRequest, CallOptions, ToolError, ToolRegistry, tool};
    /// use serde_json::json;
    /// use std::sync::{Arc, Mutex};
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput)]
    /// struct Copy {
    ///     #[serde(rename = "_workflowFsRoot", default, skip_serializing_if = "Option::is_none")]
    ///     root: Option<FsRoot>,
    /// }
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentOutput)]
    /// struct Copied { bytes: u64 }
    ///
    /// /// Copies a note.
    /// #[define_io(
    ///     inputs = Copy,
    ///     outputs = Copied,
    ///     inputs_files = { note => { path = "notes/today.md", mode = "ro" } },
    ///     outputs_files = { copy => { path = "archive/<runId>.md", mode = "rw" } },
    /// )]
    /// #[tool(id = "notes.archive", mutates = ["workspace:/archive"])]
    /// async fn archive(input: Copy) -> Result<Copied, ToolError> {
    ///     let root = input.root.ok_or_else(|| ToolError::internal("no scratch root"))?;
    ///     let bytes = std::fs::copy(root.file("note"), root.file("copy")).map_err(|e| ToolError::internal(e.to_string()))?;
    ///     Ok(Copied { bytes })
    /// }
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// std::fs::create_dir(dir.path().join("notes")).unwrap();
    /// std::fs::write(dir.path().join("notes/today.md"), "# Today").unwrap();
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = seen.clone();
    /// let mut registry = ToolRegistry::new()
    ///     .with_workspace(Workspace::open(dir.path()).unwrap())
    ///     .with_file_observer(Arc::new(move |event: &FileEvent| log.lock().unwrap().push(event.clone())))
    ///     // The contract mutates the workspace, so each call is approved first.
    ///     .with_approver(Arc::new(|_: &ApprovalRequest| ApprovalDecision::Approve));
    /// registry.register(ArchiveTool).unwrap();
    ///
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let options = CallOptions::default().with_run_id("r7");
    /// let out = runtime.block_on(registry.call_with("notes.archive", json!({}), options)).unwrap();
    /// assert_eq!(out["bytes"], 7);
    /// assert_eq!(std::fs::read_to_string(dir.path().join("archive/r7.md")).unwrap(), "# Today");
    /// let seen = seen.lock().unwrap();
    /// assert!(matches!(&seen[0], FileEvent::Staged { key, bytes: 7, .. } if key == "note"));
    /// assert!(matches!(&seen[1], FileEvent::Synced { key, .. } if key == "copy"));
    /// ```
    #[must_use]
    pub fn with_workspace(mut self, workspace: Workspace) -> Self {
        self.workspace = Some(workspace);
        self
    }

    /// Who hears about every staged read and synced write (the audit channel for files; an
    /// example is on [`Self::with_workspace`]).
    #[must_use]
    pub fn with_file_observer(mut self, observer: Arc<dyn FileObserver>) -> Self {
        self.file_observer = Some(observer);
        self
    }

    /// Sets the host's approver: it decides each call its contract gates (`approval` other
    /// than `auto`), with the request in hand (the tool, its mutations, the input), before the
    /// body runs. A per-call approver ([`CallOptions::with_approver`]) takes precedence.
    ///
    /// ```
    /// use agentio_tools::{ApprovalDecision, ApprovalRequest, ToolError, ToolRegistry, tool};
    /// use serde_json::json;
    /// use std::sync::Arc;
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Refund { cents: u32 }
    ///
    /// /// Refunds a payment.
    /// #[tool(id = "pay.refund", mutates = ["external:payments"], approval = "always")]
    /// async fn refund(r: Refund) -> Result<Refund, ToolError> { Ok(r) }
    ///
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let small_only = |request: &ApprovalRequest| match request.input["cents"].as_u64() {
    ///     Some(cents) if cents <= 1_000 => ApprovalDecision::Approve,
    ///     _ => ApprovalDecision::Deny { reason: "over the automatic limit".into() },
    /// };
    /// let mut registry = ToolRegistry::new().with_approver(Arc::new(small_only));
    /// registry.register(RefundTool).unwrap();
    /// assert!(runtime.block_on(registry.call("pay.refund", json!({ "cents": 500 }))).is_ok());
    /// let denied = runtime.block_on(registry.call("pay.refund", json!({ "cents": 50_000 }))).unwrap_err();
    /// assert_eq!(denied.code().as_str(), "approval_denied");
    /// assert!(denied.message().contains("over the automatic limit"));
    /// ```
    #[must_use]
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Asks the approver about every call, `approval: auto` ones included (a host policy that
    /// wants to see each call, say). Without it, `auto` calls run without asking, as AIP-14
    /// says; with it and no approver, every call is denied.
    ///
    /// ```
    /// use agentio_tools::{ApprovalDecision, ApprovalRequest, ToolRegistry};
    /// use std::sync::Arc;
    /// let audit_only = |request: &ApprovalRequest| {
    ///     println!("about to call {}", request.identity);
    ///     ApprovalDecision::Approve
    /// };
    /// let registry = ToolRegistry::new()
    ///     .with_approver(Arc::new(audit_only))
    ///     .with_approval_of_every_call(true);
    /// # let _ = registry;
    /// ```
    #[must_use]
    pub fn with_approval_of_every_call(mut self, review: bool) -> Self {
        self.review_every_call = review;
        self
    }

    /// Sets where audit records go: one per call, with its outcome, the contract's `mutates`
    /// and the input's keys (never their values).
    ///
    /// ```
    /// use agentio_tools::{ApprovalDecision, ApprovalRequest, ToolError, ToolRegistry, tool};
    /// use serde_json::json;
    /// use std::sync::Arc;
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Refund { cents: u32 }
    ///
    /// /// Refunds a payment.
    /// #[tool(id = "pay.refund", mutates = ["external:payments"], approval = "always")]
    /// async fn refund(r: Refund) -> Result<Refund, ToolError> { Ok(r) }
    ///
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// use agentio_tools::AuditLog;
    ///
    /// let log = Arc::new(AuditLog::default());
    /// let mut registry = ToolRegistry::new()
    ///     .with_audit_sink(log.clone())
    ///     .with_approver(Arc::new(|_: &ApprovalRequest| ApprovalDecision::Approve));
    /// registry.register(RefundTool).unwrap();
    /// runtime.block_on(registry.call("pay.refund", json!({ "cents": 500 }))).unwrap();
    /// let record = &log.records()[0];
    /// assert!(record.ok);
    /// assert_eq!(record.tool_mutates, ["external:payments"]);
    /// assert_eq!(record.input_keys, ["cents"]);
    /// ```
    #[must_use]
    pub fn with_audit_sink(mut self, sink: Arc<dyn AuditSink>) -> Self {
        self.audit = Some(sink);
        self
    }

    /// Whether an audit sink listens ([`Self::with_audit_sink`]). A host that stops calls by
    /// dropping them needs a [`Cancellation`](crate::Cancellation) only when one does: a dropped call writes no
    /// record, a cancelled one records `cancelled`.
    ///
    /// ```
    /// # use agentio_tools::{AuditLog, ToolRegistry};
    /// # use std::sync::Arc;
    /// assert!(!ToolRegistry::new().is_audited());
    /// let registry = ToolRegistry::new().with_audit_sink(Arc::new(AuditLog::default()));
    /// assert!(registry.is_audited());
    /// ```
    pub fn is_audited(&self) -> bool {
        self.audit.is_some()
    }

    /// The registered tools, ordered by identity.
    pub(super) fn in_identity_order(&self) -> impl Iterator<Item = (&str, &RegisteredTool)> {
        self.tools
            .iter()
            .filter_map(|(identity, &at)| Some((identity.as_str(), self.entries.get(at)?)))
    }

    /// The contract of a registered tool, by `id` or `id@major` (see [`Self::call_with`]).
    ///
    /// ```
    /// # use agentio_tools::{ToolError, tool, tool_registry};
    /// # #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// # struct Note { text: String }
    /// # /// Saves a note.
    /// # #[tool(id = "notes.save", version = "2.1.0")]
    /// # async fn save(note: Note) -> Result<Note, ToolError> { Ok(note) }
    /// let registry = tool_registry![SaveTool].unwrap();
    /// assert_eq!(registry.contract("notes.save").unwrap().version, "2.1.0");
    /// assert!(registry.contract("notes.save@2").is_some());
    /// assert!(registry.contract("notes.save@1").is_none());
    /// ```
    pub fn contract(&self, tool_id: &str) -> Option<&ToolContract> {
        self.resolve(tool_id).ok().map(|t| &t.contract)
    }

    /// The registered contracts, ordered by identity.
    ///
    /// ```
    /// # use agentio_tools::{ToolError, tool, tool_registry};
    /// # #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// # struct Note { text: String }
    /// # /// Saves a note.
    /// # #[tool(id = "notes.save", version = "2.1.0")]
    /// # async fn save(note: Note) -> Result<Note, ToolError> { Ok(note) }
    /// let registry = tool_registry![SaveTool].unwrap();
    /// let identities: Vec<String> = registry.contracts().map(|c| c.identity()).collect();
    /// assert_eq!(identities, ["notes.save@2"]);
    /// ```
    pub fn contracts(&self) -> impl Iterator<Item = &ToolContract> {
        self.in_identity_order().map(|(_, t)| &t.contract)
    }

    /// The input schema a tool's calls are validated against (its compiled boundary), by id
    /// or `id@major`.
    ///
    /// ```
    /// # use agentio_tools::{ToolError, tool, tool_registry};
    /// # #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// # struct Note { text: String }
    /// /// Saves a note.
    /// #[tool(id = "notes.save")]
    /// async fn save(note: Note) -> Result<Note, ToolError> { Ok(note) }
    /// let registry = tool_registry![SaveTool].unwrap();
    /// let schema = registry.input_boundary("notes.save").unwrap().schema();
    /// assert_eq!(schema["required"][0], "text");
    /// assert!(registry.output_boundary("notes.save").is_some());
    /// assert!(registry.input_boundary("notes.delete").is_none());
    /// ```
    pub fn input_boundary(&self, tool_id: &str) -> Option<&BoundarySchema> {
        self.resolve(tool_id).ok().map(|t| t.inputs.get())
    }

    /// The output schema a tool's results are validated against, by id or `id@major`.
    ///
    /// ```
    /// # use agentio_tools::{ToolError, tool, tool_registry};
    /// # #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// # struct Note { text: String }
    /// # /// Saves a note.
    /// # #[tool(id = "notes.save", version = "2.1.0")]
    /// # async fn save(note: Note) -> Result<Note, ToolError> { Ok(note) }
    /// let registry = tool_registry![SaveTool].unwrap();
    /// let outputs = registry.output_boundary("notes.save@2").unwrap();
    /// assert!(outputs.validate(&serde_json::json!({ "text": "saved" })).is_ok());
    /// assert!(outputs.validate(&serde_json::json!({ "text": 1 })).is_err());
    /// ```
    pub fn output_boundary(&self, tool_id: &str) -> Option<&BoundarySchema> {
        self.resolve(tool_id).ok().map(|t| t.outputs.get())
    }

    /// Whether a tool's output is [`Contents`](crate::content::Contents): content blocks, not
    /// a structured value (an MCP server then sends them as the result's `content`, with no
    /// `structuredContent` or `outputSchema`). An example is on
    /// [`Contents`](crate::content::Contents).
    pub fn returns_content_only(&self, tool_id: &str) -> bool {
        use agentio_core::AgentOutput;
        // Typed tools share their type's compiled schema: the same one is the same type.
        self.output_boundary(tool_id).is_some_and(|outputs| {
            std::ptr::eq(outputs, crate::content::Contents::output_boundary())
        })
    }

    /// A tool's input JSON Schema, by id or `id@major` (io-traits.md's `tool_input_schema`).
    ///
    /// ```
    /// # use agentio_tools::{ToolError, tool, tool_registry};
    /// # #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// # struct Note { text: String }
    /// # /// Saves a note.
    /// # #[tool(id = "notes.save", version = "2.1.0")]
    /// # async fn save(note: Note) -> Result<Note, ToolError> { Ok(note) }
    /// let registry = tool_registry![SaveTool].unwrap();
    /// let schema = registry.tool_input_schema("notes.save").unwrap();
    /// assert_eq!(schema["properties"]["text"]["type"], "string");
    /// assert_eq!(registry.tool_output_schema("notes.save"), Some(schema));
    /// ```
    pub fn tool_input_schema(&self, tool_id: &str) -> Option<&Value> {
        self.input_boundary(tool_id).map(BoundarySchema::schema)
    }

    /// A tool's output JSON Schema, by id or `id@major`.
    ///
    /// ```
    /// # use agentio_tools::{ToolError, tool, tool_registry};
    /// # #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// # struct Note { text: String }
    /// # /// Saves a note.
    /// # #[tool(id = "notes.save", version = "2.1.0")]
    /// # async fn save(note: Note) -> Result<Note, ToolError> { Ok(note) }
    /// let registry = tool_registry![SaveTool].unwrap();
    /// let schema = registry.tool_output_schema("notes.save").unwrap();
    /// assert_eq!(schema["required"][0], "text");
    /// assert_eq!(registry.tool_output_schema("notes.delete"), None);
    /// ```
    pub fn tool_output_schema(&self, tool_id: &str) -> Option<&Value> {
        self.output_boundary(tool_id).map(BoundarySchema::schema)
    }

    /// Every registered tool, ordered by identity: identity, contract, input and output schema.
    pub(crate) fn registered(
        &self,
    ) -> impl Iterator<Item = (&str, &ToolContract, &BoundarySchema, &BoundarySchema)> {
        self.in_identity_order()
            .map(|(identity, t)| (identity, &t.contract, t.inputs.get(), t.outputs.get()))
    }

    /// Registers a typed tool, erasing it once. Fails (never panics) on a contract problem or
    /// an id already registered.
    ///
    /// ```
    /// # use agentio_tools::{ToolError, tool, tool_registry};
    /// # #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// # struct Note { text: String }
    /// # /// Saves a note.
    /// # #[tool(id = "notes.save", version = "2.1.0")]
    /// # async fn save(note: Note) -> Result<Note, ToolError> { Ok(note) }
    /// use agentio_tools::ToolRegistry;
    ///
    /// let mut registry = ToolRegistry::new();
    /// registry.register(SaveTool).unwrap();
    /// let again = registry.register(SaveTool).unwrap_err();
    /// assert_eq!(again.tool_id, "notes.save");
    /// assert!(again.problems[0].message.contains("already registered"));
    /// ```
    pub fn register<T: TypedTool>(&mut self, tool: T) -> Result<(), RegistrationError> {
        self.register_plugin(Arc::new(tool))
    }

    /// Calls a tool with a fresh run id and no host context.
    ///
    /// ```
    /// # use agentio_tools::{ToolError, tool, tool_registry};
    /// # #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// # struct Note { text: String }
    /// # /// Saves a note.
    /// # #[tool(id = "notes.save", version = "2.1.0")]
    /// # async fn save(note: Note) -> Result<Note, ToolError> { Ok(note) }
    /// let registry = tool_registry![SaveTool].unwrap();
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let saved = runtime.block_on(registry.call("notes.save", serde_json::json!({ "text": "hi" })));
    /// assert_eq!(saved.unwrap()["text"], "hi");
    /// let unknown = runtime.block_on(registry.call("notes.drop", serde_json::json!({})));
    /// assert_eq!(unknown.unwrap_err().code().as_str(), "not_found");
    /// ```
    ///
    /// As with [`Self::call_with`], the input is checked when this is called, and the returned
    /// future runs the body.
    pub fn call<'a>(
        &'a self,
        tool_id: &'a str,
        input: Value,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send + 'a {
        // Not an `async fn`: the future is `call_with`'s own, not one more layer around it
        // (a host that spawns or polls the call moves it whole).
        self.call_with(tool_id, input, CallOptions::default())
    }

    /// [`Self::call_with`], answered as the AIP-14 envelope `{ ok, value }` / `{ ok, error }`.
    ///
    /// ```
    /// # use agentio_tools::{ToolError, tool, tool_registry};
    /// # #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// # struct Note { text: String }
    /// # /// Saves a note.
    /// # #[tool(id = "notes.save", version = "2.1.0")]
    /// # async fn save(note: Note) -> Result<Note, ToolError> { Ok(note) }
    /// use agentio_tools::CallOptions;
    /// use serde_json::json;
    ///
    /// let registry = tool_registry![SaveTool].unwrap();
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let ok = runtime.block_on(registry.call_envelope("notes.save", json!({ "text": "hi" }), CallOptions::default()));
    /// assert_eq!(ok, json!({ "ok": true, "value": { "text": "hi" } }));
    /// let failed = runtime.block_on(registry.call_envelope("notes.save", json!({}), CallOptions::default()));
    /// assert_eq!(failed["ok"], false);
    /// assert_eq!(failed["error"]["code"], "input_invalid");
    /// ```
    pub async fn call_envelope(&self, tool_id: &str, input: Value, options: CallOptions) -> Value {
        match self.call_with(tool_id, input, options).await {
            Ok(value) => agentio_core::ok_envelope(value),
            Err(err) => err.to_envelope(),
        }
    }

    /// [`Self::call_with`], the output answered as its JSON text: what a host that sends text
    /// needs (a model's tool result, an HTTP body). A typed tool writes its checked output
    /// straight to text ([`AgentOutput::to_output_json`](agentio_core::AgentOutput::to_output_json)),
    /// so no `Value` is built for it; any other tool's output is checked as a `Value` and then
    /// written. The input is borrowed: a typed tool decodes it where it is, and it is copied
    /// only when the call needs it kept (a body that decodes it itself, approval, retries,
    /// files). The contract is the same as [`Self::call_with`]'s, and so are the errors.
    ///
    /// ```
    /// # use agentio_tools::{ToolError, tool, tool_registry};
    /// # #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// # struct Note { text: String }
    /// # /// Saves a note.
    /// # #[tool(id = "notes.save", version = "2.1.0")]
    /// # async fn save(note: Note) -> Result<Note, ToolError> { Ok(note) }
    /// use agentio_tools::CallOptions;
    /// use serde_json::json;
    ///
    /// let registry = tool_registry![SaveTool].unwrap();
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let saved = runtime.block_on(registry.call_json("notes.save", &json!({ "text": "hi" }), CallOptions::default()));
    /// assert_eq!(saved.unwrap(), r#"{"text":"hi"}"#);
    /// let refused = runtime.block_on(registry.call_json("notes.save", &json!({ "text": 1 }), CallOptions::default()));
    /// assert_eq!(refused.unwrap_err().code().as_str(), "input_invalid");
    /// ```
    pub fn call_json<'a>(
        &'a self,
        tool_id: &'a str,
        input: &'a Value,
        options: CallOptions,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'a {
        // Only a plugin that checks its output as it encodes it may write it as text: the
        // registry checks a `Value`.
        let writes_text = self
            .resolve(tool_id)
            .is_ok_and(|tool| tool.plugin.__validates_output());
        async move {
            if writes_text {
                self.stage_call_with::<String>(tool_id, Cow::Borrowed(input), options)
                    .await
            } else {
                let output = self.stage_call_with::<Value>(tool_id, Cow::Borrowed(input), options);
                Ok(output.await?.to_string())
            }
        }
    }

    /// Lends tool bodies other tools, secrets and an HTTP client, each reached through the
    /// body's [`ToolContext`](crate::ToolContext) and only as far as its contract's `requires` declares (the rules,
    /// and what they cannot stop, are in [`crate::capabilities`]).
    ///
    /// ```
    /// use agentio_tools::{Capabilities, ToolContext, ToolError, tool, ToolRegistry};
    /// use std::sync::Arc;
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Slug { slug: String }
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Found { length: usize }
    ///
    /// /// Says how long a secret is (a stand-in for using it).
    /// #[tool(id = "vault.peek", requires(secrets = ["db-password"]))]
    /// async fn peek(input: Slug, ctx: &ToolContext) -> Result<Found, ToolError> {
    ///     Ok(Found { length: ctx.secret(&input.slug)?.len() })
    /// }
    ///
    /// let secrets = |slug: &str| (slug != "missing").then(|| format!("secret of {slug}"));
    /// let mut registry = ToolRegistry::new()
    ///     .with_capabilities(Capabilities::new().with_secrets(Arc::new(secrets)));
    /// registry.register(PeekTool).unwrap();
    /// let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// let ok = runtime.block_on(registry.call("vault.peek", serde_json::json!({ "slug": "db-password" }))).unwrap();
    /// assert_eq!(ok["length"], "secret of db-password".len());
    /// // Another slug than the contract declares: refused.
    /// let err = runtime.block_on(registry.call("vault.peek", serde_json::json!({ "slug": "api-key" }))).unwrap_err();
    /// assert_eq!(err.code().as_str(), "unauthorised");
    /// ```
    #[must_use]
    pub fn with_capabilities(mut self, capabilities: crate::capabilities::Capabilities) -> Self {
        self.capabilities = Some(capabilities);
        self
    }

    /// Makes an AIP-39 action known by its reference (`storage:commit`), for the tools that
    /// `implements` it: registering such a tool checks that it only narrows the action
    /// (AIP-14), and fills each field it leaves at its default from the action. Register the
    /// action first; a tool naming an unknown action is refused. (The rules, and where they
    /// read AIP-14 one way, are on [`Action`](crate::Action).)
    ///
    /// ```
    /// use agentio_core::BoxFuture;
    /// use agentio_tools::{Action, Approval, ToolContext, ToolContract, ToolError, ToolPlugin, ToolRegistry};
    /// use serde_json::{Value, json};
    /// use std::sync::Arc;
    ///
    /// struct Tool(ToolContract);
    /// impl ToolPlugin for Tool {
    ///     fn tool_contract(&self) -> ToolContract { self.0.clone() }
    ///     fn execute<'a>(&'a self, input: Value, _: &'a ToolContext) -> BoxFuture<'a, Result<Value, ToolError>> {
    ///         Box::pin(async move { Ok(input) })
    ///     }
    /// }
    ///
    /// let mut registry = ToolRegistry::new();
    /// let mut commit = Action::new("storage:commit");
    /// commit.mutates = vec!["workspace:/".into()];
    /// commit.approval = Approval::Always;
    /// registry.register_action(commit);
    ///
    /// let mut tool = ToolContract::new("git.commit", "1.0.0", "Commits.", json!({ "type": "object" }), json!({}));
    /// tool.implements = Some(json!("storage:commit"));
    /// tool.mutates = vec!["workspace:/".into()];
    /// tool.approval = Approval::OnMutate; // looser than the action's `always`
    /// let err = registry.register_plugin(Arc::new(Tool(tool.clone()))).unwrap_err();
    /// assert_eq!(err.problems[0].pointer, "/approval");
    ///
    /// tool.approval = Approval::Auto; // left at the default: inherited
    /// registry.register_plugin(Arc::new(Tool(tool))).unwrap();
    /// assert_eq!(registry.contract("git.commit").unwrap().approval, Approval::Always);
    /// ```
    pub fn register_action(&mut self, action: crate::action::Action) -> &mut Self {
        self.actions.retain(|known| known.id != action.id);
        self.actions.push(action);
        self
    }

    /// Registers a tool with JSON in and out: a body that is not typed Rust (a script, a
    /// remote service). Its input and output are validated against the contract's schemas.
    ///
    /// ```
    /// use agentio_core::BoxFuture;
    /// use agentio_tools::{ToolContext, ToolContract, ToolError, ToolPlugin, ToolRegistry};
    /// use serde_json::{Value, json};
    /// use std::sync::Arc;
    ///
    /// struct Echo;
    /// impl ToolPlugin for Echo {
    ///     fn tool_contract(&self) -> ToolContract {
    ///         let text = json!({ "type": "object", "properties": { "text": { "type": "string" } }, "required": ["text"] });
    ///         ToolContract::new("echo", "1.0.0", "Says the text back.", text.clone(), text)
    ///     }
    ///     fn execute<'a>(&'a self, input: Value, _: &'a ToolContext) -> BoxFuture<'a, Result<Value, ToolError>> {
    ///         Box::pin(async move { Ok(input) })
    ///     }
    /// }
    ///
    /// let mut registry = ToolRegistry::new();
    /// registry.register_plugin(Arc::new(Echo)).unwrap();
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// assert_eq!(runtime.block_on(registry.call("echo", json!({ "text": "hi" }))).unwrap(), json!({ "text": "hi" }));
    /// let err = runtime.block_on(registry.call("echo", json!({ "text": 3 }))).unwrap_err();
    /// assert_eq!(err.code().as_str(), "input_invalid");
    /// ```
    pub fn register_plugin(
        &mut self,
        plugin: Arc<dyn ToolPlugin>,
    ) -> Result<(), RegistrationError> {
        self.stage_register_plugin(plugin)
    }

    /// Checks a skill before it runs: every step names a registered tool, and each step's
    /// output can become the next step's input ([`agentio_core::skill`]). Every broken link is
    /// reported at once.
    ///
    /// ```
    /// use agentio_core::skill::{SkillManifest, SkillProblem};
    /// use agentio_tools::{ToolError, tool, tool_registry};
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Query { q: String }
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Hits { hits: Vec<String> }
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Summary { text: String }
    ///
    /// /// Searches.
    /// #[tool(id = "kb.search")]
    /// async fn search(q: Query) -> Result<Hits, ToolError> { Ok(Hits { hits: vec![q.q] }) }
    /// /// Summarizes hits.
    /// #[tool(id = "kb.summarize")]
    /// async fn summarize(h: Hits) -> Result<Summary, ToolError> { Ok(Summary { text: h.hits.join(" ") }) }
    ///
    /// let registry = tool_registry![SearchTool, SummarizeTool].unwrap();
    /// assert!(registry.validate_skill(&SkillManifest::new("s", ["kb.search", "kb.summarize"])).is_ok());
    /// let err = registry.validate_skill(&SkillManifest::new("s", ["kb.summarize", "kb.search"])).unwrap_err();
    /// assert!(matches!(err.problems[0], SkillProblem::IncompatibleChain { step: 1, .. }));
    /// ```
    pub fn validate_skill(
        &self,
        skill: &agentio_core::skill::SkillManifest,
    ) -> Result<(), agentio_core::skill::SkillError> {
        self.stage_validate_skill(skill)
    }

    /// Runs a skill: each step is called under its contract with the previous step's output
    /// (or the input its mapping builds; for the first step, the skill's input, or what its
    /// mapping picks from it), and the last output is returned. The skill is
    /// checked first ([`Self::validate_skill`]); a failing step's error says which step.
    ///
    /// ```
    /// use agentio_core::skill::SkillManifest;
    /// use agentio_tools::{CallOptions, ToolError, tool, tool_registry};
    /// use serde_json::json;
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Text { text: String }
    ///
    /// /// Trims.
    /// #[tool(id = "text.trim")]
    /// async fn trim(t: Text) -> Result<Text, ToolError> { Ok(Text { text: t.text.trim().to_owned() }) }
    /// /// Shouts.
    /// #[tool(id = "text.shout")]
    /// async fn shout(t: Text) -> Result<Text, ToolError> { Ok(Text { text: t.text.to_uppercase() }) }
    ///
    /// let registry = tool_registry![TrimTool, ShoutTool].unwrap();
    /// let skill = SkillManifest::new("tidy", ["text.trim", "text.shout"]);
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let out = runtime.block_on(registry.run_skill(&skill, json!({ "text": "  hi " }), CallOptions::default())).unwrap();
    /// assert_eq!(out["text"], "HI");
    ///
    /// // A step the registry does not have: refused before anything runs.
    /// let lost = SkillManifest::new("lost", ["text.trim", "text.translate"]);
    /// let err = runtime.block_on(registry.run_skill(&lost, json!({ "text": "hi" }), CallOptions::default())).unwrap_err();
    /// assert_eq!(err.code().as_str(), "incompatible_chain");
    /// ```
    pub async fn run_skill(
        &self,
        skill: &agentio_core::skill::SkillManifest,
        input: Value,
        options: CallOptions,
    ) -> Result<Value, ToolError> {
        self.stage_run_skill(skill, input, options).await
    }

    /// Calls a tool under its contract; see the type's documentation for the order of checks.
    /// `tool_id` is an id, or `id@major` when several majors of one id are registered.
    ///
    /// ```
    /// use agentio_tools::{CallOptions, ToolContext, ToolError, tool, tool_registry};
    /// use serde_json::json;
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Empty {}
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Seen { run_id: String, tenant: String }
    ///
    /// /// Says which run and tenant it was called for.
    /// #[tool(id = "whoami")]
    /// async fn whoami(_: Empty, ctx: &ToolContext) -> Result<Seen, ToolError> {
    ///     let tenant = ctx.raw_context()["tenant"].as_str().unwrap_or_default().to_owned();
    ///     Ok(Seen { run_id: ctx.run_id().to_owned(), tenant })
    /// }
    ///
    /// let registry = tool_registry![WhoamiTool].unwrap();
    /// let options = CallOptions::default()
    ///     .with_run_id("run-7")
    ///     .with_context(json!({ "tenant": "acme" }));
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let seen = runtime.block_on(registry.call_with("whoami", json!({}), options)).unwrap();
    /// assert_eq!(seen, json!({ "run_id": "run-7", "tenant": "acme" }));
    /// ```
    ///
    /// The input is checked, and the body's context built, when this is called; the returned
    /// future then runs the body (and asks for approval first when the contract says so).
    /// Keeping that work out of the future keeps it small: a host that spawns each call
    /// copies it whole.
    pub fn call_with<'a>(
        &'a self,
        tool_id: &'a str,
        input: Value,
        options: CallOptions,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send + 'a {
        self.stage_call_with(tool_id, Cow::Owned(input), options)
    }
}

impl fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .field("approver", &self.approver.is_some())
            .field("audit", &self.audit.is_some())
            .finish()
    }
}

/// Cores reach the registry's tools through their `AgentContext`.
impl ToolInvoker for ToolRegistry {
    fn invoke(&self, call: ToolCall) -> BoxFuture<'_, Result<Value, AgentError>> {
        Box::pin(async move {
            let options = CallOptions {
                run_id: Some(call.run_id),
                ..CallOptions::default()
            };
            self.call_with(&call.tool_id, call.input, options).await
        })
    }

    fn tool_schemas(&self, tool_id: &str) -> Option<(Value, Value)> {
        Some((
            self.tool_input_schema(tool_id)?.clone(),
            self.output_boundary(tool_id)?.produced_schema().clone(),
        ))
    }

    fn tool_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .in_identity_order()
            .map(|(_, t)| t.contract.id.clone())
            .collect();
        ids.dedup();
        ids.extend(self.tools.keys().cloned());
        ids
    }
}
