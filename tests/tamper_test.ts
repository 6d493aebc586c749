import { assertEquals, assertNotEquals, assertThrows } from "./assert.ts";
import fc from "fast-check";
import { tamper } from "./tamper.ts";

Deno.test("tampering always changes the value and keeps its length", () => {
  fc.assert(
    fc.property(fc.string({ minLength: 1 }), fc.integer(), (text, n) => {
      const index = n % text.length;
      const changed = tamper(text, index);
      assertNotEquals(changed, text);
      assertEquals(changed.length, text.length);
    }),
  );
});

Deno.test("tampering a value that already ends in x still changes it", () => {
  assertEquals(tamper("tok_abcx"), "tok_abcy");
});

Deno.test("tampering outside the value is refused", () => {
  assertThrows(() => tamper(""), RangeError);
  assertThrows(() => tamper("ab", 2), RangeError);
});
