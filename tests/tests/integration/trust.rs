//! AIP-14's trust rules at the registry and the runtime: the caller's `_workflowFsRoot` never
//! reaches a body, the approver receives the `policy:` reference, an `expensive` call is seen
//! by the approver and the audit.

use std::sync::{Arc, Mutex};

use agentio_core::{
    AgentContext, AgentCore, AgentError, AgentRuntime, BoxFuture, TurnInput, TurnOutput, agent_core,
};
use agentio_tools::{
    Approval, ApprovalDecision, ApprovalOutcome, ApprovalRequest, AuditLog, CostClass, ToolContext,
    ToolContract, ToolError, ToolPlugin, ToolRegistry,
};
use serde_json::{Value, json};

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a Tokio runtime")
        .block_on(future)
}

/// A JSON tool that answers with the input it was given.
struct Echo(ToolContract);

impl ToolPlugin for Echo {
    fn tool_contract(&self) -> ToolContract {
        self.0.clone()
    }
    fn execute<'a>(
        &'a self,
        input: Value,
        _: &'a ToolContext,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move { Ok(json!({ "seen": input })) })
    }
}

fn echo(id: &str) -> ToolContract {
    ToolContract::new(
        id,
        "1.0.0",
        "Echoes.",
        json!({ "type": "object" }),
        json!({ "type": "object" }),
    )
}

#[test]
fn a_callers_fs_root_is_refused_by_a_tool_without_files() {
    let mut registry = ToolRegistry::new();
    registry
        .register_plugin(Arc::new(Echo(echo("t.echo"))))
        .unwrap();
    let err = block_on(registry.call("t.echo", json!({ "_workflowFsRoot": "/etc", "a": 1 })))
        .unwrap_err();
    assert_eq!(err.code().as_str(), "input_invalid");
    assert_eq!(err.violations()[0].pointer, "/_workflowFsRoot");
    // Without it, the same call runs.
    let out = block_on(registry.call("t.echo", json!({ "a": 1 }))).unwrap();
    assert_eq!(out, json!({ "seen": { "a": 1 } }));
}

struct Mirror;

#[agent_core]
impl AgentCore for Mirror {
    fn core_type(&self) -> &str {
        "mirror"
    }
    async fn run_turn(
        &mut self,
        input: TurnInput,
        _: &mut AgentContext,
    ) -> Result<TurnOutput, AgentError> {
        Ok(TurnOutput::new(input.message))
    }
}

#[test]
fn a_callers_fs_root_is_refused_by_a_core_without_files() {
    let mut runtime = AgentRuntime::new(Mirror);
    let err =
        pollster::block_on(runtime.run_turn(json!({ "message": "hi", "_workflowFsRoot": "/etc" })))
            .unwrap_err();
    assert_eq!(err.code().as_str(), "input_invalid");
    assert_eq!(err.violations()[0].pointer, "/_workflowFsRoot");
    let out = pollster::block_on(runtime.run_turn(json!({ "message": "hi" }))).unwrap();
    assert_eq!(out["response"], "hi");
}

#[test]
fn a_callers_fs_root_is_refused_by_a_file_lifecycle_without_files() {
    use agentio_core::files::{
        FileHost, IoDefinition, RunVars, Workspace, define_io_handle, run_with_files,
    };
    let dir = tempfile::tempdir().unwrap();
    let workspace = Workspace::open(dir.path()).unwrap();
    let io = define_io_handle(IoDefinition::default()).unwrap();
    let ran = Mutex::new(false);
    let (result, _) = pollster::block_on(run_with_files(
        &io,
        FileHost::new(&workspace),
        &RunVars::new("r1", "demo"),
        json!({ "_workflowFsRoot": "/etc" }),
        |_| async {
            *ran.lock().unwrap() = true;
            Ok(json!({}))
        },
    ));
    assert_eq!(
        result.unwrap_err().violations()[0].pointer,
        "/_workflowFsRoot"
    );
    assert!(!*ran.lock().unwrap(), "the body never ran");
}

#[test]
fn the_approver_receives_the_policy_reference_and_the_cost() {
    let asked: Arc<Mutex<Vec<ApprovalRequest>>> = Arc::default();
    let seen = Arc::clone(&asked);
    let audit = Arc::new(AuditLog::default());
    let mut registry = ToolRegistry::new()
        .with_audit_sink(audit.clone())
        .with_approver(Arc::new(move |request: &ApprovalRequest| {
            seen.lock().unwrap().push(request.clone());
            if request.policy() == Some("finance-review") {
                ApprovalDecision::Approve
            } else {
                ApprovalDecision::Deny {
                    reason: "unknown policy".into(),
                }
            }
        }));
    let mut pay = echo("t.pay");
    pay.approval = Approval::Policy("finance-review".into());
    registry.register_plugin(Arc::new(Echo(pay))).unwrap();
    let mut other = echo("t.other");
    other.approval = Approval::Policy("other".into());
    registry.register_plugin(Arc::new(Echo(other))).unwrap();

    block_on(registry.call("t.pay", json!({}))).unwrap();
    let err = block_on(registry.call("t.other", json!({}))).unwrap_err();
    assert_eq!(err.code().as_str(), "approval_denied");
    let asked = asked.lock().unwrap();
    assert_eq!(asked[0].approval, Approval::Policy("finance-review".into()));
    assert_eq!(
        serde_json::to_value(&asked[0]).unwrap()["approval"],
        "policy:finance-review"
    );
    assert_eq!(asked[1].policy(), Some("other"));
}

#[test]
fn an_expensive_call_is_asked_about_and_audited_as_expensive() {
    let asked: Arc<Mutex<Vec<CostClass>>> = Arc::default();
    let seen = Arc::clone(&asked);
    let audit = Arc::new(AuditLog::default());
    let mut registry = ToolRegistry::new()
        .with_audit_sink(audit.clone())
        .with_approver(Arc::new(move |request: &ApprovalRequest| {
            seen.lock().unwrap().push(request.cost_class);
            ApprovalDecision::Approve
        }));
    let mut render = echo("t.render");
    render.cost_class = CostClass::Expensive;
    assert_eq!(
        render.approval,
        Approval::Auto,
        "no approval class asks for it"
    );
    registry.register_plugin(Arc::new(Echo(render))).unwrap();
    let mut cheap = echo("t.cheap");
    cheap.cost_class = CostClass::Metered;
    registry.register_plugin(Arc::new(Echo(cheap))).unwrap();

    block_on(registry.call("t.render", json!({}))).unwrap();
    block_on(registry.call("t.cheap", json!({}))).unwrap();
    assert_eq!(
        *asked.lock().unwrap(),
        [CostClass::Expensive],
        "only the expensive call asked"
    );
    let records = audit.records();
    assert_eq!(records[0].tool_cost_class, CostClass::Expensive);
    assert_eq!(records[0].approval, ApprovalOutcome::Approved);
    assert_eq!(records[1].tool_cost_class, CostClass::Metered);
    assert_eq!(records[1].approval, ApprovalOutcome::NotRequired);
    assert_eq!(
        serde_json::to_value(&records[0]).unwrap()["tool_cost_class"],
        "expensive"
    );

    // Without an approver, an expensive call does not run.
    let mut bare = ToolRegistry::new();
    let mut render = echo("t.render");
    render.cost_class = CostClass::Expensive;
    bare.register_plugin(Arc::new(Echo(render))).unwrap();
    let err = block_on(bare.call("t.render", json!({}))).unwrap_err();
    assert_eq!(err.code().as_str(), "approval_denied");
}

#[test]
fn a_tool_implementing_an_action_only_narrows_it() {
    use agentio_tools::Action;
    let mut registry = ToolRegistry::new();
    let mut commit = Action::new("storage:commit");
    commit.mutates = vec!["workspace:/data".into()];
    commit.risk_level = 2;
    registry.register_action(commit);

    // Registering an action again replaces it, and leaves the others.
    let mut other = Action::new("storage:read");
    other.risk_level = 1;
    registry.register_action(other.clone());
    let mut stricter = Action::new("storage:commit");
    stricter.mutates = vec!["workspace:/data".into()];
    stricter.risk_level = 3;
    registry.register_action(stricter);
    let mut reader = echo("t.reader");
    reader.implements = Some(json!("storage:read"));
    registry.register_plugin(Arc::new(Echo(reader))).unwrap();
    assert_eq!(registry.contract("t.reader").unwrap().risk_level, 1);

    // Unknown action: refused, named.
    let mut orphan = echo("t.orphan");
    orphan.implements = Some(json!("storage:delete"));
    let err = registry
        .register_plugin(Arc::new(Echo(orphan)))
        .unwrap_err();
    assert_eq!(err.problems[0].pointer, "/implements");

    // A widening: refused with the field.
    let mut lax = echo("t.lax");
    lax.implements = Some(json!("storage:commit"));
    lax.mutates = vec!["workspace:/elsewhere".into()];
    lax.approval = Approval::OnMutate;
    let err = registry.register_plugin(Arc::new(Echo(lax))).unwrap_err();
    assert_eq!(err.problems[0].pointer, "/mutates");

    // Inheriting: the registered contract carries the action's floor, and is gated by it.
    let mut heir = echo("t.heir");
    heir.implements = Some(json!("storage:commit"));
    registry.register_plugin(Arc::new(Echo(heir))).unwrap();
    let registered = registry.contract("t.heir").unwrap();
    assert_eq!(registered.mutates, vec!["workspace:/data".to_owned()]);
    assert_eq!(registered.risk_level, 3, "the action registered last");
    assert!(registered.needs_approval());
    let err = block_on(registry.call("t.heir", json!({}))).unwrap_err();
    assert_eq!(err.code().as_str(), "approval_denied");
}

/// A tool whose body asks its context for what the input says: `{ "tool": id }`,
/// `{ "secret": slug }` or `{ "url": url }`.
struct Asks(ToolContract);

impl ToolPlugin for Asks {
    fn tool_contract(&self) -> ToolContract {
        self.0.clone()
    }
    fn execute<'a>(
        &'a self,
        input: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            if let Some(id) = input["tool"].as_str() {
                return ctx.call_tool(id, json!({})).await;
            }
            if let Some(slug) = input["secret"].as_str() {
                return Ok(json!({ "secret": ctx.secret(slug)? }));
            }
            let url = input["url"].as_str().unwrap_or_default();
            let request = agentio_tools::HttpRequest::new("GET", url)
                .map_err(|reason| AgentError::new(agentio_core::ErrorCode::InputInvalid, reason))?;
            let response = ctx.http(request).await?;
            Ok(json!({ "status": response.status }))
        })
    }
}

/// An HTTP client that answers 200 and remembers what it was asked.
#[derive(Default)]
struct Recorder(Mutex<Vec<String>>);

impl agentio_tools::HttpClient for Recorder {
    fn send(
        &self,
        request: agentio_tools::HttpRequest,
    ) -> BoxFuture<'_, Result<agentio_tools::HttpResponse, ToolError>> {
        self.0.lock().unwrap().push(request.url());
        Box::pin(async {
            Ok(agentio_tools::HttpResponse {
                status: 200,
                headers: vec![],
                body: vec![],
            })
        })
    }
}

fn asking_registry(audit: Arc<AuditLog>, http: Arc<Recorder>) -> ToolRegistry {
    let mut inner = ToolRegistry::new();
    inner
        .register_plugin(Arc::new(Echo(echo("kb.search"))))
        .unwrap();
    inner
        .register_plugin(Arc::new(Echo(echo("kb.delete"))))
        .unwrap();
    let secrets = |slug: &str| Some(format!("value of {slug}"));
    let lent = agentio_tools::Capabilities::new()
        .with_tools(Arc::new(inner))
        .with_secrets(Arc::new(secrets))
        .with_http(http);
    let mut registry = ToolRegistry::new()
        .with_audit_sink(audit)
        .with_capabilities(lent);
    let mut contract = echo("t.asks");
    contract.requires.tools = vec!["kb.search".into()];
    contract.requires.secrets = vec!["db".into()];
    contract.requires.network = vec!["api.example.com".into(), "*.cdn.example.com:443".into()];
    registry.register_plugin(Arc::new(Asks(contract))).unwrap();
    registry
}

#[test]
fn a_body_reaches_only_the_tools_its_contract_requires() {
    let audit = Arc::new(AuditLog::default());
    let registry = asking_registry(audit.clone(), Arc::default());
    let out = block_on(registry.call("t.asks", json!({ "tool": "kb.search" }))).unwrap();
    assert_eq!(out, json!({ "seen": {} }));
    let err = block_on(registry.call("t.asks", json!({ "tool": "kb.delete" }))).unwrap_err();
    assert_eq!(err.code().as_str(), "unauthorised");
    assert!(err.message().contains("`kb.delete`"), "{}", err.message());
    let records = audit.records();
    assert!(records[0].capability_refusals.is_empty());
    assert_eq!(records[1].capability_refusals.len(), 1);
    assert!(records[1].capability_refusals[0].contains("requires.tools"));
}

#[test]
fn a_body_reads_only_the_secrets_its_contract_requires() {
    let audit = Arc::new(AuditLog::default());
    let registry = asking_registry(audit.clone(), Arc::default());
    let out = block_on(registry.call("t.asks", json!({ "secret": "db" }))).unwrap();
    assert_eq!(out["secret"], "value of db");
    let err = block_on(registry.call("t.asks", json!({ "secret": "root" }))).unwrap_err();
    assert_eq!(err.code().as_str(), "unauthorised");
    assert!(
        !err.message().contains("value of"),
        "no secret in the refusal"
    );
    assert!(audit.records()[1].capability_refusals[0].contains("requires.secrets"));
}

#[test]
fn a_body_reaches_only_the_hosts_its_contract_requires() {
    let audit = Arc::new(AuditLog::default());
    let http = Arc::new(Recorder::default());
    let registry = asking_registry(audit.clone(), http.clone());
    for allowed in [
        "https://api.example.com/v1",
        "http://API.example.com:8080/",
        "https://img.cdn.example.com/a.png",
    ] {
        let out = block_on(registry.call("t.asks", json!({ "url": allowed }))).unwrap();
        assert_eq!(out["status"], 200, "{allowed}");
    }
    for refused in [
        "https://evil.example/",
        "https://api.example.com.evil.example/",
        "http://img.cdn.example.com:80/",
        "https://cdn.example.com/",
    ] {
        let err = block_on(registry.call("t.asks", json!({ "url": refused }))).unwrap_err();
        assert_eq!(err.code().as_str(), "unauthorised", "{refused}");
    }
    // What could be read as another host never gets that far.
    let err = block_on(registry.call(
        "t.asks",
        json!({ "url": "https://api.example.com@evil.example/" }),
    ))
    .unwrap_err();
    assert_eq!(err.code().as_str(), "input_invalid");
    assert_eq!(
        *http.0.lock().unwrap(),
        [
            "https://api.example.com:443/v1",
            "http://api.example.com:8080/",
            "https://img.cdn.example.com:443/a.png"
        ],
        "only the allowed requests reached the client"
    );
    let refusals: usize = audit
        .records()
        .iter()
        .map(|r| r.capability_refusals.len())
        .sum();
    assert_eq!(refusals, 4);
}

#[test]
fn a_host_that_lends_nothing_refuses_every_capability() {
    let mut registry = ToolRegistry::new();
    let mut contract = echo("t.asks");
    contract.requires.secrets = vec!["db".into()];
    registry.register_plugin(Arc::new(Asks(contract))).unwrap();
    let err = block_on(registry.call("t.asks", json!({ "secret": "db" }))).unwrap_err();
    assert_eq!(err.code().as_str(), "unauthorised");
}

#[test]
fn capabilities_reach_a_body_with_or_without_an_audit_and_refusals_are_audited_either_way() {
    // Lent, not audited: the body reads its declared secret.
    let secrets = |slug: &str| Some(format!("value of {slug}"));
    let mut lent = ToolRegistry::new()
        .with_capabilities(agentio_tools::Capabilities::new().with_secrets(Arc::new(secrets)));
    let mut contract = echo("t.asks");
    contract.requires.secrets = vec!["db".into()];
    lent.register_plugin(Arc::new(Asks(contract.clone())))
        .unwrap();
    let out = block_on(lent.call("t.asks", json!({ "secret": "db" }))).unwrap();
    assert_eq!(out["secret"], "value of db");

    // Audited, nothing lent: refused, and the audit says what was asked for.
    let audit = Arc::new(AuditLog::default());
    let mut audited = ToolRegistry::new().with_audit_sink(audit.clone());
    audited.register_plugin(Arc::new(Asks(contract))).unwrap();
    let err = block_on(audited.call("t.asks", json!({ "secret": "root" }))).unwrap_err();
    assert_eq!(err.code().as_str(), "unauthorised");
    assert_eq!(audit.records()[0].capability_refusals.len(), 1);
}

#[test]
fn the_callers_identity_reaches_the_body() {
    let mut registry = ToolRegistry::new();
    agentio_tests::mcp_fixture::add_whoami(&mut registry);
    let options = agentio_tools::CallOptions::default()
        .with_caller(agentio_tools::Caller::new("carol").with_scopes(["x"]));
    let me = block_on(registry.call_with("auth.whoami", json!({}), options)).unwrap();
    assert_eq!(me, json!({ "subject": "carol", "scopes": ["x"] }));
    let nobody = block_on(registry.call("auth.whoami", json!({}))).unwrap();
    assert_eq!(nobody, json!({ "subject": null }));
}
