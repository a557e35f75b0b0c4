//! The model round trip (`agentio_tools::dispatch`): a provider's tool calls in, validated
//! results out, for OpenAI Chat and Responses, Anthropic and Gemini; streamed calls; hostile
//! responses. (The providers' own SDKs judge the same shapes in `.ci/run`:
//! `tests/python/test_provider_round_trip.py`.)

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agentio_core::{AgentInput, AgentOutput};
use agentio_tests::provider_fixture::registry;
use agentio_tools::dispatch::{
    DispatchOptions, Dispatched, MAX_STREAM_BYTES, ModelTurn, Output, Provider, StreamedTurn,
};
use agentio_tools::{ToolError, ToolRegistry, tool};
use serde_json::{Value, json};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn dispatch(provider: Provider, response: &Value) -> Dispatched {
    dispatch_with(provider, response, &DispatchOptions::default())
}

fn dispatch_with(provider: Provider, response: &Value, options: &DispatchOptions) -> Dispatched {
    let (response, options) = (response.clone(), options.clone());
    finishing(move || {
        runtime()
            .block_on(registry().dispatch(provider, &response, &options))
            .unwrap()
    })
}

/// The fixture registry's answer to a turn read elsewhere (a stream's).
fn answer(turn: ModelTurn, options: &DispatchOptions) -> Dispatched {
    let options = options.clone();
    finishing(move || runtime().block_on(registry().answer(turn, &options)))
}

/// Runs a dispatch on a thread of its own and fails the test if it has not finished in 10 s
/// (these take well under a second): a dispatch loop that stops polling its calls, or spins
/// without end, fails here naming itself instead of hanging the suite.
fn finishing<T: Send + 'static>(dispatch: impl FnOnce() -> T + Send + 'static) -> T {
    let (done, finished) = std::sync::mpsc::channel();
    let thread = std::thread::spawn(move || {
        let _ = done.send(dispatch());
    });
    match finished.recv_timeout(Duration::from_secs(10)) {
        Ok(value) => value,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!(
                "the dispatch did not finish in 10 s: its calls were left unpolled or it never ends"
            )
        }
        // The thread panicked (an `unwrap` of the dispatch's result): fail with its panic.
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => match thread.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the thread sends before it ends"),
        },
    }
}

fn codes(done: &Dispatched) -> Vec<Option<String>> {
    done.results
        .iter()
        .map(|r| {
            r.outcome
                .as_ref()
                .err()
                .map(|e| e.code().as_str().to_owned())
        })
        .collect()
}

fn error_in(text: &Value) -> Value {
    serde_json::from_str::<Value>(text.as_str().unwrap()).unwrap()["error"].clone()
}

fn chat_call(id: &str, name: &str, arguments: &str) -> Value {
    json!({ "id": id, "type": "function", "function": { "name": name, "arguments": arguments } })
}

fn chat_completion(calls: Vec<Value>) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{ "index": 0, "finish_reason": "tool_calls",
                      "message": { "role": "assistant", "content": null, "tool_calls": calls } }]
    })
}

#[test]
fn openai_chat_calls_are_answered_in_order_each_paired_by_its_id() {
    let response = chat_completion(vec![
        chat_call("call_a", "weather_forecast", r#"{"city":"Oslo"}"#),
        chat_call("call_b", "math_add", r#"{"a":2,"b":"three"}"#),
        chat_call("call_c", "math_lookup", "{}"),
        chat_call("call_d", "notes_delete", r#"{"id":"n1"}"#),
        chat_call("call_e", "slow_wait", ""),
        chat_call("call_f", "math_add", r#"{"a":2"#),
        chat_call("call_g", "math_add", "[1,2]"),
    ]);
    let done = dispatch(Provider::OpenAiChat, &response);
    let ids: Vec<&str> = done.results.iter().map(|r| r.call.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "call_a", "call_b", "call_c", "call_d", "call_e", "call_f", "call_g"
        ]
    );
    assert_eq!(
        codes(&done),
        [
            None,
            Some("input_invalid".into()),
            Some("not_found".into()),
            Some("approval_denied".into()),
            Some("timeout".into()),
            Some("input_invalid".into()),
            Some("input_invalid".into()),
        ]
    );
    let answers = done.answers();
    assert_eq!(
        answers[0],
        json!({ "role": "tool", "tool_call_id": "call_a", "content": r#"{"summary":"sunny in Oslo"}"# })
    );
    // The model reads where it went wrong.
    let invalid = error_in(&answers[1]["content"]);
    assert_eq!(invalid["cause"]["violations"][0]["pointer"], "/b");
    let unknown = error_in(&answers[2]["content"]);
    assert!(
        unknown["message"]
            .as_str()
            .unwrap()
            .contains("no tool named `math_lookup`; the tools (OpenAI Chat Completions) are:"),
        "{unknown}"
    );
    assert!(unknown["message"].as_str().unwrap().contains("math_add"));
    assert!(
        error_in(&answers[5]["content"])["message"]
            .as_str()
            .unwrap()
            .contains("not JSON")
    );
    assert!(
        error_in(&answers[6]["content"])["message"]
            .as_str()
            .unwrap()
            .contains("must be a JSON object, not an array")
    );
    assert_eq!(error_in(&answers[4]["content"])["code"], "timeout");
    // The tool ids found, and none for the unknown name.
    assert_eq!(done.results[0].tool_id.as_deref(), Some("weather.forecast"));
    assert_eq!(done.results[2].tool_id, None);
    // OpenAI's next turn is the tool messages themselves.
    assert_eq!(done.next_turn(), answers);
}

#[test]
fn the_model_turn_goes_back_as_it_came_but_for_nulls() {
    let options = DispatchOptions::default();
    let response = chat_completion(vec![chat_call("call_a", "math_add", r#"{"a":1,"b":2}"#)]);
    let turn = ModelTurn::read(Provider::OpenAiChat, &response, &options).unwrap();
    assert_eq!(
        turn.assistant,
        [
            json!({ "role": "assistant", "tool_calls": [chat_call("call_a", "math_add", r#"{"a":1,"b":2}"#)] })
        ]
    );
    // The message alone reads the same.
    let message = response["choices"][0]["message"].clone();
    assert_eq!(
        ModelTurn::read(Provider::OpenAiChat, &message, &options).unwrap(),
        turn
    );

    // Gemini: the thought signatures stay on their parts, in snake_case or camelCase.
    let response = json!({ "candidates": [{ "content": { "role": "model", "parts": [
        { "text": "hmm", "thought": true, "thoughtSignature": "dA==" },
        { "functionCall": { "id": "fc_1", "name": "math_add", "args": { "a": 1, "b": 2 } }, "thought_signature": "cw==" },
        { "function_call": { "name": "weather_forecast", "args": { "city": "Oslo" } } }
    ] }, "finishReason": "STOP" }] });
    let turn = ModelTurn::read(Provider::Gemini, &response, &options).unwrap();
    assert_eq!(turn.assistant[0], response["candidates"][0]["content"]);
    assert_eq!(turn.calls[0].id, "fc_1");
    assert_eq!(turn.calls[1].id, "");
    assert_eq!(turn.calls[1].arguments, Ok(json!({ "city": "Oslo" })));
}

#[test]
fn responses_anthropic_and_gemini_answers_take_each_providers_shape() {
    let responses = json!({ "output": [
        { "type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e" },
        { "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "math_add", "arguments": "{\"a\":1,\"b\":2}", "status": "completed" },
        { "type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "chart_draw", "arguments": "{}" }
    ] });
    let done = dispatch(Provider::OpenAiResponses, &responses);
    let answers = done.answers();
    assert_eq!(
        answers[0],
        json!({ "type": "function_call_output", "call_id": "call_1", "output": r#"{"sum":3}"# })
    );
    assert_eq!(
        answers[1]["output"],
        json!([
            { "type": "input_text", "text": "the chart:" },
            { "type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=" }
        ])
    );

    let anthropic = json!({ "role": "assistant", "content": [
        { "type": "tool_use", "id": "toolu_1", "name": "chart_report", "input": {} },
        { "type": "tool_use", "id": "toolu_2", "name": "math_add", "input": { "a": "x", "b": 1 } }
    ] });
    let done = dispatch(Provider::Anthropic, &anthropic);
    let next = done.next_turn();
    assert_eq!(next.len(), 1);
    assert_eq!(next[0]["role"], "user");
    let blocks = &next[0]["content"];
    assert_eq!(blocks[0]["is_error"], false);
    assert_eq!(
        blocks[0]["content"][0],
        json!({ "type": "text", "text": r#"{"summary":"see the chart"}"# })
    );
    assert_eq!(blocks[0]["content"][1]["type"], "image");
    assert_eq!(blocks[1]["is_error"], true);
    assert_eq!(blocks[1]["tool_use_id"], "toolu_2");

    let gemini = json!({ "candidates": [{ "content": { "role": "model", "parts": [
        { "functionCall": { "id": "fc_1", "name": "math_add", "args": { "a": 1, "b": 2 } } },
        { "functionCall": { "name": "notes_delete", "args": { "id": "n" } } }
    ] } }] });
    let done = dispatch(Provider::Gemini, &gemini);
    let next = done.next_turn();
    assert_eq!(
        next,
        [json!({ "role": "user", "parts": [
            { "functionResponse": { "id": "fc_1", "name": "math_add", "response": { "output": { "sum": 3 } } } },
            { "functionResponse": { "name": "notes_delete", "response": { "error": {
                "code": "approval_denied",
                "message": done.results[1].outcome.as_ref().unwrap_err().message(),
                "retryable": false
            } } } }
        ] })]
    );

    // OpenAI Chat takes no image in a tool message: the call ran, its answer says so.
    let done = dispatch(
        Provider::OpenAiChat,
        &chat_completion(vec![chat_call("call_c", "chart_draw", "{}")]),
    );
    let error = error_in(&done.answers()[0]["content"]);
    assert_eq!(error["code"], "output_invalid");
    let message = error["message"].as_str().unwrap();
    assert!(message.starts_with("`chart_draw` ran, but its result cannot be given to OpenAI Chat Completions: content /1"), "{message}");
}

#[test]
fn the_part_of_a_response_that_holds_the_calls_reads_as_the_whole() {
    let options = DispatchOptions::default();
    let items = json!([
        { "type": "function_call", "call_id": "c1", "name": "math_add", "arguments": "{\"a\":1,\"b\":2}" }
    ]);
    let whole = ModelTurn::read(
        Provider::OpenAiResponses,
        &json!({ "output": items }),
        &options,
    )
    .unwrap();
    let part = ModelTurn::read(Provider::OpenAiResponses, &items, &options).unwrap();
    assert_eq!(part, whole);
    assert_eq!(part.calls[0].id, "c1");
    let blocks = json!([{ "type": "tool_use", "id": "t1", "name": "math_add", "input": { "a": 1, "b": 2 } }]);
    let whole = ModelTurn::read(
        Provider::Anthropic,
        &json!({ "role": "assistant", "content": blocks }),
        &options,
    )
    .unwrap();
    let part = ModelTurn::read(Provider::Anthropic, &blocks, &options).unwrap();
    assert_eq!(part, whole);
    assert_eq!(part.calls[0].arguments, Ok(json!({ "a": 1, "b": 2 })));
}

#[test]
fn a_turn_without_calls_has_no_next_turn() {
    let done = dispatch(
        Provider::Anthropic,
        &json!({ "content": [{ "type": "text", "text": "Done." }] }),
    );
    assert!(done.results.is_empty());
    assert!(done.next_turn().is_empty());
    assert_eq!(done.next_turn_json(), "[]");
}

#[test]
fn a_response_that_is_not_the_providers_shape_is_an_error_naming_where() {
    let options = DispatchOptions::default();
    let cases = [
        (
            Provider::OpenAiChat,
            json!({ "choices": [] }),
            "/",
            "`choices` is empty",
        ),
        (
            Provider::OpenAiChat,
            json!({ "choices": [{}] }),
            "/choices/0",
            "`message` is missing",
        ),
        (
            Provider::OpenAiChat,
            json!({ "tool_calls": [{ "id": 7, "function": { "name": "x" } }] }),
            "/tool_calls/0/id",
            "expected a string",
        ),
        (
            Provider::OpenAiChat,
            json!({ "tool_calls": [{ "id": "a", "type": "weird" }] }),
            "/tool_calls/0",
            "type `weird`",
        ),
        (
            Provider::OpenAiChat,
            json!("text"),
            "/",
            "expected a chat completion",
        ),
        (
            Provider::OpenAiResponses,
            json!({ "output": [{ "type": "function_call", "name": "x" }] }),
            "/output/0",
            "`call_id` is missing",
        ),
        (
            Provider::OpenAiResponses,
            json!({ "id": "r" }),
            "/",
            "expected a response",
        ),
        (
            Provider::Anthropic,
            json!({ "content": [{ "type": "tool_use", "id": "t", "name": 3 }] }),
            "/content/0/name",
            "expected a string",
        ),
        (
            Provider::Anthropic,
            json!({ "content": {} }),
            "/content",
            "expected an array",
        ),
        (
            Provider::Anthropic,
            json!(7),
            "/",
            "expected a message with `content`",
        ),
        (
            Provider::OpenAiResponses,
            json!(7),
            "/",
            "expected a response with `output`",
        ),
        (
            Provider::Gemini,
            json!({ "candidates": [] }),
            "/",
            "`candidates` is empty",
        ),
        (
            Provider::Gemini,
            json!({ "text": "hi" }),
            "/",
            "expected a response with `candidates`",
        ),
        (
            Provider::Gemini,
            json!({ "parts": [{ "functionCall": { "args": {} } }] }),
            "/parts/0/functionCall",
            "`name` is missing",
        ),
        // The deepest walk, and a member name the pointer escapes (`function_call` is read
        // under its own spelling).
        (
            Provider::Gemini,
            json!({ "candidates": [{ "content": { "parts": [{ "text": "a" }, { "function_call": { "name": 3 } }] } }] }),
            "/candidates/0/content/parts/1/function_call/name",
            "expected a string",
        ),
        (
            Provider::OpenAiChat,
            json!({ "choices": [{ "message": { "tool_calls": [{ "id": "a", "function": { "name": "x", "arguments": 1 } }] } }] }),
            "/choices/0/message/tool_calls/0/function/arguments",
            "expected a string",
        ),
        (
            Provider::Gemini,
            json!({ "candidates": [{ "content": { "parts": "x" } }] }),
            "/candidates/0/content/parts",
            "expected an array",
        ),
    ];
    for (provider, response, pointer, reason) in cases {
        let error = ModelTurn::read(provider, &response, &options).unwrap_err();
        assert_eq!(error.pointer, pointer, "{response}: {error}");
        assert!(error.reason.contains(reason), "{response}: {error}");
        assert!(
            error
                .to_string()
                .starts_with(&format!("not a {} response", provider.name()))
        );
    }
}

/// A tool that counts how many of its calls run at once.
static RUNNING: AtomicUsize = AtomicUsize::new(0);
static MOST: AtomicUsize = AtomicUsize::new(0);

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput, AgentOutput)]
struct Tick {
    n: u32,
}

/// Takes a little while.
#[tool(id = "test.tick")]
async fn tick(t: Tick) -> Result<Tick, ToolError> {
    let now = RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
    MOST.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(30)).await;
    RUNNING.fetch_sub(1, Ordering::SeqCst);
    Ok(t)
}

#[test]
fn calls_run_concurrently_within_the_bound_and_past_max_calls_are_answered_unrun() {
    let mut registry = ToolRegistry::new();
    registry.register(TickTool).unwrap();
    let calls: Vec<Value> = (0..10)
        .map(|n| json!({ "type": "tool_use", "id": format!("t{n}"), "name": "test_tick", "input": { "n": n } }))
        .collect();
    let options = DispatchOptions {
        max_concurrency: 3,
        max_calls: 8,
        ..DispatchOptions::default()
    };
    let done = finishing(move || {
        runtime()
            .block_on(registry.dispatch(
                Provider::Anthropic,
                &json!({ "content": calls }),
                &options,
            ))
            .unwrap()
    });
    assert_eq!(MOST.load(Ordering::SeqCst), 3, "three at once, never more");
    let outputs: Vec<Value> = done
        .results
        .iter()
        .take(8)
        .map(|r| r.outcome.as_ref().unwrap().to_value().unwrap()["n"].clone())
        .collect();
    assert_eq!(outputs, (0..8).map(|n| json!(n)).collect::<Vec<_>>());
    for (n, result) in done.results.iter().enumerate().skip(8) {
        let error = result.outcome.as_ref().unwrap_err();
        assert_eq!(error.code().as_str(), "rate_limited");
        assert!(error.is_retryable());
        assert!(
            error
                .message()
                .contains(&format!("at most 8 tool calls; this one (call {})", n + 1)),
            "{error}"
        );
        assert_eq!(result.answer()["tool_use_id"], format!("t{n}"));
    }
}

#[test]
fn arguments_over_the_bounds_are_answered_not_run() {
    let options = DispatchOptions {
        max_argument_bytes: 64,
        max_argument_depth: 4,
        ..DispatchOptions::default()
    };
    let at_limit = format!(r#"{{"city":"{}"}}"#, "x".repeat(64 - 11));
    assert_eq!(at_limit.len(), 64);
    let over = format!(r#"{{"city":"{}"}}"#, "x".repeat(64 - 10));
    // Four levels of objects are taken, five refused.
    let deep = json!({ "city": { "a": { "b": { "c": { "d": 1 } } } } }).to_string();
    let deep_enough = json!({ "city": { "a": { "b": { "c": 1 } } } }).to_string();
    let response = chat_completion(vec![
        chat_call("ok", "weather_forecast", &at_limit),
        chat_call("long", "weather_forecast", &over),
        chat_call("deep", "weather_forecast", &deep),
        chat_call("deep-enough", "weather_forecast", &deep_enough),
    ]);
    let turn = ModelTurn::read(Provider::OpenAiChat, &response, &options).unwrap();
    assert!(turn.calls[0].arguments.is_ok());
    assert_eq!(
        turn.calls[1].arguments,
        Err("the arguments are 65 bytes, over the limit of 64".into())
    );
    assert!(
        turn.calls[2]
            .arguments
            .as_ref()
            .unwrap_err()
            .contains("nest deeper than 4 levels"),
        "{:?}",
        turn.calls[2].arguments
    );
    assert!(
        turn.calls[3].arguments.is_ok(),
        "{:?}",
        turn.calls[3].arguments
    );
    let done = answer(turn, &options);
    assert_eq!(
        codes(&done)[1..3],
        [Some("input_invalid".into()), Some("input_invalid".into())]
    );
}

#[test]
fn a_streamed_openai_call_split_into_one_character_deltas_is_whole() {
    let arguments = r#"{"city": "Bergen"}"#;
    let mut stream = StreamedTurn::new(Provider::OpenAiChat);
    let chunk = |delta: Value, finish: Value| json!({ "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }] });
    stream
        .push(&chunk(
            json!({ "role": "assistant", "content": "On " }),
            Value::Null,
        ))
        .unwrap();
    stream
        .push(&chunk(json!({ "content": "it." }), Value::Null))
        .unwrap();
    stream
        .push(&chunk(
            json!({ "tool_calls": [{ "index": 0, "id": "call_1", "type": "function", "function": { "name": "weather_", "arguments": "" } }] }),
            Value::Null,
        ))
        .unwrap();
    stream
        .push(&chunk(
            json!({ "tool_calls": [{ "index": 0, "function": { "name": "forecast" } }] }),
            Value::Null,
        ))
        .unwrap();
    for c in arguments.chars() {
        let piece =
            json!({ "tool_calls": [{ "index": 0, "function": { "arguments": c.to_string() } }] });
        stream.push(&chunk(piece, Value::Null)).unwrap();
    }
    // Another choice's deltas are not this turn's.
    stream
        .push(&json!({ "choices": [{ "index": 1, "delta": { "tool_calls": [{ "index": 0, "id": "other" }] } }] }))
        .unwrap();
    stream.push(&chunk(json!({}), json!("tool_calls"))).unwrap();
    // A usage chunk at the end has no choices.
    stream.push(&json!({ "choices": [], "usage": {} })).unwrap();
    let turn = stream.finish(&DispatchOptions::default()).unwrap();
    assert_eq!(turn.calls.len(), 1);
    assert_eq!(turn.calls[0].id, "call_1");
    assert_eq!(turn.calls[0].name, "weather_forecast");
    assert_eq!(turn.calls[0].arguments, Ok(json!({ "city": "Bergen" })));
    assert_eq!(
        turn.assistant[0],
        json!({ "role": "assistant", "content": "On it.", "tool_calls": [chat_call("call_1", "weather_forecast", arguments)] })
    );
    let done = answer(turn, &DispatchOptions::default());
    assert_eq!(
        done.answers()[0]["content"],
        r#"{"summary":"sunny in Bergen"}"#
    );
}

#[test]
fn a_stream_cut_short_refuses_its_calls_instead_of_running_half_of_them() {
    // OpenAI: complete-looking arguments, but the model never finished.
    let mut stream = StreamedTurn::new(Provider::OpenAiChat);
    stream
        .push(&json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [{ "index": 0, "id": "c", "function": { "name": "notes_delete", "arguments": "{\"id\":\"n1\"}" } }] } }] }))
        .unwrap();
    let turn = stream.finish(&DispatchOptions::default()).unwrap();
    let refused = turn.calls[0].arguments.as_ref().unwrap_err();
    assert!(
        refused.contains("the stream ended before the model finished its turn"),
        "{refused}"
    );

    // Anthropic: a block that never stopped, and one whose JSON never closed.
    let mut stream = StreamedTurn::new(Provider::Anthropic);
    for event in [
        json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "tool_use", "id": "a", "name": "math_add", "input": {} } }),
        json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "input_json_delta", "partial_json": "{\"a\": 1, \"b\": 2}" } }),
        json!({ "type": "content_block_start", "index": 1, "content_block": { "type": "tool_use", "id": "b", "name": "math_add", "input": {} } }),
        json!({ "type": "content_block_delta", "index": 1, "delta": { "type": "input_json_delta", "partial_json": "{\"a\": 1, " } }),
        json!({ "type": "content_block_stop", "index": 1 }),
        json!({ "type": "message_stop" }),
    ] {
        stream.push(&event).unwrap();
    }
    let turn = stream.finish(&DispatchOptions::default()).unwrap();
    assert!(
        turn.calls[0]
            .arguments
            .as_ref()
            .unwrap_err()
            .contains("the block never stopped")
    );
    assert!(
        turn.calls[1]
            .arguments
            .as_ref()
            .unwrap_err()
            .contains("not complete JSON")
    );
    // Echoed with an empty input (its tool_result must still pair with it).
    assert_eq!(turn.assistant[0]["content"][1]["input"], json!({}));
    let done = answer(turn, &DispatchOptions::default());
    assert_eq!(
        codes(&done),
        [Some("input_invalid".into()), Some("input_invalid".into())]
    );

    // Responses: an item whose arguments streamed but never finished.
    let mut stream = StreamedTurn::new(Provider::OpenAiResponses);
    for event in [
        json!({ "type": "response.output_item.added", "output_index": 0, "item": { "type": "function_call", "id": "fc", "call_id": "c", "name": "math_add", "arguments": "" } }),
        json!({ "type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{\"a\":1,\"b\":2}" }),
        json!({ "type": "response.completed", "response": {} }),
    ] {
        stream.push(&event).unwrap();
    }
    let turn = stream.finish(&DispatchOptions::default()).unwrap();
    assert!(
        turn.calls[0]
            .arguments
            .as_ref()
            .unwrap_err()
            .contains("never completed")
    );

    // Gemini: no finish reason.
    let mut stream = StreamedTurn::new(Provider::Gemini);
    stream
        .push(&json!({ "candidates": [{ "content": { "role": "model", "parts": [{ "functionCall": { "name": "math_add", "args": { "a": 1, "b": 2 } } }] } }] }))
        .unwrap();
    let turn = stream.finish(&DispatchOptions::default()).unwrap();
    assert!(turn.calls[0].arguments.is_err());
}

#[test]
fn streamed_anthropic_and_gemini_turns_keep_text_thinking_and_signatures() {
    let mut stream = StreamedTurn::new(Provider::Anthropic);
    for event in [
        json!({ "type": "message_start", "message": { "role": "assistant", "content": [] } }),
        json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "thinking", "thinking": "", "signature": "" } }),
        json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "thinking_delta", "thinking": "Add " } }),
        json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "thinking_delta", "thinking": "them." } }),
        json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "signature_delta", "signature": "c2ln" } }),
        json!({ "type": "content_block_stop", "index": 0 }),
        json!({ "type": "content_block_start", "index": 1, "content_block": { "type": "tool_use", "id": "t", "name": "math_add", "input": {} } }),
        json!({ "type": "content_block_delta", "index": 1, "delta": { "type": "input_json_delta", "partial_json": "{\"a\": 40," } }),
        json!({ "type": "content_block_delta", "index": 1, "delta": { "type": "input_json_delta", "partial_json": " \"b\": 2}" } }),
        json!({ "type": "content_block_stop", "index": 1 }),
        json!({ "type": "ping" }),
        json!({ "type": "message_stop" }),
    ] {
        stream.push(&event).unwrap();
    }
    let turn = stream.finish(&DispatchOptions::default()).unwrap();
    assert_eq!(
        turn.assistant[0]["content"],
        json!([
            { "type": "thinking", "thinking": "Add them.", "signature": "c2ln" },
            { "type": "tool_use", "id": "t", "name": "math_add", "input": { "a": 40, "b": 2 } }
        ])
    );

    let mut stream = StreamedTurn::new(Provider::Gemini);
    for chunk in [
        json!({ "candidates": [{ "content": { "role": "model", "parts": [{ "text": "Adding" }] } }] }),
        json!({ "usageMetadata": { "totalTokenCount": 3 } }),
        json!({ "candidates": [{ "content": { "role": "model", "parts": [
            { "functionCall": { "id": "f", "name": "math_add", "args": { "a": 1, "b": 2 } }, "thoughtSignature": "cw==" }
        ] }, "finishReason": "STOP" }] }),
    ] {
        stream.push(&chunk).unwrap();
    }
    let turn = stream.finish(&DispatchOptions::default()).unwrap();
    assert_eq!(turn.assistant[0]["parts"][1]["thoughtSignature"], "cw==");
    assert_eq!(turn.calls[0].arguments, Ok(json!({ "a": 1, "b": 2 })));
}

#[test]
fn a_hostile_stream_is_refused_naming_the_event() {
    // An error event.
    let mut stream = StreamedTurn::new(Provider::Anthropic);
    let error = stream
        .push(&json!({ "type": "error", "error": { "type": "overloaded_error", "message": "Overloaded" } }))
        .unwrap_err();
    assert_eq!(
        error.reason,
        "event 1: the stream reported an error: Overloaded"
    );
    // A delta for a block that never started, and an index that is not one.
    let mut stream = StreamedTurn::new(Provider::Anthropic);
    let error = stream
        .push(&json!({ "type": "content_block_delta", "index": 5, "delta": { "type": "text_delta", "text": "x" } }))
        .unwrap_err();
    assert!(
        error
            .reason
            .contains("a delta for a block that never started"),
        "{error}"
    );
    let mut stream = StreamedTurn::new(Provider::OpenAiChat);
    let error = stream
        .push(&json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [{ "index": -1, "id": "x" }] } }] }))
        .unwrap_err();
    assert_eq!(error.pointer, "/choices/0/delta/tool_calls/0/index");
    // More text than the bound.
    let mut stream = StreamedTurn::new(Provider::OpenAiChat);
    let piece = "x".repeat(1 << 20);
    let mut refused = None;
    for n in 0..20 {
        let chunk = json!({ "choices": [{ "index": 0, "delta": { "content": piece } }] });
        if let Err(error) = stream.push(&chunk) {
            refused = Some((n, error));
            break;
        }
    }
    let (n, error) = refused.expect("refused past the bound");
    assert_eq!(
        n,
        MAX_STREAM_BYTES >> 20,
        "refused at the first chunk past 16 MiB"
    );
    assert!(error.reason.contains("passes 16777216 bytes"), "{error}");
    // A call that never got an id cannot be answered: the turn is refused.
    let mut stream = StreamedTurn::new(Provider::OpenAiChat);
    stream
        .push(&json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [{ "index": 0, "function": { "name": "math_add" } }] }, "finish_reason": "tool_calls" }] }))
        .unwrap();
    let error = stream.finish(&DispatchOptions::default()).unwrap_err();
    assert_eq!(error.pointer, "/tool_calls/0");
    assert!(error.reason.contains("never got an id"));
}

#[test]
fn a_thousand_calls_are_bounded_answered_and_none_is_lost() {
    let content: Vec<Value> = (0..1000)
        .map(|n| json!({ "type": "tool_use", "id": format!("toolu_{n}"), "name": "math_add", "input": { "a": n, "b": 1 } }))
        .collect();
    let done = dispatch(Provider::Anthropic, &json!({ "content": content }));
    assert_eq!(done.results.len(), 1000);
    let next = done.next_turn();
    let answers = next[0]["content"].as_array().unwrap();
    assert_eq!(answers.len(), 1000);
    for (n, answer) in answers.iter().enumerate() {
        assert_eq!(answer["tool_use_id"], format!("toolu_{n}"));
        if n < 128 {
            assert_eq!(
                answer["content"][0]["text"],
                format!(r#"{{"sum":{}}}"#, n + 1)
            );
        } else {
            assert_eq!(answer["is_error"], true);
            assert_eq!(error_in(&answer["content"])["code"], "rate_limited");
        }
    }
    // A call's arguments nested past serde_json's own limit are not JSON to it: answered.
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let done = dispatch(
        Provider::OpenAiChat,
        &chat_completion(vec![chat_call("d", "math_add", &deep)]),
    );
    assert_eq!(codes(&done), [Some("input_invalid".into())]);
    // Huge argument text is refused before it is parsed.
    let huge = format!(r#"{{"a":1,"b":1,"pad":"{}"}}"#, "x".repeat(2 << 20));
    let done = dispatch(
        Provider::OpenAiChat,
        &chat_completion(vec![chat_call("h", "math_add", &huge)]),
    );
    let error = error_in(&done.answers()[0]["content"]);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("over the limit of 1048576"),
        "{error}"
    );
}

/// Naps (counted by no one: the tick tool's counters belong to the concurrency test).
#[tool(id = "test.nap")]
async fn nap(t: Tick) -> Result<Tick, ToolError> {
    tokio::time::sleep(Duration::from_millis(10)).await;
    Ok(t)
}

#[test]
fn waiting_calls_yield_to_the_runtime_on_a_single_thread() {
    // On a current-thread runtime the calls' timers fire only when the dispatch yields: a
    // dispatch that polled its calls in a loop instead would never finish here.
    let mut registry = ToolRegistry::new();
    registry.register(NapTool).unwrap();
    let calls: Vec<Value> = (0..4)
        .map(|n| json!({ "type": "tool_use", "id": format!("t{n}"), "name": "test_nap", "input": { "n": n } }))
        .collect();
    let options = DispatchOptions {
        max_concurrency: 2,
        ..DispatchOptions::default()
    };
    let done = finishing(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        runtime
            .block_on(registry.dispatch(
                Provider::Anthropic,
                &json!({ "content": calls }),
                &options,
            ))
            .unwrap()
    });
    assert_eq!(codes(&done), [None, None, None, None]);
}

#[test]
fn a_stream_opens_at_most_max_stream_entries_and_goes_on_with_those_it_has() {
    use agentio_tools::dispatch::MAX_STREAM_ENTRIES;
    let mut stream = StreamedTurn::new(Provider::Anthropic);
    for index in 0..MAX_STREAM_ENTRIES {
        stream
            .push(&json!({ "type": "content_block_start", "index": index, "content_block": { "type": "text", "text": "" } }))
            .unwrap();
    }
    // A block already open still takes its deltas at the bound ...
    stream
        .push(&json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": "hi" } }))
        .unwrap();
    // ... and one more block is refused.
    let error = stream
        .push(&json!({ "type": "content_block_start", "index": MAX_STREAM_ENTRIES, "content_block": { "type": "text", "text": "" } }))
        .unwrap_err();
    assert!(
        error.reason.contains("opens more than 4096 entries"),
        "{error}"
    );
}

#[test]
fn an_unknown_name_is_shown_clipped() {
    let long = "x".repeat(70);
    let done = dispatch(
        Provider::OpenAiChat,
        &chat_completion(vec![
            chat_call("a", &long, "{}"),
            chat_call("b", &"y".repeat(64), "{}"),
        ]),
    );
    let answers = done.answers();
    let clipped = error_in(&answers[0]["content"]);
    assert!(
        clipped["message"]
            .as_str()
            .unwrap()
            .contains(&format!("named `{}…`", "x".repeat(64))),
        "{clipped}"
    );
    let whole = error_in(&answers[1]["content"]);
    assert!(
        whole["message"]
            .as_str()
            .unwrap()
            .contains(&format!("named `{}`", "y".repeat(64))),
        "{whole}"
    );
}

#[test]
fn a_responses_stream_is_whole_after_its_events_and_a_failed_one_is_refused() {
    let arguments = r#"{"a":40,"b":2}"#;
    let item = json!({ "type": "function_call", "id": "fc", "call_id": "c", "name": "math_add", "arguments": "", "status": "in_progress" });
    let mut events =
        vec![json!({ "type": "response.output_item.added", "output_index": 0, "item": item })];
    for c in arguments.chars() {
        events.push(json!({ "type": "response.function_call_arguments.delta", "output_index": 0, "delta": c.to_string() }));
    }
    // Each event alone carries the whole arguments: the stream is whole without the deltas too.
    let done_args = json!({ "type": "response.function_call_arguments.done", "output_index": 0, "arguments": arguments });
    let mut finished = item.clone();
    finished["arguments"] = json!(arguments);
    let done_item =
        json!({ "type": "response.output_item.done", "output_index": 0, "item": finished });
    let completed = json!({ "type": "response.completed", "response": {} });
    for events in [
        [
            events.clone(),
            vec![done_args.clone(), done_item.clone(), completed.clone()],
        ]
        .concat(),
        vec![
            events[0].clone(),
            done_args.clone(),
            done_item.clone(),
            completed.clone(),
        ],
    ] {
        let mut stream = StreamedTurn::new(Provider::OpenAiResponses);
        for event in &events {
            stream.push(event).unwrap();
        }
        let turn = stream.finish(&DispatchOptions::default()).unwrap();
        assert_eq!(turn.calls[0].arguments, Ok(json!({ "a": 40, "b": 2 })));
        assert_eq!(turn.assistant[0]["arguments"], arguments);
    }
    // The deltas alone, the item done but the response never completed: refused.
    let mut stream = StreamedTurn::new(Provider::OpenAiResponses);
    for event in events.iter().chain([&done_item]) {
        stream.push(event).unwrap();
    }
    let turn = stream.finish(&DispatchOptions::default()).unwrap();
    assert!(
        turn.calls[0]
            .arguments
            .as_ref()
            .unwrap_err()
            .contains("before the model finished")
    );
    for kind in ["response.failed", "response.incomplete", "error"] {
        let mut stream = StreamedTurn::new(Provider::OpenAiResponses);
        let error = stream
            .push(&json!({ "type": kind, "response": { "error": { "message": "overloaded" } } }))
            .unwrap_err();
        assert_eq!(
            error.reason,
            format!("event 1: the stream reported `{kind}`: overloaded")
        );
    }
}

#[test]
fn a_chat_stream_whose_finish_reason_stays_null_is_unfinished() {
    let mut stream = StreamedTurn::new(Provider::OpenAiChat);
    stream
        .push(&json!({ "choices": [{ "index": 0, "finish_reason": null, "delta": { "tool_calls": [
            { "index": 0, "id": "c", "type": "function", "function": { "name": "math_add", "arguments": "{\"a\":1,\"b\":2}" } }
        ] } }] }))
        .unwrap();
    let turn = stream.finish(&DispatchOptions::default()).unwrap();
    assert!(
        turn.calls[0].arguments.is_err(),
        "{:?}",
        turn.calls[0].arguments
    );
}

/// A response of each provider with a sum (an output), a chart drawn (content only), for
/// Gemini a report (an output with an image attached), and a refused call.
fn mixed_responses() -> [(Provider, Value); 4] {
    let anthropic = json!({ "content": [
        { "type": "tool_use", "id": "toolu_1", "name": "math_add", "input": { "a": 1, "b": 2 } },
        { "type": "tool_use", "id": "toolu_2", "name": "chart_draw", "input": {} },
        { "type": "tool_use", "id": "toolu_3", "name": "math_add", "input": { "a": "x" } }
    ] });
    let gemini = json!({ "candidates": [{ "content": { "role": "model", "parts": [
        { "functionCall": { "id": "fc_1", "name": "math_add", "args": { "a": 1, "b": 2 } } },
        { "functionCall": { "id": "fc_2", "name": "chart_draw", "args": {} } },
        { "functionCall": { "id": "fc_3", "name": "chart_report", "args": {} } },
        { "functionCall": { "id": "fc_4", "name": "math_add", "args": { "a": "x" } } }
    ] } }] });
    let chat = chat_completion(vec![
        chat_call("c1", "math_add", r#"{"a":1,"b":2}"#),
        chat_call("c2", "nobody", "{}"),
    ]);
    let responses = json!({ "output": [
        { "type": "function_call", "call_id": "r1", "name": "math_add", "arguments": "{\"a\":1,\"b\":2}" }
    ] });
    [
        (Provider::Anthropic, anthropic),
        (Provider::Gemini, gemini),
        (Provider::OpenAiChat, chat),
        (Provider::OpenAiResponses, responses),
    ]
}

#[test]
fn an_output_is_kept_once_as_the_answer_carries_it_and_taking_the_answers_moves_them() {
    for (provider, response) in &mixed_responses() {
        let (provider, response) = (*provider, response);
        let done = dispatch(provider, response);
        // The sum's output: its JSON text where the answer takes text, its value for Gemini.
        let sum = done.results[0].outcome.as_ref().unwrap();
        match provider {
            Provider::Gemini => assert_eq!(*sum, Output::Value(json!({ "sum": 3 }))),
            _ => assert_eq!(*sum, Output::Json(r#"{"sum":3}"#.into())),
        }
        assert_eq!(sum.to_value().unwrap(), json!({ "sum": 3 }));
        assert_eq!(sum.to_string(), r#"{"sum":3}"#);
        // Built from the outcome (borrowed only where content blocks alone answer), the
        // answers are those that are moved out, in order.
        for result in &done.results {
            assert_eq!(
                matches!(result.answer(), std::borrow::Cow::Borrowed(_)),
                result.call.name == "chart_draw",
                "{provider:?} {}",
                result.call.name
            );
        }
        let answers = done.answers();
        let built: Vec<Value> = done
            .results
            .iter()
            .map(|r| r.answer().into_owned())
            .collect();
        assert_eq!(answers, built);
        let next = done.next_turn();
        assert_eq!(done.into_next_turn(), next, "{provider:?}");
        let done = dispatch(provider, response);
        assert_eq!(done.into_answers(), answers, "{provider:?}");
    }
    // Gemini's answers carry each output where it belongs, and only there.
    let gemini = mixed_responses()[1].1.clone();
    let done = dispatch(Provider::Gemini, &gemini);
    let answers = done.answers();
    assert_eq!(
        answers[0],
        json!({ "functionResponse": { "id": "fc_1", "name": "math_add", "response": { "output": { "sum": 3 } } } })
    );
    // A tool that answers content only has no output of its own: its blocks are the answer.
    assert_eq!(
        done.results[1]
            .outcome
            .as_ref()
            .unwrap()
            .to_value()
            .unwrap()[0]["text"],
        "the chart:"
    );
    assert_eq!(
        answers[1]["functionResponse"]["response"],
        json!({ "content": "the chart:" })
    );
    assert_eq!(
        answers[1]["functionResponse"]["parts"][0]["inlineData"]["mimeType"],
        "image/png"
    );
    // An output with an image attached: the output, its text and the image's part.
    assert_eq!(
        answers[2]["functionResponse"]["response"]["output"],
        json!({ "summary": "see the chart" })
    );
    assert_eq!(
        answers[2]["functionResponse"]["parts"][0]["inlineData"]["mimeType"],
        "image/png"
    );
    assert!(answers[3]["functionResponse"]["response"]["output"].is_null());
    assert_eq!(
        answers[3]["functionResponse"]["response"]["error"]["code"],
        "input_invalid"
    );
    let taken: Vec<Value> = done.results.into_iter().map(|r| r.into_answer()).collect();
    assert_eq!(taken, answers);
}

#[test]
fn the_next_turn_as_text_is_the_next_turn_whichever_form_the_outputs_were_kept_in() {
    let as_text = DispatchOptions {
        outputs_as_text: true,
        ..DispatchOptions::default()
    };
    for (provider, response) in &mixed_responses() {
        let provider = *provider;
        let as_values = dispatch(provider, response);
        let done = dispatch_with(provider, response, &as_text);
        // Every output is text now but for content blocks, which are values either way.
        let forms: Vec<&str> = done
            .results
            .iter()
            .map(|r| match &r.outcome {
                Ok(Output::Json(_)) => "text",
                Ok(Output::Value(_)) => "value",
                Err(_) => "error",
            })
            .collect();
        let expected: &[&str] = match provider {
            Provider::Gemini => &["text", "value", "text", "error"],
            Provider::Anthropic => &["text", "value", "error"],
            Provider::OpenAiChat => &["text", "error"],
            _ => &["text"],
        };
        assert_eq!(forms, expected, "{provider:?}");
        // The same answers and the same next turn, as values and as text.
        assert_eq!(done.answers(), as_values.answers(), "{provider:?}");
        let next = json!(as_values.next_turn());
        for text in [done.next_turn_json(), as_values.next_turn_json()] {
            assert_eq!(
                serde_json::from_str::<Value>(&text).unwrap(),
                next,
                "{provider:?}: {text}"
            );
        }
        assert_eq!(done.into_next_turn(), as_values.next_turn(), "{provider:?}");
    }
    // The output's text goes into the request as it is: a sum in Gemini's answer.
    let gemini = &mixed_responses()[1].1;
    let done = dispatch_with(Provider::Gemini, gemini, &as_text);
    assert!(
        done.next_turn_json()
            .contains(r#""response":{"output":{"sum":3}}"#),
        "{}",
        done.next_turn_json()
    );
    assert_eq!(
        done.results[0].outcome.as_ref().unwrap(),
        &Output::Json(r#"{"sum":3}"#.into())
    );
}

#[test]
fn one_call_over_max_calls_is_answered_unrun() {
    let options = DispatchOptions {
        max_calls: 0,
        ..DispatchOptions::default()
    };
    let response = chat_completion(vec![chat_call("c1", "math_add", r#"{"a":1,"b":2}"#)]);
    let done = dispatch_with(Provider::OpenAiChat, &response, &options);
    assert_eq!(codes(&done), [Some("rate_limited".to_owned())]);
    assert_eq!(done.answers()[0]["tool_call_id"], "c1");
}

#[test]
fn a_response_of_large_objects_is_read_as_one_of_small_ones() {
    // Past 16 members an object is looked up by hash, below by comparison: the same members.
    let mut message = json!({ "role": "assistant", "content": null, "tool_calls": [
        chat_call("c1", "math_add", r#"{"a":1,"b":2}"#)
    ] });
    let mut choice = json!({ "index": 0, "finish_reason": "tool_calls" });
    for n in 0..40 {
        message[format!("extra_{n}")] = json!(n);
        choice[format!("extra_{n}")] = json!(n);
    }
    choice["message"] = message;
    let done = dispatch(Provider::OpenAiChat, &json!({ "choices": [choice] }));
    assert_eq!(codes(&done), [None]);
    assert_eq!(done.answers()[0]["content"], r#"{"sum":3}"#);
}

#[test]
fn provider_names_follow_the_tools_registered_after_a_lookup() {
    #[derive(
        serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput, AgentOutput,
    )]
    struct Q {
        q: String,
    }
    /// Searches, version 1.
    #[tool(id = "kb.search", version = "1.0.0")]
    async fn search_v1(q: Q) -> Result<Q, ToolError> {
        Ok(q)
    }
    /// Searches, version 2.
    #[tool(id = "kb.search", version = "2.0.0")]
    async fn search_v2(q: Q) -> Result<Q, ToolError> {
        Ok(q)
    }
    let mut registry = ToolRegistry::new();
    registry.register(SearchV1Tool).unwrap();
    assert_eq!(
        registry.tool_for_provider_name("kb_search").as_deref(),
        Some("kb.search")
    );
    assert_eq!(
        registry.tool_for_provider_name("kb.search").as_deref(),
        Some("kb.search")
    );
    assert_eq!(registry.tool_for_provider_name("kb_search__1"), None);
    // A second major: each is named by its major now, and the bare name is no one's.
    registry.register(SearchV2Tool).unwrap();
    assert_eq!(registry.tool_for_provider_name("kb_search"), None);
    assert_eq!(
        registry.tool_for_provider_name("kb_search__1").as_deref(),
        Some("kb.search@1")
    );
    assert_eq!(
        registry.tool_for_provider_name("kb.search__2").as_deref(),
        Some("kb.search@2")
    );
}
