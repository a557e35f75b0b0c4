//! One run of a workflow: claim-time resolution, pre-handoff population, completion-time
//! validation and downstream unblocking (RFC-0024 §3), as a state machine an executor (or a
//! host with its own agents) drives.

use std::collections::BTreeMap;
use std::sync::Arc;

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
    siblings: Arc<BTreeMap<String, Map<String, Value>>>,
}

impl TaskContext {
    /// The recorded output of a completed phase: the escape hatch of §5.2, bypassing the
    /// wiring guarantees. Prefer declared `inputs`.
    pub fn get_sibling_output(&self, phase_name: &str) -> Option<&Map<String, Value>> {
        self.siblings.get(phase_name)
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
    output: Option<Map<String, Value>>,
    rejections: Vec<RunError>,
}

/// One run of a workflow.
pub struct WorkflowRun {
    workflow: Arc<Workflow>,
    trigger: Value,
    initial_state: Value,
    tasks: BTreeMap<String, Task>,
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
        let tasks = workflow
            .phases
            .iter()
            .map(|p| {
                let state = if p.depends_on.is_empty() {
                    TaskState::Ready
                } else {
                    TaskState::Pending
                };
                let task = Task {
                    id: format!("task_{run_id}_{}", p.name),
                    state,
                    output: None,
                    rejections: Vec::new(),
                };
                (p.name.clone(), task)
            })
            .collect();
        WorkflowRun {
            workflow,
            trigger,
            initial_state,
            tasks,
            events: Vec::new(),
        }
    }

    /// The workflow being run.
    pub fn workflow(&self) -> &Workflow {
        &self.workflow
    }

    /// The state of a phase's task.
    pub fn state(&self, phase: &str) -> Option<&TaskState> {
        self.tasks.get(phase).map(|t| &t.state)
    }

    /// The task id of a phase.
    pub fn task_id(&self, phase: &str) -> Option<&str> {
        self.tasks.get(phase).map(|t| t.id.as_str())
    }

    /// The recorded output of a completed phase (declared keys and any extra ones).
    pub fn output(&self, phase: &str) -> Option<&Map<String, Value>> {
        self.tasks.get(phase).and_then(|t| t.output.as_ref())
    }

    /// Phases that may be claimed now, in document order.
    pub fn ready_phases(&self) -> Vec<String> {
        self.workflow
            .phases
            .iter()
            .filter(|p| {
                self.tasks
                    .get(&p.name)
                    .is_some_and(|t| t.state == TaskState::Ready)
            })
            .map(|p| p.name.clone())
            .collect()
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
        let Some(phase) = self.workflow.phase(phase_name).cloned() else {
            let error = RunError::UnresolvableInputError {
                task_id: String::new(),
                phase_name: phase_name.to_owned(),
                unresolvable_refs: Vec::new(),
                message: format!("Task claim rejected: there is no phase '{phase_name}'"),
            };
            self.emit(&error);
            return Err(error);
        };
        let task_id = self
            .tasks
            .get(phase_name)
            .map(|t| t.id.clone())
            .unwrap_or_default();
        // RFC-0026: a suspended upstream is named as such, not as a mere missing output.
        for input in &phase.inputs {
            if let InputSource::Phase {
                phase: upstream, ..
            } = &input.source
                && let Some(TaskState::SuspendedAwaitingInput {
                    intent_id,
                    expires_at,
                    ..
                }) = self.tasks.get(upstream).map(|t| &t.state)
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
            if self.tasks.get(dep).map(|t| &t.state) != Some(&TaskState::Completed) {
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
                        .tasks
                        .get(upstream)
                        .and_then(|t| t.output.as_ref())
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
        let siblings: BTreeMap<String, Map<String, Value>> = self
            .tasks
            .iter()
            .filter_map(|(name, t)| t.output.clone().map(|o| (name.clone(), o)))
            .collect();
        let task = self.tasks.get_mut(phase_name);
        let rejections = task
            .as_ref()
            .map(|t| t.rejections.clone())
            .unwrap_or_default();
        if let Some(task) = task {
            task.state = TaskState::Running;
        }
        Ok(TaskContext {
            task_id,
            phase_name: phase_name.to_owned(),
            input,
            rejections,
            siblings: Arc::new(siblings),
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
            .tasks
            .get(phase_name)
            .map(|t| t.id.clone())
            .unwrap_or_default();
        let errors = self.output_errors(phase_name, &task_id, &output);
        if !errors.is_empty() {
            for error in &errors {
                self.emit(error);
            }
            if let Some(task) = self.tasks.get_mut(phase_name) {
                task.rejections = errors.clone();
            }
            return Err(errors);
        }
        let output = match output {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => Map::from_iter([("value".to_owned(), other)]),
        };
        if let Some(task) = self.tasks.get_mut(phase_name) {
            task.state = TaskState::Completed;
            task.output = Some(output);
            task.rejections.clear();
        }
        self.unblock();
        Ok(())
    }

    fn output_errors(&self, phase_name: &str, task_id: &str, output: &Value) -> Vec<RunError> {
        let Some(phase) = self.workflow.phase(phase_name) else {
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

    /// §3.4: every pending phase whose dependencies are all complete becomes ready.
    fn unblock(&mut self) {
        let ready: Vec<String> = self
            .workflow
            .phases
            .iter()
            .filter(|p| {
                self.tasks
                    .get(&p.name)
                    .is_some_and(|t| t.state == TaskState::Pending)
            })
            .filter(|p| {
                p.depends_on.iter().all(|(d, _)| {
                    self.tasks
                        .get(d)
                        .is_some_and(|t| t.state == TaskState::Completed)
                })
            })
            .map(|p| p.name.clone())
            .collect();
        for name in ready {
            if let Some(task) = self.tasks.get_mut(&name) {
                task.state = TaskState::Ready;
            }
        }
    }

    /// Marks a phase failed for good (its agent failed); its dependents never become ready.
    pub fn fail(&mut self, phase_name: &str, error: RunError) {
        self.emit(&error);
        if let Some(task) = self.tasks.get_mut(phase_name) {
            task.state = TaskState::Failed;
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
        if let Some(task) = self.tasks.get_mut(phase_name) {
            task.state = TaskState::SuspendedAwaitingInput {
                intent_id: intent_id.to_owned(),
                suspended_since: suspended_since.to_owned(),
                expires_at: expires_at.map(str::to_owned),
            };
        }
    }

    /// Resumes a suspended phase: it runs again.
    pub fn resume(&mut self, phase_name: &str) {
        if let Some(task) = self.tasks.get_mut(phase_name)
            && matches!(task.state, TaskState::SuspendedAwaitingInput { .. })
        {
            task.state = TaskState::Running;
        }
    }

    /// Where the run stands, with `suspended_phases`.
    pub fn progress(&self) -> Progress {
        let mut progress = Progress::default();
        for phase in &self.workflow.phases {
            let Some(task) = self.tasks.get(&phase.name) else {
                continue;
            };
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
