//! The workflow of the durable-run tests (`workflow-durable`, the SIGKILL tests, and
//! `workflow-restate`, the Restate workers): `fetch` → `left` and `right` → `approve` (suspends
//! awaiting a human answer until resumed) → `publish`, each agent counting its runs and making
//! its side effect idempotently.

use std::io::Write;

use agentio_workflow::{Executor, Phase, Suspension, TypeRef, Workflow};
use serde_json::{Value, json};

/// Where the agents count what they do, and which worker they run in.
#[derive(Clone, Debug)]
pub struct Counting {
    /// The side effects, `PHASE TASK_ID` once each; `{effects}.runs` gets `PHASE WORKER` for
    /// every run of an agent.
    pub effects: String,
    /// The worker's name (in `.runs`).
    pub worker: String,
    /// A phase whose agent waits this long after it starts, before its side effect (so a test
    /// can kill its process mid-run).
    pub slow: Option<(String, std::time::Duration)>,
}

fn append(file: &str, line: &str) -> Result<(), agentio_core::AgentError> {
    let fail = |e: std::io::Error| agentio_core::AgentError::internal(e.to_string());
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .map_err(fail)?;
    writeln!(file, "{line}").map_err(fail)?;
    file.sync_all().map_err(fail)
}

/// An agent started: counted in `.runs`, then held when it is the slow phase.
async fn started(counting: &Counting, phase: &str) -> Result<(), agentio_core::AgentError> {
    append(
        &format!("{}.runs", counting.effects),
        &format!("{phase} {}", counting.worker),
    )?;
    if let Some((slow, wait)) = &counting.slow
        && slow == phase
    {
        tokio::time::sleep(*wait).await;
    }
    Ok(())
}

/// The phase's side effect, made idempotent as durable runs ask of agents: keyed by the task
/// id (the same on every attempt), done at most once, so an agent run again (after its process
/// died between its side effect and its recorded completion) does not repeat it.
fn effect(path: &str, phase: &str, task_id: &str) -> Result<(), agentio_core::AgentError> {
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

/// The workflow, `durable-demo`.
pub fn workflow() -> Workflow {
    Workflow::new("durable-demo")
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
        )
}

/// The workflow's executor: its agents count into `effects` (worker `main`), or as `counting`
/// says.
pub fn executor(effects: &str, counting: Option<Counting>) -> Executor {
    let counting = counting.unwrap_or_else(|| Counting {
        effects: effects.to_owned(),
        worker: "main".into(),
        slow: None,
    });
    let simple = |phase: &'static str, compute: fn(&agentio_workflow::TaskContext) -> Value| {
        let counting = counting.clone();
        move |ctx: agentio_workflow::TaskContext| {
            let counting = counting.clone();
            async move {
                started(&counting, phase).await?;
                effect(&counting.effects, phase, &ctx.task_id)?;
                Ok(compute(&ctx))
            }
        }
    };
    let approve = {
        let counting = counting.clone();
        move |ctx: agentio_workflow::TaskContext| {
            let counting = counting.clone();
            async move {
                started(&counting, "approve").await?;
                match &ctx.resumed_with {
                    Some(answer) => {
                        effect(&counting.effects, "approve", &ctx.task_id)?;
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
        }
    };
    Executor::new(workflow())
        .bind_fn(
            "fetch",
            simple(
                "fetch",
                |ctx| json!({ "n": ctx.input["q"].as_str().map_or(0, str::len) }),
            ),
        )
        .bind_fn(
            "left",
            simple("left", |ctx| json!({ "l": number(ctx, "n") * 2 })),
        )
        .bind_fn(
            "right",
            simple("right", |ctx| json!({ "r": number(ctx, "n") + 10 })),
        )
        .bind_fn("approve", approve)
        .bind_fn(
            "publish",
            simple("publish", |ctx| {
                let total = if ctx.input["ok"] == true {
                    number(ctx, "l") + number(ctx, "r")
                } else {
                    0
                };
                json!({ "total": total })
            }),
        )
}

/// A chain of `n` phases (each wired to the one before) with trivial agents: the benches'.
pub fn chain(n: usize) -> Executor {
    Executor::new(chain_workflow(n)).bind_fn("a", |ctx| async move {
        Ok(json!({ "x": ctx.input.get("x").and_then(Value::as_f64).unwrap_or(0.0) + 1.0 }))
    })
}

/// The workflow `chain-{n}`: `n` phases, each assigned to `a`, each wired to the one before.
pub fn chain_workflow(n: usize) -> Workflow {
    let mut workflow = Workflow::new(format!("chain-{n}"));
    for i in 0..n {
        let mut phase = Phase::new(format!("p{i}"), "P")
            .assign("a")
            .output("x", TypeRef::Number);
        if i > 0 {
            phase = phase
                .depends_on([format!("p{}", i - 1)])
                .input("x", format!("p{}.x", i - 1));
        }
        workflow = workflow.with_phase(phase);
    }
    workflow
}
