//! `AgentRuntime`: one erased core behind a boundary that validates both ways.

use std::any::Any;
use std::collections::BTreeSet;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::context::{AgentContext, EventSink, ToolInvoker};
use crate::core::{AgentCore, ErasedAgentCore};
use crate::error::{AgentError, ErrorCode};
use crate::files::{
    FileHost, FileObserver, FileRunRecord, IoHandle, RunVars, Workspace, run_with_files,
};
use crate::future::BoxFuture;

/// Runs a core's turns with `serde_json::Value` in and out.
///
/// Around every turn it validates the input against the core's input schema (the body never
/// sees a bad input), contains a panic in the body as an `internal` error, and validates the
/// output against the output schema: an output that breaks it is an `output_invalid` error and
/// is not returned. `AgentRuntime` has no generic parameter: the core is erased once, in
/// [`AgentRuntime::new`].
///
/// ```
/// use agentio_core::{AgentContext, AgentCore, AgentError, AgentRuntime, TurnInput, TurnOutput, agent_core};
/// use serde_json::json;
///
/// struct Shout;
///
/// #[agent_core]
/// impl AgentCore for Shout {
///     fn core_type(&self) -> &str { "shout" }
///     async fn run_turn(&mut self, input: TurnInput, _: &mut AgentContext) -> Result<TurnOutput, AgentError> {
///         Ok(TurnOutput::new(input.message.to_uppercase()))
///     }
/// }
///
/// let mut runtime = AgentRuntime::new(Shout);
/// let out = pollster::block_on(runtime.run_turn(json!({ "message": "hey" }))).unwrap();
/// assert_eq!(out, json!({ "response": "HEY" }));
///
/// let err = pollster::block_on(runtime.run_turn(json!({ "message": 7 }))).unwrap_err();
/// assert_eq!(err.code().as_str(), "input_invalid");
/// assert_eq!(err.violations()[0].pointer, "/message");
/// ```
pub struct AgentRuntime {
    core: Box<dyn ErasedAgentCore>,
    tools: Option<Arc<dyn ToolInvoker>>,
    allowed_tools: Option<Arc<BTreeSet<String>>>,
    events: Option<Arc<dyn EventSink>>,
    files: Option<CoreFiles>,
    turn_timeout: Option<std::time::Duration>,
}

struct CoreFiles {
    io: &'static IoHandle,
    workspace: Workspace,
    observer: Option<Arc<dyn FileObserver>>,
    last_record: Option<FileRunRecord>,
}

impl AgentRuntime {
    /// Erases `core` and puts it behind the boundary (an example is on the type).
    pub fn new<C: AgentCore>(core: C) -> Self {
        Self::from_erased(Box::new(core))
    }

    /// Puts an already erased core behind the boundary: a core chosen at run time, from a
    /// factory or a plugin table.
    ///
    /// ```
    /// # use agentio_core::{AgentContext, AgentCore, AgentError, AgentRuntime, TurnInput, TurnOutput, agent_core};
    /// # use serde_json::json;
    /// # struct Echo;
    /// # #[agent_core]
    /// # impl AgentCore for Echo {
    /// #     fn core_type(&self) -> &str { "echo" }
    /// #     async fn run_turn(&mut self, input: TurnInput, _: &mut AgentContext) -> Result<TurnOutput, AgentError> {
    /// #         Ok(TurnOutput::new(input.message))
    /// #     }
    /// # }
    /// use agentio_core::ErasedAgentCore;
    ///
    /// let chosen: Box<dyn ErasedAgentCore> = Box::new(Echo);
    /// let mut runtime = AgentRuntime::from_erased(chosen);
    /// let out = pollster::block_on(runtime.run_turn(json!({ "message": "hi" }))).unwrap();
    /// assert_eq!(out, json!({ "response": "hi" }));
    /// ```
    pub fn from_erased(core: Box<dyn ErasedAgentCore>) -> Self {
        AgentRuntime {
            core,
            tools: None,
            allowed_tools: None,
            events: None,
            files: None,
            turn_timeout: None,
        }
    }

    /// Offers the host's tools to the core, which calls them through its
    /// [`AgentContext`](crate::AgentContext) (every call is a `tool.called` event).
    ///
    /// ```
    /// use agentio_core::{AgentContext, AgentCore, AgentError, AgentRuntime, BoxFuture, ToolCall, ToolInvoker, TurnInput, TurnOutput, agent_core};
    /// use serde_json::{Value, json};
    /// use std::sync::Arc;
    ///
    /// /// A host with two tools.
    /// struct Clock;
    /// impl ToolInvoker for Clock {
    ///     fn invoke(&self, call: ToolCall) -> BoxFuture<'_, Result<Value, AgentError>> {
    ///         Box::pin(async move { Ok(json!({ "tool": call.tool_id, "now": "12:00" })) })
    ///     }
    ///     fn tool_ids(&self) -> Vec<String> { vec!["clock.now".into(), "clock.set".into()] }
    /// }
    ///
    /// /// Calls the tool its message names.
    /// struct Caller;
    /// #[agent_core]
    /// impl AgentCore for Caller {
    ///     fn core_type(&self) -> &str { "caller" }
    ///     async fn run_turn(&mut self, input: TurnInput, ctx: &mut AgentContext) -> Result<TurnOutput, AgentError> {
    ///         let answer = ctx.call_tool(&input.message, json!({})).await?;
    ///         Ok(TurnOutput::new(answer["now"].as_str().unwrap_or_default()))
    ///     }
    /// }
    ///
    /// let mut runtime = AgentRuntime::new(Caller)
    ///     .with_tools(Arc::new(Clock))
    ///     .with_allowed_tools(["clock.now"]);
    /// let out = pollster::block_on(runtime.run_turn(json!({ "message": "clock.now" }))).unwrap();
    /// assert_eq!(out["response"], "12:00");
    /// // Offered by the host, but not to this core.
    /// let err = pollster::block_on(runtime.run_turn(json!({ "message": "clock.set" }))).unwrap_err();
    /// assert_eq!(err.code().as_str(), "unauthorised");
    /// ```
    #[must_use]
    pub fn with_tools(mut self, tools: Arc<dyn ToolInvoker>) -> Self {
        self.tools = Some(tools);
        self
    }

    /// Checks a skill before it runs ([`crate::skill`]): its steps name this runtime's core
    /// (by [`ErasedAgentCore::core_type`]) or the tools it may call (the invoker of
    /// [`Self::with_tools`], within [`Self::with_allowed_tools`]); every link must be proven.
    ///
    /// ```
    /// use agentio_core::{AgentContext, AgentCore, AgentError, AgentInput, AgentOutput, AgentRuntime};
    /// use agentio_core::skill::{SkillManifest, SkillProblem};
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput, AgentOutput)]
    /// struct Text { text: String }
    /// struct Echo;
    /// impl AgentCore for Echo {
    ///     type Input = Text;
    ///     type Output = Text;
    ///     fn core_type(&self) -> &str { "echo" }
    ///     async fn run_turn(&mut self, input: Text, _: &mut AgentContext) -> Result<Text, AgentError> { Ok(input) }
    /// }
    /// let runtime = AgentRuntime::new(Echo);
    /// assert!(runtime.validate_skill(&SkillManifest::new("twice", ["echo", "echo"])).is_ok());
    /// let err = runtime.validate_skill(&SkillManifest::new("lost", ["echo", "kb.search"])).unwrap_err();
    /// assert!(matches!(err.problems[0], SkillProblem::UnknownStep { step: 1, .. }));
    /// ```
    pub fn validate_skill(
        &self,
        skill: &crate::skill::SkillManifest,
    ) -> Result<(), crate::skill::SkillError> {
        let core_type = self.core.core_type().to_owned();
        let input = self.core.input_boundary().schema().clone();
        let produced = self.core.output_boundary().produced_schema().clone();
        crate::skill::check_skill(skill, |id| {
            if id == core_type {
                return Some((input.clone(), produced.clone()));
            }
            if self
                .allowed_tools
                .as_ref()
                .is_some_and(|allowed| !allowed.contains(id))
            {
                return None;
            }
            self.tools.as_ref()?.tool_schemas(id)
        })
    }

    /// Limits the core to these tool ids; a call to another is refused as `unauthorised`
    /// without reaching the host (an example is on [`Self::with_tools`]).
    #[must_use]
    pub fn with_allowed_tools<I, S>(mut self, ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_tools = Some(Arc::new(ids.into_iter().map(Into::into).collect()));
        self
    }

    /// Sends turn events (and the core's own) to `sink`.
    ///
    /// ```
    /// # use agentio_core::{AgentContext, AgentCore, AgentError, AgentRuntime, TurnInput, TurnOutput, agent_core};
    /// # use serde_json::json;
    /// # struct Echo;
    /// # #[agent_core]
    /// # impl AgentCore for Echo {
    /// #     fn core_type(&self) -> &str { "echo" }
    /// #     async fn run_turn(&mut self, input: TurnInput, _: &mut AgentContext) -> Result<TurnOutput, AgentError> {
    /// #         Ok(TurnOutput::new(input.message))
    /// #     }
    /// # }
    /// use agentio_core::EventLog;
    /// use std::sync::Arc;
    ///
    /// let log = Arc::new(EventLog::default());
    /// let mut runtime = AgentRuntime::new(Echo).with_event_sink(log.clone());
    /// pollster::block_on(runtime.run_turn(json!({ "message": "hi" }))).unwrap();
    /// let kinds: Vec<_> = log.events().into_iter().map(|e| e.kind).collect();
    /// assert_eq!(kinds, ["turn.started", "turn.completed"]);
    /// ```
    #[must_use]
    pub fn with_event_sink(mut self, sink: Arc<dyn EventSink>) -> Self {
        self.events = Some(sink);
        self
    }

    /// Runs every turn under a file contract (AIP-16): declared input files are staged from
    /// `workspace` into a private scratch root, `_workflowFsRoot` is injected, and declared
    /// outputs are synced back after the turn; see [`crate::files::run_with_files`].
    ///
    /// ```
    /// use agentio_core::files::{FileEntry, FsRoot, IoDefinition, Workspace, define_io_handle};
    /// use agentio_core::{AgentContext, AgentCore, AgentError, AgentInput, AgentOutput, AgentRuntime};
    /// use serde_json::json;
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput)]
    /// struct Ask {
    ///     #[serde(rename = "_workflowFsRoot", default, skip_serializing_if = "Option::is_none")]
    ///     root: Option<FsRoot>,
    /// }
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentOutput)]
    /// struct Lines { lines: usize }
    ///
    /// /// Counts the lines of the staged file.
    /// struct LineCounter;
    /// impl AgentCore for LineCounter {
    ///     type Input = Ask;
    ///     type Output = Lines;
    ///     fn core_type(&self) -> &str { "line-counter" }
    ///     async fn run_turn(&mut self, input: Ask, _: &mut AgentContext) -> Result<Lines, AgentError> {
    ///         let root = input.root.ok_or_else(|| AgentError::internal("nothing staged"))?;
    ///         let text = std::fs::read_to_string(root.file("doc")).map_err(|e| AgentError::internal(e.to_string()))?;
    ///         Ok(Lines { lines: text.lines().count() })
    ///     }
    /// }
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// std::fs::write(dir.path().join("doc.md"), "a\nb\nc\n").unwrap();
    /// // `#[define_io]` on the core's impl makes this handle; here it is made by hand.
    /// let io = define_io_handle(IoDefinition::typed::<Ask, Lines>().input_file("doc", FileEntry::new("doc.md"))).unwrap();
    /// let io: &'static _ = Box::leak(Box::new(io));
    /// let mut runtime = AgentRuntime::new(LineCounter).with_file_contract(io, Workspace::open(dir.path()).unwrap(), None);
    /// let out = pollster::block_on(runtime.run_turn(json!({}))).unwrap();
    /// assert_eq!(out, json!({ "lines": 3 }));
    /// let record = runtime.last_file_record().unwrap();
    /// assert_eq!((record.staged[0].key.as_str(), record.staged[0].bytes), ("doc", 6));
    /// ```
    #[must_use]
    pub fn with_file_contract(
        mut self,
        io: &'static IoHandle,
        workspace: Workspace,
        observer: Option<Arc<dyn FileObserver>>,
    ) -> Self {
        self.files = Some(CoreFiles {
            io,
            workspace,
            observer,
            last_record: None,
        });
        self
    }

    /// What the last turn did with files (staged and synced, with sizes and SHA-256); an
    /// example is on [`Self::with_file_contract`].
    pub fn last_file_record(&self) -> Option<&FileRunRecord> {
        self.files.as_ref().and_then(|f| f.last_record.as_ref())
    }

    /// The core's kind (an example is on [`Self::input_schema`]).
    pub fn core_type(&self) -> &str {
        self.core.core_type()
    }

    /// The core's input JSON Schema.
    ///
    /// ```
    /// # use agentio_core::{AgentContext, AgentCore, AgentError, AgentRuntime, TurnInput, TurnOutput, agent_core};
    /// # use serde_json::json;
    /// # struct Echo;
    /// # #[agent_core]
    /// # impl AgentCore for Echo {
    /// #     fn core_type(&self) -> &str { "echo" }
    /// #     async fn run_turn(&mut self, input: TurnInput, _: &mut AgentContext) -> Result<TurnOutput, AgentError> {
    /// #         Ok(TurnOutput::new(input.message))
    /// #     }
    /// # }
    /// let runtime = AgentRuntime::new(Echo);
    /// assert_eq!(runtime.core_type(), "echo");
    /// assert_eq!(runtime.input_schema()["required"], json!(["message"]));
    /// assert_eq!(runtime.output_schema()["properties"]["response"]["type"], "string");
    /// ```
    pub fn input_schema(&self) -> &'static Value {
        self.core.input_schema()
    }

    /// The core's output JSON Schema (an example is on [`Self::input_schema`]).
    pub fn output_schema(&self) -> &'static Value {
        self.core.output_schema()
    }

    /// The core's compiled output schema (with [`BoundarySchema::produced_schema`](crate::BoundarySchema::produced_schema)).
    ///
    /// ```
    /// # use agentio_core::{AgentContext, AgentCore, AgentError, AgentRuntime, TurnInput, TurnOutput, agent_core};
    /// # use serde_json::json;
    /// # struct Echo;
    /// # #[agent_core]
    /// # impl AgentCore for Echo {
    /// #     fn core_type(&self) -> &str { "echo" }
    /// #     async fn run_turn(&mut self, input: TurnInput, _: &mut AgentContext) -> Result<TurnOutput, AgentError> {
    /// #         Ok(TurnOutput::new(input.message))
    /// #     }
    /// # }
    /// let runtime = AgentRuntime::new(Echo);
    /// let boundary = runtime.output_boundary();
    /// assert!(boundary.validate(&json!({ "response": "ok" })).is_ok());
    /// assert_eq!(boundary.validate(&json!({})).unwrap_err().code().as_str(), "output_invalid");
    /// ```
    pub fn output_boundary(&self) -> &'static crate::BoundarySchema {
        self.core.output_boundary()
    }

    /// Checks an input without running anything.
    ///
    /// ```
    /// # use agentio_core::{AgentContext, AgentCore, AgentError, AgentRuntime, TurnInput, TurnOutput, agent_core};
    /// # use serde_json::json;
    /// # struct Echo;
    /// # #[agent_core]
    /// # impl AgentCore for Echo {
    /// #     fn core_type(&self) -> &str { "echo" }
    /// #     async fn run_turn(&mut self, input: TurnInput, _: &mut AgentContext) -> Result<TurnOutput, AgentError> {
    /// #         Ok(TurnOutput::new(input.message))
    /// #     }
    /// # }
    /// let runtime = AgentRuntime::new(Echo);
    /// assert!(runtime.validate_input(&json!({ "message": "hi" })).is_ok());
    /// let err = runtime.validate_input(&json!({})).unwrap_err();
    /// assert_eq!(err.code().as_str(), "input_invalid");
    /// assert_eq!(err.violations()[0].keyword, "required");
    /// ```
    pub fn validate_input(&self, input: &Value) -> Result<(), AgentError> {
        self.core
            .input_boundary()
            .validate(input)
            .map_err(AgentError::from)
    }

    /// Runs one turn under a fresh run id, with a context built from this runtime's tools and
    /// event sink.
    ///
    /// ```
    /// # use agentio_core::{AgentContext, AgentCore, AgentError, AgentRuntime, TurnInput, TurnOutput, agent_core};
    /// # use serde_json::json;
    /// # struct Echo;
    /// # #[agent_core]
    /// # impl AgentCore for Echo {
    /// #     fn core_type(&self) -> &str { "echo" }
    /// #     async fn run_turn(&mut self, input: TurnInput, _: &mut AgentContext) -> Result<TurnOutput, AgentError> {
    /// #         Ok(TurnOutput::new(input.message))
    /// #     }
    /// # }
    /// let mut runtime = AgentRuntime::new(Echo);
    /// let out = pollster::block_on(runtime.run_turn(json!({ "message": "hi" }))).unwrap();
    /// assert_eq!(out, json!({ "response": "hi" }));
    /// ```
    pub async fn run_turn(&mut self, input: Value) -> Result<Value, AgentError> {
        let mut ctx = self.context(new_run_id());
        self.run_turn_in(input, &mut ctx).await
    }

    /// A context for `run_id` carrying this runtime's tools, allowed set and event sink: for
    /// [`Self::run_turn_in`], when the host names the run (or reads the context afterwards).
    ///
    /// ```
    /// # use agentio_core::{AgentContext, AgentCore, AgentError, AgentRuntime, TurnInput, TurnOutput, agent_core};
    /// # use serde_json::json;
    /// # struct Echo;
    /// # #[agent_core]
    /// # impl AgentCore for Echo {
    /// #     fn core_type(&self) -> &str { "echo" }
    /// #     async fn run_turn(&mut self, input: TurnInput, _: &mut AgentContext) -> Result<TurnOutput, AgentError> {
    /// #         Ok(TurnOutput::new(input.message))
    /// #     }
    /// # }
    /// use agentio_core::EventLog;
    /// use std::sync::Arc;
    ///
    /// let log = Arc::new(EventLog::default());
    /// let mut runtime = AgentRuntime::new(Echo).with_event_sink(log.clone());
    /// let mut ctx = runtime.context("nightly-42");
    /// assert_eq!(ctx.run_id(), "nightly-42");
    /// pollster::block_on(runtime.run_turn_in(json!({ "message": "hi" }), &mut ctx)).unwrap();
    /// assert!(log.events().iter().all(|event| event.run_id == "nightly-42"));
    /// ```
    pub fn context(&self, run_id: impl Into<String>) -> AgentContext {
        let mut ctx = AgentContext::new(run_id);
        if let Some(tools) = &self.tools {
            ctx = ctx.with_tools(tools.clone());
        }
        if let Some(allowed) = &self.allowed_tools {
            // Shared, not copied: a turn's context costs no copy of the allowed set.
            ctx = ctx.with_shared_allowed_tools(allowed.clone());
        }
        if let Some(events) = &self.events {
            ctx = ctx.with_event_sink(events.clone());
        }
        ctx
    }

    /// Runs one turn in a context the host built: its run id, its tools, its event sink.
    ///
    /// ```
    /// # use agentio_core::{AgentContext, AgentCore, AgentError, AgentRuntime, TurnInput, TurnOutput, agent_core};
    /// # use serde_json::json;
    /// # struct Echo;
    /// # #[agent_core]
    /// # impl AgentCore for Echo {
    /// #     fn core_type(&self) -> &str { "echo" }
    /// #     async fn run_turn(&mut self, input: TurnInput, _: &mut AgentContext) -> Result<TurnOutput, AgentError> {
    /// #         Ok(TurnOutput::new(input.message))
    /// #     }
    /// # }
    /// use agentio_core::EventLog;
    /// use std::sync::Arc;
    ///
    /// let mut runtime = AgentRuntime::new(Echo);
    /// let events = Arc::new(EventLog::default());
    /// let mut ctx = runtime.context("run-42").with_event_sink(events.clone());
    /// pollster::block_on(runtime.run_turn_in(json!({ "message": "hi" }), &mut ctx)).unwrap();
    /// let kinds: Vec<_> = events.events().iter().map(|e| e.kind.clone()).collect();
    /// assert_eq!(kinds, ["turn.started", "turn.completed"]);
    /// assert!(events.events().iter().all(|e| e.run_id == "run-42"));
    /// ```
    pub async fn run_turn_in(
        &mut self,
        input: Value,
        ctx: &mut AgentContext,
    ) -> Result<Value, AgentError> {
        // The common turn (no events, no ceiling, no files) is the validated turn and nothing
        // else, in this future's own state; the rest is boxed, so that the common turn's
        // future does not carry its space (a host that spawns a turn copies it whole).
        if !ctx.has_event_sink()
            && self.files.is_none()
            && ctx.turn_timeout().or(self.turn_timeout).is_none()
        {
            return Self::validated_turn(self.core.as_mut(), input, ctx).await;
        }
        Box::pin(self.observed_turn(input, ctx)).await
    }

    /// [`Self::run_turn_in`] with what the common turn leaves out: events, a ceiling, files.
    async fn observed_turn(
        &mut self,
        input: Value,
        ctx: &mut AgentContext,
    ) -> Result<Value, AgentError> {
        if !ctx.has_event_sink() {
            return self.checked_turn(input, ctx).await;
        }
        let core_type = self.core.core_type().to_owned();
        ctx.emit("turn.started", json!({ "core_type": core_type }));
        let result = self.checked_turn(input, ctx).await;
        match &result {
            Ok(_) => ctx.emit("turn.completed", json!({ "core_type": core_type })),
            Err(err) => ctx.emit(
                "turn.failed",
                json!({ "core_type": core_type, "error": err }),
            ),
        }
        result
    }

    /// Sets a wall-clock ceiling for every turn (a context's own ceiling takes precedence).
    ///
    /// A turn past its ceiling fails with `timeout`, in the envelope tools use. The timer
    /// needs a Tokio runtime with time enabled; without one, a turn with a ceiling fails with
    /// `internal` saying so. The turn runs on the caller's task (it borrows the core), so a
    /// core that blocks its thread is reported as `timeout` when it returns, never as success;
    /// one that awaits is stopped at the ceiling.
    ///
    /// ```
    /// use agentio_core::{AgentCore, AgentContext, AgentRuntime, ErrorCode};
    /// use std::time::Duration;
    /// # #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput)]
    /// # struct Ask { q: String }
    /// # #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentOutput)]
    /// # struct Answer { a: String }
    /// struct Slow;
    /// impl AgentCore for Slow {
    ///     type Input = Ask;
    ///     type Output = Answer;
    ///     fn core_type(&self) -> &str { "slow" }
    ///     async fn run_turn(&mut self, input: Ask, _: &mut AgentContext) -> Result<Answer, agentio_core::AgentError> {
    ///         tokio::time::sleep(Duration::from_secs(60)).await;
    ///         Ok(Answer { a: input.q })
    ///     }
    /// }
    /// let rt = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
    /// let mut runtime = AgentRuntime::new(Slow).with_turn_timeout(Duration::from_millis(20));
    /// let err = rt.block_on(runtime.run_turn(serde_json::json!({ "q": "hi" }))).unwrap_err();
    /// assert_eq!(err.code(), &ErrorCode::Timeout);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_turn_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.turn_timeout = Some(timeout);
        self
    }

    async fn checked_turn(
        &mut self,
        input: Value,
        ctx: &mut AgentContext,
    ) -> Result<Value, AgentError> {
        let Some(ceiling) = ctx.turn_timeout().or(self.turn_timeout) else {
            return self.turn_with_files(input, ctx).await;
        };
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(AgentError::internal(
                "a turn timeout needs a Tokio runtime with time enabled, and none is running",
            ));
        }
        let timed_out = || {
            AgentError::new(
                ErrorCode::Timeout,
                format!("the turn did not finish within {} ms", ceiling.as_millis()),
            )
        };
        let started = std::time::Instant::now();
        let turn = self.turn_with_files(input, ctx);
        // The timer panics in a runtime built without time: contain that too.
        let timed = contain_panics(Box::pin(async move {
            Ok(tokio::time::timeout(ceiling, turn).await)
        }))
        .await?;
        match timed {
            Ok(_) if started.elapsed() > ceiling => Err(timed_out()),
            Ok(result) => result,
            Err(_elapsed) => Err(timed_out()),
        }
    }

    async fn turn_with_files(
        &mut self,
        input: Value,
        ctx: &mut AgentContext,
    ) -> Result<Value, AgentError> {
        // Cloned, not taken: a turn dropped half-way must not lose the runtime's configuration.
        let Some((io, workspace, observer)) = self
            .files
            .as_ref()
            .map(|f| (f.io, f.workspace.clone(), f.observer.clone()))
        else {
            // No scratch root is injected, so a caller's `_workflowFsRoot` would reach the core.
            crate::files::refuse_caller_fs_root(&input)?;
            return Self::validated_turn(self.core.as_mut(), input, ctx).await;
        };
        let host = FileHost {
            workspace: &workspace,
            observer: observer.as_deref(),
            // An agent core has no tool contract: the workspace is its scope.
            mutates: None,
        };
        let vars = RunVars::new(ctx.run_id(), self.core.core_type());
        let core = self.core.as_mut();
        let (result, record) = run_with_files(io, host, &vars, input, |input| {
            Self::validated_turn(core, input, ctx)
        })
        .await;
        if let Some(files) = &mut self.files {
            files.last_record = Some(record);
        }
        result
    }

    async fn validated_turn(
        core: &mut dyn ErasedAgentCore,
        input: Value,
        ctx: &mut AgentContext,
    ) -> Result<Value, AgentError> {
        // Validation (in full, or of the residual for typed cores) happens inside, around
        // the turn; a panic anywhere in it is contained.
        contain_panics(core.__run_turn_validated(input, ctx)).await
    }
}

impl fmt::Debug for AgentRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentRuntime")
            .field("core_type", &self.core.core_type())
            .field("tools", &self.tools.is_some())
            .field("allowed_tools", &self.allowed_tools)
            .field("events", &self.events.is_some())
            .finish()
    }
}

/// Runs a boxed future, turning a panic inside it into an `internal` error.
///
/// The message a model sees says only that the body failed; the panic message goes to the
/// operator detail. Used by the runtime around every core turn and by the tool registry
/// around every tool body.
pub async fn contain_panics<T>(
    mut future: BoxFuture<'_, Result<T, AgentError>>,
) -> Result<T, AgentError> {
    std::future::poll_fn(move |cx| {
        match std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(poll) => poll,
            Err(payload) => Poll::Ready(Err(panicked(&*payload))),
        }
    })
    .await
}

/// The error a contained panic becomes: `internal`, the panic's message kept for operators.
///
/// ```
/// let err = agentio_core::panicked(&"boom");
/// assert_eq!(err.code(), &agentio_core::ErrorCode::Internal);
/// assert_eq!(err.operator_detail(), Some("panicked: boom"));
/// ```
pub fn panicked(payload: &(dyn Any + Send)) -> AgentError {
    AgentError::internal("the body failed unexpectedly")
        .with_operator_detail(format!("panicked: {}", panic_message(payload)))
}

fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(a non-string panic payload)")
}

/// A run id unique within this host: `run-<unix ms>-<process id>-<sequence>`, all hex. The
/// milliseconds are those of the process's first run id (read once, not per call: a clock read
/// and a formatted timestamp per call cost more than the rest of the id), so ids stay unique
/// across restarts of a process and across processes.
///
/// ```
/// let first = agentio_core::new_run_id();
/// let second = agentio_core::new_run_id();
/// assert!(first.starts_with("run-"));
/// assert_ne!(first, second);
/// // The same prefix within a process, a new sequence number each time.
/// assert_eq!(first.rsplit_once('-').unwrap().0, second.rsplit_once('-').unwrap().0);
/// ```
pub fn new_run_id() -> String {
    __run_id_text(__next_run_sequence())
}

/// The sequence number of a run id not yet written: [`new_run_id`] is
/// `__run_id_text(__next_run_sequence())`. The tool registry takes the number per call and
/// writes the id only when something reads it. Not public API.
#[doc(hidden)]
pub fn __next_run_sequence() -> u64 {
    RUN_SEQUENCE.fetch_add(1, Ordering::Relaxed)
}

/// The run id with sequence number `sequence` (see [`__next_run_sequence`]). Not public API.
#[doc(hidden)]
pub fn __run_id_text(sequence: u64) -> String {
    let mut id = String::with_capacity(48);
    write_run_id(&mut id, sequence);
    id
}

static RUN_SEQUENCE: AtomicU64 = AtomicU64::new(0);

fn write_run_id(out: &mut String, sequence: u64) {
    static PREFIX: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let prefix = PREFIX.get_or_init(|| {
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        format!("run-{millis:x}-{:x}-", std::process::id())
    });
    out.push_str(prefix);
    push_hex(out, sequence);
}

/// `n` in lower-case hex, most significant digit first, without the formatting machinery.
fn push_hex(out: &mut String, n: u64) {
    let digits = (64 - n.leading_zeros()).div_ceil(4).max(1);
    for shift in (0..digits).rev() {
        let nibble = (n >> (shift * 4)) & 0xf;
        out.push(char::from_digit(nibble as u32, 16).unwrap_or('0'));
    }
}

#[cfg(test)]
mod run_id_tests {
    use super::*;

    #[test]
    fn hex_is_what_format_writes() {
        for n in [0, 1, 9, 10, 0xf, 0x10, 0xff, 0x100, 0xdead_beef, u64::MAX] {
            let mut out = String::new();
            push_hex(&mut out, n);
            assert_eq!(out, format!("{n:x}"));
        }
    }

    #[test]
    fn a_sequence_taken_ahead_writes_the_id_new_run_id_would() {
        let a = new_run_id();
        let taken = __next_run_sequence();
        let c = new_run_id();
        let b = __run_id_text(taken);
        let prefix = |id: &str| id.rsplit_once('-').map(|(p, _)| p.to_owned());
        assert_eq!(prefix(&a), prefix(&b));
        let seq = |id: &str| u64::from_str_radix(id.rsplit('-').next().unwrap(), 16).unwrap();
        assert_eq!(seq(&b), taken);
        assert!(seq(&a) < seq(&b) && seq(&b) < seq(&c), "{a} {b} {c}");
        // The same number writes the same id.
        assert_eq!(__run_id_text(taken), b);
    }

    #[test]
    fn run_ids_are_run_ms_pid_sequence_and_never_repeat() {
        let ids: Vec<String> = (0..40).map(|_| new_run_id()).collect();
        let mut seen = std::collections::HashSet::new();
        let mut previous: Option<u64> = None;
        for id in &ids {
            assert!(seen.insert(id.clone()), "{id} repeats");
            let parts: Vec<&str> = id.split('-').collect();
            assert_eq!(parts.len(), 4, "{id}");
            assert_eq!(parts[0], "run");
            assert_eq!(
                u32::from_str_radix(parts[2], 16).unwrap(),
                std::process::id()
            );
            let sequence = u64::from_str_radix(parts[3], 16).unwrap();
            // Other tests make ids too, so the sequence only grows.
            if let Some(previous) = previous {
                assert!(sequence > previous, "{id}");
            }
            previous = Some(sequence);
        }
    }
}
