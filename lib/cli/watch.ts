/**
 * `cfgtool watch <dir> --ns <slug:flags> …`: the agent that mirrors each
 * subscribed namespace's verified closure into `<dir>/<slug>/`
 * (lib/client/watch_agent.ts). Runs until SIGINT or SIGTERM (exit 0) or a
 * fatal error (exit 1).
 *
 * @module
 */
import type { Command } from "commander";
import { UsageError } from "../errors.ts";
import { resolveRemote, withRemoteOptions } from "./remote_options.ts";

/**
 * Registers `watch`.
 *
 * @param program the root command
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerWatchCommand } from "./watch.ts";
 * const program = new Command();
 * registerWatchCommand(program);
 * if (!program.commands.some((c) => c.name() === "watch")) throw new Error();
 * ```
 */
export function registerWatchCommand(program: Command): void {
  withRemoteOptions(
    program
      .command("watch")
      .description(
        "Subscribe to the event stream and mirror each namespace's verified closure into\n" +
          "<dir>/<slug>/ (replaced atomically: a symbolic link swapped by rename), with a\n" +
          "status file. Every change passes the integrity checks of the stream protocol\n" +
          "before it is written. Runs until interrupted; reconnects after server restarts.",
      )
      .argument("<dir>", "mirror directory (created if missing)"),
  )
    .option(
      "--ns <slug:flags>",
      "a namespace and its flags (* or comma-separated keys), repeatable; write " +
        "<tenant>/<slug>:<flags> with credentials bound to no tenant",
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    .option("--tenant <slug>", "tenant of the namespaces (default: learned from the stream)")
    .option("--status-file <path>", "status JSON (default: <dir>/.cfgtool-watch.json)")
    .option(
      "--ready-timeout <ms>",
      "exit 1 when not every namespace arrived in time (default: wait)",
    )
    .addHelpText(
      "after",
      "\nOutput: one line per applied closure on stdout,\n" +
        "  <time> applied <slug> v<version> <closure hash> (<delivery>, <n> files changed)\n" +
        "and one line per failure on stderr, in plain words, e.g.\n" +
        "  <time> event stream interrupted: the connection to the server was lost; reconnecting in 0.2 s\n" +
        "The status file says connected true/false, disconnected_at and, once the agent\n" +
        "has exited, stopped_at.\n\n" +
        "Exit status:\n" +
        "  0  stopped by SIGINT or SIGTERM\n" +
        "  1  fatal error: 401/403, a rejected subscription, protocol_downgrade\n" +
        "  2  usage error\n\n" +
        "Examples:\n" +
        "  cfgtool watch /var/lib/flags --server https://flags.example.com --ns checkout:*\n" +
        "  cfgtool watch ./flags --ns web:dark-mode,new-checkout --ns api:* --status-file ./flags.json\n",
    )
    .action(async (dir: string, opts) => {
      const remote = resolveRemote(opts);
      const namespaces = opts.ns ?? [];
      if (namespaces.length === 0) {
        throw new UsageError("watch needs at least one --ns <slug>:<flags>");
      }
      let readyTimeout: number | undefined;
      if (opts.readyTimeout !== undefined) {
        readyTimeout = Number(opts.readyTimeout);
        if (!Number.isInteger(readyTimeout) || readyTimeout <= 0) {
          throw new UsageError(
            `--ready-timeout must be a positive integer, not "${opts.readyTimeout}"`,
          );
        }
      }
      const info = await Deno.stat(dir).catch(() => null);
      if (info !== null && !info.isDirectory) {
        throw new UsageError(`${dir} exists and is not a directory: give watch a mirror directory`);
      }
      // lazy: the agent (SSE, closure archives, flag engine) loads only when watch runs
      const { WatchAgent } = await import("../client/watch_agent.ts");
      const agent = new WatchAgent({
        dir,
        server: remote.server,
        token: remote.token,
        namespaces,
        ...(opts.tenant ? { tenant: opts.tenant } : {}),
        ...(opts.statusFile ? { statusFile: opts.statusFile } : {}),
      });
      const stop = () => void agent.close();
      Deno.addSignalListener("SIGINT", stop);
      Deno.addSignalListener("SIGTERM", stop);
      try {
        await agent.start();
        if (readyTimeout !== undefined) {
          try {
            await agent.client.ready(readyTimeout);
          } catch (err) {
            await agent.close();
            if ((err as { code?: string }).code === "client_closed") return; // interrupted
            throw err;
          }
        }
        await agent.done();
      } finally {
        Deno.removeSignalListener("SIGINT", stop);
        Deno.removeSignalListener("SIGTERM", stop);
      }
    });
}
