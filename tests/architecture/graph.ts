/**
 * The import graph of the repository's library: every `.ts`/`.tsx` file under lib/
 * plus the entry files (cli.ts, server.ts, mod.ts), and one edge per local
 * import between them. Paths are relative to the repository root
 * (`lib/store/kv.ts`); npm:, node: and other non-relative specifiers name no
 * file of ours and make no edge, and neither do imports of data files.
 *
 * @module
 */
import { type ImportKind, parseImports } from "./imports.ts";

/** One import of a local module by another. */
export interface ImportEdge {
  /** The importing file, e.g. `lib/store/kv.ts`. */
  readonly from: string;
  /** The imported file, e.g. `lib/errors.ts`. */
  readonly to: string;
  /** True when the import is erased with the types (`import type`, …). */
  readonly typeOnly: boolean;
  /** Which form of import this is. */
  readonly kind: ImportKind;
  /** 1-based line of the import in `from`. */
  readonly line: number;
}

/** Files and the local imports between them. */
export interface ImportGraph {
  /** Every file read, sorted. */
  readonly files: readonly string[];
  /** Every local import, by importing file then line. */
  readonly edges: readonly ImportEdge[];
}

/** The entry files at the repository root. */
export const ENTRY_FILES: readonly string[] = ["cli.ts", "server.ts", "mod.ts"];

/**
 * Resolves a relative specifier against the importing file; undefined for
 * specifiers that name no local file (`npm:`, `node:`, bare names).
 *
 * @param from the importing file, relative to the repository root
 * @param specifier the specifier as written
 * @returns the imported file relative to the repository root, or undefined
 *
 * @example
 * ```ts
 * import { resolveLocal } from "./graph.ts";
 * if (resolveLocal("lib/cli/serve.ts", "../../server.ts") !== "server.ts") throw new Error();
 * if (resolveLocal("lib/store/kv.ts", "./keys.ts") !== "lib/store/keys.ts") throw new Error();
 * if (resolveLocal("lib/store/kv.ts", "npm:hono") !== undefined) throw new Error();
 * ```
 */
export function resolveLocal(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith("./") && !specifier.startsWith("../")) return undefined;
  const base = new URL(`file:///repo/${from}`);
  const path = new URL(specifier, base).pathname;
  return path.startsWith("/repo/") ? path.slice("/repo/".length) : path;
}

/** Files that hold code, as opposed to data (`deno.json`, fixtures). */
const CODE = /\.(ts|tsx|mts|js|mjs|jsx)$/;

/**
 * Builds the import graph of source files given by path and text. Only
 * imports of code make edges: a JSON import (lib/version.ts reads
 * deno.json) or a `new URL(…)` to a data file places nothing in a layer.
 *
 * @param sources each file's path relative to the repository root, and its text
 * @returns the files, sorted, and their local imports
 *
 * @example
 * ```ts
 * import { graphOf } from "./graph.ts";
 * const graph = graphOf([
 *   ["lib/store/kv.ts", 'import type { A } from "../errors.ts";\nimport "npm:hono";'],
 *   ["lib/errors.ts", ""],
 * ]);
 * const edges = graph.edges.map((e) => `${e.from} -> ${e.to} ${e.typeOnly}`);
 * if (edges.join() !== "lib/store/kv.ts -> lib/errors.ts true") throw new Error(edges.join());
 * ```
 */
export function graphOf(sources: Iterable<readonly [path: string, text: string]>): ImportGraph {
  const files: string[] = [];
  const edges: ImportEdge[] = [];
  for (const [path, text] of sources) {
    files.push(path);
    for (const ref of parseImports(text)) {
      const to = resolveLocal(path, ref.specifier);
      if (to === undefined || !CODE.test(to)) continue;
      edges.push({ from: path, to, typeOnly: ref.typeOnly, kind: ref.kind, line: ref.line });
    }
  }
  files.sort();
  edges.sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : a.line - b.line));
  return { files, edges };
}

/**
 * Reads the import graph of a repository checkout: every `.ts` and `.tsx`
 * file under its lib/ folder, and its entry files.
 *
 * @param root the repository root, as a `file:` URL ending in `/`
 * @returns the graph of lib/ and the entry files
 *
 * @example
 * ```ts
 * import { readRepoGraph } from "./graph.ts";
 * const graph = await readRepoGraph(new URL("../../", import.meta.url));
 * if (!graph.files.includes("lib/errors.ts") || !graph.files.includes("mod.ts")) {
 *   throw new Error("lib/errors.ts or mod.ts not read");
 * }
 * ```
 */
export async function readRepoGraph(root: URL): Promise<ImportGraph> {
  const paths: string[] = [...ENTRY_FILES];
  const walk = async (dir: string): Promise<void> => {
    for await (const entry of Deno.readDir(new URL(dir, root))) {
      const path = `${dir}${entry.name}`;
      if (entry.isDirectory) await walk(`${path}/`);
      else if (entry.isFile && /\.tsx?$/.test(entry.name)) paths.push(path);
    }
  };
  await walk("lib/");
  const sources = await Promise.all(
    paths.map(async (p) => [p, await Deno.readTextFile(new URL(p, root))] as const),
  );
  return graphOf(sources);
}
