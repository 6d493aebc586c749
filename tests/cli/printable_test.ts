/**
 * Server text made safe for a terminal (lib/cli/printable.ts): no control
 * character reaches the screen, a table cell stays on one line in its
 * order, and JSON lines parse back to the value sent.
 */
import { assert, assertEquals } from "../assert.ts";
import { cellText, jsonLine, printable } from "../../lib/cli/printable.ts";

const EVIL = "a\u0000b\u0007c\u001b[31md\u007fe\u0085f\u009b2Jg";

Deno.test("printable() replaces every control character but tab and line feed", () => {
  assertEquals(printable(EVIL), "a\uFFFDb\uFFFDc\uFFFD[31md\uFFFDe\uFFFDf\uFFFD2Jg");
  assertEquals(printable("one\ttwo\nthree"), "one\ttwo\nthree");
});

Deno.test("cellText() keeps a cell on one line and in its order", () => {
  assertEquals(cellText("one\ttwo\nthree\r"), "one two three ");
  assertEquals(cellText("abc\u202edef\u2066"), "abc\uFFFDdef\uFFFD");
  // deno-lint-ignore no-control-regex
  assert(!/[\u0000-\u001f\u007f-\u009f]/.test(cellText(EVIL)));
});

Deno.test("jsonLine() escapes what JSON leaves raw and parses back to the same value", () => {
  const value = { text: EVIL, sep: "x\u2028y\u2029z", ok: "plain é" };
  const line = jsonLine(value);
  // deno-lint-ignore no-control-regex
  assert(!/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(line), line);
  assertEquals(JSON.parse(line), value);
  assert(line.includes("plain é"), "other characters stay as they are");
});
