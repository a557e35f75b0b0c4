//! The registry: tools by id, called with JSON, under their contracts.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use agentio_core::files::{
    FileHost, FileObserver, FileRunRecord, RunVars, Workspace, run_with_files,
};
use agentio_core::{
    AgentError, BoundarySchema, BoxFuture, ErrorCode, ToolCall, ToolInvoker, contain_panics,
};
use serde::Serialize;
use serde_json::{Value, json};

use crate::call::{Cancellation, Progress, ProgressReporter};
use crate::check::{ContractProblem, RegistrationError};
use crate::contract::{Approval, ToolContract};
use crate::typed::{DecodedInput, RunId, ToolContext, ToolError, ToolPlugin, TypedTool};

/// What the host's approver is asked before a gated call runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ApprovalRequest {
    /// The run that makes the call.
    pub run_id: String,
    /// The tool's id.
    pub tool_id: String,
    /// `id@major`.
    pub identity: String,
    /// The contract's approval class (for `policy:<ref>`, the policy to apply).
    pub approval: Approval,
    /// What the tool may modify.
    pub mutates: Vec<String>,
    /// The contract's risk level.
    pub risk_level: u8,
    /// The validated arguments.
    pub input: Value,
}

/// An approver's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApprovalDecision {
    /// Run the call.
    Approve,
    /// Do not run it; the reason is shown to the caller.
    Deny {
        /// Why, safe to show a model.
        reason: String,
    },
}

/// The host's approval gate (AIP-7): asked before every call whose approval class requires it.
/// Without an approver, such calls are denied.
pub trait Approver: Send + Sync {
    /// Decides one call.
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision>;
}

/// Any `Fn(&ApprovalRequest) -> ApprovalDecision` is an approver.
impl<F> Approver for F
where
    F: Fn(&ApprovalRequest) -> ApprovalDecision + Send + Sync,
{
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        let decision = self(request);
        Box::pin(async move { decision })
    }
}

/// How a gated call's approval went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalOutcome {
    /// The contract did not require approval.
    NotRequired,
    /// The approver said yes.
    Approved,
    /// The approver said no, or there was no approver.
    Denied,
}

/// One row of the audit trail: one per call, whatever its outcome (AIP-14 "Audit log shape").
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AuditRecord {
    /// Always `tool.invoked`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The run that made the call.
    pub run_id: String,
    /// The tool's id (as called).
    pub tool_id: String,
    /// The contract's version (empty when the tool is unknown).
    pub tool_version: String,
    /// The contract's declared mutations: what an auditor joins against observed effects.
    pub tool_mutates: Vec<String>,
    /// The argument keys (never the values: they may hold personal data).
    pub input_keys: Vec<String>,
    /// How approval went.
    pub approval: ApprovalOutcome,
    /// Attempts made (0 when the call was refused before the body ran).
    pub attempts: u32,
    /// Wall time of the whole call.
    pub duration_ms: u64,
    /// Whether it succeeded.
    pub ok: bool,
    /// The error code when it failed.
    pub error_code: Option<String>,
    /// When the call ended, in milliseconds since the Unix epoch.
    pub ts_unix_ms: u64,
    /// For a tool with a file contract: every file staged and synced, with size and SHA-256.
    pub files: Option<FileRunRecord>,
}

/// Receives audit records.
pub trait AuditSink: Send + Sync {
    /// Records one call.
    fn record(&self, record: AuditRecord);

    /// Records a registration, with the contract in its canonical JSON Schema form (AIP-14:
    /// the audit log records the canonical schema, not a framework-specific one). Calls carry
    /// the contract's `tool_id` and `tool_version`, which key back to this entry.
    fn tool_registered(&self, contract: &ToolContract) {
        let _ = contract;
    }
}

/// An in-memory [`AuditSink`].
#[derive(Default)]
pub struct AuditLog {
    records: Mutex<Vec<AuditRecord>>,
    registered: Mutex<Vec<ToolContract>>,
}

impl AuditLog {
    /// The contracts registered so far, canonical JSON Schema included.
    ///
    /// ```
    /// # use agentio_tools::{ToolError, tool, tool_registry};
    /// # #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// # struct Note { text: String }
    /// # /// Saves a note.
    /// # #[tool(id = "notes.save", version = "2.1.0")]
    /// # async fn save(note: Note) -> Result<Note, ToolError> { Ok(note) }
    /// use agentio_tools::{AuditLog, ToolRegistry};
    /// use std::sync::Arc;
    ///
    /// let audit = Arc::new(AuditLog::default());
    /// let mut registry = ToolRegistry::new().with_audit_sink(audit.clone());
    /// registry.register(SaveTool).unwrap();
    /// let registered = audit.registered();
    /// assert_eq!((registered[0].id.as_str(), registered[0].version.as_str()), ("notes.save", "2.1.0"));
    /// assert_eq!(registered[0].inputs["properties"]["text"]["type"], "string");
    /// ```
    pub fn registered(&self) -> Vec<ToolContract> {
        self.registered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// A copy of every record so far, in order.
    ///
    /// ```
    /// # use agentio_tools::{ToolError, tool, tool_registry};
    /// # #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// # struct Note { text: String }
    /// # /// Saves a note.
    /// # #[tool(id = "notes.save", version = "2.1.0")]
    /// # async fn save(note: Note) -> Result<Note, ToolError> { Ok(note) }
    /// use agentio_tools::{AuditLog, ToolRegistry};
    /// use serde_json::json;
    /// use std::sync::Arc;
    ///
    /// let audit = Arc::new(AuditLog::default());
    /// let mut registry = ToolRegistry::new().with_audit_sink(audit.clone());
    /// registry.register(SaveTool).unwrap();
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// runtime.block_on(registry.call("notes.save", json!({ "text": "hi" }))).unwrap();
    /// runtime.block_on(registry.call("notes.save", json!({}))).unwrap_err();
    /// let records = audit.records();
    /// assert_eq!((records[0].ok, records[0].tool_version.as_str()), (true, "2.1.0"));
    /// assert_eq!(records[0].input_keys, ["text"]);
    /// assert_eq!(records[1].error_code.as_deref(), Some("input_invalid"));
    /// ```
    pub fn records(&self) -> Vec<AuditRecord> {
        self.records
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl AuditSink for AuditLog {
    fn record(&self, record: AuditRecord) {
        self.records
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(record);
    }

    fn tool_registered(&self, contract: &ToolContract) {
        self.registered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(contract.clone());
    }
}

impl fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.records.lock().map_or(0, |r| r.len());
        f.debug_struct("AuditLog").field("records", &count).finish()
    }
}

/// Per-call options: the run, the host context the contract's `contextSchema` describes, and
/// what the transport brings with the call (progress, cancellation, an approver of its own).
///
/// ```
/// use agentio_tools::{ApprovalDecision, ApprovalRequest, CallOptions, Cancellation, Progress};
/// use serde_json::json;
/// use std::sync::Arc;
///
/// let cancel = Cancellation::new();
/// let options = CallOptions::default()
///     .with_run_id("run-7")
///     .with_context(json!({ "tenant": "acme" }))
///     .with_progress(|p: Progress| println!("{}", p.progress))
///     .with_cancellation(cancel.clone())
///     .with_approver(Arc::new(|_: &ApprovalRequest| ApprovalDecision::Approve));
/// assert_eq!(options.run_id.as_deref(), Some("run-7"));
/// ```
#[derive(Clone, Default)]
pub struct CallOptions {
    /// The run making the call; a fresh id when `None`.
    pub run_id: Option<String>,
    /// The host-supplied context (`null` when the tool needs none).
    pub context: Value,
    /// Where the body's [`ToolContext::report_progress`] reports go; dropped when `None`.
    pub progress: Option<ProgressReporter>,
    /// Fired by the caller to stop the call; it then fails with `cancelled`.
    pub cancellation: Option<Cancellation>,
    /// Decides this call's approval instead of the registry's approver (an MCP server asks
    /// the connected client through elicitation, per connection).
    pub approver: Option<Arc<dyn Approver>>,
}

impl CallOptions {
    /// Sets the run id (the body reads it from [`ToolContext::run_id`]; audit records carry it).
    ///
    /// ```
    /// let options = agentio_tools::CallOptions::default().with_run_id("run-7");
    /// assert_eq!(options.run_id.as_deref(), Some("run-7"));
    /// ```
    #[must_use]
    pub fn with_run_id(mut self, run_id: impl Into<String>) -> Self {
        self.run_id = Some(run_id.into());
        self
    }

    /// Sets the host context, which the tool's `contextSchema` checks before the body runs.
    ///
    /// ```
    /// let options = agentio_tools::CallOptions::default().with_context(serde_json::json!({ "tenant": "acme" }));
    /// assert_eq!(options.context["tenant"], "acme");
    /// ```
    #[must_use]
    pub fn with_context(mut self, context: Value) -> Self {
        self.context = context;
        self
    }

    /// Sends the body's progress reports to `sink`.
    ///
    /// ```
    /// use agentio_tools::{CallOptions, Progress, ToolContext, ToolError, tool, tool_registry};
    /// use std::sync::{Arc, Mutex};
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Job { steps: u32 }
    ///
    /// /// Runs a job, reporting each step.
    /// #[tool(id = "jobs.run")]
    /// async fn run(job: Job, ctx: &ToolContext) -> Result<Job, ToolError> {
    ///     for step in 1..=job.steps {
    ///         ctx.report_progress(Progress::new(f64::from(step)).with_total(f64::from(job.steps)));
    ///     }
    ///     Ok(job)
    /// }
    ///
    /// let heard = Arc::new(Mutex::new(Vec::new()));
    /// let sink = heard.clone();
    /// let options = CallOptions::default().with_progress(move |p: Progress| sink.lock().unwrap().push(p.progress));
    /// let registry = tool_registry![RunTool].unwrap();
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// runtime.block_on(registry.call_with("jobs.run", serde_json::json!({ "steps": 3 }), options)).unwrap();
    /// assert_eq!(*heard.lock().unwrap(), [1.0, 2.0, 3.0]);
    /// ```
    #[must_use]
    pub fn with_progress(mut self, sink: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(ProgressReporter::new(sink));
        self
    }

    /// Lets the caller cancel the call through `cancellation`; a cancelled call fails with
    /// `cancelled`.
    ///
    /// ```
    /// # use agentio_tools::{ToolError, tool, tool_registry};
    /// # #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// # struct Note { text: String }
    /// # /// Saves a note.
    /// # #[tool(id = "notes.save", version = "2.1.0")]
    /// # async fn save(note: Note) -> Result<Note, ToolError> { Ok(note) }
    /// use agentio_tools::{CallOptions, Cancellation};
    ///
    /// let registry = tool_registry![SaveTool].unwrap();
    /// let cancel = Cancellation::new();
    /// cancel.cancel();
    /// let options = CallOptions::default().with_cancellation(cancel);
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let err = runtime
    ///     .block_on(registry.call_with("notes.save", serde_json::json!({ "text": "hi" }), options))
    ///     .unwrap_err();
    /// assert_eq!(err.code().as_str(), "cancelled");
    /// ```
    #[must_use]
    pub fn with_cancellation(mut self, cancellation: Cancellation) -> Self {
        self.cancellation = Some(cancellation);
        self
    }

    /// Decides this call's approval with `approver` instead of the registry's.
    ///
    /// ```
    /// use agentio_tools::{ApprovalDecision, ApprovalRequest, CallOptions, ToolError, tool, tool_registry};
    /// use serde_json::json;
    /// use std::sync::Arc;
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Note { text: String }
    ///
    /// /// Saves a note; it changes the workspace, so each call is approved.
    /// #[tool(id = "notes.save", mutates = ["workspace:/notes"])]
    /// async fn save(note: Note) -> Result<Note, ToolError> { Ok(note) }
    ///
    /// // The registry has no approver: gated calls are denied unless the call brings one.
    /// let registry = tool_registry![SaveTool].unwrap();
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let denied = runtime.block_on(registry.call("notes.save", json!({ "text": "hi" }))).unwrap_err();
    /// assert_eq!(denied.code().as_str(), "approval_denied");
    /// let options = CallOptions::default()
    ///     .with_approver(Arc::new(|_: &ApprovalRequest| ApprovalDecision::Approve));
    /// let saved = runtime.block_on(registry.call_with("notes.save", json!({ "text": "hi" }), options));
    /// assert_eq!(saved.unwrap(), json!({ "text": "hi" }));
    /// ```
    #[must_use]
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("run_id", &self.run_id)
            .field("context", &self.context)
            .field("progress", &self.progress.is_some())
            .field("cancellation", &self.cancellation)
            .field("approver", &self.approver.is_some())
            .finish()
    }
}

struct RegisteredTool {
    plugin: Arc<dyn ToolPlugin>,
    /// The contract's id, shared with every call's context instead of copied per call.
    id: Arc<str>,
    /// The contract's `mutates`, shared with every call's context instead of copied per call.
    mutates: Arc<[String]>,
    contract: ToolContract,
    inputs: Schema,
    outputs: Schema,
    context: Option<BoundarySchema>,
}

enum Schema {
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
/// `timeout_ms` is a hard wall-clock ceiling. On a **multi-thread** runtime each attempt runs
/// as its own task, so even a body that blocks its thread (`std::thread::sleep`, a busy loop,
/// blocking I/O) is answered `timeout` at the ceiling; the task is aborted, and a thread that
/// never yields runs on until it returns, its result dropped. On a **current-thread** runtime
/// the body shares the only thread, so the timer fires no earlier than the body's next
/// `.await`: a body that blocks is answered when it returns, and a result that comes after the
/// ceiling is still `timeout`, never a success. Hosts that run blocking tools should use a
/// multi-thread runtime. On a current-thread runtime the body runs inside the caller's task,
/// so task-locals the caller set (`tokio::task_local!`) are visible to it; on a multi-thread
/// runtime it runs in a task of its own, and they are not. A result that arrives exactly at the
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
    majors: HashMap<String, Vec<usize>, foldhash::fast::RandomState>,
    approver: Option<Arc<dyn Approver>>,
    review_every_call: bool,
    audit: Option<Arc<dyn AuditSink>>,
    workspace: Option<Workspace>,
    file_observer: Option<Arc<dyn FileObserver>>,
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
            approver: None,
            review_every_call: false,
            audit: None,
            workspace: None,
            file_observer: None,
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
    /// dropping them needs a [`Cancellation`] only when one does: a dropped call writes no
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
        let contract = plugin.tool_contract();
        // Identity is `id@major` (AIP-14 "Stable identity"): two majors of one id are two tools.
        let identity = contract.identity();
        if self.tools.contains_key(&identity) {
            return Err(RegistrationError {
                tool_id: contract.id.clone(),
                problems: vec![ContractProblem {
                    pointer: "/id".into(),
                    message: format!("a tool with identity `{identity}` is already registered"),
                }],
            });
        }
        let typed_inputs = plugin.input_boundary();
        let typed_outputs = plugin.output_boundary();
        let compiled = contract.compile(typed_inputs, typed_outputs)?;
        if let Some(io) = plugin.file_contract() {
            let problems = uncovered_outputs(io, &contract.mutates);
            if !problems.is_empty() {
                return Err(RegistrationError {
                    tool_id: contract.id.clone(),
                    problems,
                });
            }
        }
        let pick = |typed: Option<&'static BoundarySchema>, own: Option<BoundarySchema>| match (
            typed, own,
        ) {
            (Some(shared), _) => Some(Schema::Shared(shared)),
            (None, Some(owned)) => Some(Schema::Owned(Box::new(owned))),
            (None, None) => None,
        };
        let (Some(inputs), Some(outputs)) = (
            pick(typed_inputs, compiled.inputs),
            pick(typed_outputs, compiled.outputs),
        ) else {
            return Err(RegistrationError {
                tool_id: contract.id.clone(),
                problems: Vec::new(),
            });
        };
        let registered = RegisteredTool {
            plugin,
            mutates: Arc::from(contract.mutates.clone()),
            id: Arc::from(contract.id.as_str()),
            inputs,
            outputs,
            context: compiled.context,
            contract,
        };
        if let Some(sink) = &self.audit {
            sink.tool_registered(&registered.contract);
        }
        let at = self.entries.len();
        self.majors
            .entry(registered.contract.id.clone())
            .or_default()
            .push(at);
        self.tools.insert(identity, at);
        self.entries.push(registered);
        Ok(())
    }

    /// The registered tools, ordered by identity.
    fn in_identity_order(&self) -> impl Iterator<Item = (&str, &RegisteredTool)> {
        self.tools
            .iter()
            .filter_map(|(identity, &at)| Some((identity.as_str(), self.entries.get(at)?)))
    }

    /// The registered tool a caller means: `id@major` names one exactly; a bare `id` names the
    /// only registered major of that id, and is ambiguous when there are several.
    fn resolve(&self, tool_id: &str) -> Result<&RegisteredTool, ToolError> {
        let not_found =
            || AgentError::new(ErrorCode::NotFound, format!("there is no tool `{tool_id}`"));
        if tool_id.contains('@') {
            return self
                .tools
                .get(tool_id)
                .and_then(|&at| self.entries.get(at))
                .ok_or_else(not_found);
        }
        match self.majors.get(tool_id).map(Vec::as_slice) {
            None | Some([]) => Err(not_found()),
            Some(&[only]) => self.entries.get(only).ok_or_else(not_found),
            Some(several) => {
                let mut identities: Vec<String> = several
                    .iter()
                    .filter_map(|&at| self.entries.get(at))
                    .map(|t| t.contract.identity())
                    .collect();
                identities.sort();
                Err(AgentError::new(
                    ErrorCode::NoRoute,
                    format!(
                        "several versions of `{tool_id}` are registered; call one of {}",
                        identities.join(", ")
                    ),
                ))
            }
        }
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
        agentio_core::skill::check_skill(skill, |id| self.tool_schemas(id))
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
        if let Err(err) = self.validate_skill(skill) {
            return Err(AgentError::new(
                ErrorCode::Other("incompatible_chain".into()),
                err.to_string(),
            ));
        }
        // One run id for every step, so the audit trail ties them together.
        let mut options = options;
        let run_id = options
            .run_id
            .take()
            .unwrap_or_else(agentio_core::new_run_id);
        let mut value = input;
        for (index, step) in skill.steps.iter().enumerate() {
            // The skill's input precedes the first step: a mapping there picks from it.
            value = skill.next_input(index, value);
            let step_options = options.clone().with_run_id(run_id.clone());
            value = self
                .call_with(&step.tool, value, step_options)
                .await
                .map_err(|err| {
                    let message =
                        format!("skill step {index} (`{}`): {}", step.tool, err.message());
                    let violations = err.violations().to_vec();
                    AgentError::new(err.code().clone(), message)
                        .with_retryable(err.is_retryable())
                        .with_violations(violations)
                })?;
        }
        Ok(value)
    }

    /// Every registered tool, ordered by identity: identity, contract, input and output schema.
    pub(crate) fn registered(
        &self,
    ) -> impl Iterator<Item = (&str, &ToolContract, &BoundarySchema, &BoundarySchema)> {
        self.in_identity_order()
            .map(|(identity, t)| (identity, &t.contract, t.inputs.get(), t.outputs.get()))
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
        let input = if input.is_null() { json!({}) } else { input };
        let mut call = match &self.audit {
            // Boxed: the record and its bookkeeping stay out of an unaudited call's future.
            Some(sink) => Call::Audited(Box::pin(self.call_audited(
                sink.as_ref(),
                tool_id,
                input,
                options,
            ))),
            None => {
                let cancellation = options.cancellation.clone();
                let run_id = RunId::of(options.run_id.as_deref());
                let admitted = self.admit(tool_id, input, options, run_id, None);
                Call::Plain {
                    admitted,
                    cancellation,
                }
            }
        };
        async move {
            // Matched by reference: moving the parts out would store them twice.
            match &mut call {
                Call::Audited(call) => call.await,
                Call::Plain {
                    admitted,
                    cancellation,
                } => {
                    // A call cancelled before it starts is `cancelled`, whatever its input.
                    if cancellation
                        .as_ref()
                        .is_some_and(Cancellation::is_cancelled)
                    {
                        return Err(cancelled_error(tool_id));
                    }
                    let admitted = match admitted {
                        Ok(admitted) => admitted,
                        // Taken once: this future ends here.
                        Err(err) => return Err(std::mem::replace(err, AgentError::internal(""))),
                    };
                    // The common call (one attempt, ungated, no files, on a current-thread
                    // runtime or inside a host's own polling) runs in this future's own
                    // state; the rest of the contract's machinery is boxed, so that the
                    // common call's future does not carry its space.
                    if admitted.runs_once() && polled_in_place() {
                        return single_attempt(&mut admitted.run, cancellation.as_ref()).await;
                    }
                    Box::pin(async {
                        let finish = std::pin::pin!(self.finish(admitted, None));
                        until_cancelled(finish, cancellation.as_ref(), tool_id).await
                    })
                    .await
                }
            }
        }
    }

    /// [`Self::call_with`] with an audit sink: the call, then its record.
    async fn call_audited(
        &self,
        sink: &dyn AuditSink,
        tool_id: &str,
        input: Value,
        options: CallOptions,
    ) -> Result<Value, ToolError> {
        let started = Instant::now();
        let run_id = RunId::of(options.run_id.as_deref());
        let mut audit = AuditRecord {
            kind: "tool.invoked",
            run_id: run_id.as_str().to_owned(),
            tool_id: tool_id.to_owned(),
            tool_version: String::new(),
            tool_mutates: Vec::new(),
            input_keys: input
                .as_object()
                .map(|object| object.keys().cloned().collect())
                .unwrap_or_default(),
            approval: ApprovalOutcome::NotRequired,
            attempts: 0,
            duration_ms: 0,
            ok: false,
            error_code: None,
            ts_unix_ms: 0,
            files: None,
        };
        let cancellation = options.cancellation.clone();
        let result = {
            let mut admitted =
                self.admit(tool_id, input, options, run_id.clone(), Some(&mut audit));
            let finish = std::pin::pin!(async {
                match &mut admitted {
                    Ok(admitted) => self.finish(admitted, Some(&mut audit)).await,
                    Err(err) => Err(std::mem::replace(err, AgentError::internal(""))),
                }
            });
            until_cancelled(finish, cancellation.as_ref(), tool_id).await
        };
        audit.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        audit.ok = result.is_ok();
        audit.error_code = result.as_ref().err().map(|e| e.code().to_string());
        audit.ts_unix_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        sink.record(audit);
        result
    }

    /// Asks for approval of a call the contract (or the registry) gates; boxed by the caller,
    /// so that an ungated call's future does not carry the request.
    async fn approve(
        &self,
        tool_id: &str,
        contract: &ToolContract,
        run_id: &str,
        input: &Value,
        approver: Option<&Arc<dyn Approver>>,
    ) -> Result<(), ToolError> {
        let request = ApprovalRequest {
            run_id: run_id.to_owned(),
            tool_id: contract.id.clone(),
            identity: contract.identity(),
            approval: contract.approval.clone(),
            mutates: contract.mutates.clone(),
            risk_level: contract.risk_level,
            input: input.clone(),
        };
        let decision = match approver.or(self.approver.as_ref()) {
            Some(approver) => approver.approve(&request).await,
            None => ApprovalDecision::Deny {
                reason: "no approver is configured".into(),
            },
        };
        match decision {
            ApprovalDecision::Approve => Ok(()),
            ApprovalDecision::Deny { reason } => Err(AgentError::new(
                ErrorCode::ApprovalDenied,
                format!("the call to `{tool_id}` was not approved: {reason}"),
            )),
        }
    }

    /// Everything a call settles before its body may run, synchronously: the tool, its input
    /// (decoded for a typed tool without files, validated in full otherwise), the host
    /// context, and the body's [`ToolContext`]. A bad input stops here, before approval.
    fn admit<'r>(
        &'r self,
        tool_id: &'r str,
        input: Value,
        options: CallOptions,
        run_id: RunId,
        audit: Option<&mut AuditRecord>,
    ) -> Result<Admitted<'r>, ToolError> {
        let CallOptions {
            context,
            progress,
            cancellation,
            approver,
            ..
        } = options;
        let tool = self.resolve(tool_id)?;
        let contract = &tool.contract;
        if let Some(audit) = audit {
            audit.tool_version = contract.version.clone();
            audit.tool_mutates = contract.mutates.clone();
        }

        // A typed tool without files decodes its input here, checking only what serde leaves
        // unchecked; every other tool's input is validated in full. Either way a bad input
        // stops here, before approval, with the same error.
        let decoded = if tool.plugin.file_contract().is_none() {
            tool.plugin.__decode(&input)
        } else {
            None
        };
        let decoded = match decoded {
            Some(Ok(decoded)) => Some(decoded),
            Some(Err(err)) => {
                // A refused value may be deeper than a recursive drop can take.
                agentio_core::limits::dismantle(input);
                return Err(err);
            }
            None => {
                if let Err(err) = tool.inputs.get().validate(&input) {
                    agentio_core::limits::dismantle(input);
                    return Err(err.into());
                }
                None
            }
        };
        if let Some(schema) = &tool.context {
            schema.validate(&context).map_err(|err| {
                let violations = err.violations().to_vec();
                AgentError::new(
                    ErrorCode::ContextInvalid,
                    "the host did not supply the context this tool requires",
                )
                .with_violations(violations)
                .with_operator_detail(err.message().to_owned())
            })?;
        }

        let mut base = ToolContext::for_call(run_id, Arc::clone(&tool.id), tool.mutates.clone())
            .with_context(context);
        if let Some(progress) = progress {
            base = base.with_progress(progress);
        }
        if let Some(cancellation) = cancellation {
            base = base.with_cancellation(cancellation);
        }
        Ok(Admitted {
            run: Attempts {
                tool,
                tool_id,
                input: Some(input),
                decoded,
                base: Some(base),
            },
            gated: contract.needs_approval() || self.review_every_call,
            approver,
        })
    }

    /// The rest of an admitted call: approval when it is gated, then its attempts (within the
    /// file lifecycle when it declares files).
    async fn finish(
        &self,
        admitted: &mut Admitted<'_>,
        mut audit: Option<&mut AuditRecord>,
    ) -> Result<Value, ToolError> {
        let tool = admitted.run.tool;
        let tool_id = admitted.run.tool_id;
        let contract = &tool.contract;
        if admitted.gated {
            let input = admitted.run.input.as_ref().unwrap_or(&Value::Null);
            // Boxed: an ungated call's future does not carry the request.
            let approved = Box::pin(self.approve(
                tool_id,
                contract,
                run_id_in(&admitted.run),
                input,
                admitted.approver.as_ref(),
            ))
            .await;
            if let Some(audit) = audit.as_deref_mut() {
                audit.approval = if approved.is_ok() {
                    ApprovalOutcome::Approved
                } else {
                    ApprovalOutcome::Denied
                };
            }
            approved?;
        }

        let mut attempts = 0;
        let Some(io) = tool.plugin.file_contract() else {
            let result = run_attempts(&mut admitted.run, &mut attempts).await;
            if let Some(audit) = audit {
                audit.attempts = attempts;
            }
            return result;
        };
        // AIP-16 file contract: stage, inject `_workflowFsRoot`, validate, run, sync, clean up.
        let Some(workspace) = &self.workspace else {
            // A host configuration error: said in the message, which the host reads first.
            let reason = format!(
                "the tool host is misconfigured: tool `{tool_id}` declares files, but the registry has no workspace (ToolRegistry::with_workspace)"
            );
            return Err(AgentError::internal(reason.clone()).with_operator_detail(reason));
        };
        let host = FileHost {
            workspace,
            observer: self.file_observer.as_deref(),
            // A declared output file is a workspace mutation: sync only what `mutates` covers.
            mutates: Some(&contract.mutates),
        };
        let vars = RunVars::new(run_id_in(&admitted.run), &contract.id);
        let input = admitted.run.input.take().unwrap_or_default();
        let base = admitted.run.base.take();
        // Boxed: the file lifecycle's future is large, and a call without files should not
        // carry its space.
        let (result, record) = Box::pin(run_with_files(io, host, &vars, input, |input| {
            let mut run = Attempts {
                tool,
                tool_id,
                input: Some(input),
                decoded: None,
                base,
            };
            async move { run_attempts(&mut run, &mut attempts).await }
        }))
        .await;
        if let Some(audit) = audit {
            audit.attempts = attempts;
            audit.files = Some(record);
        }
        result
    }
}

/// A call's two forms of future: audited (boxed), or admitted and ready to finish. The
/// variants differ in size on purpose: the common one is held inline, the rare one boxed.
#[allow(clippy::large_enum_variant)]
enum Call<'r, A> {
    Audited(std::pin::Pin<Box<A>>),
    Plain {
        admitted: Result<Admitted<'r>, ToolError>,
        cancellation: Option<Cancellation>,
    },
}

/// A call whose input and context are settled (see [`ToolRegistry::admit`]).
struct Admitted<'r> {
    run: Attempts<'r>,
    /// Whether a person (or the approver) must say yes first.
    gated: bool,
    approver: Option<Arc<dyn Approver>>,
}

impl Admitted<'_> {
    /// Whether the call is one attempt and nothing else: no approval, no files, no retry.
    fn runs_once(&self) -> bool {
        let tool = self.run.tool;
        !self.gated && tool.plugin.file_contract().is_none() && max_attempts(&tool.contract) == 1
    }
}

/// What the attempts of one call run on.
struct Attempts<'r> {
    tool: &'r RegisteredTool,
    tool_id: &'r str,
    /// The input as JSON: for a body that decodes it, for a retry, and for approval.
    input: Option<Value>,
    /// The input decoded ahead of the call, for its first attempt.
    decoded: Option<DecodedInput>,
    /// The body's context; the last attempt takes it.
    base: Option<ToolContext>,
}

/// The run id of a call whose attempts have not started (its context holds it).
fn run_id_in<'a>(run: &'a Attempts<'_>) -> &'a str {
    run.base.as_ref().map_or("", ToolContext::run_id)
}

/// The attempts of one call: each under the timeout, retried per the contract, then the
/// output validated.
///
/// The host never retries a tool that is not idempotent, so a caller must not either: its
/// errors are not retryable, whatever their code says by default.
async fn run_attempts(run: &mut Attempts<'_>, attempts: &mut u32) -> Result<Value, ToolError> {
    let tool = run.tool;
    let contract = &tool.contract;
    let final_error = |err: ToolError| final_error(contract, err);
    let max_attempts = max_attempts(contract);
    let timeout = Duration::from_millis(contract.timeout_ms);
    // The first attempt runs on the decoded input when there is one; the JSON form is kept
    // only while a retry may still need it.
    if run.decoded.is_some() && max_attempts == 1 {
        drop(run.input.take());
    }
    let mut attempt = 1;
    let output = loop {
        *attempts = attempt;
        // The last attempt takes the base context and the input; earlier ones get copies.
        // (`attempt` counts up to `max_attempts` and no further, so `==` is the whole test.)
        let last = attempt == max_attempts;
        let ctx = match if last {
            run.base.take()
        } else {
            run.base.clone()
        } {
            Some(ctx) => ctx.with_attempt(attempt),
            None => return Err(AgentError::internal("a call was run twice")),
        };
        let payload = match run.decoded.take() {
            Some(decoded) => Payload::Decoded(decoded),
            None => Payload::Json(
                if last {
                    run.input.take()
                } else {
                    run.input.clone()
                }
                .unwrap_or_default(),
            ),
        };
        let result = run_attempt(&tool.plugin, payload, &ctx, timeout, run.tool_id).await;
        match result {
            Err(err) if err.is_retryable() && attempt < max_attempts => {
                if let Some(policy) = &contract.retry {
                    sleep(policy.delay_before(attempt + 1))
                        .await
                        .map_err(final_error)?;
                }
                attempt += 1;
            }
            other => break other.map_err(final_error)?,
        }
    };
    checked_output(tool, output)
}

/// The attempts the contract allows: its retry policy's, for an idempotent tool; one
/// otherwise.
fn max_attempts(contract: &ToolContract) -> u32 {
    match (&contract.retry, contract.idempotent) {
        (Some(policy), true) => policy.max_attempts.max(1),
        _ => 1,
    }
}

/// An error as the call ends with it: the host never retries a tool that is not idempotent,
/// so a caller must not either, whatever the code says by default.
fn final_error(contract: &ToolContract, err: ToolError) -> ToolError {
    if !contract.idempotent && err.is_retryable() {
        err.with_retryable(false)
    } else {
        err
    }
}

/// A call's output, validated unless the plugin checked it as it encoded it (a typed tool
/// does).
fn checked_output(tool: &RegisteredTool, output: Value) -> Result<Value, ToolError> {
    if !tool.plugin.__validates_output()
        && let Err(err) = tool.outputs.get().validate(&output)
    {
        agentio_core::limits::dismantle(output);
        return Err(final_error(&tool.contract, err.into()));
    }
    Ok(output)
}

/// Whether a call's body would run on the caller's thread: inside a Tokio runtime that is not
/// multi-thread (see [`run_attempt`]).
fn polled_in_place() -> bool {
    tokio::runtime::Handle::try_current()
        .is_ok_and(|handle| handle.runtime_flavor() != tokio::runtime::RuntimeFlavor::MultiThread)
}

/// A call that is one attempt on the caller's thread ([`Admitted::runs_once`],
/// [`polled_in_place`]): [`run_attempts`], [`run_attempt`], [`local_attempt`] and
/// [`until_cancelled`] in one future, with the same outcome. Called once per call.
async fn single_attempt(
    run: &mut Attempts<'_>,
    cancellation: Option<&Cancellation>,
) -> Result<Value, ToolError> {
    let tool = run.tool;
    let contract = &tool.contract;
    // Borrowed where `admit` left it (its first attempt), not moved: the call's future then
    // holds one context, not two.
    let Some(ctx) = run.base.as_ref() else {
        return Err(AgentError::internal("a call was run twice"));
    };
    // No retry may need the JSON form: it goes as soon as the input is decoded.
    let payload = match run.decoded.take() {
        Some(decoded) => {
            drop(run.input.take());
            Payload::Decoded(decoded)
        }
        None => Payload::Json(run.input.take().unwrap_or_default()),
    };
    let timeout = Duration::from_millis(contract.timeout_ms);
    let started = agentio_core::__Started::now(timeout);
    let mut body = payload.execute(tool.plugin.as_ref(), ctx);
    let mut timer = None;
    let mut waiter = None;
    // `None`: cancelled. The body (with its timer) is polled first, as `until_cancelled`
    // polls the call first.
    let ended = std::future::poll_fn(|cx| {
        if let Poll::Ready(ended) = poll_local(&mut body, &mut timer, timeout, started, cx) {
            return Poll::Ready(Some(ended));
        }
        if let Some(cancellation) = cancellation
            && fired(&mut waiter, || cancellation.cancelled(), cx)
        {
            return Poll::Ready(None);
        }
        Poll::Pending
    })
    .await;
    drop(body);
    let Some(ended) = ended else {
        return Err(cancelled_error(run.tool_id));
    };
    let output = attempt_result(ended, started, timeout, run.tool_id)
        .map_err(|err| final_error(contract, err))?;
    checked_output(tool, output)
}

/// What one attempt runs on.
enum Payload {
    /// The input as JSON, decoded by the plugin.
    Json(Value),
    /// The input decoded (and checked) ahead of the call.
    Decoded(DecodedInput),
}

impl Payload {
    fn execute<'a>(
        self,
        plugin: &'a dyn ToolPlugin,
        ctx: &'a ToolContext,
    ) -> agentio_core::BoxFuture<'a, Result<Value, ToolError>> {
        match self {
            Payload::Json(input) => plugin.execute(input, ctx),
            Payload::Decoded(input) => plugin.__execute_decoded(input, ctx),
        }
    }
}

/// One attempt under the contract's wall-clock ceiling.
///
/// On a multi-thread Tokio runtime the body runs as its own task, so a body that blocks its
/// thread (`std::thread::sleep`, a busy loop) cannot starve the timer: the caller gets
/// `timeout` at the ceiling, and the task is aborted (a thread that never yields runs on until
/// it returns, but its result is dropped). On a current-thread runtime the body shares the
/// caller's only thread, so the timer can fire no earlier than the body's next `.await`; a
/// result that arrives after the ceiling is still reported as `timeout`, never as success.
///
/// Not an `async fn`: the body's future is made here and the attempt's future holds only it.
fn run_attempt<'a>(
    plugin: &'a Arc<dyn ToolPlugin>,
    input: Payload,
    ctx: &'a ToolContext,
    timeout: Duration,
    tool_id: &'a str,
) -> impl Future<Output = Result<Value, ToolError>> + Send + 'a {
    // Tokio's clock (the one the timer reads) for a short ceiling, a cheaper one for a long
    // ceiling (see `agentio_core::__Started`).
    let started = agentio_core::__Started::now(timeout);
    let attempt = match tokio::runtime::Handle::try_current() {
        Err(_) => Attempt::NoRuntime,
        // Boxed: this path spawns a task anyway, and a call on a current-thread runtime
        // should not carry its space.
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            Attempt::Spawned(Box::pin(spawned_attempt(
                handle,
                Arc::clone(plugin),
                input,
                ctx.clone(),
                timeout,
            )))
        }
        Ok(_) => Attempt::Local(input.execute(plugin.as_ref(), ctx)),
    };
    async move {
        let ended = match attempt {
            Attempt::NoRuntime => return Err(no_runtime()),
            Attempt::Spawned(spawned) => spawned.await,
            Attempt::Local(body) => local_attempt(body, timeout, started).await,
        };
        attempt_result(ended, started, timeout, tool_id)
    }
}

/// What an attempt that `started` under `timeout` answers, once it has ended.
fn attempt_result(
    ended: Ended,
    started: agentio_core::__Started,
    timeout: Duration,
    tool_id: &str,
) -> Result<Value, ToolError> {
    let timed_out = || {
        AgentError::new(
            ErrorCode::Timeout,
            format!(
                "tool `{tool_id}` did not finish within {} ms",
                timeout.as_millis()
            ),
        )
    };
    match ended {
        Ended::Elapsed => Err(timed_out()),
        Ended::Failed(err) => Err(err),
        // A body that blocked its thread past the ceiling: its result is not a success.
        Ended::Done(_) if started.passed(timeout) => Err(timed_out()),
        Ended::Done(result) => result,
    }
}

/// How an attempt is run.
enum Attempt<'a> {
    NoRuntime,
    Spawned(std::pin::Pin<Box<dyn Future<Output = Ended> + Send>>),
    Local(agentio_core::BoxFuture<'a, Result<Value, ToolError>>),
}

/// How an attempt ended.
enum Ended {
    /// The body's own result (a panic contained as an `internal` error).
    Done(Result<Value, ToolError>),
    /// The body ran past its ceiling.
    Elapsed,
    /// The host failed around the body (its timer).
    Failed(ToolError),
}

/// An attempt on a current-thread runtime: the body polled in place, panics contained.
///
/// Most bodies finish on their first poll: those never arm a timer (arming one can wake the
/// runtime's driver, a system call per call). A body that waits gets the timer for what is
/// left of its ceiling. One `poll_fn` holds it all, so the attempt's state is the body, the
/// timer and nothing else.
async fn local_attempt(
    mut body: agentio_core::BoxFuture<'_, Result<Value, ToolError>>,
    timeout: Duration,
    started: agentio_core::__Started,
) -> Ended {
    let mut timer = None;
    std::future::poll_fn(move |cx| poll_local(&mut body, &mut timer, timeout, started, cx)).await
}

/// One poll of a body run in place under its ceiling (see [`local_attempt`]); `timer` is
/// armed on the first poll that finds the body waiting.
fn poll_local(
    body: &mut agentio_core::BoxFuture<'_, Result<Value, ToolError>>,
    timer: &mut Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
    timeout: Duration,
    started: agentio_core::__Started,
    cx: &mut std::task::Context<'_>,
) -> Poll<Ended> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| body.as_mut().poll(cx))) {
        Ok(Poll::Ready(result)) => return Poll::Ready(Ended::Done(result)),
        Ok(Poll::Pending) => {}
        Err(payload) => return Poll::Ready(Ended::Done(Err(agentio_core::panicked(&*payload)))),
    }
    let timer = match timer {
        Some(timer) => timer,
        // The timer itself panics in a runtime built without time; contain that as well.
        None => match std::panic::catch_unwind(|| {
            Box::pin(tokio::time::sleep(started.remaining(timeout)))
        }) {
            Ok(armed) => timer.insert(armed),
            Err(payload) => return Poll::Ready(Ended::Failed(agentio_core::panicked(&*payload))),
        },
    };
    match std::panic::catch_unwind(AssertUnwindSafe(|| timer.as_mut().poll(cx))) {
        Ok(Poll::Ready(())) => Poll::Ready(Ended::Elapsed),
        Ok(Poll::Pending) => Poll::Pending,
        Err(payload) => Poll::Ready(Ended::Failed(agentio_core::panicked(&*payload))),
    }
}

/// An attempt on a multi-thread runtime: the body as its own task, under the ceiling.
async fn spawned_attempt(
    handle: tokio::runtime::Handle,
    plugin: Arc<dyn ToolPlugin>,
    input: Payload,
    ctx: ToolContext,
    timeout: Duration,
) -> Ended {
    // Aborted when this future is dropped (a cancelled call), not only at the ceiling.
    let mut task = AbortOnDrop(
        handle.spawn(async move { contain_panics(input.execute(plugin.as_ref(), &ctx)).await }),
    );
    // The timer itself panics in a runtime built without time; contain that as well.
    let waited = contain_panics(Box::pin(async {
        Ok(tokio::time::timeout(timeout, &mut task.0).await)
    }))
    .await;
    match waited {
        Ok(Ok(Ok(result))) => Ended::Done(result),
        Ok(Ok(Err(join_error))) => {
            Ended::Done(Err(AgentError::internal("the body failed unexpectedly")
                .with_operator_detail(join_error.to_string())))
        }
        Ok(Err(_elapsed)) => Ended::Elapsed,
        Err(err) => Ended::Failed(err),
    }
}

/// A spawned attempt that is aborted when its handle is dropped.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs a call until it finishes or `cancellation` (when there is one) fires, whichever comes
/// first; a cancelled call's future is dropped, which stops the body at its next `.await`.
async fn until_cancelled(
    mut call: std::pin::Pin<&mut impl Future<Output = Result<Value, ToolError>>>,
    cancellation: Option<&Cancellation>,
    tool_id: &str,
) -> Result<Value, ToolError> {
    let Some(cancellation) = cancellation else {
        return call.await;
    };
    if cancellation.is_cancelled() {
        return Err(cancelled_error(tool_id));
    }
    let mut waiter = None;
    std::future::poll_fn(|cx| {
        if let Poll::Ready(result) = call.as_mut().poll(cx) {
            return Poll::Ready(result);
        }
        if fired(&mut waiter, || cancellation.cancelled(), cx) {
            return Poll::Ready(Err(cancelled_error(tool_id)));
        }
        Poll::Pending
    })
    .await
}

/// Whether a call's cancellation has fired, `cx` woken when it does: `wait` is the signal's
/// [`Cancellation::cancelled`]. Waiting registers a waiter (a lock), and its state is boxed
/// into `waiter` on the first poll that needs it: a call that finishes on its first poll
/// needs neither. Polled after the call itself, so a call that finishes as it is cancelled
/// has finished.
fn fired<F: Future<Output = ()>>(
    waiter: &mut Option<std::pin::Pin<Box<F>>>,
    wait: impl FnOnce() -> F,
    cx: &mut std::task::Context<'_>,
) -> bool {
    waiter
        .get_or_insert_with(|| Box::pin(wait()))
        .as_mut()
        .poll(cx)
        .is_ready()
}

/// The error of a call its caller cancelled.
fn cancelled_error(tool_id: &str) -> ToolError {
    AgentError::new(
        ErrorCode::Cancelled,
        format!("the call to `{tool_id}` was cancelled by its caller"),
    )
}

async fn sleep(duration: Duration) -> Result<(), ToolError> {
    if duration.is_zero() {
        return Ok(());
    }
    contain_panics(Box::pin(async move {
        tokio::time::sleep(duration).await;
        Ok(())
    }))
    .await
}

fn no_runtime() -> ToolError {
    // A host configuration error, not a tool failure: the reason is in the message itself.
    let reason = "the tool host is misconfigured: ToolRegistry::call needs a Tokio runtime with time enabled (for timeouts and retries), and it was called outside one";
    AgentError::internal(reason).with_operator_detail(reason)
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

/// A declared output file is a workspace mutation (AIP-14 `mutates`): each `outputsFiles`
/// path, as written (tokens included), must be covered by a `workspace:` entry. The same rule
/// holds again at sync time on the interpolated path.
pub(crate) fn uncovered_outputs(
    io: &agentio_core::files::IoHandle,
    mutates: &[String],
) -> Vec<ContractProblem> {
    io.outputs_files()
        .iter()
        .filter(|(_, entry)| !agentio_core::files::covers_workspace_path(mutates, &entry.path))
        .map(|(key, entry)| ContractProblem {
            pointer: format!("/outputsFiles/{key}/path"),
            message: format!(
                "the output file `{key}` writes `workspace:/{}`, which no `mutates` entry covers; a declared output file is a workspace mutation: add `workspace:/{}` (or a folder above it) to `mutates`",
                entry.path,
                entry.path.rsplit_once('/').map_or(entry.path.as_str(), |(dir, _)| dir),
            ),
        })
        .collect()
}
