/**
 * Schema verdicts: the record of which entries Ajv found conforming to which
 * schema, so that a later `resolve` of the same workspace need not load Ajv
 * (lib/workspace/open.ts). A verdict is the exact schema text with the exact
 * entry values (in an injective encoding, {@linkcode encodeEntry}) that
 * produced no problem under one checker identity (lib/workspace/schema_check.ts).
 *
 * Trust never rests on a hash or a file name: a cached checker
 * ({@linkcode verdictChecker}) accepts a schema only when its whole text is
 * in the record, and an entry only when its whole encoding is listed under
 * that text; anything else (a changed entry or schema, another Ajv, an
 * unreadable, truncated or foreign record, a value it cannot encode) throws
 * {@linkcode VerdictMissingError}, and the caller checks everything with
 * Ajv. Records are written only from what Ajv itself accepted
 * ({@linkcode recordingChecker}).
 *
 * @module
 */
import { CfgtoolError } from "../errors.ts";
import type { EntryValidator, SchemaChecker, SchemaResult } from "./schema_check.ts";

/** The `format` of a record; another value is not read. */
export const VERDICT_FORMAT = "cfgtool-schema-verdicts/1";

/** Schema texts and, under each, the encodings of entries that conform to it. */
export interface VerdictRecord {
  /** The checker identity the verdicts were made under. */
  checker: string;
  /** Schema text → encodings of conforming entries. */
  schemas: Map<string, Set<string>>;
}

/**
 * A cached checker met a schema or an entry it has no verdict for. Never
 * shown to a user: the caller falls back to checking with Ajv.
 */
export class VerdictMissingError extends CfgtoolError {
  /**
   * Creates the error.
   *
   * @param path the schema or entry file without a verdict
   */
  constructor(path: string) {
    super("schema_verdict_missing", `no cached schema verdict for ${path}`);
    this.name = "VerdictMissingError";
  }
}

/**
 * Encodes an entry value (what the TOML reader produced) so that two values
 * with the same encoding are the same to a JSON Schema validator: every
 * string, number (`-0`, `NaN` and the infinities apart), boolean, null,
 * array and plain object, keys in order. Returns undefined for anything else
 * (a class instance, `undefined`, a function), which is then never taken
 * from the cache.
 *
 * @param value the entry value
 * @returns the encoding, or undefined
 *
 * @example
 * ```ts
 * import { encodeEntry } from "./schema_verdicts.ts";
 * if (encodeEntry({ a: [1, "1"] }) !== '{"a":[n1,s"1"]}') throw new Error(encodeEntry({ a: [1] }));
 * if (encodeEntry({ a: -0 }) === encodeEntry({ a: 0 })) throw new Error();
 * if (encodeEntry({ a: new Date(0) }) !== undefined) throw new Error();
 * ```
 */
export function encodeEntry(value: unknown): string | undefined {
  switch (typeof value) {
    case "string":
      return `s${JSON.stringify(value)}`;
    case "number":
      return Object.is(value, -0) ? "n-0" : `n${String(value)}`;
    case "bigint":
      return `i${String(value)}`;
    case "boolean":
      return value ? "t" : "f";
    case "object": {
      if (value === null) return "z";
      if (Array.isArray(value)) {
        const items: string[] = [];
        for (let i = 0; i < value.length; i++) {
          if (!Object.hasOwn(value, i)) return undefined;
          const e = encodeEntry(value[i]);
          if (e === undefined) return undefined;
          items.push(e);
        }
        return `[${items.join(",")}]`;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return undefined;
      const fields: string[] = [];
      for (const key of Object.keys(value)) {
        const e = encodeEntry((value as Record<string, unknown>)[key]);
        if (e === undefined) return undefined;
        fields.push(`${JSON.stringify(key)}:${e}`);
      }
      return `{${fields.join(",")}}`;
    }
    default:
      return undefined;
  }
}

/**
 * A checker that answers from a record only: a schema whose exact text is
 * recorded compiles, and its validator accepts an entry whose encoding is
 * recorded under it. Anything else throws {@linkcode VerdictMissingError};
 * it never reports a problem of its own, so a run that completes found
 * exactly what Ajv found when the record was made.
 *
 * @param record the verdicts (see {@linkcode parseVerdictRecord})
 * @returns the checker
 *
 * @example
 * ```ts
 * import { encodeEntry, verdictChecker, VerdictMissingError } from "./schema_verdicts.ts";
 * const schemas = new Map([['{"type":"object"}', new Set([encodeEntry({ a: 1 })!])]]);
 * const r = verdictChecker({ checker: "x", schemas }).compile('{"type":"object"}', "s");
 * if (!r.ok || r.validate({ a: 1 }, "e").length !== 0) throw new Error();
 * try {
 *   r.validate({ a: 2 }, "e");
 *   throw new Error("an unrecorded entry was accepted");
 * } catch (err) {
 *   if (!(err instanceof VerdictMissingError)) throw err;
 * }
 * ```
 */
export function verdictChecker(record: VerdictRecord): SchemaChecker {
  return {
    compile(text: string, path: string): SchemaResult {
      const conforming = record.schemas.get(text);
      if (conforming === undefined) throw new VerdictMissingError(path);
      const validate: EntryValidator = (entry, entryPath) => {
        const encoded = encodeEntry(entry);
        if (encoded === undefined || !conforming.has(encoded)) {
          throw new VerdictMissingError(entryPath);
        }
        return [];
      };
      return { ok: true, validate };
    },
  };
}

/**
 * Wraps a checker (Ajv) and records what it accepts: each schema text that
 * compiles, and under it each entry that has no problem. Results pass
 * through unchanged.
 *
 * @param inner the checker that decides
 * @param checkerId the identity of `inner`'s rules
 * @returns the wrapping checker and the record so far
 *
 * @example
 * ```ts
 * import { recordingChecker } from "./schema_verdicts.ts";
 * const inner = {
 *   compile: () => ({ ok: true as const, validate: (e: unknown) => e === 1 ? [] : [{ path: "e", message: "no" }] }),
 * };
 * const rec = recordingChecker(inner, "id");
 * const r = rec.checker.compile("{}", "s");
 * if (!r.ok || r.validate(1, "e").length !== 0 || r.validate(2, "e").length !== 1) throw new Error();
 * if ([...rec.record().schemas.get("{}")!].join() !== "n1") throw new Error();
 * ```
 */
export function recordingChecker(
  inner: SchemaChecker,
  checkerId: string,
): { checker: SchemaChecker; record(): VerdictRecord } {
  const schemas = new Map<string, Set<string>>();
  const checker: SchemaChecker = {
    compile(text: string, path: string): SchemaResult {
      const r = inner.compile(text, path);
      if (!r.ok) return r;
      let conforming = schemas.get(text);
      if (conforming === undefined) {
        conforming = new Set();
        schemas.set(text, conforming);
      }
      const seen = conforming;
      const validate: EntryValidator = (entry, entryPath) => {
        const problems = r.validate(entry, entryPath);
        const encoded = problems.length === 0 ? encodeEntry(entry) : undefined;
        if (encoded !== undefined) seen.add(encoded);
        return problems;
      };
      return { ok: true, validate };
    },
  };
  return { checker, record: () => ({ checker: checkerId, schemas }) };
}

/**
 * Writes a record as JSON text (the format {@linkcode parseVerdictRecord} reads).
 *
 * @example
 * ```ts
 * import { parseVerdictRecord, renderVerdictRecord } from "./schema_verdicts.ts";
 * const text = renderVerdictRecord({ checker: "id", schemas: new Map([["{}", new Set(["n1"])]]) });
 * if (!parseVerdictRecord(text, "id")?.schemas.get("{}")?.has("n1")) throw new Error();
 * ```
 */
export function renderVerdictRecord(record: VerdictRecord): string {
  return JSON.stringify({
    format: VERDICT_FORMAT,
    checker: record.checker,
    schemas: [...record.schemas].map(([text, entries]) => ({ text, entries: [...entries] })),
  });
}

/**
 * Reads a record written by {@linkcode renderVerdictRecord}. Returns
 * undefined for text that is not such a record (not JSON, truncated,
 * another format, a wrong shape) or that was made under another checker
 * identity than `checkerId`.
 *
 * @param text the file content
 * @param checkerId the identity of the rules in force now
 * @returns the record, or undefined
 *
 * @example
 * ```ts
 * import { parseVerdictRecord, renderVerdictRecord } from "./schema_verdicts.ts";
 * const text = renderVerdictRecord({ checker: "old", schemas: new Map() });
 * if (parseVerdictRecord(text, "new") !== undefined) throw new Error();
 * if (parseVerdictRecord(text.slice(0, -1), "old") !== undefined) throw new Error();
 * ```
 */
export function parseVerdictRecord(text: string, checkerId: string): VerdictRecord | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(doc) || doc.format !== VERDICT_FORMAT || doc.checker !== checkerId) {
    return undefined;
  }
  if (!Array.isArray(doc.schemas)) return undefined;
  const schemas = new Map<string, Set<string>>();
  for (const s of doc.schemas) {
    if (!isObject(s) || typeof s.text !== "string" || !Array.isArray(s.entries)) return undefined;
    if (!s.entries.every((e) => typeof e === "string")) return undefined;
    schemas.set(s.text, new Set(s.entries as string[]));
  }
  return { checker: checkerId, schemas };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
