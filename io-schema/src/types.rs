//! The JSON types as bits (`number` split into integers and the rest), shared by the schema
//! comparison and the residual checker: kept below both.

use serde_json::{Map, Value};

/// The JSON types, `number` split into integers and the rest.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Types(u8);

pub(crate) const NULL: u8 = 1;
pub(crate) const BOOLEAN: u8 = 2;
pub(crate) const INTEGER: u8 = 4;
pub(crate) const FRACTION: u8 = 8;
pub(crate) const STRING: u8 = 16;
pub(crate) const ARRAY: u8 = 32;
pub(crate) const OBJECT: u8 = 64;
pub(crate) const ALL: u8 = 127;

impl Types {
    pub(crate) fn of_name(name: &str) -> u8 {
        match name {
            "null" => NULL,
            "boolean" => BOOLEAN,
            "integer" => INTEGER,
            "number" => INTEGER | FRACTION,
            "string" => STRING,
            "array" => ARRAY,
            "object" => OBJECT,
            _ => 0,
        }
    }

    pub(crate) fn of_value(value: &Value) -> u8 {
        match value {
            Value::Null => NULL,
            Value::Bool(_) => BOOLEAN,
            // Every `i64` and `u64` is an `f64` without a fraction; so is `3.0` (an integer).
            Value::Number(n) => {
                if n.as_f64().is_some_and(|f| f.fract() == 0.0) {
                    INTEGER
                } else {
                    FRACTION
                }
            }
            Value::String(_) => STRING,
            Value::Array(_) => ARRAY,
            Value::Object(_) => OBJECT,
        }
    }

    /// The types a schema's own `type` (and `nullable`, `enum`, `const`) allow; `None` when
    /// `type` is malformed.
    pub(crate) fn of_schema(map: &Map<String, Value>) -> Option<u8> {
        let mut types = match map.get("type") {
            None => ALL,
            Some(Value::String(name)) => Self::of_name(name),
            Some(Value::Array(names)) => names
                .iter()
                .map(|n| n.as_str().map(Self::of_name))
                .try_fold(0, |acc, t| t.map(|t| acc | t))?,
            Some(_) => return None,
        };
        if let Some(Value::Array(values)) = map.get("enum") {
            types &= values.iter().fold(0, |acc, v| acc | Self::of_value(v));
        }
        if let Some(value) = map.get("const") {
            types &= Self::of_value(value);
        }
        Some(types)
    }
}

pub(crate) fn type_name(t: u8) -> &'static str {
    match t {
        NULL => "null",
        BOOLEAN => "boolean",
        INTEGER => "integer",
        FRACTION => "non-integer number",
        STRING => "string",
        ARRAY => "array",
        _ => "object",
    }
}
