use agentio_core::AgentInput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
#[agent(validate = check_range)]
struct Range {
    low: u32,
    high: u32,
}

// A rule function takes the value and the report: `fn(&Range, &mut Rules)`.
fn check_range(range: &Range) -> bool {
    range.low <= range.high
}

fn main() {}
