//! The MCP conformance suite's client under test (`@modelcontextprotocol/conformance client`),
//! on agent-io's [`McpClient`].
//!
//! The suite starts a scenario's server, runs `cargo run --features agentio-mcp-examples/oauth
//! --example mcp_conformance_client -- URL`, names the scenario in `MCP_CONFORMANCE_SCENARIO`,
//! the protocol revision in `MCP_CONFORMANCE_PROTOCOL_VERSION` and passes what the scenario
//! needs (the tool calls to make, pre-registered OAuth credentials) as JSON in
//! `MCP_CONFORMANCE_CONTEXT`.
//!
//! What a host would write, each piece through the library:
//! - the answers to the server's questions come from an rmcp `ClientHandler` given to
//!   [`McpClient::builder`]: [`Answers`] accepts an elicitation with the defaults the requested
//!   schema suggests, and answers sampling with a canned message (a real host asks its user and
//!   its model);
//! - `auth/*` scenarios authorize through rmcp's OAuth client (`OAuthState`: discovery,
//!   registration or a client-ID metadata document, PKCE, the issuer check), and connect with
//!   [`Connect::http_authorized`](agentio_mcp::Connect::http_authorized). The one thing a host
//!   does differently is the browser: here the authorization URL is fetched headlessly and the
//!   code read from its redirect. A client with no user authorizes as a machine: with a
//!   client secret (`auth/client-credentials-basic`, rmcp's client credentials grant), a
//!   private key (`auth/client-credentials-jwt`, [`machine::authorize`] with
//!   [`MachineGrant::private_key_jwt`]), a workload's identity token (`auth/wif-jwt-bearer`,
//!   [`MachineGrant::jwt_bearer`]), or a user's enterprise ID token
//!   (`auth/enterprise-managed-authorization`: rmcp's enterprise-managed exchange, its token
//!   handed over by [`machine::with_enterprise_token`]). The DPoP extension's scenarios
//!   (`auth/dpop`, `auth/dpop-nonce`) bind the tokens to a key of the client's
//!   ([`Dpop`]: proofs on the token requests through rmcp's OAuth client, and on every MCP
//!   request through [`Connect::http_authorized_dpop`](agentio_mcp::Connect::http_authorized_dpop));
//! - `json-schema-2020-12-preservation` sends the input schema it listed for one tool back as
//!   the argument of another, for the suite to see what survived the client;
//! - `sep-2640-*` (the Skills extension) list the server's skills; the `verify` scenarios then
//!   load each skill ([`McpClient::load_skill`]: its `SKILL.md` checked against the entry's
//!   size, digest and frontmatter) and read its other files, each checked, and a tampered skill
//!   is refused before any of its other files is read; `no-prefetch` has no task that needs a
//!   skill, so it reads nothing;
//! - every other scenario lists the tools (every page) and calls what the context names, or
//!   each listed tool with arguments made from its input schema.

#![allow(deprecated)] // rmcp marks sampling deprecated (SEP-2577); both scored revisions have it.

use std::sync::Arc;
use std::time::Duration;

use agentio::serde_json::{Map, Value, json};
use agentio_mcp::dpop::Dpop;
use agentio_mcp::machine::{self, MachineGrant};
use agentio_mcp::rmcp::model::{
    CallToolRequestParams, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability, ErrorData,
    FormElicitationCapability, ProtocolVersion, Role, SamplingCapability, SamplingMessage,
    SamplingMessageContentBlock, Tool,
};
use agentio_mcp::rmcp::service::RequestContext;
use agentio_mcp::rmcp::transport::AuthorizationManager;
use agentio_mcp::rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAuthentication, EmaExchangeRequest,
};
use agentio_mcp::rmcp::transport::auth::{
    AuthorizationCallback, AuthorizationRequest, ClientCredentialsConfig, OAuthState,
    WWWAuthenticateParams, default_oauth_http_client,
};
use agentio_mcp::rmcp::{ClientHandler, ClientLifecycleMode, RoleClient};
use agentio_mcp::{ClientError, Connect, McpClient};
use oauth2::ClientSecret;

type Failure = Box<dyn std::error::Error + Send + Sync>;

/// Where the (headless) browser is sent back to.
const REDIRECT_URI: &str = "http://localhost:3000/callback";
/// The client ID metadata document (SEP-991) an authorization server that supports them uses.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";
/// How many times the client authorizes (a first time, then for each scope a call is refused
/// for) before it gives up.
const MAX_AUTHORIZATIONS: usize = 3;

/// The client's answers to a server's questions.
struct Answers;

impl ClientHandler for Answers {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.capabilities.elicitation = Some(
            ElicitationCapability::new()
                .with_form(FormElicitationCapability::new().with_schema_validation(true)),
        );
        info.capabilities.sampling = Some(SamplingCapability::default());
        info
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let schema = match &request {
            ElicitRequestParams::FormElicitationParams {
                requested_schema, ..
            } => agentio::serde_json::to_value(requested_schema).unwrap_or(Value::Null),
            _ => Value::Null,
        };
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(suggested(&schema)))
    }

    async fn create_message(
        &self,
        request: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let asked = request
            .messages
            .first()
            .and_then(|m| m.content.first())
            .and_then(|c| c.as_text())
            .map(|t| t.text.clone())
            .unwrap_or_default();
        let reply = SamplingMessage::new(
            Role::Assistant,
            SamplingMessageContentBlock::text(format!("This is a mock LLM response to: {asked}")),
        );
        Ok(CreateMessageResult::new(reply, "mock-model".into()).with_stop_reason("endTurn"))
    }
}

/// The answer a user who accepts what the form suggests gives: each property's default, and
/// for a required property with none, a value of its type.
fn suggested(schema: &Value) -> Value {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut answer = Map::new();
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        if let Some(default) = property.get("default") {
            answer.insert(name.clone(), default.clone());
        } else if required.contains(&name.as_str()) {
            answer.insert(name.clone(), example_of(property));
        }
    }
    Value::Object(answer)
}

/// A value of the type `schema` describes (the first of an enumeration).
fn example_of(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|values| values.first()) {
        return first.clone();
    }
    if let Some(first) = schema["oneOf"].as_array().and_then(|values| values.first()) {
        return first["const"].clone();
    }
    match schema["type"].as_str() {
        Some("number") => json!(1.0),
        Some("integer") => json!(1),
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        Some("object") => json!({}),
        Some("string") if schema["format"] == "email" => json!("user@example.com"),
        _ => json!("test"),
    }
}

/// The arguments a call of `tool` is made with: its required properties, each an example.
fn arguments_for(tool: &Tool) -> Map<String, Value> {
    let schema = Value::Object((*tool.input_schema).clone());
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut arguments = Map::new();
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        if required.contains(&name.as_str()) {
            arguments.insert(name.clone(), example_of(property));
        }
    }
    arguments
}

/// What the suite passes in `MCP_CONFORMANCE_CONTEXT`.
struct Context {
    tool_calls: Vec<(String, Map<String, Value>)>,
    client_id: Option<String>,
    client_secret: Option<String>,
    /// How the client authorizes when it has no user (`None`: a user, with a browser).
    machine: Option<Machine>,
    /// The key its tokens are bound to, for the scenarios of the DPoP extension (SEP-1932);
    /// `None`: bearer tokens, as the others expect.
    dpop: Option<Dpop>,
}

/// A client with no user behind it, and what it authorizes with.
enum Machine {
    /// A client secret: the client credentials grant (SEP-1046), rmcp's own.
    Secret,
    /// A private key: the client credentials grant with a signed client assertion (SEP-1046,
    /// `private_key_jwt`).
    PrivateKey { pem: String, algorithm: String },
    /// A workload's identity token: the JWT bearer grant (SEP-1933).
    Workload { jwt: String },
    /// A user's ID token from the enterprise identity provider, exchanged there for an
    /// ID-JAG and the ID-JAG for the server's token (SEP-990, rmcp's exchange).
    Enterprise {
        id_token: String,
        idp_client_id: String,
        idp_issuer: String,
        idp_token_endpoint: String,
    },
}

impl Context {
    fn from_env(scenario: &str) -> Self {
        let raw = std::env::var("MCP_CONFORMANCE_CONTEXT").unwrap_or_default();
        let context: Value = agentio::serde_json::from_str(&raw).unwrap_or(Value::Null);
        let calls = context
            .get("toolCalls")
            .or_else(|| context.get("tool_calls"))
            .and_then(Value::as_array);
        let tool_calls = calls
            .into_iter()
            .flatten()
            .filter_map(|call| {
                let name = call["name"].as_str()?.to_owned();
                let arguments = call["arguments"].as_object().cloned().unwrap_or_default();
                Some((name, arguments))
            })
            .collect();
        let text = |key: &str| context[key].as_str().map(str::to_owned);
        let client_secret = text("client_secret");
        let machine = if let (Some(pem), Some(algorithm)) =
            (text("private_key_pem"), text("signing_algorithm"))
        {
            Some(Machine::PrivateKey { pem, algorithm })
        } else if let Some(jwt) = text("valid_jwt") {
            Some(Machine::Workload { jwt })
        } else if let (
            Some(id_token),
            Some(idp_client_id),
            Some(idp_issuer),
            Some(idp_token_endpoint),
        ) = (
            text("idp_id_token"),
            text("idp_client_id"),
            text("idp_issuer"),
            text("idp_token_endpoint"),
        ) {
            Some(Machine::Enterprise {
                id_token,
                idp_client_id,
                idp_issuer,
                idp_token_endpoint,
            })
        } else if scenario.starts_with("auth/client-credentials") && client_secret.is_some() {
            Some(Machine::Secret)
        } else {
            None
        };
        let dpop = scenario
            .starts_with("auth/dpop")
            .then(|| Dpop::generate().expect("a DPoP key"));
        Context {
            tool_calls,
            client_id: text("client_id"),
            client_secret,
            machine,
            dpop,
        }
    }
}

/// The revision the scenario speaks: a 2025-11-25 client says `initialize`, a 2026-07-28 one
/// the library's default (`server/discover`, falling back to `initialize`).
fn connect(revision: &str) -> Connect {
    let builder = McpClient::builder().handler(Answers);
    if revision == "2026-07-28" {
        builder
    } else {
        builder.lifecycle(ClientLifecycleMode::Initialize)
    }
}

/// Calls what the context names, or else each listed tool; a failed call is reported, and the
/// first failure returned once every call was made (a refused authorization at once: nothing
/// after it would be authorized either).
async fn call_tools(client: &McpClient, context: &Context) -> Result<(), ClientError> {
    let listed = client.list_tools().await?;
    let calls = if context.tool_calls.is_empty() {
        let each = listed.iter();
        each.map(|tool| (tool.name.to_string(), arguments_for(tool)))
            .collect()
    } else {
        context.tool_calls.clone()
    };
    let mut first_failure = None;
    for (name, arguments) in calls {
        let call = CallToolRequestParams::new(name.clone()).with_arguments(arguments);
        match client.call_tool(call).await {
            Ok(result) => eprintln!("{name}: answered (error: {:?})", result.is_error),
            Err(error @ ClientError::Unauthorized { .. }) => return Err(error),
            Err(error) => {
                eprintln!("{name}: {error}");
                first_failure.get_or_insert(error);
            }
        }
    }
    first_failure.map_or(Ok(()), Err)
}

/// The schema round trip a host's schema handling is judged by (SEP-1613, SEP-2106): the input
/// schema of `json_schema_2020_12_tool`, as this client listed it, sent back as the `schema`
/// argument of `json_schema_echo`, for the suite to compare keyword by keyword with what it
/// served.
async fn echo_schema(client: &McpClient) -> Result<(), ClientError> {
    let listed = client.list_tools().await?;
    let Some(focal) = listed.iter().find(|t| t.name == "json_schema_2020_12_tool") else {
        eprintln!("json_schema_2020_12_tool was not listed");
        return Ok(());
    };
    let schema = Value::Object((*focal.input_schema).clone());
    let call = CallToolRequestParams::new("json_schema_echo")
        .with_arguments(Map::from_iter([("schema".to_owned(), schema)]));
    client.call_tool(call).await?;
    Ok(())
}

/// Authorizes through rmcp's OAuth client, from the server's challenge (where to authorize and
/// for what scope), headlessly: the authorization URL is fetched and the code read from the
/// redirect it answers with.
async fn authorize(
    url: &str,
    challenge: &str,
    scopes: &[String],
    context: &Context,
) -> Result<AuthorizationManager, Failure> {
    if let Some(how) = &context.machine {
        return authorize_machine(url, how, scopes, context).await;
    }
    let mut oauth = match &context.dpop {
        Some(dpop) => {
            let http = dpop.oauth_http_client(Arc::new(default_oauth_http_client()?));
            OAuthState::new_with_oauth_http_client(url, http).await?
        }
        None => OAuthState::new(url, None).await?,
    };
    let mut request = AuthorizationRequest::new(REDIRECT_URI)
        .with_client_name("agent-io conformance client")
        .with_client_metadata_url(CLIENT_METADATA_URL)
        .with_challenge(challenge);
    if !scopes.is_empty() {
        request = request.with_scopes(scopes.iter().cloned());
    }
    if let Some(client_id) = &context.client_id {
        request = request.with_preregistered_client(client_id.clone());
        if let Some(secret) = &context.client_secret {
            request = request.with_client_secret(secret.clone());
        }
    }
    oauth.start_authorization(request).await?;
    let authorization_url = oauth.get_authorization_url().await?;
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let answer = browser.get(&authorization_url).send().await?;
    let location = answer
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .ok_or("the authorization endpoint did not redirect back")?;
    let callback = AuthorizationCallback::from_redirect_url(location)?;
    oauth
        .handle_callback_with_issuer(
            &callback.code,
            &callback.csrf_token,
            callback.issuer.as_deref(),
        )
        .await?;
    Ok(oauth
        .into_authorization_manager()
        .ok_or("the OAuth flow ended unauthorized")?)
}

/// A machine client's authorization: each grant through the library, none retried (a refused
/// grant is the authorization server's answer, returned as it is).
async fn authorize_machine(
    url: &str,
    how: &Machine,
    scopes: &[String],
    context: &Context,
) -> Result<AuthorizationManager, Failure> {
    let client_id = context.client_id.clone().unwrap_or_default();
    match how {
        Machine::Secret => {
            let client_secret = context.client_secret.clone().unwrap_or_default();
            let mut oauth = OAuthState::new(url, None).await?;
            let credentials = ClientCredentialsConfig::ClientSecret {
                client_id,
                client_secret,
                scopes: scopes.to_vec(),
                // The MCP server the token is for: its canonical URI, the one connected to.
                resource: Some(url.to_owned()),
            };
            oauth.authenticate_client_credentials(credentials).await?;
            Ok(oauth
                .into_authorization_manager()
                .ok_or("the client credentials grant ended unauthorized")?)
        }
        Machine::PrivateKey { pem, algorithm } => {
            let grant = MachineGrant::private_key_jwt(client_id, pem.as_bytes(), algorithm)?;
            Ok(machine::authorize(url, &grant, scopes).await?)
        }
        Machine::Workload { jwt } => {
            let grant = MachineGrant::jwt_bearer(jwt.as_str()).with_client_id(client_id);
            Ok(machine::authorize(url, &grant, scopes).await?)
        }
        Machine::Enterprise {
            id_token,
            idp_client_id,
            idp_issuer,
            idp_token_endpoint,
        } => {
            let resource_as = machine::authorization_server(url).await?;
            let issuer = resource_as
                .issuer
                .ok_or("the authorization server publishes no issuer")?;
            let secret = ClientSecret::new(context.client_secret.clone().unwrap_or_default());
            let idp = EmaAuthorizationServer::new(
                idp_issuer.as_str(),
                idp_token_endpoint.as_str(),
                idp_client_id.as_str(),
            );
            let resource_as =
                EmaAuthorizationServer::new(issuer, resource_as.token_endpoint, client_id.as_str())
                    .with_client_authentication(EmaClientAuthentication::ClientSecretBasic(secret));
            let http = default_oauth_http_client()?;
            let token = EmaExchangeRequest::new_with_id_token(idp, resource_as, url, id_token)
                .with_scopes(scopes.iter().cloned())
                .exchange(&http, &http)
                .await?;
            Ok(machine::with_enterprise_token(url, &client_id, &token).await?)
        }
    }
}

/// The scopes a challenge asks for (its `scope="a b"`), read by rmcp's own parser.
fn challenged_scopes(url: &str, challenge: &str) -> Vec<String> {
    let Ok(base) = reqwest::Url::parse(url) else {
        return Vec::new();
    };
    WWWAuthenticateParams::parse(challenge, &base)
        .scope
        .map(|scope| scope.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// A protected server, as MCP's authorization spec has a client meet one: connect; when the
/// server refuses (401, or 403 for a scope the token lacks), authorize from its challenge and
/// go again — at most [`MAX_AUTHORIZATIONS`] times, so a server that never accepts ends. A
/// step-up asks for the scopes granted before and the ones challenged (SEP-2350), so the new
/// token still does what the old one did.
async fn run_authorized(url: &str, revision: &str, context: &Context) -> Result<(), Failure> {
    let mut manager: Option<AuthorizationManager> = None;
    let mut granted: Vec<String> = Vec::new();
    let mut authorizations = 0;
    loop {
        let connected = match manager.take() {
            None => connect(revision).http(url).await,
            Some(manager) => {
                granted = manager.get_current_scopes().await;
                match &context.dpop {
                    Some(dpop) => {
                        connect(revision)
                            .http_authorized_dpop(url, manager, dpop)
                            .await
                    }
                    None => connect(revision).http_authorized(url, manager).await,
                }
            }
        };
        let outcome = match connected {
            Ok(client) => {
                let outcome = call_tools(&client, context).await;
                client.close().await.ok();
                outcome
            }
            Err(error) => Err(error),
        };
        match outcome {
            Ok(()) => return Ok(()),
            Err(ClientError::Unauthorized { challenge }) => {
                if authorizations == MAX_AUTHORIZATIONS {
                    return Err(format!(
                        "the server still refused after {MAX_AUTHORIZATIONS} authorizations: {challenge}"
                    )
                    .into());
                }
                authorizations += 1;
                eprintln!("refused, authorizing: {challenge}");
                let mut scopes = granted.clone();
                for scope in challenged_scopes(url, &challenge) {
                    if !scopes.contains(&scope) {
                        scopes.push(scope);
                    }
                }
                manager = Some(authorize(url, &challenge, &scopes, context).await?);
            }
            Err(error) => return Err(error.into()),
        }
    }
}

/// The Skills extension as a host meets it: list the skills; load one only when a task needs
/// it (here: every `verify` scenario's), then read its files, each checked against the entry.
async fn use_skills(client: &McpClient, scenario: &str) -> Result<(), ClientError> {
    let skills = client.list_skills().await?;
    eprintln!("{} skill(s) listed", skills.len());
    if scenario == "sep-2640-client-no-prefetch" {
        return Ok(());
    }
    for skill in &skills {
        let loaded = client.load_skill(skill).await?;
        for file in loaded.files() {
            if file.uri != skill.uri {
                client.read_skill_file(&loaded, &file.uri).await?;
            }
        }
        eprintln!(
            "loaded `{}` and its {} file(s)",
            loaded.name(),
            loaded.files().len()
        );
    }
    Ok(())
}

async fn run(url: &str, scenario: &str, revision: &str) -> Result<(), Failure> {
    let context = Context::from_env(scenario);
    if scenario.starts_with("auth/") {
        return run_authorized(url, revision, &context).await;
    }
    let client = connect(revision).http(url).await?;
    let outcome = if scenario == "json-schema-2020-12-preservation" {
        echo_schema(&client).await
    } else if scenario.starts_with("sep-2640-") {
        use_skills(&client, scenario).await
    } else {
        call_tools(&client, &context).await
    };
    client.close().await?;
    Ok(outcome?)
}

fn main() -> Result<(), Failure> {
    let url = std::env::args()
        .nth(1)
        .ok_or("usage: mcp_conformance_client URL (the suite names the scenario in MCP_CONFORMANCE_SCENARIO)")?;
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let revision = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
        .unwrap_or_else(|_| ProtocolVersion::V_2025_11_25.to_string());
    let runtime = agentio::tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    // Within the suite's 30 s: a scenario whose server never answers ends here, named.
    runtime.block_on(async {
        let bounded =
            agentio::tokio::time::timeout(Duration::from_secs(25), run(&url, &scenario, &revision));
        bounded.await.map_err(|_| -> Failure {
            format!("scenario `{scenario}` did not finish within 25 s").into()
        })?
    })
}
