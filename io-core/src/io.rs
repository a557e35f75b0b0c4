//! `AgentInput` and `AgentOutput`: types with a schema, checked at the runtime boundary.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use serde::Serialize;
use serde::de::DeserializeOwned;

use schemars::JsonSchema;

use crate::bounds::IsJsonSchema;
use crate::error::AgentError;
use crate::{BoundarySchema, Direction};

/// A type that can be the input of an agent core or a tool.
///
/// Derive it: `#[derive(Serialize, Deserialize, JsonSchema, AgentInput)]`. The derive checks at
/// compile time that the type is a JSON object (a struct with named fields, or an internally
/// or adjacently tagged enum) and that the reserved `_workflowFsRoot` field, if present, is an
/// optional string or path.
///
/// The schema is generated once (Draft 2020-12, schemars' deserialize contract) and its
/// validator compiled once; [`AgentInput::input_schema`] returns the same `&'static` reference
/// every time.
///
/// ```
/// use agentio_core::AgentInput;
/// use serde_json::json;
///
/// /// Where to look.
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput)]
/// #[serde(deny_unknown_fields)]
/// struct Lookup {
///     /// The key to find.
///     key: String,
/// }
///
/// assert_eq!(Lookup::input_schema()["properties"]["key"]["description"], "The key to find.");
/// let err = Lookup::validate_input(&json!({ "key": "a", "extra": 1 })).unwrap_err();
/// assert_eq!(err.code().as_str(), "input_invalid");
/// assert_eq!(err.violations()[0].pointer, "/extra");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an agent input",
    label = "`{Self}` does not implement `AgentInput`",
    note = "derive it: `#[derive(Serialize, Deserialize, JsonSchema, AgentInput)]`"
)]
pub trait AgentInput: Serialize + DeserializeOwned + IsJsonSchema + Send + Sync + 'static {
    /// Whether a value of this type can carry the host-injected `_workflowFsRoot` (AIP-16):
    /// false for a `deny_unknown_fields` type without that field, which would refuse it. The
    /// derive computes it; `#[define_io]` refuses files for an input type where it is false.
    const ACCEPTS_FS_ROOT: bool = true;

    /// The compiled input schema of this type, built on first use.
    fn input_boundary() -> &'static BoundarySchema {
        BoundarySchema::cached::<Self>(Direction::Input, None)
    }

    /// The input JSON Schema (Draft 2020-12).
    fn input_schema() -> &'static Value {
        Self::input_boundary().schema()
    }

    /// Checks a candidate input; every violation is reported with its JSON pointer.
    fn validate_input(value: &Value) -> Result<(), AgentError> {
        Self::input_boundary()
            .validate(value)
            .map_err(AgentError::from)
    }

    /// Checks a candidate input and decodes it: the same outcome and the same error as
    /// [`Self::validate_input`] followed by decoding, at less cost. serde decodes first and
    /// only what serde does not enforce is then checked
    /// ([`BoundarySchema::residual_schema`]); the full schema runs only to report a failure.
    ///
    /// ```
    /// use agentio_core::AgentInput;
    /// use serde_json::json;
    ///
    /// #[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput)]
    /// struct Page {
    ///     #[schemars(range(max = 100))]
    ///     size: u32,
    /// }
    /// assert_eq!(Page::from_input_value(&json!({ "size": 20 })).unwrap().size, 20);
    /// let err = Page::from_input_value(&json!({ "size": 500 })).unwrap_err();
    /// assert_eq!(err.violations()[0].pointer, "/size");
    /// assert_eq!(err.violations()[0].keyword, "maximum");
    /// ```
    fn from_input_value(value: &Value) -> Result<Self, AgentError> {
        let boundary = Self::input_boundary();
        let decoded: Self = boundary.__decode_typed(value)?;
        let mut rules = crate::rules::Rules::new();
        decoded.__input_rules(&mut rules);
        boundary.__rule_error(rules.into_parts().0)?;
        Ok(decoded)
    }

    /// The type's cross-field rules as an input (`#[agent(validate = ...)]`, see
    /// [`crate::rules`]); none unless the derive names a function.
    #[doc(hidden)]
    fn __input_rules(&self, rules: &mut crate::rules::Rules) {
        let _ = rules;
    }
}

/// A type that can be the output of an agent core or a tool.
///
/// Derive it: `#[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]`. Add
/// `#[agent(strict)]` to get [`AgentOutput::structured_output_format`] for OpenAI strict
/// structured outputs; the derive then refuses fields strict mode cannot express.
///
/// ```
/// use agentio_core::AgentOutput;
///
/// /// A weather report.
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentOutput)]
/// #[agent(strict)]
/// struct Report {
///     summary: String,
///     gust_kmh: Option<f64>,
/// }
///
/// let format = Report::structured_output_format().unwrap();
/// assert_eq!(format["json_schema"]["name"], "Report");
/// assert_eq!(format["json_schema"]["schema"]["required"], serde_json::json!(["summary", "gust_kmh"]));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an agent output",
    label = "`{Self}` does not implement `AgentOutput`",
    note = "derive it: `#[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]`"
)]
pub trait AgentOutput: Serialize + DeserializeOwned + IsJsonSchema + Send + Sync + 'static {
    /// The compiled output schema of this type, built on first use.
    fn output_boundary() -> &'static BoundarySchema {
        BoundarySchema::cached::<Self>(Direction::Output, None)
    }

    /// The output JSON Schema (Draft 2020-12).
    fn output_schema() -> &'static Value {
        Self::output_boundary().schema()
    }

    /// Checks a candidate output; every violation is reported with its JSON pointer.
    fn validate_output(value: &Value) -> Result<(), AgentError> {
        Self::output_boundary()
            .validate(value)
            .map_err(AgentError::from)
    }

    /// Encodes this output and checks it: the same outcome and the same error as encoding
    /// followed by [`Self::validate_output`], checking only what the type's serialization does
    /// not guarantee ([`BoundarySchema::residual_schema`]).
    ///
    /// One difference, on purpose: the nesting limit ([`crate::limits::MAX_DEPTH`], 128).
    /// It guards walks over values from outside, so every input and every value given to
    /// [`Self::validate_output`] is held to it. An output is a value your own code built, and
    /// its check walks it only as deep as the residual's constraints reach: a
    /// `serde_json::Value` field nested deeper than the limit is not refused here. A recursive
    /// type whose residual checks something (a `$ref` in it) is the exception to the
    /// exception: that check would recurse as deep as the value, so such an output nested
    /// deeper than the limit is refused, with the one `depth` violation `validate` reports.
    ///
    /// ```
    /// use agentio_core::AgentOutput;
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentOutput)]
    /// struct Score {
    ///     #[schemars(range(min = 0.0, max = 1.0))]
    ///     value: f64,
    /// }
    /// assert_eq!(Score { value: 0.5 }.to_output_value().unwrap()["value"], 0.5);
    /// let err = Score { value: 2.0 }.to_output_value().unwrap_err();
    /// assert_eq!(err.code().as_str(), "output_invalid");
    /// assert_eq!(err.violations()[0].pointer, "/value");
    /// ```
    fn to_output_value(&self) -> Result<Value, AgentError> {
        let boundary = Self::output_boundary();
        boundary.__rule_error(self.__output_rule_errors())?;
        Ok(boundary.__encode_typed(self)?)
    }

    /// The type's cross-field rules as an output (`#[agent(validate = ...)]`, see
    /// [`crate::rules`]); none unless the derive names a function.
    #[doc(hidden)]
    fn __output_rules(&self, rules: &mut crate::rules::Rules) {
        let _ = rules;
    }

    #[doc(hidden)]
    fn __output_rule_errors(&self) -> Vec<crate::Violation> {
        let mut rules = crate::rules::Rules::new();
        self.__output_rules(&mut rules);
        rules.into_parts().0
    }

    /// Encodes this output straight to JSON text, checked as [`Self::to_output_value`] checks
    /// it, with the same answer and the same error. When serde's output needs no check at all
    /// ([`BoundarySchema::residual_schema`] is `true`), or when the residual uses only the
    /// common keywords (bounds, lengths, counts, types, properties), no `Value` is built: the
    /// residual is checked while the text is written. Otherwise, and to report a violation,
    /// the value is encoded and checked first. For transports that send text (HTTP, MCP's
    /// text content).
    ///
    /// ```
    /// use agentio_core::AgentOutput;
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentOutput)]
    /// struct Hits { hits: Vec<String>, total: u32 }
    /// let text = Hits { hits: vec!["a".into()], total: 1 }.to_output_json().unwrap();
    /// assert_eq!(text, r#"{"hits":["a"],"total":1}"#);
    /// ```
    fn to_output_json(&self) -> Result<String, AgentError> {
        let boundary = Self::output_boundary();
        boundary.__rule_error(self.__output_rule_errors())?;
        Ok(boundary.__encode_typed_json(self)?)
    }

    /// The provider structured-output description for types marked `#[agent(strict)]`:
    /// `{"type": "json_schema", "json_schema": {"name", "strict": true, "schema"}}`.
    /// `None` for other types.
    fn structured_output_format() -> Option<&'static Value> {
        Self::output_boundary().structured_output_format()
    }
}

// Inputs are JSON objects: only object-shaped std types are inputs. `Value` is accepted as
// the escape hatch for cores that take anything.
impl AgentInput for Value {}
impl AgentInput for serde_json::Map<String, Value> {}
impl<T> AgentInput for BTreeMap<String, T> where
    T: Serialize + DeserializeOwned + JsonSchema + Send + Sync + 'static
{
}
impl<T, S> AgentInput for HashMap<String, T, S>
where
    T: Serialize + DeserializeOwned + JsonSchema + Send + Sync + 'static,
    S: std::hash::BuildHasher + Default + Send + Sync + 'static,
{
}

macro_rules! outputs {
    ($($ty:ty),* $(,)?) => { $(impl AgentOutput for $ty {})* };
}

outputs!(
    (), bool, String, char, Value, serde_json::Map<String, Value>,
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64,
    std::path::PathBuf,
);

impl<T: AgentOutput + JsonSchema> AgentOutput for Vec<T> {}
impl<T: AgentOutput + JsonSchema> AgentOutput for Option<T> {}
impl<T: AgentOutput + JsonSchema> AgentOutput for Box<T> {}
impl<T: AgentOutput + JsonSchema + Ord> AgentOutput for std::collections::BTreeSet<T> {}
impl<T: AgentOutput + JsonSchema> AgentOutput for BTreeMap<String, T> {}
impl<T: AgentOutput + JsonSchema, S> AgentOutput for HashMap<String, T, S> where
    S: std::hash::BuildHasher + Default + Send + Sync + 'static
{
}
impl<A: AgentOutput + JsonSchema, B: AgentOutput + JsonSchema> AgentOutput for (A, B) {}
impl<T: AgentOutput + JsonSchema, E: AgentOutput + JsonSchema> AgentOutput for Result<T, E> {}
