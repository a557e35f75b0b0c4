//! Residual validation: the part of a derived schema that serde does not already enforce.
//!
//! Decoding a `Value` into a derived type checks most of its input schema on the way (the
//! types, the required fields, unknown fields under `deny_unknown_fields`), and serializing a
//! derived type produces its output schema's structure by construction. What is left — ranges,
//! lengths, patterns, formats, anything a `#[schemars(...)]` attribute adds, and every part of
//! the schema whose Rust type is not known here — is the *residual* schema. A boundary that has
//! one checks an input by decoding it and validating only the residual, and an output by
//! validating only the residual of what the type serialized; the full validator runs only when
//! either fails, to report every violation exactly as it always did.
//!
//! # What is trusted, and why
//!
//! A part of the schema is dropped only when it is *provably* enforced. The proof has two
//! halves, and both must hold:
//!
//! - **The Rust type**, known through [`InputShape`] / [`OutputShape`]: implemented here for
//!   the std types whose serde behaviour is fixed (`bool`, `char`, the integers up to 64 bits,
//!   `String`, `Option`, `Vec`, `Box`, maps with `String` keys, `serde_json::Value`; floats on
//!   input only, since a NaN serializes to `null`), and by `#[derive(AgentInput)]` /
//!   `#[derive(AgentOutput)]` for non-generic structs with named fields. A field that serde
//!   reads or writes in its own way (`with`, `deserialize_with`, `serialize_with`, `alias`,
//!   `flatten`, `getter`), and every field whose type has no shape (a hand-written
//!   `Deserialize`, a type with only `JsonSchema` derived, a generic parameter), is *opaque*:
//!   its whole subschema is kept.
//! - **The schema text**: a subschema is trusted only when it is exactly what the type alone
//!   generates (annotations aside). A `#[schemars(range(...))]` or any other attribute that
//!   adds a keyword makes it differ, and it is kept whole; a struct's schema must list exactly
//!   the fields serde reads, with no keyword beyond `type`, `properties`, `required` and
//!   `additionalProperties: false`, or it is kept whole. A hand-written `JsonSchema` impl
//!   therefore gets the full validator unless it says exactly what the derive would.
//!
//! Two serde_json leniencies are kept in the residual on the input side: a struct decodes from
//! a JSON *array* of its fields, so `"type": "object"` stays; and a `required` entry stays for
//! every field serde does not itself require (a field with a default, an `Option`, an opaque
//! field).
//!
//! The equivalence is proven by the property tests in `tests/tests/residual.rs`: over the serde
//! attribute matrix, "decodes and passes the residual" holds exactly when "passes the full
//! schema and decodes", and the error reported is the same.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value};

use crate::refs::{ROOT_DEF, rewrite_root_refs};

mod stream;
pub(crate) use stream::write_checked;

/// What serde enforces of one Rust type's schema. Built by [`InputShape`] / [`OutputShape`];
/// the derives generate them. Not public API.
#[doc(hidden)]
pub enum Shape {
    /// Nothing is known: the subschema is kept whole.
    Opaque,
    /// serde enforces all of the type's own schema, which `natural` generates.
    Exact(fn(&mut SchemaGenerator) -> Schema),
    /// `Option<T>`: `null`, or a `T`.
    Option {
        /// The shape of `T`.
        inner: Box<Shape>,
        /// The schema of `Option<T>` itself, for an exact `T`.
        natural: fn(&mut SchemaGenerator) -> Schema,
    },
    /// A sequence (`Vec<T>`) of items of this shape.
    Seq(Box<Shape>),
    /// A map with string keys and values of this shape.
    Map(Box<Shape>),
    /// A derived struct with named fields (built on demand, so recursive types terminate).
    Struct(fn() -> StructShape),
}

/// The serde view of a derived struct. Not public API.
#[doc(hidden)]
pub struct StructShape {
    /// `#[serde(deny_unknown_fields)]`.
    pub deny_unknown_fields: bool,
    /// The fields serde reads (input) or writes (output), skipped ones left out.
    pub fields: Vec<FieldShape>,
}

impl StructShape {
    /// The shape of a struct (`deny_unknown_fields`, then its fields): what the derives
    /// write, in few words. Not public API.
    pub fn new<const N: usize>(deny_unknown_fields: bool, fields: [FieldShape; N]) -> Self {
        StructShape {
            deny_unknown_fields,
            fields: Vec::from(fields),
        }
    }
}

/// One field of a [`StructShape`]. Not public API.
#[doc(hidden)]
pub struct FieldShape {
    /// The JSON name, after renames.
    pub name: &'static str,
    /// Input: the field has a `#[serde(default)]` (its own or the container's).
    pub has_default: bool,
    /// Output: `skip_serializing_if` may leave the field out.
    pub omittable: bool,
    /// The shape of its type, or [`Shape::Opaque`] when serde handles it specially.
    pub shape: Shape,
}

impl FieldShape {
    /// A field: its JSON name, whether it has a default, whether it may be left out, and
    /// its shape (what the derives write, in few words). Not public API.
    pub fn new(name: &'static str, has_default: bool, omittable: bool, shape: Shape) -> Self {
        FieldShape {
            name,
            has_default,
            omittable,
            shape,
        }
    }
}

fn is_exact(shape: &Shape) -> bool {
    match shape {
        Shape::Exact(_) => true,
        Shape::Option { inner, .. } => is_exact(inner),
        _ => false,
    }
}

/// Types whose deserialization from a `serde_json::Value` is known. Not public API.
#[doc(hidden)]
pub trait InputShape {
    /// The shape, on the input side: a derived struct's (its fields, built on demand, so that
    /// recursive types terminate) unless the impl says otherwise, as every other impl does.
    fn input_shape() -> Shape {
        Shape::Struct(Self::__input_fields)
    }

    /// A derived struct's fields, for its [`Shape::Struct`]: the one method the derive
    /// writes (a closure in `input_shape` would cost each derived type a closure and its shim
    /// to compile, a second method its tokens). Nothing else implements it.
    fn __input_fields() -> StructShape {
        StructShape::new(false, [])
    }
}

/// Types whose serialization to a `serde_json::Value` is known. Not public API.
#[doc(hidden)]
pub trait OutputShape {
    /// The shape, on the output side (see [`InputShape::input_shape`]).
    fn output_shape() -> Shape {
        Shape::Struct(Self::__output_fields)
    }

    /// A derived struct's fields, for its [`Shape::Struct`] (see
    /// [`InputShape::__input_fields`]).
    fn __output_fields() -> StructShape {
        StructShape::new(false, [])
    }
}

fn natural<T: JsonSchema + ?Sized>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

macro_rules! exact {
    ($($ty:ty),*) => {$(
        impl InputShape for $ty {
            fn input_shape() -> Shape { Shape::Exact(natural::<$ty>) }
        }
        impl OutputShape for $ty {
            fn output_shape() -> Shape { Shape::Exact(natural::<$ty>) }
        }
    )*};
}

exact!(
    bool, char, String, u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, Value
);

// A float decodes from any JSON number; but a NaN or an infinity serializes to `null`, which
// `"type": "number"` refuses, so on the output side a float is checked.
impl InputShape for f32 {
    fn input_shape() -> Shape {
        Shape::Exact(natural::<f32>)
    }
}
impl InputShape for f64 {
    fn input_shape() -> Shape {
        Shape::Exact(natural::<f64>)
    }
}
impl OutputShape for f32 {
    fn output_shape() -> Shape {
        Shape::Opaque
    }
}
impl OutputShape for f64 {
    fn output_shape() -> Shape {
        Shape::Opaque
    }
}

macro_rules! wrappers {
    ($trait:ident, $method:ident) => {
        impl<T: $trait + JsonSchema> $trait for Option<T> {
            fn $method() -> Shape {
                Shape::Option {
                    inner: Box::new(T::$method()),
                    natural: natural::<Option<T>>,
                }
            }
        }
        impl<T: $trait + JsonSchema> $trait for Vec<T> {
            fn $method() -> Shape {
                let inner = T::$method();
                if is_exact(&inner) {
                    Shape::Exact(natural::<Vec<T>>)
                } else {
                    Shape::Seq(Box::new(inner))
                }
            }
        }
        impl<T: $trait + ?Sized> $trait for Box<T> {
            fn $method() -> Shape {
                T::$method()
            }
        }
        impl<V: $trait + JsonSchema, S> $trait for HashMap<String, V, S> {
            fn $method() -> Shape {
                let inner = V::$method();
                if is_exact(&inner) {
                    Shape::Exact(natural::<BTreeMap<String, V>>)
                } else {
                    Shape::Map(Box::new(inner))
                }
            }
        }
        impl<V: $trait + JsonSchema> $trait for BTreeMap<String, V> {
            fn $method() -> Shape {
                let inner = V::$method();
                if is_exact(&inner) {
                    Shape::Exact(natural::<BTreeMap<String, V>>)
                } else {
                    Shape::Map(Box::new(inner))
                }
            }
        }
    };
}

wrappers!(InputShape, input_shape);
wrappers!(OutputShape, output_shape);

/// Finds a field type's shape where it has one and [`Shape::Opaque`] where it has none, by
/// autoref: `(&Probe::<T>::new()).input_shape()` picks [`ProbeInput`] when `T: InputShape` and
/// falls back to [`ProbeOpaqueInput`] otherwise. Not public API.
#[doc(hidden)]
pub struct Probe<T: ?Sized>(std::marker::PhantomData<T>);

impl<T: ?Sized> Probe<T> {
    /// A probe for `T`.
    pub fn new() -> Self {
        Probe(std::marker::PhantomData)
    }
}

impl<T: ?Sized> Default for Probe<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// See [`Probe`].
#[doc(hidden)]
pub trait ProbeInput {
    /// The shape of the probed type.
    fn input_shape(&self) -> Shape;
}
impl<T: InputShape + ?Sized> ProbeInput for Probe<T> {
    fn input_shape(&self) -> Shape {
        T::input_shape()
    }
}
/// See [`Probe`].
#[doc(hidden)]
pub trait ProbeOpaqueInput {
    /// [`Shape::Opaque`].
    fn input_shape(&self) -> Shape {
        Shape::Opaque
    }
}
impl<T: ?Sized> ProbeOpaqueInput for &Probe<T> {}

/// See [`Probe`].
#[doc(hidden)]
pub trait ProbeOutput {
    /// The shape of the probed type.
    fn output_shape(&self) -> Shape;
}
impl<T: OutputShape + ?Sized> ProbeOutput for Probe<T> {
    fn output_shape(&self) -> Shape {
        T::output_shape()
    }
}
/// See [`Probe`].
#[doc(hidden)]
pub trait ProbeOpaqueOutput {
    /// [`Shape::Opaque`].
    fn output_shape(&self) -> Shape {
        Shape::Opaque
    }
}
impl<T: ?Sized> ProbeOpaqueOutput for &Probe<T> {}

/// Keywords that annotate and never constrain: ignored when schemas are compared.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "examples",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// What remains of one subschema.
enum Residual {
    /// Nothing: serde enforces all of it.
    Nothing,
    /// This schema (kept whole, or reduced).
    Check(Value),
}

struct Walk<'a> {
    root: &'a Value,
    input: bool,
    generator: &'a mut SchemaGenerator,
    /// `$ref`s being expanded, so a recursive type keeps its recursive part whole.
    expanding: Vec<String>,
    /// Struct subschemas proven to be written by a derived impl (by address in `root`).
    structs: HashSet<usize>,
    /// How many references to each `$defs` entry led to a proven struct.
    trusted_refs: HashMap<String, usize>,
}

fn address(value: &Value) -> usize {
    std::ptr::from_ref(value) as usize
}

/// The output schema of a type whose shape is known, closed: `additionalProperties: false` on
/// every object a derived `Serialize` writes (it writes its own fields and nothing else), for
/// proofs about what the type can produce ([`crate::compat`]). `None` when nothing is closed.
pub(crate) fn closed_schema(
    root: &Value,
    shape: &Shape,
    generator: &mut SchemaGenerator,
) -> Option<Value> {
    let mut walk = Walk {
        root,
        input: false,
        generator,
        expanding: Vec::new(),
        structs: HashSet::new(),
        trusted_refs: HashMap::new(),
    };
    walk.residual(root, shape);
    if walk.structs.is_empty() {
        return None;
    }
    // Every reference to a definition must be one that was proven, or some use of it is not a
    // derived struct's and it stays open.
    let mut total_refs: HashMap<String, usize> = HashMap::new();
    count_refs(root, &mut total_refs);
    let defs = root.get("$defs").and_then(Value::as_object);
    let mut pointers = Vec::new();
    if walk.structs.contains(&address(root)) {
        pointers.push(String::new());
    }
    if let Some(defs) = defs {
        for (name, def) in defs {
            if walk.structs.contains(&address(def))
                && walk.trusted_refs.get(name) == total_refs.get(name)
            {
                pointers.push(format!("/$defs/{}", crate::pointer::escape_token(name)));
            }
        }
    }
    let mut closed = root.clone();
    let mut changed = false;
    for pointer in pointers {
        if let Some(Value::Object(map)) = closed.pointer_mut(&pointer)
            && !map.contains_key("additionalProperties")
        {
            map.insert("additionalProperties".into(), Value::Bool(false));
            changed = true;
        }
    }
    changed.then_some(closed)
}

fn count_refs(value: &Value, out: &mut HashMap<String, usize>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get("$ref")
                && let Some(name) = reference.strip_prefix("#/$defs/")
            {
                *out.entry(name.to_owned()).or_default() += 1;
            }
            map.values().for_each(|v| count_refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| count_refs(v, out)),
        _ => {}
    }
}

/// The residual of `root` (a type's whole schema) for a type of `shape`: `None` when nothing
/// can be dropped (the full validator is as good), `Some(true)` when serde enforces all of it,
/// otherwise the residual schema document (the root's `$defs` kept, for the kept parts).
pub(crate) fn residual_schema(
    root: &Value,
    shape: &Shape,
    input: bool,
    generator: &mut SchemaGenerator,
) -> Option<Value> {
    if matches!(shape, Shape::Opaque) {
        return None;
    }
    let mut walk = Walk {
        root,
        input,
        generator,
        expanding: Vec::new(),
        structs: HashSet::new(),
        trusted_refs: HashMap::new(),
    };
    match walk.residual(root, shape) {
        Residual::Nothing => Some(Value::Bool(true)),
        Residual::Check(schema) if &schema == root => None,
        Residual::Check(Value::Object(mut document)) => {
            // Kept parts are the root's own text, whose references resolve against the root:
            // `#/$defs/...` resolves the same here (the `$defs` are copied), but `#` or
            // `#/properties/...` would name the residual. Those point at a copy of the root.
            if mentions_any(root, &["$id", "$anchor", "$dynamicRef", "$dynamicAnchor"]) {
                return None;
            }
            let mut defs = root
                .get("$defs")
                .cloned()
                .unwrap_or_else(|| Value::Object(Map::new()));
            let mut rewritten = rewrite_root_refs(&mut defs);
            let mut body = Value::Object(std::mem::take(&mut document));
            rewritten |= rewrite_root_refs(&mut body);
            let Value::Object(body) = body else {
                return None;
            };
            document = body;
            if rewritten {
                let mut copy = root.clone();
                if let Value::Object(copy) = &mut copy {
                    copy.remove("$defs");
                    copy.remove("$schema");
                }
                rewrite_root_refs(&mut copy);
                if let Value::Object(defs) = &mut defs {
                    defs.insert(ROOT_DEF.to_owned(), copy);
                }
            }
            if let Some(schema) = root.get("$schema") {
                document.insert("$schema".to_owned(), schema.clone());
            }
            if defs.as_object().is_some_and(|d| !d.is_empty()) {
                document.insert("$defs".to_owned(), defs);
            }
            Some(Value::Object(document))
        }
        Residual::Check(_) => None,
    }
}

/// Whether any object in `schema` has one of `keys`.
fn mentions_any(schema: &Value, keys: &[&str]) -> bool {
    match schema {
        Value::Object(map) => {
            keys.iter().any(|k| map.contains_key(*k)) || map.values().any(|v| mentions_any(v, keys))
        }
        Value::Array(items) => items.iter().any(|v| mentions_any(v, keys)),
        _ => false,
    }
}

/// A schema's constraining keywords (`true` has none); `None` for `false`.
fn without_annotations(schema: &Value) -> Option<Map<String, Value>> {
    if schema == &Value::Bool(true) {
        return Some(Map::new());
    }
    let mut map = schema.as_object()?.clone();
    for key in ANNOTATIONS {
        map.remove(*key);
    }
    Some(map)
}

/// The keys of `schema` other than annotations and `allowed`.
fn has_other_keys(schema: &Map<String, Value>, allowed: &[&str]) -> bool {
    schema
        .keys()
        .any(|k| !ANNOTATIONS.contains(&k.as_str()) && !allowed.contains(&k.as_str()))
}

impl Walk<'_> {
    fn residual(&mut self, sub: &Value, shape: &Shape) -> Residual {
        let keep = || Residual::Check(sub.clone());
        match shape {
            Shape::Opaque => keep(),
            Shape::Exact(natural) => {
                let natural = natural(self.generator).to_value();
                match (without_annotations(sub), without_annotations(&natural)) {
                    (Some(a), Some(b)) if a == b => Residual::Nothing,
                    _ => keep(),
                }
            }
            Shape::Option { inner, natural } => {
                if is_exact(inner) {
                    return self.residual(sub, &Shape::Exact(*natural));
                }
                // `{"anyOf": [<T>, {"type": "null"}]}`: a null passes; anything else was a `T`.
                let Some(map) = sub.as_object() else {
                    return keep();
                };
                if has_other_keys(map, &["anyOf"]) {
                    return keep();
                }
                let Some([first, second]) = map
                    .get("anyOf")
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                else {
                    return keep();
                };
                if second != &serde_json::json!({ "type": "null" }) {
                    return keep();
                }
                match self.residual(first, inner) {
                    Residual::Nothing => Residual::Nothing,
                    Residual::Check(rest) => Residual::Check(serde_json::json!({
                        "anyOf": [rest, { "type": "null" }]
                    })),
                }
            }
            Shape::Seq(inner) => self.container(sub, "array", "items", inner),
            Shape::Map(inner) => self.container(sub, "object", "additionalProperties", inner),
            Shape::Struct(fields) => {
                let Some(map) = sub.as_object() else {
                    return keep();
                };
                if let Some(reference) = map.get("$ref") {
                    return self.referenced(sub, map, reference, shape);
                }
                self.structure(sub, map, &fields())
            }
        }
    }

    /// `{"$ref": "#/$defs/Name"}` (annotations aside): the residual of what it names.
    fn referenced(
        &mut self,
        sub: &Value,
        map: &Map<String, Value>,
        reference: &Value,
        shape: &Shape,
    ) -> Residual {
        let keep = || Residual::Check(sub.clone());
        if has_other_keys(map, &["$ref"]) {
            return keep();
        }
        let Some(name) = reference.as_str().and_then(|r| r.strip_prefix("#/$defs/")) else {
            return keep();
        };
        if name.contains(['/', '~']) || self.expanding.iter().any(|e| e == name) {
            return keep();
        }
        let Some(target) = self.root.get("$defs").and_then(|defs| defs.get(name)) else {
            return keep();
        };
        if target.get("$ref").is_some() {
            return keep();
        }
        self.expanding.push(name.to_owned());
        let result = self.residual(target, shape);
        self.expanding.pop();
        if self.structs.contains(&address(target)) {
            *self.trusted_refs.entry(name.to_owned()).or_default() += 1;
        }
        match result {
            // Nothing gained by inlining what is kept whole: point at it.
            Residual::Check(kept) if &kept == target => keep(),
            other => other,
        }
    }

    /// `{"type": kind, key: <inner>}`, for sequences and maps.
    fn container(&mut self, sub: &Value, kind: &str, key: &str, inner: &Shape) -> Residual {
        let keep = || Residual::Check(sub.clone());
        let Some(map) = sub.as_object() else {
            return keep();
        };
        if has_other_keys(map, &["type", key]) || map.get("type") != Some(&Value::from(kind)) {
            return keep();
        }
        let Some(items) = map.get(key) else {
            return keep();
        };
        // serde decodes a sequence only from an array and a map only from an object, and a
        // `Vec` or a map serializes to one: the type is enforced either way.
        match self.residual(items, inner) {
            Residual::Nothing => Residual::Nothing,
            Residual::Check(rest) => {
                let mut out = Map::new();
                out.insert(key.to_owned(), rest);
                Residual::Check(Value::Object(out))
            }
        }
    }

    fn structure(
        &mut self,
        sub: &Value,
        map: &Map<String, Value>,
        shape: &StructShape,
    ) -> Residual {
        let keep = || Residual::Check(sub.clone());
        if has_other_keys(
            map,
            &[
                "type",
                "properties",
                "required",
                "additionalProperties",
                "$schema",
                "$defs",
            ],
        ) || map.get("type") != Some(&Value::from("object"))
        {
            return keep();
        }
        match map.get("additionalProperties") {
            None => {}
            // On input serde refuses unknown fields only under `deny_unknown_fields`; on
            // output the derived impl writes only its own fields.
            Some(Value::Bool(false)) if shape.deny_unknown_fields || !self.input => {}
            Some(_) => return keep(),
        }
        let empty = Map::new();
        let properties = match map.get("properties") {
            Some(Value::Object(properties)) => properties,
            None => &empty,
            Some(_) => return keep(),
        };
        // The schema must name exactly the fields serde reads or writes: no other (here), and
        // every one of them (each is looked up below).
        let names: BTreeSet<&str> = shape.fields.iter().map(|f| f.name).collect();
        if names.len() != shape.fields.len()
            || !properties.keys().all(|k| names.contains(k.as_str()))
        {
            return keep();
        }
        let Some(required) = map.get("required").map_or(Some(Vec::new()), |r| {
            r.as_array()?
                .iter()
                .map(Value::as_str)
                .collect::<Option<Vec<&str>>>()
        }) else {
            return keep();
        };
        if !required.iter().all(|r| names.contains(r)) {
            return keep();
        }

        let mut kept_required = Vec::new();
        let mut kept_properties = Map::new();
        for field in &shape.fields {
            let listed_required = required.contains(&field.name);
            let enforced = if self.input {
                // serde requires a field with no default whose type cannot be absent.
                !field.has_default && !matches!(field.shape, Shape::Option { .. } | Shape::Opaque)
            } else {
                // The derived impl writes every field but those `skip_serializing_if` drops.
                !field.omittable
            };
            if listed_required && !enforced {
                kept_required.push(Value::from(field.name));
            }
            let Some(property) = properties.get(field.name) else {
                return keep();
            };
            if let Residual::Check(rest) = self.residual(property, &field.shape) {
                kept_properties.insert(field.name.to_owned(), rest);
            }
        }
        self.structs.insert(address(sub));
        let mut out = Map::new();
        if self.input {
            // serde_json decodes a struct from an array of its fields, too.
            out.insert("type".into(), Value::from("object"));
        }
        if !kept_required.is_empty() {
            out.insert("required".into(), Value::Array(kept_required));
        }
        if !kept_properties.is_empty() {
            out.insert("properties".into(), Value::Object(kept_properties));
        }
        if out.is_empty() {
            Residual::Nothing
        } else {
            Residual::Check(Value::Object(out))
        }
    }
}

/// A residual schema small enough to check without the general validator: the keywords a
/// residual keeps for derived types (`type`, `properties`, `required`, `items`,
/// `additionalProperties`, `anyOf`, numeric bounds, lengths, counts, and the Rust numeric
/// `format`s, which validators ignore). Compiled once per boundary; anything else (a pattern,
/// a `$ref`, a known format) leaves the residual to the general validator.
#[derive(Debug)]
pub(crate) struct FastCheck(Vec<Rule>, Option<Numeric>, Seen);

/// Where a member was last found in its object: the place it is looked at first next time
/// (see [`properties_hold`]). Objects of one type list their members in one order, so the
/// guess is almost always right; a wrong one costs one comparison, and the answer never
/// depends on it.
#[derive(Debug, Default)]
struct Seen(std::sync::atomic::AtomicU8);

impl Seen {
    fn get(&self) -> usize {
        usize::from(self.0.load(std::sync::atomic::Ordering::Relaxed))
    }

    fn set(&self, at: usize) {
        // Only small objects are scanned (`SCAN_LIMIT`), so the place fits.
        if let Ok(at) = u8::try_from(at) {
            self.0.store(at, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// A node whose rules are only `type` and numeric bounds, the commonest residual leaf: merged
/// when the node is compiled, so [`FastCheck::check`] decides it without the loop over the
/// rules (`shortcuts_answer_as_the_rule_loop_does`).
#[derive(Debug, Clone, Copy)]
struct Numeric {
    /// The types `type` allows ([`ALL_TYPES`] without a `type`).
    types: u8,
    /// The merged bounds: lower, lower exclusive, upper, upper exclusive.
    range: Option<(f64, bool, f64, bool)>,
}

impl Numeric {
    /// Whether `value` passes this node's `type` and bounds (see [`FastCheck::check`]).
    #[inline]
    fn check(self, value: &Value) -> Option<bool> {
        let Numeric { types, range } = self;
        // A number under `number` (integer and fraction both) is one without looking at its
        // fraction.
        let number = crate::types::INTEGER | crate::types::FRACTION;
        let typed = match value {
            _ if types == ALL_TYPES => true,
            Value::Number(_) if types & number == number => true,
            _ => types & value_bits(value) != 0,
        };
        if !typed {
            return Some(false);
        }
        match (range, value) {
            (Some(range), Value::Number(n)) => range_holds(n, range),
            _ => Some(true),
        }
    }
}

/// Every JSON type (as `compat` numbers them).
const ALL_TYPES: u8 = 0x7f;

#[derive(Debug)]
enum Rule {
    /// The JSON types allowed (bits as in `compat`: null, boolean, integer, fraction, string,
    /// array, object).
    Types(u8),
    Properties(Vec<(String, FastCheck)>),
    /// `additionalProperties`: the schema for names not in `properties` here.
    Additional(Vec<String>, Box<FastCheck>),
    Required(Vec<String>),
    Items(Box<FastCheck>),
    AnyOf(Vec<FastCheck>),
    /// Bounds on numbers, all of one schema's merged into one rule (one conversion of the
    /// value): each bound with whether it is exclusive; an absent bound is infinite.
    Range {
        lower: f64,
        lower_exclusive: bool,
        upper: f64,
        upper_exclusive: bool,
    },
    /// A bound on string lengths (in characters): the count, whether lower.
    Length(u64, bool),
    /// A bound on array lengths: the count, whether lower.
    Count(u64, bool),
}

/// Up to this many members, an object's properties are found by scanning it, not by lookup.
const SCAN_LIMIT: usize = 16;

/// Whether `map` is small enough to scan. Only the speed depends on the answer: both ways of
/// finding a member give the same result (`large_objects_are_looked_up_as_small_ones_are_scanned`).
fn scanned(map: &Map<String, Value>) -> bool {
    map.len() <= SCAN_LIMIT
}

/// Formats validators ignore (schemars writes them for Rust numbers).
const RUST_NUMBER_FORMATS: &[&str] = &[
    "int8", "int16", "int32", "int64", "int", "uint8", "uint16", "uint32", "uint64", "uint",
    "float", "double",
];

const SKIPPED: &[&str] = &[
    "title",
    "description",
    "examples",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
    "$schema",
];

impl FastCheck {
    /// Compiles `schema`, or `None` when it uses anything else (a `$ref` anywhere included, so
    /// that its `$defs` are unused and checking is bounded by the schema's own depth).
    pub(crate) fn compile(schema: &Value) -> Option<FastCheck> {
        if mentions_any(schema, &["$ref", "$dynamicRef"]) {
            return None;
        }
        Self::compile_at(schema, 0)
    }

    fn compile_at(schema: &Value, depth: usize) -> Option<FastCheck> {
        if depth > 64 {
            return None;
        }
        let map = match schema {
            Value::Bool(true) => return Some(FastCheck::new(Vec::new())),
            Value::Object(map) => map,
            _ => return None,
        };
        let mut rules = Vec::new();
        // All of the schema's numeric bounds, merged into one rule (one conversion of the
        // value): lower, lower exclusive, upper, upper exclusive.
        let mut range: Option<(f64, bool, f64, bool)> = None;
        let names: Vec<String> = map
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        for (key, arg) in map {
            let rule = match key.as_str() {
                k if SKIPPED.contains(&k) => continue,
                "$defs" if depth == 0 => continue,
                "format"
                    if arg
                        .as_str()
                        .is_some_and(|f| RUST_NUMBER_FORMATS.contains(&f)) =>
                {
                    continue;
                }
                "type" => Rule::Types(type_bits(arg)?),
                "properties" => Rule::Properties(
                    arg.as_object()?
                        .iter()
                        .map(|(k, v)| Some((k.clone(), Self::compile_at(v, depth + 1)?)))
                        .collect::<Option<_>>()?,
                ),
                "additionalProperties" => {
                    Rule::Additional(names.clone(), Box::new(Self::compile_at(arg, depth + 1)?))
                }
                "required" => Rule::Required(
                    arg.as_array()?
                        .iter()
                        .map(|r| r.as_str().map(str::to_owned))
                        .collect::<Option<_>>()?,
                ),
                "items" => Rule::Items(Box::new(Self::compile_at(arg, depth + 1)?)),
                "anyOf" => Rule::AnyOf(
                    arg.as_array()?
                        .iter()
                        .map(|b| Self::compile_at(b, depth + 1))
                        .collect::<Option<_>>()?,
                ),
                "minimum" | "exclusiveMinimum" | "maximum" | "exclusiveMaximum" => {
                    let bound = exact_f64(arg)?;
                    let exclusive = key.starts_with("exclusive");
                    let (lower, lower_exclusive, upper, upper_exclusive) =
                        range.get_or_insert((f64::NEG_INFINITY, false, f64::INFINITY, false));
                    // Both `minimum` and `exclusiveMinimum` may be present: keep the tighter.
                    if key.ends_with("inimum") {
                        if bound > *lower || (bound == *lower && exclusive) {
                            (*lower, *lower_exclusive) = (bound, exclusive);
                        }
                    } else if bound < *upper || (bound == *upper && exclusive) {
                        (*upper, *upper_exclusive) = (bound, exclusive);
                    }
                    continue;
                }
                "minLength" => Rule::Length(arg.as_u64()?, true),
                "maxLength" => Rule::Length(arg.as_u64()?, false),
                "minItems" => Rule::Count(arg.as_u64()?, true),
                "maxItems" => Rule::Count(arg.as_u64()?, false),
                _ => return None,
            };
            rules.push(rule);
        }
        if let Some((lower, lower_exclusive, upper, upper_exclusive)) = range {
            rules.push(Rule::Range {
                lower,
                lower_exclusive,
                upper,
                upper_exclusive,
            });
        }
        Some(FastCheck::new(rules))
    }

    /// The node, with its numeric shortcut when it has one.
    fn new(rules: Vec<Rule>) -> FastCheck {
        let mut numeric = Numeric {
            types: ALL_TYPES,
            range: None,
        };
        for rule in &rules {
            match *rule {
                Rule::Types(bits) => numeric.types &= bits,
                Rule::Range {
                    lower,
                    lower_exclusive,
                    upper,
                    upper_exclusive,
                } => numeric.range = Some((lower, lower_exclusive, upper, upper_exclusive)),
                _ => return FastCheck(rules, None, Seen::default()),
            }
        }
        // At most one `type` (a schema has one key of each name) and one range (all bounds
        // are merged into it, last), so the order of the loop is kept.
        FastCheck(rules, Some(numeric), Seen::default())
    }

    /// Whether `value` passes; `None` when a number is too large to compare exactly here.
    ///
    /// The common residual nodes (an object's `properties` alone, an array's `items` alone,
    /// a number's type and bounds) are decided without the loop over the rules, whose set-up
    /// would run for every member and item.
    pub(crate) fn check(&self, value: &Value) -> Option<bool> {
        match (self.0.as_slice(), value) {
            ([Rule::Properties(props)], Value::Object(map)) => properties_hold(props, map),
            ([Rule::Items(check)], Value::Array(items)) => items_hold(check, items),
            _ => match self.1 {
                Some(numeric) => numeric.check(value),
                None => self.general(value),
            },
        }
    }

    /// [`Self::check`] of a member or an item: a leaf's type and bounds are decided here, in
    /// the caller's loop, without a call per value.
    #[inline(always)]
    fn check_member(&self, value: &Value) -> Option<bool> {
        match self.1 {
            // A node with the shortcut has only `type` and bounds: neither fast path of
            // `check` applies to it.
            Some(numeric) => numeric.check(value),
            None => self.check(value),
        }
    }

    /// [`Self::check`] by the loop over every rule.
    #[inline(never)]
    fn general(&self, value: &Value) -> Option<bool> {
        for rule in &self.0 {
            let ok = match rule {
                Rule::Types(bits) => bits & value_bits(value) != 0,
                Rule::Properties(props) => match value {
                    Value::Object(map) => properties_hold(props, map)?,
                    _ => true,
                },
                Rule::Additional(named, check) => match value {
                    Value::Object(map) => {
                        let mut all = true;
                        for (k, v) in map {
                            if !named.contains(k) && !check.check_member(v)? {
                                all = false;
                                break;
                            }
                        }
                        all
                    }
                    _ => true,
                },
                Rule::Required(names) => match value {
                    Value::Object(map) if scanned(map) => {
                        names.iter().all(|n| map.keys().any(|k| k == n))
                    }
                    Value::Object(map) => names.iter().all(|n| map.contains_key(n)),
                    _ => true,
                },
                Rule::Items(check) => match value {
                    Value::Array(items) => items_hold(check, items)?,
                    _ => true,
                },
                Rule::AnyOf(branches) => {
                    let mut any = false;
                    for branch in branches {
                        if branch.check(value)? {
                            any = true;
                            break;
                        }
                    }
                    any
                }
                &Rule::Range {
                    lower,
                    lower_exclusive,
                    upper,
                    upper_exclusive,
                } => match value {
                    Value::Number(n) => {
                        range_holds(n, (lower, lower_exclusive, upper, upper_exclusive))?
                    }
                    _ => true,
                },
                Rule::Length(count, lower) => match value {
                    Value::String(s) => length_holds(s, *count, *lower),
                    _ => true,
                },
                Rule::Count(count, lower) => match value {
                    Value::Array(items) => {
                        if *lower {
                            items.len() as u64 >= *count
                        } else {
                            items.len() as u64 <= *count
                        }
                    }
                    _ => true,
                },
            };
            if !ok {
                return Some(false);
            }
        }
        Some(true)
    }
}

/// `properties`: every member `props` names passes its schema. A small object is scanned:
/// comparing a few short names costs less than hashing each one for the map's lookup. Each
/// named member is looked for first where it was found last ([`Seen`]), then by the scan.
// Inlined into its callers (`check`, the rule loop, `items_hold`): a call per object costs a
// good part of what checking a small object does.
#[inline(always)]
fn properties_hold(props: &[(String, FastCheck)], map: &Map<String, Value>) -> Option<bool> {
    if scanned(map) {
        for (name, check) in props {
            let guess = check.2.get();
            let v = match map.iter().nth(guess) {
                Some((k, v)) if same_name(k, name) => v,
                _ => match map
                    .iter()
                    .enumerate()
                    .find(|(_, (k, _))| same_name(k, name))
                {
                    Some((at, (_, v))) => {
                        check.2.set(at);
                        v
                    }
                    None => continue,
                },
            };
            if !check.check_member(v)? {
                return Some(false);
            }
        }
    } else {
        for (name, check) in props {
            if let Some(v) = map.get(name)
                && !check.check_member(v)?
            {
                return Some(false);
            }
        }
    }
    Some(true)
}

/// `items`: every item passes `check`.
fn items_hold(check: &FastCheck, items: &[Value]) -> Option<bool> {
    // Objects checked by their `properties` alone (a list of structs) go straight to them.
    if let [Rule::Properties(props)] = check.0.as_slice() {
        for item in items {
            let passed = match item {
                Value::Object(map) => properties_hold(props, map)?,
                _ => check.check(item)?,
            };
            if !passed {
                return Some(false);
            }
        }
        return Some(true);
    }
    for item in items {
        if !check.check_member(item)? {
            return Some(false);
        }
    }
    Some(true)
}

/// Whether two names are the same: the lengths, then the first bytes, then the rest (the
/// names of one object mostly differ in one of the first two, and comparing the rest is a
/// call).
fn same_name(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.as_bytes().first() == b.as_bytes().first() && a == b
}

/// A number against merged bounds (lower, lower exclusive, upper, upper exclusive); `None`
/// past 2^53, where an integer may not be exactly an `f64`.
fn range_holds(
    n: &serde_json::Number,
    (lower, lower_exclusive, upper, upper_exclusive): (f64, bool, f64, bool),
) -> Option<bool> {
    let x = n.as_f64()?;
    if x.abs() > 9_007_199_254_740_992.0 {
        return None;
    }
    Some(
        (if lower_exclusive {
            x > lower
        } else {
            x >= lower
        }) && (if upper_exclusive {
            x < upper
        } else {
            x <= upper
        }),
    )
}

/// A bound as an `f64`, when it is one exactly.
fn exact_f64(value: &Value) -> Option<f64> {
    let x = value.as_f64()?;
    (x.abs() <= 9_007_199_254_740_992.0).then_some(x)
}

/// The type bits of a `type` keyword (as [`crate::compat`] numbers them); `None` for a name
/// it does not know.
fn type_bits(arg: &Value) -> Option<u8> {
    let one = |name: &str| Some(crate::types::Types::of_name(name)).filter(|bits| *bits != 0);
    match arg {
        Value::String(name) => one(name),
        Value::Array(names) => names
            .iter()
            .try_fold(0, |acc, n| Some(acc | one(n.as_str()?)?)),
        _ => None,
    }
}

/// Whether `s` has at least (`lower`) or at most `count` characters.
fn length_holds(s: &str, count: u64, lower: bool) -> bool {
    // Bytes bound the characters: most strings are decided without counting them.
    let bytes = s.len() as u64;
    if lower {
        bytes >= count && (bytes / 4 >= count || s.chars().count() as u64 >= count)
    } else {
        bytes <= count || s.chars().count() as u64 <= count
    }
}

fn value_bits(value: &Value) -> u8 {
    crate::types::Types::of_value(value)
}

#[cfg(test)]
mod fast_check_tests {
    use super::{FastCheck, Rule};
    use serde_json::{Value, json};

    /// A member is looked for first where it was found last: objects that list their members
    /// in another order, or lack one, get the same answers as a fresh check gives them.
    #[test]
    fn a_member_found_elsewhere_than_last_time_is_still_found() {
        let schema = json!({"properties": {"b": {"maximum": 1}, "c": {"minimum": 0}}});
        let shared = FastCheck::compile(&schema).unwrap();
        let cases = [
            (json!({"a": 0, "b": 5, "c": 0}), false),
            (json!({"b": 5, "a": 0}), false),
            (json!({"b": 0, "a": 9, "c": -1}), false),
            (json!({"c": 3, "b": 1}), true),
            (json!({"a": 9}), true),
            (json!({"a": 0, "c": 0, "b": 2}), false),
            (json!({"c": -1}), false),
            (json!({"x": 0, "y": 0, "b": 1, "c": 0}), true),
        ];
        // Twice through, so that every case meets the places the others left.
        for (value, expected) in cases.iter().chain(cases.iter()) {
            assert_eq!(shared.check(value), Some(*expected), "{value}");
            let fresh = FastCheck::compile(&schema).unwrap();
            assert_eq!(fresh.check(value), Some(*expected), "{value}");
        }
    }

    /// Each node is decided by its shortcut exactly as by the loop over its rules, on values
    /// of every type (numbers past 2^53 included, where both answer `None`), and each form of
    /// schema gets the shortcut meant for it.
    #[test]
    fn shortcuts_answer_as_the_rule_loop_does() {
        let big: serde_json::Map<String, Value> = (0..20)
            .map(|i| (format!("k{i}"), json!(i)))
            .chain([("a".into(), json!(0))])
            .collect();
        let values = [
            json!(null),
            json!(true),
            json!(0),
            json!(1),
            json!(0.5),
            json!(-1),
            json!(2),
            json!(3),
            json!(1.5),
            json!(1e300),
            json!(1u64 << 60),
            json!(-(1i64 << 60)),
            json!("x"),
            json!([]),
            json!([1, 4]),
            json!([1, 1u64 << 60]),
            json!({"a": 0}),
            json!({"a": 2}),
            json!({"a": 1u64 << 60}),
            json!({"b": 0}),
            Value::Object(big),
        ];
        let number = |fast: &FastCheck| fast.1.is_some();
        let properties =
            |fast: &FastCheck| fast.1.is_none() && matches!(fast.0[..], [Rule::Properties(_)]);
        let items = |fast: &FastCheck| fast.1.is_none() && matches!(fast.0[..], [Rule::Items(_)]);
        let general = |fast: &FastCheck| fast.1.is_none() && fast.0.len() > 1;
        type Kind = fn(&FastCheck) -> bool;
        let schemas: [(Value, Kind); 12] = [
            (
                json!({"type": "number", "minimum": 0, "maximum": 1}),
                number,
            ),
            (
                json!({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 3}),
                number,
            ),
            (json!({"minimum": 1}), number),
            (json!({"type": "string"}), number),
            (json!({"type": ["integer", "null"]}), number),
            (
                json!({"type": ["null", "boolean", "number", "string", "array", "object"]}),
                number,
            ),
            (json!({}), number),
            // No type at all: nothing passes, a number included.
            (json!({"type": []}), number),
            (json!({"properties": {"a": {"minimum": 1}}}), properties),
            (json!({"items": {"maximum": 3}}), items),
            (
                json!({"type": "object", "properties": {"a": {"minimum": 1}}}),
                general,
            ),
            (json!({"type": "number", "maxLength": 2}), general),
        ];
        for (schema, kind) in schemas {
            let fast = FastCheck::compile(&schema).unwrap();
            assert!(kind(&fast), "{schema}: {:?}", fast.1);
            for value in &values {
                assert_eq!(
                    fast.check(value),
                    fast.general(value),
                    "{value} against {schema}"
                );
            }
        }
    }

    /// Every pair is decided as the general validator decides it.
    fn agrees(schema: Value, values: &[Value]) {
        let fast = FastCheck::compile(&schema).unwrap_or_else(|| panic!("compiles: {schema}"));
        let full = jsonschema::draft202012::options().build(&schema).unwrap();
        for value in values {
            assert_eq!(
                fast.check(value),
                Some(full.is_valid(value)),
                "{value} against {schema}"
            );
        }
    }

    #[test]
    fn bounds_inclusive_and_exclusive() {
        let values = [
            json!(0),
            json!(1),
            json!(2),
            json!(9),
            json!(10),
            json!(11),
            json!(0.5),
            json!(9.5),
            json!("x"),
        ];
        agrees(json!({ "minimum": 1, "maximum": 10 }), &values);
        agrees(
            json!({ "exclusiveMinimum": 1, "exclusiveMaximum": 10 }),
            &values,
        );
        agrees(json!({ "exclusiveMinimum": 0.5 }), &values);
        agrees(json!({ "exclusiveMaximum": 9.5 }), &values);
        // Both kinds of one bound, in either order and either tighter: one merged range.
        for (a, b) in [(1, 2), (2, 1), (1, 1), (9, 10), (10, 9), (10, 10)] {
            agrees(json!({ "minimum": a, "exclusiveMinimum": b }), &values);
            agrees(json!({ "exclusiveMinimum": b, "minimum": a }), &values);
            agrees(json!({ "maximum": a, "exclusiveMaximum": b }), &values);
            agrees(json!({ "exclusiveMaximum": b, "maximum": a }), &values);
            agrees(json!({ "minimum": a, "maximum": b }), &values);
        }
    }

    #[test]
    fn numbers_past_2_pow_53_are_left_to_the_validator() {
        let fast = FastCheck::compile(&json!({ "maximum": 10 })).unwrap();
        assert_eq!(fast.check(&json!(u64::MAX)), None);
        assert_eq!(fast.check(&json!(-1e300)), None);
        assert_eq!(fast.check(&json!(9_007_199_254_740_992_u64)), Some(false));
        // A bound past 2^53 is not compiled.
        assert!(FastCheck::compile(&json!({ "maximum": 1e300 })).is_none());
    }

    #[test]
    fn lengths_count_characters_and_counts_items() {
        let strings = [
            json!(""),
            json!("a"),
            json!("ab"),
            json!("abc"),
            json!("é"),
            json!("éé"),
            json!("ééé"),
            json!("🙂🙂"),
            json!("a🙂b"),
            json!(1),
        ];
        agrees(json!({ "minLength": 2 }), &strings);
        agrees(json!({ "maxLength": 2 }), &strings);
        agrees(json!({ "minLength": 1, "maxLength": 1 }), &strings);
        let arrays = [
            json!([]),
            json!([1]),
            json!([1, 2]),
            json!([1, 2, 3]),
            json!("x"),
        ];
        agrees(json!({ "minItems": 2 }), &arrays);
        agrees(json!({ "maxItems": 2 }), &arrays);
    }

    #[test]
    fn types_objects_arrays_and_alternatives() {
        let values = [
            json!(null),
            json!(true),
            json!(3),
            json!(3.0),
            json!(3.5),
            json!(-2),
            json!("s"),
            json!([1]),
            json!({ "a": 1 }),
        ];
        for t in [
            "integer", "number", "string", "null", "boolean", "array", "object",
        ] {
            agrees(json!({ "type": t }), &values);
        }
        agrees(json!({ "type": ["integer", "null"] }), &values);
        // `integer` is within `number`: the union is `number`, not the two apart.
        agrees(json!({ "type": ["integer", "number"] }), &values);
        agrees(json!({ "type": ["number", "integer", "string"] }), &values);
        agrees(
            json!({ "anyOf": [{ "type": "string" }, { "type": "null" }] }),
            &values,
        );
        let objects = [
            json!({}),
            json!({ "a": 1 }),
            json!({ "a": "x" }),
            json!({ "a": 1, "b": "y" }),
            json!({ "b": 2 }),
            json!([1]),
        ];
        agrees(json!({ "required": ["a"] }), &objects);
        agrees(
            json!({ "properties": { "a": { "type": "integer" } } }),
            &objects,
        );
        agrees(
            json!({ "properties": { "a": true }, "additionalProperties": { "type": "string" } }),
            &objects,
        );
        agrees(
            json!({ "additionalProperties": { "type": "integer" } }),
            &objects,
        );
        let lists = [
            json!([]),
            json!([1, 2]),
            json!([1, "x"]),
            json!(["x"]),
            json!({}),
        ];
        agrees(json!({ "items": { "type": "integer" } }), &lists);
        agrees(json!({ "items": { "maximum": 1 } }), &lists);
    }

    #[test]
    fn large_objects_are_looked_up_as_small_ones_are_scanned() {
        // Past `SCAN_LIMIT` members an object's properties are found by lookup: the same
        // answers as the scan of a small one.
        let mut big = serde_json::Map::new();
        for i in 0..super::SCAN_LIMIT + 4 {
            big.insert(format!("k{i}"), json!(i));
        }
        let mut objects = vec![Value::Object(big.clone())];
        for (name, v) in [("a", json!(1)), ("a", json!("x")), ("b", json!(2))] {
            let mut object = big.clone();
            object.insert(name.into(), v);
            objects.push(Value::Object(object));
        }
        agrees(json!({ "required": ["a"] }), &objects);
        agrees(json!({ "required": ["k19", "a"] }), &objects);
        agrees(
            json!({ "properties": { "a": { "type": "integer" } } }),
            &objects,
        );
        agrees(
            json!({ "properties": { "k3": { "maximum": 2 } } }),
            &objects,
        );
        agrees(
            json!({ "properties": { "k3": { "maximum": 3 } } }),
            &objects,
        );
        agrees(
            json!({ "properties": { "a": true }, "additionalProperties": { "maximum": 18 } }),
            &objects,
        );
    }

    #[test]
    fn schemas_deeper_than_64_levels_are_left_to_the_validator() {
        let nested = |levels: usize| {
            (0..levels).fold(
                json!({ "type": "integer" }),
                |inner, _| json!({ "items": inner }),
            )
        };
        let deepest = FastCheck::compile(&nested(64)).expect("64 levels compile");
        let mut value = json!(1);
        for _ in 0..64 {
            value = json!([value]);
        }
        assert_eq!(deepest.check(&value), Some(true));
        assert!(FastCheck::compile(&nested(65)).is_none());
        // Every keyword that holds a schema is a level.
        let wrappers: [fn(Value) -> Value; 4] = [
            |inner| json!({ "items": inner }),
            |inner| json!({ "properties": { "a": inner } }),
            |inner| json!({ "additionalProperties": inner }),
            |inner| json!({ "anyOf": [inner] }),
        ];
        for wrap in wrappers {
            let chain = |levels: usize| (0..levels).fold(json!(true), |inner, _| wrap(inner));
            assert!(FastCheck::compile(&chain(64)).is_some(), "{}", chain(1));
            assert!(FastCheck::compile(&chain(65)).is_none(), "{}", chain(1));
        }
    }

    #[test]
    fn only_the_common_keywords_compile() {
        assert!(FastCheck::compile(&json!({ "pattern": "^a" })).is_none());
        assert!(FastCheck::compile(&json!({ "format": "email" })).is_none());
        assert!(
            FastCheck::compile(&json!({ "$ref": "#/$defs/A", "$defs": { "A": true } })).is_none()
        );
        assert!(
            FastCheck::compile(
                &json!({ "type": "integer", "format": "uint8", "$defs": { "A": true } })
            )
            .is_some()
        );
        assert!(FastCheck::compile(&json!({ "properties": { "a": { "$defs": {} } } })).is_none());
    }
}
