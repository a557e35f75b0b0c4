//! Runs beyond one machine, on [Restate](https://restate.dev) (feature `restate`): a run is a
//! Restate workflow, each phase's agent run a durable step of it, a suspension awaiting input
//! a durable promise that the resuming side completes.
//!
//! The same [`Executor`] (workflow document, bound agents, typed wiring) runs here as in
//! memory or on the embedded journal: [`RestateWorkflows`] serves executors as the Restate
//! workflow service `AgentioWorkflow`, and any number of worker processes may serve it (behind
//! one address Restate is registered with); Restate sends each run to one of them and, when
//! that worker dies, replays the run on another from Restate's own journal. RFC-0024's claim
//! resolution, completion validation, wiring and named errors are [`crate::WorkflowRun`]'s,
//! unchanged: the workflow handler drives a run exactly as the executor's loop does, with each
//! agent run recorded by Restate (`ctx.run`) so a replay does not run it again.
//!
//! - Start a run: `POST {ingress}/AgentioWorkflow/{run_id}/run` (or `/run/send`) with
//!   [`StartRun`] as JSON (`{"workflow": NAME, "trigger": {...}, "initial_state": {...}}`); the
//!   answer (or `GET {ingress}/restate/workflow/AgentioWorkflow/{run_id}/attach`) is the outcome,
//!   `{"outputs", "events", "progress", "succeeded"}`, as [`crate::RunOutcome`] has them.
//! - Resume a suspended phase: `POST {ingress}/AgentioWorkflow/{run_id}/resume` with
//!   [`ResumePhase`] (`{"phase": NAME, "input": ...}`): the run's agent for that phase runs again
//!   with `input` in [`crate::TaskContext::resumed_with`].
//!
//! # Decisions
//!
//! - **Phases run one at a time, in document order**, each agent run awaited before the next
//!   begins: Restate asks that a handler's durable steps be awaited as they are made, so the
//!   run's journal is the same on every replay. Independent phases therefore do not overlap on
//!   this backend (they do in memory and on the embedded journal).
//! - **A suspended phase holds the run** until it is resumed (the run awaits its promise);
//!   phases that do not depend on it and come later in the document wait too.
//! - **An agent's run is a durable step**: recorded once it returns, never run again on a
//!   replay. A worker that dies while an agent runs leaves the step unrecorded, and Restate runs
//!   it again on another worker: agents must be idempotent (key side effects by
//!   `ctx.task_id`, the same on every attempt), as on the embedded journal.
//! - **A failed agent is the phase's `PhaseFailedError`**, not a Restate retry: the agent's
//!   error is recorded as the step's result. Restate retries only what died with its process.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::errors::ValidationError;
use crate::executor::{Executor, PhaseProgress};
use crate::run::{Suspension, WorkflowRun};

/// What starts a run on Restate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StartRun {
    /// The workflow's name (`info.name`), one [`RestateWorkflows`] serves.
    pub workflow: String,
    /// What `$trigger.*` reads.
    #[serde(default = "empty")]
    pub trigger: Value,
    /// What `$initial_state.*` reads.
    #[serde(default = "empty")]
    pub initial_state: Value,
}

fn empty() -> Value {
    json!({})
}

/// What resumes a suspended phase of a run on Restate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResumePhase {
    /// The suspended phase.
    pub phase: String,
    /// The answer it awaited.
    pub input: Value,
}

/// One recorded agent run: what the agent returned, or asked for.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Step {
    /// The agent's output, to be validated as a completion.
    Output(Value),
    /// The agent asked to suspend the phase.
    Suspend(Suspension),
    /// The agent failed: its error, as the AIP-14 `error` object, and its message.
    Failed { cause: Value, message: String },
}

/// The executors a Restate worker serves, by workflow name, as the Restate workflow service
/// `AgentioWorkflow` (see the module's documentation).
///
/// ```no_run
/// use agentio_workflow::restate::RestateWorkflows;
/// use agentio_workflow::{Executor, Phase, TypeRef, Workflow};
/// use serde_json::json;
///
/// # async fn serve() {
/// let workflow = Workflow::new("w").with_phase(Phase::new("a", "A").assign("one").output("n", TypeRef::Number));
/// let executor = Executor::new(workflow).bind_fn("one", |_| async { Ok(json!({ "n": 1 })) });
/// let workflows = RestateWorkflows::new().with(executor).expect("a valid workflow");
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:9080").await.unwrap();
/// workflows.listen(listener).await; // then register http://127.0.0.1:9080 with Restate
/// # }
/// ```
#[derive(Clone, Default)]
pub struct RestateWorkflows {
    executors: Arc<BTreeMap<String, Arc<Executor>>>,
}

impl std::fmt::Debug for RestateWorkflows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RestateWorkflows")
            .field("workflows", &self.executors.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl RestateWorkflows {
    /// Serves no workflow yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Serves `executor`'s workflow under its name. Refused with the executor's problems
    /// ([`Executor::check`]) when it has any, or with a `DocumentError` when a workflow of that
    /// name is served already.
    pub fn with(mut self, executor: Executor) -> Result<Self, Vec<ValidationError>> {
        let problems = executor.check();
        if !problems.is_empty() {
            return Err(problems);
        }
        let name = executor.workflow().name.clone();
        if self.executors.contains_key(&name) {
            return Err(vec![ValidationError::DocumentError {
                message: format!("a workflow named '{name}' is served already"),
                line: 0,
                column: 0,
            }]);
        }
        Arc::make_mut(&mut self.executors).insert(name, Arc::new(executor));
        Ok(self)
    }

    /// The Restate endpoint serving these workflows (to serve with Restate's own
    /// `HttpServer`, or behind another transport).
    pub fn endpoint(self) -> restate_sdk::endpoint::Endpoint {
        Endpoint::builder().bind(self).build()
    }

    /// Serves the endpoint on `listener` (HTTP/2 and HTTP/1.1) until the process ends.
    pub async fn listen(self, listener: tokio::net::TcpListener) {
        HttpServer::new(self.endpoint()).serve(listener).await;
    }

    async fn drive(&self, ctx: &WorkflowContext<'_>, start: StartRun) -> HandlerResult<Value> {
        let Some(executor) = self.executors.get(&start.workflow).cloned() else {
            return Err(TerminalError::new(format!(
                "no workflow named '{}' is served here (served: {})",
                start.workflow,
                self.executors
                    .keys()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
            .into());
        };
        let run_id = ctx.key().to_owned();
        let mut run = WorkflowRun::unchecked(
            executor.shared_workflow().clone(),
            &run_id,
            start.trigger,
            start.initial_state,
        );
        let mut blocked = BTreeSet::new();
        let mut steps = 0u64;
        loop {
            let ready: Vec<String> = run
                .ready_phases()
                .into_iter()
                .filter(|p| !blocked.contains(p))
                .collect();
            if ready.is_empty() {
                break;
            }
            for phase in ready {
                let mut task = match run.claim(&phase) {
                    Ok(task) => task,
                    // The task stays ready (§3.1); nothing will change for it in this run.
                    Err(_) => {
                        blocked.insert(phase);
                        continue;
                    }
                };
                let mut tries = 0u32;
                loop {
                    steps += 1;
                    executor.report(PhaseProgress::Started {
                        phase: phase.clone(),
                        attempt: tries + 1,
                    });
                    let step = ctx
                        .run(|| async {
                            let result = executor
                                .run_agent(&phase, &task)
                                .await
                                .and_then(crate::executor::recordable_output);
                            Ok(Json(match (task.take_suspension(), result) {
                                (Some(suspension), _) => Step::Suspend(suspension),
                                (None, Ok(output)) => Step::Output(output),
                                (None, Err(err)) => Step::Failed {
                                    cause: serde_json::to_value(&err).unwrap_or(Value::Null),
                                    message: err.to_string(),
                                },
                            }))
                        })
                        .name(format!("{steps}:{phase}"))
                        .await?
                        .into_inner();
                    match step {
                        Step::Suspend(suspension) => {
                            executor.report(PhaseProgress::Suspended {
                                phase: phase.clone(),
                                intent_id: suspension.intent_id.clone(),
                            });
                            // The task is running, so these transitions are valid.
                            let _ = run.suspend(&phase, suspension);
                            let key = promise_key(&phase);
                            let input = ctx.promise::<Json<Value>>(&key).await?.into_inner();
                            let _ = run.resume(&phase);
                            task.resumed_with = Some(input);
                        }
                        Step::Output(output) => {
                            tries += 1;
                            match run.complete(&phase, output) {
                                Ok(()) => {
                                    executor.report(PhaseProgress::Completed {
                                        phase: phase.clone(),
                                        millis: 0,
                                    });
                                    break;
                                }
                                Err(rejections) if tries < executor.max_completion_attempts() => {
                                    executor.report(PhaseProgress::Rejected {
                                        phase: phase.clone(),
                                        attempt: tries,
                                    });
                                    task.rejections = rejections;
                                }
                                Err(_) => {
                                    let why = format!("its output was rejected {tries} time(s)");
                                    fail(
                                        &executor,
                                        &mut run,
                                        &phase,
                                        &task.task_id,
                                        Value::Null,
                                        why,
                                    );
                                    break;
                                }
                            }
                        }
                        Step::Failed { cause, message } => {
                            fail(&executor, &mut run, &phase, &task.task_id, cause, message);
                            break;
                        }
                    }
                }
            }
        }
        let outcome = crate::executor::outcome_of(&run);
        let succeeded = outcome.succeeded();
        Ok(json!({
            "outputs": outcome.outputs,
            "events": outcome.events,
            "progress": outcome.progress,
            "succeeded": succeeded,
        }))
    }
}

/// The promise a suspended phase awaits.
fn promise_key(phase: &str) -> String {
    format!("resume:{phase}")
}

/// Fails a phase for good, as the executor does (Restate's journal holds the run, so nothing is
/// recorded here).
fn fail(
    executor: &Executor,
    run: &mut WorkflowRun,
    phase: &str,
    task_id: &str,
    cause: Value,
    why: String,
) {
    let error = crate::executor::phase_failed(task_id, phase, cause, &why);
    match executor.fail_phase(run, &crate::executor::InMemory, phase, &error, why) {
        Ok(()) => {}
        Err(never) => match never {},
    }
}

/// The Restate service. The macro's generated client and dispatch code is public and
/// undocumented, so it lives in a private module.
mod service {
    use super::{Json, RestateWorkflows, ResumePhase, StartRun, Value, promise_key};
    use restate_sdk::prelude::*;

    #[restate_sdk::workflow(name = "AgentioWorkflow")]
    impl RestateWorkflows {
        /// Runs one workflow run (the workflow's key is the run id).
        #[handler]
        async fn run(
            &self,
            ctx: WorkflowContext<'_>,
            start: Json<StartRun>,
        ) -> HandlerResult<Json<Value>> {
            Ok(Json(self.drive(&ctx, start.into_inner()).await?))
        }

        /// Resumes a suspended phase of the run with its answer.
        #[handler]
        async fn resume(
            &self,
            ctx: SharedWorkflowContext<'_>,
            resume: Json<ResumePhase>,
        ) -> HandlerResult<()> {
            let resume = resume.into_inner();
            if let Err(violation) = crate::journal::too_deep(&resume.input) {
                let message = crate::journal::too_deep_message("answer", &violation);
                return Err(TerminalError::new(message).into());
            }
            ctx.resolve_promise(&promise_key(&resume.phase), Json(resume.input));
            Ok(())
        }
    }
}
