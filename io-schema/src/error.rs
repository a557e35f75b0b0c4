//! [`SchemaError`]: why a value did not cross a boundary, or why the boundary could not check
//! it. The engine knows nothing of agents: `agentio-core` turns this into its AIP-14
//! `AgentError` (`From<SchemaError>`), keeping the code, the message, every violation and the
//! operator detail.

use std::fmt;

use crate::violation::Violation;

/// What kind of failure a [`SchemaError`] is, by the wire name of the code it becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SchemaErrorCode {
    /// An input breaks its schema (or its type's rules).
    InputInvalid,
    /// An output breaks its schema (or its type's rules).
    OutputInvalid,
    /// The boundary itself cannot check (a schema that does not compile, a value serde cannot
    /// write): a fault of the host, not of the value's author.
    Internal,
}

impl SchemaErrorCode {
    /// The wire name: `input_invalid`, `output_invalid`, `internal`.
    ///
    /// ```
    /// use agentio_schema::SchemaErrorCode;
    /// assert_eq!(SchemaErrorCode::OutputInvalid.as_str(), "output_invalid");
    /// ```
    pub fn as_str(&self) -> &'static str {
        match self {
            SchemaErrorCode::InputInvalid => "input_invalid",
            SchemaErrorCode::OutputInvalid => "output_invalid",
            SchemaErrorCode::Internal => "internal",
        }
    }
}

impl fmt::Display for SchemaErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a value did not cross a boundary (every violation, with its JSON pointer), or why the
/// boundary could not check it. Boxed: a `Result` of it is one pointer wide on the success
/// path every call takes.
///
/// ```
/// use agentio_schema::{BoundarySchema, Direction};
/// use serde_json::json;
///
/// let schema = BoundarySchema::from_value("Count", Direction::Input, json!({ "type": "integer" }));
/// let err = schema.validate(&json!("three")).unwrap_err();
/// assert_eq!(err.code().as_str(), "input_invalid");
/// assert_eq!(err.violations()[0].keyword, "type");
/// assert!(err.message().starts_with("input does not match the schema of `Count`"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct SchemaError(Box<Inner>);

#[derive(Clone, PartialEq, Eq)]
struct Inner {
    code: SchemaErrorCode,
    message: String,
    violations: Vec<Violation>,
    detail: Option<String>,
}

impl SchemaError {
    /// An error of `code` with `message`, no violations and no detail.
    pub fn new(code: SchemaErrorCode, message: impl Into<String>) -> Self {
        SchemaError(Box::new(Inner {
            code,
            message: message.into(),
            violations: Vec::new(),
            detail: None,
        }))
    }

    /// The same error, listing `violations`.
    #[must_use]
    pub fn with_violations(mut self, violations: Vec<Violation>) -> Self {
        self.0.violations = violations;
        self
    }

    /// The same error, with detail for operators (a compile error, serde's message) that is
    /// not for the value's author.
    #[must_use]
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.0.detail = Some(detail.into());
        self
    }

    /// What kind of failure this is.
    pub fn code(&self) -> SchemaErrorCode {
        self.0.code
    }

    /// What went wrong, in words fit for the value's author.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// Every place the value breaks its schema (empty for an `internal` error).
    pub fn violations(&self) -> &[Violation] {
        &self.0.violations
    }

    /// Detail for operators, if any.
    pub fn detail(&self) -> Option<&str> {
        self.0.detail.as_deref()
    }

    /// The parts, by value: code, message, violations, detail.
    pub fn into_parts(self) -> (SchemaErrorCode, String, Vec<Violation>, Option<String>) {
        let Inner {
            code,
            message,
            violations,
            detail,
        } = *self.0;
        (code, message, violations, detail)
    }
}

impl fmt::Debug for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchemaError")
            .field("code", &self.0.code)
            .field("message", &self.0.message)
            .field("violations", &self.0.violations)
            .field("detail", &self.0.detail)
            .finish()
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.0.code, self.0.message)
    }
}

impl std::error::Error for SchemaError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_keeps_its_parts_and_says_its_code() {
        let violation = Violation {
            pointer: "/a".into(),
            keyword: "type".into(),
            message: "not a string".into(),
        };
        let err = SchemaError::new(SchemaErrorCode::OutputInvalid, "bad output")
            .with_violations(vec![violation.clone()])
            .with_detail("for operators");
        assert_eq!(err.to_string(), "output_invalid: bad output");
        assert_eq!(err.code(), SchemaErrorCode::OutputInvalid);
        assert_eq!(err.message(), "bad output");
        assert_eq!(err.violations(), std::slice::from_ref(&violation));
        assert_eq!(err.detail(), Some("for operators"));
        assert!(format!("{err:?}").contains("OutputInvalid"));
        let (code, message, violations, detail) = err.into_parts();
        assert_eq!(code, SchemaErrorCode::OutputInvalid);
        assert_eq!(message, "bad output");
        assert_eq!(violations, [violation]);
        assert_eq!(detail.as_deref(), Some("for operators"));
        assert_eq!(SchemaErrorCode::Internal.to_string(), "internal");
        assert_eq!(SchemaErrorCode::InputInvalid.as_str(), "input_invalid");
    }
}
