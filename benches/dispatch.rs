//! The model round trip's cost: one tool call dispatched from a provider's response to the
//! next turn's messages (`ToolRegistry::dispatch`, then `Dispatched::into_next_turn`: the
//! response read, the tool found by its provider name, the call run through the registry, the
//! answer written in the provider's shape and wrapped as the next turn) against the registry
//! call alone (`ToolRegistry::call` with the arguments already a `Value`, the input's copy
//! counted).
//!
//! The tool is the registry bench's search (`search.rs`: `SearchArgs {query, limit 1..=100, filters,
//! cursor}` in, ten hits out), validated both ways in every row. Rows, per provider: the
//! response a model sends for that one call (OpenAI Chat and Responses carry the arguments as a
//! JSON string, which dispatch parses; Anthropic and Gemini as an object).
//!
//! The figure the done-when asks for is the paired one printed last: each provider's dispatch
//! and the registry call measured in alternating bursts (about 20 ms each, 61 rounds, which one
//! goes first alternating), the ratio the median of the per-round ratios; criterion's rows run
//! seconds apart.
//!
//! A second set of paired rows measures the path of a host that sends its request body as text:
//! dispatch with `DispatchOptions::outputs_as_text`, then `Dispatched::next_turn_json` (the next
//! turn written as JSON text, escaping included). It is Gemini's row that changes: its
//! `functionResponse` takes an object, so by default its output is built as a value; as text it
//! is written once and spliced into the request.
//!
//! A last paired row sets OpenAI Chat's dispatch against the same call written by hand (the
//! arguments parsed from their text, the registry call, the output written as text).
//!
//! Run with `cargo bench -p agentio-benches --bench dispatch`.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Instant;

use agentio_tools::ToolRegistry;
use agentio_tools::dispatch::{DispatchOptions, Provider};
use criterion::Criterion;
use serde_json::{Value, json};

mod search;
use search::SearchTool;

/// The response each provider sends for one call of `kb_search` with `arguments`.
fn responses(arguments: &Value) -> Vec<(&'static str, Provider, Value)> {
    let text = arguments.to_string();
    vec![
        (
            "openai_chat",
            Provider::OpenAiChat,
            json!({ "id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [{
                "index": 0, "finish_reason": "tool_calls",
                "message": { "role": "assistant", "content": null, "tool_calls": [
                    { "id": "call_1", "type": "function", "function": { "name": "kb_search", "arguments": text } }
                ] } }] }),
        ),
        (
            "openai_responses",
            Provider::OpenAiResponses,
            json!({ "id": "r", "object": "response", "output": [
                { "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "kb_search", "arguments": text, "status": "completed" }
            ] }),
        ),
        (
            "anthropic",
            Provider::Anthropic,
            json!({ "id": "m", "type": "message", "role": "assistant", "content": [
                { "type": "tool_use", "id": "toolu_1", "name": "kb_search", "input": arguments }
            ] }),
        ),
        (
            "gemini",
            Provider::Gemini,
            json!({ "candidates": [{ "content": { "role": "model", "parts": [
                { "functionCall": { "id": "fc_1", "name": "kb_search", "args": arguments } }
            ] }, "finishReason": "STOP" }] }),
        ),
    ]
}

fn main() {
    let arguments = json!({ "query": "invoices", "limit": 10, "filters": ["billing"] });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let mut registry = ToolRegistry::new();
    registry.register(SearchTool).expect("a valid tool");
    let options = DispatchOptions::default();
    let responses = responses(&arguments);
    // Each response dispatches to a successful call.
    for (name, provider, response) in &responses {
        let done = runtime
            .block_on(registry.dispatch(*provider, response, &options))
            .expect("a response");
        assert!(
            done.results[0].outcome.is_ok(),
            "{name}: {:?}",
            done.results[0].outcome
        );
    }

    // `DISPATCH_SIZES=1` prints the sizes of a call's and a dispatch's futures.
    if std::env::var("DISPATCH_SIZES").is_ok() {
        let (_, provider, response) = &responses[0];
        println!(
            "future sizes: call {} bytes, dispatch {} bytes",
            std::mem::size_of_val(&registry.call("kb.search", arguments.clone())),
            std::mem::size_of_val(&registry.dispatch(*provider, response, &options)),
        );
        return;
    }
    let as_text = DispatchOptions {
        outputs_as_text: true,
        ..DispatchOptions::default()
    };
    // `DISPATCH_PROFILE=call|openai_chat|openai_responses|anthropic|gemini` runs that row alone,
    // 20,000 times, for callgrind or perf (`…_text`: the text path).
    if let Ok(row) = std::env::var("DISPATCH_PROFILE") {
        let text_row = row.strip_suffix("_text");
        let response = responses
            .iter()
            .find(|(name, _, _)| *name == text_row.unwrap_or(&row));
        for _ in 0..20_000 {
            match response {
                Some((_, provider, response)) if text_row.is_some() => {
                    black_box(
                        runtime
                            .block_on(registry.dispatch(*provider, black_box(response), &as_text))
                            .expect("ok")
                            .next_turn_json(),
                    );
                }
                Some((_, provider, response)) => {
                    black_box(
                        runtime
                            .block_on(registry.dispatch(*provider, black_box(response), &options))
                            .expect("ok")
                            .into_next_turn(),
                    );
                }
                None => {
                    black_box(
                        runtime
                            .block_on(registry.call("kb.search", black_box(arguments.clone())))
                            .expect("ok"),
                    );
                }
            }
        }
        return;
    }

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group("dispatch");
    group.bench_function("registry_call", |b| {
        b.iter(|| {
            runtime
                .block_on(registry.call("kb.search", black_box(arguments.clone())))
                .expect("ok")
        })
    });
    for (name, provider, response) in &responses {
        group.bench_function(*name, |b| {
            b.iter(|| {
                runtime
                    .block_on(registry.dispatch(*provider, black_box(response), &options))
                    .expect("ok")
                    .into_next_turn()
            })
        });
    }
    group.finish();
    criterion.final_summary();

    // `DISPATCH_PAIRED=0` leaves the paired rows out (to profile one criterion row alone).
    if std::env::var("DISPATCH_PAIRED").is_ok_and(|v| v == "0") {
        return;
    }
    // Seconds a call of `one`, over `calls` calls.
    let per_call = |calls: u32, one: &dyn Fn()| {
        let started = Instant::now();
        for _ in 0..calls {
            one();
        }
        started.elapsed().as_secs_f64() / f64::from(calls)
    };
    let dispatch = |provider: Provider, response: &Value| {
        black_box(
            runtime
                .block_on(registry.dispatch(provider, response, &options))
                .expect("ok")
                .into_next_turn(),
        );
    };
    let dispatch_text = |provider: Provider, response: &Value| {
        black_box(
            runtime
                .block_on(registry.dispatch(provider, response, &as_text))
                .expect("ok")
                .next_turn_json(),
        );
    };
    let paths: [(&str, &Dispatch<'_>); 2] = [("", &dispatch), (" (as text)", &dispatch_text)];
    for (path, dispatch) in paths {
        for (name, provider, response) in &responses {
            paired(
                &format!("{name}{path}"),
                "registry_call",
                |calls| per_call(calls, &|| dispatch(*provider, response)),
                |calls| {
                    per_call(calls, &|| {
                        black_box(
                            runtime
                                .block_on(registry.call("kb.search", arguments.clone()))
                                .expect("ok"),
                        );
                    })
                },
            );
        }
    }

    // The same call written by hand, the least a loop must do for OpenAI Chat: the arguments
    // parsed from their JSON text, the registry call, the output written as the tool
    // message's text. What dispatch adds over this is reading the response, finding the tool
    // by its provider name, the answer's shape and the echoed assistant turn.
    let (_, provider, response) = &responses[0];
    let text = arguments.to_string();
    paired(
        "openai_chat",
        "by_hand",
        |calls| per_call(calls, &|| dispatch(*provider, response)),
        |calls| {
            per_call(calls, &|| {
                let arguments: Value = serde_json::from_str(black_box(&text)).expect("JSON");
                let output = runtime
                    .block_on(registry.call("kb.search", arguments))
                    .expect("ok");
                black_box(serde_json::to_string(&output).expect("text"));
            })
        },
    );
}

/// One path from a response to its next turn.
type Dispatch<'a> = dyn Fn(Provider, &Value) + 'a;

/// `ours` and `theirs` in alternating bursts of about 20 ms, 61 rounds; prints the median of
/// the per-round ratios and its quartiles.
fn paired(name: &str, against: &str, ours: impl Fn(u32) -> f64, theirs: impl Fn(u32) -> f64) {
    let per_call = theirs(200);
    let calls = ((0.02 / per_call) as u32).clamp(50, 20_000);
    let mut ratios = Vec::new();
    for round in 0..61 {
        let (a, b) = if round % 2 == 0 {
            let a = ours(calls);
            (a, theirs(calls))
        } else {
            let b = theirs(calls);
            (ours(calls), b)
        };
        ratios.push(a / b);
    }
    ratios.sort_by(f64::total_cmp);
    let median = ratios[ratios.len() / 2];
    let (q1, q3) = (ratios[ratios.len() / 4], ratios[3 * ratios.len() / 4]);
    println!(
        "paired, interleaved bursts of {calls} calls, 61 rounds: dispatch {name} / {against} median {median:.3} (quartiles {q1:.3}–{q3:.3})"
    );
}
