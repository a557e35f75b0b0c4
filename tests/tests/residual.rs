//! Residual validation is equivalent to full validation, proven over the serde attribute
//! matrix.
//!
//! For each type below, values are generated from its own schema (mostly conforming, with
//! wrong types, bounds off by one, missing and unknown fields, wild values mixed in) and both
//! paths are run on each:
//!
//! - input: `validate` then `decode` (the full path) against `from_input_value` (serde first,
//!   then only the residual schema): the same success, the same value, the same error;
//! - output: for every value serde decodes, whatever the schema says of it, `encode` then
//!   `validate` against `to_output_value`: the same success and the same error.
//!
//! 10,000 cases per type by default; `AGENT_IO_RESIDUAL_CASES` sets more, and
//! `AGENT_IO_RESIDUAL_SEED` replays a failing run (the seed is printed on failure).
#![allow(missing_docs, dead_code)]

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;

use agentio_core::{AgentError, AgentInput, AgentOutput};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value, json};

// ---------------------------------------------------------------------------------------------
// The matrix.

/// Every leaf type serde handles itself.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Leaves {
    s: String,
    b: bool,
    n: u8,
    i: i64,
    u: u64,
    f: f64,
    g: f32,
    c: char,
}

/// Renames, defaults, skips, `deny_unknown_fields`, and schemars constraints.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Attributes {
    #[schemars(length(min = 1, max = 5))]
    short_name: String,
    #[schemars(range(min = 1, max = 10))]
    count: u32,
    #[schemars(regex(pattern = r"^[a-z]+$"))]
    slug: String,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(rename = "why")]
    reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(skip)]
    hidden: u8,
    #[schemars(length(max = 2))]
    #[serde(default)]
    few: Vec<u8>,
}

/// An alias: serde reads a name the schema does not know.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Aliased {
    #[serde(alias = "nm")]
    name: String,
    n: u8,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
#[serde(deny_unknown_fields)]
struct Inner {
    #[schemars(range(max = 9))]
    level: u8,
    label: String,
}

/// Nested derived types through every container.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Nested {
    inner: Inner,
    list: Vec<Inner>,
    map: BTreeMap<String, Inner>,
    maybe: Option<Inner>,
    boxed: Box<Inner>,
}

/// Every bound the fast checker knows, on values it checks while writing (`to_output_json`)
/// and while building (`to_output_value`): lengths in characters, ranges (an `f32` widened as
/// a `Value` widens it), item counts, an option left out, a nested derived type in a map (in
/// a list: `Nested`).
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Bounded {
    #[schemars(length(min = 2, max = 4))]
    name: String,
    #[schemars(range(min = -5, max = 5))]
    delta: i32,
    #[schemars(range(min = 0.0, max = 1.0))]
    ratio: f32,
    #[schemars(length(min = 1, max = 3))]
    codes: Vec<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 3))]
    note: Option<String>,
    by_name: BTreeMap<String, Inner>,
}

/// A list with bounds of its own: the container keeps them.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct ListBounds {
    #[schemars(length(min = 1, max = 2))]
    items: Vec<Inner>,
    #[serde(default)]
    more: Vec<Inner>,
}

/// A derived struct whose hand-written schema limits the number of properties (serde does
/// not): kept whole.
#[derive(Debug, PartialEq, Serialize, Deserialize, AgentInput, AgentOutput)]
struct HandWrittenExtra {
    a: u8,
}

impl JsonSchema for HandWrittenExtra {
    fn schema_name() -> Cow<'static, str> {
        "HandWrittenExtra".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let a = generator.subschema_for::<u8>();
        schemars::json_schema!({
            "type": "object",
            "properties": { "a": a },
            "required": ["a"],
            "maxProperties": 1
        })
    }
}

/// A hand-written schema that refuses unknown properties, over a type whose serde does not.
#[derive(Debug, PartialEq, Serialize, Deserialize, AgentInput, AgentOutput)]
struct HandWrittenClosed {
    a: u8,
}

impl JsonSchema for HandWrittenClosed {
    fn schema_name() -> Cow<'static, str> {
        "HandWrittenClosed".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let a = generator.subschema_for::<u8>();
        schemars::json_schema!({
            "type": "object",
            "properties": { "a": a },
            "required": ["a"],
            "additionalProperties": false
        })
    }
}

/// A hand-written schema naming a property serde does not read (and would ignore).
#[derive(Debug, PartialEq, Serialize, Deserialize, AgentInput, AgentOutput)]
struct HandWrittenExtraProperty {
    a: u8,
}

impl JsonSchema for HandWrittenExtraProperty {
    fn schema_name() -> Cow<'static, str> {
        "HandWrittenExtraProperty".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let a = generator.subschema_for::<u8>();
        schemars::json_schema!({
            "type": "object",
            "properties": { "a": a, "zz": { "type": "string", "maxLength": 1 } },
            "required": ["a"]
        })
    }
}

/// A recursive derived type reached through `$defs` (not the root).
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct TreeNode {
    #[schemars(length(max = 3))]
    label: String,
    children: Vec<TreeNode>,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Forest {
    trees: Vec<TreeNode>,
    count: u8,
}

/// Holds derived types whose schemas are kept whole: kept by reference, not copied.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Holder {
    extra: HandWrittenExtra,
    property: HandWrittenExtraProperty,
    n: u8,
}

/// A nested type with only `JsonSchema` derived: opaque.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Hit {
    id: String,
    #[schemars(range(min = 0.0, max = 1.0))]
    score: f64,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Foreign {
    hit: Hit,
    hits: Vec<Hit>,
    next: Option<String>,
}

/// A string whose hand-written schema says more than its `Deserialize` checks.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Code(String);

impl JsonSchema for Code {
    fn schema_name() -> Cow<'static, str> {
        "Code".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string", "maxLength": 3, "pattern": "^[A-Z]+$" })
    }
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct HandWrittenField {
    code: Code,
    codes: Vec<Code>,
    n: u8,
}

/// A derived type whose whole schema is hand-written, stricter than serde.
#[derive(Debug, PartialEq, Serialize, Deserialize, AgentInput, AgentOutput)]
struct HandWrittenType {
    a: u8,
    b: Option<String>,
}

impl JsonSchema for HandWrittenType {
    fn schema_name() -> Cow<'static, str> {
        "HandWrittenType".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "properties": {
                "a": { "type": "integer", "minimum": 0, "maximum": 5 },
                "b": { "type": ["string", "null"] }
            },
            "required": ["a", "b"]
        })
    }
}

/// A hand-written schema shaped exactly as the derive would write it: trusted, and right to be.
#[derive(Debug, PartialEq, Serialize, Deserialize, AgentInput, AgentOutput)]
struct HandWrittenExact {
    a: u8,
}

impl JsonSchema for HandWrittenExact {
    fn schema_name() -> Cow<'static, str> {
        "HandWrittenExact".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let a = generator.subschema_for::<u8>();
        schemars::json_schema!({
            "type": "object",
            "properties": { "a": a },
            "required": ["a"]
        })
    }
}

#[derive(
    Debug, PartialEq, Default, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput,
)]
#[serde(default)]
struct ContainerDefault {
    a: u8,
    #[schemars(length(min = 2))]
    b: String,
    c: Vec<bool>,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Flattened {
    #[serde(flatten)]
    inner: Inner,
    x: u8,
}

fn lenient_u8<'de, D: Deserializer<'de>>(d: D) -> Result<u8, D::Error> {
    // Accepts a number or a numeric string.
    let v = Value::deserialize(d)?;
    match v {
        Value::Number(n) => n
            .as_u64()
            .and_then(|n| u8::try_from(n).ok())
            .ok_or_else(|| serde::de::Error::custom("not a u8")),
        Value::String(s) => s.parse().map_err(serde::de::Error::custom),
        _ => Err(serde::de::Error::custom("not a u8")),
    }
}

fn doubled<S: Serializer>(v: &u8, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u16(u16::from(*v) * 2)
}

/// serde reads and writes one field its own way: the field's schema is kept.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct CustomWith {
    #[serde(deserialize_with = "lenient_u8", serialize_with = "doubled")]
    #[schemars(range(max = 200))]
    v: u8,
    w: u8,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Recursive {
    #[schemars(length(max = 4))]
    name: String,
    children: Vec<Recursive>,
}

#[derive(Debug, PartialEq, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Kind {
    /// First.
    Alpha,
    BetaGamma,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct WithEnums {
    kind: Kind,
    maybe_kind: Option<Kind>,
    kinds: Vec<Kind>,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
#[serde(tag = "op", rename_all = "snake_case")]
enum Tagged {
    Add { a: i32, b: i32 },
    Neg { a: i32 },
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Dynamic {
    v: Value,
    m: HashMap<String, Value>,
    o: Option<Value>,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Floats {
    x: f32,
    y: Option<f64>,
    #[schemars(range(min = 0.0))]
    z: f64,
    zs: Vec<f64>,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Renamed {
    #[serde(rename(deserialize = "in_name", serialize = "out_name"))]
    value: u16,
    #[serde(skip_deserializing)]
    computed: u8,
    #[serde(skip_serializing)]
    secret: Option<String>,
}

// ---------------------------------------------------------------------------------------------
// The engine: a seeded generator of values shaped by a schema.

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

const PIECES: &[&str] = &[
    "a", "z", "Q", "Z", "7", " ", "é", "🙂", "-", "ab", "XYZ", "\u{0}",
];

fn string(rng: &mut Rng) -> String {
    let len = rng.below(7);
    (0..len).map(|_| *rng.pick(PIECES)).collect()
}

fn number(rng: &mut Rng, integer: bool) -> Value {
    let special = [
        json!(0),
        json!(1),
        json!(-1),
        json!(2),
        json!(9),
        json!(10),
        json!(11),
        json!(100),
        json!(200),
        json!(201),
        json!(255),
        json!(256),
        json!(65_535),
        json!(65_536),
        json!(i64::MAX),
        json!(i64::MIN),
        json!(u64::MAX),
        json!(3.0),
        json!(1.5),
        json!(-0.5),
        json!(0.25),
        json!(1e300),
        json!(-1e-300),
    ];
    if rng.chance(70) {
        return rng.pick(&special).clone();
    }
    if integer {
        json!(rng.below(300))
    } else {
        json!((rng.below(4000) as f64) / 1000.0 - 1.0)
    }
}

fn wild(rng: &mut Rng, depth: u32) -> Value {
    match rng.below(if depth > 2 { 5 } else { 7 }) {
        0 => Value::Null,
        1 => json!(rng.chance(50)),
        2 => {
            let integer = rng.chance(50);
            number(rng, integer)
        }
        3 | 4 => json!(string(rng)),
        5 => Value::Array((0..rng.below(3)).map(|_| wild(rng, depth + 1)).collect()),
        _ => {
            let mut map = Map::new();
            for _ in 0..rng.below(3) {
                map.insert(string(rng), wild(rng, depth + 1));
            }
            Value::Object(map)
        }
    }
}

struct Generator<'a> {
    root: &'a Value,
    rng: Rng,
}

impl Generator<'_> {
    fn value(&mut self, schema: &Value, depth: u32) -> Value {
        if depth > 5 || self.rng.chance(2) {
            return wild(&mut self.rng, depth);
        }
        let Some(map) = schema.as_object() else {
            return wild(&mut self.rng, depth);
        };
        if let Some(Value::String(reference)) = map.get("$ref") {
            let name = reference.trim_start_matches("#/$defs/");
            let target = self.root["$defs"][name].clone();
            return self.value(&target, depth);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = map.get(key) {
                let branch = self.rng.pick(branches).clone();
                let mut merged = branch.as_object().cloned().unwrap_or_default();
                for (k, v) in map {
                    if k != key {
                        merged.entry(k.clone()).or_insert(v.clone());
                    }
                }
                return self.value(&Value::Object(merged), depth);
            }
        }
        if let Some(Value::Array(choices)) = map.get("enum")
            && self.rng.chance(85)
        {
            return self.rng.pick(choices).clone();
        }
        if let Some(constant) = map.get("const")
            && self.rng.chance(85)
        {
            return constant.clone();
        }
        let kind = match map.get("type") {
            Some(Value::String(kind)) => kind.clone(),
            Some(Value::Array(kinds)) => self.rng.pick(kinds).as_str().unwrap_or("null").to_owned(),
            _ => return wild(&mut self.rng, depth),
        };
        match kind.as_str() {
            "object" => self.object(map, depth),
            "array" => {
                let items = map.get("items").cloned().unwrap_or(Value::Bool(true));
                let len = self.rng.below(4);
                Value::Array((0..len).map(|_| self.value(&items, depth + 1)).collect())
            }
            "string" => {
                let min = map.get("minLength").and_then(Value::as_u64).unwrap_or(0);
                let max = map
                    .get("maxLength")
                    .and_then(Value::as_u64)
                    .unwrap_or(min + 6);
                if self.rng.chance(60) && min <= max {
                    // Within the bounds, in letters of the pattern's case (every pattern here takes them).
                    let len =
                        min.max(1).min(max) + self.rng.below(max.saturating_sub(min.max(1)) + 1);
                    let len = len.min(max);
                    let upper = map
                        .get("pattern")
                        .and_then(Value::as_str)
                        .is_some_and(|p| p.contains("A-Z"));
                    let base = if upper { b'A' } else { b'a' };
                    json!(
                        (0..len)
                            .map(|_| char::from(base + self.rng.below(26) as u8))
                            .collect::<String>()
                    )
                } else {
                    json!(string(&mut self.rng))
                }
            }
            "integer" | "number" => {
                let integer = kind == "integer";
                let min = map.get("minimum").and_then(Value::as_f64);
                let max = map.get("maximum").and_then(Value::as_f64);
                if self.rng.chance(50) {
                    let low = min.unwrap_or(0.0).max(-1000.0);
                    let high = max.unwrap_or(low + 300.0).min(low + 300.0);
                    let step = self.rng.below(1001) as f64 / 1000.0;
                    let x = low + (high - low) * step;
                    if integer {
                        json!(x.round().clamp(low.ceil(), high.floor()) as i64)
                    } else {
                        json!(x)
                    }
                } else {
                    number(&mut self.rng, integer)
                }
            }
            "boolean" => json!(self.rng.chance(50)),
            "null" => Value::Null,
            _ => wild(&mut self.rng, depth),
        }
    }

    fn object(&mut self, map: &Map<String, Value>, depth: u32) -> Value {
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut out = Map::new();
        if let Some(Value::Object(properties)) = map.get("properties") {
            for (name, schema) in properties {
                let wanted = if required.contains(&name.as_str()) {
                    95
                } else {
                    50
                };
                if self.rng.chance(wanted) {
                    out.insert(name.clone(), self.value(schema, depth + 1));
                }
            }
        }
        if let Some(extra) = map.get("additionalProperties").filter(|v| v.is_object()) {
            for _ in 0..self.rng.below(3) {
                out.insert(string(&mut self.rng), self.value(extra, depth + 1));
            }
        }
        if self.rng.chance(5) {
            let key = *self
                .rng
                .pick(&["extra", "nm", "in_name", "out_name", "hidden"]);
            let value = wild(&mut self.rng, depth + 1);
            out.insert(key.to_owned(), value);
        }
        if self.rng.chance(2) {
            // serde_json reads a struct from an array of its fields, too.
            return Value::Array(out.into_iter().map(|(_, v)| v).collect());
        }
        Value::Object(out)
    }
}

// ---------------------------------------------------------------------------------------------
// The property.

#[derive(Default, Debug)]
struct Tally {
    accepted: u64,
    refused_by_schema: u64,
    refused_by_serde_only: u64,
    /// Valid, and refused by serde alone, yet accepted by both paths: a whole number written
    /// as a float (`3.0`) for an integer field, which the boundary reads as the integer.
    accepted_past_serde: u64,
    decoded_but_invalid: u64,
    outputs_checked: u64,
    outputs_refused: u64,
}

fn cases() -> u64 {
    std::env::var("AGENT_IO_RESIDUAL_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000)
}

fn seed_for(name: &str) -> u64 {
    if let Some(seed) = std::env::var("AGENT_IO_RESIDUAL_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return seed;
    }
    // Fixed per type, so a run is reproducible; the env var explores others.
    name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn full_input<T: AgentInput>(value: &Value) -> Result<T, AgentError> {
    let boundary = T::input_boundary();
    boundary.validate(value)?;
    Ok(boundary.decode(value)?)
}

fn full_output<T: AgentOutput>(value: &T) -> Result<Value, AgentError> {
    let boundary = T::output_boundary();
    let encoded = boundary.encode(value)?;
    boundary.validate(&encoded)?;
    Ok(encoded)
}

fn check_equivalence<T>() -> Tally
where
    T: AgentInput + AgentOutput + PartialEq + Debug,
{
    let name = std::any::type_name::<T>();
    let seed = seed_for(name);
    let schema = T::input_schema().clone();
    let mut generator = Generator {
        root: &schema,
        rng: Rng(seed),
    };
    let mut tally = Tally::default();
    for case in 0..cases() {
        let value = generator.value(&schema, 0);
        let fail = |what: &str| {
            panic!(
                "{what} for `{name}` on case {case} (AGENT_IO_RESIDUAL_SEED={seed}):\n{}",
                serde_json::to_string_pretty(&value).unwrap_or_default()
            )
        };
        let full = full_input::<T>(&value);
        let fast = T::from_input_value(&value);
        match (&full, &fast) {
            (Ok(a), Ok(b)) if a == b => {
                tally.accepted += 1;
                if T::deserialize(&value).is_err() {
                    tally.accepted_past_serde += 1;
                }
            }
            (Err(a), Err(b)) if a == b => {
                if T::validate_input(&value).is_ok() {
                    tally.refused_by_serde_only += 1;
                } else {
                    tally.refused_by_schema += 1;
                }
            }
            (Ok(_), Err(err)) => fail(&format!(
                "residual refused what full validation accepts ({err})"
            )),
            (Err(err), Ok(_)) => fail(&format!(
                "residual accepted what full validation refuses ({err})"
            )),
            (Ok(a), Ok(b)) => fail(&format!("different values: {a:?} vs {b:?}")),
            (Err(a), Err(b)) => fail(&format!("different errors:\n full: {a:?}\n fast: {b:?}")),
        }
        // The output side: any value serde can build, valid or not.
        if let Ok(typed) = T::deserialize(&value) {
            if full.is_err() {
                tally.decoded_but_invalid += 1;
            }
            tally.outputs_checked += 1;
            let full = full_output(&typed);
            let fast = typed.to_output_value();
            if full != fast {
                fail(&format!(
                    "outputs differ:\n full: {full:?}\n fast: {fast:?}"
                ));
            }
            // Straight to text: the same answer, as text.
            let text = typed.to_output_json().map_err(|e| e.code().clone());
            let expected = full
                .as_ref()
                .map(|v| serde_json::to_string(v).unwrap_or_default())
                .map_err(|e| e.code().clone());
            if text != expected {
                fail(&format!(
                    "text differs:\n full: {expected:?}\n text: {text:?}"
                ));
            }
            if full.is_err() {
                tally.outputs_refused += 1;
            }
        }
    }
    tally
}

/// The property, and a check that the generated cases reached every outcome, so the property
/// is not vacuous. Returns the tally, for a test's own counts (the run is deterministic, so
/// running it again would only repeat it).
fn equivalent<T>(expect_serde_alone_refusals: bool) -> Tally
where
    T: AgentInput + AgentOutput + PartialEq + Debug,
{
    let tally = check_equivalence::<T>();
    let name = std::any::type_name::<T>();
    let n = cases();
    assert!(
        tally.accepted * 50 >= n,
        "`{name}`: too few accepted cases: {tally:?}"
    );
    assert!(
        tally.refused_by_schema * 50 >= n,
        "`{name}`: too few refused cases: {tally:?}"
    );
    assert!(
        tally.outputs_checked * 50 >= n,
        "`{name}`: too few outputs: {tally:?}"
    );
    if expect_serde_alone_refusals {
        // Values the schema accepts and serde alone refuses: refused by both paths, or (a
        // whole number written as a float) accepted by both.
        assert!(
            tally.refused_by_serde_only + tally.accepted_past_serde > 0,
            "`{name}`: no value that serde alone refuses: {tally:?}"
        );
    }
    tally
}

#[test]
fn leaves() {
    equivalent::<Leaves>(true);
}

#[test]
fn bounded() {
    assert!(Bounded::input_boundary().__residual_is_fast());
    assert!(Bounded::output_boundary().__residual_is_fast());
    let tally = equivalent::<Bounded>(true);
    assert!(tally.decoded_but_invalid > 0, "{tally:?}");
}

#[test]
fn attributes() {
    let tally = equivalent::<Attributes>(true);
    // Values serde takes that the constraints refuse: exactly what the residual must catch.
    assert!(tally.decoded_but_invalid * 50 >= cases(), "{tally:?}");
    assert!(tally.outputs_refused > 0, "{tally:?}");
}

#[test]
fn aliased() {
    equivalent::<Aliased>(false);
}

#[test]
fn nested() {
    let tally = equivalent::<Nested>(true);
    assert!(tally.decoded_but_invalid > 0, "{tally:?}");
}

#[test]
fn foreign() {
    equivalent::<Foreign>(false);
}

#[test]
fn hand_written_field() {
    let tally = equivalent::<HandWrittenField>(false);
    assert!(tally.decoded_but_invalid > 0, "{tally:?}");
}

#[test]
fn hand_written_type() {
    equivalent::<HandWrittenType>(false);
}

#[test]
fn hand_written_exact() {
    equivalent::<HandWrittenExact>(true);
}

#[test]
fn list_bounds() {
    let tally = equivalent::<ListBounds>(true);
    assert!(tally.decoded_but_invalid > 0, "{tally:?}");
}

#[test]
fn hand_written_extra() {
    let tally = equivalent::<HandWrittenExtra>(false);
    assert!(tally.decoded_but_invalid > 0, "{tally:?}");
    assert_eq!(residual_in::<HandWrittenExtra>(), None);
}

#[test]
fn hand_written_closed() {
    let tally = equivalent::<HandWrittenClosed>(false);
    assert!(tally.decoded_but_invalid > 0, "{tally:?}");
    // serde takes unknown fields, the schema does not: the input keeps it all; the output
    // (written by the derive, its own fields only) needs no check.
    assert_eq!(residual_in::<HandWrittenClosed>(), None);
    assert_eq!(residual_out::<HandWrittenClosed>(), Some(json!(true)));
}

#[test]
fn hand_written_extra_property_and_holder() {
    let tally = equivalent::<HandWrittenExtraProperty>(false);
    assert!(tally.decoded_but_invalid > 0, "{tally:?}");
    equivalent::<Holder>(false);
    let holder = residual_in::<Holder>().unwrap();
    assert_eq!(
        holder["properties"]["extra"],
        json!({ "$ref": "#/$defs/HandWrittenExtra" })
    );
    assert!(holder["properties"].get("n").is_none(), "{holder}");
}

#[test]
fn forest() {
    let tally = equivalent::<Forest>(true);
    assert!(tally.decoded_but_invalid > 0, "{tally:?}");
}

#[test]
fn container_default() {
    equivalent::<ContainerDefault>(false);
}

#[test]
fn flattened() {
    equivalent::<Flattened>(false);
}

#[test]
fn custom_with() {
    equivalent::<CustomWith>(false);
}

#[test]
fn recursive() {
    equivalent::<Recursive>(false);
}

#[test]
fn with_enums() {
    equivalent::<WithEnums>(false);
}

#[test]
fn tagged() {
    equivalent::<Tagged>(false);
}

#[test]
fn dynamic() {
    equivalent::<Dynamic>(false);
}

#[test]
fn floats() {
    equivalent::<Floats>(false);
}

#[test]
fn renamed() {
    equivalent::<Renamed>(false);
}

// ---------------------------------------------------------------------------------------------
// What the residual is, for the types whose answer is known.

fn residual_in<T: AgentInput>() -> Option<Value> {
    T::input_boundary()
        .residual_schema()
        .cloned()
        .map(strip_meta)
}

fn residual_out<T: AgentOutput>() -> Option<Value> {
    T::output_boundary()
        .residual_schema()
        .cloned()
        .map(strip_meta)
}

fn strip_meta(mut v: Value) -> Value {
    if let Value::Object(map) = &mut v {
        map.remove("$schema");
        map.remove("$defs");
    }
    v
}

#[test]
fn serde_enforces_leaves_but_not_a_float_output() {
    assert_eq!(residual_in::<Leaves>(), Some(json!({ "type": "object" })));
    assert_eq!(
        residual_out::<Leaves>(),
        Some(json!({ "properties": {
            "f": { "type": "number", "format": "double" },
            "g": { "type": "number", "format": "float" }
        } }))
    );
}

#[test]
fn a_nan_output_is_refused_on_the_fast_path() {
    let leaves = Leaves {
        s: String::new(),
        b: true,
        n: 1,
        i: 1,
        u: 1,
        f: f64::NAN,
        g: 0.0,
        c: 'x',
    };
    let err = leaves.to_output_value().unwrap_err();
    assert_eq!(err.violations()[0].pointer, "/f");
    assert_eq!(Err(err), full_output(&leaves));
    let floats = Floats {
        x: f32::INFINITY,
        y: Some(f64::NAN),
        z: 1.0,
        zs: vec![f64::NAN],
    };
    assert_eq!(floats.to_output_value(), full_output(&floats));
    assert!(floats.to_output_value().is_err());
}

#[test]
fn constraints_stay_and_an_alias_keeps_its_field_required() {
    let attributes = residual_in::<Attributes>().unwrap();
    let kept: Vec<&String> = attributes["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(kept, ["shortName", "count", "slug", "few"]);
    // `why` is an `Option`, `tags` has a default: neither is required, and serde says so.
    assert!(attributes.get("required").is_none(), "{attributes}");

    let aliased = residual_in::<Aliased>().unwrap();
    assert_eq!(aliased["required"], json!(["name"]));
    assert_eq!(residual_out::<Aliased>(), Some(json!(true)));
}

#[test]
fn hand_written_and_foreign_schemas_are_kept() {
    // `a` is not what `u8` alone generates, so it is kept; `b` is what `Option<String>`
    // generates, but the schema requires it and serde does not, so `required` keeps it.
    assert_eq!(
        residual_in::<HandWrittenType>(),
        Some(json!({
            "type": "object",
            "required": ["b"],
            "properties": { "a": { "type": "integer", "minimum": 0, "maximum": 5 } }
        }))
    );
    assert_eq!(
        residual_in::<HandWrittenExact>(),
        Some(json!({ "type": "object" }))
    );
    let field = residual_in::<HandWrittenField>().unwrap();
    assert!(field["properties"].get("code").is_some(), "{field}");
    assert!(field["properties"].get("codes").is_some(), "{field}");
    assert!(field["properties"].get("n").is_none(), "{field}");
    let foreign = residual_out::<Foreign>().unwrap();
    assert_eq!(
        foreign["properties"]["hit"],
        json!({ "$ref": "#/$defs/Hit" })
    );
    assert_eq!(residual_in::<Flattened>(), None);
    assert_eq!(residual_in::<Tagged>(), None);
}

#[test]
fn a_recursive_type_keeps_its_recursion_whole() {
    let recursive = residual_in::<Recursive>().unwrap();
    // schemars names the root `#`; in the residual document that would be the residual
    // itself, so the full root is kept under `$defs` and the reference points there.
    assert_eq!(
        recursive["properties"]["children"]["items"],
        json!({ "$ref": "#/$defs/__agent_io_root" })
    );
    // The kept reference resolves: a bad grandchild is still found.
    let err = Recursive::from_input_value(&json!({
        "name": "a", "children": [{ "name": "b", "children": [{ "name": "toolong", "children": [] }] }]
    }))
    .unwrap_err();
    assert_eq!(err.violations()[0].pointer, "/children/0/children/0/name");
}

#[test]
fn a_struct_given_as_an_array_is_refused_as_before() {
    // serde_json would decode it; the schema says object, and so does the residual.
    let value = json!(["x", 3]);
    assert!(Aliased::deserialize(&value).is_ok());
    let err = Aliased::from_input_value(&value).unwrap_err();
    assert_eq!(Err(err), full_input::<Aliased>(&value));
}

#[test]
fn common_residuals_are_checked_without_the_general_validator() {
    // Bounds, lengths, counts, options and nested derived types: the fast checker.
    assert!(Nested::input_boundary().__residual_is_fast());
    assert!(Leaves::output_boundary().__residual_is_fast());
    assert!(Floats::output_boundary().__residual_is_fast());
    // A pattern, or a reference kept whole: the general validator.
    assert!(!Attributes::input_boundary().__residual_is_fast());
    assert!(!Recursive::input_boundary().__residual_is_fast());
}

fn doubled_hit<S: Serializer>(hit: &Scored, s: S) -> Result<S::Ok, S::Error> {
    // Writes a field `Scored`'s own schema does not list.
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(2))?;
    map.serialize_entry("score", &hit.score)?;
    map.serialize_entry("extra", &true)?;
    map.end()
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Scored {
    score: u8,
}

/// One use of `Scored` is written by its derived impl, the other by a function of its own.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentOutput)]
struct TwoUses {
    plain: Scored,
    #[serde(serialize_with = "doubled_hit")]
    custom: Scored,
}

/// Both uses derived.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentOutput)]
struct BothDerived {
    first: Scored,
    second: Vec<Scored>,
    third: Option<Scored>,
}

#[test]
fn produced_schemas_close_only_what_every_use_writes_itself() {
    // Every use of `Scored` is derived: its definition is closed, and so is the root.
    let both = BothDerived::output_boundary().produced_schema();
    assert_eq!(both["additionalProperties"], false);
    assert_eq!(both["$defs"]["Scored"]["additionalProperties"], false);
    // One use goes through `serialize_with`, which may write anything: the definition stays
    // open (the root, written by the derive, is still closed).
    let two = TwoUses::output_boundary().produced_schema();
    assert_eq!(two["additionalProperties"], false);
    assert!(
        two["$defs"]["Scored"].get("additionalProperties").is_none(),
        "{two}"
    );
    let written = serde_json::to_value(TwoUses {
        plain: Scored { score: 1 },
        custom: Scored { score: 2 },
    })
    .unwrap();
    assert!(
        jsonschema::is_valid(two, &written),
        "the produced schema must accept what the type writes"
    );
}

/// Its hand-written schema leaves out `b`, which the derive writes: not a proven struct,
/// though the `Scored` inside it is.
#[derive(Debug, PartialEq, Serialize, Deserialize, AgentOutput)]
struct PartlyListed {
    a: Scored,
    b: u8,
}

impl JsonSchema for PartlyListed {
    fn schema_name() -> Cow<'static, str> {
        "PartlyListed".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let a = generator.subschema_for::<Scored>();
        schemars::json_schema!({ "type": "object", "properties": { "a": a }, "required": ["a"] })
    }
}

#[test]
fn a_struct_not_proven_stays_open_though_one_inside_it_is_closed() {
    // `Scored` is written by its derive wherever it is used here: closed. The root's schema
    // does not list `b`: closing it would refuse what the type writes.
    let produced = PartlyListed::output_boundary().produced_schema();
    assert_eq!(produced["$defs"]["Scored"]["additionalProperties"], false);
    assert!(produced.get("additionalProperties").is_none(), "{produced}");
    let written = serde_json::to_value(PartlyListed {
        a: Scored { score: 1 },
        b: 2,
    })
    .unwrap();
    assert!(jsonschema::is_valid(produced, &written), "{produced}");
}

/// `Option<Option<T>>`: serde reads `null` as `None` and anything else as a `T`, exactly what
/// its schema (`T`'s, with `null` added) says.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct DoubleOption {
    #[serde(default)]
    x: Option<Option<u32>>,
    ys: Vec<Option<Option<String>>>,
}

#[test]
fn a_nested_option_of_an_exact_type_is_exact() {
    assert_eq!(
        residual_in::<DoubleOption>(),
        Some(json!({ "type": "object" }))
    );
    assert_eq!(residual_out::<DoubleOption>(), Some(json!(true)));
    let value = json!({ "x": null, "ys": [null, "a"] });
    assert_eq!(
        DoubleOption::from_input_value(&value),
        full_input::<DoubleOption>(&value)
    );
    let wrong = json!({ "x": "no", "ys": [] });
    assert_eq!(
        DoubleOption::from_input_value(&wrong),
        full_input::<DoubleOption>(&wrong)
    );
}

/// A hand-written schema that names its own base (`$id`), inside an `anyOf`.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Based(String);

impl JsonSchema for Based {
    fn schema_name() -> Cow<'static, str> {
        "Based".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "anyOf": [{ "$id": "urn:agent-io:test:based", "type": "string", "maxLength": 3 }]
        })
    }
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct WithBase {
    based: Based,
    n: u8,
}

#[test]
fn a_schema_with_its_own_base_or_anchors_gets_the_full_validator() {
    // References inside a part with an `$id` (or to an `$anchor`) resolve against where the
    // part sits in the document; a residual document moves parts, so none is built.
    assert_eq!(residual_in::<WithBase>(), None);
    assert_eq!(residual_out::<WithBase>(), None);
    for value in [
        json!({ "based": "abc", "n": 1 }),
        json!({ "based": "abcd", "n": 1 }),
    ] {
        assert_eq!(
            WithBase::from_input_value(&value),
            full_input::<WithBase>(&value)
        );
    }
    assert!(WithBase::from_input_value(&json!({ "based": "abcd", "n": 1 })).is_err());
}

/// Recursive through an `Option`: schemars writes `{"anyOf": [{"$ref": "#"}, {"type": "null"}]}`.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Chain {
    #[schemars(length(max = 4))]
    name: String,
    next: Option<Box<Chain>>,
}

#[test]
fn a_root_reference_inside_an_any_of_points_at_the_kept_root() {
    let chain = residual_in::<Chain>().unwrap();
    assert_eq!(
        chain["properties"]["next"]["anyOf"][0],
        json!({ "$ref": "#/$defs/__agent_io_root" }),
        "{chain}"
    );
    let value = json!({ "name": "a", "next": { "name": "b", "next": { "name": "toolong", "next": null } } });
    let err = Chain::from_input_value(&value).unwrap_err();
    // The `anyOf` at `/next` is what fails, as the full validator says.
    assert_eq!(err.violations()[0].pointer, "/next");
    assert_eq!(Err(err), full_input::<Chain>(&value));
}
