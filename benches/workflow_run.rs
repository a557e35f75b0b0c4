//! Running large workflows end to end (check, claim, complete, unblock) with trivial agents:
//! a chain (each phase wired to the one before) and a dense DAG (each phase depends on every
//! earlier one). Run bookkeeping is incremental, so time grows with phases + edges: compare
//! the per-phase time of the 1,000- and 10,000-phase chains, and the per-edge time of the
//! 500- and 2,000-phase DAGs (125k and 2M edges), printed after the measurements.
#![allow(missing_docs)]

use agentio_workflow::{Executor, Phase, TypeRef, Workflow};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::json;
use std::time::{Duration, Instant};

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

fn dense(n: usize) -> Workflow {
    let mut workflow = Workflow::new("dense");
    for i in 0..n {
        let phase = Phase::new(format!("p{i}"), "P")
            .assign("a")
            .depends_on((0..i).map(|j| format!("p{j}")))
            .output("x", TypeRef::Number);
        workflow = workflow.with_phase(phase);
    }
    workflow
}

fn executor(workflow: Workflow) -> Executor {
    Executor::new(workflow).bind_fn("a", |_ctx| async { Ok(json!({ "x": 1 })) })
}

fn run_once(executor: &Executor, runtime: &tokio::runtime::Runtime) {
    let outcome = runtime
        .block_on(executor.run("bench", json!({}), json!({})))
        .expect("the workflow is valid");
    assert!(outcome.succeeded());
}

fn runs(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let mut group = c.benchmark_group("workflow_run");
    group.sample_size(10);
    let cases: Vec<(&str, usize, Executor, usize)> = vec![
        ("chain", 1_000, executor(chain(1_000)), 1_000),
        ("chain", 10_000, executor(chain(10_000)), 10_000),
        ("dense", 500, executor(dense(500)), 500 * 499 / 2),
        ("dense", 2_000, executor(dense(2_000)), 2_000 * 1_999 / 2),
    ];
    for (shape, n, executor, _) in &cases {
        group.bench_with_input(BenchmarkId::new(*shape, n), executor, |b, executor| {
            b.iter(|| run_once(executor, &runtime));
        });
    }
    group.finish();
    // Linearity, measured in this run: time per unit (phase for chains, edge for DAGs).
    let per_unit = |executor: &Executor, units: usize| {
        let started = Instant::now();
        for _ in 0..3 {
            run_once(executor, &runtime);
        }
        started.elapsed().as_secs_f64() / 3.0 / units as f64
    };
    let measured: Vec<f64> = cases
        .iter()
        .map(|(_, _, executor, units)| per_unit(executor, *units))
        .collect();
    println!(
        "chain: 10,000 phases cost {:.2}x the per-phase time of 1,000",
        measured[1] / measured[0]
    );
    println!(
        "dense: 2,000 phases (1,999,000 edges) cost {:.2}x the per-edge time of 500 (124,750 edges)",
        measured[3] / measured[2]
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    targets = runs
}
criterion_main!(benches);
