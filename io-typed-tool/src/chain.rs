//! Typed chains: composing typed tools in Rust, checked by the compiler.
//!
//! `first.then(second)` compiles only when `first`'s output can become `second`'s input: the
//! same type, or a `From` conversion. The chain runs the typed bodies one after the other with
//! Rust values in between (no JSON), checking each step's output against its output schema
//! on the way, as the registry would (only what serde leaves unchecked, see
//! [`agentio_core::residual`]).
//!
//! ```
//! use agentio_tools::{ToolContext, ToolError, tool};
//! use agentio_tools::chain::{Then, TypedStep};
//!
//! #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
//! struct Query { q: String }
//! #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
//! struct Hits { hits: Vec<String> }
//! #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
//! struct Summary { text: String }
//!
//! /// Searches.
//! #[tool(id = "kb.search")]
//! async fn search(q: Query) -> Result<Hits, ToolError> { Ok(Hits { hits: vec![q.q] }) }
//! /// Summarizes.
//! #[tool(id = "kb.summarize")]
//! async fn summarize(h: Hits) -> Result<Summary, ToolError> { Ok(Summary { text: h.hits.join(", ") }) }
//!
//! let research = SearchTool.then(SummarizeTool);
//! let ctx = ToolContext::new("run-1", "research");
//! let out = pollster::block_on(research.run(Query { q: "rust".into() }, &ctx)).unwrap();
//! assert_eq!(out.text, "rust");
//! ```
//!
//! Chaining `SummarizeTool.then(SearchTool)` is a compile error naming both types:
//! "the output of one step, `Summary`, cannot become the input of the next, `Query`".
//!
//! A typed core joins a chain through [`CoreStep`]: `CoreStep::new(core).then(tool)`.

use std::future::Future;

use agentio_core::{AgentContext, AgentCore, AgentOutput};

use crate::typed::{ToolContext, ToolError, TypedTool};

/// A step of a typed chain: a typed tool, or a chain of them.
pub trait TypedStep: Send + Sync {
    /// What the step takes.
    type Input: Send;
    /// What it returns.
    type Output: Send;

    /// Runs the step.
    fn run(
        &self,
        input: Self::Input,
        ctx: &ToolContext,
    ) -> impl Future<Output = Result<Self::Output, ToolError>> + Send;
}

impl<T: TypedTool> TypedStep for T {
    type Input = T::Input;
    type Output = T::Output;

    async fn run(&self, input: T::Input, ctx: &ToolContext) -> Result<T::Output, ToolError> {
        let output = self.execute_typed(input, ctx).await?;
        // The step's own contract: what the registry checks of its output.
        output.to_output_value()?;
        Ok(output)
    }
}

/// A conversion from one step's output to the next step's input: the same type, or `From`.
#[diagnostic::on_unimplemented(
    message = "the output of one step, `{Self}`, cannot become the input of the next, `{Next}`",
    label = "this step takes `{Next}`",
    note = "chain steps whose types match, or implement `From<{Self}> for {Next}`"
)]
pub trait Becomes<Next> {
    /// Converts.
    fn become_input(self) -> Next;
}

#[diagnostic::do_not_recommend]
impl<T, Next: From<T>> Becomes<Next> for T {
    fn become_input(self) -> Next {
        Next::from(self)
    }
}

/// Two steps, the first's output becoming the second's input.
#[derive(Clone, Debug)]
pub struct Chain<A, B> {
    first: A,
    second: B,
}

impl<A, B> TypedStep for Chain<A, B>
where
    A: TypedStep,
    B: TypedStep,
    A::Output: Becomes<B::Input>,
{
    type Input = A::Input;
    type Output = B::Output;

    async fn run(&self, input: A::Input, ctx: &ToolContext) -> Result<B::Output, ToolError> {
        let middle = self.first.run(input, ctx).await?;
        self.second.run(middle.become_input(), ctx).await
    }
}

/// `a.then(b)` for every [`TypedStep`].
pub trait Then: TypedStep + Sized {
    /// Chains `next` after this step; a compile error unless this step's output can become
    /// `next`'s input ([`Becomes`]).
    fn then<B>(self, next: B) -> Chain<Self, B>
    where
        B: TypedStep,
        Self::Output: Becomes<B::Input>,
    {
        Chain {
            first: self,
            second: next,
        }
    }
}

impl<S: TypedStep> Then for S {}

/// A typed core as a chain step: each run is one turn (turns of one core run one at a time,
/// as cores take `&mut self`), its output held to the core's output schema.
///
/// ```
/// use agentio_core::{AgentContext, AgentCore, AgentError, AgentInput, AgentOutput};
/// use agentio_tools::chain::{CoreStep, Then, TypedStep};
/// use agentio_tools::{ToolContext, ToolError, tool};
///
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput, AgentOutput)]
/// struct Query { q: String }
/// struct Planner;
/// impl AgentCore for Planner {
///     type Input = Query;
///     type Output = Query;
///     fn core_type(&self) -> &str { "planner" }
///     async fn run_turn(&mut self, input: Query, _: &mut AgentContext) -> Result<Query, AgentError> {
///         Ok(Query { q: format!("{} rust", input.q) })
///     }
/// }
/// /// Echoes.
/// #[tool(id = "echo")]
/// async fn echo(q: Query) -> Result<Query, ToolError> { Ok(q) }
///
/// let plan = CoreStep::new(Planner).then(EchoTool);
/// let out = pollster::block_on(plan.run(Query { q: "learn".into() }, &ToolContext::new("run-1", "plan"))).unwrap();
/// assert_eq!(out.q, "learn rust");
/// ```
#[derive(Debug)]
pub struct CoreStep<C> {
    core: tokio::sync::Mutex<C>,
}

impl<C: AgentCore> CoreStep<C> {
    /// Wraps a core.
    pub fn new(core: C) -> Self {
        CoreStep {
            core: tokio::sync::Mutex::new(core),
        }
    }
}

impl<C> TypedStep for CoreStep<C>
where
    C: AgentCore + Sync,
    C::Input: Send,
    C::Output: Send,
{
    type Input = C::Input;
    type Output = C::Output;

    async fn run(&self, input: C::Input, ctx: &ToolContext) -> Result<C::Output, ToolError> {
        let mut core = self.core.lock().await;
        let mut turn = AgentContext::new(ctx.run_id());
        let output = core.run_turn(input, &mut turn).await?;
        output.to_output_value()?;
        Ok(output)
    }
}
