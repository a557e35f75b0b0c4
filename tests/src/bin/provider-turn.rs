//! One model turn through the registry, for the providers' own SDKs to judge
//! (`tests/python/test_provider_round_trip.py`).
//!
//! Reads one JSON object from stdin, `{"provider": "openai-chat" | "openai-responses" |
//! "anthropic" | "gemini", "response": ...}` (a response as the provider returns it) or
//! `{"provider": ..., "stream": [event, ...]}` (its streamed events), dispatches its calls to
//! the provider fixture's tools (`agentio_tests::provider_fixture`), and prints
//! `{"assistant": [...], "answers": [...], "next_turn": [...], "outcomes": [...]}`: the model's
//! turn to send back, each call's answer, the messages that carry them, and each call's tool id
//! and error code (`null` when it succeeded). A response that is not the provider's shape
//! prints `{"error": {"pointer", "reason"}}`.

use std::io::Read;

use agentio_tools::dispatch::{DispatchOptions, ModelTurn, Provider, StreamedTurn};
use serde_json::{Value, json};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input)?;
    let input: Value = serde_json::from_str(&input)?;
    let provider = match input["provider"].as_str() {
        Some("openai-chat") => Provider::OpenAiChat,
        Some("openai-responses") => Provider::OpenAiResponses,
        Some("anthropic") => Provider::Anthropic,
        Some("gemini") => Provider::Gemini,
        other => return Err(format!("unknown provider {other:?}").into()),
    };
    let options = DispatchOptions {
        max_calls: input["max_calls"].as_u64().map_or(128, |n| n as usize),
        ..DispatchOptions::default()
    };
    let turn = match input.get("stream").and_then(Value::as_array) {
        Some(events) => {
            let mut stream = StreamedTurn::new(provider);
            events
                .iter()
                .try_for_each(|event| stream.push(event))
                .and_then(|()| stream.finish(&options))
        }
        None => ModelTurn::read(provider, &input["response"], &options),
    };
    let turn = match turn {
        Ok(turn) => turn,
        Err(error) => {
            println!(
                "{}",
                json!({ "error": { "pointer": error.pointer, "reason": error.reason } })
            );
            return Ok(());
        }
    };
    let assistant = turn.assistant.clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let registry = agentio_tests::provider_fixture::registry();
    // The same turn answered again with its outputs kept as text and the next turn written
    // as text: the judges see both forms.
    let as_text = DispatchOptions {
        outputs_as_text: true,
        ..options.clone()
    };
    let done_as_text = runtime.block_on(registry.answer(turn.clone(), &as_text));
    let next_turn_text: Value = serde_json::from_str(&done_as_text.next_turn_json())?;
    let done = runtime.block_on(registry.answer(turn, &options));
    let outcomes: Vec<Value> = done
        .results
        .iter()
        .map(|r| {
            json!({
                "id": r.call.id,
                "tool": r.tool_id,
                "error": r.outcome.as_ref().err().map(|e| e.code().as_str().to_owned()),
            })
        })
        .collect();
    println!(
        "{}",
        json!({
            "assistant": assistant,
            "answers": done.answers(),
            "next_turn": done.next_turn(),
            "next_turn_text": next_turn_text,
            "outcomes": outcomes,
        })
    );
    Ok(())
}
