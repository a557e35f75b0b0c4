//! Writing a call's answer in its provider's shape, and the next turn around the answers.

use agentio_core::{AgentError, ErrorCode};
use serde_json::{Map, Value, json};

use super::{Provider, ToolCall, object};
use crate::content::Content;
use crate::tool_result::tool_result;

/// A successful call's answer: the output (none for a [`Contents`](crate::content::Contents)
/// tool, whose output is its blocks) and the attached content, as the provider's tool result
/// takes them. A block the provider does not take is an `output_invalid` error, which says
/// the call ran.
pub(super) fn success(
    provider: Provider,
    call: &ToolCall,
    output: &Value,
    content_only: bool,
    attached: Vec<Content>,
) -> Result<Value, AgentError> {
    let (output, blocks) = if content_only {
        let mut blocks: Vec<Content> = serde_json::from_value(output.clone()).map_err(|e| {
            AgentError::internal(format!("a `Contents` output is not content blocks: {e}"))
        })?;
        blocks.extend(attached);
        (None, blocks)
    } else {
        (Some(output), attached)
    };
    let result = tool_result(provider.export(), output, &blocks).map_err(|refusal| {
        AgentError::new(
            ErrorCode::OutputInvalid,
            format!(
                "`{}` ran, but its result cannot be given to {}: {refusal}",
                call.name,
                provider.name()
            ),
        )
    })?;
    Ok(match provider {
        Provider::Gemini => {
            let Value::Object(mut response) = result else {
                return Err(AgentError::internal("a Gemini tool result is an object"));
            };
            named(&mut response, call);
            object([("functionResponse", Value::Object(response))])
        }
        _ => answer(provider, call, result, false),
    })
}

/// The OpenAI and Anthropic answer to `call` carrying `result`.
fn answer(provider: Provider, call: &ToolCall, result: Value, is_error: bool) -> Value {
    let id = Value::String(call.id.clone());
    match provider {
        Provider::OpenAiChat => object([
            ("role", Value::from("tool")),
            ("tool_call_id", id),
            ("content", result),
        ]),
        Provider::OpenAiResponses => object([
            ("type", Value::from("function_call_output")),
            ("call_id", id),
            ("output", result),
        ]),
        Provider::Anthropic | Provider::Gemini => object([
            ("type", Value::from("tool_result")),
            ("tool_use_id", id),
            ("content", result),
            ("is_error", Value::Bool(is_error)),
        ]),
    }
}

/// A failed call's answer: the AIP-14 error as JSON text, marked as an error where the
/// provider has a mark.
pub(super) fn failure(provider: Provider, call: &ToolCall, error: &AgentError) -> Value {
    match provider {
        // Gemini's convention: `response` holds `output` on success and `error` on failure.
        Provider::Gemini => {
            let mut response = Map::new();
            response.insert("response".into(), json!({ "error": error }));
            named(&mut response, call);
            object([("functionResponse", Value::Object(response))])
        }
        _ => {
            let text = json!({ "error": error }).to_string();
            answer(provider, call, Value::String(text), true)
        }
    }
}

/// A `FunctionResponse`'s name, and its id when the call had one.
fn named(response: &mut Map<String, Value>, call: &ToolCall) {
    response.insert("name".into(), Value::String(call.name.clone()));
    if !call.id.is_empty() {
        response.insert("id".into(), Value::String(call.id.clone()));
    }
}

/// The answers as the next turn's messages.
pub(super) fn next_turn(provider: Provider, answers: Vec<Value>) -> Vec<Value> {
    if answers.is_empty() {
        return answers;
    }
    match provider {
        Provider::OpenAiChat | Provider::OpenAiResponses => answers,
        Provider::Anthropic => vec![json!({ "role": "user", "content": answers })],
        Provider::Gemini => vec![json!({ "role": "user", "parts": answers })],
    }
}
