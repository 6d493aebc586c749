/**
 * The `cfgtool` command tree. Each command group lives in its own module under
 * lib/cli/ and registers itself here. lib/cli/dispatch.ts loads this module
 * (and with it commander) on demand: a plain `resolve` never does. The
 * tree itself loads no command's work: what a command needs from the layers
 * below (workspace/, flags/, client/, auth/, closure/, server.ts) is
 * imported inside its action, each such import marked `// lazy:`; lib/cli/
 * modules and lib/errors.ts, which add nothing to load, are imported
 * statically.
 *
 * @module
 */
import { Command } from "commander";
import { versionText } from "../version.ts";
import { registerWorkspaceCommands } from "./workspace.ts";
import { registerServeCommand } from "./serve.ts";
import { registerRelayCommand } from "./relay.ts";
import { registerFlagsCommands } from "./flags.ts";
import { registerRemoteCommands } from "./remote.ts";
import { registerAuditCommands } from "./audit.ts";
import { registerWebhookCommands } from "./webhook.ts";
import { registerChangeCommands } from "./change.ts";
import { registerLoginCommands } from "./login.ts";
import { registerWatchCommand } from "./watch.ts";
import { registerCompletionsCommand } from "./completions.ts";
import { registerImportCommand } from "./import.ts";
import { registerExportCommand } from "./export.ts";
import { registerMcpCommand } from "./mcp.ts";

/**
 * Builds the command tree. Commander is told not to call `process.exit`;
 * errors propagate to {@linkcode runCli}.
 *
 * @example
 * ```ts
 * import { buildProgram } from "./program.ts";
 * const program = buildProgram();
 * if (program.name() !== "cfgtool") throw new Error();
 * ```
 */
export function buildProgram(): Command {
  const program = new Command()
    .name("cfgtool")
    .description(
      "Reviewed configuration and feature flags: a workspace tool (init, lint, resolve) " +
        "and a multi-tenant flag service (serve) with its clients.",
    )
    .version(
      versionText(),
      "-V, --version",
      "print the cfgtool version, the build's commit (when known) and the Deno version",
    )
    .showHelpAfterError("(run with --help for usage)")
    // `pull --version 3` is the command's option, not the program's -V/--version
    .enablePositionalOptions()
    .exitOverride();
  registerWorkspaceCommands(program);
  registerServeCommand(program);
  registerRelayCommand(program);
  registerFlagsCommands(program);
  registerRemoteCommands(program);
  registerAuditCommands(program);
  registerWebhookCommands(program);
  registerChangeCommands(program);
  registerLoginCommands(program);
  registerWatchCommand(program);
  registerMcpCommand(program);
  registerCompletionsCommand(program);
  registerImportCommand(program);
  registerExportCommand(program);
  overrideExits(program as unknown as Command);
  tidyHelp(program as unknown as Command);
  return program as unknown as Command;
}

/** Makes every command, at any depth, throw instead of calling process.exit. */
function overrideExits(cmd: Command): void {
  for (const sub of cmd.commands) {
    sub.exitOverride();
    overrideExits(sub as unknown as Command);
  }
}

/**
 * Lets commander wrap descriptions to the terminal: single line breaks in a
 * description become spaces (blank lines stay paragraph breaks), and the
 * command lists show each command's first sentence only.
 */
function tidyHelp(cmd: Command): void {
  for (const sub of cmd.commands) {
    const text = sub.description().replace(/([^\n])\n(?!\n)/g, "$1 ");
    sub.description(text);
    if (!sub.summary()) {
      sub.summary(/^.*?\.(?=\s|$)/s.exec(text)?.[0] ?? text);
    }
    tidyHelp(sub as unknown as Command);
  }
}
