//! Schema soundness: every value serde produces validates against the type's own schemas, and
//! hand-made bad values fail at the right pointer. Schema and serde cannot drift apart.

use std::collections::{BTreeMap, HashMap};

use agentio_core::{AgentInput, AgentOutput};
use proptest::collection::{btree_map, hash_map, vec};
use proptest::option;
use proptest::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Person {
    first_name: String,
    age_years: u8,
    is_active: bool,
    #[serde(default)]
    nick_names: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Shape {
    Circle { radius: f64 },
    Rect { w: u32, h: u32 },
    Empty,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
#[serde(tag = "t", content = "c")]
enum Message {
    Text(String),
    Pair(u8, u8),
    Ping,
    Point { x: i32, y: i32 },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentOutput)]
#[serde(untagged)]
enum Loose {
    Count(i64),
    Label(String),
    Both { count: i64, label: String },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentOutput)]
enum Event {
    Started,
    Progress(u8),
    Done { ok: bool },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Meta {
    owner: String,
    tags: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Record {
    id: u32,
    #[serde(flatten)]
    meta: Meta,
    #[serde(default)]
    retries: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    maybe: Option<i32>,
    counts: BTreeMap<String, i32>,
    bytes_by_name: HashMap<String, Vec<u8>>,
    #[schemars(range(min = 1, max = 10))]
    level: u8,
    shape: Shape,
    event: Event,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Page<T> {
    items: Vec<T>,
    next: Option<String>,
}

/// A strict output: its strict structured-output form must accept serde's values too.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentOutput)]
#[agent(strict)]
struct Verdict {
    reasoning: String,
    decision: Decision,
    confidence: Option<f64>,
    citations: Vec<Citation>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Decision {
    Approve,
    Reject,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Citation {
    source: String,
    line: Option<u32>,
}

fn finite() -> impl Strategy<Value = f64> {
    -1.0e9..1.0e9f64
}

fn person() -> impl Strategy<Value = Person> {
    (".{0,12}", any::<u8>(), any::<bool>(), vec(".{0,6}", 0..3)).prop_map(
        |(first_name, age_years, is_active, nick_names)| Person {
            first_name,
            age_years,
            is_active,
            nick_names,
        },
    )
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        finite().prop_map(|radius| Shape::Circle { radius }),
        (any::<u32>(), any::<u32>()).prop_map(|(w, h)| Shape::Rect { w, h }),
        Just(Shape::Empty),
    ]
}

fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        ".{0,10}".prop_map(Message::Text),
        (any::<u8>(), any::<u8>()).prop_map(|(a, b)| Message::Pair(a, b)),
        Just(Message::Ping),
        (any::<i32>(), any::<i32>()).prop_map(|(x, y)| Message::Point { x, y }),
    ]
}

fn loose() -> impl Strategy<Value = Loose> {
    prop_oneof![
        any::<i64>().prop_map(Loose::Count),
        ".{0,10}".prop_map(Loose::Label),
        (any::<i64>(), ".{0,10}").prop_map(|(count, label)| Loose::Both { count, label }),
    ]
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        Just(Event::Started),
        any::<u8>().prop_map(Event::Progress),
        any::<bool>().prop_map(|ok| Event::Done { ok }),
    ]
}

fn record() -> impl Strategy<Value = Record> {
    let head = (
        any::<u32>(),
        ".{0,8}",
        vec(".{0,5}", 0..3),
        any::<u16>(),
        option::of(".{0,8}"),
        option::of(any::<i32>()),
    );
    let tail = (
        btree_map(".{0,6}", any::<i32>(), 0..4),
        hash_map(".{0,6}", vec(any::<u8>(), 0..4), 0..3),
        1..=10u8,
        shape(),
        event(),
    );
    (head, tail).prop_map(
        |(
            (id, owner, tags, retries, note, maybe),
            (counts, bytes_by_name, level, shape, event),
        )| Record {
            id,
            meta: Meta { owner, tags },
            retries,
            note,
            maybe,
            counts,
            bytes_by_name,
            level,
            shape,
            event,
        },
    )
}

fn verdict() -> impl Strategy<Value = Verdict> {
    let citation =
        (".{0,10}", option::of(any::<u32>())).prop_map(|(source, line)| Citation { source, line });
    (
        ".{0,20}",
        prop_oneof![Just(Decision::Approve), Just(Decision::Reject)],
        option::of(0.0..1.0f64),
        vec(citation, 0..3),
    )
        .prop_map(|(reasoning, decision, confidence, citations)| Verdict {
            reasoning,
            decision,
            confidence,
            citations,
        })
}

/// The value validates against the output schema, decodes back to itself, and (for object
/// types) validates against the input schema as well.
fn assert_output_sound<T: AgentOutput + PartialEq + std::fmt::Debug>(value: &T) {
    let json = serde_json::to_value(value).unwrap();
    if let Err(err) = T::validate_output(&json) {
        panic!("serialized value breaks its output schema: {err}\nvalue: {json}");
    }
    let back: T = serde_json::from_value(json).unwrap();
    assert_eq!(&back, value);
}

fn assert_input_sound<T: AgentInput + Serialize>(value: &T) {
    let json = serde_json::to_value(value).unwrap();
    if let Err(err) = T::validate_input(&json) {
        panic!("serialized value breaks its input schema: {err}\nvalue: {json}");
    }
}

fn assert_strict_sound<T: AgentOutput>(value: &T) {
    let format =
        T::structured_output_format().expect("a strict type has a structured-output format");
    let strict_schema = &format["json_schema"]["schema"];
    let validator = jsonschema_validator(strict_schema);
    let json = serde_json::to_value(value).unwrap();
    assert!(
        validator(&json),
        "serialized value breaks the strict schema: {json}"
    );
}

fn jsonschema_validator(schema: &Value) -> impl Fn(&Value) -> bool {
    let boundary = agentio_core::BoundarySchema::from_value(
        "strict",
        agentio_core::Direction::Output,
        schema.clone(),
    );
    move |value| boundary.validate(value).is_ok()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn rename_all_struct(value in person()) {
        assert_output_sound(&value);
        assert_input_sound(&value);
    }

    #[test]
    fn internally_tagged_enum(value in shape()) {
        assert_output_sound(&value);
        assert_input_sound(&value);
    }

    #[test]
    fn adjacently_tagged_enum(value in message()) {
        assert_output_sound(&value);
        assert_input_sound(&value);
    }

    #[test]
    fn untagged_enum(value in loose()) {
        assert_output_sound(&value);
    }

    #[test]
    fn externally_tagged_enum(value in event()) {
        assert_output_sound(&value);
    }

    #[test]
    fn flatten_default_skip_option_maps_and_nesting(value in record()) {
        assert_output_sound(&value);
        assert_input_sound(&value);
    }

    #[test]
    fn generic_types_per_instantiation(people in vec(person(), 0..4), shapes in vec(shape(), 0..4), next in option::of(".{0,5}")) {
        let people = Page { items: people, next: next.clone() };
        let shapes = Page { items: shapes, next };
        assert_output_sound(&people);
        assert_input_sound(&people);
        assert_output_sound(&shapes);
        assert_input_sound(&shapes);
    }

    #[test]
    fn strict_outputs_and_their_structured_format(value in verdict()) {
        assert_output_sound(&value);
        assert_strict_sound(&value);
    }
}

/// Checks that `bad` fails validation with exactly the listed pointers.
#[track_caller]
fn assert_fails_at<T: AgentInput>(bad: Value, expected: &[&str]) {
    let err = T::validate_input(&bad).expect_err("a bad value must fail");
    let mut found: Vec<&str> = err
        .violations()
        .iter()
        .map(|v| v.pointer.as_str())
        .collect();
    found.sort_unstable();
    assert_eq!(found, expected, "for {bad}: {err}");
}

fn good_record() -> Value {
    json!({
        "id": 1, "owner": "ana", "tags": [], "maybe": null, "counts": {}, "bytes_by_name": {},
        "level": 3, "shape": { "kind": "empty" }, "event": "Started"
    })
}

#[test]
fn hand_made_bad_values_fail_at_the_right_pointer() {
    assert!(Record::validate_input(&good_record()).is_ok());
    let mut bad = good_record();
    bad["level"] = json!(11);
    assert_fails_at::<Record>(bad, &["/level"]);
    let mut bad = good_record();
    bad["counts"] = json!({ "a": 1, "b": "two" });
    assert_fails_at::<Record>(bad, &["/counts/b"]);
    let mut bad = good_record();
    bad["bytes_by_name"] = json!({ "x": [1, 256] });
    assert_fails_at::<Record>(bad, &["/bytes_by_name/x/1"]);
    let mut bad = good_record();
    bad["shape"] = json!({ "kind": "rect", "w": 1 });
    assert_fails_at::<Record>(bad, &["/shape"]);
    let mut bad = good_record();
    bad["owner"] = json!(7);
    assert_fails_at::<Record>(bad, &["/owner"]);

    assert_fails_at::<Person>(
        json!({ "firstName": "a", "ageYears": 300, "isActive": true }),
        &["/ageYears"],
    );
    assert_fails_at::<Person>(
        json!({ "first_name": "a", "ageYears": 3, "isActive": true }),
        &["/firstName", "/first_name"],
    );
    assert_fails_at::<Message>(json!({ "t": "Pair", "c": [1, "2"] }), &[""]);
    assert_fails_at::<Page<Person>>(
        json!({ "items": [{ "firstName": "a", "ageYears": 1 }], "next": null }),
        &["/items/0/isActive"],
    );
}

#[test]
fn pointer_tokens_with_slash_and_tilde_are_escaped() {
    let mut bad = good_record();
    bad["counts"] = json!({ "a/b~c": "x" });
    assert_fails_at::<Record>(bad, &["/counts/a~1b~0c"]);
}

#[test]
fn each_instantiation_of_a_generic_type_has_its_own_schema() {
    let people = Page::<Person>::input_schema();
    let shapes = Page::<Shape>::input_schema();
    assert_ne!(people, shapes);
    assert!(std::ptr::eq(people, Page::<Person>::input_schema()));
}

#[test]
fn strict_format_requires_every_property_and_keeps_optional_ones_nullable() {
    let format = Verdict::structured_output_format().unwrap();
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["strict"], true);
    assert_eq!(format["json_schema"]["name"], "Verdict");
    let schema = &format["json_schema"]["schema"];
    assert_eq!(
        schema["required"],
        json!(["reasoning", "decision", "confidence", "citations"])
    );
    assert_eq!(schema["additionalProperties"], false);
    let citation = &schema["$defs"]["Citation"];
    assert_eq!(citation["required"], json!(["source", "line"]));
    assert_eq!(citation["additionalProperties"], false);
    // A model that leaves an optional field out breaks strict mode; `null` is the way to say "none".
    let validator = jsonschema_validator(schema);
    assert!(!validator(
        &json!({ "reasoning": "r", "decision": "approve", "citations": [] })
    ));
    assert!(validator(
        &json!({ "reasoning": "r", "decision": "approve", "confidence": null, "citations": [] })
    ));
    // What the strict schema accepts decodes into the type.
    let decoded: Verdict = serde_json::from_value(json!({
        "reasoning": "r", "decision": "reject", "confidence": null,
        "citations": [{ "source": "s", "line": null }]
    }))
    .unwrap();
    assert_eq!(decoded.decision, Decision::Reject);
}

#[test]
fn non_strict_types_have_no_structured_format() {
    assert!(Person::structured_output_format().is_none());
    assert!(<Vec<Person> as AgentOutput>::structured_output_format().is_none());
}

/// A strict type whose nested (non-strict) type holds a map: the derive cannot see into the
/// nested type, so the runtime reports it instead of producing a schema strict mode rejects.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentOutput)]
#[agent(strict, name = "inventory_report")]
struct Inventory {
    warehouse: Warehouse,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Warehouse {
    stock: BTreeMap<String, u32>,
}

#[test]
fn a_nested_map_in_a_strict_type_is_reported_not_emitted() {
    assert!(Inventory::structured_output_format().is_none());
    let err = Inventory::output_boundary()
        .strict_format()
        .unwrap()
        .unwrap_err();
    assert_eq!(err.schema_pointer, "/$defs/Warehouse/properties/stock");
    // The ordinary schema still works for validation.
    assert!(Inventory::validate_output(&json!({ "warehouse": { "stock": { "a": 1 } } })).is_ok());
}

// --- Strict mode over more of the serde matrix (provider exports, issue 9) --------------------

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Circle {
    radius: f64,
}

/// An internally tagged enum with a newtype variant: schemars writes the variant as a `$ref`
/// beside `properties`, which strict mode used to close so that it refused every field.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Figure {
    Circle(Circle),
    Square { side: f64 },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentOutput)]
#[agent(strict)]
struct Drawing {
    title: String,
    figures: Vec<Figure>,
    main: Figure,
    note: Option<String>,
}

fn figure() -> impl Strategy<Value = Figure> {
    prop_oneof![
        finite().prop_map(|radius| Figure::Circle(Circle { radius })),
        finite().prop_map(|side| Figure::Square { side }),
    ]
}

fn drawing() -> impl Strategy<Value = Drawing> {
    (
        ".{0,10}",
        vec(figure(), 0..4),
        figure(),
        option::of(".{0,5}"),
    )
        .prop_map(|(title, figures, main, note)| Drawing {
            title,
            figures,
            main,
            note,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// What the type writes, its strict format accepts; and what the strict format accepts
    /// decodes back into the type.
    #[test]
    fn a_strict_format_accepts_everything_its_type_writes(value in drawing()) {
        assert_output_sound(&value);
        assert_strict_sound(&value);
        let json = serde_json::to_value(&value).unwrap();
        let back: Drawing = serde_json::from_value(json).unwrap();
        prop_assert_eq!(back, value);
    }
}

#[test]
fn a_newtype_variant_of_an_internally_tagged_enum_keeps_its_fields_in_strict_mode() {
    let format = Drawing::structured_output_format().unwrap();
    let schema = &format["json_schema"]["schema"];
    let circle = serde_json::to_value(Figure::Circle(Circle { radius: 1.5 })).unwrap();
    assert_eq!(circle, json!({ "type": "circle", "radius": 1.5 }));
    let validator = jsonschema_validator(schema);
    assert!(validator(
        &json!({ "title": "t", "figures": [circle.clone()], "main": circle, "note": null })
    ));
}

/// A tuple behind an alias: the derive sees only the alias's name (a tuple it sees is a
/// compile error, `tests/ui/strict/strict-tuple-field.rs`), so the run-time check refuses it.
type Range = (u32, u32);

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentOutput)]
#[agent(strict)]
struct Span {
    range: Range,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Footnote {
    text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    url: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentOutput)]
#[agent(strict)]
struct Annotated {
    body: String,
    footnote: Footnote,
}

#[test]
fn strict_mode_refuses_tuples_and_properties_the_type_may_omit() {
    let err = Span::output_boundary()
        .strict_format()
        .unwrap()
        .unwrap_err();
    assert_eq!(err.schema_pointer, "/properties/range");
    assert!(err.reason.contains("tuple"), "{err}");
    assert!(Span::structured_output_format().is_none());

    let err = Annotated::output_boundary()
        .strict_format()
        .unwrap()
        .unwrap_err();
    assert_eq!(err.schema_pointer, "/$defs/Footnote/properties/url");
    assert!(err.reason.contains("skip_serializing_if"), "{err}");
}
