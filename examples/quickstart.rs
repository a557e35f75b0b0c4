//! Quickstart: two agent cores behind `AgentRuntime`, driven with plain JSON.
//!
//! - `EmbodiedCore` has its own typed input (sensor readings and a position) and a strict
//!   output whose structured-output format a provider can use directly.
//! - `ConciergeCore` uses the default `TurnInput` / `TurnOutput`, filled in by `#[agent_core]`,
//!   and calls a host tool through its context.
//!
//! Run it with `cargo run --example quickstart`.

use std::sync::Arc;

use agentio::core::{
    AgentContext, AgentCore, AgentError, AgentOutput, AgentRuntime, BoxFuture, ErrorCode, EventLog,
    ToolCall, ToolInvoker, TurnInput, TurnOutput, agent_core,
};
use agentio::io;
use agentio::serde_json::{Value, json};

/// What the rover perceives this turn.
#[io(input)]
#[derive(Debug)]
#[serde(deny_unknown_fields)]
struct EmbodiedInput {
    /// The operator's instruction.
    message: String,
    /// The latest sensor readings, one per sensor.
    sensor_readings: Vec<SensorReading>,
    /// Where the rover is.
    position: Position,
}

/// One sensor's reading.
#[io]
#[derive(Debug)]
#[serde(deny_unknown_fields)]
struct SensorReading {
    /// The sensor's id.
    sensor: String,
    /// The measured value, in `unit`.
    #[schemars(range(min = -1000.0, max = 1000.0))]
    value: f64,
    /// The unit of `value`.
    unit: Unit,
}

/// Units the rover's sensors report in.
#[io]
#[derive(Debug, Clone, Copy, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Unit {
    Celsius,
    Meters,
    Lux,
}

/// A planar position.
#[io]
#[derive(Debug)]
#[serde(deny_unknown_fields)]
struct Position {
    x: f64,
    y: f64,
    /// Heading in degrees, 0 = north.
    #[schemars(range(min = 0.0, max = 360.0))]
    heading_deg: f64,
}

/// What the rover decides: wheel speeds and why.
#[io(output)]
#[derive(Debug)]
#[agent(strict, name = "motor_command")]
struct MotorCommand {
    /// Why these speeds (written first, so a model reasons before it commits).
    reasoning: String,
    /// Left wheel speed, -1 to 1.
    #[schemars(range(min = -1.0, max = 1.0))]
    left_speed: f64,
    /// Right wheel speed, -1 to 1.
    #[schemars(range(min = -1.0, max = 1.0))]
    right_speed: f64,
    /// The nearest obstacle, if any sensor sees one.
    nearest_obstacle_m: Option<f64>,
}

/// A rule-based rover brain: stops near obstacles, otherwise drives on.
struct EmbodiedCore;

impl AgentCore for EmbodiedCore {
    type Input = EmbodiedInput;
    type Output = MotorCommand;

    fn core_type(&self) -> &str {
        "embodied"
    }

    async fn run_turn(
        &mut self,
        input: EmbodiedInput,
        ctx: &mut AgentContext,
    ) -> Result<MotorCommand, AgentError> {
        let nearest = input
            .sensor_readings
            .iter()
            .filter(|r| r.unit == Unit::Meters)
            .map(|r| r.value)
            .reduce(f64::min);
        ctx.emit(
            "rover.perceived",
            json!({ "readings": input.sensor_readings.len() }),
        );
        let (left, right, reasoning) = match nearest {
            Some(d) if d < 0.5 => (0.0, 0.0, format!("obstacle at {d} m: stopping")),
            _ => (0.6, 0.6, format!("path clear: `{}`", input.message)),
        };
        Ok(MotorCommand {
            reasoning,
            left_speed: left,
            right_speed: right,
            nearest_obstacle_m: nearest,
        })
    }
}

/// A concierge that answers from a host tool; it uses the default turn types.
struct ConciergeCore;

#[agent_core]
impl AgentCore for ConciergeCore {
    fn core_type(&self) -> &str {
        "concierge"
    }

    async fn run_turn(
        &mut self,
        input: TurnInput,
        ctx: &mut AgentContext,
    ) -> Result<TurnOutput, AgentError> {
        let hours = ctx
            .call_tool("opening-hours", json!({ "place": input.message }))
            .await?;
        Ok(TurnOutput::new(format!(
            "{} is open {}",
            input.message,
            hours["hours"].as_str().unwrap_or("at unknown times")
        )))
    }
}

/// The host's tools: one, answering from a fixed table.
struct HostTools;

impl ToolInvoker for HostTools {
    fn invoke(&self, call: ToolCall) -> BoxFuture<'_, Result<Value, AgentError>> {
        Box::pin(async move {
            match call.tool_id.as_str() {
                "opening-hours" => Ok(json!({ "hours": "9:00-17:00" })),
                other => Err(AgentError::new(
                    ErrorCode::NotFound,
                    format!("no tool `{other}`"),
                )),
            }
        })
    }

    fn tool_ids(&self) -> Vec<String> {
        vec!["opening-hours".into()]
    }
}

fn show(label: &str, result: Result<Value, AgentError>) {
    match result {
        Ok(value) => println!("  {label}: ok\n{}", indent(&pretty(&value))),
        Err(err) => {
            println!("  {label}: {} error", err.code());
            for violation in err.violations() {
                println!(
                    "    at `{}` ({}): {}",
                    violation.pointer, violation.keyword, violation.message
                );
            }
            println!("  envelope:\n{}", indent(&pretty(&err.to_envelope())));
        }
    }
}

fn pretty(value: &Value) -> String {
    agentio::serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn main() {
    // A host runs turns on its own executor; this one is Tokio's, through the facade.
    let tokio = agentio::tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a Tokio runtime");
    let log = Arc::new(EventLog::default());
    let mut rover = AgentRuntime::new(EmbodiedCore).with_event_sink(log.clone());
    let mut concierge = AgentRuntime::new(ConciergeCore)
        .with_tools(Arc::new(HostTools))
        .with_event_sink(log.clone());

    println!("== {} core: input schema", rover.core_type());
    println!("{}", indent(&pretty(rover.input_schema())));
    println!(
        "\n== {} core: strict structured-output format (for the provider)",
        rover.core_type()
    );
    let format =
        MotorCommand::structured_output_format().expect("MotorCommand is strict and expressible");
    println!("{}", indent(&pretty(format)));

    println!("\n== driving the {} core with JSON", rover.core_type());
    let good = json!({
        "message": "go to the dock",
        "sensor_readings": [
            { "sensor": "lidar-front", "value": 3.2, "unit": "meters" },
            { "sensor": "thermo", "value": 21.5, "unit": "celsius" }
        ],
        "position": { "x": 1.0, "y": 2.0, "heading_deg": 90.0 }
    });
    show("good call", tokio.block_on(rover.run_turn(good)));

    let bad = json!({
        "message": "go to the dock",
        "sensor_readings": [
            { "sensor": "lidar-front", "value": "near", "unit": "meters" },
            { "sensor": "thermo", "value": 21.5, "unit": "kelvin" }
        ],
        "position": { "x": 1.0, "heading_deg": 400.0 },
        "speed_hint": 2
    });
    show("bad call", tokio.block_on(rover.run_turn(bad)));

    println!(
        "\n== {} core (default TurnInput / TurnOutput)",
        concierge.core_type()
    );
    println!("{}", indent(&pretty(concierge.input_schema())));
    show(
        "good call",
        tokio.block_on(concierge.run_turn(json!({ "message": "the museum" }))),
    );
    show(
        "bad call",
        tokio.block_on(concierge.run_turn(json!({ "text": "the museum" }))),
    );

    println!("\n== events");
    for event in log.events() {
        println!("  {:<16} {} {}", event.kind, event.run_id, event.payload);
    }
}
