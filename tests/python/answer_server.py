"""An MCP server on the official Python `mcp` SDK whose tools ask their client questions.

Started over stdio by `tests/python/test_mcp_client_answers.py` through agent-io's client
(`mcp-host`). `confirm` asks the user who they are (a form the SDK validates the answer
against), `muse` asks the client's model; each returns what it heard, so the test sees that the
SDK received and accepted agent-io's answers. On 2026-07-28 the SDK asks through
`input_required` results and request state; on 2025-11-25 through requests of its own.
"""

from typing import Annotated

from mcp.server.mcpserver import MCPServer, Elicit, Resolve, Sample
from mcp_types import CreateMessageResult, SamplingMessage, TextContent
from pydantic import BaseModel, Field

server = MCPServer("python-answer-server")


class Person(BaseModel):
    name: str = Field(description="Your name")
    age: int = Field(description="Your age in years", ge=0)


def ask_person() -> Elicit[Person]:
    return Elicit("Who are you?", Person)


def ask_model() -> Sample:
    prompt = SamplingMessage(role="user", content=TextContent(type="text", text="Say hi"))
    return Sample([prompt], max_tokens=16)


@server.tool()
def confirm(who: Annotated[Person, Resolve(ask_person)]) -> str:
    """Greets whoever the user says they are."""
    return f"hello {who.name}, {who.age}"


@server.tool()
def muse(reply: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
    """Says what the client's model said."""
    return f"{reply.model} said {reply.content.text}"


if __name__ == "__main__":
    server.run("stdio")
