//! `schema_compatible`: soundness (property-tested over the serde attribute matrix and random
//! mutations of its schemas), completeness on a corpus of compatible-by-construction pairs, and
//! the answers for the cases a user meets first.
#![allow(missing_docs, dead_code, clippy::collapsible_if)]

use std::collections::BTreeMap;

use agentio_core::compat::{Compatibility, schema_compatible};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

fn output_schema<T: JsonSchema>() -> Value {
    SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

fn input_schema<T: JsonSchema>() -> Value {
    SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(schema)
        .expect("the schema compiles")
}

/// Checks an incompatible answer's witness independently of the checker.
fn assert_witness(producer: &Value, consumer: &Value, answer: &Compatibility) {
    if let Compatibility::Incompatible(why) = answer {
        assert!(
            validator(producer).is_valid(&why.witness),
            "witness not valid for the producer: {why:?}"
        );
        assert!(
            !validator(consumer).is_valid(&why.witness),
            "witness valid for the consumer: {why:?}"
        );
    }
}

fn incompatible(producer: &Value, consumer: &Value) -> agentio_core::compat::Counterexample {
    let answer = schema_compatible(producer, consumer);
    assert_witness(producer, consumer, &answer);
    match answer {
        Compatibility::Incompatible(why) => why,
        other => panic!("expected incompatible, got {other}"),
    }
}

// ---------------------------------------------------------------------------------------------
// The cases a user meets first.

#[derive(Serialize, Deserialize, JsonSchema)]
struct Search {
    query: String,
    #[schemars(range(min = 1, max = 50))]
    limit: u32,
    #[serde(default)]
    tags: Vec<String>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct SearchWide {
    query: String,
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    cursor: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Hit {
    id: String,
    score: f64,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Hits {
    hits: Vec<Hit>,
    next: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Summarize {
    hits: Vec<Hit>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SummarizeStrict {
    hits: Vec<Hit>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct NeedsLanguage {
    hits: Vec<Hit>,
    language: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Level {
    Low,
    Medium,
    High,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum LevelNarrow {
    Low,
    Medium,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct WithLevel {
    level: Level,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct WithNarrowLevel {
    level: LevelNarrow,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Tree {
    name: String,
    children: Vec<Tree>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct TreeAgain {
    name: String,
    children: Vec<TreeAgain>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Shape {
    Circle { r: f64 },
    Square { side: f64 },
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Drawing {
    shapes: Vec<Shape>,
}

#[test]
fn a_type_is_compatible_with_itself_and_with_a_wider_one() {
    for schema in [
        output_schema::<Search>(),
        output_schema::<Hits>(),
        output_schema::<Tree>(),
        output_schema::<Drawing>(),
        output_schema::<WithLevel>(),
    ] {
        let answer = schema_compatible(&schema, &schema);
        assert!(answer.is_compatible(), "{answer} for {schema}");
    }
    // A wider range is compatible; a field the consumer adds is not, as schemas: the producer's
    // schema does not forbid other properties, so `cursor: false` is one of its values.
    let answer = schema_compatible(&output_schema::<Search>(), &input_schema::<SearchWide>());
    assert!(!answer.is_compatible(), "{answer}");
    let closed = json!({ "type": "object", "required": ["query", "limit", "tags"], "additionalProperties": false,
        "properties": { "query": { "type": "string" }, "limit": { "type": "integer", "minimum": 1, "maximum": 50 }, "tags": { "type": "array", "items": { "type": "string" } } } });
    let answer = schema_compatible(&closed, &input_schema::<SearchWide>());
    assert!(answer.is_compatible(), "{answer}");
    // Recursive types with different names are compared structurally.
    let answer = schema_compatible(&output_schema::<Tree>(), &input_schema::<TreeAgain>());
    assert!(answer.is_compatible(), "{answer}");
    // An extra property of the producer is fine unless the consumer denies unknown fields.
    assert!(
        schema_compatible(&output_schema::<Hits>(), &input_schema::<Summarize>()).is_compatible()
    );
    let why = incompatible(&output_schema::<Hits>(), &input_schema::<SummarizeStrict>());
    assert_eq!(why.producer_pointer, "/properties/next");
}

#[test]
fn a_wider_range_a_missing_field_and_an_enum_value_are_refused_with_a_witness() {
    let why = incompatible(&output_schema::<SearchWide>(), &input_schema::<Search>());
    assert_eq!(why.consumer_pointer, "/properties/limit");
    assert!(why.witness["limit"].as_u64().unwrap() > 50, "{why:?}");

    let why = incompatible(&output_schema::<Hits>(), &input_schema::<NeedsLanguage>());
    assert!(why.reason.contains("`language`"), "{why:?}");
    assert!(why.witness.get("language").is_none());

    let why = incompatible(
        &output_schema::<WithLevel>(),
        &input_schema::<WithNarrowLevel>(),
    );
    assert_eq!(why.witness, json!({ "level": "high" }));
    assert!(
        schema_compatible(
            &output_schema::<WithNarrowLevel>(),
            &input_schema::<WithLevel>()
        )
        .is_compatible()
    );
}

#[test]
fn types_nullability_and_numbers() {
    let int = json!({ "type": "integer" });
    let num = json!({ "type": "number" });
    assert!(schema_compatible(&int, &num).is_compatible());
    let why = incompatible(&num, &int);
    assert!(why.witness.as_f64().unwrap().fract() != 0.0);
    let nullable = json!({ "type": ["string", "null"] });
    let string = json!({ "type": "string" });
    assert!(schema_compatible(&string, &nullable).is_compatible());
    assert_eq!(incompatible(&nullable, &string).witness, Value::Null);
    // Exclusive bounds over integers.
    let a = json!({ "type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10 });
    let b = json!({ "type": "integer", "minimum": 1, "maximum": 9 });
    assert!(schema_compatible(&a, &b).is_compatible());
    assert!(schema_compatible(&b, &a).is_compatible());
    let c = json!({ "type": "number", "exclusiveMinimum": 0 });
    let d = json!({ "type": "number", "minimum": 0 });
    assert!(schema_compatible(&c, &d).is_compatible());
    assert_eq!(incompatible(&d, &c).witness, json!(0));
    // multipleOf.
    let by4 = json!({ "type": "integer", "multipleOf": 4 });
    let by2 = json!({ "type": "integer", "multipleOf": 2 });
    assert!(schema_compatible(&by4, &by2).is_compatible());
    incompatible(&by2, &by4);
    // Boolean schemas.
    assert!(schema_compatible(&json!(false), &json!({ "type": "string" })).is_compatible());
    assert!(schema_compatible(&json!({ "type": "string" }), &json!(true)).is_compatible());
    incompatible(&json!(true), &json!({ "type": "string" }));
    incompatible(&json!({ "type": "string" }), &json!(false));
}

#[test]
fn strings_arrays_and_tagged_unions() {
    let short = json!({ "type": "string", "maxLength": 5 });
    let long = json!({ "type": "string", "maxLength": 10 });
    assert!(schema_compatible(&short, &long).is_compatible());
    assert_eq!(incompatible(&long, &short).witness, json!("aaaaaa"));
    // A consumer pattern the producer does not share is not provable.
    let free = json!({ "type": "string" });
    let slug = json!({ "type": "string", "pattern": "^[a-z]+$" });
    assert!(schema_compatible(&slug, &slug).is_compatible());
    incompatible(&free, &slug);
    let slug_long = json!({ "type": "string", "pattern": "^[a-z]+$", "minLength": 2 });
    assert!(matches!(
        schema_compatible(
            &slug_long,
            &json!({ "type": "string", "pattern": "^[a-z]{2,}$" })
        ),
        Compatibility::Unknown(_)
    ));

    let few = json!({ "type": "array", "items": { "type": "integer" }, "maxItems": 2 });
    let many = json!({ "type": "array", "items": { "type": "number" }, "maxItems": 5 });
    assert!(schema_compatible(&few, &many).is_compatible());
    incompatible(&many, &few);
    let pair = json!({ "type": "array", "prefixItems": [{ "type": "string" }, { "type": "integer" }], "items": false, "minItems": 2 });
    let loose = json!({ "type": "array", "items": { "type": ["string", "integer"] } });
    assert!(schema_compatible(&pair, &loose).is_compatible());
    incompatible(&loose, &pair);
    let unique = json!({ "type": "array", "items": { "type": "integer" }, "uniqueItems": true });
    incompatible(
        &json!({ "type": "array", "items": { "type": "integer" } }),
        &unique,
    );

    // An internally tagged enum: `oneOf` branches told apart by their tag.
    let drawing = output_schema::<Drawing>();
    assert!(schema_compatible(&drawing, &input_schema::<Drawing>()).is_compatible());
    let circles = json!({ "type": "object", "required": ["shapes"], "properties": { "shapes": { "type": "array", "items": {
        "type": "object", "required": ["kind", "r"], "properties": { "kind": { "const": "circle" }, "r": { "type": "number" } } } } } });
    assert!(
        schema_compatible(&circles, &drawing).is_compatible(),
        "{}",
        schema_compatible(&circles, &drawing)
    );
    incompatible(&drawing, &circles);
}

#[test]
fn hostile_schemas_get_an_answer_not_a_hang() {
    // Self-reference that consumes no value.
    let cycle = json!({ "$defs": { "A": { "anyOf": [{ "$ref": "#/$defs/A" }, { "type": "string" }] } }, "$ref": "#/$defs/A" });
    let answer = schema_compatible(&json!({ "type": "integer" }), &cycle);
    assert!(!answer.is_compatible(), "{answer}");
    // A dangling reference.
    let dangling = json!({ "$ref": "#/$defs/Nope" });
    assert!(matches!(
        schema_compatible(&json!({}), &dangling),
        Compatibility::Unknown(_)
    ));
    // Deep nesting.
    let mut deep = json!({ "type": "integer" });
    for _ in 0..500 {
        deep = json!({ "type": "array", "items": deep });
    }
    let answer = schema_compatible(&deep, &deep);
    assert!(!matches!(answer, Compatibility::Incompatible(_)));
    // Keywords a validator does not define are annotations; ones it does but the checker
    // does not reason about make the answer unknown on the consumer side.
    let annotated = json!({ "type": "string", "nullable": true, "x-kind": 1 });
    assert!(schema_compatible(&json!({ "type": "string" }), &annotated).is_compatible());
    assert_eq!(
        incompatible(&json!({ "type": ["string", "null"] }), &annotated).witness,
        Value::Null
    );
    let not = json!({ "type": "string", "not": { "const": "x" } });
    assert!(matches!(
        schema_compatible(&json!({ "type": "string" }), &not),
        Compatibility::Unknown(_)
    ));
    assert!(schema_compatible(&not, &json!({ "type": "string" })).is_compatible());
}

// ---------------------------------------------------------------------------------------------
// Soundness, property-tested.

/// Every type of the serde attribute matrix used elsewhere, as schema pairs.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Attributes {
    #[schemars(length(min = 1, max = 5))]
    short_name: String,
    #[schemars(range(min = 1, max = 10))]
    count: u32,
    #[serde(default)]
    tags: Vec<String>,
    reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    level: Level,
    ratio: f32,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Nested {
    inner: Hit,
    list: Vec<Hit>,
    map: BTreeMap<String, Hit>,
    maybe: Option<Hit>,
    pair: (u8, String),
    flag: bool,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
enum Untagged {
    Num(i64),
    Text(String),
    Obj { a: u8 },
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(tag = "t", content = "c")]
enum Adjacent {
    A(u8),
    B { x: String },
    C,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Everything {
    untagged: Untagged,
    adjacent: Adjacent,
    shapes: Vec<Shape>,
    tree: Option<Box<Tree>>,
    value: Value,
    #[schemars(regex(pattern = r"^[a-z]+$"))]
    slug: String,
    #[schemars(length(max = 3))]
    few: Vec<u8>,
}

fn matrix() -> Vec<Value> {
    vec![
        output_schema::<Attributes>(),
        input_schema::<Attributes>(),
        output_schema::<Nested>(),
        input_schema::<Nested>(),
        output_schema::<Everything>(),
        input_schema::<Everything>(),
        output_schema::<Drawing>(),
        output_schema::<Tree>(),
        output_schema::<Search>(),
        input_schema::<SearchWide>(),
        output_schema::<WithLevel>(),
        input_schema::<WithNarrowLevel>(),
    ]
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// Every object in a schema, by pointer.
fn subschemas(schema: &Value, at: String, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            out.push(at.clone());
            for (k, v) in map {
                if matches!(
                    k.as_str(),
                    "enum" | "const" | "required" | "examples" | "default"
                ) {
                    continue;
                }
                subschemas(
                    v,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                subschemas(v, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// One random change that usually narrows or widens: a bound, a required property, an enum
/// value, a type, `additionalProperties`.
fn mutate(schema: &Value, rng: &mut Rng) -> Value {
    let mut out = schema.clone();
    let mut places = Vec::new();
    subschemas(&out, String::new(), &mut places);
    let place = places[rng.below(places.len())].clone();
    let Some(Value::Object(map)) = out.pointer_mut(&place) else {
        return out;
    };
    match rng.below(11) {
        0 => {
            map.insert("maximum".into(), json!(rng.below(20)));
        }
        1 => {
            map.insert("minimum".into(), json!(rng.below(5)));
        }
        2 => {
            map.insert("maxLength".into(), json!(rng.below(4)));
        }
        3 => {
            if let Some(Value::Object(props)) = map.get("properties") {
                let keys: Vec<String> = props.keys().cloned().collect();
                if !keys.is_empty() {
                    let k = keys[rng.below(keys.len())].clone();
                    let req = map.entry("required").or_insert_with(|| json!([]));
                    if let Value::Array(r) = req {
                        if !r.contains(&json!(k)) {
                            r.push(json!(k));
                        }
                    }
                }
            }
        }
        4 => {
            map.remove("required");
        }
        5 => {
            if let Some(Value::Array(values)) = map.get_mut("enum") {
                if values.len() > 1 {
                    let i = rng.below(values.len());
                    values.remove(i);
                }
            }
        }
        6 => {
            map.insert("additionalProperties".into(), json!(false));
        }
        7 => {
            map.remove("additionalProperties");
        }
        8 => {
            let t = [
                "string", "integer", "number", "null", "object", "array", "boolean",
            ][rng.below(7)];
            map.insert("type".into(), json!(t));
        }
        9 => {
            map.insert("minItems".into(), json!(rng.below(3)));
        }
        _ => {
            map.remove("type");
        }
    }
    out
}

/// Random values, most of them valid for `schema` (kept only when they are).
fn instances(schema: &Value, rng: &mut Rng, count: usize) -> Vec<Value> {
    let check = validator(schema);
    let mut out = Vec::new();
    let mut tries = 0;
    while out.len() < count && tries < count * 30 {
        tries += 1;
        let v = generate(schema, schema, rng, 0);
        if check.is_valid(&v) {
            out.push(v);
        }
    }
    out
}

fn generate(root: &Value, schema: &Value, rng: &mut Rng, depth: usize) -> Value {
    let wild = |rng: &mut Rng| match rng.below(6) {
        0 => Value::Null,
        1 => json!(rng.chance(50)),
        2 => json!(rng.below(200) as i64 - 50),
        3 => json!(0.5),
        4 => json!(["a"][..rng.below(2)]),
        _ => json!("x"),
    };
    if depth > 6 {
        return wild(rng);
    }
    let Some(map) = schema.as_object() else {
        return wild(rng);
    };
    if let Some(Value::String(r)) = map.get("$ref") {
        let target = if r == "#" {
            root
        } else {
            root.pointer(r.trim_start_matches('#'))
                .unwrap_or(&Value::Null)
        };
        return generate(root, target, rng, depth + 1);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(b)) = map.get(key) {
            if !b.is_empty() {
                let pick = &b[rng.below(b.len())];
                if let (Some(pm), true) = (pick.as_object(), map.len() > 1) {
                    let mut merged = pm.clone();
                    for (k, v) in map {
                        if k != key {
                            merged.entry(k.clone()).or_insert(v.clone());
                        }
                    }
                    return generate(root, &Value::Object(merged), rng, depth + 1);
                }
                return generate(root, pick, rng, depth + 1);
            }
        }
    }
    if let Some(c) = map.get("const") {
        return c.clone();
    }
    if let Some(Value::Array(e)) = map.get("enum") {
        if !e.is_empty() {
            return e[rng.below(e.len())].clone();
        }
    }
    let t = match map.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) if !ts.is_empty() => ts[rng.below(ts.len())]
            .as_str()
            .unwrap_or("null")
            .to_owned(),
        _ => ["null", "boolean", "integer", "string", "object", "array"][rng.below(6)].to_owned(),
    };
    let num = |k: &str| map.get(k).and_then(Value::as_f64);
    match t.as_str() {
        "null" => Value::Null,
        "boolean" => json!(rng.chance(50)),
        "integer" | "number" => {
            let lo = num("minimum").unwrap_or(-20.0).max(-1e6);
            let hi = num("maximum").unwrap_or(lo + 40.0).min(lo + 1e6);
            let x = lo + (hi - lo) * (rng.below(1001) as f64 / 1000.0);
            if t == "integer" {
                json!(x.round() as i64)
            } else if rng.chance(50) {
                json!(x)
            } else {
                json!(x.round() as i64)
            }
        }
        "string" => {
            let min = map.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
            let max = map
                .get("maxLength")
                .and_then(Value::as_u64)
                .map_or(min + 6, |m| m as usize);
            let len = if max >= min {
                min + rng.below(max - min + 1)
            } else {
                min
            };
            json!(
                (0..len)
                    .map(|_| ["a", "b", "z", "é"][rng.below(4)])
                    .collect::<String>()
            )
        }
        "array" => {
            let min = map.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
            let max = map
                .get("maxItems")
                .and_then(Value::as_u64)
                .map_or(min + 3, |m| m as usize);
            let len = if max >= min {
                min + rng.below(max - min + 1)
            } else {
                min
            };
            let prefix = map
                .get("prefixItems")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let items = map.get("items").cloned().unwrap_or(Value::Bool(true));
            Value::Array(
                (0..len)
                    .map(|i| generate(root, prefix.get(i).unwrap_or(&items), rng, depth + 1))
                    .collect(),
            )
        }
        _ => {
            let mut out = Map::new();
            let required: Vec<&str> = map
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if let Some(Value::Object(props)) = map.get("properties") {
                for (k, s) in props {
                    if required.contains(&k.as_str()) || rng.chance(60) {
                        out.insert(k.clone(), generate(root, s, rng, depth + 1));
                    }
                }
            }
            for r in required {
                if !out.contains_key(r) {
                    out.insert(r.to_owned(), wild(rng));
                }
            }
            if rng.chance(20) {
                let extra = map
                    .get("additionalProperties")
                    .cloned()
                    .unwrap_or(Value::Bool(true));
                out.insert("zz_extra".into(), generate(root, &extra, rng, depth + 1));
            }
            Value::Object(out)
        }
    }
}

#[derive(Default, Debug)]
struct Tally {
    compatible: usize,
    incompatible: usize,
    unknown: usize,
    instances_checked: usize,
}

#[test]
fn compatible_answers_hold_for_every_generated_instance_and_witnesses_are_real() {
    let cases: usize = std::env::var("AGENT_IO_COMPAT_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500);
    let mut rng = Rng(std::env::var("AGENT_IO_COMPAT_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7));
    let matrix = matrix();
    let mut tally = Tally::default();
    for case in 0..cases {
        let base = &matrix[rng.below(matrix.len())];
        // Pairs: a base and a mutation of it, either way round, or two mutations.
        let a = if rng.chance(30) {
            base.clone()
        } else {
            mutate(base, &mut rng)
        };
        let b = mutate(base, &mut rng);
        let (producer, consumer) = if rng.chance(50) { (a, b) } else { (b, a) };
        if jsonschema::draft202012::options().build(&producer).is_err()
            || jsonschema::draft202012::options().build(&consumer).is_err()
        {
            continue;
        }
        let answer = schema_compatible(&producer, &consumer);
        match &answer {
            Compatibility::Compatible => {
                tally.compatible += 1;
                let check = validator(&consumer);
                for v in instances(&producer, &mut rng, 20) {
                    tally.instances_checked += 1;
                    assert!(
                        check.is_valid(&v),
                        "case {case}: said compatible, but {v} is valid for the producer and not the consumer\nproducer: {producer}\nconsumer: {consumer}"
                    );
                }
            }
            Compatibility::Incompatible(_) => {
                tally.incompatible += 1;
                assert_witness(&producer, &consumer, &answer);
            }
            Compatibility::Unknown(_) => tally.unknown += 1,
        }
    }
    eprintln!("{tally:?}");
    assert!(
        tally.compatible * 10 >= cases,
        "too few compatible answers to test: {tally:?}"
    );
    assert!(
        tally.incompatible * 10 >= cases,
        "too few incompatible answers: {tally:?}"
    );
    assert!(tally.instances_checked >= cases, "{tally:?}");
}

// ---------------------------------------------------------------------------------------------
// Completeness, measured.

/// Widening changes: each keeps the first schema included in the second.
fn widen(schema: &Value, place: &str, how: usize) -> Option<Value> {
    let mut out = schema.clone();
    let Some(Value::Object(map)) = out.pointer_mut(place) else {
        return None;
    };
    match how {
        0 => {
            // A required field made optional.
            let Some(Value::Array(r)) = map.get_mut("required") else {
                return None;
            };
            r.pop()?;
        }
        1 => {
            // A range widened.
            let m = map.get("maximum")?.as_f64()?;
            map.insert("maximum".into(), json!(m * 2.0 + 1.0));
        }
        2 => {
            let m = map.get("minimum")?.as_f64()?;
            map.insert("minimum".into(), json!(m - 10.0));
        }
        3 => {
            // An optional field added: compatible only where the producer names all its
            // properties (`additionalProperties: false`); an open producer may already carry
            // that name with any value.
            if map.get("additionalProperties") != Some(&json!(false)) {
                return None;
            }
            let Some(Value::Object(props)) = map.get_mut("properties") else {
                return None;
            };
            props.insert("added_optional".into(), json!({ "type": "string" }));
        }
        4 => {
            // Integer widened to number.
            if map.get("type") != Some(&json!("integer")) {
                return None;
            }
            map.insert("type".into(), json!("number"));
        }
        5 => {
            // Null allowed.
            let t = map.get("type")?.as_str()?.to_owned();
            map.insert("type".into(), json!([t, "null"]));
        }
        6 => {
            // A length limit lifted.
            map.remove("maxLength")?;
        }
        7 => {
            // An enum value added.
            let Some(Value::Array(values)) = map.get_mut("enum") else {
                return None;
            };
            values.push(json!("added_value"));
        }
        _ => {
            // Unknown properties allowed.
            map.remove("additionalProperties")?;
        }
    }
    Some(out)
}

#[test]
fn completeness_on_compatible_by_construction_pairs() {
    let mut bases = matrix();
    bases.extend([
        output_schema::<Hits>(),
        input_schema::<Summarize>(),
        output_schema::<SearchWide>(),
        input_schema::<Tree>(),
        output_schema::<Adjacent>(),
        output_schema::<Untagged>(),
    ]);
    let mut pairs = Vec::new();
    for base in &bases {
        pairs.push((base.clone(), base.clone()));
        let mut places = Vec::new();
        subschemas(base, String::new(), &mut places);
        for place in &places {
            for how in 0..9 {
                if let Some(wider) = widen(base, place, how)
                    && jsonschema::draft202012::options().build(&wider).is_ok()
                {
                    pairs.push((base.clone(), wider));
                }
            }
        }
    }
    assert!(pairs.len() >= 200, "the corpus has {} pairs", pairs.len());
    let mut proven = 0;
    let mut unproven = Vec::new();
    for (producer, consumer) in &pairs {
        let answer = schema_compatible(producer, consumer);
        assert!(
            !matches!(answer, Compatibility::Incompatible(_)),
            "a compatible pair refused: {answer}"
        );
        if answer.is_compatible() {
            proven += 1;
        } else {
            unproven.push(answer.to_string());
        }
    }
    let share = proven as f64 / pairs.len() as f64;
    eprintln!(
        "completeness: {proven} of {} pairs proven compatible ({:.1}%)",
        pairs.len(),
        share * 100.0
    );
    for why in unproven.iter().take(10) {
        eprintln!("  unproven: {why}");
    }
    // The README's claim: every compatible-by-construction pair is proven, not most.
    assert!(
        unproven.is_empty(),
        "{} of {} pairs not proven ({:.1}% proven); first reasons: {:?}",
        unproven.len(),
        pairs.len(),
        share * 100.0,
        &unproven[..unproven.len().min(5)]
    );
}

// ---------------------------------------------------------------------------------------------
// What a user reads: the answer's text, and each type named in a reason.

#[test]
fn each_answer_reads_with_its_pointers_or_the_root() {
    assert_eq!(Compatibility::Compatible.to_string(), "compatible");
    let why = incompatible(&json!({ "type": "integer" }), &json!({ "type": "string" }));
    let text = Compatibility::Incompatible(why.clone()).to_string();
    assert_eq!(
        text,
        format!(
            "incompatible at the root (producer the root): the producer allows a integer, the consumer does not; for example {}",
            why.witness
        )
    );
    let nested = incompatible(
        &json!({ "type": "object", "properties": { "n": { "type": "number" } }, "required": ["n"] }),
        &json!({ "type": "object", "properties": { "n": { "type": "integer" } }, "required": ["n"] }),
    );
    let text = Compatibility::Incompatible(nested).to_string();
    assert!(
        text.starts_with("incompatible at /properties/n (producer /properties/n): "),
        "{text}"
    );
    let unknown = schema_compatible(
        &json!({ "type": "string", "pattern": "^ab" }),
        &json!({ "type": "string", "pattern": "^a" }),
    );
    let Compatibility::Unknown(u) = &unknown else {
        panic!("expected unknown, got {unknown}")
    };
    assert_eq!(
        unknown.to_string(),
        format!("not proven at the root (producer the root): {}", u.reason)
    );
}

#[test]
fn a_missing_type_is_named_in_the_reason() {
    // Each type beside one the consumer takes: the one it does not take is named.
    for (name, beside, reads) in [
        ("null", "string", "null"),
        ("boolean", "string", "boolean"),
        ("integer", "string", "integer"),
        ("string", "array", "string"),
        ("array", "string", "array"),
        ("object", "string", "object"),
    ] {
        let why = incompatible(
            &json!({ "type": [name, beside] }),
            &json!({ "type": beside }),
        );
        assert_eq!(
            why.reason,
            format!("the producer allows a {reads}, the consumer does not"),
            "{name}"
        );
    }
    let why = incompatible(&json!({ "type": "number" }), &json!({ "type": "integer" }));
    assert_eq!(
        why.reason,
        "the producer allows a non-integer number, the consumer does not"
    );
}

#[test]
fn a_type_list_enum_and_const_give_the_producers_types() {
    // `integer` within `number` in one list: the list allows every number.
    let listed = json!({ "type": ["integer", "number"] });
    let why = incompatible(&listed, &json!({ "type": "integer" }));
    assert!(why.witness.as_f64().unwrap().fract() != 0.0, "{why:?}");
    assert!(schema_compatible(&listed, &json!({ "type": "number" })).is_compatible());
    // A type listed twice still allows it (the list is a union, not a toggle).
    let twice = json!({ "type": ["string", "string"] });
    assert!(!schema_compatible(&twice, &json!({ "type": "integer" })).is_compatible());
    // Without `type`, an `enum` allows only its values' types, two of one type included.
    let names = json!({ "enum": ["a", "b"] });
    assert!(schema_compatible(&names, &json!({ "type": "string" })).is_compatible());
    let why = incompatible(&names, &json!({ "type": "integer" }));
    assert!(why.witness.is_string(), "{why:?}");
    let mixed = json!({ "enum": ["a", 1] });
    assert!(schema_compatible(&mixed, &json!({ "type": ["string", "integer"] })).is_compatible());
    incompatible(&mixed, &json!({ "type": "string" }));
    // A `const` likewise.
    let one = json!({ "const": 1 });
    assert!(schema_compatible(&one, &json!({ "type": "integer" })).is_compatible());
    incompatible(&one, &json!({ "type": "string" }));
    // An `enum` narrows a `type` that allows more.
    let narrowed = json!({ "type": ["string", "integer"], "enum": ["a"] });
    assert!(schema_compatible(&narrowed, &json!({ "type": "string" })).is_compatible());
    let narrowed = json!({ "type": ["string", "integer"], "const": "a" });
    assert!(schema_compatible(&narrowed, &json!({ "type": "string" })).is_compatible());
}

#[test]
fn a_consumer_with_no_constraint_takes_any_producer() {
    // Even a producer the checker cannot reason about (`patternProperties` could widen it):
    // a consumer of annotations only, or `{}`, takes every value.
    let widening = json!({ "type": "object", "patternProperties": { "^x": { "type": "string" } } });
    for consumer in [json!({}), json!({ "description": "anything" }), json!(true)] {
        let answer = schema_compatible(&widening, &consumer);
        assert!(answer.is_compatible(), "{consumer}: {answer}");
    }
    let answer = schema_compatible(&widening, &json!({ "type": "object" }));
    assert!(!answer.is_compatible(), "{answer}");
}

#[test]
fn a_producer_range_with_no_number_in_it_fits_any_consumer_range() {
    let consumer = json!({ "type": "number", "maximum": 0 });
    for empty in [
        json!({ "type": "integer", "minimum": 5, "maximum": 4 }),
        json!({ "type": "number", "minimum": 5, "maximum": 4 }),
        json!({ "type": "number", "exclusiveMinimum": 1, "maximum": 1 }),
        json!({ "type": "number", "minimum": 1, "exclusiveMaximum": 1 }),
        json!({ "type": "number", "minimum": 0.5, "exclusiveMaximum": 0.5 }),
        // Over the integers, (1, 2) holds no value.
        json!({ "type": "integer", "exclusiveMinimum": 1, "exclusiveMaximum": 2 }),
    ] {
        let answer = schema_compatible(&empty, &consumer);
        assert!(answer.is_compatible(), "{empty}: {answer}");
    }
    // A range of one number is not empty, nor is one with an exclusive end.
    incompatible(
        &json!({ "type": "number", "minimum": 1, "maximum": 1 }),
        &consumer,
    );
    incompatible(
        &json!({ "type": "number", "exclusiveMinimum": 0, "maximum": 10 }),
        &consumer,
    );
    incompatible(
        &json!({ "type": "number", "minimum": 0, "exclusiveMaximum": 10 }),
        &json!({ "type": "number", "maximum": 5 }),
    );
}

#[test]
fn an_equal_bound_fits_only_when_the_consumer_is_not_stricter_there() {
    // Over the non-integers, where bounds keep their exclusivity: 0.5 is the producer's and
    // not the consumer's.
    let why = incompatible(
        &json!({ "type": "number", "minimum": 0.5 }),
        &json!({ "type": "number", "exclusiveMinimum": 0.5 }),
    );
    assert_eq!(why.witness, json!(0.5));
    let why = incompatible(
        &json!({ "type": "number", "maximum": 0.5 }),
        &json!({ "type": "number", "exclusiveMaximum": 0.5 }),
    );
    assert_eq!(why.witness, json!(0.5));
    // The other way round, and equal bounds of the same kind, fit.
    for (p, c) in [
        (
            json!({ "exclusiveMinimum": 0.5 }),
            json!({ "minimum": 0.5 }),
        ),
        (
            json!({ "exclusiveMaximum": 0.5 }),
            json!({ "maximum": 0.5 }),
        ),
        (json!({ "minimum": 0.5 }), json!({ "minimum": 0.5 })),
        (
            json!({ "exclusiveMaximum": 0.5 }),
            json!({ "exclusiveMaximum": 0.5 }),
        ),
    ] {
        let mut p = p;
        p["type"] = json!("number");
        let mut c = c;
        c["type"] = json!("number");
        let answer = schema_compatible(&p, &c);
        assert!(answer.is_compatible(), "{p} {c}: {answer}");
    }
}

#[test]
fn bounds_past_two_to_the_53_are_not_reasoned_about() {
    // As `f64`, 2^53 + 1 is 2^53: comparing them proved a wrong inclusion (the producer
    // allows 2^53 + 1, the consumer does not).
    let producer = json!({ "type": "integer", "minimum": 0, "maximum": 9_007_199_254_740_993_u64 });
    let consumer = json!({ "type": "integer", "minimum": 0, "maximum": 9_007_199_254_740_992_u64 });
    for (p, c) in [(&producer, &consumer), (&consumer, &producer)] {
        let Compatibility::Unknown(u) = schema_compatible(p, c) else {
            panic!("expected unknown for {p} {c}");
        };
        assert_eq!(
            u.reason,
            "numeric bounds beyond 2^53 are not reasoned about"
        );
    }
    // Below 2^53 every integer is exact.
    let under = json!({ "type": "integer", "minimum": 0, "maximum": 9_007_199_254_740_991_u64 });
    assert!(schema_compatible(&under, &json!({ "type": "integer", "minimum": 0 })).is_compatible());
    assert!(schema_compatible(&under, &under).is_compatible());
    let past = json!({ "type": "integer", "multipleOf": 9_007_199_254_740_993_u64 });
    assert!(matches!(
        schema_compatible(&past, &json!({ "type": "integer" })),
        Compatibility::Compatible | Compatibility::Unknown(_)
    ));
    assert!(matches!(
        schema_compatible(&json!({ "type": "integer" }), &past),
        Compatibility::Unknown(_)
    ));
}

/// A string schema wrapped in `levels` one-element `key` lists (`allOf`, `anyOf`, `oneOf`).
fn nested_in(key: &str, levels: usize) -> Value {
    let mut schema = json!({ "type": "string" });
    for _ in 0..levels {
        schema = json!({ key: [schema] });
    }
    schema
}

/// [`nested_in`] `allOf`.
fn nested(levels: usize) -> Value {
    nested_in("allOf", levels)
}

/// Asserts the answer of a comparison past the depth (or step) limit.
fn too_deep(answer: Compatibility) {
    match answer {
        Compatibility::Unknown(u) => {
            assert_eq!(u.reason, "the schemas are too large or too deep to compare")
        }
        other => panic!("expected too deep, got {other}"),
    }
}

#[test]
fn conjunctions_and_alternatives_count_toward_the_depth_limit() {
    let string = json!({ "type": "string" });
    // 64 levels are compared; the 65th is past the limit.
    assert!(schema_compatible(&string, &nested(64)).is_compatible());
    too_deep(schema_compatible(&string, &nested(65)));
    assert!(schema_compatible(&nested(64), &string).is_compatible());
    too_deep(schema_compatible(&nested(65), &string));
    // Producer alternatives likewise, `anyOf` and `oneOf`.
    for key in ["anyOf", "oneOf"] {
        assert!(schema_compatible(&nested_in(key, 64), &string).is_compatible());
        too_deep(schema_compatible(&nested_in(key, 65), &string));
    }
    // A `true` producer is compared as `{}`, one level further down.
    incompatible(&json!(true), &nested(63));
    too_deep(schema_compatible(&json!(true), &nested(64)));
}

#[test]
fn references_and_consumer_alternatives_count_toward_the_depth_limit() {
    /// A chain of `links` references, `#/$defs/A0` to the last, which is a string.
    fn chain(links: usize) -> Value {
        let mut defs = Map::new();
        for i in 0..links - 1 {
            defs.insert(
                format!("A{i}"),
                json!({ "$ref": format!("#/$defs/A{}", i + 1) }),
            );
        }
        defs.insert(format!("A{}", links - 1), json!({ "type": "string" }));
        json!({ "$defs": defs, "$ref": "#/$defs/A0" })
    }
    let any_of = |levels| nested_in("anyOf", levels);
    let string = json!({ "type": "string" });
    // Each reference followed is a level, on either side.
    assert!(schema_compatible(&chain(64), &string).is_compatible());
    too_deep(schema_compatible(&chain(65), &string));
    assert!(schema_compatible(&string, &chain(64)).is_compatible());
    too_deep(schema_compatible(&string, &chain(65)));
    // So is each consumer alternative.
    assert!(schema_compatible(&string, &any_of(64)).is_compatible());
    too_deep(schema_compatible(&string, &any_of(65)));
    // Keywords beside a consumer's reference are checked one level down.
    let beside = |levels| json!({ "$defs": { "S": { "type": "string" } }, "$ref": "#/$defs/S", "allOf": [nested(levels)] });
    assert!(schema_compatible(&string, &beside(62)).is_compatible());
    too_deep(schema_compatible(&string, &beside(63)));
    // And beside a consumer's alternatives (here an array's items, one more level down).
    let strings = json!({ "type": "array", "items": { "type": "string" } });
    let items_beside = |levels| json!({ "anyOf": [{ "type": "array" }], "items": nested(levels) });
    assert!(schema_compatible(&strings, &items_beside(62)).is_compatible());
    too_deep(schema_compatible(&strings, &items_beside(63)));
}

#[test]
fn a_producer_of_several_types_may_be_covered_by_several_branches() {
    let either = json!({ "type": ["string", "null"] });
    let branches = json!({ "anyOf": [{ "type": "string" }, { "type": "null" }] });
    assert!(schema_compatible(&either, &branches).is_compatible());
    // No branch takes a string: the reason says so.
    let why = incompatible(
        &json!({ "type": "string" }),
        &json!({ "anyOf": [{ "type": "integer" }, { "type": "null" }] }),
    );
    assert!(
        why.reason
            .starts_with("no branch of the consumer's `anyOf` accepts it: "),
        "{}",
        why.reason
    );
    assert!(why.witness.is_string());
    // The split by type is a level deeper.
    let split = |levels| json!({ "anyOf": [{ "type": "null" }, nested(levels)] });
    assert!(schema_compatible(&either, &split(62)).is_compatible());
    assert!(!schema_compatible(&either, &split(63)).is_compatible());
}

#[test]
fn against_a_list_of_values_the_witness_is_a_producer_value_not_listed() {
    let why = incompatible(&json!({ "type": "string" }), &json!({ "enum": ["", "a"] }));
    assert!(why.witness.is_string(), "{why:?}");
    assert!(
        why.witness != json!("") && why.witness != json!("a"),
        "{why:?}"
    );
    assert_eq!(why.reason, "the consumer allows only some values");
    let why = incompatible(
        &json!({ "type": "string", "minLength": 2 }),
        &json!({ "const": "ab" }),
    );
    let text = why.witness.as_str().expect("a string");
    assert!(text.chars().count() >= 2 && text != "ab", "{why:?}");
}

#[test]
fn multiples_imply_multiples_and_a_witness_is_found_within_the_range() {
    for (p, c) in [(6, 3), (9, 3), (10, 5), (12, 4)] {
        let answer = schema_compatible(
            &json!({ "type": "integer", "multipleOf": p }),
            &json!({ "type": "integer", "multipleOf": c }),
        );
        assert!(answer.is_compatible(), "{p} {c}: {answer}");
    }
    // Multiples of 7 from 100 to 130 (105, 112, 119, 126): an odd one is the witness that
    // multiples of 14 do not cover them.
    let why = incompatible(
        &json!({ "type": "integer", "multipleOf": 7, "minimum": 100, "maximum": 130 }),
        &json!({ "type": "integer", "multipleOf": 14 }),
    );
    let n = why.witness.as_i64().expect("an integer");
    assert!(
        (100..=130).contains(&n) && n % 7 == 0 && n % 14 != 0,
        "{why:?}"
    );
    assert_eq!(
        why.reason,
        "the consumer's `multipleOf` is not implied by the producer's"
    );
    // The range's first multiple, when it is the only one; the second, when the first is
    // the consumer's.
    for (low, high, witness) in [(100, 106, 105), (112, 125, 119)] {
        let why = incompatible(
            &json!({ "type": "integer", "multipleOf": 7, "minimum": low, "maximum": high }),
            &json!({ "type": "integer", "multipleOf": 14 }),
        );
        assert_eq!(why.witness, json!(witness));
    }
}

/// Numeric bounds and multiples are decided exactly: for schemas of a numeric type, bounds
/// (`minimum`, `maximum`, the exclusive ones; integers and halves) and `multipleOf` (a tenth
/// to four, decimal and fractional ones among them), the answer is compatible exactly when no
/// number the producer allows is refused by the consumer, and incompatible (with a witness)
/// otherwise: never unknown, but for a producer reaching past 2^53 against a `multipleOf` the
/// validator divides by after rounding (`multiples_past_two_to_the_53_...`). Checked against a
/// brute-force search over every quarter and every tenth in [-16, 16].
#[test]
fn numeric_bounds_are_decided_exactly() {
    fn bounds(rng: &mut Rng) -> Value {
        let mut schema = Map::new();
        let ty = ["integer", "number"][rng.below(2)];
        schema.insert("type".into(), json!(ty));
        for key in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
            if rng.chance(35) {
                let n = rng.below(21) as f64 - 10.0;
                let n = if rng.chance(30) { n + 0.5 } else { n };
                schema.insert(key.into(), json!(n));
            }
        }
        if rng.chance(35) {
            let m = [0.1, 0.25, 0.3, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0][rng.below(10)];
            schema.insert("multipleOf".into(), json!(m));
        }
        Value::Object(schema)
    }
    let mut rng = Rng(std::env::var("AGENT_IO_COMPAT_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(11));
    // Every quarter and every tenth (as the validator reads them: `0.3` is a multiple of `0.1`).
    let probes: Vec<Value> = (-1600..=1600)
        .filter(|i| i % 25 == 0 || i % 10 == 0)
        .map(|i| {
            if i % 100 == 0 {
                json!(i / 100)
            } else {
                json!(f64::from(i) / 100.0)
            }
        })
        .collect();
    let (mut compatible, mut incompatible_seen, mut by_multiple, mut rounded) = (0, 0, 0, 0);
    let cases: usize = std::env::var("AGENT_IO_COMPAT_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000);
    for _ in 0..cases {
        let (p, c) = (bounds(&mut rng), bounds(&mut rng));
        let (pv, cv) = (validator(&p), validator(&c));
        let witness = probes.iter().any(|v| pv.is_valid(v) && !cv.is_valid(v));
        let answer = schema_compatible(&p, &c);
        if witness {
            assert!(
                matches!(answer, Compatibility::Incompatible(_)),
                "{p} {c}: {answer}"
            );
            assert_witness(&p, &c, &answer);
            incompatible_seen += 1;
            if let Compatibility::Incompatible(why) = &answer
                && why.reason.contains("multipleOf")
            {
                by_multiple += 1;
            }
        } else if answer.is_compatible() {
            compatible += 1;
        } else if matches!(answer, Compatibility::Incompatible(_)) {
            // A witness between the probes (a quarter, say): real, as checked here.
            assert_witness(&p, &c, &answer);
        } else if let Compatibility::Unknown(why) = &answer
            && why.reason.contains("past 2^53")
        {
            // The one exception (see `multiples_past_two_to_the_53_...`): a producer reaching
            // past 2^53 against a `multipleOf` the validator divides by after rounding. The
            // probes found no witness, and none is claimed.
            let unbounded = |key: &str, other: &str| p.get(key).is_none() && p.get(other).is_none();
            assert!(
                unbounded("minimum", "exclusiveMinimum")
                    || unbounded("maximum", "exclusiveMaximum"),
                "{p} {c}: {answer}"
            );
            rounded += 1;
        } else {
            panic!("{p} {c}: {answer}: bounds are decided, never unknown");
        }
    }
    assert!(
        rounded < cases / 10,
        "{rounded} answers left to the rounding exception"
    );
    assert!(
        compatible > cases / 12 && incompatible_seen > cases / 12 && by_multiple > cases / 50,
        "{compatible} {incompatible_seen} {by_multiple}"
    );
}

#[test]
fn string_answers_say_which_rule_parts_them() {
    let s = |extra: Value| {
        let mut schema = json!({ "type": "string" });
        schema
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        schema
    };
    let reason = |p: Value, c: Value| match schema_compatible(&s(p), &s(c)) {
        Compatibility::Incompatible(why) => format!("incompatible: {}", why.reason),
        Compatibility::Unknown(u) => format!("unknown: {}", u.reason),
        Compatibility::Compatible => "compatible".to_owned(),
    };
    assert_eq!(
        reason(json!({ "maxLength": 10 }), json!({ "maxLength": 5 })),
        "incompatible: the producer allows strings of lengths the consumer refuses"
    );
    assert_eq!(
        reason(json!({}), json!({ "pattern": "^a" })),
        "incompatible: the consumer's `pattern` is not the producer's"
    );
    assert_eq!(
        reason(json!({}), json!({ "format": "email" })),
        "incompatible: the consumer's `format` is not the producer's"
    );
    assert_eq!(
        reason(json!({ "pattern": "^ab" }), json!({ "pattern": "^a" })),
        "unknown: the consumer has a `pattern` the producer does not share"
    );
    assert_eq!(
        reason(json!({ "format": "ipv4" }), json!({ "format": "ipv6" })),
        "unknown: the consumer has a `format` the producer does not share"
    );
    assert_eq!(
        reason(json!({ "minLength": 5000 }), json!({ "maxLength": 4999 })),
        "unknown: string lengths differ and no value showing it was found"
    );
    assert_eq!(
        reason(
            json!({ "pattern": "^a", "format": "email", "maxLength": 3 }),
            json!({ "pattern": "^a", "format": "email" })
        ),
        "compatible"
    );
}

#[test]
fn a_closed_tuple_is_as_long_as_its_items() {
    let pair = json!({ "type": "array", "prefixItems": [{ "type": "string" }, { "type": "number" }], "items": false });
    let at_most_two = json!({ "type": "array", "maxItems": 2 });
    assert!(schema_compatible(&pair, &at_most_two).is_compatible());
    // A `maxItems` above the tuple's length does not make it longer.
    let mut capped = pair.clone();
    capped["maxItems"] = json!(5);
    assert!(schema_compatible(&capped, &at_most_two).is_compatible());
    // An open tuple is not bounded by its items.
    let mut open = pair;
    open.as_object_mut().unwrap().remove("items");
    incompatible(&open, &at_most_two);
}

#[test]
fn item_count_witnesses_are_producer_lengths_of_at_most_64_items() {
    // Lengths the producer allows are tried: 3 fits the consumer, 6 does not (1 is too short
    // for the producer, so it is no witness).
    let why = incompatible(
        &json!({ "type": "array", "minItems": 3 }),
        &json!({ "type": "array", "minItems": 2, "maxItems": 5 }),
    );
    assert_eq!(why.witness.as_array().map(Vec::len), Some(6));
    assert_eq!(
        why.reason,
        "the producer allows more or fewer items than the consumer"
    );
    // At most 2 items against at least 3: the empty array.
    let why = incompatible(
        &json!({ "type": "array", "maxItems": 2 }),
        &json!({ "type": "array", "minItems": 3 }),
    );
    assert_eq!(why.witness, json!([]));
    // Exactly two items against at least three: the longest the producer allows.
    let why = incompatible(
        &json!({ "type": "array", "minItems": 2, "maxItems": 2 }),
        &json!({ "type": "array", "minItems": 3 }),
    );
    assert_eq!(why.witness.as_array().map(Vec::len), Some(2));
    // A witness is not built past 64 items.
    let Compatibility::Unknown(u) = schema_compatible(
        &json!({ "type": "array", "minItems": 100 }),
        &json!({ "type": "array", "maxItems": 50 }),
    ) else {
        panic!("expected unknown")
    };
    assert_eq!(
        u.reason,
        "item counts differ and no value showing it was found"
    );
    let why = incompatible(
        &json!({ "type": "array", "minItems": 64 }),
        &json!({ "type": "array", "maxItems": 50 }),
    );
    assert_eq!(why.witness.as_array().map(Vec::len), Some(64));
}

#[test]
fn nested_items_count_toward_the_depth_limit() {
    let items = |levels: usize| {
        let mut schema = json!({ "type": "string" });
        for _ in 0..levels {
            schema = json!({ "type": "array", "items": schema });
        }
        schema
    };
    assert!(schema_compatible(&items(64), &items(64)).is_compatible());
    too_deep(schema_compatible(&items(65), &items(65)));
}

#[test]
fn unique_items_and_object_rules() {
    let unique = json!({ "type": "array", "uniqueItems": true });
    // One item at most is always unique.
    assert!(schema_compatible(&json!({ "type": "array", "maxItems": 1 }), &unique).is_compatible());
    let why = incompatible(&json!({ "type": "array" }), &unique);
    assert_eq!(
        why.reason,
        "the consumer requires unique items, the producer does not"
    );
    // `minProperties` against what the producer requires.
    let two =
        json!({ "type": "object", "properties": { "a": {}, "b": {} }, "required": ["a", "b"] });
    let at_least = |n: u64| json!({ "type": "object", "minProperties": n });
    assert!(schema_compatible(&two, &at_least(2)).is_compatible());
    assert!(schema_compatible(&two, &at_least(1)).is_compatible());
    let Compatibility::Unknown(u) = schema_compatible(&two, &at_least(3)) else {
        panic!("expected unknown")
    };
    assert_eq!(
        u.reason,
        "the consumer's `minProperties` is more than the producer requires"
    );
    // Any other name than the consumer's own: `extra` is taken, so `extra_`.
    let why = incompatible(
        &json!({ "type": "object" }),
        &json!({ "type": "object", "properties": { "extra": {} }, "additionalProperties": false }),
    );
    let keys: Vec<&String> = why.witness.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["extra_"], "{why:?}");
}

#[test]
fn properties_count_toward_the_depth_limit_and_recursion_through_them_is_proven() {
    let objects = |levels: usize| {
        let mut schema = json!({ "type": "string" });
        for _ in 0..levels {
            schema = json!({ "type": "object", "properties": { "x": schema }, "required": ["x"] });
        }
        schema
    };
    assert!(schema_compatible(&objects(64), &objects(64)).is_compatible());
    too_deep(schema_compatible(&objects(65), &objects(65)));
    // A linked list: the reference is met again one value further down, so it is assumed.
    let list = json!({
        "$defs": { "Node": { "type": "object", "properties": { "next": { "$ref": "#/$defs/Node" } } } },
        "$ref": "#/$defs/Node"
    });
    assert!(schema_compatible(&list, &list).is_compatible());
}

#[test]
fn one_of_branches_are_told_apart_by_the_types_of_their_values() {
    let string = json!({ "type": "string" });
    // A `const` or an `enum` of numbers cannot match a string: the branches are disjoint.
    for other in [json!({ "const": 1 }), json!({ "enum": [1, 2] })] {
        let consumer = json!({ "oneOf": [{ "type": "string" }, other] });
        let answer = schema_compatible(&string, &consumer);
        assert!(answer.is_compatible(), "{consumer}: {answer}");
    }
    // An integer may match both branches (1 does), so one branch taking it proves nothing.
    let overlapping = json!({ "oneOf": [{ "type": "integer" }, { "enum": [1, 2] }] });
    let Compatibility::Unknown(u) = schema_compatible(&json!({ "type": "integer" }), &overlapping)
    else {
        panic!("expected unknown")
    };
    assert_eq!(u.reason, "the consumer's `oneOf` branches may overlap");
}

#[test]
fn against_a_consumer_that_takes_nothing_any_producer_value_is_a_witness() {
    let nothing = json!(false);
    // Through references and alternatives, as deep as the limit and no deeper.
    for (key, levels) in [("anyOf", 64), ("oneOf", 64), ("allOf", 64)] {
        let why = incompatible(&nested_in(key, levels), &nothing);
        assert_eq!(why.witness, json!(""), "{key}");
        assert_eq!(why.reason, "the consumer accepts nothing here");
        let Compatibility::Unknown(u) = schema_compatible(&nested_in(key, levels + 1), &nothing)
        else {
            panic!("{key}: expected unknown")
        };
        assert_eq!(u.reason, "the consumer accepts nothing here");
    }
    let referenced = json!({ "$defs": { "S": { "type": "string" } }, "$ref": "#/$defs/S" });
    assert_eq!(incompatible(&referenced, &nothing).witness, json!(""));
    // A multiple inside the bounds.
    let why = incompatible(
        &json!({ "type": "integer", "multipleOf": 7, "minimum": 100 }),
        &nothing,
    );
    assert_eq!(why.witness, json!(105));
    // An integer that is a multiple of a fraction: the second or third multiple from the
    // bound may be the first integer (1.5 from 4: 4.5, 6; 0.75 from 4: 4.5, 5.25, 6).
    for (m, low) in [(1.5, 3.3), (0.75, 4.0)] {
        let why = incompatible(
            &json!({ "type": "integer", "multipleOf": m, "minimum": low }),
            &nothing,
        );
        assert_eq!(why.witness, json!(6), "{m} {low}");
    }
}

#[test]
fn string_examples_keep_their_format_and_length() {
    for (format, example) in [
        ("date-time", "1970-01-01T00:00:00Z"),
        ("date", "1970-01-01"),
        ("time", "00:00:00Z"),
        ("email", "a@example.com"),
        ("uri", "https://example.com/"),
        ("url", "https://example.com/"),
        ("uuid", "00000000-0000-0000-0000-000000000000"),
        ("ipv4", "127.0.0.1"),
        ("ipv6", "::1"),
        ("hostname", "example.com"),
    ] {
        let why = incompatible(
            &json!({ "type": "string", "format": format }),
            &json!(false),
        );
        assert_eq!(why.witness, json!(example), "{format}");
    }
    let why = incompatible(&json!({ "type": "string", "minLength": 3 }), &json!(false));
    assert_eq!(why.witness, json!("aaa"));
    // Past 4096 characters, no example is built.
    let Compatibility::Unknown(_) = schema_compatible(
        &json!({ "type": "string", "minLength": 4097 }),
        &json!(false),
    ) else {
        panic!("expected unknown")
    };
    assert!(matches!(
        schema_compatible(
            &json!({ "type": "string", "minLength": 4096 }),
            &json!(false)
        ),
        Compatibility::Incompatible(_)
    ));
}

#[test]
fn keywords_beside_a_reference_are_checked_with_the_documents_definitions() {
    // The consumer's `maxLength` beside its reference is compared on its own (a schema built
    // for the comparison, validated with the document's definitions around it).
    let consumer = json!({
        "$defs": { "S": { "type": "string" } },
        "$ref": "#/$defs/S",
        "maxLength": 3
    });
    let why = incompatible(&json!({ "type": "string", "maxLength": 10 }), &consumer);
    let text = why.witness.as_str().expect("a string");
    assert!(text.chars().count() > 3, "{why:?}");
    assert!(
        schema_compatible(&json!({ "type": "string", "maxLength": 2 }), &consumer).is_compatible()
    );
    // Beside a reference that the built schema still needs (an item of the definition).
    let consumer = json!({
        "$defs": { "S": { "type": "string" }, "L": { "type": "array", "items": { "$ref": "#/$defs/S" } } },
        "$ref": "#/$defs/L",
        "maxItems": 1,
        "items": { "$ref": "#/$defs/S" }
    });
    let why = incompatible(
        &json!({ "type": "array", "items": { "type": "string" }, "maxItems": 5 }),
        &consumer,
    );
    assert!(
        why.witness.as_array().is_some_and(|a| a.len() > 1),
        "{why:?}"
    );
}

/// Sound against the validator that will check the values: past 2^53 `jsonschema` reads a
/// number through `f64` before dividing it by a fractional `multipleOf`, so an integer
/// multiple of 6 near 2^64 is refused as a multiple of 1.5. The checker must not prove what
/// the validator then refuses.
#[test]
fn multiples_past_two_to_the_53_are_not_proven_where_the_validator_rounds() {
    let producer = json!({ "type": "integer", "multipleOf": 6 });
    let consumer = json!({ "multipleOf": 1.5 });
    // The hazard, in the validators themselves: 2^64 - 4 is a multiple of 6, and of 1.5.
    let witness = json!(18_446_744_073_709_551_612_u64);
    assert!(validator(&producer).is_valid(&witness));
    assert!(!validator(&consumer).is_valid(&witness));
    let answer = schema_compatible(&producer, &consumer);
    assert!(!answer.is_compatible(), "{answer}");
    assert!(
        matches!(&answer, Compatibility::Unknown(u) if u.reason.contains("2^53")),
        "{answer}"
    );
    // The same producer the other way round: a fractional producer multiple.
    let answer = schema_compatible(
        &json!({ "type": "integer", "multipleOf": 1.5 }),
        &json!({ "type": "integer", "multipleOf": 3 }),
    );
    assert!(!answer.is_compatible(), "{answer}");

    // One open end is enough to reach past 2^53.
    let from_zero = json!({ "type": "integer", "multipleOf": 6, "minimum": 0 });
    assert!(!schema_compatible(&from_zero, &consumer).is_compatible());
    let to_zero = json!({ "type": "integer", "multipleOf": 6, "maximum": 0 });
    assert!(!schema_compatible(&to_zero, &consumer).is_compatible());
    // Bounded below 2^53, arithmetic and the validator agree: proven.
    let bounded = json!({ "type": "integer", "multipleOf": 6, "minimum": 0, "maximum": 9_000_000_000_000_000_u64 });
    assert!(schema_compatible(&bounded, &consumer).is_compatible());
    // Whole multiples are divided exactly at any size: proven unbounded.
    assert!(schema_compatible(&producer, &json!({ "multipleOf": 3 })).is_compatible());
}
