//! The one boundary error of agent-io and the tool-contract envelope it serializes to.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub(crate) use agentio_schema::Violation;
use agentio_schema::{SchemaError, SchemaErrorCode};

/// The code of an [`AgentError`]: the standard codes of the tool contract (AIP-14, "Errors"),
/// the boundary codes agent-io adds, and domain-prefixed codes such as `stripe:card_declined`.
///
/// Serializes as its snake-case string (`"input_invalid"`); any other string deserializes to
/// [`ErrorCode::Other`], so codes this version does not know survive a round trip.
///
/// ```
/// use agentio_core::ErrorCode;
/// assert_eq!(ErrorCode::InputInvalid.as_str(), "input_invalid");
/// assert_eq!(ErrorCode::from("stripe:card_declined"), ErrorCode::Other("stripe:card_declined".into()));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// The input does not match the input schema (or cannot be decoded into the input type).
    InputInvalid,
    /// The input uses a field the serving implementation dropped (AIP-14 `schema_narrowing`).
    InputUnsupported,
    /// The caller may not perform this call.
    Unauthorised,
    /// The call needs credentials that were not supplied.
    AuthRequired,
    /// The thing asked for does not exist (including an unknown tool id).
    NotFound,
    /// An upstream rate limit was hit.
    RateLimited,
    /// The call exceeded its time budget.
    Timeout,
    /// An upstream service failed.
    UpstreamError,
    /// No implementation can serve the call.
    NoRoute,
    /// The pinned provider is not available.
    PinnedProviderUnavailable,
    /// A fault inside the host or the body (a bug, a panic, a schema that cannot compile).
    Internal,
    /// The body returned a value that does not match the output schema; the value was
    /// withheld from the caller. An agent-io boundary code (AIP-14 lists input codes only).
    OutputInvalid,
    /// The per-call context does not match the contract's `contextSchema`.
    ContextInvalid,
    /// A host approver refused a call that the contract's approval class gates.
    ApprovalDenied,
    /// The caller cancelled the call (an MCP `notifications/cancelled`, a dropped request)
    /// before it finished. An agent-io boundary code.
    Cancelled,
    /// Any other code, typically domain-prefixed (`stripe:card_declined`).
    Other(Cow<'static, str>),
}

impl ErrorCode {
    /// The code as it appears on the wire.
    ///
    /// ```
    /// use agentio_core::ErrorCode;
    /// assert_eq!(ErrorCode::InputInvalid.as_str(), "input_invalid");
    /// assert_eq!(ErrorCode::Other("stripe:card_declined".into()).as_str(), "stripe:card_declined");
    /// ```
    pub fn as_str(&self) -> &str {
        match self {
            ErrorCode::InputInvalid => "input_invalid",
            ErrorCode::InputUnsupported => "input_unsupported",
            ErrorCode::Unauthorised => "unauthorised",
            ErrorCode::AuthRequired => "auth_required",
            ErrorCode::NotFound => "not_found",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::Timeout => "timeout",
            ErrorCode::UpstreamError => "upstream_error",
            ErrorCode::NoRoute => "no_route",
            ErrorCode::PinnedProviderUnavailable => "pinned_provider_unavailable",
            ErrorCode::Internal => "internal",
            ErrorCode::OutputInvalid => "output_invalid",
            ErrorCode::ContextInvalid => "context_invalid",
            ErrorCode::ApprovalDenied => "approval_denied",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::Other(code) => code,
        }
    }

    /// Whether a caller may retry a call that failed with this code, absent other knowledge:
    /// `timeout`, `rate_limited` and `upstream_error` are transient; everything else is not.
    ///
    /// ```
    /// use agentio_core::ErrorCode;
    /// assert!(ErrorCode::Timeout.retryable_by_default());
    /// assert!(!ErrorCode::InputInvalid.retryable_by_default());
    /// assert!(!ErrorCode::from("stripe:card_declined").retryable_by_default());
    /// ```
    pub fn retryable_by_default(&self) -> bool {
        matches!(
            self,
            ErrorCode::Timeout | ErrorCode::RateLimited | ErrorCode::UpstreamError
        )
    }
}

impl From<&str> for ErrorCode {
    fn from(code: &str) -> Self {
        match code {
            "input_invalid" => ErrorCode::InputInvalid,
            "input_unsupported" => ErrorCode::InputUnsupported,
            "unauthorised" => ErrorCode::Unauthorised,
            "auth_required" => ErrorCode::AuthRequired,
            "not_found" => ErrorCode::NotFound,
            "rate_limited" => ErrorCode::RateLimited,
            "timeout" => ErrorCode::Timeout,
            "upstream_error" => ErrorCode::UpstreamError,
            "no_route" => ErrorCode::NoRoute,
            "pinned_provider_unavailable" => ErrorCode::PinnedProviderUnavailable,
            "internal" => ErrorCode::Internal,
            "output_invalid" => ErrorCode::OutputInvalid,
            "context_invalid" => ErrorCode::ContextInvalid,
            "approval_denied" => ErrorCode::ApprovalDenied,
            "cancelled" => ErrorCode::Cancelled,
            other => ErrorCode::Other(Cow::Owned(other.to_owned())),
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let code = Cow::<'de, str>::deserialize(deserializer)?;
        if code.is_empty() {
            return Err(de::Error::invalid_value(
                de::Unexpected::Str(""),
                &"a non-empty error code",
            ));
        }
        Ok(ErrorCode::from(code.as_ref()))
    }
}

/// The error of every agent-io boundary: an agent turn, a tool call, a file contract.
///
/// It carries a standard [`ErrorCode`], a message that is safe to show a model, whether a
/// retry may help, the schema [`Violation`]s that caused it (if any), and an optional
/// operator detail that is kept out of the envelope a model sees.
///
/// It serializes to the `error` object of the AIP-14 envelope; [`AgentError::to_envelope`] gives
/// the whole `{ "ok": false, "error": { ... } }` value:
///
/// ```
/// use agentio_core::{AgentError, ErrorCode};
/// let err = AgentError::new(ErrorCode::NotFound, "no such ticket")
///     .with_operator_detail("ticket 42 was deleted by a migration");
/// assert_eq!(
///     err.to_envelope(),
///     serde_json::json!({ "ok": false, "error": {
///         "code": "not_found", "message": "no such ticket", "retryable": false } })
/// );
/// assert_eq!(err.operator_detail(), Some("ticket 42 was deleted by a migration"));
/// ```
#[derive(Clone, PartialEq)]
pub struct AgentError(Box<Inner>);

/// Boxed: an error is rare, and a `Result<T, AgentError>` (in every future that awaits one)
/// stays the size of `T` plus a pointer.
#[derive(Clone, Debug, PartialEq)]
struct Inner {
    code: ErrorCode,
    message: String,
    retryable: bool,
    violations: Vec<Violation>,
    operator_detail: Option<String>,
}

impl fmt::Debug for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentError")
            .field("code", &self.0.code)
            .field("message", &self.0.message)
            .field("retryable", &self.0.retryable)
            .field("violations", &self.0.violations)
            .field("operator_detail", &self.0.operator_detail)
            .finish()
    }
}

impl AgentError {
    /// An error with `code` and a message safe to show a model; `retryable` follows
    /// [`ErrorCode::retryable_by_default`].
    ///
    /// ```
    /// use agentio_core::{AgentError, ErrorCode};
    /// let err = AgentError::new(ErrorCode::RateLimited, "too many requests; try again in a minute");
    /// assert_eq!(err.code(), &ErrorCode::RateLimited);
    /// assert_eq!(err.message(), "too many requests; try again in a minute");
    /// assert!(err.is_retryable());
    /// assert!(err.violations().is_empty() && err.operator_detail().is_none());
    /// ```
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        AgentError(Box::new(Inner {
            retryable: code.retryable_by_default(),
            code,
            message: message.into(),
            violations: Vec::new(),
            operator_detail: None,
        }))
    }

    /// An `internal` error: a fault of the host or the body, not of the caller.
    ///
    /// ```
    /// let err = agentio_core::AgentError::internal("the index is unavailable");
    /// assert_eq!(err.code().as_str(), "internal");
    /// ```
    pub fn internal(message: impl Into<String>) -> Self {
        AgentError::new(ErrorCode::Internal, message)
    }

    /// An `input_invalid` error listing the schema violations of the input; the envelope
    /// carries them under `error.cause.violations`.
    ///
    /// ```
    /// use agentio_core::{AgentError, Violation};
    /// let err = AgentError::input_invalid(
    ///     "the input does not match",
    ///     vec![Violation { pointer: "/limit".into(), keyword: "maximum".into(), message: "101 is greater than 100".into() }],
    /// );
    /// assert_eq!(err.violations()[0].to_string(), "/limit: 101 is greater than 100");
    /// let envelope = err.to_envelope();
    /// assert_eq!(envelope["error"]["code"], "input_invalid");
    /// assert_eq!(envelope["error"]["cause"]["violations"][0]["pointer"], "/limit");
    /// ```
    pub fn input_invalid(message: impl Into<String>, violations: Vec<Violation>) -> Self {
        AgentError::new(ErrorCode::InputInvalid, message).with_violations(violations)
    }

    /// An `output_invalid` error listing the schema violations of the output.
    ///
    /// ```
    /// use agentio_core::{AgentError, Violation};
    /// let broken = Violation { pointer: "/score".into(), keyword: "maximum".into(), message: "1.5 is greater than 1".into() };
    /// let err = AgentError::output_invalid("the tool's output does not match its schema", vec![broken]);
    /// assert_eq!(err.to_envelope()["error"]["code"], "output_invalid");
    /// assert_eq!(err.violations()[0].pointer, "/score");
    /// ```
    pub fn output_invalid(message: impl Into<String>, violations: Vec<Violation>) -> Self {
        AgentError::new(ErrorCode::OutputInvalid, message).with_violations(violations)
    }

    /// Overrides whether the caller may retry.
    ///
    /// ```
    /// use agentio_core::{AgentError, ErrorCode};
    /// let busy = AgentError::new(ErrorCode::Other("db:locked".into()), "the ledger is busy");
    /// assert!(!busy.is_retryable());
    /// assert!(busy.with_retryable(true).is_retryable());
    /// assert!(AgentError::new(ErrorCode::Timeout, "slow").is_retryable());
    /// ```
    #[must_use]
    pub fn with_retryable(mut self, retryable: bool) -> Self {
        self.0.retryable = retryable;
        self
    }

    /// Attaches the schema violations behind this error.
    ///
    /// ```
    /// use agentio_core::{AgentError, ErrorCode, Violation};
    /// let missing = Violation { pointer: "/tenant".into(), keyword: "required".into(), message: "\"tenant\" is a required property".into() };
    /// let err = AgentError::new(ErrorCode::ContextInvalid, "the host did not supply the context")
    ///     .with_violations(vec![missing]);
    /// assert_eq!(err.violations().len(), 1);
    /// assert_eq!(err.to_envelope()["error"]["cause"]["violations"][0]["keyword"], "required");
    /// ```
    #[must_use]
    pub fn with_violations(mut self, violations: Vec<Violation>) -> Self {
        self.0.violations = violations;
        self
    }

    /// Attaches detail for operators (stack context, upstream bodies, paths) that must not be
    /// shown to a model. It is never serialized into the envelope.
    ///
    /// ```
    /// let err = agentio_core::AgentError::internal("the search failed")
    ///     .with_operator_detail("upstream 503 from https://search.internal/v2");
    /// assert_eq!(err.operator_detail(), Some("upstream 503 from https://search.internal/v2"));
    /// assert!(!err.to_envelope().to_string().contains("search.internal"));
    /// ```
    #[must_use]
    pub fn with_operator_detail(mut self, detail: impl Into<String>) -> Self {
        self.0.operator_detail = Some(detail.into());
        self
    }

    /// The error code.
    ///
    /// ```
    /// use agentio_core::{AgentError, ErrorCode};
    /// assert_eq!(AgentError::new(ErrorCode::NotFound, "no such ticket").code(), &ErrorCode::NotFound);
    /// ```
    pub fn code(&self) -> &ErrorCode {
        &self.0.code
    }

    /// The message, safe to show a model.
    ///
    /// ```
    /// assert_eq!(agentio_core::AgentError::internal("the index is unavailable").message(), "the index is unavailable");
    /// ```
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// Whether a retry may succeed.
    ///
    /// ```
    /// use agentio_core::{AgentError, ErrorCode};
    /// assert!(AgentError::new(ErrorCode::Timeout, "slow").is_retryable());
    /// assert!(!AgentError::new(ErrorCode::InputInvalid, "bad").is_retryable());
    /// ```
    pub fn is_retryable(&self) -> bool {
        self.0.retryable
    }

    /// The schema violations behind the error; empty for errors that are not about a schema.
    ///
    /// ```
    /// use agentio_core::{AgentError, Violation};
    /// let v = Violation { pointer: "/limit".into(), keyword: "minimum".into(), message: "0 is less than 1".into() };
    /// assert_eq!(AgentError::input_invalid("bad input", vec![v.clone()]).violations(), &[v]);
    /// assert!(AgentError::internal("oops").violations().is_empty());
    /// ```
    pub fn violations(&self) -> &[Violation] {
        &self.0.violations
    }

    /// Detail meant for operators only.
    ///
    /// ```
    /// let err = agentio_core::AgentError::internal("failed").with_operator_detail("disk full on /var");
    /// assert_eq!(err.operator_detail(), Some("disk full on /var"));
    /// assert_eq!(agentio_core::AgentError::internal("failed").operator_detail(), None);
    /// ```
    pub fn operator_detail(&self) -> Option<&str> {
        self.0.operator_detail.as_deref()
    }

    /// The whole AIP-14 failure envelope: `{ "ok": false, "error": { code, message, retryable } }`,
    /// with `error.cause.violations` when there are violations.
    ///
    /// ```
    /// use agentio_core::{AgentError, ErrorCode};
    /// let envelope = AgentError::new(ErrorCode::Timeout, "the search took too long").to_envelope();
    /// assert_eq!(envelope, serde_json::json!({ "ok": false, "error": {
    ///     "code": "timeout", "message": "the search took too long", "retryable": true } }));
    /// ```
    pub fn to_envelope(&self) -> Value {
        json!({ "ok": false, "error": self })
    }
}

/// The AIP-14 success envelope `{ "ok": true, "value": value }`.
///
/// ```
/// assert_eq!(agentio_core::ok_envelope(serde_json::json!(3)), serde_json::json!({ "ok": true, "value": 3 }));
/// ```
pub fn ok_envelope(value: Value) -> Value {
    json!({ "ok": true, "value": value })
}

impl Serialize for AgentError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let fields = if self.0.violations.is_empty() { 3 } else { 4 };
        let mut map = serializer.serialize_map(Some(fields))?;
        map.serialize_entry("code", &self.0.code)?;
        map.serialize_entry("message", &self.0.message)?;
        map.serialize_entry("retryable", &self.0.retryable)?;
        if !self.0.violations.is_empty() {
            map.serialize_entry(
                "cause",
                &Cause {
                    violations: &self.0.violations,
                },
            )?;
        }
        map.end()
    }
}

#[derive(Serialize)]
struct Cause<'a> {
    violations: &'a [Violation],
}

/// Reads the `error` object of an envelope back (the operator detail is not on the wire and
/// comes back empty). A missing `retryable` takes the code's default.
impl<'de> Deserialize<'de> for AgentError {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Wire {
            code: ErrorCode,
            message: String,
            retryable: Option<bool>,
            #[serde(default)]
            cause: Option<WireCause>,
        }
        #[derive(Deserialize)]
        struct WireCause {
            #[serde(default)]
            violations: Vec<Violation>,
        }
        let wire = Wire::deserialize(deserializer)?;
        let mut error = AgentError::new(wire.code, wire.message);
        if let Some(retryable) = wire.retryable {
            error.0.retryable = retryable;
        }
        if let Some(cause) = wire.cause {
            error.0.violations = cause.violations;
        }
        Ok(error)
    }
}

impl fmt::Display for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.0.code, self.0.message)
    }
}

impl std::error::Error for AgentError {}

/// Lets a core body use `?` on JSON (de)serialization of its own data; such a failure is a
/// fault of the body, so it becomes `internal`.
impl From<serde_json::Error> for AgentError {
    fn from(err: serde_json::Error) -> Self {
        AgentError::internal("a JSON value could not be processed")
            .with_operator_detail(err.to_string())
    }
}

/// Lets a body use `?` on a plain-text error: it becomes `internal`, the text kept as operator
/// detail (a model is told only that the body failed).
///
/// ```
/// use agentio_core::{AgentError, ErrorCode};
/// fn body() -> Result<(), AgentError> {
///     Err("the cache is cold".to_owned())?
/// }
/// let err = body().unwrap_err();
/// assert_eq!(err.code(), &ErrorCode::Internal);
/// assert_eq!(err.operator_detail(), Some("the cache is cold"));
/// ```
impl From<String> for AgentError {
    fn from(text: String) -> Self {
        AgentError::internal("the tool failed").with_operator_detail(text)
    }
}

/// See [`From<String>`](#impl-From%3CString%3E-for-AgentError).
impl From<&str> for AgentError {
    fn from(text: &str) -> Self {
        AgentError::from(text.to_owned())
    }
}

/// A boundary's refusal (or its failure to check) as the AIP-14 error: the same code, message,
/// violations and operator detail.
///
/// ```
/// use agentio_core::{AgentError, BoundarySchema, Direction};
/// use serde_json::json;
///
/// let schema = BoundarySchema::from_value("Count", Direction::Output, json!({ "type": "integer" }));
/// let err: AgentError = schema.validate(&json!("x")).unwrap_err().into();
/// assert_eq!(err.code().as_str(), "output_invalid");
/// assert_eq!(err.violations()[0].pointer, "");
/// assert_eq!(err.to_envelope()["error"]["code"], "output_invalid");
/// ```
impl From<SchemaError> for AgentError {
    fn from(err: SchemaError) -> Self {
        let (code, message, violations, detail) = err.into_parts();
        let err = AgentError::new(ErrorCode::from(code), message).with_violations(violations);
        match detail {
            Some(detail) => err.with_operator_detail(detail),
            None => err,
        }
    }
}

/// A schema error's code is the agent error's code of the same name, so code written against
/// `ErrorCode` when [`BoundarySchema`](crate::BoundarySchema) returned `AgentError` compares
/// as before.
///
/// ```
/// use agentio_core::{BoundarySchema, Direction, ErrorCode};
/// use serde_json::json;
///
/// let schema = BoundarySchema::from_value("Count", Direction::Input, json!({ "type": "integer" }));
/// let err = schema.validate(&json!("x")).unwrap_err();
/// assert_eq!(err.code(), ErrorCode::InputInvalid);
/// assert_eq!(ErrorCode::from(err.code()), ErrorCode::InputInvalid);
/// ```
impl From<SchemaErrorCode> for ErrorCode {
    fn from(code: SchemaErrorCode) -> Self {
        match code {
            SchemaErrorCode::InputInvalid => ErrorCode::InputInvalid,
            SchemaErrorCode::OutputInvalid => ErrorCode::OutputInvalid,
            _ => ErrorCode::Internal,
        }
    }
}

impl PartialEq<ErrorCode> for SchemaErrorCode {
    fn eq(&self, other: &ErrorCode) -> bool {
        self.as_str() == other.as_str()
    }
}

impl PartialEq<SchemaErrorCode> for ErrorCode {
    fn eq(&self, other: &SchemaErrorCode) -> bool {
        self.as_str() == other.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_error_code_is_the_agent_error_code_of_its_name() {
        let pairs = [
            (SchemaErrorCode::InputInvalid, ErrorCode::InputInvalid),
            (SchemaErrorCode::OutputInvalid, ErrorCode::OutputInvalid),
            (SchemaErrorCode::Internal, ErrorCode::Internal),
        ];
        for (schema, agent) in &pairs {
            assert_eq!(ErrorCode::from(*schema), *agent);
            assert_eq!(schema.as_str(), agent.as_str());
            for (_, other) in &pairs {
                assert_eq!(
                    *schema == *other,
                    agent == other,
                    "{schema} against {other}"
                );
                assert_eq!(
                    *other == *schema,
                    agent == other,
                    "{other} against {schema}"
                );
            }
        }
    }

    fn known() -> Vec<(ErrorCode, &'static str, bool)> {
        vec![
            (ErrorCode::InputInvalid, "input_invalid", false),
            (ErrorCode::InputUnsupported, "input_unsupported", false),
            (ErrorCode::Unauthorised, "unauthorised", false),
            (ErrorCode::AuthRequired, "auth_required", false),
            (ErrorCode::NotFound, "not_found", false),
            (ErrorCode::RateLimited, "rate_limited", true),
            (ErrorCode::Timeout, "timeout", true),
            (ErrorCode::UpstreamError, "upstream_error", true),
            (ErrorCode::NoRoute, "no_route", false),
            (
                ErrorCode::PinnedProviderUnavailable,
                "pinned_provider_unavailable",
                false,
            ),
            (ErrorCode::Internal, "internal", false),
            (ErrorCode::OutputInvalid, "output_invalid", false),
            (ErrorCode::ContextInvalid, "context_invalid", false),
            (ErrorCode::ApprovalDenied, "approval_denied", false),
            (ErrorCode::Cancelled, "cancelled", false),
        ]
    }

    #[test]
    fn every_known_code_round_trips_by_its_wire_name() {
        for (code, wire, retryable) in known() {
            assert_eq!(code.as_str(), wire);
            assert_eq!(code.to_string(), wire);
            assert_eq!(ErrorCode::from(wire), code);
            assert_eq!(serde_json::to_value(&code).unwrap(), json!(wire));
            assert_eq!(
                serde_json::from_value::<ErrorCode>(json!(wire)).unwrap(),
                code
            );
            assert_eq!(code.retryable_by_default(), retryable, "{wire}");
            assert_eq!(
                AgentError::new(code, "m").is_retryable(),
                retryable,
                "{wire}"
            );
        }
        let other = ErrorCode::from("stripe:card_declined");
        assert_eq!(other, ErrorCode::Other("stripe:card_declined".into()));
        assert_eq!(other.as_str(), "stripe:card_declined");
        assert!(!other.retryable_by_default());
        assert!(serde_json::from_value::<ErrorCode>(json!("")).is_err());
    }

    #[test]
    fn display_names_the_code_and_the_place() {
        let err = AgentError::new(ErrorCode::NotFound, "no such ticket");
        assert_eq!(err.to_string(), "not_found: no such ticket");
        let at_root = Violation {
            pointer: String::new(),
            keyword: "type".into(),
            message: "expected an object".into(),
        };
        assert_eq!(at_root.to_string(), "(root): expected an object");
        let inside = Violation {
            pointer: "/limit".into(),
            ..at_root
        };
        assert_eq!(inside.to_string(), "/limit: expected an object");
        let debug = format!("{:?}", err.clone().with_operator_detail("row 42"));
        for part in ["AgentError", "NotFound", "no such ticket", "row 42"] {
            assert!(debug.contains(part), "{debug}");
        }
    }

    #[test]
    fn the_envelope_round_trips_but_keeps_operator_detail_off_the_wire() {
        let violation = Violation {
            pointer: "/q".into(),
            keyword: "minLength".into(),
            message: "too short".into(),
        };
        let err = AgentError::input_invalid("bad input", vec![violation.clone()])
            .with_retryable(true)
            .with_operator_detail("secret");
        let wire = serde_json::to_value(&err).unwrap();
        assert_eq!(
            wire,
            json!({ "code": "input_invalid", "message": "bad input", "retryable": true,
                    "cause": { "violations": [
                        { "pointer": "/q", "keyword": "minLength", "message": "too short" }
                    ] } })
        );
        let back: AgentError = serde_json::from_value(wire).unwrap();
        assert_eq!(back, err.clone().with_operator_detail_cleared());
        assert_eq!(back.violations(), [violation]);
        assert!(back.is_retryable());
        // Without violations there is no `cause`; without `retryable` the code's default.
        let plain = AgentError::output_invalid("bad output", Vec::new());
        assert_eq!(
            serde_json::to_value(&plain).unwrap(),
            json!({ "code": "output_invalid", "message": "bad output", "retryable": false })
        );
        let timeout: AgentError =
            serde_json::from_value(json!({ "code": "timeout", "message": "slow" })).unwrap();
        assert!(timeout.is_retryable());
        let kept: AgentError = serde_json::from_value(
            json!({ "code": "timeout", "message": "slow", "retryable": false }),
        )
        .unwrap();
        assert!(!kept.is_retryable());
    }

    #[test]
    fn foreign_failures_become_internal_with_their_text_for_operators() {
        let json_err = serde_json::from_str::<Value>("{").unwrap_err();
        let err = AgentError::from(json_err);
        assert_eq!(err.code(), &ErrorCode::Internal);
        assert!(err.operator_detail().is_some_and(|d| d.contains("EOF")));
        let err = AgentError::from("disk full");
        assert_eq!(err.code(), &ErrorCode::Internal);
        assert_eq!(err.message(), "the tool failed");
        assert_eq!(err.operator_detail(), Some("disk full"));
        assert_eq!(AgentError::internal("x").code(), &ErrorCode::Internal);
    }

    impl AgentError {
        fn with_operator_detail_cleared(mut self) -> Self {
            self.0.operator_detail = None;
            self
        }
    }
}
