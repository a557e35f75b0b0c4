//! The MCP conformance suite's fixture server (`@modelcontextprotocol/conformance`), written
//! with agent-io: its tools are `#[tool]`s behind a registry, its resources, prompts and
//! completions an rmcp `ServerHandler` served beside them ([`McpServer::with_handler`]), and
//! the folder `skills/` beside this file served as agent skills ([`McpServer::with_skills`]).
//!
//! `cargo run --example mcp_conformance -- --http PORT` serves it at
//! `http://127.0.0.1:PORT/mcp`; `.ci/run` runs the suite's server scenarios against it.
//!
//! The suite names its tools with underscores (`test_simple_text`), which a contract id cannot
//! have: each tool is registered under an id of ours (`test.simple-text`) and listed under the
//! suite's name ([`McpServer::with_tool_name`]).

use std::time::Duration;

use agentio::io;
use agentio::serde_json::{Value, json};
use agentio::tools::content::{Content, Contents};
use agentio::tools::voice::{Answers, Elicited, LogLevel, Questions, SamplingRequest};
use agentio::tools::{Progress, ToolContext, ToolError, ToolRegistry, tool};
use agentio_mcp::McpServer;
use agentio_mcp::rmcp::model::SubscriptionFilter;
use agentio_mcp::rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, InputRequiredResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use agentio_mcp::rmcp::service::RequestContext;
use agentio_mcp::rmcp::{ErrorData, RoleServer, ServerHandler};
use agentio_mcp::tasks::TaskSupport;

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// An empty WAV.
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA=";

/// No arguments.
#[io(input)]
pub struct NoArguments {}

fn text(text: impl Into<String>) -> Contents {
    Contents::from(Content::text(text))
}

/// Returns a simple text.
#[tool(id = "test.simple-text")]
async fn simple_text(_: NoArguments) -> Result<Contents, ToolError> {
    Ok(text("This is a simple text response for testing."))
}

/// Returns an image.
#[tool(id = "test.image-content")]
async fn image_content(_: NoArguments) -> Result<Contents, ToolError> {
    Ok(Content::image_base64(PNG, "image/png").into())
}

/// Returns audio.
#[tool(id = "test.audio-content")]
async fn audio_content(_: NoArguments) -> Result<Contents, ToolError> {
    Ok(Content::audio_base64(WAV, "audio/wav").into())
}

/// Returns an embedded resource.
#[tool(id = "test.embedded-resource")]
async fn embedded_resource(_: NoArguments) -> Result<Contents, ToolError> {
    Ok(Content::embedded_text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )
    .into())
}

/// Returns text, an image and an embedded resource.
#[tool(id = "test.multiple-content-types")]
async fn multiple_content_types(_: NoArguments) -> Result<Contents, ToolError> {
    Ok(Contents::from(vec![
        Content::text("Multiple content types test:"),
        Content::image_base64(PNG, "image/png"),
        Content::embedded_text(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        ),
    ]))
}

/// Logs three lines while it runs.
#[tool(id = "test.tool-with-logging")]
async fn tool_with_logging(_: NoArguments, ctx: &ToolContext) -> Result<Contents, ToolError> {
    ctx.log(LogLevel::Info, "Tool execution started");
    tokio_sleep(50).await;
    ctx.log(LogLevel::Info, "Tool processing data");
    tokio_sleep(50).await;
    ctx.log(LogLevel::Info, "Tool execution completed");
    Ok(text("Tool with logging executed successfully"))
}

/// Reports progress 0, 50 and 100 of 100.
#[tool(id = "test.tool-with-progress")]
async fn tool_with_progress(_: NoArguments, ctx: &ToolContext) -> Result<Contents, ToolError> {
    for (i, done) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio_sleep(50).await;
        }
        ctx.report_progress(Progress::new(done).with_total(100.0));
    }
    Ok(text("Tool with progress executed successfully"))
}

/// Always fails.
#[tool(id = "test.error-handling")]
async fn error_handling(_: NoArguments) -> Result<Contents, ToolError> {
    Err(ToolError::new(
        agentio::core::ErrorCode::Other("test:intentional".into()),
        "This tool intentionally returns an error for testing",
    ))
}

/// A prompt for the client's model.
#[io(input)]
pub struct SamplingInput {
    /// The prompt to send to the LLM.
    pub prompt: String,
}

/// Asks the client's model.
#[tool(id = "test.sampling")]
async fn sampling(input: SamplingInput, ctx: &ToolContext) -> Result<Contents, ToolError> {
    let answer = ctx
        .sample(SamplingRequest::prompt(input.prompt, 100))
        .await?;
    Ok(text(format!(
        "LLM response: {}",
        answer.text().unwrap_or_default()
    )))
}

/// A message for the client's user.
#[io(input)]
pub struct ElicitationInput {
    /// The message to show the user.
    pub message: String,
}

/// What the user is asked for.
#[io(input)]
pub struct UserInfo {
    /// User's response
    pub username: String,
    /// User's email address
    pub email: String,
}

fn answered<T: agentio::serde::Serialize>(answer: &Elicited<T>) -> (&'static str, Value) {
    match answer {
        Elicited::Accepted(value) => (
            "accept",
            agentio::serde_json::to_value(value).unwrap_or_default(),
        ),
        Elicited::Declined => ("decline", Value::Null),
        Elicited::Cancelled => ("cancel", Value::Null),
    }
}

/// Asks the client's user.
#[tool(id = "test.elicitation")]
async fn elicitation(input: ElicitationInput, ctx: &ToolContext) -> Result<Contents, ToolError> {
    let answer = ctx.elicit::<UserInfo>(&input.message).await?;
    let (action, content) = answered(&answer);
    Ok(text(format!(
        "User response: action={action}, content={content}"
    )))
}

/// A status.
#[io]
#[allow(missing_docs)]
#[derive(Default)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    // No doc comments on the variants: schemars would write a titled `oneOf`, not the plain
    // `enum` this scenario asks for.
    #[default]
    Active,
    Inactive,
    Pending,
}

fn default_name() -> String {
    "John Doe".into()
}
fn default_age() -> i64 {
    30
}
fn default_score() -> f64 {
    95.5
}
fn default_verified() -> bool {
    true
}

/// Every primitive with a default (SEP-1034).
#[io(input)]
pub struct Defaults {
    /// A name.
    #[serde(default = "default_name")]
    pub name: String,
    /// An age.
    #[serde(default = "default_age")]
    pub age: i64,
    /// A score.
    #[serde(default = "default_score")]
    pub score: f64,
    /// A status.
    #[serde(default)]
    pub status: Status,
    /// Verified or not.
    #[serde(default = "default_verified")]
    pub verified: bool,
}

/// Asks with a default for every field (SEP-1034).
#[tool(id = "test.elicitation-sep1034-defaults")]
async fn elicitation_defaults(_: NoArguments, ctx: &ToolContext) -> Result<Contents, ToolError> {
    let answer = ctx
        .elicit::<Defaults>("Please review and update the form fields with defaults")
        .await?;
    let (action, content) = answered(&answer);
    Ok(text(format!(
        "Elicitation completed: action={action}, content={content}"
    )))
}

/// Untitled choices: variants without doc comments are a plain `enum`.
#[io]
#[allow(missing_docs)]
#[serde(rename_all = "lowercase")]
pub enum Untitled {
    Option1,
    Option2,
    Option3,
}

/// Titled choices: each variant's title is what the user sees.
#[io]
pub enum Titled {
    /// The first.
    #[serde(rename = "value1")]
    #[schemars(title = "First Option")]
    Value1,
    /// The second.
    #[serde(rename = "value2")]
    #[schemars(title = "Second Option")]
    Value2,
    /// The third.
    #[serde(rename = "value3")]
    #[schemars(title = "Third Option")]
    Value3,
}

/// Choices titled the deprecated way (`enumNames`).
#[io]
#[allow(missing_docs)]
#[serde(rename_all = "lowercase")]
#[schemars(extend("enumNames" = ["Option One", "Option Two", "Option Three"]))]
pub enum Legacy {
    Opt1,
    Opt2,
    Opt3,
}

/// Titled choices for a multi-select.
#[io]
pub enum TitledChoice {
    /// The first.
    #[serde(rename = "value1")]
    #[schemars(title = "First Choice")]
    Value1,
    /// The second.
    #[serde(rename = "value2")]
    #[schemars(title = "Second Choice")]
    Value2,
    /// The third.
    #[serde(rename = "value3")]
    #[schemars(title = "Third Choice")]
    Value3,
}

/// Every kind of choice (SEP-1330).
#[io(input)]
#[serde(rename_all = "camelCase")]
pub struct Enums {
    /// Untitled single-select.
    pub untitled_single: Untitled,
    /// Titled single-select.
    pub titled_single: Titled,
    /// Legacy titled single-select.
    pub legacy_enum: Legacy,
    /// Untitled multi-select.
    pub untitled_multi: Vec<Untitled>,
    /// Titled multi-select.
    pub titled_multi: Vec<TitledChoice>,
}

/// Asks with every kind of choice (SEP-1330).
#[tool(id = "test.elicitation-sep1330-enums")]
async fn elicitation_enums(_: NoArguments, ctx: &ToolContext) -> Result<Contents, ToolError> {
    let answer = ctx.elicit::<Enums>("Please choose").await?;
    let (action, content) = answered(&answer);
    Ok(text(format!(
        "Elicitation completed: action={action}, content={content}"
    )))
}

/// A name.
#[io(input)]
pub struct Named {
    /// The name.
    pub name: String,
}

/// A confirmation.
#[io(input)]
pub struct Confirmed {
    /// Yes or no.
    pub ok: bool,
}

/// A colour.
#[io(input)]
pub struct Coloured {
    /// The colour.
    pub color: String,
}

/// Asks the user to confirm (under the key `confirm`): whether they said yes.
async fn confirmed(ctx: &ToolContext) -> Result<bool, ToolError> {
    let answers = ctx
        .ask(&Questions::new().elicit::<Confirmed>("confirm", "Please confirm"))
        .await?;
    Ok(matches!(
        answers.elicited::<Confirmed>("confirm")?,
        Elicited::Accepted(Confirmed { ok: true })
    ))
}

fn name_of(answers: &Answers, key: &str) -> Result<String, ToolError> {
    Ok(match answers.elicited::<Named>(key)? {
        Elicited::Accepted(Named { name }) => name,
        _ => "stranger".into(),
    })
}

/// Asks the user's name (2026-07-28: an `input_required` round trip).
#[tool(id = "test.input-required-elicitation")]
async fn input_required_elicitation(
    _: NoArguments,
    ctx: &ToolContext,
) -> Result<Contents, ToolError> {
    let answers = ctx
        .ask(&Questions::new().elicit::<Named>("user_name", "What is your name?"))
        .await?;
    Ok(text(format!("Hello, {}!", name_of(&answers, "user_name")?)))
}

/// Asks the client's model.
#[tool(id = "test.input-required-sampling")]
async fn input_required_sampling(_: NoArguments, ctx: &ToolContext) -> Result<Contents, ToolError> {
    let question = SamplingRequest::prompt("What is the capital of France?", 100);
    let answers = ctx
        .ask(&Questions::new().sample("capital_question", question))
        .await?;
    let answer = answers.sampled("capital_question")?;
    Ok(text(format!(
        "Sampling response: {}",
        answer.text().unwrap_or_default()
    )))
}

/// Asks for the client's roots.
#[tool(id = "test.input-required-list-roots")]
async fn input_required_list_roots(
    _: NoArguments,
    ctx: &ToolContext,
) -> Result<Contents, ToolError> {
    let answers = ctx
        .ask(&Questions::new().list_roots("client_roots"))
        .await?;
    let roots: Vec<String> = answers
        .roots("client_roots")?
        .into_iter()
        .map(|root| root.uri)
        .collect();
    Ok(text(format!("Client roots: {}", roots.join(", "))))
}

/// Asks for a confirmation, keeping state between the rounds.
#[tool(id = "test.input-required-request-state")]
async fn input_required_request_state(
    _: NoArguments,
    ctx: &ToolContext,
) -> Result<Contents, ToolError> {
    let carried = ctx.state::<Value>();
    ctx.keep_state(json!({ "asked": "confirm" }));
    let ok = confirmed(ctx).await?;
    let state = if carried == Some(json!({ "asked": "confirm" })) {
        "state-ok"
    } else {
        "state-missing"
    };
    Ok(text(format!("Confirmed: {ok} ({state})")))
}

/// Asks three things at once: the user, the model and the roots.
#[tool(id = "test.input-required-multiple-inputs")]
async fn input_required_multiple_inputs(
    _: NoArguments,
    ctx: &ToolContext,
) -> Result<Contents, ToolError> {
    ctx.keep_state(json!({ "round": 1 }));
    let answers = ctx
        .ask(
            &Questions::new()
                .elicit::<Named>("user_name", "What is your name?")
                .sample(
                    "greeting",
                    SamplingRequest::prompt("Generate a greeting", 50),
                )
                .list_roots("client_roots"),
        )
        .await?;
    let name = name_of(&answers, "user_name")?;
    let greeting = answers.sampled("greeting")?;
    let roots = answers.roots("client_roots")?;
    Ok(text(format!(
        "{} {name}! ({} roots)",
        greeting.text().unwrap_or("Hello"),
        roots.len()
    )))
}

/// Asks in two rounds, its state evolving.
#[tool(id = "test.input-required-multi-round")]
async fn input_required_multi_round(
    _: NoArguments,
    ctx: &ToolContext,
) -> Result<Contents, ToolError> {
    ctx.keep_state(json!({ "round": 1 }));
    let first = ctx
        .ask(&Questions::new().elicit::<Named>("step1", "Step 1: What is your name?"))
        .await?;
    let name = name_of(&first, "step1")?;
    ctx.keep_state(json!({ "round": 2, "name": name }));
    let second = ctx
        .ask(&Questions::new().elicit::<Coloured>("step2", "Step 2: What is your favorite color?"))
        .await?;
    let color = match second.elicited::<Coloured>("step2")? {
        Elicited::Accepted(Coloured { color }) => color,
        _ => "none".into(),
    };
    Ok(text(format!("{name} likes {color}")))
}

/// Asks with integrity-protected state (a tampered one is refused by the server).
#[tool(id = "test.input-required-tampered-state")]
async fn input_required_tampered_state(
    _: NoArguments,
    ctx: &ToolContext,
) -> Result<Contents, ToolError> {
    ctx.keep_state(json!({ "step": 1 }));
    let ok = confirmed(ctx).await?;
    Ok(text(format!("Confirmed: {ok}")))
}

/// Asks only what the client declared it can answer.
#[tool(id = "test.input-required-capabilities")]
async fn input_required_capabilities(
    _: NoArguments,
    ctx: &ToolContext,
) -> Result<Contents, ToolError> {
    let mut questions = Questions::new();
    if ctx.client_can("elicitation") {
        questions = questions.elicit::<Named>("user_name", "What is your name?");
    }
    if ctx.client_can("sampling") {
        questions = questions.sample(
            "greeting",
            SamplingRequest::prompt("Generate a greeting", 50),
        );
    }
    if ctx.client_can("roots") {
        questions = questions.list_roots("client_roots");
    }
    if questions.is_empty() {
        return Ok(text("The client can answer nothing."));
    }
    let answers = ctx.ask(&questions).await?;
    Ok(text(format!(
        "Answered: {}",
        questions
            .keys()
            .filter(|k| answers.has(k))
            .collect::<Vec<_>>()
            .join(", ")
    )))
}

/// Needs the client's model: a client that did not declare sampling gets MCP's
/// missing-capability error (2026-07-28).
#[tool(id = "test.missing-capability")]
async fn missing_capability(_: NoArguments, ctx: &ToolContext) -> Result<Contents, ToolError> {
    let answer = ctx
        .sample(SamplingRequest::prompt("Say something", 10))
        .await?;
    Ok(text(answer.text().unwrap_or_default().to_owned()))
}

/// Asks the user while the call streams (2026-07-28: an input_required result, never a
/// request of the server's own on the stream).
#[tool(id = "test.streaming-elicitation")]
async fn streaming_elicitation(_: NoArguments, ctx: &ToolContext) -> Result<Contents, ToolError> {
    let name = match ctx.elicit::<Named>("What is your name?").await? {
        Elicited::Accepted(Named { name }) => name,
        _ => "stranger".into(),
    };
    Ok(text(format!("Hello, {name}!")))
}

/// Logs a line (sent only when the request asked for a log level, on 2026-07-28).
#[tool(id = "test.logging-tool")]
async fn logging_tool(_: NoArguments, ctx: &ToolContext) -> Result<Contents, ToolError> {
    let heard = ctx.log(LogLevel::Info, "a line for whoever asked");
    Ok(text(format!("logged: {heard}")))
}

/// An address (in `$defs` as `address`, the name the suite looks for, with the `$anchor` it
/// looks for there).
#[io(input)]
#[schemars(rename = "address", extend("$anchor" = "addressDef"))]
pub struct Address {
    /// The street.
    pub street: Option<String>,
    /// The city.
    pub city: Option<String>,
}

/// How to reach someone.
#[io]
#[serde(rename_all = "lowercase")]
pub enum ContactMethod {
    /// By phone.
    Phone,
    /// By email.
    Email,
}

/// A name, an address (JSON Schema 2020-12's `$defs` and `$ref`) and a way to reach them: a
/// phone or an email at least (`allOf` / `anyOf`), the phone when that is the method asked
/// for and the email otherwise (`if` / `then` / `else`). serde reads none of those rules; the
/// registry checks them before the body runs.
#[io(input)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(extend(
    "allOf" = [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
    "if" = { "properties": { "contactMethod": { "const": "phone" } }, "required": ["contactMethod"] },
    "then" = { "required": ["phone"] },
    "else" = { "required": ["email"] },
))]
pub struct Addressed {
    /// A name.
    pub name: Option<String>,
    /// An address.
    pub address: Option<Address>,
    /// How to reach them.
    pub contact_method: Option<ContactMethod>,
    /// A phone number.
    pub phone: Option<String>,
    /// An email address.
    pub email: Option<String>,
}

/// Tool with JSON Schema 2020-12 features.
#[tool(id = "test.json-schema-2020-12")]
async fn json_schema_2020_12(input: Addressed) -> Result<Contents, ToolError> {
    Ok(text(format!(
        "Received: name={:?}, address={:?}, reach by {:?}",
        input.name,
        input.address.map(|a| (a.street, a.city)),
        match input.contact_method {
            Some(ContactMethod::Phone) => input.phone,
            _ => input.email,
        }
    )))
}

/// A query and the region it is routed to.
#[io(input)]
pub struct Routed {
    /// The region, mirrored in the `Mcp-Param-Region` header so that a balancer can route on
    /// it without reading the body (SEP-2243).
    #[schemars(extend("x-mcp-header" = "Region"))]
    pub region: String,
    /// The query, in the body only.
    pub query: String,
}

/// Answers a query in a region. rmcp's HTTP layer checks the `Mcp-Param-Region` header
/// against the body's `region` (Base64-wrapped or literal) before the call reaches us.
#[tool(id = "test.custom-header")]
async fn custom_header(input: Routed) -> Result<Contents, ToolError> {
    Ok(text(format!("{} in {}", input.query, input.region)))
}

/// A name to greet.
#[io(input)]
pub struct Greeting {
    /// Whom to greet.
    pub name: String,
}

/// Greets (a plain call: the Tasks extension's sync tool).
#[tool(id = "tasks.greet")]
async fn greet(input: Greeting) -> Result<Contents, ToolError> {
    Ok(text(format!("Hello, {}!", input.name)))
}

/// How long to compute.
#[io(input)]
pub struct Compute {
    /// Seconds to take.
    pub seconds: f64,
    /// A label for the result.
    #[serde(default)]
    pub label: Option<String>,
}

/// Computes for `seconds`, then answers (a task when the client takes one).
#[tool(id = "tasks.slow-compute", timeout_ms = 120000)]
async fn slow_compute(input: Compute) -> Result<Contents, ToolError> {
    let ms = (input.seconds.clamp(0.0, 100.0) * 1000.0) as u64;
    tokio_sleep(ms).await;
    Ok(text(format!(
        "computed {} in {}s",
        input.label.as_deref().unwrap_or("it"),
        input.seconds
    )))
}

/// Fails after a second, as a tool error (always a task).
#[tool(id = "tasks.failing-job")]
async fn failing_job(_: NoArguments) -> Result<Contents, ToolError> {
    tokio_sleep(1000).await;
    Err(ToolError::new(
        agentio::core::ErrorCode::UpstreamError,
        "the job failed",
    ))
}

/// Breaks (a panic: the task fails with a protocol error).
#[tool(id = "tasks.protocol-error-job")]
async fn protocol_error_job(_: NoArguments) -> Result<Contents, ToolError> {
    tokio_sleep(100).await;
    panic!("the job broke");
}

/// A file to delete.
#[io(input)]
pub struct Deletion {
    /// The file.
    pub filename: String,
}

/// A confirmation of a deletion.
#[io(input)]
pub struct ConfirmDeletion {
    /// Whether to delete.
    pub confirm: bool,
}

/// Asks before it deletes (in a task: the task waits for the answer).
#[tool(id = "tasks.confirm-delete")]
async fn confirm_delete(input: Deletion, ctx: &ToolContext) -> Result<Contents, ToolError> {
    let question = format!("Delete {}?", input.filename);
    let answers = ctx
        .ask(&Questions::new().elicit::<ConfirmDeletion>("confirm", question))
        .await?;
    let confirmed = matches!(
        answers.elicited::<ConfirmDeletion>("confirm")?,
        Elicited::Accepted(ConfirmDeletion { confirm: true })
    );
    Ok(text(if confirmed {
        format!("deleted {}", input.filename)
    } else {
        format!("kept {}", input.filename)
    }))
}

/// Asks two things at once.
#[tool(id = "tasks.multi-input")]
async fn multi_input(_: NoArguments, ctx: &ToolContext) -> Result<Contents, ToolError> {
    let answers = ctx
        .ask(
            &Questions::new()
                .elicit::<Named>("first", "Your name?")
                .elicit::<Named>("second", "Your friend's name?"),
        )
        .await?;
    Ok(text(format!(
        "{} and {}",
        name_of(&answers, "first")?,
        name_of(&answers, "second")?
    )))
}

/// What the task asks before it is made (`McpServer::ask_before_task`): the user's name.
fn name_question() -> Questions {
    Questions::new().elicit::<Named>("user_name", "Who is asking?")
}

/// Greets the user in a task, having asked the name before the task was made: on 2026-07-28
/// an `input_required` round, then the task (its body finds the answer).
#[tool(id = "tasks.with-task")]
async fn tool_with_task(_: NoArguments, ctx: &ToolContext) -> Result<Contents, ToolError> {
    let answers = ctx.ask(&name_question()).await?;
    Ok(text(format!("Hello, {}!", name_of(&answers, "user_name")?)))
}

async fn tokio_sleep(ms: u64) {
    agentio::tokio::time::sleep(Duration::from_millis(ms)).await;
}

/// The suite's tools, by our id and the suite's name.
const NAMES: &[(&str, &str)] = &[
    ("test.simple-text", "test_simple_text"),
    ("test.image-content", "test_image_content"),
    ("test.audio-content", "test_audio_content"),
    ("test.embedded-resource", "test_embedded_resource"),
    ("test.multiple-content-types", "test_multiple_content_types"),
    ("test.tool-with-logging", "test_tool_with_logging"),
    ("test.tool-with-progress", "test_tool_with_progress"),
    ("test.error-handling", "test_error_handling"),
    ("test.sampling", "test_sampling"),
    ("test.elicitation", "test_elicitation"),
    (
        "test.elicitation-sep1034-defaults",
        "test_elicitation_sep1034_defaults",
    ),
    (
        "test.elicitation-sep1330-enums",
        "test_elicitation_sep1330_enums",
    ),
    (
        "test.input-required-elicitation",
        "test_input_required_result_elicitation",
    ),
    (
        "test.input-required-sampling",
        "test_input_required_result_sampling",
    ),
    (
        "test.input-required-list-roots",
        "test_input_required_result_list_roots",
    ),
    (
        "test.input-required-request-state",
        "test_input_required_result_request_state",
    ),
    (
        "test.input-required-multiple-inputs",
        "test_input_required_result_multiple_inputs",
    ),
    (
        "test.input-required-multi-round",
        "test_input_required_result_multi_round",
    ),
    (
        "test.input-required-tampered-state",
        "test_input_required_result_tampered_state",
    ),
    (
        "test.input-required-capabilities",
        "test_input_required_result_capabilities",
    ),
    ("test.missing-capability", "test_missing_capability"),
    ("test.streaming-elicitation", "test_streaming_elicitation"),
    ("test.logging-tool", "test_logging_tool"),
    ("test.json-schema-2020-12", "json_schema_2020_12_tool"),
    ("test.custom-header", "test_custom_header"),
    ("tasks.greet", "greet"),
    ("tasks.slow-compute", "slow_compute"),
    ("tasks.failing-job", "failing_job"),
    ("tasks.protocol-error-job", "protocol_error_job"),
    ("tasks.confirm-delete", "confirm_delete"),
    ("tasks.multi-input", "multi_input"),
    ("tasks.with-task", "test_tool_with_task"),
];

/// The tools that run as tasks (the Tasks extension's fixtures).
const TASKS: &[(&str, TaskSupport)] = &[
    ("tasks.slow-compute", TaskSupport::Optional),
    ("tasks.failing-job", TaskSupport::Required),
    ("tasks.protocol-error-job", TaskSupport::Optional),
    ("tasks.confirm-delete", TaskSupport::Optional),
    ("tasks.multi-input", TaskSupport::Optional),
    ("tasks.with-task", TaskSupport::Required),
];

/// The suite's resources, prompts and completions: rmcp's, not ours to reinvent.
struct Fixtures;

/// An rmcp result from its wire JSON: a complete result (`resultType`, which protocol
/// 2026-07-28 requires and rmcp's constructors set) unless the JSON says otherwise.
fn from_json<T: agentio::serde::de::DeserializeOwned>(mut value: Value) -> Result<T, ErrorData> {
    if let Some(object) = value.as_object_mut() {
        object
            .entry("resultType")
            .or_insert_with(|| json!("complete"));
    }
    agentio::serde_json::from_value(value)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

impl ServerHandler for Fixtures {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_prompts()
                .enable_completions()
                .build(),
        )
    }

    async fn list_resources(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        from_json(json!({ "resources": [
            { "uri": "test://static-text", "name": "static-text", "description": "A static text resource", "mimeType": "text/plain" },
            { "uri": "test://static-binary", "name": "static-binary", "description": "A static binary resource", "mimeType": "image/png" },
            { "uri": "test://watched-resource", "name": "watched-resource", "description": "A resource to subscribe to", "mimeType": "text/plain" }
        ] }))
    }

    async fn list_resource_templates(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        from_json(json!({ "resourceTemplates": [
            { "uriTemplate": "test://template/{id}/data", "name": "template", "description": "Data by id", "mimeType": "application/json" }
        ] }))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.as_str();
        let contents = match uri {
            "test://static-text" => {
                json!({ "uri": uri, "mimeType": "text/plain", "text": "This is the content of the static text resource." })
            }
            "test://static-binary" => json!({ "uri": uri, "mimeType": "image/png", "blob": PNG }),
            "test://watched-resource" => {
                json!({ "uri": uri, "mimeType": "text/plain", "text": "Watched." })
            }
            _ => match uri
                .strip_prefix("test://template/")
                .and_then(|rest| rest.strip_suffix("/data"))
            {
                Some(id) if !id.is_empty() && !id.contains('/') => json!({
                    "uri": uri,
                    "mimeType": "application/json",
                    "text": json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") }).to_string(),
                }),
                _ => {
                    return Err(ErrorData::resource_not_found(
                        format!("no resource `{uri}`"),
                        Some(json!({ "uri": uri })),
                    ));
                }
            },
        };
        from_json::<ReadResourceResult>(json!({ "contents": [contents] })).map(Into::into)
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.clone())
    }

    async fn subscribe(
        &self,
        _: SubscribeRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn unsubscribe(
        &self,
        _: UnsubscribeRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn list_prompts(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        from_json(json!({ "prompts": [
            { "name": "test_simple_prompt", "description": "A simple prompt without arguments" },
            { "name": "test_prompt_with_arguments", "description": "A prompt with two arguments", "arguments": [
                { "name": "arg1", "description": "First test argument", "required": true },
                { "name": "arg2", "description": "Second test argument", "required": true }
            ] },
            { "name": "test_prompt_with_embedded_resource", "description": "A prompt embedding a resource", "arguments": [
                { "name": "resourceUri", "description": "URI of the resource to embed", "required": true }
            ] },
            { "name": "test_prompt_with_image", "description": "A prompt with an image" },
            { "name": "test_input_required_result_prompt", "description": "A prompt that asks the user first" }
        ] }))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let argument = |name: &str| {
            request
                .arguments
                .as_ref()
                .and_then(|a| a.get(name))
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| {
                    ErrorData::invalid_params(format!("the argument `{name}` is required"), None)
                })
        };
        let user = |content: Value| json!({ "role": "user", "content": content });
        let messages = match request.name.as_str() {
            "test_simple_prompt" => vec![user(
                json!({ "type": "text", "text": "This is a simple prompt for testing." }),
            )],
            "test_prompt_with_arguments" => {
                let (arg1, arg2) = (argument("arg1")?, argument("arg2")?);
                vec![user(
                    json!({ "type": "text", "text": format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'") }),
                )]
            }
            "test_prompt_with_embedded_resource" => {
                let uri = argument("resourceUri")?;
                vec![
                    user(
                        json!({ "type": "resource", "resource": { "uri": uri, "mimeType": "text/plain", "text": "Embedded resource content for testing." } }),
                    ),
                    user(
                        json!({ "type": "text", "text": "Please process the embedded resource above." }),
                    ),
                ]
            }
            "test_input_required_result_prompt" => {
                // A prompt that asks first (2026-07-28): rmcp's input_required, by hand.
                let context = request
                    .input_responses
                    .as_ref()
                    .and_then(|r| r.get("user_context"))
                    .and_then(|answer| answer.pointer("/content/context"))
                    .and_then(Value::as_str);
                let Some(context) = context else {
                    return from_json::<InputRequiredResult>(json!({
                        "resultType": "input_required",
                        "inputRequests": { "user_context": {
                            "method": "elicitation/create",
                            "params": {
                                "mode": "form",
                                "message": "What context should the prompt use?",
                                "requestedSchema": {
                                    "type": "object",
                                    "properties": { "context": { "type": "string" } },
                                    "required": ["context"]
                                }
                            }
                        } }
                    }))
                    .map(Into::into);
                };
                vec![user(
                    json!({ "type": "text", "text": format!("Prompt with context: {context}") }),
                )]
            }
            "test_prompt_with_image" => vec![
                user(json!({ "type": "image", "data": PNG, "mimeType": "image/png" })),
                user(json!({ "type": "text", "text": "Please analyze the image above." })),
            ],
            other => {
                return Err(ErrorData::invalid_params(
                    format!("no prompt `{other}`"),
                    None,
                ));
            }
        };
        from_json::<GetPromptResult>(json!({ "messages": messages })).map(Into::into)
    }

    async fn complete(
        &self,
        _: CompleteRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        from_json(json!({ "completion": { "values": [], "total": 0, "hasMore": false } }))
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut registry = ToolRegistry::new();
    registry.register(SimpleTextTool)?;
    registry.register(ImageContentTool)?;
    registry.register(AudioContentTool)?;
    registry.register(EmbeddedResourceTool)?;
    registry.register(MultipleContentTypesTool)?;
    registry.register(ToolWithLoggingTool)?;
    registry.register(ToolWithProgressTool)?;
    registry.register(ErrorHandlingTool)?;
    registry.register(SamplingTool)?;
    registry.register(ElicitationTool)?;
    registry.register(ElicitationDefaultsTool)?;
    registry.register(ElicitationEnumsTool)?;
    registry.register(InputRequiredElicitationTool)?;
    registry.register(InputRequiredSamplingTool)?;
    registry.register(InputRequiredListRootsTool)?;
    registry.register(InputRequiredRequestStateTool)?;
    registry.register(InputRequiredMultipleInputsTool)?;
    registry.register(InputRequiredMultiRoundTool)?;
    registry.register(InputRequiredTamperedStateTool)?;
    registry.register(InputRequiredCapabilitiesTool)?;
    registry.register(MissingCapabilityTool)?;
    registry.register(StreamingElicitationTool)?;
    registry.register(LoggingToolTool)?;
    registry.register(JsonSchema202012Tool)?;
    registry.register(CustomHeaderTool)?;
    registry.register(GreetTool)?;
    registry.register(SlowComputeTool)?;
    registry.register(FailingJobTool)?;
    registry.register(ProtocolErrorJobTool)?;
    registry.register(ConfirmDeleteTool)?;
    registry.register(MultiInputTool)?;
    registry.register(ToolWithTaskTool)?;
    let mut server = McpServer::new(registry)?
        .with_server_info("agentio-conformance", env!("CARGO_PKG_VERSION"))
        .with_handler(Fixtures)
        // The Skills extension's scenarios: a folder of one skill, served beside the fixtures.
        .with_skills(agentio_mcp::skills::SkillCatalog::from_dir(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/skills"
        ))?);
    for (id, name) in NAMES {
        server = server.with_tool_name(id, *name)?;
    }
    for (id, support) in TASKS {
        server = server.with_task_support(id, *support)?;
    }
    server = server.ask_before_task("tasks.with-task", name_question())?;

    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = agentio::tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        match args.as_slice() {
            [flag, port] if flag == "--http" => {
                let listener =
                    agentio::tokio::net::TcpListener::bind(("127.0.0.1", port.parse()?)).await?;
                println!("serving MCP at http://{}/mcp", listener.local_addr()?);
                server.serve_http(listener).await?;
            }
            [] => server.serve_stdio().await?,
            _ => return Err("usage: mcp_conformance [--http PORT]".into()),
        }
        Ok::<_, Box<dyn std::error::Error>>(())
    })
}
