//! A streamed model turn, accumulated into its calls.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::read::{arguments_of_text, arguments_of_value, without_nulls};
use super::{DispatchOptions, ModelTurn, Provider, ResponseError, ToolCall, object};

/// The most text a stream's deltas may add up to (16 MiB): past it the stream is refused.
pub const MAX_STREAM_BYTES: usize = 16 << 20;

/// The most calls (or content blocks, or output items) one stream may open.
pub const MAX_STREAM_ENTRIES: usize = 4096;

/// A model turn arriving as a stream, accumulated event by event into the turn the
/// non-streaming API would have returned.
///
/// Give [`Self::push`] each event as parsed JSON, in order:
/// - [`Provider::OpenAiChat`]: each chunk (`{"choices": [{"delta": {"tool_calls": [{"index",
///   "id", "function": {"name", "arguments"}}]}}]}`), arguments concatenated per index;
/// - [`Provider::OpenAiResponses`]: each event (`response.output_item.added`,
///   `response.output_item.done` with the whole item, `response.completed`; the argument
///   deltas are read from the item when it is done);
/// - [`Provider::Anthropic`]: each event (`content_block_start`, `content_block_delta` with
///   `input_json_delta`, `text_delta`, `thinking_delta` or `signature_delta`,
///   `content_block_stop`, `message_stop`, ...);
/// - [`Provider::Gemini`]: each chunk (a `GenerateContentResponse` whose parts are appended).
///
/// Then [`Self::finish`] gives the [`ModelTurn`] to answer. A call whose arguments never
/// completed (a stream cut before its block stopped, or before the model finished its turn;
/// arguments that do not parse) is kept, with its arguments refused, so it is answered as
/// `input_invalid` and never run on half its input.
///
/// ```
/// use agentio_tools::dispatch::{DispatchOptions, Provider, StreamedTurn};
/// use serde_json::json;
///
/// let mut stream = StreamedTurn::new(Provider::Anthropic);
/// for event in [
///     json!({ "type": "content_block_start", "index": 0,
///             "content_block": { "type": "tool_use", "id": "toolu_1", "name": "weather_forecast", "input": {} } }),
///     json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "input_json_delta", "partial_json": "{\"ci" } }),
///     json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "input_json_delta", "partial_json": "ty\": \"Oslo\"}" } }),
///     json!({ "type": "content_block_stop", "index": 0 }),
///     json!({ "type": "message_stop" }),
/// ] {
///     stream.push(&event).unwrap();
/// }
/// let turn = stream.finish(&DispatchOptions::default()).unwrap();
/// assert_eq!(turn.calls[0].arguments, Ok(json!({ "city": "Oslo" })));
/// assert_eq!(turn.assistant[0]["content"][0]["input"], json!({ "city": "Oslo" }));
/// ```
#[derive(Debug)]
pub struct StreamedTurn {
    provider: Provider,
    events: usize,
    bytes: usize,
    finished: bool,
    /// OpenAI Chat: the message's text and refusal. Gemini: unused.
    text: String,
    refusal: String,
    /// By index: OpenAI Chat's calls, Responses' items, Anthropic's blocks.
    entries: BTreeMap<u64, Entry>,
    /// Gemini's parts, in order, and its role.
    parts: Vec<Value>,
}

#[derive(Debug, Default)]
struct Entry {
    /// The entry as far as it is known (a block, an item, a call's id and name).
    value: Map<String, Value>,
    /// Streamed arguments or input, concatenated.
    json: String,
    /// Whether its end arrived (a block stopped, an item done).
    done: bool,
}

impl StreamedTurn {
    /// An empty turn of `provider`'s stream.
    pub fn new(provider: Provider) -> Self {
        StreamedTurn {
            provider,
            events: 0,
            bytes: 0,
            finished: false,
            text: String::new(),
            refusal: String::new(),
            entries: BTreeMap::new(),
            parts: Vec::new(),
        }
    }

    fn fail(&self, pointer: impl Into<String>, reason: impl Into<String>) -> ResponseError {
        ResponseError {
            provider: self.provider,
            pointer: pointer.into(),
            reason: format!("event {}: {}", self.events, reason.into()),
        }
    }

    /// Counts `bytes` more of the stream's text against [`MAX_STREAM_BYTES`].
    fn count(&mut self, bytes: usize, pointer: &str) -> Result<(), ResponseError> {
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes > MAX_STREAM_BYTES {
            return Err(self.fail(
                pointer,
                format!("the stream's text passes {MAX_STREAM_BYTES} bytes"),
            ));
        }
        Ok(())
    }

    /// The entry at `index`, opened if new (at most [`MAX_STREAM_ENTRIES`]).
    fn entry(&mut self, index: &Value, pointer: &str) -> Result<&mut Entry, ResponseError> {
        let Some(index) = index.as_u64() else {
            return Err(self.fail(pointer, "expected an index (a non-negative integer)"));
        };
        if !self.entries.contains_key(&index) && self.entries.len() >= MAX_STREAM_ENTRIES {
            return Err(self.fail(
                pointer,
                format!("the stream opens more than {MAX_STREAM_ENTRIES} entries"),
            ));
        }
        Ok(self.entries.entry(index).or_default())
    }

    /// Adds one event of the stream.
    ///
    /// # Errors
    ///
    /// A [`ResponseError`] naming the event and where it is not the provider's stream shape,
    /// an `error` event, or a stream past [`MAX_STREAM_BYTES`] or [`MAX_STREAM_ENTRIES`].
    pub fn push(&mut self, event: &Value) -> Result<(), ResponseError> {
        self.events += 1;
        if !event.is_object() {
            return Err(self.fail("/", "expected an event object"));
        }
        match self.provider {
            Provider::OpenAiChat => self.push_chat(event),
            Provider::OpenAiResponses => self.push_responses(event),
            Provider::Anthropic => self.push_anthropic(event),
            Provider::Gemini => self.push_gemini(event),
        }
    }

    fn push_chat(&mut self, chunk: &Value) -> Result<(), ResponseError> {
        let Some(choices) = chunk.get("choices").and_then(Value::as_array) else {
            // A usage-only chunk, at the end, has an empty or missing `choices`.
            return Ok(());
        };
        for (c, choice) in choices.iter().enumerate() {
            if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue;
            }
            if choice.get("finish_reason").is_some_and(|r| !r.is_null()) {
                self.finished = true;
            }
            let Some(delta) = choice.get("delta").filter(|d| d.is_object()) else {
                continue;
            };
            if let Some(text) = delta.get("content").and_then(Value::as_str) {
                self.count(text.len(), "/choices/0/delta/content")?;
                self.text.push_str(text);
            }
            if let Some(text) = delta.get("refusal").and_then(Value::as_str) {
                self.count(text.len(), "/choices/0/delta/refusal")?;
                self.refusal.push_str(text);
            }
            let Some(calls) = delta.get("tool_calls").filter(|v| !v.is_null()) else {
                continue;
            };
            let pointer = format!("/choices/{c}/delta/tool_calls");
            let Some(calls) = calls.as_array() else {
                return Err(self.fail(pointer, "expected an array"));
            };
            for (i, call) in calls.iter().enumerate() {
                let at = format!("{pointer}/{i}");
                let index = call.get("index").cloned().unwrap_or(json!(i));
                let text = |key: &str| call.get(key).and_then(Value::as_str).map(str::to_owned);
                let id = text("id");
                let kind = text("type");
                let function = call.get("function");
                let name = function.and_then(|f| f.get("name")).and_then(Value::as_str);
                let arguments = function
                    .and_then(|f| f.get("arguments"))
                    .and_then(Value::as_str);
                let added: usize = [id.as_deref(), name, arguments]
                    .into_iter()
                    .flatten()
                    .map(str::len)
                    .sum();
                self.count(added, &at)?;
                let entry = self.entry(&index, &format!("{at}/index"))?;
                if let Some(id) = id {
                    entry.value.insert("id".into(), Value::String(id));
                }
                if let Some(kind) = kind {
                    entry.value.insert("type".into(), Value::String(kind));
                }
                if let Some(name) = name {
                    let known = entry
                        .value
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    let whole = format!("{known}{name}");
                    entry.value.insert("name".into(), Value::String(whole));
                }
                if let Some(arguments) = arguments {
                    entry.json.push_str(arguments);
                }
            }
        }
        Ok(())
    }

    fn push_responses(&mut self, event: &Value) -> Result<(), ResponseError> {
        let kind = event.get("type").and_then(Value::as_str).unwrap_or("");
        let index = event.get("output_index").cloned().unwrap_or(Value::Null);
        match kind {
            "response.output_item.added" | "response.output_item.done" => {
                let Some(item) = event.get("item").and_then(Value::as_object).cloned() else {
                    return Err(self.fail("/item", "expected the output item"));
                };
                let size = item
                    .get("arguments")
                    .and_then(Value::as_str)
                    .map_or(0, str::len);
                self.count(size, "/item/arguments")?;
                let done = kind.ends_with(".done");
                let entry = self.entry(&index, "/output_index")?;
                if done || entry.value.is_empty() {
                    if let Some(arguments) = item.get("arguments").and_then(Value::as_str) {
                        entry.json = arguments.to_owned();
                    }
                    entry.value = item;
                }
                entry.done |= done;
            }
            // The argument deltas and `.done` events repeat what `response.output_item.done`
            // carries whole; an item that never got there is refused at the end anyway.
            "response.completed" => self.finished = true,
            "response.failed" | "response.incomplete" | "error" => {
                let detail = event
                    .pointer("/response/error/message")
                    .or_else(|| event.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or(kind);
                return Err(self.fail("/type", format!("the stream reported `{kind}`: {detail}")));
            }
            _ => {}
        }
        Ok(())
    }

    fn push_anthropic(&mut self, event: &Value) -> Result<(), ResponseError> {
        let kind = event.get("type").and_then(Value::as_str).unwrap_or("");
        let index = event.get("index").cloned().unwrap_or(Value::Null);
        match kind {
            "content_block_start" => {
                let Some(block) = event
                    .get("content_block")
                    .and_then(Value::as_object)
                    .cloned()
                else {
                    return Err(self.fail("/content_block", "expected the content block"));
                };
                let entry = self.entry(&index, "/index")?;
                entry.value = block;
            }
            "content_block_delta" => {
                let Some(delta) = event.get("delta").filter(|d| d.is_object()) else {
                    return Err(self.fail("/delta", "expected the delta"));
                };
                let delta_kind = delta.get("type").and_then(Value::as_str).unwrap_or("");
                let (field, text) = match delta_kind {
                    "input_json_delta" => ("", delta.get("partial_json")),
                    "text_delta" => ("text", delta.get("text")),
                    "thinking_delta" => ("thinking", delta.get("thinking")),
                    "signature_delta" => ("signature", delta.get("signature")),
                    _ => ("", None),
                };
                let Some(text) = text.and_then(Value::as_str) else {
                    return Ok(());
                };
                self.count(text.len(), "/delta")?;
                if !self
                    .entries
                    .contains_key(&index.as_u64().unwrap_or(u64::MAX))
                {
                    return Err(self.fail("/index", "a delta for a block that never started"));
                }
                let entry = self.entry(&index, "/index")?;
                if field.is_empty() {
                    entry.json.push_str(text);
                } else {
                    let known = entry.value.get(field).and_then(Value::as_str).unwrap_or("");
                    let whole = format!("{known}{text}");
                    entry.value.insert(field.into(), Value::String(whole));
                }
            }
            "content_block_stop" => {
                if !self
                    .entries
                    .contains_key(&index.as_u64().unwrap_or(u64::MAX))
                {
                    return Err(self.fail("/index", "a stop for a block that never started"));
                }
                self.entry(&index, "/index")?.done = true;
            }
            "message_stop" => self.finished = true,
            "error" => {
                let detail = event
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("no message");
                return Err(self.fail("/error", format!("the stream reported an error: {detail}")));
            }
            _ => {}
        }
        Ok(())
    }

    fn push_gemini(&mut self, chunk: &Value) -> Result<(), ResponseError> {
        let Some(candidate) = chunk.pointer("/candidates/0") else {
            // A chunk with usage metadata only.
            return Ok(());
        };
        let finish = candidate
            .get("finishReason")
            .or_else(|| candidate.get("finish_reason"));
        if finish.is_some_and(|r| !r.is_null()) {
            self.finished = true;
        }
        let Some(parts) = candidate.pointer("/content/parts").filter(|p| !p.is_null()) else {
            return Ok(());
        };
        let Some(parts) = parts.as_array() else {
            return Err(self.fail("/candidates/0/content/parts", "expected an array"));
        };
        for part in parts {
            let size = serde_json::to_string(part).map_or(usize::MAX, |t| t.len());
            self.count(size, "/candidates/0/content/parts")?;
            if self.parts.len() >= MAX_STREAM_ENTRIES {
                return Err(self.fail(
                    "/candidates/0/content/parts",
                    format!("the stream opens more than {MAX_STREAM_ENTRIES} entries"),
                ));
            }
            self.parts.push(part.clone());
        }
        Ok(())
    }

    /// The turn the stream carried.
    ///
    /// # Errors
    ///
    /// A [`ResponseError`] when what arrived is not a turn (a call without an id or a name).
    pub fn finish(self, options: &DispatchOptions) -> Result<ModelTurn, ResponseError> {
        let unfinished =
            (!self.finished).then_some("the stream ended before the model finished its turn");
        match self.provider {
            Provider::OpenAiChat => self.finish_chat(options, unfinished),
            Provider::OpenAiResponses => self.finish_responses(options, unfinished),
            Provider::Anthropic => self.finish_anthropic(options, unfinished),
            Provider::Gemini => self.finish_gemini(options, unfinished),
        }
    }

    fn finish_chat(
        self,
        options: &DispatchOptions,
        unfinished: Option<&str>,
    ) -> Result<ModelTurn, ResponseError> {
        let mut calls = Vec::new();
        let mut echoed = Vec::new();
        for (index, entry) in &self.entries {
            let field = |key: &str| {
                entry
                    .value
                    .get(key)
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            };
            let pointer = format!("/tool_calls/{index}");
            let id = field("id").ok_or_else(|| self.fail(&pointer, "the call never got an id"))?;
            let name =
                field("name").ok_or_else(|| self.fail(&pointer, "the call never got a name"))?;
            echoed.push(json!({
                "id": id,
                "type": "function",
                "function": { "name": name, "arguments": entry.json },
            }));
            calls.push(ToolCall {
                id,
                name,
                arguments: completed(unfinished, arguments_of_text(&entry.json, options)),
            });
        }
        let mut assistant = json!({ "role": "assistant" });
        assistant["content"] = if self.text.is_empty() {
            Value::Null
        } else {
            Value::String(self.text.clone())
        };
        if !self.refusal.is_empty() {
            assistant["refusal"] = Value::String(self.refusal.clone());
        }
        if !echoed.is_empty() {
            assistant["tool_calls"] = Value::Array(echoed);
        }
        Ok(ModelTurn {
            provider: self.provider,
            assistant: vec![without_nulls(&assistant)],
            calls,
        })
    }

    fn finish_responses(
        self,
        options: &DispatchOptions,
        unfinished: Option<&str>,
    ) -> Result<ModelTurn, ResponseError> {
        let mut calls = Vec::new();
        let mut assistant = Vec::new();
        for (index, entry) in &self.entries {
            let mut item = entry.value.clone();
            if item.get("type").and_then(Value::as_str) == Some("function_call") {
                let field = |key: &str| item.get(key).and_then(Value::as_str).map(str::to_owned);
                let pointer = format!("/output/{index}");
                let id = field("call_id")
                    .ok_or_else(|| self.fail(&pointer, "the call never got a `call_id`"))?;
                let name = field("name")
                    .ok_or_else(|| self.fail(&pointer, "the call never got a name"))?;
                let never_done = (!entry.done).then_some("the call's item never completed");
                calls.push(ToolCall {
                    id,
                    name,
                    arguments: completed(
                        never_done.or(unfinished),
                        arguments_of_text(&entry.json, options),
                    ),
                });
                item.insert("arguments".into(), Value::String(entry.json.clone()));
            }
            assistant.push(without_nulls(&Value::Object(item)));
        }
        Ok(ModelTurn {
            provider: self.provider,
            assistant,
            calls,
        })
    }

    fn finish_anthropic(
        self,
        options: &DispatchOptions,
        unfinished: Option<&str>,
    ) -> Result<ModelTurn, ResponseError> {
        let mut calls = Vec::new();
        let mut content = Vec::new();
        for (index, entry) in &self.entries {
            let mut block = entry.value.clone();
            if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                let field = |key: &str| block.get(key).and_then(Value::as_str).map(str::to_owned);
                let pointer = format!("/content/{index}");
                let id = field("id").ok_or_else(|| self.fail(&pointer, "the block has no id"))?;
                let name =
                    field("name").ok_or_else(|| self.fail(&pointer, "the block has no name"))?;
                let input = if entry.json.trim().is_empty() {
                    Ok(block.get("input").cloned().unwrap_or_else(|| json!({})))
                } else {
                    serde_json::from_str::<Value>(&entry.json)
                        .map_err(|e| format!("the streamed input is not complete JSON: {e}"))
                };
                let never_done = (!entry.done).then_some("the block never stopped");
                let arguments = completed(
                    never_done.or(unfinished),
                    input.and_then(|input| arguments_of_value(input, options)),
                );
                block.insert(
                    "input".into(),
                    arguments.clone().unwrap_or_else(|_| json!({})),
                );
                calls.push(ToolCall {
                    id,
                    name,
                    arguments,
                });
            }
            content.push(without_nulls(&Value::Object(block)));
        }
        Ok(ModelTurn {
            provider: self.provider,
            assistant: vec![object([
                ("role", Value::from("assistant")),
                ("content", Value::Array(content)),
            ])],
            calls,
        })
    }

    fn finish_gemini(
        self,
        options: &DispatchOptions,
        unfinished: Option<&str>,
    ) -> Result<ModelTurn, ResponseError> {
        let turn = super::read::turn(
            Provider::Gemini,
            &object([
                ("role", Value::from("model")),
                ("parts", Value::Array(self.parts)),
            ]),
            options,
            true,
        )?;
        let calls = turn
            .calls
            .into_iter()
            .map(|call| ToolCall {
                arguments: completed(unfinished, call.arguments),
                ..call
            })
            .collect();
        Ok(ModelTurn { calls, ..turn })
    }
}

/// A call's arguments, refused when the stream did not complete them.
fn completed(unfinished: Option<&str>, arguments: Result<Value, String>) -> Result<Value, String> {
    match (unfinished, arguments) {
        (Some(why), _) => Err(format!("{why}, so its arguments may be cut short")),
        (None, arguments) => arguments,
    }
}
