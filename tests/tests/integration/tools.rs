//! Typed tools under their contracts: every enforcement point of the registry, with the exact
//! envelope each failure produces, registration that refuses bad contracts without panicking,
//! and TOOL.md rendering, parsing, validation and drift.
//!
//! Timing tests run on Tokio's paused clock: sleeps and timeouts advance virtual time, so they
//! are exact and instant.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use agentio_core::{AgentInput, AgentOutput, BoxFuture, ErrorCode};
use agentio_tools::{
    Approval, ApprovalDecision, ApprovalOutcome, ApprovalRequest, AuditLog, CallOptions,
    ToolContext, ToolContract, ToolError, ToolManifest, ToolPlugin, ToolRegistry, TypedTool, tool,
    tool_registry,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a Tokio runtime")
        .block_on(future)
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentInput)]
#[serde(deny_unknown_fields)]
struct Ask {
    #[serde(default)]
    #[schemars(range(min = 0, max = 100))]
    n: u32,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentOutput)]
struct Answer {
    #[schemars(range(max = 10))]
    value: u32,
}

/// Sleeps for `n` × 10 ms, then echoes `n`.
#[tool(id = "test.slow", timeout_ms = 20)]
async fn slow(input: Ask) -> Result<Answer, ToolError> {
    tokio::time::sleep(Duration::from_millis(u64::from(input.n) * 10)).await;
    Ok(Answer { value: input.n })
}

/// Panics.
#[tool(id = "test.panics")]
async fn panics(_input: Ask) -> Result<Answer, ToolError> {
    panic!("the index is corrupt")
}

/// Returns `n` unchanged, which breaks the output schema above 10.
#[tool(id = "test.echo")]
async fn echo(input: Ask) -> Result<Answer, ToolError> {
    Ok(Answer { value: input.n })
}

/// Fails with a retryable `upstream_error` until attempt `n`, counting every run.
struct Flaky {
    runs: Arc<AtomicU32>,
}

/// Fails with a retryable error until its attempt reaches `n`.
#[tool(
    id = "test.flaky",
    idempotent,
    retry(max_attempts = 3, backoff = "exponential", initial_ms = 100)
)]
impl TypedTool for Flaky {
    type Input = Ask;
    type Output = Answer;

    async fn execute_typed(&self, input: Ask, ctx: &ToolContext) -> Result<Answer, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        if ctx.attempt() < input.n {
            return Err(ToolError::new(
                ErrorCode::UpstreamError,
                "the backend hiccuped",
            ));
        }
        Ok(Answer {
            value: ctx.attempt(),
        })
    }
}

/// The same failure, on a tool that is not idempotent: it must never be retried.
struct FlakyWrite {
    runs: Arc<AtomicU32>,
}

/// Fails with a retryable error on every attempt.
#[tool(id = "test.flaky-write", mutates = ["database:orders"], approval = "on-mutate")]
impl TypedTool for FlakyWrite {
    type Input = Ask;
    type Output = Answer;

    async fn execute_typed(&self, _input: Ask, _ctx: &ToolContext) -> Result<Answer, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        Err(ToolError::new(
            ErrorCode::UpstreamError,
            "the backend hiccuped",
        ))
    }
}

/// Always asks before running; counts its runs.
struct Guarded {
    runs: Arc<AtomicU32>,
}

/// Deletes everything (in a test, only counts).
#[tool(id = "test.guarded", approval = "always", risk_level = 3, mutates = ["external:everything"])]
impl TypedTool for Guarded {
    type Input = Ask;
    type Output = Answer;

    async fn execute_typed(&self, input: Ask, _ctx: &ToolContext) -> Result<Answer, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        Ok(Answer {
            value: input.n.min(10),
        })
    }
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Tenant {
    tenant_id: String,
}

/// Reports the tenant it runs for.
#[tool(id = "test.tenant", context = Tenant)]
async fn tenant(_input: Ask, ctx: &ToolContext) -> Result<Answer, ToolError> {
    let tenant: Tenant = ctx.context()?;
    Ok(Answer {
        value: u32::try_from(tenant.tenant_id.len()).unwrap_or(10).min(10),
    })
}

fn counter() -> Arc<AtomicU32> {
    Arc::new(AtomicU32::new(0))
}

fn deny_all(_: &ApprovalRequest) -> ApprovalDecision {
    ApprovalDecision::Deny {
        reason: "the operator said no".into(),
    }
}

#[test]
fn a_slow_tool_times_out_with_the_exact_envelope() {
    let registry = tool_registry![SlowTool].unwrap();
    let envelope =
        block_on(registry.call_envelope("test.slow", json!({ "n": 5 }), CallOptions::default()));
    // `test.slow` is not idempotent: the host does not retry it, so neither may the caller.
    assert_eq!(
        envelope,
        json!({ "ok": false, "error": {
            "code": "timeout", "message": "tool `test.slow` did not finish within 20 ms", "retryable": false } })
    );
    // Within the budget it answers.
    let fast =
        block_on(registry.call_envelope("test.slow", json!({ "n": 1 }), CallOptions::default()));
    assert_eq!(fast, json!({ "ok": true, "value": { "value": 1 } }));
}

#[test]
fn a_result_exactly_at_the_ceiling_is_within_it() {
    // `test.slow` with n = 2 sleeps 20 ms, its whole `timeout_ms` (the clock is paused).
    let registry = tool_registry![SlowTool].unwrap();
    let out = block_on(registry.call("test.slow", json!({ "n": 2 })));
    assert_eq!(out.unwrap(), json!({ "value": 2 }));
}

tokio::task_local! {
    static TENANT: &'static str;
}

/// Answers the length of the caller's tenant task-local (0 when none is visible).
#[tool(id = "test.task-local")]
async fn tenant_length(_input: Ask) -> Result<Answer, ToolError> {
    Ok(Answer {
        value: TENANT.try_with(|t| t.len() as u32).unwrap_or(0),
    })
}

/// The same, on a tool whose calls may be retried (the registry's general path, not the
/// one-attempt one).
#[tool(
    id = "test.task-local-retried",
    idempotent,
    retry(max_attempts = 2, backoff = "exponential", initial_ms = 1)
)]
async fn tenant_length_retried(_input: Ask) -> Result<Answer, ToolError> {
    Ok(Answer {
        value: TENANT.try_with(|t| t.len() as u32).unwrap_or(0),
    })
}

#[test]
fn on_a_one_worker_runtime_the_body_runs_in_the_caller_s_task() {
    let registry = tool_registry![TenantLengthTool, TenantLengthRetriedTool].unwrap();
    for id in ["test.task-local", "test.task-local-retried"] {
        let out = block_on(TENANT.scope("acme", registry.call(id, json!({}))));
        assert_eq!(out.unwrap(), json!({ "value": 4 }), "{id}");
        // A multi-thread runtime with one worker: still the caller's task (a task of its own
        // would not free the one worker a blocking body holds).
        let on = |workers| {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(workers)
                .enable_time()
                .build()
                .unwrap();
            runtime
                .block_on(TENANT.scope("acme", registry.call(id, json!({}))))
                .unwrap()
        };
        assert_eq!(on(1), json!({ "value": 4 }), "{id}");
        // With two workers the attempt is a task of its own.
        assert_eq!(on(2), json!({ "value": 0 }), "{id}");
    }
}

#[test]
fn a_value_based_plugin_s_output_is_held_to_its_schema() {
    let mut contract = plugin_contract("js.typed-echo", json!({ "type": "object" }));
    contract.outputs = json!({
        "type": "object",
        "properties": { "echo": { "type": "integer" } },
    });
    let mut registry = ToolRegistry::new();
    registry
        .register_plugin(Arc::new(Plugin { contract }))
        .unwrap();
    // The plugin echoes its input object, which the output schema says must be an integer.
    let err = block_on(registry.call("js.typed-echo", json!({ "a": 1 }))).unwrap_err();
    assert_eq!(err.code(), &ErrorCode::OutputInvalid);
    assert_eq!(err.violations()[0].pointer, "/echo");
}

#[test]
fn retryable_failures_of_an_idempotent_tool_are_retried_per_the_policy() {
    let runs = counter();
    let audit = Arc::new(AuditLog::default());
    let mut registry = ToolRegistry::new().with_audit_sink(audit.clone());
    registry.register(Flaky { runs: runs.clone() }).unwrap();
    let started = block_on(async {
        let start = tokio::time::Instant::now();
        let out = registry
            .call("test.flaky", json!({ "n": 3 }))
            .await
            .unwrap();
        (out, start.elapsed())
    });
    assert_eq!(started.0, json!({ "value": 3 }));
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    // Exponential backoff from 100 ms: 100 ms before attempt 2, 200 ms before attempt 3.
    assert_eq!(started.1, Duration::from_millis(300));
    assert_eq!(audit.records()[0].attempts, 3);
}

#[test]
fn a_registry_says_whether_it_is_audited_and_its_log_shows_its_count() {
    let registry = ToolRegistry::new();
    assert!(!registry.is_audited());
    let audit = Arc::new(AuditLog::default());
    let mut registry = ToolRegistry::new().with_audit_sink(audit.clone());
    assert!(registry.is_audited());
    assert_eq!(format!("{audit:?}"), "AuditLog { records: 0 }");
    registry.register(Flaky { runs: counter() }).unwrap();
    block_on(registry.call("test.flaky", json!({ "n": 1 }))).unwrap();
    assert_eq!(format!("{audit:?}"), "AuditLog { records: 1 }");
    // A registry's own Debug names its tools and says what is attached, never more.
    assert_eq!(
        format!("{registry:?}"),
        r#"ToolRegistry { tools: ["test.flaky@1"], approver: false, audit: true }"#
    );
}

#[test]
fn a_registry_gives_each_tool_s_schemas_by_id_or_major() {
    let mut registry = ToolRegistry::new();
    registry.register(Flaky { runs: counter() }).unwrap();
    let contract = Flaky::contract();
    for id in ["test.flaky", "test.flaky@1"] {
        assert_eq!(
            registry.tool_input_schema(id),
            Some(&contract.inputs),
            "{id}"
        );
        assert_eq!(
            registry.tool_output_schema(id),
            Some(&contract.outputs),
            "{id}"
        );
    }
    assert_eq!(registry.tool_input_schema("test.missing"), None);
    assert_eq!(registry.tool_output_schema("test.missing"), None);
}

#[test]
fn retries_stop_at_max_attempts_with_the_last_error() {
    let runs = counter();
    let mut registry = ToolRegistry::new();
    registry.register(Flaky { runs: runs.clone() }).unwrap();
    let envelope =
        block_on(registry.call_envelope("test.flaky", json!({ "n": 9 }), CallOptions::default()));
    assert_eq!(
        envelope,
        json!({ "ok": false, "error": { "code": "upstream_error", "message": "the backend hiccuped", "retryable": true } })
    );
    assert_eq!(runs.load(Ordering::SeqCst), 3);
}

#[test]
fn a_tool_that_is_not_idempotent_is_never_retried() {
    let runs = counter();
    let approve = |_: &ApprovalRequest| ApprovalDecision::Approve;
    let mut registry = ToolRegistry::new().with_approver(Arc::new(approve));
    registry
        .register(FlakyWrite { runs: runs.clone() })
        .unwrap();
    let err = block_on(registry.call("test.flaky-write", json!({}))).unwrap_err();
    assert_eq!(err.code(), &ErrorCode::UpstreamError);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[test]
fn a_panic_in_a_body_is_contained_as_internal() {
    let registry = tool_registry![PanicsTool].unwrap();
    let result = block_on(registry.call("test.panics", json!({})));
    let err = result.unwrap_err();
    assert_eq!(
        err.to_envelope(),
        json!({ "ok": false, "error": { "code": "internal", "message": "the body failed unexpectedly", "retryable": false } })
    );
    assert_eq!(
        err.operator_detail(),
        Some("panicked: the index is corrupt")
    );
}

#[test]
fn an_always_tool_never_runs_without_a_yes() {
    let runs = counter();
    // No approver at all: denied.
    let mut registry = ToolRegistry::new();
    registry.register(Guarded { runs: runs.clone() }).unwrap();
    let envelope =
        block_on(registry.call_envelope("test.guarded", json!({ "n": 1 }), CallOptions::default()));
    assert_eq!(
        envelope,
        json!({ "ok": false, "error": { "code": "approval_denied",
            "message": "the call to `test.guarded` was not approved: no approver is configured", "retryable": false } })
    );
    // An approver that says no: denied with its reason.
    let audit = Arc::new(AuditLog::default());
    let mut registry = ToolRegistry::new()
        .with_approver(Arc::new(deny_all))
        .with_audit_sink(audit.clone());
    registry.register(Guarded { runs: runs.clone() }).unwrap();
    let envelope =
        block_on(registry.call_envelope("test.guarded", json!({ "n": 1 }), CallOptions::default()));
    assert_eq!(
        envelope,
        json!({ "ok": false, "error": { "code": "approval_denied",
            "message": "the call to `test.guarded` was not approved: the operator said no", "retryable": false } })
    );
    assert_eq!(
        runs.load(Ordering::SeqCst),
        0,
        "the body ran without approval"
    );
    assert_eq!(audit.records()[0].approval, ApprovalOutcome::Denied);
    assert_eq!(audit.records()[0].attempts, 0);
}

#[test]
fn the_approver_sees_the_contract_and_a_yes_runs_the_tool() {
    let runs = counter();
    let seen = Arc::new(std::sync::Mutex::new(None));
    let seen_by_approver = seen.clone();
    let approver = move |request: &ApprovalRequest| {
        *seen_by_approver.lock().unwrap() = Some(request.clone());
        ApprovalDecision::Approve
    };
    let mut registry = ToolRegistry::new().with_approver(Arc::new(approver));
    registry.register(Guarded { runs: runs.clone() }).unwrap();
    let out = block_on(registry.call("test.guarded", json!({ "n": 4 }))).unwrap();
    assert_eq!(out, json!({ "value": 4 }));
    let request = seen.lock().unwrap().clone().unwrap();
    assert_eq!(request.identity, "test.guarded@1");
    assert_eq!(request.approval, Approval::Always);
    assert_eq!(request.mutates, ["external:everything"]);
    assert_eq!(request.risk_level, 3);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[test]
fn a_context_that_breaks_the_context_schema_is_refused_before_dispatch() {
    let registry = tool_registry![TenantTool].unwrap();
    let options = CallOptions {
        context: json!({ "tenant": "acme" }),
        ..CallOptions::default()
    };
    let envelope = block_on(registry.call_envelope("test.tenant", json!({}), options));
    assert_eq!(
        envelope,
        json!({ "ok": false, "error": {
            "code": "context_invalid",
            "message": "the host did not supply the context this tool requires",
            "retryable": false,
            "cause": { "violations": [
                { "pointer": "/tenant", "keyword": "additionalProperties", "message": "property `tenant` is not allowed here" },
                { "pointer": "/tenant_id", "keyword": "required", "message": "required property `tenant_id` is missing" }
            ] } } })
    );
    let options = CallOptions {
        context: json!({ "tenant_id": "acme" }),
        ..CallOptions::default()
    };
    assert_eq!(
        block_on(registry.call_with("test.tenant", json!({}), options)).unwrap(),
        json!({ "value": 4 })
    );
}

#[test]
fn an_invalid_input_is_refused_with_the_exact_envelope() {
    let registry = tool_registry![EchoTool].unwrap();
    let envelope = block_on(registry.call_envelope(
        "test.echo",
        json!({ "n": "three", "x": 1 }),
        CallOptions::default(),
    ));
    assert_eq!(
        envelope,
        json!({ "ok": false, "error": {
            "code": "input_invalid",
            "message": "input does not match the schema of `Ask`: /n: \"three\" is not of type \"integer\"; /x: property `x` is not allowed here",
            "retryable": false,
            "cause": { "violations": [
                { "pointer": "/n", "keyword": "type", "message": "\"three\" is not of type \"integer\"" },
                { "pointer": "/x", "keyword": "additionalProperties", "message": "property `x` is not allowed here" }
            ] } } })
    );
}

#[test]
fn an_invalid_output_is_withheld_with_the_exact_envelope() {
    let registry = tool_registry![EchoTool].unwrap();
    let envelope =
        block_on(registry.call_envelope("test.echo", json!({ "n": 42 }), CallOptions::default()));
    assert_eq!(
        envelope,
        json!({ "ok": false, "error": {
            "code": "output_invalid",
            "message": "output does not match the schema of `Answer`: /value: 42 is greater than the maximum of 10",
            "retryable": false,
            "cause": { "violations": [
                { "pointer": "/value", "keyword": "maximum", "message": "42 is greater than the maximum of 10" }
            ] } } })
    );
}

#[test]
fn a_null_input_counts_as_an_empty_object() {
    let registry = tool_registry![EchoTool].unwrap();
    assert_eq!(
        block_on(registry.call("test.echo", Value::Null)).unwrap(),
        json!({ "value": 0 })
    );
}

#[test]
fn a_whole_number_sent_as_a_float_is_the_integer_its_schema_accepts() {
    // `3.0` is an `integer` to JSON Schema, and models send it (Gemini's arguments are all
    // doubles): the tool gets 3, where serde alone refuses a float for a `u32`.
    let registry = tool_registry![EchoTool].unwrap();
    assert_eq!(
        block_on(registry.call("test.echo", json!({ "n": 3.0 }))).unwrap(),
        json!({ "value": 3 })
    );
    // A fraction is not an integer: the schema refuses it before the body runs.
    let err = block_on(registry.call("test.echo", json!({ "n": 3.5 }))).unwrap_err();
    assert_eq!(err.code(), &ErrorCode::InputInvalid);
    assert_eq!(
        (
            err.violations()[0].pointer.as_str(),
            err.violations()[0].keyword.as_str()
        ),
        ("/n", "type")
    );
}

#[test]
fn an_unknown_tool_is_not_found() {
    let registry = ToolRegistry::new();
    let envelope = block_on(registry.call_envelope("nope", json!({}), CallOptions::default()));
    assert_eq!(
        envelope,
        json!({ "ok": false, "error": { "code": "not_found", "message": "there is no tool `nope`", "retryable": false } })
    );
}

#[test]
fn outside_a_tokio_runtime_a_call_fails_instead_of_panicking() {
    let registry = tool_registry![EchoTool].unwrap();
    let err = pollster::block_on(registry.call("test.echo", json!({}))).unwrap_err();
    assert_eq!(err.code(), &ErrorCode::Internal);
    assert!(err.operator_detail().unwrap_or_default().contains("Tokio"));
    // The reason is in what `Display` shows, not only in the operator detail.
    assert_eq!(
        err.to_string(),
        "internal: the tool host is misconfigured: ToolRegistry::call needs a Tokio runtime with time enabled (for timeouts and retries), and it was called outside one"
    );
}

#[test]
fn every_call_is_audited_with_the_contract_mutates_and_argument_keys_only() {
    let audit = Arc::new(AuditLog::default());
    let approve = |_: &ApprovalRequest| ApprovalDecision::Approve;
    let mut registry = ToolRegistry::new()
        .with_audit_sink(audit.clone())
        .with_approver(Arc::new(approve));
    registry.register(Guarded { runs: counter() }).unwrap();
    let options = CallOptions {
        run_id: Some("run-9".into()),
        ..CallOptions::default()
    };
    block_on(registry.call_with("test.guarded", json!({ "n": 2 }), options)).unwrap();
    block_on(registry.call("missing", json!({ "secret": "hunter2" }))).unwrap_err();
    let records = audit.records();
    assert_eq!(records.len(), 2);
    let first = serde_json::to_value(&records[0]).unwrap();
    assert_eq!(first["type"], "tool.invoked");
    assert_eq!(first["run_id"], "run-9");
    assert_eq!(first["tool_mutates"], json!(["external:everything"]));
    assert_eq!(first["input_keys"], json!(["n"]));
    assert_eq!(first["approval"], "approved");
    assert_eq!(first["ok"], true);
    let second = serde_json::to_value(&records[1]).unwrap();
    assert_eq!(second["error_code"], "not_found");
    assert!(
        !second.to_string().contains("hunter2"),
        "argument values must not reach the audit log"
    );
}

/// A tool with JSON in and out, as a WASM or JS tool would be.
struct Plugin {
    contract: ToolContract,
}

impl ToolPlugin for Plugin {
    fn tool_contract(&self) -> ToolContract {
        self.contract.clone()
    }

    fn execute<'a>(
        &'a self,
        input: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move { Ok(json!({ "echo": input })) })
    }
}

fn plugin_contract(id: &str, inputs: Value) -> ToolContract {
    ToolContract::new(id, "1.0.0", "Echoes.", inputs, json!({ "type": "object" }))
}

#[test]
fn a_value_based_plugin_registers_and_runs_under_the_same_contract() {
    let mut registry = ToolRegistry::new();
    let inputs = json!({ "type": "object", "properties": { "a": { "type": "integer" } }, "required": ["a"] });
    registry
        .register_plugin(Arc::new(Plugin {
            contract: plugin_contract("js.echo", inputs),
        }))
        .unwrap();
    assert_eq!(
        block_on(registry.call("js.echo", json!({ "a": 1 }))).unwrap(),
        json!({ "echo": { "a": 1 } })
    );
    let err = block_on(registry.call("js.echo", json!({ "a": "x" }))).unwrap_err();
    assert_eq!(err.violations()[0].pointer, "/a");
}

#[test]
fn registration_refuses_bad_contracts_without_panicking() {
    let mut registry = ToolRegistry::new();
    // A duplicate id.
    registry.register(EchoTool).unwrap();
    let err = registry.register(EchoTool).unwrap_err();
    assert_eq!(err.problems[0].pointer, "/id");
    assert!(
        err.problems[0].message.contains("already registered"),
        "{err}"
    );

    // An input schema that is not an object schema.
    let err = registry
        .register_plugin(Arc::new(Plugin {
            contract: plugin_contract("js.strings", json!({ "type": "string" })),
        }))
        .unwrap_err();
    assert_eq!(err.problems[0].pointer, "/inputs");
    assert!(
        err.to_string().contains("must describe a JSON object"),
        "{err}"
    );

    // A schema that does not compile.
    let bad = json!({ "type": "object", "properties": { "a": { "type": "colour" } } });
    let err = registry
        .register_plugin(Arc::new(Plugin {
            contract: plugin_contract("js.bad", bad),
        }))
        .unwrap_err();
    assert_eq!(err.problems[0].pointer, "/inputs");
    assert!(
        err.problems[0].message.contains("does not compile"),
        "{err}"
    );

    // Contract fields that break TOOL.schema.json, all reported at once.
    let mut contract = plugin_contract("Not An Id", json!({ "type": "object" }));
    contract.version = "one".into();
    contract.risk_level = 9;
    contract.mutates = vec!["workspace:/x".into(), "planet:earth".into()];
    let err = registry
        .register_plugin(Arc::new(Plugin { contract }))
        .unwrap_err();
    let mut pointers: Vec<&str> = err.problems.iter().map(|p| p.pointer.as_str()).collect();
    pointers.sort_unstable();
    assert_eq!(
        pointers,
        ["/id", "/mutates", "/mutates/1", "/risk_level", "/version"],
        "{err}"
    );
    assert!(registry.contract("Not An Id").is_none());
}

#[test]
fn contract_examples_that_do_not_match_the_schemas_are_refused_at_registration() {
    let mut contract = plugin_contract(
        "js.examples",
        json!({ "type": "object", "properties": { "a": { "type": "integer" } } }),
    );
    contract.examples = vec![agentio_tools::ToolExample {
        name: "bad".into(),
        input: json!({ "a": "not a number" }),
        output: None,
        note: None,
    }];
    let err = ToolRegistry::new()
        .register_plugin(Arc::new(Plugin { contract }))
        .unwrap_err();
    assert_eq!(err.problems[0].pointer, "/examples/0/input");
}

#[test]
fn undeclared_mutations_are_refused_at_run_time() {
    let ctx = ToolContext::new("r", "notes.append").with_mutates(&["workspace:/notes".into()]);
    let err = ctx.authorize_mutation("workspace:/etc/passwd").unwrap_err();
    assert_eq!(err.code(), &ErrorCode::Unauthorised);
    assert_eq!(
        err.message(),
        "tool `notes.append` did not declare that it modifies `workspace:/etc/passwd`"
    );
}

#[test]
fn cores_reach_registry_tools_through_their_context() {
    use agentio_core::{
        AgentContext, AgentCore, AgentError, AgentRuntime, TurnInput, TurnOutput, agent_core,
    };

    /// Asks `test.echo`, noting the run of each turn.
    struct Asker {
        runs: Arc<std::sync::Mutex<Vec<String>>>,
    }

    #[agent_core]
    impl AgentCore for Asker {
        fn core_type(&self) -> &str {
            "asker"
        }

        async fn run_turn(
            &mut self,
            input: TurnInput,
            ctx: &mut AgentContext,
        ) -> Result<TurnOutput, AgentError> {
            self.runs.lock().unwrap().push(ctx.run_id().to_owned());
            let n: u32 = input.message.parse().unwrap_or(0);
            let answer = ctx.call_tool("test.echo", json!({ "n": n })).await?;
            Ok(TurnOutput::new(answer["value"].to_string()))
        }
    }

    let audit = Arc::new(AuditLog::default());
    let registry: Arc<dyn agentio_core::ToolInvoker> = Arc::new(
        tool_registry![EchoTool]
            .unwrap()
            .with_audit_sink(audit.clone()),
    );
    let runs = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut runtime = AgentRuntime::new(Asker { runs: runs.clone() }).with_tools(registry);
    let out = block_on(runtime.run_turn(json!({ "message": "7" }))).unwrap();
    assert_eq!(out, json!({ "response": "7" }));
    // The core's tool call is made in the core's own run.
    assert_eq!(audit.records()[0].run_id, runs.lock().unwrap()[0]);
    // A tool failure reaches the core as a structured error.
    let err = block_on(runtime.run_turn(json!({ "message": "42" }))).unwrap_err();
    assert_eq!(err.code(), &ErrorCode::OutputInvalid);
}

#[test]
fn the_macro_fills_every_contract_field() {
    let contract = FlakyWrite::contract();
    assert_eq!(contract.id, "test.flaky-write");
    assert_eq!(contract.version, "1.0.0");
    assert_eq!(
        contract.description,
        "Fails with a retryable error on every attempt."
    );
    assert_eq!(contract.approval, Approval::OnMutate);
    assert_eq!(contract.mutates, ["database:orders"]);
    assert_eq!(contract.inputs, *Ask::input_schema());
    assert_eq!(contract.outputs, *Answer::output_schema());
    let flaky = Flaky::contract();
    assert!(flaky.idempotent);
    let retry = flaky.retry.unwrap();
    assert_eq!((retry.max_attempts, retry.initial_ms), (3, 100));
    let tenant = TenantTool::contract();
    assert_eq!(
        tenant.context_schema.unwrap()["required"],
        json!(["tenant_id"])
    );
    // A mutating tool without an approval class gets `on-mutate`.
    assert_eq!(
        Approval::default_for(&["workspace:/a".into()]),
        Approval::OnMutate
    );
}

#[test]
fn a_rendered_manifest_validates_and_parses_back_to_the_same_contract() {
    for contract in [
        FlakyWrite::contract(),
        TenantTool::contract(),
        Flaky::contract(),
        SlowTool::contract(),
    ] {
        let manifest = ToolManifest::from_contract(contract.clone());
        let text = manifest.render();
        let frontmatter = contract.to_frontmatter();
        assert_eq!(
            agentio_tools::frontmatter_violations(&frontmatter),
            [],
            "{}",
            contract.id
        );
        let parsed =
            ToolManifest::parse(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", contract.id));
        assert_eq!(parsed.contract, contract);
        assert_eq!(parsed, manifest);
    }
}

fn parse_error(text: &str) -> Vec<(String, Option<usize>, String)> {
    let err = ToolManifest::parse(text).unwrap_err();
    err.problems
        .into_iter()
        .map(|p| (p.field, p.line, p.message))
        .collect()
}

const GOOD_FRONTMATTER: &str = "name: Echo
id: echo
description: Echoes.
version: 1.0.0
approval: auto
inputs:
  type: object
outputs:
  type: object
";

#[test]
fn manifest_parse_errors_name_the_field_and_the_line() {
    assert!(ToolManifest::parse(&format!("---\n{GOOD_FRONTMATTER}---\nbody\n")).is_ok());

    let wrong_version = GOOD_FRONTMATTER.replace("version: 1.0.0", "version: one");
    let problems = parse_error(&format!("---\n{wrong_version}---\n"));
    assert_eq!(problems.len(), 1);
    assert_eq!(
        (problems[0].0.as_str(), problems[0].1),
        ("/version", Some(5))
    );

    let problems = parse_error(&format!(
        "---\n{GOOD_FRONTMATTER}risk_level: 7\ncost_class: cheap\n---\n"
    ));
    let found: Vec<(&str, Option<usize>)> = problems.iter().map(|p| (p.0.as_str(), p.1)).collect();
    assert_eq!(
        found,
        [("/risk_level", Some(11)), ("/cost_class", Some(12))]
    );

    // The YAML starts on file line 2, so its line 2 is the file's line 3.
    let problems = parse_error("---\nname: x\nid: y: z\n---\n");
    assert_eq!(problems[0].1, Some(3));
    assert!(problems[0].2.contains("not valid YAML"), "{problems:?}");

    assert_eq!(parse_error("name: x\n")[0].1, Some(1));
    assert!(parse_error("---\nname: x\n")[0].2.contains("not closed"));
    assert!(parse_error("---\n- a\n- b\n---\n")[0].2.contains("mapping"));
}

#[test]
fn removed_fields_are_refused_with_a_pointer_to_the_driver_layer() {
    let text =
        format!("---\n{GOOD_FRONTMATTER}runner:\n  engine: sandbox\nentry: ./index.ts\n---\n");
    let problems = parse_error(&text);
    let found: Vec<(&str, Option<usize>)> = problems.iter().map(|p| (p.0.as_str(), p.1)).collect();
    assert_eq!(found, [("/runner", Some(11)), ("/entry", Some(13))]);
    assert!(
        problems
            .iter()
            .all(|p| p.2.contains("DRIVER.md") && p.2.contains("AIP-30")),
        "{problems:?}"
    );
}

#[test]
fn approval_auto_with_mutates_is_refused_in_a_manifest() {
    let text = format!("---\n{GOOD_FRONTMATTER}mutates: [\"workspace:/x\"]\n---\n");
    let problems = parse_error(&text);
    assert_eq!(problems[0].0, "/mutates");
}

#[test]
fn drift_between_rust_and_the_manifest_names_the_property() {
    // Removed on drop, also when an assertion fails.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("TOOL.md");
    let contract = EchoTool::contract();
    std::fs::write(
        &path,
        ToolManifest::from_contract(contract.clone()).render(),
    )
    .unwrap();
    agentio_tools::check_manifest(&contract, &path).unwrap();

    // The Rust type changes: `n` becomes a string.
    let mut changed = contract.clone();
    changed.inputs["properties"]["n"]["type"] = json!("string");
    changed.timeout_ms = 5;
    let err = agentio_tools::check_manifest(&changed, &path).unwrap_err();
    let agentio_tools::DriftError::Drift { differences, .. } = &err else {
        panic!("{err}")
    };
    let pointers: Vec<&str> = differences.iter().map(|d| d.pointer.as_str()).collect();
    assert_eq!(pointers, ["/inputs/properties/n/type", "/timeout_ms"]);
    assert!(
        err.to_string().contains(
            "/inputs/properties/n/type: Rust has `\"string\"`, TOOL.md has `\"integer\"`"
        ),
        "{err}"
    );
}

#[test]
fn the_examples_helper_runs_each_example_and_compares_outputs() {
    use agentio_tools::{ToolExample, check_examples};

    struct Doubler;

    fn examples() -> Vec<ToolExample> {
        vec![
            ToolExample {
                name: "two".into(),
                input: json!({ "n": 2 }),
                output: Some(json!({ "value": 4 })),
                note: None,
            },
            ToolExample {
                name: "wrong".into(),
                input: json!({ "n": 3 }),
                output: Some(json!({ "value": 7 })),
                note: None,
            },
        ]
    }

    /// Doubles.
    #[tool(id = "test.doubler", examples = examples)]
    impl TypedTool for Doubler {
        type Input = Ask;
        type Output = Answer;

        async fn execute_typed(&self, input: Ask, _ctx: &ToolContext) -> Result<Answer, ToolError> {
            Ok(Answer { value: input.n * 2 })
        }
    }

    let failures = block_on(check_examples(Doubler, Value::Null)).unwrap_err();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].example, "wrong");
    assert_eq!(
        failures[0].reason,
        "the output differs: /value: expected 7, got 6"
    );
    assert_eq!(
        failures[0].to_string(),
        "example `wrong`: the output differs: /value: expected 7, got 6"
    );
}

/// Each example runs under its own run id, `example:<name>`, and the helper says how many ran.
#[test]
fn examples_run_under_their_own_run_ids_and_are_counted() {
    use agentio_tools::ToolExample;

    #[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
    struct RunId {
        run_id: String,
    }

    struct WhoRuns;

    fn examples() -> Vec<ToolExample> {
        ["one", "two"]
            .into_iter()
            .map(|name| ToolExample {
                name: name.into(),
                input: json!({ "n": 1 }),
                output: Some(json!({ "run_id": format!("example:{name}") })),
                note: None,
            })
            .collect()
    }

    /// Says which run it is in.
    #[tool(id = "test.who-runs", examples = examples)]
    impl TypedTool for WhoRuns {
        type Input = Ask;
        type Output = RunId;

        async fn execute_typed(&self, _input: Ask, ctx: &ToolContext) -> Result<RunId, ToolError> {
            Ok(RunId {
                run_id: ctx.run_id().to_owned(),
            })
        }
    }

    assert_eq!(agentio_tools::assert_examples(WhoRuns), 2);
}

mod example_tools {
    //! The example tools against their checked-in TOOL.md files (`examples/tools/<id>/TOOL.md`).

    use agentio_examples::tools::{AppendNoteTool, KbSearch, RenderReportTool};
    use agentio_tools::{ToolContract, ToolManifest, TypedTool, check_manifest};
    use serde_json::json;

    fn manifests() -> Vec<(ToolContract, std::path::PathBuf)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/tools");
        [
            KbSearch::contract(),
            AppendNoteTool::contract(),
            RenderReportTool::contract(),
        ]
        .into_iter()
        .map(|contract| {
            let path = root.join(&contract.id).join("TOOL.md");
            (contract, path)
        })
        .collect()
    }

    #[test]
    fn the_example_tools_match_their_checked_in_manifests() {
        for (contract, path) in manifests() {
            if let Err(err) = check_manifest(&contract, &path) {
                panic!("{err}");
            }
        }
    }

    #[test]
    fn the_checked_in_manifests_validate_against_the_published_schema_and_round_trip() {
        for (contract, path) in manifests() {
            let text = std::fs::read_to_string(&path).unwrap();
            let manifest =
                ToolManifest::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(
                agentio_tools::frontmatter_violations(&manifest.contract.to_frontmatter()),
                []
            );
            assert_eq!(manifest.contract, contract);
            assert_eq!(ToolManifest::parse(&manifest.render()).unwrap(), manifest);
        }
    }

    #[test]
    fn the_example_tools_satisfy_their_contract_examples() {
        assert_eq!(agentio_tools::assert_examples(KbSearch), 1);
        // Removed on drop; the example creates the workspace itself.
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("workspace");
        let ran = agentio_tools::assert_examples_with_context(
            AppendNoteTool,
            json!({ "workspace_root": workspace }),
        );
        assert_eq!(ran, 1);
        // The example really wrote the note it describes.
        assert_eq!(
            std::fs::read_to_string(workspace.join("notes/standup.md")).unwrap(),
            "Shipped the importer.\n"
        );
        assert_eq!(agentio_tools::assert_examples(RenderReportTool), 1);
    }
}

#[test]
fn two_majors_of_one_id_are_distinct_tools() {
    let mut registry = ToolRegistry::new();
    let inputs = json!({ "type": "object" });
    let mut v2 = plugin_contract("js.echo", inputs.clone());
    v2.version = "2.0.0".into();
    registry
        .register_plugin(Arc::new(Plugin {
            contract: plugin_contract("js.echo", inputs.clone()),
        }))
        .unwrap();
    registry
        .register_plugin(Arc::new(Plugin { contract: v2 }))
        .unwrap();
    // Both majors are addressable; the bare id is ambiguous and says how to choose.
    assert_eq!(registry.contract("js.echo@1").unwrap().version, "1.0.0");
    assert_eq!(registry.contract("js.echo@2").unwrap().version, "2.0.0");
    let err = block_on(registry.call("js.echo", json!({}))).unwrap_err();
    assert_eq!(err.code(), &ErrorCode::NoRoute);
    assert_eq!(
        err.message(),
        "several versions of `js.echo` are registered; call one of js.echo@1, js.echo@2"
    );
    assert!(block_on(registry.call("js.echo@2", json!({}))).is_ok());
    // The same identity twice is a duplicate.
    let err = registry
        .register_plugin(Arc::new(Plugin {
            contract: plugin_contract("js.echo", inputs),
        }))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("`js.echo@1` is already registered"),
        "{err}"
    );
}

#[test]
fn a_contract_never_carries_an_execute_field() {
    let mut frontmatter = plugin_contract("js.echo", json!({ "type": "object" })).to_frontmatter();
    frontmatter["execute"] = json!("./index.ts#run");
    let err = ToolContract::from_frontmatter(frontmatter).unwrap_err();
    assert!(err.to_string().contains("unknown field `execute`"), "{err}");
}

#[test]
fn unknown_metadata_keys_are_tolerated_and_kept() {
    let mut contract = plugin_contract("js.meta", json!({ "type": "object" }));
    contract.metadata.insert(
        "mastra".into(),
        json!({ "hint": 1, "nested": { "x": [1, 2] } }),
    );
    contract.context_schema = Some(json!({ "type": "object", "required": ["tenant"] }));
    let text = ToolManifest::from_contract(contract.clone()).render();
    let parsed = ToolManifest::parse(&text).unwrap();
    assert_eq!(parsed.contract, contract);
    assert_eq!(
        agentio_tools::frontmatter_violations(&contract.to_frontmatter()),
        []
    );
    ToolRegistry::new()
        .register_plugin(Arc::new(Plugin { contract }))
        .unwrap();
}

#[test]
fn registration_is_audited_with_the_canonical_json_schema() {
    let audit = Arc::new(AuditLog::default());
    let mut registry = ToolRegistry::new().with_audit_sink(audit.clone());
    registry.register(EchoTool).unwrap();
    let registered = audit.registered();
    assert_eq!(registered.len(), 1);
    assert_eq!(registered[0].inputs, *Ask::input_schema());
    assert_eq!(
        registered[0].inputs["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
}

#[test]
fn define_tool_checks_a_hand_built_contract() {
    let mut contract = plugin_contract("js.define", json!({ "type": "object" }));
    contract.mutates = vec!["workspace:/out".into()];
    contract.approval = Approval::Auto;
    let err = agentio_tools::define_tool(contract.clone()).unwrap_err();
    assert_eq!(err.problems[0].pointer, "/mutates");
    contract.approval = Approval::default_for(&contract.mutates);
    assert_eq!(
        agentio_tools::define_tool(contract).unwrap().approval,
        Approval::OnMutate
    );
}

/// The host validates before dispatch, so a body has nothing left to re-validate: a refused
/// input never reaches it, and an accepted one reaches it once, as validated.
#[test]
fn a_body_never_sees_an_input_the_host_refused() {
    struct Counting(Arc<AtomicU32>);
    impl ToolPlugin for Counting {
        fn tool_contract(&self) -> ToolContract {
            plugin_contract(
                "test.counting",
                json!({ "type": "object", "properties": { "n": { "type": "integer", "maximum": 5 } },
                        "required": ["n"], "additionalProperties": false }),
            )
        }
        fn execute<'a>(
            &'a self,
            input: Value,
            _ctx: &'a ToolContext,
        ) -> BoxFuture<'a, Result<Value, ToolError>> {
            self.0.fetch_add(1, Ordering::SeqCst);
            // Whatever reaches the body already satisfies the schema.
            assert!(input["n"].as_i64().is_some_and(|n| n <= 5), "{input}");
            Box::pin(async move { Ok(json!({ "echo": input })) })
        }
    }
    let runs = counter();
    let mut registry = ToolRegistry::new();
    registry
        .register_plugin(Arc::new(Counting(runs.clone())))
        .unwrap();
    for bad in [
        json!({}),
        json!({ "n": 6 }),
        json!({ "n": "1" }),
        json!({ "n": 1, "x": 0 }),
    ] {
        let err = block_on(registry.call("test.counting", bad)).unwrap_err();
        assert_eq!(err.code(), &ErrorCode::InputInvalid);
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    block_on(registry.call("test.counting", json!({ "n": 5 }))).unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

/// Notes, but tries to write outside `notes/` when asked.
#[tool(id = "test.notes-writer", mutates = ["workspace:/notes"], approval = "on-mutate")]
async fn notes_writer(input: Ask, ctx: &ToolContext) -> Result<Answer, ToolError> {
    let target = if input.n == 0 {
        "workspace:/notes/a.md"
    } else {
        "workspace:/etc/passwd"
    };
    ctx.authorize_mutation(target)?;
    Ok(Answer { value: input.n })
}

/// AIP-14: an undeclared write is refused at run time, through the registry: the body's
/// check against the contract's `mutates` fails with `unauthorised`.
#[test]
fn an_undeclared_write_is_refused_at_run_time_through_the_registry() {
    let approve = |_: &ApprovalRequest| ApprovalDecision::Approve;
    let registry = tool_registry![NotesWriterTool]
        .unwrap()
        .with_approver(Arc::new(approve));
    assert_eq!(
        block_on(registry.call("test.notes-writer", json!({ "n": 0 }))).unwrap(),
        json!({ "value": 0 })
    );
    let envelope = block_on(registry.call_envelope(
        "test.notes-writer",
        json!({ "n": 1 }),
        CallOptions::default(),
    ));
    assert_eq!(
        envelope,
        json!({ "ok": false, "error": { "code": "unauthorised", "retryable": false,
            "message": "tool `test.notes-writer` did not declare that it modifies `workspace:/etc/passwd`" } })
    );
}

/// `approval: auto` runs without asking by default (AIP-14), but a host policy that wants to
/// see every call can: the approver is then asked for auto calls too, and its no holds.
#[test]
fn a_host_can_have_auto_calls_shown_to_its_approver() {
    let asked = counter();
    let seen = asked.clone();
    let deny_auto = move |request: &ApprovalRequest| {
        seen.fetch_add(1, Ordering::SeqCst);
        assert_eq!(request.approval, Approval::Auto);
        ApprovalDecision::Deny {
            reason: "policy: read-only hours".into(),
        }
    };
    // By default an auto tool runs and the approver is not asked.
    let registry = tool_registry![EchoTool]
        .unwrap()
        .with_approver(Arc::new(deny_auto.clone()));
    assert!(block_on(registry.call("test.echo", json!({ "n": 1 }))).is_ok());
    assert_eq!(asked.load(Ordering::SeqCst), 0);
    // Asked to review every call, it is asked, and a no stops the call.
    let registry = registry.with_approval_of_every_call(true);
    let err = block_on(registry.call("test.echo", json!({ "n": 1 }))).unwrap_err();
    assert_eq!(err.code(), &ErrorCode::ApprovalDenied);
    assert_eq!(
        err.message(),
        "the call to `test.echo` was not approved: policy: read-only hours"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    // With no approver at all, reviewing every call denies every call.
    let registry = tool_registry![EchoTool]
        .unwrap()
        .with_approval_of_every_call(true);
    let err = block_on(registry.call("test.echo", json!({ "n": 1 }))).unwrap_err();
    assert_eq!(err.code(), &ErrorCode::ApprovalDenied);
}

/// How to reach someone.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Method {
    Phone,
    Email,
}

/// Rules serde cannot see, added to the derived schema with `#[schemars(extend(...))]`: a
/// phone or an email at least, and the one the method names.
#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentInput)]
#[serde(deny_unknown_fields)]
#[schemars(extend(
    "allOf" = [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
    "if" = { "properties": { "method": { "const": "phone" } }, "required": ["method"] },
    "then" = { "required": ["phone"] },
    "else" = { "required": ["email"] },
))]
struct Reach {
    method: Option<Method>,
    phone: Option<String>,
    email: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentOutput)]
struct Reached {
    by: String,
}

/// Says how it would reach someone.
#[tool(id = "test.reach")]
async fn reach(input: Reach) -> Result<Reached, ToolError> {
    let by = match input.method {
        Some(Method::Phone) => input.phone,
        _ => input.email,
    };
    Ok(Reached {
        by: by.unwrap_or_default(),
    })
}

#[test]
fn a_typed_tool_s_composition_and_conditional_rules_are_checked_before_its_body_runs() {
    let mut registry = ToolRegistry::new();
    registry.register(ReachTool).unwrap();
    // The rules are published as written, beside the derived structure.
    let published = registry.tool_input_schema("test.reach").unwrap();
    for keyword in ["allOf", "if", "then", "else"] {
        assert!(published.get(keyword).is_some(), "{keyword}: {published}");
    }
    let call = |input: Value| block_on(registry.call("test.reach", input));
    assert_eq!(
        call(json!({ "method": "phone", "phone": "555" })).unwrap(),
        json!({ "by": "555" })
    );
    assert_eq!(
        call(json!({ "email": "a@b.c" })).unwrap(),
        json!({ "by": "a@b.c" })
    );
    // Each input serde decodes but a rule refuses: neither a phone nor an email (`anyOf`),
    // the phone method without a phone (`then`), a phone without the phone method (`else`).
    for (input, keyword) in [
        (json!({}), "required"),
        (json!({ "method": "phone", "email": "a@b.c" }), "required"),
        (json!({ "phone": "555" }), "required"),
    ] {
        let err = call(input.clone()).unwrap_err();
        assert_eq!(err.code(), &ErrorCode::InputInvalid, "{input}");
        assert!(
            err.violations().iter().any(|v| v.keyword == keyword),
            "{input}: {:?}",
            err.violations()
        );
    }
}
