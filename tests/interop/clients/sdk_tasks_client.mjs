// Harness: @modelcontextprotocol/sdk 1.32.2 Client, its experimental task API, on 2025-11-25.
// Follows the client-harness convention of `tasks-conformance client` (URL last, context in the env).
//
// listTools() first, so the client knows each tool's taskSupport; callToolStream() then decides
// on params.task itself and follows the task; a cancel goes through cancelTask(), the API's way, a
// listing (listTasks in the context) through listTasks(cursor). Asked to host tasks (hostsTasks),
// the client gets a task store and declares tasks.list and tasks.cancel, as a user whose client
// accepts task-augmented requests configures it; the SDK then serves both itself.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const url = process.argv.at(-1);
const ctx = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");
const report = (o) => console.log("TASKS-CONFORMANCE-OUTCOME " + JSON.stringify(o));

const hosting = ctx.hostsTasks ? { taskStore: new InMemoryTaskStore() } : {};
const capabilities = ctx.hostsTasks ? { elicitation: {}, tasks: { list: {}, cancel: {} } } : { elicitation: {} };
const client = new Client({ name: "sdk-tasks-harness", version: "1.32.2" }, { capabilities, ...hosting });
client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { colour: "blue" } }));
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
await client.listTools();

let status = "unknown";
let cancelling = false;
let outcome = { status: "abandoned", isError: false, error: null };
for await (const m of client.experimental.tasks.callToolStream({ name: ctx.toolName, arguments: ctx.arguments ?? {} })) {
  if (m.type === "taskCreated" || m.type === "taskStatus") {
    status = m.task.status;
    if (ctx.listTasks && m.type === "taskCreated") {
      // Page by page through the API, each nextCursor handed back as listTasks() returned it.
      let cursor;
      for (let page = 0; page < 10; page++) {
        ({ nextCursor: cursor } = await client.experimental.tasks.listTasks(cursor));
        if (typeof cursor !== "string") break;
      }
    }
    if (ctx.cancel && !cancelling && status === "working") {
      cancelling = true;
      // What a user would see of a refused cancel; the task is then followed on to its end.
      await client.experimental.tasks.cancelTask(m.task.taskId).catch((e) => console.error(`cancel: ${e.message}`));
    }
  } else if (m.type === "result") {
    // A result is the end of the call; the status is the last one read if that was terminal.
    const ended = ["completed", "failed", "cancelled"].includes(status);
    outcome = { status: ended ? status : "completed", isError: m.result.isError === true, error: null };
  } else if (m.type === "error") {
    outcome = { status: status === "cancelled" ? "cancelled" : "failed", isError: false,
                error: { code: m.error.code ?? null, message: String(m.error.message) } };
  }
}
report(outcome);
await client.close();
