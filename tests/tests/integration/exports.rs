//! One registry, every client: each export of the example tools and of a matrix of types
//! validates against the provider's published definition (copies under `tests/schemas/`, see
//! their SOURCES.md), and each profile's refusals are named.

use std::collections::BTreeMap;

use agentio_core::profiles::Profile;
use agentio_core::{AgentInput, BoundarySchema, Direction};
use agentio_examples::tools::{AppendNoteTool, KbSearch, RenderReportTool};
use agentio_tools::{Export, ToolError, ToolRegistry, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

fn published(file: &str) -> BoundarySchema {
    let path = format!("{}/schemas/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let schema: Value = serde_json::from_str(&text).unwrap();
    let compiled = BoundarySchema::from_value("published", Direction::Input, schema);
    assert!(
        compiled.compile_error().is_none(),
        "{file}: {:?}",
        compiled.compile_error()
    );
    compiled
}

fn mcp_tool_schema() -> BoundarySchema {
    let path = format!("{}/schemas/mcp/schema.json", env!("CARGO_MANIFEST_DIR"));
    let mcp: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let compiled = BoundarySchema::from_value_with_resources(
        "mcp Tool",
        Direction::Input,
        json!({ "$ref": "https://mcp.invalid/schema.json#/$defs/Tool" }),
        vec![("https://mcp.invalid/schema.json".into(), mcp)],
    );
    assert!(
        compiled.compile_error().is_none(),
        "{:?}",
        compiled.compile_error()
    );
    compiled
}

fn check_all(registry: &ToolRegistry) {
    let targets = [
        (
            Export::OpenAiChat { strict: false },
            published("providers/openai-chat-tool.schema.json"),
        ),
        (
            Export::OpenAiChat { strict: true },
            published("providers/openai-chat-tool.schema.json"),
        ),
        (
            Export::OpenAiResponses { strict: false },
            published("providers/openai-responses-function-tool.schema.json"),
        ),
        (
            Export::OpenAiResponses { strict: true },
            published("providers/openai-responses-function-tool.schema.json"),
        ),
        (
            Export::Anthropic,
            published("providers/anthropic-tool.schema.json"),
        ),
        (
            Export::Gemini,
            published("providers/gemini-function-declaration.schema.json"),
        ),
        (Export::Mcp, mcp_tool_schema()),
    ];
    for (target, schema) in targets {
        let definitions = registry
            .export(target)
            .unwrap_or_else(|e| panic!("{target:?}: {e}"));
        assert_eq!(
            definitions.len(),
            registry.contracts().count(),
            "{target:?}"
        );
        for definition in definitions {
            if let Err(err) = schema.validate(&definition) {
                panic!("{target:?}: {err}\n{definition:#}");
            }
            check_parameters(target, &definition);
        }
    }
}

/// The parameter schema of an export, held to the rules its provider publishes for it, where
/// it publishes them: OpenAI's strict subset, Gemini's `Schema` message.
fn check_parameters(target: Export, definition: &Value) {
    match target {
        Export::OpenAiChat { strict: true } => {
            openai_strict(
                &definition["function"]["parameters"],
                &format!("{target:?}"),
            );
        }
        Export::OpenAiResponses { strict: true } => {
            openai_strict(&definition["parameters"], &format!("{target:?}"));
        }
        Export::Gemini => {
            let rules = published("providers/gemini-schema.schema.json");
            let parameters = &definition["parameters"];
            if let Err(err) = rules.validate(parameters) {
                panic!("Gemini parameters: {err}\n{parameters:#}");
            }
        }
        _ => {}
    }
}

/// `schema` against OpenAI's strict-mode subset: the schema over schemas, and the rules it
/// cannot state.
fn openai_strict(schema: &Value, what: &str) {
    let rules = published("providers/openai-strict-parameters.schema.json");
    if let Err(err) = rules.validate(schema) {
        panic!("{what} parameters: {err}\n{schema:#}");
    }
    let broken = openai_strict_rules(schema);
    assert!(broken.is_empty(), "{what}: {broken:?}\n{schema:#}");
}

/// OpenAI's strict rules a schema over schemas cannot state (RULES.md): every property listed
/// in `required`, and the size limits. Written apart from the library's own check, from the
/// rules' text: each object or array schema is a level of nesting, the root the first.
fn openai_strict_rules(schema: &Value) -> Vec<String> {
    fn walk(
        node: &Value,
        root: &Value,
        at: String,
        level: usize,
        seen: &mut Vec<String>,
        out: &mut Vec<String>,
        totals: &mut [usize; 3],
    ) {
        let Some(object) = node.as_object() else {
            return;
        };
        if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
            if !seen.iter().any(|s| s == reference) {
                seen.push(reference.to_owned());
                let target = root
                    .pointer(reference.trim_start_matches('#'))
                    .cloned()
                    .unwrap_or(Value::Null);
                walk(&target, root, at.clone(), level, seen, out, totals);
                seen.pop();
            }
            return;
        }
        let is_container = matches!(object.get("type"), Some(Value::String(t)) if t == "object" || t == "array")
            || object
                .get("type")
                .and_then(Value::as_array)
                .is_some_and(|t| t.iter().any(|t| t == "object" || t == "array"))
            || object.contains_key("properties");
        let level = level + usize::from(is_container);
        if level > 10 {
            out.push(format!("{at}: nested {level} levels"));
        }
        if let Some(properties) = object.get("properties").and_then(Value::as_object) {
            let required: Vec<&str> = object["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            for name in properties.keys() {
                if !required.contains(&name.as_str()) {
                    out.push(format!("{at}/properties/{name}: not in `required`"));
                }
            }
            if seen.is_empty() {
                totals[0] += properties.len();
            }
            for (name, sub) in properties {
                walk(
                    sub,
                    root,
                    format!("{at}/properties/{name}"),
                    level,
                    seen,
                    out,
                    totals,
                );
            }
        }
        if let Some(values) = object.get("enum").and_then(Value::as_array) {
            if seen.is_empty() {
                totals[1] += values.len();
            }
            let chars: usize = values
                .iter()
                .filter_map(Value::as_str)
                .map(|s| s.chars().count())
                .sum();
            if values.len() > 250 && chars > 15_000 {
                out.push(format!(
                    "{at}/enum: {chars} characters in {} values",
                    values.len()
                ));
            }
        }
        if let Some(items) = object.get("items") {
            walk(items, root, format!("{at}/items"), level, seen, out, totals);
        }
        for (i, branch) in object
            .get("anyOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            walk(
                branch,
                root,
                format!("{at}/anyOf/{i}"),
                level,
                seen,
                out,
                totals,
            );
        }
    }
    let mut out = Vec::new();
    let mut totals = [0usize; 3];
    walk(
        schema,
        schema,
        String::new(),
        0,
        &mut Vec::new(),
        &mut out,
        &mut totals,
    );
    if totals[0] > 5_000 {
        out.push(format!("{} object properties", totals[0]));
    }
    if totals[1] > 1_000 {
        out.push(format!("{} enum values", totals[1]));
    }
    out
}

#[test]
fn the_example_tools_export_to_every_client_and_validate() {
    let registry =
        agentio_tools::tool_registry![KbSearch, AppendNoteTool, RenderReportTool].unwrap();
    check_all(&registry);
    let mcp = registry.export(Export::Mcp).unwrap();
    let by_name: BTreeMap<&str, &Value> = mcp
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), t))
        .collect();
    assert_eq!(
        by_name["kb.search"]["annotations"],
        json!({ "title": "Knowledge base search", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false })
    );
    assert_eq!(
        by_name["notes.append"]["annotations"]["readOnlyHint"],
        false
    );
    assert_eq!(
        by_name["notes.append"]["annotations"]["destructiveHint"],
        true
    );
    assert_eq!(by_name["notes.append"]["outputSchema"]["type"], "object");
}

// --- A matrix of types ---------------------------------------------------------------------

#[derive(Serialize, Deserialize, JsonSchema)]
struct Address {
    street: String,
    #[schemars(length(min = 2, max = 2))]
    country: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
enum External {
    Label { text: String },
    Point { x: f64, y: f64 },
}

/// A unit variant beside a struct variant: a string or an object.
#[derive(Serialize, Deserialize, JsonSchema)]
enum Mixed {
    Unit,
    Point { x: f64, y: f64 },
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Internal {
    Circle { radius: f64 },
    Square { side: f64 },
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(tag = "t", content = "c")]
enum Adjacent {
    Text(String),
    Count(u32),
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
enum Untagged {
    Name { name: String },
    Id { id: u64 },
}

#[derive(
    Serialize, Deserialize, JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput,
)]
struct Matrix {
    /// Where it goes (a documented field of a struct type: `$ref` beside `description`).
    address: Address,
    note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    maybe: Option<Address>,
    /// A documented field of an enum type.
    external: External,
    internal: Internal,
    adjacent: Adjacent,
    untagged: Untagged,
    #[schemars(range(min = 1, max = 10))]
    level: u8,
    #[schemars(regex(pattern = r"^[a-z]+$"))]
    slug: String,
    tags: Vec<String>,
}

/// Takes every shape.
#[tool(id = "matrix.take")]
async fn take(input: Matrix) -> Result<Matrix, ToolError> {
    Ok(input)
}

#[derive(
    Serialize, Deserialize, JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput,
)]
struct Tree {
    label: String,
    children: Vec<Tree>,
}

/// Walks a tree.
#[tool(id = "tree.walk")]
async fn walk(input: Tree) -> Result<Tree, ToolError> {
    Ok(input)
}

#[derive(
    Serialize, Deserialize, JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput,
)]
struct Loose {
    extra: Value,
    scores: BTreeMap<String, f64>,
}

/// Takes anything.
#[tool(id = "loose.take")]
async fn loose(input: Loose) -> Result<Loose, ToolError> {
    Ok(input)
}

#[test]
fn a_matrix_of_types_exports_to_every_client_and_validates() {
    let registry = agentio_tools::tool_registry![TakeTool].unwrap();
    check_all(&registry);
    let gemini = registry.export(Export::Gemini).unwrap();
    let parameters = &gemini[0]["parameters"];
    assert_eq!(
        parameters["properties"]["note"],
        json!({ "type": "STRING", "nullable": true })
    );
    assert_eq!(parameters["properties"]["level"]["minimum"], 1);
    assert!(
        parameters["properties"]["level"].get("format").is_none(),
        "Rust formats are dropped"
    );

    // OpenAI strict: a `$ref` beside a description is inlined, as OpenAI's Python SDK does
    // (strict mode refuses `$ref` with siblings); the field's description wins.
    let canonical = registry.tool_input_schema("matrix.take").unwrap();
    assert_eq!(
        canonical["properties"]["address"]["$ref"], "#/$defs/Address",
        "the canonical schema keeps the reference"
    );
    let strict = registry
        .export(Export::OpenAiChat { strict: true })
        .unwrap();
    let address = &strict[0]["function"]["parameters"]["properties"]["address"];
    assert!(address.get("$ref").is_none(), "{address:#}");
    assert_eq!(address["type"], "object");
    assert_eq!(address["required"], json!(["street", "country"]));
    assert_eq!(address["additionalProperties"], false);
    assert!(
        address["description"]
            .as_str()
            .unwrap()
            .starts_with("Where it goes")
    );
    let external = &strict[0]["function"]["parameters"]["properties"]["external"];
    assert!(
        external.get("$ref").is_none() && external.get("anyOf").is_some(),
        "{external:#}"
    );

    // What each client's form leaves out is reported, with its pointer and keyword: the
    // two-letter country code's length bounds under strict mode, nothing for MCP.
    let report = registry
        .export_report(Export::OpenAiChat { strict: true })
        .unwrap();
    let relaxed: Vec<(String, String)> = report
        .relaxed
        .iter()
        .map(|(_, r)| (r.pointer.clone(), r.keyword.clone()))
        .collect();
    assert!(
        relaxed.contains(&(
            "/inputs/$defs/Address/properties/country".into(),
            "minLength".into()
        )),
        "{relaxed:?}"
    );
    assert!(
        relaxed.contains(&(
            "/inputs/$defs/Address/properties/country".into(),
            "maxLength".into()
        )),
        "{relaxed:?}"
    );
    assert!(
        registry
            .export_report(Export::Mcp)
            .unwrap()
            .relaxed
            .is_empty()
    );
}

#[test]
fn a_recursive_type_is_refused_where_it_must_be_inlined_and_kept_elsewhere() {
    let registry = agentio_tools::tool_registry![WalkTool].unwrap();
    let err = registry.export(Export::Gemini).unwrap_err();
    assert_eq!(err.problems[0].0, "tree.walk@1");
    assert_eq!(
        err.problems[0].1.pointer,
        "/inputs/properties/children/items/properties/children/items"
    );
    assert!(err.to_string().contains("recursive type"), "{err}");
    // OpenAI strict, Anthropic and MCP keep the `$ref`.
    for target in [
        Export::OpenAiChat { strict: true },
        Export::Anthropic,
        Export::Mcp,
    ] {
        let exported = registry.export(target).unwrap();
        assert!(exported[0].to_string().contains("$ref"), "{target:?}");
    }
    assert!(Tree::input_boundary().profile(Profile::Inlined).is_err());
}

#[test]
fn profiles_refuse_by_name_what_their_client_cannot_express() {
    let registry = agentio_tools::tool_registry![LooseTool].unwrap();
    // Gemini cannot say "any value".
    let err = registry.export(Export::Gemini).unwrap_err();
    assert_eq!(err.problems[0].1.pointer, "/inputs/properties/extra");
    assert!(err.problems[0].1.reason.contains("needs a `type`"), "{err}");
    // OpenAI strict cannot say a map or an arbitrary value.
    let err = registry
        .export(Export::OpenAiChat { strict: true })
        .unwrap_err();
    assert!(
        err.problems[0].1.pointer.starts_with("/inputs/properties/"),
        "{err}"
    );
    // Non-strict OpenAI, Anthropic and MCP take it as it is.
    for target in [
        Export::OpenAiChat { strict: false },
        Export::Anthropic,
        Export::Mcp,
    ] {
        assert!(registry.export(target).is_ok(), "{target:?}");
    }
}

/// A change to a contract.
type Tweak = fn(&mut agentio_tools::ToolContract);

/// A JSON tool with an id and a version, its contract otherwise the defaults (changed by
/// `tweak`).
struct Plain {
    id: String,
    version: String,
    tweak: Tweak,
}

impl Plain {
    fn new(id: &str, version: &str) -> std::sync::Arc<Plain> {
        Self::tweaked(id, version, |_| {})
    }

    fn tweaked(id: &str, version: &str, tweak: Tweak) -> std::sync::Arc<Plain> {
        std::sync::Arc::new(Plain {
            id: id.to_owned(),
            version: version.to_owned(),
            tweak,
        })
    }
}

impl agentio_tools::ToolPlugin for Plain {
    fn tool_contract(&self) -> agentio_tools::ToolContract {
        let mut contract = agentio_tools::ToolContract::new(
            &self.id,
            &self.version,
            "Plain.",
            json!({ "type": "object" }),
            json!({ "type": "object" }),
        );
        (self.tweak)(&mut contract);
        contract
    }
    fn execute<'a>(
        &'a self,
        input: Value,
        _: &'a agentio_tools::ToolContext,
    ) -> agentio_core::BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move { Ok(input) })
    }
}

#[test]
fn provider_names_map_back_to_tools_and_majors_stay_apart() {
    let mut registry = ToolRegistry::new();
    registry
        .register_plugin(Plain::new("kb.search", "1.2.0"))
        .unwrap();
    assert_eq!(
        registry.provider_name("kb.search").as_deref(),
        Some("kb_search")
    );
    assert_eq!(
        registry.tool_for_provider_name("kb_search").as_deref(),
        Some("kb.search")
    );
    // The MCP name too; nothing longer, shorter, mixed, or with a major it does not need.
    assert_eq!(
        registry.tool_for_provider_name("kb.search").as_deref(),
        Some("kb.search")
    );
    for other in [
        "kb_searc",
        "kb_searchx",
        "kb.search_",
        "kb_search__1",
        "kb-search",
        "",
    ] {
        assert_eq!(registry.tool_for_provider_name(other), None, "{other}");
    }
    registry
        .register_plugin(Plain::new("kb.search", "2.0.0"))
        .unwrap();
    let names: Vec<String> = registry
        .export(Export::Anthropic)
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["kb_search__1", "kb_search__2"]);
    assert_eq!(
        registry.tool_for_provider_name("kb_search__2").as_deref(),
        Some("kb.search@2")
    );
    assert_eq!(
        registry.tool_for_provider_name("kb.search__1").as_deref(),
        Some("kb.search@1")
    );
    assert_eq!(registry.tool_for_provider_name("kb_search"), None);
    for other in [
        "kb_search__3",
        "kb_search__",
        "kb_search_2",
        "kb_search__2x",
    ] {
        assert_eq!(registry.tool_for_provider_name(other), None, "{other}");
    }
    assert_eq!(
        registry.provider_name("kb.search"),
        None,
        "ambiguous: two majors"
    );
}

#[test]
fn names_over_the_providers_limit_are_refused_at_export() {
    let mut registry = ToolRegistry::new();
    let long_id = "a.".repeat(34).trim_end_matches('.').to_owned();
    registry
        .register_plugin(Plain::new(&long_id, "1.0.0"))
        .unwrap();
    let err = registry
        .export(Export::OpenAiChat { strict: false })
        .unwrap_err();
    assert_eq!(err.problems[0].1.pointer, "/name");
    assert!(
        err.problems[0]
            .1
            .reason
            .contains("over the providers' limit of 64"),
        "{err}"
    );
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
enum NameOrId {
    Name(String),
    Id(u64),
}

#[derive(
    Serialize, Deserialize, JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput,
)]
struct Lookup {
    key: NameOrId,
    shape: Mixed,
}

/// Looks a record up.
#[tool(id = "records.lookup")]
async fn lookup(input: Lookup) -> Result<Lookup, ToolError> {
    Ok(input)
}

#[test]
fn gemini_refuses_a_union_of_different_types() {
    let registry = agentio_tools::tool_registry![LookupTool].unwrap();
    let err = registry.export(Export::Gemini).unwrap_err();
    let pointers: Vec<&str> = err
        .problems
        .iter()
        .map(|(_, r)| r.pointer.as_str())
        .collect();
    assert_eq!(
        pointers,
        [
            "/inputs/properties/key/anyOf",
            "/inputs/properties/shape/anyOf"
        ]
    );
    assert!(err.problems[0].1.reason.contains("one `type`"), "{err}");
    // Every other client takes it.
    for target in [
        Export::OpenAiChat { strict: true },
        Export::OpenAiResponses { strict: false },
        Export::Anthropic,
        Export::Mcp,
    ] {
        assert!(registry.export(target).is_ok(), "{target:?}");
    }
}

#[test]
fn a_name_of_exactly_the_limit_exports_and_one_more_is_refused() {
    let mut registry = ToolRegistry::new();
    let at_limit = "a".repeat(agentio_tools::MAX_PROVIDER_NAME);
    registry
        .register_plugin(Plain::new(&at_limit, "1.0.0"))
        .unwrap();
    let exported = registry.export(Export::Gemini).unwrap();
    assert_eq!(exported[0]["name"], json!(at_limit));

    let over = "b".repeat(agentio_tools::MAX_PROVIDER_NAME + 1);
    registry
        .register_plugin(Plain::new(&over, "1.0.0"))
        .unwrap();
    let err = registry.export(Export::Gemini).unwrap_err();
    assert_eq!(err.problems.len(), 1, "{err}");
    assert_eq!(err.problems[0].0, format!("{over}@1"));
    assert_eq!(
        err.to_string(),
        format!(
            "some tools cannot be exported:\n  - {over}@1: /name: the name `{over}` is 65 characters, over the providers' limit of 64"
        )
    );
}

#[test]
fn mcp_hints_follow_the_contract() {
    let mut registry = ToolRegistry::new();
    let tools: [(&str, Tweak); 4] = [
        ("a.pure", |_| {}),
        ("b.host", |c| {
            c.requires.network = vec!["api.example.com".into()]
        }),
        ("c.post", |c| {
            c.mutates = vec!["network:api.example.com".into()];
            c.approval = agentio_tools::Approval::OnMutate;
        }),
        ("d.disk", |c| {
            c.mutates = vec!["workspace:/notes".into()];
            c.approval = agentio_tools::Approval::OnMutate;
            c.idempotent = true;
        }),
    ];
    for (id, tweak) in tools {
        registry
            .register_plugin(Plain::tweaked(id, "1.0.0", tweak))
            .unwrap();
    }
    let mcp = registry.export(Export::Mcp).unwrap();
    let hints: Vec<(bool, bool, bool, bool)> = mcp
        .iter()
        .map(|t| {
            let a = &t["annotations"];
            let flag = |k: &str| a[k].as_bool().unwrap();
            (
                flag("readOnlyHint"),
                flag("destructiveHint"),
                flag("idempotentHint"),
                flag("openWorldHint"),
            )
        })
        .collect();
    assert_eq!(
        hints,
        [
            (true, false, false, false),
            (true, false, false, true),
            (false, true, false, true),
            (false, true, true, false),
        ]
    );
}
