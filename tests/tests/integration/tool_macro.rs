//! What `#[tool]` writes into a contract: every attribute set, and none set. The macro writes
//! only the fields that differ from `ToolContract::new`'s defaults, so each attribute is
//! checked to arrive, and each default to stay.

use io_core::{AgentInput, AgentOutput};
use io_typed_tool::{
    Approval, Backoff, CostClass, DriverKind, RetryPolicy, ToolContract, ToolError, ToolExample,
    TypedTool, tool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentInput)]
struct Query {
    text: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentOutput)]
struct Answer {
    text: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Tenant {
    id: String,
}

fn examples() -> Vec<ToolExample> {
    vec![ToolExample {
        name: "echo".into(),
        input: json!({ "text": "hi" }),
        output: Some(json!({ "text": "hi" })),
        note: None,
    }]
}

fn metadata() -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("owner".into(), json!("search-team"));
    map
}

/// Ignored: `description` below wins.
#[tool(
    id = "kb.everything",
    version = "2.3.4",
    name = "Everything",
    description = "Every attribute set.",
    idempotent,
    mutates = ["external:index"],
    requires(network = ["api.example.com"], secrets = ["KB_TOKEN"], tools = ["kb.search"]),
    approval = "policy:finance/eu-1",
    risk_level = 2,
    cost_class = "expensive",
    timeout_ms = 1234,
    retry(max_attempts = 4, backoff = "fixed", initial_ms = 50),
    default_implementation = "kb-everything.http",
    driver_constraints(forbid = ["cli"], require_kind = ["http", "sdk"]),
    implements = "aip39:kb/index@1",
    tags = ["search", "kb"],
    context = Tenant,
    examples = examples,
    metadata = metadata,
)]
async fn everything(query: Query) -> Result<Answer, ToolError> {
    Ok(Answer { text: query.text })
}

/// Echoes its text.
#[tool(id = "kb.plain")]
async fn plain(query: Query) -> Result<Answer, ToolError> {
    Ok(Answer { text: query.text })
}

fn base(id: &str, version: &str, description: &str) -> ToolContract {
    ToolContract::new(
        id,
        version,
        description,
        Query::input_schema().clone(),
        Answer::output_schema().clone(),
    )
}

#[test]
fn every_attribute_arrives_in_the_contract() {
    let mut expected = base("kb.everything", "2.3.4", "Every attribute set.");
    expected.name = "Everything".into();
    expected.context_schema = Some(
        schemars::generate::SchemaSettings::draft2020_12()
            .for_deserialize()
            .into_generator()
            .into_root_schema_for::<Tenant>()
            .to_value(),
    );
    expected.idempotent = true;
    expected.mutates = vec!["external:index".into()];
    expected.requires.network = vec!["api.example.com".into()];
    expected.requires.secrets = vec!["KB_TOKEN".into()];
    expected.requires.tools = vec!["kb.search".into()];
    expected.approval = Approval::Policy("finance/eu-1".into());
    expected.risk_level = 2;
    expected.cost_class = CostClass::Expensive;
    expected.timeout_ms = 1234;
    expected.retry = Some(RetryPolicy {
        max_attempts: 4,
        backoff: Backoff::Fixed,
        initial_ms: 50,
    });
    expected.default_implementation = Some("kb-everything.http".into());
    expected.driver_constraints.forbid = vec![DriverKind::Cli];
    expected.driver_constraints.require_kind = vec![DriverKind::Http, DriverKind::Sdk];
    expected.implements = Some(json!("aip39:kb/index@1"));
    expected.tags = vec!["search".into(), "kb".into()];
    expected.examples = examples();
    expected.metadata = metadata();
    assert_eq!(EverythingTool::contract(), expected);
}

#[test]
fn no_attribute_leaves_every_default() {
    let contract = PlainTool::contract();
    assert_eq!(contract, base("kb.plain", "1.0.0", "Echoes its text."));
    // The defaults themselves, so a change to `ToolContract::new` is seen here too.
    assert_eq!(contract.name, "kb.plain");
    assert_eq!(contract.timeout_ms, 30_000);
    assert_eq!(contract.approval, Approval::Auto);
    assert_eq!(contract.cost_class, CostClass::Trivial);
    assert!(!contract.idempotent && contract.retry.is_none() && contract.tags.is_empty());
}

#[test]
fn a_tool_returns_its_body_s_value_and_converts_its_error() {
    /// Fails with a string.
    #[tool(id = "kb.failing")]
    async fn failing(query: Query) -> Result<Answer, String> {
        Err(format!("no answer for {}", query.text))
    }
    let ctx = io_typed_tool::ToolContext::new("run", "kb.plain");
    let ok = pollster::block_on(PlainTool.execute_typed(Query { text: "hi".into() }, &ctx));
    assert_eq!(ok.expect("ok").text, "hi");
    let err = pollster::block_on(FailingTool.execute_typed(Query { text: "x".into() }, &ctx))
        .expect_err("fails");
    // A `String` error is `internal`: the model sees that the tool failed, the operator the text.
    assert_eq!(err.code(), &io_core::ErrorCode::Internal);
    assert_eq!(err.operator_detail(), Some("no answer for x"));
}
