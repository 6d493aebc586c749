/**
 * Who refers to what in a manifest, read from the texts of the version
 * being edited: the flag rules (a flag's own or an environment override's)
 * and the segments (`segment.<key>` predicates) that name a segment, the
 * flags whose overrides name an environment, and the places of one flag
 * that name one of its variations. Edits that remove something refuse
 * while it is referred to, naming every reference
 * ({@linkcode refuseReferenced}).
 *
 * Nothing refers to a flag: rules name segments and variations, overrides
 * name environments, predicates read context attributes and other
 * segments, so a flag can always be deleted.
 *
 * @module
 */
import { InvalidRequestError } from "../../errors.ts";
import { keyPath } from "../../toml_fields.ts";
import { refName } from "../conditions.ts";
import { type Doc, isTable } from "./_doc.ts";
import { readAll } from "./_files.ts";
import type { ManifestTexts } from "./texts.ts";

/** One place that refers to a segment, an environment or a variation. */
export interface Reference {
  /**
   * What refers: a flag's own settings (`flag`), an environment override
   * of a flag (`override`), or a segment (`segment`).
   */
  kind: "flag" | "segment" | "override";
  /** The key of the flag or segment that refers. */
  key: string;
  /** Where in it, in words, counting from 1: `rule 2`, `rule 1 in production`, `predicate 3`. */
  where: string;
  /** Where in it, as a key path of its file (as the validator writes it, counting from 0). */
  path: string;
}

/**
 * The rules (of every flag, in every scope) and the segments that name
 * segment `segment`, flags first, each sorted by key.
 *
 * @param texts the version's texts
 * @param segment the segment key
 * @returns every reference
 *
 * @example
 * ```ts
 * import { segmentReferences } from "./references.ts";
 * const texts = new Map([
 *   ["flags/a.toml", '[[rule]]\nsegment = "beta"\nvariation = "on"\n' +
 *     '[[environments.production.rule]]\nsegment = "beta"\nvariation = "on"\n'],
 *   ["segments/eu.toml", '[[predicate]]\nattribute = "segment.beta"\nop = "eq"\nvalue = true\n'],
 * ]);
 * const refs = segmentReferences(texts, "beta");
 * if (refs.map((r) => `${r.kind} ${r.key} ${r.where}`).join("; ") !==
 *   "flag a rule 1; override a rule 1 in production; segment eu predicate 1") throw new Error();
 * ```
 */
export function segmentReferences(texts: ManifestTexts, segment: string): Reference[] {
  const out: Reference[] = [];
  for (const { key, doc } of readAll(texts, "flag")) {
    for (const scope of scopes(doc)) {
      scope.rules.forEach((r, i) => {
        if (isTable(r) && r.segment === segment) out.push(ruleRef(key, scope, i, ""));
      });
    }
  }
  for (const { key, doc } of readAll(texts, "segment")) {
    if (key === segment) continue;
    const preds = Array.isArray(doc.predicate) ? doc.predicate : [];
    preds.forEach((p: unknown, i: number) => {
      const attribute = isTable(p) ? p.attribute : undefined;
      if (typeof attribute === "string" && refName(attribute, "segment") === segment) {
        out.push({ kind: "segment", key, where: `predicate ${i + 1}`, path: `predicate[${i}]` });
      }
    });
  }
  return out;
}

/**
 * The flags whose overrides name environment `environment`, sorted by key.
 *
 * @param texts the version's texts
 * @param environment the environment key
 * @returns one reference per flag
 *
 * @example
 * ```ts
 * import { environmentReferences } from "./references.ts";
 * const texts = new Map([["flags/a.toml", "[environments.qa]\nenabled = false\n"], ["flags/b.toml", ""]]);
 * const refs = environmentReferences(texts, "qa");
 * if (refs.length !== 1 || refs[0]!.key !== "a" || refs[0]!.where !== "the override of qa") {
 *   throw new Error();
 * }
 * ```
 */
export function environmentReferences(texts: ManifestTexts, environment: string): Reference[] {
  const out: Reference[] = [];
  for (const { key, doc } of readAll(texts, "flag")) {
    if (isTable(doc.environments) && Object.hasOwn(doc.environments, environment)) {
      out.push({
        kind: "override",
        key,
        where: `the override of ${environment}`,
        path: keyPath("environments", environment),
      });
    }
  }
  return out;
}

/**
 * The places of flag `flag`'s file that name variation `variation`: its
 * default, each override's default, each rule serving it and each rollout
 * entry giving it a weight, in every scope.
 *
 * @param flag the flag key
 * @param doc the flag file's data
 * @param variation the variation name
 * @returns every reference, in file order of scope
 *
 * @example
 * ```ts
 * import { variationReferences } from "./references.ts";
 * const doc = {
 *   default: "off",
 *   rule: [{ rollout: [{ variation: "on", weight: 10 }, { variation: "off", weight: 90 }] }],
 *   environments: { staging: { default: "on" } },
 * };
 * const refs = variationReferences("f", doc, "on");
 * if (refs.map((r) => r.where).join("; ") !== "the rollout of rule 1; the default in staging") {
 *   throw new Error(refs.map((r) => r.where).join("; "));
 * }
 * ```
 */
export function variationReferences(
  flag: string,
  doc: Doc,
  variation: string,
): Reference[] {
  const out: Reference[] = [];
  if (doc.default === variation) {
    out.push({ kind: "flag", key: flag, where: "the default", path: "default" });
  }
  for (const scope of scopes(doc)) {
    if (scope.environment !== undefined && scope.table?.default === variation) {
      out.push({
        kind: "override",
        key: flag,
        where: `the default in ${scope.environment}`,
        path: `${scope.prefix}default`,
      });
    }
    scope.rules.forEach((r, i) => {
      if (!isTable(r)) return;
      if (r.variation === variation) out.push(ruleRef(flag, scope, i, ""));
      if (
        Array.isArray(r.rollout) &&
        r.rollout.some((e: unknown) => isTable(e) && e.variation === variation)
      ) out.push(ruleRef(flag, scope, i, "the rollout of "));
    });
  }
  return out;
}

/**
 * References in words: `flags checkout (rule 2), search (rule 1 in
 * production) and segment eu-beta (predicate 1)`.
 *
 * @param refs references
 * @returns the phrase
 *
 * @example
 * ```ts
 * import { describeReferences } from "./references.ts";
 * const s = describeReferences([
 *   { kind: "flag", key: "checkout", where: "rule 2", path: "rule[1]" },
 *   { kind: "override", key: "search", where: "rule 1 in production", path: "" },
 *   { kind: "segment", key: "eu-beta", where: "predicate 1", path: "predicate[0]" },
 * ]);
 * if (s !== "flags checkout (rule 2), search (rule 1 in production) and segment eu-beta (predicate 1)") {
 *   throw new Error(String(s));
 * }
 * ```
 */
export function describeReferences(refs: readonly Reference[]): string {
  const groups: string[] = [];
  for (const noun of ["flag", "segment"] as const) {
    const byKey = new Map<string, string[]>();
    for (const r of refs) {
      if ((r.kind === "segment") !== (noun === "segment")) continue;
      const places = byKey.get(r.key) ?? [];
      places.push(r.where);
      byKey.set(r.key, places);
    }
    if (byKey.size === 0) continue;
    const items = [...byKey].map(([key, places]) => `${key} (${places.join(", ")})`);
    groups.push(`${noun}${byKey.size === 1 ? "" : "s"} ${items.join(", ")}`);
  }
  return inWords(groups);
}

/**
 * Refuses an edit while something refers to what it removes:
 * `<subject> is used by <references>: remove those first`, with
 * `details.referenced_by` listing each reference as
 * `{kind, key, where, path}`.
 *
 * @param subject what is being removed, capitalized (`Segment beta`)
 * @param refs its references (nothing happens when there are none)
 * @param field the form field the refusal names
 * @throws {InvalidRequestError} when `refs` is not empty
 *
 * @example
 * ```ts
 * import { refuseReferenced } from "./references.ts";
 * import { InvalidRequestError } from "../../errors.ts";
 * try {
 *   refuseReferenced("Segment beta", [{ kind: "flag", key: "a", where: "rule 1", path: "rule[0]" }], "segment");
 *   throw new Error("expected a refusal");
 * } catch (err) {
 *   if (!(err instanceof InvalidRequestError)) throw err;
 *   if (err.message !== "Segment beta is used by flag a (rule 1): remove that first") throw err;
 * }
 * ```
 */
export function refuseReferenced(
  subject: string,
  refs: readonly Reference[],
  field: string,
): void {
  if (refs.length === 0) return;
  throw new InvalidRequestError(
    `${subject} is used by ${describeReferences(refs)}: remove ${
      refs.length === 1 ? "that" : "those"
    } first`,
    { details: { field, referenced_by: refs.map((r) => ({ ...r })) } },
  );
}

/** The rule lists of a flag file: its own, then each override's own, in file order. */
interface Scope {
  environment?: string;
  table?: Doc;
  prefix: string;
  rules: unknown[];
}

function scopes(doc: Doc): Scope[] {
  const out: Scope[] = [{ prefix: "", rules: Array.isArray(doc.rule) ? doc.rule : [] }];
  if (!isTable(doc.environments)) return out;
  for (const [environment, table] of Object.entries(doc.environments)) {
    if (!isTable(table)) continue;
    out.push({
      environment,
      table,
      prefix: `${keyPath("environments", environment)}.`,
      rules: Array.isArray(table.rule) ? table.rule : [],
    });
  }
  return out;
}

function ruleRef(flag: string, scope: Scope, i: number, before: string): Reference {
  const where = `${before}rule ${i + 1}${
    scope.environment === undefined ? "" : ` in ${scope.environment}`
  }`;
  return {
    kind: scope.environment === undefined ? "flag" : "override",
    key: flag,
    where,
    path: `${scope.prefix}rule[${i}]`,
  };
}

function inWords(items: string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}
