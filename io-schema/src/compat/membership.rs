//! Quick membership: whether a value is an instance of a simple schema, decided without the
//! validator when the schema is simple enough.

use serde_json::{Map, Value};

use super::checker::*;
use super::numbers::exact;
use crate::types::Types;

impl<'a> Checker<'a> {
    /// Whether the consumer schema accepts `value`, decided without building a validator for
    /// the simple schemas most finite values meet (a type, an enum, bounds, lengths, `$ref`,
    /// `anyOf`); `None` for anything else, which the validator then decides.
    pub(super) fn quick_member(
        &self,
        schema: &'a Value,
        value: &Value,
        depth: usize,
    ) -> Option<bool> {
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
}
