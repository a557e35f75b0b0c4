//! The model round trip: a provider's tool calls in, validated results out, in the shape that
//! provider wants next turn.
//!
//! [`ToolRegistry::dispatch`](crate::ToolRegistry::dispatch) takes a model's response as its provider returned it (or the
//! assistant message, output items or content parts inside it), finds the tool calls, runs
//! each through the registry (its contract whole: validation both ways, approval, timeouts,
//! retries, audit) and answers every call in that provider's next-turn shape:
//!
//! | [`Provider`] | calls read from | each answer |
//! |---|---|---|
//! | `OpenAiChat` | `choices[0].message.tool_calls` | a `{"role": "tool", "tool_call_id", "content"}` message |
//! | `OpenAiResponses` | `output[]` items of type `function_call` | a `{"type": "function_call_output", "call_id", "output"}` item |
//! | `Anthropic` | `content[]` blocks of type `tool_use` | a `{"type": "tool_result", "tool_use_id", "content", "is_error"}` block |
//! | `Gemini` | `candidates[0].content.parts[]` with a `functionCall` | a `{"functionResponse": {"id", "name", "response", "parts"}}` part |
//!
//! [`Dispatched::next_turn`] wraps the answers as the messages to send (one user message of
//! `tool_result` blocks for Anthropic, one `user` content of parts for Gemini, the messages or
//! items themselves for OpenAI), and [`ModelTurn::assistant`] is the model's own turn to send
//! back before them, as the provider requires: Gemini's `thoughtSignature`s and Anthropic's
//! thinking blocks are kept verbatim (only null fields are dropped).
//! [`Dispatched::next_turn_json`] writes the same next turn as JSON text, for a host that sends
//! its request body as text: an answer that is its outcome's alone (an output, or an error) is
//! written straight from the outcome, no value built for it; with
//! [`DispatchOptions::outputs_as_text`] a Gemini output is written once, as text, and spliced
//! into the request as it is.
//!
//! Decisions, where the providers leave room:
//! - **A call the model got wrong is answered, never a failed turn.** Arguments that are not a
//!   JSON object, an unknown tool name, a refused input, a denied approval, a timeout: each is
//!   that call's answer, marked as an error where the provider has a mark (Anthropic's
//!   `is_error`; Gemini's `response.error`), its text the AIP-14 error as JSON
//!   (`{"error": {"code", "message", "retryable", "violations"}}`), so the model sees the
//!   pointer and can correct itself. Only a response that is not the provider's shape (no
//!   `choices`, a call without an id) is an error of the turn: a [`ResponseError`] naming where.
//! - **Every call is answered, in the order the model made them**, each paired by its id.
//!   Calls run concurrently, at most [`DispatchOptions::max_concurrency`] at once; beyond
//!   [`DispatchOptions::max_calls`] a call is answered as `rate_limited` (retryable) without
//!   running, so a response of a thousand calls is bounded and still fully answered.
//! - **Content goes where the provider takes it** ([`tool_result`](crate::tool_result)):
//!   images in OpenAI Responses, Anthropic and Gemini results; a block a provider does not take
//!   (an image in an OpenAI Chat tool message) makes that call's answer an `output_invalid`
//!   error naming the block, said to have run (the model must not assume it failed).
//! - The first choice (`choices[0]`, `candidates[0]`) is the one answered; a host asking for
//!   several picks one and dispatches that.
//!
//! ```
//! use agentio_tools::dispatch::{DispatchOptions, Provider};
//! use agentio_tools::{ToolError, ToolRegistry, tool};
//! use serde_json::json;
//!
//! #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
//! struct City { city: String }
//! #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
//! struct Forecast { summary: String }
//!
//! /// Tomorrow's weather in a city.
//! #[tool(id = "weather.forecast")]
//! async fn forecast(city: City) -> Result<Forecast, ToolError> {
//!     Ok(Forecast { summary: format!("sunny in {}", city.city) })
//! }
//!
//! let mut registry = ToolRegistry::new();
//! registry.register(ForecastTool).unwrap();
//! // A Messages API response: the model asked for two calls, the second one wrong.
//! let response = json!({
//!     "role": "assistant",
//!     "content": [
//!         { "type": "tool_use", "id": "toolu_1", "name": "weather_forecast", "input": { "city": "Oslo" } },
//!         { "type": "tool_use", "id": "toolu_2", "name": "weather_forecast", "input": { "town": "Bergen" } }
//!     ]
//! });
//! let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
//! let done = runtime
//!     .block_on(registry.dispatch(Provider::Anthropic, &response, &DispatchOptions::default()))
//!     .unwrap();
//! let next = done.next_turn();
//! assert_eq!(next[0]["role"], "user");
//! let results = &next[0]["content"];
//! assert_eq!(results[0]["tool_use_id"], "toolu_1");
//! assert_eq!(results[0]["is_error"], false);
//! assert_eq!(results[0]["content"][0]["text"], r#"{"summary":"sunny in Oslo"}"#);
//! // The wrong call is answered as an error the model can act on, not a failed turn.
//! assert_eq!(results[1]["is_error"], true);
//! assert!(results[1]["content"].as_str().unwrap().contains("input_invalid"));
//! ```

mod read;
mod run;
mod stream;
mod write;

use std::borrow::Cow;
use std::fmt;

use serde_json::Value;

use crate::export::Export;
use crate::registry::CallOptions;
use crate::typed::ToolError;

pub use crate::dispatch::stream::{MAX_STREAM_BYTES, MAX_STREAM_ENTRIES, StreamedTurn};

/// An object of these members, moved in: `json!` would serialize each value again, a deep
/// copy of every answer and echoed turn.
fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    let mut map = serde_json::Map::with_capacity(N);
    for (key, value) in members {
        map.insert(key.to_owned(), value);
    }
    Value::Object(map)
}

/// A model provider whose responses [`ToolRegistry::dispatch`](crate::ToolRegistry::dispatch)
/// reads and whose next turn it writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI Chat Completions: `tool_calls` in, `role: "tool"` messages out.
    OpenAiChat,
    /// OpenAI Responses: `function_call` items in, `function_call_output` items out.
    OpenAiResponses,
    /// Anthropic Messages: `tool_use` blocks in, `tool_result` blocks out.
    Anthropic,
    /// Google Gemini (`generateContent`): `functionCall` parts in, `functionResponse` parts out.
    Gemini,
}

impl Provider {
    /// The export whose tool names and tool-result shapes this provider takes.
    pub(crate) fn export(self) -> Export {
        match self {
            Provider::OpenAiChat => Export::OpenAiChat { strict: false },
            Provider::OpenAiResponses => Export::OpenAiResponses { strict: false },
            Provider::Anthropic => Export::Anthropic,
            Provider::Gemini => Export::Gemini,
        }
    }

    /// The provider's name, as errors show it.
    pub fn name(self) -> &'static str {
        match self {
            Provider::OpenAiChat => "OpenAI Chat Completions",
            Provider::OpenAiResponses => "OpenAI Responses",
            Provider::Anthropic => "Anthropic Messages",
            Provider::Gemini => "Gemini",
        }
    }
}

/// One tool call a model made.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The id that pairs the call with its answer (`tool_call_id`, `call_id`, `tool_use_id`,
    /// Gemini's `functionCall.id`; empty when Gemini sent none).
    pub id: String,
    /// The name the model called: a provider-safe tool name
    /// ([`ToolRegistry::provider_name`](crate::ToolRegistry::provider_name)).
    pub name: String,
    /// The arguments, or why they cannot be used (not JSON, not an object, over a bound, never
    /// completed in a stream). A call whose arguments cannot be used is answered as
    /// `input_invalid` without running.
    pub arguments: Result<Value, String>,
}

/// A model's turn as read from its provider's response: its calls, and the turn itself as it
/// must be sent back.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelTurn {
    /// Whose response it is.
    pub provider: Provider,
    /// The model's turn as the next request must carry it, before the answers: the assistant
    /// message (OpenAI Chat, Anthropic), the output items (OpenAI Responses) or the model
    /// content (Gemini), verbatim but for null fields: Gemini's `thoughtSignature`s and
    /// Anthropic's signed thinking blocks must go back as they came.
    pub assistant: Vec<Value>,
    /// The calls, in the order the model made them.
    pub calls: Vec<ToolCall>,
}

impl ModelTurn {
    /// Reads `response`: the provider's whole response, or the part of it that holds the calls
    /// (the assistant message, the output items, the content blocks, the model content).
    ///
    /// # Errors
    ///
    /// A [`ResponseError`] naming where `response` is not the provider's shape. A call whose
    /// arguments are wrong is not an error here: it is answered (see [`ToolCall::arguments`]).
    pub fn read(
        provider: Provider,
        response: &Value,
        options: &DispatchOptions,
    ) -> Result<ModelTurn, ResponseError> {
        read::turn(provider, response, options, true)
    }
}

/// How a turn's calls are run.
#[derive(Clone, Debug)]
pub struct DispatchOptions {
    /// How many calls run at once (at least 1; 8 by default).
    pub max_concurrency: usize,
    /// How many calls of one turn run (128 by default); the rest are answered `rate_limited`
    /// without running.
    pub max_calls: usize,
    /// The longest arguments text read (OpenAI sends arguments as a JSON string; 1 MiB by
    /// default). Longer arguments are answered `input_invalid`.
    pub max_argument_bytes: usize,
    /// The deepest arguments read (64 levels by default), whatever the provider.
    pub max_argument_depth: usize,
    /// Keep every output as its JSON text (`false` by default): set it when the next turn goes
    /// out as text ([`Dispatched::next_turn_json`]). Only Gemini's outputs change: its
    /// `functionResponse` takes an object, so by default each output is built as a value; as
    /// text it is written once, spliced into the request's text as it is, and read back only
    /// if [`CallResult::answer`] or [`Dispatched::next_turn`] asks for it. OpenAI's and
    /// Anthropic's outputs are text either way (their tool results are text).
    pub outputs_as_text: bool,
    /// The options of every call (a run id, context, an approver, cancellation, the caller);
    /// each call gets its own content collector.
    pub call: CallOptions,
}

impl Default for DispatchOptions {
    fn default() -> Self {
        DispatchOptions {
            max_concurrency: 8,
            max_calls: 128,
            max_argument_bytes: 1 << 20,
            max_argument_depth: 64,
            outputs_as_text: false,
            call: CallOptions::default(),
        }
    }
}

/// A turn's calls, answered.
#[derive(Debug)]
pub struct Dispatched {
    /// Whose turn it was.
    pub provider: Provider,
    /// Each call and its answer, in the order the model made them.
    pub results: Vec<CallResult>,
}

/// One call and its answer.
#[derive(Debug)]
pub struct CallResult {
    /// The call as the model made it.
    pub call: ToolCall,
    /// The registry's tool it named (`None` when it names none).
    pub tool_id: Option<String>,
    /// The tool's output, or why the call failed (or was not run).
    pub outcome: Result<Output, ToolError>,
    /// Whose call it was.
    provider: Provider,
    /// The answer, where it was written when the call was answered: one that carries content
    /// blocks (attached, or the output's own). Every other answer is the outcome's alone and
    /// is written when it is asked for. In a Gemini answer with an output,
    /// `functionResponse.response.output` holds the place of the outcome, put in when the
    /// answer is taken (one copy, not two) or written in its place when the next turn is
    /// written as text.
    written: Option<Value>,
}

impl CallResult {
    /// The answer in the provider's shape: a `tool` message, a `function_call_output` item, a
    /// `tool_result` block or a `functionResponse` part. Built from the outcome (a copy of the
    /// output in it, read from its text where a Gemini output was kept as text,
    /// [`DispatchOptions::outputs_as_text`]; [`Self::into_answer`] moves it instead), borrowed
    /// where the answer carries content blocks and no output.
    pub fn answer(&self) -> Cow<'_, Value> {
        match (&self.written, &self.outcome) {
            (Some(answer), Ok(output)) if write::output_place(answer).is_some() => {
                let mut answer = answer.clone();
                write::put_output(&mut answer, output.clone());
                Cow::Owned(answer)
            }
            (Some(answer), _) => Cow::Borrowed(answer),
            (None, outcome) => {
                Cow::Owned(write::derived(self.provider, &self.call, outcome.clone()))
            }
        }
    }

    /// The answer, moved out (see [`Self::answer`]).
    pub fn into_answer(self) -> Value {
        match (self.written, self.outcome) {
            (Some(mut answer), Ok(output)) => {
                write::put_output(&mut answer, output);
                answer
            }
            (Some(answer), Err(_)) => answer,
            (None, outcome) => write::derived(self.provider, &self.call, outcome),
        }
    }
}

/// A call's output, kept in the form its provider's answer carries it, so that it is encoded
/// once: its JSON text for OpenAI and Anthropic (a typed tool writes it straight to text, no
/// `Value` built), its value for Gemini (whose `functionResponse` takes an object) and for a
/// tool that returns content only (its blocks).
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    /// The output's JSON text.
    Json(String),
    /// The output as a value.
    Value(Value),
}

impl Output {
    /// The output as a value: parsed from its text when that is how it was kept.
    ///
    /// # Errors
    ///
    /// Only where serde_json cannot read back what it wrote: an output nested deeper than the
    /// 128 levels its reader takes.
    ///
    /// ```
    /// use agentio_tools::dispatch::Output;
    /// use serde_json::json;
    ///
    /// assert_eq!(Output::Json(r#"{"n":1}"#.into()).to_value().unwrap(), json!({ "n": 1 }));
    /// assert_eq!(Output::Value(json!({ "n": 1 })).to_value().unwrap(), json!({ "n": 1 }));
    /// ```
    pub fn to_value(&self) -> Result<Value, serde_json::Error> {
        match self {
            Output::Json(text) => serde_json::from_str(text),
            Output::Value(value) => Ok(value.clone()),
        }
    }

    /// The output as a value, its text read back where it was kept as text. An output nested
    /// deeper than the 128 levels serde_json reads (a typed output is written without a depth
    /// bound) stays its text, as a string: what a value can hold of it.
    fn into_value(self) -> Value {
        match self {
            Output::Json(text) => serde_json::from_str(&text).unwrap_or(Value::String(text)),
            Output::Value(value) => value,
        }
    }
}

/// The output's JSON text.
impl fmt::Display for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Output::Json(text) => f.write_str(text),
            Output::Value(value) => write!(f, "{value}"),
        }
    }
}

impl Dispatched {
    /// The answers, one per call, in order (copies: [`Self::into_answers`] moves them).
    pub fn answers(&self) -> Vec<Value> {
        self.results
            .iter()
            .map(|r| r.answer().into_owned())
            .collect()
    }

    /// The answers, one per call, in order, moved out.
    pub fn into_answers(self) -> Vec<Value> {
        // Pushed, not collected: collecting in place would shrink the results' allocation.
        let mut answers = Vec::with_capacity(self.results.len());
        for result in self.results {
            answers.push(result.into_answer());
        }
        answers
    }

    /// What to send after the model's turn ([`ModelTurn::assistant`]): the `tool` messages
    /// (OpenAI Chat), the `function_call_output` items (OpenAI Responses), one user message of
    /// `tool_result` blocks (Anthropic), one `user` content of `functionResponse` parts
    /// (Gemini). Empty when the model made no call.
    pub fn next_turn(&self) -> Vec<Value> {
        write::next_turn(self.provider, self.answers())
    }

    /// [`Self::next_turn`], the answers moved in instead of copied.
    pub fn into_next_turn(self) -> Vec<Value> {
        let provider = self.provider;
        write::next_turn(provider, self.into_answers())
    }

    /// [`Self::next_turn`] as JSON text (an array of the messages, items or contents to send),
    /// each output written as it was kept: for a host that writes its request body as text
    /// (or holds each message as raw JSON), no value is built for an
    /// output kept as text ([`DispatchOptions::outputs_as_text`]).
    ///
    /// ```
    /// # use agentio_tools::dispatch::{DispatchOptions, Provider};
    /// # use agentio_tools::{ToolError, ToolRegistry, tool};
    /// # use serde_json::{Value, json};
    /// # #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// # struct City { city: String }
    /// # #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// # struct Forecast { summary: String }
    /// /// Tomorrow's weather in a city.
    /// #[tool(id = "weather.forecast")]
    /// async fn forecast(city: City) -> Result<Forecast, ToolError> {
    ///     Ok(Forecast { summary: format!("sunny in {}", city.city) })
    /// }
    /// let mut registry = ToolRegistry::new();
    /// registry.register(ForecastTool).unwrap();
    /// let response = json!({ "candidates": [{ "content": { "role": "model", "parts": [
    ///     { "functionCall": { "id": "fc_1", "name": "weather_forecast", "args": { "city": "Oslo" } } }
    /// ] } }] });
    /// let options = DispatchOptions { outputs_as_text: true, ..DispatchOptions::default() };
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let done = runtime.block_on(registry.dispatch(Provider::Gemini, &response, &options)).unwrap();
    /// let text: String = done.next_turn_json();
    /// let next: Value = serde_json::from_str(&text).unwrap();
    /// assert_eq!(next, json!([{ "role": "user", "parts": [{ "functionResponse": {
    ///     "id": "fc_1", "name": "weather_forecast", "response": { "output": { "summary": "sunny in Oslo" } }
    /// } }] }]));
    /// assert_eq!(next, json!(done.next_turn()));
    /// ```
    pub fn next_turn_json(&self) -> String {
        write::next_turn_json(self.provider, &self.results)
    }
}

/// Where a provider response is not that provider's shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResponseError {
    /// Whose response was read.
    pub provider: Provider,
    /// A JSON pointer to the place (`/choices/0/message/tool_calls/2/id`).
    pub pointer: String,
    /// What is wrong there.
    pub reason: String,
}

impl fmt::Display for ResponseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "not a {} response: at `{}`, {}",
            self.provider.name(),
            self.pointer,
            self.reason
        )
    }
}

impl std::error::Error for ResponseError {}
