//! Reading a provider's response: its calls, and the model's turn to send back.

use serde_json::{Map, Value};

use super::{DispatchOptions, ModelTurn, Provider, ResponseError, ToolCall, object};

/// One step of a path into the response: a member's name or an item's index.
#[derive(Clone, Copy)]
enum Token<'a> {
    Key(&'a str),
    Index(usize),
}

/// The deepest path a reader walks: `/candidates/0/content/parts/3/functionCall/args` is 7.
const DEPTH: usize = 8;

/// Where in the response a reader is, kept as borrowed steps and written out as a JSON
/// pointer only when an error names it: reading a response allocates nothing for its paths.
#[derive(Clone, Copy)]
struct Path<'a> {
    tokens: [Token<'a>; DEPTH],
    len: usize,
}

impl<'a> Path<'a> {
    const ROOT: Path<'static> = Path {
        tokens: [Token::Index(0); DEPTH],
        len: 0,
    };

    fn then(mut self, token: Token<'a>) -> Self {
        // The readers below are fixed walks no deeper than `DEPTH` (7 at most): a deeper one
        // is a bug of this module, and indexing says so.
        self.tokens[self.len] = token;
        self.len += 1;
        self
    }

    fn pointer(&self) -> String {
        if self.len == 0 {
            return "/".into();
        }
        let mut pointer = String::new();
        for token in &self.tokens[..self.len] {
            match token {
                Token::Key(key) => agentio_core::pointer::push_token(&mut pointer, key),
                Token::Index(i) => {
                    pointer.push('/');
                    pointer.push_str(&i.to_string());
                }
            }
        }
        pointer
    }
}

/// Where in the response a reader is, for the errors it names.
struct At<'a> {
    provider: Provider,
    path: Path<'a>,
    value: &'a Value,
}

impl<'a> At<'a> {
    fn root(provider: Provider, value: &'a Value) -> Self {
        At {
            provider,
            path: Path::ROOT,
            value,
        }
    }

    fn fail(&self, reason: impl Into<String>) -> ResponseError {
        ResponseError {
            provider: self.provider,
            pointer: self.path.pointer(),
            reason: reason.into(),
        }
    }

    /// The member `key` (or its snake_case spelling `alias`), when present and not null.
    fn field(&self, key: &str, alias: Option<&str>) -> Option<At<'a>> {
        let object = self.value.as_object()?;
        let (name, value) =
            member(object, key).or_else(|| alias.and_then(|a| member(object, a)))?;
        if value.is_null() {
            return None;
        }
        Some(At {
            provider: self.provider,
            path: self.path.then(Token::Key(name)),
            value,
        })
    }

    fn required(&self, key: &str, alias: Option<&str>) -> Result<At<'a>, ResponseError> {
        if !self.value.is_object() {
            return Err(self.fail("expected an object"));
        }
        self.field(key, alias)
            .ok_or_else(|| self.fail(format!("`{key}` is missing")))
    }

    fn string(&self) -> Result<&'a str, ResponseError> {
        self.value
            .as_str()
            .ok_or_else(|| self.fail("expected a string"))
    }

    fn array(&self) -> Result<Vec<At<'a>>, ResponseError> {
        let items = self
            .value
            .as_array()
            .ok_or_else(|| self.fail("expected an array"))?;
        Ok(items
            .iter()
            .enumerate()
            .map(|(i, value)| At {
                provider: self.provider,
                path: self.path.then(Token::Index(i)),
                value,
            })
            .collect())
    }
}

/// The member `key` of `object`. A response's objects are small, and comparing a few keys
/// costs less than hashing one (a lookup per field read); a large object is looked up by hash.
fn member<'a>(object: &'a Map<String, Value>, key: &str) -> Option<(&'a String, &'a Value)> {
    if object.len() <= 16 {
        object.iter().find(|(name, _)| name.as_str() == key)
    } else {
        object.get_key_value(key)
    }
}

/// The turn in `response`; with `echo`, the model's own turn to send back is copied out too
/// ([`ModelTurn::assistant`]), otherwise it is left empty (`dispatch` returns only answers).
pub(super) fn turn(
    provider: Provider,
    response: &Value,
    options: &DispatchOptions,
    echo: bool,
) -> Result<ModelTurn, ResponseError> {
    let root = At::root(provider, response);
    match provider {
        Provider::OpenAiChat => openai_chat(root, options, echo),
        Provider::OpenAiResponses => openai_responses(root, options, echo),
        Provider::Anthropic => anthropic(root, options, echo),
        Provider::Gemini => gemini(root, options, echo),
    }
}

/// `text` as a call's arguments: JSON, an object, within the bounds.
pub(super) fn arguments_of_text(text: &str, options: &DispatchOptions) -> Result<Value, String> {
    if text.len() > options.max_argument_bytes {
        return Err(format!(
            "the arguments are {} bytes, over the limit of {}",
            text.len(),
            options.max_argument_bytes
        ));
    }
    // An empty string is what a model sends for a call without arguments.
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("the arguments are not JSON: {e}"))?;
    arguments_of_value(value, options)
}

/// `value` as a call's arguments: an object, within the depth bound.
pub(super) fn arguments_of_value(value: Value, options: &DispatchOptions) -> Result<Value, String> {
    if !value.is_object() {
        return Err(format!(
            "the arguments must be a JSON object, not {}",
            kind(&value)
        ));
    }
    agentio_core::limits::check_depth(&value, options.max_argument_depth).map_err(|v| {
        format!(
            "the arguments nest deeper than {} levels (at `{}`)",
            options.max_argument_depth, v.pointer
        )
    })?;
    Ok(value)
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `value` with its null members dropped (one level): what a response model dumps as `null`
/// is "absent" to the request types.
pub(super) fn without_nulls(value: &Value) -> Value {
    match value {
        Value::Object(object) => Value::Object(
            object
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A Chat Completion (`choices[0].message`) or the assistant message itself.
fn openai_chat(
    root: At<'_>,
    options: &DispatchOptions,
    echo: bool,
) -> Result<ModelTurn, ResponseError> {
    let provider = root.provider;
    let message = match root.field("choices", None) {
        Some(choices) => {
            let choices = choices.array()?;
            let first = choices
                .first()
                .ok_or_else(|| root.fail("`choices` is empty"))?;
            first.required("message", None)?
        }
        None if root.value.is_object() => root,
        None => return Err(root.fail("expected a chat completion or an assistant message")),
    };
    let mut calls = Vec::new();
    let mut echoed_calls = Vec::new();
    if let Some(tool_calls) = message.field("tool_calls", None) {
        for call in tool_calls.array()? {
            let id = call.required("id", None)?.string()?.to_owned();
            let kind = call
                .field("type", None)
                .map_or(Ok("function"), |t| t.string())?;
            match kind {
                "function" => {
                    let function = call.required("function", None)?;
                    let name = function.required("name", None)?.string()?.to_owned();
                    let text = match function.field("arguments", None) {
                        Some(arguments) => arguments.string()?,
                        None => "",
                    };
                    if echo {
                        echoed_calls.push(serde_json::json!({
                            "id": id,
                            "type": "function",
                            "function": { "name": name, "arguments": text },
                        }));
                    }
                    calls.push(ToolCall {
                        id,
                        name,
                        arguments: arguments_of_text(text, options),
                    });
                }
                "custom" => {
                    let custom = call.required("custom", None)?;
                    let name = custom.required("name", None)?.string()?.to_owned();
                    if echo {
                        echoed_calls.push(without_nulls(call.value));
                    }
                    calls.push(ToolCall {
                        id,
                        name,
                        arguments: Err("a custom tool's free-text input is not a JSON object: these tools are function tools".into()),
                    });
                }
                other => {
                    return Err(call.fail(format!(
                        "a tool call of type `{other}` (expected `function` or `custom`)"
                    )));
                }
            }
        }
    }
    if !echo {
        return Ok(ModelTurn {
            provider,
            assistant: Vec::new(),
            calls,
        });
    }
    let mut assistant = serde_json::json!({ "role": "assistant" });
    if let Some(content) = message.field("content", None) {
        assistant["content"] = content.value.clone();
    }
    if let Some(refusal) = message.field("refusal", None) {
        assistant["refusal"] = refusal.value.clone();
    }
    if !echoed_calls.is_empty() {
        assistant["tool_calls"] = Value::Array(echoed_calls);
    }
    Ok(ModelTurn {
        provider,
        assistant: vec![assistant],
        calls,
    })
}

/// A Response (`output`) or its output items.
fn openai_responses(
    root: At<'_>,
    options: &DispatchOptions,
    echo: bool,
) -> Result<ModelTurn, ResponseError> {
    let items = match root.field("output", None) {
        Some(output) => output.array()?,
        None if root.value.is_array() => root.array()?,
        None => return Err(root.fail("expected a response with `output`, or its output items")),
    };
    let mut calls = Vec::new();
    let mut assistant = Vec::with_capacity(items.len());
    for item in &items {
        let kind = item.required("type", None)?.string()?;
        if kind == "function_call" {
            let id = item.required("call_id", None)?.string()?.to_owned();
            let name = item.required("name", None)?.string()?.to_owned();
            let text = match item.field("arguments", None) {
                Some(arguments) => arguments.string()?,
                None => "",
            };
            calls.push(ToolCall {
                id,
                name,
                arguments: arguments_of_text(text, options),
            });
        }
        if echo {
            assistant.push(without_nulls(item.value));
        }
    }
    Ok(ModelTurn {
        provider: root.provider,
        assistant,
        calls,
    })
}

/// A Message (`content`) or its content blocks.
fn anthropic(
    root: At<'_>,
    options: &DispatchOptions,
    echo: bool,
) -> Result<ModelTurn, ResponseError> {
    let blocks = match root.field("content", None) {
        Some(content) => content.array()?,
        None if root.value.is_array() => root.array()?,
        None => return Err(root.fail("expected a message with `content`, or its content blocks")),
    };
    let mut calls = Vec::new();
    let mut content = Vec::with_capacity(blocks.len());
    for block in &blocks {
        let kind = block.required("type", None)?.string()?;
        if kind == "tool_use" {
            let id = block.required("id", None)?.string()?.to_owned();
            let name = block.required("name", None)?.string()?.to_owned();
            let input = block
                .field("input", None)
                .map_or(Value::Object(Map::new()), |input| input.value.clone());
            calls.push(ToolCall {
                id,
                name,
                arguments: arguments_of_value(input, options),
            });
        }
        if echo {
            content.push(without_nulls(block.value));
        }
    }
    let assistant = if echo {
        vec![object([
            ("role", Value::from("assistant")),
            ("content", Value::Array(content)),
        ])]
    } else {
        Vec::new()
    };
    Ok(ModelTurn {
        provider: root.provider,
        assistant,
        calls,
    })
}

/// A GenerateContentResponse (`candidates[0].content`) or the model's content (`parts`).
fn gemini(root: At<'_>, options: &DispatchOptions, echo: bool) -> Result<ModelTurn, ResponseError> {
    let provider = root.provider;
    let content = match root.field("candidates", None) {
        Some(candidates) => {
            let candidates = candidates.array()?;
            let first = candidates
                .first()
                .ok_or_else(|| root.fail("`candidates` is empty"))?;
            first.required("content", None)?
        }
        None if root.value.get("parts").is_some() => root,
        None => {
            return Err(
                root.fail("expected a response with `candidates`, or a content with `parts`")
            );
        }
    };
    let parts = match content.field("parts", None) {
        Some(parts) => parts.array()?,
        None => Vec::new(),
    };
    let mut calls = Vec::new();
    let mut echoed = Vec::with_capacity(parts.len());
    for part in &parts {
        if let Some(call) = part.field("functionCall", Some("function_call")) {
            let name = call.required("name", None)?.string()?.to_owned();
            let id = match call.field("id", None) {
                Some(id) => id.string()?.to_owned(),
                None => String::new(),
            };
            let args = call
                .field("args", None)
                .map_or(Value::Object(Map::new()), |args| args.value.clone());
            calls.push(ToolCall {
                id,
                name,
                arguments: arguments_of_value(args, options),
            });
        }
        if echo {
            echoed.push(without_nulls(part.value));
        }
    }
    let role = content
        .field("role", None)
        .map_or(Ok("model"), |r| r.string())?;
    let assistant = if echo {
        vec![object([
            ("role", Value::from(role)),
            ("parts", Value::Array(echoed)),
        ])]
    } else {
        Vec::new()
    };
    Ok(ModelTurn {
        provider,
        assistant,
        calls,
    })
}
