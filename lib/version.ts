/**
 * What this build of cfgtool is: its version (from deno.json), the Deno
 * runtime it runs on, and the git commit it was built from when that is
 * known. A binary made by `deno task compile` carries its commit in
 * `dist/commit.txt`, written by the task and embedded in the binary; when
 * cfgtool runs from source, `CFGTOOL_BUILD_COMMIT` names the commit (for
 * images that run from source); otherwise the commit is unknown and said so.
 *
 * @module
 */
import denoJson from "../deno.json" with { type: "json" };

/** The cfgtool version, as deno.json declares it. */
export const VERSION: string = denoJson.version;

/** The `Server` header value of every HTTP response: `cfgtool/<version>`. */
export const SERVER_HEADER: string = `cfgtool/${VERSION}`;

/** The environment variable that names the commit of a run from source. */
export const COMMIT_ENV = "CFGTOOL_BUILD_COMMIT";

/** The file `deno task compile` writes and embeds: the commit, one line. */
export const BAKED_COMMIT_FILE: URL = new URL("../dist/commit.txt", import.meta.url);

/** A git commit as `git describe --always --dirty` prints it (or a full hash). */
const COMMIT_PATTERN = /^[0-9a-f]{7,64}(-dirty)?$/;

/** Where the build commit may come from; every field defaults to the real source. */
export interface CommitSources {
  /** Whether this is a `deno compile` binary (default: `Deno.build.standalone`). */
  standalone?: boolean;
  /** The embedded commit file (default: {@linkcode BAKED_COMMIT_FILE}). */
  file?: URL | string;
  /** Reads an environment variable (default: the process environment, if readable). */
  env?: (name: string) => string | undefined;
}

/**
 * The commit this build was made from, or `undefined` when unknown. A
 * compiled binary reads the commit embedded by `deno task compile`; a run
 * from source reads `CFGTOOL_BUILD_COMMIT`. Values that do not look like a
 * commit (7 to 64 hex digits, optionally `-dirty`) are ignored, and nothing
 * here ever prompts for a permission.
 *
 * @param sources where to look (tests override them)
 * @returns the commit, or undefined
 *
 * @example
 * ```ts
 * import { buildCommit } from "./version.ts";
 * const commit = buildCommit({ standalone: false, env: () => "0123abcd" });
 * if (commit !== "0123abcd") throw new Error(commit);
 * ```
 */
export function buildCommit(sources: CommitSources = {}): string | undefined {
  const standalone = sources.standalone ?? Deno.build.standalone === true;
  const raw = standalone
    ? readIfAllowed(sources.file ?? BAKED_COMMIT_FILE)
    : (sources.env ?? readEnvIfAllowed)(COMMIT_ENV);
  const commit = raw?.trim();
  return commit !== undefined && COMMIT_PATTERN.test(commit) ? commit : undefined;
}

/**
 * The text `cfgtool --version` prints: the cfgtool version with the build's
 * commit (or "commit unknown"), then the Deno, V8 and TypeScript versions.
 *
 * @param commit the build commit (default: {@linkcode buildCommit})
 * @returns two lines, without a trailing newline
 *
 * @example
 * ```ts
 * import { versionText } from "./version.ts";
 * const text = versionText(undefined);
 * if (!text.startsWith("cfgtool ") || !text.includes("(commit unknown)")) throw new Error(text);
 * ```
 */
export function versionText(commit: string | undefined = buildCommit()): string {
  const v = Deno.version;
  return `cfgtool ${VERSION} (commit ${commit ?? "unknown"})\n` +
    `deno ${v.deno} (v8 ${v.v8}, typescript ${v.typescript})`;
}

function readIfAllowed(file: URL | string): string | undefined {
  try {
    if (Deno.permissions.querySync({ name: "read", path: file }).state !== "granted") {
      return undefined;
    }
    return Deno.readTextFileSync(file);
  } catch {
    return undefined; // not embedded (compiled without the task), or unreadable
  }
}

function readEnvIfAllowed(name: string): string | undefined {
  if (Deno.permissions.querySync({ name: "env", variable: name }).state !== "granted") {
    return undefined;
  }
  return Deno.env.get(name);
}
