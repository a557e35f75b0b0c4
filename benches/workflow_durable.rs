//! Durable runs against the in-memory executor: a chain of phases (each wired to the one
//! before, so nothing overlaps and every transition waits for the one before it), run
//!
//! - in memory (`Executor::run`): the floor;
//! - on the embedded journal with fsync on (`Executor::start`, redb `Durability::Immediate`,
//!   the default): every transition on disk before the run acts on it;
//! - on the embedded journal with fsync off (`Durability::None`), for scale: what the fsyncs
//!   cost;
//! - and the reopening of the finished durable run (`Executor::reopen`: the journal read and
//!   replayed, nothing run again).
//!
//! Two transitions per phase (claimed, completed). Each row is the median of `ROUNDS` passes;
//! the figures are transitions per second and the overhead per transition against the
//! in-memory run of the same pass. The journal lives under Cargo's target directory (a real
//! disk: on tmpfs an fsync costs nothing and the row would mislead).
//!
//! `cargo bench -p agentio-benches --bench workflow_durable [-- --phases N] [-- --quick]`
//! (`--quick`: 1,000 phases, one round). The Restate backend's row is `agentio-restate`'s
//! (see the README).
#![allow(missing_docs)]

use std::time::{Duration, Instant};

use agentio_workflow::journal::Journal;
use agentio_workflow::{Executor, Phase, TypeRef, Workflow};
use serde_json::json;

fn chain(n: usize) -> Workflow {
    let mut workflow = Workflow::new("chain");
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

fn executor(n: usize) -> Executor {
    Executor::new(chain(n)).bind_fn("a", |ctx| async move {
        Ok(json!({ "x": ctx.input.get("x").and_then(|x| x.as_f64()).unwrap_or(0.0) + 1.0 }))
    })
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let phases = args
        .iter()
        .position(|a| a == "--phases")
        .and_then(|at| args.get(at + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(if quick { 1_000 } else { 10_000 });
    let rounds = if quick { 1 } else { 3 };
    let transitions = (2 * phases) as f64;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let executor = executor(phases);
    let dir = tempfile::Builder::new()
        .prefix("workflow-durable-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("a directory under target/");

    let (mut memory, mut synced, mut unsynced, mut reopened) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let started = Instant::now();
        let outcome = runtime
            .block_on(executor.run("r", json!({}), json!({})))
            .expect("the chain is valid");
        memory.push(started.elapsed());
        assert!(outcome.succeeded());

        for (durability, into, name) in [
            (redb::Durability::Immediate, &mut synced, "synced"),
            (redb::Durability::None, &mut unsynced, "unsynced"),
        ] {
            let fsync = name == "synced";
            let path = dir.path().join(format!("{name}-{round}.redb"));
            let journal = Journal::open(&path)
                .expect("a journal")
                .with_durability(durability);
            let started = Instant::now();
            let outcome = runtime
                .block_on(executor.start(&journal, "r", json!({}), json!({})))
                .expect("the run starts");
            into.push(started.elapsed());
            assert!(outcome.succeeded());
            if fsync {
                let started = Instant::now();
                let again = runtime
                    .block_on(executor.reopen(&journal, "r"))
                    .expect("the run reopens");
                reopened.push(started.elapsed());
                assert_eq!(again.outputs.len(), phases);
            }
        }
    }
    let memory = median(memory);
    println!(
        "workflow_durable: a {phases}-phase chain, {} transitions, median of {rounds} round(s), journal under {}",
        2 * phases,
        env!("CARGO_TARGET_TMPDIR")
    );
    println!(
        "| backend | run | transitions/s | per transition | overhead per transition vs in-memory |"
    );
    println!("|---|---:|---:|---:|---:|");
    let row = |name: &str, took: Duration| {
        let per = took.as_secs_f64() / transitions;
        let over = (took.as_secs_f64() - memory.as_secs_f64()) / transitions;
        println!(
            "| {name} | {:.3} s | {:.0} | {:.1} µs | {} |",
            took.as_secs_f64(),
            transitions / took.as_secs_f64(),
            per * 1e6,
            if name == "in-memory executor" {
                "—".to_owned()
            } else {
                format!("{:.1} µs", over * 1e6)
            }
        );
    };
    row("in-memory executor", memory);
    row("embedded journal, fsync on", median(synced));
    row("embedded journal, fsync off", median(unsynced));
    let reopen = median(reopened);
    println!(
        "reopening the finished run (read and replay {} transitions, nothing run): {:.3} s, {:.1} µs per transition",
        2 * phases,
        reopen.as_secs_f64(),
        reopen.as_secs_f64() / transitions * 1e6
    );
}
