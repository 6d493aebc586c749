/**
 * How the remote command groups (`tenant`, `namespace`, `token`) print what
 * they list: the JSON the service sent with `--json`, else a table; and, for
 * paged lists, the `--limit` / `--after` options, the query they make and the
 * `(more: --after <cursor>)` hint on stderr after a page that has a next one.
 *
 * @module
 */
import type { Command, OptionValues } from "commander";
import type { Page } from "../protocol/responses.ts";
import { parseWholeNumber, printJson, printTable } from "./remote_options.ts";

/** The raw values of {@linkcode withPageOptions}, as commander parses them. */
export interface PageOptionValues {
  /** `--limit <n>`: page size, not yet parsed. */
  limit?: string | undefined;
  /** `--after <cursor>`: the cursor printed at the end of the previous page. */
  after?: string | undefined;
  /** `--json`: print `{items, next}` as JSON. */
  json?: true | undefined;
}

/**
 * Adds `--limit <n>`, `--after <cursor>` and `--json` to a command that lists
 * one page at a time.
 *
 * @param cmd the command
 * @returns the same command, typed with the three options
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { withPageOptions } from "./listing.ts";
 * const cmd = withPageOptions(new Command("x"));
 * const longs = cmd.options.map((o) => o.long).join(" ");
 * if (longs !== "--limit --after --json") throw new Error(longs);
 * ```
 */
export function withPageOptions<A extends unknown[], O extends OptionValues>(
  cmd: Command<A, O>,
): Command<A, O & PageOptionValues> {
  cmd
    .option("--limit <n>", "page size")
    .option("--after <cursor>", "continue after this cursor (printed at the end of a page)")
    .option("--json", "print {items, next} as JSON");
  return cmd as unknown as Command<A, O & PageOptionValues>;
}

/**
 * The pagination part of a list query from the options of
 * {@linkcode withPageOptions}: `limit` (a whole number ≥ 1, else a usage
 * error, exit 2) and `after`, each only when given.
 *
 * @param opts the parsed options
 * @returns `{limit?, after?}`
 *
 * @example
 * ```ts
 * import { pageQuery } from "./listing.ts";
 * const q = pageQuery({ limit: "5", after: "tok_1" });
 * if (q.limit !== 5 || q.after !== "tok_1" || "after" in pageQuery({})) throw new Error();
 * ```
 */
export function pageQuery(opts: PageOptionValues): { limit?: number; after?: string } {
  const limit = opts.limit === undefined ? undefined : parseWholeNumber(opts.limit, "--limit", 1);
  return {
    ...(limit === undefined ? {} : { limit }),
    ...(opts.after === undefined ? {} : { after: opts.after }),
  };
}

/**
 * Prints a list: as JSON when `json` is set, else as a table with one row per
 * item (`(none)` when empty).
 *
 * @param items the list as the service sent it
 * @param json whether `--json` was given
 * @param headers the column titles
 * @param row the cells of one item
 *
 * @example
 * ```ts
 * import { printList } from "./listing.ts";
 * const printed: string[] = [];
 * const log = console.log;
 * console.log = (line: string) => void printed.push(line);
 * try {
 *   printList([{ slug: "acme" }], false, ["SLUG"], (t) => [t.slug]);
 * } finally {
 *   console.log = log;
 * }
 * if (printed.join("|") !== "SLUG|acme") throw new Error(printed.join("|"));
 * ```
 */
export function printList<T>(
  items: T[],
  json: boolean,
  headers: string[],
  row: (item: T) => string[],
): void {
  if (json) return printJson(items);
  printTable(headers, items.map(row));
}

/**
 * Prints one page of a list: `{items, next}` as JSON when `json` is set, else
 * a table of the items followed, when there is a next page, by
 * `(more: --after <cursor>)` on stderr.
 *
 * @param page the page
 * @param json whether `--json` was given
 * @param headers the column titles
 * @param row the cells of one item
 *
 * @example
 * ```ts
 * import { printPage } from "./listing.ts";
 * const printed: string[] = [];
 * const { log, error } = console;
 * console.log = (line: string) => void printed.push(line);
 * console.error = (line: string) => void printed.push(`err ${line}`);
 * try {
 *   printPage({ items: [{ v: 1 }], next: "c2" }, false, ["V"], (i) => [String(i.v)]);
 * } finally {
 *   Object.assign(console, { log, error });
 * }
 * if (printed.join("|") !== "V|1|err (more: --after c2)") throw new Error(printed.join("|"));
 * ```
 */
export function printPage<T>(
  page: Page<T>,
  json: boolean,
  headers: string[],
  row: (item: T) => string[],
): void {
  if (json) return printJson(page);
  printTable(headers, page.items.map(row));
  if (page.next !== null) console.error(`(more: --after ${page.next})`);
}
