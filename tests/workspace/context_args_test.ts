import { assertEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/errors.ts";
import { parseContextArgs, parseContextLiteral } from "../../lib/workspace/context_args.ts";

Deno.test("parseContextLiteral() follows the literal rules", () => {
  const cases: [string, unknown][] = [
    ["true", true],
    ["false", false],
    ["null", null],
    ["42", 42],
    ["-7", -7],
    ["0", 0],
    ["0.5", 0.5],
    ["-12.25", -12.25],
    ["007", "007"],
    ["1e3", "1e3"],
    ["1.", "1."],
    [".5", ".5"],
    ["+1", "+1"],
    ['"42"', "42"],
    ['"true"', "true"],
    ['""', ""],
    ['"', '"'],
    ["True", "True"],
    ["", ""],
    ["enterprise", "enterprise"],
    ["a=b", "a=b"],
  ];
  for (const [text, want] of cases) assertEquals(parseContextLiteral(text), want, text);
});

Deno.test("parseContextArgs() builds nested objects from dotted keys", () => {
  assertEquals(
    parseContextArgs([
      "account.plan=enterprise",
      "account.seats=25",
      "incident.active=true",
      "flat=x=y",
    ]),
    { account: { plan: "enterprise", seats: 25 }, incident: { active: true }, flat: "x=y" },
  );
  assertEquals(parseContextArgs([]), {});
});

Deno.test("parseContextArgs() keeps __proto__ as an ordinary key", () => {
  const ctx = parseContextArgs(["__proto__.polluted=yes"]);
  assertEquals(Object.keys(ctx), ["__proto__"]);
  assertEquals(({} as Record<string, unknown>).polluted, undefined);
});

Deno.test("parseContextArgs() refuses malformed and conflicting arguments", () => {
  const bad: [string[], string][] = [
    [["account.plan"], "must be <dotted.path>=<value>"],
    [["=x"], "is not a dotted path"],
    [["a..b=x"], "is not a dotted path"],
    [["a.=x"], "is not a dotted path"],
    [["a=1", "a=2"], '"a" is given twice'],
    [["a=1", "a.b=2"], '"a" is already a value'],
    [["a.b=2", "a=1"], '"a" is already an object'],
  ];
  for (const [args, msg] of bad) assertThrows(() => parseContextArgs(args), UsageError, msg);
});
