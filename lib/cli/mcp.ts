/**
 * `cfgtool mcp`: a Model Context Protocol server over stdio for agent hosts
 * (lib/mcp/server.ts). It is a client of a cfgtool service, with the
 * credential the other remote commands use (`--token`, `CFGTOOL_TOKEN`,
 * the session `cfgtool login` saved), and runs until the host closes its
 * stdin. Stdout carries protocol messages only.
 *
 * @module
 */
import type { Command } from "commander";
import { resolveRemote, withRemoteOptions } from "./remote_options.ts";

const HELP_AFTER = "\nTools: list_tenants, list_namespaces, list_flags, get_flag, evaluate, " +
  "list_versions, diff_versions, read_audit, list_change_requests, get_change_request (read " +
  "only), and propose_change, which opens a change request and never commits: a person " +
  "approves and applies it.\n\n" +
  "An agent host starts it; for example, in a host's JSON configuration:\n" +
  '  {"command": "cfgtool", "args": ["mcp", "--server", "https://flags.example.com"],\n' +
  '   "env": {"CFGTOOL_TOKEN": "svc_write_…"}}\n\n' +
  "Examples:\n" +
  "  CFGTOOL_TOKEN=svc_write_… cfgtool mcp --server https://flags.example.com\n" +
  "  cfgtool mcp --server https://flags.example.com --tenant acme --namespace checkout\n";

/**
 * Registers `mcp`.
 *
 * @param program the root command
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerMcpCommand } from "./mcp.ts";
 * const program = new Command();
 * registerMcpCommand(program);
 * const mcp = program.commands.find((c) => c.name() === "mcp");
 * if (!mcp?.options.some((o) => o.long === "--server")) throw new Error();
 * ```
 */
export function registerMcpCommand(program: Command): void {
  withRemoteOptions(
    program
      .command("mcp")
      .description(
        "Serve the Model Context Protocol over stdio, for AI agents: read namespaces and flags " +
          "(rules in words), evaluate and explain, read versions, diffs and the audit log, and " +
          "propose changes as change requests that a person approves. Uses the credential of " +
          "the other remote commands; runs until its stdin closes.",
      ),
  )
    .option("--tenant <slug>", "the tenant a tool call may leave out")
    .option("--namespace <slug>", "the namespace a tool call may leave out")
    .addHelpText("after", HELP_AFTER)
    .action(async (opts) => {
      const remote = resolveRemote(opts);
      // lazy: the MCP SDK and the tools load only for this command
      const { startMcp } = await import("../mcp/server.ts");
      await startMcp(remote, { tenant: opts.tenant, namespace: opts.namespace });
    });
}
