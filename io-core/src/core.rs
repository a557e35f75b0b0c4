//! `AgentCore`, the typed trait implementors write, and `ErasedAgentCore`, what the runtime holds.

use std::future::Future;
use std::pin::Pin;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::AgentContext;
use crate::error::{AgentError, ErrorCode, Violation};
use crate::io::{AgentInput, AgentOutput};
use crate::schema::{BoundarySchema, Direction, escape_pointer_token};

/// A boxed, `Send` future: the one allocation the erased boundary makes per call.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The brain of an agent: takes a typed input, returns a typed output.
///
/// Write `run_turn` as a plain `async fn`; the returned future must be `Send` (it is, unless
/// the body holds something like an `Rc` across an `.await`). Associated-type defaults are
/// not stable Rust, so a core that uses the default [`TurnInput`](crate::TurnInput) /
/// [`TurnOutput`](crate::TurnOutput) either names them or lets [`agent_core`](crate::agent_core)
/// fill them in:
///
/// ```
/// use agentio_core::{AgentContext, AgentCore, AgentError, TurnInput, TurnOutput, agent_core};
///
/// struct Echo;
///
/// #[agent_core]
/// impl AgentCore for Echo {
///     fn core_type(&self) -> &str { "echo" }
///
///     async fn run_turn(&mut self, input: TurnInput, _ctx: &mut AgentContext)
///         -> Result<TurnOutput, AgentError>
///     {
///         Ok(TurnOutput::new(input.message))
///     }
/// }
/// # let out = pollster::block_on(Echo.run_turn(TurnInput::new("hi"), &mut AgentContext::new("r1")));
/// # assert_eq!(out.unwrap().response, "hi");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an agent core",
    label = "`{Self}` does not implement `AgentCore`",
    note = "implement `AgentCore` for `{Self}`; `#[agent_core]` on the impl block fills in `TurnInput` / `TurnOutput` for the associated types it leaves out"
)]
pub trait AgentCore: Send + Sync + 'static {
    /// What a turn takes.
    type Input: AgentInput;
    /// What a turn returns.
    type Output: AgentOutput;

    /// A short name for the kind of core (`"react"`, `"embodied"`), used in events and logs.
    fn core_type(&self) -> &str;

    /// Runs one turn. The input has already been validated against its schema.
    fn run_turn(
        &mut self,
        input: Self::Input,
        ctx: &mut AgentContext,
    ) -> impl Future<Output = Result<Self::Output, AgentError>> + Send;
}

/// An [`AgentCore`] with its types erased to `serde_json::Value`: what the runtime stores.
///
/// Every `AgentCore` is an `ErasedAgentCore` through a blanket impl; it is dyn-compatible, so
/// `Box<dyn ErasedAgentCore>` holds any core and no generic parameter leaks into the runtime.
/// `run_turn_erased` decodes the input (reading the `Value` in place, never cloning it), runs the
/// typed turn and encodes the output. It does not validate: [`AgentRuntime`](crate::AgentRuntime)
/// does, around it.
pub trait ErasedAgentCore: Send + Sync {
    /// See [`AgentCore::core_type`].
    fn core_type(&self) -> &str;

    /// The compiled input schema.
    fn input_boundary(&self) -> &'static BoundarySchema;

    /// The compiled output schema.
    fn output_boundary(&self) -> &'static BoundarySchema;

    /// The input JSON Schema.
    fn input_schema(&self) -> &'static Value {
        self.input_boundary().schema()
    }

    /// The output JSON Schema.
    fn output_schema(&self) -> &'static Value {
        self.output_boundary().schema()
    }

    /// Decodes `input`, runs the turn, encodes the output.
    fn run_turn_erased<'a>(
        &'a mut self,
        input: Value,
        ctx: &'a mut AgentContext,
    ) -> BoxFuture<'a, Result<Value, AgentError>>;

    /// [`Self::run_turn_erased`] with the input and the output checked against their schemas:
    /// what [`AgentRuntime`](crate::AgentRuntime) runs. The default validates both `Value`s in
    /// full; the blanket impl for typed cores checks only what serde leaves unchecked
    /// ([`BoundarySchema::residual_schema`]), with the same outcome and errors.
    #[doc(hidden)]
    fn __run_turn_validated<'a>(
        &'a mut self,
        input: Value,
        ctx: &'a mut AgentContext,
    ) -> BoxFuture<'a, Result<Value, AgentError>> {
        Box::pin(async move {
            let input_boundary = self.input_boundary();
            let output_boundary = self.output_boundary();
            if let Err(err) = input_boundary.validate(&input) {
                // A refused value may be deeper than a recursive drop can take.
                crate::limits::dismantle(input);
                return Err(err);
            }
            let output = self.run_turn_erased(input, ctx).await?;
            if let Err(err) = output_boundary.validate(&output) {
                crate::limits::dismantle(output);
                return Err(err);
            }
            Ok(output)
        })
    }
}

#[diagnostic::do_not_recommend]
impl<T: AgentCore> ErasedAgentCore for T {
    fn core_type(&self) -> &str {
        AgentCore::core_type(self)
    }

    fn input_boundary(&self) -> &'static BoundarySchema {
        T::Input::input_boundary()
    }

    fn output_boundary(&self) -> &'static BoundarySchema {
        T::Output::output_boundary()
    }

    fn run_turn_erased<'a>(
        &'a mut self,
        input: Value,
        ctx: &'a mut AgentContext,
    ) -> BoxFuture<'a, Result<Value, AgentError>> {
        Box::pin(async move {
            let decoded: T::Input = match T::Input::input_boundary().decode(&input) {
                Ok(decoded) => decoded,
                Err(err) => {
                    // The input may be deeper than a recursive drop can take.
                    crate::limits::dismantle(input);
                    return Err(err);
                }
            };
            // The JSON form is not needed once decoded; free it before the body runs.
            drop(input);
            let input = decoded;
            let output = self.run_turn(input, ctx).await?;
            T::Output::output_boundary().encode(&output)
        })
    }

    fn __run_turn_validated<'a>(
        &'a mut self,
        input: Value,
        ctx: &'a mut AgentContext,
    ) -> BoxFuture<'a, Result<Value, AgentError>> {
        Box::pin(async move {
            let decoded = match T::Input::from_input_value(&input) {
                Ok(decoded) => decoded,
                Err(err) => {
                    crate::limits::dismantle(input);
                    return Err(err);
                }
            };
            drop(input);
            let output = self.run_turn(decoded, ctx).await?;
            output.to_output_value()
        })
    }
}

impl BoundarySchema {
    /// Decodes a value into `T`, reading it in place (the `Value` is never cloned).
    ///
    /// A decode failure is `input_invalid` / `output_invalid` (by direction) with the JSON
    /// pointer serde stopped at; it only happens for values the schema accepted but the type
    /// refuses (custom `Deserialize` impls, say), or when decoding without validating first.
    ///
    /// A value nested deeper than [`crate::limits::MAX_DEPTH`] is refused before serde walks
    /// it (decoding recurses), with a `depth` violation.
    pub fn decode<T: DeserializeOwned>(&self, value: &Value) -> Result<T, AgentError> {
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
    pub(crate) fn decode_typed<T: DeserializeOwned>(&self, value: &Value) -> Result<T, AgentError> {
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
    pub(crate) fn encode_typed<T: Serialize + ?Sized>(
        &self,
        value: &T,
    ) -> Result<Value, AgentError> {
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
    pub(crate) fn encode_typed_json<T: Serialize + ?Sized>(
        &self,
        value: &T,
    ) -> Result<String, AgentError> {
        if self.needs_no_check() {
            return serde_json::to_string(value).map_err(|err| {
                AgentError::new(
                    ErrorCode::OutputInvalid,
                    "the value cannot be represented as JSON",
                )
                .with_operator_detail(err.to_string())
            });
        }
        // Checked while written, when the residual allows it; the text is then exactly the
        // `Value` path's (`residual::write_checked`). Otherwise, or when the check does not
        // pass, the `Value` path decides and reports.
        if let Some(text) = self
            .fast_check()
            .and_then(|fast| crate::residual::write_checked(fast, value))
        {
            return Ok(text);
        }
        // The text is written from the value that was checked: written from the typed value,
        // an `f32` would read differently (`192.3`, not `192.3000030517578`) from what passed.
        let encoded = self.encode_typed(value)?;
        serde_json::to_string(&encoded).map_err(|err| {
            AgentError::internal("the value cannot be written as JSON")
                .with_operator_detail(err.to_string())
        })
    }

    fn decode_error<T: DeserializeOwned>(&self, value: &Value) -> AgentError {
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
    pub fn encode<T: Serialize + ?Sized>(&self, value: &T) -> Result<Value, AgentError> {
        serde_json::to_value(value).map_err(|err| {
            let code = match self.direction() {
                Direction::Output => ErrorCode::OutputInvalid,
                Direction::Input => ErrorCode::Internal,
            };
            AgentError::new(code, "the value cannot be represented as JSON")
                .with_operator_detail(err.to_string())
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
                pointer.push_str(&escape_pointer_token(key));
            }
            // An enum variant name is not a step into the JSON value; unknown steps neither.
            Segment::Enum { .. } | Segment::Unknown => {}
        }
    }
    pointer
}
