use agentio_core::{AgentContext, AgentCore, AgentError, TurnOutput};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
struct Plain {
    text: String,
}

struct Core;

impl AgentCore for Core {
    type Input = Plain;
    type Output = TurnOutput;

    fn core_type(&self) -> &str {
        "core"
    }

    async fn run_turn(&mut self, input: Plain, _ctx: &mut AgentContext) -> Result<TurnOutput, AgentError> {
        Ok(TurnOutput::new(input.text))
    }
}

fn main() {}
