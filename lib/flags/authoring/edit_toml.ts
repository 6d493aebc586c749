/**
 * Editing TOML text so that what an edit does not touch (comments, blank
 * lines, key order, inline or table layout) stays as the person wrote it.
 * Two ways, one check:
 *
 * - {@linkcode rewriteToml} takes the data the file should hold and
 *   rewrites only what differs, where the file writes it (the authoring
 *   edits; see `_rewrite.ts` for the rules), in time linear in the file,
 *   so a list of ten thousand ids edits in milliseconds. A layout it does
 *   not edit falls back to toml-patch's `patch`.
 * - {@linkcode patchDoc} and {@linkcode setInTable} edit with toml-patch's
 *   `patch` on a document read by toml-patch (quick changes).
 *
 * Either way the text is kept only when it reads back, with the
 * validator's own parser (lib/toml.ts), as exactly the data wanted;
 * otherwise the edit is refused with an {@linkcode InvalidRequestError}
 * saying to edit the file by hand.
 *
 * @module
 */
import { parse, patch } from "toml-patch";
import { InvalidRequestError } from "../../errors.ts";
import { parseToml } from "../../toml.ts";
import { type DataPath, type Doc, isTable, sameValue, tomlKey } from "./_doc.ts";
import { Layout } from "./_layout.ts";
import { renderDocument, type SectionArrays } from "./_render.ts";
import { rewriteText } from "./_rewrite.ts";

export { type DataPath, type Doc, isTable, sameValue, tomlKey } from "./_doc.ts";

/** How an edit names the file and itself in its refusals. */
export interface EditNames {
  /** The file, after "The" / "This": `flag file`, `file flags/new-checkout.toml`. */
  file: string;
  /** What is editing, after "in a way": `a quick change`, `the console`. */
  editor: string;
}

/**
 * The arrays of tables of a manifest written as `[[…]]` sections: a flag's
 * `rule`, an environment's `rule` and a segment's `predicate`. Every other
 * array of tables (a rollout, a list inside an object value) is written
 * inline.
 *
 * @param path the array's data path
 * @returns whether it is written as sections
 *
 * @example
 * ```ts
 * import { manifestArrays } from "./edit_toml.ts";
 * if (!manifestArrays(["environments", "production", "rule"])) throw new Error();
 * if (manifestArrays(["rule", 0, "rollout"])) throw new Error();
 * ```
 */
export function manifestArrays(path: readonly (string | number)[]): boolean {
  if (path.length === 1) return path[0] === "rule" || path[0] === "predicate";
  return path.length === 3 && path[0] === "environments" && typeof path[1] === "string" &&
    path[2] === "rule";
}

/**
 * Reads a file's data as the validator does (lib/toml.ts: dates become
 * RFC 3339 strings).
 *
 * @param text the file
 * @param names how refusals name the file
 * @returns its data
 * @throws {InvalidRequestError} when the text is not TOML
 *
 * @example
 * ```ts
 * import { readData } from "./edit_toml.ts";
 * const doc = readData("a = 1979-05-27\n", { file: "file x.toml", editor: "the console" });
 * if (doc.a !== "1979-05-27") throw new Error(doc.a);
 * ```
 */
export function readData(text: string, names: EditNames): Doc {
  const r = parseToml(text, "file.toml");
  if (!r.ok) {
    throw new InvalidRequestError(
      `The ${names.file} is not valid TOML: ${r.problem.message.replace(/^invalid TOML: /, "")}`,
    );
  }
  return r.table as Doc;
}

/** Options of {@linkcode rewriteToml}. */
export interface RewriteOptions extends EditNames {
  /** Tables whose key order must read back as in the data (a flag's `variations`). */
  ordered?: readonly DataPath[];
  /** Which arrays of tables are written as sections (default {@linkcode manifestArrays}). */
  arrays?: SectionArrays;
}

/**
 * Rewrites a text to hold `after`, changing only what differs (see the
 * module comment); the same text when nothing differs.
 *
 * @param text the file
 * @param after the data it should hold (plain data, as {@linkcode readData} gives)
 * @param options how refusals name the file; tables whose order matters
 * @returns the new text
 * @throws {InvalidRequestError} when the text is not TOML, or when no edit reads back as `after`
 *
 * @example
 * ```ts
 * import { readData, rewriteToml } from "./edit_toml.ts";
 * const names = { file: "file flags/a.toml", editor: "the console" };
 * const text = '# Owned by payments.\ndefault = "off" # since May\n\n[variations]\non = true\noff = false\n';
 * const doc = readData(text, names);
 * doc.default = "on";
 * doc.variations.maybe = false;
 * const out = rewriteToml(text, doc, names);
 * const want = '# Owned by payments.\ndefault = "on" # since May\n\n[variations]\non = true\noff = false\nmaybe = false\n';
 * if (out !== want) throw new Error(String(out));
 * ```
 */
export function rewriteToml(text: string, after: Doc, options: RewriteOptions): string {
  const before = readData(text, options);
  if (sameValue(before, after)) return text;
  const arrays = options.arrays ?? manifestArrays;
  let layout: Layout | undefined;
  try {
    layout = new Layout(text);
  } catch {
    layout = undefined;
  }
  const out = layout === undefined ? undefined : rewriteText(layout, before, after, arrays);
  if (out !== undefined && readsAs(out, after, options.ordered)) return out;
  const patched = tryPatchDoc(text, after);
  if (patched !== undefined && readsAs(patched, after, options.ordered)) return patched;
  throw cannotEdit(options);
}

/**
 * A new file holding `doc`: its top-level values first, then its tables
 * as sections, one blank line between sections, long arrays one item a
 * line.
 *
 * @param doc the data
 * @param arrays which arrays of tables are sections (default {@linkcode manifestArrays})
 * @returns the text, ending with a line ending
 *
 * @example
 * ```ts
 * import { newToml } from "./edit_toml.ts";
 * const text = newToml({ schema_version: 1, type: "boolean", variations: { on: true, off: false } });
 * if (text !== 'schema_version = 1\ntype = "boolean"\n\n[variations]\non = true\noff = false\n') {
 *   throw new Error(String(text));
 * }
 * ```
 */
export function newToml(doc: Doc, arrays: SectionArrays = manifestArrays): string {
  return renderDocument(doc, { nl: "\n", blank: true, arrays });
}

/**
 * Reads a text with toml-patch, for an edit made with {@linkcode patchDoc}
 * (its values keep toml-patch's types: dates stay dates).
 *
 * @param text the file
 * @param names how refusals name the file
 * @returns the document
 * @throws {InvalidRequestError} when the text is not TOML
 *
 * @example
 * ```ts
 * import { readPatchable } from "./edit_toml.ts";
 * if (readPatchable("a = 1\n", { file: "flag file", editor: "a quick change" }).a !== 1) throw new Error();
 * ```
 */
export function readPatchable(text: string, names: EditNames): Doc {
  try {
    return parse(text) as Doc;
  } catch (err) {
    throw new InvalidRequestError(
      `The ${names.file} is not valid TOML: ${String((err as Error).message).split("\n")[0]}`,
      { cause: err },
    );
  }
}

/**
 * The text patched by toml-patch to hold `doc`, only when it reads back
 * (with toml-patch and with the validator's parser) as exactly `doc`.
 *
 * @param text the file
 * @param doc the data wanted
 * @returns the new text, or undefined
 *
 * @example
 * ```ts
 * import { tryPatchDoc } from "./edit_toml.ts";
 * if (tryPatchDoc("a = 1 # one\n", { a: 2 }) !== "a = 2 # one\n") throw new Error();
 * ```
 */
export function tryPatchDoc(text: string, doc: Doc): string | undefined {
  let out: string;
  try {
    out = patch(text, doc, { trailingComma: false });
  } catch {
    return undefined;
  }
  if (!sameValue(tryParse(out), doc) || !parseToml(out, "file.toml").ok) return undefined;
  return out;
}

/**
 * {@linkcode tryPatchDoc}, refusing the edit when it gives nothing.
 *
 * @param text the file
 * @param doc the data wanted
 * @param names how the refusal names the file and the editor
 * @returns the new text
 * @throws {InvalidRequestError} when toml-patch cannot write `doc` into this text
 *
 * @example
 * ```ts
 * import { patchDoc } from "./edit_toml.ts";
 * const out = patchDoc('a = "x"\n', { a: "y" }, { file: "flag file", editor: "a quick change" });
 * if (out !== 'a = "y"\n') throw new Error(String(out));
 * ```
 */
export function patchDoc(text: string, doc: Doc, names: EditNames): string {
  const out = tryPatchDoc(text, doc);
  if (out === undefined) throw cannotEdit(names);
  return out;
}

/**
 * Sets `key` in table `table` of a document read by
 * {@linkcode readPatchable} (`doc` is changed) and patches the text. A key
 * the table does not have yet goes into a `[table]` section added at the
 * end (a patch alone would write an inline or dotted key) when the file
 * reads the same with that section, i.e. the table was not defined yet or
 * only implied by its sub-tables; otherwise toml-patch places it in the
 * table where it is.
 *
 * @param text the file
 * @param doc its document (changed)
 * @param table the table's path (`["environments", "production"]`)
 * @param key the key to set
 * @param value the value
 * @param names how refusals name the file and the editor
 * @returns the new text
 * @throws {InvalidRequestError} when the text cannot be edited safely
 *
 * @example
 * ```ts
 * import { readPatchable, setInTable } from "./edit_toml.ts";
 * const names = { file: "flag file", editor: "a quick change" };
 * const text = 'default = "off"\n';
 * const out = setInTable(text, readPatchable(text, names), ["environments", "qa"], "enabled", false, names);
 * if (out !== 'default = "off"\n\n[environments.qa]\nenabled = false\n') throw new Error(String(out));
 * ```
 */
export function setInTable(
  text: string,
  doc: Doc,
  table: readonly string[],
  key: string,
  value: unknown,
  names: EditNames,
): string {
  let t = doc;
  for (const k of table) {
    if (!isTable(t[k])) t[k] = {};
    t = t[k];
  }
  if (!Object.hasOwn(t, key)) {
    const before = structuredClone(doc);
    const nl = text.includes("\r\n") ? "\r\n" : "\n";
    const separator = text.trim() === "" ? "" : text.endsWith(nl) ? nl : nl + nl;
    const withTable = `${text}${separator}[${table.map(tomlKey).join(".")}]${nl}`;
    t[key] = value;
    if (sameValue(tryParse(withTable), before)) {
      const out = tryPatchDoc(withTable, doc);
      if (out !== undefined) return out;
    }
  }
  t[key] = value;
  return patchDoc(text, doc, names);
}

function tryParse(text: string): Doc | undefined {
  try {
    return parse(text) as Doc;
  } catch {
    return undefined;
  }
}

/** Whether a text reads (with the validator's parser) as `want`, keys in order where asked. */
function readsAs(text: string, want: Doc, ordered: readonly DataPath[] = []): boolean {
  const r = parseToml(text, "file.toml");
  if (!r.ok || !sameValue(r.table, want)) return false;
  return ordered.every((path) => {
    const got = at(r.table, path);
    const wanted = at(want, path);
    return !isTable(got) || !isTable(wanted) ||
      Object.keys(got).join("\n") === Object.keys(wanted).join("\n");
  });
}

function at(doc: unknown, path: DataPath): unknown {
  let v = doc;
  for (const k of path) v = isTable(v) || Array.isArray(v) ? (v as Doc)[k as string] : undefined;
  return v;
}

function cannotEdit(names: EditNames): InvalidRequestError {
  return new InvalidRequestError(
    `This ${names.file} is laid out in a way ${names.editor} cannot edit safely: ` +
      "change it in the file and push it",
  );
}
