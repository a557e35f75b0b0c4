//! `AgentCore`, the typed trait implementors write, and `ErasedAgentCore`, what the runtime holds.

use serde_json::Value;

use crate::BoundarySchema;
use crate::context::AgentContext;
use crate::error::AgentError;
use crate::future::BoxFuture;
use crate::io::{AgentInput, AgentOutput};

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
                return Err(err.into());
            }
            let output = self.run_turn_erased(input, ctx).await?;
            if let Err(err) = output_boundary.validate(&output) {
                crate::limits::dismantle(output);
                return Err(err.into());
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
                    return Err(err.into());
                }
            };
            // The JSON form is not needed once decoded; free it before the body runs.
            drop(input);
            let input = decoded;
            let output = self.run_turn(input, ctx).await?;
            Ok(T::Output::output_boundary().encode(&output)?)
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
