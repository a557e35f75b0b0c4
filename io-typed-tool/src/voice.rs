//! A tool's voice: what a body can say to, and ask of, the client its caller speaks through.
//!
//! Through its [`ToolContext`] a body can
//! - log ([`ToolContext::log`]): MCP's `notifications/message`, at or above the level the
//!   client set with `logging/setLevel` (on 2026-07-28, the level the request asked for in its
//!   `_meta`, and nothing when it asked for none);
//! - ask the client's user ([`ToolContext::elicit`]) for a value of a Rust type: the type's
//!   schema is the requested schema, and the answer is validated against it and decoded;
//! - ask the client's model ([`ToolContext::sample`]) for a completion;
//! - ask several things at once, under keys of its own ([`ToolContext::ask`]: elicitation,
//!   sampling, the client's roots), keeping state between rounds
//!   ([`ToolContext::keep_state`]).
//!
//! Where the host cannot wait for an answer (MCP 2026-07-28, whose server sends no requests
//! of its own), a question ends the call asking it, and the body runs again, from the start,
//! with the answer: ask before doing what must not happen twice.
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
//! [`ToolContext::ask`]: crate::ToolContext::ask
//! [`ToolContext::keep_state`]: crate::ToolContext::keep_state
//! [`CallOptions::client`]: crate::CallOptions::client

use std::collections::BTreeMap;

use agentio_core::{AgentError, BoxFuture, ErrorCode};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::content::Content;

/// The error of a tool (the boundary error of agentio-core).
type ToolError = AgentError;

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

/// One question for the client.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Question {
    /// Ask the client's user, with a form (MCP `elicitation/create`).
    Elicit {
        /// What to ask.
        message: String,
        /// The form: a flat object of primitive properties (a Rust type's input schema).
        schema: Value,
    },
    /// Ask the client's model (MCP `sampling/createMessage`).
    Sample(SamplingRequest),
    /// Ask for the client's roots (MCP `roots/list`).
    ListRoots,
}

impl Question {
    /// The client capability the question needs (`elicitation`, `sampling`, `roots`).
    pub fn capability(&self) -> &'static str {
        match self {
            Question::Elicit { .. } => "elicitation",
            Question::Sample(_) => "sampling",
            Question::ListRoots => "roots",
        }
    }
}

/// Questions for the client, each under a key its answer comes back by: what
/// [`ToolContext::ask`](crate::ToolContext::ask) puts to the client at once.
///
/// ```
/// use agentio_tools::voice::{Questions, SamplingRequest};
///
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput)]
/// struct Name { name: String }
///
/// let questions = Questions::new()
///     .elicit::<Name>("user_name", "What is your name?")
///     .sample("greeting", SamplingRequest::prompt("Generate a greeting", 50))
///     .list_roots("client_roots");
/// assert_eq!(questions.keys().collect::<Vec<_>>(), ["user_name", "greeting", "client_roots"]);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Questions(Vec<(String, Question)>);

impl Questions {
    /// No questions yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks the client's user `message`, with a form for a `T` (answered in
    /// [`Answers::elicited`]).
    #[must_use]
    pub fn elicit<T: agentio_core::AgentInput>(
        self,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        self.with(
            key,
            Question::Elicit {
                message: message.into(),
                schema: T::input_schema().clone(),
            },
        )
    }

    /// Asks the client's model (answered in [`Answers::sampled`]).
    #[must_use]
    pub fn sample(self, key: impl Into<String>, request: SamplingRequest) -> Self {
        self.with(key, Question::Sample(request))
    }

    /// Asks for the client's roots (answered in [`Answers::roots`]).
    #[must_use]
    pub fn list_roots(self, key: impl Into<String>) -> Self {
        self.with(key, Question::ListRoots)
    }

    /// Adds `question` under `key` (a later question under the same key replaces it).
    #[must_use]
    pub fn with(mut self, key: impl Into<String>, question: Question) -> Self {
        let key = key.into();
        self.0.retain(|(k, _)| *k != key);
        self.0.push((key, question));
        self
    }

    /// The keys, in the order asked.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_str())
    }

    /// The questions with their keys, in the order asked.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Question)> {
        self.0.iter().map(|(k, q)| (k.as_str(), q))
    }

    /// Whether there is no question.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A root the client exposes (MCP `roots/list`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Root {
    /// The root's URI (`file:///...`).
    pub uri: String,
    /// Its name, when the client gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The client's answers, by the keys of the [`Questions`] asked: MCP's wire results
/// (`ElicitResult`, `CreateMessageResult`, `ListRootsResult`), decoded on demand.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Answers(BTreeMap<String, Value>);

impl Answers {
    /// Answers from MCP's wire results, by key.
    pub fn new(answers: BTreeMap<String, Value>) -> Self {
        Answers(answers)
    }

    /// Whether the client answered `key`.
    pub fn has(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    fn raw(&self, key: &str) -> Result<&Value, ToolError> {
        self.0.get(key).ok_or_else(|| {
            AgentError::new(
                ErrorCode::UpstreamError,
                format!("the client gave no answer to `{key}`"),
            )
        })
    }

    /// The user's answer to the elicitation under `key`, validated against `T`'s schema and
    /// decoded; an answer that does not match is `input_invalid`, naming each violation.
    pub fn elicited<T: agentio_core::AgentInput>(
        &self,
        key: &str,
    ) -> Result<Elicited<T>, ToolError> {
        let answer = self.raw(key)?;
        match answer.get("action").and_then(Value::as_str) {
            Some("accept") => {
                let content = answer.get("content").cloned().unwrap_or(Value::Null);
                T::from_input_value(&content).map(Elicited::Accepted).map_err(|err| {
                    AgentError::input_invalid(
                        format!(
                            "the client's answer to `{key}` does not match what was asked for: {}",
                            err.message()
                        ),
                        err.violations().to_vec(),
                    )
                })
            }
            Some("decline") => Ok(Elicited::Declined),
            Some("cancel") => Ok(Elicited::Cancelled),
            _ => Err(AgentError::new(
                ErrorCode::UpstreamError,
                format!("the client's answer to `{key}` is not an elicitation result"),
            )),
        }
    }

    /// The model's answer to the sampling request under `key` (one content block; a list of
    /// one is read as that block).
    pub fn sampled(&self, key: &str) -> Result<SamplingResponse, ToolError> {
        let mut answer = self.raw(key)?.clone();
        if let Some(Value::Array(blocks)) = answer.get_mut("content")
            && blocks.len() == 1
        {
            let block = blocks.remove(0);
            answer["content"] = block;
        }
        serde_json::from_value(answer).map_err(|err| {
            AgentError::new(
                ErrorCode::UpstreamError,
                format!(
                    "the client's answer to `{key}` is not a sampling result agent-io reads: {err}"
                ),
            )
        })
    }

    /// The client's roots, answered under `key`.
    pub fn roots(&self, key: &str) -> Result<Vec<Root>, ToolError> {
        let roots = self.raw(key)?.get("roots").cloned().unwrap_or(Value::Null);
        serde_json::from_value(roots).map_err(|err| {
            AgentError::new(
                ErrorCode::UpstreamError,
                format!("the client's answer to `{key}` is not a list of roots: {err}"),
            )
        })
    }
}

/// The client a call's caller speaks through, as a host gives it to the call
/// ([`CallOptions::client`](crate::CallOptions::client)). The MCP server implements it over
/// its connection; a test can implement it to script a client.
pub trait ClientPeer: Send + Sync {
    /// Sends a log message; returns whether the client hears it (it set a level at or below
    /// `level`, or none).
    fn log(&self, level: LogLevel, logger: Option<&str>, data: Value) -> bool;

    /// Puts `questions` to the client and returns its answers by key. A host that cannot
    /// wait for them (MCP 2026-07-28: the client answers on its next call) ends the call
    /// instead, asking them; the body runs again with the answers.
    fn ask<'a>(&'a self, questions: &'a Questions) -> BoxFuture<'a, Result<Answers, ToolError>>;

    /// Whether the client declared `capability` (`elicitation`, `sampling`, `roots`): a body
    /// asks only what its client can answer.
    fn can(&self, _capability: &str) -> bool {
        false
    }

    /// The state the body kept in an earlier round of this call ([`Self::keep_state`]), when
    /// the host runs calls in rounds.
    fn state(&self) -> Option<Value> {
        None
    }

    /// Keeps `state` for the body's next round of this call (MCP `requestState`, sealed so
    /// that the client cannot change it). Returns whether the host keeps it.
    fn keep_state(&self, _state: Value) -> bool {
        false
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_later_question_under_a_key_replaces_the_earlier_and_keeps_the_others() {
        let questions = Questions::new()
            .list_roots("a")
            .list_roots("b")
            .sample("a", SamplingRequest::prompt("hi", 8));
        assert_eq!(questions.keys().collect::<Vec<_>>(), ["b", "a"]);
        assert!(!questions.is_empty());
        assert!(Questions::new().is_empty());
        assert_eq!(
            questions.iter().nth(1).map(|(_, q)| q.capability()),
            Some("sampling")
        );
    }

    #[derive(
        Debug,
        PartialEq,
        serde::Serialize,
        serde::Deserialize,
        schemars::JsonSchema,
        agentio_core::AgentInput,
    )]
    #[agent(crate = "agentio_core")]
    struct Sure {
        sure: bool,
    }

    #[test]
    fn an_elicitation_answer_is_accepted_declined_cancelled_or_not_one() {
        let answers = Answers::new(BTreeMap::from([
            (
                "yes".to_owned(),
                serde_json::json!({ "action": "accept", "content": { "sure": true } }),
            ),
            ("no".to_owned(), serde_json::json!({ "action": "decline" })),
            ("gone".to_owned(), serde_json::json!({ "action": "cancel" })),
            ("odd".to_owned(), serde_json::json!({ "action": "shrug" })),
        ]));
        assert!(answers.has("yes") && answers.has("gone"));
        assert!(!answers.has("maybe"));
        assert_eq!(
            answers.elicited::<Sure>("yes").unwrap(),
            Elicited::Accepted(Sure { sure: true })
        );
        assert_eq!(answers.elicited::<Sure>("no").unwrap(), Elicited::Declined);
        assert_eq!(
            answers.elicited::<Sure>("gone").unwrap(),
            Elicited::Cancelled
        );
        let odd = answers.elicited::<Sure>("odd").unwrap_err();
        assert!(
            odd.message().contains("is not an elicitation result"),
            "{odd}"
        );
        let missing = answers.elicited::<Sure>("maybe").unwrap_err();
        assert!(
            missing.message().contains("no answer to `maybe`"),
            "{missing}"
        );
    }

    #[test]
    fn a_sampled_answer_is_one_block_or_a_list_of_one_and_roots_are_read() {
        let reply = serde_json::json!({ "type": "text", "text": "hi" });
        let answers = Answers::new(BTreeMap::from([
            (
                "one".to_owned(),
                serde_json::json!({ "model": "m", "role": "assistant", "content": reply }),
            ),
            (
                "listed".to_owned(),
                serde_json::json!({ "model": "m", "role": "assistant", "content": [reply] }),
            ),
            (
                "roots".to_owned(),
                serde_json::json!({ "roots": [{ "uri": "file:///a" }, { "uri": "file:///b", "name": "b" }] }),
            ),
        ]));
        assert_eq!(answers.sampled("one").unwrap().text(), Some("hi"));
        assert_eq!(answers.sampled("listed").unwrap().text(), Some("hi"));
        let roots: Vec<String> = answers
            .roots("roots")
            .unwrap()
            .into_iter()
            .map(|r| r.uri)
            .collect();
        assert_eq!(roots, ["file:///a", "file:///b"]);
    }

    /// A client that says nothing and answers nothing, overriding no default.
    struct Mute;

    impl ClientPeer for Mute {
        fn log(&self, _level: LogLevel, _logger: Option<&str>, _data: Value) -> bool {
            false
        }
        fn ask<'a>(
            &'a self,
            _questions: &'a Questions,
        ) -> BoxFuture<'a, Result<Answers, ToolError>> {
            Box::pin(async { Ok(Answers::default()) })
        }
    }

    #[test]
    fn a_client_peer_declares_nothing_and_keeps_no_state_by_default() {
        let mute = Mute;
        assert!(!mute.can("elicitation") && !mute.can("sampling") && !mute.can("roots"));
        assert_eq!(mute.state(), None);
        assert!(!mute.keep_state(serde_json::json!(1)));
    }
}
