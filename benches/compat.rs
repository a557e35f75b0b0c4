//! What `schema_compatible` costs on typical tool schemas: a producer's output (22 properties,
//! nested structs, an enum, options, a map, a list of records) against a consumer's input (the
//! same fields, some ranges wider, two optional fields more), proven compatible; the reverse
//! direction, refused with a verified witness; and a skill of 100 such links.
//!
//! Run with `cargo bench -p agentio-benches --bench compat`; the per-pair times are printed at the end.
#![allow(missing_docs)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;

use agentio_core::compat::{Compatibility, schema_compatible};
use agentio_core::skill::{SkillManifest, check_skill};
use criterion::Criterion;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Priority {
    Low,
    Normal,
    High,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Address {
    street: String,
    city: String,
    #[schemars(length(min = 2, max = 2))]
    country: String,
    postcode: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Line {
    sku: String,
    #[schemars(range(min = 1, max = 100))]
    quantity: u32,
    #[schemars(range(min = 0.0))]
    unit_price: f64,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Order {
    id: String,
    customer: String,
    email: String,
    priority: Priority,
    lines: Vec<Line>,
    shipping: Address,
    billing: Option<Address>,
    #[schemars(range(min = 0, max = 50))]
    discount_percent: u8,
    notes: Option<String>,
    tags: Vec<String>,
    attributes: BTreeMap<String, String>,
    created_at: String,
    updated_at: Option<String>,
    paid: bool,
    #[schemars(range(min = 0.0))]
    total: f64,
    currency: String,
    channel: String,
    warehouse: Option<String>,
    gift: bool,
    #[schemars(length(max = 500))]
    gift_message: Option<String>,
    loyalty_points: u32,
    source_ip: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct OrderInput {
    id: String,
    customer: String,
    email: String,
    priority: Priority,
    lines: Vec<LineInput>,
    shipping: Address,
    billing: Option<Address>,
    #[schemars(range(min = 0, max = 100))]
    discount_percent: u8,
    notes: Option<String>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    attributes: BTreeMap<String, String>,
    created_at: String,
    updated_at: Option<String>,
    paid: bool,
    total: f64,
    currency: String,
    channel: String,
    warehouse: Option<String>,
    gift: bool,
    gift_message: Option<String>,
    loyalty_points: u64,
    source_ip: Option<String>,
    #[serde(default)]
    reviewer: Option<String>,
    #[serde(default)]
    audit: Option<bool>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct LineInput {
    sku: String,
    #[schemars(range(min = 1, max = 1000))]
    quantity: u32,
    unit_price: f64,
}

fn schema<T: JsonSchema>(output: bool) -> Value {
    let settings = if output {
        SchemaSettings::draft2020_12().for_serialize()
    } else {
        SchemaSettings::draft2020_12().for_deserialize()
    };
    settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

fn compat(c: &mut Criterion) {
    let producer = schema::<Order>(true);
    let consumer = schema::<OrderInput>(false);
    assert!(schema_compatible(&producer, &consumer).is_compatible());
    let reverse_producer = schema::<OrderInput>(true);
    let reverse_consumer = schema::<Order>(false);
    assert!(matches!(
        schema_compatible(&reverse_producer, &reverse_consumer),
        Compatibility::Incompatible(_)
    ));

    let mut group = c.benchmark_group("compat");
    group.bench_function("compatible_pair", |b| {
        b.iter(|| {
            black_box(schema_compatible(
                black_box(&producer),
                black_box(&consumer),
            ))
        })
    });
    group.bench_function("incompatible_pair_with_witness", |b| {
        b.iter(|| {
            black_box(schema_compatible(
                black_box(&reverse_producer),
                black_box(&reverse_consumer),
            ))
        })
    });
    group.finish();

    // A skill of 100 tools: `order.0` … `order.99`, each taking the previous one's output.
    let steps: Vec<String> = (0..100).map(|i| format!("order.{i}")).collect();
    let skill = SkillManifest::new("long", steps);
    let lookup = |_: &str| Some((consumer.clone(), producer.clone()));
    let started = Instant::now();
    let rounds = 5;
    for _ in 0..rounds {
        check_skill(&skill, lookup).expect("every link is compatible");
    }
    let per_pair = started.elapsed() / (rounds * 99);
    println!("\ncompat: a skill of 100 typical tools, {per_pair:?} per link (lookups included)");
}

fn main() {
    let mut criterion = Criterion::default()
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(3))
        .configure_from_args();
    compat(&mut criterion);
    criterion.final_summary();
}
