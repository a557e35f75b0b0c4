//! Schema profiles: one canonical Draft 2020-12 schema, rewritten for each client that reads
//! it — OpenAI strict mode, Anthropic, Gemini's OpenAPI subset, MCP, a fully inlined form and
//! Draft-07 for older validators.
//!
//! Each profile returns the rewritten schema or every [`Refusal`] with a JSON pointer into the
//! canonical schema; nothing panics, and nothing changes meaning in silence: a construct a
//! client cannot express is refused. Keywords a client ignores or does not accept but that only
//! *narrow* the accepted values (`exclusiveMinimum` for Gemini, say) are dropped from what the
//! client is shown, because the runtime keeps validating against the canonical schema: a value
//! the narrower rule refuses is still refused, with its pointer, at the boundary. Each such
//! keyword is reported as a [`Relaxation`] (pointer and keyword) by [`apply_reporting`],
//! `BoundarySchema::relaxations` and `ToolRegistry::export_report`.
//!
//! ```
//! use agentio_core::profiles::{Profile, apply};
//! use serde_json::json;
//!
//! let schema = json!({
//!     "$schema": "https://json-schema.org/draft/2020-12/schema",
//!     "title": "Ask",
//!     "type": "object",
//!     "properties": {
//!         "q": { "type": "string" },
//!         "limit": { "type": ["integer", "null"], "format": "uint8", "minimum": 0, "maximum": 255 }
//!     },
//!     "required": ["q"]
//! });
//! let gemini = apply(Profile::Gemini, &schema).unwrap();
//! assert_eq!(gemini["properties"]["limit"], json!({ "type": "INTEGER", "nullable": true, "minimum": 0, "maximum": 255 }));
//! assert!(gemini.get("$schema").is_none());
//! let canonical = apply(Profile::Canonical, &schema).unwrap();
//! assert!(canonical.get("title").is_none());
//! ```

use serde_json::{Map, Value, json};

use crate::formats;
use crate::pointer::push_token;
use crate::report::left_out;

/// A client's reading of JSON Schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Profile {
    /// Draft 2020-12 as generated, without the root `title` (the Rust type's name, which some
    /// clients show or choke on).
    Canonical,
    /// OpenAI strict mode (function tools with `strict: true`, `response_format`): every object
    /// closed, every property required (optionals nullable), `oneOf` as `anyOf`, unsupported
    /// keywords dropped, what cannot be said refused.
    OpenAiStrict,
    /// Anthropic `input_schema`: canonical, with an object root.
    Anthropic,
    /// Gemini `FunctionDeclaration.parameters`: the OpenAPI 3.0 subset (`$ref`s inlined, type
    /// arrays as `nullable`, `oneOf` as `anyOf`, only the accepted keywords, no Rust integer
    /// `format`s), with types in the proto's upper-case spelling (`STRING`, `OBJECT`, ...).
    Gemini,
    /// MCP `inputSchema` / `outputSchema`: canonical, with an object root, and every
    /// `x-mcp-header` one a client can use (SEP-2243: on a property reached through
    /// `properties` alone, of one primitive type, a unique RFC 9110 token; a client excludes
    /// a tool that breaks a rule, so the profile refuses it, naming the property).
    Mcp,
    /// Every `$ref` inlined, no `$defs` (recursive types are refused).
    Inlined,
    /// Draft-07 for older validators (`definitions`, array-form `items` for tuples).
    Draft07,
}

impl Profile {
    /// Every profile, in a fixed order.
    pub const ALL: [Profile; 7] = [
        Profile::Canonical,
        Profile::OpenAiStrict,
        Profile::Anthropic,
        Profile::Gemini,
        Profile::Mcp,
        Profile::Inlined,
        Profile::Draft07,
    ];

    pub(crate) fn index(self) -> usize {
        match self {
            Profile::Canonical => 0,
            Profile::OpenAiStrict => 1,
            Profile::Anthropic => 2,
            Profile::Gemini => 3,
            Profile::Mcp => 4,
            Profile::Inlined => 5,
            Profile::Draft07 => 6,
        }
    }
}

pub use crate::report::{Refusal, Relaxation};

/// How deep a schema may nest before a profile refuses it (a guard against hostile schemas;
/// generated schemas are far shallower).
const MAX_SCHEMA_DEPTH: usize = 64;

/// `schema` in `profile`'s form, or every refusal.
pub fn apply(profile: Profile, schema: &Value) -> Result<Value, Vec<Refusal>> {
    apply_reporting(profile, schema).map(|(schema, _)| schema)
}

/// [`apply`], with every keyword the form leaves out ([`Relaxation`]s, in schema order): what
/// the client is not told and the boundary still checks.
///
/// ```
/// use agentio_core::profiles::{Profile, apply_reporting};
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": { "tags": { "type": "array", "items": { "type": "string" }, "uniqueItems": true } },
///     "additionalProperties": false
/// });
/// let (_, relaxed) = apply_reporting(Profile::Gemini, &schema).unwrap();
/// let said: Vec<String> = relaxed.iter().map(|r| format!("{} {}", r.pointer, r.keyword)).collect();
/// assert_eq!(said, ["/properties/tags uniqueItems", " additionalProperties"]);
/// let (_, relaxed) = apply_reporting(Profile::Mcp, &schema).unwrap();
/// assert!(relaxed.is_empty());
/// ```
pub fn apply_reporting(
    profile: Profile,
    schema: &Value,
) -> Result<(Value, Vec<Relaxation>), Vec<Refusal>> {
    let mut relaxed = Vec::new();
    let schema = match profile {
        Profile::Canonical => canonical(schema),
        Profile::OpenAiStrict => {
            let name = "schema";
            crate::strict::structured_output_format_reporting(name, canonical(schema), &mut relaxed)
                .map(|format| format["json_schema"]["schema"].clone())
                .map_err(|err| {
                    vec![Refusal {
                        pointer: err.schema_pointer,
                        reason: err.reason,
                    }]
                })?
        }
        Profile::Anthropic | Profile::Mcp => {
            object_root(schema)?;
            if profile == Profile::Mcp {
                // A tool whose headers a client cannot use is excluded by every client.
                let refusals = crate::headers::refusals(schema);
                if !refusals.is_empty() {
                    return Err(refusals);
                }
            }
            let keep = |format: &str| formats::STANDARD.contains(&format);
            canonical(&formats::drop_formats(
                schema,
                &keep,
                &mut String::new(),
                0,
                MAX_SCHEMA_DEPTH,
                &mut |at, format| left_out(&mut relaxed, at, "format", format),
            ))
        }
        Profile::Inlined => inline(schema)?,
        Profile::Gemini => {
            let inlined = inline(schema)?;
            object_root(&inlined)?;
            // Gemini takes any `format` (most do nothing), so only schemars' Rust number
            // formats go, their range kept.
            let keep = |format: &str| !RUST_FORMATS.contains(&format);
            let inlined = formats::drop_formats(
                &inlined,
                &keep,
                &mut String::new(),
                0,
                MAX_SCHEMA_DEPTH,
                &mut |at, format| left_out(&mut relaxed, at, "format", format),
            );
            let mut refusals = Vec::new();
            let mut out = gemini(&inlined, &mut String::new(), 0, &mut refusals, &mut relaxed);
            if let Some(object) = out.as_object_mut() {
                object.remove("title");
            }
            if !refusals.is_empty() {
                return Err(refusals);
            }
            out
        }
        Profile::Draft07 => draft07(schema)?,
    };
    Ok((schema, relaxed))
}

fn canonical(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Some(object) = schema.as_object_mut() {
        object.remove("title");
    }
    schema
}

fn object_root(schema: &Value) -> Result<(), Vec<Refusal>> {
    let root_type = schema.get("type");
    let is_object = root_type == Some(&json!("object"))
        || root_type
            .and_then(Value::as_array)
            .is_some_and(|types| types.len() == 1 && types[0] == "object");
    if is_object {
        Ok(())
    } else {
        Err(vec![Refusal {
            pointer: String::new(),
            reason: "tool arguments are a JSON object, so the root schema must be `\"type\": \"object\"`".into(),
        }])
    }
}

/// Every local `$ref` replaced by what it names; `$defs` dropped. A recursive reference is
/// refused (an inlined schema would be infinite).
fn inline(schema: &Value) -> Result<Value, Vec<Refusal>> {
    let mut refusals = Vec::new();
    let mut stack = Vec::new();
    let mut out = inline_at(
        schema,
        schema,
        &mut String::new(),
        &mut stack,
        0,
        &mut refusals,
    );
    if let Some(object) = out.as_object_mut() {
        object.remove("$defs");
        object.remove("definitions");
    }
    if refusals.is_empty() {
        Ok(out)
    } else {
        Err(refusals)
    }
}

fn inline_at(
    node: &Value,
    root: &Value,
    at: &mut String,
    stack: &mut Vec<String>,
    depth: usize,
    refusals: &mut Vec<Refusal>,
) -> Value {
    if depth > MAX_SCHEMA_DEPTH {
        refusals.push(Refusal {
            pointer: at.clone(),
            reason: format!("the schema nests deeper than {MAX_SCHEMA_DEPTH} levels"),
        });
        return Value::Bool(true);
    }
    let Some(object) = node.as_object() else {
        return node.clone();
    };
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        // Read as the validator reads it: percent-decoded, so that one definition under two
        // spellings is one definition (and a recursion through both is seen).
        let Some((pointer, target)) =
            crate::pointer::local_pointer(reference).and_then(|pointer| {
                let target = root.pointer(&pointer)?;
                Some((pointer, target))
            })
        else {
            refusals.push(Refusal {
                pointer: at.clone(),
                reason: format!("`$ref: {reference}` is not a local reference this schema defines"),
            });
            return Value::Bool(true);
        };
        if stack.iter().any(|seen| *seen == pointer) {
            refusals.push(Refusal {
                pointer: at.clone(),
                reason: format!(
                    "`{reference}` refers to itself (a recursive type), which cannot be inlined"
                ),
            });
            return Value::Bool(true);
        }
        stack.push(pointer.into_owned());
        let mut inlined = inline_at(target, root, at, stack, depth + 1, refusals);
        stack.pop();
        // Keys beside `$ref` (a field's description, say) apply too; they win over the
        // definition's annotations.
        if let Some(target) = inlined.as_object_mut() {
            for (key, value) in object {
                if key != "$ref" {
                    let mut key_at = at.clone();
                    push_token(&mut key_at, key);
                    let value = inline_at(value, root, &mut key_at, stack, depth + 1, refusals);
                    target.insert(key.clone(), value);
                }
            }
        }
        return inlined;
    }
    let mut out = Map::new();
    for (key, value) in object {
        if key == "$defs" || key == "definitions" {
            continue;
        }
        let mark = at.len();
        push_token(at, key);
        let value = match (key.as_str(), value) {
            // Maps of schemas: each entry is a schema.
            ("properties" | "patternProperties" | "dependentSchemas", Value::Object(entries)) => {
                let mut mapped = Map::new();
                for (name, schema) in entries {
                    let mark = at.len();
                    push_token(at, name);
                    mapped.insert(
                        name.clone(),
                        inline_at(schema, root, at, stack, depth + 1, refusals),
                    );
                    at.truncate(mark);
                }
                Value::Object(mapped)
            }
            // Lists of schemas.
            ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(items)) => Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, schema)| {
                        let mark = at.len();
                        at.push_str(&format!("/{i}"));
                        let out = inline_at(schema, root, at, stack, depth + 1, refusals);
                        at.truncate(mark);
                        out
                    })
                    .collect(),
            ),
            // Single schemas.
            (
                "items"
                | "additionalProperties"
                | "not"
                | "if"
                | "then"
                | "else"
                | "contains"
                | "propertyNames"
                | "unevaluatedProperties"
                | "unevaluatedItems",
                schema,
            ) => inline_at(schema, root, at, stack, depth + 1, refusals),
            // Values (`enum`, `const`, `default`, `examples`, ...) are data, not schemas.
            (_, value) => value.clone(),
        };
        at.truncate(mark);
        out.insert(key.clone(), value);
    }
    Value::Object(out)
}

/// The keys Gemini's `Schema` message accepts.
const GEMINI_KEYS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "items",
    "minItems",
    "maxItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
];

/// Rust numeric formats schemars writes; they mean nothing to Gemini.
const RUST_FORMATS: &[&str] = &[
    "int8", "int16", "int32", "int64", "int128", "uint8", "uint16", "uint32", "uint64", "uint128",
    "uint", "int", "float", "double",
];

/// Keywords that change which values are valid in a way Gemini cannot express: refused, not
/// dropped.
const GEMINI_REFUSED: &[(&str, &str)] = &[
    ("allOf", "`allOf` (Gemini's schema has no intersection)"),
    ("not", "`not` (Gemini's schema has no negation)"),
    (
        "if",
        "`if`/`then`/`else` (Gemini's schema has no conditionals)",
    ),
    (
        "prefixItems",
        "a tuple (`prefixItems`): Gemini's arrays have one item schema",
    ),
];

fn gemini(
    node: &Value,
    at: &mut String,
    depth: usize,
    refusals: &mut Vec<Refusal>,
    relaxed: &mut Vec<Relaxation>,
) -> Value {
    let refuse = |refusals: &mut Vec<Refusal>, at: &String, reason: String| {
        refusals.push(Refusal {
            pointer: at.clone(),
            reason,
        });
    };
    if depth > MAX_SCHEMA_DEPTH {
        refuse(
            refusals,
            at,
            format!("the schema nests deeper than {MAX_SCHEMA_DEPTH} levels"),
        );
        return json!({});
    }
    let Some(object) = node.as_object() else {
        refuse(
            refusals,
            at,
            if node == &Value::Bool(false) {
                "`false` (no value) has no Gemini form".into()
            } else {
                "a schema that accepts any value (a `serde_json::Value` field, say): Gemini needs a `type`".into()
            },
        );
        return json!({});
    };
    let refused_before = refusals.len();
    for (keyword, what) in GEMINI_REFUSED {
        if object.contains_key(*keyword) {
            let mut here = at.clone();
            push_token(&mut here, keyword);
            refuse(refusals, &here, format!("{what} cannot be expressed"));
        }
    }
    let mut out = Map::new();
    let mut nullable = false;
    // `type`: one value; `null` among several becomes `nullable`.
    match object.get("type") {
        Some(Value::String(t)) if t == "null" => {
            refuse(
                refusals,
                at,
                "a schema whose only type is `null` has no Gemini form".into(),
            );
        }
        Some(Value::String(t)) => {
            out.insert("type".into(), json!(t.to_uppercase()));
        }
        Some(Value::Array(types)) => {
            let named: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
            nullable = named.contains(&"null");
            let rest: Vec<&str> = named.into_iter().filter(|t| *t != "null").collect();
            match rest.as_slice() {
                [one] => {
                    out.insert("type".into(), json!(one.to_uppercase()));
                }
                [] => refuse(
                    refusals,
                    at,
                    "a schema whose only type is `null` has no Gemini form".into(),
                ),
                several => {
                    out.insert(
                        "anyOf".into(),
                        Value::Array(
                            several
                                .iter()
                                .map(|t| json!({ "type": t.to_uppercase() }))
                                .collect(),
                        ),
                    );
                }
            }
        }
        _ => {}
    }
    // `const` and `enum`: Gemini's enum is a list of strings.
    let listed = object
        .get("enum")
        .cloned()
        .or_else(|| object.get("const").map(|c| json!([c])));
    if let Some(Value::Array(values)) = listed {
        let strings: Vec<&Value> = values.iter().filter(|v| !v.is_null()).collect();
        nullable |= strings.len() < values.len();
        if strings.iter().all(|v| v.is_string()) {
            out.insert(
                "enum".into(),
                Value::Array(strings.into_iter().cloned().collect()),
            );
            out.entry("type").or_insert_with(|| json!("STRING"));
        } else {
            let mut here = at.clone();
            push_token(
                &mut here,
                if object.contains_key("enum") {
                    "enum"
                } else {
                    "const"
                },
            );
            refuse(refusals, &here, "Gemini's `enum` lists strings only".into());
        }
    }
    // `anyOf` / `oneOf`: one list of branches; a `null` branch becomes `nullable`.
    for union in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = object.get(union) {
            let mut converted = Vec::new();
            for (i, branch) in branches.iter().enumerate() {
                if branch.get("type") == Some(&json!("null"))
                    && branch.as_object().is_some_and(|b| b.len() == 1)
                {
                    nullable = true;
                    continue;
                }
                let mark = at.len();
                push_token(at, union);
                at.push_str(&format!("/{i}"));
                converted.push(gemini(branch, at, depth + 1, refusals, relaxed));
                at.truncate(mark);
            }
            match converted.len() {
                0 => {}
                // A single branch left (an `Option<T>`): it is the schema.
                1 if !out.contains_key("type") => {
                    if let Value::Object(only) = converted.remove(0) {
                        for (key, value) in only {
                            out.entry(key).or_insert(value);
                        }
                    }
                }
                _ => {
                    out.insert("anyOf".into(), Value::Array(converted));
                }
            }
        }
    }
    for (key, value) in object {
        if matches!(key.as_str(), "type" | "enum" | "const" | "anyOf" | "oneOf") {
            continue;
        }
        if !GEMINI_KEYS.contains(&key.as_str()) {
            // Unsupported: dropped from what Gemini sees; the boundary still checks it.
            left_out(relaxed, at, key, value);
            continue;
        }
        let mark = at.len();
        push_token(at, key);
        let converted = match (key.as_str(), value) {
            ("properties", Value::Object(properties)) => {
                let mut mapped = Map::new();
                for (name, schema) in properties {
                    let mark = at.len();
                    push_token(at, name);
                    mapped.insert(
                        name.clone(),
                        gemini(schema, at, depth + 1, refusals, relaxed),
                    );
                    at.truncate(mark);
                }
                Some(Value::Object(mapped))
            }
            ("items", Value::Bool(false)) => None,
            ("items", schema) => Some(gemini(schema, at, depth + 1, refusals, relaxed)),
            (_, value) => Some(value.clone()),
        };
        at.truncate(mark);
        if let Some(converted) = converted {
            out.insert(key.clone(), converted);
        }
    }
    if nullable {
        out.insert("nullable".into(), json!(true));
    }
    // Gemini's schema needs a `type` beside `anyOf` too: the branches' one type.
    if !out.contains_key("type")
        && let Some(Value::Array(branches)) = out.get("anyOf")
    {
        let types: Vec<Option<&Value>> = branches.iter().map(|b| b.get("type")).collect();
        match types.first() {
            Some(Some(first)) if types.iter().all(|t| *t == Some(*first)) => {
                let first = (*first).clone();
                out.insert("type".into(), first);
            }
            _ => {
                let mut here = at.clone();
                push_token(&mut here, "anyOf");
                refuse(
                    refusals,
                    &here,
                    "a union of different types: Gemini's schema needs one `type` for all its branches".into(),
                );
            }
        }
    }
    let refused_here = refusals[refused_before..]
        .iter()
        .any(|r| r.pointer == *at || r.pointer.starts_with(&format!("{at}/")));
    if !out.contains_key("type") && !out.contains_key("anyOf") && !refused_here {
        refuse(
            refusals,
            at,
            "a schema without a `type` (it accepts any value): Gemini needs one".into(),
        );
    }
    Value::Object(out)
}

/// Draft 2020-12 to Draft-07: `$defs` become `definitions` (and references follow), tuples
/// use the array form of `items`, `dependentRequired` becomes `dependencies`. What Draft-07
/// cannot say (`unevaluatedProperties`, `$dynamicRef`, ...) is refused.
fn draft07(schema: &Value) -> Result<Value, Vec<Refusal>> {
    let mut refusals = Vec::new();
    let mut out = draft07_at(schema, &mut String::new(), 0, &mut refusals);
    if let Some(object) = out.as_object_mut() {
        object.remove("title");
        object.insert(
            "$schema".into(),
            json!("http://json-schema.org/draft-07/schema#"),
        );
    }
    if refusals.is_empty() {
        Ok(out)
    } else {
        Err(refusals)
    }
}

fn draft07_at(node: &Value, at: &mut String, depth: usize, refusals: &mut Vec<Refusal>) -> Value {
    if depth > MAX_SCHEMA_DEPTH {
        refusals.push(Refusal {
            pointer: at.clone(),
            reason: format!("the schema nests deeper than {MAX_SCHEMA_DEPTH} levels"),
        });
        return Value::Bool(true);
    }
    match node {
        Value::Object(object) => {
            let mut out = Map::new();
            for (key, value) in object {
                let mark = at.len();
                push_token(at, key);
                match key.as_str() {
                    "unevaluatedProperties"
                    | "unevaluatedItems"
                    | "$dynamicRef"
                    | "$dynamicAnchor"
                    | "dependentSchemas"
                    | "minContains"
                    | "maxContains" => {
                        refusals.push(Refusal {
                            pointer: at.clone(),
                            reason: format!("`{key}` has no Draft-07 equivalent"),
                        });
                    }
                    "$defs" => {
                        out.insert(
                            "definitions".into(),
                            draft07_at(value, at, depth + 1, refusals),
                        );
                    }
                    "$ref" => {
                        let reference = value.as_str().unwrap_or_default();
                        out.insert(
                            "$ref".into(),
                            json!(reference.replacen("#/$defs/", "#/definitions/", 1)),
                        );
                    }
                    "prefixItems" => {
                        out.insert("items".into(), draft07_at(value, at, depth + 1, refusals));
                        let rest = object.get("items").cloned().unwrap_or(Value::Bool(true));
                        out.insert(
                            "additionalItems".into(),
                            draft07_at(&rest, at, depth + 1, refusals),
                        );
                    }
                    "items" if object.contains_key("prefixItems") => {}
                    "dependentRequired" => {
                        out.insert("dependencies".into(), value.clone());
                    }
                    "$schema" => {}
                    "enum" | "const" | "default" | "examples" | "required" => {
                        out.insert(key.clone(), value.clone());
                    }
                    _ => {
                        out.insert(key.clone(), draft07_at(value, at, depth + 1, refusals));
                    }
                }
                at.truncate(mark);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let mark = at.len();
                    at.push_str(&format!("/{i}"));
                    let out = draft07_at(item, at, depth + 1, refusals);
                    at.truncate(mark);
                    out
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recursive() -> Value {
        json!({
            "type": "object",
            "properties": { "children": { "type": "array", "items": { "$ref": "#/$defs/Node" } } },
            "$defs": { "Node": { "type": "object", "properties": { "children": { "type": "array", "items": { "$ref": "#/$defs/Node" } } } } }
        })
    }

    #[test]
    fn inlining_resolves_references_and_refuses_recursion() {
        let schema = json!({
            "type": "object",
            "properties": { "a": { "$ref": "#/$defs/A", "description": "the a" } },
            "$defs": { "A": { "type": "string", "description": "an A" } }
        });
        assert_eq!(
            apply(Profile::Inlined, &schema).unwrap(),
            json!({ "type": "object", "properties": { "a": { "type": "string", "description": "the a" } } })
        );
        let refusals = apply(Profile::Inlined, &recursive()).unwrap_err();
        assert_eq!(
            refusals[0].pointer,
            "/properties/children/items/properties/children/items"
        );
        assert!(
            refusals[0].reason.contains("refers to itself"),
            "{}",
            refusals[0]
        );
        // A reference is read as the validator reads it: percent-decoded; a recursion
        // through two spellings of one definition is still a recursion.
        let encoded = json!({
            "type": "object",
            "properties": { "a": { "$ref": "#/%24defs/A%20B" } },
            "$defs": { "A B": { "type": "string" } }
        });
        assert_eq!(
            apply(Profile::Inlined, &encoded).unwrap(),
            json!({ "type": "object", "properties": { "a": { "type": "string" } } })
        );
        let twice = json!({
            "type": "object",
            "properties": { "n": { "$ref": "#/$defs/N" } },
            "$defs": { "N": { "type": "array", "items": { "$ref": "#/%24defs/N" } } }
        });
        let refusals = apply(Profile::Inlined, &twice).unwrap_err();
        assert_eq!(refusals.len(), 1, "{refusals:?}");
        assert_eq!(refusals[0].pointer, "/properties/n/items");
        assert!(
            refusals[0].reason.contains("refers to itself"),
            "{}",
            refusals[0]
        );
        let dangling =
            json!({ "type": "object", "properties": { "x": { "$ref": "#/$defs/Missing" } } });
        assert_eq!(
            apply(Profile::Inlined, &dangling).unwrap_err()[0].pointer,
            "/properties/x"
        );
    }

    #[test]
    fn object_roots_are_required_where_clients_require_them() {
        for profile in [Profile::Anthropic, Profile::Mcp, Profile::Gemini] {
            let refusals = apply(profile, &json!({ "type": "string" })).unwrap_err();
            assert_eq!(refusals[0].pointer, "", "{profile:?}");
        }
        assert!(apply(Profile::Canonical, &json!({ "type": "string" })).is_ok());
    }

    #[test]
    fn gemini_speaks_the_openapi_subset() {
        let schema = json!({
            "type": "object",
            "properties": {
                "kind": { "const": "circle" },
                "tags": { "type": "array", "items": { "type": "string" }, "uniqueItems": true },
                "size": { "anyOf": [{ "$ref": "#/$defs/Size" }, { "type": "null" }] },
                "n": { "type": "integer", "format": "int32", "exclusiveMinimum": 0 },
                "either": { "oneOf": [{ "type": "object", "properties": { "a": { "type": "string" } } }, { "type": "object" }] },
                "map": { "type": "object", "additionalProperties": { "type": "number" } }
            },
            "required": ["kind"],
            "additionalProperties": false,
            "$defs": { "Size": { "type": "string", "enum": ["s", "m"] } }
        });
        assert_eq!(
            apply(Profile::Gemini, &schema).unwrap(),
            json!({
                "type": "OBJECT",
                "properties": {
                    "kind": { "type": "STRING", "enum": ["circle"] },
                    "tags": { "type": "ARRAY", "items": { "type": "STRING" } },
                    "size": { "type": "STRING", "enum": ["s", "m"], "nullable": true },
                    // `int32`'s range, less the `exclusiveMinimum` Gemini cannot read.
                    "n": { "type": "INTEGER", "maximum": 2147483647 },
                    "either": { "type": "OBJECT", "anyOf": [{ "type": "OBJECT", "properties": { "a": { "type": "STRING" } } }, { "type": "OBJECT" }] },
                    "map": { "type": "OBJECT" }
                },
                "required": ["kind"]
            })
        );
    }

    #[test]
    fn gemini_refuses_what_it_cannot_say() {
        let schema = json!({
            "type": "object",
            "properties": {
                "any": true,
                "pair": { "type": "array", "prefixItems": [{ "type": "string" }, { "type": "number" }], "items": false },
                "level": { "enum": [1, 2, 3] },
                "both": { "allOf": [{ "type": "object" }] },
                "mixed": { "anyOf": [{ "type": "string" }, { "type": "integer" }] }
            }
        });
        let refusals = apply(Profile::Gemini, &schema).unwrap_err();
        let pointers: Vec<&str> = refusals.iter().map(|r| r.pointer.as_str()).collect();
        assert_eq!(
            pointers,
            [
                "/properties/any",
                "/properties/pair/prefixItems",
                "/properties/level/enum",
                "/properties/both/allOf",
                "/properties/mixed/anyOf"
            ]
        );
        assert!(apply(Profile::Gemini, &recursive()).is_err());
    }

    #[test]
    fn draft07_renames_definitions_and_tuples() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "pair": { "type": "array", "prefixItems": [{ "type": "string" }, { "$ref": "#/$defs/N" }], "items": false },
                "n": { "$ref": "#/$defs/N" }
            },
            "$defs": { "N": { "type": "number" } }
        });
        assert_eq!(
            apply(Profile::Draft07, &schema).unwrap(),
            json!({
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {
                    "pair": { "type": "array", "items": [{ "type": "string" }, { "$ref": "#/definitions/N" }], "additionalItems": false },
                    "n": { "$ref": "#/definitions/N" }
                },
                "definitions": { "N": { "type": "number" } }
            })
        );
        let refusals = apply(
            Profile::Draft07,
            &json!({ "type": "object", "unevaluatedProperties": false }),
        )
        .unwrap_err();
        assert_eq!(refusals[0].pointer, "/unevaluatedProperties");
    }

    #[test]
    fn hostile_depth_is_refused_not_overflowed() {
        let mut schema = json!({ "type": "string" });
        for _ in 0..200 {
            schema = json!({ "type": "object", "properties": { "x": schema } });
        }
        for profile in [Profile::Inlined, Profile::Gemini, Profile::Draft07] {
            let refusals = apply(profile, &schema).unwrap_err();
            assert!(refusals[0].reason.contains("deeper than 64"), "{profile:?}");
        }
    }

    #[test]
    fn a_refusal_reads_with_its_pointer_or_the_root() {
        let at_root = Refusal {
            pointer: String::new(),
            reason: "no".into(),
        };
        assert_eq!(at_root.to_string(), "(root): no");
        let inside = Refusal {
            pointer: "/properties/a".into(),
            reason: "no".into(),
        };
        assert_eq!(inside.to_string(), "/properties/a: no");
    }

    #[test]
    fn each_profile_has_its_own_slot() {
        let indexes: Vec<usize> = Profile::ALL.iter().map(|p| p.index()).collect();
        assert_eq!(indexes, (0..Profile::ALL.len()).collect::<Vec<_>>());
    }

    #[test]
    fn pointers_escape_slashes_and_tildes_in_names() {
        let schema = json!({
            "type": "object",
            "properties": { "a/b~c": { "$ref": "#/$defs/Gone" } }
        });
        assert_eq!(
            apply(Profile::Inlined, &schema).unwrap_err()[0].pointer,
            "/properties/a~1b~0c"
        );
    }

    #[test]
    fn inlining_reaches_every_place_a_schema_can_be_and_leaves_data_alone() {
        let s = json!({ "$ref": "#/$defs/S" });
        let schema = json!({
            "type": "object",
            "properties": { "p": s },
            "patternProperties": { "^x": s },
            "dependentSchemas": { "d": s },
            "anyOf": [s], "oneOf": [s], "allOf": [s], "prefixItems": [s],
            "items": s, "additionalProperties": s, "not": s, "if": s, "then": s, "else": s,
            "contains": s, "propertyNames": s, "unevaluatedProperties": s, "unevaluatedItems": s,
            "enum": [s], "const": s, "default": s, "examples": [s],
            "$defs": { "S": { "type": "string" } },
            "definitions": { "Old": { "type": "null" } }
        });
        let t = json!({ "type": "string" });
        assert_eq!(
            apply(Profile::Inlined, &schema).unwrap(),
            json!({
                "type": "object",
                "properties": { "p": t },
                "patternProperties": { "^x": t },
                "dependentSchemas": { "d": t },
                "anyOf": [t], "oneOf": [t], "allOf": [t], "prefixItems": [t],
                "items": t, "additionalProperties": t, "not": t, "if": t, "then": t, "else": t,
                "contains": t, "propertyNames": t, "unevaluatedProperties": t, "unevaluatedItems": t,
                "enum": [s], "const": s, "default": s, "examples": [s]
            })
        );
        // A key beside a `$ref` is a schema place too; its pointer is its own.
        let beside = json!({
            "type": "object",
            "properties": { "a": { "$ref": "#/$defs/A", "items": { "$ref": "#/$defs/Gone" } } },
            "$defs": { "A": { "type": "array" } }
        });
        assert_eq!(
            apply(Profile::Inlined, &beside).unwrap_err()[0].pointer,
            "/properties/a/items"
        );
        // Each branch's pointer has its index.
        let branches = json!({ "anyOf": [{ "type": "null" }, { "$ref": "#/$defs/Gone" }] });
        let refusal = &apply(Profile::Inlined, &branches).unwrap_err()[0];
        assert_eq!(refusal.pointer, "/anyOf/1");
        assert_eq!(
            refusal.reason,
            "`$ref: #/$defs/Gone` is not a local reference this schema defines"
        );
        // Two uses of one definition side by side are not recursion.
        let twice = json!({
            "type": "object",
            "properties": { "a": { "$ref": "#/$defs/S" }, "b": { "$ref": "#/$defs/S" } },
            "$defs": { "S": { "type": "string" } }
        });
        assert!(apply(Profile::Inlined, &twice).is_ok());
        // Inlining counts schema levels: 64 nested objects are inlined, 65 are not.
        // Draft-07's rewrite walks the JSON itself, so a property's schema is two levels below
        // its object's (the `properties` map, then the entry) and its `type` one more.
        for (profile, levels) in [(Profile::Inlined, 64), (Profile::Draft07, 31)] {
            assert!(apply(profile, &objects(levels)).is_ok(), "{profile:?}");
            let refusals = apply(profile, &objects(levels + 1)).unwrap_err();
            assert_eq!(
                refusals[0].reason, "the schema nests deeper than 64 levels",
                "{profile:?}"
            );
        }
    }

    /// `levels` objects nested through a property `x`, around a string.
    fn objects(levels: usize) -> Value {
        let mut schema = json!({ "type": "string" });
        for _ in 0..levels {
            schema = json!({ "type": "object", "properties": { "x": schema } });
        }
        schema
    }

    #[test]
    fn mcp_and_anthropic_show_only_json_schema_formats() {
        let schema = json!({
            "type": "object",
            "properties": {
                "count": { "type": "integer", "format": "uint32", "minimum": 0 },
                "when": { "type": "string", "format": "date-time" },
                "ratio": { "type": ["number", "null"], "format": "double" }
            },
            "$defs": { "Id": { "type": "integer", "format": "int64" } }
        });
        for profile in [Profile::Anthropic, Profile::Mcp] {
            let (shown, relaxed) = apply_reporting(profile, &schema).unwrap();
            assert_eq!(
                shown,
                json!({
                    "type": "object",
                    "properties": {
                        "count": { "type": "integer", "minimum": 0, "maximum": 4294967295u32 },
                        "when": { "type": "string", "format": "date-time" },
                        "ratio": { "type": ["number", "null"] }
                    },
                    "$defs": { "Id": { "type": "integer", "minimum": i64::MIN, "maximum": i64::MAX } }
                }),
                "{profile:?}"
            );
            // The boundary never checked a Rust format, so dropping one relaxes nothing.
            assert!(relaxed.is_empty(), "{relaxed:?}");
        }
        // A checked format a client is not shown is reported.
        let (_, relaxed) = apply_reporting(
            Profile::OpenAiStrict,
            &json!({
                "type": "object",
                "properties": { "site": { "type": "string", "format": "uri" } },
                "required": ["site"],
                "additionalProperties": false
            }),
        )
        .unwrap();
        assert_eq!(
            relaxed,
            vec![Relaxation {
                pointer: "/properties/site".into(),
                keyword: "format".into()
            }]
        );
    }

    #[test]
    fn an_object_root_is_one_type_object() {
        for root in [json!("object"), json!(["object"])] {
            let schema = json!({ "type": root, "title": "T" });
            for profile in [Profile::Anthropic, Profile::Mcp] {
                assert_eq!(apply(profile, &schema).unwrap(), json!({ "type": root }));
            }
        }
        for root in [json!(["object", "null"]), json!(["string"]), json!(null)] {
            let refusals = apply(Profile::Mcp, &json!({ "type": root })).unwrap_err();
            assert_eq!(
                refusals,
                vec![Refusal {
                    pointer: String::new(),
                    reason: "tool arguments are a JSON object, so the root schema must be `\"type\": \"object\"`".into(),
                }]
            );
        }
        assert!(apply(Profile::Mcp, &json!({})).is_err());
    }

    fn gemini_property(schema: Value) -> Result<Value, Vec<Refusal>> {
        apply(
            Profile::Gemini,
            &json!({ "type": "object", "properties": { "p": schema } }),
        )
        .map(|out| out["properties"]["p"].clone())
    }

    fn gemini_refusal(schema: Value) -> (String, String) {
        let refusals = gemini_property(schema).unwrap_err();
        (refusals[0].pointer.clone(), refusals[0].reason.clone())
    }

    #[test]
    fn gemini_types_nullability_and_enums() {
        assert_eq!(
            gemini_property(json!({ "type": ["string", "null"] })).unwrap(),
            json!({ "type": "STRING", "nullable": true })
        );
        assert_eq!(
            gemini_property(json!({ "type": ["integer"] })).unwrap(),
            json!({ "type": "INTEGER" })
        );
        assert_eq!(
            gemini_property(json!({ "type": ["string", "string"] })).unwrap(),
            json!({ "type": "STRING", "anyOf": [{ "type": "STRING" }, { "type": "STRING" }] })
        );
        let only_null = (
            "/properties/p".to_owned(),
            "a schema whose only type is `null` has no Gemini form".to_owned(),
        );
        assert_eq!(gemini_refusal(json!({ "type": "null" })), only_null);
        assert_eq!(gemini_refusal(json!({ "type": ["null"] })), only_null);
        // One refusal for one mistake: a schema refused at its own place, or below it, is
        // not refused again for having no type.
        for schema in [
            json!({ "type": "null" }),
            json!({ "enum": [1] }),
            json!(false),
        ] {
            assert_eq!(
                gemini_property(schema.clone()).unwrap_err().len(),
                1,
                "{schema}"
            );
        }
        assert_eq!(
            gemini_refusal(json!({ "type": ["string", "integer"] })),
            (
                "/properties/p/anyOf".to_owned(),
                "a union of different types: Gemini's schema needs one `type` for all its branches"
                    .to_owned()
            )
        );
        assert_eq!(
            gemini_property(json!({ "enum": ["a", null] })).unwrap(),
            json!({ "type": "STRING", "enum": ["a"], "nullable": true })
        );
        assert_eq!(
            gemini_property(json!({ "type": "string", "enum": ["a"] })).unwrap(),
            json!({ "type": "STRING", "enum": ["a"] })
        );
        assert_eq!(
            gemini_refusal(json!({ "const": 1 })),
            (
                "/properties/p/const".to_owned(),
                "Gemini's `enum` lists strings only".to_owned()
            )
        );
        assert_eq!(
            gemini_refusal(json!(false)),
            (
                "/properties/p".to_owned(),
                "`false` (no value) has no Gemini form".to_owned()
            )
        );
        assert_eq!(
            gemini_refusal(json!({ "description": "anything" })),
            (
                "/properties/p".to_owned(),
                "a schema without a `type` (it accepts any value): Gemini needs one".to_owned()
            )
        );
    }

    #[test]
    fn gemini_unions_keywords_and_formats() {
        // `Option<T>`: the one branch left is the schema, with what is beside the union.
        assert_eq!(
            gemini_property(json!({ "description": "d", "oneOf": [{ "type": "null" }, { "type": "integer", "minimum": 1 }] })).unwrap(),
            json!({ "type": "INTEGER", "minimum": 1, "description": "d", "nullable": true })
        );
        // A `null` branch with more than a type is a branch like any other.
        assert!(
            gemini_property(
                json!({ "anyOf": [{ "type": "null", "description": "x" }, { "type": "string" }] })
            )
            .is_err()
        );
        // Only null: nothing but `nullable` is left, which is no schema.
        assert_eq!(
            gemini_refusal(json!({ "anyOf": [{ "type": "null" }] })).1,
            "a schema without a `type` (it accepts any value): Gemini needs one"
        );
        // A branch's own refusal is the one reported, not a second at the union.
        let refusals =
            gemini_property(json!({ "anyOf": [{ "type": "string" }, { "not": {} }] })).unwrap_err();
        assert_eq!(refusals[0].pointer, "/properties/p/anyOf/1/not");
        assert_eq!(
            refusals[0].reason,
            "`not` (Gemini's schema has no negation) cannot be expressed"
        );
        assert_eq!(
            gemini_refusal(json!({ "type": "string", "if": {}, "then": {} })),
            (
                "/properties/p/if".to_owned(),
                "`if`/`then`/`else` (Gemini's schema has no conditionals) cannot be expressed"
                    .to_owned()
            )
        );
        assert_eq!(
            gemini_refusal(json!({ "type": "object", "allOf": [] })).1,
            "`allOf` (Gemini's schema has no intersection) cannot be expressed"
        );
        // Accepted keywords are kept, Rust number formats and unknown keywords dropped.
        assert_eq!(
            gemini_property(json!({
                "type": "array", "minItems": 1, "maxItems": 3, "description": "d",
                "items": { "type": "string", "format": "date-time", "pattern": "^2", "minLength": 1, "maxLength": 30 },
                "uniqueItems": true, "x-extra": 1
            })).unwrap(),
            json!({
                "type": "ARRAY", "minItems": 1, "maxItems": 3, "description": "d",
                "items": { "type": "STRING", "format": "date-time", "pattern": "^2", "minLength": 1, "maxLength": 30 }
            })
        );
        for format in ["float", "double", "int128"] {
            assert_eq!(
                gemini_property(json!({ "type": "number", "format": format })).unwrap(),
                json!({ "type": "NUMBER" }),
                "{format}"
            );
        }
        // ... keeping the range an integer format implied.
        assert_eq!(
            gemini_property(json!({ "type": "integer", "format": "uint16", "minimum": 0 }))
                .unwrap(),
            json!({ "type": "INTEGER", "minimum": 0, "maximum": 65535 })
        );
        for format in RUST_FORMATS {
            let shown = gemini_property(json!({ "type": "integer", "format": format })).unwrap();
            assert!(shown.get("format").is_none(), "{format}");
        }
        assert_eq!(
            gemini_property(json!({ "type": "array", "items": false })).unwrap(),
            json!({ "type": "ARRAY" })
        );
        // Titles stay below the root, not at it.
        let out = apply(
            Profile::Gemini,
            &json!({ "type": "object", "title": "Root", "properties": { "p": { "type": "string", "title": "P" } } }),
        )
        .unwrap();
        assert_eq!(
            out,
            json!({ "type": "OBJECT", "properties": { "p": { "type": "STRING", "title": "P" } } })
        );
        // Gemini counts schema levels as inlining does.
        assert!(apply(Profile::Gemini, &objects(64)).is_ok());
        assert_eq!(
            apply(Profile::Gemini, &objects(65)).unwrap_err()[0].reason,
            "the schema nests deeper than 64 levels"
        );
    }

    #[test]
    fn draft07_keywords_one_by_one() {
        assert_eq!(
            apply(
                Profile::Draft07,
                &json!({
                    "title": "T",
                    "type": "object",
                    "dependentRequired": { "a": ["b"] },
                    "properties": {
                        "t": { "type": "array", "prefixItems": [{ "type": "string" }] },
                        "u": { "anyOf": [{ "$ref": "#/$defs/N" }, { "type": "null" }] }
                    },
                    "enum": [{ "$defs": 1 }], "const": { "prefixItems": 1 }, "default": { "$ref": "#/$defs/N" },
                    "examples": [{ "$schema": 1 }], "required": ["t"],
                    "$defs": { "N": { "type": "number", "title": "N" } }
                })
            )
            .unwrap(),
            json!({
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "dependencies": { "a": ["b"] },
                "properties": {
                    "t": { "type": "array", "items": [{ "type": "string" }], "additionalItems": true },
                    "u": { "anyOf": [{ "$ref": "#/definitions/N" }, { "type": "null" }] }
                },
                "enum": [{ "$defs": 1 }], "const": { "prefixItems": 1 }, "default": { "$ref": "#/$defs/N" },
                "examples": [{ "$schema": 1 }], "required": ["t"],
                "definitions": { "N": { "type": "number", "title": "N" } }
            })
        );
        for keyword in [
            "unevaluatedProperties",
            "unevaluatedItems",
            "$dynamicRef",
            "$dynamicAnchor",
            "dependentSchemas",
            "minContains",
            "maxContains",
        ] {
            let refusals = apply(
                Profile::Draft07,
                &json!({ "anyOf": [{ "type": "object", keyword: 1 }] }),
            )
            .unwrap_err();
            assert_eq!(
                refusals,
                vec![Refusal {
                    pointer: format!("/anyOf/0/{keyword}"),
                    reason: format!("`{keyword}` has no Draft-07 equivalent"),
                }]
            );
        }
    }

    #[test]
    fn openai_strict_refusals_carry_the_strict_checks_pointer() {
        let refusals = apply(
            Profile::OpenAiStrict,
            &json!({ "type": "object", "properties": { "m": { "type": "object", "additionalProperties": { "type": "string" } } } }),
        )
        .unwrap_err();
        assert_eq!(refusals.len(), 1);
        assert_eq!(refusals[0].pointer, "/properties/m");
        assert!(!refusals[0].reason.is_empty());
        let strict = apply(
            Profile::OpenAiStrict,
            &json!({ "type": "object", "title": "T", "properties": { "a": { "type": "string" } } }),
        )
        .unwrap();
        assert_eq!(strict["additionalProperties"], json!(false));
        assert_eq!(strict["required"], json!(["a"]));
        assert!(strict.get("title").is_none());
    }

    #[test]
    fn references_and_keys_beside_them_count_toward_the_depth_limit() {
        /// A chain of `links` references from the root, `#/$defs/A0` to the last, a string.
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
        assert_eq!(
            apply(Profile::Inlined, &chain(64)).unwrap(),
            json!({ "type": "string" })
        );
        assert_eq!(
            apply(Profile::Inlined, &chain(65)).unwrap_err()[0].reason,
            "the schema nests deeper than 64 levels"
        );
        // A key beside the root's reference is one level down.
        let beside = |levels| json!({ "$defs": { "S": { "type": "object" } }, "$ref": "#/$defs/S", "additionalProperties": objects(levels) });
        let inlined = apply(Profile::Inlined, &beside(63)).unwrap();
        assert_eq!(inlined["type"], json!("object"));
        assert_eq!(inlined["additionalProperties"], objects(63));
        assert_eq!(
            apply(Profile::Inlined, &beside(64)).unwrap_err()[0].reason,
            "the schema nests deeper than 64 levels"
        );
    }

    #[test]
    fn every_kind_of_schema_place_counts_toward_the_depth_limit_and_loses_its_defs() {
        fn nested(key: &str, levels: usize) -> Value {
            let mut schema = json!({ "type": "string" });
            for _ in 0..levels {
                schema = if key == "items" {
                    json!({ "type": "array", "items": schema })
                } else {
                    json!({ key: [schema] })
                };
            }
            schema
        }
        for key in ["anyOf", "items"] {
            assert!(apply(Profile::Inlined, &nested(key, 64)).is_ok(), "{key}");
            assert_eq!(
                apply(Profile::Inlined, &nested(key, 65)).unwrap_err()[0].reason,
                "the schema nests deeper than 64 levels",
                "{key}"
            );
        }
        // Definitions below the root go too, under either name.
        let nested_defs = json!({
            "type": "object",
            "properties": { "a": { "type": "string", "$defs": { "X": {} }, "definitions": { "Y": {} } } }
        });
        assert_eq!(
            apply(Profile::Inlined, &nested_defs).unwrap(),
            json!({ "type": "object", "properties": { "a": { "type": "string" } } })
        );
    }

    #[test]
    fn gemini_keeps_a_lone_branch_beside_a_type_as_a_union() {
        assert_eq!(
            gemini_property(
                json!({ "type": "string", "anyOf": [{ "type": "string", "minLength": 1 }] })
            )
            .unwrap(),
            json!({ "type": "STRING", "anyOf": [{ "type": "STRING", "minLength": 1 }] })
        );
        // Keywords of every kind at the root too.
        assert_eq!(
            apply(
                Profile::Gemini,
                &json!({ "type": "object", "items": { "type": "string" } })
            )
            .unwrap(),
            json!({ "type": "OBJECT", "items": { "type": "STRING" } })
        );
        assert_eq!(
            apply(
                Profile::Gemini,
                &json!({ "type": "object", "anyOf": [{ "type": "object", "required": ["a"] }] })
            )
            .unwrap(),
            json!({ "type": "OBJECT", "anyOf": [{ "type": "OBJECT", "required": ["a"] }] })
        );
    }

    /// How many arrays and objects enclose the deepest value of `value`.
    fn nesting(value: &Value) -> usize {
        match value {
            Value::Array(items) => 1 + items.iter().map(nesting).max().unwrap_or(0),
            Value::Object(map) => 1 + map.values().map(nesting).max().unwrap_or(0),
            _ => 0,
        }
    }

    #[test]
    fn draft07_refuses_exactly_the_schemas_nested_past_64_containers() {
        // Each way down: a union's branches, definitions, tuples and their rest, items.
        let ways: [fn(Value) -> Value; 5] = [
            |inner| json!({ "anyOf": [inner] }),
            |inner| json!({ "$defs": { "D": inner } }),
            |inner| json!({ "type": "array", "prefixItems": [inner] }),
            |inner| json!({ "type": "array", "prefixItems": [], "items": inner }),
            |inner| json!({ "type": "array", "items": inner }),
        ];
        for (i, way) in ways.iter().enumerate() {
            let mut schema = json!({ "type": "string" });
            let mut refused_at = None;
            for _ in 0..70 {
                schema = way(schema);
                let refused = apply(Profile::Draft07, &schema).is_err();
                assert_eq!(
                    refused,
                    nesting(&schema) > 64,
                    "way {i}, nesting {}",
                    nesting(&schema)
                );
                if refused && refused_at.is_none() {
                    refused_at = Some(nesting(&schema));
                }
            }
            assert!(refused_at.is_some(), "way {i}");
        }
    }

    #[test]
    fn draft07_keeps_plain_items_and_drops_inner_schema_ids() {
        assert_eq!(
            apply(
                Profile::Draft07,
                &json!({ "type": "array", "items": { "type": "string", "$schema": "https://json-schema.org/draft/2020-12/schema" } })
            )
            .unwrap(),
            json!({ "$schema": "http://json-schema.org/draft-07/schema#", "type": "array", "items": { "type": "string" } })
        );
    }

    #[test]
    fn no_profile_panics_on_json_that_is_not_a_schema() {
        for value in [
            json!([{ "type": "string" }, [1]]),
            json!(1),
            json!("s"),
            json!(null),
            json!([]),
        ] {
            for profile in Profile::ALL {
                let _ = apply(profile, &value);
            }
        }
        assert_eq!(
            apply(Profile::Draft07, &json!([{ "$ref": "#/$defs/A" }])).unwrap(),
            json!([{ "$ref": "#/definitions/A" }])
        );
    }
}
