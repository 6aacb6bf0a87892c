// Harness: @modelcontextprotocol/ext-tasks 0.2.2 (/client) over @modelcontextprotocol/client 2.4.0,
// on the 2026-07-28 extension. Follows the client-harness convention of `tasks-conformance client`:
// the server URL is the last argument, the scenario's context is in MCP_CONFORMANCE_CONTEXT.
//
// ext-tasks leaves the HTTP of tools/call and tasks/* to the host (`rawDispatch`); this host POSTs
// the framed request with the headers a 2026-07-28 request needs plus the ones ext-tasks asks for
// (`options.context.headers`, where it puts Mcp-Name for tasks/*), and nothing more.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  createTaskSessionEndpointId, createTaskSessionFromClient, resultFromTaskOutcome,
} from "@modelcontextprotocol/ext-tasks/client";

const url = process.argv.at(-1);
const ctx = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");
const protocolVersion = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION ?? "2026-07-28";
const clientInfo = { name: "ext-tasks-harness", version: "0.2.2" };
const capabilities = { elicitation: { form: {} } };
const report = (o) => console.log("TASKS-CONFORMANCE-OUTCOME " + JSON.stringify(o));

const client = new Client(clientInfo, { capabilities, versionNegotiation: { mode: { pin: protocolVersion } } });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

// A request other than tools/call (prompts/get) goes through the SDK client itself, as a host would.
if (ctx.request) {
  try {
    await client.request(ctx.request);
    report({ status: "completed", isError: false, error: null });
  } catch (e) {
    report({ status: "unknown", isError: false, error: { code: e.code ?? null, message: String(e.message) } });
  }
  await client.close();
  process.exit(0);
}

let nextId = 1;
function fromStream(text, id) {
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n");
    if (!data) continue;
    const message = JSON.parse(data);
    if (message.id === id && ("result" in message || "error" in message)) return message;
  }
  throw new Error("the response stream ended without the response");
}

async function rawDispatch(request, options = {}) {
  const meta = request.params?._meta ?? {};
  const headers = {
    "content-type": "application/json", accept: "application/json, text/event-stream",
    "mcp-protocol-version": meta["io.modelcontextprotocol/protocolVersion"], "mcp-method": request.method,
    ...(request.method === "tools/call" ? { "mcp-name": request.params.name } : {}),
    ...options.context?.headers,
  };
  const id = nextId++;
  const body = JSON.stringify({ jsonrpc: "2.0", id, ...request });
  const response = await fetch(url, { method: "POST", headers, body, signal: options.signal });
  // A server may answer with JSON or an SSE stream (it accepts both): the response is the event with this id.
  const type = (response.headers.get("content-type") ?? "").split(";")[0].trim();
  const reply = type === "text/event-stream" ? fromStream(await response.text(), id) : await response.json();
  return "error" in reply ? { kind: "error", error: reply.error } : { kind: "result", result: reply.result };
}

const session = createTaskSessionFromClient(client, {
  endpointId: await createTaskSessionEndpointId("tasks-conformance", url),
  rawDispatch,
  v2RequestFraming: { protocolVersion, clientInfo, clientCapabilities: capabilities },
  onInputRequest: async (request) => request.kind === "elicitation"
    ? { action: "accept", content: { colour: "blue" } }
    : { action: "decline" },
});

const execution = await session.callTool(ctx.toolName, ctx.arguments ?? {});
let cancelling = false;
const { outcome } = await execution.settle({
  onEvent: async (event) => {
    if (ctx.cancel && !cancelling && event.type === "task" && event.task.status === "working") {
      cancelling = true;
      await execution.cancel();
    }
  },
});
if (outcome.status === "failed") {
  report({ status: "failed", isError: false, error: { code: outcome.error.code ?? null, message: outcome.error.message } });
} else if (outcome.status === "completed") {
  report({ status: "completed", isError: resultFromTaskOutcome(outcome).isError === true, error: null });
} else {
  report({ status: outcome.status, isError: false, error: null });
}
await session.close();
await client.close();
