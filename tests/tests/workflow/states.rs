//! The run state machine, cell by cell (the table on `WorkflowRun`), and a property test that
//! random operation sequences on random DAGs never reach a state the table forbids.

use std::sync::Arc;

use agentio_workflow::{Phase, RunError, Suspension, TaskState, TypeRef, Workflow, WorkflowRun};
use proptest::prelude::*;
use serde_json::{Value, json};

/// `a` has no dependencies; `b` depends on `a` and reads `a.x`.
fn two_phases() -> WorkflowRun {
    let workflow = Workflow::new("states")
        .with_phase(Phase::new("a", "A").output("x", TypeRef::Number))
        .with_phase(
            Phase::new("b", "B")
                .depends_on(["a"])
                .input("x", "a.x")
                .output("y", TypeRef::Number),
        );
    WorkflowRun::new(Arc::new(workflow), "r", json!({}), json!({})).unwrap()
}

fn suspension() -> Suspension {
    Suspension {
        intent_id: "intent_1".into(),
        suspended_since: "2026-11-22T10:00:00Z".into(),
        expires_at: None,
        expected_resume_at: Some("2026-11-22T12:00:00Z".into()),
    }
}

fn phase_failed() -> RunError {
    RunError::PhaseFailedError {
        task_id: "t".into(),
        phase_name: "a".into(),
        cause: Value::Null,
        message: "gave up".into(),
    }
}

/// A run and the phase that is in `state` in it.
fn in_state(state: &str) -> (WorkflowRun, &'static str) {
    let mut run = two_phases();
    let phase = match state {
        "pending" => "b",
        "ready" => "a",
        "running" => {
            run.claim("a").unwrap();
            "a"
        }
        "suspended_awaiting_input" => {
            run.claim("a").unwrap();
            run.suspend("a", suspension()).unwrap();
            "a"
        }
        "completed" => {
            run.claim("a").unwrap();
            run.complete("a", json!({ "x": 1 })).unwrap();
            "a"
        }
        "failed" => {
            run.fail("a", phase_failed()).unwrap();
            "a"
        }
        other => panic!("no state {other}"),
    };
    assert_eq!(run.state(phase).unwrap().name(), state);
    (run, phase)
}

/// Applies `op`: `Ok(the state after)` or `Err(the error's name)`.
fn apply(run: &mut WorkflowRun, phase: &str, op: &str) -> Result<String, String> {
    let result = match op {
        "claim" => run.claim(phase).map(|_| ()).map_err(|e| e.name()),
        "complete" => run
            .complete(phase, json!({ "x": 2, "y": 3 }))
            .map_err(|e| e[0].name()),
        "fail" => run.fail(phase, phase_failed()).map_err(|e| e.name()),
        "suspend" => run.suspend(phase, suspension()).map_err(|e| e.name()),
        "resume" => run.resume(phase).map_err(|e| e.name()),
        other => panic!("no operation {other}"),
    };
    result
        .map(|()| run.state(phase).unwrap().name().to_owned())
        .map_err(str::to_owned)
}

const INVALID: &str = "InvalidTransitionError";

#[test]
fn every_cell_of_the_state_table() {
    let table: &[(&str, [Result<&str, &str>; 5])] = &[
        //                   claim                             complete          fail            suspend                        resume
        (
            "pending",
            [
                Err("UnresolvableInputError"),
                Err(INVALID),
                Ok("failed"),
                Err(INVALID),
                Err(INVALID),
            ],
        ),
        (
            "ready",
            [
                Ok("running"),
                Err(INVALID),
                Ok("failed"),
                Err(INVALID),
                Err(INVALID),
            ],
        ),
        (
            "running",
            [
                Err(INVALID),
                Ok("completed"),
                Ok("failed"),
                Ok("suspended_awaiting_input"),
                Err(INVALID),
            ],
        ),
        (
            "suspended_awaiting_input",
            [
                Err(INVALID),
                Err(INVALID),
                Ok("failed"),
                Err(INVALID),
                Ok("running"),
            ],
        ),
        (
            "completed",
            [
                Err(INVALID),
                Err(INVALID),
                Err(INVALID),
                Err(INVALID),
                Err(INVALID),
            ],
        ),
        (
            "failed",
            [
                Err(INVALID),
                Err(INVALID),
                Err(INVALID),
                Err(INVALID),
                Err(INVALID),
            ],
        ),
    ];
    let ops = ["claim", "complete", "fail", "suspend", "resume"];
    for (state, row) in table {
        for (op, expected) in ops.iter().zip(row) {
            let (mut run, phase) = in_state(state);
            let events_before = run.events().len();
            let got = apply(&mut run, phase, op);
            let expected = expected.map(str::to_owned).map_err(str::to_owned);
            assert_eq!(got, expected, "{state} × {op}");
            if got.is_err() {
                // A refused operation leaves the task as it was.
                assert_eq!(run.state(phase).unwrap().name(), *state, "{state} × {op}");
            }
            if got == Err(INVALID.to_owned()) {
                assert_eq!(
                    run.events().len(),
                    events_before,
                    "{state} × {op} logged an event"
                );
            }
        }
    }
}

#[test]
fn invalid_transitions_say_what_and_why() {
    let (mut run, _) = in_state("running");
    let err = run.claim("a").unwrap_err();
    assert_eq!(
        err.to_json(),
        json!({
            "error": "InvalidTransitionError", "task_id": "task_r_a", "phase_name": "a",
            "operation": "claim", "state": "running",
            "message": "cannot claim phase 'a': it is not ready to be claimed (its task is running)"
        })
    );
    let (mut run, _) = in_state("completed");
    let errs = run.complete("a", json!({ "x": 99 })).unwrap_err();
    assert_eq!(
        errs[0].to_string(),
        "InvalidTransitionError: cannot complete phase 'a': it is already completed, and its output is final (its task is completed)"
    );
    // The output downstream phases read is the first one.
    assert_eq!(run.output("a").unwrap()["x"], 1);
    assert_eq!(run.claim("b").unwrap().input["x"], 1);
    let (mut run, _) = in_state("ready");
    let errs = run.complete("a", json!({ "x": 1 })).unwrap_err();
    assert!(
        errs[0].to_string().contains("it was never claimed"),
        "{}",
        errs[0]
    );
}

#[test]
fn claiming_a_completed_phase_does_not_break_its_dependents() {
    let (mut run, _) = in_state("completed");
    assert!(run.claim("a").is_err());
    assert_eq!(run.state("a"), Some(&TaskState::Completed));
    assert_eq!(run.state("b"), Some(&TaskState::Ready));
    assert_eq!(run.ready_phases(), ["b"]);
}

#[test]
fn operations_on_an_unknown_phase_are_their_own_error_and_not_events() {
    let mut run = two_phases();
    let err = run.claim("nope").unwrap_err();
    assert_eq!(
        err.to_json(),
        json!({ "error": "UnknownPhaseError", "phase_name": "nope", "operation": "claim",
                "message": "cannot claim 'nope': the workflow has no phase of that name" })
    );
    assert_eq!(
        run.complete("nope", json!({})).unwrap_err()[0].name(),
        "UnknownPhaseError"
    );
    assert_eq!(
        run.fail("nope", phase_failed()).unwrap_err().name(),
        "UnknownPhaseError"
    );
    assert_eq!(
        run.suspend("nope", suspension()).unwrap_err().name(),
        "UnknownPhaseError"
    );
    assert_eq!(run.resume("nope").unwrap_err().name(), "UnknownPhaseError");
    assert!(run.events().is_empty());
}

#[test]
fn an_unfinished_dependency_is_named_in_the_refs() {
    let mut run = two_phases();
    let err = run.claim("b").unwrap_err();
    assert_eq!(
        err.to_json(),
        json!({
            "error": "UnresolvableInputError", "task_id": "task_r_b", "phase_name": "b",
            "unresolvable_refs": ["a.x"],
            "message": "Task claim rejected: dependency 'a' is not completed"
        })
    );
    // A dependency no input reads is named by itself.
    let workflow = Workflow::new("w")
        .with_phase(Phase::new("a", "A"))
        .with_phase(Phase::new("b", "B").depends_on(["a"]));
    let mut run = WorkflowRun::new(Arc::new(workflow), "r", json!({}), json!({})).unwrap();
    let RunError::UnresolvableInputError {
        unresolvable_refs, ..
    } = run.claim("b").unwrap_err()
    else {
        panic!()
    };
    assert_eq!(unresolvable_refs, ["a"]);
}

#[test]
fn an_optional_output_returned_as_null_is_not_produced() {
    let workflow = Workflow::new("w")
        .with_phase(Phase::new("a", "A").optional_output("note", TypeRef::String))
        .with_phase(
            Phase::new("b", "B")
                .depends_on(["a"])
                .input("note", "a.note"),
        );
    let mut run = WorkflowRun::new(Arc::new(workflow), "r", json!({}), json!({})).unwrap();
    run.claim("a").unwrap();
    run.complete("a", json!({ "note": null })).unwrap();
    assert!(
        run.output("a").unwrap().get("note").is_none(),
        "not recorded"
    );
    let err = run.claim("b").unwrap_err();
    assert_eq!(err.name(), "UnresolvableInputError");
    assert!(
        err.to_string().contains("did not record output key 'note'"),
        "{err}"
    );
}

/// Only an *optional* output may be `null`: a required one returned as `null` is a type
/// mismatch, and an optional one returned as another wrong type is too.
#[test]
fn null_excuses_only_an_optional_output() {
    let workflow = Workflow::new("w").with_phase(
        Phase::new("a", "A")
            .output("count", TypeRef::Number)
            .optional_output("note", TypeRef::String),
    );
    let mut run = WorkflowRun::new(Arc::new(workflow), "r", json!({}), json!({})).unwrap();
    run.claim("a").unwrap();
    let mismatched = |errors: Vec<RunError>| -> Vec<String> {
        errors
            .iter()
            .map(|e| format!("{} {}", e.name(), e.to_json()["key"]))
            .collect()
    };
    let errors = run
        .complete("a", json!({ "count": null, "note": null }))
        .unwrap_err();
    assert_eq!(mismatched(errors), ["OutputTypeMismatchError \"count\""]);
    let errors = run
        .complete("a", json!({ "count": 1, "note": 7 }))
        .unwrap_err();
    assert_eq!(mismatched(errors), ["OutputTypeMismatchError \"note\""]);
    run.complete("a", json!({ "count": 1, "note": null }))
        .unwrap();
    assert_eq!(
        format!("{run:?}"),
        format!(
            "WorkflowRun {{ workflow: \"w\", progress: {:?}, events: 2, .. }}",
            run.progress()
        )
    );
}

#[test]
fn a_workflow_built_in_rust_is_validated_when_the_run_starts() {
    let workflow = Workflow::new("w")
        .with_phase(Phase::new("a", "A").output("x", TypeRef::Number))
        .with_phase(Phase::new("b", "B").input("x", "a.x"));
    let problems = WorkflowRun::new(Arc::new(workflow), "r", json!({}), json!({})).unwrap_err();
    assert_eq!(problems[0].to_json()["error"], "InputWiringError");
    assert!(problems[0].message().contains("'a.x'"), "{}", problems[0]);
}

#[test]
fn hosts_can_supply_their_own_task_ids() {
    let mut run = two_phases().with_task_ids(|phase| format!("task_01HXYZ-{phase}"));
    assert_eq!(run.claim("a").unwrap().task_id, "task_01HXYZ-a");
    let errs = run.complete("a", json!({})).unwrap_err();
    assert_eq!(errs[0].to_json()["task_id"], "task_01HXYZ-a");
}

// --- The property -----------------------------------------------------------------------------

/// The reference model: each phase's state and recorded output, by the table.
#[derive(Clone, Debug, PartialEq)]
enum Model {
    Pending,
    Ready,
    Running,
    Suspended,
    Completed(i64),
    Failed,
}

fn dag() -> impl Strategy<Value = Vec<Vec<usize>>> {
    (2usize..8).prop_flat_map(|n| {
        proptest::collection::vec(proptest::collection::vec(any::<bool>(), n), n).prop_map(
            move |edges| {
                (0..n)
                    .map(|i| (0..i).filter(|&j| edges[i][j]).collect())
                    .collect()
            },
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn random_operations_follow_the_table(
        deps in dag(),
        ops in proptest::collection::vec((0usize..8, 0usize..5, -50i64..50), 1..60),
    ) {
        let n = deps.len();
        let mut workflow = Workflow::new("random");
        for (i, ds) in deps.iter().enumerate() {
            let mut phase = Phase::new(format!("p{i}"), "P").output("x", TypeRef::Integer);
            for &d in ds {
                phase = phase.depends_on([format!("p{d}")]).input(format!("from_{d}"), format!("p{d}.x"));
            }
            workflow = workflow.with_phase(phase);
        }
        let mut run = WorkflowRun::new(Arc::new(workflow), "r", json!({}), json!({})).unwrap();
        let mut model: Vec<Model> = deps
            .iter()
            .map(|ds| if ds.is_empty() { Model::Ready } else { Model::Pending })
            .collect();
        for (target, op, value) in ops {
            let i = target % n;
            let name = format!("p{i}");
            let before = model[i].clone();
            match op {
                0 => {
                    let got = run.claim(&name);
                    match before {
                        Model::Ready => {
                            let ctx = got.expect("a ready phase whose dependencies completed claims");
                            // Every input is the output its upstream recorded.
                            for &d in &deps[i] {
                                let Model::Completed(x) = model[d] else { unreachable!() };
                                prop_assert_eq!(&ctx.input[&format!("from_{d}")], &json!(x));
                            }
                            model[i] = Model::Running;
                        }
                        Model::Pending => {
                            // RFC-0026: a suspended upstream is named as such.
                            let suspended = deps[i].iter().any(|&d| model[d] == Model::Suspended);
                            let expected = if suspended {
                                "UpstreamIntentSuspendedError"
                            } else {
                                "UnresolvableInputError"
                            };
                            prop_assert_eq!(got.unwrap_err().name(), expected);
                        }
                        _ => prop_assert_eq!(got.unwrap_err().name(), INVALID),
                    }
                }
                1 => {
                    let got = run.complete(&name, json!({ "x": value }));
                    if before == Model::Running {
                        prop_assert!(got.is_ok());
                        model[i] = Model::Completed(value);
                        for (j, ds) in deps.iter().enumerate() {
                            if model[j] == Model::Pending
                                && ds.iter().all(|&d| matches!(model[d], Model::Completed(_)))
                            {
                                model[j] = Model::Ready;
                            }
                        }
                    } else {
                        prop_assert_eq!(got.unwrap_err()[0].name(), INVALID);
                    }
                }
                2 => {
                    let got = run.fail(&name, phase_failed());
                    if matches!(before, Model::Completed(_) | Model::Failed) {
                        prop_assert_eq!(got.unwrap_err().name(), INVALID);
                    } else {
                        prop_assert!(got.is_ok());
                        model[i] = Model::Failed;
                    }
                }
                3 => {
                    let got = run.suspend(&name, suspension());
                    if before == Model::Running {
                        prop_assert!(got.is_ok());
                        model[i] = Model::Suspended;
                    } else {
                        prop_assert_eq!(got.unwrap_err().name(), INVALID);
                    }
                }
                _ => {
                    let got = run.resume(&name);
                    if before == Model::Suspended {
                        prop_assert!(got.is_ok());
                        model[i] = Model::Running;
                    } else {
                        prop_assert_eq!(got.unwrap_err().name(), INVALID);
                    }
                }
            }
            // The run agrees with the model everywhere, after every operation.
            for (j, expected) in model.iter().enumerate() {
                let state = run.state(&format!("p{j}")).unwrap();
                let agrees = matches!(
                    (expected, state),
                    (Model::Pending, TaskState::Pending)
                        | (Model::Ready, TaskState::Ready)
                        | (Model::Running, TaskState::Running)
                        | (Model::Suspended, TaskState::SuspendedAwaitingInput { .. })
                        | (Model::Completed(_), TaskState::Completed)
                        | (Model::Failed, TaskState::Failed)
                );
                prop_assert!(agrees, "p{} is {:?}, the model says {:?}", j, state, expected);
                if let Model::Completed(x) = expected {
                    prop_assert_eq!(&run.output(&format!("p{j}")).unwrap()["x"], &json!(x));
                }
            }
            let ready: Vec<String> = (0..n).filter(|&j| model[j] == Model::Ready).map(|j| format!("p{j}")).collect();
            prop_assert_eq!(run.ready_phases(), ready);
            // Only the RFC's errors are events.
            for event in run.events() {
                prop_assert!(event["error"] != INVALID && event["error"] != "UnknownPhaseError");
            }
        }
    }
}

/// What a run says about itself: its workflow, each phase's task id, and a context's `Debug`
/// (which shows how many outputs it can see, not the outputs).
#[test]
fn a_run_shows_its_workflow_task_ids_and_contexts() {
    let mut run = two_phases();
    assert_eq!(run.workflow().name, "states");
    assert_eq!(run.task_id("a"), Some("task_r_a"));
    assert_eq!(run.task_id("b"), Some("task_r_b"));
    assert_eq!(run.task_id("nope"), None);
    let ctx = run.claim("a").unwrap();
    assert_eq!(ctx.task_id, "task_r_a");
    let shown = format!("{ctx:?}");
    assert!(
        shown.contains("siblings: Siblings { phases: 2, .. }"),
        "{shown}"
    );
}
