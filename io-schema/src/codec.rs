//! Decoding and encoding through a boundary: serde and the schema together, so that a value
//! that crosses is both valid and of its type, and a failure says where.

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
            Err(_) => Err(self.decode_error::<T>(value)),
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
                Ok(_) => self.decode_error::<T>(value),
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
