/**
 * Closure selection (docs/events.md): for a subscription (a namespace's
 * files and `*` or a set of flag keys), the smallest set of manifest files
 * that is itself a valid namespace holding exactly the subscribed flags:
 * `namespace.toml`, `flags/<flag>.toml` for each subscribed flag that
 * exists, and `segments/<segment>.toml` for every segment reachable from
 * them (transitively). `*` takes every flag, every reachable segment and
 * every orphan segment. Flag keys missing from the manifest are accepted and
 * simply omitted.
 *
 * @module
 */
import { type Manifest, parseManifestPath } from "./model.ts";
import { reachableSegments } from "./reach.ts";
import { parseManifest } from "./validate.ts";
import type { FileSet } from "../closure/hash.ts";
import type { FlagSelection } from "../protocol/subscription.ts";

/**
 * Selects the closure of a subscription from a manifest's files.
 *
 * @param files every file of one manifest version (valid)
 * @param flags `*` or the subscribed flag keys
 * @param model the parsed manifest, when the caller already has it
 * @returns the closure: path → bytes (the same byte arrays as `files`)
 *
 * @example
 * ```ts
 * import { selectClosure } from "./select.ts";
 * const enc = new TextEncoder();
 * const flag = 'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n';
 * const files = new Map([
 *   ["namespace.toml", enc.encode("schema_version = 1\n")],
 *   ["flags/a.toml", enc.encode(flag)],
 *   ["flags/b.toml", enc.encode(flag)],
 * ]);
 * const closure = selectClosure(files, ["a", "missing"]);
 * if ([...closure.keys()].join() !== "namespace.toml,flags/a.toml") throw new Error();
 * ```
 */
export function selectClosure(
  files: FileSet,
  flags: FlagSelection,
  model?: Manifest,
): Map<string, Uint8Array> {
  if (flags === "*") return new Map(files);
  const m = model ?? parseManifest(files);
  const wanted = new Set<string>(["namespace.toml"]);
  const present = flags.filter((f) => Object.hasOwn(m.flags, f));
  for (const f of present) wanted.add(`flags/${f}.toml`);
  for (const s of reachableSegments(m, present)) wanted.add(`segments/${s}.toml`);
  const out = new Map<string, Uint8Array>();
  for (const [path, bytes] of files) {
    if (wanted.has(path)) out.set(path, bytes);
  }
  return out;
}

/**
 * The flag keys a closure holds (for checks and metrics).
 *
 * @param closure a closure
 * @returns flag keys in path order
 *
 * @example
 * ```ts
 * import { closureFlags } from "./select.ts";
 * const keys = closureFlags(new Map([["flags/a.toml", new Uint8Array()]]));
 * if (keys.join() !== "a") throw new Error();
 * ```
 */
export function closureFlags(closure: FileSet): string[] {
  const out: string[] = [];
  for (const path of closure.keys()) {
    const p = parseManifestPath(path);
    if (p?.kind === "flag") out.push(p.key);
  }
  return out;
}
