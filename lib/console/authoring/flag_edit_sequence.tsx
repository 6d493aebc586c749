/**
 * The edit of a flag's description, default and variations as one form
 * enters it, made as the authoring library's edits in sequence on the
 * version's texts (each on the result of the one before) and returned as
 * one set of file edits. A variation's row keeps the name it had (`was`),
 * so a changed name is a rename that every use follows (rules, rollouts,
 * overrides); an emptied row is a removal, refused while something uses
 * it; a new row is an added variation. A refusal names the form field of
 * the row it is about.
 *
 * The order makes any combination work: the description; renames and
 * additions whose final name is free; the others under a passing name
 * (so names can be swapped, or a removed variation's name given to
 * another); the values; the default (so that a variation served by
 * default can be removed once another is); the removals; the passing
 * names to their final ones.
 *
 * @module
 */
import { InvalidRequestError } from "../../errors.ts";
import {
  addVariation,
  applyFileEdits,
  type FileEdits,
  flagAsWritten,
  type ManifestTexts,
  removeVariation,
  renameVariation,
  setFlagDefault,
  setFlagDescription,
  setVariationValue,
} from "../../flags/authoring/mod.ts";
import type { VariationValue } from "../../flags/model.ts";

/** One row of the variations as posted. */
export interface VariationRowInput {
  /** The form row. */
  row: number;
  /** The variation's name as written, for a row that showed one (absent: a new row). */
  was?: string | undefined;
  /** Its name as entered; `""` for an emptied row (a removal). */
  name: string;
  /** Its value as entered (absent for an emptied row). */
  value?: VariationValue | undefined;
}

/** A flag's description, default and variations as the form entered them. */
export interface FlagEditInput {
  /** The flag key. */
  flag: string;
  /** Its description (`""`: none). */
  description: string;
  /** The rows, in form order (empty new rows left out). */
  rows: VariationRowInput[];
  /** The row of the variation served by default. */
  defaultRow: number;
}

/**
 * Makes the edit on a version's texts.
 *
 * @param texts the version's texts
 * @param input what the form entered
 * @returns the files it changes (path → final text)
 * @throws {InvalidRequestError} naming the form field (`description`,
 * `default`, `variations.<row>.name`, `variations.<row>.value`), with
 * `details.referenced_by` when a removed variation is used
 *
 * @example
 * ```ts
 * import { editFlag } from "./flag_edit_sequence.tsx";
 * const texts = new Map([
 *   ["segments/beta.toml", 'schema_version = 1\n[[predicate]]\nattribute = "beta"\nop = "eq"\nvalue = true\n'],
 *   ["flags/a.toml", 'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n' +
 *     '[[rule]]\nsegment = "beta"\nvariation = "on" # the beta\n'],
 * ]);
 * const out = editFlag(texts, {
 *   flag: "a",
 *   description: "Dark mode",
 *   rows: [{ row: 0, was: "on", name: "enabled", value: true }, { row: 1, was: "off", name: "off", value: false }],
 *   defaultRow: 0,
 * }).get("flags/a.toml");
 * if (!out?.includes('description = "Dark mode"') || !out.includes('default = "enabled"') ||
 *   !out.includes('variation = "enabled" # the beta')) throw new Error(out ?? "");
 * try {
 *   editFlag(texts, { flag: "a", description: "", defaultRow: 1,
 *     rows: [{ row: 0, was: "on", name: "" }, { row: 1, was: "off", name: "off", value: false }] });
 *   throw new Error("expected a refusal");
 * } catch (e) {
 *   if ((e as { details?: { field?: string } }).details?.field !== "variations.0.name") throw e;
 * }
 * ```
 */
export function editFlag(texts: ManifestTexts, input: FlagEditInput): FileEdits {
  const key = input.flag;
  const run = new Sequence(texts, key);
  run.step(() => setFlagDescription(run.texts, { flag: key, description: input.description }), {
    description: "description",
  });
  const original = new Set(flagAsWritten(texts, key).variations.map((v) => v.name));
  const kept = input.rows.filter((r) => r.name !== "");
  const finals = new Set(kept.map((r) => r.name));
  let passing = 0;
  const passingName = () => {
    let name: string;
    do name = `renaming-${++passing}`; while (original.has(name) || finals.has(name));
    return name;
  };
  const later: { row: number; from: string; to: string }[] = [];
  for (const r of kept) {
    const taken = original.has(r.name) && r.name !== r.was;
    const now = taken ? passingName() : r.name;
    if (taken) later.push({ row: r.row, from: now, to: r.name });
    const fields = rowFields(r.row);
    run.rowOf.set(now, r.row);
    if (r.was === undefined) {
      run.step(() => addVariation(run.texts, { flag: key, name: now, value: r.value! }), fields);
    } else if (now !== r.was) {
      run.step(
        () => renameVariation(run.texts, { flag: key, variation: r.was!, name: now }),
        fields,
      );
    }
  }
  for (const r of kept) {
    if (r.was === undefined) continue;
    const name = later.find((l) => l.row === r.row)?.from ?? r.name;
    const before = flagAsWritten(run.texts, key).variations.find((v) => v.name === name);
    if (before !== undefined && sameValue(before.value, r.value!)) continue;
    run.step(
      () => setVariationValue(run.texts, { flag: key, variation: name, value: r.value! }),
      rowFields(r.row),
    );
  }
  const chosen = kept.find((r) => r.row === input.defaultRow);
  if (chosen === undefined) {
    throw new InvalidRequestError("Choose the variation served by default among those kept", {
      details: { field: "default" },
    });
  }
  const defaultName = later.find((l) => l.row === chosen.row)?.from ?? chosen.name;
  run.step(() => setFlagDefault(run.texts, { flag: key, variation: defaultName }), {
    variation: "default",
  });
  for (const r of input.rows) {
    if (r.name !== "" || r.was === undefined) continue;
    run.rowOf.set(r.was, r.row);
    run.step(() => removeVariation(run.texts, { flag: key, variation: r.was! }), {
      variation: `variations.${r.row}.name`,
    });
  }
  for (const l of later) {
    run.rowOf.set(l.to, l.row);
    run.step(
      () => renameVariation(run.texts, { flag: key, variation: l.from, name: l.to }),
      rowFields(l.row),
    );
  }
  return run.edits();
}

/** How a single-variation edit's fields map to a row's. */
function rowFields(row: number): Record<string, string> {
  return {
    name: `variations.${row}.name`,
    variation: `variations.${row}.name`,
    value: `variations.${row}.value`,
  };
}

/** Whether two values are the same (objects compared as JSON). */
function sameValue(a: VariationValue, b: VariationValue): boolean {
  return a === b || (typeof a === "object" && typeof b === "object" &&
    JSON.stringify(a) === JSON.stringify(b));
}

/** The texts as the edits so far left them, and the refusals of the next. */
class Sequence {
  texts: ManifestTexts;
  readonly #start: ManifestTexts;
  readonly #flag: string;
  readonly #touched = new Set<string>();
  /** The form row of each variation, by its current name. */
  readonly rowOf = new Map<string, number>();

  constructor(texts: ManifestTexts, flag: string) {
    this.texts = texts;
    this.#start = texts;
    this.#flag = flag;
  }

  /** Makes one edit on the texts so far; a refusal is thrown again naming the form field. */
  step(edit: () => FileEdits, fields: Record<string, string>): void {
    let made: FileEdits;
    try {
      made = edit();
    } catch (err) {
      throw this.#named(err, fields);
    }
    for (const path of made.keys()) this.#touched.add(path);
    this.texts = applyFileEdits(this.texts, made);
  }

  /** Every file edited, with its final text (null: deleted). */
  edits(): FileEdits {
    const out: FileEdits = new Map();
    for (const path of this.#touched) {
      const text = this.texts.get(path) ?? null;
      if (text !== (this.#start.get(path) ?? null)) out.set(path, text);
    }
    return out;
  }

  #named(err: unknown, fields: Record<string, string>): unknown {
    if (!(err instanceof InvalidRequestError)) return err;
    const details = (err.details ?? {}) as Record<string, unknown>;
    const field = details.field;
    if (typeof field !== "string") return err;
    const named = Object.hasOwn(fields, field) ? fields[field] : this.#positional(field);
    if (named === undefined || named === field) return err;
    return new InvalidRequestError(err.message, {
      details: { ...details, field: named },
      cause: err,
    });
  }

  /** `variations.<i>.…` (the i-th variation of the file so far) as its row's field. */
  #positional(field: string): string | undefined {
    const [head, n, ...rest] = field.split(".");
    if (head !== "variations" || n === undefined || !/^\d{1,4}$/.test(n)) return undefined;
    let names: string[];
    try {
      names = flagAsWritten(this.texts, this.#flag).variations.map((v) => v.name);
    } catch {
      return undefined;
    }
    const row = this.rowOf.get(names[Number(n)] ?? "");
    return row === undefined ? undefined : ["variations", row, ...rest].join(".");
  }
}
