//! A tool with a file contract (AIP-16), run twice at once: each run gets its own private
//! scratch root, reads the staged CSV, and writes its own report back into the workspace.
//! Every staged read and synced write is reported to an observer and attested in the run
//! record with its size and SHA-256.
//!
//! Run it with `cargo run --example files`.

use std::sync::Arc;

use agentio::core::files::{FileEvent, Workspace};
use agentio::serde_json::json;
use agentio::tools::{ApprovalDecision, ApprovalRequest, AuditLog, CallOptions, tool_registry};
use agentio_examples::files::SalesReportTool;

fn main() {
    let base = std::env::temp_dir().join(format!("agent-io-files-example-{}", std::process::id()));
    std::fs::create_dir_all(base.join("data")).expect("a workspace folder");
    std::fs::write(
        base.join("data/sales.csv"),
        "region,amount\nnorth,1200.50\nsouth,980\nwest,310.25\n",
    )
    .expect("the sales file");
    let workspace = Workspace::open(&base).expect("the workspace opens");

    let audit = Arc::new(AuditLog::default());
    let observer = |event: &FileEvent| {
        println!(
            "  file event: {}",
            agentio::serde_json::to_string(event).unwrap_or_default()
        );
    };
    let approve = |request: &ApprovalRequest| {
        println!(
            "  approved {} for run {} (mutates {:?})",
            request.identity, request.run_id, request.mutates
        );
        ApprovalDecision::Approve
    };
    let registry = tool_registry![SalesReportTool]
        .expect("a valid contract")
        .with_workspace(workspace)
        .with_file_observer(Arc::new(observer))
        .with_approver(Arc::new(approve))
        .with_audit_sink(audit.clone());

    // Two OS threads, each with its own Tokio runtime, share one registry: the runs are truly
    // parallel and still never see each other's files.
    println!("== two concurrent runs of sales.report");
    let call = |run_id: &str, input: agentio::serde_json::Value| {
        let runtime = agentio::tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a Tokio runtime");
        let options = CallOptions {
            run_id: Some(run_id.to_owned()),
            ..CallOptions::default()
        };
        runtime.block_on(registry.call_with("sales.report", input, options))
    };
    let (first, second) = std::thread::scope(|scope| {
        let morning = scope.spawn(|| call("morning", json!({ "title": "Sales, morning run" })));
        // A caller cannot choose the scratch root: the host overwrites `_workflowFsRoot`.
        let evening = scope.spawn(|| {
            call(
                "evening",
                json!({ "title": "Sales, evening run", "_workflowFsRoot": "/etc" }),
            )
        });
        (
            morning.join().expect("the morning run"),
            evening.join().expect("the evening run"),
        )
    });
    println!("\n== results");
    println!(
        "  morning: {}",
        first.map_or_else(|e| e.to_envelope().to_string(), |v| v.to_string())
    );
    println!(
        "  evening: {}",
        second.map_or_else(|e| e.to_envelope().to_string(), |v| v.to_string())
    );

    println!("\n== run records (attestation)");
    for record in audit.records() {
        let files = agentio::serde_json::to_string_pretty(&record.files).unwrap_or_default();
        println!(
            "  run {}:\n{}",
            record.run_id,
            files
                .lines()
                .map(|l| format!("    {l}"))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }

    println!("\n== the workspace afterwards");
    let mut reports: Vec<_> = walk(&base);
    reports.sort();
    for path in reports {
        println!("  {}", path.strip_prefix(&base).unwrap_or(&path).display());
    }
    let _ = std::fs::remove_dir_all(&base);
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
