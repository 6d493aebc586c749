import { assertEquals, assertThrows } from "../assert.ts";
import {
  InvalidContextError,
  MAX_CONTEXT_BYTES,
  validateContext,
} from "../../lib/http/context_input.ts";

Deno.test("validateContext() accepts objects and treats an absent context as empty", () => {
  const ctx = { user: { id: "u1", tags: ["a", { b: 1 }] }, n: 1 };
  assertEquals(validateContext(ctx), ctx);
  assertEquals(validateContext(undefined), {});
  assertEquals(validateContext(null), {});
});

Deno.test("validateContext() refuses values that are not objects", () => {
  for (
    const [value, name] of [[[1], "an array"], ["x", "a string"], [3, "a number"], [
      true,
      "a boolean",
    ]] as const
  ) {
    const err = assertThrows(() => validateContext(value), InvalidContextError);
    assertEquals(err.message, `context must be a JSON object, not ${name}`);
    assertEquals([err.status, err.code], [400, "invalid_context"]);
  }
});

Deno.test("validateContext() refuses nesting deeper than the limit and says where", () => {
  let ok: Record<string, unknown> = { leaf: 1 };
  for (let i = 0; i < 9; i++) ok = { d: ok };
  validateContext(ok); // 10 levels
  const deep = { a: { b: [{ c: { d: 1 } }] } };
  const err = assertThrows(() => validateContext(deep, { maxDepth: 3 }), InvalidContextError);
  assertEquals(err.message, "context is nested deeper than 3 levels (at context.a.b[0])");
  assertThrows(() => validateContext({ d: ok }), InvalidContextError, "deeper than 10 levels");
});

Deno.test("validateContext() refuses contexts larger than 32 KiB of JSON", () => {
  const big = { s: "x".repeat(MAX_CONTEXT_BYTES) };
  const err = assertThrows(() => validateContext(big), InvalidContextError);
  assertEquals(err.details, { bytes: MAX_CONTEXT_BYTES + 8, limit: MAX_CONTEXT_BYTES });
  // multi-byte characters count as their UTF-8 bytes
  assertThrows(() => validateContext({ s: "é".repeat(9) }, { maxBytes: 20 }), InvalidContextError);
  // a small body cannot hold a large context: no second measurement
  validateContext({ s: "x" }, { bodyBytes: 10 });
});
