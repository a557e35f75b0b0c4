"""agent-io's MCP client answering the questions of a server on the official Python `mcp` SDK.

Run by `.ci/run` in a virtualenv under the target dir:
    python tests/python/test_mcp_client_answers.py PATH/TO/mcp-host

`mcp-host` (agent-io's `McpClient` with a host's rmcp `ClientHandler`) starts
`tests/python/answer_server.py` over stdio, imports its tools into a registry and calls them.
The SDK's tools ask the host's user for a form (`confirm`, its answer validated by the SDK) and
the host's model for a reply (`muse`). On 2026-07-28 the SDK asks through `input_required`
results and request state, on 2025-11-25 through requests of its own; the test checks, for
both, that the SDK received and accepted the answers (the tools say what they heard), that each
question was put to the host once, and that an answer the form does not allow is refused by the
SDK and comes back as the call's error, naming it.
Exits non-zero on the first failure, naming it.
"""

import json
import os
import subprocess
import sys

HOST = sys.argv[1] if len(sys.argv) > 1 else "target/debug/mcp-host"
SERVER = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "answer_server.py")]


def host(revision, tools, answer=None):
    env = dict(os.environ)
    if answer is not None:
        env["AGENT_IO_HOST_ANSWER"] = json.dumps(answer)
    done = subprocess.run(
        [HOST, revision, *tools, "--", *SERVER],
        capture_output=True, text=True, timeout=60, env=env,
    )
    assert done.returncode == 0, f"mcp-host exited {done.returncode}: {done.stderr}"
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def check(revision):
    lines = host(revision, ["confirm", "muse"])
    assert lines == [
        {"tool": "confirm", "output": {"result": "hello Ada, 36"}},
        {"tool": "muse", "output": {"result": "host-model said hi"}},
        {"asked": 2},
    ], lines

    # An answer the form refuses (`age` must be >= 0): the SDK refuses it, and the call fails
    # with its reason, after one question.
    lines = host(revision, ["confirm"], answer={"name": "Ada", "age": -1})
    assert len(lines) == 2 and lines[1] == {"asked": 1}, lines
    error = lines[0].get("error", "")
    assert error.startswith("upstream_error:"), lines
    assert "does not match the requested schema" in error, lines


def main():
    for revision in ["2025-11-25", "2026-07-28"]:
        check(revision)
        print(f"ok: the Python SDK's server asked agent-io's client and accepted its answers ({revision})")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
