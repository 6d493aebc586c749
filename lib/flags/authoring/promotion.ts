/**
 * Promotion: copy a flag's configuration as it is in force in one
 * environment into another environment's override, so that the second
 * then evaluates exactly as the first, for every context.
 *
 * What is in force in environment A is what the engine resolves
 * (lib/flags/effective.ts): whether the flag is on (A's `enabled`, else
 * on), its default (A's, else the flag's) and its rules (A's own, else the
 * flag's). Promotion writes all three into B's override explicitly —
 * `enabled`, `default` and rules of B's own — so B no longer follows the
 * flag's rules or default: a later edit of those changes A (when A follows
 * them) but not B. Rules are copied as written (weights in their own
 * scale, `bucket_by` as set).
 *
 * @module
 */
import { checkKnown, refuse } from "./_args.ts";
import { isTable } from "./_doc.ts";
import { environmentKeys } from "./_files.ts";
import { openOverride } from "./_override.ts";
import type { FileEdits, ManifestTexts } from "./texts.ts";

/**
 * Makes environment `to` serve flag `flag` exactly as environment `from`
 * does. Fields of refusals: `flag`, `from`, `to`.
 *
 * @param texts the version's texts
 * @param edit the flag and the two environments
 * @returns the flag's file, or nothing when `to`'s override already says exactly that
 * @throws {InvalidRequestError} when the flag or an environment is unknown, or the two are the same
 *
 * @example
 * ```ts
 * import { promote } from "./promotion.ts";
 * const texts = new Map([
 *   ["namespace.toml", "schema_version = 1\n[namespace.environments.staging]\n[namespace.environments.production]\n"],
 *   ["flags/a.toml", 'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n' +
 *     '[environments.staging]\ndefault = "on"\n'],
 * ]);
 * const out = promote(texts, { flag: "a", from: "staging", to: "production" }).get("flags/a.toml");
 * if (!out?.endsWith('[environments.production]\nenabled = true\ndefault = "on"\nrule = []\n')) {
 *   throw new Error(String(out));
 * }
 * ```
 */
export function promote(
  texts: ManifestTexts,
  edit: { flag: string; from: string; to: string },
): FileEdits {
  const envs = environmentKeys(texts);
  const from = checkKnown(edit.from, envs, "from", "environment", "environments");
  const to = checkKnown(edit.to, envs, "to", "environment", "environments");
  if (from === to) refuse(`Choose another environment than ${from} to promote to`, "to");
  const o = openOverride(texts, { flag: edit.flag, environment: to });
  const doc = o.file.doc;
  const source = isTable(doc.environments) && isTable(doc.environments[from])
    ? doc.environments[from]
    : {};
  const rules = Array.isArray(source.rule) ? source.rule : Array.isArray(doc.rule) ? doc.rule : [];
  o.table.enabled = source.enabled ?? true;
  o.table.default = source.default ?? doc.default;
  o.table.rule = structuredClone(rules);
  return o.write("to");
}
