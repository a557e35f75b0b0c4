//! RFC-0024 workflow I/O contracts: parse-time validation, the run state machine, the named
//! error payloads, the executor (concurrency, retries, typed wiring) and the command line.

use std::sync::Arc;
use std::time::Duration;

use agentio_core::{AgentContext, AgentCore, AgentError, AgentInput, AgentOutput};
use agentio_workflow::{
    Executor, Phase, RunError, Suspension, TaskState, TypeRef, ValidationError, Workflow,
    WorkflowRun,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const COMPLIANCE: &str = include_str!("../../../examples/workflows/quarterly-compliance.yaml");

fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

fn compliance() -> Arc<Workflow> {
    Arc::new(Workflow::from_yaml(COMPLIANCE).unwrap())
}

/// A run `r` of the document `doc`, with an empty trigger and initial state.
fn run_of_yaml(doc: &str) -> WorkflowRun {
    WorkflowRun::new(
        Arc::new(Workflow::from_yaml(doc).unwrap()),
        "r",
        json!({}),
        json!({}),
    )
    .unwrap()
}

fn run_of(workflow: Arc<Workflow>) -> WorkflowRun {
    WorkflowRun::new(
        workflow,
        "r1",
        json!({ "quarter": "Q3" }),
        json!({ "source": "erp" }),
    )
    .unwrap()
}

fn errors(result: Result<Workflow, Vec<ValidationError>>) -> Vec<Value> {
    result
        .unwrap_err()
        .iter()
        .map(ValidationError::to_json)
        .collect()
}

// ---- §8: parse-time validation ------------------------------------------------------------

const RESEARCH: &str = "\
workflow:
  research:
    title: Research
    assign: agent
    outputs:
      findings: array
      sources: array
  analysis:
    title: Analysis
    assign: agent
    depends_on: [research]
    inputs:
      research_findings: research.findings
    outputs:
      insights: string
openintent: \"1.0\"
info:
  name: test
";

#[test]
fn a_valid_document_loads_with_its_declarations() {
    let workflow = Workflow::from_yaml(RESEARCH).unwrap();
    let analysis = workflow.phase("analysis").unwrap();
    assert_eq!(analysis.inputs[0].expression, "research.findings");
    assert_eq!(analysis.outputs.as_ref().unwrap()[0].ty, TypeRef::String);
    let compliance = compliance();
    assert_eq!(compliance.name, "Quarterly Compliance Report");
    assert_eq!(compliance.types.len(), 3);
    assert_eq!(compliance.levels().unwrap().len(), 3);
}

#[test]
fn s8_1_a_mapping_to_an_unknown_phase_is_an_input_wiring_error() {
    let doc = RESEARCH.replace("research.findings", "reserch.findings");
    let errs = errors(Workflow::from_yaml(&doc));
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0]["error"], "InputWiringError");
    assert_eq!(errs[0]["phase_name"], "analysis");
    assert_eq!(errs[0]["invalid_refs"], json!(["reserch.findings"]));
    assert_eq!(
        errs[0]["suggestion"],
        "phase `reserch` does not exist; did you mean `research`?"
    );
    assert_eq!(
        (errs[0]["line"].clone(), errs[0]["column"].clone()),
        (json!(13), json!(26))
    );
}

#[test]
fn s8_2_a_mapping_from_a_phase_outside_depends_on_is_an_input_wiring_error() {
    let doc = RESEARCH.replace("    depends_on: [research]\n", "");
    let errs = errors(Workflow::from_yaml(&doc));
    assert_eq!(errs[0]["error"], "InputWiringError");
    assert_eq!(
        errs[0]["suggestion"],
        "`research` is not in depends_on; add it: depends_on: [research]"
    );
}

#[test]
fn s8_3_a_key_the_upstream_does_not_declare_is_an_input_wiring_error() {
    let doc = RESEARCH.replace("research.findings", "research.finding");
    let errs = errors(Workflow::from_yaml(&doc));
    assert_eq!(
        errs[0]["suggestion"],
        "phase `research` does not declare output `finding`; did you mean `research.findings`? it declares 'findings' and 'sources'"
    );
    // §8.3: an upstream without `outputs` is not checked (incremental adoption).
    let doc = RESEARCH
        .replace(
            "    outputs:\n      findings: array\n      sources: array\n",
            "",
        )
        .replace("research.findings", "research.anything");
    assert!(Workflow::from_yaml(&doc).is_ok());
}

#[test]
fn s8_4_malformed_mappings_are_input_wiring_errors() {
    for bad in [
        "findings",
        "$env.HOME",
        "research.",
        "research.a.b",
        "\"$trigger.\"",
    ] {
        let doc = RESEARCH.replace("research.findings", bad);
        let errs = errors(Workflow::from_yaml(&doc));
        assert_eq!(errs[0]["error"], "InputWiringError", "{bad}");
        assert!(
            errs[0]["suggestion"]
                .as_str()
                .unwrap()
                .contains("write `phase_name.key`"),
            "{bad}: {}",
            errs[0]
        );
    }
}

#[test]
fn every_problem_of_a_document_is_reported_at_once_with_its_position() {
    let doc = "\
types:
  Finding:
    source: strng
workflow:
  a:
    title: A
    assign: agent
    depends_on: [c]
    outputs:
      x: Findng
  b:
    title: B
    assign: agent
    depends_on: [a, zz]
    inputs:
      one: a.y
      two: nowhere.x
      three: bad
  c:
    title: C
    assign: agent
    depends_on: [a]
openintent: \"1.0\"
info:
  name: test
";
    let errs = errors(Workflow::from_yaml(doc));
    let summary: Vec<(String, u64, u64)> = errs
        .iter()
        .map(|e| {
            (
                e["error"].as_str().unwrap().to_owned(),
                e["line"].as_u64().unwrap(),
                e["column"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("TypeDeclarationError".to_owned(), 3, 13),
            ("DependencyCycleError".to_owned(), 5, 3),
            ("TypeDeclarationError".to_owned(), 10, 10),
            ("UnknownDependencyError".to_owned(), 14, 21),
            ("InputWiringError".to_owned(), 16, 12),
        ]
    );
    let wiring = &errs[4];
    assert_eq!(wiring["invalid_refs"], json!(["a.y", "nowhere.x", "bad"]));
    assert_eq!(errs[0]["suggestion"], "did you mean `string`?");
    assert_eq!(errs[1]["cycle"], json!(["a", "c", "a"]));
    assert_eq!(errs[2]["suggestion"], "did you mean `Finding`?");
    assert_eq!(
        errs[3]["suggestion"],
        "remove `zz` from depends_on, or add a phase with that name"
    );
}

#[test]
fn yaml_syntax_errors_and_wrong_shapes_are_document_errors_with_positions() {
    let errs = errors(Workflow::from_yaml("workflow:\n  a: [unclosed\n"));
    assert_eq!(errs[0]["error"], "DocumentError");
    assert!(
        errs[0]["message"]
            .as_str()
            .unwrap()
            .contains("not valid YAML")
    );
    let errs = errors(Workflow::from_yaml("- just\n- a list\n"));
    assert_eq!(errs[0]["error"], "DocumentError");
    let errs = errors(Workflow::from_yaml(
        "openintent: \"1.0\"\ninfo:\n  name: t\nworkflow:\n  a:\n    title: A\n    assign: x\n    inputs: [x]\n",
    ));
    assert_eq!(
        (errs[0]["line"].clone(), errs[0]["column"].clone()),
        (json!(8), json!(13))
    );
}

#[test]
fn the_same_model_can_be_built_in_rust() {
    let built = Workflow::new("Research")
        .with_phase(
            Phase::new("research", "Research")
                .output("findings", TypeRef::Array(None))
                .output("sources", TypeRef::Array(None)),
        )
        .with_phase(
            Phase::new("analysis", "Analysis")
                .depends_on(["research"])
                .input("research_findings", "research.findings")
                .output("insights", TypeRef::String),
        );
    assert!(built.validate().is_empty());
    let loaded = Workflow::from_yaml(RESEARCH).unwrap();
    // Same phases, inputs and outputs (positions aside).
    for (a, b) in built.phases.iter().zip(&loaded.phases) {
        assert_eq!(a.name, b.name);
        assert_eq!(
            a.inputs
                .iter()
                .map(|i| (&i.key, &i.source))
                .collect::<Vec<_>>(),
            b.inputs
                .iter()
                .map(|i| (&i.key, &i.source))
                .collect::<Vec<_>>()
        );
        assert_eq!(
            a.outputs
                .iter()
                .flatten()
                .map(|o| (&o.key, &o.ty, o.required))
                .collect::<Vec<_>>(),
            b.outputs
                .iter()
                .flatten()
                .map(|o| (&o.key, &o.ty, o.required))
                .collect::<Vec<_>>()
        );
    }
    let miswired = built.with_phase(Phase::new("report", "Report").input("x", "analysis.insights"));
    assert_eq!(
        miswired.validate()[0].to_json()["error"],
        "InputWiringError"
    );
}

#[test]
fn output_declarations_take_every_form_of_section_1() {
    let doc = "\
types:
  Finding:
    source: string
    confidence: number
workflow:
  research:
    title: Research
    assign: agent
    outputs:
      sources: array
      findings: array<Finding>
      top: Finding
      warnings:
        type: array
        required: false
openintent: \"1.0\"
info:
  name: test
";
    let workflow = Workflow::from_yaml(doc).unwrap();
    let outputs = workflow.phase("research").unwrap().outputs.clone().unwrap();
    let forms: Vec<(String, String, bool)> = outputs
        .iter()
        .map(|o| (o.key.clone(), o.ty.to_string(), o.required))
        .collect();
    assert_eq!(
        forms,
        [
            ("sources".into(), "array".into(), true),
            ("findings".into(), "array<Finding>".into(), true),
            ("top".into(), "Finding".into(), true),
            ("warnings".into(), "array".into(), false),
        ]
    );
}

// ---- §3 and §4: the run --------------------------------------------------------------------

#[test]
fn s3_1_claims_wait_for_dependencies_and_resolve_static_inputs() {
    let mut run = run_of(compliance());
    assert_eq!(run.ready_phases(), ["fetch_financials", "fetch_hr_data"]);
    // A phase whose dependencies are not complete is not claimable.
    let err = run.claim("run_analysis").unwrap_err();
    assert_eq!(err.name(), "UnresolvableInputError");
    assert_eq!(run.state("run_analysis"), Some(&TaskState::Pending));
    let ctx = run.claim("fetch_financials").unwrap();
    assert_eq!(run.state("fetch_financials"), Some(&TaskState::Running));
    // §3.2 and §5.1: exactly the declared keys.
    assert_eq!(
        Value::Object(ctx.input),
        json!({ "quarter": "Q3", "source": "erp" })
    );
}

#[test]
fn s3_1_3_a_null_static_input_is_unresolved_and_the_task_stays_ready() {
    let mut run =
        WorkflowRun::new(compliance(), "r1", json!({ "quarter": null }), json!({})).unwrap();
    let err = run.claim("fetch_financials").unwrap_err();
    let RunError::UnresolvableInputError {
        unresolvable_refs, ..
    } = &err
    else {
        panic!("{err}")
    };
    assert_eq!(
        unresolvable_refs,
        &["$trigger.quarter", "$initial_state.source"]
    );
    assert_eq!(run.state("fetch_financials"), Some(&TaskState::Ready));
    assert_eq!(run.events()[0]["error"], "UnresolvableInputError");
}

#[test]
fn s4_3_unresolvable_input_error_serializes_as_the_rfc_example() {
    let workflow = Arc::new(Workflow::from_yaml(RESEARCH).unwrap());
    let mut run = WorkflowRun::new(workflow, "01HABC", json!({}), json!({})).unwrap();
    run.claim("research").unwrap();
    // The upstream declares no such constraint at run time: it completes without `findings`
    // only if its outputs were undeclared; simulate the RFC's case with an optional output.
    let mut workflow = Workflow::from_yaml(RESEARCH).unwrap();
    workflow.phases[0].outputs.as_mut().unwrap()[0].required = false;
    let mut run = WorkflowRun::new(Arc::new(workflow), "01HABC", json!({}), json!({})).unwrap();
    run.claim("research").unwrap();
    run.complete("research", json!({ "sources": [] })).unwrap();
    let err = run.claim("analysis").unwrap_err();
    assert_eq!(
        err.to_json(),
        json!({
            "error": "UnresolvableInputError",
            "task_id": "task_01HABC_analysis",
            "phase_name": "analysis",
            "unresolvable_refs": ["research.findings"],
            "message": "Task claim rejected: upstream phase 'research' did not record output key 'findings'"
        })
    );
}

#[test]
fn s4_1_missing_output_error_serializes_as_the_rfc_example_and_the_task_stays_running() {
    let mut run = WorkflowRun::new(
        compliance(),
        "01HXYZ",
        json!({ "quarter": "Q3" }),
        json!({ "source": "erp" }),
    )
    .unwrap();
    run.claim("fetch_financials").unwrap();
    let errs = run
        .complete("fetch_financials", json!({ "revenue": 10 }))
        .unwrap_err();
    assert_eq!(
        errs[0].to_json(),
        json!({
            "error": "MissingOutputError",
            "task_id": "task_01HXYZ_fetch_financials",
            "phase_name": "fetch_financials",
            "missing_keys": ["expenses"],
            "message": "Task completion rejected: declared output key 'expenses' was not present in agent return value"
        })
    );
    assert_eq!(run.state("fetch_financials"), Some(&TaskState::Running));
    // §3.3.5: the agent may retry with a corrected output.
    run.complete(
        "fetch_financials",
        json!({ "revenue": 10, "expenses": 4.5 }),
    )
    .unwrap();
    assert_eq!(run.state("fetch_financials"), Some(&TaskState::Completed));
}

#[test]
fn s3_3_every_missing_key_is_listed() {
    let mut run = run_of(compliance());
    run.claim("fetch_hr_data").unwrap();
    let errs = run.complete("fetch_hr_data", json!({})).unwrap_err();
    let RunError::MissingOutputError {
        missing_keys,
        message,
        ..
    } = &errs[0]
    else {
        panic!()
    };
    assert_eq!(missing_keys, &["headcount", "attrition_rate"]);
    assert_eq!(
        message,
        "Task completion rejected: declared output keys 'headcount' and 'attrition_rate' were not present in agent return value"
    );
}

#[test]
fn s4_2_type_validation_is_structural_and_never_coerces() {
    let mut run = run_of(compliance());
    run.claim("fetch_hr_data").unwrap();
    let errs = run
        .complete(
            "fetch_hr_data",
            json!({ "headcount": "212", "attrition_rate": true }),
        )
        .unwrap_err();
    let payloads: Vec<Value> = errs.iter().map(RunError::to_json).collect();
    assert_eq!(
        payloads,
        [
            json!({ "error": "OutputTypeMismatchError", "task_id": "task_r1_fetch_hr_data", "phase_name": "fetch_hr_data",
                    "key": "headcount", "expected_type": "number", "actual_type": "string",
                    "message": "Task completion rejected: output key 'headcount' is string, declared number" }),
            json!({ "error": "OutputTypeMismatchError", "task_id": "task_r1_fetch_hr_data", "phase_name": "fetch_hr_data",
                    "key": "attrition_rate", "expected_type": "number", "actual_type": "boolean",
                    "message": "Task completion rejected: output key 'attrition_rate' is boolean, declared number" }),
        ]
    );
    // An integer passes `number`.
    run.complete(
        "fetch_hr_data",
        json!({ "headcount": 212, "attrition_rate": 0.2 }),
    )
    .unwrap();
    assert_eq!(
        run.output("fetch_hr_data").unwrap()["headcount"],
        json!(212)
    );
}

#[test]
fn named_types_are_checked_field_by_field_and_arrays_element_by_element() {
    let doc = "\
types:
  Finding:
    source: string
    evidence: Evidence
  Evidence:
    score: number
workflow:
  research:
    title: Research
    assign: agent
    outputs:
      findings: array<Finding>
openintent: \"1.0\"
info:
  name: test
";
    let mut run = run_of_yaml(doc);
    run.claim("research").unwrap();
    let bad = json!({ "findings": [{ "source": "a", "evidence": { "score": 1 } }, { "source": "b", "evidence": { "score": "high" } }] });
    let errs = run.complete("research", bad).unwrap_err();
    let RunError::OutputTypeMismatchError {
        key,
        expected_type,
        actual_type,
        message,
        ..
    } = &errs[0]
    else {
        panic!()
    };
    assert_eq!(
        (key.as_str(), expected_type.as_str(), actual_type.as_str()),
        ("findings", "array<Finding>", "array")
    );
    assert!(
        message.ends_with("at '/1/evidence/score' (expected number, got string)"),
        "{message}"
    );
    let good = json!({ "findings": [{ "source": "a", "evidence": { "score": 0.5 }, "extra": 1 }] });
    run.complete("research", good).unwrap();
}

#[test]
fn s9_extra_keys_are_recorded_optional_outputs_may_be_absent_and_undeclared_phases_are_not_checked()
{
    let doc = "\
workflow:
  a:
    title: A
    assign: agent
    outputs:
      summary: string
      warnings:
        type: array
        required: false
  b:
    title: B
    assign: agent
openintent: \"1.0\"
info:
  name: test
";
    let mut run = run_of_yaml(doc);
    run.claim("a").unwrap();
    run.complete("a", json!({ "summary": "s", "debug": { "took_ms": 3 } }))
        .unwrap();
    assert_eq!(run.output("a").unwrap()["debug"], json!({ "took_ms": 3 }));
    run.claim("b").unwrap();
    // Undeclared: any object is accepted unchecked; a value that is not an object is refused
    // (an agent returns a dict of output keys; nothing is silently wrapped).
    let errs = run.complete("b", json!("anything at all")).unwrap_err();
    assert_eq!(
        errs[0].to_json()["message"],
        "Task completion rejected: the output must be an object of output keys, not string"
    );
    assert_eq!(run.state("b"), Some(&TaskState::Running));
    run.complete("b", json!({ "anything": [1, null, "x"] }))
        .unwrap();
    assert_eq!(run.state("b"), Some(&TaskState::Completed));
    assert_eq!(run.output("b").unwrap()["anything"], json!([1, null, "x"]));
}

#[test]
fn s3_4_completion_unblocks_downstream_phases_when_all_their_dependencies_are_done() {
    let mut run = run_of(compliance());
    run.claim("fetch_financials").unwrap();
    run.complete("fetch_financials", json!({ "revenue": 1, "expenses": 2 }))
        .unwrap();
    assert_eq!(run.state("run_analysis"), Some(&TaskState::Pending));
    run.claim("fetch_hr_data").unwrap();
    run.complete(
        "fetch_hr_data",
        json!({ "headcount": 3, "attrition_rate": 0.1 }),
    )
    .unwrap();
    assert_eq!(run.state("run_analysis"), Some(&TaskState::Ready));
    let ctx = run.claim("run_analysis").unwrap();
    assert_eq!(
        Value::Object(ctx.input.clone()),
        json!({ "fin_revenue": 1, "fin_expenses": 2, "hr_headcount": 3, "hr_attrition": 0.1 })
    );
    // §5.2: the escape hatch sees recorded sibling outputs.
    assert_eq!(
        ctx.get_sibling_output("fetch_hr_data").unwrap()["headcount"],
        json!(3)
    );
    assert!(ctx.get_sibling_output("generate_report").is_none());
}

#[test]
fn a_phase_without_inputs_receives_an_empty_input() {
    let mut run = WorkflowRun::new(
        Arc::new(Workflow::from_yaml(RESEARCH).unwrap()),
        "r",
        json!({}),
        json!({}),
    )
    .unwrap();
    assert!(run.claim("research").unwrap().input.is_empty());
}

#[test]
fn rfc_0026_a_suspended_upstream_rejects_the_claim_and_shows_in_progress() {
    let mut run = run_of(compliance());
    run.claim("fetch_financials").unwrap();
    run.complete("fetch_financials", json!({ "revenue": 1, "expenses": 2 }))
        .unwrap();
    run.claim("fetch_hr_data").unwrap();
    run.suspend(
        "fetch_hr_data",
        Suspension {
            intent_id: "intent_01ABC".into(),
            suspended_since: "2026-03-24T10:00:00Z".into(),
            expires_at: Some("2026-03-25T10:00:00Z".into()),
            expected_resume_at: Some("2026-03-24T13:00:00Z".into()),
        },
    )
    .unwrap();
    let err = run.claim("run_analysis").unwrap_err();
    assert_eq!(
        err.to_json(),
        json!({
            "error": "UpstreamIntentSuspendedError",
            "task_id": "task_r1_run_analysis",
            "phase_name": "run_analysis",
            "suspended_intent_id": "intent_01ABC",
            "expected_resume_at": "2026-03-24T13:00:00Z",
            "message": "Task claim deferred: upstream phase 'fetch_hr_data' is suspended awaiting input on intent 'intent_01ABC' (expected to resume at 2026-03-24T13:00:00Z)"
        })
    );
    let progress = serde_json::to_value(run.progress()).unwrap();
    assert_eq!(
        progress["suspended_phases"],
        json!([{ "phase_name": "fetch_hr_data", "intent_id": "intent_01ABC",
                 "suspended_since": "2026-03-24T10:00:00Z", "expires_at": "2026-03-25T10:00:00Z",
                 "expected_resume_at": "2026-03-24T13:00:00Z" }])
    );
    run.resume("fetch_hr_data").unwrap();
    run.complete(
        "fetch_hr_data",
        json!({ "headcount": 3, "attrition_rate": 0.1 }),
    )
    .unwrap();
    assert!(run.claim("run_analysis").is_ok());
}

// ---- The executor ---------------------------------------------------------------------------

/// A core that sleeps 100 ms and reports how many inputs it received.
struct Sleeper;

impl AgentCore for Sleeper {
    type Input = serde_json::Map<String, Value>;
    type Output = Value;

    fn core_type(&self) -> &str {
        "sleeper"
    }

    async fn run_turn(
        &mut self,
        input: serde_json::Map<String, Value>,
        _: &mut AgentContext,
    ) -> Result<Value, AgentError> {
        tokio::time::sleep(Duration::from_millis(100)).await;
        Ok(json!({ "x": input.len() }))
    }
}

#[test]
fn a_wide_dag_of_200_phases_validates_and_runs_its_levels_concurrently() {
    // 1 root, 198 independent middle phases, 1 sink: three levels.
    let mut workflow = Workflow::new("wide").with_phase(
        Phase::new("root", "Root")
            .assign("sleeper")
            .output("x", TypeRef::Integer),
    );
    let mut middles = Vec::new();
    for i in 0..198 {
        let name = format!("p{i:03}");
        workflow = workflow.with_phase(
            Phase::new(&name, "Middle")
                .assign("sleeper")
                .depends_on(["root"])
                .input("x", "root.x")
                .output("x", TypeRef::Integer),
        );
        middles.push(name);
    }
    let mut sink = Phase::new("sink", "Sink")
        .assign("sleeper")
        .depends_on(middles.iter().cloned());
    for name in &middles {
        sink = sink.input(format!("in_{name}"), format!("{name}.x"));
    }
    workflow = workflow.with_phase(sink.output("x", TypeRef::Integer));
    assert_eq!(workflow.phases.len(), 200);
    assert!(workflow.validate().is_empty());
    assert_eq!(workflow.levels().unwrap().len(), 3);

    // Sleeping cores, a fresh one per task.
    let executor = Executor::new(workflow).bind_core_factory("sleeper", || Sleeper);
    let runtime = paused_runtime();
    let (outcome, elapsed) = runtime.block_on(async {
        let start = tokio::time::Instant::now();
        let outcome = executor.run("wide", json!({}), json!({})).await.unwrap();
        (outcome, start.elapsed())
    });
    assert!(outcome.succeeded(), "{:?}", outcome.progress);
    assert_eq!(outcome.outputs["sink"]["x"], json!(198));
    // Three levels of 100 ms each: the widest level costs one sleep, not 198.
    assert_eq!(elapsed, Duration::from_millis(300));
}

#[test]
fn the_executor_hands_a_rejected_completion_back_to_its_agent() {
    let workflow = Workflow::from_yaml(COMPLIANCE).unwrap();
    let executor = Executor::new(workflow)
        .bind_fn("data-agent", |ctx| async move {
            if ctx.phase_name == "fetch_financials" {
                // First answer lacks `expenses`; the corrected one has it.
                if ctx.rejections.is_empty() {
                    return Ok(json!({ "revenue": 10 }));
                }
                return Ok(json!({ "revenue": 10, "expenses": 4 }));
            }
            Ok(json!({ "headcount": 3, "attrition_rate": 0.1 }))
        })
        .bind_fn("analytics-agent", |_| async move {
            Ok(json!({ "findings": [], "risk_level": "low", "violations_found": false }))
        })
        .bind_fn("reporting-agent", |_| async move {
            Ok(json!({ "report_url": "u", "report_summary": "s" }))
        });
    let outcome = paused_runtime()
        .block_on(executor.run("r", json!({ "quarter": "Q3" }), json!({ "source": "erp" })))
        .unwrap();
    assert!(outcome.succeeded());
    assert_eq!(outcome.events.len(), 1);
    assert_eq!(outcome.events[0]["error"], "MissingOutputError");
}

#[test]
fn a_failing_agent_fails_its_phase_and_its_dependents_never_run() {
    let workflow = Workflow::from_yaml(COMPLIANCE).unwrap();
    let executor = Executor::new(workflow)
        .bind_fn("data-agent", |_| async move {
            Err(AgentError::new(
                agentio_core::ErrorCode::UpstreamError,
                "ledger offline",
            ))
        })
        .bind_fn("analytics-agent", |_| async move { panic!("must not run") })
        .bind_fn("reporting-agent", |_| async move { panic!("must not run") });
    let outcome = paused_runtime()
        .block_on(executor.run("r", json!({ "quarter": "Q3" }), json!({ "source": "erp" })))
        .unwrap();
    assert!(!outcome.succeeded());
    assert_eq!(
        outcome.progress.failed,
        ["fetch_financials", "fetch_hr_data"]
    );
    assert_eq!(
        outcome.progress.pending,
        ["run_analysis", "generate_report"]
    );
    assert_eq!(outcome.events[0]["error"], "PhaseFailedError");
    assert_eq!(outcome.events[0]["cause"]["code"], "upstream_error");
}

#[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
struct AnalysisIn {
    fin_revenue: f64,
    fin_expenses: f64,
    hr_headcount: u32,
    hr_attrition: f64,
    region: String,
}

#[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
struct AnalysisOut {
    findings: Vec<String>,
    risk_level: Option<String>,
}

struct Analysis;

impl AgentCore for Analysis {
    type Input = AnalysisIn;
    type Output = AnalysisOut;

    fn core_type(&self) -> &str {
        "analysis"
    }

    async fn run_turn(
        &mut self,
        _: AnalysisIn,
        _: &mut AgentContext,
    ) -> Result<AnalysisOut, AgentError> {
        Ok(AnalysisOut {
            findings: Vec::new(),
            risk_level: None,
        })
    }
}

#[test]
fn typed_wiring_mistakes_are_found_before_anything_runs() {
    let workflow = Workflow::from_yaml(COMPLIANCE).unwrap();
    let executor = Executor::new(workflow)
        .bind_fn("data-agent", |_| async move { Ok(json!({})) })
        .bind_core("analytics-agent", Analysis)
        .bind_fn("reporting-agent", |_| async move { Ok(json!({})) });
    let problems: Vec<Value> = executor
        .check()
        .iter()
        .map(ValidationError::to_json)
        .collect();
    let found: Vec<(&str, &str)> = problems
        .iter()
        .map(|p| {
            (
                p["error"].as_str().unwrap(),
                p["key"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("TypedWiringError", "region"),
            ("TypedWiringError", "hr_headcount"),
            ("TypedWiringError", "risk_level"),
            ("TypedWiringError", "violations_found"),
        ]
    );
    assert!(
        problems[0]["suggestion"]
            .as_str()
            .unwrap()
            .contains("add `region: <phase>.<key>`")
    );
    assert!(
        problems[1]["expected"]
            .as_str()
            .unwrap()
            .contains("declare the output as `integer`")
    );
    assert!(
        problems[2]["actual"]
            .as_str()
            .unwrap()
            .contains("may produce `null`")
    );
    assert_eq!(problems[3]["actual"], "an output type without that field");
    // And nothing runs.
    let result = paused_runtime().block_on(executor.run(
        "r",
        json!({ "quarter": "Q3" }),
        json!({ "source": "erp" }),
    ));
    assert_eq!(result.unwrap_err().len(), 4);
}

#[test]
fn tools_bound_to_phases_run_under_their_contracts() {
    use agentio_tools::{ToolError, ToolRegistry, tool};

    #[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
    struct Quarter {
        quarter: String,
    }

    #[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
    struct Hr {
        headcount: f64,
        attrition_rate: f64,
    }

    /// Reads HR data.
    #[tool(id = "hr.fetch")]
    async fn hr_fetch(input: Quarter) -> Result<Hr, ToolError> {
        Ok(Hr {
            headcount: if input.quarter == "Q3" { 10.0 } else { 0.0 },
            attrition_rate: 0.1,
        })
    }

    let mut registry = ToolRegistry::new();
    registry.register(HrFetchTool).unwrap();
    let workflow = Workflow::new("hr").with_phase(
        Phase::new("fetch_hr_data", "Fetch HR")
            .assign("hr-tool")
            .input("quarter", "$trigger.quarter")
            .output("headcount", TypeRef::Number)
            .output("attrition_rate", TypeRef::Number),
    );
    let executor = Executor::new(workflow).bind_tool("hr-tool", Arc::new(registry), "hr.fetch");
    assert!(executor.check().is_empty());
    let outcome = paused_runtime()
        .block_on(executor.run("r", json!({ "quarter": "Q3" }), json!({})))
        .unwrap();
    assert_eq!(outcome.outputs["fetch_hr_data"]["headcount"], json!(10.0));
}

/// A core made fresh per task is typed as a bound core is: the same wiring mistakes.
#[test]
fn typed_wiring_is_checked_for_a_core_factory_too() {
    let problems = |executor: Executor| -> Vec<(String, String)> {
        executor
            .check()
            .iter()
            .map(ValidationError::to_json)
            .map(|p| (p["error"].to_string(), p["key"].to_string()))
            .collect()
    };
    let bind = |executor: Executor| {
        executor
            .bind_fn("data-agent", |_| async move { Ok(json!({})) })
            .bind_fn("reporting-agent", |_| async move { Ok(json!({})) })
    };
    let workflow = Workflow::from_yaml(COMPLIANCE).unwrap();
    let core =
        problems(bind(Executor::new(workflow.clone())).bind_core("analytics-agent", Analysis));
    let factory =
        problems(bind(Executor::new(workflow)).bind_core_factory("analytics-agent", || Analysis));
    assert_eq!(core.len(), 4);
    assert_eq!(factory, core);
}

mod typed_tool_phase {
    use super::*;
    use agentio_tools::{ToolContext, ToolError, ToolRegistry, TypedTool};

    #[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
    #[serde(deny_unknown_fields)]
    struct Quarter {
        quarter: String,
    }

    #[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
    struct Seen {
        run_id: String,
    }

    /// Says which run it was called in.
    #[agentio_tools::tool(id = "who.ran")]
    async fn who_ran(_input: Quarter, ctx: &ToolContext) -> Result<Seen, ToolError> {
        Ok(Seen {
            run_id: ctx.run_id().to_owned(),
        })
    }

    fn executor(phase: Phase) -> Executor {
        let mut registry = ToolRegistry::new();
        registry.register(WhoRanTool).unwrap();
        Executor::new(Workflow::new("w").with_phase(phase)).bind_tool(
            "tool",
            Arc::new(registry),
            WhoRanTool::ID,
        )
    }

    /// A tool's schemas decide its phase's wiring: its input type is closed, so a key it has no
    /// field for is refused, and a declared output its type lacks is named.
    #[test]
    fn a_tools_schemas_decide_the_wiring_of_its_phase() {
        let wrong = executor(
            Phase::new("p", "P")
                .assign("tool")
                .input("quarter", "$trigger.quarter")
                .input("region", "$trigger.region")
                .output("total", TypeRef::Number),
        );
        let problems: Vec<Value> = wrong.check().iter().map(ValidationError::to_json).collect();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert_eq!(problems[0]["key"], "region");
        assert_eq!(problems[0]["expected"], "no such field");
        assert_eq!(problems[1]["key"], "total");
        assert_eq!(problems[1]["actual"], "an output type without that field");
    }

    /// The tool is called under the task's id as its run id.
    #[test]
    fn a_tool_phase_runs_under_its_task_id() {
        let right = executor(
            Phase::new("p", "P")
                .assign("tool")
                .input("quarter", "$trigger.quarter")
                .output("run_id", TypeRef::String),
        );
        assert!(right.check().is_empty());
        let outcome = paused_runtime()
            .block_on(right.run("r1", json!({ "quarter": "Q3" }), json!({})))
            .unwrap();
        assert_eq!(outcome.outputs["p"]["run_id"], "task_r1_p");
    }
}

/// A rejected completion is handed back until the attempts run out; then the phase fails,
/// saying how many times its output was rejected.
#[test]
fn a_phase_fails_when_its_completion_attempts_run_out() {
    use std::sync::atomic::{AtomicU32, Ordering};
    let calls = Arc::new(AtomicU32::new(0));
    let counted = calls.clone();
    let workflow = Workflow::new("w").with_phase(
        Phase::new("p", "P")
            .assign("x")
            .output("n", TypeRef::Integer),
    );
    let executor = Executor::new(workflow)
        .with_max_completion_attempts(3)
        .bind_fn("x", move |_| {
            counted.fetch_add(1, Ordering::SeqCst);
            async move { Ok(json!({ "n": "not a number" })) }
        });
    let outcome = paused_runtime()
        .block_on(executor.run("r", json!({}), json!({})))
        .unwrap();
    assert!(!outcome.succeeded());
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    let failed = outcome.events.last().unwrap();
    assert_eq!(failed["error"], "PhaseFailedError");
    assert_eq!(
        failed["message"],
        "phase 'p' failed: its output was rejected 3 time(s)"
    );
}

/// What an executor shows of itself.
#[test]
fn an_executor_shows_its_workflow_and_bindings() {
    let workflow = Workflow::new("w").with_phase(Phase::new("p", "P").assign("x"));
    let executor = Executor::new(workflow)
        .bind_fn("x", |_| async { Ok(json!({})) })
        .with_max_completion_attempts(0);
    assert_eq!(executor.workflow().name, "w");
    assert_eq!(executor.workflow().phases.len(), 1);
    assert_eq!(
        format!("{executor:?}"),
        r#"Executor { workflow: "w", phases: 1, assigned: ["x"], bound_phases: [], max_completion_attempts: 1, progress: false }"#
    );
}

#[test]
fn one_bound_core_instance_runs_its_turns_one_at_a_time() {
    // The contrast that makes the factory necessary: a single instance serializes its turns.
    let workflow = Workflow::new("pair")
        .with_phase(
            Phase::new("a", "A")
                .assign("sleeper")
                .output("x", TypeRef::Integer),
        )
        .with_phase(
            Phase::new("b", "B")
                .assign("sleeper")
                .output("x", TypeRef::Integer),
        );
    let shared = Executor::new(workflow.clone()).bind_core("sleeper", Sleeper);
    let fresh = Executor::new(workflow.clone()).bind_core_factory("sleeper", || Sleeper);
    let erased = Executor::new(workflow).bind_erased_core("sleeper", Box::new(Sleeper));
    let elapsed = |executor: Executor| {
        paused_runtime().block_on(async move {
            let start = tokio::time::Instant::now();
            assert!(
                executor
                    .run("r", json!({}), json!({}))
                    .await
                    .unwrap()
                    .succeeded()
            );
            start.elapsed()
        })
    };
    assert_eq!(elapsed(shared), Duration::from_millis(200));
    assert_eq!(elapsed(fresh), Duration::from_millis(100));
    assert_eq!(elapsed(erased), Duration::from_millis(200));
}

#[test]
fn unbound_phases_are_reported_by_check() {
    let executor = Executor::new(Workflow::from_yaml(COMPLIANCE).unwrap());
    let problems = executor.check();
    assert_eq!(problems.len(), 4);
    assert!(
        problems[0]
            .message()
            .contains("no agent is bound to that name"),
        "{}",
        problems[0]
    );
}

// ---- The command line -----------------------------------------------------------------------

fn cli(args: &[&str]) -> (u8, String) {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let mut out = Vec::new();
    let code = agentio_workflow::cli::run_cli(&args, &mut out);
    (code, String::from_utf8(out).unwrap())
}

/// A path that is not a workflow file (a device that never ends, a directory) is one
/// `DocumentError` naming it, at once: nothing is read from it.
#[cfg(unix)]
#[test]
fn the_cli_refuses_a_device_or_a_directory_without_reading_it() {
    for (path, expected) in [
        ("/dev/zero", "/dev/zero: not a regular file"),
        ("/", "/: not a regular file"),
    ] {
        let (code, out) = cli(&["check", path]);
        assert_eq!(code, 1, "{out}");
        let lines: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 1, "{out}");
        assert_eq!(lines[0]["error"], "DocumentError");
        assert_eq!(lines[0]["message"], expected);
    }
}

#[test]
fn the_cli_checks_a_file_and_prints_one_json_object_per_problem() {
    // Removed on drop, also when an assertion fails.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        RESEARCH
            .replace("research.findings", "reserch.findings")
            .replace("[research]", "[research, nope]"),
    )
    .unwrap();
    let (code, out) = cli(&["check", bad.to_str().unwrap()]);
    assert_eq!(code, 1);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["error"], "UnknownDependencyError");
    assert_eq!(lines[1]["error"], "InputWiringError");

    let good = dir.path().join("good.yaml");
    std::fs::write(&good, COMPLIANCE).unwrap();
    let (code, out) = cli(&["check", good.to_str().unwrap()]);
    assert_eq!(code, 0);
    let summary: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        summary,
        json!({ "ok": true, "workflow": "Quarterly Compliance Report", "phases": 4, "levels": 3 })
    );

    let (code, out) = cli(&[
        "run",
        good.to_str().unwrap(),
        "--trigger",
        r#"{"quarter":"Q3"}"#,
        "--initial-state",
        r#"{"source":"erp"}"#,
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(
            r#""completed":["fetch_financials","fetch_hr_data","run_analysis","generate_report"]"#
        ),
        "{out}"
    );
}

#[test]
fn the_cli_explains_itself_and_refuses_wrong_usage() {
    let (code, out) = cli(&["--help"]);
    assert_eq!(code, 0);
    for part in [
        "USAGE:",
        "check",
        "run",
        "--trigger",
        "EXIT STATUS:",
        "EXAMPLE:",
    ] {
        assert!(out.contains(part), "{part}");
    }
    assert_eq!(cli(&[]).0, 2);
    assert_eq!(cli(&["frobnicate", "x"]).0, 2);
    assert_eq!(cli(&["run", "x", "--trigger", "{not json"]).0, 2);
    // A payload whose keys the workflow reads: an object, nothing else.
    for (flag, value) in [
        ("--trigger", "[1]"),
        ("--initial-state", "null"),
        ("--trigger", "3"),
    ] {
        let (code, out) = cli(&["run", "x", flag, value]);
        assert_eq!(code, 2, "{flag} {value}");
        assert!(
            out.contains(&format!(
                "`{flag}` is a JSON object, whose keys the workflow reads"
            )),
            "{out}"
        );
    }
    let (code, out) = cli(&["check", "/nonexistent/workflow.yaml"]);
    assert_eq!(code, 1);
    assert!(out.contains("DocumentError"));
}

#[test]
fn the_cli_draws_the_phase_graph() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/workflows/quarterly-compliance.yaml"
    );
    let (code, out) = cli(&["check", file, "--graph", "mermaid"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("graph TD\n"), "{out}");
    assert!(
        out.contains("    fetch_financials -->|fin_revenue, fin_expenses| run_analysis\n"),
        "{out}"
    );
    let (code, out) = cli(&["check", file, "--graph", "dot"]);
    assert_eq!(code, 0);
    assert!(out.contains("\"run_analysis\" -> \"generate_report\" [label=\"analysis_findings, risk_level, has_violations\"];"), "{out}");
    assert!(out.trim_end().ends_with('}'));
    let (code, out) = cli(&["check", file, "--graph", "svg"]);
    assert_eq!(code, 2);
    assert!(out.contains("`--graph` takes `mermaid` or `dot`"), "{out}");
    let (code, out) = cli(&["run", file, "--graph", "dot"]);
    assert_eq!(code, 2);
    assert!(out.contains("`--graph` does not go with `run`"), "{out}");
}

/// `run`'s sample agents fill in every field of a named type however deep the types nest, and
/// every level of a nested array; a recursive type is filled in once, and the run then says
/// where the sample falls short instead of recursing.
#[test]
fn the_cli_samples_nested_types_whole_and_recursive_ones_once() {
    let dir = tempfile::tempdir().unwrap();
    let deep = dir.path().join("deep.yaml");
    std::fs::write(
        &deep,
        "openintent: \"1.0\"\ninfo:\n  name: deep\ntypes:\n  Status:\n    enum: [open, shut]\n  \
         A: { b: B }\n  B: { c: C }\n  C: { d: D }\n  D: { e: E }\n  \
         E: { label: string, status: Status }\nworkflow:\n  p:\n    assign: x\n    outputs:\n      \
         four: array<array<array<array<integer>>>>\n      \
         five: array<array<array<array<array<integer>>>>>\n      a: A\n",
    )
    .unwrap();
    let (code, out) = cli(&["run", deep.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    let first: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(
        first,
        json!({ "phase": "p", "output": {
            "four": [[[[1]]]],
            "five": [[[[[1]]]]],
            "a": { "b": { "c": { "d": { "e": { "label": "sample label", "status": "open" } } } } }
        } })
    );

    // Types whose two fields share the next type double the sample at each level: 40 levels
    // would be 2^40 values. The sample stops filling in at 10,000 and the run says where.
    let doubling = dir.path().join("doubling.yaml");
    let mut doc = String::from(
        "openintent: \"1.0\"\ninfo:\n  name: doubling\ntypes:\n  T40: { v: string }\n",
    );
    for i in 0..40 {
        doc.push_str(&format!(
            "  T{i}: {{ a: T{next}, b: T{next} }}\n",
            next = i + 1
        ));
    }
    doc.push_str("workflow:\n  p:\n    assign: x\n    outputs:\n      t: T0\n");
    std::fs::write(&doubling, doc).unwrap();
    let (code, out) = cli(&["run", doubling.to_str().unwrap()]);
    assert_eq!(code, 1, "{}", &out[..out.len().min(500)]);
    assert!(
        out.contains("OutputTypeMismatchError"),
        "{}",
        &out[..out.len().min(500)]
    );
    assert!(out.len() < 4_000_000, "{} bytes", out.len());

    let recursive = dir.path().join("recursive.yaml");
    std::fs::write(
        &recursive,
        "openintent: \"1.0\"\ninfo:\n  name: r\ntypes:\n  Node:\n    label: string\n    \
         child: Node\nworkflow:\n  p:\n    assign: x\n    outputs:\n      node: Node\n",
    )
    .unwrap();
    let (code, out) = cli(&["run", recursive.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("declared Node at '/child/label'"), "{out}");
}

/// A user's binary offers the same command line over its own agents.
#[test]
fn a_users_binary_runs_the_cli_over_its_own_agents() {
    use agentio_workflow::cli::run_cli_with;
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/workflows/quarterly-compliance.yaml"
    )
    .to_owned();
    let bind_all = |executor: Executor| {
        executor
            .bind_fn("data-agent", |ctx| async move {
                Ok(if ctx.phase_name == "fetch_financials" {
                    json!({ "revenue": 10.0, "expenses": 4.0 })
                } else {
                    json!({ "headcount": 12, "attrition_rate": 0.1 })
                })
            })
            .bind_fn("analytics-agent", |_ctx| async {
                Ok(json!({ "findings": ["ok"], "risk_level": "low", "violations_found": false }))
            })
            .bind_fn("reporting-agent", |_ctx| async {
                Ok(json!({ "report_url": "https://example.invalid/r", "report_summary": "fine" }))
            })
    };
    let args = |list: &[&str]| list.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
    let mut out = Vec::new();
    let code = run_cli_with(
        &args(&[
            "run",
            &file,
            "--trigger",
            "{\"quarter\":\"Q3\"}",
            "--initial-state",
            "{\"source\":\"erp\"}",
        ]),
        &mut out,
        bind_all,
    );
    let text = String::from_utf8(out).unwrap();
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("\"report_summary\":\"fine\""), "{text}");
    // `check` also checks that every phase has an agent.
    let mut out = Vec::new();
    let code = run_cli_with(&args(&["check", &file]), &mut out, |executor: Executor| {
        executor.bind_fn("data-agent", |_ctx| async { Ok(json!({})) })
    });
    let text = String::from_utf8(out).unwrap();
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("no agent is bound to that name"), "{text}");
}

/// The executor reports each phase's progress as it goes, retries included.
#[test]
fn the_executor_reports_progress_per_phase() {
    use agentio_workflow::PhaseProgress;
    use std::sync::Mutex;
    let seen: Arc<Mutex<Vec<PhaseProgress>>> = Arc::default();
    let log = seen.clone();
    let tries = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let workflow = Workflow::new("progress")
        .with_phase(
            Phase::new("a", "A")
                .assign("x")
                .output("n", TypeRef::Number),
        )
        .with_phase(
            Phase::new("b", "B")
                .assign("y")
                .depends_on(["a"])
                .input("n", "a.n"),
        );
    let executor = Executor::new(workflow)
        .bind_fn("x", move |_ctx| {
            let attempt = tries.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            // The first output misses `n` and is handed back.
            async move {
                Ok(if attempt == 0 {
                    json!({})
                } else {
                    json!({ "n": 1 })
                })
            }
        })
        .bind_fn("y", |_ctx| async {
            Err(agentio_core::AgentError::internal("broken"))
        })
        .with_progress(move |event: &PhaseProgress| log.lock().unwrap().push(event.clone()));
    let outcome = paused_runtime()
        .block_on(executor.run("r", json!({}), json!({})))
        .unwrap();
    assert!(!outcome.succeeded());
    let seen = seen.lock().unwrap();
    let names: Vec<String> = seen
        .iter()
        .map(|e| agentio_workflow::cli::progress_line(e, false))
        .map(|line| line.split(" in ").next().unwrap().to_owned())
        .collect();
    assert_eq!(
        names,
        [
            "phase a: started",
            "phase a: output of attempt 1 rejected; handed back",
            "phase a: started (attempt 2)",
            "phase a: completed",
            "phase b: started",
            "phase b: failed: internal: broken",
        ]
    );
}

// ---- typed producer feeding a typed consumer: the schemas decide ---------------------------

#[derive(Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Scored {
    score: u8,
}

#[derive(Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct NarrowScore {
    #[schemars(range(max = 10))]
    score: u8,
}

struct Scorer;

impl AgentCore for Scorer {
    type Input = Scored;
    type Output = Scored;

    fn core_type(&self) -> &str {
        "scorer"
    }

    async fn run_turn(
        &mut self,
        input: Scored,
        _: &mut AgentContext,
    ) -> Result<Scored, AgentError> {
        Ok(input)
    }
}

struct Judge;

impl AgentCore for Judge {
    type Input = NarrowScore;
    type Output = NarrowScore;

    fn core_type(&self) -> &str {
        "judge"
    }

    async fn run_turn(
        &mut self,
        input: NarrowScore,
        _: &mut AgentContext,
    ) -> Result<NarrowScore, AgentError> {
        Ok(input)
    }
}

const SCORING: &str = "\
workflow:
  score:
    title: Score
    assign: scorer
    inputs:
      score: $trigger.score
    outputs:
      score: integer
  judge:
    title: Judge
    assign: judge
    depends_on: [score]
    inputs:
      score: score.score
    outputs:
      score: integer
openintent: \"1.0\"
info:
  name: scoring
";

#[test]
fn typed_wiring_between_typed_agents_is_decided_by_their_schemas() {
    // Both fields are `integer` by the declared type; the judge takes at most 10 and the
    // scorer can produce up to 255: the schemas refuse the wiring, with a value showing why.
    let workflow = Workflow::from_yaml(SCORING).unwrap();
    let executor = Executor::new(workflow.clone())
        .bind_core("scorer", Scorer)
        .bind_core("judge", Judge);
    let problems: Vec<Value> = executor
        .check()
        .iter()
        .map(ValidationError::to_json)
        .collect();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0]["error"], "TypedWiringError");
    assert_eq!(problems[0]["key"], "score");
    assert!(
        problems[0]["actual"]
            .as_str()
            .unwrap()
            .contains("which can be"),
        "{}",
        problems[0]
    );
    // The same producer feeding a consumer as wide as itself passes.
    let fine = Executor::new(workflow)
        .bind_core("scorer", Scorer)
        .bind_core_factory("judge", || Scorer);
    assert!(fine.check().is_empty(), "{:?}", fine.check());
}
