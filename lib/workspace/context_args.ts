/**
 * `--context <dotted.path>=<value>` arguments of `cfgtool resolve`, turned
 * into a nested context object (docs/workspace.md, "resolve"):
 *
 * - `true` / `false` are booleans, `null` is null;
 * - integers and decimals (`42`, `-7`, `0.5`; JSON number syntax without an
 *   exponent, so `007` and `1e3` stay strings) are numbers;
 * - a value wrapped in double quotes is the string inside, as written
 *   (`"true"`, `"42"`); no escape sequences are processed;
 * - anything else, including the empty value, is a string.
 *
 * Dotted keys build nested objects (`account.plan=pro` gives
 * `{account: {plan: "pro"}}`). A missing `=`, an empty path segment, the
 * same path given twice, and a path that is both a value and an object are
 * usage errors.
 *
 * @module
 */
import { UsageError } from "../errors.ts";

const NUMBER_RE = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/;

/**
 * Parses one `--context` value literal.
 *
 * @example
 * ```ts
 * import { parseContextLiteral } from "./context_args.ts";
 * if (parseContextLiteral("true") !== true) throw new Error();
 * if (parseContextLiteral("2.5") !== 2.5) throw new Error();
 * if (parseContextLiteral('"2.5"') !== "2.5") throw new Error();
 * if (parseContextLiteral("null") !== null) throw new Error();
 * ```
 */
export function parseContextLiteral(text: string): string | number | boolean | null {
  if (text === "true") return true;
  if (text === "false") return false;
  if (text === "null") return null;
  if (NUMBER_RE.test(text)) return Number(text);
  if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) return text.slice(1, -1);
  return text;
}

/**
 * Builds a context object from `key=value` arguments.
 *
 * @param args the `--context` values, in the order given
 * @returns the nested context
 * @throws {UsageError} on a malformed argument or a conflicting path
 *
 * @example
 * ```ts
 * import { parseContextArgs } from "./context_args.ts";
 * const ctx = parseContextArgs(["account.plan=enterprise", "incident.active=true"]);
 * if (JSON.stringify(ctx) !== '{"account":{"plan":"enterprise"},"incident":{"active":true}}') {
 *   throw new Error();
 * }
 * ```
 */
export function parseContextArgs(args: readonly string[]): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const arg of args) {
    const eq = arg.indexOf("=");
    if (eq === -1) {
      throw new UsageError(`--context "${arg}" must be <dotted.path>=<value>`);
    }
    const path = arg.slice(0, eq);
    const segs = path.split(".");
    if (segs.some((s) => s === "")) {
      throw new UsageError(`--context "${arg}": "${path}" is not a dotted path`);
    }
    let node = root;
    for (let i = 0; i < segs.length - 1; i++) {
      const seg = segs[i]!;
      const next = Object.hasOwn(node, seg) ? node[seg] : undefined;
      if (next === undefined) {
        const created: Record<string, unknown> = {};
        define(node, seg, created);
        node = created;
      } else if (isObject(next)) {
        node = next;
      } else {
        throw new UsageError(
          `--context "${arg}": "${segs.slice(0, i + 1).join(".")}" is already a value`,
        );
      }
    }
    const leaf = segs[segs.length - 1]!;
    if (Object.hasOwn(node, leaf)) {
      throw new UsageError(
        isObject(node[leaf])
          ? `--context "${arg}": "${path}" is already an object`
          : `--context "${path}" is given twice`,
      );
    }
    define(node, leaf, parseContextLiteral(arg.slice(eq + 1)));
  }
  return root;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Sets an own property, even for names such as `__proto__`. */
function define(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}
