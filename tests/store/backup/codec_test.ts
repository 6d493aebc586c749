/**
 * The backup codec: every kind of value Deno KV stores, and every kind of
 * key part, survives encode → JSON text → decode unchanged, also when the
 * value goes through a real KV store on both sides; values the codec does
 * not hold and JSON it never writes are refused with `BackupError`.
 */
import fc from "fast-check";
import { assert, assertEquals, assertThrows } from "../../assert.ts";
import {
  BackupError,
  decodeKey,
  decodeValue,
  encodeKey,
  encodeValue,
  type Json,
} from "../../../lib/store/backup/codec.ts";

/** encode → JSON text → parse → decode, as a backup file does. */
function roundTrip(value: unknown): unknown {
  return decodeValue(JSON.parse(JSON.stringify(encodeValue(value))) as Json);
}

const keyRoundTrip = (key: Deno.KvKey) =>
  decodeKey(JSON.parse(JSON.stringify(encodeKey(key))) as Json);

const typedArray = fc.oneof(
  fc.int8Array(),
  fc.uint8ClampedArray(),
  fc.int16Array(),
  fc.uint16Array(),
  fc.int32Array(),
  fc.uint32Array(),
  fc.float32Array(),
  fc.float64Array(),
  fc.bigInt64Array(),
  fc.bigUint64Array(),
);

const leaf = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.string({ unit: "grapheme" }),
  fc.double(),
  fc.constantFrom(NaN, -0, 0, Infinity, -Infinity, Number.MAX_VALUE, Number.MIN_VALUE),
  fc.bigInt(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.uint8Array({ maxLength: 64 }),
  typedArray,
  fc.uint8Array({ maxLength: 16 }).map((b) => b.slice().buffer),
  fc.date({ noInvalidDate: false }),
  fc.constantFrom(/a+b/g, /^x$/imsu, new RegExp("\\/", "y"), /[\u{1F600}]/v),
);

/** Structured-clone values as cfgtool could store them: nested objects, arrays (with holes), maps, sets. */
const value = fc.letrec((tie) => ({
  any: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    tie("object"),
    tie("array"),
    tie("map"),
    tie("set"),
  ),
  object: fc.dictionary(
    fc.oneof(fc.string(), fc.constantFrom("__proto__", "constructor", "0", "")),
    tie("any"),
    { maxKeys: 5, noNullPrototype: true },
  ),
  array: fc.oneof(
    fc.array(tie("any"), { maxLength: 5 }),
    fc.sparseArray(tie("any"), { maxLength: 6 }),
  ),
  map: fc.array(fc.tuple(tie("any"), tie("any")), { maxLength: 4 }).map((e) => new Map(e)),
  set: fc.array(tie("any"), { maxLength: 4 }).map((e) => new Set(e)),
})).any;

const keyPart = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.double(),
  fc.bigInt(),
  fc.boolean(),
  fc.uint8Array({ maxLength: 16 }),
);

Deno.test("every structured-clone value kind survives encode, JSON text and decode", () => {
  fc.assert(fc.property(value, (v) => assertEquals(roundTrip(v), v)), { numRuns: 500 });
});

Deno.test("-0, NaN, the infinities and an invalid date keep their exact value", () => {
  assert(Object.is(roundTrip(-0), -0));
  assert(Number.isNaN(roundTrip(NaN)));
  assertEquals(roundTrip([Infinity, -Infinity]), [Infinity, -Infinity]);
  assert(Number.isNaN((roundTrip(new Date(NaN)) as Date).getTime()));
  assertEquals(JSON.stringify(encodeValue({ z: -0 })), '{"z":["n","-0"]}');
});

Deno.test("a Deno.KvU64 stays a KvU64, up to 2^64 - 1", () => {
  fc.assert(fc.property(fc.bigInt({ min: 0n, max: 0xffff_ffff_ffff_ffffn }), (n) => {
    const back = roundTrip(new Deno.KvU64(n));
    assert(back instanceof Deno.KvU64);
    assertEquals(back.value, n);
  }));
});

Deno.test("a blob chunk is base64 in the file and the same bytes after decode", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 60 * 1024 }), (bytes) => {
      const json = encodeValue(bytes) as [string, string];
      assertEquals(json[0], "b");
      const back = roundTrip(bytes) as Uint8Array;
      assertEquals(Object.getPrototypeOf(back), Uint8Array.prototype);
      assertEquals(back, bytes);
    }),
    { numRuns: 50 },
  );
});

Deno.test("holes in arrays stay holes, and undefined stays undefined", () => {
  // deno-lint-ignore no-sparse-arrays
  const sparse = [1, , 3];
  const back = roundTrip(sparse) as unknown[];
  assertEquals(back.length, 3);
  assert(!(1 in back));
  const withUndefined = roundTrip([undefined]) as unknown[];
  assert(0 in withUndefined && withUndefined[0] === undefined);
});

Deno.test("a property named __proto__ stays a property, never a prototype", () => {
  const v = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}');
  const back = roundTrip(v) as Record<string, unknown>;
  assertEquals(Object.getPrototypeOf(back), Object.prototype);
  assertEquals(Object.keys(back), ["__proto__", "a"]);
  assertEquals(({} as Record<string, unknown>).polluted, undefined);
});

Deno.test("every key part kind survives encode, JSON text and decode", () => {
  fc.assert(
    fc.property(fc.array(keyPart, { minLength: 1, maxLength: 5 }), (key) => {
      assertEquals(keyRoundTrip(key), key);
    }),
    { numRuns: 500 },
  );
});

/** What a KV entry may hold: a structured-clone value, or a KvU64 at the top. */
const kvValue = fc.oneof(
  value,
  fc.bigInt({ min: 0n, max: 0xffff_ffff_ffff_ffffn }).map((n) => new Deno.KvU64(n)),
);

Deno.test("values and keys come back equal through a real KV store on both sides", async () => {
  const source = await Deno.openKv(":memory:");
  const target = await Deno.openKv(":memory:");
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.array(keyPart, { minLength: 1, maxLength: 3 }),
        kvValue,
        async (key, v) => {
          await source.set(key, v);
          const stored = (await source.get(key)).value;
          const line = JSON.stringify({ key: encodeKey(key), value: encodeValue(stored) });
          const parsed = JSON.parse(line);
          await target.set(decodeKey(parsed.key), decodeValue(parsed.value));
          const back = (await target.get(key)).value;
          if (stored instanceof Deno.KvU64) assertEquals((back as Deno.KvU64).value, stored.value);
          else assertEquals(back, stored);
        },
      ),
      { numRuns: 200 },
    );
  } finally {
    source.close();
    target.close();
  }
});

Deno.test("values cfgtool never stores are refused with backup_unsupported_value", () => {
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  const named = Object.assign([1, 2], { extra: true });
  class Point {
    x = 1;
  }
  for (
    const [v, what] of [
      [cyclic, "a value that contains itself"],
      [named, "an array with named properties"],
      [new Point(), "a Point"],
      [new Error("x"), "a Error"],
      [new Number(3), "a Number"],
      [Symbol("s"), "a symbol"],
      [() => 1, "a function"],
    ] as const
  ) {
    const err = assertThrows(() => encodeValue(v), BackupError);
    assertEquals(err.code, "backup_unsupported_value");
    assert(err.message.includes(what), err.message);
  }
});

Deno.test("JSON a backup never holds is refused with backup_invalid", () => {
  const bad: Json[] = [
    ["zz"],
    ["b", 3],
    ["b", "not base64!"],
    ["i", "1.5"],
    ["i"],
    ["n", "NaNa"],
    ["u64", "-1"],
    ["u64", "18446744073709551616"],
    ["t", "Int16Array", "AQ=="],
    ["t", "Proxy", ""],
    ["r", "(", ""],
    ["m", [[1]]],
    ["a", {}],
    [],
  ];
  for (const j of bad) {
    const err = assertThrows(() => decodeValue(j), BackupError, undefined);
    assertEquals(err.code, "backup_invalid", JSON.stringify(j));
  }
  for (const k of [{}, [null], [["d", 0]], [[]], "tenant"] as Json[]) {
    assertEquals(assertThrows(() => decodeKey(k), BackupError).code, "backup_invalid");
  }
});
