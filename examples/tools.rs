//! Tools under their contracts: a read-only search, a workspace write that needs approval, and
//! a slow renderer that times out, all called through one `ToolRegistry`.
//!
//! Run it with `cargo run --example tools`.

use std::sync::Arc;

use agentio::serde_json::{Value, json};
use agentio::tools::{
    ApprovalDecision, ApprovalRequest, AuditLog, CallOptions, ToolManifest, TypedTool,
    tool_registry,
};
use agentio_examples::tools::{AppendNoteTool, KbSearch, RenderReportTool};

/// The host's approval policy: writes to a note called `private*.md` are refused, everything
/// else that asks is approved (a real host would ask a person).
fn approver(request: &ApprovalRequest) -> ApprovalDecision {
    let note = request.input["note"].as_str().unwrap_or_default();
    println!(
        "  approver asked: {} ({}), mutates {:?}",
        request.identity, request.approval, request.mutates
    );
    if note.starts_with("private") {
        ApprovalDecision::Deny {
            reason: "private notes are read-only for agents".into(),
        }
    } else {
        ApprovalDecision::Approve
    }
}

fn pretty(value: &Value) -> String {
    agentio::serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

fn main() {
    let runtime = agentio::tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a Tokio runtime");
    let workspace =
        std::env::temp_dir().join(format!("agent-io-tools-example-{}", std::process::id()));
    let audit = Arc::new(AuditLog::default());
    let registry = tool_registry![KbSearch, AppendNoteTool, RenderReportTool]
        .expect("the example tools have valid contracts")
        .with_approver(Arc::new(approver))
        .with_audit_sink(audit.clone());
    let host_context = json!({ "workspace_root": workspace });

    let calls: Vec<(&str, &str, Value, Value)> = vec![
        (
            "search",
            "kb.search",
            json!({ "query": "billing invoices" }),
            Value::Null,
        ),
        (
            "search with a bad limit",
            "kb.search",
            json!({ "query": "login", "limit": 40 }),
            Value::Null,
        ),
        (
            "append (approved)",
            "notes.append",
            json!({ "note": "standup.md", "line": "- shipped the registry" }),
            host_context.clone(),
        ),
        (
            "append (denied)",
            "notes.append",
            json!({ "note": "private.md", "line": "- secret" }),
            host_context.clone(),
        ),
        (
            "append without host context",
            "notes.append",
            json!({ "note": "standup.md", "line": "x" }),
            Value::Null,
        ),
        (
            "render 2 pages",
            "report.render",
            json!({ "title": "Q3", "pages": 2 }),
            Value::Null,
        ),
        (
            "render 12 pages (times out)",
            "report.render",
            json!({ "title": "Q3 full", "pages": 12 }),
            Value::Null,
        ),
    ];
    for (label, tool, input, context) in calls {
        println!("\n== {label}: {tool} {input}");
        let options = CallOptions {
            run_id: Some("example-run".into()),
            context,
            ..CallOptions::default()
        };
        let envelope = runtime.block_on(registry.call_envelope(tool, input, options));
        println!("{}", pretty(&envelope));
    }

    println!("\n== audit trail");
    for record in audit.records() {
        println!(
            "  {:<14} ok={:<5} approval={:<12} attempts={} mutates={:?} input_keys={:?} {}",
            record.tool_id,
            record.ok,
            format!("{:?}", record.approval),
            record.attempts,
            record.tool_mutates,
            record.input_keys,
            record.error_code.unwrap_or_default(),
        );
    }

    println!("\n== TOOL.md of notes.append, rendered from the Rust contract");
    println!(
        "{}",
        ToolManifest::from_contract(AppendNoteTool::contract()).render()
    );
    let _ = std::fs::remove_dir_all(&workspace);
}
