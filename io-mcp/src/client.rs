//! [`McpClient`]: an MCP server's tools, imported into a [`ToolRegistry`].

use std::fmt;
use std::sync::Arc;

use agentio_core::{AgentError, BoxFuture, ErrorCode};
use agentio_tools::{
    Approval, RegistrationError, ToolContext, ToolContract, ToolError, ToolPlugin, ToolRegistry,
};
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{Peer, RoleClient, ServiceExt};
use serde_json::{Value, json};

/// Why a connection or an import failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientError {
    /// The server could not be started or reached, or the MCP handshake failed.
    Connect(String),
    /// A request to the server failed (transport closed, protocol error).
    Request(String),
    /// Tools the server lists that could not be registered, each with why. The tools that
    /// could be registered were.
    Refused(Vec<RefusedTool>),
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
            ClientError::Refused(refused) => {
                write!(f, "{} remote tool(s) could not be imported:", refused.len())?;
                for tool in refused {
                    write!(f, "\n  - `{}`: {}", tool.remote_name, tool.reason)?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for ClientError {}

/// A remote tool that was imported: its name on the server and its id in the registry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportedTool {
    /// The tool's name on the server.
    pub remote_name: String,
    /// The id it is called by in the registry (`<namespace>.<name>`).
    pub tool_id: String,
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
///   maps to no valid id is refused, by name, in [`ClientError::Refused`];
/// - `readOnlyHint: true` -> no `mutates`, approval `auto`; otherwise the tool is treated as
///   it would be by an MCP host that trusts nothing (the protocol's default is destructive):
///   it mutates `external:mcp/<namespace>` and needs approval (`on-mutate`);
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
    service: RunningService<RoleClient, ()>,
}

impl McpClient {
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
        let transport =
            TokioChildProcess::new(command).map_err(|e| ClientError::Connect(e.to_string()))?;
        let service = ().serve(transport).await.map_err(|e| ClientError::Connect(e.to_string()))?;
        Ok(McpClient { service })
    }

    /// Connects to a streamable HTTP endpoint (`http://host:port/mcp`).
    ///
    /// Here against an agent-io server on a local port: its tool is imported, called through
    /// the local registry (validated both ways on this side too), and the connection closed.
    ///
    /// ```
    /// use agentio_mcp::{McpClient, McpServer};
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
    ///     let imported = client.import_into(&mut registry, "remote").await?;
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
        let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
        let service = ().serve(transport).await.map_err(|e| ClientError::Connect(e.to_string()))?;
        Ok(McpClient { service })
    }

    /// The connection, for requests this type does not wrap (an example is on
    /// [`Self::connect_http`]).
    pub fn peer(&self) -> &Peer<RoleClient> {
        self.service.peer()
    }

    /// Every tool the server lists (all pages; an example is on [`Self::connect_http`]).
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        self.service
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| ClientError::Request(e.to_string()))
    }

    /// Registers every tool the server lists in `registry`, as `<namespace>.<name>`.
    ///
    /// Returns what was imported. When some tools cannot be, the others are still registered
    /// and the error names each refused tool and why. (An example is on
    /// [`Self::connect_http`].)
    pub async fn import_into(
        &self,
        registry: &mut ToolRegistry,
        namespace: &str,
    ) -> Result<Vec<ImportedTool>, ClientError> {
        let tools = self.list_tools().await?;
        let mut imported = Vec::new();
        let mut refused = Vec::new();
        for tool in tools {
            let remote_name = tool.name.to_string();
            match self.register(registry, namespace, tool) {
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
    ) -> Result<String, String> {
        let contract = contract_of(namespace, &tool)?;
        let tool_id = contract.id.clone();
        let plugin = RemoteTool {
            peer: self.service.peer().clone(),
            remote_name: tool.name.to_string(),
            has_output_schema: tool.output_schema.is_some(),
            contract,
        };
        registry
            .register_plugin(Arc::new(plugin))
            .map_err(|e: RegistrationError| e.to_string())?;
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

fn contract_of(namespace: &str, tool: &Tool) -> Result<ToolContract, String> {
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
    let description = tool
        .description
        .as_deref()
        .filter(|d| !d.trim().is_empty())
        .map_or_else(|| format!("The MCP tool `{}`.", tool.name), str::to_owned);
    let mut contract = ToolContract::new(id, "1.0.0", description, inputs, outputs);
    if let Some(title) = tool.title.as_deref().filter(|t| !t.trim().is_empty()) {
        contract.name = title.to_owned();
    }
    let hints = tool.annotations.clone().unwrap_or_default();
    if hints.read_only_hint != Some(true) {
        contract.mutates = vec![format!("external:mcp/{namespace}")];
        contract.approval = Approval::OnMutate;
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
            let result = self
                .peer
                .call_tool(params)
                .await
                .map_err(|e| remote_failure(&e))?;
            output_of(result, self.has_output_schema)
        })
    }
}

fn remote_failure(error: &ServiceError) -> ToolError {
    AgentError::new(
        ErrorCode::UpstreamError,
        "the MCP server could not complete the call",
    )
    .with_operator_detail(error.to_string())
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
            return Err(error);
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
    fn contracts_follow_the_hints_and_gate_what_may_write() {
        use rmcp::model::ToolAnnotations;
        let read_only = contract_of(
            "r",
            &tool(
                "look",
                Some(ToolAnnotations::new().read_only(true).idempotent(true)),
                true,
            ),
        )
        .unwrap();
        assert!(read_only.mutates.is_empty());
        assert_eq!(read_only.approval, Approval::Auto);
        assert!(read_only.idempotent);
        assert_eq!(read_only.description, "The MCP tool `look`.");
        assert_eq!(read_only.metadata["mcpName"], "look");
        read_only.check().unwrap();

        // No hints: the protocol's defaults (not read-only, may destroy), so gated.
        let unknown = contract_of("r", &tool("write", None, false)).unwrap();
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
        assert_eq!(contract_of("r", &titled).unwrap().name, "Look it up");
        titled.title = Some("  ".into());
        assert_eq!(contract_of("r", &titled).unwrap().name, "r.look");
        // A description is kept; a blank one gets the fallback.
        let mut described = tool("look", None, false);
        described.description = Some("Looks.".into());
        assert_eq!(contract_of("r", &described).unwrap().description, "Looks.");
        described.description = Some(" \n".into());
        assert_eq!(
            contract_of("r", &described).unwrap().description,
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
