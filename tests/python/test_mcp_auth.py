"""The agent-io MCP server as an OAuth protected resource, driven by the official Python `mcp`
SDK over streamable HTTP.

Run by `.ci/run`:
    python tests/python/test_mcp_auth.py PATH/TO/mcp-fixture

`mcp-fixture http-auth` prints its URL, then tokens minted by the fixture's test key. The SDK
client is refused without a token, with a token for another audience and with an expired one
(each a 401 naming the resource metadata), and succeeds with a valid one, whose caller the
tool sees. Exits non-zero on the first failure, naming it.
"""

import asyncio
import json
import logging
import subprocess
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

import sdk_log

FIXTURE = sys.argv[1] if len(sys.argv) > 1 else "target/debug/mcp-fixture"


async def whoami(url, token, mode):
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with create_mcp_http_client(headers=headers) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode, read_timeout_seconds=10) as client:
            result = await client.call_tool("auth.whoami", {})
            assert not result.is_error, result
            return result.structured_content


async def refused(url, token, mode, why):
    """The SDK client fails to connect, and the server said 401 (not a hang, not a 500)."""
    try:
        await asyncio.wait_for(whoami(url, token, mode), timeout=20)
    except asyncio.TimeoutError:
        raise AssertionError(f"{why}: the client hung instead of being refused")
    except Exception:  # the SDK's own error for a 401; its class varies across versions
        pass
    else:
        raise AssertionError(f"{why}: the client was served")
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    async with httpx2.AsyncClient() as http:
        response = await http.post(url, headers=headers, json=body)
    assert response.status_code == 401, f"{why}: {response.status_code} {response.text}"
    challenge = response.headers.get("www-authenticate", "")
    assert "resource_metadata=" in challenge, f"{why}: {challenge!r}"
    print(f"ok  refused ({why}, {mode}): {challenge}")


async def main():
    server = subprocess.Popen([FIXTURE, "http-auth"], stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        tokens = json.loads(server.stdout.readline())
        for mode in ("auto", "legacy"):
            await refused(url, None, mode, "no token")
            await refused(url, tokens["wrong_audience"], mode, "wrong audience")
            await refused(url, tokens["expired"], mode, "expired")
            heard = sdk_log.listen()
            me = await asyncio.wait_for(whoami(url, tokens["valid"], mode), timeout=30)
            assert me == {"subject": "alice", "scopes": ["notes:read", "notes:write"]}, me
            assert not heard.lines, f"served ({mode}), but the SDK warned: {heard.lines}"
            logging.getLogger("mcp").removeHandler(heard)
            print(f"ok  served ({mode}): {me}")
        # The protected resource metadata (RFC 9728).
        origin = url.rsplit("/mcp", 1)[0]
        async with httpx2.AsyncClient() as http:
            metadata = (await http.get(f"{origin}/.well-known/oauth-protected-resource/mcp")).json()
        assert metadata["resource"] == url, metadata
        assert metadata["bearer_methods_supported"] == ["header"], metadata
        print(f"ok  metadata: {metadata}")
    finally:
        server.kill()
        server.wait()
    print("all Python mcp SDK auth checks passed")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except AssertionError as failure:
        print(f"FAIL {failure}")
        sys.exit(1)
