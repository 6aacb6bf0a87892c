#!/usr/bin/env node
// Interop target: mcp-framework 0.2.22 with its own task manager (legacy 2025-11-25 wire:
// params.task, tasks/get, tasks/result, tasks/list, tasks/cancel), over its stdio transport.
//
// Usage:
//   node mcp_framework_server.mjs            (stdio; the framework's default transport)
//
// The smallest server a user writes with the framework: MCPServer with `tasks: {enabled: true}`
// and MCPTool subclasses registered with addTool() (the framework would otherwise load them from
// dist/tools). mcp-framework handles params.task and every tasks/* method itself
// (dist/core/MCPServer.js, dist/core/TaskManager.js); the SDK underneath gets no task store.
//
// Tools:
//   greet             no `execution` (forbidden): answers at once
//   slow_compute      execution.taskSupport "optional": sleeps `seconds`, then completes
//   required_compute  execution.taskSupport "required": the same body
//   failing_job       execution.taskSupport "optional": execute() throws; MCPTool.toolCall turns
//                     that into an isError CallToolResult
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { MCPServer, MCPTool } from "mcp-framework";

// The framework's schemas are zod 3 (its dependency and peer: "zod": "3.x"), which it checks
// with `instanceof`; this directory's own zod is 4, so take the framework's, as a project that
// depends on mcp-framework would have it: its ESM entry (the one the framework imports; the
// CommonJS build would be other classes).
const frameworkRequire = createRequire(fileURLToPath(import.meta.resolve("mcp-framework")));
const zodDir = dirname(frameworkRequire.resolve("zod/package.json"));
const { z } = await import(pathToFileURL(join(zodDir, "index.js")).href);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const secondsSchema = z.object({
  seconds: z.number().optional().describe("How long the work takes, in seconds (default 1)"),
});

class Greet extends MCPTool {
  name = "greet";
  description = "Greets someone at once";
  schema = z.object({ name: z.string().describe("Who to greet") });
  async execute(input) {
    return `hello ${input.name}`;
  }
}

class SlowCompute extends MCPTool {
  name = "slow_compute";
  description = "Works for `seconds` seconds, then answers";
  schema = secondsSchema;
  execution = { taskSupport: "optional" };
  async execute(input) {
    const seconds = input.seconds ?? 1;
    await sleep(seconds * 1000);
    return `computed after ${seconds}s`;
  }
}

class RequiredCompute extends SlowCompute {
  name = "required_compute";
  description = "Works for `seconds` seconds; only as a task";
  execution = { taskSupport: "required" };
}

class FailingJob extends MCPTool {
  name = "failing_job";
  description = "Works briefly, then throws";
  schema = z.object({});
  execution = { taskSupport: "optional" };
  async execute() {
    await sleep(200);
    throw new Error("boom");
  }
}

const server = new MCPServer({
  name: "mcp-framework-interop",
  version: "0.0.0",
  // No tools/, prompts/, resources/ or apps/ beside this file: everything is added below.
  basePath: dirname(fileURLToPath(import.meta.url)),
  transport: { type: "stdio" },
  // The framework's default poll interval is 5000 ms; 200 keeps the runs short.
  tasks: { enabled: true, defaultPollInterval: 200 },
});
for (const Tool of [Greet, SlowCompute, RequiredCompute, FailingJob]) {
  server.addTool(Tool);
}
server.start();
