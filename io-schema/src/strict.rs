//! The strict structured-output form of a schema (OpenAI "strict" structured outputs).
//!
//! Strict mode accepts a subset of JSON Schema: the root is an object, every object lists its
//! properties with `additionalProperties: false`, every property is required (an optional
//! field is required *and* nullable), `anyOf` replaces `oneOf`, and a fixed list of keywords
//! and formats is not understood. The transform below rewrites a generated schema into that
//! subset. It never weakens the runtime check: the output is still validated against the full
//! schema after it is decoded; the strict form is only what the provider is told.
//!
//! Decisions, for what the spec leaves open:
//! - A field with `#[serde(default)]` that is not an `Option` becomes required but not
//!   nullable: the model must supply a value, and a `null` could not decode into the field.
//! - Keywords strict mode does not support (`minLength`, `default`, `uniqueItems`, ...) are
//!   dropped rather than refused; formats outside the supported list are dropped too. Each
//!   dropped keyword that narrows what is valid is reported as a
//!   [`Relaxation`](crate::profiles::Relaxation) (pointer and keyword).
//! - A `$ref` beside other keywords (schemars writes `{"$ref": ..., "description": ...}` for a
//!   documented field of a struct or enum type) is inlined, the keywords beside it winning over
//!   the definition's, as OpenAI's own Python SDK does: strict mode refuses `$ref` with siblings.
//!   A recursive reference with siblings becomes a one-branch `anyOf` instead.
//! - OpenAI's published limits (RULES.md) are enforced on the result and refused with a
//!   pointer: at most 10 levels of nesting (each object or array schema is a level, the root
//!   object the first; references followed, a recursive one counted once), 5,000 object
//!   properties, 120,000 characters of property names, definition names, enum and const
//!   values, 1,000 enum values, and 15,000 characters for one string enum of over 250 values.
//! - What strict mode cannot say at all (maps, `serde_json::Value`, `allOf`, a non-object
//!   root) is a [`StrictModeError`] naming where in the schema it sits.

use std::fmt;

use serde_json::{Map, Value, json};

use crate::report::{Relaxation, left_out};

/// Why a schema has no strict structured-output form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StrictModeError {
    /// A JSON pointer into the generated schema, at the part strict mode cannot express.
    pub schema_pointer: String,
    /// What that part is and why strict mode cannot express it.
    pub reason: String,
}

impl fmt::Display for StrictModeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.schema_pointer.is_empty() {
            "(root)"
        } else {
            &self.schema_pointer
        };
        write!(
            f,
            "strict mode cannot express the schema at {at}: {}",
            self.reason
        )
    }
}

impl std::error::Error for StrictModeError {}

const UNSUPPORTED_KEYWORDS: &[&str] = &[
    "$schema",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "minLength",
    "maxLength",
    "patternProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "dependentRequired",
    "dependentSchemas",
    "if",
    "then",
    "else",
    "not",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

const SUPPORTED_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Builds `{"type": "json_schema", "json_schema": {"name", "strict": true, "schema"}}` (the
/// Chat Completions `response_format` shape) from a generated schema.
pub(crate) fn structured_output_format(
    name: &str,
    schema: Value,
) -> Result<Value, StrictModeError> {
    structured_output_format_reporting(name, schema, &mut Vec::new())
}

/// [`structured_output_format`], with every keyword it leaves out added to `relaxed`.
pub(crate) fn structured_output_format_reporting(
    name: &str,
    mut schema: Value,
    relaxed: &mut Vec<Relaxation>,
) -> Result<Value, StrictModeError> {
    let description = schema.get("description").cloned();
    let is_object_root = schema.get("type").and_then(Value::as_str) == Some("object")
        && schema.get("properties").is_some();
    if !is_object_root {
        return Err(StrictModeError {
            schema_pointer: String::new(),
            reason: "the root must be an object with named properties".into(),
        });
    }
    let defs = schema.get("$defs").cloned().unwrap_or(Value::Null);
    merge_refs_with_properties(&mut schema, &defs, &mut String::new(), 0)?;
    let mut inlining = Inlining {
        defs: &defs,
        stack: Vec::new(),
    };
    rewrite(&mut schema, &mut String::new(), &mut inlining, relaxed, 0)?;
    limits::check(&schema)?;
    let mut format = Map::new();
    format.insert("name".into(), json!(name));
    if let Some(description) = description {
        format.insert("description".into(), description);
    }
    format.insert("strict".into(), json!(true));
    format.insert("schema".into(), schema);
    Ok(json!({ "type": "json_schema", "json_schema": format }))
}

/// Every object property a serialized value may leave out, as pointers into `schema` (the
/// serialize contract): a field with `skip_serializing_if`, say. Strict mode requires every
/// property, so a type whose own output omits one has no strict form that accepts its output.
pub(crate) fn omittable_properties(schema: &Value) -> Vec<String> {
    fn walk(node: &Value, at: &mut String, out: &mut Vec<String>, depth: usize) {
        if depth > 64 {
            return;
        }
        let Some(object) = node.as_object() else {
            if let Value::Array(items) = node {
                for (i, item) in items.iter().enumerate() {
                    let mark = at.len();
                    at.push_str(&format!("/{i}"));
                    walk(item, at, out, depth + 1);
                    at.truncate(mark);
                }
            }
            return;
        };
        if let Some(Value::Object(properties)) = object.get("properties") {
            let required: Vec<&str> = object
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            for name in properties.keys() {
                if !required.contains(&name.as_str()) {
                    out.push(format!(
                        "{at}/properties/{}",
                        crate::pointer::escape_token(name)
                    ));
                }
            }
        }
        for (key, child) in object {
            if matches!(key.as_str(), "enum" | "const" | "default" | "examples") {
                continue;
            }
            let mark = at.len();
            at.push('/');
            at.push_str(&crate::pointer::escape_token(key));
            walk(child, at, out, depth + 1);
            at.truncate(mark);
        }
    }
    let mut out = Vec::new();
    walk(schema, &mut String::new(), &mut out, 0);
    out
}

/// A `$ref` beside `properties` (schemars writes an internally tagged enum's newtype variant
/// so: the tag in `properties`, the fields behind the `$ref`). Closing that object as it stands
/// would refuse every field of the variant, so the referenced properties are merged in first.
fn merge_refs_with_properties(
    node: &mut Value,
    defs: &Value,
    at: &mut String,
    depth: usize,
) -> Result<(), StrictModeError> {
    if depth > 64 {
        return Err(refuse(at, "the schema nests deeper than 64 levels"));
    }
    match node {
        Value::Object(object) => {
            if object.contains_key("properties")
                && let Some(reference) = object.get("$ref").and_then(Value::as_str)
            {
                let target = definition_name(reference)
                    .and_then(|name| defs.get(&name))
                    .ok_or_else(|| {
                        refuse(at, format!("`{reference}` is not a local definition"))
                    })?;
                let (Some(Value::Object(extra)), Some(Value::Object(own))) =
                    (target.get("properties"), object.get_mut("properties"))
                else {
                    return Err(refuse(
                        at,
                        "a `$ref` beside `properties` must name an object with properties (a newtype variant of an internally tagged enum must hold a struct)",
                    ));
                };
                for (name, schema) in extra {
                    own.entry(name.clone()).or_insert_with(|| schema.clone());
                }
                // `required` is left as it is: `rewrite` makes every property required.
                object.remove("$ref");
            }
            for (key, child) in object.iter_mut() {
                if matches!(key.as_str(), "enum" | "const" | "default" | "examples") {
                    continue;
                }
                let mark = at.len();
                at.push('/');
                at.push_str(&crate::pointer::escape_token(key));
                merge_refs_with_properties(child, defs, at, depth + 1)?;
                at.truncate(mark);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                let mark = at.len();
                at.push_str(&format!("/{i}"));
                merge_refs_with_properties(item, defs, at, depth + 1)?;
                at.truncate(mark);
            }
        }
        _ => {}
    }
    Ok(())
}

fn refuse(at: &str, reason: impl Into<String>) -> StrictModeError {
    StrictModeError {
        schema_pointer: at.to_owned(),
        reason: reason.into(),
    }
}

/// The definitions a `$ref` with siblings is inlined from, and the ones being inlined (a
/// reference back to one of them is recursive).
struct Inlining<'a> {
    defs: &'a Value,
    stack: Vec<String>,
}

fn rewrite(
    schema: &mut Value,
    at: &mut String,
    inlining: &mut Inlining<'_>,
    relaxed: &mut Vec<Relaxation>,
    depth: usize,
) -> Result<(), StrictModeError> {
    if depth > 64 {
        return Err(refuse(at, "the schema nests deeper than 64 levels"));
    }
    let node = match schema {
        Value::Bool(true) => {
            return Err(refuse(
                at,
                "it accepts any JSON value (a `serde_json::Value`?)",
            ));
        }
        Value::Object(node) => node,
        _ => return Ok(()),
    };
    for keyword in UNSUPPORTED_KEYWORDS {
        if let Some(value) = node.remove(*keyword) {
            left_out(relaxed, at, keyword, &value);
        }
    }
    if let Some(format) = crate::formats::drop_format(node, |f| SUPPORTED_FORMATS.contains(&f)) {
        left_out(relaxed, at, "format", &format);
    }
    if node.contains_key("$ref") && node.len() > 1 {
        return inline_ref(schema, at, inlining, relaxed, depth);
    }
    if node.contains_key("prefixItems") {
        return Err(refuse(
            at,
            "a tuple (`prefixItems`) is not supported; use a struct with named fields",
        ));
    }
    if node.contains_key("allOf") {
        return Err(refuse(
            at,
            "`allOf` is not supported (a `#[serde(flatten)]` field?)",
        ));
    }
    if let Some(one_of) = node.remove("oneOf") {
        if node.contains_key("anyOf") {
            return Err(refuse(
                at,
                "`oneOf` and `anyOf` on one schema cannot be merged",
            ));
        }
        node.insert("anyOf".into(), one_of);
    }
    let typed_object = match node.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        _ => false,
    };
    if typed_object || node.contains_key("properties") {
        match node.get("additionalProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(_) => return Err(refuse(at, "a map has no fixed property names")),
        }
        let Some(Value::Object(properties)) = node.get("properties") else {
            return Err(refuse(at, "an object without declared properties (a map?)"));
        };
        let required: Vec<Value> = properties.keys().map(|k| json!(k)).collect();
        node.insert("required".into(), Value::Array(required));
        node.insert("additionalProperties".into(), Value::Bool(false));
    }
    for (keyword, child) in node.iter_mut() {
        let mark = at.len();
        at.push('/');
        at.push_str(&crate::pointer::escape_token(keyword));
        match keyword.as_str() {
            "properties" | "$defs" | "definitions" => {
                let defines = keyword != "properties";
                if let Value::Object(children) = child {
                    for (name, sub) in children.iter_mut() {
                        let inner = at.len();
                        at.push('/');
                        at.push_str(&crate::pointer::escape_token(name));
                        // Inside its own definition, a reference back to it is recursive.
                        if defines {
                            inlining.stack.push(name.clone());
                        }
                        let result = rewrite(sub, at, inlining, relaxed, depth + 1);
                        if defines {
                            inlining.stack.pop();
                        }
                        result?;
                        at.truncate(inner);
                    }
                }
            }
            "items" | "additionalItems" => rewrite(child, at, inlining, relaxed, depth + 1)?,
            "anyOf" | "prefixItems" => {
                if let Value::Array(children) = child {
                    for (i, sub) in children.iter_mut().enumerate() {
                        let inner = at.len();
                        at.push('/');
                        at.push_str(&i.to_string());
                        rewrite(sub, at, inlining, relaxed, depth + 1)?;
                        at.truncate(inner);
                    }
                }
            }
            _ => {}
        }
        at.truncate(mark);
    }
    Ok(())
}

/// The definition `#/$defs/Name` names, read as the validator reads it: percent-decoded, then
/// the pointer's own `~1` and `~0` (`#/$defs/a~1b` and `#/%24defs/a~1b` name `a/b`). `None`
/// for any other reference (a pointer elsewhere, or into a definition).
fn definition_name(reference: &str) -> Option<String> {
    let pointer = crate::pointer::local_pointer(reference)?;
    let token = pointer.strip_prefix("/$defs/")?;
    (!token.contains('/')).then(|| crate::pointer::unescape_token(token))
}

/// `{"$ref": R, ...siblings}` (strict mode refuses a `$ref` beside other keywords): the
/// definition R names, with the siblings written over it, rewritten in turn.
/// A reference to a definition being inlined already is recursive: `{"anyOf": [{"$ref": R}],
/// ...siblings}`, which strict mode accepts, and which does not grow.
fn inline_ref(
    schema: &mut Value,
    at: &mut String,
    inlining: &mut Inlining<'_>,
    relaxed: &mut Vec<Relaxation>,
    depth: usize,
) -> Result<(), StrictModeError> {
    let Some(Value::Object(node)) = Some(&mut *schema) else {
        return Ok(());
    };
    let Some(Value::String(reference)) = node.remove("$ref") else {
        return Err(refuse(at, "`$ref` must be a string"));
    };
    let name = definition_name(&reference);
    let recursive = name
        .as_ref()
        .is_some_and(|name| inlining.stack.contains(name));
    if recursive || reference == "#" {
        let siblings = std::mem::take(node);
        let mut wrapped = Map::new();
        wrapped.insert("anyOf".into(), json!([{ "$ref": reference }]));
        wrapped.extend(siblings);
        *schema = Value::Object(wrapped);
        // The same node, wrapped: no level deeper (its branch is one, as any branch).
        return rewrite(schema, at, inlining, relaxed, depth);
    }
    let target = name
        .as_ref()
        .and_then(|name| inlining.defs.get(name))
        .ok_or_else(|| refuse(at, format!("`{reference}` is not a local definition")))?;
    let Value::Object(target) = target else {
        return Err(refuse(
            at,
            format!("`{reference}` does not name an object schema"),
        ));
    };
    let mut merged = target.clone();
    for (key, value) in std::mem::take(node) {
        merged.insert(key, value);
    }
    *schema = Value::Object(merged);
    inlining.stack.push(name.unwrap_or_default());
    // What the copy leaves out is the definition's, reported where the definition itself is
    // rewritten (`/$defs/...`); what the siblings left out was reported before they were
    // written over it (`rewrite` drops them first).
    let result = rewrite(schema, at, inlining, &mut Vec::new(), depth + 1);
    inlining.stack.pop();
    result
}

/// OpenAI's published limits on a strict schema (RULES.md, "Schema subset when `strict:
/// true`").
mod limits {
    use serde_json::Value;

    use super::{StrictModeError, refuse};

    /// Levels of nesting (objects and arrays, the root object the first).
    pub(super) const MAX_NESTING: usize = 10;
    /// Object properties, counted over the whole schema (definitions once each).
    pub(super) const MAX_PROPERTIES: usize = 5_000;
    /// Characters of property names, definition names, enum values and const values.
    pub(super) const MAX_NAME_CHARS: usize = 120_000;
    /// Enum values over the whole schema.
    pub(super) const MAX_ENUM_VALUES: usize = 1_000;
    /// A string enum over this many values...
    pub(super) const LARGE_ENUM: usize = 250;
    /// ...may total at most this many characters.
    pub(super) const LARGE_ENUM_CHARS: usize = 15_000;

    #[derive(Default)]
    struct Totals {
        properties: usize,
        chars: usize,
        enum_values: usize,
    }

    fn text_len(value: &Value) -> usize {
        match value {
            Value::String(s) => s.chars().count(),
            other => other.to_string().chars().count(),
        }
    }

    pub(super) fn check(schema: &Value) -> Result<(), StrictModeError> {
        let mut totals = Totals::default();
        count(schema, &mut String::new(), &mut totals)?;
        if let Some(Value::Object(defs)) = schema.get("$defs") {
            totals.chars += defs.keys().map(|k| k.chars().count()).sum::<usize>();
        }
        if totals.properties > MAX_PROPERTIES {
            return Err(refuse(
                "",
                format!(
                    "the schema has {} object properties; OpenAI's strict mode allows {MAX_PROPERTIES}",
                    totals.properties
                ),
            ));
        }
        if totals.chars > MAX_NAME_CHARS {
            return Err(refuse(
                "",
                format!(
                    "property names, definition names, enum and const values total {} characters; OpenAI's strict mode allows {MAX_NAME_CHARS}",
                    totals.chars
                ),
            ));
        }
        if totals.enum_values > MAX_ENUM_VALUES {
            return Err(refuse(
                "",
                format!(
                    "the schema has {} enum values; OpenAI's strict mode allows {MAX_ENUM_VALUES}",
                    totals.enum_values
                ),
            ));
        }
        nesting(schema, schema, &mut String::new(), &mut Vec::new(), 0, 0)
    }

    /// Properties, characters and enum values of every schema in `node` (definitions once,
    /// where they are defined).
    /// (Not guarded by depth: it walks the rewritten schema, whose depth `rewrite` has held
    /// to 64 levels over the same keywords.)
    fn count(node: &Value, at: &mut String, totals: &mut Totals) -> Result<(), StrictModeError> {
        let Value::Object(object) = node else {
            return Ok(());
        };
        if let Some(Value::Object(properties)) = object.get("properties") {
            totals.properties += properties.len();
            totals.chars += properties.keys().map(|k| k.chars().count()).sum::<usize>();
        }
        if let Some(Value::Array(values)) = object.get("enum") {
            totals.enum_values += values.len();
            let chars: usize = values.iter().map(text_len).sum();
            totals.chars += chars;
            if values.len() > LARGE_ENUM
                && values.iter().all(Value::is_string)
                && chars > LARGE_ENUM_CHARS
            {
                return Err(refuse(
                    &format!("{at}/enum"),
                    format!(
                        "a string enum of {} values totals {chars} characters; OpenAI's strict mode allows {LARGE_ENUM_CHARS} for an enum of over {LARGE_ENUM} values",
                        values.len()
                    ),
                ));
            }
        }
        if let Some(value) = object.get("const") {
            totals.chars += text_len(value);
        }
        for (key, child) in object {
            let mark = at.len();
            at.push('/');
            at.push_str(&crate::pointer::escape_token(key));
            match (key.as_str(), child) {
                ("properties" | "$defs", Value::Object(children)) => {
                    for (name, sub) in children {
                        let inner = at.len();
                        at.push('/');
                        at.push_str(&crate::pointer::escape_token(name));
                        count(sub, at, totals)?;
                        at.truncate(inner);
                    }
                }
                ("items", sub) => count(sub, at, totals)?,
                ("anyOf", Value::Array(branches)) => {
                    for (i, sub) in branches.iter().enumerate() {
                        let inner = at.len();
                        at.push_str(&format!("/{i}"));
                        count(sub, at, totals)?;
                        at.truncate(inner);
                    }
                }
                _ => {}
            }
            at.truncate(mark);
        }
        Ok(())
    }

    fn is_level(object: &serde_json::Map<String, Value>) -> bool {
        let typed = |name: &str| match object.get("type") {
            Some(Value::String(t)) => t == name,
            Some(Value::Array(types)) => types.iter().any(|t| t == name),
            _ => false,
        };
        typed("object") || typed("array") || object.contains_key("properties")
    }

    /// The nesting of data levels, following references (a definition being followed already
    /// is recursive, and counted once).
    fn nesting(
        node: &Value,
        root: &Value,
        at: &mut String,
        following: &mut Vec<String>,
        levels: usize,
        depth: usize,
    ) -> Result<(), StrictModeError> {
        if depth > 256 {
            return Err(refuse(at, "the schema nests deeper than 256 levels"));
        }
        let Value::Object(object) = node else {
            return Ok(());
        };
        // Read as the validator reads it, percent-decoded: one definition under two spellings
        // is one definition, and a recursion through both is seen.
        if let Some(Value::String(reference)) = object.get("$ref")
            && let Some(pointer) = crate::pointer::local_pointer(reference)
        {
            if following.iter().any(|seen| *seen == pointer) {
                return Ok(());
            }
            if let Some(target) = root.pointer(&pointer) {
                following.push(pointer.clone().into_owned());
                // Inside the definition, a refusal names where in the document it is.
                let mut inside = pointer.into_owned();
                let result = nesting(target, root, &mut inside, following, levels, depth + 1);
                following.pop();
                result?;
            }
        }
        let levels = if is_level(object) { levels + 1 } else { levels };
        if levels > MAX_NESTING {
            return Err(refuse(
                at,
                format!(
                    "the schema nests {levels} levels deep here; OpenAI's strict mode allows {MAX_NESTING}"
                ),
            ));
        }
        for (key, child) in object {
            let mark = at.len();
            at.push('/');
            at.push_str(&crate::pointer::escape_token(key));
            match (key.as_str(), child) {
                ("properties", Value::Object(children)) => {
                    for (name, sub) in children {
                        let inner = at.len();
                        at.push('/');
                        at.push_str(&crate::pointer::escape_token(name));
                        nesting(sub, root, at, following, levels, depth + 1)?;
                        at.truncate(inner);
                    }
                }
                ("items", sub) => nesting(sub, root, at, following, levels, depth + 1)?,
                ("anyOf", Value::Array(branches)) => {
                    for (i, sub) in branches.iter().enumerate() {
                        let inner = at.len();
                        at.push_str(&format!("/{i}"));
                        nesting(sub, root, at, following, levels, depth + 1)?;
                        at.truncate(inner);
                    }
                }
                _ => {}
            }
            at.truncate(mark);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strict(schema: Value) -> Result<Value, StrictModeError> {
        structured_output_format("t", schema).map(|f| f["json_schema"]["schema"].clone())
    }

    #[test]
    fn the_root_must_be_an_object_with_named_properties() {
        for root in [
            json!({ "type": "object" }),
            json!({ "properties": { "a": { "type": "string" } } }),
            json!({ "type": "string" }),
        ] {
            let err = strict(root.clone()).unwrap_err();
            assert_eq!(err.schema_pointer, "", "{root}");
            assert_eq!(
                err.reason, "the root must be an object with named properties",
                "{root}"
            );
        }
    }

    /// An object type given in a list (`Option` of a map) is an object too: a map is refused
    /// whether or not it may be null.
    #[test]
    fn a_nullable_map_is_refused_like_a_map() {
        for ty in [
            json!("object"),
            json!(["object", "null"]),
            json!(["null", "object"]),
        ] {
            let err = strict(json!({
                "type": "object",
                "properties": { "m": { "type": ty, "additionalProperties": { "type": "string" } } }
            }))
            .unwrap_err();
            assert_eq!(err.schema_pointer, "/properties/m", "{ty}");
            assert_eq!(err.reason, "a map has no fixed property names", "{ty}");
            let err = strict(json!({
                "type": "object",
                "properties": { "m": { "type": ty } }
            }))
            .unwrap_err();
            assert_eq!(
                err.reason, "an object without declared properties (a map?)",
                "{ty}"
            );
        }
        // A list without "object" is not an object.
        let out = strict(json!({
            "type": "object",
            "properties": { "s": { "type": ["string", "null"] } }
        }))
        .unwrap();
        assert!(out["properties"]["s"].get("additionalProperties").is_none());
    }

    /// `levels` objects, each holding the next as its required property `a`; the innermost
    /// is `inner`. An object at level k sits at depth 2k (`/properties/a` per level).
    fn chain(levels: usize, inner: Value) -> Value {
        let mut node = inner;
        for _ in 0..levels {
            node = json!({ "type": "object", "properties": { "a": node }, "required": ["a"] });
        }
        node
    }

    #[test]
    fn merging_walks_64_levels_and_refuses_the_65th() {
        // The deepest node is the empty object at depth 64: within the limit.
        let mut at_limit = chain(32, json!({}));
        assert!(
            merge_refs_with_properties(&mut at_limit, &Value::Null, &mut String::new(), 0).is_ok()
        );
        // One level more puts its `type` value at depth 65.
        let mut past = chain(32, json!({ "type": "object" }));
        let err =
            merge_refs_with_properties(&mut past, &Value::Null, &mut String::new(), 0).unwrap_err();
        assert_eq!(err.reason, "the schema nests deeper than 64 levels");
        assert_eq!(
            err.schema_pointer,
            format!("{}/type", "/properties/a".repeat(32))
        );
    }

    #[test]
    fn omittable_properties_are_found_down_to_depth_64_and_no_further() {
        let optional = |name: &str| json!({ "type": "object", "properties": { name: {} } });
        // The object with the optional property at depth 64 is looked at...
        let found = omittable_properties(&chain(32, optional("opt")));
        assert_eq!(
            found,
            [format!("{}/properties/opt", "/properties/a".repeat(32))]
        );
        // ...one at depth 66 is not.
        assert!(omittable_properties(&chain(33, optional("opt"))).is_empty());
        // Through arrays too: each item is a level.
        let mut node = optional("deep");
        for _ in 0..32 {
            node = json!({ "anyOf": [node] });
        }
        assert_eq!(
            omittable_properties(&node),
            [format!("{}/properties/deep", "/anyOf/0".repeat(32))]
        );
    }

    /// A hostile schema nested far deeper than the limit is walked only to the limit (a walk
    /// that did not count its depth would overflow the stack here).
    #[test]
    fn a_schema_nested_deeper_than_the_limit_is_not_walked_to_the_bottom() {
        // Built without `json!`, which would serialize each inner value again.
        fn object(key: &str, value: Value) -> Value {
            Value::Object(Map::from_iter([(key.to_owned(), value)]))
        }
        for wrap in [
            (|node: Value| Value::Array(vec![node])) as fn(Value) -> Value,
            |node: Value| object("anyOf", Value::Array(vec![node])),
            |node: Value| {
                let mut wrapped = object("properties", object("a", node));
                wrapped["required"] = json!(["a"]);
                wrapped
            },
        ] {
            let mut node = json!({ "properties": { "x": {} } });
            for _ in 0..20_000 {
                node = wrap(node);
            }
            let found = omittable_properties(&node);
            let merged = merge_refs_with_properties(&mut node, &Value::Null, &mut String::new(), 0);
            // Released without recursion before anything is asserted (a failed assertion
            // would otherwise drop it recursively while unwinding).
            crate::limits::dismantle(node);
            assert!(found.is_empty(), "{found:?}");
            assert_eq!(
                merged.unwrap_err().reason,
                "the schema nests deeper than 64 levels"
            );
        }
    }

    #[test]
    fn every_property_becomes_required_and_objects_close() {
        let out = strict(json!({
            "type": "object",
            "properties": { "a": { "type": "string" }, "b": { "type": ["integer", "null"], "format": "uint8", "minimum": 0 } },
            "required": ["a"]
        }))
        .unwrap();
        assert_eq!(out["required"], json!(["a", "b"]));
        assert_eq!(out["additionalProperties"], json!(false));
        assert_eq!(
            out["properties"]["b"],
            // `uint8` is not a format strict mode reads: its range stays, as `maximum`.
            json!({ "type": ["integer", "null"], "minimum": 0, "maximum": 255 })
        );
    }

    #[test]
    fn nested_definitions_are_rewritten_and_one_of_becomes_any_of() {
        let out = strict(json!({
            "type": "object",
            "properties": { "k": { "$ref": "#/$defs/K" } },
            "$defs": { "K": { "oneOf": [
                { "type": "object", "properties": { "x": { "type": "string", "minLength": 2 } } },
                { "type": "string", "const": "none" }
            ] } }
        }))
        .unwrap();
        let k = &out["$defs"]["K"];
        assert!(k.get("oneOf").is_none());
        assert_eq!(k["anyOf"][0]["required"], json!(["x"]));
        assert_eq!(
            k["anyOf"][0]["properties"]["x"],
            json!({ "type": "string" })
        );
    }

    #[test]
    fn maps_any_values_and_all_of_are_refused_with_a_pointer() {
        let map = strict(json!({ "type": "object", "properties": {
            "m": { "type": "object", "additionalProperties": { "type": "integer" } } } }));
        assert_eq!(map.unwrap_err().schema_pointer, "/properties/m");
        let any = strict(json!({ "type": "object", "properties": { "v": true } }));
        assert_eq!(any.unwrap_err().schema_pointer, "/properties/v");
        let all_of = strict(
            json!({ "type": "object", "properties": {}, "$defs": { "F": { "allOf": [] } } }),
        );
        assert_eq!(all_of.unwrap_err().schema_pointer, "/$defs/F");
    }

    #[test]
    fn a_non_object_root_is_refused() {
        let err = strict(json!({ "type": "string" })).unwrap_err();
        assert_eq!(err.schema_pointer, "");
    }

    #[test]
    fn a_ref_beside_other_keywords_is_inlined_with_them_winning() {
        let out = strict(json!({
            "type": "object",
            "properties": {
                "a": { "$ref": "#/$defs/A", "description": "the field" },
                "b": { "$ref": "#/$defs/A" }
            },
            "$defs": { "A": {
                "type": "object",
                "description": "the type",
                "properties": { "x": { "type": "string", "minLength": 1 } }
            } }
        }))
        .unwrap();
        assert_eq!(
            out["properties"]["a"],
            json!({
                "type": "object",
                "description": "the field",
                "properties": { "x": { "type": "string" } },
                "required": ["x"],
                "additionalProperties": false
            })
        );
        // A `$ref` alone stays a reference.
        assert_eq!(out["properties"]["b"], json!({ "$ref": "#/$defs/A" }));
    }

    #[test]
    fn a_recursive_ref_with_siblings_becomes_a_one_branch_any_of() {
        // The recursion written as the root's reference is, and percent-encoded (`%24` is
        // `$`): one definition under two spellings is one recursion.
        for inner in ["#/$defs/Node", "#/%24defs/Node"] {
            let out = strict(json!({
                "type": "object",
                "properties": { "root": { "$ref": "#/$defs/Node", "description": "the root" } },
                "$defs": { "Node": {
                    "type": "object",
                    "properties": { "next": { "$ref": inner, "description": "the next" } }
                } }
            }))
            .unwrap();
            let root = &out["properties"]["root"];
            assert_eq!(root["description"], "the root");
            assert_eq!(
                root["properties"]["next"],
                json!({ "anyOf": [{ "$ref": inner }], "description": "the next" })
            );
            // The definition's own recursive field, rewritten where it is defined, is wrapped
            // too.
            assert_eq!(
                out["$defs"]["Node"]["properties"]["next"],
                json!({ "anyOf": [{ "$ref": inner }], "description": "the next" })
            );
        }
        // A reference nobody defines is refused where it is.
        let err = strict(json!({
            "type": "object",
            "properties": { "a": { "$ref": "#/$defs/Gone", "description": "x" } }
        }))
        .unwrap_err();
        assert_eq!(err.schema_pointer, "/properties/a");
    }

    #[test]
    fn references_are_read_as_the_validator_reads_them() {
        // Percent-encoded (`%24` is `$`), and a definition named with a `/` (`~1`).
        let out = strict(json!({
            "type": "object",
            "properties": {
                "a": { "$ref": "#/%24defs/A", "description": "the a" },
                "s": { "$ref": "#/$defs/s~1t", "description": "the s" },
                "t": { "$ref": "#/$defs/s%7E1t", "description": "the t" }
            },
            "$defs": {
                "A": { "type": "object", "properties": { "x": { "type": "string" } } },
                "s/t": { "type": "string" }
            }
        }))
        .unwrap();
        assert_eq!(out["properties"]["a"]["description"], "the a");
        assert_eq!(out["properties"]["a"]["required"], json!(["x"]));
        assert_eq!(
            out["properties"]["s"],
            json!({ "type": "string", "description": "the s" })
        );
        assert_eq!(
            out["properties"]["t"],
            json!({ "type": "string", "description": "the t" })
        );
        // A recursion through two spellings of one definition: see
        // `a_recursive_ref_with_siblings_becomes_a_one_branch_any_of`.
        // A `$ref` beside `properties` (an internally tagged newtype variant) the same way.
        let out = strict(json!({
            "type": "object",
            "properties": { "v": {
                "$ref": "#/%24defs/In",
                "properties": { "tag": { "type": "string" } }
            } },
            "$defs": { "In": { "type": "object", "properties": { "x": { "type": "string" } } } }
        }))
        .unwrap();
        assert_eq!(out["properties"]["v"]["required"], json!(["tag", "x"]));
        // OpenAI's nesting limit follows an encoded reference too: see
        // `openai_limits_on_nesting_hold_at_ten_levels_and_refuse_the_eleventh`.
    }

    fn reporting(schema: Value) -> Vec<(String, String)> {
        let mut relaxed = Vec::new();
        structured_output_format_reporting("t", schema, &mut relaxed).unwrap();
        relaxed
            .into_iter()
            .map(|r| (r.pointer, r.keyword))
            .collect()
    }

    #[test]
    fn each_narrowing_keyword_left_out_is_reported_once_where_it_is() {
        let relaxed = reporting(json!({
            "type": "object",
            "properties": {
                "s": { "type": "string", "minLength": 1, "default": "a", "format": "uri" },
                "n": { "type": "integer", "format": "uint8", "minimum": 0 },
                "a": { "$ref": "#/$defs/A", "description": "inlined: its keywords are reported at the definition" }
            },
            "$defs": { "A": { "type": "array", "items": { "type": "string" }, "uniqueItems": true } }
        }));
        assert_eq!(
            relaxed,
            [
                ("/properties/s".to_owned(), "minLength".to_owned()),
                ("/properties/s".to_owned(), "format".to_owned()),
                ("/$defs/A".to_owned(), "uniqueItems".to_owned()),
            ]
        );
    }

    /// One object holding `count` string properties.
    fn wide(count: usize) -> Value {
        let properties: Map<String, Value> = (0..count)
            .map(|i| (format!("p{i}"), json!({ "type": "string" })))
            .collect();
        json!({ "type": "object", "properties": properties })
    }

    #[test]
    fn openai_limits_on_properties_hold_at_the_limit_and_refuse_past_it() {
        assert!(strict(wide(limits::MAX_PROPERTIES)).is_ok());
        let err = strict(wide(limits::MAX_PROPERTIES + 1)).unwrap_err();
        assert_eq!(err.schema_pointer, "");
        assert!(err.reason.contains("5001 object properties"), "{err}");
    }

    #[test]
    fn openai_limits_on_nesting_hold_at_ten_levels_and_refuse_the_eleventh() {
        // `chain(n)` holds n objects, one in another: n levels.
        assert!(strict(chain(limits::MAX_NESTING, json!({ "type": "string" }))).is_ok());
        let err = strict(chain(limits::MAX_NESTING + 1, json!({ "type": "string" }))).unwrap_err();
        assert_eq!(
            err.schema_pointer,
            "/properties/a".repeat(limits::MAX_NESTING)
        );
        assert!(err.reason.contains("11 levels"), "{err}");
        // A nullable string (a type list naming neither `object` nor `array`) is not a level.
        assert!(
            strict(chain(
                limits::MAX_NESTING,
                json!({ "type": ["string", "null"] })
            ))
            .is_ok()
        );
        // An array is a level too, and a reference is followed.
        let through = json!({
            "type": "object",
            "properties": { "list": { "type": "array", "items": { "$ref": "#/$defs/Deep" } } },
            "$defs": { "Deep": chain(limits::MAX_NESTING - 2, json!({ "type": "string" })) }
        });
        assert!(strict(through).is_ok());
        // Refused inside the definition, named where it is written; a reference written
        // percent-encoded is followed as the validator follows it, and the refusal names a
        // pointer (decoded), not the URI fragment.
        for reference in ["#/$defs/Deep", "#/%24defs/D%65ep"] {
            let too_deep = json!({
                "type": "object",
                "properties": { "list": { "type": "array", "items": { "$ref": reference } } },
                "$defs": { "Deep": chain(limits::MAX_NESTING - 1, json!({ "type": "string" })) }
            });
            let err = strict(too_deep).unwrap_err();
            assert_eq!(
                err.schema_pointer,
                format!(
                    "/$defs/Deep{}",
                    "/properties/a".repeat(limits::MAX_NESTING - 2)
                ),
                "{reference}"
            );
        }
        // A recursive type is counted once through its recursion.
        let recursive = json!({
            "type": "object",
            "properties": { "children": { "type": "array", "items": { "$ref": "#/$defs/Node" } } },
            "$defs": { "Node": { "type": "object", "properties": {
                "children": { "type": "array", "items": { "$ref": "#/$defs/Node" } } } } }
        });
        assert!(strict(recursive).is_ok());
    }

    fn with_enum(values: Vec<Value>) -> Value {
        json!({ "type": "object", "properties": { "e": { "enum": values } } })
    }

    #[test]
    fn openai_limits_on_enums_hold_at_the_limit_and_refuse_past_it() {
        let numbers = |n: usize| (0..n).map(|i| json!(i)).collect::<Vec<_>>();
        assert!(strict(with_enum(numbers(limits::MAX_ENUM_VALUES))).is_ok());
        let err = strict(with_enum(numbers(limits::MAX_ENUM_VALUES + 1))).unwrap_err();
        assert!(err.reason.contains("1001 enum values"), "{err}");

        // 251 strings of 60 characters: 15,060 characters, over the large enum's budget;
        // 251 of 59 (14,809) and 250 of 61 (15,250, not over 250 values) are accepted.
        let strings = |n: usize, len: usize| {
            (0..n)
                .map(|i| json!(format!("{i:0>len$}")))
                .collect::<Vec<_>>()
        };
        let err = strict(with_enum(strings(251, 60))).unwrap_err();
        assert_eq!(err.schema_pointer, "/properties/e/enum");
        assert!(strict(with_enum(strings(251, 59))).is_ok());
        assert!(strict(with_enum(strings(250, 61))).is_ok());
    }

    #[test]
    fn openai_limits_on_name_characters_hold_at_the_limit_and_refuse_past_it() {
        // One property whose name fills the budget (with the enum value `x`).
        let named = |len: usize| {
            let mut properties = Map::new();
            properties.insert("n".repeat(len), json!({ "enum": ["x"] }));
            json!({ "type": "object", "properties": properties })
        };
        assert!(strict(named(limits::MAX_NAME_CHARS - 1)).is_ok());
        let err = strict(named(limits::MAX_NAME_CHARS)).unwrap_err();
        assert!(err.reason.contains("120001 characters"), "{err}");
    }

    #[test]
    fn arrays_and_branches_of_objects_are_closed_too() {
        let out = strict(json!({
            "type": "object",
            "properties": {
                "list": { "type": "array", "items": { "type": "object", "properties": { "a": { "type": "string" } } } },
                "either": { "anyOf": [ { "type": "object", "properties": { "b": { "type": "integer" } } }, { "type": "null" } ] }
            }
        }))
        .unwrap();
        let item = &out["properties"]["list"]["items"];
        assert_eq!(
            (&item["required"], &item["additionalProperties"]),
            (&json!(["a"]), &json!(false))
        );
        let branch = &out["properties"]["either"]["anyOf"][0];
        assert_eq!(
            (&branch["required"], &branch["additionalProperties"]),
            (&json!(["b"]), &json!(false))
        );
    }

    #[test]
    fn keywords_beside_a_ref_are_reported_where_they_were_written() {
        let relaxed = reporting(json!({
            "type": "object",
            "properties": {
                "a": { "$ref": "#/$defs/A", "minLength": 3, "description": "narrowed here" },
                "b": { "$ref": "#/$defs/A", "description": "not narrowed" }
            },
            "$defs": { "A": { "type": "string", "maxLength": 9 } }
        }));
        assert_eq!(
            relaxed,
            [
                ("/properties/a".to_owned(), "minLength".to_owned()),
                ("/$defs/A".to_owned(), "maxLength".to_owned()),
            ]
        );
    }

    /// A definition whose property `next` refers, beside a description, to the next one:
    /// `links` definitions, each inlined into the one before. `via` places the reference:
    /// the property itself, an array's items, or an `anyOf` branch.
    fn linked(links: usize, via: &str) -> Value {
        let refer = |i: usize| json!({ "$ref": format!("#/$defs/D{i}"), "description": "next" });
        let next = |i: usize| match via {
            "items" => json!({ "type": "array", "items": refer(i) }),
            "anyOf" => json!({ "anyOf": [refer(i)] }),
            _ => refer(i),
        };
        let mut defs = Map::new();
        for i in 1..=links {
            let mut properties = Map::new();
            properties.insert("leaf".into(), json!({ "type": "string" }));
            if i < links {
                properties.insert("next".into(), next(i + 1));
            }
            defs.insert(
                format!("D{i}"),
                json!({ "type": "object", "properties": properties }),
            );
        }
        json!({ "type": "object", "properties": { "next": next(1) }, "$defs": defs })
    }

    /// The rewrite stops at 64 levels wherever the levels come from, inlined definitions
    /// included (a chain of them is as deep as it is long, though each definition is shallow).
    /// Past the levels of a linked definition (two by a property, three by items or a branch:
    /// the node holding the reference, the inlined copy, and the items or branch between), the
    /// deepest node of `k` links is the last definition's `leaf`: at `2k + 1` by properties,
    /// `3k + 1` otherwise. At 64 the rewrite goes on (and OpenAI's 10 levels refuse it); at 65
    /// it stops.
    #[test]
    fn the_rewrite_stops_at_64_levels_through_inlined_definitions_too() {
        for (via, within, past) in [("property", 31, 32), ("items", 21, 22), ("anyOf", 21, 22)] {
            let err = strict(linked(within, via)).unwrap_err();
            assert!(err.reason.contains("allows 10"), "{via} {within}: {err}");
            let err = strict(linked(past, via)).unwrap_err();
            assert_eq!(
                err.reason, "the schema nests deeper than 64 levels",
                "{via} {past}"
            );
        }
    }

    #[test]
    fn properties_and_enum_values_count_inside_items_and_branches() {
        let object = |count: usize, prefix: &str| {
            let properties: Map<String, Value> = (0..count)
                .map(|i| (format!("{prefix}{i}"), json!({ "type": "string" })))
                .collect();
            json!({ "type": "object", "properties": properties })
        };
        let split = |items: usize, branch: usize| {
            json!({ "type": "object", "properties": {
                "list": { "type": "array", "items": object(items, "i") },
                "either": { "anyOf": [object(branch, "b"), { "type": "null" }] }
            } })
        };
        // Two named at the root, the rest in the items and the branch: 5,000 in all, then 5,001.
        assert!(strict(split(2_600, limits::MAX_PROPERTIES - 2 - 2_600)).is_ok());
        let err = strict(split(2_600, limits::MAX_PROPERTIES - 2 - 2_599)).unwrap_err();
        assert!(err.reason.contains("5001 object properties"), "{err}");
        let values = |n: usize| (0..n).map(|i| json!(i)).collect::<Vec<_>>();
        let enums = |n: usize| {
            json!({ "type": "object", "properties": {
                "list": { "type": "array", "items": { "enum": values(600) } },
                "either": { "anyOf": [{ "enum": values(n) }] }
            } })
        };
        assert!(strict(enums(400)).is_ok());
        assert!(strict(enums(401)).is_err());
    }

    #[test]
    fn definition_names_and_const_values_count_toward_the_characters() {
        // One property `p` (1 character) and a definition named with the rest of the budget.
        let named_def = |len: usize| {
            let mut defs = Map::new();
            defs.insert("d".repeat(len), json!({ "type": "string" }));
            json!({ "type": "object", "properties": { "p": { "type": "string" } }, "$defs": defs })
        };
        assert!(strict(named_def(limits::MAX_NAME_CHARS - 1)).is_ok());
        assert!(strict(named_def(limits::MAX_NAME_CHARS)).is_err());
        let with_const = |len: usize| json!({ "type": "object", "properties": { "c": { "const": "x".repeat(len) } } });
        assert!(strict(with_const(limits::MAX_NAME_CHARS - 1)).is_ok());
        assert!(strict(with_const(limits::MAX_NAME_CHARS)).is_err());
    }

    #[test]
    fn a_large_string_enum_may_total_exactly_its_budget() {
        // 251 values: 250 of 60 characters and an empty one, 15,000 in all; then one more.
        let enum_of = |last: &str| {
            let mut values: Vec<Value> = (0..250).map(|i| json!(format!("{i:0>60}"))).collect();
            values.push(json!(last));
            json!({ "type": "object", "properties": { "e": { "enum": values } } })
        };
        assert!(strict(enum_of("")).is_ok());
        assert_eq!(
            strict(enum_of("x")).unwrap_err().schema_pointer,
            "/properties/e/enum"
        );
    }

    #[test]
    fn nullable_objects_and_branches_are_levels_of_nesting() {
        // `levels` objects, each nullable (a type list) and reached through an `anyOf` branch.
        let nested = |levels: usize| {
            let mut node = json!({ "type": "string" });
            for _ in 0..levels {
                node = json!({ "anyOf": [{ "type": ["object", "null"], "properties": { "a": node } }] });
            }
            json!({ "type": "object", "properties": { "root": node } })
        };
        assert!(strict(nested(limits::MAX_NESTING - 1)).is_ok());
        let err = strict(nested(limits::MAX_NESTING)).unwrap_err();
        assert!(err.reason.contains("11 levels"), "{err}");
        // Nullable arrays (a type list without `properties`) are levels too.
        let arrays = |levels: usize| {
            let mut node = json!({ "type": "string" });
            for _ in 0..levels {
                node = json!({ "type": ["array", "null"], "items": node });
            }
            json!({ "type": "object", "properties": { "root": node } })
        };
        assert!(strict(arrays(limits::MAX_NESTING - 1)).is_ok());
        assert!(strict(arrays(limits::MAX_NESTING)).is_err());
    }

    /// References to references, none of them a level: followed, but not forever (a chain of
    /// ten thousand would overflow the stack of a walk that did not count them). Each
    /// definition `R{i}` refers to the next directly, through a typeless `items` or through a
    /// one-branch `anyOf` (neither a level). The root is at depth 0, `/properties/r` at 1 and
    /// `R0` at 2; each link is one step deeper directly, two through `items` or a branch. So
    /// 255 direct links (128 of the others) put the last definition at depth 256, the deepest
    /// walked, and one link more goes past it, refused inside the definition that does.
    #[test]
    fn a_long_chain_of_references_is_refused_not_followed_to_the_bottom() {
        let chain = |links: usize, via: &str| {
            let mut defs = Map::new();
            for i in 0..links {
                let refer = json!({ "$ref": format!("#/$defs/R{}", i + 1) });
                let next = match via {
                    _ if i + 1 == links => json!({ "type": "string" }),
                    "items" => json!({ "items": refer }),
                    "anyOf" => json!({ "anyOf": [refer] }),
                    _ => refer,
                };
                defs.insert(format!("R{i}"), next);
            }
            json!({ "type": "object", "properties": { "r": { "$ref": "#/$defs/R0" } }, "$defs": defs })
        };
        // Each way, the longest chain walked, and where one link more is refused: the next
        // definition, or the step into the next link.
        for (via, within, past) in [
            ("$ref", 255, "/$defs/R255"),
            ("items", 128, "/$defs/R127/items"),
            ("anyOf", 128, "/$defs/R127/anyOf/0"),
        ] {
            assert!(strict(chain(within, via)).is_ok(), "{via} {within}");
            for links in [within + 1, 10_000] {
                let err = strict(chain(links, via)).unwrap_err();
                assert_eq!(
                    err.reason, "the schema nests deeper than 256 levels",
                    "{via} {links}"
                );
                assert_eq!(err.schema_pointer, past, "{via} {links}");
            }
        }
    }
}
