//! Cross-field rules: what a JSON Schema cannot say, checked after it.
//!
//! A schema checks each field on its own; "no path is both allowed and forbidden" or
//! "`status = DONE` implies `exit_code = 0`" relate fields to each other. A type names a rule
//! function on its derive, `#[agent(validate = path::to::function)]`, and the function reports
//! what it finds into a [`Rules`]:
//!
//! - an **error** fails validation exactly as a schema violation does: the same error code
//!   (`input_invalid` or `output_invalid`), the same [`Violation`] shape with a JSON pointer,
//!   its `keyword` the rule's name;
//! - a **warning** (a SHOULD of a specification) never fails validation; a caller that wants
//!   warnings calls the function itself.
//!
//! The rules run after the schema accepts a value and serde decodes it, everywhere a value of
//! the type is checked: [`BoundarySchema::validate`](crate::BoundarySchema::validate), and so
//! agentio-core's `AgentInput::validate_input`, `AgentInput::from_input_value` and the output
//! methods of `AgentOutput` (the runtime, the tool registry and workflows), for both directions
//! of a type that derives both traits. A value the schema refuses is reported with the schema's violations
//! alone: the rules assume a well-formed value.
//!
//! ```
//! use agentio_core::{AgentInput, rules::Rules};
//! use serde_json::json;
//!
//! #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput)]
//! #[agent(validate = check_range)]
//! struct Range {
//!     low: u32,
//!     high: u32,
//! }
//!
//! fn check_range(range: &Range, rules: &mut Rules) {
//!     if range.low > range.high {
//!         rules.error("/low", "low_not_above_high", "`low` must not be above `high`");
//!     }
//!     if range.high - range.low.min(range.high) > 1000 {
//!         rules.warning("", "wide_range", "ranges wider than 1000 are slow");
//!     }
//! }
//!
//! assert!(Range::validate_input(&json!({ "low": 1, "high": 2 })).is_ok());
//! let err = Range::validate_input(&json!({ "low": 3, "high": 2 })).unwrap_err();
//! assert_eq!(err.code().as_str(), "input_invalid");
//! assert_eq!(err.violations()[0].pointer, "/low");
//! assert_eq!(err.violations()[0].keyword, "low_not_above_high");
//! // A warning does not fail validation; the function reports it to whoever asks.
//! let wide = Range::from_input_value(&json!({ "low": 0, "high": 5000 })).unwrap();
//! let mut rules = Rules::new();
//! check_range(&wide, &mut rules);
//! assert!(rules.errors().is_empty());
//! assert_eq!(rules.warnings()[0].keyword, "wide_range");
//! ```

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::violation::Violation;

/// What a type's rule function found: errors, which fail validation, and warnings, which do
/// not. See the [module documentation](self).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rules {
    errors: Vec<Violation>,
    warnings: Vec<Violation>,
}

impl Rules {
    /// Nothing found yet. (The module documentation shows a rule function on a type.)
    ///
    /// ```
    /// use agentio_core::rules::Rules;
    ///
    /// let mut rules = Rules::new();
    /// assert!(rules.errors().is_empty() && rules.warnings().is_empty());
    /// rules.error("/paths/0", "allowed_and_forbidden", "a path cannot be both allowed and forbidden");
    /// rules.warning("/timeout", "long_timeout", "timeouts over an hour are unusual");
    /// assert_eq!(rules.errors()[0].pointer, "/paths/0");
    /// assert_eq!(rules.errors()[0].keyword, "allowed_and_forbidden");
    /// assert_eq!(rules.warnings()[0].message, "timeouts over an hour are unusual");
    /// let (errors, warnings) = rules.into_parts();
    /// assert_eq!((errors.len(), warnings.len()), (1, 1));
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Reports a broken rule at `pointer` (an RFC 6901 JSON pointer into the value, `""` for
    /// the whole value): validation fails with it. `rule` names the rule (it becomes the
    /// violation's `keyword`); `message` says what was expected, in words. (An example is on
    /// [`Self::new`].)
    pub fn error(
        &mut self,
        pointer: impl Into<String>,
        rule: impl Into<String>,
        message: impl Into<String>,
    ) {
        self.errors.push(violation(pointer, rule, message));
    }

    /// Reports a rule a value SHOULD keep and does not: recorded, never a failure (an example
    /// is on [`Self::new`]).
    pub fn warning(
        &mut self,
        pointer: impl Into<String>,
        rule: impl Into<String>,
        message: impl Into<String>,
    ) {
        self.warnings.push(violation(pointer, rule, message));
    }

    /// The broken rules, in the order reported (an example is on [`Self::new`]).
    pub fn errors(&self) -> &[Violation] {
        &self.errors
    }

    /// The warnings, in the order reported (an example is on [`Self::new`]).
    pub fn warnings(&self) -> &[Violation] {
        &self.warnings
    }

    /// Both lists, errors first (an example is on [`Self::new`]).
    pub fn into_parts(self) -> (Vec<Violation>, Vec<Violation>) {
        (self.errors, self.warnings)
    }
}

fn violation(
    pointer: impl Into<String>,
    rule: impl Into<String>,
    message: impl Into<String>,
) -> Violation {
    Violation {
        pointer: pointer.into(),
        keyword: rule.into(),
        message: message.into(),
    }
}

/// Escapes one JSON-pointer token (RFC 6901: `~` as `~0`, `/` as `~1`), for rules that point
/// into maps whose keys are data.
///
/// ```
/// assert_eq!(agentio_core::rules::pointer_token("a/b~c"), "a~1b~0c");
/// ```
pub fn pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// The errors of `T`'s rules for a JSON value the schema has accepted, decoded once; a value
/// that does not decode has no rule errors here (its decode error is reported where it is
/// decoded).
#[doc(hidden)]
pub fn errors_of<T: DeserializeOwned>(value: &Value, run: fn(&T, &mut Rules)) -> Vec<Violation> {
    match T::deserialize(value) {
        Ok(decoded) => {
            let mut rules = Rules::new();
            run(&decoded, &mut rules);
            rules.errors
        }
        Err(_) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_and_warnings_are_kept_apart_in_order() {
        let mut rules = Rules::new();
        rules.error(
            "/low",
            "low_not_above_high",
            "`low` must not be above `high`",
        );
        rules.warning("", "wide_range", "wide");
        rules.error("/x", "second", "two");
        let keywords =
            |list: &[Violation]| list.iter().map(|v| v.keyword.clone()).collect::<Vec<_>>();
        assert_eq!(keywords(rules.errors()), ["low_not_above_high", "second"]);
        assert_eq!(keywords(rules.warnings()), ["wide_range"]);
        assert_eq!(rules.errors()[0].pointer, "/low");
        assert_eq!(rules.errors()[0].message, "`low` must not be above `high`");
        let (errors, warnings) = rules.clone().into_parts();
        assert_eq!(errors, rules.errors());
        assert_eq!(warnings, rules.warnings());
    }

    #[test]
    fn pointer_tokens_escape_tilde_before_slash() {
        assert_eq!(pointer_token("a/b~c"), "a~1b~0c");
        // `~1` in a key is a tilde and a one, not an escaped slash.
        assert_eq!(pointer_token("~1"), "~01");
        assert_eq!(pointer_token("plain"), "plain");
        assert_eq!(pointer_token(""), "");
    }
}
