/**
 * Checks of flag rules (`[[rule]]` and an environment's `rule`), their
 * rollouts, and references to variations.
 *
 * @module
 */
import { didYouMean, quoteName } from "../suggest.ts";
import type { TomlTable } from "../toml.ts";
import { describe, isTable, keyPath } from "../toml_fields.ts";
import type { FileChecker } from "./_validate_common.ts";
import { DEFAULT_BUCKET_BY, ROLLOUT_TOTAL, type RolloutEntry, type Rule } from "./model.ts";

const RULE_KEYS = ["segment", "variation", "rollout", "bucket_by"];
const ROLLOUT_KEYS = ["variation", "weight"];
const PATH_RE = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/** Checks a reference to a variation; returns the name when it is a string. */
export function checkVariationRef(
  fc: FileChecker,
  key: string,
  v: unknown,
  names: ReadonlySet<string> | undefined,
): string | undefined {
  if (typeof v !== "string") {
    fc.report(key, `expected a variation name, found ${describe(v)}`);
    return undefined;
  }
  if (names !== undefined && !names.has(v)) {
    const known = [...names].join(", ");
    fc.report(
      key,
      `unknown variation ${quoteName(v)} (variations: ${known === "" ? "none" : known})`,
    );
  }
  return v;
}

/**
 * Checks one rule table at `prefix`; `undefined` stands for an item of
 * `[[rule]]` that is not a table (already reported).
 */
export function checkRule(
  fc: FileChecker,
  prefix: string,
  raw: TomlTable | undefined,
  names: ReadonlySet<string> | undefined,
  segmentKeys: ReadonlySet<string>,
): Rule {
  if (raw === undefined) return { variation: "", bucket_by: DEFAULT_BUCKET_BY };
  fc.unknownKeys(raw, prefix, RULE_KEYS);
  let segment: string | undefined;
  if (raw.segment !== undefined) {
    if (typeof raw.segment !== "string") {
      fc.report(
        keyPath(prefix, "segment"),
        `expected a segment key, found ${describe(raw.segment)}`,
      );
    } else {
      if (!segmentKeys.has(raw.segment)) {
        fc.report(
          keyPath(prefix, "segment"),
          `unknown segment ${quoteName(raw.segment)}${didYouMean(raw.segment, segmentKeys)}`,
        );
      }
      segment = raw.segment;
    }
  }
  const hasVariation = raw.variation !== undefined;
  const hasRollout = raw.rollout !== undefined;
  let bucketBy = DEFAULT_BUCKET_BY;
  if (raw.bucket_by !== undefined) {
    if (typeof raw.bucket_by !== "string" || !PATH_RE.test(raw.bucket_by)) {
      fc.report(
        keyPath(prefix, "bucket_by"),
        typeof raw.bucket_by === "string"
          ? `${JSON.stringify(raw.bucket_by)} is not a dotted context path`
          : `expected a dotted context path, found ${describe(raw.bucket_by)}`,
      );
    } else {
      bucketBy = raw.bucket_by;
      if (!hasRollout && hasVariation) {
        fc.report(keyPath(prefix, "bucket_by"), "bucket_by applies only to a rule with a rollout");
      }
    }
  }
  const base: { segment?: string; bucket_by: string } = segment === undefined
    ? { bucket_by: bucketBy }
    : { segment, bucket_by: bucketBy };
  if (hasVariation === hasRollout) {
    fc.report(
      prefix,
      hasVariation
        ? "a rule has exactly one of variation or rollout, not both"
        : "a rule needs exactly one of variation or rollout",
    );
  }
  if (hasVariation) {
    const v = checkVariationRef(fc, keyPath(prefix, "variation"), raw.variation, names);
    if (!hasRollout) return { ...base, variation: v ?? "" };
  }
  if (!hasRollout) return { ...base, variation: "" };
  return { ...base, rollout: checkRollout(fc, keyPath(prefix, "rollout"), raw.rollout, names) };
}

function checkRollout(
  fc: FileChecker,
  prefix: string,
  raw: unknown,
  names: ReadonlySet<string> | undefined,
): RolloutEntry[] {
  if (!Array.isArray(raw)) {
    fc.report(prefix, `expected an array of {variation, weight} tables, found ${describe(raw)}`);
    return [];
  }
  if (raw.length === 0) {
    fc.report(prefix, "a rollout needs at least one {variation, weight} entry");
    return [];
  }
  const out: RolloutEntry[] = [];
  const seen = new Set<string>();
  let sum = 0;
  let weightsOk = true;
  raw.forEach((e, i) => {
    const ek = keyPath(prefix, i);
    if (!isTable(e)) {
      fc.report(ek, `expected a {variation, weight} table, found ${describe(e)}`);
      weightsOk = false;
      return;
    }
    fc.unknownKeys(e, ek, ROLLOUT_KEYS);
    let variation = "";
    if (fc.present(e, ek, "variation")) {
      const v = checkVariationRef(fc, keyPath(ek, "variation"), e.variation, names);
      if (v !== undefined) {
        variation = v;
        if (seen.has(v)) {
          fc.report(
            keyPath(ek, "variation"),
            `variation ${quoteName(v)} appears twice in the rollout`,
          );
        }
        seen.add(v);
      }
    }
    const weight = fc.integer(e, ek, "weight", true, { min: 0, max: ROLLOUT_TOTAL });
    if (weight === undefined) weightsOk = false;
    else sum += weight;
    out.push({ variation, weight: weight ?? 0 });
  });
  if (weightsOk) {
    if (sum === 100) { for (const e of out) e.weight *= ROLLOUT_TOTAL / 100; }
    else if (sum !== ROLLOUT_TOTAL) {
      fc.report(prefix, `weights sum to ${sum}; they must sum to ${ROLLOUT_TOTAL} or to 100`);
    }
  }
  return out;
}
