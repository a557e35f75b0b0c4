//! [`Violation`]: one place where a value breaks its schema, the unit every check reports in.

use std::fmt;

use serde::{Deserialize, Serialize};

/// One place where a JSON value breaks its schema.
///
/// `pointer` is an RFC 6901 JSON pointer into the checked value (`""` is the whole value). For
/// a missing required property it points at the property that should be there, and for a
/// property the schema does not allow it points at that property, not at the enclosing object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// Where in the value, as a JSON pointer.
    pub pointer: String,
    /// The JSON Schema keyword that failed (`type`, `required`, `minimum`, ...), or `decode`
    /// when the schema accepted the value but the Rust type could not decode it.
    pub keyword: String,
    /// What was expected there, in words.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() {
            "(root)"
        } else {
            &self.pointer
        };
        write!(f, "{pointer}: {}", self.message)
    }
}
