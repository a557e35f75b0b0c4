//! [`CoreTool`]: an agent core offered as a tool, so that the registry's exports and the MCP
//! server reach cores as well as tools.

use std::fmt;

use agentio_core::{AgentContext, BoundarySchema, BoxFuture, ErasedAgentCore};
use serde_json::Value;

use crate::check::RegistrationError;
use crate::contract::ToolContract;
use crate::typed::{ToolContext, ToolError, ToolPlugin};

/// An agent core ([`ErasedAgentCore`]: any typed `AgentCore`, erased) as a [`ToolPlugin`].
///
/// Its contract takes the core's input and output schemas; its id, version and description
/// are yours, and every other contract field can be set with [`CoreTool::with_contract`].
/// Each call runs one turn in a fresh [`AgentContext`] whose run id is the call's. A core is
/// stateful (`run_turn` takes `&mut self`), so calls to one `CoreTool` take turns: they are
/// serialized, never interleaved.
///
/// ```
/// use agentio_core::{AgentContext, AgentCore, AgentError, AgentInput, AgentOutput};
/// use agentio_tools::{CoreTool, Export, ToolRegistry};
/// use serde_json::json;
///
/// #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, AgentInput)]
/// struct Question { text: String }
/// #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, AgentOutput)]
/// struct Reply { text: String }
///
/// /// Answers by shouting.
/// struct Shouter;
/// impl AgentCore for Shouter {
///     type Input = Question;
///     type Output = Reply;
///     fn core_type(&self) -> &str { "shouter" }
///     async fn run_turn(&mut self, q: Question, _ctx: &mut AgentContext) -> Result<Reply, AgentError> {
///         Ok(Reply { text: q.text.to_uppercase() })
///     }
/// }
///
/// let mut registry = ToolRegistry::new();
/// registry.register_plugin(std::sync::Arc::new(
///     CoreTool::new("agents.shouter", "1.0.0", "Answers by shouting.", Shouter)?,
/// ))?;
/// let tools = registry.export(Export::Anthropic)?;
/// assert_eq!(tools[0]["name"], "agents_shouter");
/// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
/// let reply = runtime.block_on(registry.call("agents.shouter", json!({ "text": "hi" })))?;
/// assert_eq!(reply, json!({ "text": "HI" }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct CoreTool {
    core: tokio::sync::Mutex<Box<dyn ErasedAgentCore>>,
    contract: ToolContract,
    inputs: &'static BoundarySchema,
    outputs: &'static BoundarySchema,
}

impl CoreTool {
    /// The core as the tool `id` (version `version`), its schemas taken from the core. Fails,
    /// as registration would, when the contract is not valid (an id outside `[a-z0-9.-]`, an
    /// empty description, ...).
    pub fn new(
        id: &str,
        version: &str,
        description: &str,
        core: impl ErasedAgentCore + 'static,
    ) -> Result<Self, RegistrationError> {
        let inputs = core.input_boundary();
        let outputs = core.output_boundary();
        let mut contract = ToolContract::new(
            id,
            version,
            description,
            inputs.schema().clone(),
            outputs.schema().clone(),
        );
        contract.name = core.core_type().to_owned();
        contract.check()?;
        Ok(CoreTool {
            core: tokio::sync::Mutex::new(Box::new(core)),
            contract,
            inputs,
            outputs,
        })
    }

    /// Adjusts the contract (timeout, retry, approval, `mutates`, tags, ...); the schemas stay
    /// the core's. The result is checked again.
    pub fn with_contract(
        mut self,
        adjust: impl FnOnce(&mut ToolContract),
    ) -> Result<Self, RegistrationError> {
        adjust(&mut self.contract);
        self.contract.inputs = self.inputs.schema().clone();
        self.contract.outputs = self.outputs.schema().clone();
        self.contract.check()?;
        Ok(self)
    }
}

impl ToolPlugin for CoreTool {
    fn tool_contract(&self) -> ToolContract {
        self.contract.clone()
    }

    // The compiled schemas of the core's types, shared instead of compiled again. Without them
    // the registry compiles the same schemas from the contract: `None` here is slower, not
    // different, so the mutants that return it are equivalent.
    fn input_boundary(&self) -> Option<&'static BoundarySchema> {
        Some(self.inputs)
    }

    fn output_boundary(&self) -> Option<&'static BoundarySchema> {
        Some(self.outputs)
    }

    fn execute<'a>(
        &'a self,
        input: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            let mut core = self.core.lock().await;
            let mut turn = AgentContext::new(ctx.run_id());
            core.run_turn_erased(input, &mut turn).await
        })
    }
}

impl fmt::Debug for CoreTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CoreTool")
            .field("id", &self.contract.id)
            .field("core", &self.contract.name)
            .finish()
    }
}
