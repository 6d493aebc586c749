/**
 * Checks of `segments/<key>.toml`: match mode and predicates, collecting
 * the references to other segments for the cycle check.
 *
 * @module
 */
import { refName, validatePredicate } from "./conditions.ts";
import type { Predicate } from "./conditions.ts";
import type { TomlTable } from "../toml.ts";
import { didYouMean, quoteName } from "../suggest.ts";
import { describe, keyPath } from "../toml_fields.ts";
import type { FileChecker } from "./_validate_common.ts";
import { SCHEMA_VERSION, type Segment } from "./model.ts";

const SEGMENT_KEYS = ["schema_version", "description", "match", "predicate"];

/**
 * Checks one segment file; `refs` are its references to other segments,
 * each with the key path where it is made.
 */
export function checkSegment(
  fc: FileChecker,
  key: string,
  t: TomlTable,
  segmentKeys: ReadonlySet<string>,
): { segment: Segment; refs: { target: string; key: string }[] } {
  fc.unknownKeys(t, "", SEGMENT_KEYS);
  fc.schemaVersion(t, SCHEMA_VERSION);
  const segment: Segment = { key, description: "", match: "all", predicates: [] };
  const refs: { target: string; key: string }[] = [];
  segment.description = fc.string(t, "", "description", false) ?? "";
  const match = t.match;
  if (match !== undefined) {
    if (match === "all" || match === "any") segment.match = match;
    else {
      fc.report(
        "match",
        typeof match === "string"
          ? `unknown match ${JSON.stringify(match)} (one of all, any)`
          : `expected a string (all or any), found ${describe(match)}`,
      );
    }
  }
  const preds = fc.tables(t, "", "predicate", true);
  if (preds === undefined) return { segment, refs };
  if (preds.length === 0) fc.report("predicate", "a segment needs at least one predicate");
  preds.forEach((raw, i) => {
    if (raw === undefined) return;
    const prefix = keyPath("predicate", i);
    const r = validatePredicate(raw, "segment", { lenientPatterns: fc.mode.stored });
    if ("problems" in r) {
      for (const p of r.problems) {
        fc.report(p.key === "" ? prefix : `${prefix}.${p.key}`, p.message);
      }
    } else {
      segment.predicates.push(r.predicate as Predicate);
      for (const w of r.warnings) fc.warn(w.key === "" ? prefix : `${prefix}.${w.key}`, w.message);
    }
    const attribute = raw.attribute;
    const target = typeof attribute === "string" ? refName(attribute, "segment") : undefined;
    if (target === undefined) return;
    if (segmentKeys.has(target)) refs.push({ target, key: keyPath(prefix, "attribute") });
    else {
      fc.report(
        keyPath(prefix, "attribute"),
        `unknown segment ${quoteName(target)}${didYouMean(target, segmentKeys)}`,
      );
    }
  });
  return { segment, refs };
}
