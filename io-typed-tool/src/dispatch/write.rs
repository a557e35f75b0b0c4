//! Writing a call's answer in its provider's shape, and the next turn around the answers.

use agentio_core::{AgentError, ErrorCode};
use serde_json::{Map, Value, json};

use super::{Output, Provider, ToolCall, object};
use crate::content::Content;
use crate::tool_result::encoded_tool_result;

/// A successful call's answer: the output (its JSON text, or its value: the content blocks
/// of a [`Contents`](crate::content::Contents) tool, Gemini's object) and the attached content,
/// as the provider's tool result takes them. A block the provider does not take is an
/// `output_invalid` error, which says the call ran.
pub(super) fn success(
    provider: Provider,
    call: &ToolCall,
    output: &Output,
    content_only: bool,
    attached: Vec<Content>,
) -> Result<Value, AgentError> {
    let export = provider.export();
    let result = match output {
        // A content-only tool: its output is its blocks, before the attached ones.
        Output::Value(blocks) if content_only => {
            let mut blocks: Vec<Content> = serde_json::from_value(blocks.clone()).map_err(|e| {
                AgentError::internal(format!("a `Contents` output is not content blocks: {e}"))
            })?;
            blocks.extend(attached);
            encoded_tool_result(export, None, None, &blocks)
        }
        // Copied, not written again: the outcome keeps the text too.
        Output::Json(text) => encoded_tool_result(export, Some(text.clone()), None, &attached),
        // Gemini's output stays in the outcome: the answer holds its place (`put_output`).
        Output::Value(_) => match provider {
            Provider::Gemini => encoded_tool_result(export, None, Some(Value::Null), &attached),
            _ => encoded_tool_result(export, Some(output.to_string()), None, &attached),
        },
    };
    let result = result.map_err(|refusal| {
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

/// The place [`success`] kept in a Gemini answer for its output (none in any other answer,
/// nor in that of a tool whose output is its content).
pub(super) fn output_place(answer: &Value) -> Option<&Value> {
    OUTPUT_PLACE.iter().try_fold(answer, |at, key| at.get(key))
}

/// A Gemini answer's output, in the place [`success`] kept for it; nothing where there is none.
pub(super) fn put_output(answer: &mut Value, output: Value) {
    if let Some(place) = OUTPUT_PLACE
        .iter()
        .try_fold(answer, |at, key| at.get_mut(key))
    {
        *place = output;
    }
}

/// Where a Gemini answer holds its output.
const OUTPUT_PLACE: [&str; 3] = ["functionResponse", "response", "output"];

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
        Provider::Anthropic => vec![object([
            ("role", Value::from("user")),
            ("content", Value::Array(answers)),
        ])],
        Provider::Gemini => vec![object([
            ("role", Value::from("user")),
            ("parts", Value::Array(answers)),
        ])],
    }
}
