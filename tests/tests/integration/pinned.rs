//! Behaviours a mutation-testing run found unpinned (cargo-mutants survivors): approval under
//! `on-mutate`, policy references, path boundaries, the violation cap, strict-mode rewrites of
//! nullable objects and array items, the registry as a tool invoker, contract defaults and the
//! `Display` text users read.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use agentio_core::files::{
    MAX_COMPONENT_BYTES, MAX_PATH_BYTES, PathError, check_relative, check_template,
};
use agentio_core::{AgentContext, AgentError, AgentInput, AgentOutput, ErrorCode};
use agentio_tools::{
    Approval, ApprovalDecision, ApprovalOutcome, ApprovalRequest, AuditLog, DriverConstraints,
    DriverKind, Requires, ToolContract, ToolError, ToolManifest, ToolRegistry, tool, tool_registry,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
        .block_on(future)
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Line {
    text: String,
}

/// Writes a line to the journal.
#[tool(id = "journal.write", mutates = ["workspace:/journal/*"], approval = "on-mutate")]
async fn journal_write(input: Line) -> Result<Line, ToolError> {
    Ok(input)
}

/// Reads nothing, writes nothing.
#[tool(id = "journal.peek", approval = "on-mutate")]
async fn journal_peek(input: Line) -> Result<Line, ToolError> {
    Ok(input)
}

/// `on-mutate` with mutations needs a yes: no approver denies, a no denies, a yes runs. Without
/// mutations it runs without asking.
#[test]
fn on_mutate_asks_exactly_when_the_tool_mutates() {
    let input = json!({ "text": "hi" });
    let registry = tool_registry![JournalWriteTool, JournalPeekTool].unwrap();
    let err = block_on(registry.call("journal.write", input.clone())).unwrap_err();
    assert_eq!(err.code(), &ErrorCode::ApprovalDenied);
    assert_eq!(
        err.message(),
        "the call to `journal.write` was not approved: no approver is configured"
    );

    let asked = Arc::new(AtomicU32::new(0));
    let counted = asked.clone();
    let say_no = move |request: &ApprovalRequest| {
        counted.fetch_add(1, Ordering::SeqCst);
        assert_eq!(request.mutates, ["workspace:/journal/*"]);
        ApprovalDecision::Deny {
            reason: "not today".into(),
        }
    };
    let audit = Arc::new(AuditLog::default());
    let registry = tool_registry![JournalWriteTool, JournalPeekTool]
        .unwrap()
        .with_approver(Arc::new(say_no))
        .with_audit_sink(audit.clone());
    let err = block_on(registry.call("journal.write", input.clone())).unwrap_err();
    assert_eq!(
        err.message(),
        "the call to `journal.write` was not approved: not today"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert_eq!(audit.records()[0].approval, ApprovalOutcome::Denied);
    // A tool without mutations is not gated, and the approver is not asked.
    assert!(block_on(registry.call("journal.peek", input.clone())).is_ok());
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert_eq!(audit.records()[1].approval, ApprovalOutcome::NotRequired);

    let say_yes = |_: &ApprovalRequest| ApprovalDecision::Approve;
    let registry = tool_registry![JournalWriteTool]
        .unwrap()
        .with_approver(Arc::new(say_yes));
    assert_eq!(
        block_on(registry.call("journal.write", input)).unwrap(),
        json!({ "text": "hi" })
    );
}

#[test]
fn policy_references_are_checked() {
    assert_eq!(
        Approval::parse("policy:finance/eu-1.2_b"),
        Some(Approval::Policy("finance/eu-1.2_b".into()))
    );
    for bad in [
        "policy:",
        "policy:a b",
        "policy:é",
        "policy:a;b",
        "Policy:a",
        "sometimes",
    ] {
        assert_eq!(Approval::parse(bad), None, "{bad}");
    }
    assert_eq!(Approval::Policy("p-1".into()).to_string(), "policy:p-1");
    assert_eq!(Approval::OnMutate.to_string(), "on-mutate");
    assert_eq!(Approval::Always.to_string(), "always");
    assert_eq!(Approval::Auto.to_string(), "auto");
    // A policy class always asks.
    let mut contract = ToolContract::new(
        "p.q",
        "1.0.0",
        "Q.",
        json!({ "type": "object" }),
        json!({ "type": "object" }),
    );
    contract.approval = Approval::Policy("p-1".into());
    assert!(contract.needs_approval());
    contract.approval = Approval::Auto;
    assert!(!contract.needs_approval());
}

#[test]
fn path_limits_hold_exactly_at_their_bounds() {
    let segment = "s".repeat(MAX_COMPONENT_BYTES);
    assert_eq!(check_relative(&segment), Ok(()));
    assert_eq!(
        check_relative(&format!("{segment}s")),
        Err(PathError::TooLong)
    );
    let mut path = String::new();
    while path.len() < MAX_PATH_BYTES {
        if !path.is_empty() {
            path.push('/');
        }
        path.push_str(&"p".repeat((MAX_PATH_BYTES - path.len()).min(100)));
    }
    assert_eq!(path.len(), MAX_PATH_BYTES);
    assert_eq!(check_relative(&path), Ok(()));
    assert_eq!(check_relative(&format!("{path}p")), Err(PathError::TooLong));
    // A leading backslash is absolute, as a leading slash is.
    assert_eq!(check_relative("\\etc\\passwd"), Err(PathError::Absolute));
    assert_eq!(check_relative("/etc/passwd"), Err(PathError::Absolute));
    assert_eq!(
        check_template("out/<>.md"),
        Err(PathError::UnknownToken("<>".into()))
    );
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentInput)]
#[serde(deny_unknown_fields)]
struct Many {
    xs: Vec<u8>,
}

#[test]
fn the_violation_cap_lists_32_and_counts_the_rest() {
    let exactly = json!({ "xs": vec!["bad"; 32] });
    let err = Many::validate_input(&exactly).unwrap_err();
    assert_eq!(err.violations().len(), 32);
    assert!(err.violations().iter().all(|v| v.keyword != "limit"));
    let one_more = json!({ "xs": vec!["bad"; 33] });
    let err = Many::validate_input(&one_more).unwrap_err();
    assert_eq!(err.violations().len(), 33);
    assert_eq!(err.violations()[32].pointer, "");
    assert_eq!(
        err.violations()[32].message,
        "1 more violation(s) not listed"
    );
}

#[test]
fn long_messages_are_cut_at_240_characters() {
    #[derive(Debug, Serialize, Deserialize, JsonSchema, AgentInput)]
    struct Pattern {
        #[schemars(regex(pattern = r"^[a-z]{1,3}$"))]
        word: String,
    }
    let err = Pattern::validate_input(&json!({ "word": "x".repeat(1000) })).unwrap_err();
    let message = &err.violations()[0].message;
    assert_eq!(message.chars().count(), 241, "{message}");
    assert!(message.ends_with('…'));
}

#[test]
fn strict_mode_closes_nullable_objects_and_array_items() {
    #[derive(Serialize, Deserialize, JsonSchema)]
    struct Inner {
        a: String,
    }
    #[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
    #[agent(strict)]
    struct Outer {
        maybe: Option<Inner>,
        list: Vec<Inner>,
    }
    let format = Outer::structured_output_format().unwrap();
    let schema = &format["json_schema"]["schema"];
    let inner = &schema["$defs"]["Inner"];
    assert_eq!(inner["additionalProperties"], false);
    assert_eq!(inner["required"], json!(["a"]));
    // A nullable object type is closed too.
    let nullable = agentio_core::BoundarySchema::from_value(
        "n",
        agentio_core::Direction::Output,
        json!({ "type": "object", "properties": { "o": { "type": ["object", "null"], "properties": { "b": { "type": "string" } } },
                "items": { "type": "array", "items": { "type": "object", "properties": { "c": { "type": "integer" } } } } } }),
    );
    let strict = nullable
        .profile(agentio_core::profiles::Profile::OpenAiStrict)
        .unwrap();
    assert_eq!(strict["properties"]["o"]["additionalProperties"], false);
    assert_eq!(strict["properties"]["o"]["required"], json!(["b"]));
    assert_eq!(
        strict["properties"]["items"]["items"]["additionalProperties"],
        false
    );
    assert_eq!(
        strict["properties"]["items"]["items"]["required"],
        json!(["c"])
    );
    let err = agentio_core::BoundarySchema::from_value(
        "x",
        agentio_core::Direction::Output,
        json!({ "type": "string" }),
    )
    .profile(agentio_core::profiles::Profile::OpenAiStrict)
    .unwrap_err()
    .to_vec();
    assert_eq!(
        err[0].to_string(),
        "(root): the root must be an object with named properties"
    );
}

#[test]
fn the_registry_offers_its_tools_to_a_core_by_id_and_identity() {
    let registry: Arc<ToolRegistry> = Arc::new(tool_registry![JournalPeekTool].unwrap());
    let ctx = AgentContext::new("r").with_tools(registry.clone());
    assert!(ctx.may_call("journal.peek"));
    assert!(ctx.may_call("journal.peek@1"));
    assert!(!ctx.may_call("journal.write"));
    let limited = AgentContext::new("r")
        .with_tools(registry)
        .with_allowed_tools(["other"]);
    assert!(!limited.may_call("journal.peek"));
}

#[test]
fn a_file_observer_keeps_the_workspace_and_the_approver() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = agentio_core::files::Workspace::open(dir.path()).unwrap();
    let say_no = |_: &ApprovalRequest| ApprovalDecision::Deny {
        reason: "still here".into(),
    };
    let registry = tool_registry![JournalWriteTool]
        .unwrap()
        .with_workspace(workspace)
        .with_approver(Arc::new(say_no))
        .with_file_observer(Arc::new(|_: &agentio_core::files::FileEvent| {}));
    let err = block_on(registry.call("journal.write", json!({ "text": "x" }))).unwrap_err();
    assert_eq!(
        err.message(),
        "the call to `journal.write` was not approved: still here"
    );
}

#[test]
fn contract_defaults_and_a_full_manifest_round_trip() {
    let mut contract = ToolContract::new(
        "net.fetch",
        "2.1.0",
        "Fetches.",
        json!({ "type": "object" }),
        json!({ "type": "object" }),
    );
    assert_eq!(contract.timeout_ms, 30_000);
    contract.requires = Requires {
        network: vec!["api.example.com".into()],
        secrets: vec!["api-key".into()],
        tools: vec!["kb.search".into()],
    };
    contract.driver_constraints = DriverConstraints {
        forbid: vec![DriverKind::Cli],
        require_kind: vec![DriverKind::Http, DriverKind::Mcp],
    };
    let text = ToolManifest::from_contract(contract.clone()).render();
    assert!(
        text.contains("api.example.com") && text.contains("require_kind"),
        "{text}"
    );
    let parsed = ToolManifest::parse(&text).unwrap();
    assert_eq!(parsed.contract, contract);
}

#[test]
fn displays_users_read() {
    let err = AgentError::new(ErrorCode::InputInvalid, "the input is wrong");
    assert_eq!(err.to_string(), "input_invalid: the input is wrong");
    let strict = agentio_core::StrictModeError {
        schema_pointer: "/properties/m".into(),
        reason: "a map has no fixed property names".into(),
    };
    assert_eq!(
        strict.to_string(),
        "strict mode cannot express the schema at /properties/m: a map has no fixed property names"
    );
    let root = agentio_core::StrictModeError {
        schema_pointer: String::new(),
        reason: "x".into(),
    };
    assert_eq!(
        root.to_string(),
        "strict mode cannot express the schema at (root): x"
    );
}

#[test]
fn workflow_type_checks_against_unions_enums_and_recursive_schemas() {
    use agentio_workflow::{TypeRef, Workflow};
    let workflow = Workflow::new("w").with_type(
        "Finding",
        vec![("text", TypeRef::String), ("score", TypeRef::Number)],
    );
    // A consumer field that is a union: fits when some branch fits.
    let union = json!({ "anyOf": [{ "type": "integer" }, { "type": "string" }] });
    assert_eq!(workflow.fits_schema(&TypeRef::String, &union, &union), None);
    assert!(
        workflow
            .fits_schema(&TypeRef::Boolean, &union, &union)
            .is_some()
    );
    let one_of = json!({ "oneOf": [{ "type": "boolean" }] });
    assert_eq!(
        workflow.fits_schema(&TypeRef::Boolean, &one_of, &one_of),
        None
    );
    assert!(
        workflow
            .fits_schema(&TypeRef::Number, &one_of, &one_of)
            .is_some()
    );
    // A producer whose schema fixes its values with `enum` or `const` and no `type`.
    let produced = json!({ "enum": ["a", "b"] });
    assert_eq!(
        workflow.schema_satisfies(&produced, &produced, &TypeRef::String),
        None
    );
    let constant = json!({ "const": 3 });
    assert_eq!(
        workflow.schema_satisfies(&constant, &constant, &TypeRef::Number),
        None
    );
    let untyped = json!({ "description": "anything" });
    assert!(
        workflow
            .schema_satisfies(&untyped, &untyped, &TypeRef::String)
            .is_some()
    );
    // A named type is satisfied by a producer with every field, required, of its type.
    let finding = json!({ "type": "object", "properties": { "text": { "type": "string" }, "score": { "type": "number" } }, "required": ["text", "score"] });
    let named = TypeRef::Named("Finding".into());
    assert_eq!(workflow.schema_satisfies(&finding, &finding, &named), None);
    let partial = json!({ "type": "object", "properties": { "text": { "type": "string" }, "score": { "type": "number" } }, "required": ["text"] });
    assert!(
        workflow
            .schema_satisfies(&partial, &partial, &named)
            .unwrap()
            .contains("`score`")
    );
    // A recursive schema terminates.
    let recursive = json!({ "$ref": "#/$defs/Node", "$defs": { "Node": { "type": "object", "properties": { "next": { "$ref": "#/$defs/Node" } } } } });
    let nested = TypeRef::Array(Some(Box::new(TypeRef::Array(Some(Box::new(
        TypeRef::Object,
    ))))));
    let _ = workflow.fits_schema(&nested, &recursive, &recursive);
    let _ = workflow.schema_satisfies(&recursive, &recursive, &named);
}

#[test]
fn executors_and_runs_can_be_debug_printed() {
    use agentio_workflow::{Executor, Phase, Workflow, WorkflowRun};
    let workflow = Workflow::new("debuggable").with_phase(Phase::new("a", "A").assign("agent"));
    let executor = Executor::new(workflow.clone()).bind_fn("agent", |_ctx| async { Ok(json!({})) });
    let shown = format!("{executor:?}");
    assert!(
        shown.contains("debuggable") && shown.contains("agent"),
        "{shown}"
    );
    let run = WorkflowRun::new(Arc::new(workflow), "r", json!({}), json!({})).unwrap();
    assert!(format!("{run:?}").contains("ready: [\"a\"]"), "{run:?}");
}

/// Fails with a plain `String`.
#[tool(id = "errors.string")]
async fn string_error(_input: Line) -> Result<Line, String> {
    Err("the index is corrupt".into())
}

/// Fails with a boxed error.
#[tool(id = "errors.boxed")]
async fn boxed_error(_input: Line) -> Result<Line, Box<dyn std::error::Error + Send + Sync>> {
    Err(std::io::Error::other("disk full").into())
}

/// The error types a body reaches for first become `internal`, their text kept for the operator
/// (what a model sees says only that the tool failed); and a registry can name a tool by its
/// function.
#[test]
fn common_error_types_become_internal_and_functions_name_their_tools() {
    let registry = tool_registry![string_error, boxed_error].unwrap();
    let err = block_on(registry.call("errors.string", json!({ "text": "x" }))).unwrap_err();
    assert_eq!(err.code(), &ErrorCode::Internal);
    assert_eq!(err.message(), "the tool failed");
    assert_eq!(err.operator_detail(), Some("the index is corrupt"));
    let err = block_on(registry.call("errors.boxed", json!({ "text": "x" }))).unwrap_err();
    assert_eq!(err.operator_detail(), Some("disk full"));
    assert_eq!(err.to_envelope()["error"]["message"], "the tool failed");
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
#[agent(strict)]
struct StrictQuery {
    query: String,
    limit: Option<u8>,
}

/// Searches strictly.
#[tool(id = "strict.search")]
async fn strict_search(input: StrictQuery) -> Result<StrictQuery, ToolError> {
    Ok(input)
}

/// `#[agent(strict)]` on an input means the input has a strict form (checked at compile time),
/// so a strict export of its tool cannot be refused for its shape.
#[test]
fn a_strict_input_exports_in_strict_mode() {
    let registry = tool_registry![strict_search].unwrap();
    let tools = registry
        .export(agentio_tools::Export::OpenAiChat { strict: true })
        .unwrap();
    assert_eq!(tools[0]["function"]["strict"], true);
    assert_eq!(
        tools[0]["function"]["parameters"]["required"],
        json!(["query", "limit"])
    );
}

/// Found by mutation testing (the unit tests held these; the integration suite now does too).
#[test]
fn mutation_scopes_hold_at_every_edge() {
    use agentio_core::files::mutation_covers;
    // The class must match even under a wildcard.
    assert!(!mutation_covers("workspace:*", "network:example.com"));
    assert!(!mutation_covers("network:*", "workspace:/a"));
    // A scope covers the paths below it, not a sibling that shares its prefix, and not itself
    // with a trailing slash.
    assert!(mutation_covers("workspace:/notes", "workspace:/notes/a.md"));
    assert!(!mutation_covers(
        "workspace:/notes",
        "workspace:/notes-old/a.md"
    ));
    assert!(!mutation_covers("workspace:/notes", "workspace:/notesa"));
    assert!(!mutation_covers("workspace:/notes", "workspace:/notes/"));
    assert!(!mutation_covers(
        "workspace:/journal/*",
        "workspace:/journal"
    ));
}
