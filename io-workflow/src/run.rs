//! One run of a workflow: claim-time resolution, pre-handoff population, completion-time
//! validation and downstream unblocking (RFC-0024 §3), as a state machine an executor (or a
//! host with its own agents) drives.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, RwLock};

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
    },
    /// Failed for good (its agent failed, or its completion was rejected too often).
    Failed,
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
    siblings: Arc<Siblings>,
}

impl TaskContext {
    /// The recorded output of a completed phase: the escape hatch of §5.2, bypassing the
    /// wiring guarantees. Prefer declared `inputs`.
    ///
    /// The outputs are shared with the run, not copied into each context: a phase completed
    /// after this task was claimed is visible too. `None` for a phase that has not completed
    /// (or does not exist).
    pub fn get_sibling_output(&self, phase_name: &str) -> Option<Arc<Map<String, Value>>> {
        self.siblings.get(phase_name)
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

/// One run of a workflow.
///
/// Bookkeeping is incremental, so a run costs time linear in its phases and edges: phases are
/// found by name in O(1); each phase counts its dependencies not yet completed, and completing
/// a phase decrements its dependents' counts, making those that reach zero ready; the ready set
/// is kept in document order; outputs are shared, never copied per claim.
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
    pub fn new(
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

    fn task_mut(&mut self, phase: &str) -> Option<&mut Task> {
        let at = *self.index.get(phase)?;
        self.tasks.get_mut(at)
    }

    /// The workflow being run.
    pub fn workflow(&self) -> &Workflow {
        &self.workflow
    }

    /// The state of a phase's task.
    pub fn state(&self, phase: &str) -> Option<&TaskState> {
        self.task(phase).map(|t| &t.state)
    }

    /// The task id of a phase.
    pub fn task_id(&self, phase: &str) -> Option<&str> {
        self.task(phase).map(|t| t.id.as_str())
    }

    /// The recorded output of a completed phase (declared keys and any extra ones).
    pub fn output(&self, phase: &str) -> Option<&Map<String, Value>> {
        self.task(phase).and_then(|t| t.output.as_deref())
    }

    /// Phases that may be claimed now, in document order.
    pub fn ready_phases(&self) -> Vec<String> {
        self.ready
            .iter()
            .map(|&at| self.workflow.phases[at].name.clone())
            .collect()
    }

    /// The phase called `name`, found in O(1).
    pub fn phase(&self, name: &str) -> Option<&crate::Phase> {
        self.workflow.phases.get(*self.index.get(name)?)
    }

    /// The named errors emitted so far, as the RFC's JSON event payloads, in order.
    pub fn events(&self) -> &[Value] {
        &self.events
    }

    fn emit(&mut self, error: &RunError) {
        self.events.push(error.to_json());
    }

    /// Claims a ready phase (§3.1) and builds its context (§3.2). Rejected, with the task left
    /// `ready`, when an upstream the inputs read is suspended (`UpstreamIntentSuspendedError`),
    /// or when a dependency is not complete, an upstream did not record a referenced key, or a
    /// static input is absent or `null` (`UnresolvableInputError`, listing every such input).
    #[expect(
        clippy::result_large_err,
        reason = "claims are rare next to the work they start; the named error is returned unboxed so callers can match on it"
    )]
    pub fn claim(&mut self, phase_name: &str) -> Result<TaskContext, RunError> {
        let Some(&at) = self.index.get(phase_name) else {
            let error = RunError::UnresolvableInputError {
                task_id: String::new(),
                phase_name: phase_name.to_owned(),
                unresolvable_refs: Vec::new(),
                message: format!("Task claim rejected: there is no phase '{phase_name}'"),
            };
            self.emit(&error);
            return Err(error);
        };
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
                    expires_at,
                    ..
                }) = self.task(upstream).map(|t| &t.state)
            {
                let error = RunError::UpstreamIntentSuspendedError {
                    task_id,
                    phase_name: phase_name.to_owned(),
                    suspended_intent_id: intent_id.clone(),
                    expected_resume_at: expires_at.clone(),
                    message: format!(
                        "Task claim deferred: upstream phase '{upstream}' is suspended awaiting input"
                    ),
                };
                self.emit(&error);
                return Err(error);
            }
        }
        let mut input = Map::new();
        let mut unresolved = Vec::new();
        let mut reasons = Vec::new();
        for (dep, _) in &phase.depends_on {
            if self.task(dep).map(|t| &t.state) != Some(&TaskState::Completed) {
                reasons.push(format!("dependency '{dep}' is not completed"));
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
                    if value.is_none() {
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
        task.state = TaskState::Running;
        self.ready.remove(&at);
        Ok(TaskContext {
            task_id,
            phase_name: phase_name.to_owned(),
            input,
            rejections,
            siblings: self.siblings.clone(),
        })
    }

    /// Completes a running phase with its agent's output (§3.3). The output must be an object;
    /// every declared required key must be present (`MissingOutputError`, listing them all) and
    /// every declared key present must have its type (`OutputTypeMismatchError`, one per key).
    /// On rejection the task stays `running` and may be completed again with a corrected
    /// output. Extra keys are accepted and recorded. Phases without `outputs` are not checked.
    /// On success the output is recorded and downstream phases are unblocked (§3.4).
    pub fn complete(&mut self, phase_name: &str, output: Value) -> Result<(), Vec<RunError>> {
        let task_id = self
            .task(phase_name)
            .map(|t| t.id.clone())
            .unwrap_or_default();
        let errors = self.output_errors(phase_name, &task_id, &output);
        if !errors.is_empty() {
            for error in &errors {
                self.emit(error);
            }
            if let Some(task) = self.task_mut(phase_name) {
                task.rejections = errors.clone();
            }
            return Err(errors);
        }
        let output = match output {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => Map::from_iter([("value".to_owned(), other)]),
        };
        let Some(&at) = self.index.get(phase_name) else {
            return Ok(());
        };
        let output = Arc::new(output);
        self.siblings.set(at, output.clone());
        let task = &mut self.tasks[at];
        let was_completed = task.state == TaskState::Completed;
        task.state = TaskState::Completed;
        task.output = Some(output);
        task.rejections.clear();
        self.ready.remove(&at);
        if !was_completed {
            self.unblock(at);
        }
        Ok(())
    }

    fn output_errors(&self, phase_name: &str, task_id: &str, output: &Value) -> Vec<RunError> {
        let Some(phase) = self.phase(phase_name) else {
            return Vec::new();
        };
        // §9: a phase without `outputs` is not validated.
        let Some(declared) = &phase.outputs else {
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
                    message:
                        "Task completion rejected: the output must be an object of declared keys"
                            .into(),
                }];
            }
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

    /// Marks a phase failed for good (its agent failed); its dependents never become ready.
    pub fn fail(&mut self, phase_name: &str, error: RunError) {
        self.emit(&error);
        if let Some(&at) = self.index.get(phase_name) {
            self.tasks[at].state = TaskState::Failed;
            self.ready.remove(&at);
        }
    }

    /// Suspends a phase awaiting human input (RFC-0025/0026).
    pub fn suspend(
        &mut self,
        phase_name: &str,
        intent_id: &str,
        suspended_since: &str,
        expires_at: Option<&str>,
    ) {
        if let Some(&at) = self.index.get(phase_name) {
            self.ready.remove(&at);
            self.tasks[at].state = TaskState::SuspendedAwaitingInput {
                intent_id: intent_id.to_owned(),
                suspended_since: suspended_since.to_owned(),
                expires_at: expires_at.map(str::to_owned),
            };
        }
    }

    /// Resumes a suspended phase: it runs again.
    pub fn resume(&mut self, phase_name: &str) {
        if let Some(task) = self.task_mut(phase_name)
            && matches!(task.state, TaskState::SuspendedAwaitingInput { .. })
        {
            task.state = TaskState::Running;
        }
    }

    /// Where the run stands, with `suspended_phases`.
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
                } => {
                    progress.suspended_phases.push(SuspendedPhase {
                        phase_name: name,
                        intent_id: intent_id.clone(),
                        suspended_since: suspended_since.clone(),
                        expires_at: expires_at.clone(),
                    });
                }
            }
        }
        progress
    }
}
