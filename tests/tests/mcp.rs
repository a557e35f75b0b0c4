//! The MCP server and client, driven by rmcp's own client over every transport: in-process
//! (a duplex pipe), a child process over stdio, and streamable HTTP.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentio_core::BoundarySchema;
use agentio_mcp::{ClientError, ImportOptions, McpClient, McpServer};
use agentio_tests::mcp_fixture;
use agentio_tools::{ApprovalDecision, ApprovalRequest, AuditLog, ToolRegistry};
use futures::StreamExt;
use rmcp::handler::client::progress::ProgressDispatcher;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ClientRequest,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability, Implementation,
    PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion, Request, ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a Tokio runtime")
}

/// A client that answers approval questions as told and collects progress.
#[derive(Clone)]
struct TestClient {
    /// `None`: declares no elicitation capability.
    answer: Option<ElicitationAction>,
    approve: bool,
    protocol: ProtocolVersion,
    progress: ProgressDispatcher,
    asked: Arc<Mutex<Vec<String>>>,
}

impl TestClient {
    fn new(answer: Option<ElicitationAction>) -> Self {
        TestClient {
            answer,
            approve: true,
            protocol: ProtocolVersion::LATEST,
            progress: ProgressDispatcher::new(),
            asked: Arc::default(),
        }
    }
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.answer.is_some() {
            capabilities.elicitation = Some(ElicitationCapability::default());
        }
        ClientConfig::new(
            capabilities,
            Implementation::new("agent-io-test-client", "0.0.0"),
        )
        .with_protocol_version(self.protocol.clone())
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = &request {
            self.asked.lock().unwrap().push(message.clone());
        }
        let action = self.answer.clone().unwrap_or(ElicitationAction::Decline);
        let mut result = ElicitResult::new(action.clone());
        if action == ElicitationAction::Accept {
            result.content = Some(json!({ "approve": self.approve }));
        }
        Ok(result)
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.handle_notification(params).await;
    }
}

/// The fixture registry served in-process over a duplex pipe, with its audit log.
async fn connect(
    client: TestClient,
    registry: ToolRegistry,
) -> (RunningService<RoleClient, TestClient>, Arc<AuditLog>) {
    let audit = Arc::new(AuditLog::default());
    let registry = registry.with_audit_sink(audit.clone());
    let server = McpServer::new(registry).unwrap().with_page_size(2);
    (
        crate::mcp_common::connect_initialize(client, server).await,
        audit,
    )
}

/// The fixture registry served in-process to a client on protocol 2026-07-28, which starts
/// with `server/discover` (no `initialize`; `connect`'s handshake settles on 2025-11-25).
async fn connect_2026(
    client: TestClient,
    registry: ToolRegistry,
) -> (RunningService<RoleClient, TestClient>, Arc<AuditLog>) {
    let audit = Arc::new(AuditLog::default());
    let server = McpServer::new(registry.with_audit_sink(audit.clone())).unwrap();
    (crate::mcp_common::connect_2026(client, server).await, audit)
}

/// Every listed tool, bounded in time: a server whose cursors never end must fail the test, not
/// hang it.
async fn all_tools<S: rmcp::service::Service<RoleClient>>(
    client: &RunningService<RoleClient, S>,
) -> Vec<rmcp::model::Tool> {
    tokio::time::timeout(Duration::from_secs(10), client.list_all_tools())
        .await
        .expect("the listing ends within 10 s")
        .expect("the listing succeeds")
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|b| b.as_text().map(|t| t.text.clone()))
        .collect()
}

/// The envelope an `isError` result carries in its text block.
fn envelope_of(result: &CallToolResult) -> Value {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert!(
        result.structured_content.is_none(),
        "an error carries no structuredContent"
    );
    serde_json::from_str(&text_of(result)).expect("the text block is the JSON envelope")
}

#[test]
fn tools_list_pages_through_every_tool_and_refuses_a_forged_cursor() {
    runtime().block_on(async {
        let (client, _) = connect(TestClient::new(None), mcp_fixture::registry()).await;
        let first = client.list_tools(None).await.unwrap();
        assert_eq!(first.tools.len(), 2);
        let cursor = first.next_cursor.clone().expect("more pages");
        let second = client
            .list_tools(Some(
                PaginatedRequestParams::default().with_cursor(Some(cursor)),
            ))
            .await
            .unwrap();
        assert_eq!(second.tools.len(), 2);
        let third = client
            .list_tools(Some(
                PaginatedRequestParams::default().with_cursor(second.next_cursor.clone()),
            ))
            .await
            .unwrap();
        assert_eq!(third.tools.len(), 1);
        assert_eq!(third.next_cursor, None, "the last page has no cursor");
        let all = all_tools(&client).await;
        let mut names: Vec<String> = all.iter().map(|t| t.name.to_string()).collect();
        names.sort();
        assert_eq!(
            names,
            [
                "fixture.add",
                "fixture.count",
                "fixture.record",
                "fixture.refuse",
                "fixture.work"
            ]
        );
        let add = all.iter().find(|t| t.name == "fixture.add").unwrap();
        assert!(add.output_schema.is_some());
        let hints = add.annotations.clone().unwrap();
        assert_eq!(hints.read_only_hint, Some(true));
        assert_eq!(hints.idempotent_hint, Some(true));
        let record = all.iter().find(|t| t.name == "fixture.record").unwrap();
        assert_eq!(
            record.annotations.clone().unwrap().destructive_hint,
            Some(true)
        );
        // Before 2026-07-28 a bare-number output has no outputSchema (rmcp drops it for this
        // peer): structuredContent had to be an object.
        let count = all.iter().find(|t| t.name == "fixture.count").unwrap();
        assert!(count.output_schema.is_none());

        let forged = client
            .list_tools(Some(
                PaginatedRequestParams::default().with_cursor(Some("999".into())),
            ))
            .await;
        assert!(forged.is_err(), "{forged:?}");
    });
}

#[test]
fn a_call_answers_structured_content_that_matches_the_advertised_output_schema() {
    runtime().block_on(async {
        let (client, audit) = connect(TestClient::new(None), mcp_fixture::registry()).await;
        let tools = all_tools(&client).await;
        let add = tools.iter().find(|t| t.name == "fixture.add").unwrap();
        let result = client
            .call_tool(call("fixture.add", json!({ "a": 2, "b": 40 })))
            .await
            .unwrap();
        assert_ne!(result.is_error, Some(true));
        let structured = result.structured_content.clone().unwrap();
        assert_eq!(structured, json!({ "sum": 42 }));
        let text: Value = serde_json::from_str(&text_of(&result)).unwrap();
        assert_eq!(
            text, structured,
            "the text block repeats the structured value"
        );
        let schema = Value::Object((**add.output_schema.as_ref().unwrap()).clone());
        let schema =
            BoundarySchema::from_value("outputSchema", agentio_core::Direction::Output, schema);
        schema.validate(&structured).unwrap();
        assert_eq!(audit.records().len(), 1);
        assert!(audit.records()[0].ok);

        // Before 2026-07-28, a non-object output comes as text alone.
        let counted = client
            .call_tool(call("fixture.count", json!({ "text": "one two three" })))
            .await
            .unwrap();
        assert!(counted.structured_content.is_none());
        assert_eq!(text_of(&counted), "3");
    });
}

#[test]
fn on_2026_07_28_every_output_is_structured_and_has_its_schema() {
    runtime().block_on(async {
        let (client, _) = connect_2026(TestClient::new(None), mcp_fixture::registry()).await;
        let tools = all_tools(&client).await;
        let count = tools.iter().find(|t| t.name == "fixture.count").unwrap();
        let schema = count
            .output_schema
            .as_ref()
            .expect("a schema for a number output");
        assert_eq!(schema.get("type"), Some(&json!("integer")));
        let counted = client
            .call_tool(call("fixture.count", json!({ "text": "one two three" })))
            .await
            .unwrap();
        assert_ne!(counted.is_error, Some(true));
        assert_eq!(counted.structured_content, Some(json!(3)));
        assert_eq!(text_of(&counted), "3", "the text block repeats it");
        // An object output is unchanged.
        let added = client
            .call_tool(call("fixture.add", json!({ "a": 2, "b": 40 })))
            .await
            .unwrap();
        assert_eq!(added.structured_content, Some(json!({ "sum": 42 })));
    });
}

#[test]
fn contract_failures_are_tool_errors_carrying_the_envelope() {
    runtime().block_on(async {
        let (client, audit) = connect(TestClient::new(None), mcp_fixture::registry()).await;
        // Out of the advertised range: rmcp's own #[tool] would run the body with it.
        let result = client
            .call_tool(call("fixture.add", json!({ "a": 5000, "b": 1 })))
            .await
            .unwrap();
        let envelope = envelope_of(&result);
        assert_eq!(envelope["ok"], false);
        assert_eq!(envelope["error"]["code"], "input_invalid");
        assert_eq!(envelope["error"]["cause"]["violations"][0]["pointer"], "/a");

        let result = client
            .call_tool(call("fixture.add", json!({ "a": 1 })))
            .await
            .unwrap();
        assert_eq!(envelope_of(&result)["error"]["code"], "input_invalid");

        let result = client
            .call_tool(call("fixture.refuse", json!({ "text": "x" })))
            .await
            .unwrap();
        let envelope = envelope_of(&result);
        assert_eq!(envelope["error"]["code"], "ledger:closed");
        assert_eq!(
            envelope["error"]["message"],
            "the ledger is closed for the day"
        );

        let codes: Vec<Option<String>> =
            audit.records().into_iter().map(|r| r.error_code).collect();
        assert_eq!(
            codes,
            vec![
                Some("input_invalid".into()),
                Some("input_invalid".into()),
                Some("ledger:closed".into())
            ]
        );
    });
}

/// A `tools/call` whose params rmcp cannot read (`arguments` not an object) reaches the server
/// as an unknown request; it is answered `invalid_params` naming the part, not "method not
/// found", and nothing runs. A method the server does not serve is `method_not_found`.
#[test]
fn a_call_with_params_of_the_wrong_shape_is_invalid_params() {
    runtime().block_on(async {
        let (client, audit) = connect(TestClient::new(None), mcp_fixture::registry()).await;
        let ask = |method: &str, params: Value| {
            ClientRequest::CustomRequest(rmcp::model::CustomRequest::new(method, Some(params)))
        };
        let cases = [
            (
                ask(
                    "tools/call",
                    json!({"name": "fixture.echo", "arguments": "text"}),
                ),
                rmcp::model::ErrorCode::INVALID_PARAMS,
                "`arguments` must be an object",
            ),
            (
                ask("tools/call", json!({"name": 7})),
                rmcp::model::ErrorCode::INVALID_PARAMS,
                "`name` must be a string",
            ),
            (
                ask("no/such", json!({})),
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                "unknown method `no/such`",
            ),
        ];
        for (request, code, message) in cases {
            let err = client.send_request(request).await.unwrap_err();
            let rmcp::ServiceError::McpError(err) = err else {
                panic!("a protocol error: {err:?}")
            };
            assert_eq!((err.code, err.message.as_ref()), (code, message));
        }
        assert!(audit.records().is_empty());
        // The session goes on.
        assert!(!all_tools(&client).await.is_empty());
    });
}

#[test]
fn an_unknown_tool_is_a_protocol_error_not_a_tool_result() {
    runtime().block_on(async {
        let (client, audit) = connect(TestClient::new(None), mcp_fixture::registry()).await;
        let err = client
            .call_tool(call("fixture.nope", json!({})))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("fixture.nope"), "{err}");
        assert!(audit.records().is_empty());
    });
}

#[test]
fn progress_reaches_the_client_in_order_before_the_result() {
    runtime().block_on(async {
        let handler = TestClient::new(None);
        let progress = handler.progress.clone();
        let (client, _) = connect(handler, mcp_fixture::registry()).await;
        let request = ClientRequest::CallToolRequest(Request::new(call(
            "fixture.work",
            json!({ "steps": 4 }),
        )));
        let handle = client
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .unwrap();
        let mut reports = progress.subscribe(handle.progress_token.clone()).await;
        let response = handle.await_response().await.unwrap();
        let ServerResult::CallToolResult(result) = response else {
            panic!("a call result: {response:?}")
        };
        assert_eq!(result.structured_content, Some(json!({ "steps": 4 })));
        let mut seen = Vec::new();
        while let Ok(Some(report)) =
            tokio::time::timeout(Duration::from_millis(500), reports.next()).await
        {
            seen.push((report.progress, report.total, report.message));
            if seen.len() == 4 {
                break;
            }
        }
        assert_eq!(
            seen,
            (1..=4)
                .map(|s| (f64::from(s), Some(4.0), Some(format!("step {s} of 4"))))
                .collect::<Vec<_>>()
        );
    });
}

#[test]
fn a_cancelled_call_stops_on_the_server_and_is_audited_as_cancelled() {
    runtime().block_on(async {
        let handler = TestClient::new(None);
        let progress = handler.progress.clone();
        let (client, audit) = connect(handler, mcp_fixture::registry()).await;
        let request = ClientRequest::CallToolRequest(Request::new(call(
            "fixture.work",
            json!({ "steps": 5000 }),
        )));
        let handle = client
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .unwrap();
        let mut reports = progress.subscribe(handle.progress_token.clone()).await;
        // Cancel once the body is surely running (bounded: a broken server must fail this
        // test, not hang it).
        tokio::time::timeout(Duration::from_secs(10), reports.next())
            .await
            .expect("a first progress report within 10 s")
            .expect("a first progress report");
        handle
            .cancel(Some("the user pressed stop".into()))
            .await
            .unwrap();
        // The server answers nothing for a cancelled request; its audit record says why.
        let mut records = Vec::new();
        for _ in 0..100 {
            records = audit.records();
            if !records.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(records.len(), 1, "the call was audited");
        assert_eq!(records[0].error_code.as_deref(), Some("cancelled"));
        assert!(records[0].duration_ms < 5_000, "{}", records[0].duration_ms);
        // And the server still serves.
        let result = client
            .call_tool(call("fixture.add", json!({ "a": 1, "b": 1 })))
            .await
            .unwrap();
        assert_eq!(result.structured_content, Some(json!({ "sum": 2 })));
    });
}

#[test]
fn approval_is_denied_when_the_client_cannot_be_asked() {
    runtime().block_on(async {
        // The registry's own approver would say yes; over MCP, the client's user decides.
        let registry = mcp_fixture::registry()
            .with_approver(Arc::new(|_: &ApprovalRequest| ApprovalDecision::Approve));
        let (client, _) = connect(TestClient::new(None), registry).await;
        let result = client
            .call_tool(call("fixture.record", json!({ "text": "pay rent" })))
            .await
            .unwrap();
        let envelope = envelope_of(&result);
        assert_eq!(envelope["error"]["code"], "approval_denied");
        assert!(
            envelope["error"]["message"]
                .as_str()
                .unwrap()
                .contains("does not support elicitation"),
            "{envelope}"
        );
    });
}

fn approval_cases() -> Vec<(ProtocolVersion, ElicitationAction, bool, bool)> {
    let mut cases = Vec::new();
    // The inline protocol (input_required and a retry) and the legacy one (elicitation/create).
    for protocol in [ProtocolVersion::V_2026_07_28, ProtocolVersion::V_2025_11_25] {
        cases.push((protocol.clone(), ElicitationAction::Accept, true, true));
        cases.push((protocol.clone(), ElicitationAction::Accept, false, false));
        cases.push((protocol.clone(), ElicitationAction::Decline, true, false));
        cases.push((protocol, ElicitationAction::Cancel, true, false));
    }
    cases
}

#[test]
fn approval_is_put_to_the_user_through_elicitation_on_both_protocols() {
    runtime().block_on(async {
        for (protocol, action, approve, runs) in approval_cases() {
            let mut handler = TestClient::new(Some(action.clone()));
            handler.approve = approve;
            handler.protocol = protocol.clone();
            let asked = handler.asked.clone();
            // Each protocol's own handshake: `initialize` settles on 2025-11-25 at most.
            let (client, audit) = if protocol == ProtocolVersion::V_2026_07_28 {
                connect_2026(handler, mcp_fixture::registry()).await
            } else {
                connect(handler, mcp_fixture::registry()).await
            };
            let session = client.peer_info().map(|info| info.protocol_version.clone());
            assert_eq!(session, Some(protocol.clone()), "the session's protocol");
            let result = client
                .call_tool(call("fixture.record", json!({ "text": "pay rent" })))
                .await
                .unwrap();
            let case = format!("{protocol:?} {action:?} approve={approve}");
            if runs {
                assert_eq!(
                    result.structured_content,
                    Some(json!({ "text": "pay rent" })),
                    "{case}"
                );
            } else {
                assert_eq!(
                    envelope_of(&result)["error"]["code"],
                    "approval_denied",
                    "{case}"
                );
            }
            let asked = asked.lock().unwrap().clone();
            assert_eq!(asked.len(), 1, "{case}: asked once");
            assert!(asked[0].contains("fixture.record"), "{case}: {}", asked[0]);
            assert!(asked[0].contains("pay rent"), "{case}: {}", asked[0]);
            // One audited call: the question is asked before the registry runs anything.
            assert_eq!(audit.records().len(), 1, "{case}");
        }
    });
}

#[test]
fn an_invalid_input_to_a_gated_tool_is_refused_without_asking_anyone() {
    runtime().block_on(async {
        let handler = TestClient::new(Some(ElicitationAction::Accept));
        let asked = handler.asked.clone();
        let (client, _) = connect(handler, mcp_fixture::registry()).await;
        let result = client
            .call_tool(call("fixture.record", json!({ "text": 7 })))
            .await
            .unwrap();
        assert_eq!(envelope_of(&result)["error"]["code"], "input_invalid");
        assert!(asked.lock().unwrap().is_empty());
    });
}

fn fixture_command(mode: &str) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-fixture"));
    command.arg(mode);
    command
}

#[test]
fn over_stdio_a_child_process_serves_list_call_and_tool_errors() {
    runtime().block_on(async {
        let transport = rmcp::transport::TokioChildProcess::new(fixture_command("stdio")).unwrap();
        let client = ().serve(transport).await.unwrap();
        assert_eq!(all_tools(&client).await.len(), 5);
        let result = client
            .call_tool(call("fixture.add", json!({ "a": 20, "b": 22 })))
            .await
            .unwrap();
        assert_eq!(result.structured_content, Some(json!({ "sum": 42 })));
        let bad = client
            .call_tool(call("fixture.add", json!({ "a": "x", "b": 1 })))
            .await
            .unwrap();
        assert_eq!(envelope_of(&bad)["error"]["code"], "input_invalid");
        client.cancel().await.unwrap();
    });
}

#[test]
fn over_streamable_http_a_server_serves_list_call_and_tool_errors() {
    runtime().block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let server = McpServer::new(mcp_fixture::registry()).unwrap();
        let serving = tokio::spawn(server.serve_http(listener));
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url);
        let client = ().serve(transport).await.unwrap();
        assert_eq!(all_tools(&client).await.len(), 5);
        let result = client
            .call_tool(call("fixture.add", json!({ "a": -2, "b": 1 })))
            .await
            .unwrap();
        assert_eq!(result.structured_content, Some(json!({ "sum": -1 })));
        let bad = client
            .call_tool(call("fixture.refuse", json!({ "text": "x" })))
            .await
            .unwrap();
        assert_eq!(envelope_of(&bad)["error"]["code"], "ledger:closed");
        client.cancel().await.unwrap();
        serving.abort();
    });
}

#[test]
fn imported_tools_round_trip_under_the_advertised_schemas() {
    runtime().block_on(async {
        let client = McpClient::spawn(fixture_command("stdio")).await.unwrap();
        let audit = Arc::new(AuditLog::default());
        let mut registry = ToolRegistry::new()
            .with_audit_sink(audit.clone())
            .with_approver(Arc::new(|_: &ApprovalRequest| ApprovalDecision::Approve));
        // The fixture is ours: trusted, so its read-only tools run without approval.
        let trusted = ImportOptions::default().trusted();
        let mut imported = client
            .import_into_with(&mut registry, "remote", &trusted)
            .await
            .unwrap();
        imported.sort_by(|a, b| a.tool_id.cmp(&b.tool_id));
        let ids: Vec<&str> = imported.iter().map(|t| t.tool_id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "remote.fixture.add",
                "remote.fixture.count",
                "remote.fixture.record",
                "remote.fixture.refuse",
                "remote.fixture.work"
            ]
        );

        let sum = registry
            .call("remote.fixture.add", json!({ "a": 3, "b": 4 }))
            .await
            .unwrap();
        assert_eq!(sum, json!({ "sum": 7 }));

        // Refused locally, against the advertised schema, with the pointer.
        let err = registry
            .call("remote.fixture.add", json!({ "a": 3, "b": 4000 }))
            .await
            .unwrap_err();
        assert_eq!(err.code().as_str(), "input_invalid");
        assert_eq!(err.violations()[0].pointer, "/b");
        assert_eq!(
            audit.records().last().unwrap().attempts,
            0,
            "nothing was sent"
        );

        // The remote tool's own error keeps its code.
        let err = registry
            .call("remote.fixture.refuse", json!({ "text": "x" }))
            .await
            .unwrap_err();
        assert_eq!(err.code().as_str(), "ledger:closed");

        // Read-only remote tools need no approval; the others are gated locally, and the
        // remote server still asks its own client (which cannot answer here).
        assert!(
            registry
                .contract("remote.fixture.add")
                .unwrap()
                .mutates
                .is_empty()
        );
        assert_eq!(
            registry.contract("remote.fixture.record").unwrap().mutates,
            vec!["external:mcp/remote".to_owned()]
        );
        let err = registry
            .call("remote.fixture.record", json!({ "text": "x" }))
            .await
            .unwrap_err();
        assert_eq!(err.code().as_str(), "approval_denied");

        // The client speaks 2026-07-28 with this server, where a bare number is a structured
        // output with its schema: it comes back as the number.
        assert_eq!(
            client
                .peer()
                .peer_info()
                .map(|info| info.protocol_version.to_string()),
            Some("2026-07-28".to_owned())
        );
        let counted = registry
            .call("remote.fixture.count", json!({ "text": "a b" }))
            .await
            .unwrap();
        assert_eq!(counted, json!(2));
        client.close().await.unwrap();
    });
}

#[test]
fn importing_twice_into_one_registry_names_every_refused_tool() {
    runtime().block_on(async {
        let client = McpClient::spawn(fixture_command("stdio")).await.unwrap();
        // The client names the server it is connected to.
        let debug = format!("{client:?}");
        assert_eq!(debug, "McpClient { server: Some(\"agent-io-fixture\") }");
        let mut registry = ToolRegistry::new();
        client.import_into(&mut registry, "remote").await.unwrap();
        let err = client
            .import_into(&mut registry, "remote")
            .await
            .unwrap_err();
        let ClientError::Refused(refused) = &err else {
            panic!("{err}")
        };
        assert_eq!(refused.len(), 5, "{err}");
        assert!(err.to_string().contains("fixture.add"), "{err}");
        client.close().await.unwrap();
    });
}

/// `close` waits for the connection's cleanup: for a child process, that it has exited and
/// been reaped. (Dropping the client instead cancels it too, but in the background: the child
/// is still running when the drop returns.) A current-thread runtime, so nothing runs behind
/// the test's back while it looks.
#[cfg(target_os = "linux")]
#[test]
fn closing_a_spawned_client_waits_for_its_child_to_exit() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let mut command = tokio::process::Command::new("sh");
    command.arg("-c").arg(format!(
        "echo $$ > '{}'; exec '{}' stdio",
        pid_file.display(),
        env!("CARGO_BIN_EXE_mcp-fixture")
    ));
    runtime.block_on(async {
        let client = McpClient::spawn(command).await.unwrap();
        assert_eq!(client.list_tools().await.unwrap().len(), 5);
        let pid = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .to_owned();
        let proc_entry = std::path::PathBuf::from(format!("/proc/{pid}"));
        assert!(proc_entry.exists(), "the child runs while connected");
        client.close().await.unwrap();
        assert!(
            !proc_entry.exists(),
            "the child {pid} is still there after close"
        );
    });
}

mod core_as_tool {
    use super::*;
    use agentio_core::{AgentContext, AgentCore, AgentError, AgentInput, AgentOutput};
    use agentio_tools::{CoreTool, Export};
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    #[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
    struct Question {
        #[schemars(length(min = 1))]
        text: String,
    }

    #[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
    struct Reply {
        text: String,
        turn: u32,
    }

    /// Echoes in capitals and counts its turns: state that calls must not interleave on.
    struct Shouter {
        turns: u32,
    }

    impl AgentCore for Shouter {
        type Input = Question;
        type Output = Reply;

        fn core_type(&self) -> &str {
            "shouter"
        }

        async fn run_turn(
            &mut self,
            q: Question,
            _ctx: &mut AgentContext,
        ) -> Result<Reply, AgentError> {
            self.turns += 1;
            Ok(Reply {
                text: q.text.to_uppercase(),
                turn: self.turns,
            })
        }
    }

    #[test]
    fn an_agent_core_is_exported_and_served_like_any_tool() {
        runtime().block_on(async {
            let core = CoreTool::new(
                "agents.shouter",
                "1.0.0",
                "Shouts back.",
                Shouter { turns: 0 },
            )
            .unwrap()
            .with_contract(|c| c.tags = vec!["agents".into()])
            .unwrap();
            let mut registry = ToolRegistry::new();
            registry.register_plugin(Arc::new(core)).unwrap();
            for target in [
                Export::OpenAiChat { strict: false },
                Export::Anthropic,
                Export::Gemini,
                Export::Mcp,
            ] {
                assert_eq!(registry.export(target).unwrap().len(), 1, "{target:?}");
            }
            let (client, _) = connect(TestClient::new(None), registry).await;
            let tools = all_tools(&client).await;
            assert_eq!(tools[0].name, "agents.shouter");
            assert!(tools[0].output_schema.is_some());
            for turn in 1..=2 {
                let result = client
                    .call_tool(call("agents.shouter", json!({ "text": "hi" })))
                    .await
                    .unwrap();
                assert_eq!(
                    result.structured_content,
                    Some(json!({ "text": "HI", "turn": turn }))
                );
            }
            // The core's own schema is enforced.
            let bad = client
                .call_tool(call("agents.shouter", json!({ "text": "" })))
                .await
                .unwrap();
            assert_eq!(envelope_of(&bad)["error"]["code"], "input_invalid");
        });
    }

    #[test]
    fn a_core_tool_refuses_an_invalid_contract() {
        let err = CoreTool::new("Not An Id", "1.0.0", "x", Shouter { turns: 0 }).unwrap_err();
        assert!(err.problems.iter().any(|p| p.pointer == "/id"), "{err}");
        let err = CoreTool::new("agents.ok", "1.0.0", "x", Shouter { turns: 0 })
            .unwrap()
            .with_contract(|c| c.timeout_ms = 0)
            .unwrap_err();
        assert!(
            err.problems.iter().any(|p| p.pointer == "/timeout_ms"),
            "{err}"
        );
    }
}

#[test]
fn a_page_size_that_divides_the_tools_ends_without_an_empty_page() {
    runtime().block_on(async {
        let server = McpServer::new(mcp_fixture::registry())
            .unwrap()
            .with_page_size(5);
        assert_eq!(server.tools().len(), 5);
        let client = crate::mcp_common::connect_initialize(TestClient::new(None), server).await;
        let page = client.list_tools(None).await.unwrap();
        assert_eq!(page.tools.len(), 5);
        assert_eq!(page.next_cursor, None);
        // A cursor at the end is one this server never gives out, but it is not past the end:
        // it names an empty page, not an error.
        let end = client
            .list_tools(Some(
                PaginatedRequestParams::default().with_cursor(Some("5".into())),
            ))
            .await
            .unwrap();
        assert!(end.tools.is_empty());
        let past = client
            .list_tools(Some(
                PaginatedRequestParams::default().with_cursor(Some("6".into())),
            ))
            .await;
        assert!(past.is_err());
        let junk = client
            .list_tools(Some(
                PaginatedRequestParams::default().with_cursor(Some("page-two".into())),
            ))
            .await;
        assert!(junk.is_err());
    });
}

/// A tool whose output is not an object (a list): MCP's `structuredContent` is an object, so
/// the answer is the text block alone.
#[test]
fn an_output_that_is_not_an_object_is_answered_as_text_only() {
    use agentio_tools::{ToolContext, ToolContract, ToolError, ToolPlugin};

    struct List;
    impl ToolPlugin for List {
        fn tool_contract(&self) -> ToolContract {
            ToolContract::new(
                "list.numbers",
                "1.0.0",
                "Lists numbers.",
                json!({ "type": "object" }),
                json!({ "type": "array", "items": { "type": "integer" } }),
            )
        }
        fn execute<'a>(
            &'a self,
            _input: Value,
            _ctx: &'a ToolContext,
        ) -> futures::future::BoxFuture<'a, Result<Value, ToolError>> {
            Box::pin(async { Ok(json!([1, 2, 3])) })
        }
    }

    runtime().block_on(async {
        let mut registry = ToolRegistry::new();
        registry.register_plugin(Arc::new(List)).unwrap();
        let server = McpServer::new(registry).unwrap();
        let client = crate::mcp_common::connect_initialize(TestClient::new(None), server).await;
        let result = client
            .call_tool(call("list.numbers", json!({})))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(false));
        assert_eq!(result.structured_content, None);
        assert_eq!(text_of(&result), "[1,2,3]");
    });
}

/// One stateless (2026-07-28) `tools/call` of `name` posted raw to `addr`, with `meta` merged
/// into the request's `_meta`: the status and the whole answer.
async fn post_2026(
    addr: std::net::SocketAddr,
    name: &str,
    arguments: Value,
    meta: Value,
) -> (u16, String) {
    let mut request_meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "raw", "version": "1" },
    });
    request_meta
        .as_object_mut()
        .unwrap()
        .extend(meta.as_object().unwrap().clone());
    let body = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": { "name": name, "arguments": arguments, "_meta": request_meta },
    })
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {name}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    crate::mcp_common::raw_http(addr, &request).await
}

/// The head and body of a `200` answer of this `Content-Type`.
fn answered_as<'a>((status, answer): &'a (u16, String), content_type: &str) -> (&'a str, &'a str) {
    assert_eq!(*status, 200, "{answer}");
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let said = crate::mcp_common::header(head, "content-type").unwrap_or_default();
    assert!(said.starts_with(content_type), "{head}");
    (head, body)
}

/// On the stateless revision a call whose first message is its answer is answered as one JSON
/// body (rmcp's `json_response`, which `McpServer::default_http_config` turns on); a call that
/// reports progress first is answered as an event stream, the progress before the result, so
/// nothing is lost.
#[test]
fn on_2026_07_28_over_http_an_answer_alone_is_json_and_progress_makes_a_stream() {
    runtime().block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = McpServer::new(mcp_fixture::registry()).unwrap();
        let serving = tokio::spawn(server.serve_http(listener));

        for (name, arguments, expected) in [
            (
                "fixture.add",
                json!({ "a": 1, "b": 2 }),
                json!({ "sum": 3 }),
            ),
            ("fixture.work", json!({ "steps": 1 }), json!({ "steps": 1 })),
        ] {
            let answer = post_2026(addr, name, arguments, json!({})).await;
            let (head, body) = answered_as(&answer, "application/json");
            assert_eq!(
                crate::mcp_common::header(head, "content-length"),
                Some(body.len().to_string().as_str()),
                "{head}"
            );
            let message: Value = serde_json::from_str(body).unwrap();
            assert_eq!(message["id"], 7, "{message}");
            assert_eq!(
                message["result"]["structuredContent"], expected,
                "{message}"
            );
        }

        // A tool error is an answer too.
        let answer = post_2026(addr, "fixture.refuse", json!({ "text": "x" }), json!({})).await;
        let (_, body) = answered_as(&answer, "application/json");
        let message: Value = serde_json::from_str(body).unwrap();
        assert_eq!(message["result"]["isError"], true, "{message}");

        // Progress asked for: an event stream, two reports and then the result.
        let answer = post_2026(
            addr,
            "fixture.work",
            json!({ "steps": 2 }),
            json!({ "progressToken": "p" }),
        )
        .await;
        let (_, body) = answered_as(&answer, "text/event-stream");
        let messages: Vec<Value> = body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str(data.trim()).ok())
            .collect();
        let methods: Vec<&str> = messages
            .iter()
            .map(|m| m["method"].as_str().unwrap_or("(answer)"))
            .collect();
        assert_eq!(
            methods,
            [
                "notifications/progress",
                "notifications/progress",
                "(answer)"
            ],
            "{body}"
        );
        assert_eq!(messages[1]["params"]["progress"], 2.0, "{body}");
        assert_eq!(
            messages[2]["result"]["structuredContent"],
            json!({ "steps": 2 })
        );
        serving.abort();
    });
}

/// `tool` alone served over streamable HTTP with `places` places a worker in the gate: the
/// address, and the task (abort it at the end).
async fn serve_gated(
    tool: impl agentio_tools::TypedTool,
    places: usize,
) -> (
    std::net::SocketAddr,
    tokio::task::JoinHandle<Result<(), agentio_mcp::ServeError>>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut registry = ToolRegistry::new();
    registry.register(tool).unwrap();
    let server = McpServer::new(registry)
        .unwrap()
        .with_calls_per_worker(places);
    (addr, tokio::spawn(server.serve_http(listener)))
}

/// Nothing, for `gate.meet`.
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput)]
struct Nothing {}

/// Whether `gate.meet` met another call.
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentOutput)]
struct Met {
    /// Met.
    met: bool,
}

/// Where two calls of `gate.meet` meet.
static MEETING: std::sync::LazyLock<tokio::sync::Barrier> =
    std::sync::LazyLock::new(|| tokio::sync::Barrier::new(2));

/// Waits, up to 5 s, until a second call of it is running too.
#[agentio_tools::tool(id = "gate.meet")]
async fn meet(_: Nothing) -> Result<Met, agentio_tools::ToolError> {
    let met = tokio::time::timeout(Duration::from_secs(5), MEETING.wait())
        .await
        .is_ok();
    Ok(Met { met })
}

/// The gate in front of calls (`with_calls_per_worker`) bounds the calls that keep the server
/// busy, not those waiting on something else: with one place on a one-worker runtime, a call
/// whose tool waits gives its place up once the runtime has nothing to run, so a second call
/// runs beside it (the two meet) instead of waiting for it to end (each would wait alone, 5 s).
#[test]
fn a_call_waiting_on_something_else_does_not_hold_its_place_in_the_gate() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (addr, serving) = serve_gated(MeetTool, 1).await;
        let (first, second) = tokio::join!(
            post_2026(addr, "gate.meet", json!({}), json!({})),
            post_2026(addr, "gate.meet", json!({}), json!({})),
        );
        for answer in [&first, &second] {
            let (_, body) = answered_as(answer, "application/json");
            assert!(
                body.contains(r#""structuredContent":{"met":true}"#),
                "{body}"
            );
        }
        serving.abort();
    });
}

/// The calls of `gate.count` under way now, and the most ever at once.
static COUNTING: Mutex<(usize, usize)> = Mutex::new((0, 0));

/// Counts itself in [`COUNTING`] while it waits 20 ms on a timer.
#[agentio_tools::tool(id = "gate.count")]
async fn count(_: Nothing) -> Result<Met, agentio_tools::ToolError> {
    {
        let mut counting = COUNTING.lock().unwrap();
        counting.0 += 1;
        counting.1 = counting.1.max(counting.0);
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    COUNTING.lock().unwrap().0 -= 1;
    Ok(Met { met: true })
}

/// On a runtime that never parks (a task always ready to run), `with_calls_per_worker(1)`
/// runs one call at a time, and `0` sets no bound: three calls at once run one by one, or
/// together. Only calls wait for a place: a `GET` sent behind them is answered while they
/// run. Once the server is dropped, nothing of it runs on (its gate's warden included).
#[test]
fn on_a_busy_server_the_gate_bounds_the_calls_that_run_at_once() {
    for (places, most) in [(1, 1), (0, 3)] {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            *COUNTING.lock().unwrap() = (0, 0);
            let (addr, serving) = serve_gated(CountTool, places).await;
            // Always something to run: the runtime never parks, so a place is never given up.
            let busy = Arc::new(std::sync::atomic::AtomicBool::new(true));
            let spinner = tokio::spawn({
                let busy = busy.clone();
                async move {
                    while busy.load(std::sync::atomic::Ordering::Relaxed) {
                        tokio::task::yield_now().await;
                    }
                }
            });
            let call = || post_2026(addr, "gate.count", json!({}), json!({}));
            let get = async {
                tokio::time::sleep(Duration::from_millis(5)).await;
                let request = format!(
                    "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n"
                );
                let (status, _) = crate::mcp_common::raw_http(addr, &request).await;
                // Not a stream (no session): an answer at once, while the calls run.
                assert_ne!(status, 200);
                COUNTING.lock().unwrap().0
            };
            let (answers, under_way) =
                futures::future::join(futures::future::join3(call(), call(), call()), get).await;
            assert!(under_way > 0, "the GET waited for the calls to end");
            busy.store(false, std::sync::atomic::Ordering::Relaxed);
            spinner.await.unwrap();
            for answer in [&answers.0, &answers.1, &answers.2] {
                let (_, body) = answered_as(answer, "application/json");
                assert!(body.contains(r#""met":true"#), "{body}");
            }
            assert_eq!(
                COUNTING.lock().unwrap().1,
                most,
                "{places} place(s) a worker"
            );
            serving.abort();
            let _ = serving.await;
            for _ in 0..10 {
                tokio::task::yield_now().await;
            }
            let alive = tokio::runtime::Handle::current().metrics().num_alive_tasks();
            assert_eq!(alive, 0, "tasks of a dropped server run on");
        });
    }
}

/// Set once the client has read the head of `head.spin`'s answer.
static HEAD_READ: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Keeps its worker busy, never waiting, until the client has read its answer's head (up to
/// 5 s): whether it saw that.
#[agentio_tools::tool(id = "head.spin")]
async fn spin(_: Nothing) -> Result<Met, agentio_tools::ToolError> {
    let started = std::time::Instant::now();
    while !HEAD_READ.load(std::sync::atomic::Ordering::SeqCst)
        && started.elapsed() < Duration::from_secs(5)
    {
        std::hint::spin_loop();
    }
    Ok(Met {
        met: HEAD_READ.load(std::sync::atomic::Ordering::SeqCst),
    })
}

/// A call alone on the server in a session gets its answer's head when the call starts, before
/// its tool runs (`crate::front` in agentio-mcp: the client is woken while the tool runs). On a
/// one-worker runtime a tool that keeps the worker busy leaves no time to write anything until
/// it ends: it sees the head read only if the head went out before it ran.
#[test]
fn a_call_alone_in_a_session_gets_its_head_before_its_tool_runs() {
    use crate::mcp_common::{INITIALIZE, INITIALIZED, raw_http, session_of, session_request};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = server
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let mut registry = ToolRegistry::new();
    registry.register(SpinTool).unwrap();
    let serving = server.spawn(McpServer::new(registry).unwrap().serve_http(listener));
    let post = |session: Option<&str>, body: &str| {
        session_request(addr, "POST", session, "application/json", body)
    };
    runtime().block_on(async {
        let (status, answer) = raw_http(addr, &post(None, INITIALIZE)).await;
        assert_eq!(status, 200, "{answer}");
        let session = session_of(&answer);
        let (status, answer) = raw_http(addr, &post(Some(&session), INITIALIZED)).await;
        assert_eq!(status, 202, "{answer}");

        let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"head.spin","arguments":{}}}"#;
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(post(Some(&session), call).as_bytes())
            .await
            .unwrap();
        let mut answer = Vec::new();
        let mut buffer = [0; 4096];
        while !answer.windows(4).any(|w| w == b"\r\n\r\n") {
            let read = stream.read(&mut buffer).await.unwrap();
            assert!(read > 0, "closed before the head");
            answer.extend_from_slice(&buffer[..read]);
        }
        HEAD_READ.store(true, std::sync::atomic::Ordering::SeqCst);
        stream.read_to_end(&mut answer).await.unwrap();
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(
            answer.contains(r#""structuredContent":{"met":true}"#),
            "{answer}"
        );
    });
    serving.abort();
}
