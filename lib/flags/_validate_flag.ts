/**
 * Checks of `flags/<key>.toml`: type, variations and their values, default,
 * rules and per-environment overrides.
 *
 * @module
 */
import { quoteName } from "../suggest.ts";
import { compareUtf8 } from "../bytes.ts";
import type { TomlTable } from "../toml.ts";
import { describe, isTable, keyPath } from "../toml_fields.ts";
import type { FileChecker } from "./_validate_common.ts";
import { checkRule, checkVariationRef } from "./_validate_rule.ts";
import {
  type EnvironmentOverride,
  type Flag,
  FLAG_TYPES,
  type FlagType,
  SCHEMA_VERSION,
  VARIATION_NAME_RE,
  type VariationValue,
} from "./model.ts";

const FLAG_KEYS = [
  "schema_version",
  "description",
  "type",
  "default",
  "variations",
  "rule",
  "environments",
];
const OVERRIDE_KEYS = ["enabled", "default", "rule"];

/**
 * Checks one flag file. `envKeys` are the environments overrides may name
 * (undefined: not checked).
 */
export function checkFlag(
  fc: FileChecker,
  key: string,
  t: TomlTable,
  segmentKeys: ReadonlySet<string>,
  envKeys: ReadonlySet<string> | undefined,
): Flag {
  fc.unknownKeys(t, "", FLAG_KEYS);
  fc.schemaVersion(t, SCHEMA_VERSION);
  const flag: Flag = {
    key,
    description: fc.string(t, "", "description", false) ?? "",
    type: "boolean",
    default: "",
    variations: {},
    rules: [],
    environments: {},
  };

  let type: FlagType | undefined;
  if (fc.present(t, "", "type")) {
    if (typeof t.type === "string" && (FLAG_TYPES as readonly string[]).includes(t.type)) {
      type = t.type as FlagType;
      flag.type = type;
    } else {
      fc.report(
        "type",
        typeof t.type === "string"
          ? `unknown type ${JSON.stringify(t.type)} (one of ${FLAG_TYPES.join(", ")})`
          : `expected a string (one of ${FLAG_TYPES.join(", ")}), found ${describe(t.type)}`,
      );
    }
  }

  // Variation names that references may use; undefined when they cannot be known.
  let names: Set<string> | undefined;
  const variations = fc.table(t, "", "variations", true);
  if (variations !== undefined) {
    names = new Set();
    const entries = Object.entries(variations);
    if (entries.length === 0) fc.report("variations", "a flag needs at least one variation");
    for (const [name, value] of entries) {
      const vk = keyPath("variations", name);
      names.add(name);
      if (!VARIATION_NAME_RE.test(name)) {
        fc.report(
          vk,
          `invalid variation name ${quoteName(name)} (names match ${VARIATION_NAME_RE.source})`,
        );
      }
      if (type !== undefined) {
        const msg = checkValueType(type, value);
        if (msg) fc.report(vk, msg);
      }
      flag.variations[name] = value as VariationValue;
    }
  }

  if (fc.present(t, "", "default")) {
    const d = checkVariationRef(fc, "default", t.default, names);
    if (d !== undefined) flag.default = d;
  }

  const rules = fc.tables(t, "", "rule", false);
  if (rules !== undefined) {
    flag.rules = rules.map((raw, i) => checkRule(fc, keyPath("rule", i), raw, names, segmentKeys));
  }

  const envs = fc.table(t, "", "environments", false);
  if (envs !== undefined) {
    for (const [env, raw] of Object.entries(envs)) {
      const prefix = keyPath("environments", env);
      if (envKeys !== undefined && !envKeys.has(env)) {
        const declared = [...envKeys].sort(compareUtf8).join(", ");
        fc.report(
          prefix,
          `unknown environment ${quoteName(env)} (namespace.toml declares ${
            declared === "" ? "none" : declared
          })`,
        );
      }
      const table = fc.asTable(raw, prefix);
      if (table === undefined) continue;
      fc.unknownKeys(table, prefix, OVERRIDE_KEYS);
      const override: EnvironmentOverride = {
        enabled: fc.boolean(table, prefix, "enabled", false) ?? true,
      };
      if (table.default !== undefined) {
        const d = checkVariationRef(fc, keyPath(prefix, "default"), table.default, names);
        if (d !== undefined) override.default = d;
      }
      const rs = fc.tables(table, prefix, "rule", false);
      if (rs !== undefined) {
        override.rules = rs.map((r, i) =>
          checkRule(fc, keyPath(keyPath(prefix, "rule"), i), r, names, segmentKeys)
        );
      }
      flag.environments[env] = override;
    }
  }
  return flag;
}

function checkValueType(type: FlagType, v: unknown): string | undefined {
  const want = `(the flag's type is ${type})`;
  switch (type) {
    case "boolean":
      return typeof v === "boolean"
        ? undefined
        : `expected a boolean ${want}, found ${describe(v)}`;
    case "string":
      return typeof v === "string" ? undefined : `expected a string ${want}, found ${describe(v)}`;
    case "number":
      if (typeof v === "number" && Number.isFinite(v)) return undefined;
      return `expected a finite number ${want}, found ${describe(v)}`;
    case "object": {
      if (!isTable(v)) return `expected a table ${want}, found ${describe(v)}`;
      const bad = nonJsonPath(v, "");
      return bad === undefined ? undefined : `${bad}: nan and inf are not JSON values`;
    }
  }
}

/** Path of the first non-finite number inside a value (JSON has no nan/inf). */
function nonJsonPath(v: unknown, at: string): string | undefined {
  if (typeof v === "number") return Number.isFinite(v) ? undefined : at || "value";
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const r = nonJsonPath(v[i], `${at}[${i}]`);
      if (r !== undefined) return r;
    }
  } else if (isTable(v)) {
    for (const [k, x] of Object.entries(v)) {
      const r = nonJsonPath(x, keyPath(at, k));
      if (r !== undefined) return r;
    }
  }
  return undefined;
}
