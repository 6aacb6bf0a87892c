#!/usr/bin/env node
// Launches @modelcontextprotocol/server-everything's own Streamable HTTP transport
// (dist/transports/streamableHttp.js, unmodified) bound to 127.0.0.1.
//
// The package calls `app.listen(process.env.PORT || 3001, cb)` with no host, so
// it listens on every interface, and it has no option or variable to change that.
// This wrapper pins the host by patching net.Server.prototype.listen before the
// package module loads, sets PORT from --port (0: ephemeral), and prints
//   LISTENING http://127.0.0.1:<port>/mcp
// as the first stdout line. The package's own console.log chatter goes to stderr.
//
// Usage: node everything_http.mjs [--port 0]
import net from "node:net";

let port = 0;
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--port") port = Number(argv[++i]);
}
process.env.PORT = String(port);

// Keep stdout for the LISTENING line only.
console.log = (...args) => console.error(...args);

const HOST = "127.0.0.1";
const originalListen = net.Server.prototype.listen;
net.Server.prototype.listen = function patchedListen(...args) {
  // Only the plain `listen(port[, backlog][, callback])` form needs a host.
  const [first, second] = args;
  const portLike = typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first));
  if (portLike && typeof second !== "string") {
    args = [Number(first), HOST, ...args.slice(1)];
  } else if (first && typeof first === "object" && !Array.isArray(first) && first.host === undefined && first.path === undefined) {
    args = [{ ...first, host: HOST }, ...args.slice(1)];
  }
  this.once("listening", () => {
    const address = this.address();
    if (address && typeof address === "object") {
      process.stdout.write(`LISTENING http://${HOST}:${address.port}/mcp\n`);
    }
  });
  return originalListen.apply(this, args);
};

await import("@modelcontextprotocol/server-everything/dist/transports/streamableHttp.js");
