/**
 * The one place that reads TOML into plain records. Syntax errors become a
 * {@linkcode Problem} with the file, line and column that smol-toml reports;
 * semantic checks (unknown keys, wrong types) are the callers' and use key paths.
 *
 * @module
 */
import { parse, TomlDate, TomlError } from "toml";
import type { Problem } from "./errors.ts";

/** A parsed TOML document: a plain object (prototype-free records converted). */
export type TomlTable = Record<string, unknown>;

/** The outcome of parsing one file: the table, or the syntax problem. */
export type TomlResult = { ok: true; table: TomlTable } | { ok: false; problem: Problem };

/**
 * Parses TOML text. `path` names the file in the problem it returns on a
 * syntax error (`<path>:<line>:<col>: <message>`). Dates become RFC 3339
 * strings, so every value is JSON-compatible.
 *
 * @param text the TOML source
 * @param path the file path to report, relative and `/`-separated
 * @returns `{ok: true, table}` or `{ok: false, problem}`
 *
 * @example
 * ```ts
 * import { parseToml } from "./toml.ts";
 * const r = parseToml("a = 1\n", "x.toml");
 * if (!r.ok || r.table.a !== 1) throw new Error();
 * const bad = parseToml("a = = 1\n", "x.toml");
 * if (bad.ok || bad.problem.line !== 1) throw new Error();
 * ```
 */
export function parseToml(text: string, path: string): TomlResult {
  try {
    return { ok: true, table: toPlain(parse(text)) as TomlTable };
  } catch (err) {
    if (err instanceof TomlError) {
      const first = String(err.message).split("\n")[0]!.replace(/^Invalid TOML document: /, "");
      return {
        ok: false,
        problem: { path, line: err.line, column: err.column, message: `invalid TOML: ${first}` },
      };
    }
    throw err;
  }
}

/**
 * Reads and parses a TOML file from disk. `relPath` is how the file is named
 * in problems.
 *
 * @example
 * ```ts
 * import { readToml } from "./toml.ts";
 * const file = await Deno.makeTempFile({ suffix: ".toml" });
 * await Deno.writeTextFile(file, "name = \"x\"\n");
 * const r = await readToml(file, "x.toml");
 * if (!r.ok || r.table.name !== "x") throw new Error();
 * ```
 */
export async function readToml(file: string | URL, relPath: string): Promise<TomlResult> {
  return parseToml(await Deno.readTextFile(file), relPath);
}

function toPlain(v: unknown): unknown {
  if (v instanceof TomlDate) return v.toISOString();
  if (Array.isArray(v)) return v.map(toPlain);
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = toPlain(x);
    return out;
  }
  return v;
}
