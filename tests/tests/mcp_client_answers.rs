//! Our client answering a server's questions (`McpClient::builder().handler(..)`): the host's
//! rmcp `ClientHandler` answers an agent-io server's elicitation and sampling under 2025-11-25
//! (requests from the server) and 2026-07-28 (`input_required` rounds, the request state echoed),
//! through `McpClient::call_tool` and through an imported tool; a client without the capability
//! is refused at once; a server that lies about its rounds is bounded; and a refused
//! authorization is a named error carrying the server's challenge.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agentio_mcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequestParams,
    ErrorData, InputRequest, InputRequests, InputRequiredResult, ProtocolVersion, Request,
    ServerCapabilities, ServerConfig,
};
use agentio_mcp::rmcp::service::RequestContext;
use agentio_mcp::rmcp::{ClientLifecycleMode, RoleServer, ServerHandler};
use agentio_mcp::{
    ClientError, Connect, ImportOptions, MAX_INPUT_REQUESTS, MAX_INPUT_ROUNDS, McpClient, McpServer,
};
use agentio_tests::host_fixture::Host;
use agentio_tests::voice_fixture::registry;
use agentio_tools::ToolRegistry;
use serde_json::json;

use crate::mcp_common::{runtime, serve};

/// The host of these tests: it confirms every question (`{"sure": true}`).
fn host() -> Host {
    Host::answering(json!({ "sure": true }))
}

/// The two ways a client meets a server: `initialize` (2025-11-25: questions are requests from
/// the server) and `server/discover` (2026-07-28: questions are `input_required` results).
fn revisions() -> [(&'static str, ClientLifecycleMode); 2] {
    [
        ("2025-11-25", ClientLifecycleMode::Initialize),
        (
            "2026-07-28",
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        ),
    ]
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

#[test]
fn the_host_handler_answers_an_agentio_server_under_both_revisions() {
    runtime().block_on(async {
        for (revision, lifecycle) in revisions() {
            let host = host();
            let asked = host.asked.clone();
            let connect = McpClient::builder().handler(host).lifecycle(lifecycle);
            let client = serve(McpServer::new(registry()).unwrap(), connect).await;

            let answered = client.call_tool(call("voice.ask")).await.unwrap();
            assert_eq!(said(&answered), "sure: true", "{revision}");
            let answered = client.call_tool(call("voice.muse")).await.unwrap();
            assert_eq!(said(&answered), "host-model said hi", "{revision}");
            assert_eq!(asked.load(Ordering::SeqCst), 2, "{revision}");

            // Through an imported tool too, validated on this side: two questions, each put
            // to the host once (2026-07-28: three calls, the state carrying the first answer).
            let mut local = ToolRegistry::new();
            let trusted = ImportOptions::default().trusted();
            client
                .import_into_with(&mut local, "remote", &trusted)
                .await
                .unwrap();
            let out = local.call("remote.voice.twice", json!({})).await.unwrap();
            let expected = if revision == "2026-07-28" {
                "Accepted(Confirm { sure: true }) Accepted(Confirm { sure: true }) after 2 earlier rounds"
            } else {
                "Accepted(Confirm { sure: true }) Accepted(Confirm { sure: true }) after 0 earlier rounds"
            };
            assert_eq!(out["said"], expected, "{revision}");
            assert_eq!(asked.load(Ordering::SeqCst), 4, "{revision}");
            client.close().await.unwrap();
        }
    });
}

#[test]
fn without_a_handler_a_question_is_refused_at_once_naming_it() {
    runtime().block_on(async {
        for (revision, lifecycle) in revisions() {
            let connect = McpClient::builder().lifecycle(lifecycle);
            let client = serve(McpServer::new(registry()).unwrap(), connect).await;
            let answer =
                tokio::time::timeout(Duration::from_secs(10), client.call_tool(call("voice.ask")))
                    .await
                    .expect("refused at once, not a hang");
            // The server knows the client declared no elicitation: under 2025-11-25 its tool
            // fails (`no_route`), under 2026-07-28 the call is MCP's missing-capability error.
            let text = match answer {
                Ok(result) => {
                    assert_eq!(result.is_error, Some(true), "{revision}: {result:?}");
                    result.content[0].as_text().unwrap().text.clone()
                }
                Err(ClientError::Request(reason)) => reason,
                Err(other) => panic!("{revision}: {other}"),
            };
            assert!(text.contains("elicitation"), "{revision}: {text}");
            client.close().await.unwrap();
        }
    });
}

/// A server that answers calls with `input_required`, as its tool's name says: `too-many` asks
/// one question more than a client answers, `most` as many as it answers (then completes with
/// how many answers came back), `roots` asks for the client's roots (then completes with the
/// answer), `empty` asks an empty set of questions and keeps no state, `waiting` keeps only a
/// state forever, `again` asks the same question forever.
#[derive(Clone, Default)]
struct Lying {
    calls: Arc<AtomicUsize>,
}

fn questions(count: usize) -> InputRequests {
    let mut requests = InputRequests::new();
    for n in 0..count {
        let form = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: format!("Question {n}?"),
            requested_schema: serde_json::from_value(json!({
                "type": "object",
                "properties": { "sure": { "type": "boolean" } }
            }))
            .unwrap(),
        };
        requests.insert(
            format!("q{n}"),
            InputRequest::Elicitation(Request::new(form)),
        );
    }
    requests
}

impl ServerHandler for Lying {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if let Some(answers) = &request.input_responses {
            let text = serde_json::to_string(answers).unwrap();
            if matches!(request.name.as_ref(), "most" | "roots") {
                let done = CallToolResult::success(vec![ContentBlock::text(text)]);
                return Ok(CallToolResponse::Complete(done));
            }
        }
        let required = match request.name.as_ref() {
            "most" => InputRequiredResult::new(Some(questions(MAX_INPUT_REQUESTS)), None),
            "roots" => {
                let mut asked = InputRequests::new();
                let roots: InputRequest =
                    serde_json::from_value(json!({ "method": "roots/list" })).unwrap();
                asked.insert("roots".into(), roots);
                InputRequiredResult::new(Some(asked), None)
            }
            "too-many" => InputRequiredResult::new(Some(questions(MAX_INPUT_REQUESTS + 1)), None),
            "empty" => InputRequiredResult::new(Some(questions(0)), None),
            "waiting" => InputRequiredResult::new(None, Some("still working".into())),
            _ => InputRequiredResult::new(Some(questions(1)), Some("again".into())),
        };
        Ok(CallToolResponse::InputRequired(required))
    }
}

#[test]
fn a_server_that_lies_about_its_rounds_is_bounded_and_named() {
    runtime().block_on(async {
        let lying = Lying::default();
        let calls = lying.calls.clone();
        let host = host();
        let asked = host.asked.clone();
        let (_, discover) = revisions().into_iter().nth(1).unwrap();
        let connect = McpClient::builder().handler(host).lifecycle(discover);
        let client = serve(lying, connect).await;

        let refused = |tool: &'static str| {
            let client = &client;
            async move {
                match client.call_tool(call(tool)).await {
                    Err(ClientError::Request(reason)) => reason,
                    other => panic!("{tool}: {other:?}"),
                }
            }
        };
        // One question over the bound: refused before the host hears any of them.
        let reason = refused("too-many").await;
        assert!(
            reason.contains(&format!("asked {} questions", MAX_INPUT_REQUESTS + 1)),
            "{reason}"
        );
        assert_eq!(asked.load(Ordering::SeqCst), 0);
        assert_eq!(calls.swap(0, Ordering::SeqCst), 1);

        // As many as it answers: each is put to the host, and every answer goes back.
        let answered = client.call_tool(call("most")).await.unwrap();
        let answers: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&answered.content[0].as_text().unwrap().text).unwrap();
        assert_eq!(answers.len(), MAX_INPUT_REQUESTS);
        assert_eq!(
            answers["q0"],
            json!({ "action": "accept", "content": { "sure": true } })
        );
        assert_eq!(asked.swap(0, Ordering::SeqCst), MAX_INPUT_REQUESTS);
        assert_eq!(calls.swap(0, Ordering::SeqCst), 2);

        // The client's roots, asked in a round.
        let answered = client.call_tool(call("roots")).await.unwrap();
        let answers: serde_json::Value =
            serde_json::from_str(&answered.content[0].as_text().unwrap().text).unwrap();
        assert_eq!(answers["roots"]["roots"][0]["uri"], "file:///work");
        assert_eq!(asked.swap(0, Ordering::SeqCst), 1);
        assert_eq!(calls.swap(0, Ordering::SeqCst), 2);

        // An empty set of questions and no state (rmcp's decoding already refuses a result
        // with neither field at all).
        let reason = refused("empty").await;
        assert!(
            reason.contains("without a question or a request state"),
            "{reason}"
        );
        assert_eq!(calls.swap(0, Ordering::SeqCst), 1);

        // Forever is MAX_INPUT_ROUNDS calls, then a refusal naming the rounds. A round with
        // state alone waits longer each time (50, 100, 200, then 250 ms): 2.1 s over ten.
        for tool in ["waiting", "again"] {
            let started = std::time::Instant::now();
            let reason = refused(tool).await;
            if tool == "waiting" {
                assert!(
                    started.elapsed() >= Duration::from_millis(2_100),
                    "{:?}",
                    started.elapsed()
                );
            }
            assert!(
                reason.contains(&format!("after {MAX_INPUT_ROUNDS} rounds")),
                "{tool}: {reason}"
            );
            assert_eq!(calls.swap(0, Ordering::SeqCst), MAX_INPUT_ROUNDS, "{tool}");
        }
        // `again` asked one question a round, and each was answered.
        assert_eq!(asked.load(Ordering::SeqCst), MAX_INPUT_ROUNDS);
        client.close().await.unwrap();
    });
}

/// Over streamable HTTP, in a 2025-11-25 session of a server with an instance name: the
/// server's question arrives on the call's event stream, and the host's answer, POSTed back
/// in the session, reaches the tool (`agentio_mcp::sessions` passes it on to rmcp's session).
#[test]
fn the_host_answers_over_http_in_a_session_of_a_named_instance() {
    runtime().block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let server = McpServer::new(registry()).unwrap().with_instance("east");
        let serving = tokio::spawn(server.serve_http(listener));
        let host = host();
        let asked = host.asked.clone();
        let client = McpClient::builder()
            .handler(host)
            .lifecycle(ClientLifecycleMode::Initialize)
            .http(&url)
            .await
            .unwrap();
        let answered = tokio::time::timeout(
            std::time::Duration::from_secs(20),
            client.call_tool(call("voice.ask")),
        )
        .await
        .expect("the answer reached the tool")
        .unwrap();
        assert_eq!(said(&answered), "sure: true");
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        client.close().await.unwrap();
        serving.abort();
    });
}

#[test]
fn a_refused_authorization_is_named_with_the_servers_challenge() {
    runtime().block_on(async {
        // A protected resource that refuses every request, as an OAuth-protected MCP server
        // does a client without a token.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let challenge = r#"Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp", scope="files:read""#;
        tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                tokio::spawn(async move {
                    use tokio::io::{AsyncReadExt, AsyncWriteExt};
                    let mut request = vec![0; 64 * 1024];
                    let _ = socket.read(&mut request).await;
                    let answer = format!(
                        "HTTP/1.1 401 Unauthorized\r\nwww-authenticate: {challenge}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                    );
                    let _ = socket.write_all(answer.as_bytes()).await;
                });
            }
        });
        for (revision, lifecycle) in revisions() {
            let refused = McpClient::builder()
                .lifecycle(lifecycle)
                .http(&url)
                .await
                .unwrap_err();
            let ClientError::Unauthorized { challenge: heard } = &refused else {
                panic!("{revision}: {refused}");
            };
            assert_eq!(heard, challenge, "{revision}");
            assert!(refused.to_string().contains("refused the request's authorization"));
        }
    });
}

#[test]
fn a_connect_shows_what_the_client_will_announce() {
    let shown = format!("{:?}", McpClient::builder().handler(host()));
    assert!(shown.contains("elicitation: Some"), "{shown}");
    assert!(shown.contains("Auto"), "{shown}");
    let plain = format!("{:?}", Connect::default());
    assert!(plain.contains("elicitation: None"), "{plain}");
}
