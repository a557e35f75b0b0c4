//! The model loop for each provider, against recorded transcripts (no network): export the
//! tools, send the conversation, dispatch the model's tool calls through the registry, send the
//! answers back, until the model answers in text.
//!
//! Run it with `cargo run --example agent_loop`. Each transcript (`examples/transcripts/`) is a
//! conversation's responses as the provider returned them: the model searches twice in
//! parallel, its second call out of range (`limit: 50`); the registry answers that call with an
//! error naming `/limit`, the model corrects itself, then answers. A real host replaces
//! `model.next(..)` with an HTTP request (see the README's "The model loop").

use agentio::serde_json::{Value, json};
use agentio::tools::dispatch::{DispatchOptions, ModelTurn, Provider};
use agentio::tools::{Export, ToolRegistry, tool_registry};
use agentio_examples::tools::KbSearch;

/// A recorded model: it replays a transcript's responses, one per request.
struct Recorded {
    responses: Vec<Value>,
}

impl Recorded {
    fn new(transcript: &str) -> Self {
        let transcript: Value = agentio::serde_json::from_str(transcript).expect("a transcript");
        let responses = transcript["responses"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        Recorded { responses }
    }

    /// What the provider answers to `request` (here: the next recorded response).
    fn next(&mut self, request: &Value) -> Value {
        assert!(request["tools"].as_array().is_some_and(|t| !t.is_empty()));
        self.responses.remove(0)
    }
}

/// The first user message, as each provider takes it.
fn user_message(provider: Provider, text: &str) -> Value {
    match provider {
        Provider::Gemini => json!({ "role": "user", "parts": [{ "text": text }] }),
        _ => json!({ "role": "user", "content": text }),
    }
}

/// The request body: the conversation and the tools, as each provider names them.
fn request(provider: Provider, history: &[Value], tools: &[Value]) -> Value {
    match provider {
        Provider::OpenAiChat => json!({ "model": "gpt-4.1", "messages": history, "tools": tools }),
        Provider::OpenAiResponses => json!({ "model": "gpt-5", "input": history, "tools": tools }),
        Provider::Anthropic => {
            json!({ "model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": history, "tools": tools })
        }
        _ => json!({ "contents": history, "tools": [{ "functionDeclarations": tools }] }),
    }
}

/// One conversation, to the model's final text.
async fn converse(
    registry: &ToolRegistry,
    provider: Provider,
    export: Export,
    model: &mut Recorded,
) {
    let tools = registry.export(export).expect("every tool exports");
    let options = DispatchOptions::default();
    let mut history = vec![user_message(
        provider,
        "How do I export invoices, and secure my login?",
    )];
    loop {
        let response = model.next(&request(provider, &history, &tools));
        let turn = ModelTurn::read(provider, &response, &options).expect("the provider's shape");
        history.extend(turn.assistant.iter().cloned());
        if turn.calls.is_empty() {
            println!("  the model answers after {} messages", history.len());
            return;
        }
        let done = registry.answer(turn, &options).await;
        for result in &done.results {
            let arguments = result
                .call
                .arguments
                .as_ref()
                .map(Value::to_string)
                .unwrap_or_default();
            match &result.outcome {
                Ok(output) => println!("  {}({arguments}) -> {output}", result.call.name),
                Err(error) => {
                    let at = error
                        .violations()
                        .first()
                        .map(|v| v.pointer.as_str())
                        .unwrap_or("");
                    println!(
                        "  {}({arguments}) -> {} at `{at}`: the model is told, and tries again",
                        result.call.name,
                        error.code().as_str()
                    );
                }
            }
        }
        history.extend(done.into_next_turn());
    }
}

fn main() {
    let registry = tool_registry![KbSearch].expect("a valid tool");
    let runtime = agentio::tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a Tokio runtime");
    let transcripts = [
        (
            "OpenAI Chat Completions",
            Provider::OpenAiChat,
            Export::OpenAiChat { strict: true },
            include_str!("transcripts/openai-chat.json"),
        ),
        (
            "OpenAI Responses",
            Provider::OpenAiResponses,
            Export::OpenAiResponses { strict: true },
            include_str!("transcripts/openai-responses.json"),
        ),
        (
            "Anthropic Messages",
            Provider::Anthropic,
            Export::Anthropic,
            include_str!("transcripts/anthropic.json"),
        ),
        (
            "Gemini",
            Provider::Gemini,
            Export::Gemini,
            include_str!("transcripts/gemini.json"),
        ),
    ];
    for (name, provider, export, transcript) in transcripts {
        println!("{name}:");
        let mut model = Recorded::new(transcript);
        runtime.block_on(converse(&registry, provider, export, &mut model));
    }
}
