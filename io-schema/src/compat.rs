//! Schema inclusion: can every value one schema allows be given to another?
//!
//! [`schema_compatible`] answers for a producer's output schema and a consumer's input schema
//! with one of three answers:
//!
//! - [`Compatibility::Compatible`]: proven: every instance of the producer is valid for the
//!   consumer. The check is **sound**: it never says so when a counter-example exists.
//! - [`Compatibility::Incompatible`]: with a [`Counterexample`]: a concrete JSON value that the
//!   producer's schema accepts and the consumer's refuses (both checked by the real validator
//!   before it is reported), and the pointers on both sides where they part.
//! - [`Compatibility::Unknown`]: what stopped the proof (a consumer `pattern` the producer does
//!   not share, a keyword the checker does not reason about, a budget).
//!
//! # How
//!
//! Structural rules over what schemars emits, in the manner of `jsonsubschema` (Habib et al.,
//! ISSTA 2021): `type` sets (`integer` ⊂ `number`), numeric bounds (inclusive and exclusive,
//! `multipleOf`), string lengths, `pattern` and `format` (equal, or absent on the consumer),
//! `enum` / `const` (each producer value is checked for membership), arrays (`items`,
//! `prefixItems`, `minItems`, `maxItems`, `uniqueItems`), objects (`properties`, `required`,
//! `additionalProperties`), `anyOf` / `oneOf` / `allOf`, `$ref` / `$defs` including recursive
//! types (a pair of references already being compared is assumed included, which is sound for
//! inclusion of recursive types), and boolean schemas.
//!
//! Numeric constraints alone (a numeric type with `minimum`, `maximum`, the exclusive ones and
//! `multipleOf`, all below 2^53) are decided exactly: compatible, or incompatible with a
//! witness, never unknown, with one exception the validator forces: past 2^53 it rounds a
//! number to `f64` before dividing it by a fractional (or larger than 2^53) `multipleOf`, so a
//! producer whose numbers reach past 2^53 is proven against such a `multipleOf` only number by
//! number (a bounded few), and is otherwise unknown. Which numbers are multiples is the validator's own answer (it reads
//! numbers as their shortest decimals, so `0.3` is a multiple of `0.1`), and the multiples tried
//! are made on those decimals. A producer holding at most 256 multiples is
//! checked number by number; a larger one is compatible when its range lies within the
//! consumer's and the consumer's `multipleOf` divides its step (its `multipleOf`, or for integers
//! the least integer multiple of it), and otherwise has a refused number near one of the ends
//! or zero, which is searched for and reported.
//!
//! Two principles keep it sound. A keyword the checker does not reason about is ignored on the
//! producer side only when it can only *narrow* the producer (`not`, `if`, `propertyNames`, ...),
//! since a wider producer proven included is still included; on the consumer side, or when it
//! would widen the producer (`patternProperties`), the answer is unknown. And a witness is
//! reported only after the producer's and the consumer's validators agree on it; a candidate that
//! fails that check turns the answer into unknown, never into a wrong "incompatible".
//!
//! ```
//! use agentio_core::compat::{Compatibility, schema_compatible};
//! use serde_json::json;
//!
//! let produced = json!({ "type": "object", "properties": { "n": { "type": "integer", "minimum": 1, "maximum": 10 } }, "required": ["n"] });
//! let wider = json!({ "type": "object", "properties": { "n": { "type": "number", "maximum": 100 } }, "required": ["n"] });
//! assert!(schema_compatible(&produced, &wider).is_compatible());
//!
//! let Compatibility::Incompatible(why) = schema_compatible(&wider, &produced) else { panic!() };
//! assert_eq!(why.consumer_pointer, "/properties/n");
//! // The witness is a real value: the producer accepts it and the consumer refuses it.
//! assert!(why.witness.is_object());
//! ```

use std::collections::{HashMap, HashSet};
use std::fmt;

use crate::types::{
    ALL, ARRAY, BOOLEAN, FRACTION, INTEGER, NULL, OBJECT, STRING, Types, type_name,
};
use serde::Serialize;
use serde_json::{Map, Value, json};

/// The answer of [`schema_compatible`].
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum Compatibility {
    /// Every instance of the producer is valid for the consumer (proven).
    Compatible,
    /// A value the producer allows and the consumer refuses.
    Incompatible(Counterexample),
    /// Neither could be shown; the reason says what stopped the proof.
    Unknown(Undecided),
}

impl Compatibility {
    /// Whether inclusion was proven.
    pub fn is_compatible(&self) -> bool {
        matches!(self, Compatibility::Compatible)
    }
}

/// A value the producer's schema accepts and the consumer's refuses, and where they part.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Counterexample {
    /// The value (checked: valid for the producer, invalid for the consumer).
    pub witness: Value,
    /// Where in the producer's schema the difference lies (a JSON pointer).
    pub producer_pointer: String,
    /// Where in the consumer's schema (a JSON pointer).
    pub consumer_pointer: String,
    /// What differs, in words.
    pub reason: String,
}

/// Why neither inclusion nor a counter-example could be shown.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Undecided {
    /// Where in the producer's schema the proof stopped.
    pub producer_pointer: String,
    /// Where in the consumer's schema.
    pub consumer_pointer: String,
    /// What stopped it.
    pub reason: String,
}

impl fmt::Display for Compatibility {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Compatibility::Compatible => f.write_str("compatible"),
            Compatibility::Incompatible(c) => write!(
                f,
                "incompatible at {} (producer {}): {}; for example {}",
                or_root(&c.consumer_pointer),
                or_root(&c.producer_pointer),
                c.reason,
                crate::limits::bounded_display(&c.witness, 200)
            ),
            Compatibility::Unknown(u) => write!(
                f,
                "not proven at {} (producer {}): {}",
                or_root(&u.consumer_pointer),
                or_root(&u.producer_pointer),
                u.reason
            ),
        }
    }
}

fn or_root(pointer: &str) -> &str {
    if pointer.is_empty() {
        "the root"
    } else {
        pointer
    }
}

/// Whether every instance of `producer` is valid for `consumer` (both Draft 2020-12 schema
/// documents; `$ref`s resolve within each document). See the [module](self) documentation.
pub fn schema_compatible(producer: &Value, consumer: &Value) -> Compatibility {
    let arena = typed_arena::Arena::new();
    let mut checker = Checker {
        arena: &arena,
        p_root: producer,
        c_root: consumer,
        assumed: HashMap::new(),
        steps: 0,
        validators: HashMap::new(),
    };
    match checker.check(Node::root(producer), Node::root(consumer), 0, 0) {
        Outcome::Ok => Compatibility::Compatible,
        Outcome::Unknown(u) => Compatibility::Unknown(u),
        Outcome::Fail(local) => {
            // The local witness sits at `local.at` in the producer; the parents built the
            // whole document around it. Report it only if both validators agree.
            let witness = local.value;
            let producer_ok = checker.valid(Side::Producer, &Node::root(producer), &witness);
            let consumer_ok = checker.valid(Side::Consumer, &Node::root(consumer), &witness);
            if producer_ok == Some(true) && consumer_ok == Some(false) {
                Compatibility::Incompatible(Counterexample {
                    witness,
                    producer_pointer: local.p_ptr,
                    consumer_pointer: local.c_ptr,
                    reason: local.reason,
                })
            } else {
                Compatibility::Unknown(Undecided {
                    producer_pointer: local.p_ptr,
                    consumer_pointer: local.c_ptr,
                    reason: format!(
                        "{}, but no value showing it was confirmed by both validators",
                        local.reason
                    ),
                })
            }
        }
    }
}

/// How many comparisons one check may make: a hostile or huge schema gets `unknown`.
const MAX_STEPS: usize = 200_000;
/// How deep the comparison (and witness building) may recurse.
const MAX_DEPTH: usize = 64;

/// Keywords this checker reasons about.
const UNDERSTOOD: &[&str] = &[
    "type",
    "enum",
    "const",
    "$ref",
    "allOf",
    "anyOf",
    "oneOf",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "properties",
    "required",
    "additionalProperties",
    "minProperties",
];

/// Draft 2020-12 keywords that only narrow what a schema allows: on the producer side,
/// ignoring them keeps a proof sound (a wider producer proven included is still included).
const NARROWING: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "dependentRequired",
    "dependentSchemas",
    "maxProperties",
    "contains",
    "minContains",
    "maxContains",
    "unevaluatedProperties",
    "unevaluatedItems",
    // Draft 7's form of `dependentRequired` / `dependentSchemas`, which some validators still
    // apply, and the content keywords, which some validators assert.
    "dependencies",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// Draft 2020-12 keywords that can widen what a schema allows, or that refer elsewhere in
/// ways not followed here: unknown on either side.
const OPAQUE: &[&str] = &["patternProperties", "$dynamicRef", "$recursiveRef"];

/// Whether a keyword constrains values. Draft 2020-12 validators ignore keywords they do not
/// define (`nullable`, `x-...`, `title`): so does this checker.
fn constrains(keyword: &str) -> bool {
    UNDERSTOOD.contains(&keyword) || NARROWING.contains(&keyword) || OPAQUE.contains(&keyword)
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Side {
    Producer,
    Consumer,
}

#[derive(Clone)]
struct Node<'a> {
    schema: &'a Value,
    /// Where the schema is in its document (for a node built here: the node it stands for).
    ptr: String,
    /// Built here (a narrowed or split copy), not found in the document: validated by its
    /// own text.
    synthetic: bool,
}

impl<'a> Node<'a> {
    fn root(schema: &'a Value) -> Self {
        Node {
            schema,
            ptr: String::new(),
            synthetic: false,
        }
    }

    fn child(&self, schema: &'a Value, tokens: &[&str]) -> Self {
        let mut ptr = self.ptr.clone();
        for token in tokens {
            ptr.push('/');
            ptr.push_str(&crate::pointer::escape_token(token));
        }
        Node {
            schema,
            ptr,
            synthetic: self.synthetic,
        }
    }

    fn map(&self) -> Option<&'a Map<String, Value>> {
        self.schema.as_object()
    }

    /// What the node is, for recursion: its pointer, and for a node built here (whose text may
    /// differ from what is at that pointer) its address too.
    fn identity(&self) -> String {
        if self.synthetic {
            format!("{}@{:p}", self.ptr, self.schema)
        } else {
            self.ptr.clone()
        }
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.schema.get(key)
    }
}

/// A witness found below the root, already wrapped into a whole producer document by the
/// levels it passed through.
struct Local {
    value: Value,
    p_ptr: String,
    c_ptr: String,
    reason: String,
}

enum Outcome {
    Ok,
    Fail(Local),
    Unknown(Undecided),
}

struct Checker<'a> {
    /// Schemas built during the comparison (narrowed copies), freed with it.
    arena: &'a typed_arena::Arena<Value>,
    p_root: &'a Value,
    c_root: &'a Value,
    /// Pairs of producer and consumer pointers being compared (recursion).
    assumed: HashMap<(String, String), usize>,
    steps: usize,
    validators: HashMap<(Side, String), Option<jsonschema::Validator>>,
}

fn unknown(p: &Node<'_>, c: &Node<'_>, reason: impl Into<String>) -> Outcome {
    Outcome::Unknown(Undecided {
        producer_pointer: p.ptr.clone(),
        consumer_pointer: c.ptr.clone(),
        reason: reason.into(),
    })
}

fn fail(p: &Node<'_>, c: &Node<'_>, value: Value, reason: impl Into<String>) -> Outcome {
    Outcome::Fail(Local {
        value,
        p_ptr: p.ptr.clone(),
        c_ptr: c.ptr.clone(),
        reason: reason.into(),
    })
}

/// Constraining keywords of a schema (annotations left out).
fn constraints(map: &Map<String, Value>) -> impl Iterator<Item = (&String, &Value)> {
    map.iter().filter(|(k, _)| constrains(k))
}

fn is_true(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(map) => constraints(map).next().is_none(),
        _ => false,
    }
}

fn number(value: Option<&Value>) -> Option<f64> {
    value.and_then(Value::as_f64)
}

/// A numeric interval: bounds with exclusivity.
#[derive(Clone, Copy, Debug)]
struct Interval {
    lo: f64,
    lo_excl: bool,
    hi: f64,
    hi_excl: bool,
}

impl Interval {
    fn of(map: &Map<String, Value>, integer: bool) -> Interval {
        let mut iv = Interval {
            lo: f64::NEG_INFINITY,
            lo_excl: false,
            hi: f64::INFINITY,
            hi_excl: false,
        };
        if let Some(m) = number(map.get("minimum")) {
            iv.lo = m;
        }
        if let Some(m) = number(map.get("exclusiveMinimum"))
            && m >= iv.lo
        {
            iv.lo = m;
            iv.lo_excl = true;
        }
        if let Some(m) = number(map.get("maximum")) {
            iv.hi = m;
        }
        if let Some(m) = number(map.get("exclusiveMaximum"))
            && m <= iv.hi
        {
            iv.hi = m;
            iv.hi_excl = true;
        }
        if integer {
            // Over the integers, every bound is inclusive.
            if iv.lo.is_finite() {
                iv.lo = if iv.lo_excl {
                    iv.lo.floor() + 1.0
                } else {
                    iv.lo.ceil()
                };
                iv.lo_excl = false;
            }
            if iv.hi.is_finite() {
                iv.hi = if iv.hi_excl {
                    iv.hi.ceil() - 1.0
                } else {
                    iv.hi.floor()
                };
                iv.hi_excl = false;
            }
        }
        iv
    }

    /// Whether `x` lies within the interval.
    fn holds(&self, x: f64) -> bool {
        (x > self.lo || (x == self.lo && !self.lo_excl))
            && (x < self.hi || (x == self.hi && !self.hi_excl))
    }

    /// Whether `self` lies within `other`.
    fn within(&self, other: &Interval) -> bool {
        let lo_ok = self.lo > other.lo || (self.lo == other.lo && (self.lo_excl || !other.lo_excl));
        let hi_ok = self.hi < other.hi || (self.hi == other.hi && (self.hi_excl || !other.hi_excl));
        lo_ok && hi_ok
    }
}

/// A finite `f64` as the shortest decimal that reads back as it: `(mantissa, exponent)`, the
/// value being `mantissa * 10^exponent` (how the validator reads numbers for `multipleOf`).
fn decimal(x: f64) -> Option<(i128, i32)> {
    if !x.is_finite() {
        return None;
    }
    // `{:e}` prints the shortest round-trip digits: `-1.25e-3`, `3e-1`.
    let text = format!("{x:e}");
    let (digits, exponent) = text.split_once('e')?;
    let exponent: i32 = exponent.parse().ok()?;
    let decimals = digits.split_once('.').map_or(0, |(_, f)| f.len());
    let mantissa: i128 = digits.replace('.', "").parse().ok()?;
    Some((mantissa, exponent - i32::try_from(decimals).ok()?))
}

/// A `multipleOf`, with the validator's own test of it: which numbers are its multiples is
/// the validator's answer (decimal: `0.3` is a multiple of `0.1`), never a second reading.
struct Multiple {
    of: f64,
    check: jsonschema::Validator,
}

impl Multiple {
    fn new(of: Option<f64>) -> Option<Multiple> {
        let of = of.filter(|m| *m > 0.0 && m.is_finite())?;
        let check = jsonschema::validator_for(&json!({ "multipleOf": of })).ok()?;
        Some(Multiple { of, check })
    }

    fn divides(&self, x: f64) -> bool {
        x.is_finite() && self.check.is_valid(&json!(x))
    }
}

/// The `k`-th multiple of `m` (`k` integral), computed on `m`'s shortest decimal so that the
/// third multiple of `0.1` is `0.3`, not `0.30000000000000004`.
fn times(k: f64, m: f64) -> f64 {
    let whole = k as i128;
    if let Some((mantissa, exponent)) = decimal(m)
        // `k` as an integer, exactly (not saturated)
        && whole as f64 == k
        && let Some(product) = whole.checked_mul(mantissa)
        && let Ok(x) = format!("{product}e{exponent}").parse::<f64>()
    {
        return x;
    }
    k * m
}

/// A number as JSON: an integer as an integer, where `f64` holds it exactly (below 2^53).
fn number_value(x: f64, integer: bool) -> Value {
    if integer && x.abs() < TWO_TO_53 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

/// How far from an anchor the witness search looks, in steps of the producer.
const NEAR: i32 = 12;
/// A producer holding at most this many multiples is checked number by number.
const ENUMERABLE: f64 = 256.0;

/// The numbers of one numeric type (`INTEGER` or `FRACTION`) that a producer's bounds and
/// `multipleOf` allow.
struct Numbers {
    /// The range, its ends moved in to the first and last multiple where one was found.
    range: Interval,
    /// The producer's `multipleOf`.
    multiple: Option<Multiple>,
    integer: bool,
}

impl Numbers {
    fn of(map: &Map<String, Value>, t: u8) -> Numbers {
        let integer = t == INTEGER;
        let multiple = Multiple::new(number(map.get("multipleOf")));
        let step = multiple.as_ref().map(|m| m.of);
        let mut numbers = Numbers {
            range: Interval::of(map, integer),
            multiple,
            integer,
        };
        if let Some(m) = step {
            // The first and last multiple of the type inside the range bound every number of
            // the producer (when none is found near an end, that end stays: a looser bound).
            // (The search starts at the multiple `floor` / `ceil` of the quotient gives, which
            // is within rounding of the end and never past it.)
            let range = numbers.range;
            if range.lo.is_finite() {
                let k = (range.lo / m).floor();
                if let Some(x) = (0..=NEAR * 4)
                    .map(|i| times(k + f64::from(i), m))
                    .find(|x| numbers.holds(*x))
                {
                    numbers.range.lo = x;
                    numbers.range.lo_excl = false;
                }
            }
            if range.hi.is_finite() {
                let k = (range.hi / m).ceil();
                if let Some(x) = (0..=NEAR * 4)
                    .map(|i| times(k - f64::from(i), m))
                    .find(|x| numbers.holds(*x))
                {
                    numbers.range.hi = x;
                    numbers.range.hi_excl = false;
                }
            }
        }
        numbers
    }

    /// Whether there is no number at all (an empty range, or one holding no multiple).
    fn is_empty(&self) -> bool {
        // A reversed range; the non-integers among the multiples of an integer (there are
        // none); a range of few numbers with none of them in it (one point among them: an
        // exclusive one, or an integer as a non-integer's range).
        self.range.lo > self.range.hi
            || (!self.integer && self.multiple.as_ref().is_some_and(|m| m.of.fract() == 0.0))
            || self.enumerate().is_some_and(|all| all.is_empty())
    }

    /// One of the numbers: the least when the range has a lower end, else the one nearest zero
    /// (or nearest the upper end, below zero), the larger on a tie (`2.5` of `±2.5`).
    fn example(&self) -> Option<f64> {
        if let Some(all) = self.enumerate() {
            return all.first().copied();
        }
        let Interval { lo, hi, .. } = self.range;
        let anchor = if lo.is_finite() {
            lo
        } else if hi.is_finite() {
            hi.min(0.0)
        } else {
            0.0
        };
        let near = self.near(&[anchor]);
        if self.grid().is_some() {
            let distance = |x: &f64| (x - anchor).abs();
            near.into_iter()
                .min_by(|a, b| distance(a).total_cmp(&distance(b)).then(b.total_cmp(a)))
        } else {
            // In the order `near` tries offsets: the anchor, then halves, quarters, ...
            near.into_iter().next()
        }
    }

    /// The grid the numbers lie on, where they lie on one: the `multipleOf`, or the integers.
    fn grid(&self) -> Option<f64> {
        self.multiple
            .as_ref()
            .map(|m| m.of)
            .or(self.integer.then_some(1.0))
    }

    /// Whether `x` is one of the numbers (by bounds, type and `multipleOf`).
    fn holds(&self, x: f64) -> bool {
        x.is_finite()
            && self.range.holds(x)
            && (x.fract() == 0.0) == self.integer
            && self.multiple.as_ref().is_none_or(|m| m.divides(x))
    }

    /// The step between neighbouring numbers, where they have one: the `multipleOf`, or 1
    /// for integers (the smallest integer multiple of a fractional `multipleOf`).
    fn step(&self) -> Option<f64> {
        match (&self.multiple, self.integer) {
            (None, true) => Some(1.0),
            (None, false) => None,
            (Some(m), false) => Some(m.of),
            (Some(m), true) => (1..=64)
                .map(|k| times(f64::from(k), m.of))
                .find(|x| x.fract() == 0.0 && m.divides(*x)),
        }
    }

    /// Whether every number is a multiple of `m`: `m` divides the step (a `multipleOf` `p`'s
    /// non-integer multiples have no larger common divisor than `p`). Without a step (the
    /// non-integers of a range), never.
    fn implies_multiple(&self, m: &Multiple) -> bool {
        self.step().is_some_and(|step| m.divides(step))
    }

    /// Every number, in order, when there are few: a single point, or a bounded range of at
    /// most `ENUMERABLE` steps.
    fn enumerate(&self) -> Option<Vec<f64>> {
        let Interval { lo, hi, .. } = self.range;
        if lo == hi {
            return Some([lo].into_iter().filter(|x| self.holds(*x)).collect());
        }
        let step = self.grid()?;
        // An unbounded range is infinitely many steps wide (and a range's ends are never NaN:
        // a schema cannot write one).
        if (hi - lo) / step > ENUMERABLE {
            return None;
        }
        // The quotients are within rounding of the first and last index, and `floor` / `ceil`
        // can only widen: a point outside the range is dropped by `holds`.
        let first = (lo / step).floor();
        let last = (hi / step).ceil();
        let count = (last - first) as i32;
        Some(
            (0..=count)
                .map(|i| times(first + f64::from(i), step))
                .filter(|x| self.holds(*x))
                .collect(),
        )
    }

    /// Numbers within `NEAR` steps of each anchor (for the non-integers of a range without a
    /// step: the anchor and points a fraction away from it, a third among them, which no
    /// binary `multipleOf` divides).
    fn near(&self, anchors: &[f64]) -> Vec<f64> {
        const OFFSETS: [f64; 9] = [
            0.0,
            0.5,
            0.25,
            0.125,
            1.0 / 3.0,
            0.75,
            1.5,
            2.5,
            1.0 / 1024.0,
        ];
        let mut out = Vec::new();
        for &a in anchors.iter().filter(|a| a.is_finite()) {
            match self.grid() {
                Some(step) => {
                    let k = (a / step).floor();
                    for i in -NEAR..=NEAR {
                        out.push(times(k + f64::from(i), step));
                    }
                }
                None => {
                    for d in OFFSETS {
                        out.extend([a + d, a - d]);
                    }
                }
            }
        }
        out.retain(|x| self.holds(*x));
        out
    }
}

/// 2^53: past it, not every integer is an `f64`.
const TWO_TO_53: f64 = 9_007_199_254_740_992.0;

/// Integers past 2^53 are not all exact as `f64`; bounds there are not reasoned about. The
/// test is on the `f64`, so it must exclude 2^53 itself: 2^53 + 1 written in the schema reads
/// as 2^53 (and a bound of 2^53 would then prove that a producer allowing 2^53 + 1 fits).
fn exact(map: &Map<String, Value>) -> bool {
    [
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    ]
    .iter()
    .all(|k| number(map.get(*k)).is_none_or(|n| n.abs() < TWO_TO_53))
}

impl<'a> Checker<'a> {
    fn root(&self, side: Side) -> &'a Value {
        match side {
            Side::Producer => self.p_root,
            Side::Consumer => self.c_root,
        }
    }

    /// Whether `value` is valid for `node` of one side, by the real validator (`None`: it
    /// cannot be built). A node built here is checked against its own text; a node of the
    /// document against the document at its pointer.
    fn valid(&mut self, side: Side, node: &Node<'a>, value: &Value) -> Option<bool> {
        let root = self.root(side);
        let key = if node.synthetic {
            format!("text:{}", node.schema)
        } else {
            node.ptr.clone()
        };
        let (ptr, synthetic, schema) = (node.ptr.clone(), node.synthetic, node.schema);
        let validator = self.validators.entry((side, key)).or_insert_with(|| {
            let document = if synthetic {
                with_root(root, schema)?
            } else if ptr.is_empty() {
                root.clone()
            } else {
                at_pointer(root, &ptr)?
            };
            let built = jsonschema::draft202012::options()
                .should_validate_formats(true)
                .build(&document);
            built.ok()
        });
        validator.as_ref().map(|v| v.is_valid(value))
    }

    fn resolve(&self, side: Side, node: &Node<'a>) -> Option<Node<'a>> {
        let reference = node.get("$ref")?.as_str()?;
        let pointer = unescape_uri(reference.strip_prefix('#')?)?;
        let root = self.root(side);
        let target = if pointer.is_empty() {
            root
        } else {
            root.pointer(&pointer)?
        };
        Some(Node {
            schema: target,
            ptr: pointer,
            synthetic: false,
        })
    }

    /// Whether every value of `p` (at value depth `level`) is valid for `c`.
    fn check(&mut self, p: Node<'a>, c: Node<'a>, depth: usize, level: usize) -> Outcome {
        self.steps += 1;
        if self.steps > MAX_STEPS || depth > MAX_DEPTH {
            return unknown(&p, &c, "the schemas are too large or too deep to compare");
        }
        // Boolean schemas and the trivial consumer.
        if p.schema == &Value::Bool(false) || is_true(c.schema) {
            return Outcome::Ok;
        }
        if c.schema == &Value::Bool(false) {
            return match self.example(&p, depth) {
                Some(v) => fail(&p, &c, v, "the consumer accepts nothing here"),
                None => unknown(&p, &c, "the consumer accepts nothing here"),
            };
        }
        if p.schema == &Value::Bool(true) {
            return self.check(built(self.arena, &p, Map::new()), c, depth + 1, level);
        }
        let (Some(p_map), Some(c_map)) = (p.map(), c.map()) else {
            return unknown(&p, &c, "a schema is neither an object nor a boolean");
        };
        for (side, map) in [("producer", p_map), ("consumer", c_map)] {
            if let Some(k) = map.keys().find(|k| OPAQUE.contains(&k.as_str())) {
                return unknown(&p, &c, format!("the {side}'s `{k}` is not reasoned about"));
            }
        }

        // References: a pair already being compared at a shallower value is assumed included
        // (guarded recursion); at the same value it would be circular, and is not assumed.
        if p_map.contains_key("$ref") || c_map.contains_key("$ref") {
            let pair = (p.identity(), c.identity());
            match self.assumed.get(&pair) {
                Some(at) if *at < level => return Outcome::Ok,
                Some(_) => {
                    return unknown(
                        &p,
                        &c,
                        "a reference refers to itself without consuming any value",
                    );
                }
                None => {}
            }
            self.assumed.insert(pair.clone(), level);
            let outcome = self.check_refs(p, c, p_map, c_map, depth, level);
            self.assumed.remove(&pair);
            return outcome;
        }
        // A consumer conjunction: every part must hold.
        if let Some(Value::Array(all)) = c_map.get("allOf") {
            let rest = without(c_map, &["allOf"]);
            let mut parts: Vec<Node<'a>> = all
                .iter()
                .enumerate()
                .map(|(i, s)| c.child(s, &["allOf", &i.to_string()]))
                .collect();
            parts.push(built(self.arena, &c, rest));
            for part in parts {
                match self.check(p.clone(), part, depth + 1, level) {
                    Outcome::Ok => {}
                    other => return other,
                }
            }
            return Outcome::Ok;
        }
        // A producer conjunction is included if any of its parts is.
        if let Some(Value::Array(all)) = p_map.get("allOf") {
            let rest = built(self.arena, &p, without(p_map, &["allOf"]));
            let mut first_unknown = None;
            for part in std::iter::once(rest).chain(
                all.iter()
                    .enumerate()
                    .map(|(i, s)| p.child(s, &["allOf", &i.to_string()])),
            ) {
                match self.check(part, c.clone(), depth + 1, level) {
                    Outcome::Ok => return Outcome::Ok,
                    Outcome::Unknown(u) => {
                        first_unknown.get_or_insert(u);
                    }
                    // A part's witness may break another part: not reported.
                    Outcome::Fail(_) => {}
                }
            }
            return Outcome::Unknown(first_unknown.unwrap_or_else(|| Undecided {
                producer_pointer: p.ptr.clone(),
                consumer_pointer: c.ptr.clone(),
                reason: "no part of the producer's `allOf` is included on its own".into(),
            }));
        }
        // Producer alternatives: each must be included.
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = p_map.get(key) {
                let rest = without(p_map, &[key]);
                for (i, branch) in branches.iter().enumerate() {
                    let branch = p.child(branch, &[key, &i.to_string()]);
                    let narrowed = if constraints(&rest).next().is_none() {
                        branch
                    } else {
                        built(self.arena, &branch, merge(&rest, branch.schema))
                    };
                    match self.check(narrowed, c.clone(), depth + 1, level) {
                        Outcome::Ok => {}
                        Outcome::Fail(mut local) => {
                            local.reason =
                                format!("in the producer's `{key}` branch {i}: {}", local.reason);
                            return Outcome::Fail(local);
                        }
                        other => return other,
                    }
                }
                return Outcome::Ok;
            }
        }
        // A finite producer: each of its values is checked by the consumer's validator.
        if let Some(values) = finite(p_map) {
            for value in values {
                let quick = self.quick_member(c.schema, &value, 0);
                match quick.or_else(|| self.valid(Side::Consumer, &c, &value)) {
                    Some(true) => {}
                    Some(false) => {
                        return fail(&p, &c, value, "the consumer does not accept this value");
                    }
                    None => return unknown(&p, &c, "a consumer validator could not be built"),
                }
            }
            return Outcome::Ok;
        }
        // Consumer alternatives.
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = c_map.get(key) {
                return self.check_alternatives(p, c, key, branches, depth, level);
            }
        }
        self.check_simple(p, c, p_map, c_map, depth, level)
    }

    /// Whether the consumer schema accepts `value`, decided without building a validator for
    /// the simple schemas most finite values meet (a type, an enum, bounds, lengths, `$ref`,
    /// `anyOf`); `None` for anything else, which the validator then decides.
    fn quick_member(&self, schema: &'a Value, value: &Value, depth: usize) -> Option<bool> {
        if depth > 32 {
            return None;
        }
        let map = match schema {
            Value::Bool(b) => return Some(*b),
            Value::Object(map) => map,
            _ => return None,
        };
        let mut verdict = true;
        for (key, arg) in constraints(map) {
            let ok = match key.as_str() {
                "$ref" => {
                    let target = self.resolve(Side::Consumer, &Node::root(schema))?;
                    self.quick_member(target.schema, value, depth + 1)?
                }
                "anyOf" => {
                    let mut any = false;
                    for branch in arg.as_array()? {
                        if self.quick_member(branch, value, depth + 1)? {
                            any = true;
                            break;
                        }
                    }
                    any
                }
                "allOf" => {
                    let mut all = true;
                    for branch in arg.as_array()? {
                        all &= self.quick_member(branch, value, depth + 1)?;
                    }
                    all
                }
                "type" => {
                    let mut allowed = Map::new();
                    allowed.insert("type".into(), arg.clone());
                    Types::of_schema(&allowed)? & Types::of_value(value) != 0
                }
                "enum" => arg.as_array()?.iter().any(|v| same_instance(v, value)),
                "const" => same_instance(arg, value),
                "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                    let (Some(bound), Some(x)) = (arg.as_f64(), value.as_f64()) else {
                        if value.is_number() {
                            return None;
                        }
                        continue;
                    };
                    if !exact(map) || x.abs() > 9.0e15 {
                        return None;
                    }
                    match key.as_str() {
                        "minimum" => x >= bound,
                        "maximum" => x <= bound,
                        "exclusiveMinimum" => x > bound,
                        _ => x < bound,
                    }
                }
                "minLength" | "maxLength" => match value.as_str() {
                    Some(text) => {
                        let n = text.chars().count() as u64;
                        let bound = arg.as_u64()?;
                        if key == "minLength" {
                            n >= bound
                        } else {
                            n <= bound
                        }
                    }
                    None => true,
                },
                // Keywords for other types than the value's apply vacuously.
                "minItems" | "maxItems" | "uniqueItems" | "items" | "prefixItems"
                    if !value.is_array() =>
                {
                    true
                }
                "properties" | "required" | "additionalProperties" | "minProperties"
                    if !value.is_object() =>
                {
                    true
                }
                "pattern" | "format" if !value.is_string() => true,
                "multipleOf" if !value.is_number() => true,
                _ => return None,
            };
            verdict &= ok;
        }
        Some(verdict)
    }

    fn check_refs(
        &mut self,
        p: Node<'a>,
        c: Node<'a>,
        p_map: &'a Map<String, Value>,
        c_map: &'a Map<String, Value>,
        depth: usize,
        level: usize,
    ) -> Outcome {
        if p_map.contains_key("$ref") {
            // Keywords beside the `$ref` only narrow the producer: the target alone is wider.
            let Some(target) = self.resolve(Side::Producer, &p) else {
                return unknown(
                    &p,
                    &c,
                    "a producer `$ref` does not resolve within its document",
                );
            };
            return self.check(target, c, depth + 1, level);
        }
        let Some(target) = self.resolve(Side::Consumer, &c) else {
            return unknown(
                &p,
                &c,
                "a consumer `$ref` does not resolve within its document",
            );
        };
        // Keywords beside the `$ref` must hold too.
        let rest = without(c_map, &["$ref"]);
        if constraints(&rest).next().is_some() {
            match self.check(p.clone(), built(self.arena, &c, rest), depth + 1, level) {
                Outcome::Ok => {}
                other => return other,
            }
        }
        self.check(p, target, depth + 1, level)
    }

    fn check_alternatives(
        &mut self,
        p: Node<'a>,
        c: Node<'a>,
        key: &str,
        branches: &'a [Value],
        depth: usize,
        level: usize,
    ) -> Outcome {
        let Some(c_map) = c.map() else {
            return unknown(&p, &c, "malformed consumer");
        };
        let rest = without(c_map, &[key]);
        if constraints(&rest).next().is_some() {
            // `{"type": ..., "anyOf": [...]}`: both must hold.
            match self.check(p.clone(), built(self.arena, &c, rest), depth + 1, level) {
                Outcome::Ok => {}
                other => return other,
            }
        }
        // For `oneOf` the value must match exactly one branch: the branches must be disjoint
        // (by type, or by a constant property) for "one includes it" to be enough.
        if key == "oneOf" && !pairwise_disjoint(branches) {
            return unknown(&p, &c, "the consumer's `oneOf` branches may overlap");
        }
        let mut first_fail = None;
        let mut first_unknown = None;
        for (i, branch) in branches.iter().enumerate() {
            let branch = c.child(branch, &[key, &i.to_string()]);
            match self.check(p.clone(), branch, depth + 1, level) {
                Outcome::Ok => return Outcome::Ok,
                Outcome::Fail(local) => {
                    first_fail.get_or_insert(local);
                }
                Outcome::Unknown(u) => {
                    first_unknown.get_or_insert(u);
                }
            }
        }
        // Several branches may cover the producer together: split it by type, which schemars'
        // alternatives (`Option<T>`: T or null) almost always separate.
        if let Some(p_map) = p.map() {
            let types = Types::of_schema(p_map).unwrap_or(ALL);
            if types.count_ones() > 1 {
                let mut all_ok = true;
                for t in split(types) {
                    let narrowed = built(self.arena, &p, with_type(p_map, t));
                    match self.check(narrowed, c.clone(), depth + 1, level) {
                        Outcome::Ok => {}
                        Outcome::Fail(local) => return Outcome::Fail(local),
                        Outcome::Unknown(u) => {
                            first_unknown.get_or_insert(u);
                            all_ok = false;
                        }
                    }
                }
                if all_ok {
                    return Outcome::Ok;
                }
            }
        }
        if let Some(mut local) = first_fail {
            // Reported only if the final check confirms the consumer refuses it as a whole.
            local.reason = format!(
                "no branch of the consumer's `{key}` accepts it: {}",
                local.reason
            );
            return Outcome::Fail(local);
        }
        match first_unknown {
            Some(u) => Outcome::Unknown(u),
            None => unknown(&p, &c, "the consumer's alternatives are empty"),
        }
    }

    fn check_simple(
        &mut self,
        p: Node<'a>,
        c: Node<'a>,
        p_map: &'a Map<String, Value>,
        c_map: &'a Map<String, Value>,
        depth: usize,
        level: usize,
    ) -> Outcome {
        if let Some((k, _)) = constraints(c_map).find(|(k, _)| !UNDERSTOOD.contains(&k.as_str())) {
            return unknown(
                &p,
                &c,
                format!("the consumer's `{k}` is not reasoned about"),
            );
        }
        if let Some(problem) = malformed(c_map) {
            return unknown(&p, &c, format!("the consumer's {problem}"));
        }
        let (Some(p_types), Some(c_types)) = (Types::of_schema(p_map), Types::of_schema(c_map))
        else {
            return unknown(&p, &c, "a malformed `type`");
        };
        if let Some(Value::Array(values)) = c_map.get("enum") {
            return self.against_finite(&p, &c, values);
        }
        if let Some(value) = c_map.get("const") {
            return self.against_finite(&p, &c, std::slice::from_ref(value));
        }
        let mut undecided = None;
        for t in split(p_types) {
            // A numeric type whose range holds no number of it: the producer allows none.
            if matches!(t, INTEGER | FRACTION) && exact(p_map) && Numbers::of(p_map, t).is_empty() {
                continue;
            }
            if c_types & t == 0 {
                let reason = format!(
                    "the producer allows a {}, the consumer does not",
                    type_name(t)
                );
                return match self.example_typed(&p, Some(t), depth) {
                    Some(v) => fail(&p, &c, v, reason),
                    // The producer may allow no value of that type at all (empty bounds).
                    None => unknown(&p, &c, reason),
                };
            }
            let outcome = match t {
                INTEGER | FRACTION => self.numbers(&p, &c, p_map, c_map, t),
                STRING => self.strings(&p, &c, p_map, c_map),
                ARRAY => self.arrays(&p, &c, p_map, c_map, depth, level),
                OBJECT => self.objects(&p, &c, p_map, c_map, depth, level),
                _ => Outcome::Ok,
            };
            match outcome {
                Outcome::Ok => {}
                // A type left undecided does not hide a later type's witness.
                Outcome::Unknown(_) => {
                    undecided.get_or_insert(outcome);
                }
                Outcome::Fail(_) => return outcome,
            }
        }
        undecided.unwrap_or(Outcome::Ok)
    }

    /// An infinite producer against a finite consumer: find a producer value it lacks.
    fn against_finite(&mut self, p: &Node<'a>, c: &Node<'a>, values: &[Value]) -> Outcome {
        let Some(p_map) = p.map() else {
            return unknown(p, c, "malformed producer");
        };
        for candidate in candidates(p_map) {
            if !values.contains(&candidate)
                && self.valid(Side::Producer, p, &candidate) == Some(true)
            {
                return fail(p, c, candidate, "the consumer allows only some values");
            }
        }
        unknown(
            p,
            c,
            "the consumer allows only some values, and the producer does not list its own",
        )
    }

    fn numbers(
        &mut self,
        p: &Node<'a>,
        c: &Node<'a>,
        p_map: &Map<String, Value>,
        c_map: &Map<String, Value>,
        t: u8,
    ) -> Outcome {
        if !exact(p_map) || !exact(c_map) {
            return unknown(p, c, "numeric bounds beyond 2^53 are not reasoned about");
        }
        let integer = t == INTEGER;
        // (A type whose range holds none of it never gets here: the type loop skips it.)
        let producer = Numbers::of(p_map, t);
        let ci = Interval::of(c_map, integer);
        let cm = Multiple::new(number(c_map.get("multipleOf")));
        if cm.is_none() && c_map.contains_key("multipleOf") {
            return unknown(p, c, "the consumer's `multipleOf` cannot be built");
        }
        // Refused by the consumer: outside its range, or not one of its multiples.
        let refused = |x: f64| !ci.holds(x) || cm.as_ref().is_some_and(|m| !m.divides(x));
        let reason = |x: f64| {
            if ci.holds(x) {
                "the consumer's `multipleOf` is not implied by the producer's"
            } else {
                "the producer allows numbers outside the consumer's range"
            }
        };
        // Past 2^53 the validator reads a number through `f64` before it divides it by a
        // fractional `multipleOf`, rounding it: there, which numbers it calls
        // multiples is not what arithmetic says (a multiple of 6 near 2^64 is refused as a
        // multiple of 1.5), so a proof by arithmetic would not hold against it. Only values the
        // validators themselves judge (a few numbers, or a witness) decide such a pair. (A
        // fraction that divides 1, like 0.25, divides every integer, and past 2^53 every number
        // is an integer, rounded or not: no hazard.)
        let rounds = |m: &Multiple| m.of.fract() != 0.0 && !m.divides(1.0);
        // (A consumer whose `multipleOf` divides 1 takes every number past 2^53, whatever the
        // producer's rounding.)
        // (Nor is there a hazard when both sides ask for the same `multipleOf`: the validator
        // then answers both the same way, rounded or not.)
        let same = matches!((&cm, &producer.multiple), (Some(c), Some(p)) if c.of == p.of);
        let rounding = !same
            && cm.as_ref().is_some_and(|m| !m.divides(1.0))
            && (cm.as_ref().is_some_and(rounds) || producer.multiple.as_ref().is_some_and(rounds))
            // Finite ends lie within 2^53 (`exact` let nothing else through, `multipleOf`s
            // included): only an open end reaches past it.
            && !(producer.range.lo.is_finite() && producer.range.hi.is_finite());
        if !rounding
            && producer.range.within(&ci)
            && cm.as_ref().is_none_or(|m| producer.implies_multiple(m))
        {
            return Outcome::Ok;
        }
        // A producer of few numbers: each is checked, and the answer is exact.
        if let Some(all) = producer.enumerate() {
            for x in all {
                let v = number_value(x, integer);
                match (
                    self.valid(Side::Producer, p, &v),
                    self.valid(Side::Consumer, c, &v),
                ) {
                    (Some(false), _) | (Some(true), Some(true)) => {}
                    (Some(true), Some(false)) => return fail(p, c, v, reason(x)),
                    _ => return unknown(p, c, "a numeric schema the validator cannot build"),
                }
            }
            return Outcome::Ok;
        }
        // Otherwise the producer's numbers nearest the places where the answer can change:
        // its own ends, the consumer's ends (both sides), and zero. A producer with infinitely
        // many numbers that the shortcut above did not prove has a refused one there: past a
        // consumer's end it reaches, or among two neighbours (not both multiples of a
        // `multipleOf` that does not divide the producer's step).
        let anchors = [producer.range.lo, producer.range.hi, ci.lo, ci.hi, 0.0];
        for x in producer.near(&anchors) {
            if !refused(x) {
                continue;
            }
            let v = number_value(x, integer);
            if self.valid(Side::Producer, p, &v) == Some(true)
                && self.valid(Side::Consumer, c, &v) == Some(false)
            {
                return fail(p, c, v, reason(x));
            }
        }
        if rounding {
            return unknown(
                p,
                c,
                "past 2^53 the validator rounds a number before it divides it by a fractional `multipleOf`, so the producer's multiples are not proven to be the consumer's",
            );
        }
        unknown(
            p,
            c,
            "numeric constraints differ and no value showing it was found",
        )
    }

    fn strings(
        &mut self,
        p: &Node<'a>,
        c: &Node<'a>,
        p_map: &Map<String, Value>,
        c_map: &Map<String, Value>,
    ) -> Outcome {
        let len = |map: &Map<String, Value>, k: &str| map.get(k).and_then(Value::as_u64);
        let (p_min, p_max) = (
            len(p_map, "minLength").unwrap_or(0),
            len(p_map, "maxLength"),
        );
        let (c_min, c_max) = (
            len(c_map, "minLength").unwrap_or(0),
            len(c_map, "maxLength"),
        );
        let lengths_ok = p_min >= c_min
            && match (p_max, c_max) {
                (_, None) => true,
                (Some(p), Some(c)) => p <= c,
                (None, Some(_)) => false,
            };
        let same = |k: &str| match (p_map.get(k), c_map.get(k)) {
            (_, None) => true,
            (Some(a), Some(b)) => a == b,
            (None, Some(_)) => false,
        };
        let (pattern_ok, format_ok) = (same("pattern"), same("format"));
        if lengths_ok && pattern_ok && format_ok {
            return Outcome::Ok;
        }
        let mut tries: Vec<String> = Vec::new();
        for n in [
            Some(p_min),
            c_min.checked_sub(1),
            c_max.map(|m| m + 1),
            p_max,
        ] {
            if let Some(n) = n.filter(|n| *n <= 4096) {
                tries.push("a".repeat(n as usize));
            }
        }
        for s in [
            "",
            "a",
            "A",
            "0",
            " ",
            "-",
            "é",
            "a b",
            "example",
            "x@y",
            "1970-01-01",
        ] {
            tries.push(s.to_owned());
        }
        for s in tries {
            let v = Value::String(s);
            if self.valid(Side::Producer, p, &v) == Some(true)
                && self.valid(Side::Consumer, c, &v) == Some(false)
            {
                let why = if !lengths_ok {
                    "the producer allows strings of lengths the consumer refuses"
                } else if !pattern_ok {
                    "the consumer's `pattern` is not the producer's"
                } else {
                    "the consumer's `format` is not the producer's"
                };
                return fail(p, c, v, why);
            }
        }
        let why = if !pattern_ok {
            "the consumer has a `pattern` the producer does not share"
        } else if !format_ok {
            "the consumer has a `format` the producer does not share"
        } else {
            "string lengths differ and no value showing it was found"
        };
        unknown(p, c, why)
    }

    fn arrays(
        &mut self,
        p: &Node<'a>,
        c: &Node<'a>,
        p_map: &'a Map<String, Value>,
        c_map: &'a Map<String, Value>,
        depth: usize,
        level: usize,
    ) -> Outcome {
        let count = |map: &Map<String, Value>, k: &str| map.get(k).and_then(Value::as_u64);
        let (p_min, p_max) = (
            count(p_map, "minItems").unwrap_or(0),
            count(p_map, "maxItems"),
        );
        let (c_min, c_max) = (
            count(c_map, "minItems").unwrap_or(0),
            count(c_map, "maxItems"),
        );
        let p_prefix: &'a [Value] = p_map
            .get("prefixItems")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice);
        let c_prefix: &'a [Value] = c_map
            .get("prefixItems")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice);
        // The producer's longest array, when bounded.
        let p_len_max = match (p_max, p_map.get("items")) {
            (Some(m), Some(Value::Bool(false))) => Some(m.min(p_prefix.len() as u64)),
            (Some(m), _) => Some(m),
            (None, Some(Value::Bool(false))) => Some(p_prefix.len() as u64),
            _ => None,
        };
        let counts_ok =
            p_min >= c_min && c_max.is_none_or(|cm| p_len_max.is_some_and(|pm| pm <= cm));
        if !counts_ok {
            let mut lengths = vec![p_min];
            lengths.extend(c_min.checked_sub(1));
            lengths.extend(c_max.map(|m| m + 1));
            for n in lengths {
                if n > 64 || n < p_min || p_len_max.is_some_and(|pm| n > pm) {
                    continue;
                }
                if let Some(v) = self.array_example(p, p_map, p_prefix, n as usize, None, depth)
                    && self.valid(Side::Consumer, c, &v) == Some(false)
                {
                    return fail(
                        p,
                        c,
                        v,
                        "the producer allows more or fewer items than the consumer",
                    );
                }
            }
            return unknown(p, c, "item counts differ and no value showing it was found");
        }
        // Positions: each producer item that can exist must fit the consumer's schema there.
        let positions = p_prefix.len().max(c_prefix.len());
        for i in 0..=positions {
            if p_len_max.is_some_and(|m| (i as u64) >= m) {
                break;
            }
            let p_i = match p_prefix.get(i) {
                Some(s) => p.child(s, &["prefixItems", &i.to_string()]),
                None => p.child(p_map.get("items").unwrap_or(&TRUE), &["items"]),
            };
            let c_i = match c_prefix.get(i) {
                Some(s) => c.child(s, &["prefixItems", &i.to_string()]),
                None => c.child(c_map.get("items").unwrap_or(&TRUE), &["items"]),
            };
            match self.check(p_i, c_i, depth + 1, level + 1) {
                Outcome::Ok => {}
                Outcome::Fail(mut local) => {
                    let len = (i + 1).max(p_min as usize);
                    let at = Some((i, local.value.clone()));
                    return match self.array_example(p, p_map, p_prefix, len, at, depth) {
                        Some(v) => {
                            local.value = v;
                            Outcome::Fail(local)
                        }
                        None => unknown(
                            p,
                            c,
                            "an item differs, but no array around it could be built",
                        ),
                    };
                }
                other => return other,
            }
        }
        if c_map.get("uniqueItems") == Some(&Value::Bool(true))
            && p_map.get("uniqueItems") != Some(&Value::Bool(true))
            && p_len_max.is_none_or(|m| m >= 2)
        {
            let len = 2.max(p_min as usize);
            if let Some(Value::Array(items)) =
                self.array_example(p, p_map, p_prefix, len, None, depth)
                && let Some(first) = items.first()
            {
                let dup = Value::Array(vec![first.clone(); len]);
                return fail(
                    p,
                    c,
                    dup,
                    "the consumer requires unique items, the producer does not",
                );
            }
            return unknown(
                p,
                c,
                "the consumer requires unique items, the producer does not",
            );
        }
        Outcome::Ok
    }

    fn objects(
        &mut self,
        p: &Node<'a>,
        c: &Node<'a>,
        p_map: &'a Map<String, Value>,
        c_map: &'a Map<String, Value>,
        depth: usize,
        level: usize,
    ) -> Outcome {
        let empty = &*EMPTY_MAP;
        let p_props = p_map
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(empty);
        let c_props = c_map
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(empty);
        let p_required = required(p_map);
        let c_required = required(c_map);
        let p_additional = p_map.get("additionalProperties").unwrap_or(&TRUE);
        let c_additional = c_map.get("additionalProperties").unwrap_or(&TRUE);
        for r in &c_required {
            if !p_required.contains(r) {
                let reason = format!("the consumer requires `{r}`, the producer may leave it out");
                return match self.object_example(p, p_map, None, depth) {
                    Some(v) if v.get(*r).is_none() => fail(p, c, v, reason),
                    _ => unknown(p, c, reason),
                };
            }
        }
        if let Some(min) = c_map.get("minProperties").and_then(Value::as_u64) {
            let distinct: HashSet<&&str> = p_required.iter().collect();
            if (distinct.len() as u64) < min {
                return unknown(
                    p,
                    c,
                    "the consumer's `minProperties` is more than the producer requires",
                );
            }
        }
        // Named properties, then any other name.
        let mut keys: Vec<&'a str> = p_props.keys().map(String::as_str).collect();
        keys.extend(
            c_props
                .keys()
                .map(String::as_str)
                .filter(|k| !p_props.contains_key(*k)),
        );
        let mut other = String::from("extra");
        while p_props.contains_key(&other) || c_props.contains_key(&other) {
            other.push('_');
        }
        for key in keys.into_iter().map(Some).chain([None]) {
            let (p_k, c_k) = match key {
                Some(key) => (
                    match p_props.get(key) {
                        Some(s) => p.child(s, &["properties", key]),
                        None => p.child(p_additional, &["additionalProperties"]),
                    },
                    match c_props.get(key) {
                        Some(s) => c.child(s, &["properties", key]),
                        None => c.child(c_additional, &["additionalProperties"]),
                    },
                ),
                None => (
                    p.child(p_additional, &["additionalProperties"]),
                    c.child(c_additional, &["additionalProperties"]),
                ),
            };
            if p_k.schema == &Value::Bool(false) {
                continue;
            }
            match self.check(p_k, c_k, depth + 1, level + 1) {
                Outcome::Ok => {}
                Outcome::Fail(mut local) => {
                    let name = key.unwrap_or(&other);
                    let set = Some((name, local.value.clone()));
                    return match self.object_example(p, p_map, set, depth) {
                        Some(v) => {
                            local.value = v;
                            Outcome::Fail(local)
                        }
                        None => unknown(
                            p,
                            c,
                            format!("`{name}` differs, but no object around it could be built"),
                        ),
                    };
                }
                other => return other,
            }
        }
        Outcome::Ok
    }

    // -----------------------------------------------------------------------------------------
    // Examples: small producer values to build witnesses around. They are not trusted: a
    // witness is reported only once both validators have checked the whole document.

    fn example(&mut self, node: &Node<'a>, depth: usize) -> Option<Value> {
        self.example_typed(node, None, depth)
    }

    /// An example of `node`, of type `only` when given.
    fn example_typed(&mut self, node: &Node<'a>, only: Option<u8>, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return None;
        }
        let map = match node.schema {
            Value::Bool(true) => return Some(Value::Null),
            Value::Object(map) => map,
            _ => return None,
        };
        let fits = |v: &&Value| only.is_none_or(|t| Types::of_value(v) & t != 0);
        if let Some(v) = map.get("const") {
            return Some(v).filter(fits).cloned();
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            return values.iter().find(fits).cloned();
        }
        if map.contains_key("$ref") {
            let target = self.resolve(Side::Producer, node)?;
            return self.example_typed(&target, only, depth + 1);
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(branches)) = map.get(key) {
                for (i, b) in branches.iter().enumerate() {
                    let child = node.child(b, &[key, &i.to_string()]);
                    if let Some(v) = self.example_typed(&child, only, depth + 1) {
                        return Some(v);
                    }
                }
                return None;
            }
        }
        let types = Types::of_schema(map)? & only.unwrap_or(ALL);
        let t = split(types).into_iter().next()?;
        Some(match t {
            NULL => Value::Null,
            BOOLEAN => Value::Bool(false),
            INTEGER | FRACTION => number_value(Numbers::of(map, t).example()?, t == INTEGER),
            STRING => {
                let n = map.get("minLength").and_then(Value::as_u64).unwrap_or(0);
                match map.get("format").and_then(Value::as_str) {
                    Some("date-time") => json!("1970-01-01T00:00:00Z"),
                    Some("date") => json!("1970-01-01"),
                    Some("time") => json!("00:00:00Z"),
                    Some("email") => json!("a@example.com"),
                    Some("uri" | "url") => json!("https://example.com/"),
                    Some("uuid") => json!("00000000-0000-0000-0000-000000000000"),
                    Some("ipv4") => json!("127.0.0.1"),
                    Some("ipv6") => json!("::1"),
                    Some("hostname") => json!("example.com"),
                    _ if n <= 4096 => Value::String("a".repeat(n as usize)),
                    _ => return None,
                }
            }
            ARRAY => {
                let prefix = map.get("prefixItems").and_then(Value::as_array);
                let prefix = prefix.map_or(&[][..], Vec::as_slice);
                let n = map.get("minItems").and_then(Value::as_u64).unwrap_or(0);
                return self.array_example(
                    node,
                    map,
                    prefix,
                    usize::try_from(n).ok()?,
                    None,
                    depth,
                );
            }
            _ => return self.object_example(node, map, None, depth),
        })
    }

    /// An array of `len` producer items (at least), with `at` placed at its index.
    fn array_example(
        &mut self,
        node: &Node<'a>,
        map: &'a Map<String, Value>,
        prefix: &'a [Value],
        len: usize,
        at: Option<(usize, Value)>,
        depth: usize,
    ) -> Option<Value> {
        if len > 64 {
            return None;
        }
        let mut items = Vec::with_capacity(len);
        let _ = (node.ptr.len(), map.len());
        for i in 0..len {
            if let Some((j, v)) = &at
                && *j == i
            {
                items.push(v.clone());
                continue;
            }
            let schema = match prefix.get(i) {
                Some(s) => node.child(s, &["prefixItems", &i.to_string()]),
                None => node.child(map.get("items").unwrap_or(&TRUE), &["items"]),
            };
            items.push(self.example(&schema, depth + 1)?);
        }
        Some(Value::Array(items))
    }

    /// An object with the producer's required properties, and `set` placed.
    fn object_example(
        &mut self,
        node: &Node<'a>,
        map: &'a Map<String, Value>,
        set: Option<(&str, Value)>,
        depth: usize,
    ) -> Option<Value> {
        let empty: &'a Map<String, Value> = &EMPTY_MAP;
        let props = map
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(empty);
        let additional = map.get("additionalProperties").unwrap_or(&TRUE);
        let mut out = Map::new();
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for r in required {
            if set.as_ref().is_some_and(|(k, _)| *k == r) || out.contains_key(r) {
                continue;
            }
            let schema = match props.get(r) {
                Some(s) => node.child(s, &["properties", r]),
                None => node.child(additional, &["additionalProperties"]),
            };
            out.insert(r.to_owned(), self.example(&schema, depth + 1)?);
        }
        if let Some((k, v)) = set {
            out.insert(k.to_owned(), v);
        }
        Some(Value::Object(out))
    }
}

static TRUE: Value = Value::Bool(true);
static EMPTY_MAP: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

fn required(map: &Map<String, Value>) -> Vec<&str> {
    map.get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// A consumer keyword whose value is not what Draft 2020-12 expects: a validator would treat
/// it in its own way, so nothing is concluded.
fn malformed(map: &Map<String, Value>) -> Option<String> {
    let numbers = [
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    ];
    let counts = [
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
    ];
    for k in numbers {
        if map.get(k).is_some_and(|v| !v.is_number()) {
            return Some(format!("`{k}` is not a number"));
        }
    }
    if map
        .get("multipleOf")
        .and_then(Value::as_f64)
        .is_some_and(|m| m <= 0.0)
    {
        return Some("`multipleOf` is not positive".into());
    }
    for k in counts {
        if map.get(k).is_some_and(|v| v.as_u64().is_none()) {
            return Some(format!("`{k}` is not a non-negative integer"));
        }
    }
    let schema = |v: &Value| v.is_object() || v.is_boolean();
    let checks: [(&str, bool); 8] = [
        (
            "required",
            map.get("required")
                .is_none_or(|r| r.as_array().is_some_and(|a| a.iter().all(Value::is_string))),
        ),
        (
            "properties",
            map.get("properties")
                .is_none_or(|p| p.as_object().is_some_and(|o| o.values().all(schema))),
        ),
        (
            "additionalProperties",
            map.get("additionalProperties").is_none_or(schema),
        ),
        ("items", map.get("items").is_none_or(schema)),
        (
            "prefixItems",
            map.get("prefixItems")
                .is_none_or(|p| p.as_array().is_some_and(|a| a.iter().all(schema))),
        ),
        ("enum", map.get("enum").is_none_or(Value::is_array)),
        (
            "uniqueItems",
            map.get("uniqueItems").is_none_or(Value::is_boolean),
        ),
        ("pattern", map.get("pattern").is_none_or(Value::is_string)),
    ];
    checks
        .iter()
        .find(|(_, ok)| !ok)
        .map(|(k, _)| format!("`{k}` is malformed"))
}

/// A node for a schema built here (a narrowed or merged copy), kept in the comparison's arena.
fn built<'a>(
    arena: &'a typed_arena::Arena<Value>,
    at: &Node<'a>,
    map: Map<String, Value>,
) -> Node<'a> {
    let schema: &'a Value = arena.alloc(Value::Object(map));
    Node {
        schema,
        ptr: at.ptr.clone(),
        synthetic: true,
    }
}

/// Points `document`'s references to `root`'s root (`#`, `#/properties/...`) at a copy of that
/// root under `$defs`, for a document assembled from parts of `root` (a mapped skill input).
#[doc(hidden)]
pub fn keep_root_refs(root: &Value, document: &mut Value) {
    let name = fresh_root_name(root);
    if !crate::refs::rewrite_root_refs_to(document, &name) {
        return;
    }
    let Some(defs) = defs_with_root(root, &name) else {
        return;
    };
    if let Some(map) = document.as_object_mut() {
        map.insert("$defs".into(), defs);
    }
}

/// A `$defs` name for a copy of `root` that `root` does not use.
fn fresh_root_name(root: &Value) -> String {
    let defs = root.get("$defs").and_then(Value::as_object);
    let mut name = crate::refs::ROOT_DEF.to_owned();
    while defs.is_some_and(|d| d.contains_key(&name)) {
        name.push('_');
    }
    name
}

/// `root`'s `$defs`, with a copy of `root` itself under `name`, every reference to the root
/// re-pointed at that copy.
fn defs_with_root(root: &Value, name: &str) -> Option<Value> {
    let mut defs = root.get("$defs").cloned().unwrap_or_else(|| json!({}));
    let mut copy = root.clone();
    if let Value::Object(copy) = &mut copy {
        copy.remove("$defs");
    }
    crate::refs::rewrite_root_refs_to(&mut defs, name);
    crate::refs::rewrite_root_refs_to(&mut copy, name);
    defs.as_object_mut()?.insert(name.to_owned(), copy);
    Some(defs)
}

/// A document for a schema built here, in the context of its side's root (whose `$defs` and
/// root references it may use).
fn with_root(root: &Value, schema: &Value) -> Option<Value> {
    let name = fresh_root_name(root);
    let defs = defs_with_root(root, &name)?;
    let mut document = match schema {
        Value::Bool(_) => return Some(schema.clone()),
        Value::Object(map) => map.clone(),
        _ => return None,
    };
    document.remove("$defs");
    let mut document = Value::Object(document);
    crate::refs::rewrite_root_refs_to(&mut document, &name);
    let map = document.as_object_mut()?;
    map.insert("$defs".into(), defs);
    map.insert(
        "$schema".into(),
        json!("https://json-schema.org/draft/2020-12/schema"),
    );
    Some(document)
}

fn without(map: &Map<String, Value>, keys: &[&str]) -> Map<String, Value> {
    map.iter()
        .filter(|(k, _)| !keys.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// `rest` and `branch` as one schema (`allOf`).
fn merge(rest: &Map<String, Value>, branch: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("allOf".into(), json!([Value::Object(rest.clone()), branch]));
    out
}

fn with_type(map: &Map<String, Value>, t: u8) -> Map<String, Value> {
    let mut out = map.clone();
    let name = match t {
        NULL => "null",
        BOOLEAN => "boolean",
        INTEGER => "integer",
        FRACTION => "number",
        STRING => "string",
        ARRAY => "array",
        _ => "object",
    };
    out.insert("type".into(), json!(name));
    out
}

fn split(types: u8) -> Vec<u8> {
    [NULL, BOOLEAN, INTEGER, FRACTION, STRING, ARRAY, OBJECT]
        .into_iter()
        .filter(|t| types & t != 0)
        .collect()
}

/// The values of a finite producer (`enum`, `const`, `null` or `boolean` alone).
fn finite(map: &Map<String, Value>) -> Option<Vec<Value>> {
    if let Some(v) = map.get("const") {
        return Some(vec![v.clone()]);
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        return Some(values.clone());
    }
    match Types::of_schema(map)? {
        NULL => Some(vec![Value::Null]),
        BOOLEAN => Some(vec![json!(false), json!(true)]),
        t if t == NULL | BOOLEAN => Some(vec![Value::Null, json!(false), json!(true)]),
        _ => None,
    }
}

/// Candidate values for finding one outside a consumer's `enum`.
fn candidates(map: &Map<String, Value>) -> Vec<Value> {
    let mut out = vec![
        json!(""),
        json!("a"),
        json!("other"),
        json!("__agent_io_other__"),
        json!(0),
        json!(1),
        json!(-1),
        json!(1000),
        json!(0.5),
        json!(false),
        json!(true),
        Value::Null,
        json!([]),
        json!({}),
    ];
    if let Some(n) = map
        .get("minLength")
        .and_then(Value::as_u64)
        .filter(|n| *n <= 4096)
    {
        out.push(Value::String("z".repeat(n as usize)));
    }
    out
}

/// Whether `oneOf` branches can never both accept one value: disjoint `type` sets, or each
/// fixes a shared required property to distinct constants (an internally tagged enum).
fn pairwise_disjoint(branches: &[Value]) -> bool {
    let maps: Vec<&Map<String, Value>> = branches.iter().filter_map(Value::as_object).collect();
    if maps.len() != branches.len() {
        return false;
    }
    for (i, a) in maps.iter().enumerate() {
        for b in &maps[i + 1..] {
            if !disjoint(a, b) {
                return false;
            }
        }
    }
    true
}

/// Only a branch's own keywords are read: a `$ref` beside them adds its target's constraints
/// (Draft 2020-12 applies both), which can only make the branches further apart.
fn disjoint(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    let (Some(ta), Some(tb)) = (Types::of_schema(a), Types::of_schema(b)) else {
        return false;
    };
    if ta & tb == 0 {
        return true;
    }
    if let (Some(x), Some(y)) = (finite_only(a), finite_only(b)) {
        return x.iter().all(|v| !y.iter().any(|w| same_instance(v, w)));
    }
    // A property one side requires, fixed to constants the other side's same property (when
    // present) cannot take: no value has both.
    fixed_apart(a, b) || fixed_apart(b, a)
}

fn fixed_apart(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    let (Some(a_props), Some(b_props)) = (
        a.get("properties").and_then(Value::as_object),
        b.get("properties").and_then(Value::as_object),
    ) else {
        return false;
    };
    required(a).into_iter().any(|k| {
        let a_values = a_props
            .get(k)
            .and_then(Value::as_object)
            .and_then(finite_only);
        let b_values = b_props
            .get(k)
            .and_then(Value::as_object)
            .and_then(finite_only);
        match (a_values, b_values) {
            (Some(x), Some(y)) => x.iter().all(|v| !y.iter().any(|w| same_instance(v, w))),
            _ => false,
        }
    })
}

/// JSON Schema's equality: numbers by value (`1` is `1.0`), the rest structurally.
fn same_instance(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_instance(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_instance(v, w)))
        }
        _ => a == b,
    }
}

fn finite_only(map: &Map<String, Value>) -> Option<Vec<Value>> {
    if let Some(v) = map.get("const") {
        return Some(vec![v.clone()]);
    }
    map.get("enum").and_then(Value::as_array).cloned()
}

/// `#/a/b` in a `$ref` is a URI fragment: percent-decoded, then a JSON pointer.
fn unescape_uri(fragment: &str) -> Option<String> {
    if !fragment.is_empty() && !fragment.starts_with('/') {
        return None;
    }
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A standalone document for the subschema at `ptr` (a JSON pointer) of `root`: the root is
/// kept under `$defs`, every reference to it re-pointed, and the document refers to the
/// subschema. `None` when nothing is there.
///
/// ```
/// use serde_json::json;
/// let root = json!({ "$defs": { "N": { "type": "integer" } }, "properties": { "n": { "$ref": "#/$defs/N" } } });
/// let n = agentio_core::compat::schema_at(&root, "/properties/n").unwrap();
/// assert!(agentio_core::compat::schema_compatible(&json!({ "type": "integer", "minimum": 0 }), &n).is_compatible());
/// ```
pub fn schema_at(root: &Value, ptr: &str) -> Option<Value> {
    at_pointer(root, ptr)
}

fn at_pointer(root: &Value, ptr: &str) -> Option<Value> {
    root.pointer(ptr)?;
    let name = fresh_root_name(root);
    let defs = defs_with_root(root, &name)?;
    let target = match ptr.strip_prefix("/$defs/") {
        Some(rest) => format!("#/$defs/{rest}"),
        None => format!("#/$defs/{name}{ptr}"),
    };
    // A `$ref` is a URI: `%` in a pointer token is escaped.
    let target = target.replace('%', "%25");
    Some(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": defs,
        "$ref": target,
    }))
}

#[cfg(test)]
mod tests {
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
        assert_eq!(unescape_uri("").as_deref(), Some(""));
        assert_eq!(unescape_uri("/a%20b/%41").as_deref(), Some("/a b/A"));
        assert_eq!(unescape_uri("/%C3%A9").as_deref(), Some("/é"));
        // A `%` without two characters after it stays as it is.
        assert_eq!(unescape_uri("/a%2").as_deref(), Some("/a%2"));
        assert_eq!(unescape_uri("/%").as_deref(), Some("/%"));
        assert_eq!(unescape_uri("/%zz"), None);
        assert_eq!(unescape_uri("/%ff"), None);
        assert_eq!(unescape_uri("a"), None);
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
}
