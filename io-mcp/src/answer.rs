//! The client's side of a server's questions: [`Connect`] (how an [`McpClient`] connects and who
//! answers for it) and the input-required rounds of a `tools/call`.
//!
//! A server may ask its client things in the middle of a call: to sample the client's model
//! (`sampling/createMessage`), to ask the user (`elicitation/create`), to list its roots. Under
//! MCP 2025-11-25 it sends those as requests of its own; under 2026-07-28 it answers the call with
//! an `input_required` result carrying the questions and an opaque request state, and the client
//! calls again with the answers and the state (SEP-2322). Either way the answers come from one
//! place: an rmcp [`ClientHandler`] the host gives [`Connect::handler`] — the same trait an rmcp
//! client implements, composed rather than rewritten. Its [`ClientHandler::get_info`] declares
//! the capabilities the client announces; without a handler the client declares none and
//! answers every question with rmcp's "method not found", so a server that asks anyway gets a
//! refusal at once, never a hang.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientResult, ErrorData, InputRequest,
    InputRequiredResult, InputResponses, NumberOrString, ProtocolVersion, ServerNotification,
    ServerRequest,
};
use rmcp::service::{
    DynService, NotificationContext, RequestContext, Service, ServiceError, ServiceExt,
};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ClientLifecycleMode, Peer, RoleClient};

use crate::client::{ClientError, DEFAULT_REQUEST_TIMEOUT, McpClient, clipped};

/// How many `input_required` answers one call follows before it is refused (rmcp's own cap).
pub const MAX_INPUT_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

/// How many questions one `input_required` answer may ask; a server asking more is refused
/// before the handler sees any of them.
pub const MAX_INPUT_REQUESTS: usize = 32;

/// The host's handler as the running service: shared, so that an imported tool's call can put
/// a 2026-07-28 server's questions to the same handler that answers a 2025-11-25 server's
/// requests.
#[derive(Clone)]
pub(crate) struct Answerer(Arc<dyn DynService<RoleClient>>);

impl Answerer {
    fn of<H: ClientHandler>(handler: H) -> Self {
        Answerer(Arc::from(handler.into_dyn()))
    }
}

impl Service<RoleClient> for Answerer {
    fn handle_request(
        &self,
        request: ServerRequest,
        context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<ClientResult, ErrorData>> + Send + '_ {
        self.0.handle_request(request, context)
    }

    fn handle_notification(
        &self,
        notification: ServerNotification,
        context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = Result<(), ErrorData>> + Send + '_ {
        self.0.handle_notification(notification, context)
    }

    fn get_info(&self) -> rmcp::model::ClientConfig {
        self.0.get_info()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.0.supported_protocol_versions()
    }
}

/// How an [`McpClient`] connects: who answers the server's questions ([`Self::handler`]), which
/// lifecycle it speaks ([`Self::lifecycle`]), then the transport ([`Self::http`],
/// [`Self::http_with_token`], [`Self::http_authorized`] with the `oauth` feature,
/// [`Self::spawn`], [`Self::io`]). [`McpClient::connect_http`] and its siblings are this with
/// the defaults: no handler, rmcp's `Auto` lifecycle preferring 2026-07-28.
///
/// Here a client whose user accepts every question with the answer the server suggested:
///
/// ```
/// use agentio_mcp::McpClient;
/// use agentio_mcp::rmcp::model::{
///     ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
///     ElicitationCapability, ErrorData,
/// };
/// use agentio_mcp::rmcp::service::RequestContext;
/// use agentio_mcp::rmcp::{ClientHandler, RoleClient};
///
/// struct AcceptAll;
///
/// impl ClientHandler for AcceptAll {
///     fn get_info(&self) -> ClientConfig {
///         let mut info = ClientConfig::default();
///         info.capabilities.elicitation = Some(ElicitationCapability::default());
///         info
///     }
///
///     async fn create_elicitation(
///         &self,
///         _request: ElicitRequestParams,
///         _context: RequestContext<RoleClient>,
///     ) -> Result<ElicitResult, ErrorData> {
///         Ok(ElicitResult::new(ElicitationAction::Accept).with_content(serde_json::json!({})))
///     }
/// }
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let client = McpClient::builder().handler(AcceptAll).http("http://127.0.0.1:8080/mcp").await?;
/// # Ok(()) }
/// ```
///
/// (A served example, with a tool asking and the handler answering under both protocol
/// revisions, is `tests/tests/mcp_client_answers.rs`.)
#[must_use = "a Connect does nothing until one of its transports is chosen"]
pub struct Connect {
    answerer: Answerer,
    lifecycle: ClientLifecycleMode,
}

impl Default for Connect {
    fn default() -> Self {
        Connect {
            answerer: Answerer::of(()),
            lifecycle: ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: None,
            },
        }
    }
}

impl std::fmt::Debug for Connect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connect")
            .field(
                "capabilities",
                &Service::get_info(&self.answerer).capabilities,
            )
            .field("lifecycle", &self.lifecycle)
            .finish()
    }
}

impl Connect {
    /// The rmcp [`ClientHandler`] that answers the server: its `get_info` is what the client
    /// announces (capabilities, client info), its `create_message`, `create_elicitation` and
    /// `list_roots` answer the server's questions under either protocol revision, and its
    /// notification methods receive the server's logs and progress.
    pub fn handler<H: ClientHandler>(mut self, handler: H) -> Self {
        self.answerer = Answerer::of(handler);
        self
    }

    /// The lifecycle: rmcp's `Auto` preferring 2026-07-28 by default (`server/discover`, falling
    /// back to `initialize` with an older server), `Initialize` to speak only the handshake of
    /// 2025-11-25 and earlier, `Discover` to require 2026-07-28.
    pub fn lifecycle(mut self, lifecycle: ClientLifecycleMode) -> Self {
        self.lifecycle = lifecycle;
        self
    }

    /// Connects to a streamable HTTP endpoint (see [`McpClient::connect_http`]).
    pub async fn http(self, url: &str) -> Result<McpClient, ClientError> {
        let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
        self.handshake(transport).await
    }

    /// Connects to a streamable HTTP endpoint, sending `token` as `Authorization: Bearer
    /// <token>` on every request (see [`McpClient::connect_http_with_token`]).
    pub async fn http_with_token(self, url: &str, token: &str) -> Result<McpClient, ClientError> {
        let config =
            StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(token);
        self.handshake(StreamableHttpClientTransport::from_config(config))
            .await
    }

    /// Connects to a streamable HTTP endpoint that is an OAuth protected resource, with the
    /// tokens of rmcp's [`AuthorizationManager`](rmcp::transport::AuthorizationManager): the
    /// manager an [`OAuthState`](rmcp::transport::auth::OAuthState) flow ends with (protected
    /// resource and authorization server metadata discovered, the client registered or
    /// pre-registered, the code exchanged with PKCE). Each request carries the manager's
    /// current access token, refreshed when it expires.
    ///
    /// ```no_run
    /// use agentio_mcp::McpClient;
    /// use agentio_mcp::rmcp::transport::auth::{
    ///     AuthorizationCallback, AuthorizationRequest, OAuthState,
    /// };
    ///
    /// # async fn run(redirect_from_browser: String) -> Result<(), Box<dyn std::error::Error>> {
    /// let url = "https://mcp.example.com/mcp";
    /// let mut oauth = OAuthState::new(url, None).await?;
    /// let request = AuthorizationRequest::new("http://localhost:3000/callback")
    ///     .with_client_name("my-agent");
    /// oauth.start_authorization(request).await?;
    /// println!("open {}", oauth.get_authorization_url().await?);
    /// // ... the user signs in; the browser lands on the redirect URI ...
    /// let callback = AuthorizationCallback::from_redirect_url(&redirect_from_browser)?;
    /// oauth
    ///     .handle_callback_with_issuer(&callback.code, &callback.csrf_token, callback.issuer.as_deref())
    ///     .await?;
    /// let manager = oauth.into_authorization_manager().ok_or("not authorized")?;
    /// let client = McpClient::builder().http_authorized(url, manager).await?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "oauth")]
    pub async fn http_authorized(
        self,
        url: &str,
        manager: rmcp::transport::AuthorizationManager,
    ) -> Result<McpClient, ClientError> {
        let client = rmcp::transport::AuthClient::new(reqwest::Client::default(), manager);
        let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
        self.handshake(StreamableHttpClientTransport::with_client(client, config))
            .await
    }

    /// Starts `command` as a child process and speaks MCP over its stdin and stdout (see
    /// [`McpClient::spawn`]).
    pub async fn spawn(self, command: tokio::process::Command) -> Result<McpClient, ClientError> {
        let transport =
            TokioChildProcess::new(command).map_err(|e| ClientError::Connect(e.to_string()))?;
        self.handshake(transport).await
    }

    /// Speaks MCP over a byte stream pair (see [`McpClient::connect_io`]).
    pub async fn io<R, W>(
        self,
        read: R,
        write: W,
        max_message_bytes: usize,
    ) -> Result<McpClient, ClientError>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        let transport: AsyncRwTransport<RoleClient, R, W> =
            AsyncRwTransport::new(read, write).with_max_line_length(max_message_bytes);
        self.handshake(transport).await
    }

    /// The handshake, bounded by the default request timeout: a server that never answers is a
    /// timeout, not a hang.
    async fn handshake<T, E, A>(self, transport: T) -> Result<McpClient, ClientError>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let answerer = self.answerer.clone();
        let connected =
            rmcp::ClientServiceExt::serve_with_lifecycle(self.answerer, transport, self.lifecycle);
        match tokio::time::timeout(DEFAULT_REQUEST_TIMEOUT, connected).await {
            Ok(Ok(service)) => Ok(McpClient::of(service, answerer)),
            Ok(Err(e)) => Err(match e.auth_challenge() {
                Some(challenge) => ClientError::Unauthorized {
                    challenge: clipped(challenge.to_owned()),
                },
                None => ClientError::Connect(clipped(e.to_string())),
            }),
            Err(_) => Err(ClientError::Timeout {
                request: "server/discover or initialize",
                after: DEFAULT_REQUEST_TIMEOUT,
            }),
        }
    }
}

/// One `tools/call`, following the server's `input_required` answers: each round's questions
/// go to the handler (all of a round's at once), and the call is sent again with the answers
/// and the server's request state, echoed untouched. Bounded: [`MAX_INPUT_ROUNDS`] rounds,
/// [`MAX_INPUT_REQUESTS`] questions a round; a round with neither questions nor state is a
/// protocol error; a round with state alone (the server still working) waits a little longer
/// each time, up to 250 ms, as rmcp's own helper does.
pub(crate) async fn call_tool(
    peer: &Peer<RoleClient>,
    answerer: &Answerer,
    mut params: CallToolRequestParams,
) -> Result<CallToolResult, CallFailure> {
    let mut waiting_rounds = 0u32;
    for _round in 0..MAX_INPUT_ROUNDS {
        let required = match peer.call_tool_once(params.clone()).await {
            Ok(CallToolResponse::Complete(result)) => return Ok(result),
            Ok(CallToolResponse::InputRequired(required)) => required,
            Ok(_) => {
                return Err(CallFailure::Protocol(
                    "the server answered the call with a task, which this client did not ask for"
                        .into(),
                ));
            }
            Err(e) => return Err(CallFailure::Service(e)),
        };
        let InputRequiredResult {
            input_requests,
            request_state,
            ..
        } = required;
        let questions = input_requests.unwrap_or_default();
        if questions.is_empty() && request_state.is_none() {
            return Err(CallFailure::Protocol(
                "the server asked for input without a question or a request state".into(),
            ));
        }
        if questions.len() > MAX_INPUT_REQUESTS {
            return Err(CallFailure::Protocol(format!(
                "the server asked {} questions in one round; this client answers at most {MAX_INPUT_REQUESTS}",
                questions.len()
            )));
        }
        if questions.is_empty() {
            let millis = (50u64 << waiting_rounds.min(3)).min(250);
            tokio::time::sleep(Duration::from_millis(millis)).await;
            waiting_rounds += 1;
        } else {
            waiting_rounds = 0;
        }
        let answers = futures::future::try_join_all(
            questions
                .into_iter()
                .map(|(key, question)| answer(peer, answerer, key, question)),
        )
        .await?;
        params.input_responses =
            (!answers.is_empty()).then(|| answers.into_iter().collect::<InputResponses>());
        params.request_state = request_state;
    }
    Err(CallFailure::Protocol(format!(
        "the server still asked for input after {MAX_INPUT_ROUNDS} rounds"
    )))
}

/// One question, answered by the handler; its refusal names the question.
async fn answer(
    peer: &Peer<RoleClient>,
    answerer: &Answerer,
    key: String,
    question: InputRequest,
) -> Result<(String, serde_json::Value), CallFailure> {
    let (asked, request) = match question {
        InputRequest::CreateMessage(r) => ("sampling", ServerRequest::CreateMessageRequest(r)),
        InputRequest::Elicitation(r) => ("elicitation", ServerRequest::ElicitRequest(r)),
        InputRequest::ListRoots(r) => ("roots", ServerRequest::ListRootsRequest(r)),
        _ => {
            return Err(CallFailure::Refused {
                asked: "a kind of input",
                reason: "this client knows sampling, elicitation and roots only".into(),
            });
        }
    };
    let context = RequestContext::new(NumberOrString::String(key.as_str().into()), peer.clone());
    let answered = Service::handle_request(answerer, request, context)
        .await
        .map_err(|e| CallFailure::Refused {
            asked,
            reason: clipped(e.message.into_owned()),
        })?;
    let value = match answered {
        ClientResult::CreateMessageResult(r) => serde_json::to_value(r),
        ClientResult::ElicitResult(r) => serde_json::to_value(r),
        ClientResult::ListRootsResult(r) => serde_json::to_value(r),
        _ => {
            return Err(CallFailure::Refused {
                asked,
                reason: "the handler answered with another kind of result".into(),
            });
        }
    };
    let value = value.map_err(|e| CallFailure::Refused {
        asked,
        reason: e.to_string(),
    })?;
    Ok((key, value))
}

/// Why a call with input rounds did not complete.
#[derive(Debug)]
pub(crate) enum CallFailure {
    /// The transport or the server failed the request.
    Service(ServiceError),
    /// The server broke the input-required protocol (or its bounds).
    Protocol(String),
    /// The handler did not answer a question (no such capability, or it refused).
    Refused { asked: &'static str, reason: String },
}

impl std::fmt::Display for CallFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallFailure::Service(e) => write!(f, "{e}"),
            CallFailure::Protocol(reason) => f.write_str(reason),
            CallFailure::Refused { asked, reason } => write!(
                f,
                "the server asked this client for {asked}, which it did not give: {reason}"
            ),
        }
    }
}
