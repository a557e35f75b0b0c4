//! A tool's voice: what a body can say to, and ask of, the client its caller speaks through.
//!
//! Through its [`ToolContext`] a body can
//! - log ([`ToolContext::log`]): MCP's `notifications/message`, at or above the level the
//!   client set with `logging/setLevel`;
//! - ask the client's user ([`ToolContext::elicit`]) for a value of a Rust type: the type's
//!   schema is the requested schema, and the answer is validated against it and decoded;
//! - ask the client's model ([`ToolContext::sample`]) for a completion.
//!
//! A host that speaks to a client gives the call a [`ClientPeer`] ([`CallOptions::client`]);
//! the MCP server does, for each call. Without one (an in-process call, a provider loop), a
//! log line goes nowhere and a question fails at once with `no_route`, naming what was
//! asked: never a hang. A client that lacks the capability (no `elicitation` or `sampling` in
//! its `initialize`) fails the same way.
//!
//! ```
//! use agentio_tools::voice::{Elicited, LogLevel};
//! use agentio_tools::{ToolContext, ErrorCode};
//!
//! #[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput)]
//! struct Confirm { sure: bool }
//!
//! let ctx = ToolContext::new("run-1", "files.purge");
//! // No client: the log line is not heard, and a question is refused at once.
//! assert!(!ctx.log(LogLevel::Info, "purging"));
//! let asked = pollster::block_on(ctx.elicit::<Confirm>("Purge everything?"));
//! assert_eq!(*asked.unwrap_err().code(), ErrorCode::NoRoute);
//! ```
//!
//! [`ToolContext`]: crate::ToolContext
//! [`ToolContext::log`]: crate::ToolContext::log
//! [`ToolContext::elicit`]: crate::ToolContext::elicit
//! [`ToolContext::sample`]: crate::ToolContext::sample
//! [`CallOptions::client`]: crate::CallOptions::client

use agentio_core::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::content::Content;
use crate::typed::ToolError;

/// A log message's severity: RFC 5424's levels, as MCP names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detailed debugging information.
    Debug,
    /// Informational messages.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warnings.
    Warning,
    /// Errors.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

/// How the client's user answered an elicitation, before decoding.
#[derive(Clone, Debug, PartialEq)]
pub enum ElicitAnswer {
    /// The user answered; the content is to be checked against the requested schema.
    Accept(Value),
    /// The user said no.
    Decline,
    /// The user dismissed the question.
    Cancel,
}

/// How the client's user answered, decoded.
#[derive(Clone, Debug, PartialEq)]
pub enum Elicited<T> {
    /// The user answered with this value.
    Accepted(T),
    /// The user said no.
    Declined,
    /// The user dismissed the question.
    Cancelled,
}

/// Who speaks in a sampling message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// One message of a sampling request or its answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said (text, an image, audio).
    pub content: Content,
}

/// A request for the client's model to complete a conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingRequest {
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// The most tokens to sample.
    pub max_tokens: u32,
    /// A system prompt the client may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
}

impl SamplingRequest {
    /// One user message of text, answered in at most `max_tokens`.
    pub fn prompt(text: impl Into<String>, max_tokens: u32) -> Self {
        SamplingRequest {
            messages: vec![SamplingMessage {
                role: Role::User,
                content: Content::text(text),
            }],
            max_tokens,
            system_prompt: None,
            temperature: None,
        }
    }
}

/// The client model's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingResponse {
    /// Who speaks (the assistant).
    pub role: Role,
    /// What it said.
    pub content: Content,
    /// The model that answered.
    pub model: String,
    /// Why it stopped, when the client says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl SamplingResponse {
    /// The answer's text, when it is text.
    pub fn text(&self) -> Option<&str> {
        match &self.content {
            Content::Text { text } => Some(text),
            _ => None,
        }
    }
}

/// The client a call's caller speaks through, as a host gives it to the call
/// ([`CallOptions::client`](crate::CallOptions::client)). The MCP server implements it over
/// its connection; a test can implement it to script a client.
pub trait ClientPeer: Send + Sync {
    /// Sends a log message; returns whether the client hears it (it set a level at or below
    /// `level`, or none).
    fn log(&self, level: LogLevel, logger: Option<&str>, data: Value) -> bool;

    /// Asks the client's user `message`, with a form described by `schema` (a flat object of
    /// primitive properties, as MCP elicitation allows).
    fn elicit<'a>(
        &'a self,
        message: &'a str,
        schema: &'a Value,
    ) -> BoxFuture<'a, Result<ElicitAnswer, ToolError>>;

    /// Asks the client's model to complete `request`.
    fn sample<'a>(
        &'a self,
        request: &'a SamplingRequest,
    ) -> BoxFuture<'a, Result<SamplingResponse, ToolError>>;
}

/// The error of a question asked where no client can answer it.
pub(crate) fn no_client(tool_id: &str, what: &str) -> ToolError {
    agentio_core::AgentError::new(
        agentio_core::ErrorCode::NoRoute,
        format!(
            "`{tool_id}` asked {what}, but its caller speaks through no client that can answer (CallOptions::client)"
        ),
    )
}
