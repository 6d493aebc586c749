/**
 * The workspace commands of `cfgtool`: `init`, `lint` and `resolve`
 * (docs/workspace.md). Each action imports its library
 * module lazily, so `cfgtool --help` stays fast. `resolve`'s action is
 * lib/cli/resolve_action.ts, which plain invocations reach without
 * commander (lib/cli/dispatch.ts). Errors propagate to
 * lib/cli/exit.ts, which owns exit statuses and stderr.
 *
 * @module
 */
import type { Command } from "commander";
import { CfgtoolError, type Problem, ProblemsError } from "../errors.ts";
import { collectContext, CONTEXT_FLAG, CONTEXT_HELP } from "./context_option.ts";
import * as out from "./problem_output.ts";

const INIT_EXIT = "\nExit status: 0 files written or already up to date; 1 a file to create " +
  "already exists, or qualifier problems prevent generating the context contract; 2 usage " +
  "error (bad flags or names, none of --variable, --catalog and --context).\n";
const LINT_EXIT = "\nExit status: 0 no problems; 1 problems found; 2 usage error (bad flags, " +
  "missing workspace).\n";
const RESOLVE_CACHE = "\nEntry schemas: what Ajv accepted is remembered in " +
  "$XDG_CACHE_HOME/cfgtool/schema-verdicts (else ~/.cache/cfgtool/schema-verdicts), by the exact " +
  "schema texts and entry values, so resolving unchanged files again skips loading Ajv; anything " +
  "not remembered is checked again. Deleting the directory is always safe.\n";
const RESOLVE_EXIT = "\nExit status: 0 resolved; 1 unknown variable, or the workspace has " +
  "problems (run lint); 2 usage error (bad flags or --context, missing workspace).\n";
const PATHS_NOTE = "Problem paths are relative to the current directory, so an editor can open " +
  "them whichever directory is checked.\n";

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
      "type of the new variable, catalog:<catalog_name> " +
        "(default: the catalog created by the same command, else catalog:<variable name>)",
    )
    .option(
      "--catalog <name>",
      "create catalogs/<name>.toml, schemas/<name>.schema.json and catalogs/<name>-entries/default.toml",
    )
    .option("--context", "(re)generate schemas/context.schema.json from the qualifiers")
    .option(
      "--json",
      "print {ok, problems, summary, workspace, written, unchanged, notes} as one JSON object",
    )
    .addHelpText(
      "after",
      "\nExamples:\n" +
        "  cfgtool init ./config --catalog delivery --variable delivery\n" +
        "  cfgtool init ./config --variable digest-policy --type catalog:delivery\n" +
        "  cfgtool init ./config --context\n" +
        "\nPaths after wrote and unchanged are relative to the workspace. " + PATHS_NOTE +
        INIT_EXIT,
    )
    .action(async (workspace, opts) => {
      // lazy: the workspace loader (TOML, ajv, re2js, semver) loads only for workspace commands
      const { initWorkspace } = await import("../workspace/init.ts");
      const run = () =>
        out.rebasingProblems(workspace, () =>
          initWorkspace(workspace, {
            ...(opts.variable === undefined ? {} : { variable: opts.variable }),
            ...(opts.type === undefined ? {} : { type: opts.type }),
            ...(opts.catalog === undefined ? {} : { catalog: opts.catalog }),
            ...(opts.context === true ? { context: true } : {}),
          }));
      if (opts.json !== true) {
        const r = await run();
        for (const p of r.written) console.log(`wrote ${p}`);
        for (const p of r.unchanged) console.log(`unchanged ${p}`);
        for (const n of r.notes) console.log(`note: ${n}`);
        return;
      }
      let problems: Problem[] = [];
      let result = { written: [] as string[], unchanged: [] as string[], notes: [] as string[] };
      try {
        result = await run();
      } catch (err) {
        if (err instanceof ProblemsError) problems = err.problems;
        else if (err instanceof CfgtoolError && err.code === "file_exists") {
          const paths = (err.details?.paths ?? []) as string[];
          problems = paths.map((p) => ({
            path: out.displayPath(workspace, p),
            message: "already exists; init never overwrites files",
          }));
        } else throw err;
      }
      const ok = problems.length === 0;
      out.printJsonReport({
        ok,
        problems: problems.map(out.jsonProblem),
        summary: ok
          ? `wrote ${plural(result.written.length, "file")}, ${result.unchanged.length} unchanged`
          : out.problemCount(problems.length),
        workspace,
        ...result,
      });
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
    .option("--json", "print {ok, problems, summary, workspace, counts} as one JSON object")
    .addHelpText(
      "after",
      "\nProblem lines:\n" +
        "  <path>:<line>:<col>: <message>      syntax errors (TOML, JSON)\n" +
        "  <path>: <key path>: <message>       field, schema and reference errors\n" +
        PATHS_NOTE +
        "Ignored: *.md, LICENSE* and names starting with . (documentation beside the workspace).\n" +
        "\n--json prints one object on stdout instead: {ok, problems: [{path, line?, column?, " +
        "key?, message}], summary, workspace, counts}; the exit status is the same.\n" +
        "\nExamples:\n  cfgtool lint ./config\n  cfgtool lint ./config --json\n" + LINT_EXIT,
    )
    .action(async (workspace, opts) => {
      // lazy: the workspace loader (TOML, ajv, re2js, semver) loads only for workspace commands
      const { lintWorkspace } = await import("../workspace/lint.ts");
      const report = await lintWorkspace(workspace);
      const problems = out.problemsFromCwd(workspace, report.problems);
      const { counts } = report;
      const summary = problems.length > 0
        ? out.problemCount(problems.length)
        : `ok: ${plural(counts.variables, "variable")}, ${plural(counts.catalogs, "catalog")}, ` +
          `${plural(counts.entries, "entry", "entries")}, ${
            plural(counts.qualifiers, "qualifier")
          }`;
      if (opts.json === true) {
        out.printJsonReport({
          ok: problems.length === 0,
          problems: problems.map(out.jsonProblem),
          summary,
          workspace,
          counts,
        });
        return;
      }
      if (problems.length > 0) throw new ProblemsError(problems);
      console.log(summary);
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
        "    --context notification.kind=incident_update\n" + RESOLVE_CACHE + RESOLVE_EXIT,
    )
    .action(async (workspace, opts) => {
      // lazy: the workspace loader (TOML, re2js, semver; Ajv only without cached verdicts)
      const { runResolve } = await import("./resolve_action.ts");
      await runResolve(workspace, opts);
    });
}
