// The official TypeScript MCP SDK's client (what most hosts embed) lists and calls the example
// tools of `cargo run --example mcp_server -- --http PORT`, and must print no schema warning
// (its Ajv says `unknown format "uint32" ignored` for a format JSON Schema does not define).
//
// Usage: node list_and_call.mjs URL   (run from tests/conformance's install, which pins the SDK)

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";

const url = process.argv[2];
if (!url) throw new Error("usage: list_and_call.mjs URL");

const warnings = [];
let echo = false; // quiet during the capture's self-check
for (const level of ["warn", "error", "log"]) {
  const original = console[level];
  console[level] = (...args) => {
    warnings.push(args.map(String).join(" "));
    if (echo) original(...args);
  };
}

function fail(message) {
  console.error(`FAIL ${message}`);
  process.exit(1);
}

// The capture hears Ajv: a schema with schemars' format warns through it.
new AjvJsonSchemaValidator().getValidator({ type: "integer", format: "uint32" });
if (!warnings.some((w) => w.includes('unknown format "uint32"'))) {
  fail("the warning capture did not hear the SDK's validator");
}
warnings.length = 0;
echo = true;

const client = new Client({ name: "agentio-ci", version: "0.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const { tools } = await client.listTools();
const names = tools.map((t) => t.name).sort();
for (const name of ["kb.search", "notes.append", "report.render"]) {
  if (!names.includes(name)) fail(`tools/list lacks ${name}: ${names}`);
}
const search = await client.callTool({ name: "kb.search", arguments: { query: "invoices", limit: 2 } });
if (search.isError) fail(`kb.search failed: ${JSON.stringify(search)}`);
if (!Array.isArray(search.structuredContent?.hits) || search.structuredContent.hits.length === 0) {
  fail(`kb.search answered no hits: ${JSON.stringify(search)}`);
}
const bad = await client.callTool({ name: "kb.search", arguments: { query: "invoices", limit: 99 } });
if (!bad.isError) fail(`kb.search took limit 99: ${JSON.stringify(bad)}`);
await client.close();

const schemaWarnings = warnings.filter((w) => /format|schema|strict mode/i.test(w));
if (schemaWarnings.length > 0) fail(`schema warnings: ${schemaWarnings.join(" | ")}`);
console.log(`ok  TypeScript SDK: listed ${names.length} tools, called kb.search, no schema warning`);
