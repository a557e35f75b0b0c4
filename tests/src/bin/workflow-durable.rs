//! A durable workflow run in a process of its own, for the crash tests
//! (`tests/tests/workflow/durable.rs`): the test stops it with `SIGKILL` at a chosen transition
//! and reopens the run in a new process.
//!
//! `workflow-durable JOURNAL EFFECTS start|reopen|resume [STOP_AT]`
//!
//! - The workflow: `fetch` → `left` and `right` (concurrent) → `approve` (suspends awaiting a
//!   human answer until resumed) → `publish`.
//! - Each phase's agent appends `PHASE TASK_ID` to `EFFECTS` (fsync'd) as its side effect,
//!   idempotently (skipped when the line is there: an agent run again after a kill between its
//!   effect and its recorded completion does not repeat it), and its phase name to
//!   `EFFECTS.runs` on every run (`approve` only when resumed): the test counts both.
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

use agentio_workflow::journal::{Entry, Journal};
use agentio_workflow::{Executor, Phase, Suspension, TypeRef, Workflow};
use serde_json::{Value, json};

/// The phase's side effect, made idempotent as the journal asks of agents: keyed by the task
/// id (the same on every attempt), done at most once. Every run of an agent is also counted in
/// `EFFECTS.runs`, so the test sees a phase run again (after a kill between its side effect
/// and its recorded completion) without its effect being repeated.
fn effect(path: &str, phase: &str, task_id: &str) -> Result<(), agentio_core::AgentError> {
    let fail = |e: std::io::Error| agentio_core::AgentError::internal(e.to_string());
    let append = |file: &str, line: &str| -> Result<(), agentio_core::AgentError> {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(file)
            .map_err(fail)?;
        writeln!(file, "{line}").map_err(fail)?;
        file.sync_all().map_err(fail)
    };
    append(&format!("{path}.runs"), phase)?;
    let key = format!("{phase} {task_id}");
    let done = std::fs::read_to_string(path).unwrap_or_default();
    if done.lines().any(|line| line == key) {
        return Ok(());
    }
    append(path, &key)
}

fn number(ctx: &agentio_workflow::TaskContext, key: &str) -> i64 {
    ctx.input[key].as_i64().unwrap_or(0)
}

fn executor(effects: &str) -> Executor {
    let workflow = Workflow::new("durable-demo")
        .with_phase(
            Phase::new("fetch", "Fetch")
                .assign("fetch")
                .input("q", "$trigger.q")
                .output("n", TypeRef::Integer),
        )
        .with_phase(
            Phase::new("left", "Left")
                .assign("left")
                .depends_on(["fetch"])
                .input("n", "fetch.n")
                .output("l", TypeRef::Integer),
        )
        .with_phase(
            Phase::new("right", "Right")
                .assign("right")
                .depends_on(["fetch"])
                .input("n", "fetch.n")
                .output("r", TypeRef::Integer),
        )
        .with_phase(
            Phase::new("approve", "Approve")
                .assign("approve")
                .depends_on(["left", "right"])
                .input("l", "left.l")
                .input("r", "right.r")
                .output("ok", TypeRef::Boolean),
        )
        .with_phase(
            Phase::new("publish", "Publish")
                .assign("publish")
                .depends_on(["approve", "left", "right"])
                .input("ok", "approve.ok")
                .input("l", "left.l")
                .input("r", "right.r")
                .output("total", TypeRef::Integer),
        );
    let path = effects.to_owned();
    let (p1, p2, p3, p4, p5) = (path.clone(), path.clone(), path.clone(), path.clone(), path);
    Executor::new(workflow)
        .bind_fn("fetch", move |ctx| {
            let p = p1.clone();
            async move {
                effect(&p, "fetch", &ctx.task_id)?;
                Ok(json!({ "n": ctx.input["q"].as_str().map_or(0, str::len) }))
            }
        })
        .bind_fn("left", move |ctx| {
            let p = p2.clone();
            async move {
                effect(&p, "left", &ctx.task_id)?;
                Ok(json!({ "l": number(&ctx, "n") * 2 }))
            }
        })
        .bind_fn("right", move |ctx| {
            let p = p3.clone();
            async move {
                effect(&p, "right", &ctx.task_id)?;
                Ok(json!({ "r": number(&ctx, "n") + 10 }))
            }
        })
        .bind_fn("approve", move |ctx| {
            let p = p4.clone();
            async move {
                match &ctx.resumed_with {
                    Some(answer) => {
                        effect(&p, "approve", &ctx.task_id)?;
                        Ok(json!({ "ok": answer["ok"].as_bool().unwrap_or(false) }))
                    }
                    None => {
                        ctx.suspend(Suspension {
                            intent_id: format!("ask-{}", ctx.task_id),
                            suspended_since: "2026-11-26T00:00:00Z".into(),
                            ..Suspension::default()
                        });
                        Ok(Value::Null)
                    }
                }
            }
        })
        .bind_fn("publish", move |ctx| {
            let p = p5.clone();
            async move {
                effect(&p, "publish", &ctx.task_id)?;
                let total = if ctx.input["ok"] == true {
                    number(&ctx, "l") + number(&ctx, "r")
                } else {
                    0
                };
                Ok(json!({ "total": total }))
            }
        })
}

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
    let executor = executor(effects);
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
