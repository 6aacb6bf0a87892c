#!/usr/bin/env node
// Interop target: @modelcontextprotocol/sdk 1.x with its experimental tasks
// (legacy 2025-11-25 wire: params.task, tasks/get, tasks/result, tasks/list, tasks/cancel).
//
// Usage:
//   node sdk_tasks_server.mjs stdio
//   node sdk_tasks_server.mjs http [--port 0]
//
// HTTP binds 127.0.0.1 only. The first line on stdout is
//   LISTENING http://127.0.0.1:<port>/mcp
// Every HTTP session gets its own McpServer; all sessions share one in-memory
// task store and message queue (the store scopes tasks to the session that
// created them).
//
// Tools:
//   greet             taskSupport absent (forbidden): answers at once
//   slow_compute      taskSupport "optional": sleeps `seconds`, then completes
//   required_compute  taskSupport "required": same body, only as a task
//   failing_job       taskSupport "optional": the background work throws; the task
//                     ends "failed" with an isError CallToolResult stored as its result
//   confirm_delete    taskSupport "optional": after `delay` s (default 0.2) asks the
//                     client to confirm through elicitation/create, delivered on the
//                     tasks/result stream
import http from "node:http";
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ElicitResultSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  InMemoryTaskMessageQueue,
  InMemoryTaskStore,
} from "@modelcontextprotocol/sdk/experimental/tasks";

const DEFAULT_TTL_MS = 60_000;
const POLL_INTERVAL_MS = 200;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Run `work` in the background for a freshly created task and record its outcome.
function runInBackground(taskId, taskStore, work) {
  (async () => {
    try {
      const result = await work();
      await taskStore.storeTaskResult(taskId, "completed", result);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      try {
        await taskStore.storeTaskResult(taskId, "failed", {
          content: [{ type: "text", text: message }],
          isError: true,
        });
      } catch (storeError) {
        // The task may have been cancelled (terminal) meanwhile.
        console.error(`task ${taskId}: could not store failure: ${storeError}`);
      }
    }
  })();
}

function taskTool(work) {
  return {
    createTask: async (args, extra) => {
      const task = await extra.taskStore.createTask({
        ttl: extra.taskRequestedTtl ?? DEFAULT_TTL_MS,
        pollInterval: POLL_INTERVAL_MS,
      });
      runInBackground(task.taskId, extra.taskStore, () => work(args, extra, task.taskId));
      return { task };
    },
    getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (_args, extra) => extra.taskStore.getTaskResult(extra.taskId),
  };
}

function createServer(taskStore, taskMessageQueue) {
  const server = new McpServer(
    { name: "sdk-tasks-interop", version: "0.0.0" },
    {
      capabilities: {
        tools: {},
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      },
      taskStore,
      taskMessageQueue,
    },
  );

  server.registerTool(
    "greet",
    { description: "Synchronous tool with no task support.", inputSchema: { name: z.string().optional() } },
    async ({ name }) => ({ content: [{ type: "text", text: `Hello, ${name ?? "world"}!` }] }),
  );

  const compute = async ({ seconds }) => {
    await sleep(Math.round((seconds ?? 0.5) * 1000));
    return { content: [{ type: "text", text: `computed after ${seconds ?? 0.5}s` }] };
  };

  server.experimental.tasks.registerToolTask(
    "slow_compute",
    {
      description: "Sleeps, then answers. May run as a task.",
      inputSchema: { seconds: z.number().optional() },
      execution: { taskSupport: "optional" },
    },
    taskTool(compute),
  );

  server.experimental.tasks.registerToolTask(
    "required_compute",
    {
      description: "Sleeps, then answers. Only runs as a task.",
      inputSchema: { seconds: z.number().optional() },
      execution: { taskSupport: "required" },
    },
    taskTool(compute),
  );

  server.experimental.tasks.registerToolTask(
    "failing_job",
    {
      description: "Background work that throws.",
      inputSchema: { message: z.string().optional() },
      execution: { taskSupport: "optional" },
    },
    taskTool(async ({ message }) => {
      await sleep(50);
      throw new Error(message ?? "boom");
    }),
  );

  server.experimental.tasks.registerToolTask(
    "confirm_delete",
    {
      description: "Asks the client to confirm (elicitation) before answering.",
      inputSchema: { filename: z.string().optional(), delay: z.number().optional() },
      execution: { taskSupport: "optional" },
    },
    taskTool(async ({ filename, delay }, extra, taskId) => {
      const name = filename ?? "demo.txt";
      // Work a little before asking, so the CreateTaskResult reliably shows "working".
      // With delay 0 (no await at all) the SDK's InMemoryTaskStore hands back its live
      // task object, which the elicitation below flips to input_required before the
      // CreateTaskResult is serialized.
      if (delay !== 0) await sleep(Math.round((delay ?? 0.2) * 1000));
      // Queued on the task's message queue (status becomes input_required) and
      // delivered to the client on its tasks/result stream.
      const answer = await extra.sendRequest(
        {
          method: "elicitation/create",
          params: {
            message: `Delete ${name}?`,
            requestedSchema: {
              type: "object",
              properties: { confirm: { type: "boolean" } },
              required: ["confirm"],
            },
          },
        },
        ElicitResultSchema,
        { relatedTask: { taskId } },
      );
      await extra.taskStore.updateTaskStatus(taskId, "working");
      if (answer.action === "accept" && answer.content?.confirm === true) {
        return { content: [{ type: "text", text: `deleted ${name}` }] };
      }
      return { content: [{ type: "text", text: `kept ${name} (action=${answer.action})` }] };
    }),
  );

  return server;
}

function parseArgs(argv) {
  const [transport, ...rest] = argv;
  let port = 0;
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === "--port") port = Number(rest[++i]);
  }
  if (transport !== "stdio" && transport !== "http") {
    console.error("usage: sdk_tasks_server.mjs stdio | http [--port N]");
    process.exit(2);
  }
  return { transport, port };
}

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text) return undefined;
  return JSON.parse(text);
}

async function main() {
  const { transport, port } = parseArgs(process.argv.slice(2));
  const taskStore = new InMemoryTaskStore();
  const taskMessageQueue = new InMemoryTaskMessageQueue();

  if (transport === "stdio") {
    const server = createServer(taskStore, taskMessageQueue);
    await server.connect(new StdioServerTransport());
    const shutdown = async () => {
      taskStore.cleanup();
      await server.close();
      process.exit(0);
    };
    process.on("SIGINT", shutdown);
    process.on("SIGTERM", shutdown);
    process.stdin.on("end", shutdown);
    return;
  }

  const transports = new Map();
  const httpServer = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/mcp") {
      res.writeHead(404).end();
      return;
    }
    try {
      const body = req.method === "POST" ? await readJson(req) : undefined;
      const sessionId = req.headers["mcp-session-id"];
      let t = sessionId ? transports.get(sessionId) : undefined;
      if (!t) {
        if (sessionId || req.method !== "POST") {
          res.writeHead(sessionId ? 404 : 400, { "content-type": "application/json" });
          res.end(JSON.stringify({
            jsonrpc: "2.0",
            id: null,
            error: { code: -32000, message: sessionId ? "Session not found" : "Bad Request: no session" },
          }));
          return;
        }
        // No session yet: a new transport; the SDK itself rejects anything but initialize.
        t = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => transports.set(sid, t),
        });
        t.onclose = () => {
          if (t.sessionId) transports.delete(t.sessionId);
        };
        await createServer(taskStore, taskMessageQueue).connect(t);
      }
      await t.handleRequest(req, res, body);
    } catch (error) {
      if (!res.headersSent) {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({
          jsonrpc: "2.0",
          id: null,
          error: { code: -32700, message: `Parse error: ${error instanceof Error ? error.message : error}` },
        }));
      }
    }
  });
  httpServer.listen(port, "127.0.0.1", () => {
    const { port: bound } = httpServer.address();
    process.stdout.write(`LISTENING http://127.0.0.1:${bound}/mcp\n`);
  });
  const shutdown = () => {
    taskStore.cleanup();
    for (const t of transports.values()) t.close().catch(() => {});
    httpServer.close();
    process.exit(0);
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
