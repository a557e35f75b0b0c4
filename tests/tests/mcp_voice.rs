//! What a tool says beyond its output, through rmcp's own client: content blocks (instead of
//! a structured output, or beside one), log lines under `logging/setLevel`, questions to the
//! client's user and model; an rmcp handler's resources beside our tools; and schemas without
//! formats JSON Schema does not define.

#![allow(deprecated)] // rmcp marks logging and sampling deprecated (SEP-2577); MCP still has them.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentio_mcp::McpServer;
use agentio_tests::voice_fixture::{Docs, registry};

use crate::mcp_common::{connect_2026, runtime};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationCapability, Implementation, ListRootsResult, LoggingLevel,
    LoggingMessageNotificationParam, ReadResourceRequestParams, RequestMetaObject, Root,
    RootsCapabilities, SamplingCapability, SetLevelRequestParams, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{Value, json};

/// A client that answers elicitations with `answer` (no capability when `None`), samples when
/// `samples`, and keeps the log lines it hears.
#[derive(Clone, Default)]
struct Client {
    answer: Option<Value>,
    samples: bool,
    roots: bool,
    logs: Arc<Mutex<Vec<LoggingMessageNotificationParam>>>,
    asked: Arc<Mutex<Vec<(String, Value)>>>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.answer.is_some() {
            capabilities.elicitation = Some(ElicitationCapability::default());
        }
        if self.samples {
            capabilities.sampling = Some(SamplingCapability::default());
        }
        if self.roots {
            capabilities.roots = Some(RootsCapabilities::default());
        }
        ClientConfig::new(capabilities, Implementation::new("voice-test", "0.0.0"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = &request
        {
            self.asked.lock().unwrap().push((
                message.clone(),
                serde_json::to_value(requested_schema).unwrap(),
            ));
        }
        let mut result = ElicitResult::new(ElicitationAction::Accept);
        result.content = self.answer.clone();
        Ok(result)
    }

    async fn create_message(
        &self,
        request: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let asked = serde_json::to_value(&request.messages).unwrap();
        assert_eq!(asked[0]["content"]["text"], "Say hi");
        Ok(serde_json::from_value(json!({
            "model": "test-model",
            "role": "assistant",
            "content": { "type": "text", "text": "hi" }
        }))
        .unwrap())
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        Ok(ListRootsResult::new(vec![
            Root::new("file:///work"),
            Root::new("file:///notes"),
        ]))
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.logs.lock().unwrap().push(params);
    }
}

/// The log lines heard so far, once at least `count` have arrived (rmcp hands each
/// notification to the client's handler on a task of its own, so the last may land just after
/// the result it preceded on the wire).
async fn heard(
    logs: &Mutex<Vec<LoggingMessageNotificationParam>>,
    count: usize,
) -> Vec<LoggingMessageNotificationParam> {
    until(logs, |logs| logs.len() >= count).await;
    std::mem::take(&mut *logs.lock().unwrap())
}

/// Waits (five seconds at most) until what `list` holds is `enough`: what a server or client
/// is handed reaches its handler on a task of its own.
async fn until<T>(list: &Mutex<Vec<T>>, enough: impl Fn(&[T]) -> bool) {
    for _ in 0..500 {
        if enough(&list.lock().unwrap()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A client that accepts every form with `{"sure": true}`.
fn sure() -> Client {
    Client {
        answer: Some(json!({ "sure": true })),
        ..Client::default()
    }
}

async fn connect(client: Client, server: McpServer) -> RunningService<RoleClient, Client> {
    crate::mcp_common::connect_initialize(client, server).await
}

fn call(name: &str) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned()).with_arguments(serde_json::Map::new())
}

fn said(result: &CallToolResult) -> String {
    assert_ne!(result.is_error, Some(true), "{result:?}");
    result.structured_content.as_ref().unwrap()["said"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn error_of(result: &CallToolResult) -> Value {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let text = result.content[0].as_text().unwrap().text.clone();
    serde_json::from_str::<Value>(&text).unwrap()["error"].clone()
}

#[test]
fn content_comes_instead_of_a_structured_output_or_beside_one() {
    runtime().block_on(async {
        let client = connect(Client::default(), McpServer::new(registry()).unwrap()).await;
        let tools = client.list_all_tools().await.unwrap();
        let chart = tools.iter().find(|t| t.name == "voice.chart").unwrap();
        assert!(chart.output_schema.is_none(), "{chart:?}");
        let report_tool = tools.iter().find(|t| t.name == "voice.report").unwrap();
        assert!(report_tool.output_schema.is_some());

        let result = client.call_tool(call("voice.chart")).await.unwrap();
        assert_eq!(result.is_error, Some(false));
        assert!(result.structured_content.is_none());
        let blocks = serde_json::to_value(&result.content).unwrap();
        assert_eq!(
            blocks,
            json!([
                { "type": "text", "text": "the chart:" },
                { "type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png" },
                { "type": "resource", "resource": { "uri": "chart://data", "mimeType": "text/csv", "text": "x,y\n1,2" } }
            ])
        );

        let result = client.call_tool(call("voice.report")).await.unwrap();
        assert_eq!(said(&result), "see the chart");
        let blocks = serde_json::to_value(&result.content).unwrap();
        assert_eq!(blocks[0], json!({ "type": "text", "text": "{\"said\":\"see the chart\"}" }));
        assert_eq!(blocks[1]["type"], "image");
        assert_eq!(blocks.as_array().unwrap().len(), 2);
        client.cancel().await.unwrap();
    });
}

#[test]
fn log_lines_reach_the_client_before_the_result_at_or_above_its_level() {
    runtime().block_on(async {
        let client = Client::default();
        let logs = client.logs.clone();
        let client = connect(client, McpServer::new(registry()).unwrap()).await;
        let caps = client.peer_info().unwrap().capabilities.clone();
        assert!(caps.logging.is_some(), "the server declares logging");

        // No level set: every line.
        let result = client.call_tool(call("voice.chatty")).await.unwrap();
        assert_eq!(said(&result), "[true, true, true]");
        // rmcp's client runs each notification's handler on a task of its own, so they may
        // land in any order: compare them sorted by level.
        let mut lines: Vec<(LoggingLevel, Value, Option<String>)> = heard(&logs, 3)
            .await
            .into_iter()
            .map(|l| (l.level, l.data, l.logger))
            .collect();
        let rank = |level: &LoggingLevel| match level {
            LoggingLevel::Debug => 0,
            LoggingLevel::Info => 1,
            _ => 2,
        };
        lines.sort_by_key(|(level, _, _)| rank(level));
        assert_eq!(
            lines,
            vec![
                (
                    LoggingLevel::Debug,
                    json!("starting"),
                    Some("voice.chatty".into())
                ),
                (
                    LoggingLevel::Info,
                    json!({ "step": 1 }),
                    Some("voice.chatty".into())
                ),
                (
                    LoggingLevel::Warning,
                    json!("almost out of room"),
                    Some("voice.chatty".into())
                ),
            ]
        );

        // `logging/setLevel` to warning: the body learns the other lines go unheard.
        client
            .set_level(SetLevelRequestParams::new(LoggingLevel::Warning))
            .await
            .unwrap();
        let result = client.call_tool(call("voice.chatty")).await.unwrap();
        assert_eq!(said(&result), "[false, false, true]");
        // Wait for more than will come: a line below the level must not arrive late either.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let levels: Vec<LoggingLevel> = heard(&logs, 1).await.iter().map(|l| l.level).collect();
        assert_eq!(levels, vec![LoggingLevel::Warning]);
        client.cancel().await.unwrap();
    });
}

#[test]
fn a_tool_asks_the_user_for_a_typed_answer_and_gets_it_validated() {
    runtime().block_on(async {
        let client = sure();
        let asked = client.asked.clone();
        let client = connect(client, McpServer::new(registry()).unwrap()).await;
        let result = client.call_tool(call("voice.ask")).await.unwrap();
        assert_eq!(said(&result), "sure: true");
        let (message, schema) = asked.lock().unwrap()[0].clone();
        assert_eq!(message, "Are you sure?");
        assert_eq!(schema["properties"]["sure"]["type"], "boolean");
        assert_eq!(schema["required"], json!(["sure"]));
        client.cancel().await.unwrap();

        // An answer that is not a `Confirm` is refused, naming where.
        let client = Client {
            answer: Some(json!({ "sure": "very" })),
            ..Client::default()
        };
        let client = connect(client, McpServer::new(registry()).unwrap()).await;
        let error = error_of(&client.call_tool(call("voice.ask")).await.unwrap());
        assert_eq!(error["code"], "input_invalid");
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("the client's answer to `question-1` does not match"),
            "{error}"
        );
        assert_eq!(
            error["cause"]["violations"][0]["pointer"], "/sure",
            "{error}"
        );
        client.cancel().await.unwrap();
    });
}

#[test]
fn on_2026_07_28_a_question_is_an_input_required_round_trip_with_sealed_state() {
    runtime().block_on(async {
        let client = Client {
            samples: true,
            ..sure()
        };
        let asked = client.asked.clone();
        let client = connect_2026(client, McpServer::new(registry()).unwrap()).await;
        // rmcp's client answers the input_required result through its handler and retries.
        let result = client.call_tool(call("voice.ask")).await.unwrap();
        assert_eq!(said(&result), "sure: true");
        assert_eq!(asked.lock().unwrap()[0].0, "Are you sure?");
        let result = client.call_tool(call("voice.muse")).await.unwrap();
        assert_eq!(said(&result), "test-model said hi");
        // Two questions, two rounds: the client answers each once, and the first answer
        // comes back to the body in the third run through the sealed state.
        let result = client.call_tool(call("voice.twice")).await.unwrap();
        assert_eq!(
            said(&result),
            "Accepted(Confirm { sure: true }) Accepted(Confirm { sure: true }) after 2 earlier rounds"
        );
        let asked: Vec<String> = asked.lock().unwrap().iter().map(|(m, _)| m.clone()).collect();
        assert_eq!(asked, ["Are you sure?", "First?", "Second?"]);

        // The first round, by hand: the question and a sealed state.
        let first = client
            .peer()
            .send_request(rmcp::model::ClientRequest::CallToolRequest(
                rmcp::model::Request::new(call("voice.ask")),
            ))
            .await
            .unwrap();
        let first = serde_json::to_value(&first).unwrap();
        assert_eq!(first["resultType"], "input_required", "{first}");
        assert_eq!(
            first["inputRequests"]["question-1"]["method"],
            "elicitation/create"
        );
        assert!(first["requestState"].is_string(), "{first}");

        // A state this server did not seal is refused.
        let forged = call("voice.ask").with_request_state("rs1.forged.state");
        let refused = client.call_tool(forged).await.unwrap_err();
        assert!(refused.to_string().contains("requestState"), "{refused}");
        client.cancel().await.unwrap();

        // A client without the capability: MCP's missing-capability error, naming it.
        let client = connect_2026(Client::default(), McpServer::new(registry()).unwrap()).await;
        let refused = client.call_tool(call("voice.ask")).await.unwrap_err();
        let rmcp::ServiceError::McpError(error) = &refused else {
            panic!("{refused}")
        };
        assert_eq!(error.code.0, -32021, "{error:?}");
        assert_eq!(
            error.data,
            Some(json!({ "requiredCapabilities": { "elicitation": {} } }))
        );
        client.cancel().await.unwrap();
    });
}

#[test]
fn a_client_without_the_capability_gets_a_tool_error_at_once_not_a_hang() {
    runtime().block_on(async {
        let client = connect(Client::default(), McpServer::new(registry()).unwrap()).await;
        for (tool, capability) in [("voice.ask", "elicitation"), ("voice.muse", "sampling")] {
            let result =
                tokio::time::timeout(Duration::from_secs(10), client.call_tool(call(tool)))
                    .await
                    .expect("answered at once")
                    .unwrap();
            let error = error_of(&result);
            assert_eq!(error["code"], "no_route", "{tool}");
            assert!(
                error["message"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("`{capability}` capability")),
                "{error}"
            );
        }
        client.cancel().await.unwrap();
    });
}

#[test]
fn a_tool_asks_the_client_model() {
    runtime().block_on(async {
        let client = Client {
            samples: true,
            ..Client::default()
        };
        let client = connect(client, McpServer::new(registry()).unwrap()).await;
        let result = client.call_tool(call("voice.muse")).await.unwrap();
        assert_eq!(said(&result), "test-model said hi");
        client.cancel().await.unwrap();
    });
}

#[test]
fn an_rmcp_handler_serves_resources_beside_our_tools() {
    runtime().block_on(async {
        let server = McpServer::new(registry()).unwrap().with_handler(Docs);
        let client = connect(Client::default(), server).await;
        let info = client.peer_info().unwrap().clone();
        assert!(info.capabilities.resources.is_some());
        assert!(info.capabilities.tools.is_some());
        assert_eq!(info.instructions.as_deref(), Some("Docs live at docs://."));
        let resources = client.list_all_resources().await.unwrap();
        assert_eq!(resources[0].uri, "docs://readme");
        let read = client
            .read_resource(ReadResourceRequestParams::new("docs://readme"))
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&read).unwrap()["contents"][0]["text"],
            "Read me."
        );
        let missing = client
            .read_resource(ReadResourceRequestParams::new("docs://nothing"))
            .await
            .unwrap_err();
        assert!(
            missing.to_string().contains("no resource docs://nothing"),
            "{missing}"
        );
        // The tools are still ours.
        let result = client.call_tool(call("voice.report")).await.unwrap();
        assert_eq!(said(&result), "see the chart");
        client.cancel().await.unwrap();

        // Without a handler, resources are not served, and the answer says which method.
        let client = connect(Client::default(), McpServer::new(registry()).unwrap()).await;
        assert!(client.peer_info().unwrap().capabilities.resources.is_none());
        let refused = client.list_resources(None).await.unwrap_err();
        assert!(refused.to_string().contains("resources/list"), "{refused}");
        client.cancel().await.unwrap();
    });
}

#[test]
#[allow(deprecated)] // resources/subscribe and /unsubscribe: legacy-only in rmcp, still served
fn without_a_handler_each_method_a_handler_would_serve_is_method_not_found_naming_it() {
    use rmcp::model::{
        ArgumentInfo, CompleteRequestParams, GetPromptRequestParams, Reference,
        SubscribeRequestParams, UnsubscribeRequestParams,
    };
    use rmcp::service::ServiceError;
    fn refused<T: std::fmt::Debug>(answer: Result<T, ServiceError>, method: &str) {
        match answer {
            Err(ServiceError::McpError(error)) => {
                assert_eq!(
                    error.code,
                    rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                    "{error:?}"
                );
                assert_eq!(
                    error.message,
                    format!("this server does not serve `{method}`")
                );
            }
            other => panic!("{method}: {other:?}"),
        }
    }
    runtime().block_on(async {
        let client = connect(Client::default(), McpServer::new(registry()).unwrap()).await;
        refused(client.list_prompts(None).await, "prompts/list");
        refused(
            client.get_prompt(GetPromptRequestParams::new("any")).await,
            "prompts/get",
        );
        refused(
            client
                .complete(CompleteRequestParams::new(
                    Reference::for_prompt("any"),
                    ArgumentInfo::new("a", "b"),
                ))
                .await,
            "completion/complete",
        );
        refused(
            client.list_resource_templates(None).await,
            "resources/templates/list",
        );
        refused(
            client
                .subscribe(SubscribeRequestParams::new("docs://readme"))
                .await,
            "resources/subscribe",
        );
        refused(
            client
                .unsubscribe(UnsubscribeRequestParams::new("docs://readme"))
                .await,
            "resources/unsubscribe",
        );
        // The tools are served all the same.
        let result = client.call_tool(call("voice.report")).await.unwrap();
        assert_eq!(said(&result), "see the chart");
        client.cancel().await.unwrap();
    });
}

#[test]
fn tools_list_shows_no_format_json_schema_does_not_define() {
    let server = McpServer::new(registry()).unwrap();
    let count = server
        .tools()
        .iter()
        .find(|t| t.name == "voice.count")
        .unwrap();
    let n = &count.input_schema["properties"]["n"];
    assert!(n.get("format").is_none(), "{n}");
    assert_eq!(n["minimum"], 0);
    assert_eq!(n["maximum"], u32::MAX);
    // The boundary still holds the range.
    let refused = runtime()
        .block_on(registry().call("voice.count", json!({ "n": 4_294_967_296u64 })))
        .unwrap_err();
    assert_eq!(refused.code().as_str(), "input_invalid", "{refused:?}");
}

#[test]
fn a_tool_asks_for_the_clients_roots_under_both_revisions() {
    runtime().block_on(async {
        let with_roots = Client {
            roots: true,
            ..Client::default()
        };
        let client = connect(with_roots.clone(), McpServer::new(registry()).unwrap()).await;
        let result = client.call_tool(call("voice.roots")).await.unwrap();
        assert_eq!(said(&result), "file:///work file:///notes");
        client.cancel().await.unwrap();

        let client = connect_2026(with_roots, McpServer::new(registry()).unwrap()).await;
        let result = client.call_tool(call("voice.roots")).await.unwrap();
        assert_eq!(said(&result), "file:///work file:///notes");
        client.cancel().await.unwrap();

        // Without the capability: refused at once, naming it.
        let client = connect(Client::default(), McpServer::new(registry()).unwrap()).await;
        let error = error_of(&client.call_tool(call("voice.roots")).await.unwrap());
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("`roots` capability"),
            "{error}"
        );
        client.cancel().await.unwrap();
    });
}

#[test]
fn on_2026_07_28_each_request_names_its_own_log_level() {
    runtime().block_on(async {
        let client = Client::default();
        let logs = client.logs.clone();
        let client = connect_2026(client, McpServer::new(registry()).unwrap()).await;
        let at = |level: Option<LoggingLevel>| {
            let mut params = call("voice.chatty");
            if let Some(level) = level {
                let mut meta = RequestMetaObject::default();
                meta.set_log_level(level);
                params.meta = Some(meta);
            }
            params
        };
        // No level asked: no line is sent, and the body knows.
        let result = client.call_tool(at(None)).await.unwrap();
        assert_eq!(said(&result), "[false, false, false]");
        for (level, expected) in [
            (LoggingLevel::Notice, "[false, false, true]"),
            (LoggingLevel::Info, "[false, true, true]"),
            (LoggingLevel::Debug, "[true, true, true]"),
        ] {
            let result = client.call_tool(at(Some(level))).await.unwrap();
            assert_eq!(said(&result), expected, "{level:?}");
        }
        let heard = heard(&logs, 6).await;
        assert_eq!(heard.len(), 6, "1 + 2 + 3 lines");
        client.cancel().await.unwrap();
    });
}

#[test]
fn the_handler_decides_what_a_listener_hears() {
    runtime().block_on(async {
        let server = McpServer::new(registry()).unwrap().with_handler(Docs);
        let client = connect_2026(Client::default(), server).await;
        let asked = SubscriptionFilter::builder()
            .tools_list_changed()
            .resources_list_changed()
            .build();
        let mut subscription = client.peer().listen(asked).await.unwrap();
        assert_eq!(
            subscription.acknowledged(),
            &SubscriptionFilter::builder()
                .resources_list_changed()
                .build()
        );
        subscription.cancel().await.unwrap();
        client.cancel().await.unwrap();
    });
}

/// A handler that writes down what reached it: the notifications it is handed and its
/// listeners (each waits for its cancellation, as rmcp's default does).
#[derive(Clone, Default)]
struct Heard(Arc<Mutex<Vec<String>>>);

impl Heard {
    fn note(&self, what: impl Into<String>) {
        self.0.lock().unwrap().push(what.into());
    }

    /// What was heard, once `what` has been.
    async fn once(&self, what: &str) -> Vec<String> {
        until(&self.0, |heard| heard.iter().any(|w| w == what)).await;
        self.0.lock().unwrap().clone()
    }
}

impl rmcp::ServerHandler for Heard {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(
            rmcp::model::ServerCapabilities::builder()
                .enable_resources()
                .enable_resources_list_changed()
                .build(),
        )
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.clone())
    }

    async fn listen(&self, context: rmcp::service::SubscriptionContext) -> Result<(), ErrorData> {
        self.note("listen");
        context.cancelled().await;
        self.note("listen ended");
        Ok(())
    }

    async fn on_initialized(&self, _context: NotificationContext<rmcp::RoleServer>) {
        self.note("initialized");
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<rmcp::RoleServer>) {
        self.note("roots changed");
    }

    async fn on_custom_notification(
        &self,
        notification: rmcp::model::CustomNotification,
        _context: NotificationContext<rmcp::RoleServer>,
    ) {
        self.note(notification.method);
    }

    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        _context: RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CustomResult, ErrorData> {
        self.note(request.method.clone());
        Ok(rmcp::model::CustomResult::new(
            json!({ "heard": request.method }),
        ))
    }
}

#[test]
fn a_handler_hears_the_clients_notifications_and_its_listeners() {
    runtime().block_on(async {
        let heard = Heard::default();
        let server = McpServer::new(registry())
            .unwrap()
            .with_handler(heard.clone());
        let with_roots = Client {
            roots: true,
            ..Client::default()
        };
        let client = connect(with_roots, server).await;
        assert_eq!(heard.once("initialized").await, ["initialized"]);
        client.peer().notify_roots_list_changed().await.unwrap();
        assert!(
            heard
                .once("roots changed")
                .await
                .contains(&"roots changed".to_owned())
        );
        client
            .peer()
            .send_notification(rmcp::model::ClientNotification::CustomNotification(
                rmcp::model::CustomNotification::new("notifications/agentio-test", None),
            ))
            .await
            .unwrap();
        assert_eq!(
            heard.once("notifications/agentio-test").await,
            ["initialized", "roots changed", "notifications/agentio-test"]
        );
        // A request of a method rmcp does not know is the handler's; a `tools/` one rmcp could
        // not read stays this server's (`invalid_params`, naming the part), and the handler
        // never sees it.
        let ask = |method: &str, params: Value| {
            rmcp::model::ClientRequest::CustomRequest(rmcp::model::CustomRequest::new(
                method,
                Some(params),
            ))
        };
        let answer = client
            .send_request(ask("agentio/echo", json!({})))
            .await
            .unwrap();
        let rmcp::model::ServerResult::CustomResult(answer) = answer else {
            panic!("the handler's answer: {answer:?}")
        };
        assert_eq!(answer.0, json!({ "heard": "agentio/echo" }));
        let refused = client
            .send_request(ask("tools/call", json!({ "name": 7 })))
            .await
            .unwrap_err();
        let rmcp::ServiceError::McpError(refused) = refused else {
            panic!("a protocol error: {refused:?}")
        };
        assert_eq!(
            (refused.code, refused.message.as_ref()),
            (
                rmcp::model::ErrorCode::INVALID_PARAMS,
                "`name` must be a string"
            )
        );
        assert_eq!(
            heard.once("agentio/echo").await,
            [
                "initialized",
                "roots changed",
                "notifications/agentio-test",
                "agentio/echo"
            ]
        );
        client.cancel().await.unwrap();

        // 2026-07-28: a listener is the handler's until the client cancels it.
        let heard = Heard::default();
        let server = McpServer::new(registry())
            .unwrap()
            .with_handler(heard.clone());
        let client = connect_2026(Client::default(), server).await;
        let asked = SubscriptionFilter::builder()
            .resources_list_changed()
            .build();
        let mut subscription = client.peer().listen(asked).await.unwrap();
        assert_eq!(heard.once("listen").await, ["listen"]);
        subscription.cancel().await.unwrap();
        assert_eq!(heard.once("listen ended").await, ["listen", "listen ended"]);
        client.cancel().await.unwrap();
    });
}

#[test]
fn log_lines_go_out_before_the_result_on_the_wire() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    runtime().block_on(async {
        for _ in 0..5 {
            let client_side = crate::mcp_common::spawn(McpServer::new(registry()).unwrap());
            let (read, mut write) = tokio::io::split(client_side);
            let lines = [
                json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": { "name": "wire", "version": "0" } } }),
                json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
                json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                        "params": { "name": "voice.chatty", "arguments": {} } }),
            ];
            for line in lines {
                write
                    .write_all(format!("{line}\n").as_bytes())
                    .await
                    .unwrap();
            }
            let mut read = BufReader::new(read).lines();
            let mut before = 0;
            loop {
                let line = read.next_line().await.unwrap().expect("a line");
                let message: Value = serde_json::from_str(&line).unwrap();
                if message["id"] == 2 {
                    break;
                }
                if message["method"] == "notifications/message" {
                    before += 1;
                }
            }
            assert_eq!(before, 3, "every log line before the result");
        }
    });
}

#[test]
fn on_2026_07_28_an_answer_of_the_wrong_shape_is_asked_again() {
    runtime().block_on(async {
        let client = Client {
            samples: true,
            roots: true,
            ..sure()
        };
        let client = connect_2026(client, McpServer::new(registry()).unwrap()).await;
        for tool in ["voice.ask", "voice.muse", "voice.roots"] {
            let first = client.peer().call_tool_once(call(tool)).await.unwrap();
            let rmcp::model::CallToolResponse::InputRequired(first) = first else {
                panic!("{tool}: {first:?}")
            };
            let key = first_key(&first);
            // An answer with none of the fields its question's result has.
            let mut wrong = rmcp::model::InputResponses::new();
            wrong.insert(key.clone(), json!({ "answer": 42 }));
            let mut again = call(tool);
            again.input_responses = Some(wrong);
            again.request_state = first.request_state.clone();
            let second = client.peer().call_tool_once(again).await.unwrap();
            let rmcp::model::CallToolResponse::InputRequired(second) = second else {
                panic!("{tool}: {second:?}")
            };
            let asked: Vec<&String> = second.input_requests.as_ref().unwrap().keys().collect();
            assert_eq!(asked, [&key], "{tool}");
        }
        client.cancel().await.unwrap();
    });
}

#[test]
fn a_tool_knows_what_its_client_declared() {
    runtime().block_on(async {
        let client = Client {
            roots: true,
            ..sure()
        };
        let client = connect(client, McpServer::new(registry()).unwrap()).await;
        let result = client.call_tool(call("voice.can")).await.unwrap();
        assert_eq!(
            said(&result),
            "elicitation:true sampling:false roots:true tasks:false"
        );
        client.cancel().await.unwrap();
        let client = connect(
            Client {
                samples: true,
                ..Client::default()
            },
            McpServer::new(registry()).unwrap(),
        )
        .await;
        let result = client.call_tool(call("voice.can")).await.unwrap();
        assert_eq!(
            said(&result),
            "elicitation:false sampling:true roots:false tasks:false"
        );
        client.cancel().await.unwrap();
    });
}

/// How much to pay.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput)]
struct Amount {
    /// In cents.
    cents: u32,
    /// To whom.
    to: String,
}

/// Pays, once a person approved the call and then confirmed the amount: on 2026-07-28 three
/// rounds, the approval carried sealed into the third.
#[agentio_tools::tool(id = "voice.pay", approval = "always", mutates = ["external:bank"], risk_level = 3)]
async fn pay(
    amount: Amount,
    ctx: &agentio_tools::ToolContext,
) -> Result<agentio_tests::voice_fixture::Said, agentio_tools::ToolError> {
    let question = format!("Really pay {} to {}?", amount.cents, amount.to);
    let said = match ctx
        .elicit::<agentio_tests::voice_fixture::Confirm>(&question)
        .await?
    {
        agentio_tools::voice::Elicited::Accepted(confirm) => {
            format!("paid {} to {}: {}", amount.cents, amount.to, confirm.sure)
        }
        _ => "not paid".into(),
    };
    Ok(agentio_tests::voice_fixture::Said { said })
}

fn paying() -> McpServer {
    let mut registry = registry();
    registry.register(PayTool).unwrap();
    McpServer::new(registry).unwrap()
}

fn pay_call(arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new("voice.pay").with_arguments(arguments.as_object().unwrap().clone())
}

/// The key of the first question an `input_required` result asks.
fn first_key(asked: &rmcp::model::InputRequiredResult) -> String {
    let questions = asked.input_requests.as_ref().expect("questions");
    questions.keys().next().expect("a question").clone()
}

/// The `input_required` result of a call, or a panic naming what came instead.
async fn asked_of(
    client: &RunningService<RoleClient, Client>,
    call: CallToolRequestParams,
) -> rmcp::model::InputRequiredResult {
    match client.peer().call_tool_once(call).await.unwrap() {
        rmcp::model::CallToolResponse::InputRequired(asked) => asked,
        other => panic!("not input_required: {other:?}"),
    }
}

#[test]
fn on_2026_07_28_a_gated_tool_that_asks_is_approved_once_and_then_asks() {
    runtime().block_on(async {
        // rmcp's client drives the rounds: the approval, then the body's question. Before the
        // approval travelled sealed, the third round asked for approval again, for ever.
        let client = Client {
            answer: Some(json!({ "sure": true, "approve": true })),
            ..Client::default()
        };
        let asked = client.asked.clone();
        let client = connect_2026(client, paying()).await;
        let result = client
            .call_tool(pay_call(json!({ "cents": 500, "to": "Ann" })))
            .await
            .unwrap();
        assert_eq!(said(&result), "paid 500 to Ann: true");
        let asked: Vec<String> = asked
            .lock()
            .unwrap()
            .iter()
            .map(|(m, _)| m.clone())
            .collect();
        assert_eq!(asked.len(), 2, "{asked:?}");
        assert!(
            asked[0].starts_with("Approve a call to `voice.pay@1`"),
            "{asked:?}"
        );
        assert_eq!(asked[1], "Really pay 500 to Ann?");
        client.cancel().await.unwrap();
    });
}

#[test]
fn on_2026_07_28_a_sealed_state_opens_only_for_the_call_it_was_sealed_for() {
    runtime().block_on(async {
        let client = sure();
        let client = connect_2026(client, paying()).await;
        let arguments = json!({ "cents": 5, "to": "Ann" });
        // Round 1 asks for approval; round 2 approves, and the body asks.
        let approval = asked_of(&client, pay_call(arguments.clone())).await;
        assert!(approval.request_state.is_none(), "{approval:?}");
        let key = agentio_mcp::APPROVAL_INPUT_KEY;
        let mut yes = rmcp::model::InputResponses::new();
        yes.insert(
            key.to_owned(),
            json!({ "action": "accept", "content": { "approve": true } }),
        );
        let mut round2 = pay_call(arguments.clone());
        round2.input_responses = Some(yes);
        let question = asked_of(&client, round2).await;
        let state = question.request_state.clone().expect("a sealed state");
        let mut answer = rmcp::model::InputResponses::new();
        answer.insert(
            first_key(&question),
            json!({ "action": "accept", "content": { "sure": true } }),
        );
        let round3 = |arguments: Value| {
            let mut call = pay_call(arguments);
            call.input_responses = Some(answer.clone());
            call.request_state = Some(state.clone());
            call
        };
        // The approved state with other arguments, another tool, or none: refused before
        // anything runs, naming why.
        for (tool, arguments) in [
            ("voice.pay", json!({ "cents": 50000, "to": "Ann" })),
            ("voice.pay", json!({ "cents": 5, "to": "Eve" })),
            ("voice.pay", json!({ "cents": 5, "to": "Ann", "note": "x" })),
            ("voice.ask", json!({})),
        ] {
            let mut call = round3(arguments.clone());
            call.name = tool.to_owned().into();
            let refused = client.peer().call_tool_once(call).await.unwrap_err();
            let rmcp::ServiceError::McpError(error) = &refused else {
                panic!("{refused}")
            };
            assert_eq!(error.code.0, -32602, "{tool} {arguments}: {error:?}");
            assert!(
                error.message.contains("these arguments"),
                "{tool} {arguments}: {error:?}"
            );
        }
        // The same arguments, their members in another order: paid, asked nothing more.
        let reordered: Value = serde_json::from_str(r#"{"to": "Ann", "cents": 5}"#).unwrap();
        match client
            .peer()
            .call_tool_once(round3(reordered))
            .await
            .unwrap()
        {
            rmcp::model::CallToolResponse::Complete(result) => {
                assert_eq!(said(&result), "paid 5 to Ann: true")
            }
            other => panic!("{other:?}"),
        }
        client.cancel().await.unwrap();
    });
}

#[test]
fn on_2026_07_28_a_state_answered_after_its_lifetime_is_refused_as_expired() {
    runtime().block_on(async {
        let client = sure();
        let server = McpServer::new(registry())
            .unwrap()
            .with_request_state_ttl(Duration::from_millis(50));
        let client = connect_2026(client, server).await;
        let first = asked_of(&client, call("voice.ask")).await;
        let key = first_key(&first);
        let mut answer = rmcp::model::InputResponses::new();
        answer.insert(
            key,
            json!({ "action": "accept", "content": { "sure": true } }),
        );
        let mut again = call("voice.ask");
        again.input_responses = Some(answer);
        again.request_state = first.request_state.clone();
        tokio::time::sleep(Duration::from_millis(120)).await;
        let refused = client
            .peer()
            .call_tool_once(again.clone())
            .await
            .unwrap_err();
        let rmcp::ServiceError::McpError(error) = &refused else {
            panic!("{refused}")
        };
        assert_eq!(error.code.0, -32602, "{error:?}");
        assert!(error.message.contains("expired"), "{error:?}");
        // Answered in time, the same call goes through.
        let first = asked_of(&client, call("voice.ask")).await;
        again.request_state = first.request_state.clone();
        match client.peer().call_tool_once(again).await.unwrap() {
            rmcp::model::CallToolResponse::Complete(result) => {
                assert_eq!(said(&result), "sure: true")
            }
            other => panic!("{other:?}"),
        }
        client.cancel().await.unwrap();
    });
}

#[test]
fn on_2026_07_28_only_the_answers_a_tool_used_travel_in_its_state() {
    runtime().block_on(async {
        let client = connect_2026(sure(), McpServer::new(registry()).unwrap()).await;
        let first = asked_of(&client, call("voice.twice")).await;
        // The answer to the first question, and 100 KB the tool never asked for.
        let mut answers = rmcp::model::InputResponses::new();
        answers.insert(
            first_key(&first),
            json!({ "action": "accept", "content": { "sure": true } }),
        );
        answers.insert("junk".to_owned(), json!("x".repeat(100_000)));
        let mut again = call("voice.twice");
        again.input_responses = Some(answers);
        again.request_state = first.request_state.clone();
        let second = asked_of(&client, again).await;
        let state = second.request_state.clone().unwrap();
        let sealed = crate::mcp_common::sealed_payload(&state);
        let keys: Vec<&String> = sealed["answers"].as_object().unwrap().keys().collect();
        assert_eq!(keys, [&first_key(&first)], "{sealed}");
        assert!(state.len() < 1_000, "{} bytes", state.len());
        client.cancel().await.unwrap();
    });
}
