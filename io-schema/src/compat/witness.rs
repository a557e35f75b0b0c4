//! Witnesses: small producer values to build a counterexample around, checked by both
//! validators before they are reported.

use serde_json::{Map, Value, json};

use super::checker::*;
use super::numbers::{Numbers, number_value};
use crate::types::{ALL, ARRAY, BOOLEAN, FRACTION, INTEGER, NULL, STRING, Types};

impl<'a> Checker<'a> {
    // -----------------------------------------------------------------------------------------
    // Examples: small producer values to build witnesses around. They are not trusted: a
    // witness is reported only once both validators have checked the whole document.

    pub(super) fn example(&mut self, node: &Node<'a>, depth: usize) -> Option<Value> {
        self.example_typed(node, None, depth)
    }

    /// An example of `node`, of type `only` when given.
    pub(super) fn example_typed(
        &mut self,
        node: &Node<'a>,
        only: Option<u8>,
        depth: usize,
    ) -> Option<Value> {
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
    pub(super) fn array_example(
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
    pub(super) fn object_example(
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
