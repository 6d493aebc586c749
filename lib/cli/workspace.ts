/**
 * The workspace commands of `cfgtool`: `init`, `lint` and `resolve`
 * (spec/workspace.md, "Command line"). Each action imports its library
 * module lazily, so `cfgtool --help` stays fast. Errors propagate to
 * lib/cli/exit.ts, which owns exit statuses and stderr.
 *
 * @module
 */
import type { Command } from "commander";
import { collectContext, CONTEXT_FLAG, CONTEXT_HELP } from "./context_option.ts";

const EXIT_CODES = "\nExit status: 0 success; 1 lint problems or unresolvable variable; " +
  "2 usage error (bad flags, missing workspace).\n";

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * Registers `init`, `lint` and `resolve` on the command tree.
 *
 * @param program the root `cfgtool` command
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerWorkspaceCommands } from "./workspace.ts";
 * const program = new Command();
 * registerWorkspaceCommands(program);
 * const names = program.commands.map((c) => c.name());
 * if (!["init", "lint", "resolve"].every((n) => names.includes(n))) throw new Error();
 * ```
 */
export function registerWorkspaceCommands(program: Command): void {
  program
    .command("init")
    .description(
      "Create workspace files: a variable, a catalog (definition, entry schema skeleton and a\n" +
        "`default` entry), or the context contract schemas/context.schema.json.\n" +
        "Variable and catalog files are never overwritten; the context contract is generated\n" +
        "and is rewritten by --context. A missing context contract is written along with a\n" +
        "new variable or catalog, so a new workspace lints clean.",
    )
    .argument("<workspace>", "workspace directory (created when missing)")
    .option("--variable <name>", "create variables/<name>.toml")
    .option(
      "--type <type>",
      "type of the new variable, catalog:<catalog_name>\n" +
        "(default: the catalog created by the same command, else catalog:<variable name>)",
    )
    .option(
      "--catalog <name>",
      "create catalogs/<name>.toml, schemas/<name>.schema.json and\ncatalogs/<name>-entries/default.toml",
    )
    .option("--context", "(re)generate schemas/context.schema.json from the qualifiers")
    .addHelpText(
      "after",
      "\nExamples:\n" +
        "  cfgtool init ./config --catalog delivery --variable delivery\n" +
        "  cfgtool init ./config --variable digest-policy --type catalog:delivery\n" +
        "  cfgtool init ./config --context\n" + EXIT_CODES,
    )
    .action(async (workspace, opts) => {
      const { initWorkspace } = await import("../workspace/init.ts");
      const r = await initWorkspace(workspace, {
        ...(opts.variable === undefined ? {} : { variable: opts.variable }),
        ...(opts.type === undefined ? {} : { type: opts.type }),
        ...(opts.catalog === undefined ? {} : { catalog: opts.catalog }),
        ...(opts.context === true ? { context: true } : {}),
      });
      for (const p of r.written) console.log(`wrote ${p}`);
      for (const p of r.unchanged) console.log(`unchanged ${p}`);
      for (const n of r.notes) console.log(`note: ${n}`);
    });

  program
    .command("lint")
    .description(
      "Check a workspace: file layout, TOML syntax, fields and schema_version, catalog entries\n" +
        "against their JSON Schema (draft 2020-12), references between files (catalogs,\n" +
        "entries, qualifiers), qualifier cycles, and the context contract on disk.\n" +
        "Every problem is printed to stderr, one a line, then a count.",
    )
    .argument("<workspace>", "workspace directory")
    .addHelpText(
      "after",
      "\nProblem lines:\n" +
        "  <path>:<line>:<col>: <message>      syntax errors (TOML, JSON)\n" +
        "  <path>: <key path>: <message>       field, schema and reference errors\n" +
        "\nExamples:\n  cfgtool lint ./config\n" + EXIT_CODES,
    )
    .action(async (workspace) => {
      const { lintWorkspace } = await import("../workspace/lint.ts");
      const { ProblemsError } = await import("../errors.ts");
      const { problems, counts } = await lintWorkspace(workspace);
      if (problems.length > 0) throw new ProblemsError(problems);
      console.log(
        `ok: ${plural(counts.variables, "variable")}, ${plural(counts.catalogs, "catalog")}, ` +
          `${plural(counts.entries, "entry", "entries")}, ${
            plural(counts.qualifiers, "qualifier")
          }`,
      );
    });

  program
    .command("resolve")
    .description(
      "Resolve a variable against a context: the first rule whose qualifier is true selects\n" +
        "its entry, else the default entry. Prints `value key: <key>` and\n" +
        "`value: <entry as one-line JSON>`, or one JSON object with --json.",
    )
    .argument("<workspace>", "workspace directory")
    .requiredOption("--variable <name>", "the variable to resolve")
    .option(
      CONTEXT_FLAG,
      CONTEXT_HELP,
      collectContext,
      [] as string[],
    )
    .option("--json", "print {value_key, value, source_fingerprint} as one JSON object")
    .addHelpText(
      "after",
      "\nExamples:\n" +
        "  cfgtool resolve ./config --variable notification-delivery-policy \\\n" +
        "    --context notification.kind=security_alert --context account.plan=standard\n" +
        "  cfgtool resolve ./config --variable notification-delivery-policy --json \\\n" +
        "    --context account.plan=enterprise --context incident.active=true \\\n" +
        "    --context notification.kind=incident_update\n" + EXIT_CODES,
    )
    .action(async (workspace, opts) => {
      const { parseContextArgs } = await import("../workspace/context_args.ts");
      const context = parseContextArgs(opts.context);
      const { openWorkspace } = await import("../workspace/open.ts");
      const ws = await openWorkspace(workspace);
      const r = await ws.resolveVariable(opts.variable, context);
      if (opts.json === true) {
        console.log(JSON.stringify({
          value_key: r.value_key,
          value: r.value,
          source_fingerprint: ws.sourceFingerprint(),
        }));
      } else {
        console.log(`value key: ${r.value_key}`);
        console.log(`value: ${JSON.stringify(r.value)}`);
      }
    });
}
