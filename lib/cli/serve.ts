/**
 * `cfgtool serve`: runs the flag service until SIGINT or SIGTERM.
 *
 * @module
 */
import type { Command } from "commander";
import { UsageError } from "../errors.ts";

/**
 * Registers `serve` on the command tree.
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerServeCommand } from "./serve.ts";
 * const program = new Command();
 * registerServeCommand(program);
 * if (!program.commands.some((c) => c.name() === "serve")) throw new Error();
 * ```
 */
export function registerServeCommand(program: Command): void {
  program
    .command("serve")
    .description("Run the flag service (HTTP on Deno.serve, state in Deno KV).")
    .option("--port <port>", "port to listen on; 0 picks a free one", "8080")
    .option("--hostname <host>", "address to listen on", "127.0.0.1")
    .option(
      "--kv <location>",
      "KV store: a file path (embedded SQLite), :memory:, or a KV Connect URL\n" +
        "(http(s)://…, token in DENO_KV_ACCESS_TOKEN)",
      Deno.env.get("CFGTOOL_KV") ?? "./cfgtool-data/kv.sqlite3",
    )
    .option(
      "--token-key-file <path>",
      "HMAC key that digests service tokens (default: token.key beside the KV file,\n" +
        "created with mode 0600 when absent; required with a KV Connect URL)",
      Deno.env.get("CFGTOOL_TOKEN_KEY_FILE"),
    )
    .addHelpText(
      "after",
      "\nExamples:\n  cfgtool serve\n  cfgtool serve --port 0 --kv :memory:\n" +
        "  cfgtool serve --hostname 0.0.0.0 --kv /var/lib/cfgtool/kv.sqlite3\n",
    )
    .action(async (opts) => {
      const port = Number(opts.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        throw new UsageError(`--port must be an integer from 0 to 65535, not "${opts.port}"`);
      }
      const { serve } = await import("../../server.ts");
      const ac = new AbortController();
      const stop = () => ac.abort();
      Deno.addSignalListener("SIGINT", stop);
      Deno.addSignalListener("SIGTERM", stop);
      try {
        await serve({
          kv: opts.kv,
          ...(opts.tokenKeyFile ? { tokenKeyFile: opts.tokenKeyFile } : {}),
          hostname: opts.hostname,
          port,
          signal: ac.signal,
          onListen: ({ hostname, port }) =>
            console.log(`cfgtool listening on http://${hostname}:${port}`),
        });
      } finally {
        Deno.removeSignalListener("SIGINT", stop);
        Deno.removeSignalListener("SIGTERM", stop);
      }
    });
}
