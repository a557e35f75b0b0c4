//! The executor: binds each `assign` name to an agent (an erased core, a registry tool or a
//! function), checks the typed wiring before anything runs, runs phases in dependency order
//! with independent phases concurrently, and records the named errors as events.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::Arc;

use agentio_core::compat::Compatibility;
use agentio_core::{AgentCore, AgentError, AgentRuntime, BoxFuture};
use agentio_tools::{CallOptions, ToolRegistry};
use serde_json::{Map, Value};

use crate::errors::{RunError, ValidationError};
use crate::journal::{Entry, Journal, JournalError, RunRecord};
use crate::model::{InputSource, Phase, Workflow};
use crate::run::Suspension;
use crate::run::{Progress, TaskContext, WorkflowRun};
use crate::types::resolve;

/// What runs a phase: given its context (with the resolved inputs), returns its output.
pub trait PhaseAgent: Send + Sync {
    /// Runs the phase once.
    fn run<'a>(&'a self, ctx: &'a TaskContext) -> BoxFuture<'a, Result<Value, AgentError>>;

    /// The agent's input and output JSON Schemas when it is typed (a core or a tool), for the
    /// load-time wiring check; `None` for untyped agents.
    fn schemas(&self) -> Option<(&Value, &Value)> {
        None
    }

    /// Whether a task of this agent that was claimed and not completed when its process
    /// stopped may be run again when the durable run is reopened ([`Executor::reopen`]).
    /// `true` by default (functions and cores: make them idempotent, e.g. keyed by
    /// `ctx.task_id`, which is the same on every attempt); a registry tool answers with its
    /// contract's `idempotent`. When `false`, the reopened run fails the phase with
    /// `PhaseInterruptedError` rather than run it twice.
    fn may_rerun(&self) -> bool {
        true
    }
}

/// A typed core as a phase agent: each run is one turn of its `AgentRuntime` (validated both
/// ways). Turns of one core run one at a time.
struct CoreAgent {
    runtime: tokio::sync::Mutex<AgentRuntime>,
    input_schema: &'static Value,
    output_schema: &'static Value,
}

impl PhaseAgent for CoreAgent {
    fn run<'a>(&'a self, ctx: &'a TaskContext) -> BoxFuture<'a, Result<Value, AgentError>> {
        Box::pin(async move { turn(&mut *self.runtime.lock().await, ctx).await })
    }

    fn schemas(&self) -> Option<(&Value, &Value)> {
        Some((self.input_schema, self.output_schema))
    }
}

/// One validated turn of `runtime` on the task's input, under the task's id.
async fn turn(runtime: &mut AgentRuntime, ctx: &TaskContext) -> Result<Value, AgentError> {
    let mut agent_ctx = runtime.context(ctx.task_id.clone());
    runtime
        .run_turn_in(Value::Object(ctx.input.clone()), &mut agent_ctx)
        .await
}

/// A core made fresh for each task: phases that share an `assign` run concurrently.
struct CoreFactoryAgent<F> {
    factory: F,
    input_schema: &'static Value,
    output_schema: &'static Value,
}

impl<C: AgentCore, F: Fn() -> C + Send + Sync> PhaseAgent for CoreFactoryAgent<F> {
    fn run<'a>(&'a self, ctx: &'a TaskContext) -> BoxFuture<'a, Result<Value, AgentError>> {
        Box::pin(async move { turn(&mut AgentRuntime::new((self.factory)()), ctx).await })
    }

    fn schemas(&self) -> Option<(&Value, &Value)> {
        Some((self.input_schema, self.output_schema))
    }
}

/// A registry tool as a phase agent: each run is one call under the tool's contract.
struct ToolAgent {
    registry: Arc<ToolRegistry>,
    tool_id: String,
    schemas: Option<(Value, Value)>,
}

impl PhaseAgent for ToolAgent {
    fn run<'a>(&'a self, ctx: &'a TaskContext) -> BoxFuture<'a, Result<Value, AgentError>> {
        Box::pin(async move {
            let options = CallOptions {
                run_id: Some(ctx.task_id.clone()),
                ..CallOptions::default()
            };
            self.registry
                .call_with(&self.tool_id, Value::Object(ctx.input.clone()), options)
                .await
        })
    }

    fn schemas(&self) -> Option<(&Value, &Value)> {
        self.schemas.as_ref().map(|(i, o)| (i, o))
    }

    fn may_rerun(&self) -> bool {
        self.registry
            .contract(&self.tool_id)
            .is_some_and(|contract| contract.idempotent)
    }
}

/// A function as a phase agent.
struct FnAgent<F>(F);

impl<F, Fut> PhaseAgent for FnAgent<F>
where
    F: Fn(TaskContext) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Value, AgentError>> + Send + 'static,
{
    fn run<'a>(&'a self, ctx: &'a TaskContext) -> BoxFuture<'a, Result<Value, AgentError>> {
        Box::pin((self.0)(ctx.clone()))
    }
}

/// The result of a run.
#[derive(Debug)]
pub struct RunOutcome {
    /// The recorded output of every completed phase.
    pub outputs: BTreeMap<String, Map<String, Value>>,
    /// The named errors emitted, as the RFC's JSON payloads, in order.
    pub events: Vec<Value>,
    /// Where the run ended.
    pub progress: Progress,
}

impl RunOutcome {
    /// Whether every phase completed.
    ///
    /// ```
    /// use agentio_workflow::{Executor, Phase, TypeRef, Workflow};
    /// use serde_json::json;
    ///
    /// let workflow = Workflow::new("w")
    ///     .with_phase(Phase::new("a", "A").assign("ok").output("n", TypeRef::Number))
    ///     .with_phase(Phase::new("b", "B").assign("broken").depends_on(["a"]));
    /// let executor = Executor::new(workflow)
    ///     .bind_fn("ok", |_| async { Ok(json!({ "n": 1 })) })
    ///     .bind_fn("broken", |_| async { Err(agentio_core::AgentError::internal("disk full")) });
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let outcome = runtime.block_on(executor.run("r1", json!({}), json!({}))).unwrap();
    /// assert!(!outcome.succeeded());
    /// assert_eq!(outcome.outputs["a"]["n"], 1);
    /// assert!(outcome.progress.failed.contains(&"b".to_string()));
    /// ```
    pub fn succeeded(&self) -> bool {
        self.progress.failed.is_empty()
            && self.progress.pending.is_empty()
            && self.progress.ready.is_empty()
            && self.progress.running.is_empty()
            && self.progress.suspended_phases.is_empty()
    }
}

/// Runs a workflow with bound agents.
///
/// ```
/// use agentio_workflow::{Executor, Phase, TypeRef, Workflow};
/// use serde_json::json;
///
/// let workflow = Workflow::new("demo")
///     .with_phase(Phase::new("fetch", "Fetch").assign("fetcher").input("q", "$trigger.q").output("n", TypeRef::Number))
///     .with_phase(Phase::new("double", "Double").assign("doubler").depends_on(["fetch"]).input("n", "fetch.n").output("n", TypeRef::Number));
/// let executor = Executor::new(workflow)
///     .bind_fn("fetcher", |ctx| async move { Ok(json!({ "n": ctx.input["q"].as_str().map_or(0, str::len) })) })
///     .bind_fn("doubler", |ctx| async move { Ok(json!({ "n": ctx.input["n"].as_i64().unwrap_or(0) * 2 })) });
/// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
/// let outcome = runtime.block_on(executor.run("r1", json!({ "q": "abc" }), json!({}))).unwrap();
/// assert_eq!(outcome.outputs["double"]["n"], 6);
/// ```
pub struct Executor {
    workflow: Arc<Workflow>,
    by_assign: BTreeMap<String, Arc<dyn PhaseAgent>>,
    by_phase: BTreeMap<String, Arc<dyn PhaseAgent>>,
    max_completion_attempts: u32,
    progress: Option<ProgressReport>,
    at_most_once: BTreeSet<String>,
    document: Option<Arc<str>>,
}

/// Where a run's [`PhaseProgress`] goes.
type ProgressReport = Arc<dyn Fn(&PhaseProgress) + Send + Sync>;

/// What a run reports about each phase as it goes ([`Executor::with_progress`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PhaseProgress {
    /// The phase was claimed and its agent started (`attempt` from 1).
    Started {
        /// The phase.
        phase: String,
        /// Which attempt.
        attempt: u32,
    },
    /// Its output was accepted.
    Completed {
        /// The phase.
        phase: String,
        /// How long its agent took, in milliseconds (the last attempt).
        millis: u64,
    },
    /// Its output was rejected and handed back to its agent.
    Rejected {
        /// The phase.
        phase: String,
        /// The rejected attempt.
        attempt: u32,
    },
    /// Its agent asked to suspend it awaiting input ([`TaskContext::suspend`]).
    Suspended {
        /// The phase.
        phase: String,
        /// The suspended intent.
        intent_id: String,
    },
    /// It failed for good.
    Failed {
        /// The phase.
        phase: String,
        /// Why, in words.
        message: String,
    },
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("workflow", &self.workflow.name)
            .field("phases", &self.workflow.phases.len())
            .field("assigned", &self.by_assign.keys().collect::<Vec<_>>())
            .field("bound_phases", &self.by_phase.keys().collect::<Vec<_>>())
            .field("max_completion_attempts", &self.max_completion_attempts)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

impl Executor {
    /// An executor for `workflow`, with no agents bound (an example is on the type). A rejected
    /// completion is retried once (two attempts in all) by default.
    pub fn new(workflow: Workflow) -> Self {
        Executor {
            workflow: Arc::new(workflow),
            by_assign: BTreeMap::new(),
            by_phase: BTreeMap::new(),
            max_completion_attempts: 2,
            progress: None,
            at_most_once: BTreeSet::new(),
            document: None,
        }
    }

    /// Reports each phase's progress as the run goes: started, completed (with its time),
    /// rejected, failed. `agentio-workflow run` draws it; a host can log it.
    ///
    /// ```
    /// use agentio_workflow::{Executor, Phase, PhaseProgress, Workflow};
    /// use std::sync::{Arc, Mutex};
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = seen.clone();
    /// let executor = Executor::new(Workflow::new("w").with_phase(Phase::new("a", "A").assign("x")))
    ///     .bind_fn("x", |_ctx| async { Ok(serde_json::json!({})) })
    ///     .with_progress(move |event: &PhaseProgress| log.lock().unwrap().push(event.clone()));
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// runtime.block_on(executor.run("r", serde_json::json!({}), serde_json::json!({}))).unwrap();
    /// let seen = seen.lock().unwrap();
    /// assert_eq!(seen[0], PhaseProgress::Started { phase: "a".into(), attempt: 1 });
    /// assert!(matches!(seen[1], PhaseProgress::Completed { .. }));
    /// ```
    #[must_use]
    pub fn with_progress(
        mut self,
        report: impl Fn(&PhaseProgress) + Send + Sync + 'static,
    ) -> Self {
        self.progress = Some(Arc::new(report));
        self
    }

    pub(crate) fn report(&self, event: PhaseProgress) {
        if let Some(report) = &self.progress {
            report(&event);
        }
    }

    /// The workflow.
    ///
    /// ```
    /// use agentio_workflow::{Executor, Phase, Workflow};
    /// let executor = Executor::new(Workflow::new("nightly").with_phase(Phase::new("a", "A").assign("x")));
    /// assert_eq!(executor.workflow().name, "nightly");
    /// assert_eq!(executor.workflow().phases.len(), 1);
    /// ```
    pub fn workflow(&self) -> &Workflow {
        &self.workflow
    }

    /// How many times a phase's agent may answer before a rejected completion fails the phase
    /// (at least 1). Each new attempt sees the earlier rejections in `ctx.rejections`.
    ///
    /// ```
    /// use agentio_workflow::{Executor, Phase, TypeRef, Workflow};
    /// use serde_json::json;
    ///
    /// let workflow = Workflow::new("w").with_phase(Phase::new("a", "A").assign("learner").output("n", TypeRef::Number));
    /// // Answers without the declared output first, then corrects itself.
    /// let learner = |ctx: agentio_workflow::TaskContext| async move {
    ///     Ok(if ctx.rejections.is_empty() { json!({}) } else { json!({ "n": 1 }) })
    /// };
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    ///
    /// let patient = Executor::new(workflow.clone()).bind_fn("learner", learner).with_max_completion_attempts(2);
    /// assert!(runtime.block_on(patient.run("r1", json!({}), json!({}))).unwrap().succeeded());
    /// let strict = Executor::new(workflow).bind_fn("learner", learner).with_max_completion_attempts(1);
    /// assert!(!runtime.block_on(strict.run("r2", json!({}), json!({}))).unwrap().succeeded());
    /// ```
    #[must_use]
    pub fn with_max_completion_attempts(mut self, attempts: u32) -> Self {
        self.max_completion_attempts = attempts.max(1);
        self
    }

    /// Binds an agent to an `assign` name.
    ///
    /// ```
    /// use agentio_core::{AgentError, BoxFuture};
    /// use agentio_workflow::{Executor, Phase, PhaseAgent, TaskContext, Workflow};
    /// use serde_json::{Value, json};
    ///
    /// /// Answers with the phase's own name.
    /// struct Namer;
    /// impl PhaseAgent for Namer {
    ///     fn run<'a>(&'a self, ctx: &'a TaskContext) -> BoxFuture<'a, Result<Value, AgentError>> {
    ///         Box::pin(async move { Ok(json!({ "name": ctx.phase_name })) })
    ///     }
    /// }
    ///
    /// let workflow = Workflow::new("w")
    ///     .with_phase(Phase::new("first", "First").assign("namer"))
    ///     .with_phase(Phase::new("second", "Second").assign("namer"));
    /// let executor = Executor::new(workflow).bind("namer", Namer);
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let outcome = runtime.block_on(executor.run("r1", json!({}), json!({}))).unwrap();
    /// assert_eq!(outcome.outputs["second"]["name"], "second");
    /// ```
    #[must_use]
    pub fn bind(mut self, assign: impl Into<String>, agent: impl PhaseAgent + 'static) -> Self {
        self.by_assign.insert(assign.into(), Arc::new(agent));
        self
    }

    /// Binds an agent to one phase, whatever its `assign` (it takes precedence).
    ///
    /// ```
    /// use agentio_core::{AgentError, BoxFuture};
    /// use agentio_workflow::{Executor, Phase, PhaseAgent, TaskContext, Workflow};
    /// use serde_json::{Value, json};
    ///
    /// struct Fixed(&'static str);
    /// impl PhaseAgent for Fixed {
    ///     fn run<'a>(&'a self, _: &'a TaskContext) -> BoxFuture<'a, Result<Value, AgentError>> {
    ///         Box::pin(async move { Ok(json!({ "by": self.0 })) })
    ///     }
    /// }
    ///
    /// let workflow = Workflow::new("w")
    ///     .with_phase(Phase::new("a", "A").assign("worker"))
    ///     .with_phase(Phase::new("b", "B").assign("worker"));
    /// let executor = Executor::new(workflow)
    ///     .bind("worker", Fixed("the pool"))
    ///     .bind_phase("b", Fixed("a specialist"));
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let outcome = runtime.block_on(executor.run("r1", json!({}), json!({}))).unwrap();
    /// assert_eq!((&outcome.outputs["a"]["by"], &outcome.outputs["b"]["by"]), (&json!("the pool"), &json!("a specialist")));
    /// ```
    #[must_use]
    pub fn bind_phase(
        mut self,
        phase: impl Into<String>,
        agent: impl PhaseAgent + 'static,
    ) -> Self {
        self.by_phase.insert(phase.into(), Arc::new(agent));
        self
    }

    /// Binds a typed core: each phase run is one validated turn, and [`Self::check`] holds the
    /// phases' wiring to the core's types before anything runs.
    ///
    /// ```
    /// use agentio_core::{AgentContext, AgentCore, AgentError, AgentInput, AgentOutput};
    /// use agentio_workflow::{Executor, Phase, TypeRef, Workflow};
    /// use serde_json::json;
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput, AgentOutput)]
    /// struct Text { text: String }
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput, AgentOutput)]
    /// struct Words { words: u32 }
    ///
    /// /// Counts words.
    /// #[derive(Default)]
    /// struct Counter;
    /// impl AgentCore for Counter {
    ///     type Input = Text;
    ///     type Output = Words;
    ///     fn core_type(&self) -> &str { "counter" }
    ///     async fn run_turn(&mut self, input: Text, _: &mut AgentContext) -> Result<Words, AgentError> {
    ///         Ok(Words { words: input.text.split_whitespace().count() as u32 })
    ///     }
    /// }
    ///
    /// let count = |name: &str| Phase::new(name, "Count").assign("counter").input("text", "$trigger.text").output("words", TypeRef::Integer);
    /// let executor = Executor::new(Workflow::new("w").with_phase(count("count"))).bind_core("counter", Counter);
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let outcome = runtime.block_on(executor.run("r1", json!({ "text": "a b c" }), json!({}))).unwrap();
    /// assert_eq!(outcome.outputs["count"]["words"], 3);
    ///
    /// // A declared output the core does not produce is found before the run.
    /// let wrong = Phase::new("count", "Count").assign("counter").input("text", "$trigger.text").output("total", TypeRef::Integer);
    /// let problems = Executor::new(Workflow::new("w").with_phase(wrong)).bind_core("counter", Counter).check();
    /// assert!(!problems.is_empty());
    /// ```
    #[must_use]
    pub fn bind_core<C: AgentCore>(self, assign: impl Into<String>, core: C) -> Self {
        self.bind(assign, core_agent(AgentRuntime::new(core)))
    }

    /// Binds a factory of typed cores: each task gets a fresh core, so phases that share the
    /// `assign` run concurrently (one bound core instance runs one turn at a time, since a turn
    /// takes `&mut self`).
    ///
    /// ```
    /// use agentio_core::{AgentContext, AgentCore, AgentError, AgentInput, AgentOutput};
    /// use agentio_workflow::{Executor, Phase, TypeRef, Workflow};
    /// use serde_json::json;
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput, AgentOutput)]
    /// struct Text { text: String }
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput, AgentOutput)]
    /// struct Words { words: u32 }
    ///
    /// /// Counts words.
    /// #[derive(Default)]
    /// struct Counter;
    /// impl AgentCore for Counter {
    ///     type Input = Text;
    ///     type Output = Words;
    ///     fn core_type(&self) -> &str { "counter" }
    ///     async fn run_turn(&mut self, input: Text, _: &mut AgentContext) -> Result<Words, AgentError> {
    ///         Ok(Words { words: input.text.split_whitespace().count() as u32 })
    ///     }
    /// }
    ///
    /// let count = |name: &str| Phase::new(name, "Count").assign("counter").input("text", "$trigger.text").output("words", TypeRef::Integer);
    /// let workflow = Workflow::new("w").with_phase(count("left")).with_phase(count("right"));
    /// let executor = Executor::new(workflow).bind_core_factory("counter", Counter::default);
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let outcome = runtime.block_on(executor.run("r1", json!({ "text": "a b" }), json!({}))).unwrap();
    /// assert_eq!((&outcome.outputs["left"]["words"], &outcome.outputs["right"]["words"]), (&json!(2), &json!(2)));
    /// ```
    #[must_use]
    pub fn bind_core_factory<C, F>(self, assign: impl Into<String>, factory: F) -> Self
    where
        C: AgentCore,
        F: Fn() -> C + Send + Sync + 'static,
    {
        use agentio_core::{AgentInput, AgentOutput};
        let agent = CoreFactoryAgent {
            factory,
            input_schema: C::Input::input_schema(),
            output_schema: C::Output::output_boundary().produced_schema(),
        };
        self.bind(assign, agent)
    }

    /// Binds an already erased core (as a host registry holds them): each phase run is one
    /// validated turn.
    ///
    /// ```
    /// use agentio_core::{AgentContext, AgentCore, AgentError, AgentInput, AgentOutput};
    /// use agentio_workflow::{Executor, Phase, TypeRef, Workflow};
    /// use serde_json::json;
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput, AgentOutput)]
    /// struct Text { text: String }
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput, AgentOutput)]
    /// struct Words { words: u32 }
    ///
    /// /// Counts words.
    /// #[derive(Default)]
    /// struct Counter;
    /// impl AgentCore for Counter {
    ///     type Input = Text;
    ///     type Output = Words;
    ///     fn core_type(&self) -> &str { "counter" }
    ///     async fn run_turn(&mut self, input: Text, _: &mut AgentContext) -> Result<Words, AgentError> {
    ///         Ok(Words { words: input.text.split_whitespace().count() as u32 })
    ///     }
    /// }
    ///
    /// let count = |name: &str| Phase::new(name, "Count").assign("counter").input("text", "$trigger.text").output("words", TypeRef::Integer);
    /// let erased: Box<dyn agentio_core::ErasedAgentCore> = Box::new(Counter);
    /// let executor = Executor::new(Workflow::new("w").with_phase(count("count"))).bind_erased_core("counter", erased);
    /// assert!(executor.check().is_empty());
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let outcome = runtime.block_on(executor.run("r1", json!({ "text": "one" }), json!({}))).unwrap();
    /// assert_eq!(outcome.outputs["count"]["words"], 1);
    /// ```
    #[must_use]
    pub fn bind_erased_core(
        self,
        assign: impl Into<String>,
        core: Box<dyn agentio_core::ErasedAgentCore>,
    ) -> Self {
        self.bind(assign, core_agent(AgentRuntime::from_erased(core)))
    }

    /// Binds a typed core to one phase, whatever its `assign` (as [`Self::bind_phase`]).
    ///
    /// ```
    /// use agentio_core::{AgentContext, AgentCore, AgentError, AgentInput, AgentOutput};
    /// use agentio_workflow::{Executor, Phase, TypeRef, Workflow};
    /// use serde_json::json;
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput, AgentOutput)]
    /// struct Text { text: String }
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput, AgentOutput)]
    /// struct Words { words: u32 }
    ///
    /// /// Counts words.
    /// #[derive(Default)]
    /// struct Counter;
    /// impl AgentCore for Counter {
    ///     type Input = Text;
    ///     type Output = Words;
    ///     fn core_type(&self) -> &str { "counter" }
    ///     async fn run_turn(&mut self, input: Text, _: &mut AgentContext) -> Result<Words, AgentError> {
    ///         Ok(Words { words: input.text.split_whitespace().count() as u32 })
    ///     }
    /// }
    ///
    /// let count = |name: &str| Phase::new(name, "Count").assign("counter").input("text", "$trigger.text").output("words", TypeRef::Integer);
    /// // The phase's `assign` names nothing bound; the phase binding covers it.
    /// let executor = Executor::new(Workflow::new("w").with_phase(count("count"))).bind_phase_core("count", Counter);
    /// assert!(executor.check().is_empty());
    /// ```
    #[must_use]
    pub fn bind_phase_core<C: AgentCore>(self, phase: impl Into<String>, core: C) -> Self {
        self.bind_phase(phase, core_agent(AgentRuntime::new(core)))
    }

    /// Binds a registry tool: each phase run is one call under its contract. [`Self::check`]
    /// holds the phase's wiring to the tool's schemas before anything runs.
    ///
    /// ```
    /// use agentio_tools::{ToolError, tool, tool_registry};
    /// use agentio_workflow::{Executor, Phase, TypeRef, Workflow};
    /// use serde_json::json;
    /// use std::sync::Arc;
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput)]
    /// struct Text { text: String }
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentOutput)]
    /// struct Count { words: u32 }
    ///
    /// /// Counts words.
    /// #[tool(id = "text.count")]
    /// async fn count(input: Text) -> Result<Count, ToolError> {
    ///     Ok(Count { words: input.text.split_whitespace().count() as u32 })
    /// }
    ///
    /// let registry = Arc::new(tool_registry![CountTool].unwrap());
    /// let workflow = Workflow::new("demo").with_phase(
    ///     Phase::new("count", "Count").assign("counter").input("text", "$trigger.text").output("words", TypeRef::Integer),
    /// );
    /// let executor = Executor::new(workflow).bind_tool("counter", registry.clone(), "text.count");
    /// assert!(executor.check().is_empty());
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let outcome = runtime.block_on(executor.run("r1", json!({ "text": "one two three" }), json!({}))).unwrap();
    /// assert_eq!(outcome.outputs["count"]["words"], 3);
    ///
    /// // Wired to a key the tool does not take: found before the run.
    /// let miswired = Workflow::new("demo").with_phase(
    ///     Phase::new("count", "Count").assign("counter").input("body", "$trigger.text").output("words", TypeRef::Integer),
    /// );
    /// let problems = Executor::new(miswired).bind_tool("counter", registry, "text.count").check();
    /// assert!(!problems.is_empty());
    /// ```
    #[must_use]
    pub fn bind_tool(
        self,
        assign: impl Into<String>,
        registry: Arc<ToolRegistry>,
        tool_id: impl Into<String>,
    ) -> Self {
        let tool_id = tool_id.into();
        // What the tool can produce: its output schema, derived structs closed.
        let schemas = agentio_core::ToolInvoker::tool_schemas(&*registry, &tool_id);
        self.bind(
            assign,
            ToolAgent {
                registry,
                tool_id,
                schemas,
            },
        )
    }

    /// Binds a function `Fn(TaskContext) -> impl Future<Output = Result<Value, AgentError>>`
    /// (an example is on the type).
    #[must_use]
    pub fn bind_fn<F, Fut>(self, assign: impl Into<String>, f: F) -> Self
    where
        F: Fn(TaskContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, AgentError>> + Send + 'static,
    {
        self.bind(assign, FnAgent(f))
    }

    /// Runs the agent of `phase` once on `ctx` (panics contained), as the executor's loop does.
    #[cfg(feature = "restate")]
    pub(crate) async fn run_agent(
        &self,
        phase: &str,
        ctx: &TaskContext,
    ) -> Result<Value, AgentError> {
        let agent = self.workflow.phase(phase).and_then(|p| self.agent_for(p));
        run_bound(agent.map(|a| &**a), phase, ctx).await
    }

    #[cfg(feature = "restate")]
    pub(crate) fn shared_workflow(&self) -> &Arc<Workflow> {
        &self.workflow
    }

    #[cfg(feature = "restate")]
    pub(crate) fn max_completion_attempts(&self) -> u32 {
        self.max_completion_attempts
    }

    fn agent_for(&self, phase: &Phase) -> Option<&Arc<dyn PhaseAgent>> {
        self.by_phase
            .get(&phase.name)
            .or_else(|| phase.assign.as_ref().and_then(|a| self.by_assign.get(a)))
    }

    /// Everything that can be found before a run: the document's problems, phases with no
    /// agent, and typed wiring — each wired input must fit the consuming core's or tool's input
    /// field, each required input field must be wired, and each declared output must exist in
    /// the producing type's output schema with a matching type.
    ///
    /// ```
    /// use agentio_workflow::{Executor, Phase, ValidationError, Workflow};
    ///
    /// let workflow = Workflow::new("w").with_phase(Phase::new("a", "A").assign("nobody"));
    /// let problems = Executor::new(workflow).check();
    /// assert_eq!(problems.len(), 1);
    /// assert!(matches!(&problems[0], ValidationError::DocumentError { message, .. } if message.contains("nobody")));
    /// ```
    pub fn check(&self) -> Vec<ValidationError> {
        let mut problems = self.workflow.validate();
        for phase in &self.workflow.phases {
            match self.agent_for(phase) {
                None => problems.push(ValidationError::DocumentError {
                    message: match &phase.assign {
                        Some(assign) => format!("phase '{}' is assigned to '{assign}', and no agent is bound to that name", phase.name),
                        None => format!("phase '{}' has no `assign` and no agent bound to it", phase.name),
                    },
                    line: phase.at.line,
                    column: phase.at.column,
                }),
                Some(agent) => {
                    if let Some((input_schema, output_schema)) = agent.schemas() {
                        self.check_typed(phase, input_schema, output_schema, &mut problems);
                    }
                }
            }
        }
        problems.sort_by_key(ValidationError::position);
        problems.into_iter().map(ValidationError::bounded).collect()
    }

    fn check_typed(
        &self,
        phase: &Phase,
        input_schema: &Value,
        output_schema: &Value,
        problems: &mut Vec<ValidationError>,
    ) {
        let workflow = &self.workflow;
        let wiring = |key: &str,
                      expected: String,
                      actual: String,
                      suggestion: String,
                      at: crate::Position| {
            ValidationError::TypedWiringError {
                phase_name: phase.name.clone(),
                key: key.to_owned(),
                message: format!(
                    "phase '{}', `{key}`: the bound agent needs {expected}, the workflow provides {actual}",
                    phase.name
                ),
                expected,
                actual,
                suggestion,
                line: at.line,
                column: at.column,
            }
        };
        let inputs = resolve(input_schema, input_schema);
        let properties = inputs.get("properties").and_then(Value::as_object);
        let closed = inputs.get("additionalProperties") == Some(&Value::Bool(false));
        for decl in &phase.inputs {
            match properties.and_then(|p| p.get(&decl.key)) {
                None if closed => problems.push(wiring(
                    &decl.key,
                    "no such field".into(),
                    format!("`{}`", decl.expression),
                    "remove this input, or rename it to a field of the agent's input type".into(),
                    decl.at,
                )),
                None => {}
                Some(field) => {
                    if let InputSource::Phase {
                        phase: upstream,
                        key,
                    } = &decl.source
                        && let Some(declared) = workflow
                            .phase(upstream)
                            .and_then(|p| p.output_decl_for(key))
                    {
                        // A typed producer feeding a typed consumer: their schemas decide, so
                        // this check and a skill's cannot disagree. An unproven pair falls back
                        // to the declared type.
                        let producer = workflow
                            .phase(upstream)
                            .and_then(|p| self.agent_for(p))
                            .and_then(|agent| agent.schemas())
                            .and_then(|(_, produced)| field_schema(produced, key));
                        let consumer = field_schema(input_schema, &decl.key);
                        if let (Some(producer), Some(consumer)) = (&producer, &consumer) {
                            match agentio_core::compat::schema_compatible(producer, consumer) {
                                Compatibility::Compatible => continue,
                                Compatibility::Incompatible(why) => {
                                    problems.push(wiring(
                                        &decl.key,
                                        format!("a value its input field accepts ({})", why.reason),
                                        format!("`{}`, which can be {}", decl.expression, {
                                            let mut shown = why.witness.to_string();
                                            agentio_core::limits::clip(&mut shown, 120);
                                            shown
                                        }),
                                        format!(
                                            "change the type of `{upstream}`'s output `{key}` or of the field `{}`",
                                            decl.key
                                        ),
                                        decl.at,
                                    ));
                                    continue;
                                }
                                Compatibility::Unknown(_) => {}
                            }
                        }
                        let Some(reason) = workflow.fits_schema(&declared.ty, field, input_schema)
                        else {
                            continue;
                        };
                        problems.push(wiring(
                            &decl.key,
                            format!("a value its input field accepts ({reason})"),
                            format!("`{}` of type `{}`", decl.expression, declared.ty),
                            format!(
                                "change the type of `{upstream}.{key}` or of the field `{}`",
                                decl.key
                            ),
                            decl.at,
                        ));
                    }
                }
            }
        }
        let wired: BTreeSet<&str> = phase.inputs.iter().map(|d| d.key.as_str()).collect();
        for required in inputs
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !wired.contains(required) && !required.starts_with('_') {
                problems.push(wiring(
                    required,
                    format!("its required input field `{required}`"),
                    "nothing wired to it".into(),
                    format!("add `{required}: <phase>.<key>` (or `$trigger.{required}`) under the phase's inputs"),
                    phase.at,
                ));
            }
        }
        let outputs = resolve(output_schema, output_schema);
        // An output type without listed properties (a map, `serde_json::Value`) may produce any
        // key: there is nothing to check against.
        let Some(produced) = outputs.get("properties").and_then(Value::as_object) else {
            return;
        };
        for decl in phase.outputs.iter().flatten() {
            match produced.get(&decl.key) {
                None => problems.push(wiring(
                    &decl.key,
                    format!("the declared output `{}`", decl.key),
                    "an output type without that field".into(),
                    "add the field to the agent's output type, or remove the declaration".into(),
                    decl.at,
                )),
                Some(field) => {
                    if let Some(reason) = workflow.schema_satisfies(field, output_schema, &decl.ty)
                    {
                        problems.push(wiring(
                            &decl.key,
                            format!("outputs of type `{}`", decl.ty),
                            format!("an output field that may not be one ({reason})"),
                            format!(
                                "make the Rust field always a `{}`, or change the declared type",
                                decl.ty
                            ),
                            decl.at,
                        ));
                    }
                }
            }
        }
    }

    /// Runs the workflow: [`Self::check`] first (its problems are returned, nothing runs), then
    /// every phase in dependency order, independent phases concurrently (one Tokio task each),
    /// downstream phases unblocked as upstreams complete, and a rejected completion handed back
    /// to its agent (with `ctx.rejections`) until the attempt limit. (An example is on the type.)
    ///
    /// A workflow with problems does not start:
    ///
    /// ```
    /// use agentio_workflow::{Executor, Phase, Workflow};
    /// let executor = Executor::new(Workflow::new("w").with_phase(Phase::new("a", "A").assign("nobody")));
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let problems = runtime.block_on(executor.run("r1", serde_json::json!({}), serde_json::json!({}))).unwrap_err();
    /// assert_eq!(problems, executor.check());
    /// ```
    pub async fn run(
        &self,
        run_id: &str,
        trigger: Value,
        initial_state: Value,
    ) -> Result<RunOutcome, Vec<ValidationError>> {
        let problems = self.check();
        if !problems.is_empty() {
            return Err(problems);
        }
        // `check` has validated the workflow already.
        let run = WorkflowRun::unchecked(self.workflow.clone(), run_id, trigger, initial_state);
        match self.drive(run, Carry::default(), &InMemory).await {
            Ok(outcome) => Ok(outcome),
            Err(never) => match never {},
        }
    }

    /// Marks a phase that must not run twice: when a durable run is reopened and finds it
    /// claimed but not completed (its process stopped while its agent worked), the phase fails
    /// with `PhaseInterruptedError` instead of being offered again. Phases bound to a registry
    /// tool are treated so unless the tool's contract says `idempotent`.
    #[must_use]
    pub fn at_most_once(mut self, phase: impl Into<String>) -> Self {
        self.at_most_once.insert(phase.into());
        self
    }

    /// Keeps the workflow's document (its YAML) with each durable run started, so
    /// `agentio-workflow show` can draw the run's graph.
    #[must_use]
    pub fn with_document(mut self, yaml: impl Into<Arc<str>>) -> Self {
        self.document = Some(yaml.into());
        self
    }

    /// Runs the workflow as [`Self::run`] does, durably: the run is recorded in `journal`
    /// under `run_id` (refused when the id is taken), and every transition (claim, completion
    /// with its output, rejection, failure, suspension, resumption) is written to it before
    /// the run acts on it. If the process stops, [`Self::reopen`] goes on from the last
    /// recorded transition.
    ///
    /// Returns when no phase can make progress: every phase finished, or the rest wait on a
    /// suspended or failed phase.
    ///
    /// ```
    /// use agentio_workflow::journal::Journal;
    /// use agentio_workflow::{Executor, Phase, TypeRef, Workflow};
    /// use serde_json::json;
    ///
    /// let workflow = Workflow::new("w")
    ///     .with_phase(Phase::new("a", "A").assign("one").output("n", TypeRef::Number))
    ///     .with_phase(Phase::new("b", "B").assign("double").depends_on(["a"]).input("n", "a.n").output("n", TypeRef::Number));
    /// let executor = Executor::new(workflow)
    ///     .bind_fn("one", |_| async { Ok(json!({ "n": 1 })) })
    ///     .bind_fn("double", |ctx| async move { Ok(json!({ "n": ctx.input["n"].as_i64().unwrap_or(0) * 2 })) });
    /// let dir = tempfile::tempdir().unwrap();
    /// let journal = Journal::open(dir.path().join("runs.redb")).unwrap();
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let outcome = runtime.block_on(executor.start(&journal, "r1", json!({}), json!({}))).unwrap();
    /// assert_eq!(outcome.outputs["b"]["n"], 2);
    /// // Claimed and completed, each phase: four transitions on disk.
    /// assert_eq!(journal.load("r1").unwrap().1.len(), 4);
    /// // Reopening a finished run runs nothing again and gives the same outcome.
    /// let again = runtime.block_on(executor.reopen(&journal, "r1")).unwrap();
    /// assert_eq!(again.outputs, outcome.outputs);
    /// assert_eq!(journal.load("r1").unwrap().1.len(), 4);
    /// ```
    pub async fn start(
        &self,
        journal: &Journal,
        run_id: &str,
        trigger: Value,
        initial_state: Value,
    ) -> Result<RunOutcome, DurableError> {
        let problems = self.check();
        if !problems.is_empty() {
            return Err(DurableError::Invalid(problems));
        }
        for (what, value) in [("trigger", &trigger), ("initial state", &initial_state)] {
            unrecordable(what, value)?;
        }
        let record = RunRecord::new(
            &self.workflow,
            run_id,
            trigger.clone(),
            initial_state.clone(),
            self.document.as_deref().map(str::to_owned),
        );
        journal.create(&record)?;
        let run = WorkflowRun::unchecked(self.workflow.clone(), run_id, trigger, initial_state);
        let to = ToJournal { journal, run_id };
        Ok(self.drive(run, Carry::default(), &to).await?)
    }

    /// Reopens the durable run `run_id` (after its process stopped, or to go on after a
    /// resumption) and runs it on from its last recorded transition: completed phases are
    /// not run again (their recorded outputs are wired downstream), rejected attempts count,
    /// suspended phases stay suspended, and a phase claimed but not completed is offered
    /// again — or, for an [`Self::at_most_once`] phase or a tool that is not idempotent,
    /// failed with `PhaseInterruptedError`.
    ///
    /// The executor must hold the workflow the run was started with (same name and phases;
    /// otherwise `WorkflowMismatchError`).
    pub async fn reopen(
        &self,
        journal: &Journal,
        run_id: &str,
    ) -> Result<RunOutcome, DurableError> {
        self.reopen_with(journal, run_id, None).await
    }

    /// Resumes the suspended phase `phase` of the durable run `run_id` with `input` (the human
    /// answer the suspension awaited), durably, then runs the run on as [`Self::reopen`] does.
    /// The phase is offered to its agent again, which finds `input` in
    /// [`TaskContext::resumed_with`]. A phase that is not suspended is refused with
    /// `InvalidTransitionError` (in [`DurableError::Run`]).
    pub async fn resume(
        &self,
        journal: &Journal,
        run_id: &str,
        phase: &str,
        input: Value,
    ) -> Result<RunOutcome, DurableError> {
        self.reopen_with(journal, run_id, Some((phase, input)))
            .await
    }

    async fn reopen_with(
        &self,
        journal: &Journal,
        run_id: &str,
        resume: Option<(&str, Value)>,
    ) -> Result<RunOutcome, DurableError> {
        let problems = self.check();
        if !problems.is_empty() {
            return Err(DurableError::Invalid(problems));
        }
        let (record, entries) = journal.load(run_id)?;
        if !record.matches(&self.workflow) {
            return Err(DurableError::Journal(JournalError::WorkflowMismatch {
                run_id: run_id.to_owned(),
                recorded: format!("'{}' ({})", record.workflow, record.phases.join(", ")),
                given: format!(
                    "'{}' ({})",
                    self.workflow.name,
                    self.workflow
                        .phases
                        .iter()
                        .map(|p| p.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }));
        }
        let mut run = WorkflowRun::unchecked(
            self.workflow.clone(),
            run_id,
            record.trigger,
            record.initial_state,
        );
        let mut carry = Carry::default();
        for (seq, entry) in entries.into_iter().enumerate() {
            replay(&mut run, &mut carry, entry).map_err(|message| JournalError::Corrupt {
                path: journal.path().to_path_buf(),
                run_id: run_id.to_owned(),
                seq: seq as u64,
                message,
            })?;
        }
        let to = ToJournal { journal, run_id };
        // Claimed and not completed: its process stopped while its agent worked.
        let interrupted: Vec<String> = run.progress().running;
        for phase_name in interrupted {
            let may_rerun = !self.at_most_once.contains(&phase_name)
                && run
                    .phase(&phase_name)
                    .and_then(|p| self.agent_for(p))
                    .is_none_or(|agent| agent.may_rerun());
            if may_rerun {
                to.record(|| Entry::Released {
                    phase: phase_name.clone(),
                })?;
                run.release(&phase_name).map_err(DurableError::Run)?;
            } else {
                let task_id = run.task_id(&phase_name).unwrap_or_default().to_owned();
                let error = RunError::PhaseInterruptedError {
                    task_id,
                    phase_name: phase_name.clone(),
                    message: format!(
                        "phase '{phase_name}' was claimed and its process stopped before it completed; it may not run twice, so the run stops at it"
                    ),
                };
                let why = error.to_string();
                self.fail_phase(&mut run, &to, &phase_name, &error, why)?;
            }
        }
        if let Some((phase, input)) = resume {
            unrecordable("resumption's answer", &input)?;
            run.resume(phase).map_err(DurableError::Run)?;
            to.record(|| Entry::Resumed {
                phase: phase.to_owned(),
                input: input.clone(),
            })?;
            run.release(phase).map_err(DurableError::Run)?;
            carry.resumed.insert(phase.to_owned(), input);
        }
        Ok(self.drive(run, carry, &to).await?)
    }

    /// The executor's loop: claims what is ready, runs agents, records each transition
    /// through `record` before acting on it.
    async fn drive<R: Record>(
        &self,
        mut run: WorkflowRun,
        carry: Carry,
        record: &R,
    ) -> Result<RunOutcome, R::Error> {
        let Carry {
            mut attempts,
            mut blocked,
            mut resumed,
        } = carry;
        let mut running: Running = tokio::task::JoinSet::new();
        loop {
            for phase_name in run.ready_phases() {
                if blocked.contains(&phase_name) {
                    continue;
                }
                match run.claim(&phase_name) {
                    Ok(mut ctx) => {
                        record.record(|| Entry::Claimed {
                            phase: phase_name.clone(),
                        })?;
                        ctx.resumed_with = resumed.remove(&phase_name);
                        let attempt = attempts.get(&phase_name).map_or(1, |n| n + 1);
                        self.spawn(
                            &mut running,
                            run.phase(&phase_name),
                            &phase_name,
                            ctx,
                            attempt,
                        );
                    }
                    // The task stays ready (§3.1); nothing will change for it in this run.
                    Err(error) => {
                        record.record(|| Entry::ClaimRefused {
                            phase: phase_name.clone(),
                            event: error.to_json(),
                        })?;
                        blocked.insert(phase_name);
                    }
                }
            }
            let Some(joined) = running.join_next().await else {
                break;
            };
            let Ok((phase_name, mut ctx, result, millis)) = joined else {
                continue;
            };
            if let Some(suspension) = ctx.take_suspension() {
                record.record(|| Entry::suspended(&phase_name, &suspension))?;
                self.report(PhaseProgress::Suspended {
                    phase: phase_name.clone(),
                    intent_id: suspension.intent_id.clone(),
                });
                // The task is running, so suspending it is a valid transition.
                let _ = run.suspend(&phase_name, suspension);
                continue;
            }
            let tries = attempts.entry(phase_name.clone()).or_insert(0);
            *tries += 1;
            match result.and_then(recordable_output) {
                Ok(output) => match run.complete_or_return(&phase_name, output) {
                    Ok(()) => {
                        record.record(|| Entry::Completed {
                            phase: phase_name.clone(),
                            output: run.output(&phase_name).cloned().unwrap_or_default(),
                        })?;
                        self.report(PhaseProgress::Completed {
                            phase: phase_name.clone(),
                            millis,
                        });
                    }
                    Err((rejections, output)) => {
                        record.record(|| Entry::Rejected {
                            phase: phase_name.clone(),
                            output,
                        })?;
                        if *tries < self.max_completion_attempts {
                            self.report(PhaseProgress::Rejected {
                                phase: phase_name.clone(),
                                attempt: *tries,
                            });
                            ctx.rejections = rejections;
                            let next = *tries + 1;
                            self.spawn(
                                &mut running,
                                run.phase(&phase_name),
                                &phase_name,
                                ctx,
                                next,
                            );
                        } else {
                            let why = format!("its output was rejected {tries} time(s)");
                            let error = phase_failed(&ctx.task_id, &phase_name, Value::Null, &why);
                            self.fail_phase(&mut run, record, &phase_name, &error, why)?;
                        }
                    }
                },
                Err(err) => {
                    let cause = serde_json::to_value(&err).unwrap_or(Value::Null);
                    let why = err.to_string();
                    let error = phase_failed(&ctx.task_id, &phase_name, cause, &why);
                    self.fail_phase(&mut run, record, &phase_name, &error, why)?;
                }
            }
        }
        Ok(outcome_of(&run))
    }

    /// Fails a phase for good: the failure recorded, reported, and its task failed with
    /// `error` as its event.
    pub(crate) fn fail_phase<R: Record>(
        &self,
        run: &mut WorkflowRun,
        record: &R,
        phase: &str,
        error: &RunError,
        why: String,
    ) -> Result<(), R::Error> {
        let event = error.to_json();
        record.record(|| Entry::Failed {
            phase: phase.to_owned(),
            event: event.clone(),
        })?;
        self.report(PhaseProgress::Failed {
            phase: phase.to_owned(),
            message: why,
        });
        // Only a finished task refuses, and none is failed twice.
        let _ = run.fail_recorded(phase, event);
        Ok(())
    }

    fn spawn(
        &self,
        running: &mut Running,
        phase: Option<&Phase>,
        phase_name: &str,
        ctx: TaskContext,
        attempt: u32,
    ) {
        let agent = phase.and_then(|p| self.agent_for(p)).cloned();
        let phase_name = phase_name.to_owned();
        self.report(PhaseProgress::Started {
            phase: phase_name.clone(),
            attempt,
        });
        running.spawn(async move {
            let started = std::time::Instant::now();
            let result = run_bound(agent.as_deref(), &phase_name, &ctx).await;
            let millis = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            (phase_name, ctx, result, millis)
        });
    }
}

/// An agent's output nested deeper than a run can record ([`crate::journal::MAX_RECORDED_DEPTH`])
/// is the agent's `output_invalid` error, naming where: the same on every backend, so a run in
/// memory and a durable one fail such a phase alike.
pub(crate) fn recordable_output(output: Value) -> Result<Value, AgentError> {
    match crate::journal::too_deep(&output) {
        Ok(()) => Ok(output),
        Err(violation) => {
            let message = crate::journal::too_deep_message("output", &violation);
            // Dropped without recursion, however deep.
            agentio_core::limits::dismantle(output);
            Err(AgentError::output_invalid(message, vec![violation]))
        }
    }
}

/// What replaying a journal carries into the executor's loop.
#[derive(Default)]
struct Carry {
    /// Completion attempts made so far, per phase.
    attempts: BTreeMap<String, u32>,
    /// Phases whose claim was refused for good.
    blocked: BTreeSet<String>,
    /// Resumed phases not yet claimed again, with their resumption input.
    resumed: BTreeMap<String, Value>,
}

/// Applies one recorded entry to a run being reopened; `Err` says why it does not apply.
fn replay(run: &mut WorkflowRun, carry: &mut Carry, entry: Entry) -> Result<(), String> {
    let kind = entry.kind();
    let phase = entry.phase().to_owned();
    let refused =
        |error: RunError| format!("a recorded '{kind}' of phase '{phase}' does not apply: {error}");
    match entry {
        Entry::Claimed { phase: p } => {
            run.claim(&p).map_err(refused)?;
        }
        Entry::ClaimRefused { phase: p, event } => {
            run.record_event(event);
            carry.blocked.insert(p);
        }
        Entry::Completed { phase: p, output } => {
            run.complete(&p, Value::Object(output))
                .map_err(|errors| errors.into_iter().next().map_or_else(String::new, refused))?;
            carry.resumed.remove(&p);
        }
        Entry::Rejected { phase: p, output } => {
            if run.complete(&p, output).is_ok() {
                return Err(format!(
                    "a recorded rejection of phase '{p}' is accepted when replayed (was the workflow's output declaration changed?)"
                ));
            }
            *carry.attempts.entry(p).or_insert(0) += 1;
        }
        Entry::Failed { phase: p, event } => {
            run.fail_recorded(&p, event).map_err(refused)?;
        }
        Entry::Suspended {
            phase: p,
            intent_id,
            suspended_since,
            expires_at,
            expected_resume_at,
        } => {
            carry.resumed.remove(&p);
            run.suspend(
                &p,
                Suspension {
                    intent_id,
                    suspended_since,
                    expires_at,
                    expected_resume_at,
                },
            )
            .map_err(refused)?;
        }
        Entry::Resumed { phase: p, input } => {
            run.resume(&p).map_err(refused)?;
            run.release(&p).map_err(refused)?;
            carry.resumed.insert(p, input);
        }
        Entry::Released { phase: p } => {
            run.release(&p).map_err(refused)?;
        }
    }
    Ok(())
}

/// Where the executor's loop writes each transition before acting on it.
pub(crate) trait Record {
    type Error;
    /// Writes the entry `entry()` makes (an in-memory run does not call it).
    fn record(&self, entry: impl FnOnce() -> Entry) -> Result<(), Self::Error>;
}

/// An in-memory run: nothing is written.
pub(crate) struct InMemory;

impl Record for InMemory {
    type Error = std::convert::Infallible;
    fn record(&self, _: impl FnOnce() -> Entry) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// A durable run: each entry committed to the journal.
struct ToJournal<'a> {
    journal: &'a Journal,
    run_id: &'a str,
}

impl Record for ToJournal<'_> {
    type Error = JournalError;
    fn record(&self, entry: impl FnOnce() -> Entry) -> Result<(), Self::Error> {
        self.journal.append(self.run_id, &entry()).map(drop)
    }
}

/// Runs a phase's agent once on `ctx`, its panics contained; a phase without one fails.
async fn run_bound(
    agent: Option<&dyn PhaseAgent>,
    phase: &str,
    ctx: &TaskContext,
) -> Result<Value, AgentError> {
    match agent {
        Some(agent) => agentio_core::contain_panics(agent.run(ctx)).await,
        None => Err(AgentError::internal(format!(
            "no agent is bound to phase '{phase}'"
        ))),
    }
}

/// The `PhaseFailedError` of a phase that failed for the reason `why`.
pub(crate) fn phase_failed(task_id: &str, phase: &str, cause: Value, why: &str) -> RunError {
    RunError::PhaseFailedError {
        task_id: task_id.to_owned(),
        phase_name: phase.to_owned(),
        cause,
        message: format!("phase '{phase}' failed: {why}"),
    }
}

/// Where a run ended: every completed phase's output, the events, the progress.
pub(crate) fn outcome_of(run: &WorkflowRun) -> RunOutcome {
    let outputs = run
        .workflow()
        .phases
        .iter()
        .filter_map(|p| run.output(&p.name).map(|o| (p.name.clone(), o.clone())))
        .collect();
    RunOutcome {
        outputs,
        events: run.events().to_vec(),
        progress: run.progress(),
    }
}

/// Why a durable run did not run: its workflow has problems, its journal failed, or an
/// operation asked of it does not apply.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum DurableError {
    /// The workflow's problems ([`Executor::check`]); nothing ran.
    Invalid(Vec<ValidationError>),
    /// The journal could not be read or written; the run stopped at its last recorded
    /// transition and can be reopened.
    Journal(JournalError),
    /// An operation the run's state does not allow (resuming a phase that is not suspended).
    Run(RunError),
    /// A trigger, initial state or resumption answer nested deeper than a run can record
    /// ([`crate::journal::MAX_RECORDED_DEPTH`]); nothing was recorded.
    Unrecordable {
        /// What, and where it goes too deep.
        message: String,
    },
}

/// `Err` when `value` nests deeper than a run can record.
#[expect(
    clippy::result_large_err,
    reason = "checked once per start or resumption; the error is what the durable calls return"
)]
fn unrecordable(what: &str, value: &Value) -> Result<(), DurableError> {
    crate::journal::too_deep(value).map_err(|violation| DurableError::Unrecordable {
        message: crate::journal::too_deep_message(what, &violation),
    })
}

impl From<JournalError> for DurableError {
    fn from(error: JournalError) -> Self {
        DurableError::Journal(error)
    }
}

impl std::fmt::Display for DurableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DurableError::Invalid(problems) => {
                write!(f, "the workflow has {} problem(s)", problems.len())?;
                for problem in problems {
                    write!(f, "; {problem}")?;
                }
                Ok(())
            }
            DurableError::Journal(error) => error.fmt(f),
            DurableError::Run(error) => error.fmt(f),
            DurableError::Unrecordable { message } => {
                write!(f, "UnrecordableValueError: {message}")
            }
        }
    }
}

impl std::error::Error for DurableError {}

/// The phases under way: each task gives back its phase, context, result and time.
type Running = tokio::task::JoinSet<(String, TaskContext, Result<Value, AgentError>, u64)>;

/// The schema of one top-level field of an object schema, as a document of its own (the
/// root's `$defs` kept); `None` when the root lists no such property.
fn field_schema(root: &Value, key: &str) -> Option<Value> {
    let resolved = resolve(root, root);
    resolved.get("properties")?.get(key)?;
    let token = key.replace('~', "~0").replace('/', "~1");
    root.get("properties")
        .and_then(|_| agentio_core::compat::schema_at(root, &format!("/properties/{token}")))
}

fn core_agent(runtime: AgentRuntime) -> CoreAgent {
    CoreAgent {
        input_schema: runtime.input_schema(),
        output_schema: runtime.output_boundary().produced_schema(),
        runtime: tokio::sync::Mutex::new(runtime),
    }
}
