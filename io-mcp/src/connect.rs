//! How an [`McpClient`] connects ([`Connect`]) and who answers for it, and the constructors
//! that connect with the defaults.

use rmcp::model::ProtocolVersion;
use rmcp::service::Service;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ClientLifecycleMode, RoleClient};

use crate::answer::Answerer;
use crate::client::{ClientError, DEFAULT_REQUEST_TIMEOUT, McpClient};

/// How an [`McpClient`] connects: who answers the server's questions ([`Self::handler`]), which
/// lifecycle it speaks ([`Self::lifecycle`]), then the transport ([`Self::http`],
/// [`Self::http_with_token`], `Self::http_authorized` with the `oauth` feature,
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

    /// [`Self::http_authorized`] with DPoP (feature `dpop`): a token the authorization server
    /// issued bound to `dpop`'s key (its token requests made through
    /// [`Dpop::oauth_http_client`](crate::dpop::Dpop::oauth_http_client)) is sent as
    /// `Authorization: DPoP <token>` with a fresh proof on every request; a bearer token as
    /// `Bearer`. See [`crate::dpop`].
    #[cfg(feature = "dpop")]
    pub async fn http_authorized_dpop(
        self,
        url: &str,
        manager: rmcp::transport::AuthorizationManager,
        dpop: &crate::dpop::Dpop,
    ) -> Result<McpClient, ClientError> {
        let http = crate::dpop::DpopHttp::new(reqwest::Client::default(), dpop.clone());
        let client = rmcp::transport::AuthClient::new(http, manager);
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
            Ok(Err(e)) => Err(ClientError::refused_or(
                e.auth_challenge(),
                &e,
                ClientError::Connect,
            )),
            Err(_) => Err(ClientError::Timeout {
                request: "server/discover or initialize",
                after: DEFAULT_REQUEST_TIMEOUT,
            }),
        }
    }
}

impl McpClient {
    /// How to connect, when the defaults of [`Self::connect_http`] and its siblings are not
    /// what the host wants: a handler that answers the server's questions (sampling,
    /// elicitation, roots), another lifecycle, OAuth. See [`Connect`].
    pub fn builder() -> Connect {
        Connect::default()
    }

    /// Starts `command` as a child process and speaks MCP over its stdin and stdout.
    ///
    /// ```no_run
    /// use agentio_mcp::McpClient;
    /// use agentio_tools::ToolRegistry;
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let mut command = tokio::process::Command::new("weather-mcp-server");
    /// command.arg("--stdio");
    /// let client = McpClient::spawn(command).await?;
    /// let mut registry = ToolRegistry::new();
    /// client.import_into(&mut registry, "weather").await?;
    /// // ... calls through the registry ...
    /// client.close().await?;
    /// # Ok(()) }
    /// ```
    pub async fn spawn(command: tokio::process::Command) -> Result<Self, ClientError> {
        Self::builder().spawn(command).await
    }

    /// Speaks MCP over a byte stream pair (a socket, a pipe, an in-memory duplex), one JSON
    /// message per line; a line longer than `max_message_bytes` is dropped unread (so a reply
    /// that large never arrives, and its request times out).
    ///
    /// ```
    /// use agentio_mcp::{ClientError, McpClient};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// // A "server" that closes at once: the handshake fails, named, instead of hanging.
    /// let (ours, theirs) = tokio::io::duplex(1024);
    /// drop(theirs);
    /// let (read, write) = tokio::io::split(ours);
    /// let err = McpClient::connect_io(read, write, 1 << 20).await.unwrap_err();
    /// assert!(matches!(err, ClientError::Connect(_)), "{err}");
    /// # });
    /// ```
    pub async fn connect_io<R, W>(
        read: R,
        write: W,
        max_message_bytes: usize,
    ) -> Result<Self, ClientError>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        Self::builder().io(read, write, max_message_bytes).await
    }

    /// Connects to a streamable HTTP endpoint (`http://host:port/mcp`).
    ///
    /// Here against an agent-io server on a local port: its tool is imported, called through
    /// the local registry (validated both ways on this side too), and the connection closed.
    ///
    /// ```
    /// use agentio_mcp::{ImportOptions, McpClient, McpServer};
    /// use agentio_tools::{ToolError, ToolRegistry, tool};
    /// use serde_json::json;
    ///
    /// #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct City { name: String }
    /// #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Greeting { text: String }
    ///
    /// /// Greets a city.
    /// #[tool(id = "greet")]
    /// async fn greet(city: City) -> Result<Greeting, ToolError> {
    ///     Ok(Greeting { text: format!("Hello, {}!", city.name) })
    /// }
    ///
    /// tokio::runtime::Runtime::new()?.block_on(async {
    ///     let mut served = ToolRegistry::new();
    ///     served.register(GreetTool)?;
    ///     let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    ///     let url = format!("http://{}/mcp", listener.local_addr()?);
    ///     tokio::spawn(McpServer::new(served)?.serve_http(listener));
    ///
    ///     let client = McpClient::connect_http(&url).await?;
    ///     assert!(client.peer().peer_info().is_some(), "the server introduced itself");
    ///     assert_eq!(client.list_tools().await?[0].name, "greet");
    ///
    ///     let mut registry = ToolRegistry::new();
    ///     // Untrusted (the default): the server's own "read-only" claim lowers nothing.
    ///     let mut untrusted = ToolRegistry::new();
    ///     client.import_into(&mut untrusted, "remote").await?;
    ///     let gated = untrusted.call("remote.greet", json!({ "name": "Oslo" })).await.unwrap_err();
    ///     assert_eq!(gated.code().as_str(), "approval_denied");
    ///     // Our own server, so the host trusts it, explicitly.
    ///     let trusted = ImportOptions::default().trusted();
    ///     let imported = client.import_into_with(&mut registry, "remote", &trusted).await?;
    ///     assert_eq!(imported[0].tool_id, "remote.greet");
    ///     let out = registry.call("remote.greet", json!({ "name": "Oslo" })).await?;
    ///     assert_eq!(out, json!({ "text": "Hello, Oslo!" }));
    ///     // The advertised input schema is enforced here, before anything is sent.
    ///     let refused = registry.call("remote.greet", json!({ "name": 7 })).await.unwrap_err();
    ///     assert_eq!(refused.code().as_str(), "input_invalid");
    ///     client.close().await?;
    ///     Ok::<(), Box<dyn std::error::Error>>(())
    /// })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn connect_http(url: &str) -> Result<Self, ClientError> {
        Self::builder().http(url).await
    }

    /// [`Self::connect_http`], sending `token` as `Authorization: Bearer <token>` on every
    /// request, for a server that is an OAuth protected resource (the MCP authorization
    /// spec). rmcp's transport bounds each reply (16 MiB of JSON, 16 MiB per SSE event).
    pub async fn connect_http_with_token(url: &str, token: &str) -> Result<Self, ClientError> {
        Self::builder().http_with_token(url, token).await
    }
}
