//! Writing a call's answer in its provider's shape, and the next turn around the answers.

use agentio_core::{AgentError, ErrorCode};
use serde_json::{Map, Value, json};

use super::{CallResult, Output, Provider, ToolCall, object};
use crate::content::Content;
use crate::tool_result::{encoded_tool_result, text_block};
use crate::typed::ToolError;

/// The answer of a successful call that carries content blocks: the output (its JSON text, or
/// its value: the content blocks of a [`Contents`](crate::content::Contents) tool, Gemini's
/// object) and the attached content, as the provider's tool result takes them (an output alone
/// is answered by [`derived`]). A block the provider does not take is an
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
        // Gemini's output stays in the outcome, as text or as a value: the answer holds its
        // place (`put_output`, `next_turn_json`).
        _ if provider == Provider::Gemini => {
            encoded_tool_result(export, None, Some(Value::Null), &attached)
        }
        // Copied, not written again: the outcome keeps the text too.
        Output::Json(text) => encoded_tool_result(export, Some(text.clone()), None, &attached),
        Output::Value(_) => encoded_tool_result(export, Some(output.to_string()), None, &attached),
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

/// A Gemini answer's output, in the place [`success`] kept for it; nothing where there is none
/// (and then an output kept as text is not read back).
pub(super) fn put_output(answer: &mut Value, output: Output) {
    if let Some(place) = OUTPUT_PLACE
        .iter()
        .try_fold(answer, |at, key| at.get_mut(key))
    {
        *place = output.into_value();
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

/// The answer that is the outcome's alone (no content blocks): an output alone
/// ([`derived_json`] writes the same answer as text), or an error.
pub(super) fn derived(
    provider: Provider,
    call: &ToolCall,
    outcome: Result<Output, ToolError>,
) -> Value {
    let output = match outcome {
        Ok(output) => output,
        Err(error) => return failure(provider, call, &error),
    };
    match provider {
        Provider::Gemini => {
            let mut response = Map::with_capacity(3);
            response.insert("response".into(), object([("output", output.into_value())]));
            named(&mut response, call);
            object([("functionResponse", Value::Object(response))])
        }
        _ => {
            let text = match output {
                Output::Json(text) => text,
                Output::Value(value) => value.to_string(),
            };
            let result = match provider {
                Provider::Anthropic => Value::Array(vec![text_block("text", text)]),
                _ => Value::String(text),
            };
            answer(provider, call, result, false)
        }
    }
}

/// [`derived`] written as JSON text, the output's text written as it is (Gemini) or as a
/// string (the others), no value built for it.
fn derived_json(
    out: &mut Vec<u8>,
    provider: Provider,
    call: &ToolCall,
    outcome: &Result<Output, ToolError>,
) {
    let output = match outcome {
        Ok(output) => output,
        Err(error) => return put(out, &failure(provider, call, error)),
    };
    // The answer around the call's id and the output's text, as `answer` builds it.
    let (open, between, close): (&[u8], &[u8], &[u8]) = match provider {
        Provider::OpenAiChat => (
            br#"{"role":"tool","tool_call_id":"#,
            br#","content":"#,
            b"}",
        ),
        Provider::OpenAiResponses => (
            br#"{"type":"function_call_output","call_id":"#,
            br#","output":"#,
            b"}",
        ),
        Provider::Anthropic => (
            br#"{"type":"tool_result","tool_use_id":"#,
            br#","content":[{"type":"text","text":"#,
            br#"}],"is_error":false}"#,
        ),
        Provider::Gemini => {
            out.extend_from_slice(br#"{"functionResponse":{"response":{"output":"#);
            put_raw(out, output);
            out.extend_from_slice(br#"},"name":"#);
            put(out, call.name.as_str());
            if !call.id.is_empty() {
                out.extend_from_slice(br#","id":"#);
                put(out, call.id.as_str());
            }
            out.extend_from_slice(b"}}");
            return;
        }
    };
    out.extend_from_slice(open);
    put(out, call.id.as_str());
    out.extend_from_slice(between);
    match output {
        Output::Json(text) => put_text(out, text),
        Output::Value(value) => put_text(out, &value.to_string()),
    }
    out.extend_from_slice(close);
}

/// [`next_turn`] written as JSON text from the results: each answer written as text (an
/// output's text as it is, or as a string), no value built for an answer that is the outcome's
/// alone; one written when the call was answered is written with its output in its place.
pub(super) fn next_turn_json(provider: Provider, results: &[CallResult]) -> String {
    let mut out = Vec::with_capacity(
        64 + results
            .iter()
            .map(|r| match &r.outcome {
                // Room for an escape in one byte of five.
                Ok(Output::Json(text)) => text.len() + text.len() / 4 + 96,
                _ => 256,
            })
            .sum::<usize>(),
    );
    out.push(b'[');
    if !results.is_empty() {
        match provider {
            Provider::OpenAiChat | Provider::OpenAiResponses => {}
            Provider::Anthropic => out.extend_from_slice(br#"{"role":"user","content":["#),
            Provider::Gemini => out.extend_from_slice(br#"{"role":"user","parts":["#),
        }
        for (i, result) in results.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            match (&result.written, &result.outcome) {
                // A Gemini output goes in the place its answer holds for it; an answer with no
                // such place (the other providers', a content-only tool's) is written as it is.
                (Some(answer), Ok(output)) => spliced(&mut out, answer, &OUTPUT_PLACE, output),
                (Some(answer), Err(_)) => put(&mut out, answer),
                (None, outcome) => derived_json(&mut out, provider, &result.call, outcome),
            }
        }
        if matches!(provider, Provider::Anthropic | Provider::Gemini) {
            out.extend_from_slice(b"]}");
        }
    }
    out.push(b']');
    // serde_json writes UTF-8, and an output's text is a `String`.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// `value` as JSON text, with `output` written at `path` in place of what is there.
fn spliced(out: &mut Vec<u8>, value: &Value, path: &[&str], output: &Output) {
    match (value, path.split_first()) {
        (_, None) => put_raw(out, output),
        (Value::Object(members), Some((step, rest))) => {
            out.push(b'{');
            for (i, (key, member)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                put(out, key.as_str());
                out.push(b':');
                if key == step {
                    spliced(out, member, rest, output);
                } else {
                    put(out, member);
                }
            }
            out.push(b'}');
        }
        _ => put(out, value),
    }
}

/// `output` as JSON: its text as it is, or its value written.
fn put_raw(out: &mut Vec<u8>, output: &Output) {
    match output {
        Output::Json(text) => out.extend_from_slice(text.as_bytes()),
        Output::Value(value) => put(out, value),
    }
}

/// `text` as a JSON string, byte for byte as serde_json writes it, eight bytes at a time where
/// none is to be escaped: one write for a run of eight plain bytes, where serde_json writes each
/// run between escapes apart (an output's JSON text has a quote in about one byte of seven).
fn put_text(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    let mut words = text.as_bytes().chunks_exact(8);
    for chunk in &mut words {
        if plain_word(u64::from_le_bytes(
            <[u8; 8]>::try_from(chunk).unwrap_or_default(),
        )) {
            out.extend_from_slice(chunk);
        } else {
            escaped(out, chunk);
        }
    }
    escaped(out, words.remainder());
    out.push(b'"');
}

/// `bytes` written with quotes, backslashes and control characters escaped as serde_json
/// escapes them.
fn escaped(out: &mut Vec<u8>, bytes: &[u8]) {
    for &b in bytes {
        match b {
            b'"' | b'\\' => out.extend_from_slice(&[b'\\', b]),
            0..0x20 => control(out, b),
            _ => out.push(b),
        }
    }
}

/// A control character as serde_json escapes it (`\n`, `\u001f`): JSON as serde_json writes
/// it has none, so this is out of the way of the loop above.
#[cold]
fn control(out: &mut Vec<u8>, b: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match b {
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        b'\t' => out.extend_from_slice(b"\\t"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x0c => out.extend_from_slice(b"\\f"),
        _ => out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[usize::from(b >> 4)],
            HEX[usize::from(b & 0xf)],
        ]),
    }
}

/// Whether none of the eight bytes of `word` is a quote, a backslash or a control character:
/// SWAR's test for a byte below `n` (exact in saying whether there is one: a borrow that crosses
/// into the next byte starts only at a byte that is below `n` itself), for `0x20` and for a zero
/// byte once the word is XORed with a quote or a backslash in every byte.
fn plain_word(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = ONES * 0x80;
    let any_below = |word: u64, n: u64| word.wrapping_sub(ONES * n) & !word & HIGH != 0;
    !any_below(word, 0x20)
        && !any_below(word ^ (ONES * u64::from(b'"')), 1)
        && !any_below(word ^ (ONES * u64::from(b'\\')), 1)
}

/// `value` as JSON text. Writing a value or a string to memory cannot fail.
fn put(out: &mut Vec<u8>, value: &(impl serde::Serialize + ?Sized)) {
    let _ = serde_json::to_writer(out, value);
}

#[cfg(test)]
mod tests {
    use super::{plain_word, put_text};

    #[test]
    fn a_word_is_plain_unless_one_of_its_bytes_is_a_quote_a_backslash_or_a_control() {
        // Every byte at every place among plain bytes, ASCII and not.
        for filler in [b'a', b' ', b'~', 0x7f, 0x80, 0xc3, 0xff] {
            assert!(plain_word(u64::from_le_bytes([filler; 8])), "{filler:#x}");
            for place in 0..8 {
                for byte in 0..=255u8 {
                    let mut word = [filler; 8];
                    word[place] = byte;
                    let plain = !(byte == b'"' || byte == b'\\' || byte < 0x20);
                    assert_eq!(
                        plain_word(u64::from_le_bytes(word)),
                        plain,
                        "{byte:#x} at {place} among {filler:#x}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_text_is_written_as_a_string_byte_for_byte_as_serde_json_writes_it() {
        let mut every_ascii = String::new();
        for b in 0u8..0x80 {
            every_ascii.push(char::from(b));
        }
        let plain: String = every_ascii.chars().filter(|c| *c >= ' ').collect();
        // Blocks that are all escapes: twice their length escaped.
        let quotes = "\"\\".repeat(70);
        let texts = [
            "",
            "plain",
            "eight by",
            "sixteen bytes ok",
            "a quote at byte sixty-four, the first of the second block: ----\"",
            "a backslash at byte sixty-four, the first of the second block: \\ -",
            r#"{"sum":3,"say":"\"hi\"","path":"C:\\x","n":[1,2.5,null,true]}"#,
            "ünïcödé \u{1f600} \"quoted\" past eight bytes",
            "a control char in the second word:\n, and on",
            "\\\"\\\"\\\"\\\"",
            plain.as_str(),
            quotes.as_str(),
            every_ascii.as_str(),
        ];
        for text in texts {
            // Every alignment of the text against the eight-byte words.
            for cut in 0..text.len().min(9) {
                let Some(text) = text.get(cut..) else {
                    continue;
                };
                let mut out = b"before ".to_vec();
                put_text(&mut out, text);
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    format!("before {}", serde_json::to_string(text).unwrap()),
                    "{text:?}"
                );
            }
        }
    }
}
