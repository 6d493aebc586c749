/**
 * What `cfgtool resolve` does once its arguments are parsed, by commander
 * (lib/cli/workspace.ts) or by the fast path for plain invocations
 * (lib/cli/resolve_args.ts): open the workspace with the schema verdict
 * cache, resolve, print. It imports nothing that needs Node compatibility
 * (no commander, no `node:path`): problem paths are rebased by
 * lib/cli/problem_output.ts, loaded only when there are problems.
 *
 * @module
 */
import { ProblemsError } from "../errors.ts";
import { parseContextArgs } from "../workspace/context_args.ts";
import { openWorkspace, type Workspace } from "../workspace/open.ts";
import { defaultVerdictDir } from "../workspace/verdict_store.ts";

/** The parsed options of `cfgtool resolve`. */
export interface ResolveOptions {
  /** `--variable <name>`. */
  variable: string;
  /** Every `--context <path=value>`, in order. */
  context: string[];
  /** `--json`. */
  json?: boolean;
}

/**
 * Runs `cfgtool resolve <workspace>`: prints `value key: <key>` and
 * `value: <entry as one-line JSON>`, or one JSON object with `json`.
 * Problems of the workspace are thrown as a {@linkcode ProblemsError} with
 * paths relative to the current directory; usage and lookup errors as
 * they come (lib/cli/exit.ts turns them into exit statuses).
 *
 * @param workspace the workspace directory, as given
 * @param opts the options
 * @param verdictCache where schema verdicts are kept (default: the user's cache directory)
 *
 * @example
 * ```ts
 * import { runResolve } from "./resolve_action.ts";
 * const lines: string[] = [];
 * const log = console.log;
 * console.log = (line: string) => lines.push(line);
 * try {
 *   await runResolve("examples/notification-workspace", {
 *     variable: "notification-delivery-policy",
 *     context: ["notification.kind=security_alert"],
 *   }, undefined);
 * } finally {
 *   console.log = log;
 * }
 * if (lines[0] !== "value key: immediate-security") throw new Error(lines[0]);
 * ```
 */
export async function runResolve(
  workspace: string,
  opts: ResolveOptions,
  verdictCache: string | undefined = defaultVerdictDir(),
): Promise<void> {
  const context = parseContextArgs(opts.context);
  let ws: Workspace;
  try {
    ws = await openWorkspace(workspace, verdictCache === undefined ? {} : { verdictCache });
  } catch (err) {
    if (!(err instanceof ProblemsError)) throw err;
    // lazy: node:path (and with it Node compatibility) loads only to print problems
    const out = await import("./problem_output.ts");
    return await out.rebasingProblems(workspace, () => {
      throw err;
    });
  }
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
}
