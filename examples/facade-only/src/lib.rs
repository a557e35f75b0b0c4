//! A user's crate that depends on `agentio` alone (see its Cargo.toml: no serde, schemars,
//! serde_json, Tokio or agentio-* crates of its own): the README's tour, a tool, a core and a
//! workflow, each run by the tests below. Its features turn on the facade's one by one, so
//! that each facade feature is built and tested alone (`.ci/run`).

use agentio::prelude::*;

/// What the rover perceives.
#[io(input)]
#[serde(deny_unknown_fields)]
pub struct Perception {
    /// Distance to the nearest obstacle, in meters.
    #[schemars(range(min = 0.0))]
    pub obstacle_m: f64,
    /// Where the rover is.
    pub position: Option<Position>,
}

/// A position, nested in the input: serde and schemars only.
#[io]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Position {
    /// East, in meters.
    pub x: f64,
    /// North, in meters.
    pub y: f64,
}

/// What the rover does.
#[io(output)]
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
#[io(input, output)]
pub struct Note {
    /// The text.
    pub text: String,
}

/// Saves a note in the workspace.
#[cfg(feature = "tools")]
#[tool(id = "notes.save", version = "1.0.0", timeout_ms = 2000)]
pub async fn save(note: Note) -> Result<Note, ToolError> {
    Ok(note)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // The nested type's schema is there, through the facade's schemars.
        let input = Perception::input_schema();
        assert!(input.to_string().contains("\"x\""), "{input}");
        assert!(
            Perception::validate_input(
                &json!({ "obstacle_m": 1, "position": { "x": 1, "y": "north" } })
            )
            .is_err()
        );
        assert!(Note::validate_output(&json!({ "text": "hi" })).is_ok());
        assert_eq!(
            Action::structured_output_format().expect("strict")["json_schema"]["strict"],
            true
        );
    }

    fn runtime_block<F: std::future::Future>(future: F) -> F::Output {
        runtime().block_on(future)
    }

    #[cfg(feature = "tools")]
    #[test]
    fn a_tool_runs_with_only_the_facade() {
        let registry = tool_registry![save].expect("a valid contract");
        let out = runtime().block_on(registry.call("notes.save", json!({ "text": "hi" })));
        assert_eq!(out.expect("a valid call"), json!({ "text": "hi" }));
        let tools = registry.export(Export::Anthropic).expect("exportable");
        assert_eq!(tools[0]["name"], "notes_save");
    }

    #[cfg(feature = "workflows")]
    #[test]
    fn a_workflow_runs_a_core_with_only_the_facade() {
        use agentio::workflow::{Executor, Phase, TypeRef, Workflow};
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

    #[cfg(feature = "restate")]
    #[test]
    fn a_workflow_is_served_to_restate_with_only_the_facade() {
        use agentio::workflow::restate::RestateWorkflows;
        use agentio::workflow::{Executor, Phase, Workflow};
        let executor =
            Executor::new(Workflow::new("w").with_phase(Phase::new("a", "A").assign("x")))
                .bind_fn("x", |_ctx| async { Ok(json!({})) });
        let workflows = RestateWorkflows::new()
            .with(executor)
            .expect("a valid workflow");
        assert_eq!(
            format!("{workflows:?}"),
            "RestateWorkflows { workflows: [\"w\"] }"
        );
        // The same workflow twice is refused, named.
        let again = Executor::new(Workflow::new("w").with_phase(Phase::new("a", "A").assign("x")))
            .bind_fn("x", |_ctx| async { Ok(json!({})) });
        let refused = workflows.with(again).expect_err("served already");
        assert!(
            refused[0].to_string().contains("served already"),
            "{refused:?}"
        );
    }

    #[cfg(feature = "task-store")]
    #[test]
    fn a_server_keeps_its_tasks_on_disk_with_only_the_facade() {
        use agentio::mcp::McpServer;
        use agentio::mcp::task_store::TaskStore;
        let unique = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970")
            .as_nanos();
        let path =
            std::env::temp_dir().join(format!("facade-tasks-{}-{unique}.redb", std::process::id()));
        let store = TaskStore::open(&path).expect("a new store");
        assert_eq!(store.path(), path);
        let server = McpServer::new(tool_registry![save].expect("a valid contract"))
            .expect("a server")
            .with_task_store(store);
        drop(server);
        // Closed with the server: it opens again.
        drop(TaskStore::open(&path).expect("reopened"));
        std::fs::remove_file(&path).expect("removed");
    }

    #[cfg(feature = "mcp")]
    #[test]
    fn a_registry_goes_on_mcp_with_only_the_facade() {
        use agentio::mcp::{McpClient, McpServer};
        let runtime = agentio::tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            let server = McpServer::new(tool_registry![save].expect("valid")).expect("exportable");
            let listener = agentio::tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("a port");
            let url = format!("http://{}/mcp", listener.local_addr().expect("an address"));
            agentio::tokio::spawn(server.serve_http(listener));
            let client = McpClient::connect_http(&url).await.expect("connected");
            let mut local = ToolRegistry::new();
            client
                .import_into(&mut local, "remote")
                .await
                .expect("imported");
            let ids: Vec<&str> = local.contracts().map(|c| c.id.as_str()).collect();
            assert_eq!(ids, ["remote.notes.save"]);
        });
    }

    #[cfg(feature = "promptos")]
    #[test]
    fn promptos_types_are_reached_through_the_facade() {
        use agentio::promptos::{FailCode, Verdict};
        let verdict: Result<Verdict, _> = agentio::serde_json::from_value(json!({ "nope": 1 }));
        assert!(verdict.is_err());
        assert_eq!(
            agentio::serde_json::to_value(FailCode::ScopeConflict).expect("a code"),
            json!("SCOPE_CONFLICT")
        );
    }
}
