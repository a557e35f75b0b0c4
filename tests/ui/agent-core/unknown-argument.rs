use agentio_core::{AgentContext, AgentCore, AgentError, TurnInput, TurnOutput, agent_core};

struct Core;

#[agent_core(krate = "agentio_core")]
impl AgentCore for Core {
    fn core_type(&self) -> &str {
        "core"
    }

    async fn run_turn(&mut self, input: TurnInput, _ctx: &mut AgentContext) -> Result<TurnOutput, AgentError> {
        Ok(TurnOutput::new(input.message))
    }
}

fn main() {}
