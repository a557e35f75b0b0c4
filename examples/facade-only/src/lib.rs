//! A user's crate that depends on `agentio` alone (see its Cargo.toml): the README's tour, a
//! tool, a core and a workflow, each run by the tests below.

use agentio::prelude::*;

/// What the rover perceives.
#[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
#[serde(crate = "agentio::serde", deny_unknown_fields)]
#[schemars(crate = "agentio::schemars")]
pub struct Perception {
    /// Distance to the nearest obstacle, in meters.
    #[schemars(range(min = 0.0))]
    pub obstacle_m: f64,
}

/// What the rover does.
#[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
#[serde(crate = "agentio::serde")]
#[schemars(crate = "agentio::schemars")]
#[agent(strict)]
pub struct Action {
    /// Why.
    pub reasoning: String,
    /// How fast.
    pub speed: f64,
}

/// The rover's core.
pub struct Rover;

impl AgentCore for Rover {
    type Input = Perception;
    type Output = Action;

    fn core_type(&self) -> &str {
        "rover"
    }

    async fn run_turn(
        &mut self,
        input: Perception,
        _ctx: &mut AgentContext,
    ) -> Result<Action, AgentError> {
        let speed = if input.obstacle_m < 0.5 { 0.0 } else { 1.0 };
        Ok(Action {
            reasoning: format!("obstacle at {} m", input.obstacle_m),
            speed,
        })
    }
}

/// A note to save.
#[derive(Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
#[serde(crate = "agentio::serde")]
#[schemars(crate = "agentio::schemars")]
pub struct Note {
    /// The text.
    pub text: String,
}

/// Saves a note in the workspace.
#[tool(id = "notes.save", version = "1.0.0", timeout_ms = 2000)]
pub async fn save(note: Note) -> Result<Note, ToolError> {
    Ok(note)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentio::workflow::{Executor, Phase, TypeRef, Workflow};

    fn runtime() -> agentio::tokio::runtime::Runtime {
        agentio::tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime")
    }

    #[test]
    fn the_readme_tour_runs_with_only_the_facade() {
        let mut runtime = AgentRuntime::new(Rover);
        let out = runtime_block(runtime.run_turn(json!({ "obstacle_m": 2.0 })));
        assert_eq!(out.expect("a valid turn")["speed"], 1.0);
        let err = runtime_block(runtime.run_turn(json!({ "obstacle_m": -1, "turbo": true })))
            .expect_err("an invalid input");
        let pointers: Vec<_> = err
            .violations()
            .iter()
            .map(|v| v.pointer.as_str())
            .collect();
        assert_eq!(pointers, ["/obstacle_m", "/turbo"]);
        assert_eq!(
            Action::structured_output_format().expect("strict")["json_schema"]["strict"],
            true
        );
    }

    fn runtime_block<F: std::future::Future>(future: F) -> F::Output {
        runtime().block_on(future)
    }

    #[test]
    fn a_tool_runs_with_only_the_facade() {
        let registry = tool_registry![save].expect("a valid contract");
        let out = runtime().block_on(registry.call("notes.save", json!({ "text": "hi" })));
        assert_eq!(out.expect("a valid call"), json!({ "text": "hi" }));
        let tools = registry.export(Export::Anthropic).expect("exportable");
        assert_eq!(tools[0]["name"], "notes_save");
    }

    #[test]
    fn a_workflow_runs_a_core_with_only_the_facade() {
        let workflow = Workflow::new("rover")
            .with_phase(
                Phase::new("sense", "Sense")
                    .assign("sensor")
                    .output("obstacle_m", TypeRef::Number),
            )
            .with_phase(
                Phase::new("act", "Act")
                    .assign("rover")
                    .depends_on(["sense"])
                    .input("obstacle_m", "sense.obstacle_m"),
            );
        let executor = Executor::new(workflow)
            .bind_fn("sensor", |_ctx| async { Ok(json!({ "obstacle_m": 0.2 })) })
            .bind_core("rover", Rover);
        let outcome = runtime()
            .block_on(executor.run("r1", json!({}), json!({})))
            .expect("the wiring is valid");
        assert_eq!(outcome.outputs["act"]["speed"], 0.0);
    }
}
