//! [`McpServer`]: a [`ToolRegistry`] served over MCP through rmcp's `ServerHandler`.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::task::Poll;

use agentio_tools::{
    Approval, ApprovalDecision, ApprovalRequest, Approver, CallOptions, Caller, Cancellation,
    CostClass, Export, ExportError, ProgressReporter, ToolError, ToolRegistry,
};
use hyper_util::rt::TokioIo;
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    Implementation, InputRequest, InputRequests, InputRequiredResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, Request, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler};
use serde_json::Value;

use crate::rounds::{Binding, Round};
use crate::sessions::Sessions;

/// The key of the approval question in an MCP `input_required` result (protocol 2026-07-28).
pub const APPROVAL_INPUT_KEY: &str = "approval";

/// How many tools one `tools/list` page holds by default.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// A [`ToolRegistry`] as an MCP server.
///
/// Every `tools/call` goes through [`ToolRegistry::call_with`], so each tool's contract holds
/// over MCP exactly as it does in process: the arguments are validated against the schema
/// advertised in `tools/list` (which rmcp's own `#[tool]` does not do), the output against the
/// `outputSchema`, and approval, timeout, retry, file staging and the audit trail all apply.
///
/// What a client sees:
/// - `tools/list`: the registry's [`Export::Mcp`] definitions (annotations derived from the
///   contract), [`DEFAULT_PAGE_SIZE`] to a page; the cursor is opaque to clients.
/// - A successful call: `structuredContent` (the output, matching `outputSchema`) plus the
///   same JSON as a text block. On protocol 2026-07-28 any output is structured, as that
///   version allows; for an older peer, rmcp drops a non-object output's `structuredContent`
///   and `outputSchema`, and the text block alone carries it.
/// - A contract failure (`input_invalid`, `timeout`, `approval_denied`, a tool's own error,
///   ...): a tool result with `isError: true` whose one text block is the AIP-14 error envelope
///   `{"ok":false,"error":{"code",...}}`. It carries no `structuredContent`, because clients
///   validate `structuredContent` against `outputSchema` and an envelope is not an output.
/// - A protocol error only for what is not a call at all: an unknown tool name, or a
///   `tools/call` whose params do not have the protocol's shape (`arguments` that are not an
///   object, say): `-32602`, as the MCP specification asks, naming what is wrong. A method the
///   server does not serve is `-32601`.
/// - A second `initialize` in a session (the client's first request, and its only one, by the
///   specification's lifecycle) is refused with `-32600` (invalid request), naming why, and
///   the session goes on as it was negotiated. rmcp's default answers it again and takes the
///   new request's client info and protocol version as the session's; the TypeScript SDK's
///   server refuses it (`400`, `-32600`, "Server already initialized"), the Python SDK's
///   answers it. A refusal is what a careful client expects: what a session negotiated does
///   not change under its other requests. A copy of the server ([`Clone`]) is a server for
///   another session, and starts uninitialized.
/// - `notifications/cancelled` stops the call (the body's future is dropped, its task
///   aborted); rmcp then sends no response, as the protocol asks.
/// - A progress token in the request's `_meta` turns the body's
///   [`ToolContext::report_progress`](agentio_tools::ToolContext::report_progress) into
///   `notifications/progress`, in order, all sent before the result.
/// - Approval: a tool whose contract requires it is put to the *client's user* through
///   elicitation (a form with one required boolean, `approve`): on protocol 2026-07-28 as an
///   `input_required` result the client answers on retry; on older protocols as an
///   `elicitation/create` request. A client that does not declare the elicitation capability
///   gets `approval_denied`: no gated call runs without a person saying yes. The registry's
///   own approver is not consulted for a gated tool's MCP calls (it still reviews the other
///   calls of a registry built `with_approval_of_every_call`).
/// - A body's questions on protocol 2026-07-28: an `input_required` result whose
///   `requestState` carries the body's state, the answers so far and the call's approval,
///   sealed for this tool, these arguments and this caller, for
///   [`DEFAULT_REQUEST_STATE_TTL`](crate::rounds::DEFAULT_REQUEST_STATE_TTL): any other state
///   is refused with `-32602` before the tool runs ([`crate::rounds`]).
///
/// ```
/// use agentio_mcp::McpServer;
/// use agentio_tools::{ToolError, ToolRegistry, tool};
///
/// #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
/// struct City { name: String }
///
/// /// Says hello to a city.
/// #[tool(id = "demo.hello")]
/// async fn hello(city: City) -> Result<City, ToolError> { Ok(city) }
///
/// let mut registry = ToolRegistry::new();
/// registry.register(HelloTool)?;
/// let server = McpServer::new(registry)?.with_server_info("demo", "1.0.0");
/// assert_eq!(server.tools()[0].name, "demo.hello");
/// // In a binary: `server.serve_stdio().await?`, or `server.serve_http(listener).await?`.
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct McpServer {
    registry: Arc<ToolRegistry>,
    tools: Arc<[Tool]>,
    /// MCP tool name -> the registry's name for it and whether its contract gates each call,
    /// both fixed when the server is made (the registry cannot change under it).
    names: Arc<HashMap<String, Target, foldhash::fast::RandomState>>,
    page_size: usize,
    info: Arc<Implementation>,
    instructions: Option<Arc<str>>,
    context: Arc<Value>,
    /// How HTTP callers authenticate, when they must.
    auth: Option<Arc<crate::auth::HttpAuth>>,
    /// Tool id -> the scopes a caller must hold to call it.
    scopes: Arc<HashMap<String, Vec<String>, foldhash::fast::RandomState>>,
    /// The level this session's client set with `logging/setLevel`.
    log_threshold: crate::voice::LogThreshold,
    /// The rmcp handler serving everything but tools (resources, prompts, completions).
    handler: Option<Arc<dyn crate::compose::DynHandler>>,
    /// Seals a call's state between rounds (MCP 2026-07-28 `requestState`, [`crate::rounds`]).
    rounds: crate::rounds::Rounds,
    /// The HTTP sessions' instance name, idle timeout and bound ([`crate::sessions`]).
    sessions: SessionSettings,
    /// How long [`McpServer::serve_http`] waits for a request's head, and for a body it has to
    /// wait for.
    header_read: Option<std::time::Duration>,
    /// How many connections [`McpServer::serve_http`] holds open at once.
    max_connections: usize,
    /// Calls run at once per runtime worker ([`crate::gate`]); 0: no gate.
    calls_per_worker: usize,
    /// The tasks of the tools that run as tasks ([`crate::tasks`]), shared by every session.
    tasks: Arc<crate::tasks::Tasks>,
    /// Whether any tool runs as a task (the Tasks extension is advertised).
    serves_tasks: bool,
    /// The skills this server serves itself ([`crate::skills`]), beside a handler's resources.
    skills: Option<Arc<crate::skills::SkillCatalog>>,
    /// Whether this session's client has sent `initialize`.
    initialized: Initialized,
}

/// Whether a session's client has sent `initialize` (answered once a session). A copy starts
/// uninitialized: a copy of the server serves another session (rmcp makes one a session).
#[derive(Debug, Default)]
struct Initialized(std::sync::atomic::AtomicBool);

impl Clone for Initialized {
    fn clone(&self) -> Self {
        Initialized::default()
    }
}

impl Initialized {
    /// Marks the session initialized; whether it already was.
    fn again(&self) -> bool {
        self.0.swap(true, std::sync::atomic::Ordering::Relaxed)
    }
}

/// The refusal of a second `initialize` in a session.
const ALREADY_INITIALIZED: &str = "this session is already initialized: `initialize` is a session's first request, and its only one";

/// What [`McpServer::http_service`] builds its [`Sessions`] from.
#[derive(Clone, Debug)]
struct SessionSettings {
    instance: Arc<str>,
    idle: std::time::Duration,
    max: usize,
}

/// How long [`McpServer::serve_http`] waits for a request's head on a connection, idle
/// keep-alive connections included, before it closes the connection: 30 seconds (hyper's
/// default, which hyper applies only where it is given a timer).
pub const DEFAULT_HEADER_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// How many connections [`McpServer::serve_http`] holds open at once by default: 10,000, as
/// many as it holds sessions ([`crate::sessions::DEFAULT_MAX_SESSIONS`]).
pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;

/// How many calls [`McpServer::serve_http`] runs at once per worker of the Tokio runtime it
/// runs on, by default: 32 (see [`McpServer::with_calls_per_worker`]).
pub const DEFAULT_CALLS_PER_WORKER: usize = 32;

/// How long [`McpServer::serve_http`] waits before accepting again when the process is out of
/// file descriptors or memory.
const ACCEPT_PAUSE: std::time::Duration = std::time::Duration::from_millis(50);

impl McpServer {
    /// A server for `registry`'s tools. Fails when a tool cannot be exported to MCP (a name
    /// over the length limit, a schema the MCP profile refuses), naming the tool and where.
    ///
    /// ```
    /// use agentio_mcp::McpServer;
    /// use agentio_tools::{ToolError, ToolRegistry, tool};
    ///
    /// #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Page { cursor: Option<String> }
    ///
    /// /// Lists the next page.
    /// #[tool(id = "pages.next")]
    /// async fn next(page: Page) -> Result<Page, ToolError> { Ok(page) }
    ///
    /// let mut registry = ToolRegistry::new();
    /// registry.register(NextTool)?;
    /// // A registry, or an `Arc` of one shared with other hosts.
    /// let shared = std::sync::Arc::new(registry);
    /// let server = McpServer::new(std::sync::Arc::clone(&shared))?;
    /// assert!(std::sync::Arc::ptr_eq(server.registry(), &shared));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(registry: impl Into<Arc<ToolRegistry>>) -> Result<Self, ExportError> {
        let registry = registry.into();
        let definitions = registry.export(Export::Mcp)?;
        let mut tools = Vec::with_capacity(definitions.len());
        let mut names = HashMap::with_capacity_and_hasher(
            definitions.len(),
            foldhash::fast::RandomState::default(),
        );
        for definition in definitions {
            let tool: Tool = serde_json::from_value(definition)
                .expect("an MCP export deserializes into rmcp's Tool");
            if let Some(id) = registry.tool_for_provider_name(&tool.name) {
                let gated = registry.contract(&id).is_some_and(|c| c.needs_approval());
                let content_only = registry.returns_content_only(&id);
                names.insert(
                    tool.name.to_string(),
                    Target {
                        id,
                        gated,
                        content_only,
                        task: None,
                        before_task: None,
                    },
                );
            }
            tools.push(tool);
        }
        Ok(McpServer {
            registry,
            tools: tools.into(),
            names: Arc::new(names),
            page_size: DEFAULT_PAGE_SIZE,
            info: Arc::new(Implementation::new("agentio", env!("CARGO_PKG_VERSION"))),
            instructions: None,
            context: Arc::new(Value::Null),
            auth: None,
            scopes: Arc::default(),
            log_threshold: crate::voice::LogThreshold::default(),
            handler: None,
            rounds: crate::rounds::Rounds::random(),
            sessions: SessionSettings {
                instance: Arc::from(""),
                idle: crate::sessions::DEFAULT_SESSION_IDLE,
                max: crate::sessions::DEFAULT_MAX_SESSIONS,
            },
            header_read: Some(DEFAULT_HEADER_READ_TIMEOUT),
            max_connections: DEFAULT_MAX_CONNECTIONS,
            calls_per_worker: DEFAULT_CALLS_PER_WORKER,
            tasks: Arc::new(crate::tasks::Tasks::new(
                crate::tasks::DEFAULT_TASK_TTL,
                crate::tasks::DEFAULT_MAX_TASKS,
                "",
            )),
            serves_tasks: false,
            skills: None,
            initialized: Initialized::default(),
        })
    }

    /// Names this server's instance among several behind one load balancer: every HTTP session
    /// id it mints starts with `name` and a dot, so the balancer can send a session's requests
    /// to the instance that holds it by the `Mcp-Session-Id` header (see [`crate::sessions`] and
    /// the README's nginx configuration); so does every task id, which a `tasks/*` request
    /// carries in its `Mcp-Name` header ([`crate::tasks`]). Stateless (2026-07-28) requests
    /// need no affinity; a 2026-07-28 call that asks for input carries its state sealed with
    /// this server's key, so instances that share a balancer share a key too
    /// ([`Self::with_request_state_key`]).
    ///
    /// # Panics
    ///
    /// When `name` is not 1 to 32 ASCII letters, digits, `-` or `_` (it goes in a header, and a
    /// balancer's pattern matches it).
    #[must_use]
    pub fn with_instance(mut self, name: &str) -> Self {
        assert!(
            (1..=32).contains(&name.len())
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "an instance name is 1 to 32 ASCII letters, digits, `-` or `_`, not {name:?}"
        );
        self.sessions.instance = Arc::from(name);
        let (ttl, max) = (self.tasks.ttl, self.tasks.max);
        self.retask(ttl, max)
    }

    /// Closes an HTTP session no request has touched for `idle` (default
    /// [`DEFAULT_SESSION_IDLE`](crate::sessions::DEFAULT_SESSION_IDLE), five minutes); its
    /// client's next request is answered `404` and starts a new session.
    #[must_use]
    pub fn with_session_idle(mut self, idle: std::time::Duration) -> Self {
        self.sessions.idle = idle;
        self
    }

    /// Holds at most `max` HTTP sessions open (default
    /// [`DEFAULT_MAX_SESSIONS`](crate::sessions::DEFAULT_MAX_SESSIONS)); past it, an
    /// `initialize` is refused, naming the bound.
    #[must_use]
    pub fn with_max_sessions(mut self, max: usize) -> Self {
        self.sessions.max = max;
        self
    }

    /// How long [`Self::serve_http`] waits for a request's head (its request line and
    /// headers) on a connection, an idle keep-alive connection's next request included
    /// (default [`DEFAULT_HEADER_READ_TIMEOUT`], 30 seconds): a connection that has not sent
    /// one by then is closed. A request's body gets as long again, from the first time the
    /// server has to wait for it: one still arriving then is answered `408 Request Timeout`
    /// and its connection closed. Clients that open connections and send nothing, or a byte at
    /// a time, cannot hold the server's connections and file descriptors for longer. `None`
    /// waits as long as the client likes. A load balancer keeping idle connections to the
    /// server should close them first (nginx: `keepalive_timeout` in the `upstream` block,
    /// below this).
    #[must_use]
    pub fn with_header_read_timeout(
        mut self,
        timeout: impl Into<Option<std::time::Duration>>,
    ) -> Self {
        self.header_read = timeout.into();
        self
    }

    /// How many connections [`McpServer::serve_http`] holds open at once (default
    /// [`DEFAULT_MAX_CONNECTIONS`]; at least one). At the bound it accepts no more until one
    /// closes: a new client waits in the listener's backlog (the kernel's queue of connections
    /// not yet accepted) and is served when a slot frees, or is refused by the kernel once
    /// that queue is full; no connection is accepted and then dropped. With the header
    /// timeout ([`Self::with_header_read_timeout`]) a connection that sends nothing frees its
    /// slot within that timeout, so clients that open connections and hold them cannot keep
    /// the server from others for longer.
    #[must_use]
    pub fn with_max_connections(mut self, max: usize) -> Self {
        self.max_connections = max.clamp(1, tokio::sync::Semaphore::MAX_PERMITS);
        self
    }

    /// How many calls (`POST`s) [`McpServer::serve_http`] runs at once for each worker of the
    /// Tokio runtime it runs on (default [`DEFAULT_CALLS_PER_WORKER`]; `0`: no bound). Past
    /// the bound a call waits for a place, and places go to calls in the order they came, so
    /// on a saturated server every call waits about as long as the others, where Tokio's run
    /// queue, overflowing, would let some wait many times longer (at 256 clients on one
    /// worker, the load bench in the README: p99 58 ms without the bound, 12 to 15 ms with
    /// it, calls a second within 5%). A call holds its place only while it keeps the server
    /// busy: a call whose tool waits on the network or a timer gives it up once the runtime has
    /// had nothing to run (its worker parked), within about a millisecond, so the bound never
    /// holds back calls on a server that has time for them. A call holds its place until its
    /// answer is ready to go out: a stateless call's JSON answer whole; an event stream, on a
    /// busy server, once read ahead (see the `front` module's documentation), and for a call
    /// alone, its head.
    #[must_use]
    pub fn with_calls_per_worker(mut self, calls: usize) -> Self {
        self.calls_per_worker = calls;
        self
    }

    /// Requires every streamable HTTP request to carry a bearer token `auth`'s verifier
    /// accepts (see [`crate::auth`]): without one, `401` with `WWW-Authenticate`; the OAuth
    /// Protected Resource Metadata is served at `/.well-known/oauth-protected-resource`; each
    /// tool's context carries the verified [`Caller`](agentio_tools::Caller). Stdio is not
    /// affected (its caller is the process that started the server).
    #[must_use]
    pub fn with_auth(mut self, auth: crate::auth::HttpAuth) -> Self {
        self.auth = Some(Arc::new(auth));
        self
    }

    /// Requires a caller to hold every one of `scopes` to call `tool_id`: checked before the
    /// call's approval is asked. A call without a verified caller (stdio, or HTTP without
    /// [`Self::with_auth`]) holds no scope, so it is refused too. A refusal is the tool error
    /// `unauthorised`, naming the missing scopes.
    #[must_use]
    pub fn require_scopes(
        mut self,
        tool_id: &str,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Arc::make_mut(&mut self.scopes).insert(
            tool_id.to_owned(),
            scopes.into_iter().map(Into::into).collect(),
        );
        self
    }

    /// Sets how many tools one `tools/list` page holds (at least 1; the default is
    /// [`crate::DEFAULT_PAGE_SIZE`]). A client follows `nextCursor` through the pages.
    ///
    /// ```
    /// use agentio_mcp::rmcp::{ServiceExt, model::PaginatedRequestParams};
    /// use agentio_mcp::McpServer;
    /// use agentio_tools::{ToolError, ToolRegistry, tool};
    ///
    /// #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Text { text: String }
    /// /// Echoes.
    /// #[tool(id = "a.echo")]
    /// async fn echo(t: Text) -> Result<Text, ToolError> { Ok(t) }
    /// /// Shouts.
    /// #[tool(id = "b.shout")]
    /// async fn shout(t: Text) -> Result<Text, ToolError> { Ok(Text { text: t.text.to_uppercase() }) }
    ///
    /// let mut registry = ToolRegistry::new();
    /// registry.register(EchoTool)?;
    /// registry.register(ShoutTool)?;
    /// let server = McpServer::new(registry)?.with_page_size(1);
    ///
    /// tokio::runtime::Runtime::new()?.block_on(async {
    ///     let (server_side, client_side) = tokio::io::duplex(1 << 16);
    ///     tokio::spawn(async move {
    ///         if let Ok(running) = server.serve(server_side).await {
    ///             let _ = running.waiting().await;
    ///         }
    ///     });
    ///     let client = ().serve(client_side).await?;
    ///     let first = client.list_tools(None).await?;
    ///     assert_eq!(first.tools.len(), 1);
    ///     let cursor = first.next_cursor.expect("a second page");
    ///     let rest = PaginatedRequestParams::default().with_cursor(Some(cursor));
    ///     let second = client.list_tools(Some(rest)).await?;
    ///     assert_eq!(second.tools.len(), 1);
    ///     assert!(second.next_cursor.is_none());
    ///     Ok::<(), Box<dyn std::error::Error>>(())
    /// })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size.max(1);
        self
    }

    /// Lists and calls the tool `tool_id` (an id, or `id@major`) as `name` over MCP: for a
    /// client that expects a name a contract id cannot have (`search_docs`: ids are lowercase
    /// letters, digits, `-` and `.`). MCP names are 1 to 128 of `A-Z a-z 0-9 _ - .`; a name
    /// another tool has, or an id that names no tool, is refused, naming the tool.
    ///
    /// ```
    /// use agentio_mcp::McpServer;
    /// use agentio_tools::{ToolError, ToolRegistry, tool};
    ///
    /// #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Query { q: String }
    /// /// Searches the docs.
    /// #[tool(id = "docs.search")]
    /// async fn search(query: Query) -> Result<Query, ToolError> { Ok(query) }
    ///
    /// let mut registry = ToolRegistry::new();
    /// registry.register(SearchTool)?;
    /// let server = McpServer::new(registry)?.with_tool_name("docs.search", "search_docs")?;
    /// assert_eq!(server.tools()[0].name, "search_docs");
    /// let refused = McpServer::new(server.registry().clone())?.with_tool_name("docs.search", "no spaces").unwrap_err();
    /// assert!(refused.to_string().contains("no spaces"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_tool_name(
        mut self,
        tool_id: &str,
        name: impl Into<String>,
    ) -> Result<Self, ExportError> {
        let name = name.into();
        let refuse = |reason: String| refused(tool_id, "/name", reason);
        let current = self
            .name_of(tool_id)
            .ok_or_else(|| refuse(format!("no tool `{tool_id}` to rename")))?;
        let valid = (1..=128).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
        if !valid {
            return Err(refuse(format!(
                "`{}` is not an MCP tool name (1 to 128 of A-Z a-z 0-9 _ - .)",
                agentio_core::limits::bounded_display(&name.escape_debug(), 128)
            )));
        }
        if name != current && self.names.contains_key(&name) {
            return Err(refuse(format!("another tool is named `{name}`")));
        }
        let mut names = (*self.names).clone();
        let target = names.remove(&current).expect("the name was found above");
        names.insert(name.clone(), target);
        let mut tools = self.tools.to_vec();
        for tool in &mut tools {
            if tool.name == current {
                tool.name = name.clone().into();
            }
        }
        self.names = Arc::new(names);
        self.tools = tools.into();
        Ok(self)
    }

    /// The MCP name of the tool `tool_id` (an id, or `id@major`) names.
    fn name_of(&self, tool_id: &str) -> Option<String> {
        let identity = self.registry.contract(tool_id).map(|c| c.identity())?;
        self.names
            .iter()
            .find(|(_, target)| {
                self.registry
                    .contract(&target.id)
                    .map(|c| c.identity())
                    .as_deref()
                    == Some(identity.as_str())
            })
            .map(|(current, _)| current.clone())
    }

    /// Runs the calls of `tool_id` (an id, or `id@major`) as MCP tasks (the Tasks extension,
    /// SEP-2663; see [`crate::tasks`]): `tools/call` answers at once with the task, and the
    /// client polls `tasks/get` for its result. The server then advertises the extension. An
    /// id that names no tool is refused, naming it.
    ///
    /// ```
    /// use agentio_mcp::McpServer;
    /// use agentio_mcp::rmcp::ServerHandler;
    /// use agentio_mcp::tasks::TaskSupport;
    /// use agentio_tools::{ToolError, ToolRegistry, tool};
    ///
    /// #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Report { rows: u64 }
    /// /// Builds the monthly report (minutes).
    /// #[tool(id = "reports.build", timeout_ms = 600000)]
    /// async fn build(report: Report) -> Result<Report, ToolError> { Ok(report) }
    ///
    /// let mut registry = ToolRegistry::new();
    /// registry.register(BuildTool)?;
    /// let server = McpServer::new(registry)?
    ///     .with_task_support("reports.build", TaskSupport::Optional)?
    ///     .with_task_ttl(std::time::Duration::from_secs(3600));
    /// assert!(server.get_info().capabilities.supports_tasks());
    /// assert!(server.with_task_support("reports.nope", TaskSupport::Required).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_task_support(
        mut self,
        tool_id: &str,
        support: crate::tasks::TaskSupport,
    ) -> Result<Self, ExportError> {
        let name = self
            .name_of(tool_id)
            .ok_or_else(|| refused(tool_id, "", format!("no tool `{tool_id}` to run as a task")))?;
        if let Some(target) = Arc::make_mut(&mut self.names).get_mut(&name) {
            target.task = Some(support);
        }
        self.serves_tasks = true;
        Ok(self)
    }

    /// Asks `questions` before a task of `tool_id` is made, where the protocol lets a call ask
    /// first: on 2026-07-28, `tools/call` answers `input_required` with them (as it asks
    /// approval), and the round whose answers complete them gets the `CreateTaskResult`. The
    /// body's own [`ToolContext::ask`](agentio_tools::ToolContext) of those keys then gets
    /// those answers at once, in the task: a task that needs a person's word before its long
    /// work does not start and then sit `input_required` until someone looks (the Tasks
    /// extension's "MRTR, then a task", SEP-2663). Before 2026-07-28, where a call cannot ask
    /// first, the body asks them in the task as it asks any question; and a client that takes
    /// no task gets a plain call, which asks as it always does.
    ///
    /// A tool whose contract requires approval asks it first, in a round of its own; its yes
    /// travels sealed with the answers, bound to the call's arguments and caller
    /// ([`crate::rounds`]), to the round that makes the task.
    ///
    /// Refused: a tool that does not run as a task ([`Self::with_task_support`] first), no
    /// questions, a question MCP cannot carry, or a key that is
    /// [`APPROVAL_INPUT_KEY`](crate::APPROVAL_INPUT_KEY).
    ///
    /// ```
    /// use agentio_mcp::McpServer;
    /// use agentio_mcp::tasks::TaskSupport;
    /// use agentio_tools::voice::{Elicited, Questions};
    /// use agentio_tools::{ToolContext, ToolError, ToolRegistry, tool};
    ///
    /// #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Purge { folder: String }
    /// #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput)]
    /// struct Confirm { confirm: bool }
    ///
    /// fn confirm() -> Questions {
    ///     Questions::new().elicit::<Confirm>("confirm", "Purge the folder? (an hour's work)")
    /// }
    ///
    /// /// Purges a folder, once someone said yes.
    /// #[tool(id = "files.purge", timeout_ms = 3600000)]
    /// async fn purge(purge: Purge, ctx: &ToolContext) -> Result<Purge, ToolError> {
    ///     // In the task: answered before it was made, so this does not wait.
    ///     let answers = ctx.ask(&confirm()).await?;
    ///     match answers.elicited::<Confirm>("confirm")? {
    ///         Elicited::Accepted(Confirm { confirm: true }) => Ok(purge),
    ///         _ => Err(ToolError::new(agentio_core::ErrorCode::Other("declined".into()), "kept")),
    ///     }
    /// }
    ///
    /// let registry = || -> Result<ToolRegistry, Box<dyn std::error::Error>> {
    ///     let mut registry = ToolRegistry::new();
    ///     registry.register(PurgeTool)?;
    ///     Ok(registry)
    /// };
    /// let server = McpServer::new(registry()?)?
    ///     .with_task_support("files.purge", TaskSupport::Required)?
    ///     .ask_before_task("files.purge", confirm())?;
    /// // Not a task tool (yet): refused, naming why.
    /// let plain = McpServer::new(registry()?)?.ask_before_task("files.purge", confirm());
    /// assert!(plain.unwrap_err().to_string().contains("does not run as a task"));
    /// # drop(server);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn ask_before_task(
        mut self,
        tool_id: &str,
        questions: agentio_tools::voice::Questions,
    ) -> Result<Self, ExportError> {
        let refuse = |reason: String| refused(tool_id, "", reason);
        let name = self
            .name_of(tool_id)
            .ok_or_else(|| refuse(format!("no tool `{tool_id}` to ask for")))?;
        let target = &self.names[&name];
        if target.task.is_none() {
            return Err(refuse(format!(
                "`{tool_id}` does not run as a task: give it task support first"
            )));
        }
        if questions.is_empty() {
            return Err(refuse("no questions to ask".to_owned()));
        }
        for (key, question) in questions.iter() {
            if key == crate::APPROVAL_INPUT_KEY {
                return Err(refuse(format!("`{key}` is the approval question's key")));
            }
            crate::voice::input_request(question)
                .map_err(|err| refuse(format!("`{key}`: {}", err.message())))?;
        }
        if let Some(target) = Arc::make_mut(&mut self.names).get_mut(&name) {
            target.before_task = Some(Arc::new(questions));
        }
        Ok(self)
    }

    /// Sets how long a task is kept (default [`crate::tasks::DEFAULT_TASK_TTL`]): one still
    /// running then is failed, one that ended is kept as long again for its client to read.
    /// Set it above the tools' timeouts.
    #[must_use]
    pub fn with_task_ttl(self, ttl: std::time::Duration) -> Self {
        let max = self.tasks.max;
        self.retask(ttl, max)
    }

    /// Sets how many tasks the server holds at most, running or ended and kept for their
    /// clients' `tasks/get` (default [`crate::tasks::DEFAULT_MAX_TASKS`]); past it a call that
    /// would start one is answered `isError` with `rate_limited` (retryable).
    #[must_use]
    pub fn with_max_tasks(self, max: usize) -> Self {
        let ttl = self.tasks.ttl;
        self.retask(ttl, max)
    }

    /// The server with its tasks kept `ttl`, at most `max`, under its instance's name (set
    /// while it is built, before it holds any task).
    fn retask(mut self, ttl: std::time::Duration, max: usize) -> Self {
        let tasks = crate::tasks::Tasks::new(ttl, max, &self.sessions.instance);
        #[cfg(feature = "task-store")]
        let tasks = tasks.with_store(self.tasks.store.clone());
        self.tasks = Arc::new(tasks);
        self
    }

    /// Keeps each task's record in `store` (feature `task-store`), so that the tasks this
    /// server starts outlive its process: after a restart with the same store, a task that had
    /// ended is answered from its record, to its owner, for its time to live; one that was
    /// still running is `failed`, saying the server stopped while it ran (it is not run
    /// again). What is written when, and what it costs: [`crate::task_store`].
    ///
    /// ```
    /// use agentio_mcp::McpServer;
    /// use agentio_mcp::task_store::TaskStore;
    /// use agentio_tools::ToolRegistry;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let store = TaskStore::open(dir.path().join("tasks.redb"))?;
    /// let server = McpServer::new(ToolRegistry::new())?.with_task_store(store);
    /// # drop(server);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "task-store")]
    #[must_use]
    pub fn with_task_store(mut self, store: crate::task_store::TaskStore) -> Self {
        let (ttl, max) = (self.tasks.ttl, self.tasks.max);
        self.tasks = Arc::new(
            crate::tasks::Tasks::new(ttl, max, &self.sessions.instance)
                .with_store(Some(Arc::new(store))),
        );
        self
    }

    /// The store this server keeps its tasks' records in ([`Self::with_task_store`]), to
    /// watch: [`TaskStore::failed_writes`](crate::task_store::TaskStore::failed_writes)
    /// counts the records a full or failing disk kept out (a task whose start could not be
    /// written was refused, not run). The store is shared by the server's clones.
    ///
    /// ```
    /// use agentio_mcp::McpServer;
    /// use agentio_mcp::task_store::TaskStore;
    /// use agentio_tools::ToolRegistry;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let server = McpServer::new(ToolRegistry::new())?
    ///     .with_task_store(TaskStore::open(dir.path().join("tasks.redb"))?);
    /// assert_eq!(server.task_store().map(|store| store.failed_writes()), Some(0));
    /// assert!(McpServer::new(ToolRegistry::new())?.task_store().is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "task-store")]
    pub fn task_store(&self) -> Option<&crate::task_store::TaskStore> {
        self.tasks.store.as_deref()
    }

    /// Sets the name and version the server gives clients at initialization.
    ///
    /// ```
    /// use agentio_mcp::McpServer;
    /// use agentio_mcp::rmcp::ServerHandler;
    /// use agentio_tools::ToolRegistry;
    ///
    /// let server = McpServer::new(ToolRegistry::new())?
    ///     .with_server_info("notes-host", "2.1.0")
    ///     .with_instructions("Notes are kept per tenant.");
    /// let info = server.get_info();
    /// assert_eq!(info.server_info.name, "notes-host");
    /// assert_eq!(info.server_info.version, "2.1.0");
    /// assert_eq!(info.instructions.as_deref(), Some("Notes are kept per tenant."));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info = Arc::new(Implementation::new(name, version));
        self
    }

    /// Sets the instructions the server gives clients at initialization (an example is on
    /// [`Self::with_server_info`]).
    #[must_use]
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(Arc::from(instructions.into()));
        self
    }

    /// Sets the host context every call gets (what a contract's `contextSchema` describes: a
    /// workspace root, a tenant). MCP clients cannot supply it; the host does.
    ///
    /// ```
    /// use agentio_mcp::rmcp::{ServiceExt, model::CallToolRequestParams};
    /// use agentio_mcp::McpServer;
    /// use agentio_tools::{ToolContext, ToolError, ToolRegistry, tool};
    ///
    /// #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Empty {}
    /// #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Tenant { tenant: String }
    ///
    /// /// Says which tenant the host serves.
    /// #[tool(id = "host.tenant")]
    /// async fn tenant(_: Empty, ctx: &ToolContext) -> Result<Tenant, ToolError> {
    ///     Ok(Tenant { tenant: ctx.raw_context()["tenant"].as_str().unwrap_or("none").to_owned() })
    /// }
    ///
    /// let mut registry = ToolRegistry::new();
    /// registry.register(TenantTool)?;
    /// let server = McpServer::new(registry)?.with_context(serde_json::json!({ "tenant": "acme" }));
    ///
    /// tokio::runtime::Runtime::new()?.block_on(async {
    ///     let (server_side, client_side) = tokio::io::duplex(1 << 16);
    ///     tokio::spawn(async move {
    ///         if let Ok(running) = server.serve(server_side).await {
    ///             let _ = running.waiting().await;
    ///         }
    ///     });
    ///     let client = ().serve(client_side).await?;
    ///     let result = client.call_tool(CallToolRequestParams::new("host.tenant")).await?;
    ///     assert_eq!(result.structured_content, Some(serde_json::json!({ "tenant": "acme" })));
    ///     Ok::<(), Box<dyn std::error::Error>>(())
    /// })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_context(mut self, context: Value) -> Self {
        self.context = Arc::new(context);
        self
    }

    /// The tools as `tools/list` advertises them.
    ///
    /// ```
    /// # use agentio_mcp::McpServer;
    /// # use agentio_tools::{ToolError, ToolRegistry, tool};
    /// # #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// # struct City { name: String }
    /// # /// Says hello to a city.
    /// # #[tool(id = "demo.hello")]
    /// # async fn hello(city: City) -> Result<City, ToolError> { Ok(city) }
    /// # let mut registry = ToolRegistry::new();
    /// # registry.register(HelloTool).unwrap();
    /// let server = McpServer::new(registry).unwrap().with_page_size(50);
    /// let tool = &server.tools()[0];
    /// assert_eq!(tool.name, "demo.hello");
    /// assert_eq!(tool.input_schema["required"][0], "name");
    /// assert!(tool.output_schema.is_some());
    /// assert_eq!(tool.annotations.as_ref().unwrap().read_only_hint, Some(true));
    /// assert!(server.registry().contract("demo.hello").is_some());
    /// ```
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The registry the server calls (an example is on [`Self::new`]).
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    fn page(&self, cursor: Option<&str>) -> Result<ListToolsResult, McpError> {
        let start = match cursor {
            None => 0,
            Some(cursor) => cursor
                .parse::<usize>()
                .ok()
                .filter(|start| *start <= self.tools.len())
                .ok_or_else(|| {
                    // The cursor is the caller's: escaped and bounded before it is echoed.
                    McpError::invalid_params(
                        format!(
                            "`{}` is not a cursor this server gave out",
                            agentio_core::limits::bounded_display(&cursor.escape_debug(), 128)
                        ),
                        None,
                    )
                })?,
        };
        let end = start.saturating_add(self.page_size).min(self.tools.len());
        let mut result = ListToolsResult::with_all_items(self.tools[start..end].to_vec());
        if end < self.tools.len() {
            result.next_cursor = Some(end.to_string());
        }
        Ok(result)
    }

    /// The `input_required` result that ends a round whose body asked the client `questions`
    /// (their wire JSON by key), with the body's state sealed for the next round.
    fn input_required(
        &self,
        binding: &crate::rounds::Binding,
        questions: std::collections::BTreeMap<String, Value>,
        round: &Round,
    ) -> Result<CallToolResponse, McpError> {
        let requests: InputRequests = serde_json::from_value(Value::Object(
            questions.into_iter().collect(),
        ))
        .map_err(|err| {
            McpError::internal_error(
                format!("a question is not an MCP input request: {err}"),
                None,
            )
        })?;
        let sealed = self.rounds.seal(round, binding)?;
        Ok(InputRequiredResult::new(Some(requests), Some(sealed)).into())
    }

    /// What the client declared it can do, and whether it speaks 2026-07-28 or later (no
    /// server-to-client requests).
    fn abilities(&self, context: &RequestContext<RoleServer>) -> crate::voice::ClientAbilities {
        let caps = context.client_capabilities();
        crate::voice::ClientAbilities {
            elicitation: caps.as_ref().is_some_and(|c| c.elicitation.is_some()),
            sampling: caps.as_ref().is_some_and(|c| c.sampling.is_some()),
            roots: caps.as_ref().is_some_and(|c| c.roots.is_some()),
            inline: context
                .protocol_version()
                .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str()),
        }
    }

    /// Who decides a gated call: the client's user, through elicitation; or, when the user
    /// must first be asked on the inline protocol, the question to answer (`Err`). With it,
    /// whether it is a yes given on the inline protocol (this round's answer, or an earlier
    /// round's: `sealed_yes`), which the call's next round carries should its body ask.
    fn approver_for(
        &self,
        target: &str,
        request: &CallToolRequestParams,
        input: &Value,
        context: &RequestContext<RoleServer>,
        sealed_yes: bool,
    ) -> Result<(Arc<dyn Approver>, bool), Box<InputRequiredResult>> {
        let inline = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let can_elicit = context
            .client_capabilities()
            .is_some_and(|caps| caps.elicitation.is_some());
        if !can_elicit {
            return Ok((Decided::deny(NO_ELICITATION), false));
        }
        if !inline {
            let elicit = Elicit {
                peer: context.peer.clone(),
            };
            return Ok((Arc::new(elicit), false));
        }
        if sealed_yes {
            return Ok((Arc::new(Decided(ApprovalDecision::Approve)), true));
        }
        let answer = request
            .input_responses
            .as_ref()
            .and_then(|r| r.get(APPROVAL_INPUT_KEY));
        if let Some(answer) = answer {
            let decision = decision_of(answer);
            let yes = matches!(decision, ApprovalDecision::Approve);
            return Ok((Arc::new(Decided(decision)), yes));
        }
        // Ask only about a call that can run: a bad input is refused first, by the registry.
        let valid = self
            .registry
            .input_boundary(target)
            .is_some_and(|schema| schema.validate(input).is_ok());
        if valid {
            Err(Box::new(approval_question(target, &self.registry, input)))
        } else {
            Ok((Decided::deny("the input is invalid"), false))
        }
    }

    /// One `tools/call`. Everything up to the registry call is done here, before the future
    /// is made: the future rmcp spawns then holds only what the call awaits, not the request
    /// and its context.
    fn call(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, McpError>> + Send + '_ {
        let started = self.start_call(&mut request, &context);
        let cue = head_cue(&context);
        let ct = context.ct;
        async move {
            let Started {
                call,
                cancellation,
                peer,
                content,
                content_only,
                sealing,
                target: target_name,
            } = match started {
                Ok(started) => started,
                Err(early) => {
                    let Early { answer, on_disk } = *early;
                    if let Some(on_disk) = on_disk {
                        on_disk.written().await?;
                    }
                    return answer;
                }
            };
            // A call alone on the server in a session: its answer's head goes out now, while the
            // tool runs (see `crate::front`), the front's turn taken before the call's.
            if let Some(cue) = cue {
                cue.call_starts().await;
            }
            let result = until_done_or_cancelled(call, ct.cancelled(), cancellation.as_ref()).await;
            // Every report and log line the body made is sent before the result; a body still
            // running on a blocked thread (past its timeout) cannot hold the answer back long.
            peer.flush().await;
            if let Some(capability) = peer.missing_capability()
                && sealing.is_some()
            {
                // 2026-07-28: a request that needs a capability the client did not declare.
                return Err(missing_capability(capability));
            }
            // 2026-07-28: the body asked; the call ends its round with the questions. (Before,
            // a question is a request to the client, and nothing is pending.)
            if let (Some(questions), Some(sealing)) = (peer.take_pending(), sealing) {
                let round = Round {
                    state: peer.take_state(),
                    answers: peer.answers_used(),
                    approved: sealing.approved,
                };
                return self.input_required(&sealing.binding(&target_name), questions, &round);
            }
            Ok(match result {
                Ok(value) => success(value, content.take(), content_only),
                Err(err) => error_result(&err),
            }
            .into())
        }
    }

    /// The registry call for a request, ready to await; or the answer, when there is nothing
    /// to call ([`Early`]).
    fn start_call(
        &self,
        request: &mut CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<Started<'_>, Box<Early>> {
        let Some(Target {
            id: target,
            gated,
            content_only,
            task,
            before_task,
        }) = self.names.get(request.name.as_ref())
        else {
            return Err(early(Err(McpError::invalid_params(
                // The name is the caller's: escaped and bounded before it is echoed.
                format!(
                    "unknown tool: `{}`",
                    agentio_core::limits::bounded_display(&request.name.escape_debug(), 128)
                ),
                None,
            ))));
        };
        // The caller the HTTP layer verified (none over stdio), and the scopes the tool needs,
        // checked before anyone is asked to approve the call.
        let caller = caller_of(context);
        if let Some(needed) = self.scopes.get(target).filter(|needed| !needed.is_empty()) {
            let missing: Vec<&str> = needed
                .iter()
                .filter(|scope| !caller.as_ref().is_some_and(|c| c.has_scope(scope)))
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                let err = agentio_core::AgentError::new(
                    agentio_core::ErrorCode::Unauthorised,
                    format!(
                        "insufficient_scope: calling `{target}` needs the scope(s) {}",
                        missing.join(" ")
                    ),
                );
                return Err(early(Ok(error_result(&err).into())));
            }
        }
        // A tool that runs as a task, for a client that cannot take one: a plain call, or
        // (when it runs only as a task) the refusal, before anyone is asked to approve it.
        let as_task = task.is_some()
            && context
                .client_capabilities()
                .is_some_and(|caps| caps.supports_tasks());
        if *task == Some(crate::tasks::TaskSupport::Required) && !as_task {
            return Err(early(Err(crate::tasks::required())));
        }
        let input = Value::Object(request.arguments.take().unwrap_or_default());
        let abilities = self.abilities(context);
        // On 2026-07-28 a call comes in rounds: the answers to the body's questions, its state
        // and its approval, sealed by this server in the previous round for this call (the
        // tool, these arguments, this caller) and not yet expired. Any other state is refused
        // before anything runs ([`crate::rounds`]).
        let Round {
            state,
            answers: mut responses,
            approved: sealed_yes,
        } = match (&request.request_state, abilities.inline) {
            (Some(sealed), true) => {
                let binding = Binding::new(target, caller.as_deref(), &input);
                match self.rounds.open(sealed, &binding, target) {
                    Ok(round) => round,
                    Err(err) => return Err(early(Err(err))),
                }
            }
            _ => Round::default(),
        };
        let (approver, approved) = if *gated {
            match self.approver_for(target, request, &input, context, sealed_yes) {
                Ok((approver, yes)) => (Some(approver), yes),
                Err(question) => return Err(early(Ok((*question).into()))),
            }
        } else {
            (None, false)
        };
        // What the call's next round is sealed for, should its body ask (2026-07-28 only).
        let sealing = abilities.inline.then(|| Sealing {
            arguments: input.clone(),
            caller: caller.clone(),
            approved,
        });

        // A client's cancel drops the call, its body with it. Only an audited registry needs
        // the call to end itself instead, so that its record says `cancelled`.
        let cancellation = self.registry.is_audited().then(Cancellation::new);
        let mut options = CallOptions::default().with_context((*self.context).clone());
        options.cancellation = cancellation.clone();
        options.approver = approver;
        options.caller = caller;
        // The answers of earlier rounds (sealed), then this round's. (The approval question,
        // asked above, has read its answer: the rest can be taken.)
        responses.extend(request.input_responses.take().unwrap_or_default());
        let threshold = if abilities.inline {
            // 2026-07-28: each request says its level, or gets no log lines.
            #[allow(deprecated)]
            let level = context.meta.log_level();
            crate::voice::LogThreshold::for_request(level)
        } else {
            self.log_threshold.clone()
        };
        if as_task
            && self
                .registry
                .input_boundary(target)
                .is_some_and(|schema| schema.validate(&input).is_ok())
        {
            // A bad input is refused as a plain call, below: there is nothing to run.
            let mut call_peer =
                crate::voice::CallPeer::new(context.peer.clone(), None, threshold, abilities);
            // 2026-07-28: what the task asks before it is made, asked now, in rounds; the
            // round that completes the answers makes the task, and its body finds them. (Not
            // after a no to the approval: the task is made at once, and says `approval_denied`.)
            let refused = *gated && !approved;
            if let (Some(questions), Some(sealing), false) =
                (before_task.as_deref(), sealing.as_ref(), refused)
            {
                // A question the client declared no capability for: `-32021`, naming it.
                if call_peer.check_declared(questions).is_err() {
                    let capability = call_peer.missing_capability().unwrap_or("elicitation");
                    return Err(early(Err(missing_capability(capability))));
                }
                let (answered, pending) = crate::voice::sort_answers(questions, &responses);
                if !pending.is_empty() {
                    // Only the answers to these questions travel: whatever else the client
                    // sent is not sealed and sent back to it.
                    let round = Round {
                        state: None,
                        answers: answered,
                        approved: sealing.approved,
                    };
                    let binding = sealing.binding(target);
                    return Err(early(self.input_required(&binding, pending, &round)));
                }
                call_peer = call_peer.with_round(responses, None);
            }
            let call_peer = Arc::new(call_peer);
            // Before 2026-07-28 a gated call's approval is asked in the task, as its questions
            // are (on 2026-07-28 it was asked above, before the task).
            let approve_in_task = *gated && !abilities.inline && abilities.elicitation;
            return Err(self.start_task(TaskCall {
                target,
                content_only: *content_only,
                input,
                options,
                cancellation,
                call_peer,
                approve_in_task,
            }));
        }
        let peer = Arc::new(
            crate::voice::CallPeer::new(
                context.peer.clone(),
                context.meta.get_progress_token(),
                threshold,
                abilities,
            )
            .with_round(responses, state),
        );
        if peer.has_progress_token() {
            options.progress = Some(ProgressReporter::from_sink(peer.clone()));
        }
        options.client = Some(peer.clone());
        let content = agentio_tools::content::ContentCollector::new();
        options.content = Some(content.clone());
        // Boxed: the registry call's state is kilobytes, and rmcp copies each request's task
        // whole when it spawns it.
        let call = Box::pin(self.registry.call_with(target, input, options));
        Ok(Started {
            call,
            cancellation,
            peer,
            content,
            content_only: *content_only,
            sealing,
            target: target.clone(),
        })
    }
}

/// The caller the HTTP layer verified, if any (none over stdio, or without authentication).
fn caller_of(context: &RequestContext<RoleServer>) -> Option<Arc<Caller>> {
    from_http_request(context)
}

/// What the HTTP layer put in the request's extensions (rmcp hands a handler the request's
/// `http::request::Parts`); none over stdio.
fn from_http_request<T: Clone + Send + Sync + 'static>(
    context: &RequestContext<RoleServer>,
) -> Option<T> {
    context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<T>())
        .cloned()
}

/// The cue [`McpServer::serve_http`]'s front waits on before it sends the head of a call alone
/// on the server in a session (see `crate::front`); none otherwise.
fn head_cue(context: &RequestContext<RoleServer>) -> Option<crate::front::HeadCue> {
    from_http_request(context)
}

/// Who the caller the HTTP layer verified is, if any, as a task's owner
/// ([`crate::auth::caller_key`]).
fn owner_in(context: &RequestContext<RoleServer>) -> Option<String> {
    caller_of(context).map(|caller| crate::auth::caller_key(&caller))
}

/// `-32021` for a call that needs a capability the client did not declare.
fn missing_capability(capability: &str) -> McpError {
    McpError::new(
        rmcp::model::ErrorCode(-32021),
        format!("the tool needs the client's `{capability}` capability, which it did not declare"),
        Some(serde_json::json!({ "requiredCapabilities": { capability: {} } })),
    )
}

impl McpServer {
    /// Starts a call as a task ([`crate::tasks`]) and answers with it once it is on the
    /// store's disk (with a store); or, when the server holds its maximum of tasks, refuses it
    /// as a retryable `rate_limited` tool error.
    fn start_task(&self, call: TaskCall<'_>) -> Box<Early> {
        let TaskCall {
            target,
            content_only,
            input,
            mut options,
            cancellation,
            call_peer,
            approve_in_task,
        } = call;
        // `tasks/cancel` ends the call itself, so that its record (when audited) says so.
        let cancellation = cancellation.unwrap_or_default();
        options.cancellation = Some(cancellation.clone());
        let owner = options.caller.as_deref().map(crate::auth::caller_key);
        let registry = Arc::clone(&self.registry);
        let target = target.to_owned();
        let task = self.tasks.spawn(owner.as_deref(), move |task| {
            let peer = Arc::new(crate::voice::TaskPeer::new(task.clone(), call_peer));
            options.progress = Some(ProgressReporter::from_sink(peer.clone()));
            options.client = Some(peer.clone());
            if approve_in_task {
                options.approver = Some(Arc::new(InTask(task.clone())));
            }
            let content = agentio_tools::content::ContentCollector::new();
            options.content = Some(content.clone());
            Box::pin(async move {
                let call = registry.call_with(&target, input, options);
                let result =
                    until_done_or_cancelled(call, task.cancelled(), Some(&cancellation)).await;
                task_outcome(
                    result,
                    &content,
                    content_only,
                    peer.missing_capability(),
                    task.is_cancel_requested(),
                )
            })
        });
        match task {
            Some((task, on_disk)) => Box::new(Early {
                answer: Ok(rmcp::model::CreateTaskResult::new(task).into()),
                on_disk: Some(on_disk),
            }),
            None => {
                let err = agentio_core::AgentError::new(
                    agentio_core::ErrorCode::RateLimited,
                    format!(
                        "this server holds its maximum of {} tasks (running, or ended and kept {} s for their clients); call again later",
                        self.tasks.max,
                        self.tasks.ttl.as_secs()
                    ),
                )
                .with_retryable(true);
                early(Ok(error_result(&err).into()))
            }
        }
    }
}

/// What a call answers without a registry call of its own (an unknown tool, a refusal, a
/// question to ask first, a task made), boxed: it is rare, and the call's future would carry
/// its space.
struct Early {
    answer: Result<CallToolResponse, McpError>,
    /// For a task made: when its start is on the store's disk, which the answer waits for.
    on_disk: Option<crate::tasks::OnDisk>,
}

fn early(answer: Result<CallToolResponse, McpError>) -> Box<Early> {
    Box::new(Early {
        answer,
        on_disk: None,
    })
}

/// A call to start as a task: what [`McpServer::start_call`] has made of the request.
struct TaskCall<'a> {
    /// The registry's name for the tool.
    target: &'a str,
    content_only: bool,
    input: Value,
    options: CallOptions,
    cancellation: Option<Cancellation>,
    /// The call's line to the client, for the task's log lines.
    call_peer: Arc<crate::voice::CallPeer>,
    /// Whether the approval is asked in the task ([`InTask`]).
    approve_in_task: bool,
}

/// How a task's call settles (see [`crate::tasks`]): its result, a tool error as `isError`, or
/// a failure of the machinery, a question the client cannot answer or a cancel as the task's
/// own end.
fn task_outcome(
    result: Result<Value, ToolError>,
    content: &agentio_tools::content::ContentCollector,
    content_only: bool,
    missing: Option<&'static str>,
    cancel_requested: bool,
) -> Result<CallToolResult, rmcp::task_manager::TaskExit> {
    use rmcp::task_manager::TaskExit;
    if let Some(capability) = missing {
        return Err(TaskExit::Error(missing_capability(capability)));
    }
    match result {
        Ok(value) => Ok(success(value, content.take(), content_only)),
        // Cancelled, or refused because the approval it waited for was cancelled with it.
        Err(err)
            if cancel_requested
                && matches!(
                    err.code(),
                    agentio_core::ErrorCode::Cancelled | agentio_core::ErrorCode::ApprovalDenied
                ) =>
        {
            Err(TaskExit::Cancelled)
        }
        Err(err) if *err.code() == agentio_core::ErrorCode::Internal => Err(TaskExit::Error(
            McpError::internal_error(err.message().to_owned(), Some(err.to_envelope())),
        )),
        Err(err) => Ok(error_result(&err)),
    }
}

/// A registry call under way, and what it needs besides.
struct Started<'a> {
    call: std::pin::Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send + 'a>>,
    cancellation: Option<Cancellation>,
    peer: Arc<crate::voice::CallPeer>,
    content: agentio_tools::content::ContentCollector,
    content_only: bool,
    /// What the call's next round is sealed for: on protocol 2026-07-28 or later only.
    sealing: Option<Sealing>,
    /// The registry's name for the tool.
    target: String,
}

/// What a call's next round is sealed for (2026-07-28): its arguments and caller
/// ([`crate::rounds`]), and whether its approval was given.
struct Sealing {
    arguments: Value,
    caller: Option<Arc<Caller>>,
    approved: bool,
}

impl Sealing {
    fn binding(&self, target: &str) -> Binding {
        Binding::new(target, self.caller.as_deref(), &self.arguments)
    }
}

/// A failed call as MCP says it: an `isError` result carrying the AIP-14 envelope as text.
fn error_result(err: &agentio_core::AgentError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(json_text(&err.to_envelope()))])
}

/// The JSON text of a value. (Serializing a `Value` cannot fail: its keys are strings.)
fn json_text(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// A successful call as MCP says it. A structured output is `structuredContent` plus the
/// same JSON as the first text block (written by serde's own writer: `Value`'s `Display` goes
/// through `fmt` and costs three times as much), then the blocks the body attached. Any value:
/// rmcp drops a non-object one for a peer before 2026-07-28, which then reads the text block.
/// A content-only tool's output is its blocks.
fn success(
    value: Value,
    attached: Vec<agentio_tools::content::Content>,
    content_only: bool,
) -> CallToolResult {
    // A `Contents` output was checked against the blocks' schema and an attached block is a
    // `Content`: both are content blocks as rmcp reads them. Should rmcp ever read one
    // differently, the call fails, naming it, rather than losing the block.
    let mut content = Vec::with_capacity(1 + attached.len());
    let structured = if content_only {
        match serde_json::from_value::<Vec<ContentBlock>>(value) {
            Ok(blocks) => content = blocks,
            Err(err) => return unreadable_content(&err),
        }
        None
    } else {
        content.push(ContentBlock::text(json_text(&value)));
        Some(value)
    };
    for block in &attached {
        match serde_json::from_value::<ContentBlock>(block.to_value()) {
            Ok(block) => content.push(block),
            Err(err) => return unreadable_content(&err),
        }
    }
    let mut answer = CallToolResult::success(content);
    answer.structured_content = structured;
    answer
}

fn unreadable_content(err: &serde_json::Error) -> CallToolResult {
    error_result(&agentio_core::AgentError::internal(format!(
        "a content block of the tool's result is not one rmcp reads: {err}"
    )))
}

/// What an MCP tool name stands for in the registry.
#[derive(Clone)]
struct Target {
    /// `id`, or `id@major` when several majors are registered.
    id: String,
    /// Whether the contract requires approval for every call.
    gated: bool,
    /// Whether the tool answers in content blocks ([`agentio_tools::content::Contents`]).
    content_only: bool,
    /// Whether its calls run as tasks ([`McpServer::with_task_support`]).
    task: Option<crate::tasks::TaskSupport>,
    /// What its task asks before it is made ([`McpServer::ask_before_task`]).
    before_task: Option<Arc<agentio_tools::voice::Questions>>,
}

/// The one refusal of a setting made for `tool_id`: at `pointer` (the setting's place in the
/// tool's MCP definition; empty for the tool as a whole), and why.
fn refused(tool_id: &str, pointer: &str, reason: String) -> ExportError {
    ExportError {
        problems: vec![(
            tool_id.to_owned(),
            agentio_core::profiles::Refusal {
                pointer: pointer.to_owned(),
                reason,
            },
        )],
    }
}

const NO_ELICITATION: &str = "the tool needs approval, and the MCP client does not support elicitation, so no one could be asked";

/// Races the call against the request's cancellation: when the client cancels, the registry's
/// cancellation fires, and the call (which then ends at once with `cancelled`) is polled on so
/// that its audit record is written; without one, the call is dropped.
async fn until_done_or_cancelled(
    call: impl Future<Output = Result<Value, ToolError>>,
    cancelled: impl Future<Output = ()>,
    cancellation: Option<&Cancellation>,
) -> Result<Value, ToolError> {
    let mut call = std::pin::pin!(call);
    let mut cancelled = std::pin::pin!(cancelled);
    let mut fired = false;
    std::future::poll_fn(|cx| {
        if let Poll::Ready(result) = call.as_mut().poll(cx) {
            return Poll::Ready(result);
        }
        if !fired && cancelled.as_mut().poll(cx).is_ready() {
            fired = true;
            let Some(cancellation) = cancellation else {
                // Nothing to record: rmcp sends no answer to a cancelled request.
                return Poll::Ready(Err(ToolError::new(
                    agentio_core::ErrorCode::Cancelled,
                    "the client cancelled the call",
                )));
            };
            cancellation.cancel();
            // Poll the call again: it now sees the cancellation.
            return call.as_mut().poll(cx);
        }
        Poll::Pending
    })
    .await
}

fn approval_schema() -> ElicitationSchema {
    ElicitationSchema::builder()
        .required_bool("approve")
        .build()
        .expect("a one-boolean form is a valid elicitation schema")
}

fn approval_question(target: &str, registry: &ToolRegistry, input: &Value) -> InputRequiredResult {
    let mut requests = InputRequests::new();
    requests.insert(
        APPROVAL_INPUT_KEY.to_owned(),
        approval_form(&question(target, registry, input)),
    );
    InputRequiredResult::new(Some(requests), None)
}

/// The approval question as an MCP input request: a form with one required boolean.
fn approval_form(request: &ApprovalRequest) -> InputRequest {
    InputRequest::Elicitation(Request::new(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: approval_message(request),
        requested_schema: approval_schema(),
    }))
}

/// A yes only for an accepted form whose `approve` is `true`.
fn decision_of(answer: &Value) -> ApprovalDecision {
    match serde_json::from_value::<ElicitResult>(answer.clone()) {
        Ok(result) => decide(&result),
        Err(_) => ApprovalDecision::Deny {
            reason: "the client's answer to the approval question was not an elicitation result"
                .into(),
        },
    }
}

fn decide(result: &ElicitResult) -> ApprovalDecision {
    let approved = result.action == ElicitationAction::Accept
        && result
            .content
            .as_ref()
            .and_then(|c| c.get("approve"))
            .and_then(Value::as_bool)
            == Some(true);
    if approved {
        ApprovalDecision::Approve
    } else {
        let reason = match result.action {
            ElicitationAction::Accept => "the user did not approve the call",
            ElicitationAction::Decline => "the user declined the call",
            _ => "the user dismissed the approval question",
        };
        ApprovalDecision::Deny {
            reason: reason.into(),
        }
    }
}

/// An approver whose answer is already known.
struct Decided(ApprovalDecision);

impl Decided {
    fn deny(reason: &str) -> Arc<dyn Approver> {
        Arc::new(Decided(ApprovalDecision::Deny {
            reason: reason.into(),
        }))
    }
}

impl Approver for Decided {
    fn approve<'a>(
        &'a self,
        _request: &'a ApprovalRequest,
    ) -> agentio_core::BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move { self.0.clone() })
    }
}

/// Legacy protocols: asks the client with an `elicitation/create` request.
struct Elicit {
    peer: Peer<RoleServer>,
}

impl Approver for Elicit {
    fn approve<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> agentio_core::BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move {
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: approval_message(request),
                requested_schema: approval_schema(),
            };
            match self.peer.create_elicitation(params).await {
                Ok(result) => decide(&result),
                Err(err) => ApprovalDecision::Deny {
                    reason: format!("the approval question could not be asked: {err}"),
                },
            }
        })
    }
}

/// Approval asked in a task (before 2026-07-28): the form is the task's input request
/// [`APPROVAL_INPUT_KEY`], answered with `tasks/update`.
struct InTask(rmcp::task_manager::TaskContext);

impl Approver for InTask {
    fn approve<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> agentio_core::BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move {
            match self
                .0
                .request_input(APPROVAL_INPUT_KEY, approval_form(request))
                .await
            {
                Ok(answer) => decision_of(&answer),
                Err(_) => ApprovalDecision::Deny {
                    reason: "the task was cancelled before anyone approved the call".into(),
                },
            }
        })
    }
}

/// The approval request the registry would make, for the question asked before the call.
fn question(target: &str, registry: &ToolRegistry, input: &Value) -> ApprovalRequest {
    let contract = registry.contract(target);
    ApprovalRequest {
        run_id: String::new(),
        tool_id: contract.map_or_else(|| target.to_owned(), |c| c.id.clone()),
        identity: contract.map_or_else(|| target.to_owned(), |c| c.identity()),
        approval: contract.map_or(Approval::Always, |c| c.approval.clone()),
        mutates: contract.map(|c| c.mutates.clone()).unwrap_or_default(),
        risk_level: contract.map_or(0, |c| c.risk_level),
        cost_class: contract.map_or(CostClass::Trivial, |c| c.cost_class),
        input: input.clone(),
    }
}

fn approval_message(request: &ApprovalRequest) -> String {
    let mut arguments = request.input.to_string();
    agentio_core::limits::clip(&mut arguments, 2_000);
    // AIP-14: an expensive call warns the user before it runs; this question is that warning.
    let cost = if request.cost_class == CostClass::Expensive {
        "; expensive"
    } else {
        ""
    };
    format!(
        "Approve a call to `{}` (approval: {}; risk level {}{cost}; modifies: {})? Arguments: {arguments}",
        request.identity,
        request.approval,
        request.risk_level,
        if request.mutates.is_empty() {
            "nothing declared".to_owned()
        } else {
            request.mutates.join(", ")
        },
    )
}

impl McpServer {
    /// Seals calls' state between rounds (MCP 2026-07-28 `requestState`) with `key` (at
    /// least 32 bytes) instead of a random key of this process: for servers that share
    /// clients (behind a load balancer, across restarts). Refuses a shorter key.
    pub fn with_request_state_key(
        mut self,
        key: impl Into<Vec<u8>>,
    ) -> Result<Self, rmcp::model::RequestStateError> {
        self.rounds = self.rounds.with_key(key.into())?;
        Ok(self)
    }

    /// Sets how long a call's sealed state stays good between its rounds on 2026-07-28
    /// (default [`DEFAULT_REQUEST_STATE_TTL`](crate::rounds::DEFAULT_REQUEST_STATE_TTL)): a
    /// client that answers later is refused, naming the expiry, and calls the tool again from
    /// the start. What else binds a state to its call: [`crate::rounds`].
    #[must_use]
    pub fn with_request_state_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.rounds.ttl = ttl;
        self
    }

    pub(crate) fn set_handler(&mut self, handler: Arc<dyn crate::compose::DynHandler>) {
        self.handler = Some(handler);
    }

    pub(crate) fn set_skills(&mut self, catalog: Arc<crate::skills::SkillCatalog>) {
        self.skills = Some(catalog);
    }

    /// A copy of the server for one more session: the same registry and handler, its own
    /// logging level.
    fn for_session(&self) -> Self {
        let mut session = self.clone();
        session.log_threshold = crate::voice::LogThreshold::default();
        session
    }
}

/// `method not found`, naming the method.
fn not_served(method: &str) -> McpError {
    McpError::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!("this server does not serve `{method}`"),
        None,
    )
}

impl ServerHandler for McpServer {
    #[allow(deprecated)] // rmcp marks logging deprecated (SEP-2577); clients before 2026-07-28 use it
    fn get_info(&self) -> ServerConfig {
        let theirs = self.handler.as_ref().map(|h| h.info());
        let mut capabilities = theirs
            .as_ref()
            .map(|info| info.capabilities.clone())
            .unwrap_or_default();
        let ours = ServerCapabilities::builder()
            .enable_tools()
            .enable_logging()
            .build();
        capabilities.tools = ours.tools;
        capabilities.logging = ours.logging;
        if self.serves_tasks {
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(
                    rmcp::model::TASKS_EXTENSION_ID.to_owned(),
                    rmcp::model::JsonObject::new(),
                );
        }
        if self.skills.is_some() {
            crate::skills::serve::declare(&mut capabilities);
        }
        let mut config = ServerConfig::new(capabilities).with_server_info((*self.info).clone());
        let instructions = self
            .instructions
            .as_deref()
            .map(str::to_owned)
            .or_else(|| theirs.and_then(|info| info.instructions));
        if let Some(instructions) = instructions {
            config = config.with_instructions(instructions);
        }
        config
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.log_threshold.set(request.level);
        if let Some(handler) = &self.handler {
            // The handler may log too; its own answer does not change ours.
            let _ = handler.set_level(request, context).await;
        }
        Ok(())
    }

    async fn complete(
        &self,
        request: rmcp::model::CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CompleteResult, McpError> {
        match &self.handler {
            Some(handler) => handler.complete(request, context).await,
            None => Err(not_served("completion/complete")),
        }
    }

    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, McpError> {
        match &self.handler {
            Some(handler) => handler.get_prompt(request, context).await,
            None => Err(not_served("prompts/get")),
        }
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, McpError> {
        match &self.handler {
            Some(handler) => handler.list_prompts(request, context).await,
            None => Err(not_served("prompts/list")),
        }
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, McpError> {
        match (&self.skills, &self.handler) {
            (Some(catalog), handler) if !crate::skills::serve::has_cursor(&request) => {
                let theirs = match handler {
                    Some(handler) => Some(handler.list_resources(request, context).await?),
                    None => None,
                };
                Ok(crate::skills::serve::first_page(catalog, theirs))
            }
            (_, Some(handler)) => handler.list_resources(request, context).await,
            (Some(_), None) => Err(crate::skills::serve::unknown_cursor("resources/list")),
            (None, None) => Err(not_served("resources/list")),
        }
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, McpError> {
        match &self.handler {
            Some(handler) => handler.list_resource_templates(request, context).await,
            None => Err(not_served("resources/templates/list")),
        }
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, McpError> {
        if let Some(file) = self
            .skills
            .as_ref()
            .and_then(|c| c.read_resource(&request.uri))
        {
            return Ok(file.into());
        }
        match &self.handler {
            Some(handler) => handler.read_resource(request, context).await,
            None if self.skills.is_some() => Err(McpError::resource_not_found(
                format!("no resource `{}`", crate::answer::clipped(request.uri)),
                None,
            )),
            None => Err(not_served("resources/read")),
        }
    }

    async fn read_resource_directory(
        &self,
        request: rmcp::model::ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceDirectoryResult, McpError> {
        match (&self.skills, &self.handler) {
            (Some(_), _) if request.cursor.is_some() => Err(crate::skills::serve::unknown_cursor(
                "resources/directory/read",
            )),
            (Some(catalog), _) => catalog.read_resource_directory(&request.uri),
            (None, Some(handler)) => handler.read_resource_directory(request, context).await,
            (None, None) => Err(not_served("resources/directory/read")),
        }
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListSkillsResult, McpError> {
        match (&self.skills, &self.handler) {
            (Some(_), _) if crate::skills::serve::has_cursor(&request) => {
                Err(crate::skills::serve::unknown_cursor("skills/list"))
            }
            (Some(catalog), _) => Ok(catalog.list_skills()),
            (None, Some(handler)) => handler.list_skills(request, context).await,
            (None, None) => Err(not_served("skills/list")),
        }
    }

    async fn get_skill(
        &self,
        request: rmcp::model::GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetSkillResult, McpError> {
        match (&self.skills, &self.handler) {
            (Some(catalog), _) => catalog.get_skill(&request.uri),
            (None, Some(handler)) => handler.get_skill(request, context).await,
            (None, None) => Err(not_served("skills/get")),
        }
    }

    #[allow(deprecated)] // legacy-only in rmcp; clients before 2026-07-28 subscribe this way
    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        match &self.handler {
            Some(handler) => handler.subscribe(request, context).await,
            None => Err(not_served("resources/subscribe")),
        }
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        match &self.handler {
            Some(handler) => handler.unsubscribe(request, context).await,
            None => Err(not_served("resources/unsubscribe")),
        }
    }

    fn accepted_subscription_filter(
        &self,
        requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        self.handler.as_ref()?.accepted_filter(requested)
    }

    async fn listen(&self, context: rmcp::service::SubscriptionContext) -> Result<(), McpError> {
        match &self.handler {
            Some(handler) => handler.listen(context).await,
            None => {
                context.cancelled().await;
                Ok(())
            }
        }
    }

    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::InitializeResult, McpError> {
        if self.initialized.again() {
            return Err(McpError::invalid_request(ALREADY_INITIALIZED, None));
        }
        // rmcp's default, after the check.
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        if let Some(handler) = &self.handler {
            handler.initialized(context).await;
        }
    }

    async fn on_roots_list_changed(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        if let Some(handler) = &self.handler {
            handler.roots_list_changed(context).await;
        }
    }

    async fn on_custom_notification(
        &self,
        notification: rmcp::model::CustomNotification,
        context: rmcp::service::NotificationContext<RoleServer>,
    ) {
        if let Some(handler) = &self.handler {
            handler.custom_notification(notification, context).await;
        }
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        self.page(request.as_ref().and_then(|r| r.cursor.as_deref()))
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, McpError> {
        self.tasks
            .get(&request.task_id, owner_in(&context).as_deref())
            .map(rmcp::model::GetTaskResult::new)
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.tasks.update(
            &request.task_id,
            owner_in(&context).as_deref(),
            request.input_responses,
        )
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.tasks
            .cancel(&request.task_id, owner_in(&context).as_deref())
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    // Not an `async fn`: a wrapper would store the request and its context a second time in
    // the future rmcp spawns for each call.
    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, McpError>> + Send + '_ {
        self.call(request, context)
    }

    /// rmcp hands over every request it could not read as a method it knows, a known method
    /// with params of the wrong shape included (`tools/call` with `arguments: "text"`). Those
    /// are `invalid_params` naming what is wrong, as JSON-RPC and MCP say; other methods are
    /// `method_not_found` naming the method.
    fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CustomResult, McpError>> + Send + '_ {
        let ours = request.method.starts_with("tools/");
        async move {
            match &self.handler {
                Some(handler) if !ours => handler.custom_request(request, context).await,
                _ => Err(unread_request(&request.method, request.params.as_ref())),
            }
        }
    }
}

/// The error for a request rmcp could not read (see `on_custom_request`).
fn unread_request(method: &str, params: Option<&Value>) -> McpError {
    let problem = match (method, params) {
        ("tools/call", Some(Value::Object(params))) => {
            match (params.get("name"), params.get("arguments")) {
                (None, _) => "`tools/call` needs the tool's `name`",
                (Some(name), _) if !name.is_string() => "`name` must be a string",
                (_, Some(arguments)) if !arguments.is_object() && !arguments.is_null() => {
                    "`arguments` must be an object"
                }
                _ => "the params of `tools/call` do not have the protocol's shape",
            }
        }
        ("tools/call", _) => "`tools/call` needs params: an object with the tool's `name`",
        ("tools/list", _) => "the params of `tools/list` do not have the protocol's shape",
        (other, _) => {
            // The name is the peer's: shown cut to a bound, whatever its length.
            let mut shown = other.to_owned();
            agentio_core::limits::clip(&mut shown, 128);
            return McpError::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!("unknown method `{shown}`"),
                None,
            );
        }
    };
    McpError::invalid_params(problem, None)
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field(
                "tools",
                &self.tools.iter().map(|t| &t.name).collect::<Vec<_>>(),
            )
            .field("page_size", &self.page_size)
            .field("info", &self.info)
            .finish()
    }
}

/// Why serving stopped.
#[derive(Debug)]
pub struct ServeError {
    what: &'static str,
    reason: String,
}

impl ServeError {
    fn new(what: &'static str, reason: impl fmt::Display) -> Self {
        ServeError {
            what,
            reason: reason.to_string(),
        }
    }
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.what, self.reason)
    }
}

impl std::error::Error for ServeError {}

impl McpServer {
    /// Serves one client over this process's stdin and stdout until the client closes them.
    /// Nothing else may write to stdout meanwhile (log to stderr).
    ///
    /// ```no_run
    /// # use agentio_mcp::McpServer;
    /// # use agentio_tools::{ToolError, ToolRegistry, tool};
    /// # #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// # struct City { name: String }
    /// # /// Says hello to a city.
    /// # #[tool(id = "demo.hello")]
    /// # async fn hello(city: City) -> Result<City, ToolError> { Ok(city) }
    /// # let mut registry = ToolRegistry::new();
    /// # registry.register(HelloTool).unwrap();
    /// let runtime = tokio::runtime::Runtime::new()?;
    /// runtime.block_on(McpServer::new(registry)?.serve_stdio())?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        let running = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| ServeError::new("the MCP handshake over stdio failed", e))?;
        running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| ServeError::new("the stdio session ended abnormally", e))
    }

    /// The server as rmcp's streamable HTTP tower service (sessions kept in memory), to mount
    /// at a path of your own router, with the defaults of [`Self::default_http_config`]:
    /// loopback `Host`s and loopback `Origin`s only. Your server owns the connections: what
    /// [`Self::serve_http`] does for them (`TCP_NODELAY`, the time a request's head and body
    /// may take, waiting out running out of file descriptors) is yours to set there (hyper:
    /// `http1::Builder::timer` and `header_read_timeout`).
    pub fn http_service(self) -> StreamableHttpService<McpServer, Sessions> {
        self.http_service_with(Self::default_http_config())
    }

    /// The HTTP configuration [`Self::http_service`] and [`Self::serve_http`] use: rmcp's
    /// defaults, with the `Origin` check on. The MCP spec says a streamable HTTP server MUST
    /// validate `Origin` (a web page's request to a local server carries its own); rmcp checks
    /// it only when given an allow-list, so agent-io gives one. The allow-lists:
    ///
    /// - `Host`: `localhost`, `127.0.0.1`, `::1` (rmcp's DNS-rebinding guard);
    /// - `Origin`: `http://localhost`, `http://127.0.0.1` and `http://[::1]`, any port. A request
    ///   without `Origin` (not from a browser) passes; any other `Origin` is `403 Forbidden`.
    ///
    /// A server behind a proxy, or for a web app, sets its own with [`Self::http_service_with`]
    /// (`StreamableHttpServerConfig::with_allowed_hosts` and `with_allowed_origins`).
    ///
    /// rmcp's `json_response` is on: a stateless call (the 2026-07-28 revision) whose first
    /// message is its answer is answered as one `application/json` body, as the spec allows
    /// and every client must read, rather than an event stream of one event; a call that
    /// sends anything first (progress, a log line, a question to the client) is answered as an
    /// event stream, so nothing is lost. One write and no stream to end: the load bench in the
    /// README measured rmcp's own server 1.06x faster a stateless call with it on than off, and
    /// ours with it against rmcp's without, 1.03x. Calls in a 2025-11-25 session are event
    /// streams either way (rmcp's session manager answers no other way).
    ///
    /// ```
    /// let config = agentio_mcp::McpServer::default_http_config();
    /// assert_eq!(config.allowed_hosts, ["localhost", "127.0.0.1", "::1"]);
    /// assert!(config.allowed_origins.contains(&"http://127.0.0.1:*".to_owned()));
    /// assert!(config.json_response);
    /// ```
    pub fn default_http_config() -> StreamableHttpServerConfig {
        StreamableHttpServerConfig::default()
            .with_allowed_origins(["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"])
            .with_json_response(true)
    }

    /// [`Self::http_service`] with rmcp's configuration (allowed hosts and origins, body
    /// limit, keep-alive, ...).
    pub fn http_service_with(
        self,
        config: StreamableHttpServerConfig,
    ) -> StreamableHttpService<McpServer, Sessions> {
        self.http_parts(config).0
    }

    /// rmcp's service and the sessions it keeps.
    fn http_parts(
        self,
        config: StreamableHttpServerConfig,
    ) -> (StreamableHttpService<McpServer, Sessions>, Arc<Sessions>) {
        let sessions = Arc::new(Sessions::new(
            &self.sessions.instance,
            self.sessions.idle,
            self.sessions.max,
        ));
        let service =
            StreamableHttpService::new(move || Ok(self.for_session()), sessions.clone(), config);
        (service, sessions)
    }

    /// Serves streamable HTTP on `listener` (every path; clients use `http://host:port/mcp`)
    /// until the listener fails. Each connection is served on its own task, with `TCP_NODELAY`
    /// set (a server mounting [`Self::http_service`] in its own loop should set it too), and
    /// closed when it has not sent a request's head within
    /// [`Self::with_header_read_timeout`]. A connection that fails before it is accepted is
    /// skipped; when the process runs out of file descriptors (or the system of buffers or
    /// memory) the server waits a moment and accepts again, as connections close and free
    /// theirs, where it would otherwise end: only a failure of the listener itself ends it.
    /// Where rmcp's service answers otherwise than the official SDKs' servers, this answers as
    /// they do, and rmcp's service mounted on its own does not:
    ///
    /// - a body that is not a JSON-RPC message: `400` with a JSON-RPC error, `-32700` (parse
    ///   error, naming where the JSON stopped) or `-32600` (JSON, but not a message: JSON-RPC
    ///   2.0's code, where the SDKs differ); rmcp says `415 Unsupported Media Type`;
    /// - a session's end (`DELETE`): `200`, or `404` for a session this server does not hold
    ///   ([`crate::sessions`]); rmcp says `202` to both;
    /// - a session refused because the server holds its maximum: `503`; rmcp says `500`;
    /// - a request body still arriving after [`Self::with_header_read_timeout`]: `408`, and the
    ///   connection closed; rmcp says `500`.
    ///
    /// A stateless call (2026-07-28) answered by its first message is one JSON body
    /// ([`Self::default_http_config`]). While other calls are in flight, a call's event stream
    /// is written when it has ended, head, message and end in one write (rmcp writes the head
    /// first, then the message: a system call or two more a call), after the tasks ready to run;
    /// a call alone on the server gets its head at once. Event streams are kept alive with
    /// rmcp's comment after rmcp's 15 s of silence, on this crate's deadline thread rather than
    /// a Tokio timer each.
    ///
    /// ```no_run
    /// # use agentio_mcp::McpServer;
    /// # use agentio_tools::{ToolError, ToolRegistry, tool};
    /// # #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// # struct City { name: String }
    /// # /// Says hello to a city.
    /// # #[tool(id = "demo.hello")]
    /// # async fn hello(city: City) -> Result<City, ToolError> { Ok(city) }
    /// # let mut registry = ToolRegistry::new();
    /// # registry.register(HelloTool).unwrap();
    /// # async fn serve(registry: ToolRegistry) -> Result<(), Box<dyn std::error::Error>> {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    /// McpServer::new(registry)?
    ///     .with_instructions("Say hello to cities.")
    ///     .serve_http(listener)
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn serve_http(self, listener: tokio::net::TcpListener) -> Result<(), ServeError> {
        let auth = self.auth.clone();
        let header_read = self.header_read;
        let slots = Arc::new(tokio::sync::Semaphore::new(self.max_connections));
        let mut config = Self::default_http_config();
        // Kept alive by the front door instead (see `crate::front`).
        let keep_alive = config.sse_keep_alive.take();
        let runtime = tokio::runtime::Handle::current().metrics();
        let gate = (self.calls_per_worker > 0).then(|| {
            crate::gate::Gate::new(self.calls_per_worker.saturating_mul(runtime.num_workers()))
        });
        // The gate's warden lives as long as this loop (aborted when it is dropped).
        let _warden = gate.clone().map(|gate| {
            tokio_util::task::AbortOnDropHandle::new(tokio::spawn(gate.warden(runtime)))
        });
        let (service, sessions) = self.http_parts(config);
        let front = Arc::new(crate::auth::Front {
            auth,
            service,
            sessions,
            streams: crate::front::Streams::new(keep_alive).with_gate(gate),
        });
        let mut connections = hyper::server::conn::http1::Builder::new();
        connections
            .timer(crate::front::WatchdogTimer)
            .header_read_timeout(header_read);
        let connections = Arc::new(connections);
        loop {
            // At the bound, accept nothing until a connection closes and gives its slot back.
            let Ok(slot) = slots.clone().acquire_owned().await else {
                unreachable!("the semaphore of connection slots is never closed");
            };
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(e) => match AcceptFailure::of(&e) {
                    AcceptFailure::Connection => continue,
                    AcceptFailure::Exhausted => {
                        tokio::time::sleep(ACCEPT_PAUSE).await;
                        continue;
                    }
                    AcceptFailure::Listener => {
                        return Err(ServeError::new("the HTTP listener failed", e));
                    }
                },
            };
            // An answer is written as a head and then an event stream; with Nagle's algorithm on,
            // the client's delayed ACK of the head holds the rest back ~40 ms (measured: 20
            // calls/s on one connection instead of thousands).
            let _ = stream.set_nodelay(true);
            let front = front.clone();
            let guarded = hyper::service::service_fn(move |request: http::Request<_>| {
                let request = request.map(|body| crate::front::TimedBody::new(body, header_read));
                crate::auth::guard(front.clone(), request)
            });
            let connections = connections.clone();
            tokio::spawn(async move {
                // A connection's own failure (a client hanging up, or not sending a request's
                // head in time) ends that connection only.
                let _ = connections
                    .serve_connection(TokioIo::new(stream), guarded)
                    .await;
                drop(slot);
            });
        }
    }
}

/// What an error accepting a connection means for [`McpServer::serve_http`]'s loop.
#[derive(Debug, PartialEq, Eq)]
enum AcceptFailure {
    /// The connection's own: it was reset or aborted before it was accepted, or (Linux passes
    /// a pending connection's network errors to `accept`) its network failed. Accept the next.
    Connection,
    /// The process is out of file descriptors, or the system out of file descriptors, buffers
    /// or memory: wait while open connections close and free theirs, then accept again.
    Exhausted,
    /// The listener's own: the server ends with it.
    Listener,
}

impl AcceptFailure {
    fn of(e: &std::io::Error) -> Self {
        use std::io::ErrorKind;
        match e.kind() {
            ErrorKind::ConnectionAborted
            | ErrorKind::ConnectionReset
            | ErrorKind::ConnectionRefused
            | ErrorKind::Interrupted
            | ErrorKind::WouldBlock
            | ErrorKind::TimedOut => return AcceptFailure::Connection,
            ErrorKind::OutOfMemory => return AcceptFailure::Exhausted,
            _ => {}
        }
        #[cfg(unix)]
        {
            let code = e.raw_os_error();
            let any = |errnos: &[rustix::io::Errno]| {
                errnos.iter().any(|n| Some(n.raw_os_error()) == code)
            };
            if any(PENDING_CONNECTION_ERRORS) {
                return AcceptFailure::Connection;
            }
            if any(EXHAUSTION_ERRORS) {
                return AcceptFailure::Exhausted;
            }
        }
        AcceptFailure::Listener
    }
}

/// accept(2) on Linux: a pending connection's network errors, which it says to treat "like
/// EAGAIN by retrying".
#[cfg(unix)]
const PENDING_CONNECTION_ERRORS: &[rustix::io::Errno] = {
    use rustix::io::Errno;
    &[
        Errno::NETDOWN,
        Errno::PROTO,
        Errno::NOPROTOOPT,
        Errno::HOSTDOWN,
        Errno::HOSTUNREACH,
        Errno::OPNOTSUPP,
        Errno::NETUNREACH,
        Errno::PERM,
    ]
};

/// Out of file descriptors (the process's, the system's), buffers or memory.
#[cfg(unix)]
const EXHAUSTION_ERRORS: &[rustix::io::Errno] = {
    use rustix::io::Errno;
    &[Errno::MFILE, Errno::NFILE, Errno::NOBUFS, Errno::NOMEM]
};

#[cfg(test)]
mod tests {
    use super::*;
    use agentio_tools::tool;
    use serde_json::json;

    /// What a request rmcp could not read is answered with: the code and the message.
    fn unread(method: &str, params: Option<Value>) -> (i32, String) {
        let err = unread_request(method, params.as_ref());
        (err.code.0, err.message.to_string())
    }

    #[test]
    fn a_known_method_with_params_of_the_wrong_shape_is_invalid_params_naming_the_part() {
        let invalid = rmcp::model::ErrorCode::INVALID_PARAMS.0;
        let cases = [
            (
                json!({"name": "t", "arguments": "text"}),
                "`arguments` must be an object",
            ),
            (
                json!({"name": "t", "arguments": [1]}),
                "`arguments` must be an object",
            ),
            (
                json!({"name": 7, "arguments": {}}),
                "`name` must be a string",
            ),
            (
                json!({"arguments": {}}),
                "`tools/call` needs the tool's `name`",
            ),
            (
                json!({"name": "t", "arguments": null, "_meta": 3}),
                "the params of `tools/call` do not have the protocol's shape",
            ),
            (
                json!("t"),
                "`tools/call` needs params: an object with the tool's `name`",
            ),
        ];
        for (params, message) in cases {
            assert_eq!(
                unread("tools/call", Some(params.clone())),
                (invalid, message.to_owned()),
                "{params}"
            );
        }
        assert_eq!(
            unread("tools/call", None),
            (
                invalid,
                "`tools/call` needs params: an object with the tool's `name`".to_owned()
            )
        );
        assert_eq!(
            unread("tools/list", Some(json!({"cursor": 3}))),
            (
                invalid,
                "the params of `tools/list` do not have the protocol's shape".to_owned()
            )
        );
    }

    #[test]
    fn a_cursor_not_given_out_is_named_escaped_and_within_a_bound() {
        let server = McpServer::new(agentio_tools::ToolRegistry::new()).unwrap();
        assert!(server.page(Some("0")).is_ok());
        let err = server.page(Some("1")).unwrap_err();
        assert_eq!(err.message, "`1` is not a cursor this server gave out");
        let err = server.page(Some("\u{1b}[2J")).unwrap_err();
        assert_eq!(
            err.message,
            "`\\u{1b}[2J` is not a cursor this server gave out"
        );
        let err = server.page(Some(&"c".repeat(20_000))).unwrap_err();
        assert!(err.message.len() < 200, "{}", err.message.len());
        assert!(err.message.starts_with("`ccc"), "{}", err.message);
        assert!(
            err.message
                .ends_with("…` is not a cursor this server gave out"),
            "{}",
            err.message
        );
    }

    #[test]
    fn another_method_is_method_not_found_naming_it_within_a_bound() {
        let not_found = rmcp::model::ErrorCode::METHOD_NOT_FOUND.0;
        assert_eq!(
            unread("prompts/list", None),
            (not_found, "unknown method `prompts/list`".to_owned())
        );
        let (code, message) = unread(&"m".repeat(100_000), None);
        assert_eq!(code, not_found);
        assert!(message.len() < 200, "{}", message.len());
        assert!(message.ends_with("…`"), "{message}");
    }

    #[derive(
        serde::Deserialize,
        serde::Serialize,
        schemars::JsonSchema,
        agentio_core::AgentInput,
        agentio_core::AgentOutput,
    )]
    struct Text {
        text: String,
    }

    /// Echoes.
    #[tool(id = "t.one")]
    async fn one(t: Text) -> Result<Text, ToolError> {
        Ok(t)
    }

    /// Echoes.
    #[tool(id = "t.two")]
    async fn two(t: Text) -> Result<Text, ToolError> {
        Ok(t)
    }

    fn server() -> McpServer {
        let mut registry = ToolRegistry::new();
        registry.register(OneTool).unwrap();
        registry.register(TwoTool).unwrap();
        McpServer::new(registry).unwrap()
    }

    /// A field mirrored in a header (SEP-2243), as a user writes it.
    #[derive(
        serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput,
    )]
    struct Routed {
        #[schemars(extend("x-mcp-header" = "Region"))]
        region: String,
    }

    /// An `Option`, under a name the derive cannot see through: its schema is
    /// `["string", "null"]`.
    type MaybeRegion = Option<String>;

    /// The same field, optional. Written `Option<String>`, the derive refuses it at compile
    /// time (`tests/ui/mcp-header`); behind an alias, the server refuses it when it is built.
    #[derive(
        serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput,
    )]
    struct MaybeRouted {
        #[schemars(extend("x-mcp-header" = "Region"))]
        region: MaybeRegion,
    }

    /// Routes.
    #[tool(id = "t.routed")]
    async fn routed(r: Routed) -> Result<Text, ToolError> {
        Ok(Text { text: r.region })
    }

    /// Routes, maybe.
    #[tool(id = "t.maybe-routed")]
    async fn maybe_routed(r: MaybeRouted) -> Result<Text, ToolError> {
        Ok(Text {
            text: r.region.unwrap_or_default(),
        })
    }

    #[test]
    fn accept_errors_of_a_connection_are_skipped_exhaustion_waited_out_the_listeners_end_it() {
        use std::io::{Error, ErrorKind};
        for kind in [
            ErrorKind::ConnectionAborted,
            ErrorKind::ConnectionReset,
            ErrorKind::ConnectionRefused,
            ErrorKind::Interrupted,
            ErrorKind::WouldBlock,
            ErrorKind::TimedOut,
        ] {
            assert_eq!(
                AcceptFailure::of(&Error::from(kind)),
                AcceptFailure::Connection,
                "{kind:?}"
            );
        }
        assert_eq!(
            AcceptFailure::of(&Error::from(ErrorKind::OutOfMemory)),
            AcceptFailure::Exhausted
        );
        assert_eq!(
            AcceptFailure::of(&Error::other("broken")),
            AcceptFailure::Listener
        );
        #[cfg(unix)]
        {
            use rustix::io::Errno;
            let of =
                |errno: Errno| AcceptFailure::of(&Error::from_raw_os_error(errno.raw_os_error()));
            // Those std names a kind, and accept(2)'s list of a pending connection's errors.
            for &errno in [Errno::CONNABORTED, Errno::INTR, Errno::AGAIN]
                .iter()
                .chain(PENDING_CONNECTION_ERRORS)
            {
                assert_eq!(of(errno), AcceptFailure::Connection, "{errno:?}");
            }
            assert!(PENDING_CONNECTION_ERRORS.contains(&Errno::PROTO));
            for &errno in EXHAUSTION_ERRORS {
                assert_eq!(of(errno), AcceptFailure::Exhausted, "{errno:?}");
            }
            assert!(EXHAUSTION_ERRORS.contains(&Errno::MFILE));
            for errno in [Errno::BADF, Errno::INVAL, Errno::NOTSOCK, Errno::FAULT] {
                assert_eq!(of(errno), AcceptFailure::Listener, "{errno:?}");
            }
        }
    }

    #[test]
    fn a_header_every_client_would_drop_the_tool_for_is_refused_when_the_server_is_built() {
        let mut registry = ToolRegistry::new();
        registry.register(RoutedTool).unwrap();
        let server = McpServer::new(registry).unwrap();
        let published = server.get_tool("t.routed").unwrap().input_schema;
        assert_eq!(published["properties"]["region"]["x-mcp-header"], "Region");

        let mut registry = ToolRegistry::new();
        registry.register(MaybeRoutedTool).unwrap();
        let err = McpServer::new(registry).unwrap_err();
        assert_eq!(err.problems.len(), 1);
        let (tool, refusal) = &err.problems[0];
        assert_eq!(tool, "t.maybe-routed@1");
        assert_eq!(refusal.pointer, "/inputs/properties/region/x-mcp-header");
        assert!(refusal.reason.contains("#[serde(default)]"), "{refusal}");
    }

    #[test]
    fn pages_hold_at_least_one_tool_and_cursors_name_the_next_one() {
        let server = server().with_page_size(0);
        let first = server.page(None).unwrap();
        assert_eq!(first.tools.len(), 1);
        assert_eq!(first.next_cursor.as_deref(), Some("1"));
        let last = server.page(Some("1")).unwrap();
        assert_eq!(last.tools[0].name, "t.two");
        assert_eq!(last.next_cursor, None);
        assert!(server.page(Some("2")).unwrap().tools.is_empty());
        assert!(server.page(Some("3")).is_err());
        assert!(server.page(Some("-1")).is_err());
        let whole = server.with_page_size(DEFAULT_PAGE_SIZE).page(None).unwrap();
        assert_eq!(whole.tools.len(), 2);
        assert_eq!(whole.next_cursor, None);
    }

    #[test]
    fn a_tool_is_renamed_alone_to_a_valid_name_no_other_tool_has() {
        let listed = |server: &McpServer| -> Vec<String> {
            server.tools().iter().map(|t| t.name.to_string()).collect()
        };
        let renamed = server().with_tool_name("t.one", "first_tool").unwrap();
        assert_eq!(listed(&renamed), ["first_tool", "t.two"]);
        assert_eq!(renamed.names["first_tool"].id, "t.one");
        assert_eq!(renamed.names["t.two"].id, "t.two");
        assert!(!renamed.names.contains_key("t.one"));
        // Its own name again is no clash; 128 characters are a name.
        let again = renamed.with_tool_name("t.one", "first_tool").unwrap();
        assert_eq!(listed(&again), ["first_tool", "t.two"]);
        let long = "a".repeat(128);
        let long_named = again.with_tool_name("t.one", long.as_str()).unwrap();
        assert_eq!(listed(&long_named), [long.as_str(), "t.two"]);
        // Refused, saying why: another tool's name, a character MCP names do not have (at a
        // length they may have), no name, 129 characters, an id that names no tool.
        for (id, name, said) in [
            ("t.one", "t.two".to_owned(), "another tool is named `t.two`"),
            (
                "t.one",
                "no spaces".to_owned(),
                "`no spaces` is not an MCP tool name",
            ),
            ("t.one", String::new(), "`` is not an MCP tool name"),
            ("t.one", "a".repeat(129), "is not an MCP tool name"),
            ("t.three", "third".to_owned(), "no tool `t.three` to rename"),
        ] {
            let err = server().with_tool_name(id, name).unwrap_err();
            assert!(err.to_string().contains(said), "{err}");
        }
    }

    #[test]
    fn debug_and_errors_say_what_they_are() {
        let shown = format!("{:?}", server().with_page_size(7));
        assert!(
            shown.starts_with("McpServer { tools: [\"t.one\", \"t.two\"], page_size: 7"),
            "{shown}"
        );
        let err = ServeError::new("the HTTP listener failed", "address in use");
        assert_eq!(err.to_string(), "the HTTP listener failed: address in use");
    }

    #[test]
    fn a_content_only_output_rmcp_cannot_read_fails_the_call_naming_why() {
        // A `Contents` output is checked against the blocks' schema before it gets here; if
        // rmcp ever read a block differently, the call says so rather than losing the block.
        let answer = success(json!([{ "type": "hologram" }]), Vec::new(), true);
        assert_eq!(answer.is_error, Some(true));
        let text = serde_json::to_value(&answer.content).unwrap()[0]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            text.contains("a content block of the tool's result is not one rmcp reads"),
            "{text}"
        );
        assert!(answer.structured_content.is_none());
        // Blocks rmcp reads are the answer, with no structured content.
        let answer = success(json!([{ "type": "text", "text": "hi" }]), Vec::new(), true);
        assert_eq!(answer.is_error, Some(false));
        assert_eq!(
            serde_json::to_value(&answer.content).unwrap(),
            json!([{ "type": "text", "text": "hi" }])
        );
        assert!(answer.structured_content.is_none());
    }

    #[test]
    fn server_info_and_instructions_reach_initialization() {
        let server = server()
            .with_server_info("kb", "2.0.0")
            .with_instructions("Search first.");
        let info = server.get_info();
        assert_eq!(info.server_info.name, "kb");
        assert_eq!(info.server_info.version, "2.0.0");
        assert_eq!(info.instructions.as_deref(), Some("Search first."));
        assert!(info.capabilities.tools.is_some());
        assert_eq!(server.get_tool("t.one").unwrap().name, "t.one");
        assert!(server.get_tool("t.three").is_none());
        assert_eq!(server.registry().contracts().count(), 2);
    }

    fn answer(action: ElicitationAction, content: Option<Value>) -> Value {
        let mut result = ElicitResult::new(action);
        result.content = content;
        serde_json::to_value(result).unwrap()
    }

    #[test]
    fn only_an_accepted_yes_approves() {
        let yes = answer(ElicitationAction::Accept, Some(json!({ "approve": true })));
        assert_eq!(decision_of(&yes), ApprovalDecision::Approve);
        let cases = [
            (
                answer(ElicitationAction::Accept, Some(json!({ "approve": false }))),
                "the user did not approve the call",
            ),
            (
                answer(
                    ElicitationAction::Accept,
                    Some(json!({ "approve": "true" })),
                ),
                "the user did not approve the call",
            ),
            (
                answer(ElicitationAction::Accept, None),
                "the user did not approve the call",
            ),
            (
                answer(ElicitationAction::Decline, Some(json!({ "approve": true }))),
                "the user declined the call",
            ),
            (
                answer(ElicitationAction::Cancel, None),
                "the user dismissed the approval question",
            ),
            (
                json!("yes"),
                "the client's answer to the approval question was not an elicitation result",
            ),
        ];
        for (answer, reason) in cases {
            assert_eq!(
                decision_of(&answer),
                ApprovalDecision::Deny {
                    reason: reason.into()
                },
                "{answer}"
            );
        }
    }

    #[test]
    fn the_approval_question_names_the_call_and_bounds_the_arguments() {
        let mut request = ApprovalRequest {
            run_id: String::new(),
            tool_id: "ledger.record".into(),
            identity: "ledger.record@1".into(),
            approval: Approval::Always,
            mutates: vec!["external:ledger".into()],
            risk_level: 2,
            cost_class: CostClass::Trivial,
            input: json!({ "text": "pay rent" }),
        };
        let message = approval_message(&request);
        assert_eq!(
            message,
            "Approve a call to `ledger.record@1` (approval: always; risk level 2; modifies: external:ledger)? Arguments: {\"text\":\"pay rent\"}"
        );
        request.mutates.clear();
        request.input = json!({ "text": "ü".repeat(3000) });
        let message = approval_message(&request);
        assert!(message.contains("modifies: nothing declared"));
        let arguments = message.split("Arguments: ").nth(1).unwrap();
        assert!(arguments.ends_with('…'));
        assert!(
            arguments.len() <= 2_000 + '…'.len_utf8(),
            "{}",
            arguments.len()
        );
        // Exactly at the bound: kept whole.
        request.input = json!("x".repeat(1_998));
        let arguments = approval_message(&request)
            .split("Arguments: ")
            .nth(1)
            .unwrap()
            .to_owned();
        assert_eq!(arguments.len(), 2_000);
        assert!(!arguments.ends_with('…'));
        // An expensive call says so: the question is the user's warning (AIP-14).
        assert!(!approval_message(&request).contains("expensive"));
        request.cost_class = CostClass::Expensive;
        assert!(approval_message(&request).contains("risk level 2; expensive; modifies"));
    }
}
