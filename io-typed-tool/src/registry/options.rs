//! What a caller adds to one call: a run id, context, progress, cancellation, an approver.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::call::Cancellation;
use crate::call::Progress;
use crate::call::ProgressReporter;

use super::approval::Approver;

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
    /// Where the body's [`ToolContext::report_progress`](crate::ToolContext::report_progress) reports go; dropped when `None`.
    pub progress: Option<ProgressReporter>,
    /// Fired by the caller to stop the call; it then fails with `cancelled`.
    pub cancellation: Option<Cancellation>,
    /// Decides this call's approval instead of the registry's approver (an MCP server asks
    /// the connected client through elicitation, per connection).
    pub approver: Option<Arc<dyn Approver>>,
    /// Who makes the call, as the host authenticated them (the body reads it from
    /// [`ToolContext::caller`](crate::ToolContext::caller)).
    pub caller: Option<Arc<crate::caller::Caller>>,
    /// Where the body's [`ToolContext::attach`](crate::ToolContext::attach)ed content goes;
    /// dropped when `None` (see [`crate::content`]).
    pub content: Option<crate::content::ContentCollector>,
    /// The client the caller speaks through, for the body's log lines and questions
    /// ([`crate::voice`]); without one they go nowhere and are refused.
    pub client: Option<Arc<dyn crate::voice::ClientPeer>>,
}

impl CallOptions {
    /// Sets who makes the call.
    ///
    /// ```
    /// use agentio_tools::{CallOptions, Caller};
    /// let options = CallOptions::default().with_caller(Caller::new("user-42"));
    /// assert_eq!(options.caller.unwrap().subject, "user-42");
    /// ```
    #[must_use]
    pub fn with_caller(mut self, caller: crate::caller::Caller) -> Self {
        self.caller = Some(Arc::new(caller));
        self
    }

    /// Sets the run id (the body reads it from [`ToolContext::run_id`](crate::ToolContext::run_id); audit records carry it).
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
            .field("caller", &self.caller.as_ref().map(|c| c.subject.as_str()))
            .field("content", &self.content)
            .field("client", &self.client.is_some())
            .finish()
    }
}
