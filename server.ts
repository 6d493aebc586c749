/**
 * The flag service: `createServer(options)` builds the request handler over an
 * opened KV; `serve(options)` binds the port, opens the KV and serves HTTP with
 * connection limits. Both live in lib/server/; this file re-exports them.
 * Also runnable directly: `deno run -A --unstable-kv server.ts --port 8080`.
 *
 * @module
 */
export { createServer, type FlagServer, type ServerOptions } from "./lib/server/create.ts";
export { serve, type ServeOptions } from "./lib/server/serve.ts";

if (import.meta.main) {
  const { runCli } = await import("./cli.ts");
  Deno.exit(await runCli(["serve", ...Deno.args]));
}
