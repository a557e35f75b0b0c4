"""What an agent-io tool says beyond its output, heard by the official Python `mcp` SDK.

Run by `.ci/run` in a virtualenv under the target dir:
    python tests/python/test_mcp_voice.py PATH/TO/mcp-fixture

The fixture serves its voice tools (`AGENT_IO_FIXTURE_VOICE`). Over stdio and streamable HTTP,
on the 2026-07-28 protocol (questions as `input_required` round trips, log lines by the
request's `logLevel`) and on the legacy initialize handshake (questions as requests from the
server, log lines by `logging/setLevel`), it checks: content blocks instead of, and beside, a
structured output; log lines; a typed question to the user, its answer validated; a question to
the client's model; a tool error, at once, for a client without the capability; and an rmcp
handler's resource served beside the tools.
The SDK must log no warning along the way (`sdk_log`).
Exits non-zero on the first failure, naming it.
"""

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import traceback

from mcp import Client, StdioServerParameters
from mcp import types

import sdk_log

FIXTURE = sys.argv[1] if len(sys.argv) > 1 else "target/debug/mcp-fixture"


def said(result):
    assert not result.is_error, result
    return result.structured_content["said"]


def error_of(result):
    assert result.is_error, f"expected a tool error, got {result}"
    return json.loads(result.content[0].text)["error"]


async def list_all(client):
    """Every page (the fixture lists two tools to a page)."""
    tools, cursor = {}, None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools.update({tool.name: tool for tool in page.tools})
        cursor = page.next_cursor
        if not cursor:
            return tools


async def check_content(connect, mode):
    async with connect() as client:
        tools = await list_all(client)
        assert tools["voice.chart"].output_schema is None, tools["voice.chart"]
        result = await client.call_tool("voice.chart", {})
        assert not result.is_error, result
        assert result.structured_content is None, result
        kinds = [block.type for block in result.content]
        assert kinds == ["text", "image", "resource"], kinds
        assert result.content[1].mime_type == "image/png"
        assert result.content[1].data == "iVBORw0KGgo="
        result = await client.call_tool("voice.report", {})
        assert said(result) == "see the chart"
        assert [block.type for block in result.content] == ["text", "image"], result


async def check_logging(connect, mode):
    heard = []

    async def on_log(params):
        heard.append((params.level, params.data, params.logger))

    # 2026-07-28: a request opts in with its level; legacy: logging/setLevel.
    options = {"log_level": "info"} if mode == "auto" else {}
    async with connect(logging_callback=on_log, **options) as client:
        if mode == "legacy":
            await client.set_logging_level("info")
        result = await client.call_tool("voice.chatty", {})
        assert said(result) == "[false, true, true]", result
        for _ in range(100):
            if len(heard) >= 2:
                break
            await asyncio.sleep(0.02)
        assert heard == [
            ("info", {"step": 1}, "voice.chatty"),
            ("warning", "almost out of room", "voice.chatty"),
        ], heard


async def check_elicitation(connect, mode):
    asked = []

    def answering(content):
        async def callback(context, params):
            asked.append((params.message, params.requested_schema))
            return types.ElicitResult(action="accept", content=content)

        return callback

    async with connect(elicitation_callback=answering({"sure": True})) as client:
        result = await client.call_tool("voice.ask", {})
        assert said(result) == "sure: true", result
        message, schema = asked[0]
        assert message == "Are you sure?", asked
        assert schema["properties"]["sure"]["type"] == "boolean", schema
    async with connect(elicitation_callback=answering({"sure": "very"})) as client:
        error = error_of(await client.call_tool("voice.ask", {}))
        assert error["code"] == "input_invalid", error
        assert error["cause"]["violations"][0]["pointer"] == "/sure", error


async def check_sampling(connect, mode):
    async def sample(context, params):
        assert params.messages[0].content.text == "Say hi", params
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="hi"),
            model="python-model",
        )

    async with connect(sampling_callback=sample) as client:
        result = await client.call_tool("voice.muse", {})
        assert said(result) == "python-model said hi", result


async def check_no_capability(connect, mode):
    async with connect() as client:
        for tool, capability in (("voice.ask", "elicitation"), ("voice.muse", "sampling")):
            try:
                result = await asyncio.wait_for(client.call_tool(tool, {}), 10)
            except Exception as error:  # 2026-07-28: MCP's missing-capability error
                assert mode == "auto", (tool, error)
                assert "-32021" in repr(error) or capability in str(error), (tool, repr(error))
                continue
            assert mode == "legacy", (tool, result)
            error = error_of(result)
            assert error["code"] == "no_route", error
            assert f"`{capability}` capability" in error["message"], error


async def check_resources(connect, mode):
    """An rmcp handler's resources, served beside the tools by the same server."""
    async with connect() as client:
        listed = await client.list_resources()
        assert [str(r.uri) for r in listed.resources] == ["docs://readme"], listed
        read = await client.read_resource("docs://readme")
        assert read.contents[0].text == "Read me.", read
        tools = await list_all(client)
        assert "voice.chart" in tools, tools


async def run_suite(transport, mode, connect):
    for check in (
        check_content,
        check_logging,
        check_elicitation,
        check_sampling,
        check_no_capability,
        check_resources,
    ):
        await check(connect, mode)
        print(f"ok  {transport:5} {mode:6} {check.__name__}")


async def main():
    failures = 0
    heard = sdk_log.listen()
    env = dict(os.environ, AGENT_IO_FIXTURE_VOICE="1")
    http = subprocess.Popen([FIXTURE, "http"], stdout=subprocess.PIPE, env=env, text=True)
    try:
        url = http.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        params = StdioServerParameters(command=FIXTURE, args=["stdio"], env=env)
        for mode in ("auto", "legacy"):
            for transport, server in (("stdio", params), ("http", url)):

                @contextlib.asynccontextmanager
                async def connect(server=server, mode=mode, **options):
                    async with Client(server, mode=mode, read_timeout_seconds=30, **options) as client:
                        # Every page first: the SDK then checks each tool's structuredContent
                        # against its outputSchema (by itself it reads only the first page,
                        # and of a tool it has not seen it warns and checks nothing).
                        await list_all(client)
                        yield client

                try:
                    await run_suite(transport, mode, connect)
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
    print("all Python mcp SDK voice checks passed, and the SDK warned of nothing")


if __name__ == "__main__":
    asyncio.run(main())
