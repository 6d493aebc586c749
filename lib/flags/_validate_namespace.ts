/**
 * Checks of `namespace.toml`: the namespace description and its
 * environments.
 *
 * @module
 */
import type { TomlTable } from "../toml.ts";
import { join } from "./_key_path.ts";
import { describe, type FileChecker, isTable } from "./_validate_common.ts";
import { type Environment, KEY_RE, type Manifest, MAX_ENVIRONMENTS } from "./model.ts";

const NAMESPACE_FILE_KEYS = ["schema_version", "namespace"];
const NAMESPACE_KEYS = ["description", "environments"];
const ENVIRONMENT_KEYS = ["public_evaluate"];

/**
 * Checks `namespace.toml`. `envKeys` are the environment keys that flag
 * overrides may name; undefined when they cannot be known. The limit of
 * {@linkcode MAX_ENVIRONMENTS} is checked unless `fc.mode.stored`.
 */
export function checkNamespace(
  fc: FileChecker,
  t: TomlTable,
): { namespace: Manifest["namespace"]; envKeys: Set<string> | undefined } {
  fc.keys(t, "", NAMESPACE_FILE_KEYS);
  fc.schemaVersion(t);
  const namespace: Manifest["namespace"] = { description: "", environments: {} };
  const ns = fc.optTable(t, "", "namespace");
  if (ns === undefined) return { namespace, envKeys: undefined };
  fc.keys(ns, "namespace", NAMESPACE_KEYS);
  namespace.description = fc.optString(ns, "namespace", "description", "") ?? "";
  const envs = fc.optTable(ns, "namespace", "environments");
  if (envs === undefined) return { namespace, envKeys: undefined };
  const envKeys = new Set<string>();
  const count = Object.keys(envs).length;
  // A push-only limit: a stored version with more still loads.
  if (count > MAX_ENVIRONMENTS && !fc.mode.stored) {
    fc.report(
      "namespace.environments",
      `declares ${count} environments; the limit is ${MAX_ENVIRONMENTS}`,
    );
  }
  for (const [name, raw] of Object.entries(envs)) {
    const prefix = join("namespace.environments", name);
    envKeys.add(name);
    if (!KEY_RE.test(name)) {
      fc.report(
        prefix,
        `invalid environment key ${JSON.stringify(name)} (keys match ${KEY_RE.source})`,
      );
    }
    if (!isTable(raw)) {
      fc.report(prefix, `expected a table, found ${describe(raw)}`);
      continue;
    }
    fc.keys(raw, prefix, ENVIRONMENT_KEYS);
    const env: Environment = { public_evaluate: false };
    const pe = raw.public_evaluate;
    if (pe !== undefined) {
      if (typeof pe === "boolean") env.public_evaluate = pe;
      else fc.report(join(prefix, "public_evaluate"), `expected a boolean, found ${describe(pe)}`);
    }
    namespace.environments[name] = env;
  }
  return { namespace, envKeys };
}
