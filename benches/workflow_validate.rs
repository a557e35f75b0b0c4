//! Loading and validating a wide workflow: 200 phases (one root, 198 independent phases
//! wired to it, one sink wired to all 198), from YAML text and from a built model.
#![allow(missing_docs)]

use agentio_workflow::Workflow;
use criterion::{Criterion, criterion_group, criterion_main};
use std::fmt::Write;
use std::hint::black_box;

fn wide_yaml(middle: usize) -> String {
    let mut text =
        String::from("openintent: \"1.0\"\ninfo:\n  name: wide\n  version: 1.0.0\nworkflow:\n");
    text.push_str("  root:\n    title: Root\n    assign: a\n    inputs:\n      q: $trigger.q\n    outputs:\n      x: number\n");
    for i in 0..middle {
        let _ = write!(
            text,
            "  p{i:03}:\n    title: P\n    assign: a\n    depends_on: [root]\n    inputs:\n      x: root.x\n    outputs:\n      x: number\n"
        );
    }
    text.push_str("  sink:\n    title: Sink\n    assign: a\n    depends_on: [");
    text.push_str(
        &(0..middle)
            .map(|i| format!("p{i:03}"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    text.push_str("]\n    inputs:\n");
    for i in 0..middle {
        let _ = writeln!(text, "      in_{i:03}: p{i:03}.x");
    }
    text.push_str("    outputs:\n      x: number\n");
    text
}

fn validate(c: &mut Criterion) {
    let text = wide_yaml(198);
    let workflow = Workflow::from_yaml(&text).expect("valid");
    assert_eq!(workflow.phases.len(), 200);
    let mut group = c.benchmark_group("wide_200_phases");
    group.bench_function("load_and_validate_yaml", |b| {
        b.iter(|| Workflow::from_yaml(black_box(&text)))
    });
    group.bench_function("validate_model", |b| {
        b.iter(|| black_box(&workflow).validate())
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(3));
    targets = validate
}
criterion_main!(benches);
