/**
 * Authoring segments: create one, replace its predicates, its `match` or
 * its description, delete it.
 *
 * A predicate is `{attribute, op, value}` with any operator of the
 * predicate engine ({@linkcode SEGMENT_OPERATORS}, read from
 * lib/flags/conditions.ts, so operators added there are accepted here with
 * the values the engine's own validation accepts). `attribute =
 * "segment.<key>"` refers to another segment (`op = "eq"`, `value = true`
 * or `false`); it must exist, and references must form no cycle and no
 * chain longer than the validator allows.
 *
 * Each predicate is a `[[predicate]]` section. A value list that does not
 * fit on one line is written one value a line (with a trailing comma), and
 * an edit of a list rewrites only the values that changed: adding or
 * removing one id of ten thousand is a one-line diff, made in
 * milliseconds (bench/authoring_bench.ts).
 *
 * Deleting a segment is refused while a flag rule (of any scope) or
 * another segment's predicate names it, naming them.
 *
 * Fields of refusals: `key`, `segment`, `description`, `match`,
 * `predicates`, `predicates.<i>.attribute`, `predicates.<i>.op`,
 * `predicates.<i>.value`.
 *
 * @module
 */
import { OPERATORS, refName, validatePredicate } from "../conditions.ts";
import {
  capitalized,
  checkDescription,
  checkKey,
  checkKnown,
  checkString,
  refuse,
} from "./_args.ts";
import { type Doc, SEGMENT_ORDER, withOrder } from "./_doc.ts";
import { fileEdit, keysOf, readSegment, writeFile } from "./_files.ts";
import { guardSegment } from "./_guard.ts";
import { newToml } from "./edit_toml.ts";
import { refuseReferenced, segmentReferences } from "./references.ts";
import { type FileEdits, type ManifestTexts, NAMESPACE_FILE, segmentFile } from "./texts.ts";

/**
 * Every operator a predicate may use, as the predicate engine lists them
 * (lib/flags/conditions.ts).
 */
export const SEGMENT_OPERATORS: readonly string[] = OPERATORS;

/** One predicate as a form enters it. */
export interface PredicateInput {
  /** A dotted context path (`account.country`), or `segment.<key>`. */
  attribute: string;
  /** One of {@linkcode SEGMENT_OPERATORS}. */
  op: string;
  /** The value the operator compares with: a scalar, or a list for `in` and `not_in`. */
  value: unknown;
}

/** A new segment. */
export interface NewSegment {
  /** Its key: a slug, the file's name. */
  key: string;
  /** Free text; none or `""` writes no `description` line. */
  description?: string | undefined;
  /** `all` (default): every predicate holds; `any`: at least one holds. */
  match?: "all" | "any" | undefined;
  /** At least one predicate. */
  predicates: PredicateInput[];
}

/**
 * Creates a segment.
 *
 * @param texts the version's texts
 * @param segment the new segment
 * @returns `segments/<key>.toml` (and `namespace.toml` in a manifest that has none)
 * @throws {InvalidRequestError} when a field is refused or the key is taken
 *
 * @example
 * ```ts
 * import { createSegment } from "./segments.ts";
 * const edits = createSegment(new Map([["namespace.toml", "schema_version = 1\n"]]), {
 *   key: "eu",
 *   description: "Customers in the EU",
 *   predicates: [{ attribute: "account.country", op: "in", value: ["DE", "FR"] }],
 * });
 * const want = 'schema_version = 1\ndescription = "Customers in the EU"\nmatch = "all"\n\n' +
 *   '[[predicate]]\nattribute = "account.country"\nop = "in"\nvalue = ["DE", "FR"]\n';
 * if (edits.get("segments/eu.toml") !== want) throw new Error(String(edits.get("segments/eu.toml")));
 * ```
 */
export function createSegment(texts: ManifestTexts, segment: NewSegment): FileEdits {
  const key = checkKey(segment.key, "key", "segment");
  const path = segmentFile(key);
  if (texts.has(path)) refuse(`There is already a segment ${key}`, "key");
  const doc: Doc = { schema_version: 1 };
  const description = segment.description === undefined
    ? ""
    : checkDescription(segment.description);
  if (description !== "") doc.description = description;
  doc.match = matchOf(segment.match ?? "all");
  doc.predicate = predicatesOf(texts, key, segment.predicates);
  guardSegment(texts, key, doc);
  const edits = fileEdit(path, "", newToml(doc), "predicates");
  if (!texts.has(NAMESPACE_FILE)) edits.set(NAMESPACE_FILE, "schema_version = 1\n");
  return edits;
}

/**
 * Replaces what is given of a segment: its description (`""` removes the
 * line), its `match` (a file without one keeps none for `all`, the
 * default), its predicates (the whole list, in order; only what differs
 * from the file is rewritten).
 *
 * @param texts the version's texts
 * @param edit the segment and what to replace
 * @returns the segment's file, or nothing when nothing changes
 * @throws {InvalidRequestError} when the segment is unknown or a field is refused
 *
 * @example
 * ```ts
 * import { editSegment } from "./segments.ts";
 * const texts = new Map([["segments/staff.toml", 'schema_version = 1\nmatch = "any" # either\n\n' +
 *   '[[predicate]]\nattribute = "user.role"\nop = "in"\nvalue = [\n  "employee",\n  "contractor",\n]\n']]);
 * const out = editSegment(texts, {
 *   segment: "staff",
 *   predicates: [{ attribute: "user.role", op: "in", value: ["employee", "intern", "contractor"] }],
 * }).get("segments/staff.toml");
 * if (out !== 'schema_version = 1\nmatch = "any" # either\n\n' +
 *   '[[predicate]]\nattribute = "user.role"\nop = "in"\nvalue = [\n  "employee",\n  "intern",\n  "contractor",\n]\n') {
 *   throw new Error(String(out));
 * }
 * ```
 */
export function editSegment(
  texts: ManifestTexts,
  edit: {
    segment: string;
    description?: string | undefined;
    match?: "all" | "any" | undefined;
    predicates?: PredicateInput[] | undefined;
  },
): FileEdits {
  const file = readSegment(texts, edit.segment);
  const doc = file.doc;
  if (edit.description !== undefined) {
    const d = checkDescription(edit.description);
    if (d === "") delete doc.description;
    else doc.description = d;
  }
  if (edit.match !== undefined) {
    const match = matchOf(edit.match);
    // A file that leaves `match` to its default keeps doing so.
    if (match !== "all" || doc.match !== undefined) doc.match = match;
  }
  if (edit.predicates !== undefined) {
    doc.predicate = predicatesOf(texts, edit.segment, edit.predicates);
  }
  const after = withOrder(doc, SEGMENT_ORDER);
  guardSegment(texts, edit.segment, after);
  return writeFile(file, after, edit.predicates !== undefined ? "predicates" : "description");
}

/**
 * Deletes a segment that nothing refers to; refused while a flag rule or
 * another segment names it, naming each (`details.referenced_by`).
 *
 * @param texts the version's texts
 * @param edit the segment
 * @returns the segment's file, deleted (`null`)
 * @throws {InvalidRequestError} when the segment is unknown or referred to (field `segment`)
 *
 * @example
 * ```ts
 * import { deleteSegment } from "./segments.ts";
 * const texts = new Map([
 *   ["segments/beta.toml", ""],
 *   ["flags/checkout.toml", '[[rule]]\nsegment = "beta"\nvariation = "on"\n'],
 * ]);
 * try {
 *   deleteSegment(texts, { segment: "beta" });
 *   throw new Error("expected a refusal");
 * } catch (err) {
 *   if ((err as Error).message !== "Segment beta is used by flag checkout (rule 1): remove that first") throw err;
 * }
 * ```
 */
export function deleteSegment(texts: ManifestTexts, edit: { segment: string }): FileEdits {
  const { path } = readSegment(texts, edit.segment);
  refuseReferenced(`Segment ${edit.segment}`, segmentReferences(texts, edit.segment), "segment");
  return new Map([[path, null]]);
}

function matchOf(v: unknown): "all" | "any" {
  if (v !== "all" && v !== "any") {
    refuse('Match is "all" (every predicate holds) or "any" (at least one does)', "match");
  }
  return v;
}

/** Checks the predicates a person entered (with the engine's own validation). */
function predicatesOf(texts: ManifestTexts, self: string, input: unknown): Doc[] {
  if (!Array.isArray(input) || input.length === 0) {
    refuse("Give the segment at least one predicate", "predicates");
  }
  const segments = keysOf(texts, "segment").filter((k) => k !== self);
  return input.map((p, i) => {
    const at = `predicates.${i}`;
    if (p === null || typeof p !== "object") {
      refuse("A predicate is an attribute, an operator and a value", at);
    }
    const attribute = checkString(p.attribute, `${at}.attribute`, "The attribute");
    const op = checkString(p.op, `${at}.op`, "The operator");
    const raw = { attribute, op, value: p.value };
    const values: unknown[] = Array.isArray(p.value) ? p.value : [p.value];
    if (values.some((v) => typeof v === "string" && !v.isWellFormed())) {
      refuse("The value holds a character that is not valid Unicode", `${at}.value`);
    }
    const r = validatePredicate(raw, "segment");
    if ("problems" in r) {
      const first = r.problems[0]!;
      refuse(
        capitalized(first.message),
        `${at}.${first.key === "" ? "op" : first.key.split("[", 1)[0]}`,
      );
    }
    const target = refName(attribute, "segment");
    if (target === self) refuse("A segment cannot refer to itself", `${at}.attribute`);
    if (target !== undefined) {
      checkKnown(target, segments, `${at}.attribute`, "segment", "segments");
    }
    return raw;
  });
}
