/**
 * The checks behind the one-way layering of lib/: which folder may import
 * which, and where import loops are not allowed. Each check takes an import
 * graph and returns every import that breaks it, with what to look at to fix
 * it (the loop it closes, or the chain that reaches it), so that a test can
 * list them all.
 *
 * Folders are the first path segment under lib/ (`lib/store/kv.ts` is in
 * `store`); the top-level lib/*.ts files are the leaves, one node called
 * `(leaves)`. Files outside lib/ (the entry files) are in no folder.
 *
 * @module
 */
import type { ImportEdge, ImportGraph } from "./graph.ts";

/** The folder name given to the top-level lib/*.ts files. */
export const LEAVES = "(leaves)";

/** One import that breaks a rule. */
export interface Violation {
  /** The importing file. */
  readonly from: string;
  /** The imported file. */
  readonly to: string;
  /** Line of the (first) such import in `from`. */
  readonly line: number;
  /** True when every import of `to` by `from` is type-only. */
  readonly typeOnly: boolean;
  /** What makes the import wrong: the loop it closes, the chain that reaches it, … */
  readonly why: string;
}

/**
 * The lib/ folder a file belongs to: `store` for `lib/store/kv.ts`,
 * {@link LEAVES} for `lib/errors.ts`, undefined outside lib/.
 *
 * @param file a path relative to the repository root
 * @returns the folder's name, `(leaves)`, or undefined
 *
 * @example
 * ```ts
 * import { folderOf } from "./rules.ts";
 * if (folderOf("lib/store/kv.ts") !== "store") throw new Error();
 * if (folderOf("lib/errors.ts") !== "(leaves)") throw new Error();
 * if (folderOf("server.ts") !== undefined) throw new Error();
 * ```
 */
export function folderOf(file: string): string | undefined {
  if (!file.startsWith("lib/")) return undefined;
  const parts = file.split("/");
  return parts.length === 2 ? LEAVES : parts[1];
}

/**
 * Writes violations one per line, `from -> to` first, so a failing test
 * names every import to change.
 *
 * @param violations what a check returned
 * @returns one line per violation
 *
 * @example
 * ```ts
 * import { formatViolations } from "./rules.ts";
 * const lines = formatViolations([
 *   { from: "lib/a.ts", to: "cli.ts", line: 3, typeOnly: true, why: "lib imports an entry file" },
 * ]);
 * if (lines[0] !== "lib/a.ts -> cli.ts  (line 3, type-only: lib imports an entry file)") {
 *   throw new Error(lines[0]);
 * }
 * ```
 */
export function formatViolations(violations: readonly Violation[]): string[] {
  return violations.map((v) =>
    `${v.from} -> ${v.to}  (line ${v.line}${v.typeOnly ? ", type-only" : ""}: ${v.why})`
  );
}

/** One edge per (from, to), type-only when all its imports are, at its first line. */
function links(edges: readonly ImportEdge[]): ImportEdge[] {
  const byPair = new Map<string, ImportEdge>();
  for (const e of edges) {
    const key = `${e.from}\0${e.to}`;
    const seen = byPair.get(key);
    if (seen === undefined) byPair.set(key, e);
    else if (seen.typeOnly && !e.typeOnly) byPair.set(key, { ...seen, typeOnly: false });
  }
  return [...byPair.values()];
}

const violation = (e: ImportEdge, why: string): Violation => ({
  from: e.from,
  to: e.to,
  line: e.line,
  typeOnly: e.typeOnly,
  why,
});

/** Adjacency lists of a set of edges between string nodes. */
function adjacency(pairs: Iterable<readonly [string, string]>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [a, b] of pairs) {
    const list = out.get(a);
    if (list === undefined) out.set(a, [b]);
    else if (!list.includes(b)) list.push(b);
  }
  for (const list of out.values()) list.sort();
  return out;
}

/** The shortest path from `start` to `goal` (both included), or undefined. */
function shortestPath(
  next: ReadonlyMap<string, readonly string[]>,
  start: string,
  goal: string,
): string[] | undefined {
  const prev = new Map<string, string>([[start, start]]);
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const v = queue[head]!;
    if (v === goal) {
      const path = [v];
      for (let u = v; u !== start; u = prev.get(u)!) path.push(prev.get(u)!);
      return path.reverse();
    }
    for (const w of next.get(v) ?? []) {
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return undefined;
}

/**
 * Every edge that lies on a loop: an edge a -> b does exactly when b leads
 * back to a. Each comes with the shortest such loop.
 */
function edgesOnLoops(edges: readonly ImportEdge[]): Violation[] {
  const next = adjacency(edges.map((e) => [e.from, e.to] as const));
  const out: Violation[] = [];
  for (const e of edges) {
    const back = shortestPath(next, e.to, e.from);
    if (back !== undefined) {
      out.push(violation(e, `closes the loop ${[e.from, ...back].join(" -> ")}`));
    }
  }
  return out;
}

/**
 * Imports from a lib/ file of an entry file (cli.ts, server.ts, mod.ts):
 * the entry files sit above everything in lib/.
 *
 * @param graph the import graph
 * @param entries the entry files
 * @returns each import of an entry file by a lib/ file
 *
 * @example
 * ```ts
 * import { graphOf } from "./graph.ts";
 * import { libImportsOfEntries } from "./rules.ts";
 * const graph = graphOf([["lib/cli/serve.ts", 'const s = await import("../../server.ts");']]);
 * const found = libImportsOfEntries(graph, ["server.ts"]).map((v) => `${v.from} -> ${v.to}`);
 * if (found.join() !== "lib/cli/serve.ts -> server.ts") throw new Error(found.join());
 * ```
 */
export function libImportsOfEntries(
  graph: ImportGraph,
  entries: readonly string[],
): Violation[] {
  return links(graph.edges)
    .filter((e) => folderOf(e.from) !== undefined && entries.includes(e.to))
    .map((e) => violation(e, "lib/ imports an entry file"));
}

/**
 * Imports between two different lib/ folders that lie on a loop of the
 * folder graph (every import counts, type-only ones too; the leaves are one
 * folder). Each names the folder loop it closes.
 *
 * @param graph the import graph
 * @returns each file import that makes one folder loop back to another
 *
 * @example
 * ```ts
 * import { graphOf } from "./graph.ts";
 * import { folderLoops } from "./rules.ts";
 * const graph = graphOf([
 *   ["lib/store/kv.ts", 'import type { E } from "../client/e.ts";'],
 *   ["lib/client/e.ts", 'import { kv } from "../store/kv.ts";'],
 * ]);
 * const found = folderLoops(graph).map((v) => v.why);
 * if (found[0] !== "closes the folder loop client -> store -> client") throw new Error(found[0]);
 * ```
 */
export function folderLoops(graph: ImportGraph): Violation[] {
  const crossing = links(graph.edges).filter((e) => {
    const a = folderOf(e.from);
    const b = folderOf(e.to);
    return a !== undefined && b !== undefined && a !== b;
  });
  const next = adjacency(crossing.map((e) => [folderOf(e.from)!, folderOf(e.to)!] as const));
  const out: Violation[] = [];
  for (const e of crossing) {
    const a = folderOf(e.from)!;
    const back = shortestPath(next, folderOf(e.to)!, a);
    if (back !== undefined) {
      out.push(violation(e, `closes the folder loop ${[a, ...back].join(" -> ")}`));
    }
  }
  return out;
}

/**
 * Value imports between lib/ files that lie on a loop of value imports
 * (type-only imports left out: they are erased and make no load-time loop;
 * dynamic imports count).
 *
 * @param graph the import graph
 * @returns each value import that closes a loop, with the loop
 *
 * @example
 * ```ts
 * import { graphOf } from "./graph.ts";
 * import { valueLoopsInLib } from "./rules.ts";
 * const graph = graphOf([
 *   ["lib/a.ts", 'import { b } from "./b.ts";'],
 *   ["lib/b.ts", 'import type { A } from "./a.ts";\nimport { c } from "./c.ts";'],
 *   ["lib/c.ts", 'import { a } from "./a.ts";'],
 * ]);
 * const found = valueLoopsInLib(graph).map((v) => `${v.from} -> ${v.to}`);
 * if (found.join() !== "lib/a.ts -> lib/b.ts,lib/b.ts -> lib/c.ts,lib/c.ts -> lib/a.ts") {
 *   throw new Error(found.join());
 * }
 * ```
 */
export function valueLoopsInLib(graph: ImportGraph): Violation[] {
  return edgesOnLoops(
    links(graph.edges).filter((e) =>
      !e.typeOnly && folderOf(e.from) !== undefined && folderOf(e.to) !== undefined
    ),
  );
}

/**
 * Imports between files of one lib/ folder that lie on a loop, type-only
 * imports included.
 *
 * @param graph the import graph
 * @param folder the folder under lib/, e.g. `http`
 * @returns each import inside the folder that closes a loop, with the loop
 *
 * @example
 * ```ts
 * import { graphOf } from "./graph.ts";
 * import { loopsInFolder } from "./rules.ts";
 * const graph = graphOf([
 *   ["lib/http/app.ts", 'import { route } from "./route.ts";'],
 *   ["lib/http/route.ts", 'import type { App } from "./app.ts";'],
 * ]);
 * if (loopsInFolder(graph, "http").length !== 2) throw new Error();
 * ```
 */
export function loopsInFolder(graph: ImportGraph, folder: string): Violation[] {
  return edgesOnLoops(
    links(graph.edges).filter((e) => folderOf(e.from) === folder && folderOf(e.to) === folder),
  );
}

/**
 * Imports by files of the given folders of any local file outside the
 * allowed folders. A folder may always import itself and the leaves;
 * npm:, node: and other non-local imports are no edges and always allowed.
 *
 * @param graph the import graph
 * @param folders the importing folders (`(leaves)` for the top-level lib/*.ts files)
 * @param allowed the other folders they may import
 * @returns each import of a file outside the allowed folders
 *
 * @example
 * ```ts
 * import { graphOf } from "./graph.ts";
 * import { importsOutside } from "./rules.ts";
 * const graph = graphOf([
 *   ["lib/store/versions.ts", 'import { h } from "../closure/hash.ts";\nimport "../errors.ts";'],
 * ]);
 * const found = importsOutside(graph, ["store"], ["protocol"]).map((v) => `${v.from} -> ${v.to}`);
 * if (found.join() !== "lib/store/versions.ts -> lib/closure/hash.ts") throw new Error(found.join());
 * ```
 */
export function importsOutside(
  graph: ImportGraph,
  folders: readonly string[],
  allowed: readonly string[],
): Violation[] {
  const permitted = new Set([...folders, ...allowed, LEAVES]);
  const names = [...new Set([...folders, ...allowed])].filter((f) => f !== LEAVES).sort();
  const may = names.length === 0 ? "leaves" : `${names.join("/, ")}/ and leaves`;
  return links(graph.edges)
    .filter((e) => {
      const a = folderOf(e.from);
      if (a === undefined || !folders.includes(a)) return false;
      const b = folderOf(e.to);
      return b === undefined || !permitted.has(b);
    })
    .map((e) => {
      const where = folderOf(e.from) === LEAVES ? "a leaf" : `lib/${folderOf(e.from)}/`;
      return violation(e, `${where} may import only ${may}`);
    });
}

/**
 * Value imports (not type-only) of one file by files outside the allowed
 * folders (the file's own folder is always allowed).
 *
 * @param graph the import graph
 * @param file the imported file, e.g. `lib/auth/permissions.ts`
 * @param allowed the folders that may import it
 * @returns each value import of it from elsewhere
 *
 * @example
 * ```ts
 * import { graphOf } from "./graph.ts";
 * import { valueImportsOf } from "./rules.ts";
 * const graph = graphOf([
 *   ["lib/http/a.ts", 'import { authorize } from "../auth/permissions.ts";'],
 *   ["lib/http/b.ts", 'import type { Action } from "../auth/permissions.ts";'],
 *   ["lib/services/c.ts", 'import { authorize } from "../auth/permissions.ts";'],
 * ]);
 * const found = valueImportsOf(graph, "lib/auth/permissions.ts", ["services"]).map((v) => v.from);
 * if (found.join() !== "lib/http/a.ts") throw new Error(found.join());
 * ```
 */
export function valueImportsOf(
  graph: ImportGraph,
  file: string,
  allowed: readonly string[],
): Violation[] {
  const permitted = new Set([...allowed, folderOf(file)]);
  return links(graph.edges)
    .filter((e) => e.to === file && !e.typeOnly && !permitted.has(folderOf(e.from)))
    .map((e) => violation(e, `only ${allowed.map((f) => `lib/${f}/`).join(", ")} may call ${file}`))
    .sort((a, b) => a.from.localeCompare(b.from));
}

/**
 * Imports by files of one folder of files in forbidden folders, except
 * those the `allow` predicate accepts.
 *
 * @param graph the import graph
 * @param folder the importing folder
 * @param forbidden the folders it must not import
 * @param allow exceptions: imports that may cross anyway
 * @returns each forbidden import
 *
 * @example
 * ```ts
 * import { graphOf } from "./graph.ts";
 * import { importsInto } from "./rules.ts";
 * const graph = graphOf([
 *   ["lib/cli/serve.ts", 'import { start } from "../server/start.ts";'],
 *   ["lib/cli/push.ts", 'import { app } from "../http/app.ts";'],
 * ]);
 * const found = importsInto(graph, "cli", ["http", "server"], (e) => e.from === "lib/cli/serve.ts")
 *   .map((v) => `${v.from} -> ${v.to}`);
 * if (found.join() !== "lib/cli/push.ts -> lib/http/app.ts") throw new Error(found.join());
 * ```
 */
export function importsInto(
  graph: ImportGraph,
  folder: string,
  forbidden: readonly string[],
  allow: (edge: ImportEdge) => boolean = () => false,
): Violation[] {
  return links(graph.edges)
    .filter((e) => folderOf(e.from) === folder && forbidden.includes(folderOf(e.to) ?? ""))
    .filter((e) => !allow(e))
    .map((e) => violation(e, `lib/${folder}/ must not import lib/${folderOf(e.to)}/`));
}

/**
 * The imports through which files of a folder reach, directly or through
 * any chain of imports (type-only ones too), a file in a forbidden folder:
 * each import from a reachable, allowed file into a forbidden one, with the
 * shortest chain from the folder to it. The search does not go on past a
 * forbidden file, so each chain is cut at its first forbidden step.
 *
 * @param graph the import graph
 * @param folder the folder whose reach is checked, e.g. `client`
 * @param forbidden the folders it must not reach
 * @returns each import that steps into a forbidden folder, with the chain that leads to it
 *
 * @example
 * ```ts
 * import { graphOf } from "./graph.ts";
 * import { reachInto } from "./rules.ts";
 * const graph = graphOf([
 *   ["lib/client/api.ts", 'import { m } from "../flags/model.ts";'],
 *   ["lib/flags/model.ts", 'import type { V } from "../store/versions.ts";'],
 * ]);
 * const [v] = reachInto(graph, "client", ["store"]);
 * if (`${v?.from} -> ${v?.to}` !== "lib/flags/model.ts -> lib/store/versions.ts") throw new Error();
 * if (v?.why !== "reached by lib/client/api.ts -> lib/flags/model.ts") throw new Error(v?.why);
 * ```
 */
export function reachInto(
  graph: ImportGraph,
  folder: string,
  forbidden: readonly string[],
): Violation[] {
  const edges = links(graph.edges);
  const isForbidden = (file: string) => forbidden.includes(folderOf(file) ?? "");
  const next = adjacency(edges.map((e) => [e.from, e.to] as const));
  const prev = new Map<string, string | undefined>();
  const queue: string[] = [];
  for (const f of graph.files) {
    if (folderOf(f) === folder) {
      prev.set(f, undefined);
      queue.push(f);
    }
  }
  for (let head = 0; head < queue.length; head++) {
    const v = queue[head]!;
    if (isForbidden(v)) continue;
    for (const w of next.get(v) ?? []) {
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  const chain = (file: string): string => {
    const path = [file];
    for (let u = prev.get(file); u !== undefined; u = prev.get(u)) path.push(u);
    return path.reverse().join(" -> ");
  };
  return edges
    .filter((e) => prev.has(e.from) && !isForbidden(e.from) && isForbidden(e.to))
    .map((e) =>
      violation(
        e,
        folderOf(e.from) === folder
          ? `lib/${folder}/ imports lib/${folderOf(e.to)}/`
          : `reached by ${chain(e.from)}`,
      )
    );
}
