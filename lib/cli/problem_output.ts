/**
 * How the checking commands (`lint`, `init`, `resolve`, `flags lint`,
 * `flags eval`, `push`) show problems to a person or a CI job. Problem paths
 * are relative to the workspace or manifest directory inside the library;
 * here they are turned into paths relative to the current directory, so an
 * editor or a CI annotation can open the file whatever directory was linted.
 * With `--json` the same problems go to stdout in one JSON document, the
 * report envelope {@linkcode JsonReport}.
 *
 * @module
 */
import { relative, resolve, sep } from "node:path";
import { CfgtoolError, type Problem, ProblemsError } from "../errors.ts";

/**
 * A workspace- or manifest-relative path as seen from the current directory,
 * `/`-separated. A trailing `/` (a directory) is kept.
 *
 * @param dir the linted directory, as given on the command line
 * @param rel the path inside it, `/`-separated
 * @param cwd the current directory (default: the process's)
 * @returns the path to print
 *
 * @example
 * ```ts
 * import { displayPath } from "./problem_output.ts";
 * if (displayPath("config", "variables/x.toml", "/repo") !== "config/variables/x.toml") {
 *   throw new Error();
 * }
 * if (displayPath("/repo", "flags/", "/repo") !== "flags/") throw new Error();
 * if (displayPath("/other/ws", "a.toml", "/repo") !== "../other/ws/a.toml") throw new Error();
 * ```
 */
export function displayPath(dir: string, rel: string, cwd: string = Deno.cwd()): string {
  let out = relative(cwd, resolve(cwd, dir, rel));
  if (sep === "\\") out = out.replaceAll("\\", "/");
  if (out === "") out = ".";
  if (rel.endsWith("/") && !out.endsWith("/")) out += "/";
  return out;
}

/**
 * The problems with their paths made relative to the current directory
 * (see {@linkcode displayPath}); everything else is kept.
 *
 * @param dir the linted directory, as given
 * @param problems problems with paths relative to `dir`
 * @param cwd the current directory (default: the process's)
 * @returns new problem objects
 *
 * @example
 * ```ts
 * import { problemsFromCwd } from "./problem_output.ts";
 * const [p] = problemsFromCwd("ws", [{ path: "variables/x.toml", key: "type", message: "bad" }], "/r");
 * if (p?.path !== "ws/variables/x.toml" || p.key !== "type") throw new Error();
 * ```
 */
export function problemsFromCwd(
  dir: string,
  problems: readonly Problem[],
  cwd: string = Deno.cwd(),
): Problem[] {
  return problems.map((p) => ({ ...p, path: displayPath(dir, p.path, cwd) }));
}

/**
 * Runs `fn`; a {@linkcode ProblemsError} it throws is thrown again with its
 * problem paths relative to the current directory (same code and message).
 *
 * @param dir the directory the problems' paths are relative to
 * @param fn the work
 * @returns what `fn` returns
 *
 * @example
 * ```ts
 * import { rebasingProblems } from "./problem_output.ts";
 * import { ProblemsError } from "../errors.ts";
 * try {
 *   await rebasingProblems("ws", () => {
 *     throw new ProblemsError([{ path: "a.toml", message: "bad" }]);
 *   });
 * } catch (err) {
 *   if (!(err instanceof ProblemsError) || !err.problems[0]!.path.endsWith("ws/a.toml")) throw err;
 * }
 * ```
 */
export async function rebasingProblems<T>(dir: string, fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ProblemsError) {
      throw new ProblemsError(problemsFromCwd(dir, err.problems), err.code, err.message);
    }
    throw err;
  }
}

/** One problem in `--json` output; keys in this order, absent ones left out. */
export interface JsonProblem {
  /** The file, relative to the current directory, `/`-separated. */
  path: string;
  /** 1-based line (syntax errors). */
  line?: number;
  /** 1-based column (syntax errors). */
  column?: number;
  /** Key path inside the file (`resolve.rule[2].value`). */
  key?: string;
  /** What is wrong. */
  message: string;
}

/**
 * The `--json` report of `lint`, `flags lint` and `init`: `ok` says whether
 * the command succeeded (exit status 0), `problems` lists every problem
 * (empty when ok), `summary` is the human one-liner. Commands add their own
 * fields (`counts`, `written`, …).
 */
export interface JsonReport {
  /** True when there are no problems (exit status 0). */
  ok: boolean;
  /** Every problem, in the order the text output prints them. */
  problems: JsonProblem[];
  /** One line for a person: the ok line, or `N problems found`. */
  summary: string;
  /** Command-specific fields. */
  [field: string]: unknown;
}

/**
 * A problem as `--json` prints it: `{path, line?, column?, key?, message}`.
 *
 * @param p the problem
 * @returns a plain object with a stable key order
 *
 * @example
 * ```ts
 * import { jsonProblem } from "./problem_output.ts";
 * const j = jsonProblem({ message: "bad", key: "type", path: "v.toml" });
 * if (JSON.stringify(j) !== '{"path":"v.toml","key":"type","message":"bad"}') throw new Error();
 * ```
 */
export function jsonProblem(p: Problem): JsonProblem {
  return {
    path: p.path,
    ...(p.line === undefined ? {} : { line: p.line }),
    ...(p.column === undefined ? {} : { column: p.column }),
    ...(p.key === undefined || p.key === "" ? {} : { key: p.key }),
    message: p.message,
  };
}

/**
 * `N problem(s) found`, the count line of the text output.
 *
 * @example
 * ```ts
 * import { problemCount } from "./problem_output.ts";
 * if (problemCount(1) !== "1 problem found") throw new Error();
 * ```
 */
export function problemCount(n: number): string {
  return `${n} problem${n === 1 ? "" : "s"} found`;
}

/**
 * Prints a `--json` report on stdout (one line) and, when it is not ok,
 * throws an error that makes the command exit 1 with one line on stderr
 * (`error: N problems found (listed in the JSON on stdout)`), so the exit
 * status is the same as without `--json`.
 *
 * @param report the report
 * @throws {CfgtoolError} `problems_found` when `report.ok` is false
 *
 * @example
 * ```ts
 * import { printJsonReport } from "./problem_output.ts";
 * const printed: string[] = [];
 * const log = console.log;
 * console.log = (line: string) => void printed.push(line);
 * let code: string | undefined;
 * try {
 *   printJsonReport({ ok: true, problems: [], summary: "ok" });
 *   printJsonReport({ ok: false, problems: [{ path: "a.toml", message: "bad" }], summary: "1" });
 * } catch (err) {
 *   code = (err as { code?: string }).code;
 * } finally {
 *   console.log = log;
 * }
 * if (printed[0] !== '{"ok":true,"problems":[],"summary":"ok"}') throw new Error(printed[0]);
 * if (printed.length !== 2 || code !== "problems_found") throw new Error(code);
 * ```
 */
export function printJsonReport(report: JsonReport): void {
  console.log(JSON.stringify(report));
  if (!report.ok) {
    throw new CfgtoolError(
      "problems_found",
      `${problemCount(report.problems.length)} (listed in the JSON on stdout)`,
      { status: 422 },
    );
  }
}
