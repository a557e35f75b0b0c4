//! `ToolRegistry::call_json`: the call with its output answered as JSON text. Whatever the
//! call (a typed tool written straight to text, a plugin checked as a `Value`, a retry, an
//! approval, an audit, files, either runtime), the text is the text of `call_with`'s output and
//! an error is `call_with`'s error.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use agentio_core::files::{FsRoot, Workspace};
use agentio_core::{AgentInput, AgentOutput, BoxFuture, define_io};
use agentio_tools::{
    ApprovalDecision, ApprovalRequest, AuditRecord, AuditSink, CallOptions, ToolContext,
    ToolContract, ToolError, ToolPlugin, ToolRegistry, tool,
};
use serde_json::{Value, json};

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput)]
struct Query {
    #[schemars(range(min = 1, max = 10))]
    n: u32,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentOutput)]
struct Hits {
    #[schemars(length(max = 3))]
    hits: Vec<String>,
    score: f64,
}

/// Finds `n` hits; more than three break its own output schema.
#[tool(id = "kb.find")]
async fn find(query: Query) -> Result<Hits, ToolError> {
    Ok(Hits {
        hits: (0..query.n).map(|i| format!("doc \"{i}\"")).collect(),
        score: 0.5,
    })
}

static FLAKY_RUNS: AtomicU32 = AtomicU32::new(0);

/// Fails its first attempt of each pair (retryable), then answers.
#[tool(
    id = "kb.flaky",
    idempotent,
    retry(max_attempts = 2, backoff = "fixed", initial_ms = 1)
)]
async fn flaky(query: Query) -> Result<Hits, ToolError> {
    if FLAKY_RUNS.fetch_add(1, Ordering::SeqCst).is_multiple_of(2) {
        return Err(
            ToolError::new(agentio_core::ErrorCode::RateLimited, "try again").with_retryable(true),
        );
    }
    Ok(Hits {
        hits: vec![format!("retried {}", query.n)],
        score: 1.0,
    })
}

/// Deletes (gated: it mutates).
#[tool(id = "kb.drop", mutates = ["database:kb"], approval = "always")]
async fn drop_hits(query: Query) -> Result<Hits, ToolError> {
    Ok(Hits {
        hits: vec![format!("dropped {}", query.n)],
        score: 0.0,
    })
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput)]
struct Copy {
    #[serde(
        rename = "_workflowFsRoot",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    root: Option<FsRoot>,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentOutput)]
struct Copied {
    bytes: u64,
}

/// Copies a note.
#[define_io(
    inputs = Copy,
    outputs = Copied,
    inputs_files = { note => { path = "notes/today.md", mode = "ro" } },
    outputs_files = { copy => { path = "archive/<runId>.md", mode = "rw" } },
)]
#[tool(id = "notes.archive", mutates = ["workspace:/archive"])]
async fn archive(input: Copy) -> Result<Copied, ToolError> {
    let root = input
        .root
        .ok_or_else(|| ToolError::internal("no scratch root"))?;
    let bytes = std::fs::copy(root.file("note"), root.file("copy"))
        .map_err(|e| ToolError::internal(e.to_string()))?;
    Ok(Copied { bytes })
}

/// A tool whose body is not Rust: its output is checked as a `Value` by the registry.
struct Echo;

impl ToolPlugin for Echo {
    fn tool_contract(&self) -> ToolContract {
        ToolContract::new(
            "js.echo",
            "1.0.0",
            "Echoes a number below 5.",
            json!({ "type": "object", "properties": { "n": { "type": "integer" } }, "required": ["n"] }),
            json!({ "type": "object", "properties": { "n": { "type": "integer", "maximum": 4 } }, "required": ["n"] }),
        )
    }

    fn execute<'a>(
        &'a self,
        input: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move { Ok(json!({ "n": input["n"] })) })
    }
}

#[derive(Default)]
struct Records(Mutex<Vec<AuditRecord>>);

impl AuditSink for Records {
    fn record(&self, record: AuditRecord) {
        self.0.lock().unwrap().push(record);
    }
}

fn runtimes() -> [tokio::runtime::Runtime; 2] {
    [
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap(),
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap(),
    ]
}

/// `call_json`'s answer is `call_with`'s output as text, or the same error.
fn assert_same(
    runtime: &tokio::runtime::Runtime,
    registry: &ToolRegistry,
    tool: &str,
    input: Value,
) -> Result<Value, String> {
    let value = runtime.block_on(registry.call_with(tool, input.clone(), CallOptions::default()));
    let text = runtime.block_on(registry.call_json(tool, &input, CallOptions::default()));
    match (value, text) {
        (Ok(value), Ok(text)) => {
            assert_eq!(text, value.to_string(), "{tool} on {input}");
            Ok(value)
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.to_envelope(), b.to_envelope(), "{tool} on {input}");
            Err(a.code().as_str().to_owned())
        }
        (value, text) => panic!("{tool} on {input}: {value:?} but {text:?}"),
    }
}

#[test]
fn the_text_is_call_withs_output_and_an_error_is_call_withs_error() {
    for runtime in &runtimes() {
        let mut registry = ToolRegistry::new();
        registry.register(FindTool).unwrap();
        registry.register_plugin(Arc::new(Echo)).unwrap();
        // A typed tool, written straight to text (quotes escaped as `to_string` escapes them).
        let found = assert_same(runtime, &registry, "kb.find", json!({ "n": 2 })).unwrap();
        assert_eq!(found["hits"][1], "doc \"1\"");
        // Its input refused, its own output refused.
        assert_eq!(
            assert_same(runtime, &registry, "kb.find", json!({ "n": 0 })),
            Err("input_invalid".into())
        );
        assert_eq!(
            assert_same(runtime, &registry, "kb.find", json!({ "n": 4 })),
            Err("output_invalid".into())
        );
        // A plugin: its output is checked as a value, then written.
        assert_eq!(
            assert_same(runtime, &registry, "js.echo", json!({ "n": 3 })),
            Ok(json!({ "n": 3 }))
        );
        assert_eq!(
            assert_same(runtime, &registry, "js.echo", json!({ "n": 7 })),
            Err("output_invalid".into())
        );
        assert_eq!(
            assert_same(runtime, &registry, "js.echo", json!({ "n": "x" })),
            Err("input_invalid".into())
        );
        // No such tool; a null input is an empty object.
        assert_eq!(
            assert_same(runtime, &registry, "kb.lost", json!({})),
            Err("not_found".into())
        );
        assert_eq!(
            assert_same(runtime, &registry, "kb.find", Value::Null),
            Err("input_invalid".into())
        );
    }
}

#[test]
fn a_retry_an_approval_and_an_audit_see_the_borrowed_input() {
    for runtime in &runtimes() {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let seen = asked.clone();
        let approve = move |request: &ApprovalRequest| {
            seen.lock().unwrap().push(request.input.clone());
            if request.input["n"] == 1 {
                ApprovalDecision::Approve
            } else {
                ApprovalDecision::Deny {
                    reason: "not that one".into(),
                }
            }
        };
        let audit = Arc::new(Records::default());
        let mut registry = ToolRegistry::new()
            .with_approver(Arc::new(approve))
            .with_audit_sink(audit.clone());
        registry.register(FlakyTool).unwrap();
        registry.register(DropHitsTool).unwrap();
        let input = json!({ "n": 1 });
        // The first attempt fails; the retry runs on the input, kept for it.
        let text = runtime
            .block_on(registry.call_json("kb.flaky", &input, CallOptions::default()))
            .unwrap();
        assert_eq!(text, r#"{"hits":["retried 1"],"score":1.0}"#);
        // The approver is shown the input, and decides.
        let text = runtime
            .block_on(registry.call_json("kb.drop", &input, CallOptions::default()))
            .unwrap();
        assert_eq!(text, r#"{"hits":["dropped 1"],"score":0.0}"#);
        let denied = runtime
            .block_on(registry.call_json("kb.drop", &json!({ "n": 2 }), CallOptions::default()))
            .unwrap_err();
        assert_eq!(denied.code().as_str(), "approval_denied");
        assert_eq!(
            *asked.lock().unwrap(),
            [json!({ "n": 1 }), json!({ "n": 2 })]
        );
        // Each call recorded, with its attempts.
        let records = audit.0.lock().unwrap();
        let summary: Vec<(&str, u32, bool)> = records
            .iter()
            .map(|r| (r.tool_id.as_str(), r.attempts, r.ok))
            .collect();
        assert_eq!(
            summary,
            [
                ("kb.flaky", 2, true),
                ("kb.drop", 1, true),
                ("kb.drop", 0, false)
            ]
        );
        assert_eq!(records[0].input_keys, ["n"]);
    }
}

#[test]
fn a_tool_with_files_answers_its_output_as_text() {
    for runtime in &runtimes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("notes")).unwrap();
        std::fs::write(dir.path().join("notes/today.md"), "# Today").unwrap();
        // The contract mutates the workspace: each call is approved first.
        let mut registry = ToolRegistry::new()
            .with_workspace(Workspace::open(dir.path()).unwrap())
            .with_approver(Arc::new(|_: &ApprovalRequest| ApprovalDecision::Approve));
        registry.register(ArchiveTool).unwrap();
        let options = CallOptions::default().with_run_id("r7");
        let text = runtime
            .block_on(registry.call_json("notes.archive", &json!({}), options))
            .unwrap();
        assert_eq!(text, r#"{"bytes":7}"#);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("archive/r7.md")).unwrap(),
            "# Today"
        );
    }
}
