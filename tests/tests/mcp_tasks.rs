//! Long calls as MCP tasks (the Tasks extension, SEP-2663), through rmcp's own client: which
//! calls become tasks, how a task settles (result, tool error, broken body, cancel), questions
//! answered with `tasks/update`, approval before the task, the bound, and tasks that belong to
//! the caller who started them.

#![allow(deprecated)] // rmcp marks logging deprecated (SEP-2577); MCP still has it.

use std::sync::Mutex;
use std::time::Duration;

use agentio_mcp::McpServer;
use agentio_mcp::rmcp::ServerHandler;
use agentio_mcp::tasks::TaskSupport;
use agentio_tools::voice::{Elicited, Questions};
use agentio_tools::{Progress, ToolContext, ToolError, ToolRegistry, tool};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    ElicitationCapability, GetTaskParams, GetTaskResult, Implementation, TaskPayload, TaskStatus,
    UpdateTaskParams,
};
use rmcp::service::RunningService;
use rmcp::{ClientHandler, RoleClient, ServiceError};
use serde_json::{Value, json};

use crate::mcp_common::{connect_2026, connect_initialize, runtime};

/// How long to wait.
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput)]
pub(crate) struct Wait {
    /// Milliseconds.
    pub(crate) ms: u64,
}

/// How long it waited.
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentOutput)]
pub(crate) struct Waited {
    /// Milliseconds.
    pub(crate) waited: u64,
}

/// The waits of the bodies of `job.wait` that ran to their end (each test waits its own times).
static FINISHED: Mutex<Vec<u64>> = Mutex::new(Vec::new());

fn finished(ms: u64) -> bool {
    FINISHED.lock().unwrap().contains(&ms)
}

/// Waits, reporting its progress first.
#[tool(id = "job.wait", timeout_ms = 60000)]
async fn wait(input: Wait, ctx: &ToolContext) -> Result<Waited, ToolError> {
    ctx.report_progress(Progress::new(1.0).with_total(4.0).with_message("waiting"));
    tokio::time::sleep(Duration::from_millis(input.ms)).await;
    FINISHED.lock().unwrap().push(input.ms);
    Ok(Waited { waited: input.ms })
}

/// Nothing.
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput)]
pub(crate) struct Nothing {}

/// A yes or a no.
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentOutput)]
pub(crate) struct Said {
    /// What.
    pub(crate) said: String,
}

/// Fails as tools fail.
#[tool(id = "job.fail")]
async fn fail(_: Nothing) -> Result<Said, ToolError> {
    Err(ToolError::new(
        agentio_core::ErrorCode::UpstreamError,
        "the upstream said no",
    ))
}

/// Breaks.
#[tool(id = "job.break")]
async fn broken(_: Nothing) -> Result<Said, ToolError> {
    panic!("the body broke")
}

/// A name.
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput)]
pub(crate) struct Named {
    /// The name.
    pub(crate) name: String,
}

/// Says what its client can do and whether its log line went out, then asks two names at
/// once.
#[tool(id = "job.ask")]
async fn ask(_: Nothing, ctx: &ToolContext) -> Result<Said, ToolError> {
    let can = [
        ctx.client_can("elicitation"),
        ctx.client_can("sampling"),
        ctx.client_can("tasks"),
    ];
    let logged = ctx.log(agentio_tools::voice::LogLevel::Info, "asking");
    let answers = ctx
        .ask(
            &Questions::new()
                .elicit::<Named>("first", "Your name?")
                .elicit::<Named>("second", "Your friend's?"),
        )
        .await?;
    let name = |key| match answers.elicited::<Named>(key) {
        Ok(Elicited::Accepted(Named { name })) => name,
        _ => "nobody".into(),
    };
    Ok(Said {
        said: format!(
            "{} and {} (can {can:?}, logged {logged})",
            name("first"),
            name("second")
        ),
    })
}

/// Needs a person's yes.
#[tool(id = "job.gate", approval = "always", mutates = ["external:ledger"], risk_level = 2)]
async fn gate(_: Nothing) -> Result<Said, ToolError> {
    Ok(Said {
        said: "done".into(),
    })
}

/// Not a task.
#[tool(id = "job.plain")]
async fn plain(_: Nothing) -> Result<Said, ToolError> {
    Ok(Said {
        said: "plain".into(),
    })
}

fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry.register(WaitTool).unwrap();
    registry.register(FailTool).unwrap();
    registry.register(BrokenTool).unwrap();
    registry.register(AskTool).unwrap();
    registry.register(GateTool).unwrap();
    registry.register(PlainTool).unwrap();
    registry
}

fn server() -> McpServer {
    let mut server = McpServer::new(registry()).unwrap();
    for (id, support) in [
        ("job.wait", TaskSupport::Optional),
        ("job.fail", TaskSupport::Required),
        ("job.break", TaskSupport::Optional),
        ("job.ask", TaskSupport::Optional),
        ("job.gate", TaskSupport::Optional),
    ] {
        server = server.with_task_support(id, support).unwrap();
    }
    server
}

/// A client that declares the Tasks extension (when `tasks`) and elicitation.
#[derive(Clone)]
struct Client {
    tasks: bool,
    elicitation: bool,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = if self.tasks {
            ClientCapabilities::builder().enable_tasks().build()
        } else {
            ClientCapabilities::default()
        };
        if self.elicitation {
            capabilities.elicitation = Some(ElicitationCapability::default());
        }
        ClientConfig::new(capabilities, Implementation::new("tasks-test", "0.0.0"))
    }
}

const TASKS: Client = Client {
    tasks: true,
    elicitation: true,
};

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)
}

/// The task a call started (panics on any other answer).
async fn started(
    client: &RunningService<RoleClient, Client>,
    request: CallToolRequestParams,
) -> String {
    match client.call_tool_once(request).await.unwrap() {
        CallToolResponse::Task(created) => {
            let wire = serde_json::to_value(&created).unwrap();
            assert_eq!(wire["resultType"], "task", "{wire}");
            assert_eq!(wire["pollIntervalMs"], 1_000, "{wire}");
            created.task.task_id
        }
        other => panic!("not a task: {other:?}"),
    }
}

async fn get(client: &RunningService<RoleClient, Client>, id: &str) -> GetTaskResult {
    client.get_task(GetTaskParams::new(id)).await.unwrap()
}

/// The task once it has reached `status` or ended (five seconds at most).
async fn settled(
    client: &RunningService<RoleClient, Client>,
    id: &str,
    status: TaskStatus,
) -> GetTaskResult {
    for _ in 0..500 {
        let task = get(client, id).await;
        if task.task.status() == status || task.task.status().is_terminal() {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("task {id} did not reach {status:?}")
}

/// The task once it asks `count` questions (five seconds at most): the questions of one
/// `ask` are registered with rmcp one at a time, and a poll may land between two.
async fn asking(
    client: &RunningService<RoleClient, Client>,
    id: &str,
    count: usize,
) -> GetTaskResult {
    for _ in 0..500 {
        let task = get(client, id).await;
        if let TaskPayload::InputRequired { input_requests } = &task.task.payload
            && input_requests.len() >= count
        {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("task {id} did not ask {count} questions")
}

fn result_of(task: &GetTaskResult) -> Value {
    match &task.task.payload {
        TaskPayload::Completed { result } => Value::Object(result.clone()),
        other => panic!("not completed: {other:?}"),
    }
}

/// The MCP error a request was answered with (panics on any other failure).
fn mcp_error(err: ServiceError) -> rmcp::ErrorData {
    match err {
        ServiceError::McpError(err) => err,
        other => panic!("{other}"),
    }
}

/// Answers to a task's questions, by key.
fn responses<const N: usize>(
    answers: [(&str, Value); N],
) -> std::collections::BTreeMap<String, Value> {
    answers
        .into_iter()
        .map(|(key, answer)| (key.to_owned(), answer))
        .collect()
}

/// The AIP-14 envelope of an `isError` result.
fn envelope(result: &Value) -> Value {
    assert_eq!(result["isError"], true, "{result}");
    serde_json::from_str::<Value>(result["content"][0]["text"].as_str().unwrap()).unwrap()["error"]
        .clone()
}

#[test]
fn a_task_runs_the_call_under_its_contract_and_inlines_its_result() {
    runtime().block_on(async {
        let client = connect_2026(TASKS, server()).await;
        let CallToolResponse::Task(created) = client
            .call_tool_once(call("job.wait", json!({ "ms": 300 })))
            .await
            .unwrap()
        else {
            panic!("no task")
        };
        // Kept five minutes by default.
        assert_eq!(created.task.ttl_ms, Some(300_000));
        let id = created.task.task_id;
        // Found at once, working, its progress as its status message.
        let working = settled(&client, &id, TaskStatus::Working).await;
        assert_eq!(working.task.status(), TaskStatus::Working);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let working = get(&client, &id).await;
        assert_eq!(
            working.task.task.status_message.as_deref(),
            Some("1/4: waiting")
        );
        let done = settled(&client, &id, TaskStatus::Completed).await;
        let result = result_of(&done);
        assert_eq!(
            result["structuredContent"],
            json!({ "waited": 300 }),
            "{result}"
        );
        assert_eq!(result["content"][0]["text"], r#"{"waited":300}"#);
        assert!(finished(300));
        let wire = serde_json::to_value(&done).unwrap();
        assert_eq!(wire["resultType"], "complete", "{wire}");
        assert!(wire.get("requestState").is_none(), "{wire}");

        // A bad input is refused at once, as a plain call: no task.
        let CallToolResponse::Complete(refused) = client
            .call_tool_once(call("job.wait", json!({ "ms": "soon" })))
            .await
            .unwrap()
        else {
            panic!("a bad input started a task")
        };
        let refused = serde_json::to_value(&refused).unwrap();
        assert_eq!(envelope(&refused)["code"], "input_invalid", "{refused}");

        // A tool that does not run as a task answers as ever.
        let CallToolResponse::Complete(plain) = client
            .call_tool_once(call("job.plain", json!({})))
            .await
            .unwrap()
        else {
            panic!("job.plain started a task")
        };
        assert_eq!(plain.structured_content, Some(json!({ "said": "plain" })));

        // An id no task has: -32602.
        let unknown = client
            .get_task(GetTaskParams::new("no-such-task"))
            .await
            .unwrap_err();
        let unknown = mcp_error(unknown);
        assert_eq!(unknown.code.0, -32602, "{unknown:?}");
        client.cancel().await.unwrap();
    });
}

#[test]
fn a_tool_error_completes_with_is_error_and_a_broken_body_fails_the_task() {
    runtime().block_on(async {
        let client = connect_2026(TASKS, server()).await;
        let id = started(&client, call("job.fail", json!({}))).await;
        let done = settled(&client, &id, TaskStatus::Completed).await;
        assert_eq!(done.task.status(), TaskStatus::Completed);
        let error = envelope(&result_of(&done));
        assert_eq!(error["code"], "upstream_error", "{error}");
        assert_eq!(error["message"], "the upstream said no");

        let id = started(&client, call("job.break", json!({}))).await;
        let failed = settled(&client, &id, TaskStatus::Failed).await;
        let TaskPayload::Failed { error } = &failed.task.payload else {
            panic!("{failed:?}")
        };
        assert_eq!(error["code"], -32603, "{error:?}");
        assert_eq!(error["data"]["error"]["code"], "internal", "{error:?}");
        // The panic's message is the operator's, not the client's.
        assert!(
            !Value::Object(error.clone())
                .to_string()
                .contains("the body broke"),
            "{error:?}"
        );
        client.cancel().await.unwrap();
    });
}

#[test]
fn cancel_ends_the_body_and_the_task_says_cancelled() {
    runtime().block_on(async {
        let client = connect_2026(TASKS, server()).await;
        let id = started(&client, call("job.wait", json!({ "ms": 1500 }))).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        client
            .cancel_task(CancelTaskParams::new(&id))
            .await
            .unwrap();
        let cancelled = settled(&client, &id, TaskStatus::Cancelled).await;
        assert_eq!(cancelled.task.status(), TaskStatus::Cancelled);
        // The body was dropped, not left to run to its end.
        tokio::time::sleep(Duration::from_millis(1700)).await;
        assert!(!finished(1500));
        // Cancelling an ended task is acknowledged, and changes nothing.
        client
            .cancel_task(CancelTaskParams::new(&id))
            .await
            .unwrap();
        assert_eq!(get(&client, &id).await.task.status(), TaskStatus::Cancelled);
        client.cancel().await.unwrap();
    });
}

#[test]
fn questions_wait_in_the_task_until_tasks_update_answers_them() {
    runtime().block_on(async {
        let client = connect_2026(TASKS, server()).await;
        let id = started(&client, call("job.ask", json!({}))).await;
        let shown = asking(&client, &id, 2).await;
        let TaskPayload::InputRequired { input_requests } = &shown.task.payload else {
            panic!("{shown:?}")
        };
        let keys: Vec<&String> = input_requests.keys().collect();
        assert_eq!(keys, ["first", "second"]);
        let wire = serde_json::to_value(&input_requests["first"]).unwrap();
        assert_eq!(wire["method"], "elicitation/create", "{wire}");
        assert_eq!(wire["params"]["message"], "Your name?", "{wire}");

        // One answer: the other question is still open.
        let answer = |name: &str| json!({ "action": "accept", "content": { "name": name } });
        let first = responses([("first", answer("Ada"))]);
        client
            .update_task(UpdateTaskParams::new(&id, first))
            .await
            .unwrap();
        let still = get(&client, &id).await;
        let TaskPayload::InputRequired { input_requests } = &still.task.payload else {
            panic!("{still:?}")
        };
        assert_eq!(input_requests.keys().collect::<Vec<_>>(), ["second"]);

        let second = responses([("second", answer("Grace"))]);
        client
            .update_task(UpdateTaskParams::new(&id, second))
            .await
            .unwrap();
        let done = settled(&client, &id, TaskStatus::Completed).await;
        assert_eq!(
            result_of(&done)["structuredContent"]["said"],
            "Ada and Grace (can [true, false, false], logged false)"
        );

        // A request that names a log level: the body's line goes out (as the call's would).
        let mut logging = call("job.ask", json!({}));
        let mut meta = rmcp::model::RequestMetaObject::default();
        meta.set_log_level(rmcp::model::LoggingLevel::Info);
        logging.meta = Some(meta);
        let id = started(&client, logging).await;
        asking(&client, &id, 2).await;
        let both = responses([("first", answer("Ada")), ("second", answer("Grace"))]);
        client
            .update_task(UpdateTaskParams::new(&id, both))
            .await
            .unwrap();
        let done = settled(&client, &id, TaskStatus::Completed).await;
        let said = result_of(&done)["structuredContent"]["said"].clone();
        assert_eq!(
            said,
            "Ada and Grace (can [true, false, false], logged true)"
        );

        // An answer that is no answer fails the question: it cannot be asked again.
        let id = started(&client, call("job.ask", json!({}))).await;
        asking(&client, &id, 2).await;
        let junk = responses([
            ("first", json!({ "name": "no action" })),
            ("second", answer("Grace")),
        ]);
        client
            .update_task(UpdateTaskParams::new(&id, junk))
            .await
            .unwrap();
        let done = settled(&client, &id, TaskStatus::Completed).await;
        let error = envelope(&result_of(&done));
        assert_eq!(error["code"], "upstream_error", "{error}");
        assert!(
            error["message"].as_str().unwrap().contains("`first`"),
            "{error}"
        );
        client.cancel().await.unwrap();

        // A client that cannot answer: the task fails with MCP's missing-capability error.
        let client = connect_2026(
            Client {
                tasks: true,
                elicitation: false,
            },
            server(),
        )
        .await;
        let id = started(&client, call("job.ask", json!({}))).await;
        let failed = settled(&client, &id, TaskStatus::Failed).await;
        let TaskPayload::Failed { error } = &failed.task.payload else {
            panic!("{failed:?}")
        };
        assert_eq!(error["code"], -32021, "{error:?}");
        assert_eq!(
            error["data"],
            json!({ "requiredCapabilities": { "elicitation": {} } })
        );
        client.cancel().await.unwrap();
    });
}

#[test]
fn a_client_without_the_extension_gets_a_plain_call_or_the_refusal() {
    runtime().block_on(async {
        let client = connect_2026(
            Client {
                tasks: false,
                elicitation: true,
            },
            server(),
        )
        .await;
        let CallToolResponse::Complete(result) = client
            .call_tool_once(call("job.wait", json!({ "ms": 1 })))
            .await
            .unwrap()
        else {
            panic!("a task for a client that did not declare the extension")
        };
        assert_eq!(result.structured_content, Some(json!({ "waited": 1 })));
        let refused = client
            .call_tool_once(call("job.fail", json!({})))
            .await
            .unwrap_err();
        let refused = mcp_error(refused);
        assert_eq!(refused.code.0, -32021, "{refused:?}");
        assert!(
            refused.message.contains("io.modelcontextprotocol/tasks"),
            "{refused:?}"
        );
        assert_eq!(
            refused.data.unwrap()["requiredCapabilities"]["extensions"],
            json!({ "io.modelcontextprotocol/tasks": {} })
        );
        // Nor may it poll: the methods need the extension too.
        let gated = client.get_task(GetTaskParams::new("x")).await.unwrap_err();
        let gated = mcp_error(gated);
        assert_eq!(gated.code.0, -32021, "{gated:?}");
        client.cancel().await.unwrap();
    });
}

#[test]
fn approval_is_asked_before_the_task_is_made() {
    runtime().block_on(async {
        let client = connect_2026(TASKS, server()).await;
        // Round 1: the approval question, no task.
        let CallToolResponse::InputRequired(question) = client
            .call_tool_once(call("job.gate", json!({})))
            .await
            .unwrap()
        else {
            panic!("no approval question")
        };
        let wire = serde_json::to_value(&question).unwrap();
        assert!(wire.get("taskId").is_none(), "{wire}");
        let key = agentio_mcp::APPROVAL_INPUT_KEY;
        assert!(wire["inputRequests"][key].is_object(), "{wire}");
        // Round 2, approved: the task.
        let yes = json!({ "action": "accept", "content": { "approve": true } });
        let mut approved = call("job.gate", json!({}));
        approved.input_responses = Some(responses([(key, yes)]));
        let id = started(&client, approved).await;
        let done = settled(&client, &id, TaskStatus::Completed).await;
        assert_eq!(result_of(&done)["structuredContent"]["said"], "done");
        // Declined: the task says so.
        let mut declined = call("job.gate", json!({}));
        declined.input_responses = Some(responses([(key, json!({ "action": "decline" }))]));
        let id = started(&client, declined).await;
        let done = settled(&client, &id, TaskStatus::Completed).await;
        assert_eq!(envelope(&result_of(&done))["code"], "approval_denied");
        client.cancel().await.unwrap();
    });
}

#[test]
fn past_the_bound_a_call_is_refused_until_a_held_task_expires() {
    runtime().block_on(async {
        let ttl = Duration::from_millis(300);
        let server = server().with_max_tasks(1).with_task_ttl(ttl);
        let client = connect_2026(TASKS, server).await;
        let first = started(&client, call("job.wait", json!({ "ms": 100 }))).await;
        let refused_now = || async {
            let CallToolResponse::Complete(refused) = client
                .call_tool_once(call("job.wait", json!({ "ms": 1 })))
                .await
                .unwrap()
            else {
                return None;
            };
            Some(envelope(&serde_json::to_value(&refused).unwrap()))
        };
        let error = refused_now()
            .await
            .expect("a second task past a bound of one");
        assert_eq!(error["code"], "rate_limited", "{error}");
        assert_eq!(error["retryable"], true, "{error}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains("maximum of 1 tasks"), "{error}");
        // Ended, it is still held for its client to read.
        settled(&client, &first, TaskStatus::Completed).await;
        assert!(refused_now().await.is_some());
        // A time to live later it is let go.
        tokio::time::sleep(ttl + Duration::from_millis(50)).await;
        started(&client, call("job.wait", json!({ "ms": 1 }))).await;
        client.cancel().await.unwrap();
    });
}

#[test]
fn the_extension_is_advertised_only_by_a_server_with_task_tools() {
    let plain = McpServer::new(registry()).unwrap();
    assert!(!plain.get_info().capabilities.supports_tasks());
    let tasks = server();
    assert!(tasks.get_info().capabilities.supports_tasks());
    let refused = McpServer::new(registry())
        .unwrap()
        .with_task_support("job.nope", TaskSupport::Optional)
        .unwrap_err();
    assert!(refused.to_string().contains("job.nope"), "{refused}");
    // A renamed tool keeps its task support, whichever is set first.
    let renamed = McpServer::new(registry())
        .unwrap()
        .with_task_support("job.wait", TaskSupport::Required)
        .unwrap()
        .with_tool_name("job.wait", "wait_for")
        .unwrap();
    runtime().block_on(async {
        let client = connect_2026(
            Client {
                tasks: false,
                elicitation: false,
            },
            renamed,
        )
        .await;
        let refused = client
            .call_tool_once(call("wait_for", json!({ "ms": 1 })))
            .await
            .unwrap_err();
        let refused = mcp_error(refused);
        assert_eq!(refused.code.0, -32021, "{refused:?}");
        client.cancel().await.unwrap();
    });
}

/// Three service tokens: `alice-token` and `bob-token` of one identity provider, and
/// `other-alice-token`, another provider's `alice`.
fn tokens(token: &str) -> Result<agentio_tools::Caller, agentio_mcp::auth::AuthError> {
    let of = |subject: &str, issuer: &str| {
        let mut caller = agentio_tools::Caller::new(subject);
        caller.claims = json!({ "iss": issuer, "sub": subject });
        Ok(caller)
    };
    match token {
        "alice-token" => of("alice", "https://idp.example"),
        "bob-token" => of("bob", "https://idp.example"),
        "other-alice-token" => of("alice", "https://other.example"),
        _ => Err(agentio_mcp::auth::AuthError::invalid("unknown token")),
    }
}

/// A client of `url` on protocol 2026-07-28 over streamable HTTP, with `token`.
async fn connect_http(url: &str, token: &str) -> RunningService<RoleClient, Client> {
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(token);
    let transport = rmcp::transport::StreamableHttpClientTransport::from_config(config);
    let lifecycle = rmcp::ClientLifecycleMode::Discover {
        preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
    };
    rmcp::ClientServiceExt::serve_with_lifecycle(TASKS, transport, lifecycle)
        .await
        .unwrap()
}

/// `server` over streamable HTTP on a loopback port, taking `tokens`; its URL and its task.
async fn serve_authenticated(
    server: McpServer,
) -> (
    String,
    tokio::task::JoinHandle<Result<(), agentio_mcp::ServeError>>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let auth = agentio_mcp::auth::HttpAuth::new(std::sync::Arc::new(tokens), url.clone());
    (
        url,
        tokio::spawn(server.with_auth(auth).serve_http(listener)),
    )
}

#[test]
fn over_http_a_task_is_the_callers_who_started_it() {
    runtime().block_on(async {
        let (url, serving) = serve_authenticated(server()).await;
        let alice = connect_http(&url, "alice-token").await;
        let bob = connect_http(&url, "bob-token").await;
        let id = started(&alice, call("job.wait", json!({ "ms": 600 }))).await;
        assert_eq!(get(&alice, &id).await.task.status(), TaskStatus::Working);
        // To another caller the id names no task: not to read, answer or cancel.
        let expect_unknown = |err: ServiceError| {
            let err = mcp_error(err);
            assert_eq!(err.code.0, -32602, "{err:?}");
            assert_eq!(err.message, format!("unknown task: {id}"));
        };
        expect_unknown(bob.get_task(GetTaskParams::new(&id)).await.unwrap_err());
        // Nor to another identity provider's `alice`: a subject is its issuer's.
        let other_alice = connect_http(&url, "other-alice-token").await;
        expect_unknown(
            other_alice
                .get_task(GetTaskParams::new(&id))
                .await
                .unwrap_err(),
        );
        other_alice.cancel().await.unwrap();
        expect_unknown(
            bob.cancel_task(CancelTaskParams::new(&id))
                .await
                .unwrap_err(),
        );
        let answers = responses([]);
        expect_unknown(
            bob.update_task(UpdateTaskParams::new(&id, answers))
                .await
                .unwrap_err(),
        );
        // Bob's cancel did nothing: Alice's task runs to its end.
        let done = settled(&alice, &id, TaskStatus::Completed).await;
        assert_eq!(
            result_of(&done)["structuredContent"],
            json!({ "waited": 600 })
        );
        alice.cancel().await.unwrap();
        bob.cancel().await.unwrap();
        serving.abort();
    });
}

#[test]
fn over_http_a_sealed_state_opens_only_for_the_caller_it_was_given_to() {
    runtime().block_on(async {
        let (url, serving) = serve_authenticated(names_first()).await;
        let alice = connect_http(&url, "alice-token").await;
        let bob = connect_http(&url, "bob-token").await;
        let CallToolResponse::InputRequired(round1) = alice
            .call_tool_once(call("job.ask", json!({})))
            .await
            .unwrap()
        else {
            panic!("no questions first")
        };
        let name = |name: &str| json!({ "action": "accept", "content": { "name": name } });
        let mut round2 = call("job.ask", json!({}));
        round2.input_responses = Some(responses([("first", name("Ann")), ("second", name("Bob"))]));
        round2.request_state = round1.request_state.clone();
        // Alice's state, sent by Bob: refused, naming the caller; nothing is made.
        let refused = mcp_error(bob.call_tool_once(round2.clone()).await.unwrap_err());
        assert_eq!(refused.code.0, -32602, "{refused:?}");
        assert!(refused.message.contains("this caller"), "{refused:?}");
        // Sent by Alice: her task.
        let id = started(&alice, round2).await;
        let done = settled(&alice, &id, TaskStatus::Completed).await;
        let said = result_of(&done)["structuredContent"]["said"].clone();
        assert!(said.as_str().unwrap().starts_with("Ann and Bob"), "{said}");
        alice.cancel().await.unwrap();
        bob.cancel().await.unwrap();
        serving.abort();
    });
}

#[test]
fn a_task_still_running_past_its_time_to_live_fails_and_its_body_is_dropped() {
    runtime().block_on(async {
        let server = server().with_task_ttl(Duration::from_millis(200));
        let client = connect_2026(TASKS, server).await;
        let CallToolResponse::Task(created) = client
            .call_tool_once(call("job.wait", json!({ "ms": 1200 })))
            .await
            .unwrap()
        else {
            panic!("no task")
        };
        assert_eq!(created.task.ttl_ms, Some(200));
        let id = created.task.task_id;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let expired = get(&client, &id).await;
        assert_eq!(expired.task.status(), TaskStatus::Failed, "{expired:?}");
        tokio::time::sleep(Duration::from_millis(1100)).await;
        assert!(!finished(1200));
        client.cancel().await.unwrap();
    });
}

#[test]
fn before_2026_07_28_approval_is_asked_in_the_task() {
    runtime().block_on(async {
        // The `initialize` handshake (2025-11-25): the extension declared for the session.
        let client = connect_initialize(TASKS, server()).await;
        let key = agentio_mcp::APPROVAL_INPUT_KEY;
        for (answer, expected) in [
            (
                json!({ "action": "accept", "content": { "approve": true } }),
                None,
            ),
            (json!({ "action": "decline" }), Some("approval_denied")),
        ] {
            let id = started(&client, call("job.gate", json!({}))).await;
            let asking = settled(&client, &id, TaskStatus::InputRequired).await;
            let TaskPayload::InputRequired { input_requests } = &asking.task.payload else {
                panic!("{asking:?}")
            };
            let form = serde_json::to_value(&input_requests[key]).unwrap();
            assert_eq!(form["method"], "elicitation/create", "{form}");
            let message = form["params"]["message"].as_str().unwrap();
            assert!(
                message.starts_with("Approve a call to `job.gate@"),
                "{message}"
            );
            client
                .update_task(UpdateTaskParams::new(&id, responses([(key, answer)])))
                .await
                .unwrap();
            let done = settled(&client, &id, TaskStatus::Completed).await;
            let result = result_of(&done);
            match expected {
                None => assert_eq!(result["structuredContent"]["said"], "done", "{result}"),
                Some(code) => assert_eq!(envelope(&result)["code"], code, "{result}"),
            }
        }
        // Cancelled while it waits for a yes: the call never runs.
        let id = started(&client, call("job.gate", json!({}))).await;
        settled(&client, &id, TaskStatus::InputRequired).await;
        client
            .cancel_task(CancelTaskParams::new(&id))
            .await
            .unwrap();
        let ended = settled(&client, &id, TaskStatus::Cancelled).await;
        assert_eq!(ended.task.status(), TaskStatus::Cancelled, "{ended:?}");
        client.cancel().await.unwrap();
    });
}

/// The two names `job.ask` asks, set to be asked before its task is made.
fn names_first() -> McpServer {
    let questions = Questions::new()
        .elicit::<Named>("first", "Your name?")
        .elicit::<Named>("second", "Your friend's?");
    server().ask_before_task("job.ask", questions).unwrap()
}

#[test]
fn questions_set_to_be_asked_first_are_asked_before_the_task_in_rounds() {
    runtime().block_on(async {
        let client = connect_2026(TASKS, names_first()).await;
        let name = |name: &str| json!({ "action": "accept", "content": { "name": name } });
        // Round 1: both questions, no task; the answers so far travel sealed.
        let CallToolResponse::InputRequired(round1) = client
            .call_tool_once(call("job.ask", json!({})))
            .await
            .unwrap()
        else {
            panic!("no questions first")
        };
        let wire = serde_json::to_value(&round1).unwrap();
        assert!(wire.get("taskId").is_none(), "{wire}");
        let asked: Vec<&String> = wire["inputRequests"].as_object().unwrap().keys().collect();
        assert_eq!(asked, ["first", "second"], "{wire}");
        assert_eq!(
            wire["inputRequests"]["first"]["method"],
            "elicitation/create"
        );
        // Round 2 answers one (and a malformed answer is no answer, and an answer to nothing
        // asked is dropped): the other is asked again.
        let mut round2 = call("job.ask", json!({}));
        round2.input_responses = Some(responses([
            ("first", name("Ann")),
            ("second", json!({})),
            ("made-up", name("Eve")),
        ]));
        round2.request_state = round1.request_state.clone();
        let CallToolResponse::InputRequired(asked_again) =
            client.call_tool_once(round2).await.unwrap()
        else {
            panic!("the second question was not asked again")
        };
        let wire = serde_json::to_value(&asked_again).unwrap();
        let asked: Vec<&String> = wire["inputRequests"].as_object().unwrap().keys().collect();
        assert_eq!(asked, ["second"], "{wire}");
        // Only the answer used travels, sealed.
        let sealed =
            crate::mcp_common::sealed_payload(asked_again.request_state.as_deref().unwrap());
        assert_eq!(
            sealed["answers"],
            json!({ "first": name("Ann") }),
            "{sealed}"
        );
        // Round 3 completes them: the task, whose body finds both answers and asks nothing.
        let mut round3 = call("job.ask", json!({}));
        round3.input_responses = Some(responses([("second", name("Bob"))]));
        round3.request_state = asked_again.request_state.clone();
        let CallToolResponse::Task(created) = client.call_tool_once(round3).await.unwrap() else {
            panic!("no task on the round that completed the answers")
        };
        // A task's envelope, not the rounds': no state, no questions.
        let wire = serde_json::to_value(&created).unwrap();
        assert!(
            wire.get("requestState").is_none() && wire.get("inputRequests").is_none(),
            "{wire}"
        );
        let done = settled(&client, &created.task.task_id, TaskStatus::Completed).await;
        let said = result_of(&done)["structuredContent"]["said"].clone();
        assert!(said.as_str().unwrap().starts_with("Ann and Bob"), "{said}");
        // A state this server did not seal does not open.
        let mut forged = call("job.ask", json!({}));
        forged.request_state = Some("rs1.forged.state".into());
        let err = client.call_tool_once(forged).await.unwrap_err();
        assert_eq!(mcp_error(err).code.0, -32602);
        client.cancel().await.unwrap();
    });
}

#[test]
fn a_gated_tool_asks_approval_then_its_questions_then_makes_the_task() {
    runtime().block_on(async {
        let one = Questions::new().elicit::<Named>("first", "Your name?");
        let server = server().ask_before_task("job.gate", one).unwrap();
        let client = connect_2026(TASKS, server).await;
        let key = agentio_mcp::APPROVAL_INPUT_KEY;
        // Round 1: the approval alone.
        let CallToolResponse::InputRequired(round1) = client
            .call_tool_once(call("job.gate", json!({})))
            .await
            .unwrap()
        else {
            panic!("no approval question")
        };
        let asked: Vec<&String> = round1.input_requests.as_ref().unwrap().keys().collect();
        assert_eq!(asked, [key]);
        // Round 2, approved: the question, the yes sealed with the answers.
        let yes = json!({ "action": "accept", "content": { "approve": true } });
        let mut round2 = call("job.gate", json!({}));
        round2.input_responses = Some(responses([(key, yes)]));
        let CallToolResponse::InputRequired(round2) = client.call_tool_once(round2).await.unwrap()
        else {
            panic!("no question after the approval")
        };
        let asked: Vec<&String> = round2.input_requests.as_ref().unwrap().keys().collect();
        assert_eq!(asked, ["first"]);
        // Round 3 answers it: the task, approved, not asked again.
        let ann = json!({ "action": "accept", "content": { "name": "Ann" } });
        let mut round3 = call("job.gate", json!({}));
        round3.input_responses = Some(responses([("first", ann.clone())]));
        round3.request_state = round2.request_state.clone();
        let id = started(&client, round3).await;
        let done = settled(&client, &id, TaskStatus::Completed).await;
        assert_eq!(result_of(&done)["structuredContent"]["said"], "done");
        // The answer alone, without the sealed yes, starts no task: the approval is asked.
        let mut unapproved = call("job.gate", json!({}));
        unapproved.input_responses = Some(responses([("first", ann)]));
        let CallToolResponse::InputRequired(again) =
            client.call_tool_once(unapproved).await.unwrap()
        else {
            panic!("a task without approval")
        };
        let asked: Vec<&String> = again.input_requests.as_ref().unwrap().keys().collect();
        assert_eq!(asked, [key]);
        // Declined: nothing more is asked; the task is made and says so.
        let mut declined = call("job.gate", json!({}));
        declined.input_responses = Some(responses([(key, json!({ "action": "decline" }))]));
        let id = started(&client, declined).await;
        let done = settled(&client, &id, TaskStatus::Completed).await;
        assert_eq!(envelope(&result_of(&done))["code"], "approval_denied");
        client.cancel().await.unwrap();
    });
}

#[test]
fn before_2026_07_28_questions_set_to_be_asked_first_are_asked_in_the_task() {
    runtime().block_on(async {
        let client = connect_initialize(TASKS, names_first()).await;
        // No rounds before 2026-07-28: the task at once, asking in the task.
        let id = started(&client, call("job.ask", json!({}))).await;
        // (The two questions reach rmcp one at a time: a poll between them sees one.)
        let asked = asking(&client, &id, 2).await;
        let TaskPayload::InputRequired { input_requests } = &asked.task.payload else {
            panic!("{asked:?}")
        };
        let keys: Vec<&String> = input_requests.keys().collect();
        assert_eq!(keys, ["first", "second"]);
        client.cancel().await.unwrap();
    });
}

#[test]
fn questions_first_need_a_task_tool_a_question_mcp_carries_and_the_clients_capability() {
    let refused = |server: Result<McpServer, agentio_tools::ExportError>| match server {
        Ok(_) => panic!("accepted"),
        Err(err) => err.problems[0].1.reason.clone(),
    };
    let one = || Questions::new().elicit::<Named>("first", "Your name?");
    assert!(
        refused(server().ask_before_task("job.plain", one())).contains("does not run as a task")
    );
    assert!(refused(server().ask_before_task("job.nope", one())).contains("no tool `job.nope`"));
    assert!(
        refused(server().ask_before_task("job.ask", Questions::new())).contains("no questions")
    );
    let approval = Questions::new().elicit::<Named>(agentio_mcp::APPROVAL_INPUT_KEY, "Yes?");
    assert!(refused(server().ask_before_task("job.ask", approval)).contains("approval question"));
    // A client that cannot answer a form: `-32021`, naming elicitation, and no task.
    runtime().block_on(async {
        let no_forms = Client {
            tasks: true,
            elicitation: false,
        };
        let client = connect_2026(no_forms, names_first()).await;
        let err = client
            .call_tool_once(call("job.ask", json!({})))
            .await
            .unwrap_err();
        let err = mcp_error(err);
        assert_eq!(err.code.0, -32021, "{err:?}");
        assert!(err.message.contains("elicitation"), "{err:?}");
        client.cancel().await.unwrap();
    });
}

/// The task once its body has reported progress (its start is on the store's disk by then).
async fn reporting(client: &RunningService<RoleClient, Client>, id: &str) -> GetTaskResult {
    for _ in 0..500 {
        let task = get(client, id).await;
        if task.task.task.status_message.is_some() {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("task {id} reported no progress")
}

/// Asserts that `read` is a task its server stopped while it ran: failed, saying why.
fn stopped(read: &GetTaskResult) {
    assert_eq!(read.task.status(), TaskStatus::Failed, "{read:?}");
    let TaskPayload::Failed { error } = &read.task.payload else {
        panic!("{read:?}")
    };
    assert_eq!(error["code"], -32603);
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("the server stopped while this task ran"),
        "{message}"
    );
}

#[test]
fn with_a_task_store_a_task_outlives_its_server_process() {
    use agentio_mcp::task_store::TaskStore;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.redb");
    // The first process: one task ends, one is still running when it stops.
    let first = runtime();
    let (done, running) = first.block_on(async {
        let server = server().with_task_store(TaskStore::open(&path).unwrap());
        let client = connect_2026(TASKS, server).await;
        let done = started(&client, call("job.wait", json!({ "ms": 7 }))).await;
        settled(&client, &done, TaskStatus::Completed).await;
        let running = started(&client, call("job.wait", json!({ "ms": 600_000 }))).await;
        reporting(&client, &running).await;
        (done, running)
    });
    // It stops: its runtime dropped with every task, connection and body, nothing graceful
    // (the store's file lock goes with the last handle).
    drop(first);
    let second = runtime();
    second.block_on(async {
        let server = server().with_task_store(TaskStore::open(&path).unwrap());
        let client = connect_2026(TASKS, server).await;
        // The ended task, as it ended.
        let read = get(&client, &done).await;
        assert_eq!(read.task.task.task_id, done);
        assert_eq!(
            result_of(&read)["structuredContent"],
            json!({ "waited": 7 })
        );
        // The one that was running: failed, saying why, not run again.
        stopped(&get(&client, &running).await);
        assert!(!finished(600_000));
        // Cancelling or answering an ended task changes nothing, as in memory.
        client
            .cancel_task(CancelTaskParams::new(&done))
            .await
            .unwrap();
        client
            .update_task(UpdateTaskParams::new(&done, responses([])))
            .await
            .unwrap();
        assert_eq!(
            get(&client, &done).await.task.status(),
            TaskStatus::Completed
        );
        // An id no process gave out is unknown, as before.
        let unknown = mcp_error(client.get_task(GetTaskParams::new("x")).await.unwrap_err());
        assert_eq!(unknown.code.0, -32602);
        // New tasks go on beside the old ones.
        let next = started(&client, call("job.wait", json!({ "ms": 8 }))).await;
        let next = settled(&client, &next, TaskStatus::Completed).await;
        assert_eq!(
            result_of(&next)["structuredContent"],
            json!({ "waited": 8 })
        );
        client.cancel().await.unwrap();
    });
}

#[test]
fn a_task_whose_start_the_store_cannot_write_is_refused_and_does_not_run() {
    use agentio_mcp::task_store::TaskStore;
    let dir = tempfile::tempdir().unwrap();
    let server = server().with_task_store(TaskStore::open(dir.path().join("t.redb")).unwrap());
    let watching = server.clone();
    let store = watching.task_store().expect("the server keeps the store");
    runtime().block_on(async {
        let client = connect_2026(TASKS, server).await;
        // The disk is full: the call is refused, not answered with a task it never recorded.
        store.__refuse_writes(true);
        let err = mcp_error(
            client
                .call_tool_once(call("job.wait", json!({ "ms": 242 })))
                .await
                .unwrap_err(),
        );
        assert_eq!(err.code.0, -32603, "{err:?}");
        assert!(
            err.message.contains("could not be recorded")
                && err.message.contains("the call did not run"),
            "{}",
            err.message
        );
        // The store's file and what the disk said are the operator's, not the client's.
        assert!(!err.message.contains("t.redb"), "{}", err.message);
        let failure = store.last_failure().unwrap();
        assert!(
            failure.contains("t.redb") && failure.contains("no space left on device"),
            "{failure}"
        );
        assert_eq!(store.failed_writes(), 1);
        tokio::time::sleep(Duration::from_millis(242 + 400)).await;
        assert!(!finished(242), "the body ran");
        // The disk has room again: tasks start, are recorded and run.
        store.__refuse_writes(false);
        let id = started(&client, call("job.wait", json!({ "ms": 11 }))).await;
        settled(&client, &id, TaskStatus::Completed).await;
        assert!(finished(11));
        assert_eq!(store.failed_writes(), 1);
        client.cancel().await.unwrap();
    });
}

#[test]
fn over_http_a_recorded_task_is_still_only_its_owners() {
    use agentio_mcp::task_store::TaskStore;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.redb");
    let serve = |path: std::path::PathBuf| async move {
        let server = server().with_task_store(TaskStore::open(&path).unwrap());
        serve_authenticated(server).await.0
    };
    let first = runtime();
    let id = first.block_on(async {
        let url = serve(path.clone()).await;
        let alice = connect_http(&url, "alice-token").await;
        let id = started(&alice, call("job.wait", json!({ "ms": 9 }))).await;
        settled(&alice, &id, TaskStatus::Completed).await;
        id
    });
    drop(first);
    runtime().block_on(async {
        let url = serve(path.clone()).await;
        let alice = connect_http(&url, "alice-token").await;
        let bob = connect_http(&url, "bob-token").await;
        let read = get(&alice, &id).await;
        assert_eq!(
            result_of(&read)["structuredContent"],
            json!({ "waited": 9 })
        );
        for refused in [
            bob.get_task(GetTaskParams::new(&id)).await.unwrap_err(),
            bob.cancel_task(CancelTaskParams::new(&id))
                .await
                .unwrap_err(),
        ] {
            let refused = mcp_error(refused);
            assert_eq!(refused.message, format!("unknown task: {id}"));
        }
    });
}

/// A server process, killed (`SIGKILL`) when dropped: a failing test leaves none behind.
struct Process(std::process::Child);

impl Process {
    fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `mcp-fixture http` with its tasks kept in `store`: the process and its URL, or (when it
/// stops before it serves) what it wrote to stderr.
fn fixture_with_store(store: &std::path::Path) -> Result<(Process, String), String> {
    use std::io::{BufRead, Read};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-fixture"))
        .arg("http")
        .env("AGENT_IO_TASK_STORE", store)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    if line.is_empty() {
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        child.wait().unwrap();
        return Err(stderr);
    }
    Ok((Process(child), line.trim().to_owned()))
}

/// A 2026-07-28 client that takes tasks, over streamable HTTP.
async fn connect_url(url: &str) -> RunningService<RoleClient, Client> {
    let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.to_owned());
    let lifecycle = rmcp::ClientLifecycleMode::Discover {
        preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
    };
    rmcp::ClientServiceExt::serve_with_lifecycle(TASKS, transport, lifecycle)
        .await
        .unwrap()
}

/// The crash a task store is for, in a real process: `SIGKILL` mid-task, and the moment a
/// task was answered, nothing flushed or closed by the server, then another process on the
/// same file.
#[test]
fn a_task_store_outlives_a_killed_server_process() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.redb");
    let (mut first, url) = fixture_with_store(&path).unwrap();
    let (done, running) = runtime().block_on(async {
        let client = connect_url(&url).await;
        let done = started(&client, call("fixture.work", json!({ "steps": 2 }))).await;
        let read = settled(&client, &done, TaskStatus::Completed).await;
        assert_eq!(result_of(&read)["structuredContent"], json!({ "steps": 2 }));
        // 10,000 steps of 20 ms: still running when the process is killed.
        let running = started(&client, call("fixture.work", json!({ "steps": 10_000 }))).await;
        reporting(&client, &running).await;
        (done, running)
    });
    // While it runs, the file is its own: a second process is refused, naming the file.
    let refused = fixture_with_store(&path).map(|_| ()).unwrap_err();
    assert!(
        refused.contains(&path.display().to_string()),
        "the refusal names the file: {refused}"
    );
    first.kill();
    // Killed the moment it has answered with a task: the task it told of is on disk.
    let (mut killed_at_once, url) = fixture_with_store(&path).unwrap();
    let told = runtime().block_on(async {
        let client = connect_url(&url).await;
        started(&client, call("fixture.work", json!({ "steps": 10_000 }))).await
    });
    killed_at_once.kill();
    let (mut second, url) = fixture_with_store(&path).unwrap();
    runtime().block_on(async {
        let client = connect_url(&url).await;
        let read = get(&client, &done).await;
        assert_eq!(read.task.status(), TaskStatus::Completed);
        assert_eq!(result_of(&read)["structuredContent"], json!({ "steps": 2 }));
        stopped(&get(&client, &running).await);
        stopped(&get(&client, &told).await);
        // And the new process runs tasks of its own on the same file.
        let next = started(&client, call("fixture.work", json!({ "steps": 1 }))).await;
        let next = settled(&client, &next, TaskStatus::Completed).await;
        assert_eq!(result_of(&next)["structuredContent"], json!({ "steps": 1 }));
        client.cancel().await.unwrap();
    });
    second.kill();
}
