/**
 * Authoring flags: create one, edit its description and default, add,
 * rename, revalue and remove its variations, delete it. Each edit takes
 * the texts of the version being edited and returns the files it changes
 * (see texts.ts), keeping every comment and line it does not touch.
 *
 * - A new flag is written as `flags/<key>.toml`: `schema_version`, the
 *   description (when there is one), `type`, `default`, then
 *   `[variations]` one per line (an object flag's as one
 *   `[variations.<name>]` section each, as examples/flags writes them).
 *   In a manifest without `namespace.toml` (a new namespace), that file is
 *   created too, since every manifest with a file needs one.
 * - Renaming a variation rewrites every use of it in the flag's file: its
 *   default, each override's default, every rule that serves it and every
 *   rollout entry that weighs it, in every scope. Variations belong to
 *   their flag, so no other file changes.
 * - Removing a variation that is used is refused, naming each use
 *   (`details.referenced_by`); so is removing the last one.
 * - Deleting a flag deletes its file and nothing else: nothing in a
 *   manifest refers to a flag (rules name segments and variations,
 *   overrides name environments, segments read context attributes and
 *   other segments), so no other file can break.
 *
 * @module
 */
import { FLAG_TYPES, type FlagType, type VariationValue } from "../model.ts";
import {
  checkDescription,
  checkKey,
  checkKnown,
  checkValue,
  checkVariationName,
  refuse,
} from "./_args.ts";
import { type Doc, isTable } from "./_doc.ts";
import { fileEdit, readFlag } from "./_files.ts";
import { flagField, flagTypeOf, variationNames, writeFlag } from "./_flag_file.ts";
import { guardFlag } from "./_guard.ts";
import { newToml } from "./edit_toml.ts";
import { refuseReferenced, variationReferences } from "./references.ts";
import { type FileEdits, flagFile, type ManifestTexts, NAMESPACE_FILE } from "./texts.ts";

/** One variation a person entered: its name and its value, of the flag's type. */
export interface VariationInput {
  /** The name (`^[A-Za-z][A-Za-z0-9._-]{0,62}$`). */
  name: string;
  /** The value: a boolean, a string, a finite number or a JSON object, as the flag's type says. */
  value: VariationValue;
}

/** A new flag. */
export interface NewFlag {
  /** Its key: a slug (`^[a-z0-9][a-z0-9._-]{0,62}$`), the file's name. */
  key: string;
  /** Its type. */
  type: FlagType;
  /** Free text; none or `""` writes no `description` line. */
  description?: string | undefined;
  /** Its variations, in the order they are listed. */
  variations: VariationInput[];
  /** The name of the variation served when no rule matches. */
  default: string;
}

/**
 * Creates a flag. Fields of refusals: `key`, `type`, `description`,
 * `variations`, `variations.<i>.name`, `variations.<i>.value`, `default`.
 *
 * @param texts the version's texts
 * @param flag the new flag
 * @returns `flags/<key>.toml` (and `namespace.toml` in a manifest that has none)
 * @throws {InvalidRequestError} when a field is refused or the key is taken
 *
 * @example
 * ```ts
 * import { createFlag } from "./flags.ts";
 * const edits = createFlag(new Map([["namespace.toml", "schema_version = 1\n"]]), {
 *   key: "dark-mode",
 *   type: "boolean",
 *   description: "Dark theme",
 *   variations: [{ name: "on", value: true }, { name: "off", value: false }],
 *   default: "off",
 * });
 * const want = 'schema_version = 1\ndescription = "Dark theme"\ntype = "boolean"\ndefault = "off"\n\n' +
 *   "[variations]\non = true\noff = false\n";
 * if (edits.get("flags/dark-mode.toml") !== want || edits.size !== 1) throw new Error();
 * ```
 */
export function createFlag(texts: ManifestTexts, flag: NewFlag): FileEdits {
  const key = checkKey(flag.key, "key", "flag");
  const path = flagFile(key);
  if (texts.has(path)) refuse(`There is already a flag ${key}`, "key");
  const type = flag.type;
  if (!(FLAG_TYPES as readonly unknown[]).includes(type)) {
    refuse(`Choose the flag's type: ${FLAG_TYPES.join(", ")}`, "type");
  }
  const description = flag.description === undefined ? "" : checkDescription(flag.description);
  if (!Array.isArray(flag.variations) || flag.variations.length === 0) {
    refuse("Give the flag at least one variation", "variations");
  }
  const variations: Doc = {};
  flag.variations.forEach((v, i) => {
    const name = checkVariationName(v?.name, `variations.${i}.name`);
    if (Object.hasOwn(variations, name)) {
      refuse(`Two variations are named ${name}`, `variations.${i}.name`);
    }
    variations[name] = checkValue(type, v.value, `variations.${i}.value`);
  });
  const def = checkKnown(
    flag.default,
    Object.keys(variations),
    "default",
    "variation",
    "variations",
  );
  const doc: Doc = { schema_version: 1 };
  if (description !== "") doc.description = description;
  Object.assign(doc, { type, default: def, variations });
  guardFlag(texts, key, doc, flagField(doc));
  const edits = fileEdit(path, "", newToml(doc), "variations");
  if (!texts.has(NAMESPACE_FILE)) edits.set(NAMESPACE_FILE, "schema_version = 1\n");
  return edits;
}

/**
 * Sets a flag's description (`""` removes the line).
 *
 * @param texts the version's texts
 * @param edit the flag and its new description
 * @returns the flag's file, or nothing when the description is unchanged
 * @throws {InvalidRequestError} when there is no such flag or the description is refused
 *
 * @example
 * ```ts
 * import { setFlagDescription } from "./flags.ts";
 * const texts = new Map([["flags/a.toml",
 *   'schema_version = 1\ntype = "boolean" # why\ndefault = "off"\n[variations]\noff = false\n']]);
 * const edits = setFlagDescription(texts, { flag: "a", description: "Dark theme" });
 * if (!edits.get("flags/a.toml")?.startsWith('schema_version = 1\ndescription = "Dark theme"\ntype = "boolean" # why\n')) {
 *   throw new Error(String(edits.get("flags/a.toml") ?? ""));
 * }
 * ```
 */
export function setFlagDescription(
  texts: ManifestTexts,
  edit: { flag: string; description: string },
): FileEdits {
  const file = readFlag(texts, edit.flag);
  const description = checkDescription(edit.description);
  const doc = file.doc;
  if (description === "") delete doc.description;
  else doc.description = description;
  return writeFlag(texts, edit.flag, file, doc, "description");
}

/**
 * Sets the variation a flag serves when no rule matches (its own default;
 * an environment's is set with `setOverrideDefault`).
 *
 * @param texts the version's texts
 * @param edit the flag and the variation's name
 * @returns the flag's file, or nothing when unchanged
 * @throws {InvalidRequestError} when there is no such flag or variation (field `variation`)
 *
 * @example
 * ```ts
 * import { setFlagDefault } from "./flags.ts";
 * const texts = new Map([["flags/a.toml",
 *   'schema_version = 1\ntype = "boolean"\ndefault = "off" # safe\n[variations]\non = true\noff = false\n']]);
 * const edits = setFlagDefault(texts, { flag: "a", variation: "on" });
 * if (!edits.get("flags/a.toml")?.includes('\ndefault = "on" # safe\n')) throw new Error();
 * ```
 */
export function setFlagDefault(
  texts: ManifestTexts,
  edit: { flag: string; variation: string },
): FileEdits {
  const file = readFlag(texts, edit.flag);
  const doc = file.doc;
  doc.default = checkKnown(
    edit.variation,
    variationNames(doc),
    "variation",
    "variation",
    "variations",
  );
  return writeFlag(texts, edit.flag, file, doc, "variation");
}

/**
 * Adds a variation after the others.
 *
 * @param texts the version's texts
 * @param edit the flag, the new variation's name and its value
 * @returns the flag's file
 * @throws {InvalidRequestError} when the name is taken or invalid (field `name`) or the value is not of the flag's type (`value`)
 *
 * @example
 * ```ts
 * import { addVariation } from "./flags.ts";
 * const texts = new Map([["flags/limit.toml",
 *   'schema_version = 1\ntype = "number"\ndefault = "low"\n\n[variations]\nlow = 10 # the floor\n']]);
 * const edits = addVariation(texts, { flag: "limit", name: "high", value: 99 });
 * if (!edits.get("flags/limit.toml")?.endsWith("low = 10 # the floor\nhigh = 99\n")) throw new Error();
 * ```
 */
export function addVariation(
  texts: ManifestTexts,
  edit: { flag: string; name: string; value: VariationValue },
): FileEdits {
  const file = readFlag(texts, edit.flag);
  const doc = file.doc;
  const name = checkVariationName(edit.name, "name");
  const names = variationNames(doc);
  if (names.includes(name)) refuse(`${edit.flag} already has a variation ${name}`, "name");
  const value = checkValue(flagTypeOf(doc), edit.value, "value");
  doc.variations = { ...(isTable(doc.variations) ? doc.variations : {}), [name]: value };
  return writeFlag(texts, edit.flag, file, doc, "value");
}

/**
 * Renames a variation where it stands and rewrites every use of it in the
 * flag's file (defaults, rules and rollout entries, in every scope).
 *
 * @param texts the version's texts
 * @param edit the flag, the variation and its new name
 * @returns the flag's file, or nothing when the name is unchanged
 * @throws {InvalidRequestError} when there is no such variation (field `variation`) or the new name is taken or invalid (`name`)
 *
 * @example
 * ```ts
 * import { renameVariation } from "./flags.ts";
 * const texts = new Map([["flags/a.toml",
 *   'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true # new flow\noff = false\n[[rule]]\nvariation = "on"\n']]);
 * const out = renameVariation(texts, { flag: "a", variation: "on", name: "enabled" }).get("flags/a.toml");
 * if (out !== 'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\nenabled = true # new flow\noff = false\n[[rule]]\nvariation = "enabled"\n') {
 *   throw new Error(String(out));
 * }
 * ```
 */
export function renameVariation(
  texts: ManifestTexts,
  edit: { flag: string; variation: string; name: string },
): FileEdits {
  const file = readFlag(texts, edit.flag);
  const doc = file.doc;
  const names = variationNames(doc);
  const from = checkKnown(edit.variation, names, "variation", "variation", "variations");
  const to = checkVariationName(edit.name, "name");
  if (to === from) return new Map();
  if (names.includes(to)) refuse(`${edit.flag} already has a variation ${to}`, "name");
  const variations: Doc = {};
  for (const [k, v] of Object.entries(doc.variations as Doc)) variations[k === from ? to : k] = v;
  doc.variations = variations;
  const rename = (v: unknown) => v === from ? to : v;
  doc.default = rename(doc.default);
  const renameRules = (rules: unknown) => {
    if (!Array.isArray(rules)) return;
    for (const r of rules) {
      if (!isTable(r)) continue;
      if (r.variation !== undefined) r.variation = rename(r.variation);
      if (Array.isArray(r.rollout)) {
        for (const e of r.rollout) if (isTable(e)) e.variation = rename(e.variation);
      }
    }
  };
  renameRules(doc.rule);
  if (isTable(doc.environments)) {
    for (const t of Object.values(doc.environments)) {
      if (!isTable(t)) continue;
      if (t.default !== undefined) t.default = rename(t.default);
      renameRules(t.rule);
    }
  }
  return writeFlag(texts, edit.flag, file, doc, "name");
}

/**
 * Changes a variation's value.
 *
 * @param texts the version's texts
 * @param edit the flag, the variation and its new value
 * @returns the flag's file, or nothing when the value is unchanged
 * @throws {InvalidRequestError} when there is no such variation (field `variation`) or the value is refused (`value`)
 *
 * @example
 * ```ts
 * import { setVariationValue } from "./flags.ts";
 * const text = 'schema_version = 1\ntype = "string"\ndefault = "sale"\n[variations]\nsale = "Sale" # banner\n';
 * const out = setVariationValue(new Map([["flags/t.toml", text]]), { flag: "t", variation: "sale", value: "Winter sale" });
 * if (out.get("flags/t.toml") !== text.replace('"Sale"', '"Winter sale"')) throw new Error();
 * ```
 */
export function setVariationValue(
  texts: ManifestTexts,
  edit: { flag: string; variation: string; value: VariationValue },
): FileEdits {
  const file = readFlag(texts, edit.flag);
  const doc = file.doc;
  const name = checkKnown(
    edit.variation,
    variationNames(doc),
    "variation",
    "variation",
    "variations",
  );
  doc.variations[name] = checkValue(flagTypeOf(doc), edit.value, "value");
  return writeFlag(texts, edit.flag, file, doc, "value");
}

/**
 * Removes a variation that nothing uses; a used one is refused, naming
 * each use (`details.referenced_by`), and so is the last one.
 *
 * @param texts the version's texts
 * @param edit the flag and the variation
 * @returns the flag's file
 * @throws {InvalidRequestError} when the variation is unknown, used, or the flag's last (field `variation`)
 *
 * @example
 * ```ts
 * import { removeVariation } from "./flags.ts";
 * const texts = new Map([["flags/a.toml",
 *   'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\nmaybe = true\n']]);
 * if (removeVariation(texts, { flag: "a", variation: "maybe" }).get("flags/a.toml")?.includes("maybe")) {
 *   throw new Error();
 * }
 * try {
 *   removeVariation(texts, { flag: "a", variation: "off" });
 *   throw new Error("expected a refusal");
 * } catch (err) {
 *   if (!(err as Error).message.startsWith("Variation off is used by flag a (the default)")) throw err;
 * }
 * ```
 */
export function removeVariation(
  texts: ManifestTexts,
  edit: { flag: string; variation: string },
): FileEdits {
  const file = readFlag(texts, edit.flag);
  const doc = file.doc;
  const names = variationNames(doc);
  const name = checkKnown(edit.variation, names, "variation", "variation", "variations");
  refuseReferenced(`Variation ${name}`, variationReferences(edit.flag, doc, name), "variation");
  if (names.length === 1) refuse(`${name} is the only variation of ${edit.flag}`, "variation");
  delete doc.variations[name];
  return writeFlag(texts, edit.flag, file, doc, "variation");
}

/**
 * Deletes a flag: its file, and nothing else (nothing refers to a flag).
 *
 * @param texts the version's texts
 * @param edit the flag
 * @returns the flag's file, deleted (`null`)
 * @throws {InvalidRequestError} when there is no such flag (field `flag`)
 *
 * @example
 * ```ts
 * import { deleteFlag } from "./flags.ts";
 * const edits = deleteFlag(new Map([["flags/a.toml", ""]]), { flag: "a" });
 * if (edits.get("flags/a.toml") !== null || edits.size !== 1) throw new Error();
 * ```
 */
export function deleteFlag(texts: ManifestTexts, edit: { flag: string }): FileEdits {
  const { path } = readFlag(texts, edit.flag);
  return new Map([[path, null]]);
}

/**
 * A variation value from the text of a form field, for the flag's type:
 * `true`/`false` for a boolean, the text itself for a string, a finite
 * number for a number, a JSON object for an object.
 *
 * @param type the flag's type
 * @param input what the person typed
 * @param field the form field, named in a refusal
 * @returns the value
 * @throws {InvalidRequestError} when the text is not a value of that type
 *
 * @example
 * ```ts
 * import { variationValueFromInput } from "./flags.ts";
 * if (variationValueFromInput("number", " 2.5 ", "value") !== 2.5) throw new Error();
 * const v = variationValueFromInput("object", '{"show": true}', "value") as { show: boolean };
 * if (v.show !== true) throw new Error();
 * ```
 */
export function variationValueFromInput(
  type: FlagType,
  input: string,
  field: string,
): VariationValue {
  switch (type) {
    case "boolean": {
      const t = input.trim();
      if (t !== "true" && t !== "false") refuse("A boolean flag's value is true or false", field);
      return t === "true";
    }
    case "string":
      return checkValue("string", input, field);
    case "number": {
      const t = input.trim();
      const n = Number(t);
      if (t === "" || !Number.isFinite(n)) refuse(`${JSON.stringify(t)} is not a number`, field);
      return n;
    }
    case "object": {
      let v: unknown;
      try {
        v = JSON.parse(input);
      } catch {
        refuse('The value is not JSON: write an object such as {"show": true}', field);
      }
      return checkValue("object", v, field);
    }
    default:
      return refuse(`Unknown flag type ${String(type)}`, field);
  }
}
