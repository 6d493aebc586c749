/**
 * The validator's own checks of one file, run on the data an edit is about
 * to write: what the friendlier checks of each edit let through is still
 * refused here, with the validator's message and the field its key path
 * names, so an edit never writes a file the validator refuses. (The caller
 * still validates the whole manifest before it commits.)
 *
 * @module
 */
import type { Problem } from "../../errors.ts";
import type { TomlTable } from "../../toml.ts";
import { refName } from "../conditions.ts";
import { reportCycles } from "../_segment_cycles.ts";
import { reportNesting } from "../_segment_nesting.ts";
import { FileChecker } from "../_validate_common.ts";
import { checkFlag } from "../_validate_flag.ts";
import { checkNamespace } from "../_validate_namespace.ts";
import { checkSegment } from "../_validate_segment.ts";
import { capitalized, refuse } from "./_args.ts";
import type { Doc } from "./_doc.ts";
import { environmentKeys, keysOf, readAll } from "./_files.ts";
import { flagFile, type ManifestTexts, NAMESPACE_FILE, segmentFile } from "./texts.ts";

/**
 * Refuses a flag file's data that the validator would refuse.
 *
 * @param texts the version's texts (for the segments and environments it may name)
 * @param key the flag key
 * @param doc the data about to be written
 * @param fields maps a validator key path to the form field
 */
export function guardFlag(
  texts: ManifestTexts,
  key: string,
  doc: Doc,
  fields: (key: string) => string = formField,
): void {
  const problems: Problem[] = [];
  const envs = texts.has(NAMESPACE_FILE) ? new Set(environmentKeys(texts)) : undefined;
  checkFlag(
    new FileChecker(flagFile(key), problems),
    key,
    doc as TomlTable,
    new Set(keysOf(texts, "segment")),
    envs,
  );
  raise(problems, fields);
}

/**
 * Refuses a segment file's data that the validator would refuse, reference
 * cycles and chains too deep included.
 *
 * @param texts the version's texts
 * @param key the segment key
 * @param doc the data about to be written
 * @param fields maps a validator key path to the form field
 */
export function guardSegment(
  texts: ManifestTexts,
  key: string,
  doc: Doc,
  fields: (key: string) => string = formField,
): void {
  const problems: Problem[] = [];
  const keys = new Set([...keysOf(texts, "segment"), key]);
  const { refs } = checkSegment(new FileChecker(segmentFile(key), problems), key, doc, keys);
  raise(problems, fields);
  if (refs.length === 0) return;
  // Cycles and depth concern the whole graph of references.
  const edges = new Map<string, { target: string; key: string }[]>();
  for (const s of readAll(texts, "segment")) {
    if (s.key !== key) edges.set(s.key, segmentRefsOf(s.doc, keys));
  }
  edges.set(key, refs);
  if (!reportCycles(edges, problems)) reportNesting(edges, problems);
  raise(problems.filter((p) => p.path === segmentFile(key)), fields);
  const elsewhere = problems[0];
  if (elsewhere !== undefined) {
    const at = refs[0]!.key;
    refuse(capitalized(elsewhere.message), fields(at), { key: at });
  }
}

/**
 * Refuses `namespace.toml` data that the validator would refuse.
 *
 * @param doc the data about to be written
 * @param fields maps a validator key path to the form field
 */
export function guardNamespace(doc: Doc, fields: (key: string) => string = formField): void {
  const problems: Problem[] = [];
  checkNamespace(new FileChecker(NAMESPACE_FILE, problems), doc as TomlTable);
  raise(problems, fields);
}

/**
 * A form field for a validator key path: `rule[1].rollout[0].weight`
 * becomes `rules.1.rollout.0.weight`, `predicate[2].value` becomes
 * `predicates.2.value`.
 */
export function formField(key: string): string {
  return key
    .replace(/(^|\.)rule\[/g, "$1rules[")
    .replace(/(^|\.)predicate\[/g, "$1predicates[")
    .replace(/\[(\d+)\]/g, ".$1")
    .replace(/^namespace\.environments\./, "environments.");
}

function segmentRefsOf(doc: Doc, keys: ReadonlySet<string>): { target: string; key: string }[] {
  const preds = Array.isArray(doc.predicate) ? doc.predicate : [];
  const out: { target: string; key: string }[] = [];
  preds.forEach((p: unknown, i: number) => {
    const attribute = (p as Doc | null)?.attribute;
    const target = typeof attribute === "string" ? refName(attribute, "segment") : undefined;
    if (target !== undefined && keys.has(target)) {
      out.push({ target, key: `predicate[${i}].attribute` });
    }
  });
  return out;
}

function raise(problems: Problem[], fields: (key: string) => string): void {
  const first = problems[0];
  if (first === undefined) return;
  const key = first.key ?? "";
  refuse(capitalized(first.message), fields(key), {
    key,
    problems: problems.map((p) => ({ key: p.key ?? "", message: p.message })),
  });
}
