/**
 * `cfgtool flags …`: commands on flag manifest directories. `flags lint <dir>`
 * validates a namespace manifest on disk with the same validator as the
 * service's PUT and lint endpoints; `flags eval <dir>` evaluates flags of it
 * locally with the service's own engine (`lib/flags/evaluate.ts`).
 *
 * @module
 */
import type { Command } from "commander";
import { collectContext, CONTEXT_FLAG, CONTEXT_HELP } from "./context_option.ts";
import type { EvaluationResult } from "../flags/evaluate.ts";
import { NotFoundError, type Problem, ProblemsError, UsageError } from "../errors.ts";
import {
  jsonProblem,
  printJsonReport,
  problemCount,
  problemsFromCwd,
  rebasingProblems,
} from "./problem_output.ts";
import { registerFlagsNewCommand } from "./scaffold.ts";

/** The output of one `flags lint` run, for tests and callers that print elsewhere. */
export interface LintOutput {
  /** The summary line printed on success. */
  summary: string;
}

/** What a manifest directory holds, as `flags lint` counts it. */
export interface ManifestCounts {
  /** Flag files. */
  flags: number;
  /** Segment files. */
  segments: number;
  /** Environments declared in namespace.toml. */
  environments: number;
}

/** Everything one `flags lint` run found, problems included. */
export interface LintReport {
  /** Every problem, sorted by path then key path; paths relative to the directory. */
  problems: Problem[];
  /** What the manifest holds; present only when there are no problems. */
  counts?: ManifestCounts;
  /** `<dir>: ok (N flags, N segments, N environments)`, or `N problems found`. */
  summary: string;
}

/**
 * Lints a manifest directory like {@linkcode lintFlagsDir} but returns the
 * problems instead of throwing them, for `flags lint --json`.
 *
 * @param dir the manifest directory
 * @returns the problems, counts and summary line
 * @throws {UsageError} when `dir` does not exist or is not a directory
 *
 * @example
 * ```ts
 * import { lintFlagsReport } from "./flags.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/notes.txt`, "hi\n");
 * const r = await lintFlagsReport(dir);
 * await Deno.remove(dir, { recursive: true });
 * if (r.problems[0]?.path !== "notes.txt" || r.counts !== undefined) throw new Error();
 * ```
 */
export async function lintFlagsReport(dir: string): Promise<LintReport> {
  // lazy: the manifest reader and validator (TOML, re2js, semver) load only for flags commands
  const [{ scanManifestDir }, { compareProblems, validateManifest }] = await Promise.all([
    import("../flags/files.ts"),
    import("../flags/validate.ts"),
  ]);
  const scan = await scanManifestDir(dir);
  const result = validateManifest(scan.files);
  const problems = [...scan.problems, ...result.problems].sort(compareProblems);
  const m = result.manifest;
  if (problems.length > 0 || m === undefined) {
    return { problems, summary: problemCount(problems.length) };
  }
  const counts = {
    flags: Object.keys(m.flags).length,
    segments: Object.keys(m.segments).length,
    environments: Object.keys(m.namespace.environments).length,
  };
  const count = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  return {
    problems,
    counts,
    summary: `${dir}: ok (${count(counts.flags, "flag")}, ${count(counts.segments, "segment")}, ${
      count(counts.environments, "environment")
    })`,
  };
}

/**
 * Lints a manifest directory: reads it (refusing unknown files and links)
 * and validates every file, reporting all problems at once.
 *
 * @param dir the manifest directory
 * @returns the summary line (`<dir>: ok (…)`)
 * @throws {ProblemsError} with every problem, sorted by path then key path
 * @throws {UsageError} when `dir` does not exist or is not a directory
 *
 * @example
 * ```ts
 * import { lintFlagsDir } from "./flags.ts";
 * const dir = await Deno.makeTempDir();
 * const { summary } = await lintFlagsDir(dir);
 * await Deno.remove(dir);
 * if (!summary.includes("ok (0 flags, 0 segments, 0 environments)")) throw new Error(summary);
 * ```
 */
export async function lintFlagsDir(dir: string): Promise<LintOutput> {
  const report = await lintFlagsReport(dir);
  if (report.counts === undefined) throw new ProblemsError(report.problems);
  return { summary: report.summary };
}

/** What `flags eval` evaluates. */
export interface EvalOptions {
  /** The environment (declared in `namespace.toml`). */
  env: string;
  /** One flag key; exactly one of `flag` and `all`. */
  flag?: string;
  /** Every flag. */
  all?: boolean;
  /** `--context` arguments (`dotted.path=value`), parsed like `cfgtool resolve`'s. */
  context?: readonly string[];
}

/** The output of one `flags eval` run. */
export interface EvalOutput {
  /** The results, in flag key order. */
  results: EvaluationResult[];
  /** One line per result: `<flag>: <JSON value> (<variation>, <reason>[, rule <i>])`. */
  lines: string[];
  /** The `--json` output: one result object (`--flag`) or flag key → result (`--all`). */
  json: string;
  /** Whether any result has reason `ERROR`. */
  failed: boolean;
  /**
   * What went wrong, for stderr, when a result is an `ERROR`: the first
   * error's message, with a did-you-mean for an unknown flag key.
   */
  failure?: string;
}

/**
 * Evaluates flags of a manifest directory locally: reads and validates it
 * (as `flags lint` does), compiles it (version 0) and evaluates one flag or
 * every flag in an environment for the context given as `--context`
 * arguments. An unknown flag is an `ERROR` result (`FLAG_NOT_FOUND`), not an
 * exception.
 *
 * @param dir the manifest directory
 * @param opts environment, flag or all, context arguments
 * @returns the results and their text and JSON forms
 * @throws {ProblemsError} when the manifest is invalid
 * @throws {UsageError} on a bad directory, environment, context argument or flag choice
 *
 * @example
 * ```ts
 * import { evalFlagsDir } from "./flags.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/flags`);
 * await Deno.writeTextFile(`${dir}/namespace.toml`, "schema_version = 1\n[namespace.environments.production]\n");
 * await Deno.writeTextFile(
 *   `${dir}/flags/dark-mode.toml`,
 *   'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n',
 * );
 * const out = await evalFlagsDir(dir, { env: "production", flag: "dark-mode", context: ["user.id=7"] });
 * await Deno.remove(dir, { recursive: true });
 * if (out.lines[0] !== "dark-mode: false (off, DEFAULT)") throw new Error(out.lines[0]);
 * ```
 */
export async function evalFlagsDir(dir: string, opts: EvalOptions): Promise<EvalOutput> {
  // lazy: the flag engine (TOML, re2js, semver, levenshtein) loads only for flags commands
  const [
    { readManifestDir },
    { parseManifest },
    evaluate,
    { parseContextArgs },
    { didYouMean },
  ] = await Promise.all([
    import("../flags/files.ts"),
    import("../flags/validate.ts"),
    import("../flags/evaluate.ts"),
    import("../workspace/context_args.ts"),
    import("../suggest.ts"),
  ]);
  if ((opts.flag === undefined) === (opts.all !== true)) {
    throw new UsageError("give exactly one of --flag <key> and --all");
  }
  const context = parseContextArgs(opts.context ?? []);
  const manifest = parseManifest(await readManifestDir(dir));
  const model = evaluate.compileManifest(manifest, 0);
  if (!model.environments.includes(opts.env)) {
    throw new UsageError(
      `unknown environment "${opts.env}" (namespace.toml declares ${
        model.environments.length > 0 ? model.environments.join(", ") : "none"
      })`,
    );
  }
  let results: EvaluationResult[];
  let json: string;
  if (opts.flag !== undefined) {
    const r = evaluate.evaluateFlag(model, opts.env, opts.flag, context);
    results = [r];
    json = JSON.stringify(r);
  } else {
    const all = evaluate.evaluateAll(model, opts.env, context);
    results = model.flagKeys.map((k) => all[k]!);
    json = JSON.stringify(all);
  }
  const failed = results.find((r) => r.reason === "ERROR");
  const failure = failed === undefined ? undefined : (failed.error_message ?? "evaluation failed") +
    (failed.error_code === "FLAG_NOT_FOUND" ? didYouMean(failed.flag, model.flagKeys) : "");
  return {
    results,
    lines: results.map(formatResult),
    json,
    failed: failed !== undefined,
    ...(failure === undefined ? {} : { failure }),
  };
}

/**
 * Formats one result as `flags eval` prints it:
 * `<flag>: <JSON value> (<variation>, <reason>[, rule <i>])`, or for an
 * error `<flag>: null (ERROR, <error_code>: <error_message>)`.
 *
 * @param r an evaluation result
 * @returns one line
 *
 * @example
 * ```ts
 * import { formatResult } from "./flags.ts";
 * const line = formatResult({
 *   flag: "theme", value: "dark", variation: "dark", reason: "TARGETING_MATCH", rule_index: 0, version: 0,
 * });
 * if (line !== 'theme: "dark" (dark, TARGETING_MATCH, rule 0)') throw new Error(line);
 * ```
 */
export function formatResult(r: EvaluationResult): string {
  if (r.reason === "ERROR") return `${r.flag}: null (ERROR, ${r.error_code}: ${r.error_message})`;
  const rule = r.rule_index === undefined ? "" : `, rule ${r.rule_index}`;
  return `${r.flag}: ${JSON.stringify(r.value)} (${r.variation}, ${r.reason}${rule})`;
}

/**
 * Registers `cfgtool flags` and its subcommands on the program.
 *
 * @param program the root command
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerFlagsCommands } from "./flags.ts";
 * const program = new Command().name("cfgtool");
 * registerFlagsCommands(program);
 * if (!program.commands.some((c) => c.name() === "flags")) throw new Error();
 * ```
 */
export function registerFlagsCommands(program: Command): void {
  const flags = program
    .command("flags")
    .description("Work with flag manifests on disk (namespace.toml, flags/, segments/)");

  registerFlagsNewCommand(flags);

  flags
    .command("lint")
    .summary("Validate a flag manifest directory, reporting every problem")
    .description(
      "Validate a flag manifest directory and report every problem at once.\n\n" +
        "The directory holds namespace.toml, flags/<key>.toml and segments/<key>.toml;\n" +
        "any other file is refused (names starting with . are skipped). The checks are\n" +
        "the service's own (PUT …/manifest and POST …/lint): TOML syntax, unknown and\n" +
        "missing keys, types, variations, rules, rollout weights, segments and their\n" +
        "reference cycles, environment overrides, 1 MiB per file. See docs/flags.md.",
    )
    .argument("<dir>", "manifest directory")
    .option("--json", "print {ok, problems, summary, dir, counts} as one JSON object")
    .addHelpText(
      "after",
      "\nOutput:\n" +
        "  valid    one line on stdout: <dir>: ok (N flags, N segments, N environments)\n" +
        "  invalid  one problem a line on stderr, then the count:\n" +
        "             <path>:<line>:<col>: <message>      (TOML syntax)\n" +
        "             <path>: <key path>: <message>      (everything else)\n" +
        "           paths are relative to the current directory, so an editor can open them\n" +
        "  --json   one object on stdout: {ok, problems: [{path, line?, column?, key?,\n" +
        "           message}], summary, dir, counts}; counts is null when there are problems\n\n" +
        "Exit status:\n" +
        "  0  the manifest is valid\n" +
        "  1  problems were found\n" +
        "  2  usage error (no such directory, not a directory, bad arguments)\n\n" +
        "Examples:\n" +
        "  cfgtool flags lint examples/flags\n" +
        "  cfgtool flags lint examples/flags --json\n",
    )
    .action(async (dir: string, opts) => {
      const report = await lintFlagsReport(dir);
      const problems = problemsFromCwd(dir, report.problems);
      if (opts.json === true) {
        printJsonReport({
          ok: report.counts !== undefined,
          problems: problems.map(jsonProblem),
          summary: report.summary,
          dir,
          counts: report.counts ?? null,
        });
        return;
      }
      if (report.counts === undefined) throw new ProblemsError(problems);
      console.log(report.summary);
    });

  flags
    .command("eval")
    .summary("Evaluate flags of a manifest directory locally for a context")
    .description(
      "Evaluate one flag (--flag) or every flag (--all) of a manifest directory in an\n" +
        "environment, for the context given as --context arguments, with the service's own\n" +
        "engine: rules in order, segments, rollouts (murmur3 bucketing), environment\n" +
        "overrides. The manifest is validated first, as by `flags lint`. See docs/flags.md.",
    )
    .argument("<dir>", "manifest directory")
    .requiredOption("--env <env>", "environment declared in namespace.toml")
    .option("--flag <key>", "the flag to evaluate")
    .option("--all", "evaluate every flag, in key order")
    .option(
      CONTEXT_FLAG,
      CONTEXT_HELP,
      collectContext,
      [] as string[],
    )
    .option("--json", "print the result object (--flag) or flag key -> result (--all) as JSON")
    .addHelpText(
      "after",
      "\nOutput, one line per flag:\n" +
        "  <flag>: <JSON value> (<variation>, <reason>[, rule <i>])\n" +
        "  <flag>: null (ERROR, <error code>: <message>)      (unknown flag)\n" +
        "Reasons: TARGETING_MATCH, SPLIT (rollout), DEFAULT, DISABLED, ERROR.\n\n" +
        "Exit status:\n" +
        "  0  evaluated\n" +
        "  1  the manifest has problems, or a result is an ERROR (unknown flag)\n" +
        "  2  usage error (no such directory, unknown environment, bad --context, neither or\n" +
        "     both of --flag and --all)\n\n" +
        "Examples:\n" +
        "  cfgtool flags eval examples/flags --env production --flag new-checkout \\\n" +
        "    --context user.email=ann@example.com\n" +
        "  cfgtool flags eval examples/flags --env staging --all --json --context targeting_key=u1\n",
    )
    .action(async (dir: string, opts) => {
      const out = await rebasingProblems(dir, () =>
        evalFlagsDir(dir, {
          env: opts.env,
          ...(opts.flag === undefined ? {} : { flag: opts.flag }),
          ...(opts.all === true ? { all: true } : {}),
          context: opts.context,
        }));
      if (opts.json === true) console.log(out.json);
      else for (const line of out.lines) console.log(line);
      if (out.failure !== undefined) {
        throw new NotFoundError("flag_not_found", out.failure);
      }
    });
}
