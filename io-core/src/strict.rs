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
//!   dropped rather than refused; formats outside the supported list are dropped too.
//! - What strict mode cannot say at all (maps, `serde_json::Value`, `allOf`, a non-object
//!   root) is a [`StrictModeError`] naming where in the schema it sits.

use std::fmt;

use serde_json::{Map, Value, json};

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
    mut schema: Value,
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
    rewrite(&mut schema, &mut String::new())?;
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
                        crate::schema::escape_pointer_token(name)
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
            at.push_str(&crate::schema::escape_pointer_token(key));
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
                let target = reference
                    .strip_prefix("#/$defs/")
                    .and_then(|name| defs.get(name))
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
                at.push_str(&crate::schema::escape_pointer_token(key));
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

fn rewrite(schema: &mut Value, at: &mut String) -> Result<(), StrictModeError> {
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
        node.remove(*keyword);
    }
    if node
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| !SUPPORTED_FORMATS.contains(&f))
    {
        node.remove("format");
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
        at.push_str(&crate::schema::escape_pointer_token(keyword));
        match keyword.as_str() {
            "properties" | "$defs" | "definitions" => {
                if let Value::Object(children) = child {
                    for (name, sub) in children.iter_mut() {
                        let inner = at.len();
                        at.push('/');
                        at.push_str(&crate::schema::escape_pointer_token(name));
                        rewrite(sub, at)?;
                        at.truncate(inner);
                    }
                }
            }
            "items" | "additionalItems" => rewrite(child, at)?,
            "anyOf" | "prefixItems" => {
                if let Value::Array(children) = child {
                    for (i, sub) in children.iter_mut().enumerate() {
                        let inner = at.len();
                        at.push('/');
                        at.push_str(&i.to_string());
                        rewrite(sub, at)?;
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
            json!({ "type": ["integer", "null"], "minimum": 0 })
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
}
