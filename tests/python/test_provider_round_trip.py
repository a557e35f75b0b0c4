"""The model round trip judged by the providers' own Python SDKs, with no network.

Run by `.ci/run` in a virtualenv under the target dir:
    python tests/python/test_provider_round_trip.py PATH/TO/provider-turn

For OpenAI (Chat Completions and Responses), Anthropic and Gemini, a response is built and
parsed with the SDK's own response types (`ChatCompletion`, `Response`, `Message`,
`GenerateContentResponse`, and their stream events), dumped as the API sends it, and fed to
`provider-turn` (agent-io's `ToolRegistry::dispatch` over the provider fixture's tools). Every
item it returns must validate as the SDK's request type for the next turn: the model's turn sent
back (`ChatCompletionMessageParam`, `ResponseInputItemParam`, `MessageParam`, `Content`), each
answer (`ChatCompletionToolMessageParam`, `FunctionCallOutput`, `ToolResultBlockParam`, `Part`)
and the messages that carry them, with no key the type does not define. The calls cover
success, parallel calls with their ids in order, an invalid argument, arguments that are not
JSON, an unknown tool, a denied approval, a timeout, content (an image where the provider
takes one, a refusal where it does not), a call split across many stream deltas, a stream cut
short, Gemini's echoed thought signatures, and a thousand calls in one response.
Exits non-zero on the first failure, naming it.
"""

import json
import subprocess
import sys
import typing

from pydantic import TypeAdapter

TURN = sys.argv[1] if len(sys.argv) > 1 else "target/debug/provider-turn"


def run(provider, response=None, stream=None, max_calls=None):
    request = {"provider": provider}
    if stream is not None:
        request["stream"] = stream
    else:
        request["response"] = response
    if max_calls is not None:
        request["max_calls"] = max_calls
    done = subprocess.run([TURN], input=json.dumps(request), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"provider-turn exited {done.returncode}: {done.stderr}"
    out = json.loads(done.stdout)
    # The next turn written as text (outputs kept as text) is the same next turn, which the
    # checks below validate with the SDK's types.
    if "next_turn" in out:
        assert out["next_turn_text"] == out["next_turn"], (out["next_turn_text"], out["next_turn"])
    return out


def strict(typed_dict, value, where):
    """`value` validates as `typed_dict` (a request TypedDict) and has no key it does not define."""
    TypeAdapter(typed_dict).validate_python(value)
    known = set(typing.get_type_hints(typed_dict))
    unknown = set(value) - known
    assert not unknown, f"{where}: keys {sorted(unknown)} are not in {typed_dict.__name__}"


def codes(out):
    return [o["error"] for o in out["outcomes"]]


def error_of(text):
    return json.loads(text)["error"]


# The calls every provider's response makes, by provider-safe name and arguments (as a dict;
# `None` arguments stand for text that is not JSON), and the error each is answered with.
CALLS = [
    ("weather_forecast", {"city": "Oslo"}, None),
    ("math_add", {"a": 2, "b": 3}, None),
    ("math_add", {"a": "two", "b": 3}, "input_invalid"),
    ("no_such_tool", {}, "not_found"),
    ("notes_delete", {"id": "n1"}, "approval_denied"),
    ("slow_wait", {}, "timeout"),
]
EXPECTED = [code for _, _, code in CALLS]


def check_common(out, ids):
    assert "error" not in out, out
    assert [o["id"] for o in out["outcomes"]] == ids, out["outcomes"]


# --- OpenAI Chat Completions ---------------------------------------------------------------

def openai_chat():
    from openai.types.chat import (
        ChatCompletion,
        ChatCompletionAssistantMessageParam,
        ChatCompletionChunk,
        ChatCompletionToolMessageParam,
    )

    calls = [
        {"id": f"call_{i}", "type": "function",
         "function": {"name": name, "arguments": json.dumps(args)}}
        for i, (name, args, _) in enumerate(CALLS)
    ]
    calls.append({"id": "call_bad", "type": "function",
                  "function": {"name": "math_add", "arguments": '{"a": 1'}})
    completion = ChatCompletion.model_validate({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-test",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "logprobs": None,
                     "message": {"role": "assistant", "content": None, "refusal": None,
                                 "tool_calls": calls}}],
    })
    out = run("openai-chat", completion.model_dump(mode="json"))
    ids = [c["id"] for c in calls]
    check_common(out, ids)
    assert codes(out) == EXPECTED + ["input_invalid"], codes(out)
    strict(ChatCompletionAssistantMessageParam, out["assistant"][0], "assistant")
    assert [c["id"] for c in out["assistant"][0]["tool_calls"]] == ids
    for answer in out["next_turn"]:
        strict(ChatCompletionToolMessageParam, answer, "tool message")
    assert out["next_turn"] == out["answers"]
    assert [a["tool_call_id"] for a in out["answers"]] == ids
    assert json.loads(out["answers"][0]["content"]) == {"summary": "sunny in Oslo"}
    assert json.loads(out["answers"][1]["content"]) == {"sum": 5}
    invalid = error_of(out["answers"][2]["content"])
    assert invalid["code"] == "input_invalid" and invalid["cause"]["violations"][0]["pointer"] == "/a", invalid
    assert "not JSON" in error_of(out["answers"][6]["content"])["message"]

    # A chart (an image) has no place in a Chat tool message: refused, naming the block.
    chart = ChatCompletion.model_validate({
        "id": "c", "object": "chat.completion", "created": 1, "model": "gpt-test",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None,
            "tool_calls": [{"id": "call_c", "type": "function",
                            "function": {"name": "chart_draw", "arguments": "{}"}}]}}],
    })
    out = run("openai-chat", chart.model_dump(mode="json"))
    assert codes(out) == ["output_invalid"], out
    assert "content /1" in error_of(out["answers"][0]["content"])["message"]

    # Streamed: the arguments split into one-character deltas, two calls interleaved.
    text = json.dumps({"city": "Bergen"})
    chunks = [{"index": 0, "id": "call_s0", "type": "function",
               "function": {"name": "weather_forecast", "arguments": ""}},
              {"index": 1, "id": "call_s1", "type": "function",
               "function": {"name": "math_add", "arguments": ""}}]
    events = [chunk_of(ChatCompletionChunk, [c]) for c in chunks]
    sums = json.dumps({"a": 40, "b": 2})
    for i in range(max(len(text), len(sums))):
        pieces = []
        if i < len(text):
            pieces.append({"index": 0, "function": {"arguments": text[i]}})
        if i < len(sums):
            pieces.append({"index": 1, "function": {"arguments": sums[i]}})
        events.append(chunk_of(ChatCompletionChunk, pieces))
    events.append(chunk_of(ChatCompletionChunk, None, finish="tool_calls"))
    out = run("openai-chat", stream=events)
    assert codes(out) == [None, None], out
    assert json.loads(out["answers"][0]["content"]) == {"summary": "sunny in Bergen"}
    assert json.loads(out["answers"][1]["content"]) == {"sum": 42}
    strict(ChatCompletionAssistantMessageParam, out["assistant"][0], "streamed assistant")

    # Cut before the model finished: the call is refused, not run on half its arguments.
    out = run("openai-chat", stream=events[: len(events) // 2])
    assert codes(out) == ["input_invalid", "input_invalid"], out
    assert "cut short" in error_of(out["answers"][0]["content"])["message"]


def chunk_of(chunk_type, tool_calls, finish=None):
    delta = {} if tool_calls is None else {"tool_calls": tool_calls}
    chunk = chunk_type.model_validate({
        "id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    })
    return chunk.model_dump(mode="json")


# --- OpenAI Responses ----------------------------------------------------------------------

def openai_responses():
    from openai.types.responses import Response, ResponseInputItemParam, ResponseStreamEvent
    from openai.types.responses.response_input_item_param import FunctionCallOutput

    output = [
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "opaque"},
        {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "Checking.", "annotations": []}]},
    ]
    output += [
        {"type": "function_call", "id": f"fc_{i}", "call_id": f"call_{i}", "name": name,
         "arguments": json.dumps(args), "status": "completed"}
        for i, (name, args, _) in enumerate(CALLS)
    ]
    output.append({"type": "function_call", "id": "fc_chart", "call_id": "call_chart",
                   "name": "chart_draw", "arguments": "", "status": "completed"})
    response = Response.model_validate({
        "id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-test",
        "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
    })
    out = run("openai-responses", response.model_dump(mode="json"))
    ids = [f"call_{i}" for i in range(len(CALLS))] + ["call_chart"]
    check_common(out, ids)
    assert codes(out) == EXPECTED + [None], codes(out)
    items = TypeAdapter(list[ResponseInputItemParam])
    items.validate_python(out["assistant"])
    assert [i["type"] for i in out["assistant"]] == [o["type"] for o in output]
    assert out["assistant"][0]["encrypted_content"] == "opaque"
    items.validate_python(out["next_turn"])
    for answer in out["answers"]:
        strict(FunctionCallOutput, answer, "function_call_output")
    assert [a["call_id"] for a in out["answers"]] == ids
    # The chart's image reaches the model as an input_image part.
    chart = out["answers"][-1]["output"]
    assert [p["type"] for p in chart] == ["input_text", "input_image"], chart
    assert chart[1]["image_url"] == "data:image/png;base64,iVBORw0KGgo="

    # Streamed: output_item.added, argument deltas, done events.
    args = json.dumps({"a": 20, "b": 22})
    item = {"type": "function_call", "id": "fc_s", "call_id": "call_s", "name": "math_add",
            "arguments": "", "status": "in_progress"}
    events = [{"type": "response.output_item.added", "output_index": 0, "item": item,
               "sequence_number": 0}]
    for n, ch in enumerate(args):
        events.append({"type": "response.function_call_arguments.delta", "output_index": 0,
                       "item_id": "fc_s", "delta": ch, "sequence_number": n + 1})
    events.append({"type": "response.function_call_arguments.done", "output_index": 0,
                   "item_id": "fc_s", "name": "math_add", "arguments": args,
                   "sequence_number": len(args) + 1})
    events.append({"type": "response.output_item.done", "output_index": 0,
                   "item": {**item, "arguments": args, "status": "completed"},
                   "sequence_number": len(args) + 2})
    completed = response.model_dump(mode="json")
    events.append({"type": "response.completed", "response": completed,
                   "sequence_number": len(args) + 3})
    events = [TypeAdapter(ResponseStreamEvent).validate_python(e).model_dump(mode="json")
              for e in events]
    out = run("openai-responses", stream=events)
    assert codes(out) == [None], out
    assert out["answers"][0] == {"type": "function_call_output", "call_id": "call_s",
                                 "output": json.dumps({"sum": 42}, separators=(",", ":"))}
    items.validate_python(out["assistant"])
    # Cut after the deltas, before the item was done: refused.
    out = run("openai-responses", stream=events[: len(args) // 2])
    assert codes(out) == ["input_invalid"], out


# --- Anthropic Messages --------------------------------------------------------------------

def anthropic():
    from anthropic.types import (
        Message,
        MessageParam,
        RawMessageStreamEvent,
        ToolResultBlockParam,
    )

    content = [
        {"type": "thinking", "thinking": "Which tools?", "signature": "c2lnbmVk"},
        {"type": "text", "text": "Let me check.", "citations": None},
    ]
    content += [
        {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": args}
        for i, (name, args, _) in enumerate(CALLS)
    ]
    content.append({"type": "tool_use", "id": "toolu_chart", "name": "chart_report", "input": {}})
    message = Message.model_validate({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": content, "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    })
    out = run("anthropic", message.model_dump(mode="json"))
    ids = [f"toolu_{i}" for i in range(len(CALLS))] + ["toolu_chart"]
    check_common(out, ids)
    assert codes(out) == EXPECTED + [None], codes(out)
    messages = TypeAdapter(list[MessageParam])
    messages.validate_python(out["assistant"] + out["next_turn"])
    # The signed thinking block goes back as it came.
    assert out["assistant"][0]["content"][0] == {"type": "thinking", "thinking": "Which tools?",
                                                  "signature": "c2lnbmVk"}
    assert len(out["next_turn"]) == 1 and out["next_turn"][0]["role"] == "user"
    for answer in out["answers"]:
        strict(ToolResultBlockParam, answer, "tool_result")
    assert [a["tool_use_id"] for a in out["answers"]] == ids
    assert [a["is_error"] for a in out["answers"]] == [c is not None for c in EXPECTED] + [False]
    assert error_of(out["answers"][4]["content"])["code"] == "approval_denied"
    report = out["answers"][-1]["content"]
    assert [b["type"] for b in report] == ["text", "image"], report
    assert report[1]["source"] == {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}

    # Streamed: input_json_delta pieces of a few characters each.
    args = json.dumps({"city": "Tromsø"})
    events = [
        {"type": "message_start", "message": {**message.model_dump(mode="json"), "content": []}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "On it."}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1,
         "content_block": {"type": "tool_use", "id": "toolu_s", "name": "weather_forecast", "input": {}}},
    ]
    events += [{"type": "content_block_delta", "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": args[i:i + 3]}}
               for i in range(0, len(args), 3)]
    events += [{"type": "content_block_stop", "index": 1},
               {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"output_tokens": 5}},
               {"type": "message_stop"}]
    events = [TypeAdapter(RawMessageStreamEvent).validate_python(e).model_dump(mode="json") for e in events]
    out = run("anthropic", stream=events)
    assert codes(out) == [None], out
    assert json.loads(out["answers"][0]["content"][0]["text"]) == {"summary": "sunny in Tromsø"}
    messages.validate_python(out["assistant"] + out["next_turn"])
    assert out["assistant"][0]["content"][1]["input"] == {"city": "Tromsø"}
    # The block never stopped: refused.
    out = run("anthropic", stream=events[:-4])
    assert codes(out) == ["input_invalid"], out
    assert out["answers"][0]["is_error"] is True


# --- Gemini --------------------------------------------------------------------------------

def gemini():
    from google.genai import types

    parts = [{"text": "Let me look.", "thought": True, "thoughtSignature": "dGhvdWdodA=="}]
    parts += [
        {"functionCall": {"id": f"fc_{i}", "name": name, "args": args},
         **({"thoughtSignature": "c2lnLTA="} if i == 0 else {})}
        for i, (name, args, _) in enumerate(CALLS)
    ]
    parts.append({"functionCall": {"name": "chart_draw", "args": {}}})
    response = types.GenerateContentResponse.model_validate({
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
    })
    out = run("gemini", response.model_dump(mode="json", by_alias=True, exclude_none=True))
    ids = [f"fc_{i}" for i in range(len(CALLS))] + [""]
    check_common(out, ids)
    assert codes(out) == EXPECTED + [None], codes(out)
    model_turn = types.Content.model_validate(out["assistant"][0])
    # Gemini requires the thought signatures back, on the parts they came on.
    assert model_turn.parts[0].thought_signature == b"thought", model_turn.parts[0]
    assert model_turn.parts[1].thought_signature == b"sig-0", model_turn.parts[1]
    assert len(out["next_turn"]) == 1
    answers = types.Content.model_validate(out["next_turn"][0])
    assert answers.role == "user"
    for answer in out["answers"]:
        types.Part.model_validate(answer)
    responses = [p.function_response for p in answers.parts]
    assert [r.id for r in responses] == ids[:-1] + [None]
    assert [r.name for r in responses] == [name for name, _, _ in CALLS] + ["chart_draw"]
    assert responses[0].response == {"output": {"summary": "sunny in Oslo"}}
    assert responses[2].response["error"]["code"] == "input_invalid"
    assert responses[5].response["error"]["code"] == "timeout"
    # The chart's image rides the function response as an inline part.
    assert responses[-1].parts[0].inline_data.mime_type == "image/png"
    assert responses[-1].response == {"content": "the chart:"}

    # Streamed: the parts arrive over several chunks, the signature on a later one.
    chunks = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "Looking"}]}}]},
        {"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"id": "fc_s", "name": "math_add", "args": {"a": 1, "b": 2}},
             "thoughtSignature": "c2lnLTE="}]}}]},
        {"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]},
                         "finishReason": "STOP"}]},
    ]
    chunks = [types.GenerateContentResponse.model_validate(c).model_dump(mode="json", by_alias=True, exclude_none=True)
              for c in chunks]
    out = run("gemini", stream=chunks)
    assert codes(out) == [None], out
    turn = types.Content.model_validate(out["assistant"][0])
    assert turn.parts[1].thought_signature == b"sig-1"
    types.Content.model_validate(out["next_turn"][0])
    # No finish reason: the stream was cut, the call refused.
    out = run("gemini", stream=chunks[:2])
    assert codes(out) == ["input_invalid"], out


# --- Hostile --------------------------------------------------------------------------------

def hostile():
    from anthropic.types import Message, MessageParam

    # A thousand calls: the first 128 run, the rest are answered `rate_limited`; none is lost.
    content = [{"type": "tool_use", "id": f"toolu_{i}", "name": "math_add", "input": {"a": i, "b": 1}}
               for i in range(1000)]
    message = Message.model_validate({
        "id": "msg_h", "type": "message", "role": "assistant", "model": "claude-test",
        "content": content, "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    })
    out = run("anthropic", message.model_dump(mode="json"))
    assert len(out["answers"]) == 1000
    assert [a["tool_use_id"] for a in out["answers"]] == [f"toolu_{i}" for i in range(1000)]
    assert codes(out) == [None] * 128 + ["rate_limited"] * 872, codes(out)[120:140]
    TypeAdapter(list[MessageParam]).validate_python(out["next_turn"])

    # Huge and deep arguments: answered as errors, naming why.
    from openai.types.chat import ChatCompletion
    huge = json.dumps({"city": "x" * (2 << 20)})
    deep = "[" * 100 + "]" * 100
    completion = ChatCompletion.model_validate({
        "id": "h", "object": "chat.completion", "created": 1, "model": "gpt-test",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None, "tool_calls": [
                {"id": "call_huge", "type": "function", "function": {"name": "weather_forecast", "arguments": huge}},
                {"id": "call_deep", "type": "function", "function": {"name": "weather_forecast",
                                                                     "arguments": json.dumps({"city": json.loads(deep)})}},
            ]}}],
    })
    out = run("openai-chat", completion.model_dump(mode="json"))
    assert codes(out) == ["input_invalid", "input_invalid"], out
    assert "bytes, over the limit" in error_of(out["answers"][0]["content"])["message"]
    assert "nest deeper" in error_of(out["answers"][1]["content"])["message"]

    # Not the provider's shape: an error of the turn, naming where.
    out = run("openai-chat", {"choices": [{"message": {"role": "assistant",
                                                        "tool_calls": [{"type": "function", "function": {"name": "x"}}]}}]})
    assert out["error"]["pointer"] == "/choices/0/message/tool_calls/0", out


def main():
    for name, check in [("OpenAI Chat Completions", openai_chat), ("OpenAI Responses", openai_responses),
                        ("Anthropic Messages", anthropic), ("Gemini", gemini), ("hostile input", hostile)]:
        check()
        print(f"ok: {name}")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as failure:
        import traceback
        traceback.print_exc()
        print(f"FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
