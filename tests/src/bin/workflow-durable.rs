//! A durable workflow run in a process of its own, for the crash tests
//! (`tests/tests/workflow/durable.rs`): the test stops it with `SIGKILL` at a chosen transition
//! and reopens the run in a new process.
//!
//! `workflow-durable JOURNAL EFFECTS start|reopen|resume [STOP_AT]`
//!
//! - The workflow and its counting agents: `agentio_tests::durable_fixture` (`fetch` → `left`
//!   and `right` → `approve`, suspended until resumed → `publish`; each side effect once per
//!   task id in `EFFECTS`, each agent run in `EFFECTS.runs`).
//! - `start` starts run `r1`; `reopen` reopens it; `resume` resumes `approve` with
//!   `{"ok": true}`.
//! - `STOP_AT` is `KIND:PHASE` (`claimed:left`, `completed:fetch`, `suspended:approve`, ...):
//!   once that entry is durable the process prints `STOPPED KIND:PHASE` and waits, with the
//!   run's thread held, for the test to kill it.
//! - On a normal end it prints the outcome: `{"outputs", "progress", "events", "succeeded"}`.
//!
//! The runtime has one thread, so while the process waits no agent runs: the kill lands exactly
//! between two recorded transitions.

use std::io::Write;

use agentio_tests::durable_fixture::executor;
use agentio_workflow::journal::{Entry, Journal};
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [journal_path, effects, mode, rest @ ..] = args.as_slice() else {
        return Err(
            "usage: workflow-durable JOURNAL EFFECTS start|reopen|resume [KIND:PHASE]".into(),
        );
    };
    let stop_at = rest.first().cloned();
    let journal = Journal::open(journal_path)?.on_append(move |_run, _seq, entry: &Entry| {
        let at = format!("{}:{}", entry.kind(), entry.phase());
        if stop_at.as_deref() == Some(at.as_str()) {
            println!("STOPPED {at}");
            let _ = std::io::stdout().flush();
            loop {
                std::thread::park();
            }
        }
    });
    let executor = executor(effects, None);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    let outcome = match mode.as_str() {
        "start" => {
            runtime.block_on(executor.start(&journal, "r1", json!({ "q": "durable" }), json!({})))
        }
        "reopen" => runtime.block_on(executor.reopen(&journal, "r1")),
        "resume" => {
            runtime.block_on(executor.resume(&journal, "r1", "approve", json!({ "ok": true })))
        }
        other => return Err(format!("unknown mode '{other}'").into()),
    }?;
    println!(
        "{}",
        json!({
            "outputs": outcome.outputs,
            "progress": outcome.progress,
            "events": outcome.events,
            "succeeded": outcome.succeeded(),
        })
    );
    Ok(())
}
