//! Cross-field rules (`#[agent(validate = ...)]`): run after the schema, on every boundary
//! that checks a value of the type, with the schema's error shape.

use agentio_core::rules::Rules;
use agentio_core::{AgentInput, AgentOutput, ErrorCode};
use agentio_tools::{ApprovalDecision, ApprovalRequest, ToolError, ToolRegistry, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
#[agent(validate = window_rules)]
struct Window {
    low: u32,
    high: u32,
    #[serde(default)]
    tags: Vec<String>,
}

fn window_rules(window: &Window, rules: &mut Rules) {
    if window.low > window.high {
        rules.error(
            "/low",
            "low_not_above_high",
            "`low` must not be above `high`",
        );
    }
    for (i, tag) in window.tags.iter().enumerate() {
        if window.tags[..i].contains(tag) {
            rules.error(format!("/tags/{i}"), "unique_tags", "each tag once");
        }
    }
    if window.tags.is_empty() {
        rules.warning("/tags", "tags_recommended", "a window SHOULD be tagged");
    }
}

fn rule_keywords(err: &agentio_core::AgentError) -> Vec<(&str, &str)> {
    err.violations()
        .iter()
        .map(|v| (v.pointer.as_str(), v.keyword.as_str()))
        .collect()
}

#[test]
fn an_input_breaking_a_rule_is_refused_with_every_broken_rule_and_its_pointer() {
    let bad = json!({ "low": 5, "high": 1, "tags": ["a", "b", "a"] });
    for err in [
        Window::validate_input(&bad).unwrap_err(),
        Window::from_input_value(&bad).unwrap_err(),
        Window::input_boundary().validate(&bad).unwrap_err().into(),
    ] {
        assert_eq!(err.code(), &ErrorCode::InputInvalid);
        assert_eq!(
            rule_keywords(&err),
            [("/low", "low_not_above_high"), ("/tags/2", "unique_tags")]
        );
        assert!(
            err.message().contains("`low` must not be above `high`"),
            "{err}"
        );
    }
    let good = json!({ "low": 1, "high": 5 });
    assert!(Window::validate_input(&good).is_ok());
    assert_eq!(Window::from_input_value(&good).unwrap().high, 5);
}

#[test]
fn warnings_never_fail_validation_and_reach_whoever_runs_the_rules() {
    let untagged = Window::from_input_value(&json!({ "low": 1, "high": 2 })).unwrap();
    let mut rules = Rules::new();
    window_rules(&untagged, &mut rules);
    assert!(rules.errors().is_empty());
    assert_eq!(rules.warnings()[0].pointer, "/tags");
    assert_eq!(rules.warnings()[0].keyword, "tags_recommended");
}

#[test]
fn a_schema_violation_is_reported_alone_the_rules_assume_a_well_formed_value() {
    let err = Window::validate_input(&json!({ "low": "5", "high": 1 })).unwrap_err();
    assert_eq!(rule_keywords(&err), [("/low", "type")]);
}

#[test]
fn outputs_are_held_to_the_same_rules_on_every_path() {
    let bad = Window {
        low: 9,
        high: 3,
        tags: vec!["x".into()],
    };
    for err in [
        bad.to_output_value().unwrap_err(),
        bad.to_output_json().unwrap_err(),
        Window::validate_output(&json!({ "low": 9, "high": 3, "tags": ["x"] })).unwrap_err(),
    ] {
        assert_eq!(err.code(), &ErrorCode::OutputInvalid);
        assert_eq!(rule_keywords(&err), [("/low", "low_not_above_high")]);
    }
    let good = Window {
        low: 1,
        high: 3,
        tags: vec![],
    };
    assert_eq!(good.to_output_value().unwrap()["high"], 3);
    assert!(good.to_output_json().unwrap().contains("\"high\":3"));
}

/// A generic type: its boundary lives in the process-wide cache, with its rules.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, AgentInput)]
#[agent(validate = pair_rules)]
struct Pair<T: PartialEq> {
    first: T,
    second: T,
}

fn pair_rules<T: PartialEq>(pair: &Pair<T>, rules: &mut Rules) {
    if pair.first == pair.second {
        rules.error("/second", "distinct", "the two must differ");
    }
}

#[test]
fn a_generic_type_runs_its_rules_for_each_instantiation() {
    let err = Pair::<u8>::validate_input(&json!({ "first": 1, "second": 1 })).unwrap_err();
    assert_eq!(rule_keywords(&err), [("/second", "distinct")]);
    assert!(Pair::<String>::validate_input(&json!({ "first": "a", "second": "b" })).is_ok());
    assert!(Pair::<String>::from_input_value(&json!({ "first": "a", "second": "a" })).is_err());
}

static RUNS: AtomicU32 = AtomicU32::new(0);

/// Narrows a window.
#[tool(id = "test.narrow", approval = "always")]
async fn narrow(window: Window) -> Result<Window, ToolError> {
    RUNS.fetch_add(1, Ordering::SeqCst);
    // A body that breaks its own output rules.
    Ok(Window {
        low: window.high + 1,
        ..window
    })
}

#[test]
fn the_registry_refuses_a_rule_breaking_input_before_approval_and_checks_the_output() {
    let asked = Arc::new(AtomicU32::new(0));
    let counter = asked.clone();
    let approver = move |_: &ApprovalRequest| {
        counter.fetch_add(1, Ordering::SeqCst);
        ApprovalDecision::Approve
    };
    let mut registry = ToolRegistry::new().with_approver(Arc::new(approver));
    registry.register(NarrowTool).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let call = |input: Value| runtime.block_on(registry.call("test.narrow", input));

    let err = call(json!({ "low": 5, "high": 1 })).unwrap_err();
    assert_eq!(err.code(), &ErrorCode::InputInvalid);
    assert_eq!(rule_keywords(&err), [("/low", "low_not_above_high")]);
    assert_eq!(asked.load(Ordering::SeqCst), 0, "refused before approval");
    assert_eq!(RUNS.load(Ordering::SeqCst), 0);

    let err = call(json!({ "low": 1, "high": 5 })).unwrap_err();
    assert_eq!(err.code(), &ErrorCode::OutputInvalid);
    assert_eq!(rule_keywords(&err), [("/low", "low_not_above_high")]);
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert_eq!(RUNS.load(Ordering::SeqCst), 1);
}

/// Widens a window by one on each side.
struct Widen;

impl agentio_core::AgentCore for Widen {
    type Input = Window;
    type Output = Window;

    fn core_type(&self) -> &str {
        "widen"
    }

    async fn run_turn(
        &mut self,
        window: Window,
        _ctx: &mut agentio_core::AgentContext,
    ) -> Result<Window, agentio_core::AgentError> {
        // Breaks the output rule when asked to widen an empty window at zero.
        Ok(Window {
            low: if window.high == 0 {
                1
            } else {
                window.low.saturating_sub(1)
            },
            high: window.high,
            tags: window.tags,
        })
    }
}

#[test]
fn the_runtime_holds_a_cores_input_and_output_to_their_rules() {
    let mut runtime = agentio_core::AgentRuntime::new(Widen);
    let err = pollster::block_on(runtime.run_turn(json!({ "low": 4, "high": 2 }))).unwrap_err();
    assert_eq!(err.code(), &ErrorCode::InputInvalid);
    assert_eq!(rule_keywords(&err), [("/low", "low_not_above_high")]);
    let err = pollster::block_on(runtime.run_turn(json!({ "low": 0, "high": 0 }))).unwrap_err();
    assert_eq!(err.code(), &ErrorCode::OutputInvalid);
    let out = pollster::block_on(runtime.run_turn(json!({ "low": 2, "high": 5 }))).unwrap();
    assert_eq!(out["low"], 1);
}

/// How many times `Counted`'s rules ran.
static COUNTED_RUNS: AtomicU32 = AtomicU32::new(0);

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
#[agent(validate = counted_rules)]
struct Counted {
    n: u32,
}

fn counted_rules(_: &Counted, _: &mut Rules) {
    COUNTED_RUNS.fetch_add(1, Ordering::SeqCst);
}

/// Echoes a counted value.
#[tool(id = "test.counted")]
async fn counted(input: Counted) -> Result<Counted, ToolError> {
    Ok(input)
}

/// A typed tool's output is checked once: the typed path checks it as it writes it, and the
/// registry, told so, does not check it again (each check runs the type's rules, counted here).
/// Its input likewise: decoded and checked once.
#[test]
fn a_typed_call_checks_its_input_and_its_output_once_each() {
    let mut registry = ToolRegistry::new();
    registry.register(CountedTool).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    COUNTED_RUNS.store(0, Ordering::SeqCst);
    let out = runtime.block_on(registry.call("test.counted", json!({ "n": 3 })));
    assert_eq!(out.unwrap(), json!({ "n": 3 }));
    assert_eq!(COUNTED_RUNS.load(Ordering::SeqCst), 2, "once in, once out");
}
