//! The comparison's own unit tests, over its private parts.

use super::checker::*;
use super::numbers::*;
use super::references::*;
use crate::types::*;
use serde_json::{Map, Value, json};

use super::*;

fn checker<'a>(arena: &'a typed_arena::Arena<Value>, root: &'a Value) -> Checker<'a> {
    Checker {
        arena,
        p_root: root,
        c_root: root,
        assumed: HashMap::new(),
        steps: 0,
        validators: HashMap::new(),
    }
}

const TOO_LARGE: &str = "the schemas are too large or too deep to compare";

#[test]
fn the_budget_allows_exactly_max_steps_and_max_depth() {
    let arena = typed_arena::Arena::new();
    let s = json!({ "type": "string" });
    let mut ch = checker(&arena, &s);
    // One comparison of two plain strings is one step.
    ch.steps = MAX_STEPS - 1;
    assert!(matches!(
        ch.check(Node::root(&s), Node::root(&s), 0, 0),
        Outcome::Ok
    ));
    assert_eq!(ch.steps, MAX_STEPS);
    let Outcome::Unknown(u) = ch.check(Node::root(&s), Node::root(&s), 0, 0) else {
        panic!("past the budget, the answer is unknown");
    };
    assert_eq!(u.reason, TOO_LARGE);
    ch.steps = 0;
    assert!(matches!(
        ch.check(Node::root(&s), Node::root(&s), MAX_DEPTH, 0),
        Outcome::Ok
    ));
    let Outcome::Unknown(u) = ch.check(Node::root(&s), Node::root(&s), MAX_DEPTH + 1, 0) else {
        panic!("past the depth, the answer is unknown");
    };
    assert_eq!(u.reason, TOO_LARGE);
}

#[test]
fn examples_are_built_within_the_same_budget_and_depth() {
    let arena = typed_arena::Arena::new();
    let s = json!({ "type": "string" });
    let mut ch = checker(&arena, &s);
    ch.steps = MAX_STEPS - 1;
    assert_eq!(ch.example(&Node::root(&s), 0), Some(json!("")));
    assert_eq!(ch.steps, MAX_STEPS);
    assert_eq!(ch.example(&Node::root(&s), 0), None);
    ch.steps = 0;
    assert_eq!(ch.example(&Node::root(&s), MAX_DEPTH), Some(json!("")));
    assert_eq!(ch.example(&Node::root(&s), MAX_DEPTH + 1), None);
}

/// The fast membership check agrees with the validator, and decides the simple schemas
/// itself (that is its point: no validator built for them).
#[test]
fn quick_membership_agrees_with_the_validator_and_decides_simple_schemas() {
    let root = json!({
        "$defs": {
            "Name": { "type": "string", "minLength": 2, "maxLength": 3 },
            "Small": { "type": "integer", "minimum": 1, "maximum": 3 },
        },
    });
    let cases: Vec<(Value, Vec<Value>)> = vec![
        (json!(true), vec![json!(1), json!(null)]),
        (json!(false), vec![json!(1)]),
        (json!({ "type": "string" }), vec![json!("a"), json!(1)]),
        (
            json!({ "type": ["integer", "null"] }),
            vec![json!(1), json!(1.5), json!(null), json!("a")],
        ),
        (
            json!({ "type": "number" }),
            vec![json!(1), json!(1.5), json!("1")],
        ),
        (
            json!({ "enum": ["a", 1] }),
            vec![json!("a"), json!(1), json!(1.0), json!("b")],
        ),
        (
            json!({ "const": { "k": [1] } }),
            vec![json!({ "k": [1] }), json!({ "k": [2] })],
        ),
        (
            json!({ "minimum": 1 }),
            vec![json!(1), json!(0), json!("x")],
        ),
        (json!({ "maximum": 1 }), vec![json!(1), json!(2)]),
        (json!({ "exclusiveMinimum": 1 }), vec![json!(1), json!(1.5)]),
        (json!({ "exclusiveMaximum": 1 }), vec![json!(1), json!(0.5)]),
        (
            json!({ "minLength": 2 }),
            vec![json!("ab"), json!("a"), json!("éé"), json!(3)],
        ),
        (
            json!({ "maxLength": 2 }),
            vec![json!("ab"), json!("abc"), json!("éé")],
        ),
        (
            json!({ "$ref": "#/$defs/Name" }),
            vec![json!("ab"), json!("a"), json!("abcd"), json!(1)],
        ),
        (
            json!({ "anyOf": [{ "$ref": "#/$defs/Small" }, { "type": "null" }] }),
            vec![json!(2), json!(null), json!(4), json!("a")],
        ),
        (
            json!({ "allOf": [{ "minimum": 1 }, { "maximum": 3 }] }),
            vec![json!(2), json!(0), json!(4)],
        ),
        // Keywords of other types than the value's hold vacuously.
        (
            json!({ "minItems": 1, "maxItems": 2, "uniqueItems": true, "items": false, "prefixItems": [false],
                    "properties": {}, "required": ["a"], "additionalProperties": false, "minProperties": 1,
                    "pattern": "^a", "format": "email", "multipleOf": 2 }),
            vec![json!(null), json!(true)],
        ),
        (
            json!({ "pattern": "^a", "format": "email" }),
            vec![json!(1)],
        ),
        (json!({ "multipleOf": 2, "minItems": 1 }), vec![json!("x")]),
        (
            json!({ "required": ["a"], "maxLength": 1 }),
            vec![json!("x"), json!([1])],
        ),
    ];
    let arena = typed_arena::Arena::new();
    for (schema, values) in &cases {
        let mut document = schema.clone();
        if let (Value::Object(map), Some(defs)) = (&mut document, root.get("$defs")) {
            map.insert("$defs".into(), defs.clone());
        }
        let ch = checker(&arena, &document);
        let validator = jsonschema::draft202012::options()
            .should_validate_formats(true)
            .build(&document)
            .unwrap();
        for value in values {
            assert_eq!(
                ch.quick_member(&document, value, 0),
                Some(validator.is_valid(value)),
                "{schema} {value}"
            );
        }
    }
    // What it leaves to the validator: a pattern or format on a string, bounds past 9e15,
    // keywords it does not know, nesting past 32.
    let arena = typed_arena::Arena::new();
    for (schema, value) in [
        (json!({ "pattern": "^a" }), json!("a")),
        (json!({ "format": "email" }), json!("a")),
        (json!({ "maximum": 10 }), json!(1e16)),
        (json!({ "maximum": 9_007_199_254_740_993_u64 }), json!(1)),
        (json!({ "minimum": 1 }), json!(1e300)),
        (json!({ "not": {} }), json!(1)),
        (json!({ "multipleOf": 2 }), json!(4)),
        (json!({ "items": false }), json!([1])),
        (json!({ "required": ["a"] }), json!({})),
        (json!({ "minLength": -1 }), json!("a")),
        (json!({ "enum": 1 }), json!(1)),
        (json!({ "anyOf": {} }), json!(1)),
        (json!({ "allOf": 1 }), json!(1)),
        (json!({ "type": 1 }), json!(1)),
        (json!({ "$ref": "#/nowhere" }), json!(1)),
        (json!(1), json!(1)),
    ] {
        let ch = checker(&arena, &schema);
        assert_eq!(
            ch.quick_member(&schema, &value, 0),
            None,
            "{schema} {value}"
        );
    }
    for key in ["allOf", "anyOf"] {
        let mut deep = json!({ "type": "integer" });
        for _ in 0..33 {
            deep = json!({ key: [deep] });
        }
        let ch = checker(&arena, &deep);
        assert_eq!(ch.quick_member(&deep, &json!(1), 0), None, "{key}");
        let ch = checker(&arena, &deep[key][0]);
        assert_eq!(
            ch.quick_member(&deep[key][0], &json!(1), 0),
            Some(true),
            "{key}"
        );
    }
    // Values up to 9e15 are compared as `f64`; past it, the validator decides.
    let bound = json!({ "maximum": 9e15 });
    let ch = checker(&arena, &bound);
    assert_eq!(ch.quick_member(&bound, &json!(9e15), 0), Some(true));
    assert_eq!(ch.quick_member(&bound, &json!(-9e15), 0), Some(true));
    assert_eq!(
        ch.quick_member(&bound, &json!(9.000000000000002e15), 0),
        None
    );
    // References count toward the same limit: a reference to itself is left to the
    // validator, not followed forever.
    let cycle = json!({ "$defs": { "A": { "$ref": "#/$defs/A" } }, "$ref": "#/$defs/A" });
    let ch = checker(&arena, &cycle);
    assert_eq!(ch.quick_member(&cycle, &json!(1), 0), None);
    // An `anyOf` stops at its first accepting branch: a later branch it cannot decide
    // does not matter.
    let first = json!({ "anyOf": [{ "type": "integer" }, { "pattern": "^a" }] });
    let ch = checker(&arena, &first);
    assert_eq!(ch.quick_member(&first, &json!(1), 0), Some(true));
}

fn numbers(schema: Value, t: u8) -> Numbers {
    Numbers::of(schema.as_object().unwrap(), t)
}

#[test]
fn multiples_are_the_validators_and_made_on_the_decimal() {
    let of = |m: f64| Multiple::new(Some(m)).unwrap();
    assert!(of(0.5).divides(1.5) && of(3.0).divides(-6.0) && of(2.0).divides(0.0));
    // Decimals, as the validator reads them: `0.3` is a multiple of `0.1`.
    assert!(of(0.1).divides(0.3) && of(0.1).divides(0.7) && !of(0.1).divides(0.35));
    assert!(!of(2.0).divides(3.0) && !of(0.3).divides(0.1) && !of(1.0).divides(f64::NAN));
    assert!(Multiple::new(Some(0.0)).is_none() && Multiple::new(Some(-1.0)).is_none());
    assert!(Multiple::new(Some(f64::INFINITY)).is_none() && Multiple::new(None).is_none());
    // Multiples are made on the decimal: the third of `0.1` is `0.3`, not
    // `0.30000000000000004`.
    assert_eq!(times(3.0, 0.1), 0.3);
    assert_eq!(times(-7.0, 0.25), -1.75);
    assert_eq!(times(2.0, 1e300), 2e300);
    // A product past `i128` (or a `k` past it) is made in `f64`.
    assert_eq!(
        times(1e35, 0.123_456_789_012_345_66),
        1e35 * 0.123_456_789_012_345_66
    );
    assert_eq!(times(1e39, 1.0), 1e39);
    // Integers as integers while `f64` holds them exactly.
    assert_eq!(number_value(-7.0, true), json!(-7));
    assert!(number_value(TWO_TO_53 - 1.0, true).is_i64());
    assert!(number_value(TWO_TO_53, true).is_f64());
    assert!(number_value(-TWO_TO_53, true).is_f64());
    assert!(number_value(3.0, false).is_f64());
    assert_eq!(decimal(-1.25e-3), Some((-125, -5)));
    assert_eq!(decimal(300.0), Some((3, 2)));
    assert_eq!(decimal(f64::INFINITY), None);
}

#[test]
fn a_producers_numbers_have_their_ends_moved_to_the_first_and_last_multiple() {
    let n = numbers(
        json!({ "minimum": 1, "maximum": 10, "multipleOf": 3 }),
        INTEGER,
    );
    assert_eq!((n.range.lo, n.range.hi), (3.0, 9.0));
    assert_eq!(n.enumerate(), Some(vec![3.0, 6.0, 9.0]));
    // Far from zero too.
    let n = numbers(
        json!({ "minimum": 1000, "maximum": 2000, "multipleOf": 7 }),
        INTEGER,
    );
    assert_eq!((n.range.lo, n.range.hi), (1001.0, 1995.0));
    let n = numbers(
        json!({ "minimum": -2000, "maximum": -1000, "multipleOf": 7 }),
        INTEGER,
    );
    assert_eq!((n.range.lo, n.range.hi), (-1995.0, -1001.0));
    // Ends that are multiples stay.
    let n = numbers(json!({ "minimum": 3, "multipleOf": 3 }), INTEGER);
    assert_eq!(n.range.lo, 3.0);
    let n = numbers(json!({ "maximum": -3, "multipleOf": 3 }), INTEGER);
    assert_eq!(n.range.hi, -3.0);
    let n = numbers(
        json!({ "exclusiveMinimum": 3, "exclusiveMaximum": 9, "multipleOf": 3 }),
        INTEGER,
    );
    assert_eq!(n.enumerate(), Some(vec![6.0]));
    // Integers that are multiples of 0.85 are the multiples of 17, 20 steps apart: the
    // first and last in [1, 50] are found 19 steps in from each end.
    let n = numbers(
        json!({ "minimum": 1, "maximum": 50, "multipleOf": 0.85 }),
        INTEGER,
    );
    assert_eq!((n.range.lo, n.range.hi), (17.0, 34.0));
    // Past the search's reach (the only one, 101, is 99 steps of 1.01 above 1 and 49
    // below 150) the ends stay where they were: a looser bound, never a wrong one.
    let n = numbers(
        json!({ "minimum": 1, "maximum": 150, "multipleOf": 1.01 }),
        INTEGER,
    );
    assert_eq!((n.range.lo, n.range.hi), (1.0, 150.0));
    assert_eq!(n.example(), Some(101.0));
    // Integers that are multiples of 1.5 step by 3; non-integers step by 1.5.
    assert_eq!(
        numbers(json!({ "multipleOf": 1.5 }), INTEGER).step(),
        Some(3.0)
    );
    assert_eq!(
        numbers(json!({ "multipleOf": 1.5 }), FRACTION).step(),
        Some(1.5)
    );
    assert_eq!(numbers(json!({}), INTEGER).step(), Some(1.0));
    assert_eq!(numbers(json!({}), FRACTION).step(), None);
    assert!(
        numbers(json!({ "multipleOf": 1.5 }), INTEGER)
            .implies_multiple(&Multiple::new(Some(3.0)).unwrap())
    );
    assert!(
        !numbers(json!({ "multipleOf": 1.5 }), FRACTION)
            .implies_multiple(&Multiple::new(Some(3.0)).unwrap())
    );
    assert!(numbers(json!({}), INTEGER).implies_multiple(&Multiple::new(Some(0.5)).unwrap()));
    assert!(!numbers(json!({}), FRACTION).implies_multiple(&Multiple::new(Some(0.5)).unwrap()));
    // Empty: no multiple of 4 in [1, 3]; no non-integer multiple of 2; an empty range.
    assert!(
        numbers(
            json!({ "minimum": 1, "maximum": 3, "multipleOf": 4 }),
            INTEGER
        )
        .is_empty()
    );
    assert!(numbers(json!({ "multipleOf": 2 }), FRACTION).is_empty());
    assert!(numbers(json!({ "minimum": 2, "maximum": 1 }), INTEGER).is_empty());
    assert!(!numbers(json!({ "multipleOf": 2.5 }), FRACTION).is_empty());
    assert!(!numbers(json!({ "minimum": 1, "maximum": 1 }), INTEGER).is_empty());
    // The non-integers of a range: none in a reversed one, one in `[0.5, 0.5]`, none in
    // `[1, 1]` or `(1, 1]`.
    assert!(numbers(json!({ "minimum": 2, "maximum": 1 }), FRACTION).is_empty());
    assert!(!numbers(json!({ "minimum": 0.5, "maximum": 0.5 }), FRACTION).is_empty());
    assert!(numbers(json!({ "minimum": 1, "maximum": 1 }), FRACTION).is_empty());
    assert!(numbers(json!({ "exclusiveMinimum": 1, "maximum": 1 }), FRACTION).is_empty());
    assert!(numbers(json!({ "exclusiveMinimum": 0.5, "maximum": 0.5 }), FRACTION).is_empty());
    assert!(numbers(json!({ "minimum": 0.5, "exclusiveMaximum": 0.5 }), FRACTION).is_empty());
    assert!(numbers(json!({ "minimum": 0.2, "maximum": 0.8 }), INTEGER).is_empty());
    assert!(!numbers(json!({ "minimum": 0.2, "maximum": 0.8 }), FRACTION).is_empty());
}

#[test]
fn a_large_or_unbounded_producer_is_not_enumerated() {
    assert_eq!(numbers(json!({ "minimum": 0 }), INTEGER).enumerate(), None);
    assert_eq!(
        numbers(json!({ "minimum": 0, "maximum": 1000 }), INTEGER).enumerate(),
        None
    );
    let n = numbers(json!({ "minimum": 0, "maximum": 256 }), INTEGER).enumerate();
    assert_eq!(n.map(|all| all.len()), Some(257));
    // Non-integers of a range have no step; a single point is still one number.
    assert_eq!(
        numbers(json!({ "minimum": 0, "maximum": 1 }), FRACTION).enumerate(),
        None
    );
    assert_eq!(
        numbers(json!({ "minimum": 0.5, "maximum": 0.5 }), FRACTION).enumerate(),
        Some(vec![0.5])
    );
}

#[test]
fn a_producers_example_number_is_its_least_or_the_one_nearest_zero() {
    let example = |schema: Value, t: u8| numbers(schema, t).example();
    assert_eq!(
        example(json!({ "minimum": 7, "multipleOf": 5 }), INTEGER),
        Some(10.0)
    );
    assert_eq!(
        example(json!({ "maximum": -7, "multipleOf": 5 }), INTEGER),
        Some(-10.0)
    );
    assert_eq!(
        example(json!({ "maximum": 7, "multipleOf": 5 }), INTEGER),
        Some(0.0)
    );
    assert_eq!(
        example(json!({ "minimum": -7, "multipleOf": 5 }), INTEGER),
        Some(-5.0)
    );
    assert_eq!(example(json!({ "multipleOf": 5 }), FRACTION), None);
    assert_eq!(example(json!({ "multipleOf": 2.5 }), FRACTION), Some(2.5));
    assert_eq!(
        example(json!({ "exclusiveMinimum": 3 }), FRACTION),
        Some(3.5)
    );
    assert_eq!(
        example(json!({ "exclusiveMaximum": -3 }), FRACTION),
        Some(-3.5)
    );
    assert_eq!(example(json!({}), FRACTION), Some(0.5));
    assert_eq!(
        example(json!({ "minimum": 0, "maximum": 1000 }), INTEGER),
        Some(0.0)
    );
    // A range narrower than every offset but the smallest.
    assert_eq!(
        example(
            json!({ "exclusiveMinimum": 2, "exclusiveMaximum": 2.01 }),
            FRACTION
        ),
        Some(2.0 + 1.0 / 1024.0)
    );
}

fn unknown_reason(p: &Value, c: &Value) -> String {
    match schema_compatible(p, c) {
        Compatibility::Unknown(u) => u.reason,
        other => panic!("{p} into {c}: expected unknown, got {other}"),
    }
}

fn witness(p: &Value, c: &Value) -> Value {
    match schema_compatible(p, c) {
        Compatibility::Incompatible(x) => x.witness,
        other => panic!("{p} into {c}: expected a witness, got {other}"),
    }
}

/// A consumer keyword of the wrong kind is not reasoned about (a validator refuses the
/// schema or reads it in its own way): the answer is unknown and names the keyword.
#[test]
fn a_malformed_consumer_keyword_is_named_and_nothing_concluded() {
    let p = json!({ "type": "integer" });
    for (keyword, problem) in [
        (json!({ "minimum": "3" }), "`minimum` is not a number"),
        (json!({ "multipleOf": 0 }), "`multipleOf` is not positive"),
        (json!({ "multipleOf": -2 }), "`multipleOf` is not positive"),
        (
            json!({ "maxLength": -1 }),
            "`maxLength` is not a non-negative integer",
        ),
        (json!({ "required": "a" }), "`required` is malformed"),
        (
            json!({ "properties": { "a": 3 } }),
            "`properties` is malformed",
        ),
        (
            json!({ "additionalProperties": 3 }),
            "`additionalProperties` is malformed",
        ),
        (json!({ "items": [] }), "`items` is malformed"),
        (json!({ "prefixItems": {} }), "`prefixItems` is malformed"),
        (json!({ "enum": 3 }), "`enum` is malformed"),
        (json!({ "uniqueItems": 1 }), "`uniqueItems` is malformed"),
        (json!({ "pattern": 1 }), "`pattern` is malformed"),
    ] {
        let mut c = keyword;
        c["type"] = json!("integer");
        assert_eq!(
            unknown_reason(&p, &c),
            format!("the consumer's {problem}"),
            "{c}"
        );
    }
    // The same keywords well formed are reasoned about.
    let c = json!({ "type": "integer", "minimum": 3, "multipleOf": 2, "required": ["a"] });
    assert!(matches!(
        schema_compatible(&p, &c),
        Compatibility::Incompatible(_)
    ));
}

/// A document assembled from parts of a schema (a mapped skill input) keeps its references
/// to that schema's root: they point at a copy of the root under `$defs`.
#[test]
fn root_references_in_an_assembled_document_point_at_a_copy_of_the_root() {
    let root = json!({
        "type": "object",
        "properties": { "next": { "$ref": "#" }, "n": { "type": "integer" } }
    });
    let mut document = json!({
        "type": "object",
        "properties": { "head": { "$ref": "#" }, "count": { "$ref": "#/properties/n" } }
    });
    keep_root_refs(&root, &mut document);
    let name = crate::refs::ROOT_DEF;
    assert_eq!(
        document["properties"]["count"]["$ref"],
        json!(format!("#/$defs/{name}/properties/n"))
    );
    assert_eq!(
        document["$defs"][name]["properties"]["next"]["$ref"],
        json!(format!("#/$defs/{name}"))
    );
    let v = jsonschema::draft202012::new(&document).unwrap();
    assert!(v.is_valid(&json!({ "head": { "next": { "n": 1 } }, "count": 2 })));
    assert!(!v.is_valid(&json!({ "count": "two" })));
    assert!(!v.is_valid(&json!({ "head": { "next": { "n": "one" } } })));
    // A document with no reference to the root is left as it is.
    let mut plain = json!({ "type": "object", "properties": { "x": { "$ref": "#/$defs/X" } } });
    let before = plain.clone();
    keep_root_refs(&root, &mut plain);
    assert_eq!(plain, before);
}

#[test]
fn the_roots_copy_takes_a_name_its_defs_do_not_use() {
    let name = crate::refs::ROOT_DEF;
    assert_eq!(fresh_root_name(&json!({})), name);
    assert_eq!(
        fresh_root_name(&json!({ "$defs": { name: {} } })),
        format!("{name}_")
    );
    let taken = json!({ "$defs": { name: {}, format!("{name}_"): {} } });
    assert_eq!(fresh_root_name(&taken), format!("{name}__"));
    // A root that uses the name itself keeps its own definition.
    let root = json!({
        "$defs": { name: { "type": "string" } },
        "properties": { "s": { "$ref": format!("#/$defs/{name}") }, "me": { "$ref": "#" } }
    });
    let me = schema_at(&root, "/properties/me").unwrap();
    let v = jsonschema::draft202012::new(&me).unwrap();
    assert!(v.is_valid(&json!({ "s": "text", "me": { "s": "more" } })));
    assert!(!v.is_valid(&json!({ "me": { "s": 1 } })));
}

#[test]
fn a_built_schema_is_made_a_document_in_its_roots_context() {
    let root = json!({ "$defs": { "N": { "type": "integer" } } });
    assert_eq!(with_root(&root, &json!(true)), Some(json!(true)));
    assert_eq!(with_root(&root, &json!(false)), Some(json!(false)));
    assert_eq!(with_root(&root, &json!(3)), None);
    let document = with_root(&root, &json!({ "items": { "$ref": "#/$defs/N" } })).unwrap();
    assert_eq!(
        document["$schema"],
        json!("https://json-schema.org/draft/2020-12/schema")
    );
    let v = jsonschema::draft202012::new(&document).unwrap();
    assert!(v.is_valid(&json!([1, 2])) && !v.is_valid(&json!(["1"])));
}

/// `schema_at`: the subschema at a pointer as a document of its own, its references (to
/// `$defs`, to the root, with `%` in a name) still resolving.
#[test]
fn a_subschema_is_a_standalone_document() {
    let root = json!({
        "$defs": { "N": { "type": "integer", "minimum": 0 } },
        "type": "object",
        "properties": {
            "n": { "$ref": "#/$defs/N" },
            "me": { "$ref": "#" },
            "a%b": { "type": "string" }
        }
    });
    let valid = |ptr: &str, value: Value| {
        let document = schema_at(&root, ptr).unwrap_or_else(|| panic!("{ptr} is there"));
        jsonschema::draft202012::new(&document)
            .unwrap()
            .is_valid(&value)
    };
    assert!(valid("/properties/n", json!(3)));
    assert!(!valid("/properties/n", json!(-1)));
    assert!(!valid("/properties/n", json!("3")));
    assert!(valid("/properties/me", json!({ "n": 1 })));
    assert!(!valid("/properties/me", json!({ "n": -1 })));
    assert!(!valid("/properties/me", json!(3)));
    assert!(valid("/$defs/N", json!(0)) && !valid("/$defs/N", json!(-1)));
    assert!(valid("/properties/a%b", json!("x")) && !valid("/properties/a%b", json!(1)));
    assert_eq!(schema_at(&root, "/properties/missing"), None);
}

#[test]
fn a_reference_is_percent_decoded_then_read_as_a_pointer() {
    // The decoding itself: `pointer::local_pointer`'s tests.
    let p = json!({ "$defs": { "a b": { "type": "integer" } }, "$ref": "#/$defs/a%20b" });
    let c = json!({ "type": "integer" });
    assert!(schema_compatible(&p, &c).is_compatible());
    assert_eq!(witness(&p, &json!({ "type": "string" })), json!(0));
}

#[test]
fn instances_are_equal_as_json_schema_compares_them() {
    assert!(same_instance(&json!(1), &json!(1.0)));
    assert!(same_instance(
        &json!([1, { "a": 2 }]),
        &json!([1.0, { "a": 2.0 }])
    ));
    assert!(!same_instance(&json!([1]), &json!([1, 2])));
    assert!(!same_instance(&json!([1]), &json!([2])));
    assert!(!same_instance(
        &json!({ "a": 1 }),
        &json!({ "a": 1, "b": 2 })
    ));
    assert!(!same_instance(&json!({ "a": 1 }), &json!({ "b": 1 })));
    assert!(!same_instance(&json!({ "a": 1 }), &json!({ "a": 2 })));
    assert!(!same_instance(&json!(1), &json!("1")));
}

/// A producer's `anyOf` beside other keywords: each branch is read with them.
#[test]
fn a_producers_alternatives_are_read_with_their_siblings() {
    let p = json!({
        "type": "integer", "minimum": 0, "maximum": 10,
        "anyOf": [{ "multipleOf": 2 }, { "multipleOf": 3 }]
    });
    assert!(schema_compatible(&p, &json!({ "type": "integer", "minimum": 0 })).is_compatible());
    // Below 10, within the branches: included too (each branch is a part of its own).
    let c = json!({ "type": "integer", "minimum": 0, "maximum": 10 });
    assert!(schema_compatible(&p, &c).is_compatible());
    // Not the siblings' range alone: a branch with them is not within `[0, 5]`.
    let c = json!({ "type": "integer", "maximum": 5 });
    assert!(!schema_compatible(&p, &c).is_compatible());
}

/// Several consumer branches may cover a producer of several types together.
#[test]
fn a_producer_of_several_types_is_split_across_the_consumers_branches() {
    for (types, branches) in [
        (
            json!(["boolean", "integer"]),
            json!([{ "type": "boolean" }, { "type": "integer" }]),
        ),
        (
            json!(["number", "string"]),
            json!([{ "type": "string" }, { "type": "number" }]),
        ),
        (
            json!(["array", "null"]),
            json!([{ "type": "null" }, { "type": "array" }]),
        ),
        (
            json!(["integer", "string"]),
            json!([{ "type": "string" }, { "type": "integer" }]),
        ),
    ] {
        let p = json!({ "type": types });
        let c = json!({ "anyOf": branches });
        assert!(schema_compatible(&p, &c).is_compatible(), "{p} into {c}");
    }
}

/// `null`, `boolean` and the two together are finite: each value is checked.
#[test]
fn null_and_boolean_producers_are_checked_value_by_value() {
    let c = json!({ "enum": [null, false, true] });
    for p in [
        json!({ "type": "null" }),
        json!({ "type": "boolean" }),
        json!({ "type": ["null", "boolean"] }),
    ] {
        assert!(schema_compatible(&p, &c).is_compatible(), "{p}");
    }
    assert_eq!(
        witness(
            &json!({ "type": ["null", "boolean"] }),
            &json!({ "enum": [null, false] })
        ),
        json!(true)
    );
}

/// Against a consumer `enum`, a string of the producer's least length is tried.
#[test]
fn a_long_least_length_gives_a_witness_against_an_enum() {
    let p = json!({ "type": "string", "minLength": 20, "maxLength": 20 });
    let c = json!({ "enum": ["aaaaaaaaaaaaaaaaaaaa"] });
    assert_eq!(witness(&p, &c), json!("z".repeat(20)));
}

/// A consumer's `oneOf` is read as "one of" only when its branches cannot overlap.
#[test]
fn one_of_branches_are_disjoint_by_type_constants_or_a_tag_one_side_requires() {
    const OVERLAP: &str = "the consumer's `oneOf` branches may overlap";
    let p = json!({ "type": "integer", "minimum": 1, "maximum": 2 });
    // Distinct constants: disjoint (the answer is the branches', not the overlap's).
    let apart = json!({ "oneOf": [{ "const": 1 }, { "const": 2 }] });
    assert_ne!(unknown_reason(&p, &apart), OVERLAP);
    let same = json!({ "oneOf": [{ "const": 1 }, { "enum": [1.0, 3] }] });
    assert_eq!(unknown_reason(&p, &same), OVERLAP);
    let arrays = json!({ "oneOf": [{ "const": [1] }, { "const": [1.0] }] });
    assert_eq!(unknown_reason(&p, &arrays), OVERLAP);
    // A tag: the first branch requires `kind: "x"`, the second fixes `kind` to "y"
    // without requiring it. No value has both.
    let tagged = json!({ "oneOf": [
        { "type": "object", "required": ["kind"], "properties": { "kind": { "const": "x" } } },
        { "type": "object", "properties": { "kind": { "const": "y" } } }
    ] });
    let x = json!({ "type": "object", "required": ["kind"], "properties": { "kind": { "const": "x" } } });
    assert!(schema_compatible(&x, &tagged).is_compatible());
    let swapped = json!({ "oneOf": [tagged["oneOf"][1], tagged["oneOf"][0]] });
    assert!(schema_compatible(&x, &swapped).is_compatible());
    // A branch's `$ref` adds constraints; its own `type` still sets it apart.
    let c = json!({
        "$defs": { "S": { "minLength": 1 } },
        "oneOf": [{ "$ref": "#/$defs/S", "type": "string" }, { "type": "integer" }]
    });
    assert!(schema_compatible(&json!({ "type": "integer" }), &c).is_compatible());
}

/// Examples are built within the depth limit, through references, items and members.
#[test]
fn examples_stop_at_the_depth_limit_through_references_arrays_and_objects() {
    let chain = |n: usize| {
        let mut defs = Map::new();
        for i in 0..n {
            defs.insert(
                format!("d{i}"),
                json!({ "$ref": format!("#/$defs/d{}", i + 1) }),
            );
        }
        defs.insert(format!("d{n}"), json!({ "type": "integer" }));
        json!({ "$defs": defs, "$ref": "#/$defs/d0" })
    };
    let nest = |n: usize, wrap: fn(Value) -> Value| {
        (0..n).fold(json!({ "type": "integer" }), |s, _| wrap(s))
    };
    let items: fn(Value) -> Value = |s| json!({ "type": "array", "minItems": 1, "items": s });
    let prefix: fn(Value) -> Value =
        |s| json!({ "type": "array", "minItems": 1, "prefixItems": [s] });
    let member: fn(Value) -> Value =
        |s| json!({ "type": "object", "required": ["a"], "properties": { "a": s } });
    let arena = typed_arena::Arena::new();
    for (what, shallow, deep) in [
        ("references", chain(MAX_DEPTH - 1), chain(MAX_DEPTH + 1)),
        (
            "items",
            nest(MAX_DEPTH - 1, items),
            nest(MAX_DEPTH + 1, items),
        ),
        (
            "prefix items",
            nest(MAX_DEPTH - 1, prefix),
            nest(MAX_DEPTH + 1, prefix),
        ),
        (
            "members",
            nest(MAX_DEPTH - 1, member),
            nest(MAX_DEPTH + 1, member),
        ),
    ] {
        let shallow: &Value = arena.alloc(shallow);
        let deep: &Value = arena.alloc(deep);
        let mut ch = checker(&arena, shallow);
        assert!(ch.example(&Node::root(shallow), 0).is_some(), "{what}");
        let mut ch = checker(&arena, deep);
        assert_eq!(ch.example(&Node::root(deep), 0), None, "{what}");
    }
}

/// A recursive array type compared through its `prefixItems`: each level consumes an
/// item, so the recursion is assumed (and not refused as circular).
#[test]
fn recursion_through_prefix_items_is_assumed_one_item_down() {
    let p = json!({
        "$defs": { "T": { "type": "array", "prefixItems": [{ "$ref": "#/$defs/T" }], "items": false } },
        "$ref": "#/$defs/T"
    });
    let c = json!({
        "$defs": { "U": { "type": "array", "prefixItems": [{ "$ref": "#/$defs/U" }], "maxItems": 1 } },
        "$ref": "#/$defs/U"
    });
    assert!(schema_compatible(&p, &c).is_compatible());
}

/// The member an object example is built around is placed, not built: it may be one the
/// producer's schema could not give an example of.
#[test]
fn an_object_example_places_the_member_it_is_built_around() {
    let p = json!({
        "type": "object",
        "required": ["a", "b", "b"],
        "properties": { "a": false, "b": { "type": "integer", "minimum": 3 } }
    });
    let arena = typed_arena::Arena::new();
    let mut ch = checker(&arena, &p);
    let map = p.as_object().unwrap();
    assert_eq!(
        ch.object_example(&Node::root(&p), map, Some(("a", json!(1))), 0),
        Some(json!({ "a": 1, "b": 3 }))
    );
    assert_eq!(ch.object_example(&Node::root(&p), map, None, 0), None);
}

#[test]
fn a_narrow_range_is_enumerated_wherever_it_lies() {
    assert_eq!(
        numbers(
            json!({ "minimum": 1_000_000, "maximum": 1_000_003 }),
            INTEGER
        )
        .enumerate(),
        Some(vec![1e6, 1e6 + 1.0, 1e6 + 2.0, 1e6 + 3.0])
    );
    // The limit is on the width in steps: 200 steps of 0.5 are enumerated (the 100
    // non-integers among them), 400 are not.
    let halves = |hi: u32| {
        numbers(
            json!({ "minimum": 0, "maximum": hi, "multipleOf": 0.5 }),
            FRACTION,
        )
        .enumerate()
        .map(|all| all.len())
    };
    assert_eq!(halves(100), Some(100));
    assert_eq!(halves(200), None);
    assert_eq!(
        numbers(
            json!({ "minimum": 0.3, "maximum": 0.7, "multipleOf": 0.1 }),
            FRACTION
        )
        .enumerate(),
        Some(vec![0.3, 0.4, 0.5, 0.6, 0.7])
    );
}

/// Witnesses are looked for next to the ends, far from zero too.
#[test]
fn a_witness_is_found_next_to_an_end_far_from_zero() {
    let p = json!({ "type": "integer", "minimum": 3000, "multipleOf": 3 });
    let c = json!({ "type": "integer", "minimum": 3000, "multipleOf": 6 });
    assert_eq!(witness(&p, &c), json!(3003));
    // Below zero, one of the odd multiples of 3 within a few steps of the end.
    let p = json!({ "type": "integer", "maximum": -3000, "multipleOf": 3 });
    let c = json!({ "type": "integer", "maximum": -3000, "multipleOf": 6 });
    let w = witness(&p, &c).as_i64().unwrap();
    assert!(
        (-3036..-3000).contains(&w) && w % 3 == 0 && w % 6 != 0,
        "{w}"
    );
    // Every offset but the third is a multiple of 2^-10: the third shows the difference.
    let p = json!({ "type": "number", "minimum": 0, "maximum": 10 });
    let c = json!({ "type": "number", "multipleOf": 0.0009765625 });
    assert_eq!(witness(&p, &c), json!(1.0 / 3.0));
    // The non-integers of a range with no integer in it.
    let p = json!({ "type": "number", "exclusiveMinimum": 0.1, "exclusiveMaximum": 0.9 });
    assert_eq!(witness(&p, &json!({ "type": "integer" })), json!(0.6));
}
