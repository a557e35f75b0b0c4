//! The comparison's vocabulary: its budget, the keywords it reasons about, a node of either
//! schema, the outcome of one step, and the small readings of a schema every concern shares.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::answer::Undecided;
use crate::types::{ARRAY, BOOLEAN, FRACTION, INTEGER, NULL, OBJECT, STRING, Types};

/// How many comparisons one check may make: a hostile or huge schema gets `unknown`.
pub(super) const MAX_STEPS: usize = 200_000;
/// How deep the comparison (and witness building) may recurse.
pub(super) const MAX_DEPTH: usize = 64;

/// Keywords this checker reasons about.
pub(super) const UNDERSTOOD: &[&str] = &[
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
pub(super) const NARROWING: &[&str] = &[
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
pub(super) const OPAQUE: &[&str] = &["patternProperties", "$dynamicRef", "$recursiveRef"];

/// Whether a keyword constrains values. Draft 2020-12 validators ignore keywords they do not
/// define (`nullable`, `x-...`, `title`): so does this checker.
pub(super) fn constrains(keyword: &str) -> bool {
    UNDERSTOOD.contains(&keyword) || NARROWING.contains(&keyword) || OPAQUE.contains(&keyword)
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Side {
    Producer,
    Consumer,
}

#[derive(Clone)]
pub(super) struct Node<'a> {
    pub(super) schema: &'a Value,
    /// Where the schema is in its document (for a node built here: the node it stands for).
    pub(super) ptr: String,
    /// Built here (a narrowed or split copy), not found in the document: validated by its
    /// own text.
    pub(super) synthetic: bool,
}

impl<'a> Node<'a> {
    pub(super) fn root(schema: &'a Value) -> Self {
        Node {
            schema,
            ptr: String::new(),
            synthetic: false,
        }
    }

    pub(super) fn child(&self, schema: &'a Value, tokens: &[&str]) -> Self {
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

    pub(super) fn map(&self) -> Option<&'a Map<String, Value>> {
        self.schema.as_object()
    }

    /// What the node is, for recursion: its pointer, and for a node built here (whose text may
    /// differ from what is at that pointer) its address too.
    pub(super) fn identity(&self) -> String {
        if self.synthetic {
            format!("{}@{:p}", self.ptr, self.schema)
        } else {
            self.ptr.clone()
        }
    }

    pub(super) fn get(&self, key: &str) -> Option<&'a Value> {
        self.schema.get(key)
    }
}

/// A witness found below the root, already wrapped into a whole producer document by the
/// levels it passed through.
pub(super) struct Local {
    pub(super) value: Value,
    pub(super) p_ptr: String,
    pub(super) c_ptr: String,
    pub(super) reason: String,
}

pub(super) enum Outcome {
    Ok,
    Fail(Local),
    Unknown(Undecided),
}

pub(super) struct Checker<'a> {
    /// Schemas built during the comparison (narrowed copies), freed with it.
    pub(super) arena: &'a typed_arena::Arena<Value>,
    pub(super) p_root: &'a Value,
    pub(super) c_root: &'a Value,
    /// Pairs of producer and consumer pointers being compared (recursion).
    pub(super) assumed: HashMap<(String, String), usize>,
    pub(super) steps: usize,
    pub(super) validators: HashMap<(Side, String), Option<jsonschema::Validator>>,
}

pub(super) fn unknown(p: &Node<'_>, c: &Node<'_>, reason: impl Into<String>) -> Outcome {
    Outcome::Unknown(Undecided {
        producer_pointer: p.ptr.clone(),
        consumer_pointer: c.ptr.clone(),
        reason: reason.into(),
    })
}

pub(super) fn fail(p: &Node<'_>, c: &Node<'_>, value: Value, reason: impl Into<String>) -> Outcome {
    Outcome::Fail(Local {
        value,
        p_ptr: p.ptr.clone(),
        c_ptr: c.ptr.clone(),
        reason: reason.into(),
    })
}

/// Constraining keywords of a schema (annotations left out).
pub(super) fn constraints(map: &Map<String, Value>) -> impl Iterator<Item = (&String, &Value)> {
    map.iter().filter(|(k, _)| constrains(k))
}

pub(super) fn is_true(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(map) => constraints(map).next().is_none(),
        _ => false,
    }
}

pub(super) fn number(value: Option<&Value>) -> Option<f64> {
    value.and_then(Value::as_f64)
}

pub(super) static TRUE: Value = Value::Bool(true);
pub(super) static EMPTY_MAP: std::sync::LazyLock<Map<String, Value>> =
    std::sync::LazyLock::new(Map::new);

pub(super) fn required(map: &Map<String, Value>) -> Vec<&str> {
    map.get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// A consumer keyword whose value is not what Draft 2020-12 expects: a validator would treat
/// it in its own way, so nothing is concluded.
pub(super) fn malformed(map: &Map<String, Value>) -> Option<String> {
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

pub(super) fn without(map: &Map<String, Value>, keys: &[&str]) -> Map<String, Value> {
    map.iter()
        .filter(|(k, _)| !keys.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// `rest` and `branch` as one schema (`allOf`).
pub(super) fn merge(rest: &Map<String, Value>, branch: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("allOf".into(), json!([Value::Object(rest.clone()), branch]));
    out
}

pub(super) fn with_type(map: &Map<String, Value>, t: u8) -> Map<String, Value> {
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

pub(super) fn split(types: u8) -> Vec<u8> {
    [NULL, BOOLEAN, INTEGER, FRACTION, STRING, ARRAY, OBJECT]
        .into_iter()
        .filter(|t| types & t != 0)
        .collect()
}

/// The values of a finite producer (`enum`, `const`, `null` or `boolean` alone).
pub(super) fn finite(map: &Map<String, Value>) -> Option<Vec<Value>> {
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
pub(super) fn candidates(map: &Map<String, Value>) -> Vec<Value> {
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
pub(super) fn pairwise_disjoint(branches: &[Value]) -> bool {
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
pub(super) fn disjoint(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
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

pub(super) fn fixed_apart(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
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

/// JSON Schema's equality (`const`, `enum`, `uniqueItems`): numbers by value (`1` is `1.0`),
/// the rest structurally.
///
/// ```
/// use serde_json::json;
/// assert!(agentio_schema::compat::same_instance(&json!({ "n": [1] }), &json!({ "n": [1.0] })));
/// assert!(!agentio_schema::compat::same_instance(&json!(1), &json!("1")));
/// ```
pub fn same_instance(a: &Value, b: &Value) -> bool {
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

pub(super) fn finite_only(map: &Map<String, Value>) -> Option<Vec<Value>> {
    if let Some(v) = map.get("const") {
        return Some(vec![v.clone()]);
    }
    map.get("enum").and_then(Value::as_array).cloned()
}

/// A node for a schema built here (a narrowed or merged copy), kept in the comparison's arena.
pub(super) fn built<'a>(
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
