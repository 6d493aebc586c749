/**
 * The repeatable `--context <path=value>` option shared by `resolve` and
 * `flags eval`; its values are parsed by lib/workspace/context_args.ts.
 *
 * @module
 */

/** The option's flags (a literal type, so commander types `opts.context`). */
export const CONTEXT_FLAG = "--context <path=value>" as const;

/** The option's help text. */
export const CONTEXT_HELP = "one context fact, repeatable; dotted paths build nested objects. " +
  "Values: true/false are booleans, integers and decimals are numbers, null is null, " +
  '"quoted" is the string inside the quotes, anything else is a string';

/**
 * Collects every occurrence of the option, in order.
 *
 * @example
 * ```ts
 * import { collectContext } from "./context_option.ts";
 * if (collectContext("b=2", ["a=1"]).join() !== "a=1,b=2") throw new Error();
 * ```
 */
export function collectContext(value: string, previous: string[]): string[] {
  return [...previous, value];
}
