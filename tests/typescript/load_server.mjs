// The load bench's `kb.search` tool on the official TypeScript MCP SDK (streamable HTTP on
// node:http, the SDK's documented session pattern): a context row of
// `cargo bench -p agentio-benches --bench mcp_load`. A request with no session that is not an
// `initialize` is served statelessly (a server and transport of its own, the SDK's stateless
// pattern).
//
// Usage: node load_server.mjs PORT (beside the SDK's node_modules)
import http from "node:http";
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

function makeServer() {
  const server = new McpServer({ name: "ts-load", version: "1" });
  server.registerTool(
    "kb.search",
    {
      description: "Searches.",
      inputSchema: {
        query: z.string().min(1).max(200),
        limit: z.number().int().min(1).max(100),
        filters: z.array(z.string()).optional(),
        cursor: z.string().optional(),
      },
      outputSchema: {
        hits: z.array(z.object({ id: z.string(), title: z.string(), score: z.number().min(0).max(1) })),
        next_cursor: z.string().nullable(),
      },
    },
    async ({ query, limit }) => {
      const output = {
        hits: [...Array(Math.min(limit, 10)).keys()].map((i) => ({
          id: `doc-${i}`,
          title: `${query} result ${i}`,
          score: 1 / (i + 1),
        })),
        next_cursor: "page-2",
      };
      return { content: [{ type: "text", text: JSON.stringify(output) }], structuredContent: output };
    },
  );
  return server;
}

const transports = new Map();
const port = Number(process.argv[2]);

http
  .createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const text = Buffer.concat(chunks).toString();
    const body = text ? JSON.parse(text) : undefined;
    const sessionId = req.headers["mcp-session-id"];
    if (sessionId) {
      const transport = transports.get(sessionId);
      if (!transport) {
        res.writeHead(404).end();
        return;
      }
      await transport.handleRequest(req, res, body);
      return;
    }
    if (isInitializeRequest(body)) {
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
      await makeServer().connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    const server = makeServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  })
  .listen(port, "127.0.0.1");
