/**
 * The workspace layout (docs/workspace.md): which relative path holds which
 * kind of resource, and which names are documentation beside the workspace
 * (`*.md`, `LICENSE*`, dot-files and dot-directories) that the tool ignores.
 * Anything else is an unexpected file.
 *
 * @module
 */
import { CONTEXT_CONTRACT_PATH } from "./model.ts";

/** What a workspace-relative path holds. */
export type FileKind =
  | { kind: "variable"; name: string }
  | { kind: "catalog"; name: string }
  | { kind: "entry"; catalog: string; name: string }
  | { kind: "qualifier"; name: string }
  | { kind: "schema"; name: string }
  | { kind: "context" }
  | { kind: "unexpected" };

/** The one-line description of the layout used in "unexpected file" problems. */
export const LAYOUT_SUMMARY =
  "a workspace holds only variables/<name>.toml, catalogs/<name>.toml, " +
  "catalogs/<catalog>-entries/<key>.toml, qualifiers/<name>.toml and schemas/<name>.schema.json " +
  "(documentation is ignored: *.md, LICENSE*, and names starting with .)";

/**
 * Whether a file or directory name is documentation or tooling beside the
 * workspace rather than part of it: `*.md`, `LICENSE*`, and any name starting
 * with `.` (`.git`, `.gitignore`, `.DS_Store`). Such entries are skipped at
 * every level: lint does not check them and the source fingerprint leaves
 * them out. Workspace names are lower-case and end in `.toml` or `.json`, so
 * no workspace file is ever ignored.
 *
 * @param name one path segment (a file or directory name)
 * @returns true when the entry is ignored
 *
 * @example
 * ```ts
 * import { isIgnoredName } from "./layout.ts";
 * if (!isIgnoredName("README.md") || !isIgnoredName("LICENSE") || !isIgnoredName(".git")) {
 *   throw new Error();
 * }
 * if (isIgnoredName("variables") || isIgnoredName("notes.txt")) throw new Error();
 * ```
 */
export function isIgnoredName(name: string): boolean {
  return name.startsWith(".") || name.endsWith(".md") || name.startsWith("LICENSE");
}

const ENTRIES_SUFFIX = "-entries";

/**
 * Classifies a workspace-relative, `/`-separated path. Names are returned as
 * written; whether they are valid names is the loader's check.
 *
 * @param path the relative path (`variables/x.toml`)
 * @returns the kind of resource and its name(s)
 *
 * @example
 * ```ts
 * import { classifyPath } from "./layout.ts";
 * const k = classifyPath("catalogs/delivery-entries/default.toml");
 * if (k.kind !== "entry" || k.catalog !== "delivery" || k.name !== "default") throw new Error();
 * if (classifyPath("notes.txt").kind !== "unexpected") throw new Error();
 * ```
 */
export function classifyPath(path: string): FileKind {
  if (path === CONTEXT_CONTRACT_PATH) return { kind: "context" };
  const parts = path.split("/");
  const [top, second, third] = parts;
  if (parts.length === 2 && second !== undefined) {
    const toml = stem(second, ".toml");
    if (top === "variables" && toml !== undefined) return { kind: "variable", name: toml };
    if (top === "catalogs" && toml !== undefined) return { kind: "catalog", name: toml };
    if (top === "qualifiers" && toml !== undefined) return { kind: "qualifier", name: toml };
    const schema = stem(second, ".schema.json");
    if (top === "schemas" && schema !== undefined) return { kind: "schema", name: schema };
  }
  if (parts.length === 3 && top === "catalogs" && second !== undefined && third !== undefined) {
    const catalog = stem(second, ENTRIES_SUFFIX);
    const name = stem(third, ".toml");
    if (catalog !== undefined && name !== undefined) return { kind: "entry", catalog, name };
  }
  return { kind: "unexpected" };
}

/**
 * The directory that holds a catalog's entries, relative to the workspace.
 *
 * @example
 * ```ts
 * import { entriesDir } from "./layout.ts";
 * if (entriesDir("delivery") !== "catalogs/delivery-entries") throw new Error();
 * ```
 */
export function entriesDir(catalog: string): string {
  return `catalogs/${catalog}${ENTRIES_SUFFIX}`;
}

function stem(name: string, suffix: string): string | undefined {
  return name.endsWith(suffix) && name.length > suffix.length
    ? name.slice(0, -suffix.length)
    : undefined;
}
