//! What the boundary costs on one representative input/output pair (an embodied core's turn).
//!
//! - `serde_floor`: decode the input from a borrowed `Value`, run the body, `to_value` the
//!   output: the least any JSON-speaking runtime must do.
//! - `typed_call`: the body alone, with a typed input (no JSON at all).
//! - `erased_unvalidated`: `ErasedAgentCore::run_turn_erased` (decode by value, body, encode,
//!   one boxed future).
//! - `erased_validated`: `AgentRuntime::run_turn_in` (the above plus input and output schema
//!   validation and panic containment).
//!
//! The input `Value` is cloned outside the timed region (`iter_batched`) and freed inside it,
//! for the floor as for the erased calls, since the runtime takes ownership of its input.
//! Compare the groups as ratios to `serde_floor` in one run.
#![allow(missing_docs)]

use agentio_core::{
    AgentContext, AgentCore, AgentError, AgentInput, AgentOutput, AgentRuntime, ErasedAgentCore,
};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::hint::black_box;

#[derive(Clone, Serialize, Deserialize, JsonSchema, AgentInput)]
#[serde(deny_unknown_fields)]
struct EmbodiedInput {
    message: String,
    sensor_readings: Vec<SensorReading>,
    position: Position,
}

#[derive(Clone, Serialize, Deserialize, JsonSchema)]
struct SensorReading {
    sensor: String,
    #[schemars(range(min = -1000.0, max = 1000.0))]
    value: f64,
    unit: Unit,
}

#[derive(Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Unit {
    Celsius,
    Meters,
    Lux,
}

#[derive(Clone, Serialize, Deserialize, JsonSchema)]
struct Position {
    x: f64,
    y: f64,
    heading_deg: f64,
}

#[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
struct MotorCommand {
    left_speed: f64,
    right_speed: f64,
    note: String,
}

struct Rover;

impl AgentCore for Rover {
    type Input = EmbodiedInput;
    type Output = MotorCommand;

    fn core_type(&self) -> &str {
        "rover"
    }

    async fn run_turn(
        &mut self,
        input: EmbodiedInput,
        _ctx: &mut AgentContext,
    ) -> Result<MotorCommand, AgentError> {
        let nearest = input
            .sensor_readings
            .iter()
            .filter(|r| matches!(r.unit, Unit::Meters))
            .map(|r| r.value)
            .fold(f64::INFINITY, f64::min);
        let speed = if nearest < 0.5 { 0.0 } else { 0.6 };
        let turn = (input.position.heading_deg / 180.0).clamp(-1.0, 1.0) * 0.1;
        Ok(MotorCommand {
            left_speed: speed - turn,
            right_speed: speed + turn,
            note: format!(
                "{} ({} readings)",
                input.message,
                input.sensor_readings.len()
            ),
        })
    }
}

fn input() -> Value {
    let readings: Vec<Value> = (0..8)
        .map(|i| {
            let unit = ["celsius", "meters", "lux"][i % 3];
            json!({ "sensor": format!("s{i}"), "value": i as f64 * 1.5, "unit": unit })
        })
        .collect();
    json!({
        "message": "advance to the charging dock",
        "sensor_readings": readings,
        "position": { "x": 1.0, "y": -2.5, "heading_deg": 42.0 }
    })
}

fn boundary(c: &mut Criterion) {
    let value = input();
    let typed: EmbodiedInput = serde_json::from_value(value.clone()).expect("valid input");
    let mut group = c.benchmark_group("boundary");

    let mut core = Rover;
    let mut ctx = AgentContext::new("bench");
    // Like the erased calls, the floor owns its input `Value` and frees it inside the timed
    // region; it only borrows it for decoding.
    group.bench_function("serde_floor", |b| {
        b.iter_batched(
            || value.clone(),
            |owned| {
                let input = EmbodiedInput::deserialize(black_box(&owned)).expect("valid");
                drop(owned);
                let output = pollster::block_on(core.run_turn(input, &mut ctx)).expect("ok");
                black_box(serde_json::to_value(&output).expect("encodes"))
            },
            BatchSize::SmallInput,
        )
    });

    group.bench_function("typed_call", |b| {
        b.iter_batched(
            || typed.clone(),
            |input| black_box(pollster::block_on(core.run_turn(input, &mut ctx)).expect("ok")),
            BatchSize::SmallInput,
        )
    });

    let mut erased: Box<dyn ErasedAgentCore> = Box::new(Rover);
    group.bench_function("erased_unvalidated", |b| {
        b.iter_batched(
            || value.clone(),
            |input| {
                black_box(pollster::block_on(erased.run_turn_erased(input, &mut ctx)).expect("ok"))
            },
            BatchSize::SmallInput,
        )
    });

    let mut runtime = AgentRuntime::new(Rover);
    // Build and compile the schemas before timing: the first call pays for that once.
    runtime.validate_input(&value).expect("valid");
    group.bench_function("erased_validated", |b| {
        b.iter_batched(
            || value.clone(),
            |input| {
                black_box(pollster::block_on(runtime.run_turn_in(input, &mut ctx)).expect("ok"))
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(3));
    targets = boundary
}
criterion_main!(benches);
