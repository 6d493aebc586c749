/**
 * Checks of `namespace.toml`: the namespace description and its
 * environments.
 *
 * @module
 */
import { quoteName } from "../suggest.ts";
import type { TomlTable } from "../toml.ts";
import { keyPath } from "../toml_fields.ts";
import type { FileChecker } from "./_validate_common.ts";
import {
  type Environment,
  KEY_RE,
  type Manifest,
  MAX_ENVIRONMENTS,
  SCHEMA_VERSION,
} from "./model.ts";

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
  fc.unknownKeys(t, "", NAMESPACE_FILE_KEYS);
  fc.schemaVersion(t, SCHEMA_VERSION);
  const namespace: Manifest["namespace"] = { description: "", environments: {} };
  // An absent table declares nothing; a wrong one leaves the environments unknown.
  const ns = t.namespace === undefined ? {} : fc.table(t, "", "namespace", false);
  if (ns === undefined) return { namespace, envKeys: undefined };
  fc.unknownKeys(ns, "namespace", NAMESPACE_KEYS);
  namespace.description = fc.string(ns, "namespace", "description", false) ?? "";
  const envs = ns.environments === undefined
    ? {}
    : fc.table(ns, "namespace", "environments", false);
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
    const prefix = keyPath("namespace.environments", name);
    envKeys.add(name);
    if (!KEY_RE.test(name)) {
      fc.report(
        prefix,
        `invalid environment key ${quoteName(name)} (keys match ${KEY_RE.source})`,
      );
    }
    const table = fc.asTable(raw, prefix);
    if (table === undefined) continue;
    fc.unknownKeys(table, prefix, ENVIRONMENT_KEYS);
    const env: Environment = {
      public_evaluate: fc.boolean(table, prefix, "public_evaluate", false) ?? false,
    };
    namespace.environments[name] = env;
  }
  return { namespace, envKeys };
}
