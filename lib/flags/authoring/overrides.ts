/**
 * Authoring a flag's overrides, one environment at a time
 * (`[environments.<env>]`): set or clear `enabled` and `default`, give the
 * environment rules of its own (a copy of the flag's rules to start from)
 * or drop them (it falls back to the flag's rules). Only environments
 * declared in `namespace.toml` can be overridden. An override left with
 * nothing to say is removed, table and all, so the file reads as if the
 * environment had never been overridden.
 *
 * Fields of refusals: `environment`, `enabled`, `variation`.
 *
 * @module
 */
import { checkBoolean, checkKnown, refuse } from "./_args.ts";
import { variationNames } from "./_flag_file.ts";
import { openOverride, type OverrideScope } from "./_override.ts";
import type { FileEdits, ManifestTexts } from "./texts.ts";

export type { OverrideScope } from "./_override.ts";

/**
 * Sets `enabled` in the environment's override (`false`: every context
 * gets the default with reason `DISABLED`), or clears it (`null`: the
 * flag is on there, as without an override).
 *
 * @param texts the version's texts
 * @param edit the flag, the environment, and `true`, `false` or `null`
 * @returns the flag's file, or nothing when unchanged
 * @throws {InvalidRequestError} when the flag or environment is unknown, or `enabled` is not a boolean or null
 *
 * @example
 * ```ts
 * import { setOverrideEnabled } from "./overrides.ts";
 * const texts = new Map([
 *   ["namespace.toml", "schema_version = 1\n[namespace.environments.staging]\n"],
 *   ["flags/a.toml", 'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n'],
 * ]);
 * const off = setOverrideEnabled(texts, { flag: "a", environment: "staging", enabled: false });
 * if (!off.get("flags/a.toml")?.endsWith("off = false\n[environments.staging]\nenabled = false\n")) {
 *   throw new Error(String(off.get("flags/a.toml")));
 * }
 * const back = setOverrideEnabled(new Map([...texts, ...off]) as Map<string, string>,
 *   { flag: "a", environment: "staging", enabled: null });
 * if (back.get("flags/a.toml") !== texts.get("flags/a.toml")) throw new Error(String(back.get("flags/a.toml")));
 * ```
 */
export function setOverrideEnabled(
  texts: ManifestTexts,
  edit: OverrideScope & { enabled: boolean | null },
): FileEdits {
  const o = openOverride(texts, edit);
  if (edit.enabled === null) delete o.table.enabled;
  else o.table.enabled = checkBoolean(edit.enabled, "enabled", "enabled");
  return o.write("enabled");
}

/**
 * Sets the variation the environment serves when no rule matches (and when
 * the flag is off there), or clears it (`null`: the flag's default).
 *
 * @param texts the version's texts
 * @param edit the flag, the environment, and a variation name or `null`
 * @returns the flag's file, or nothing when unchanged
 * @throws {InvalidRequestError} when the flag, environment or variation is unknown
 *
 * @example
 * ```ts
 * import { setOverrideDefault } from "./overrides.ts";
 * const texts = new Map([
 *   ["namespace.toml", "schema_version = 1\n[namespace.environments.staging]\n"],
 *   ["flags/a.toml", 'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n[environments.staging]\nenabled = false\n'],
 * ]);
 * const out = setOverrideDefault(texts, { flag: "a", environment: "staging", variation: "on" });
 * if (!out.get("flags/a.toml")?.endsWith('[environments.staging]\nenabled = false\ndefault = "on"\n')) {
 *   throw new Error(String(out.get("flags/a.toml")));
 * }
 * ```
 */
export function setOverrideDefault(
  texts: ManifestTexts,
  edit: OverrideScope & { variation: string | null },
): FileEdits {
  const o = openOverride(texts, edit);
  if (edit.variation === null) delete o.table.default;
  else {
    o.table.default = checkKnown(
      edit.variation,
      variationNames(o.file.doc),
      "variation",
      "variation",
      "variations",
    );
  }
  return o.write("variation");
}

/**
 * Gives the environment rules of its own, starting as a copy of the flag's
 * rules (as written: same segments, weights in the same scale, same
 * `bucket_by`); from then on the flag's rules no longer apply there. A flag
 * without rules gives the environment an empty list (`rule = []`).
 *
 * @param texts the version's texts
 * @param edit the flag and the environment
 * @returns the flag's file
 * @throws {InvalidRequestError} when the flag or environment is unknown, or the environment already has its own rules
 *
 * @example
 * ```ts
 * import { giveOwnRules } from "./overrides.ts";
 * const texts = new Map([
 *   ["namespace.toml", "schema_version = 1\n[namespace.environments.staging]\n"],
 *   ["flags/a.toml", 'schema_version = 1\ntype = "boolean"\ndefault = "off"\n\n[variations]\non = true\noff = false\n\n[[rule]]\nvariation = "on"\n'],
 * ]);
 * const out = giveOwnRules(texts, { flag: "a", environment: "staging" }).get("flags/a.toml");
 * if (!out?.endsWith('[[rule]]\nvariation = "on"\n\n[[environments.staging.rule]]\nvariation = "on"\n')) {
 *   throw new Error(String(out));
 * }
 * ```
 */
export function giveOwnRules(texts: ManifestTexts, edit: OverrideScope): FileEdits {
  const o = openOverride(texts, edit);
  if (Array.isArray(o.table.rule)) {
    refuse(`${edit.environment} already has rules of its own for ${edit.flag}`, "environment");
  }
  const rules = o.file.doc.rule;
  o.table.rule = Array.isArray(rules) ? structuredClone(rules) : [];
  return o.write("environment");
}

/**
 * Drops the environment's own rules: the flag's rules apply there again.
 *
 * @param texts the version's texts
 * @param edit the flag and the environment
 * @returns the flag's file, or nothing when the environment had no rules of its own
 * @throws {InvalidRequestError} when the flag or environment is unknown
 *
 * @example
 * ```ts
 * import { dropOwnRules } from "./overrides.ts";
 * const texts = new Map([
 *   ["namespace.toml", "schema_version = 1\n[namespace.environments.staging]\n"],
 *   ["flags/a.toml", 'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n' +
 *     '[environments.staging]\ndefault = "on"\n[[environments.staging.rule]]\nvariation = "off"\n'],
 * ]);
 * const out = dropOwnRules(texts, { flag: "a", environment: "staging" }).get("flags/a.toml");
 * if (!out?.endsWith('[environments.staging]\ndefault = "on"\n')) throw new Error(String(out));
 * ```
 */
export function dropOwnRules(texts: ManifestTexts, edit: OverrideScope): FileEdits {
  const o = openOverride(texts, edit);
  delete o.table.rule;
  return o.write("environment");
}
