/**
 * The client side of the control plane on the command line: `push`, `pull`,
 * `tenant`, `namespace`, `token` (over HTTP, with `--server` / `--token`) and
 * `admin` (on the server host, on the KV store directly).
 *
 * @module
 */
import type { Command } from "commander";
import { registerAdminCommands } from "./admin.ts";
import { registerNamespaceCommands } from "./namespace.ts";
import { registerPullCommand } from "./pull.ts";
import { registerPushCommand } from "./push.ts";
import { registerTenantCommands } from "./tenant.ts";
import { registerTokenCommands } from "./token.ts";

/**
 * Registers push, pull, tenant, namespace, token and admin on the program.
 * It also turns on commander's positional options, so that a subcommand's
 * own `--version <n>` (`pull`, `namespace rollback`) is not taken for the
 * program's `--version` flag; program options then go before the
 * subcommand (`cfgtool --version` is unchanged).
 *
 * @param program the root command
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerRemoteCommands } from "./remote.ts";
 * const program = new Command();
 * registerRemoteCommands(program);
 * const names = program.commands.map((c) => c.name());
 * if (!names.includes("push") || !names.includes("admin")) throw new Error(names.join());
 * ```
 */
export function registerRemoteCommands(program: Command): void {
  registerPushCommand(program);
  registerPullCommand(program);
  registerTenantCommands(program);
  registerNamespaceCommands(program);
  registerTokenCommands(program);
  registerAdminCommands(program);
}
