/**
 * The lossless JSON encoding of Deno KV keys and values used by backups
 * (lib/store/backup/format.ts). A value is what Deno KV stores (a
 * structured-clone value, or a top-level `Deno.KvU64`); JSON holds only
 * some of it, so everything else is tagged. The rule is simple: a JSON
 * string, boolean, `null`, finite number (not `-0`) or object stands for
 * itself (an object's properties are encoded in turn), and a JSON array
 * is always a tag, `[name, …payload]`:
 *
 * | tag | value |
 * |---|---|
 * | `["a", [items]]` | an array (a hole is `["_"]`) |
 * | `["u"]` | `undefined` |
 * | `["n", "NaN" \| "Infinity" \| "-Infinity" \| "-0"]` | a number JSON cannot hold |
 * | `["i", "<decimal>"]` | a bigint |
 * | `["b", "<base64>"]` | a `Uint8Array` (blob chunks) |
 * | `["t", "<Int16Array…>", "<base64 of the little-endian bytes>"]` | another typed array |
 * | `["ab", "<base64>"]` | an `ArrayBuffer` |
 * | `["d", <number>]` | a `Date` (milliseconds since the epoch, itself encoded: `["n","NaN"]` for an invalid date) |
 * | `["r", "<source>", "<flags>"]` | a `RegExp` |
 * | `["m", [[key, value], …]]` | a `Map` |
 * | `["s", [items]]` | a `Set` |
 * | `["u64", "<decimal>"]` | a `Deno.KvU64` |
 *
 * Key parts (string, number, bigint, boolean, `Uint8Array`) use the same
 * forms. Other values (class instances, errors, boxed primitives, a value
 * that contains itself) are refused with a {@linkcode BackupError}: cfgtool
 * never stores them. Two references to one object are written as two
 * copies.
 *
 * @module
 */
import { CfgtoolError } from "../../errors.ts";

/** A JSON value, as `JSON.parse` returns it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * A backup that cannot be written or read, or a restore that cannot go
 * on. `code` says which: `backup_invalid` (a file that is not a complete,
 * unchanged backup), `backup_unsupported_value`, `backup_source_invalid`,
 * `backup_store_changed`, `restore_target_not_empty`, `restore_conflict`.
 *
 * @example
 * ```ts
 * import { BackupError } from "./codec.ts";
 * const err = new BackupError("backup_invalid", "kv.jsonl is incomplete");
 * if (err.code !== "backup_invalid" || err.name !== "BackupError") throw new Error();
 * ```
 */
export class BackupError extends CfgtoolError {
  /**
   * Creates the error.
   *
   * @param code the stable code
   * @param message what is wrong and what to do, in plain words
   * @param options details and cause
   */
  constructor(
    code: string,
    message: string,
    options: { details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(code, message, { status: 500, ...options });
    this.name = "BackupError";
  }
}

/** Constructors of the typed arrays other than `Uint8Array`, by name. */
const TYPED_ARRAYS: Record<string, new (buffer: ArrayBuffer) => ArrayBufferView> = {
  Int8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
};

function unsupported(what: string): BackupError {
  return new BackupError(
    "backup_unsupported_value",
    `Cannot write ${what} to a backup: cfgtool backups hold plain data only`,
  );
}

function encodeNumber(n: number): Json {
  if (Number.isFinite(n) && !Object.is(n, -0)) return n;
  return ["n", Object.is(n, -0) ? "-0" : String(n)];
}

function bytesOf(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

/**
 * Encodes a KV value as JSON, losslessly (see the module comment for the
 * forms). Throws a {@linkcode BackupError} `backup_unsupported_value` for a
 * value cfgtool never stores.
 *
 * @param value a value read from Deno KV
 * @returns its JSON form
 *
 * @example
 * ```ts
 * import { decodeValue, encodeValue } from "./codec.ts";
 * const json = encodeValue({ size: 3, at: new Date(0), chunk: new Uint8Array([1, 2, 3]) });
 * if (JSON.stringify(json) !== '{"size":3,"at":["d",0],"chunk":["b","AQID"]}') throw new Error();
 * const back = decodeValue(json) as { chunk: Uint8Array; at: Date };
 * if (back.chunk[2] !== 3 || back.at.getTime() !== 0) throw new Error();
 * ```
 */
export function encodeValue(value: unknown): Json {
  return encodeIn(value, new Set());
}

function encodeIn(value: unknown, open: Set<object>): Json {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      return encodeNumber(value);
    case "bigint":
      return ["i", value.toString()];
    case "undefined":
      return ["u"];
    case "object":
      break;
    default:
      throw unsupported(`a ${typeof value}`);
  }
  if (value === null) return null;
  if (value instanceof Deno.KvU64) return ["u64", value.value.toString()];
  const proto = Object.getPrototypeOf(value);
  if (proto === Uint8Array.prototype) return ["b", (value as Uint8Array).toBase64()];
  if (ArrayBuffer.isView(value)) {
    const name = (value as { constructor: { name: string } }).constructor.name;
    if (!(name in TYPED_ARRAYS) || proto !== TYPED_ARRAYS[name]!.prototype) {
      throw unsupported(`a ${name}`);
    }
    return ["t", name, bytesOf(value).toBase64()];
  }
  if (proto === ArrayBuffer.prototype) {
    return ["ab", new Uint8Array(value as ArrayBuffer).toBase64()];
  }
  if (proto === Date.prototype) return ["d", encodeNumber((value as Date).getTime())];
  if (proto === RegExp.prototype) {
    const re = value as RegExp;
    return ["r", re.source, re.flags];
  }
  if (open.has(value)) throw unsupported("a value that contains itself");
  open.add(value);
  try {
    if (proto === Map.prototype) {
      const pairs: Json[] = [];
      for (const [k, v] of value as Map<unknown, unknown>) {
        pairs.push([encodeIn(k, open), encodeIn(v, open)]);
      }
      return ["m", pairs];
    }
    if (proto === Set.prototype) {
      return ["s", [...value as Set<unknown>].map((v) => encodeIn(v, open))];
    }
    if (Array.isArray(value)) {
      const items: Json[] = [];
      for (let i = 0; i < value.length; i++) {
        items.push(i in value ? encodeIn(value[i], open) : ["_"]);
      }
      const indexKeys = items.filter((x) => !(Array.isArray(x) && x[0] === "_")).length;
      if (Object.keys(value).length !== indexKeys) {
        throw unsupported("an array with named properties");
      }
      return ["a", items];
    }
    if (proto === Object.prototype || proto === null) {
      const out: { [key: string]: Json } = {};
      for (const k of Object.keys(value)) {
        const v = encodeIn((value as Record<string, unknown>)[k], open);
        Object.defineProperty(out, k, {
          value: v,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
  } finally {
    open.delete(value);
  }
  const name = (proto as { constructor?: { name?: string } } | null)?.constructor?.name ?? "object";
  throw unsupported(`a ${name}`);
}

/** A decoding failure: the caller adds where (file and line). */
function invalid(message: string): BackupError {
  return new BackupError("backup_invalid", message);
}

function decodeNumber(j: Json): number {
  if (typeof j === "number") return j;
  if (Array.isArray(j) && j[0] === "n" && j.length === 2) {
    switch (j[1]) {
      case "NaN":
        return NaN;
      case "Infinity":
        return Infinity;
      case "-Infinity":
        return -Infinity;
      case "-0":
        return -0;
    }
  }
  throw invalid(`not a number: ${short(j)}`);
}

function decodeBigint(j: Json): bigint {
  if (typeof j !== "string" || !/^-?(0|[1-9][0-9]*)$/.test(j)) {
    throw invalid(`not a decimal integer: ${short(j)}`);
  }
  return BigInt(j);
}

function decodeBase64(j: Json): Uint8Array {
  if (typeof j !== "string") throw invalid(`not base64: ${short(j)}`);
  try {
    return Uint8Array.fromBase64(j);
  } catch {
    throw invalid(`not base64: ${short(j)}`);
  }
}

function short(j: Json | undefined): string {
  const s = JSON.stringify(j) ?? "nothing";
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/**
 * Decodes the JSON form written by {@linkcode encodeValue} back to the
 * value. Throws a {@linkcode BackupError} `backup_invalid` for anything
 * {@linkcode encodeValue} never writes (an unknown tag, a malformed
 * payload).
 *
 * @param json the JSON form
 * @returns the value
 *
 * @example
 * ```ts
 * import { decodeValue } from "./codec.ts";
 * const v = decodeValue(["m", [[["i", "7"], ["n", "-0"]]]]) as Map<bigint, number>;
 * if (!Object.is(v.get(7n), -0)) throw new Error();
 * let code = "";
 * try { decodeValue(["zz"]); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "backup_invalid") throw new Error(code);
 * ```
 */
export function decodeValue(json: Json): unknown {
  if (json === null || typeof json === "string" || typeof json === "boolean") return json;
  if (typeof json === "number") return json;
  if (!Array.isArray(json)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(json)) {
      // defineProperty: a property named __proto__ stays a property
      Object.defineProperty(out, k, {
        value: decodeValue(json[k]!),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  const [tag, a, b] = json;
  const arity = (n: number) => {
    if (json.length !== n) throw invalid(`tag ${short(tag)} with ${json.length - 1} part(s)`);
  };
  switch (tag) {
    case "a": {
      arity(2);
      if (!Array.isArray(a)) throw invalid(`array tag without items: ${short(a)}`);
      const out: unknown[] = new Array(a.length);
      a.forEach((item, i) => {
        if (!(Array.isArray(item) && item[0] === "_" && item.length === 1)) {
          out[i] = decodeValue(item);
        }
      });
      return out;
    }
    case "u":
      arity(1);
      return undefined;
    case "n":
      arity(2);
      return decodeNumber(json);
    case "i":
      arity(2);
      return decodeBigint(a!);
    case "b":
      arity(2);
      return decodeBase64(a!);
    case "t": {
      arity(3);
      const Ctor = typeof a === "string" && Object.hasOwn(TYPED_ARRAYS, a)
        ? TYPED_ARRAYS[a]!
        : undefined;
      if (Ctor === undefined) throw invalid(`unknown typed array ${short(a)}`);
      const bytes = decodeBase64(b!);
      try {
        return new Ctor(bytes.slice().buffer);
      } catch {
        throw invalid(`${bytes.length} bytes do not make a ${a}`);
      }
    }
    case "ab":
      arity(2);
      return decodeBase64(a!).slice().buffer;
    case "d":
      arity(2);
      return new Date(decodeNumber(a!));
    case "r":
      arity(3);
      if (typeof a !== "string" || typeof b !== "string") throw invalid("malformed RegExp tag");
      try {
        return new RegExp(a, b);
      } catch {
        throw invalid(`not a regular expression: /${a}/${b}`);
      }
    case "m": {
      arity(2);
      if (!Array.isArray(a)) throw invalid("malformed Map tag");
      const m = new Map<unknown, unknown>();
      for (const pair of a) {
        if (!Array.isArray(pair) || pair.length !== 2) throw invalid("malformed Map entry");
        m.set(decodeValue(pair[0]!), decodeValue(pair[1]!));
      }
      return m;
    }
    case "s":
      arity(2);
      if (!Array.isArray(a)) throw invalid("malformed Set tag");
      return new Set(a.map(decodeValue));
    case "u64": {
      arity(2);
      const n = decodeBigint(a!);
      if (n < 0n || n > 0xffff_ffff_ffff_ffffn) {
        throw invalid(`not a 64-bit unsigned integer: ${a}`);
      }
      return new Deno.KvU64(n);
    }
  }
  throw invalid(`unknown tag ${short(tag)}`);
}

/**
 * Encodes a KV key: each part as in {@linkcode encodeValue} (a string,
 * boolean or finite number as itself; `["n", …]`, `["i", …]`, `["b", …]`).
 *
 * @param key a Deno KV key
 * @returns its JSON form, an array with one item per part
 *
 * @example
 * ```ts
 * import { encodeKey } from "./codec.ts";
 * const json = encodeKey(["blob", "9f2c", 3, 1n, new Uint8Array([255])]);
 * if (JSON.stringify(json) !== '["blob","9f2c",3,["i","1"],["b","/w=="]]') throw new Error();
 * ```
 */
export function encodeKey(key: Deno.KvKey): Json[] {
  return key.map((part) => {
    if (part instanceof Uint8Array) return ["b", part.toBase64()];
    switch (typeof part) {
      case "string":
      case "boolean":
        return part;
      case "number":
        return encodeNumber(part);
      case "bigint":
        return ["i", part.toString()];
    }
    throw unsupported(`a key part of type ${typeof part}`);
  });
}

/**
 * Decodes a key written by {@linkcode encodeKey}; throws a
 * {@linkcode BackupError} `backup_invalid` for anything else (a part that is
 * no key part).
 *
 * @param json the JSON form
 * @returns the key
 *
 * @example
 * ```ts
 * import { decodeKey } from "./codec.ts";
 * const key = decodeKey(["version", "acme", "web", 3]);
 * if (key.length !== 4 || key[3] !== 3) throw new Error();
 * ```
 */
export function decodeKey(json: Json): Deno.KvKey {
  if (!Array.isArray(json)) throw invalid(`a key must be an array, not ${short(json)}`);
  return json.map((part): Deno.KvKeyPart => {
    if (typeof part === "string" || typeof part === "boolean" || typeof part === "number") {
      return part;
    }
    if (Array.isArray(part)) {
      switch (part[0]) {
        case "n":
          return decodeNumber(part);
        case "i":
          if (part.length === 2) return decodeBigint(part[1]!);
          break;
        case "b":
          if (part.length === 2) return decodeBase64(part[1]!);
          break;
      }
    }
    throw invalid(`not a key part: ${short(part)}`);
  });
}
