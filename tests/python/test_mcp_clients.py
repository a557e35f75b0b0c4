"""The agent-io MCP server, driven by the official Python `mcp` SDK.

Run by `.ci/run` in a virtualenv under the target dir:
    python tests/python/test_mcp_clients.py PATH/TO/mcp-fixture

Over stdio and over streamable HTTP, and on both the 2026-07-28 protocol and the legacy
initialize handshake, it checks: paging through `tools/list`; a call whose
`structuredContent` the SDK validates against `outputSchema` (a bare number's too, on
2026-07-28); a bad call that comes back as a
tool error carrying the AIP-14 envelope; progress notifications; a cancelled slow call, which
the server stops (its audit record says `cancelled`); and approval through elicitation.
The SDK must log no warning along the way (`sdk_log`).
Exits non-zero on the first failure, naming it.
"""

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback

import anyio
import jsonschema
from mcp import Client, StdioServerParameters
from mcp import types

import sdk_log

FIXTURE = sys.argv[1] if len(sys.argv) > 1 else "target/debug/mcp-fixture"


def text_of(result):
    return "".join(block.text for block in result.content if getattr(block, "text", None) is not None)


def envelope_of(result):
    assert result.is_error, f"expected a tool error, got {result}"
    assert result.structured_content is None, "an error carries no structuredContent"
    return json.loads(text_of(result))


def answer(action, approve=True):
    asked = []

    async def callback(context, params):
        asked.append(params.message)
        if action == "accept":
            return types.ElicitResult(action="accept", content={"approve": approve})
        return types.ElicitResult(action=action)

    return callback, asked


def audit_records(path):
    with open(path, encoding="utf-8") as file:
        return [json.loads(line) for line in file if line.strip()]


async def list_all(client):
    """Lists every page, so the SDK knows each tool's outputSchema and validates results."""
    tools = {}
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools.update({tool.name: tool for tool in page.tools})
        cursor = page.next_cursor
        if not cursor:
            return tools


async def check_list(client):
    first = await client.list_tools()
    assert len(first.tools) == 2, first
    assert first.next_cursor, "the fixture pages two at a time"
    names = [tool.name for tool in first.tools]
    cursor = first.next_cursor
    while cursor:
        page = await client.list_tools(cursor=cursor)
        names += [tool.name for tool in page.tools]
        cursor = page.next_cursor
    assert sorted(names) == [
        "fixture.add",
        "fixture.count",
        "fixture.record",
        "fixture.refuse",
        "fixture.work",
    ], names
    return {tool.name: tool for tool in (await client.list_tools()).tools}


async def check_call(client):
    tools = await list_all(client)
    result = await client.call_tool("fixture.add", {"a": 2, "b": 40})
    # The SDK has already validated structuredContent against outputSchema; check it again here.
    assert not result.is_error, result
    assert result.structured_content == {"sum": 42}, result
    jsonschema.validate(result.structured_content, tools["fixture.add"].output_schema)
    assert json.loads(text_of(result)) == {"sum": 42}
    assert tools["fixture.add"].annotations.read_only_hint is True


async def check_number_output(client, mode):
    """A bare-number output: structured, with its schema, on 2026-07-28; text alone before."""
    tools = await list_all(client)
    result = await client.call_tool("fixture.count", {"text": "one two three"})
    assert not result.is_error, result
    assert text_of(result) == "3", result
    schema = tools["fixture.count"].output_schema
    if mode == "legacy":
        assert result.structured_content is None, result
        assert schema is None, schema
    else:
        assert result.structured_content == 3, result
        assert schema is not None and schema.get("type") == "integer", schema
        jsonschema.validate(result.structured_content, schema)


async def check_bad_call(client):
    result = await client.call_tool("fixture.add", {"a": 5000, "b": 1})
    envelope = envelope_of(result)
    assert envelope["ok"] is False
    assert envelope["error"]["code"] == "input_invalid", envelope
    assert envelope["error"]["cause"]["violations"][0]["pointer"] == "/a", envelope
    result = await client.call_tool("fixture.refuse", {"text": "x"})
    assert envelope_of(result)["error"]["code"] == "ledger:closed"


async def check_progress(client):
    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, total, message))

    result = await client.call_tool("fixture.work", {"steps": 3}, progress_callback=on_progress)
    assert result.structured_content == {"steps": 3}, result
    assert seen == [(float(s), 3.0, f"step {s} of 3") for s in (1, 2, 3)], seen


async def check_cancel(client, audit_file):
    before = len(audit_records(audit_file))
    started = time.monotonic()
    with anyio.move_on_after(0.5):
        await client.call_tool("fixture.work", {"steps": 5000})
        raise AssertionError("a 100-second call finished within half a second")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        records = audit_records(audit_file)[before:]
        if records:
            break
        await anyio.sleep(0.05)
    assert records, "the server never ended the cancelled call"
    assert records[0]["tool_id"] == "fixture.work", records
    assert records[0]["error_code"] == "cancelled", records
    assert time.monotonic() - started < 10
    # The connection still serves.
    result = await client.call_tool("fixture.add", {"a": 1, "b": 1})
    assert result.structured_content == {"sum": 2}


async def check_approval(connect):
    for action, approve, runs in [("accept", True, True), ("accept", False, False), ("decline", True, False)]:
        callback, asked = answer(action, approve)
        async with connect(elicitation_callback=callback) as client:
            await list_all(client)
            result = await client.call_tool("fixture.record", {"text": "pay rent"})
            case = f"{action} approve={approve}"
            if runs:
                assert result.structured_content == {"text": "pay rent"}, (case, result)
            else:
                assert envelope_of(result)["error"]["code"] == "approval_denied", (case, result)
            assert len(asked) == 1, (case, asked)
            assert "fixture.record" in asked[0] and "pay rent" in asked[0], asked
    # A client that cannot be asked never gets a gated call run.
    async with connect() as client:
        await list_all(client)
        result = await client.call_tool("fixture.record", {"text": "pay rent"})
        envelope = envelope_of(result)
        assert envelope["error"]["code"] == "approval_denied", envelope


async def run_suite(transport, mode, connect, audit_file):
    for check in (check_list, check_call, check_bad_call, check_progress):
        async with connect() as client:
            await list_all(client)
            await check(client)
        print(f"ok  {transport:5} {mode:6} {check.__name__}")
    async with connect() as client:
        await list_all(client)
        await check_cancel(client, audit_file)
    print(f"ok  {transport:5} {mode:6} check_cancel")
    async with connect() as client:
        await check_number_output(client, mode)
    print(f"ok  {transport:5} {mode:6} check_number_output")
    await check_approval(connect)
    print(f"ok  {transport:5} {mode:6} check_approval")


async def main():
    failures = 0
    heard = sdk_log.listen()
    with tempfile.TemporaryDirectory() as scratch:
        audit_file = os.path.join(scratch, "audit.jsonl")
        open(audit_file, "w").close()
        env = dict(os.environ, AGENT_IO_AUDIT_FILE=audit_file)

        http = subprocess.Popen([FIXTURE, "http"], stdout=subprocess.PIPE, env=env, text=True)
        try:
            url = http.stdout.readline().strip()
            assert url.startswith("http://127.0.0.1:"), url
            params = StdioServerParameters(command=FIXTURE, args=["stdio"], env=env)
            for mode in ("auto", "legacy"):
                for transport, server in (("stdio", params), ("http", url)):

                    def connect(server=server, mode=mode, **options):
                        return Client(server, mode=mode, read_timeout_seconds=30, **options)

                    try:
                        await run_suite(transport, mode, connect, audit_file)
                    except Exception:
                        failures += 1
                        print(f"FAIL {transport} {mode}")
                        traceback.print_exc()
        finally:
            http.kill()
            http.wait()
    if heard.lines:
        failures += 1
        print("FAIL the SDK warned:", *heard.lines, sep="\n  ")
    if failures:
        print(f"{failures} suite(s) failed")
        sys.exit(1)
    print("all Python mcp SDK checks passed, and the SDK warned of nothing")


if __name__ == "__main__":
    asyncio.run(main())
