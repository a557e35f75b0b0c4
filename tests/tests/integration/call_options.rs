//! What a transport brings with a call: cancellation, progress, and an approver of its own.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentio_core::{AgentInput, AgentOutput, ErrorCode};
use agentio_tools::{
    ApprovalDecision, ApprovalOutcome, ApprovalRequest, AuditLog, CallOptions, Cancellation,
    Progress, ToolContext, ToolError, ToolRegistry, TypedTool, tool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentInput)]
struct Steps {
    steps: u32,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentOutput)]
struct Done {
    steps: u32,
}

/// Works `steps` × 10 ms, reporting progress after each step; marks `finished` at the end.
struct Worker {
    finished: Arc<AtomicBool>,
    started: Arc<tokio::sync::Notify>,
    done_steps: Arc<AtomicU32>,
}

/// Works through its steps, reporting each.
#[tool(id = "test.worker", timeout_ms = 60000)]
impl TypedTool for Worker {
    type Input = Steps;
    type Output = Done;

    async fn execute_typed(&self, input: Steps, ctx: &ToolContext) -> Result<Done, ToolError> {
        self.started.notify_one();
        for step in 1..=input.steps {
            tokio::time::sleep(Duration::from_millis(10)).await;
            self.done_steps.fetch_add(1, Ordering::SeqCst);
            ctx.report_progress(
                Progress::new(f64::from(step))
                    .with_total(f64::from(input.steps))
                    .with_message(format!("step {step}")),
            );
        }
        self.finished.store(true, Ordering::SeqCst);
        Ok(Done { steps: input.steps })
    }
}

/// Needs a yes for every call.
#[tool(id = "test.gated", approval = "always", mutates = ["external:ledger"])]
async fn gated(input: Steps) -> Result<Done, ToolError> {
    Ok(Done { steps: input.steps })
}

fn worker() -> (Worker, Arc<AtomicBool>, Arc<tokio::sync::Notify>) {
    let (worker, finished, started, _) = counted_worker();
    (worker, finished, started)
}

fn counted_worker() -> (
    Worker,
    Arc<AtomicBool>,
    Arc<tokio::sync::Notify>,
    Arc<AtomicU32>,
) {
    let finished = Arc::new(AtomicBool::new(false));
    let started = Arc::new(tokio::sync::Notify::new());
    let done_steps = Arc::new(AtomicU32::new(0));
    (
        Worker {
            finished: finished.clone(),
            started: started.clone(),
            done_steps: done_steps.clone(),
        },
        finished,
        started,
        done_steps,
    )
}

fn multi_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .expect("a Tokio runtime")
}

#[test]
fn a_cancelled_call_stops_its_body_answers_cancelled_and_is_audited() {
    for runtime in [
        multi_thread(),
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap(),
    ] {
        let (tool, finished, started, done_steps) = counted_worker();
        let audit = Arc::new(AuditLog::default());
        let mut registry = ToolRegistry::new().with_audit_sink(audit.clone());
        registry.register(tool).unwrap();
        let registry = Arc::new(registry);
        let cancel = Cancellation::new();
        let options = CallOptions::default().with_cancellation(cancel.clone());
        let err = runtime.block_on(async {
            let call = {
                let registry = registry.clone();
                tokio::spawn(async move {
                    registry
                        .call_with("test.worker", json!({ "steps": 200 }), options)
                        .await
                })
            };
            tokio::time::timeout(Duration::from_secs(10), started.notified())
                .await
                .expect("the body starts within 10 s");
            cancel.cancel();
            let err = call.await.unwrap().unwrap_err();
            // A body that kept running (its task not aborted) would go on taking steps.
            let at_cancel = done_steps.load(Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert!(
                done_steps.load(Ordering::SeqCst) <= at_cancel + 1,
                "the body kept working after the cancellation"
            );
            err
        });
        assert_eq!(err.code(), &ErrorCode::Cancelled);
        assert!(!err.is_retryable());
        assert!(
            !finished.load(Ordering::SeqCst),
            "the body ran on after the cancellation"
        );
        let records = audit.records();
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].error_code.as_deref(), Some("cancelled"));
        assert!(!records[0].ok);
    }
}

/// Without an audit sink, on a current-thread runtime, a one-attempt call runs in the call's
/// own future (not through the boxed machinery the audited call above takes): cancelled while
/// its body waits, it answers `cancelled` and its body stops.
#[test]
fn a_plain_call_cancelled_while_its_body_waits_answers_cancelled() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let (tool, finished, started, done_steps) = counted_worker();
    let mut registry = ToolRegistry::new();
    registry.register(tool).unwrap();
    let cancel = Cancellation::new();
    let options = CallOptions::default().with_cancellation(cancel.clone());
    let err = runtime.block_on(async {
        let call = registry.call_with("test.worker", json!({ "steps": 200 }), options);
        let cancel_when_started = async {
            tokio::time::timeout(Duration::from_secs(10), started.notified())
                .await
                .expect("the body starts within 10 s");
            cancel.cancel();
            std::future::pending::<()>().await
        };
        tokio::select! {
            result = call => result.unwrap_err(),
            () = cancel_when_started => unreachable!(),
        }
    });
    assert_eq!(err.code(), &ErrorCode::Cancelled);
    assert!(!err.is_retryable());
    assert!(!finished.load(Ordering::SeqCst), "the body ran to its end");
    assert!(done_steps.load(Ordering::SeqCst) < 200);
}

#[test]
fn a_call_cancelled_before_it_starts_never_runs_the_body() {
    let (tool, finished, _) = worker();
    let mut registry = ToolRegistry::new();
    registry.register(tool).unwrap();
    let cancel = Cancellation::new();
    cancel.cancel();
    let options = CallOptions::default().with_cancellation(cancel);
    let err = multi_thread()
        .block_on(registry.call_with("test.worker", json!({ "steps": 1 }), options))
        .unwrap_err();
    assert_eq!(err.code(), &ErrorCode::Cancelled);
    assert!(!finished.load(Ordering::SeqCst));
}

#[test]
fn a_call_cancelled_before_it_starts_is_cancelled_whatever_its_input() {
    // `call_with` checks the input when it is called, but a cancellation that has already
    // fired still decides the answer, audited or not.
    for audited in [false, true] {
        let (tool, finished, _) = worker();
        let audit = Arc::new(AuditLog::default());
        let mut registry = if audited {
            ToolRegistry::new().with_audit_sink(audit.clone())
        } else {
            ToolRegistry::new()
        };
        registry.register(tool).unwrap();
        let cancel = Cancellation::new();
        cancel.cancel();
        let options = CallOptions::default().with_cancellation(cancel);
        let err = multi_thread()
            .block_on(registry.call_with("test.worker", json!({ "steps": "many" }), options))
            .unwrap_err();
        assert_eq!(err.code(), &ErrorCode::Cancelled, "audited: {audited}");
        assert!(!finished.load(Ordering::SeqCst));
        assert_eq!(audit.records().len(), usize::from(audited));
        // Without the cancellation the same input is refused as invalid.
        let err = multi_thread()
            .block_on(registry.call_with(
                "test.worker",
                json!({ "steps": "many" }),
                CallOptions::default(),
            ))
            .unwrap_err();
        assert_eq!(err.code(), &ErrorCode::InputInvalid);
    }
}

#[test]
fn an_uncancelled_call_with_a_cancellation_finishes_normally() {
    let (tool, finished, _) = worker();
    let mut registry = ToolRegistry::new();
    registry.register(tool).unwrap();
    let options = CallOptions::default().with_cancellation(Cancellation::new());
    let value = multi_thread()
        .block_on(registry.call_with("test.worker", json!({ "steps": 2 }), options))
        .unwrap();
    assert_eq!(value, json!({ "steps": 2 }));
    assert!(finished.load(Ordering::SeqCst));
}

#[test]
fn progress_reports_reach_the_caller_in_order() {
    let (tool, _, _) = worker();
    let mut registry = ToolRegistry::new();
    registry.register(tool).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let options = CallOptions::default().with_progress(move |p: Progress| {
        sink.lock()
            .unwrap()
            .push((p.progress, p.total, p.message.unwrap_or_default()));
    });
    multi_thread()
        .block_on(registry.call_with("test.worker", json!({ "steps": 3 }), options))
        .unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            (1.0, Some(3.0), "step 1".to_owned()),
            (2.0, Some(3.0), "step 2".to_owned()),
            (3.0, Some(3.0), "step 3".to_owned()),
        ]
    );
}

#[test]
fn a_per_call_approver_decides_instead_of_the_registry_approver() {
    let asked = Arc::new(AtomicU32::new(0));
    let audit = Arc::new(AuditLog::default());
    let mut registry = ToolRegistry::new()
        .with_audit_sink(audit.clone())
        .with_approver(Arc::new(|_: &ApprovalRequest| ApprovalDecision::Deny {
            reason: "the registry says no".into(),
        }));
    registry.register(GatedTool).unwrap();
    let runtime = multi_thread();

    // Without a per-call approver the registry's decides.
    let err = runtime
        .block_on(registry.call("test.gated", json!({ "steps": 1 })))
        .unwrap_err();
    assert_eq!(err.code(), &ErrorCode::ApprovalDenied);
    assert!(err.message().contains("the registry says no"), "{err}");

    // With one, it alone decides, and it sees the call.
    let counter = asked.clone();
    let options = CallOptions::default().with_approver(Arc::new(move |r: &ApprovalRequest| {
        counter.fetch_add(1, Ordering::SeqCst);
        assert_eq!(r.tool_id, "test.gated");
        assert_eq!(r.input, json!({ "steps": 4 }));
        ApprovalDecision::Approve
    }));
    let value = runtime
        .block_on(registry.call_with("test.gated", json!({ "steps": 4 }), options))
        .unwrap();
    assert_eq!(value, json!({ "steps": 4 }));
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    let outcomes: Vec<ApprovalOutcome> = audit.records().iter().map(|r| r.approval).collect();
    assert_eq!(
        outcomes,
        vec![ApprovalOutcome::Denied, ApprovalOutcome::Approved]
    );
}

#[test]
fn a_body_sees_the_cancellation_through_its_context() {
    let cancel = Cancellation::new();
    let ctx = ToolContext::new("run", "t").with_cancellation(cancel.clone());
    assert!(!ctx.is_cancelled());
    cancel.cancel();
    assert!(ctx.is_cancelled());
    assert!(!ToolContext::new("run", "t").is_cancelled());
}

#[test]
fn call_options_say_what_they_carry_in_debug_output() {
    let reporter = agentio_tools::ProgressReporter::new(|_| {});
    assert_eq!(format!("{reporter:?}"), "ProgressReporter");
    let cancel = Cancellation::new();
    assert_eq!(format!("{cancel:?}"), "Cancellation { cancelled: false }");
    cancel.cancel();
    assert_eq!(format!("{cancel:?}"), "Cancellation { cancelled: true }");
    let options = CallOptions::default()
        .with_run_id("r")
        .with_context(json!({ "tenant": "acme" }))
        .with_progress(|_| {})
        .with_cancellation(cancel);
    assert_eq!(
        format!("{options:?}"),
        "CallOptions { run_id: Some(\"r\"), context: Object {\"tenant\": String(\"acme\")}, progress: true, cancellation: Some(Cancellation { cancelled: true }), approver: false, caller: None, content: None, client: false }"
    );
    let mut options = options;
    let collector = agentio_tools::content::ContentCollector::new();
    options.content = Some(collector);
    assert!(format!("{options:?}").contains("content: Some(ContentCollector { blocks: 0 })"));
}

/// Says which run it is in and what context it was given.
#[tool(id = "test.whoami")]
async fn whoami(_input: Steps, ctx: &ToolContext) -> Result<Seen, ToolError> {
    Ok(Seen {
        run_id: ctx.run_id().to_owned(),
        context: ctx.raw_context().clone(),
    })
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentOutput)]
struct Seen {
    run_id: String,
    context: serde_json::Value,
}

#[test]
fn the_run_id_and_context_given_reach_the_body() {
    let mut registry = ToolRegistry::new();
    registry.register(WhoamiTool).unwrap();
    let options = CallOptions::default()
        .with_run_id("run-given")
        .with_context(json!({ "tenant": "acme" }));
    let seen = multi_thread()
        .block_on(registry.call_with("test.whoami", json!({ "steps": 1 }), options))
        .unwrap();
    assert_eq!(
        seen,
        json!({ "run_id": "run-given", "context": { "tenant": "acme" } })
    );
}

#[test]
fn a_core_tool_describes_itself() {
    use agentio_core::{AgentContext, AgentCore, AgentError};
    struct Counter;
    impl AgentCore for Counter {
        type Input = Steps;
        type Output = Done;
        fn core_type(&self) -> &str {
            "counter"
        }
        async fn run_turn(&mut self, s: Steps, _: &mut AgentContext) -> Result<Done, AgentError> {
            Ok(Done { steps: s.steps })
        }
    }
    let tool = agentio_tools::CoreTool::new("agents.counter", "1.0.0", "Counts.", Counter).unwrap();
    assert_eq!(
        format!("{tool:?}"),
        "CoreTool { id: \"agents.counter\", core: \"counter\" }"
    );
}

/// Notes the run id of each attempt, failing retryably until the third.
struct RunNoter {
    seen: Arc<Mutex<Vec<String>>>,
}

/// Notes its run id; fails twice, then answers it.
#[tool(
    id = "test.run-noter",
    idempotent,
    approval = "always",
    retry(max_attempts = 3, backoff = "fixed", initial_ms = 1)
)]
impl TypedTool for RunNoter {
    type Input = Steps;
    type Output = Seen;

    async fn execute_typed(&self, _input: Steps, ctx: &ToolContext) -> Result<Seen, ToolError> {
        // Read twice: the id does not change once read.
        let first = ctx.run_id().to_owned();
        assert_eq!(ctx.run_id(), first);
        self.seen.lock().unwrap().push(first.clone());
        if ctx.attempt() < 3 {
            return Err(ToolError::new(ErrorCode::UpstreamError, "not yet"));
        }
        Ok(Seen {
            run_id: first,
            context: serde_json::Value::Null,
        })
    }
}

/// A call given no run id gets a fresh one, the same for every attempt of its body, its
/// approval request and its audit record, and another for the next call; the common call's
/// id (one attempt, no approval) is one too.
#[test]
fn a_fresh_run_id_is_one_id_for_the_body_its_retries_the_approver_and_the_audit() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let audit = Arc::new(AuditLog::default());
    let asked_by = asked.clone();
    let mut registry = ToolRegistry::new()
        .with_approver(Arc::new(move |request: &ApprovalRequest| {
            asked_by.lock().unwrap().push(request.run_id.clone());
            ApprovalDecision::Approve
        }))
        .with_audit_sink(audit.clone());
    registry.register(RunNoter { seen: seen.clone() }).unwrap();
    registry.register(WhoamiTool).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let mut ids = Vec::new();
    for _ in 0..2 {
        let out = runtime
            .block_on(registry.call("test.run-noter", json!({ "steps": 1 })))
            .unwrap();
        let id = out["run_id"].as_str().unwrap().to_owned();
        assert!(id.starts_with("run-"), "{id}");
        ids.push(id);
    }
    assert_ne!(ids[0], ids[1]);
    let attempts: Vec<String> = ids
        .iter()
        .flat_map(|id| [id.clone(), id.clone(), id.clone()])
        .collect();
    assert_eq!(*seen.lock().unwrap(), attempts);
    assert_eq!(*asked.lock().unwrap(), ids);
    let recorded: Vec<String> = audit.records().iter().map(|r| r.run_id.clone()).collect();
    assert_eq!(recorded, ids);

    // The common call, unaudited: a fresh id of the same form, not the last call's.
    let plain = tool_registry_of_whoami();
    let out = runtime
        .block_on(plain.call("test.whoami", json!({ "steps": 1 })))
        .unwrap();
    let id = out["run_id"].as_str().unwrap();
    assert!(
        id.starts_with("run-") && !ids.iter().any(|seen| seen == id),
        "{id}"
    );
}

fn tool_registry_of_whoami() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry.register(WhoamiTool).unwrap();
    registry
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentOutput)]
struct Voiced {
    attached: bool,
    logged: bool,
}

/// Attaches a text block and logs a line; says which of the two the host took.
#[tool(id = "test.voiced")]
async fn voiced(_input: Steps, ctx: &ToolContext) -> Result<Voiced, ToolError> {
    Ok(Voiced {
        attached: ctx.attach(agentio_tools::content::Content::text("a note")),
        logged: ctx.log(agentio_tools::voice::LogLevel::Info, "a line"),
    })
}

/// A client that hears every log line and answers no question.
struct Listener(Mutex<Vec<serde_json::Value>>);

impl agentio_tools::voice::ClientPeer for Listener {
    fn log(
        &self,
        _level: agentio_tools::voice::LogLevel,
        _logger: Option<&str>,
        data: serde_json::Value,
    ) -> bool {
        self.0.lock().unwrap().push(data);
        true
    }

    fn ask<'a>(
        &'a self,
        _questions: &'a agentio_tools::voice::Questions,
    ) -> agentio_core::BoxFuture<'a, Result<agentio_tools::voice::Answers, ToolError>> {
        Box::pin(async { Err(ToolError::internal("no questions here")) })
    }
}

/// A host may collect a call's content without a client to talk to, or give it a client and
/// no collector: each reaches the body alone.
#[test]
fn content_and_a_client_each_reach_the_body_without_the_other() {
    let mut registry = ToolRegistry::new();
    registry.register(VoicedTool).unwrap();
    let runtime = multi_thread();
    let collector = agentio_tools::content::ContentCollector::new();
    let mut options = CallOptions::default().with_run_id("content-only");
    options.content = Some(collector.clone());
    let said = runtime
        .block_on(registry.call_with("test.voiced", json!({ "steps": 1 }), options))
        .unwrap();
    assert_eq!(said, json!({ "attached": true, "logged": false }));
    let blocks = collector.take();
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0].kind(), "text");

    let listener = Arc::new(Listener(Mutex::new(Vec::new())));
    let mut options = CallOptions::default().with_run_id("client-only");
    options.client = Some(listener.clone());
    let said = runtime
        .block_on(registry.call_with("test.voiced", json!({ "steps": 1 }), options))
        .unwrap();
    assert_eq!(said, json!({ "attached": false, "logged": true }));
    assert_eq!(*listener.0.lock().unwrap(), vec![json!("a line")]);
}
