//! Decoding and encoding through a boundary: serde and the schema together, so that a value
//! that crosses is both valid and of its type, and a failure says where.
//!
//! A whole number written as a float (`3.0`) is an integer, as JSON Schema says: see
//! [`BoundarySchema::decode`].

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::boundary::{BoundarySchema, Direction};
use crate::error::{SchemaError, SchemaErrorCode};
use crate::pointer::escape_token;
use crate::violation::Violation;

impl BoundarySchema {
    /// Decodes a value into `T`, reading it in place (the `Value` is never cloned).
    ///
    /// A whole number written as a float (`3.0`, `1e2`) decodes into an integer field: JSON
    /// Schema's `integer` is any number without a fraction, so a schema saying `integer`
    /// accepts it, and models send it (Gemini's arguments are all doubles; the official
    /// Python and TypeScript MCP SDKs' servers take it for an `int`). serde refuses a float
    /// for a `u32`, so a value serde refuses is read once more with each whole float (within
    /// `i64` or `u64`) as its integer; what still does not decode is refused with the first
    /// reading's pointer and message. A value serde takes at once is read as it is (a
    /// `serde_json::Value` field keeps `3.0`); read the second time, it holds `3`.
    ///
    /// A decode failure is `input_invalid` / `output_invalid` (by direction) with the JSON
    /// pointer serde stopped at; it only happens for values the schema accepted but the type
    /// refuses (custom `Deserialize` impls, say), or when decoding without validating first.
    ///
    /// A value nested deeper than [`crate::limits::MAX_DEPTH`] is refused before serde walks
    /// it (decoding recurses), with a `depth` violation.
    pub fn decode<T: DeserializeOwned>(&self, value: &Value) -> Result<T, SchemaError> {
        if let Err(too_deep) = crate::limits::check_depth(value, crate::limits::MAX_DEPTH) {
            return Err(self.violation_error(vec![too_deep]));
        }
        // Fast path: plain serde from the borrowed value. Path tracking costs an allocation
        // per map key even when nothing is wrong, so it only runs again to locate a failure.
        match T::deserialize(value) {
            Ok(decoded) => Ok(decoded),
            Err(_) => {
                whole_numbers_as_integers::<T>(value).ok_or_else(|| self.decode_error::<T>(value))
            }
        }
    }

    /// Decodes a value into this schema's own type and checks it: the same outcome, and the
    /// same error, as [`Self::validate`] followed by [`Self::decode`], for less work. serde
    /// decodes first; then only the residual ([`Self::residual_schema`]) is checked. The full
    /// validator runs only when one of them fails, to report every violation.
    ///
    /// `T` must be the type the schema was built for (the traits' methods guarantee it).
    #[doc(hidden)]
    pub fn __decode_typed<T: DeserializeOwned>(&self, value: &Value) -> Result<T, SchemaError> {
        self.validator()?;
        if let Err(too_deep) = crate::limits::check_depth(value, crate::limits::MAX_DEPTH) {
            return Err(self.violation_error(vec![too_deep]));
        }
        match T::deserialize(value) {
            Ok(decoded) => {
                self.validate_typed(value, true)?;
                Ok(decoded)
            }
            Err(_) => Err(match self.violations(value) {
                Ok(violations) if !violations.is_empty() => self.violation_error(violations),
                Ok(_) => match whole_numbers_as_integers::<T>(value) {
                    Some(decoded) => return Ok(decoded),
                    None => self.decode_error::<T>(value),
                },
                Err(err) => err,
            }),
        }
    }

    /// Encodes a value of this schema's own type and checks the result: the same outcome as
    /// [`Self::encode`] followed by [`Self::validate`], checking only the residual.
    #[doc(hidden)]
    pub fn __encode_typed<T: Serialize + ?Sized>(&self, value: &T) -> Result<Value, SchemaError> {
        self.validator()?;
        // Built, then checked. (Checking while building, through the checking serializer
        // `to_output_json` uses, costs more than walking the built value: about 70k against
        // 65k instructions for a registry call returning ten hits.)
        let encoded = self.encode(value)?;
        match self.validate_typed(&encoded, false) {
            Ok(()) => Ok(encoded),
            Err(err) => {
                crate::limits::dismantle(encoded);
                Err(err)
            }
        }
    }

    /// [`Self::encode_typed`], to JSON text: without a `Value` when nothing is left to check.
    #[doc(hidden)]
    pub fn __encode_typed_json<T: Serialize + ?Sized>(
        &self,
        value: &T,
    ) -> Result<String, SchemaError> {
        if self.needs_no_check() {
            let mut out = self.text_buffer();
            serde_json::to_writer(&mut out, value).map_err(|err| {
                SchemaError::new(
                    SchemaErrorCode::OutputInvalid,
                    "the value cannot be represented as JSON",
                )
                .with_detail(err.to_string())
            })?;
            self.wrote_text(out.len());
            // serde_json writes UTF-8 only.
            return String::from_utf8(out).map_err(|err| {
                SchemaError::new(SchemaErrorCode::Internal, "the JSON text is not UTF-8")
                    .with_detail(err.to_string())
            });
        }
        // Checked while written, when the residual allows it; the text is then exactly the
        // `Value` path's (`residual::write_checked`). Otherwise, or when the check does not
        // pass, the `Value` path decides and reports.
        if let Some(text) = self
            .fast_check()
            .and_then(|fast| crate::residual::write_checked(fast, value, self.text_buffer()))
        {
            self.wrote_text(text.len());
            return Ok(text);
        }
        // The text is written from the value that was checked: written from the typed value,
        // an `f32` would read differently (`192.3`, not `192.3000030517578`) from what passed.
        let encoded = self.__encode_typed(value)?;
        serde_json::to_string(&encoded).map_err(|err| {
            SchemaError::new(
                SchemaErrorCode::Internal,
                "the value cannot be written as JSON",
            )
            .with_detail(err.to_string())
        })
    }

    fn decode_error<T: DeserializeOwned>(&self, value: &Value) -> SchemaError {
        let (pointer, message) = match serde_path_to_error::deserialize::<_, T>(value) {
            Err(err) => (
                crate::limits::clip_pointer(pointer_of(err.path())),
                crate::limits::bounded_display(err.inner(), 240),
            ),
            // The second pass cannot succeed where the first failed; keep a message anyway.
            Ok(_) => (String::new(), "the value cannot be decoded".to_owned()),
        };
        self.violation_error(vec![Violation {
            pointer,
            keyword: "decode".into(),
            message,
        }])
    }

    /// Encodes a value of the type this schema describes.
    ///
    /// A type whose `Serialize` impl fails (a map with non-string keys, say) is reported as
    /// `output_invalid` for outputs and `internal` for inputs.
    pub fn encode<T: Serialize + ?Sized>(&self, value: &T) -> Result<Value, SchemaError> {
        serde_json::to_value(value).map_err(|err| {
            let code = match self.direction() {
                Direction::Output => SchemaErrorCode::OutputInvalid,
                Direction::Input => SchemaErrorCode::Internal,
            };
            SchemaError::new(code, "the value cannot be represented as JSON")
                .with_detail(err.to_string())
        })
    }
}

/// `value` decoded with each whole number written as a float (`3.0`, `1e2`, `-0.0`) read as
/// the integer it is, or `None` when it still does not decode (see [`BoundarySchema::decode`]).
/// Only a value serde refused comes here (a refusal, so the copy costs nothing a served call
/// pays); it is within [`crate::limits::MAX_DEPTH`], so the walk's recursion is bounded.
fn whole_numbers_as_integers<T: DeserializeOwned>(value: &Value) -> Option<T> {
    let mut read = value.clone();
    as_integers(&mut read);
    // Taken by value: its strings move into `T` rather than being copied once more.
    serde_json::from_value(read).ok()
}

/// The integer a float without a fraction is, where an `i64` or a `u64` holds it.
fn whole(number: &serde_json::Number) -> Option<Value> {
    // 2^63 and 2^64, exactly: every `f64` below them and without a fraction converts exactly.
    const I64_END: f64 = 9_223_372_036_854_775_808.0;
    const U64_END: f64 = 18_446_744_073_709_551_616.0;
    if !number.is_f64() {
        // Already an integer (read as a float, one past 2^53 would lose its last digits).
        return None;
    }
    let float = number.as_f64()?;
    // JSON has no infinity or NaN, so every float here is finite.
    if float.fract() != 0.0 {
        return None;
    }
    if (0.0..U64_END).contains(&float) {
        // In range and whole: the cast is exact (`-0.0` is `0`).
        Some(Value::from(float as u64))
    } else if (-I64_END..0.0).contains(&float) {
        Some(Value::from(float as i64))
    } else {
        None
    }
}

fn as_integers(value: &mut Value) {
    match value {
        Value::Number(number) => {
            if let Some(integer) = whole(number) {
                *value = integer;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(as_integers),
        Value::Object(members) => members.values_mut().for_each(as_integers),
        _ => {}
    }
}

fn pointer_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut pointer = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => {
                pointer.push('/');
                pointer.push_str(&index.to_string());
            }
            Segment::Map { key } => {
                pointer.push('/');
                pointer.push_str(&escape_token(key));
            }
            // An enum variant name is not a step into the JSON value; unknown steps neither.
            Segment::Enum { .. } | Segment::Unknown => {}
        }
    }
    pointer
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
    struct Page {
        size: u32,
        offset: i64,
        ids: Vec<u8>,
        ratio: f64,
        big: u64,
    }

    fn page(value: Value) -> Result<Page, SchemaError> {
        BoundarySchema::build::<Page>(Direction::Input, None).decode(&value)
    }

    fn page_typed(value: Value) -> Result<Page, SchemaError> {
        BoundarySchema::build::<Page>(Direction::Input, None).__decode_typed(&value)
    }

    #[test]
    fn a_whole_number_written_as_a_float_decodes_into_an_integer_field() {
        // 2^53 + 1: an integer already, kept exactly (read as a float it would be 2^53).
        let sent = json!({
            "size": 3.0, "offset": -2.0, "ids": [1.0, 2, 1e2], "ratio": 2.0,
            "big": 9_007_199_254_740_993_u64,
        });
        let expected = Page {
            size: 3,
            offset: -2,
            ids: vec![1, 2, 100],
            ratio: 2.0,
            big: 9_007_199_254_740_993,
        };
        assert_eq!(page(sent.clone()).unwrap(), expected);
        // The schema says `integer`, which `3.0` is: validated and decoded alike.
        assert_eq!(page_typed(sent).unwrap(), expected);
        let zero = json!({ "size": -0.0, "offset": 0, "ids": [], "ratio": 0.5, "big": 1 });
        assert_eq!(page(zero).unwrap().size, 0);
    }

    #[test]
    fn a_float_with_a_fraction_or_past_the_integers_is_still_refused_where_serde_stopped() {
        let base = json!({ "size": 1, "offset": 0, "ids": [], "ratio": 0.5, "big": 1 });
        let with = |pointer: &str, number: f64| {
            let mut value = base.clone();
            *value.pointer_mut(pointer).unwrap() = json!(number);
            value
        };
        for (pointer, number, expected) in [
            ("/size", 3.5, "expected u32"),
            // 2^64: whole, and past every `u64` (a saturating cast would make it u64::MAX).
            ("/big", 18_446_744_073_709_551_616.0, "expected u64"),
            // The next float below -2^63, past every `i64`.
            ("/offset", -9_223_372_036_854_777_856.0, "expected i64"),
            // Whole and within `u64`, but past a `u32`.
            ("/size", 4_294_967_296.0, "expected u32"),
        ] {
            let err = page(with(pointer, number)).unwrap_err();
            let violation = &err.violations()[0];
            assert_eq!(
                (violation.pointer.as_str(), violation.keyword.as_str()),
                (pointer, "decode")
            );
            // The first reading's message: the float as sent.
            let message = &violation.message;
            assert!(
                message.contains("invalid type: floating point"),
                "{message}"
            );
            assert!(message.contains(expected), "{message}");
        }
        // The edges themselves: -2^63 is an `i64`, the largest float below 2^64 a `u64`.
        assert_eq!(
            page(with("/offset", -9_223_372_036_854_775_808.0))
                .unwrap()
                .offset,
            i64::MIN
        );
        let below = 18_446_744_073_709_549_568.0;
        assert_eq!(
            page(with("/big", below)).unwrap().big,
            18_446_744_073_709_549_568
        );
    }

    #[test]
    fn a_value_serde_takes_at_once_is_not_changed() {
        #[derive(Deserialize)]
        struct Raw {
            raw: Value,
        }
        #[derive(Deserialize)]
        struct Both {
            n: u32,
            raw: Value,
        }
        let boundary = BoundarySchema::from_value("Raw", Direction::Input, json!({}));
        let raw: Raw = boundary.decode(&json!({ "raw": 2.0 })).unwrap();
        assert!(raw.raw.is_f64(), "{}", raw.raw);
        // Read the second time, every whole float is an integer (`BoundarySchema::decode`'s documentation).
        let both: Both = boundary.decode(&json!({ "n": 3.0, "raw": 2.0 })).unwrap();
        assert_eq!((both.n, both.raw), (3, json!(2)));
    }
}
