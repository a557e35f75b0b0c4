//! The erased boundary: round trips, bad inputs with their JSON pointers, bad outputs withheld.

use std::sync::Arc;

use agentio_core::{
    AgentContext, AgentCore, AgentError, AgentInput, AgentOutput, AgentRuntime, BoxFuture,
    ErasedAgentCore, ErrorCode, EventLog, ToolCall, ToolInvoker, TurnInput, TurnOutput, agent_core,
};
use pollster::block_on;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput)]
#[serde(deny_unknown_fields)]
struct Order {
    id: String,
    #[schemars(range(min = 1, max = 100))]
    quantity: u32,
    address: Address,
    #[serde(default)]
    items: Vec<Item>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Address {
    city: String,
    zip: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Item {
    sku: String,
    #[schemars(range(min = 0.0))]
    price: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentOutput)]
struct Receipt {
    order_id: String,
    #[schemars(range(max = 1000))]
    total_cents: u64,
}

/// Prices orders; `fail_with` makes the next turn misbehave on purpose.
struct Pricer {
    misbehave: Option<&'static str>,
}

impl AgentCore for Pricer {
    type Input = Order;
    type Output = Receipt;

    fn core_type(&self) -> &str {
        "pricer"
    }

    async fn run_turn(
        &mut self,
        input: Order,
        _ctx: &mut AgentContext,
    ) -> Result<Receipt, AgentError> {
        match self.misbehave {
            Some("panic") => panic!("pricing table missing"),
            Some("too-big") => Ok(Receipt {
                order_id: input.id,
                total_cents: 1_000_000,
            }),
            Some(other) => Err(AgentError::new(
                ErrorCode::Other(other.to_owned().into()),
                "refused",
            )),
            None => {
                let cents: f64 = input.items.iter().map(|i| i.price * 100.0).sum();
                Ok(Receipt {
                    order_id: input.id,
                    total_cents: cents.round() as u64 * u64::from(input.quantity),
                })
            }
        }
    }
}

fn good_order() -> Value {
    json!({
        "id": "o-1",
        "quantity": 2,
        "address": { "city": "Lyon", "zip": "69001" },
        "items": [{ "sku": "a", "price": 1.25 }, { "sku": "b", "price": 0.5 }]
    })
}

fn run(core: Pricer, input: Value) -> Result<Value, AgentError> {
    block_on(AgentRuntime::new(core).run_turn(input))
}

fn pointers(err: &AgentError) -> Vec<&str> {
    err.violations()
        .iter()
        .map(|v| v.pointer.as_str())
        .collect()
}

fn with(mut value: Value, pointer: &str, replacement: Value) -> Value {
    *value
        .pointer_mut(pointer)
        .expect("pointer exists in the good order") = replacement;
    value
}

#[test]
fn a_good_input_round_trips_through_the_erased_core() {
    let out = run(Pricer { misbehave: None }, good_order()).unwrap();
    assert_eq!(out, json!({ "order_id": "o-1", "total_cents": 350 }));
    let typed: Receipt = serde_json::from_value(out).unwrap();
    assert_eq!(
        typed,
        Receipt {
            order_id: "o-1".into(),
            total_cents: 350
        }
    );
}

#[test]
fn a_missing_field_points_at_the_field() {
    let mut input = good_order();
    input.as_object_mut().unwrap().remove("id");
    let err = run(Pricer { misbehave: None }, input).unwrap_err();
    assert_eq!(err.code(), &ErrorCode::InputInvalid);
    assert_eq!(pointers(&err), ["/id"]);
    assert_eq!(err.violations()[0].keyword, "required");
}

#[test]
fn a_wrong_type_points_at_the_value() {
    let err = run(
        Pricer { misbehave: None },
        with(good_order(), "/quantity", json!("two")),
    )
    .unwrap_err();
    assert_eq!(err.code(), &ErrorCode::InputInvalid);
    assert_eq!(pointers(&err), ["/quantity"]);
    assert_eq!(err.violations()[0].keyword, "type");
}

#[test]
fn an_unknown_field_is_refused_under_deny_unknown_fields() {
    let mut input = good_order();
    input["coupon"] = json!("FREE");
    let err = run(Pricer { misbehave: None }, input).unwrap_err();
    assert_eq!(err.code(), &ErrorCode::InputInvalid);
    assert_eq!(pointers(&err), ["/coupon"]);
}

#[test]
fn out_of_range_numbers_are_refused_on_both_sides() {
    for (quantity, keyword) in [(0, "minimum"), (101, "maximum")] {
        let err = run(
            Pricer { misbehave: None },
            with(good_order(), "/quantity", json!(quantity)),
        )
        .unwrap_err();
        assert_eq!(pointers(&err), ["/quantity"], "quantity {quantity}");
        assert_eq!(err.violations()[0].keyword, keyword);
    }
}

#[test]
fn wrong_nested_types_point_into_the_structure() {
    let err = run(
        Pricer { misbehave: None },
        with(good_order(), "/address/city", json!(5)),
    )
    .unwrap_err();
    assert_eq!(pointers(&err), ["/address/city"]);
    let err = run(
        Pricer { misbehave: None },
        with(good_order(), "/items/1/price", json!(-1)),
    )
    .unwrap_err();
    assert_eq!(pointers(&err), ["/items/1/price"]);
}

#[test]
fn every_violation_of_one_input_is_listed() {
    let input = json!({ "quantity": 0, "address": { "city": 1 }, "extra": true });
    let err = run(Pricer { misbehave: None }, input).unwrap_err();
    let mut found = pointers(&err);
    found.sort_unstable();
    assert_eq!(
        found,
        [
            "/address/city",
            "/address/zip",
            "/extra",
            "/id",
            "/quantity"
        ]
    );
    // The message a model sees names each place too.
    for pointer in found {
        assert!(
            err.message().contains(pointer),
            "{pointer} missing from {:?}",
            err.message()
        );
    }
}

#[test]
fn a_non_object_input_is_refused_without_a_panic() {
    for input in [json!(null), json!([1, 2]), json!("order"), json!(3.5)] {
        let err = run(Pricer { misbehave: None }, input.clone()).unwrap_err();
        assert_eq!(err.code(), &ErrorCode::InputInvalid, "{input}");
        assert_eq!(pointers(&err), [""], "{input}");
    }
}

#[test]
fn an_output_that_breaks_its_schema_is_withheld() {
    let err = run(
        Pricer {
            misbehave: Some("too-big"),
        },
        good_order(),
    )
    .unwrap_err();
    assert_eq!(err.code(), &ErrorCode::OutputInvalid);
    assert_eq!(pointers(&err), ["/total_cents"]);
    assert!(!err.is_retryable());
    // The envelope carries the error and nothing of the rejected output.
    let envelope = err.to_envelope();
    assert_eq!(envelope["ok"], json!(false));
    assert_eq!(envelope["error"]["code"], json!("output_invalid"));
    assert_eq!(
        envelope["error"]["cause"]["violations"][0]["pointer"],
        json!("/total_cents")
    );
    assert!(envelope.get("value").is_none());
}

#[test]
fn a_panicking_core_is_an_internal_error_and_keeps_serving() {
    let mut runtime = AgentRuntime::new(Pricer {
        misbehave: Some("panic"),
    });
    let err = block_on(runtime.run_turn(good_order())).unwrap_err();
    assert_eq!(err.code(), &ErrorCode::Internal);
    assert_eq!(err.message(), "the body failed unexpectedly");
    assert_eq!(
        err.operator_detail(),
        Some("panicked: pricing table missing")
    );
    // The model-facing envelope never carries the operator detail.
    assert!(!err.to_envelope().to_string().contains("pricing table"));
    let again = block_on(runtime.run_turn(good_order())).unwrap_err();
    assert_eq!(again.code(), &ErrorCode::Internal);
}

#[test]
fn a_core_error_passes_through_with_its_own_code() {
    let err = run(
        Pricer {
            misbehave: Some("billing:card_declined"),
        },
        good_order(),
    )
    .unwrap_err();
    assert_eq!(err.code().as_str(), "billing:card_declined");
    assert_eq!(
        err.to_envelope()["error"]["code"],
        json!("billing:card_declined")
    );
}

#[test]
fn run_turn_erased_decodes_with_a_pointer_even_without_validation() {
    let mut core: Box<dyn ErasedAgentCore> = Box::new(Pricer { misbehave: None });
    let mut ctx = AgentContext::new("r");
    let input = with(good_order(), "/items/0/price", json!("cheap"));
    let err = block_on(core.run_turn_erased(input, &mut ctx)).unwrap_err();
    assert_eq!(err.code(), &ErrorCode::InputInvalid);
    assert_eq!(pointers(&err), ["/items/0/price"]);
    assert_eq!(err.violations()[0].keyword, "decode");
}

#[test]
fn validate_input_works_on_its_own_and_matches_the_runtime() {
    let runtime = AgentRuntime::new(Pricer { misbehave: None });
    let bad = with(good_order(), "/quantity", json!(500));
    let direct = Order::validate_input(&bad).unwrap_err();
    let via_runtime = runtime.validate_input(&bad).unwrap_err();
    assert_eq!(direct, via_runtime);
    assert!(Order::validate_input(&good_order()).is_ok());
    assert_eq!(runtime.input_schema(), Order::input_schema());
    assert_eq!(runtime.output_schema(), Receipt::output_schema());
    assert_eq!(runtime.core_type(), "pricer");
}

#[test]
fn error_envelopes_round_trip_through_serde() {
    let err = run(
        Pricer { misbehave: None },
        with(good_order(), "/quantity", json!(0)),
    )
    .unwrap_err();
    let wire = serde_json::to_value(&err).unwrap();
    let back: AgentError = serde_json::from_value(wire).unwrap();
    assert_eq!(back, err);
}

struct DefaultTypes;

#[agent_core]
impl AgentCore for DefaultTypes {
    fn core_type(&self) -> &str {
        "default-types"
    }

    async fn run_turn(
        &mut self,
        input: TurnInput,
        ctx: &mut AgentContext,
    ) -> Result<TurnOutput, AgentError> {
        let found = ctx
            .call_tool("lookup", json!({ "q": input.message }))
            .await?;
        Ok(TurnOutput::new(
            found["answer"].as_str().unwrap_or_default(),
        ))
    }
}

struct Lookup;

impl ToolInvoker for Lookup {
    fn invoke(&self, call: ToolCall) -> BoxFuture<'_, Result<Value, AgentError>> {
        Box::pin(async move {
            match call.tool_id.as_str() {
                "lookup" => Ok(
                    json!({ "answer": format!("{} -> 42", call.input["q"].as_str().unwrap_or("")) }),
                ),
                other => Err(AgentError::new(
                    ErrorCode::NotFound,
                    format!("no tool `{other}`"),
                )),
            }
        })
    }

    fn tool_ids(&self) -> Vec<String> {
        vec!["lookup".into()]
    }
}

#[test]
fn agent_core_fills_in_the_turn_types_and_tools_are_reached_through_the_context() {
    let log = Arc::new(EventLog::default());
    let mut runtime = AgentRuntime::new(DefaultTypes)
        .with_tools(Arc::new(Lookup))
        .with_event_sink(log.clone());
    assert_eq!(runtime.input_schema(), TurnInput::input_schema());
    let out = block_on(runtime.run_turn(json!({ "message": "answer?" }))).unwrap();
    assert_eq!(out, json!({ "response": "answer? -> 42" }));
    let kinds: Vec<_> = log.events().iter().map(|e| e.kind.to_string()).collect();
    assert_eq!(kinds, ["turn.started", "tool.called", "turn.completed"]);
    let run_ids: Vec<_> = log.events().iter().map(|e| e.run_id.clone()).collect();
    assert!(
        run_ids.iter().all(|id| id == &run_ids[0]),
        "one run id per turn: {run_ids:?}"
    );
}

#[test]
fn a_tool_outside_the_allowed_set_is_refused_before_the_host_sees_it() {
    let log = Arc::new(EventLog::default());
    let mut runtime = AgentRuntime::new(DefaultTypes)
        .with_tools(Arc::new(Lookup))
        .with_allowed_tools(["search"])
        .with_event_sink(log.clone());
    let err = block_on(runtime.run_turn(json!({ "message": "x" }))).unwrap_err();
    assert_eq!(err.code(), &ErrorCode::Unauthorised);
    let failed = log
        .events()
        .into_iter()
        .find(|e| e.kind == "turn.failed")
        .unwrap();
    assert_eq!(failed.payload["error"]["code"], json!("unauthorised"));
}

#[test]
fn runtime_types_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<AgentRuntime>();
    assert_send_sync::<AgentContext>();
    assert_send_sync::<AgentError>();
    assert_send_sync::<agentio_core::BoundarySchema>();
    assert_send_sync::<Box<dyn ErasedAgentCore>>();
}

#[test]
fn debug_output_names_the_core_not_its_insides() {
    let runtime = AgentRuntime::new(Pricer { misbehave: None });
    let debug = format!("{runtime:?}");
    assert!(debug.contains("pricer"), "{debug}");
}
