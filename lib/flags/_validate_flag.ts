/**
 * Checks of `flags/<key>.toml`: type, variations and their values, default,
 * rules and per-environment overrides.
 *
 * @module
 */
import { compareUtf8 } from "../bytes.ts";
import type { TomlTable } from "../toml.ts";
import { join } from "./_key_path.ts";
import { describe, type FileChecker, isTable } from "./_validate_common.ts";
import { checkRule, checkVariationRef } from "./_validate_rule.ts";
import {
  type EnvironmentOverride,
  type Flag,
  FLAG_TYPES,
  type FlagType,
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
  fc.keys(t, "", FLAG_KEYS);
  fc.schemaVersion(t);
  const flag: Flag = {
    key,
    description: fc.optString(t, "", "description", "") ?? "",
    type: "boolean",
    default: "",
    variations: {},
    rules: [],
    environments: {},
  };

  let type: FlagType | undefined;
  if (t.type === undefined) fc.report("type", "missing required key");
  else if (typeof t.type === "string" && (FLAG_TYPES as readonly string[]).includes(t.type)) {
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

  // Variation names that references may use; undefined when they cannot be known.
  let names: Set<string> | undefined;
  if (t.variations === undefined) fc.report("variations", "missing required key");
  else if (!isTable(t.variations)) {
    fc.report("variations", `expected a table, found ${describe(t.variations)}`);
  } else {
    names = new Set();
    const entries = Object.entries(t.variations);
    if (entries.length === 0) fc.report("variations", "a flag needs at least one variation");
    for (const [name, value] of entries) {
      const vk = join("variations", name);
      names.add(name);
      if (!VARIATION_NAME_RE.test(name)) {
        fc.report(
          vk,
          `invalid variation name ${
            JSON.stringify(name)
          } (names match ${VARIATION_NAME_RE.source})`,
        );
      }
      if (type !== undefined) {
        const msg = checkValueType(type, value);
        if (msg) fc.report(vk, msg);
      }
      flag.variations[name] = value as VariationValue;
    }
  }

  if (t.default === undefined) fc.report("default", "missing required key");
  else {
    const d = checkVariationRef(fc, "default", t.default, names);
    if (d !== undefined) flag.default = d;
  }

  const rules = fc.tableArray(t, "", "rule");
  if (rules !== undefined) {
    flag.rules = rules.map((raw, i) => checkRule(fc, `rule[${i}]`, raw, names, segmentKeys));
  }

  const envs = fc.optTable(t, "", "environments");
  if (envs !== undefined) {
    for (const [env, raw] of Object.entries(envs)) {
      const prefix = join("environments", env);
      if (envKeys !== undefined && !envKeys.has(env)) {
        const declared = [...envKeys].sort(compareUtf8).join(", ");
        fc.report(
          prefix,
          `unknown environment ${JSON.stringify(env)} (namespace.toml declares ${
            declared === "" ? "none" : declared
          })`,
        );
      }
      if (!isTable(raw)) {
        fc.report(prefix, `expected a table, found ${describe(raw)}`);
        continue;
      }
      fc.keys(raw, prefix, OVERRIDE_KEYS);
      const override: EnvironmentOverride = { enabled: true };
      if (raw.enabled !== undefined) {
        if (typeof raw.enabled === "boolean") override.enabled = raw.enabled;
        else {fc.report(
            join(prefix, "enabled"),
            `expected a boolean, found ${describe(raw.enabled)}`,
          );}
      }
      if (raw.default !== undefined) {
        const d = checkVariationRef(fc, join(prefix, "default"), raw.default, names);
        if (d !== undefined) override.default = d;
      }
      if (raw.rule !== undefined) {
        const rs = fc.tableArray(raw, prefix, "rule");
        if (rs !== undefined) {
          override.rules = rs.map((r, i) =>
            checkRule(fc, `${join(prefix, "rule")}[${i}]`, r, names, segmentKeys)
          );
        }
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
      const r = nonJsonPath(x, join(at, k));
      if (r !== undefined) return r;
    }
  }
  return undefined;
}
