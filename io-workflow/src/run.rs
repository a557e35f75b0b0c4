//! One run of a workflow: claim-time resolution, pre-handoff population, completion-time
//! validation and downstream unblocking (RFC-0024 §3), as a state machine an executor (or a
//! host with its own agents) drives.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, RwLock};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::errors::{RunError, quoted_list};
use crate::model::{InputSource, Workflow};

/// The state of a phase's task (RFC-0012 §1.2, with RFC-0026's suspension).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum TaskState {
    /// Waiting for dependencies.
    Pending,
    /// Dependencies complete; may be claimed.
    Ready,
    /// Claimed; its agent is working.
    Running,
    /// Completed with a validated output.
    Completed,
    /// Suspended awaiting human input (RFC-0026).
    SuspendedAwaitingInput {
        /// The suspended intent.
        intent_id: String,
        /// Since when (ISO-8601).
        suspended_since: String,
        /// When the suspension expires (ISO-8601), if it does.
        expires_at: Option<String>,
        /// When the host expects the phase to resume (ISO-8601), if it knows.
        expected_resume_at: Option<String>,
    },
    /// Failed for good (its agent failed, or its completion was rejected too often).
    Failed,
}

impl TaskState {
    /// The state's name, as [`RunError::InvalidTransitionError`] reports it.
    ///
    /// ```
    /// use agentio_workflow::TaskState;
    /// assert_eq!(TaskState::Ready.name(), "ready");
    /// assert_eq!(TaskState::SuspendedAwaitingInput {
    ///     intent_id: "i1".into(), suspended_since: "2026-11-25T10:00:00Z".into(), expires_at: None, expected_resume_at: None,
    /// }.name(), "suspended_awaiting_input");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            TaskState::Pending => "pending",
            TaskState::Ready => "ready",
            TaskState::Running => "running",
            TaskState::Completed => "completed",
            TaskState::SuspendedAwaitingInput { .. } => "suspended_awaiting_input",
            TaskState::Failed => "failed",
        }
    }
}

/// A suspension awaiting human input (RFC-0025/0026), as [`WorkflowRun::suspend`] records it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Suspension {
    /// The suspended intent.
    pub intent_id: String,
    /// Since when (ISO-8601).
    pub suspended_since: String,
    /// When the suspension expires (ISO-8601), if it does.
    pub expires_at: Option<String>,
    /// When the host expects the phase to resume (ISO-8601), if it knows; downstream claims
    /// report it in `UpstreamIntentSuspendedError.expected_resume_at`.
    pub expected_resume_at: Option<String>,
}

/// What a phase's agent receives (RFC-0024 §5).
#[derive(Clone, Debug)]
pub struct TaskContext {
    /// The task's id.
    pub task_id: String,
    /// The phase.
    pub phase_name: String,
    /// Exactly the keys the phase declares in `inputs`, resolved (empty when none).
    pub input: Map<String, Value>,
    /// Errors of earlier rejected completions of this task (empty on the first try), so an
    /// agent can correct its output.
    pub rejections: Vec<RunError>,
    /// What the resuming side supplied when this phase was suspended and then resumed
    /// ([`crate::Executor::resume`]); `None` on an ordinary claim.
    pub resumed_with: Option<Value>,
    siblings: Arc<Siblings>,
    suspension: Arc<Mutex<Option<Suspension>>>,
}

impl TaskContext {
    /// The recorded output of a completed phase: the escape hatch of §5.2, bypassing the
    /// wiring guarantees. Prefer declared `inputs`.
    ///
    /// The outputs are shared with the run, not copied into each context: a phase completed
    /// after this task was claimed is visible too. `None` for a phase that has not completed
    /// (or does not exist).
    ///
    /// ```
    /// use agentio_workflow::{Phase, TypeRef, Workflow, WorkflowRun};
    /// use serde_json::json;
    /// use std::sync::Arc;
    ///
    /// let workflow = Workflow::new("w")
    ///     .with_phase(Phase::new("a", "A").output("n", TypeRef::Number))
    ///     .with_phase(Phase::new("b", "B").depends_on(["a"]).input("n", "a.n"));
    /// let mut run = WorkflowRun::new(Arc::new(workflow), "r1", json!({}), json!({})).unwrap();
    /// let b_task = {
    ///     run.claim("a").unwrap();
    ///     run.complete("a", json!({ "n": 2, "extra": "kept" })).unwrap();
    ///     run.claim("b").unwrap()
    /// };
    /// // Every recorded key, the undeclared ones too; only `n` is in `input`.
    /// assert_eq!(b_task.get_sibling_output("a").unwrap()["extra"], "kept");
    /// assert!(b_task.input.get("extra").is_none());
    /// assert!(b_task.get_sibling_output("b").is_none());
    /// ```
    pub fn get_sibling_output(&self, phase_name: &str) -> Option<Arc<Map<String, Value>>> {
        self.siblings.get(phase_name)
    }

    /// Asks the executor to suspend this phase awaiting input (RFC-0025/0026) instead of
    /// completing it: whatever the agent then returns is not recorded. The run goes on with the
    /// phases that do not need this one; [`crate::Executor::resume`] later offers the phase to
    /// its agent again, with the resuming side's input in [`Self::resumed_with`].
    ///
    /// ```
    /// use agentio_workflow::{Executor, Phase, Suspension, TypeRef, Workflow};
    /// use serde_json::json;
    ///
    /// let workflow = Workflow::new("w")
    ///     .with_phase(Phase::new("approve", "Approve").assign("human").output("ok", TypeRef::Boolean));
    /// let executor = Executor::new(workflow).bind_fn("human", |ctx| async move {
    ///     match &ctx.resumed_with {
    ///         Some(answer) => Ok(json!({ "ok": answer["ok"] })),
    ///         None => {
    ///             ctx.suspend(Suspension { intent_id: "ask-1".into(), ..Suspension::default() });
    ///             Ok(json!(null))
    ///         }
    ///     }
    /// });
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let outcome = runtime.block_on(executor.run("r1", json!({}), json!({}))).unwrap();
    /// assert_eq!(outcome.progress.suspended_phases[0].intent_id, "ask-1");
    /// ```
    pub fn suspend(&self, suspension: Suspension) {
        *self.suspension.lock().unwrap_or_else(|e| e.into_inner()) = Some(suspension);
    }

    /// The suspension the agent asked for, if it did (taken: asked once, seen once).
    pub(crate) fn take_suspension(&self) -> Option<Suspension> {
        self.suspension
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }
}

/// A completed phase's recorded output, shared rather than copied.
type SharedOutput = Arc<Map<String, Value>>;

/// The recorded outputs of a run, one slot per phase, shared by every task context.
struct Siblings {
    index: Arc<HashMap<String, usize>>,
    slots: Vec<RwLock<Option<SharedOutput>>>,
}

impl Siblings {
    fn get(&self, phase_name: &str) -> Option<Arc<Map<String, Value>>> {
        let slot = self.slots.get(*self.index.get(phase_name)?)?;
        slot.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn set(&self, at: usize, output: Arc<Map<String, Value>>) {
        if let Some(slot) = self.slots.get(at) {
            *slot.write().unwrap_or_else(|e| e.into_inner()) = Some(output);
        }
    }
}

impl std::fmt::Debug for Siblings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Siblings")
            .field("phases", &self.slots.len())
            .finish_non_exhaustive()
    }
}

/// A suspended phase in the progress report (RFC-0026 patch).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SuspendedPhase {
    /// The phase.
    pub phase_name: String,
    /// The suspended intent.
    pub intent_id: String,
    /// Since when.
    pub suspended_since: String,
    /// Until when, if bounded.
    pub expires_at: Option<String>,
    /// When the host expects it to resume, if known.
    pub expected_resume_at: Option<String>,
}

/// Where a run stands.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Progress {
    /// Phases completed.
    pub completed: Vec<String>,
    /// Phases running.
    pub running: Vec<String>,
    /// Phases ready to be claimed.
    pub ready: Vec<String>,
    /// Phases waiting for dependencies.
    pub pending: Vec<String>,
    /// Phases that failed.
    pub failed: Vec<String>,
    /// Phases suspended awaiting input (RFC-0026).
    pub suspended_phases: Vec<SuspendedPhase>,
}

struct Task {
    id: String,
    state: TaskState,
    output: Option<Arc<Map<String, Value>>>,
    rejections: Vec<RunError>,
}

/// One run of a workflow: the task state machine of RFC-0012 §1.2 with RFC-0024's claim-time
/// resolution and completion-time validation and RFC-0026's suspension.
///
/// # The state table
///
/// Each cell is the state after the operation, or the error it returns (the task is then left
/// as it was). Every cell has a test (`tests/tests/integration/workflow_states.rs`).
///
/// | state \ operation | `claim` | `complete` | `fail` | `suspend` | `resume` |
/// |---|---|---|---|---|---|
/// | pending | `UnresolvableInputError` naming the refs that read unfinished dependencies (stays pending) | `InvalidTransitionError` (never claimed) | failed | `InvalidTransitionError` | `InvalidTransitionError` |
/// | ready | running; or `UpstreamIntentSuspendedError` / `UnresolvableInputError` (stays ready) | `InvalidTransitionError` (never claimed) | failed | `InvalidTransitionError` | `InvalidTransitionError` |
/// | running | `InvalidTransitionError` (already claimed) | completed; or `MissingOutputError` / `OutputTypeMismatchError` (stays running, may complete again) | failed | suspended | `InvalidTransitionError` |
/// | suspended | `InvalidTransitionError` | `InvalidTransitionError` | failed | `InvalidTransitionError` | running |
/// | completed | `InvalidTransitionError` | `InvalidTransitionError` (its output is final) | `InvalidTransitionError` | `InvalidTransitionError` | `InvalidTransitionError` |
/// | failed | `InvalidTransitionError` | `InvalidTransitionError` | `InvalidTransitionError` | `InvalidTransitionError` | `InvalidTransitionError` |
///
/// Any operation on a phase the workflow does not have is an `UnknownPhaseError`. Only the
/// RFC's errors are recorded as events ([`WorkflowRun::events`]); `InvalidTransitionError` and
/// `UnknownPhaseError` are the host's programming errors and are only returned. Completing a
/// phase makes each pending dependent whose dependencies are now all completed ready.
///
/// Task ids are `task_{run_id}_{phase}` unless the host supplies its own
/// ([`WorkflowRun::with_task_ids`]).
///
/// Bookkeeping is incremental, so a run costs time linear in its phases and edges: phases are
/// found by name in O(1); each phase counts its dependencies not yet completed, and completing
/// a phase decrements its dependents' counts, making those that reach zero ready; the ready set
/// is kept in document order; outputs are shared, never copied per claim.
///
/// ```
/// use agentio_workflow::{Phase, TypeRef, Workflow, WorkflowRun};
/// use serde_json::json;
/// use std::sync::Arc;
///
/// let workflow = Workflow::new("review")
///     .with_phase(Phase::new("draft", "Draft").input("topic", "$trigger.topic").output("text", TypeRef::String))
///     .with_phase(Phase::new("check", "Check").depends_on(["draft"]).input("text", "draft.text").output("ok", TypeRef::Boolean));
/// let mut run = WorkflowRun::new(Arc::new(workflow), "r1", json!({ "topic": "rust" }), json!({})).unwrap();
/// assert_eq!(run.ready_phases(), ["draft"]);
///
/// let task = run.claim("draft").unwrap();
/// assert_eq!(task.task_id, "task_r1_draft");
/// assert_eq!(task.input["topic"], "rust");
/// // A completion missing a declared output is refused; the task stays running.
/// let refused = run.complete("draft", json!({})).unwrap_err();
/// assert_eq!(refused[0].name(), "MissingOutputError");
/// run.complete("draft", json!({ "text": "Rust is fast." })).unwrap();
///
/// // Completing `draft` made `check` ready, its input wired from `draft.text`.
/// let task = run.claim("check").unwrap();
/// assert_eq!(task.input["text"], "Rust is fast.");
/// run.complete("check", json!({ "ok": true })).unwrap();
/// assert_eq!(run.progress().completed, ["draft", "check"]);
/// assert_eq!(run.events().len(), 1); // the MissingOutputError, as the RFC's JSON event
/// ```
pub struct WorkflowRun {
    workflow: Arc<Workflow>,
    trigger: Value,
    initial_state: Value,
    index: Arc<HashMap<String, usize>>,
    /// One per phase, in document order.
    tasks: Vec<Task>,
    /// For each phase, the phases that depend on it (once per `depends_on` entry).
    dependents: Vec<Vec<usize>>,
    /// For each phase, how many of its `depends_on` entries are not completed.
    waiting: Vec<usize>,
    ready: BTreeSet<usize>,
    siblings: Arc<Siblings>,
    events: Vec<Value>,
}

impl WorkflowRun {
    /// Starts a run: phases without dependencies are ready, the others pending. `trigger` and
    /// `initial_state` are what `$trigger.*` and `$initial_state.*` read.
    ///
    /// The workflow is validated first ([`Workflow::validate`]): a workflow built in Rust with a
    /// wiring mistake is refused here, with every problem, rather than at claim time.
    ///
    /// ```
    /// use agentio_workflow::{Phase, TypeRef, Workflow, WorkflowRun};
    /// use serde_json::json;
    /// use std::sync::Arc;
    /// let workflow = Workflow::new("w")
    ///     .with_phase(Phase::new("a", "A").output("n", TypeRef::Number))
    ///     .with_phase(Phase::new("b", "B").depends_on(["a"]).input("n", "a.n"));
    /// let mut run = WorkflowRun::new(Arc::new(workflow), "r1", json!({}), json!({})).unwrap();
    /// let ctx = run.claim("a").unwrap();
    /// assert_eq!(ctx.task_id, "task_r1_a");
    /// run.complete("a", json!({ "n": 2 })).unwrap();
    /// assert_eq!(run.claim("b").unwrap().input["n"], 2);
    ///
    /// let broken = Workflow::new("w").with_phase(Phase::new("b", "B").input("n", "a.n"));
    /// assert!(WorkflowRun::new(Arc::new(broken), "r2", json!({}), json!({})).is_err());
    /// ```
    pub fn new(
        workflow: Arc<Workflow>,
        run_id: &str,
        trigger: Value,
        initial_state: Value,
    ) -> Result<Self, Vec<crate::ValidationError>> {
        let problems = workflow.validate();
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(Self::unchecked(workflow, run_id, trigger, initial_state))
    }

    /// Replaces the task ids: `id(phase_name)` for each phase (a host with ids of its own).
    /// Call it before the first claim.
    ///
    /// ```
    /// # use agentio_workflow::{Phase, Workflow, WorkflowRun};
    /// # use std::sync::Arc;
    /// # let workflow = Arc::new(Workflow::new("w").with_phase(Phase::new("a", "A")));
    /// let run = WorkflowRun::new(workflow, "r1", serde_json::json!({}), serde_json::json!({}))
    ///     .unwrap()
    ///     .with_task_ids(|phase| format!("01HXYZ-{phase}"));
    /// assert_eq!(run.task_id("a"), Some("01HXYZ-a"));
    /// ```
    #[must_use]
    pub fn with_task_ids(mut self, id: impl Fn(&str) -> String) -> Self {
        for (phase, task) in self.workflow.phases.iter().zip(&mut self.tasks) {
            task.id = id(&phase.name);
        }
        self
    }

    pub(crate) fn unchecked(
        workflow: Arc<Workflow>,
        run_id: &str,
        trigger: Value,
        initial_state: Value,
    ) -> Self {
        let mut index = HashMap::with_capacity(workflow.phases.len());
        for (at, phase) in workflow.phases.iter().enumerate() {
            // The first of two phases with one name wins, as `Workflow::phase` finds it.
            index.entry(phase.name.clone()).or_insert(at);
        }
        let mut dependents = vec![Vec::new(); workflow.phases.len()];
        let mut waiting = vec![0; workflow.phases.len()];
        let mut ready = BTreeSet::new();
        let tasks = workflow
            .phases
            .iter()
            .enumerate()
            .map(|(at, p)| {
                waiting[at] = p.depends_on.len();
                for (dep, _) in &p.depends_on {
                    // A dependency that names no phase never completes: the phase stays pending.
                    if let Some(&upstream) = index.get(dep) {
                        dependents[upstream].push(at);
                    }
                }
                let state = if p.depends_on.is_empty() {
                    ready.insert(at);
                    TaskState::Ready
                } else {
                    TaskState::Pending
                };
                Task {
                    id: format!("task_{run_id}_{}", p.name),
                    state,
                    output: None,
                    rejections: Vec::new(),
                }
            })
            .collect();
        let index = Arc::new(index);
        let siblings = Arc::new(Siblings {
            index: index.clone(),
            slots: workflow.phases.iter().map(|_| RwLock::new(None)).collect(),
        });
        WorkflowRun {
            workflow,
            trigger,
            initial_state,
            index,
            tasks,
            dependents,
            waiting,
            ready,
            siblings,
            events: Vec::new(),
        }
    }

    fn task(&self, phase: &str) -> Option<&Task> {
        self.tasks.get(*self.index.get(phase)?)
    }

    /// The workflow being run.
    ///
    /// ```
    /// use agentio_workflow::{Phase, TypeRef, Workflow, WorkflowRun};
    /// use serde_json::json;
    /// use std::sync::Arc;
    ///
    /// let workflow = Workflow::new("w")
    ///     .with_phase(Phase::new("a", "A").output("n", TypeRef::Number))
    ///     .with_phase(Phase::new("b", "B").depends_on(["a"]).input("n", "a.n"));
    /// let mut run = WorkflowRun::new(Arc::new(workflow), "r1", json!({}), json!({})).unwrap();
    /// assert_eq!(run.workflow().name, "w");
    /// assert_eq!(run.phase("b").unwrap().depends_on[0].0, "a");
    /// assert!(run.phase("c").is_none());
    /// ```
    pub fn workflow(&self) -> &Workflow {
        &self.workflow
    }

    /// The state of a phase's task.
    ///
    /// ```
    /// use agentio_workflow::{Phase, TypeRef, Workflow, WorkflowRun};
    /// use serde_json::json;
    /// use std::sync::Arc;
    ///
    /// let workflow = Workflow::new("w")
    ///     .with_phase(Phase::new("a", "A").output("n", TypeRef::Number))
    ///     .with_phase(Phase::new("b", "B").depends_on(["a"]).input("n", "a.n"));
    /// let mut run = WorkflowRun::new(Arc::new(workflow), "r1", json!({}), json!({})).unwrap();
    /// use agentio_workflow::TaskState;
    /// assert_eq!(run.state("a"), Some(&TaskState::Ready));
    /// assert_eq!(run.state("b"), Some(&TaskState::Pending));
    /// run.claim("a").unwrap();
    /// assert_eq!(run.state("a"), Some(&TaskState::Running));
    /// run.complete("a", json!({ "n": 1 })).unwrap();
    /// assert_eq!((run.state("a"), run.state("b")), (Some(&TaskState::Completed), Some(&TaskState::Ready)));
    /// assert_eq!(run.state("c"), None);
    /// ```
    pub fn state(&self, phase: &str) -> Option<&TaskState> {
        self.task(phase).map(|t| &t.state)
    }

    /// The task id of a phase (an example is on [`Self::with_task_ids`]).
    pub fn task_id(&self, phase: &str) -> Option<&str> {
        self.task(phase).map(|t| t.id.as_str())
    }

    /// The recorded output of a completed phase (declared keys and any extra ones).
    ///
    /// ```
    /// use agentio_workflow::{Phase, TypeRef, Workflow, WorkflowRun};
    /// use serde_json::json;
    /// use std::sync::Arc;
    ///
    /// let workflow = Workflow::new("w")
    ///     .with_phase(Phase::new("a", "A").output("n", TypeRef::Number))
    ///     .with_phase(Phase::new("b", "B").depends_on(["a"]).input("n", "a.n"));
    /// let mut run = WorkflowRun::new(Arc::new(workflow), "r1", json!({}), json!({})).unwrap();
    /// run.claim("a").unwrap();
    /// assert!(run.output("a").is_none());
    /// run.complete("a", json!({ "n": 1, "note": "extra" })).unwrap();
    /// assert_eq!(run.output("a").unwrap()["note"], "extra");
    /// ```
    pub fn output(&self, phase: &str) -> Option<&Map<String, Value>> {
        self.task(phase).and_then(|t| t.output.as_deref())
    }

    /// Phases that may be claimed now, in document order (an example is on the type).
    pub fn ready_phases(&self) -> Vec<String> {
        self.ready
            .iter()
            .map(|&at| self.workflow.phases[at].name.clone())
            .collect()
    }

    /// The phase called `name`, found in O(1) (an example is on [`Self::workflow`]).
    pub fn phase(&self, name: &str) -> Option<&crate::Phase> {
        self.workflow.phases.get(*self.index.get(name)?)
    }

    /// The named errors emitted so far, as the RFC's JSON event payloads, in order (an example
    /// is on the type).
    pub fn events(&self) -> &[Value] {
        &self.events
    }

    fn emit(&mut self, error: &RunError) {
        self.events.push(error.to_json());
    }

    /// Claims a ready phase (§3.1) and builds its context (§3.2). Rejected, with the task left
    /// `ready`, when an upstream the inputs read is suspended (`UpstreamIntentSuspendedError`),
    /// or when an upstream did not record a referenced key or a static input is absent or
    /// `null` (`UnresolvableInputError`, listing every such input). A pending task is rejected
    /// with `UnresolvableInputError` naming the inputs that read unfinished dependencies; any
    /// other state with `InvalidTransitionError` (see the state table).
    ///
    /// ```
    /// use agentio_workflow::{Phase, TypeRef, Workflow, WorkflowRun};
    /// use serde_json::json;
    /// use std::sync::Arc;
    ///
    /// let workflow = Workflow::new("w")
    ///     .with_phase(Phase::new("a", "A").output("n", TypeRef::Number))
    ///     .with_phase(Phase::new("b", "B").depends_on(["a"]).input("n", "a.n"));
    /// let mut run = WorkflowRun::new(Arc::new(workflow), "r1", json!({}), json!({})).unwrap();
    /// // `b` reads `a.n`, and `a` has not completed.
    /// let early = run.claim("b").unwrap_err();
    /// assert_eq!(early.name(), "UnresolvableInputError");
    /// run.claim("a").unwrap();
    /// assert_eq!(run.claim("a").unwrap_err().name(), "InvalidTransitionError");
    /// assert_eq!(run.claim("zz").unwrap_err().name(), "UnknownPhaseError");
    /// ```
    #[expect(
        clippy::result_large_err,
        reason = "claims are rare next to the work they start; the named error is returned unboxed so callers can match on it"
    )]
    pub fn claim(&mut self, phase_name: &str) -> Result<TaskContext, RunError> {
        let at = self.locate(phase_name, "claim")?;
        match &self.tasks[at].state {
            TaskState::Ready | TaskState::Pending => {}
            _ => return Err(self.invalid(at, "claim", "it is not ready to be claimed")),
        }
        let workflow = self.workflow.clone();
        let phase = &workflow.phases[at];
        let task_id = self.tasks[at].id.clone();
        // RFC-0026: a suspended upstream is named as such, not as a mere missing output.
        for input in &phase.inputs {
            if let InputSource::Phase {
                phase: upstream, ..
            } = &input.source
                && let Some(TaskState::SuspendedAwaitingInput {
                    intent_id,
                    expected_resume_at,
                    ..
                }) = self.task(upstream).map(|t| &t.state)
            {
                let resume = expected_resume_at.as_deref().map_or_else(
                    || "no expected resume time is known".to_owned(),
                    |at| format!("expected to resume at {at}"),
                );
                let error = RunError::UpstreamIntentSuspendedError {
                    task_id,
                    phase_name: phase_name.to_owned(),
                    suspended_intent_id: intent_id.clone(),
                    expected_resume_at: expected_resume_at.clone(),
                    message: format!(
                        "Task claim deferred: upstream phase '{upstream}' is suspended awaiting input on intent '{intent_id}' ({resume})"
                    ),
                };
                self.emit(&error);
                return Err(error);
            }
        }
        let mut input = Map::new();
        let mut unresolved = Vec::new();
        let mut reasons = Vec::new();
        let mut unfinished = Vec::new();
        for (dep, _) in &phase.depends_on {
            if self.task(dep).map(|t| &t.state) != Some(&TaskState::Completed) {
                reasons.push(format!("dependency '{dep}' is not completed"));
                unfinished.push(dep.as_str());
            }
        }
        // An unfinished dependency no input reads is named by itself.
        for dep in &unfinished {
            let read = phase.inputs.iter().any(
                |decl| matches!(&decl.source, InputSource::Phase { phase, .. } if phase == dep),
            );
            if !read {
                unresolved.push((*dep).to_owned());
            }
        }
        for decl in &phase.inputs {
            let value = match &decl.source {
                InputSource::Phase {
                    phase: upstream,
                    key,
                } => {
                    let value = self
                        .task(upstream)
                        .and_then(|t| t.output.as_deref())
                        .and_then(|o| o.get(key));
                    if value.is_none() && !unfinished.contains(&upstream.as_str()) {
                        reasons.push(format!(
                            "upstream phase '{upstream}' did not record output key '{key}'"
                        ));
                    }
                    value.cloned()
                }
                // §3.1.3: a static input resolves only to a non-null value.
                InputSource::Trigger(key) | InputSource::InitialState(key) => {
                    let source = if matches!(decl.source, InputSource::Trigger(_)) {
                        &self.trigger
                    } else {
                        &self.initial_state
                    };
                    let value = source.get(key).filter(|v| !v.is_null()).cloned();
                    if value.is_none() {
                        reasons.push(format!("'{}' is absent or null", decl.expression));
                    }
                    value
                }
                InputSource::Malformed => {
                    reasons.push(format!("'{}' is not a valid mapping", decl.expression));
                    None
                }
            };
            match value {
                Some(value) => {
                    input.insert(decl.key.clone(), value);
                }
                None => unresolved.push(decl.expression.clone()),
            }
        }
        if !reasons.is_empty() {
            let error = RunError::UnresolvableInputError {
                task_id,
                phase_name: phase_name.to_owned(),
                unresolvable_refs: unresolved,
                message: format!("Task claim rejected: {}", reasons.join("; ")),
            };
            self.emit(&error);
            return Err(error);
        }
        let task = &mut self.tasks[at];
        let rejections = task.rejections.clone();
        // Unreachable for a pending task: its unfinished dependencies were reasons above.
        task.state = TaskState::Running;
        self.ready.remove(&at);
        Ok(TaskContext {
            task_id,
            phase_name: phase_name.to_owned(),
            input,
            rejections,
            resumed_with: None,
            siblings: self.siblings.clone(),
            suspension: Arc::default(),
        })
    }

    /// Completes a running phase with its agent's output (§3.3). The output must be an object
    /// (`null` counts as `{}`); every declared required key must be present
    /// (`MissingOutputError`, listing them all) and every declared key present must have its
    /// type (`OutputTypeMismatchError`, one per key). On rejection the task stays `running` and
    /// may be completed again with a corrected output. Extra keys are accepted and recorded;
    /// an optional key returned as `null` counts as not produced and is not recorded (a
    /// downstream input reading it is unresolvable, as a `null` static input is). A phase
    /// without `outputs` is not checked beyond being an object. On success the output is
    /// recorded, final, and downstream phases are unblocked (§3.4). A task that is not running
    /// is refused with `InvalidTransitionError`.
    pub fn complete(&mut self, phase_name: &str, output: Value) -> Result<(), Vec<RunError>> {
        self.complete_or_return(phase_name, output)
            .map_err(|(errors, _)| errors)
    }

    /// [`Self::complete`], handing a refused output back with the errors (a durable run
    /// records a rejected output; it need not copy every output in case it is rejected).
    pub(crate) fn complete_or_return(
        &mut self,
        phase_name: &str,
        output: Value,
    ) -> Result<(), (Vec<RunError>, Value)> {
        let at = match self.locate(phase_name, "complete") {
            Ok(at) => at,
            Err(error) => return Err((vec![error], output)),
        };
        if self.tasks[at].state != TaskState::Running {
            let reason = match self.tasks[at].state {
                TaskState::Completed => "it is already completed, and its output is final",
                TaskState::Pending | TaskState::Ready => "it was never claimed",
                _ => "it is not running",
            };
            return Err((vec![self.invalid(at, "complete", reason)], output));
        }
        let task_id = self.tasks[at].id.clone();
        let errors = self.output_errors(phase_name, &task_id, &output);
        if !errors.is_empty() {
            for error in &errors {
                self.emit(error);
            }
            self.tasks[at].rejections = errors.clone();
            return Err((errors, output));
        }
        let mut output = match output {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        if let Some(declared) = &self.workflow.phases[at].outputs {
            for decl in declared.iter().filter(|d| !d.required) {
                if output.get(&decl.key).is_some_and(Value::is_null) {
                    output.remove(&decl.key);
                }
            }
        }
        let output = Arc::new(output);
        self.siblings.set(at, output.clone());
        let task = &mut self.tasks[at];
        task.state = TaskState::Completed;
        task.output = Some(output);
        task.rejections.clear();
        self.ready.remove(&at);
        self.unblock(at);
        Ok(())
    }

    #[expect(
        clippy::result_large_err,
        reason = "the named error is what every public operation returns"
    )]
    fn locate(&self, phase_name: &str, operation: &str) -> Result<usize, RunError> {
        self.index
            .get(phase_name)
            .copied()
            .ok_or_else(|| RunError::UnknownPhaseError {
                phase_name: phase_name.to_owned(),
                operation: operation.to_owned(),
                message: format!(
                    "cannot {operation} '{phase_name}': the workflow has no phase of that name"
                ),
            })
    }

    fn invalid(&self, at: usize, operation: &str, reason: &str) -> RunError {
        let task = &self.tasks[at];
        let phase_name = &self.workflow.phases[at].name;
        RunError::InvalidTransitionError {
            task_id: task.id.clone(),
            phase_name: phase_name.clone(),
            operation: operation.to_owned(),
            state: task.state.name().to_owned(),
            message: format!(
                "cannot {operation} phase '{phase_name}': {reason} (its task is {})",
                task.state.name()
            ),
        }
    }

    fn output_errors(&self, phase_name: &str, task_id: &str, output: &Value) -> Vec<RunError> {
        let Some(phase) = self.phase(phase_name) else {
            return Vec::new();
        };
        let empty = Map::new();
        let fields = match output {
            Value::Object(map) => map,
            Value::Null => &empty,
            other => {
                return vec![RunError::OutputTypeMismatchError {
                    task_id: task_id.to_owned(),
                    phase_name: phase_name.to_owned(),
                    key: String::new(),
                    expected_type: "object".into(),
                    actual_type: crate::types::json_type(other).into(),
                    message: format!(
                        "Task completion rejected: the output must be an object of output keys, not {}",
                        crate::types::json_type(other)
                    ),
                }];
            }
        };
        // §9: a phase without `outputs` is not validated beyond being an object.
        let Some(declared) = &phase.outputs else {
            return Vec::new();
        };
        let mut errors = Vec::new();
        let missing: Vec<String> = declared
            .iter()
            .filter(|o| o.required && !fields.contains_key(&o.key))
            .map(|o| o.key.clone())
            .collect();
        if !missing.is_empty() {
            let (noun, verb) = if missing.len() == 1 {
                ("key", "was")
            } else {
                ("keys", "were")
            };
            errors.push(RunError::MissingOutputError {
                task_id: task_id.to_owned(),
                phase_name: phase_name.to_owned(),
                message: format!(
                    "Task completion rejected: declared output {noun} {} {verb} not present in agent return value",
                    quoted_list(&missing)
                ),
                missing_keys: missing,
            });
        }
        for decl in declared {
            let Some(value) = fields.get(&decl.key) else {
                continue;
            };
            // An optional output may be returned as null, meaning "not produced".
            if value.is_null() && !decl.required {
                continue;
            }
            if let Err(mismatch) = self.workflow.check_value(value, &decl.ty) {
                let place = if mismatch.path.is_empty() {
                    String::new()
                } else {
                    format!(
                        " at '{}' (expected {}, got {})",
                        mismatch.path, mismatch.expected, mismatch.actual
                    )
                };
                errors.push(RunError::OutputTypeMismatchError {
                    task_id: task_id.to_owned(),
                    phase_name: phase_name.to_owned(),
                    key: decl.key.clone(),
                    expected_type: decl.ty.to_string(),
                    actual_type: crate::types::json_type(value).into(),
                    message: format!(
                        "Task completion rejected: output key '{}' is {}, declared {}{place}",
                        decl.key,
                        crate::types::json_type(value),
                        decl.ty
                    ),
                });
            }
        }
        errors
    }

    /// §3.4: each pending dependent of a phase just completed whose dependencies are now all
    /// complete becomes ready (each `depends_on` entry counted once, in O(dependents)).
    fn unblock(&mut self, completed: usize) {
        for &dependent in &self.dependents[completed] {
            let waiting = &mut self.waiting[dependent];
            *waiting = waiting.saturating_sub(1);
            if *waiting == 0 && self.tasks[dependent].state == TaskState::Pending {
                self.tasks[dependent].state = TaskState::Ready;
                self.ready.insert(dependent);
            }
        }
    }

    /// Marks a phase failed for good (its agent failed, or the host gives up on it); its
    /// dependents never become ready. The error is recorded as an event. Allowed from pending,
    /// ready, running and suspended; a completed or failed task is refused with
    /// `InvalidTransitionError`.
    ///
    /// ```
    /// use agentio_workflow::{Phase, TypeRef, Workflow, WorkflowRun};
    /// use serde_json::json;
    /// use std::sync::Arc;
    ///
    /// let workflow = Workflow::new("w")
    ///     .with_phase(Phase::new("a", "A").output("n", TypeRef::Number))
    ///     .with_phase(Phase::new("b", "B").depends_on(["a"]).input("n", "a.n"));
    /// let mut run = WorkflowRun::new(Arc::new(workflow), "r1", json!({}), json!({})).unwrap();
    /// use agentio_workflow::RunError;
    ///
    /// run.claim("a").unwrap();
    /// run.fail("a", RunError::PhaseFailedError {
    ///     task_id: "task_r1_a".into(),
    ///     phase_name: "a".into(),
    ///     cause: json!({ "code": "timeout" }),
    ///     message: "the fetch timed out".into(),
    /// }).unwrap();
    /// assert_eq!(run.progress().failed, ["a"]);
    /// assert_eq!(run.progress().pending, ["b"]);
    /// assert_eq!(run.events()[0]["error"], "PhaseFailedError");
    /// ```
    #[expect(
        clippy::result_large_err,
        reason = "a refused transition is a programming error of the host, returned as the named error"
    )]
    pub fn fail(&mut self, phase_name: &str, error: RunError) -> Result<(), RunError> {
        let at = self.locate(phase_name, "fail")?;
        if matches!(
            self.tasks[at].state,
            TaskState::Completed | TaskState::Failed
        ) {
            return Err(self.invalid(at, "fail", "it has already finished"));
        }
        self.emit(&error);
        self.tasks[at].state = TaskState::Failed;
        self.ready.remove(&at);
        Ok(())
    }

    /// Suspends a running phase awaiting human input (RFC-0025/0026). Downstream claims that
    /// read it are deferred with `UpstreamIntentSuspendedError`, carrying the intent and the
    /// expected resume time. A task that is not running is refused with
    /// `InvalidTransitionError`.
    ///
    /// ```
    /// use agentio_workflow::{Phase, Suspension, TypeRef, Workflow, WorkflowRun};
    /// use serde_json::json;
    /// use std::sync::Arc;
    ///
    /// let workflow = Workflow::new("w")
    ///     .with_phase(Phase::new("approve", "Approve").output("ok", TypeRef::Boolean))
    ///     .with_phase(Phase::new("ship", "Ship").depends_on(["approve"]).input("ok", "approve.ok"));
    /// let mut run = WorkflowRun::new(Arc::new(workflow), "r1", json!({}), json!({})).unwrap();
    /// run.claim("approve").unwrap();
    /// run.suspend("approve", Suspension {
    ///     intent_id: "intent-7".into(),
    ///     suspended_since: "2026-11-25T10:00:00Z".into(),
    ///     expected_resume_at: Some("2026-11-26T09:00:00Z".into()),
    ///     ..Suspension::default()
    /// }).unwrap();
    /// assert_eq!(run.progress().suspended_phases[0].intent_id, "intent-7");
    /// // A downstream claim names the suspension, not a mere missing output.
    /// assert_eq!(run.claim("ship").unwrap_err().name(), "UpstreamIntentSuspendedError");
    ///
    /// run.resume("approve").unwrap();
    /// run.complete("approve", json!({ "ok": true })).unwrap();
    /// assert_eq!(run.claim("ship").unwrap().input["ok"], true);
    /// assert_eq!(run.resume("approve").unwrap_err().name(), "InvalidTransitionError");
    /// ```
    #[expect(
        clippy::result_large_err,
        reason = "a refused transition is a programming error of the host, returned as the named error"
    )]
    pub fn suspend(&mut self, phase_name: &str, suspension: Suspension) -> Result<(), RunError> {
        let at = self.locate(phase_name, "suspend")?;
        if self.tasks[at].state != TaskState::Running {
            return Err(self.invalid(at, "suspend", "only a running task can be suspended"));
        }
        self.tasks[at].state = TaskState::SuspendedAwaitingInput {
            intent_id: suspension.intent_id,
            suspended_since: suspension.suspended_since,
            expires_at: suspension.expires_at,
            expected_resume_at: suspension.expected_resume_at,
        };
        Ok(())
    }

    /// Resumes a suspended phase: it runs again. A task that is not suspended is refused with
    /// `InvalidTransitionError`. (An example is on [`Self::suspend`].)
    #[expect(
        clippy::result_large_err,
        reason = "a refused transition is a programming error of the host, returned as the named error"
    )]
    pub fn resume(&mut self, phase_name: &str) -> Result<(), RunError> {
        let at = self.locate(phase_name, "resume")?;
        if !matches!(
            self.tasks[at].state,
            TaskState::SuspendedAwaitingInput { .. }
        ) {
            return Err(self.invalid(at, "resume", "only a suspended task can be resumed"));
        }
        self.tasks[at].state = TaskState::Running;
        Ok(())
    }

    /// A running task whose agent stopped with its process (found when a durable run is
    /// reopened) is offered again: it becomes ready.
    #[expect(
        clippy::result_large_err,
        reason = "the named error is what every transition returns"
    )]
    pub(crate) fn release(&mut self, phase_name: &str) -> Result<(), RunError> {
        let at = self.locate(phase_name, "release")?;
        if self.tasks[at].state != TaskState::Running {
            return Err(self.invalid(at, "release", "only a running task can be offered again"));
        }
        self.tasks[at].state = TaskState::Ready;
        self.ready.insert(at);
        Ok(())
    }

    /// Fails a phase with an error recorded earlier (its JSON event), as [`Self::fail`] does.
    #[expect(
        clippy::result_large_err,
        reason = "the named error is what every transition returns"
    )]
    pub(crate) fn fail_recorded(&mut self, phase_name: &str, event: Value) -> Result<(), RunError> {
        let at = self.locate(phase_name, "fail")?;
        if matches!(
            self.tasks[at].state,
            TaskState::Completed | TaskState::Failed
        ) {
            return Err(self.invalid(at, "fail", "it has already finished"));
        }
        self.events.push(event);
        self.tasks[at].state = TaskState::Failed;
        self.ready.remove(&at);
        Ok(())
    }

    /// Records an event emitted earlier (replaying a journal).
    pub(crate) fn record_event(&mut self, event: Value) {
        self.events.push(event);
    }

    /// Where the run stands, with `suspended_phases` (an example is on [`Self::suspend`]).
    ///
    /// ```
    /// use agentio_workflow::{Phase, TypeRef, Workflow, WorkflowRun};
    /// use serde_json::json;
    /// use std::sync::Arc;
    ///
    /// let workflow = Workflow::new("w")
    ///     .with_phase(Phase::new("a", "A").output("n", TypeRef::Number))
    ///     .with_phase(Phase::new("b", "B").depends_on(["a"]).input("n", "a.n"));
    /// let mut run = WorkflowRun::new(Arc::new(workflow), "r1", json!({}), json!({})).unwrap();
    /// let progress = run.progress();
    /// assert_eq!((progress.ready, progress.pending), (vec!["a".to_string()], vec!["b".to_string()]));
    /// assert!(progress.completed.is_empty() && progress.failed.is_empty());
    /// ```
    pub fn progress(&self) -> Progress {
        let mut progress = Progress::default();
        for (phase, task) in self.workflow.phases.iter().zip(&self.tasks) {
            let name = phase.name.clone();
            match &task.state {
                TaskState::Pending => progress.pending.push(name),
                TaskState::Ready => progress.ready.push(name),
                TaskState::Running => progress.running.push(name),
                TaskState::Completed => progress.completed.push(name),
                TaskState::Failed => progress.failed.push(name),
                TaskState::SuspendedAwaitingInput {
                    intent_id,
                    suspended_since,
                    expires_at,
                    expected_resume_at,
                } => {
                    progress.suspended_phases.push(SuspendedPhase {
                        phase_name: name,
                        intent_id: intent_id.clone(),
                        suspended_since: suspended_since.clone(),
                        expires_at: expires_at.clone(),
                        expected_resume_at: expected_resume_at.clone(),
                    });
                }
            }
        }
        progress
    }
}

impl std::fmt::Debug for WorkflowRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkflowRun")
            .field("workflow", &self.workflow.name)
            .field("progress", &self.progress())
            .field("events", &self.events.len())
            .finish_non_exhaustive()
    }
}
