//! `format`s a client reads, and the bounds schemars' Rust number formats imply.
//!
//! schemars writes a Rust integer's width as a `format` (`"format": "uint32"`, `"int64"`,
//! `"double"`, ...). JSON Schema defines no such format, so clients warn (the TypeScript MCP
//! SDK prints `unknown format "uint32" ignored` on every `tools/list`) or refuse. The profiles
//! shown to those clients drop the format; where it implied a range that the schema does not
//! state (schemars writes `minimum: 0` for an unsigned integer but no `maximum`), the range is
//! kept as `minimum`/`maximum`, so the client still learns that a `u8` stops at 255.
//!
//! Decisions: only the integer formats of known width imply a range (`int128`/`uint128` do not
//! fit a JSON number the way serde_json writes one, and `uint`/`int` — `usize`/`isize` — are
//! taken as 64-bit, the width of every target agent-io's users deploy to); `float` and `double`
//! imply none. A bound the schema already states (a `#[schemars(range(...))]`) is kept as it
//! is, and an `exclusiveMinimum`/`exclusiveMaximum` counts as a stated bound.

use serde_json::{Map, Value, json};

/// The formats JSON Schema 2020-12 defines (Validation, section 7.3): the only ones a client
/// owes an understanding, and the ones the boundary's validator checks (any other `format` is
/// an annotation to it).
pub(crate) const STANDARD: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// The range a Rust integer format implies: `(minimum, maximum)`.
pub(crate) fn implied_range(format: &str) -> (Option<Value>, Option<Value>) {
    fn signed(min: i64, max: i64) -> (Option<Value>, Option<Value>) {
        (Some(json!(min)), Some(json!(max)))
    }
    fn unsigned(max: u64) -> (Option<Value>, Option<Value>) {
        (Some(json!(0)), Some(json!(max)))
    }
    match format {
        "int8" => signed(i8::MIN.into(), i8::MAX.into()),
        "int16" => signed(i16::MIN.into(), i16::MAX.into()),
        "int32" => signed(i32::MIN.into(), i32::MAX.into()),
        "int64" | "int" => signed(i64::MIN, i64::MAX),
        "uint8" => unsigned(u8::MAX.into()),
        "uint16" => unsigned(u16::MAX.into()),
        "uint32" => unsigned(u32::MAX.into()),
        "uint64" | "uint" => unsigned(u64::MAX),
        "uint128" => (Some(json!(0)), None),
        _ => (None, None),
    }
}

/// Removes `node`'s `format` unless `keep` accepts it, stating the range it implied where
/// `node` states none. Returns the removed format.
pub(crate) fn drop_format(
    node: &mut Map<String, Value>,
    keep: impl Fn(&str) -> bool,
) -> Option<Value> {
    let format = node.get("format")?;
    if format.as_str().is_some_and(&keep) {
        return None;
    }
    let format = node.remove("format")?;
    let (minimum, maximum) = implied_range(format.as_str().unwrap_or_default());
    if let Some(minimum) = minimum
        && !node.contains_key("minimum")
        && !node.contains_key("exclusiveMinimum")
    {
        node.insert("minimum".into(), minimum);
    }
    if let Some(maximum) = maximum
        && !node.contains_key("maximum")
        && !node.contains_key("exclusiveMaximum")
    {
        node.insert("maximum".into(), maximum);
    }
    Some(format)
}

/// Keywords whose value is a map of names to schemas.
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Keywords whose value is a schema or a list of schemas.
const SCHEMAS: &[&str] = &[
    "items",
    "prefixItems",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "allOf",
    "anyOf",
    "oneOf",
];

/// `schema` with every `format` that `keep` refuses dropped ([`drop_format`]), in schema
/// positions only: a `default`, `const`, `enum` or `examples` value that happens to hold a
/// `"format"` key is data and left alone. Nesting deeper than `max_depth` is copied as it is
/// (the profiles refuse or bound it elsewhere; nothing here recurses without limit).
pub(crate) fn drop_formats(
    schema: &Value,
    keep: &dyn Fn(&str) -> bool,
    at: &mut String,
    depth: usize,
    max_depth: usize,
    dropped: &mut dyn FnMut(&str, &Value),
) -> Value {
    if depth > max_depth {
        return schema.clone();
    }
    match schema {
        Value::Object(object) => {
            let mut out = Map::with_capacity(object.len());
            for (key, value) in object {
                let mark = at.len();
                crate::pointer::push_token(at, key);
                let value = if SCHEMA_MAPS.contains(&key.as_str()) {
                    match value {
                        Value::Object(map) => {
                            let mut mapped = Map::with_capacity(map.len());
                            for (name, sub) in map {
                                let inner = at.len();
                                crate::pointer::push_token(at, name);
                                mapped.insert(
                                    name.clone(),
                                    drop_formats(sub, keep, at, depth + 1, max_depth, dropped),
                                );
                                at.truncate(inner);
                            }
                            Value::Object(mapped)
                        }
                        other => other.clone(),
                    }
                } else if SCHEMAS.contains(&key.as_str()) {
                    match value {
                        Value::Array(items) => Value::Array(
                            items
                                .iter()
                                .enumerate()
                                .map(|(i, sub)| {
                                    let inner = at.len();
                                    at.push_str(&format!("/{i}"));
                                    let out =
                                        drop_formats(sub, keep, at, depth + 1, max_depth, dropped);
                                    at.truncate(inner);
                                    out
                                })
                                .collect(),
                        ),
                        sub => drop_formats(sub, keep, at, depth + 1, max_depth, dropped),
                    }
                } else {
                    value.clone()
                };
                at.truncate(mark);
                out.insert(key.clone(), value);
            }
            if let Some(format) = drop_format(&mut out, keep) {
                dropped(at, &format);
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn standard(schema: &Value) -> (Value, Vec<(String, Value)>) {
        let mut dropped = Vec::new();
        let keep = |f: &str| STANDARD.contains(&f);
        let out = drop_formats(
            schema,
            &keep,
            &mut String::new(),
            0,
            64,
            &mut |at, format| dropped.push((at.to_owned(), format.clone())),
        );
        (out, dropped)
    }

    #[test]
    fn rust_formats_become_the_range_they_imply() {
        let (out, dropped) = standard(&json!({
            "type": "object",
            "properties": {
                "small": { "type": "integer", "format": "uint8", "minimum": 0, "maximum": 255 },
                "count": { "type": "integer", "format": "uint32", "minimum": 0 },
                "delta": { "type": ["integer", "null"], "format": "int16" },
                "big": { "type": "integer", "format": "uint64", "minimum": 1 },
                "ratio": { "type": "number", "format": "double" },
                "when": { "type": "string", "format": "date-time" },
                "bounded": { "type": "integer", "format": "int32", "exclusiveMinimum": 0, "exclusiveMaximum": 10 },
                "wide": { "type": "integer", "format": "uint128", "minimum": 0 },
                "isize": { "type": "integer", "format": "int" },
                "tiny": { "type": "integer", "format": "uint8" },
                "huge": { "type": "integer", "format": "uint128" }
            }
        }));
        assert_eq!(
            out,
            json!({
                "type": "object",
                "properties": {
                    "small": { "type": "integer", "minimum": 0, "maximum": 255 },
                    "count": { "type": "integer", "minimum": 0, "maximum": 4294967295u32 },
                    "delta": { "type": ["integer", "null"], "minimum": -32768, "maximum": 32767 },
                    "big": { "type": "integer", "minimum": 1, "maximum": u64::MAX },
                    "ratio": { "type": "number" },
                    "when": { "type": "string", "format": "date-time" },
                    "bounded": { "type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10 },
                    "wide": { "type": "integer", "minimum": 0 },
                    "isize": { "type": "integer", "minimum": i64::MIN, "maximum": i64::MAX },
                    "tiny": { "type": "integer", "minimum": 0, "maximum": 255 },
                    "huge": { "type": "integer", "minimum": 0 }
                }
            })
        );
        let at: Vec<&str> = dropped.iter().map(|(at, _)| at.as_str()).collect();
        assert_eq!(
            at,
            [
                "/properties/small",
                "/properties/count",
                "/properties/delta",
                "/properties/big",
                "/properties/ratio",
                "/properties/bounded",
                "/properties/wide",
                "/properties/isize",
                "/properties/tiny",
                "/properties/huge"
            ]
        );
    }

    #[test]
    fn every_schema_position_is_reached_and_data_is_not_touched() {
        let int = json!({ "type": "integer", "format": "int8" });
        let plain = json!({ "type": "integer", "minimum": -128, "maximum": 127 });
        let data = json!({ "format": "int8", "type": "integer" });
        let mut schema = Map::new();
        for keyword in SCHEMAS {
            schema.insert((*keyword).into(), int.clone());
        }
        for keyword in SCHEMA_MAPS {
            schema.insert((*keyword).into(), json!({ "format": int.clone() }));
        }
        schema.insert("anyOf".into(), json!([int.clone(), { "type": "null" }]));
        for keyword in ["default", "const", "examples", "enum"] {
            schema.insert(keyword.into(), json!([data.clone()]));
        }
        let (out, dropped) = standard(&Value::Object(schema));
        for keyword in SCHEMAS.iter().filter(|k| **k != "anyOf") {
            assert_eq!(out[keyword], plain, "{keyword}");
        }
        for keyword in SCHEMA_MAPS {
            assert_eq!(out[keyword]["format"], plain, "{keyword}");
        }
        assert_eq!(out["anyOf"], json!([plain, { "type": "null" }]));
        for keyword in ["default", "const", "examples", "enum"] {
            assert_eq!(out[keyword], json!([data]), "{keyword}");
        }
        assert_eq!(dropped.len(), SCHEMAS.len() + SCHEMA_MAPS.len());
        assert!(dropped.iter().any(|(at, _)| at == "/anyOf/0"));
        assert!(dropped.iter().any(|(at, _)| at == "/$defs/format"));
    }

    #[test]
    fn depth_is_bounded() {
        let mut schema = json!({ "type": "integer", "format": "int8" });
        for _ in 0..10 {
            schema = json!({ "items": schema });
        }
        let mut count = 0;
        let keep = |f: &str| STANDARD.contains(&f);
        let out = drop_formats(&schema, &keep, &mut String::new(), 0, 5, &mut |_, _| {
            count += 1
        });
        assert_eq!(count, 0);
        assert_eq!(out, schema);
    }

    /// A format `levels` schema levels down, through `keyword` (a map of schemas, or a list).
    fn nested(levels: usize, keyword: &str) -> Value {
        let mut schema = json!({ "type": "integer", "format": "int8" });
        for _ in 0..levels {
            schema = if keyword == "anyOf" {
                json!({ "anyOf": [schema] })
            } else {
                json!({ keyword: { "x": schema } })
            };
        }
        schema
    }

    #[test]
    fn the_depth_bound_holds_at_exactly_its_limit_through_maps_and_lists() {
        for keyword in ["properties", "anyOf"] {
            let dropped_at = |levels: usize| {
                let mut count = 0;
                let keep = |f: &str| STANDARD.contains(&f);
                drop_formats(
                    &nested(levels, keyword),
                    &keep,
                    &mut String::new(),
                    0,
                    5,
                    &mut |_, _| count += 1,
                );
                count
            };
            // The node at depth 5 (the limit) is rewritten; one level deeper is copied as is.
            assert_eq!(dropped_at(5), 1, "{keyword}");
            assert_eq!(dropped_at(6), 0, "{keyword}");
        }
    }

    #[test]
    fn a_format_that_is_not_a_string_is_dropped_without_a_range() {
        let mut node = Map::new();
        node.insert("format".into(), json!(32));
        assert_eq!(drop_format(&mut node, |_| true), Some(json!(32)));
        assert!(node.is_empty());
        assert_eq!(drop_format(&mut node, |_| false), None);
    }
}
