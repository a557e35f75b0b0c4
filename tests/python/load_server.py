"""The load bench's `kb.search` tool on the official Python `mcp` SDK (`MCPServer`, streamable
HTTP under uvicorn): a context row of `cargo bench -p agentio-benches --bench mcp_load`.

Usage: python load_server.py PORT
"""

import sys
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

server = MCPServer("python-load")


class Hit(BaseModel):
    id: str
    title: str
    score: Annotated[float, Field(ge=0.0, le=1.0)]


class SearchResult(BaseModel):
    hits: list[Hit]
    next_cursor: str | None


@server.tool(name="kb.search")
def search(
    query: Annotated[str, Field(min_length=1, max_length=200)],
    limit: Annotated[int, Field(ge=1, le=100)],
    filters: list[str] = [],
    cursor: str | None = None,
) -> SearchResult:
    """Searches."""
    return SearchResult(
        hits=[
            Hit(id=f"doc-{i}", title=f"{query} result {i}", score=1.0 / (i + 1))
            for i in range(min(limit, 10))
        ],
        next_cursor="page-2",
    )


if __name__ == "__main__":
    import uvicorn

    # The SDK's own app and defaults; uvicorn without its per-request access log.
    uvicorn.run(
        server.streamable_http_app(),
        host="127.0.0.1",
        port=int(sys.argv[1]),
        log_level="warning",
        access_log=False,
    )
