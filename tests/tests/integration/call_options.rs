//! What a transport brings with a call: cancellation, progress, and an approver of its own.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use io_core::{AgentInput, AgentOutput, ErrorCode};
use io_typed_tool::{
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
    let finished = Arc::new(AtomicBool::new(false));
    let started = Arc::new(tokio::sync::Notify::new());
    (
        Worker {
            finished: finished.clone(),
            started: started.clone(),
        },
        finished,
        started,
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
        let (tool, finished, started) = worker();
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
            started.notified().await;
            cancel.cancel();
            let err = call.await.unwrap().unwrap_err();
            // Long enough for the remaining 190+ steps to have marked `finished` had the body
            // kept running.
            tokio::time::sleep(Duration::from_millis(100)).await;
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
