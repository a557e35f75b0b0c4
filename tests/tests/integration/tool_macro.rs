//! What `#[tool]` writes into a contract: every attribute set, and none set. The macro writes
//! only the fields that differ from `ToolContract::new`'s defaults, so each attribute is
//! checked to arrive, and each default to stay.

use agentio_core::{AgentInput, AgentOutput};
use agentio_tools::{
    Approval, Backoff, CostClass, DriverConstraints, DriverKind, Requires, RetryPolicy,
    ToolContract, ToolError, ToolExample, ToolPlugin, TypedTool, tool,
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
    let ctx = agentio_tools::ToolContext::new("run", "kb.plain");
    let ok = pollster::block_on(PlainTool.execute_typed(Query { text: "hi".into() }, &ctx));
    assert_eq!(ok.expect("ok").text, "hi");
    let err = pollster::block_on(FailingTool.execute_typed(Query { text: "x".into() }, &ctx))
        .expect_err("fails");
    // A `String` error is `internal`: the model sees that the tool failed, the operator the text.
    assert_eq!(err.code(), &agentio_core::ErrorCode::Internal);
    assert_eq!(err.operator_detail(), Some("no answer for x"));
}

#[test]
fn a_parsed_contract_without_a_timeout_gets_the_default() {
    let mut json = serde_json::to_value(PlainTool::contract()).unwrap();
    json.as_object_mut().unwrap().remove("timeout_ms");
    let parsed: ToolContract = serde_json::from_value(json).unwrap();
    assert_eq!(parsed.timeout_ms, agentio_tools::DEFAULT_TIMEOUT_MS);
    assert_eq!(agentio_tools::DEFAULT_TIMEOUT_MS, 30_000);
}

#[test]
fn requires_and_driver_constraints_are_written_only_when_something_is_in_them() {
    let written = |contract: &ToolContract| serde_json::to_value(contract).unwrap();
    let plain = PlainTool::contract();
    assert!(Requires::default().is_empty() && DriverConstraints::default().is_empty());
    assert!(written(&plain).get("requires").is_none());
    assert!(written(&plain).get("driver_constraints").is_none());
    // Each list alone makes the object non-empty and written.
    for list in 0..3 {
        let mut contract = plain.clone();
        let requires = &mut contract.requires;
        [
            &mut requires.network,
            &mut requires.secrets,
            &mut requires.tools,
        ][list]
            .push("x".into());
        assert!(!contract.requires.is_empty(), "list {list}");
        assert!(written(&contract).get("requires").is_some(), "list {list}");
    }
    let mut forbid = plain.clone();
    forbid.driver_constraints.forbid.push(DriverKind::Cli);
    let mut require = plain.clone();
    require
        .driver_constraints
        .require_kind
        .push(DriverKind::Http);
    for contract in [forbid, require] {
        assert!(!contract.driver_constraints.is_empty());
        assert!(written(&contract).get("driver_constraints").is_some());
    }
}

#[test]
fn a_typed_tool_reuses_its_types_compiled_boundaries() {
    let input = ToolPlugin::input_boundary(&PlainTool).expect("typed tools have one");
    assert!(std::ptr::eq(input, Query::input_boundary()));
    let output = ToolPlugin::output_boundary(&PlainTool).expect("typed tools have one");
    assert!(std::ptr::eq(output, Answer::output_boundary()));
    let decoded = PlainTool
        .__decode(&json!({ "text": "hi" }))
        .expect("typed tools decode ahead")
        .expect("valid");
    assert_eq!(format!("{decoded:?}"), "DecodedInput(..)");
}

/// Answers with the ids its context carries.
#[tool(id = "kb.whoami")]
async fn whoami(_query: Query, ctx: &agentio_tools::ToolContext) -> Result<Answer, ToolError> {
    Ok(Answer {
        text: format!("{} {} {}", ctx.tool_id(), ctx.run_id(), ctx.attempt()),
    })
}

#[test]
fn a_body_sees_the_tool_and_the_run_it_is_called_for() {
    let mut registry = agentio_tools::ToolRegistry::new();
    registry.register(WhoamiTool).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let out = runtime
        .block_on(registry.call_with(
            "kb.whoami@1",
            json!({ "text": "x" }),
            agentio_tools::CallOptions::default().with_run_id("run-7"),
        ))
        .unwrap();
    assert_eq!(out, json!({ "text": "kb.whoami run-7 1" }));
}

/// The tool type `#[tool]` writes is a plain value: `Copy`, `Clone`, `Default`, and `Debug`
/// printing its name, as a derive of the four would make it.
#[test]
fn a_tool_type_is_a_copyable_default_value_that_prints_its_name() {
    fn copy<T: Copy>(value: T) -> (T, T) {
        (value, value)
    }
    fn made<T: Default>() -> T {
        T::default()
    }
    let (a, b) = copy(made::<PlainTool>());
    #[allow(clippy::clone_on_copy)]
    let c = a.clone();
    assert_eq!(
        format!("{a:?} {b:?} {c:?}"),
        "PlainTool PlainTool PlainTool"
    );
    assert_eq!(format!("{:#?}", PlainTool), "PlainTool");
}

/// A backend a generic tool is written over.
trait Shelf: Send + Sync + 'static {
    fn label(&self) -> &'static str;
}

struct Paper;

impl Shelf for Paper {
    fn label(&self) -> &'static str {
        "paper"
    }
}

/// A generic tool: `#[tool]` on an `impl<S: Shelf> TypedTool for Lookup<S>` block keeps the
/// block's generics and bounds (a generic function is a compile error that points here:
/// `tests/ui/contract/fn-generic.rs`).
struct Lookup<S> {
    shelf: S,
}

/// Looks a text up on the shelf it was built with.
#[tool(id = "test.lookup", idempotent)]
impl<S: Shelf> TypedTool for Lookup<S> {
    type Input = Query;
    type Output = Answer;

    async fn execute_typed(
        &self,
        input: Query,
        _ctx: &agentio_tools::ToolContext,
    ) -> Result<Answer, ToolError> {
        Ok(Answer {
            text: format!("{} on {}", input.text, self.shelf.label()),
        })
    }
}

#[test]
fn a_generic_tool_impl_keeps_its_bounds_and_runs() {
    assert_eq!(<Lookup<Paper> as TypedTool>::ID, "test.lookup");
    let mut registry = agentio_tools::ToolRegistry::new();
    registry
        .register(Lookup { shelf: Paper })
        .expect("a valid contract");
    let contract = registry.contract("test.lookup").expect("registered");
    assert!(contract.idempotent);
    assert_eq!(
        contract.description,
        "Looks a text up on the shelf it was built with."
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let out = runtime.block_on(registry.call("test.lookup", json!({ "text": "atlas" })));
    assert_eq!(
        out.expect("a valid call"),
        json!({ "text": "atlas on paper" })
    );
}
