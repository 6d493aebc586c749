/**
 * Authoring `namespace.toml`: add an environment, set its
 * `public_evaluate`, remove it, set the namespace's description.
 *
 * A new environment is a `[namespace.environments.<key>]` section with
 * `public_evaluate` written out (`false` unless asked: exposing an
 * environment to browser tokens must be an explicit, reviewed line). An
 * environment has no description in the manifest's schema, so the one a
 * person gives is written as the comment lines right above its section,
 * where a reviewer reads it and `environmentsAsWritten` finds it (and
 * where removing the environment removes it). Removing an environment is
 * refused while any flag overrides it, naming the flags.
 *
 * In a manifest without `namespace.toml`, the first edit creates it.
 *
 * Fields of refusals: `key`, `environment`, `public_evaluate`,
 * `description`.
 *
 * @module
 */
import { MAX_ENVIRONMENTS } from "../model.ts";
import { checkBoolean, checkDescription, checkKey, checkKnown, refuse } from "./_args.ts";
import { type Doc, isTable, withOrder } from "./_doc.ts";
import { environmentKeys, type FileData, readNamespace, writeFile } from "./_files.ts";
import { guardNamespace } from "./_guard.ts";
import { Layout } from "./_layout.ts";
import { environmentReferences, refuseReferenced } from "./references.ts";
import type { FileEdits, ManifestTexts } from "./texts.ts";

/**
 * Declares a new environment.
 *
 * @param texts the version's texts
 * @param env its key, an optional description (written as a comment above its section) and `public_evaluate` (default `false`)
 * @returns `namespace.toml`
 * @throws {InvalidRequestError} when the key is invalid or taken, the limit is reached, or the description cannot be a comment
 *
 * @example
 * ```ts
 * import { addEnvironment } from "./environments.ts";
 * const texts = new Map([["namespace.toml", "schema_version = 1\n\n[namespace.environments.production]\npublic_evaluate = false\n"]]);
 * const out = addEnvironment(texts, { key: "staging", description: "Pre-release checks" }).get("namespace.toml");
 * if (!out?.endsWith("public_evaluate = false\n\n# Pre-release checks\n[namespace.environments.staging]\npublic_evaluate = false\n")) {
 *   throw new Error(String(out));
 * }
 * ```
 */
export function addEnvironment(
  texts: ManifestTexts,
  env: { key: string; description?: string | undefined; public_evaluate?: boolean | undefined },
): FileEdits {
  const key = checkKey(env.key, "key", "environment");
  const existing = environmentKeys(texts);
  if (existing.includes(key)) refuse(`There is already an environment ${key}`, "key");
  if (existing.length >= MAX_ENVIRONMENTS) {
    refuse(`A namespace declares at most ${MAX_ENVIRONMENTS} environments`, "key");
  }
  const comment = commentLines(env.description === undefined ? "" : env.description);
  const publicEvaluate = env.public_evaluate === undefined
    ? false
    : checkBoolean(env.public_evaluate, "public_evaluate", "public_evaluate");
  const file = readNamespace(texts);
  const { ns, envs } = open(file.doc);
  envs[key] = { public_evaluate: publicEvaluate };
  ns.environments = envs;
  const edits = write(file, ns, "key");
  const text = edits.get(file.path);
  if (comment.length === 0 || typeof text !== "string") return edits;
  const layout = new Layout(text);
  const section = layout.section(["namespace", "environments", key])!;
  const at = layout.lineStart(section.headerLine);
  const nl = layout.nl;
  edits.set(
    file.path,
    text.slice(0, at) + comment.map((l) => `# ${l}`.trimEnd() + nl).join("") + text.slice(at),
  );
  return edits;
}

/**
 * Sets whether `namespace-client` tokens may evaluate in an environment.
 *
 * @param texts the version's texts
 * @param edit the environment and the switch
 * @returns `namespace.toml`, or nothing when unchanged
 * @throws {InvalidRequestError} when the environment is unknown or the switch is not a boolean
 *
 * @example
 * ```ts
 * import { setPublicEvaluate } from "./environments.ts";
 * const texts = new Map([["namespace.toml", "schema_version = 1\n[namespace.environments.qa]\npublic_evaluate = false # for now\n"]]);
 * const out = setPublicEvaluate(texts, { environment: "qa", public_evaluate: true }).get("namespace.toml");
 * if (out !== "schema_version = 1\n[namespace.environments.qa]\npublic_evaluate = true # for now\n") throw new Error(String(out));
 * ```
 */
export function setPublicEvaluate(
  texts: ManifestTexts,
  edit: { environment: string; public_evaluate: boolean },
): FileEdits {
  const env = checkKnown(
    edit.environment,
    environmentKeys(texts),
    "environment",
    "environment",
    "environments",
  );
  const value = checkBoolean(edit.public_evaluate, "public_evaluate", "public_evaluate");
  const file = readNamespace(texts);
  const { ns, envs } = open(file.doc);
  envs[env] = { ...(isTable(envs[env]) ? envs[env] : {}), public_evaluate: value };
  return write(file, ns, "public_evaluate");
}

/**
 * Removes an environment that no flag overrides; refused while one does,
 * naming the flags (`details.referenced_by`).
 *
 * @param texts the version's texts
 * @param edit the environment
 * @returns `namespace.toml`
 * @throws {InvalidRequestError} when the environment is unknown or overridden (field `environment`)
 *
 * @example
 * ```ts
 * import { removeEnvironment } from "./environments.ts";
 * const texts = new Map([
 *   ["namespace.toml", "schema_version = 1\n[namespace.environments.qa]\n"],
 *   ["flags/a.toml", "[environments.qa]\nenabled = false\n"],
 * ]);
 * try {
 *   removeEnvironment(texts, { environment: "qa" });
 *   throw new Error("expected a refusal");
 * } catch (err) {
 *   if ((err as Error).message !== "Environment qa is used by flag a (the override of qa): remove that first") throw err;
 * }
 * ```
 */
export function removeEnvironment(texts: ManifestTexts, edit: { environment: string }): FileEdits {
  const env = checkKnown(
    edit.environment,
    environmentKeys(texts),
    "environment",
    "environment",
    "environments",
  );
  refuseReferenced(`Environment ${env}`, environmentReferences(texts, env), "environment");
  const file = readNamespace(texts);
  const { ns, envs } = open(file.doc);
  delete envs[env];
  if (Object.keys(envs).length === 0) delete ns.environments;
  return write(file, ns, "environment");
}

/**
 * Sets the namespace's description (`""` removes it).
 *
 * @param texts the version's texts
 * @param edit the description
 * @returns `namespace.toml`, or nothing when unchanged
 * @throws {InvalidRequestError} when the description is refused
 *
 * @example
 * ```ts
 * import { setNamespaceDescription } from "./environments.ts";
 * const texts = new Map([["namespace.toml", "schema_version = 1\n\n[namespace.environments.qa]\n"]]);
 * const out = setNamespaceDescription(texts, { description: "Checkout" }).get("namespace.toml");
 * if (out !== 'schema_version = 1\n\n[namespace]\ndescription = "Checkout"\n\n[namespace.environments.qa]\n') {
 *   throw new Error(String(out));
 * }
 * ```
 */
export function setNamespaceDescription(
  texts: ManifestTexts,
  edit: { description: string },
): FileEdits {
  const description = checkDescription(edit.description);
  const file = readNamespace(texts);
  const { ns } = open(file.doc);
  if (description === "") delete ns.description;
  else ns.description = description;
  return write(file, ns, "description");
}

function open(doc: Doc): { ns: Doc; envs: Doc } {
  const ns: Doc = isTable(doc.namespace) ? doc.namespace : {};
  const envs: Doc = isTable(ns.environments) ? ns.environments : {};
  return { ns, envs };
}

function write(file: FileData, ns: Doc, field: string): FileEdits {
  const doc = file.doc;
  if (Object.keys(ns).length === 0) delete doc.namespace;
  else doc.namespace = withOrder(ns, ["description", "environments"]);
  const after = withOrder(doc, ["schema_version", "namespace"]);
  guardNamespace(after, (key) => key.startsWith("namespace.environments") ? field : "description");
  return writeFile(file, after, field);
}

/** A description as comment lines: one per line of text, no control characters. */
function commentLines(description: unknown): string[] {
  const text = checkDescription(description);
  if (text.trim() === "") return [];
  const lines = text.split(/\r?\n/);
  // deno-lint-ignore no-control-regex
  if (lines.some((l) => /[\x00-\x08\x0a-\x1f\x7f]/.test(l))) {
    refuse("The description holds a control character", "description");
  }
  return lines;
}
