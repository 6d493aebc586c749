/**
 * The fast path of `cfgtool resolve`: recognises the plain, well-formed
 * invocations that shell scripts repeat (`resolve <workspace> --variable
 * <name> [--context <path=value>]… [--json]`) without loading commander,
 * whose Node-compatible imports cost more than the whole resolution. It
 * reads a strict subset of what commander accepts, to the same values
 * (tests/cli/resolve_args_test.ts checks this against the real command
 * tree); anything else (help, a misspelt or unknown option, a value that
 * starts with `-`, `--`, a missing or extra argument) is left to commander,
 * which gives the usual help and errors.
 *
 * @module
 */
import type { ResolveOptions } from "./resolve_action.ts";

/** A recognised `resolve` invocation. */
export interface ResolveInvocation extends ResolveOptions {
  /** The `<workspace>` argument. */
  workspace: string;
  /** `--json` given. */
  json: boolean;
}

/**
 * Recognises a plain `resolve` command line (the arguments after the
 * program name). Options may come before or after the workspace; option
 * values may be written `--option value` or `--option=value`.
 *
 * @param args the command line, without the program name
 * @returns the invocation, or undefined when commander must parse it
 *
 * @example
 * ```ts
 * import { parseResolveArgs } from "./resolve_args.ts";
 * const r = parseResolveArgs(["resolve", "ws", "--variable", "v", "--context=a.b=1", "--json"]);
 * if (r?.workspace !== "ws" || r.variable !== "v" || r.context[0] !== "a.b=1" || !r.json) {
 *   throw new Error();
 * }
 * if (parseResolveArgs(["resolve", "ws", "--variable", "v", "--help"]) !== undefined) throw new Error();
 * if (parseResolveArgs(["lint", "ws"]) !== undefined) throw new Error();
 * ```
 */
export function parseResolveArgs(args: readonly string[]): ResolveInvocation | undefined {
  if (args[0] !== "resolve") return undefined;
  const operands: string[] = [];
  const context: string[] = [];
  let variable: string | undefined;
  let json = false;
  for (let i = 1; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--json") {
      json = true;
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.startsWith("--") && eq > 2 ? arg.slice(0, eq) : arg;
    if (name === "--variable" || name === "--context") {
      let value: string;
      if (name !== arg) {
        value = arg.slice(eq + 1);
      } else {
        const next = args[++i];
        if (next === undefined || next.startsWith("-")) return undefined;
        value = next;
      }
      if (name === "--context") context.push(value);
      else if (variable === undefined) variable = value;
      else return undefined;
      continue;
    }
    if (arg.startsWith("-")) return undefined;
    operands.push(arg);
  }
  if (operands.length !== 1 || variable === undefined) return undefined;
  return { workspace: operands[0]!, variable, context, json };
}
