//! [`McpClient`]: an MCP server's tools, imported into a [`ToolRegistry`].

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use agentio_core::{AgentError, BoxFuture, ErrorCode};
use agentio_tools::{
    Approval, RegistrationError, ToolContext, ToolContract, ToolError, ToolPlugin, ToolRegistry,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientRequest, ListToolsRequest, PaginatedRequestParams,
    ServerResult, Tool,
};
use rmcp::service::{PeerRequestOptions, RunningService, ServiceError};
use rmcp::{Peer, RoleClient};

use crate::answer::{Answerer, CallFailure, clipped, without_transport_type};
use crate::skills::error::SkillError;
use serde_json::{Value, json};

/// Why a connection or an import failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientError {
    /// The server could not be started or reached, or the MCP handshake failed.
    Connect(String),
    /// A request to the server failed (transport closed, protocol error).
    Request(String),
    /// The server did not answer within the request timeout.
    Timeout {
        /// What was asked (`initialize`, `tools/list`).
        request: &'static str,
        /// The timeout it had.
        after: Duration,
    },
    /// The server sent more than an import accepts: too many pages or tools, or a list that
    /// never ends. Nothing was registered.
    Bound(String),
    /// Tools the server lists that could not be registered, each with why. The tools that
    /// could be registered were.
    Refused(Vec<RefusedTool>),
    /// The server refused the request's authorization: HTTP 401 (no token, or one it does not
    /// accept) or 403 (a scope the token lacks). `challenge` is its `WWW-Authenticate` header
    /// (at most 4 KiB of it, then `…` when it was longer), which names where to authorize and
    /// for what scope: give it to rmcp's OAuth client (`AuthorizationRequest::with_challenge`),
    /// then connect again with `Connect::http_authorized` (feature `oauth`).
    Unauthorized {
        /// The server's `WWW-Authenticate` header.
        challenge: String,
    },
    /// A skill was not loaded, or a file of it not read ([`crate::skills`]): the server does
    /// not offer skills, or what it sent is not what the skill's entry lists.
    Skill(SkillError),
}

impl ClientError {
    /// A failed request as the error it is: [`ClientError::Unauthorized`] when the transport
    /// hit the server's authorization challenge, `other` (given the failure's text) otherwise.
    pub(crate) fn refused_or(
        challenge: Option<&str>,
        error: &dyn fmt::Display,
        other: impl FnOnce(String) -> ClientError,
    ) -> ClientError {
        match challenge {
            Some(challenge) => ClientError::Unauthorized {
                challenge: clipped(challenge.to_owned()),
            },
            None => other(clipped(without_transport_type(error.to_string()))),
        }
    }
}

/// A remote tool that could not be imported.
#[derive(Debug)]
pub struct RefusedTool {
    /// The tool's name on the server.
    pub remote_name: String,
    /// Why: its name maps to no valid tool id, or its contract was refused.
    pub reason: String,
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Connect(reason) => write!(f, "cannot connect to the MCP server: {reason}"),
            ClientError::Request(reason) => write!(f, "the MCP server did not answer: {reason}"),
            ClientError::Timeout { request, after } => write!(
                f,
                "the MCP server did not answer `{request}` within {} ms",
                after.as_millis()
            ),
            ClientError::Bound(reason) => {
                write!(
                    f,
                    "the MCP server sent more than an import accepts: {reason}"
                )
            }
            ClientError::Refused(refused) => {
                write!(f, "{} remote tool(s) could not be imported:", refused.len())?;
                for tool in refused {
                    write!(f, "\n  - `{}`: {}", tool.remote_name, tool.reason)?;
                }
                Ok(())
            }
            ClientError::Unauthorized { challenge } => write!(
                f,
                "the MCP server refused the request's authorization (WWW-Authenticate: {challenge})"
            ),
            ClientError::Skill(refusal) => write!(f, "skill refused: {refusal}"),
        }
    }
}

impl std::error::Error for ClientError {}

impl From<SkillError> for ClientError {
    fn from(error: SkillError) -> Self {
        ClientError::Skill(error)
    }
}

/// A remote tool that was imported: its name on the server and its id in the registry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportedTool {
    /// The tool's name on the server.
    pub remote_name: String,
    /// The id it is called by in the registry (`<namespace>.<name>`).
    pub tool_id: String,
}

/// The default time a server has to answer one request of the connection or of an import
/// (`initialize`, each `tools/list` page). Calls have their contract's `timeout_ms`.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// What an import accepts from a server, and whether the server is trusted.
///
/// A remote server describes its own tools: its names, schemas and annotations are claims, not
/// facts. The defaults bound what one import can cost (pages, tools, bytes, nesting and the
/// size a schema reaches once its references are expanded, all checked before anything is
/// compiled) and treat the server as untrusted: every imported tool is gated (it mutates
/// `external:mcp/<namespace>` and needs approval), whatever its `readOnlyHint` says.
/// [`Self::trusted`] is the host's explicit, per-server decision to believe the hints.
///
/// ```
/// use agentio_mcp::ImportOptions;
/// use std::time::Duration;
///
/// let options = ImportOptions::default();
/// assert!(!options.trusted);
/// assert_eq!(options.max_tools, 512);
/// let mut mine = ImportOptions::default().trusted().with_request_timeout(Duration::from_secs(5));
/// mine.max_tools = 20;
/// assert!(mine.trusted);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportOptions {
    /// Believe the server's annotations: a `readOnlyHint: true` tool is imported with no
    /// `mutates` and `approval: auto`. Off by default (MCP: "clients MUST consider tool
    /// annotations to be untrusted unless they come from trusted servers").
    pub trusted: bool,
    /// How long each `tools/list` page may take.
    pub request_timeout: Duration,
    /// How many `tools/list` pages an import follows (a server whose cursor never ends is
    /// refused, not followed forever).
    pub max_pages: usize,
    /// How many tools an import accepts in all.
    pub max_tools: usize,
    /// How large one tool's input or output schema may be, as JSON text.
    pub max_schema_bytes: usize,
    /// How deep one schema may nest.
    pub max_schema_depth: usize,
    /// How many nodes one schema may become once its references are expanded
    /// ([`agentio_core::limits::check_expansion`]): bounds the cost of checking a value.
    pub max_schema_nodes: usize,
    /// How long a tool's name may be, in bytes (MCP: 1 to 128 characters).
    pub max_name_bytes: usize,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            trusted: false,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_pages: 64,
            max_tools: 512,
            max_schema_bytes: 256 * 1024,
            max_schema_depth: 32,
            max_schema_nodes: 50_000,
            max_name_bytes: 128,
        }
    }
}

impl ImportOptions {
    /// Marks the server trusted: its annotations are believed (see [`Self::trusted`]).
    pub fn trusted(mut self) -> Self {
        self.trusted = true;
        self
    }

    /// Sets [`Self::request_timeout`].
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }
}

/// One `*/list` walk's pages: at most `max` of them, each cursor new and at most 1 KiB, so a
/// server whose list never ends, or comes round again, is refused, not followed forever.
pub(crate) struct Pages {
    method: &'static str,
    max: usize,
    asked: usize,
    cursor: Option<String>,
    seen: std::collections::HashSet<String>,
}

impl Pages {
    pub(crate) fn new(method: &'static str, max: usize) -> Self {
        Pages {
            method,
            max,
            asked: 0,
            cursor: None,
            seen: std::collections::HashSet::new(),
        }
    }

    /// The next page's parameters (its cursor), or the refusal once `max` pages were asked for.
    pub(crate) fn next_request(&mut self) -> Result<PaginatedRequestParams, ClientError> {
        if self.asked == self.max {
            return Err(ClientError::Bound(format!(
                "the server's {} goes on past {} pages",
                self.method, self.max
            )));
        }
        self.asked += 1;
        Ok(PaginatedRequestParams::default().with_cursor(self.cursor.take()))
    }

    /// Takes a page's `nextCursor`: whether there is a page after it.
    pub(crate) fn more(&mut self, next: Option<String>) -> Result<bool, ClientError> {
        match next {
            None => Ok(false),
            Some(next) if next.len() <= 1024 && self.seen.insert(next.clone()) => {
                self.cursor = Some(next);
                Ok(true)
            }
            Some(_) => Err(ClientError::Bound(format!(
                "the server's {} cursor repeats or is not a cursor",
                self.method
            ))),
        }
    }
}

/// A connection to an MCP server whose tools can be imported into a [`ToolRegistry`].
///
/// Imported tools are [`ToolPlugin`]s whose contract is built from the server's `tools/list`
/// entry, so the registry enforces the advertised schemas both ways: arguments are validated
/// against `inputSchema` before anything is sent, and `structuredContent` against
/// `outputSchema` before the caller sees it. Local typed tools and remote tools then share
/// one registry, one approval gate and one audit trail.
///
/// How a remote tool's contract is built:
/// - id: `<namespace>.<name>`, the name lowercased with `_` and other characters outside the
///   id alphabet turned into `-` (`get_weather` -> `weather.get-weather`); a name that still
///   maps to no valid id, or that is longer than [`ImportOptions::max_name_bytes`] or holds
///   characters outside printable ASCII, is refused, by name, in [`ClientError::Refused`];
/// - trust: from an untrusted server (the default), every tool mutates
///   `external:mcp/<namespace>` and needs approval (`on-mutate`), whatever its annotations
///   claim; they are kept, as hints for the person approving, under `metadata.mcpAnnotations`.
///   From a server the host marked [trusted](ImportOptions::trusted), `readOnlyHint: true`
///   gives no `mutates` and approval `auto`, and any other tool is gated as above (the
///   protocol's default is destructive);
/// - bounds: the pages, tools, schema sizes, nesting and reference expansion an import
///   accepts ([`ImportOptions`]) are checked before any schema is compiled; a tool past a
///   schema bound is refused, named, and the others are imported; every request has a
///   timeout; remote names, descriptions, codes and messages are clipped;
/// - `idempotentHint` -> `idempotent`;
/// - the output is `structuredContent`; a tool without `outputSchema` answers
///   `{"content": [...]}`, its content blocks as the server sent them;
/// - an `isError` result becomes the error its text carries when that is an AIP-14 envelope
///   (an agent-io server's), and `upstream_error` otherwise.
///
/// Dropping a call (a timeout, a cancellation) cancels the request on the server.
///
/// ```no_run
/// use agentio_mcp::McpClient;
/// use agentio_tools::ToolRegistry;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let client = McpClient::connect_http("http://127.0.0.1:8080/mcp").await?;
/// let mut registry = ToolRegistry::new();
/// let imported = client.import_into(&mut registry, "weather").await?;
/// let forecast = registry.call(&imported[0].tool_id, serde_json::json!({ "city": "Oslo" })).await?;
/// # Ok(()) }
/// ```
pub struct McpClient {
    service: RunningService<RoleClient, Answerer>,
    answerer: Answerer,
}

impl McpClient {
    pub(crate) fn of(service: RunningService<RoleClient, Answerer>, answerer: Answerer) -> Self {
        McpClient { service, answerer }
    }

    /// The connection, for requests this type does not wrap (an example is on
    /// [`Self::connect_http`]).
    pub fn peer(&self) -> &Peer<RoleClient> {
        self.service.peer()
    }

    /// Calls the server's tool `params.name` as it is (no local validation: that is what
    /// [`Self::import_into`]'s tools add), following a 2026-07-28 server's `input_required`
    /// answers through the [handler](crate::Connect::handler): its questions answered, the call sent
    /// again with the answers and the server's request state, at most
    /// [`MAX_INPUT_ROUNDS`](crate::MAX_INPUT_ROUNDS) rounds. A 2025-11-25 server's questions
    /// arrive as requests of its own and reach the same handler.
    ///
    /// A question the handler does not answer (no handler, or a capability it lacks) fails the
    /// call with [`ClientError::Request`] naming what was asked.
    ///
    /// The call waits as long as the server takes: a tool may run for minutes, and rmcp skips
    /// an answer it cannot read as a JSON-RPC message, so a server that answers with one leaves
    /// the call waiting. Bound it with `tokio::time::timeout` (dropping the call cancels it on
    /// the server), or call through [`Self::import_into`]'s tools, which have their contract's
    /// `timeout_ms`.
    pub async fn call_tool(
        &self,
        params: CallToolRequestParams,
    ) -> Result<CallToolResult, ClientError> {
        crate::answer::call_tool(self.service.peer(), &self.answerer, params)
            .await
            .map_err(|e| match e {
                CallFailure::Service(e) => {
                    ClientError::refused_or(e.auth_challenge(), &e, ClientError::Request)
                }
                other => ClientError::Request(clipped(other.to_string())),
            })
    }

    /// Every tool the server lists (all pages, within the default [`ImportOptions`] bounds;
    /// an entry that is not a valid tool is left out: [`Self::import_into`] names it). An
    /// example is on [`Self::connect_http`].
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        let listed = self.list_bounded(&ImportOptions::default()).await?;
        Ok(listed.into_iter().filter_map(Result::ok).collect())
    }

    /// Every `tools/list` page, bounded: each request has `options.request_timeout`, at most
    /// `options.max_pages` pages and `options.max_tools` entries are taken, and a repeated
    /// cursor ends the walk as a refusal. Each entry is decoded alone, so one malformed tool
    /// is that tool's refusal, not the whole list's.
    async fn list_bounded(
        &self,
        options: &ImportOptions,
    ) -> Result<Vec<Result<Tool, RefusedTool>>, ClientError> {
        let mut tools = Vec::new();
        let mut pages = Pages::new("tools/list", options.max_pages);
        loop {
            let request = ClientRequest::ListToolsRequest(ListToolsRequest {
                method: Default::default(),
                params: Some(pages.next_request()?),
                extensions: Default::default(),
            });
            let answer = self
                .ask(request, "tools/list", options.request_timeout)
                .await?;
            let (entries, next) = page_of(answer)?;
            if tools.len() + entries.len() > options.max_tools {
                return Err(ClientError::Bound(format!(
                    "the server lists more than {} tools",
                    options.max_tools
                )));
            }
            tools.extend(entries.into_iter().map(|entry| tool_of(entry, options)));
            if !pages.more(next)? {
                return Ok(tools);
            }
        }
    }

    /// Sends `request` (named `name` in a timeout) and waits for its answer at most `timeout`:
    /// rmcp's own timeout, and ours around the whole exchange (sending included).
    pub(crate) async fn ask(
        &self,
        request: ClientRequest,
        name: &'static str,
        timeout: Duration,
    ) -> Result<ServerResult, ClientError> {
        let answer = async {
            self.service
                .peer()
                .send_request_with_option(request, PeerRequestOptions::with_timeout(timeout))
                .await?
                .await_response()
                .await
        };
        match tokio::time::timeout(timeout, answer).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(ServiceError::Timeout { .. })) | Err(_) => Err(ClientError::Timeout {
                request: name,
                after: timeout,
            }),
            Ok(Err(e)) => Err(ClientError::refused_or(
                e.auth_challenge(),
                &e,
                ClientError::Request,
            )),
        }
    }

    /// Registers every tool the server lists in `registry`, as `<namespace>.<name>`, with the
    /// default [`ImportOptions`]: bounded, and the server untrusted (every tool gated).
    ///
    /// Returns what was imported. When some tools cannot be, the others are still registered
    /// and the error names each refused tool and why. (An example is on
    /// [`Self::connect_http`].)
    pub async fn import_into(
        &self,
        registry: &mut ToolRegistry,
        namespace: &str,
    ) -> Result<Vec<ImportedTool>, ClientError> {
        self.import_into_with(registry, namespace, &ImportOptions::default())
            .await
    }

    /// [`Self::import_into`] under `options`: the bounds, and whether this server is trusted.
    pub async fn import_into_with(
        &self,
        registry: &mut ToolRegistry,
        namespace: &str,
        options: &ImportOptions,
    ) -> Result<Vec<ImportedTool>, ClientError> {
        let tools = self.list_bounded(options).await?;
        let mut imported = Vec::new();
        let mut refused = Vec::new();
        for tool in tools {
            let tool = match tool {
                Ok(tool) => tool,
                Err(refusal) => {
                    refused.push(refusal);
                    continue;
                }
            };
            let remote_name = shown_name(&tool.name);
            match self.register(registry, namespace, tool, options) {
                Ok(tool_id) => imported.push(ImportedTool {
                    remote_name,
                    tool_id,
                }),
                Err(reason) => refused.push(RefusedTool {
                    remote_name,
                    reason,
                }),
            }
        }
        if refused.is_empty() {
            Ok(imported)
        } else {
            Err(ClientError::Refused(refused))
        }
    }

    fn register(
        &self,
        registry: &mut ToolRegistry,
        namespace: &str,
        tool: Tool,
        options: &ImportOptions,
    ) -> Result<String, String> {
        let contract = contract_of(namespace, &tool, options)?;
        let tool_id = contract.id.clone();
        let plugin = RemoteTool {
            peer: self.service.peer().clone(),
            answerer: self.answerer.clone(),
            remote_name: tool.name.to_string(),
            has_output_schema: tool.output_schema.is_some(),
            contract,
        };
        registry
            .register_plugin(Arc::new(plugin))
            .map_err(|e: RegistrationError| clipped(e.to_string()))?;
        Ok(tool_id)
    }

    /// Closes the connection (and, for [`Self::spawn`], lets the child exit; an example is on
    /// [`Self::connect_http`]).
    pub async fn close(self) -> Result<(), ClientError> {
        self.service
            .cancel()
            .await
            .map(|_| ())
            .map_err(|e| ClientError::Request(e.to_string()))
    }
}

impl fmt::Debug for McpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpClient")
            .field(
                "server",
                &self
                    .service
                    .peer()
                    .peer_info()
                    .and_then(|i| i.server_info.clone().map(|s| s.name)),
            )
            .finish()
    }
}

/// `<namespace>.<name>` in the contract id alphabet (`[a-z0-9.-]`).
pub(crate) fn tool_id_for(namespace: &str, name: &str) -> Result<String, String> {
    let mapped: String = name
        .chars()
        .map(|c| match c {
            'a'..='z' | '0'..='9' | '.' | '-' => c,
            'A'..='Z' => c.to_ascii_lowercase(),
            _ => '-',
        })
        .collect();
    let id = format!("{namespace}.{}", mapped.trim_matches(['-', '.']));
    let valid = (2..=80).contains(&id.len())
        && id.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && id.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit());
    if valid {
        Ok(id)
    } else {
        Err(format!(
            "the name maps to `{id}`, which is not a valid tool id (2 to 80 of a-z, 0-9, `.`, `-`, starting and ending with a letter or digit)"
        ))
    }
}

/// A remote name as we show it: control characters escaped, at most 128 bytes.
fn shown_name(name: &str) -> String {
    let mut shown: String = name
        .chars()
        .flat_map(char::escape_debug)
        .take(256)
        .collect();
    agentio_core::limits::clip(&mut shown, 128);
    shown
}

/// The entries and the next cursor of one `tools/list` answer. A list rmcp could not decode
/// whole (one malformed tool fails its typed decoding) arrives as a custom result: its
/// entries are decoded one by one by [`tool_of`].
fn page_of(answer: ServerResult) -> Result<(Vec<Value>, Option<String>), ClientError> {
    match answer {
        ServerResult::ListToolsResult(page) => {
            let entries = page
                .tools
                .iter()
                .map(|tool| serde_json::to_value(tool).unwrap_or(Value::Null))
                .collect();
            Ok((entries, page.next_cursor))
        }
        ServerResult::CustomResult(raw) => {
            let Value::Object(mut raw) = raw.0 else {
                return Err(ClientError::Request(
                    "the server answered tools/list with something that is not a list".into(),
                ));
            };
            let Some(Value::Array(entries)) = raw.remove("tools") else {
                return Err(ClientError::Request(
                    "the server answered tools/list without a `tools` array".into(),
                ));
            };
            let next = match raw.remove("nextCursor") {
                Some(Value::String(cursor)) => Some(cursor),
                _ => None,
            };
            Ok((entries, next))
        }
        _ => Err(ClientError::Request(
            "the server answered tools/list with another kind of result".into(),
        )),
    }
}

/// One listed entry as a [`Tool`], or why it is refused: its name checked first, then each
/// schema's size, nesting and expansion, before anything decodes or compiles it.
fn tool_of(entry: Value, options: &ImportOptions) -> Result<Tool, RefusedTool> {
    let name = match entry.get("name") {
        Some(Value::String(name)) => name.as_str(),
        _ => "",
    };
    let shown = shown_name(name);
    let refuse = |reason: String| RefusedTool {
        remote_name: shown.clone(),
        reason: clipped(reason),
    };
    if name.is_empty() || name.len() > options.max_name_bytes {
        return Err(refuse(format!(
            "a tool name must be 1 to {} bytes long",
            options.max_name_bytes
        )));
    }
    if !name.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return Err(refuse(
            "a tool name must be printable ASCII (MCP names use A-Z, a-z, 0-9, `_`, `-`, `.`)"
                .into(),
        ));
    }
    for key in ["inputSchema", "outputSchema"] {
        let Some(schema) = entry.get(key) else {
            continue;
        };
        if let Err(violation) = agentio_core::limits::check_depth(schema, options.max_schema_depth)
        {
            return Err(refuse(format!(
                "its `{key}` nests deeper than {} levels (at `{}`)",
                options.max_schema_depth, violation.pointer
            )));
        }
        let bytes = serde_json::to_vec(schema).map_or(usize::MAX, |text| text.len());
        if bytes > options.max_schema_bytes {
            return Err(refuse(format!(
                "its `{key}` is {bytes} bytes, over the limit of {}",
                options.max_schema_bytes
            )));
        }
        if let Err(violation) =
            agentio_core::limits::check_expansion(schema, options.max_schema_nodes)
        {
            return Err(refuse(format!(
                "its `{key}` cannot be checked in bounded time: {}",
                violation.message
            )));
        }
    }
    let decoded = serde_json::from_value::<Tool>(entry);
    decoded.map_err(|e| refuse(format!("it is not a valid MCP tool: {e}")))
}

fn contract_of(
    namespace: &str,
    tool: &Tool,
    options: &ImportOptions,
) -> Result<ToolContract, String> {
    let id = tool_id_for(namespace, &tool.name)?;
    let inputs = Value::Object((*tool.input_schema).clone());
    let outputs = match &tool.output_schema {
        Some(schema) => Value::Object((**schema).clone()),
        None => json!({
            "type": "object",
            "properties": { "content": { "type": "array" } },
            "required": ["content"],
        }),
    };
    let mut description = tool
        .description
        .as_deref()
        .filter(|d| !d.trim().is_empty())
        .map_or_else(|| format!("The MCP tool `{}`.", tool.name), str::to_owned);
    // The contract's limits (2000 and 80 characters), kept by clipping rather than refusing.
    agentio_core::limits::clip(&mut description, 1_990);
    let mut contract = ToolContract::new(id, "1.0.0", description, inputs, outputs);
    if let Some(title) = tool.title.as_deref().filter(|t| !t.trim().is_empty()) {
        let mut title = title.to_owned();
        agentio_core::limits::clip(&mut title, 76);
        contract.name = title;
    }
    let hints = tool.annotations.clone().unwrap_or_default();
    // MCP: annotations are untrusted unless they come from a trusted server. From any other,
    // they are shown to whoever approves, and lower nothing.
    if !(options.trusted && hints.read_only_hint == Some(true)) {
        contract.mutates = vec![format!("external:mcp/{namespace}")];
        contract.approval = Approval::OnMutate;
    }
    if let Ok(shown) = serde_json::to_value(&hints)
        && shown.as_object().is_some_and(|o| !o.is_empty())
        && shown.to_string().len() <= 4_096
    {
        contract.metadata.insert("mcpAnnotations".into(), shown);
    }
    contract.idempotent = hints.idempotent_hint == Some(true);
    contract
        .metadata
        .insert("mcpName".into(), Value::String(tool.name.to_string()));
    Ok(contract)
}

/// A tool on an MCP server, called through the connection.
struct RemoteTool {
    peer: Peer<RoleClient>,
    answerer: Answerer,
    remote_name: String,
    has_output_schema: bool,
    contract: ToolContract,
}

impl ToolPlugin for RemoteTool {
    fn tool_contract(&self) -> ToolContract {
        self.contract.clone()
    }

    fn execute<'a>(
        &'a self,
        input: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            let arguments = match input {
                Value::Object(map) => map,
                _ => serde_json::Map::new(),
            };
            let params =
                CallToolRequestParams::new(self.remote_name.clone()).with_arguments(arguments);
            let result = crate::answer::call_tool(&self.peer, &self.answerer, params)
                .await
                .map_err(|e| remote_failure(&e))?;
            output_of(result, self.has_output_schema)
        })
    }
}

fn remote_failure(error: &CallFailure) -> ToolError {
    AgentError::new(
        ErrorCode::UpstreamError,
        "the MCP server could not complete the call",
    )
    .with_operator_detail(clipped(error.to_string()))
}

/// A remote AIP-14 error kept to our sizes: a code of at most 64 bytes (a longer one becomes
/// `upstream_error`), a clipped message, and at most 32 clipped violations.
fn bounded_remote_error(error: &AgentError) -> AgentError {
    let code = if error.code().as_str().len() <= 64 {
        error.code().clone()
    } else {
        ErrorCode::UpstreamError
    };
    let violations = error
        .violations()
        .iter()
        .take(32)
        .map(|v| agentio_core::Violation {
            pointer: agentio_core::limits::clip_pointer(v.pointer.clone()),
            keyword: shown_name(&v.keyword),
            message: clipped(v.message.clone()),
        })
        .collect();
    AgentError::new(code, clipped(error.message().to_owned()))
        .with_violations(violations)
        .with_retryable(error.is_retryable())
}

pub(crate) fn output_of(
    result: CallToolResult,
    has_output_schema: bool,
) -> Result<Value, ToolError> {
    let text = || {
        result
            .content
            .iter()
            .filter_map(|block| block.as_text().map(|t| t.text.as_str()))
            .collect::<Vec<_>>()
            .join("\n")
    };
    if result.is_error == Some(true) {
        let text = text();
        // An agent-io server sends its AIP-14 envelope: keep the code and the violations.
        if let Ok(envelope) = serde_json::from_str::<Value>(&text)
            && envelope.get("ok") == Some(&Value::Bool(false))
            && let Some(error) = envelope.get("error")
            && let Ok(error) = serde_json::from_value::<AgentError>(error.clone())
        {
            return Err(bounded_remote_error(&error));
        }
        let mut message = text;
        bound_remote_message(&mut message);
        return Err(AgentError::new(ErrorCode::UpstreamError, message));
    }
    match (result.structured_content, has_output_schema) {
        (Some(value), _) => Ok(value),
        (None, true) => Err(AgentError::new(
            ErrorCode::UpstreamError,
            "the MCP server declared an output schema but sent no structuredContent",
        )),
        (None, false) => Ok(json!({
            "content": serde_json::to_value(&result.content).unwrap_or(Value::Null),
        })),
    }
}

/// Keeps a remote message to a readable size.
fn bound_remote_message(message: &mut String) {
    agentio_core::limits::clip(message, 4_096);
    if message.trim().is_empty() {
        *message = "the MCP tool failed without saying why".into();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transport_failure_is_said_without_the_rust_type_rmcp_names() {
        type Pipe = rmcp::transport::async_rw::AsyncRwTransport<
            RoleClient,
            tokio::io::DuplexStream,
            tokio::io::DuplexStream,
        >;
        let failed = rmcp::service::ServiceError::TransportSend(
            rmcp::transport::DynamicTransportError::new::<Pipe, RoleClient>(std::io::Error::other(
                "HTTP 500",
            )),
        );
        assert!(failed.to_string().contains("AsyncRwTransport<"), "{failed}");
        let refused = ClientError::refused_or(None, &failed, ClientError::Request);
        assert_eq!(
            refused.to_string(),
            "the MCP server did not answer: Transport send error: HTTP 500"
        );
        for kept in ["Transport closed", "Transport [x", "Mcp error: -32601: no"] {
            assert_eq!(without_transport_type(kept.to_owned()), kept);
        }
    }

    #[test]
    fn remote_names_map_into_the_id_alphabet_under_the_namespace() {
        assert_eq!(
            tool_id_for("weather", "get_weather").unwrap(),
            "weather.get-weather"
        );
        assert_eq!(
            tool_id_for("gh", "Create Issue").unwrap(),
            "gh.create-issue"
        );
        assert_eq!(
            tool_id_for("remote", "kb.search").unwrap(),
            "remote.kb.search"
        );
        // Leading and trailing separators are trimmed, so the id still ends in a letter or digit.
        assert_eq!(tool_id_for("r", "_private_").unwrap(), "r.private");
    }

    #[test]
    fn names_that_map_to_no_valid_id_are_refused_with_the_reason() {
        for (namespace, name) in [("r", "___"), ("r", ""), ("-r", "x"), ("r", &"x".repeat(80))] {
            let err = tool_id_for(namespace, name).unwrap_err();
            assert!(err.contains("not a valid tool id"), "{name}: {err}");
        }
        // Exactly 80 characters is the longest id.
        assert!(tool_id_for("r", &"x".repeat(78)).is_ok());
        assert!(tool_id_for("r", &"x".repeat(79)).is_err());
    }

    fn tool(name: &str, hints: Option<rmcp::model::ToolAnnotations>, output: bool) -> Tool {
        let mut input = serde_json::Map::new();
        input.insert("type".into(), json!("object"));
        let mut tool = Tool::new(name.to_owned(), "", input.clone());
        tool.annotations = hints;
        if output {
            tool.output_schema = Some(Arc::new(input));
        }
        tool
    }

    #[test]
    fn only_a_trusted_servers_hints_lower_the_gate() {
        use rmcp::model::ToolAnnotations;
        let claims_read_only = tool(
            "look",
            Some(ToolAnnotations::new().read_only(true).idempotent(true)),
            true,
        );
        // From an untrusted server (the default) the claim lowers nothing: gated, and the
        // hints are kept for whoever approves.
        let untrusted = contract_of("r", &claims_read_only, &ImportOptions::default()).unwrap();
        assert_eq!(untrusted.mutates, vec!["external:mcp/r".to_owned()]);
        assert_eq!(untrusted.approval, Approval::OnMutate);
        assert!(untrusted.needs_approval());
        assert_eq!(untrusted.metadata["mcpAnnotations"]["readOnlyHint"], true);
        untrusted.check().unwrap();
        // From a server the host trusts, the hint is believed.
        let trusted = ImportOptions::default().trusted();
        let read_only = contract_of("r", &claims_read_only, &trusted).unwrap();
        assert!(read_only.mutates.is_empty());
        assert_eq!(read_only.approval, Approval::Auto);
        assert!(read_only.idempotent);
        assert_eq!(read_only.description, "The MCP tool `look`.");
        assert_eq!(read_only.metadata["mcpName"], "look");
        read_only.check().unwrap();
        // A trusted server's tool that does not claim read-only is still gated.
        let writes = tool(
            "write",
            Some(ToolAnnotations::new().read_only(false)),
            false,
        );
        assert!(
            contract_of("r", &writes, &trusted)
                .unwrap()
                .needs_approval()
        );
    }

    #[test]
    fn contracts_follow_the_hints_and_gate_what_may_write() {
        let options = ImportOptions::default().trusted();
        // No hints: the protocol's defaults (not read-only, may destroy), so gated.
        let unknown = contract_of("r", &tool("write", None, false), &options).unwrap();
        assert_eq!(unknown.mutates, vec!["external:mcp/r".to_owned()]);
        assert_eq!(unknown.approval, Approval::OnMutate);
        assert!(!unknown.idempotent);
        assert!(unknown.needs_approval());
        unknown.check().unwrap();
        // Without an outputSchema the output is the content blocks.
        assert_eq!(unknown.outputs["required"], json!(["content"]));
        // The tool's title names the contract; a blank one does not.
        let mut titled = tool("look", None, false);
        titled.title = Some("Look it up".into());
        assert_eq!(
            contract_of("r", &titled, &options).unwrap().name,
            "Look it up"
        );
        titled.title = Some("  ".into());
        assert_eq!(contract_of("r", &titled, &options).unwrap().name, "r.look");
        // A description is kept; a blank one gets the fallback.
        let mut described = tool("look", None, false);
        described.description = Some("Looks.".into());
        assert_eq!(
            contract_of("r", &described, &options).unwrap().description,
            "Looks."
        );
        described.description = Some(" \n".into());
        assert_eq!(
            contract_of("r", &described, &options).unwrap().description,
            "The MCP tool `look`."
        );
    }

    #[test]
    fn results_become_outputs_or_the_errors_they_carry() {
        let ok = CallToolResult::structured(json!({ "a": 1 }));
        assert_eq!(output_of(ok, true).unwrap(), json!({ "a": 1 }));

        let text = CallToolResult::success(vec![rmcp::model::ContentBlock::text("hi")]);
        assert_eq!(
            output_of(text.clone(), false).unwrap()["content"][0]["text"],
            "hi"
        );
        // A declared output schema with no structured content is the server's fault.
        let err = output_of(text, true).unwrap_err();
        assert_eq!(err.code(), &ErrorCode::UpstreamError);

        let envelope = json!({ "ok": false, "error": { "code": "ledger:closed", "message": "closed", "retryable": false } });
        let failed =
            CallToolResult::error(vec![rmcp::model::ContentBlock::text(envelope.to_string())]);
        let err = output_of(failed, true).unwrap_err();
        assert_eq!(err.code().as_str(), "ledger:closed");
        assert_eq!(err.message(), "closed");

        let plain = CallToolResult::error(vec![rmcp::model::ContentBlock::text("disk full")]);
        let err = output_of(plain, true).unwrap_err();
        assert_eq!(err.code(), &ErrorCode::UpstreamError);
        assert_eq!(err.message(), "disk full");

        let silent = CallToolResult::error(vec![]);
        assert_eq!(
            output_of(silent, true).unwrap_err().message(),
            "the MCP tool failed without saying why"
        );
        let long = CallToolResult::error(vec![rmcp::model::ContentBlock::text("é".repeat(5000))]);
        let message = output_of(long, true).unwrap_err().message().to_owned();
        assert!(message.len() <= 4_096 + '…'.len_utf8(), "{}", message.len());
        assert!(message.ends_with('…'));
    }
}
