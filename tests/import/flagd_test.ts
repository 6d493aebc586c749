/**
 * flagd flag definitions (written from flagd's documentation and schema)
 * imported and evaluated on sample contexts, with the outcome flagd's
 * documented semantics give.
 */
import { assert, assertEquals, assertStringIncludes, assertThrows } from "../assert.ts";
import { importFlagd } from "../../lib/import/flagd.ts";
import { ImportError } from "../../lib/import/errors.ts";
import { item, modelOf, outcome } from "./evaluate.ts";

const FIXTURE = new URL("./fixtures/flagd/flags.json", import.meta.url);
const text = await Deno.readTextFile(FIXTURE);
const result = importFlagd(text, { file: "flags.json", envMap: new Map() });
const model = modelOf(result);
const ev = (flag: string, ctx: Record<string, unknown>) => outcome(model, "default", flag, ctx);

Deno.test("flagd: an if chain with ends_with serves its branches, the default otherwise", () => {
  assertEquals(ev("new-welcome-banner", { email: "ann@example.com" }), [true, "TARGETING_MATCH"]);
  assertEquals(ev("new-welcome-banner", { email: "bo@other.test" })[0], false);
  assertEquals(ev("new-welcome-banner", {})[0], false, "a missing email does not end with it");
});

Deno.test("flagd: a boolean-valued targeting names the variants true and false", () => {
  assertEquals(ev("welcome-shorthand", { email: "ann@example.com" })[0], true);
  assertEquals(ev("welcome-shorthand", { email: "ann@example.org" })[0], false);
});

Deno.test("flagd: $ref to a shared evaluator becomes one segment both flags use", () => {
  assertEquals(ev("fib-algo", { email: "x@faas.com" }), ["binet", "TARGETING_MATCH"]);
  assertEquals(ev("fib-algo", { email: "x@other.com" }), ["recursive", "DEFAULT"]);
  const seg = item(result, "segment", "emailWithFaas");
  assertEquals([seg.key, seg.written], ["email-with-faas", true]);
  assert(result.files.has("segments/email-with-faas.toml"));
  const unused = item(result, "segment", "unused");
  assertEquals(unused.written, false);
  assert(unused.notes.length > 0, "an evaluator nobody uses is reported, not dropped silently");
});

Deno.test("flagd: fractional under a condition is a rollout with the same weights, bucketed by its var", () => {
  const [value, reason] = ev("header-color", { email: "ann@faas.com" });
  assertEquals(reason, "SPLIT");
  assert(["#FF0000", "#0000FF", "#00FF00", "#FFFF00"].includes(value as string));
  assertEquals(ev("header-color", { email: "ann@else.com" }), ["#FF0000", "DEFAULT"]);
  const text = result.files.get("flags/header-color.toml")!;
  assertStringIncludes(text, 'bucket_by = "email"');
  assertEquals(text.match(/weight = 25000/g)?.length, 4);
  const r = item(result, "flag", "headerColor");
  assert(r.notes.some((n) => n.includes("may land in another bucket")), r.notes.join("\n"));
  // over many users, every colour is served
  const seen = new Set<unknown>();
  for (let i = 0; i < 200; i++) seen.add(ev("header-color", { email: `u${i}@faas.com` })[0]);
  assertEquals(seen.size, 4);
});

Deno.test("flagd: sem_ver's =, >, <, ~ and ^ compare versions as flagd does", () => {
  assertEquals(ev("app-version", { version: "2.0.0" })[0], "equal");
  assertEquals(ev("app-version", { version: "2.0.1" })[0], "greater");
  assertEquals(ev("app-version", { version: "1.10.0" })[0], "lesser");
  assertEquals(ev("app-version", { version: "not-a-version" }), ["none", "DEFAULT"]);
  assertEquals(ev("major-minor", { version: "3.1.7" })[0], "minor");
  assertEquals(ev("major-minor", { version: "3.1.0-alpha" })[0], "minor");
  assertEquals(ev("major-minor", { version: "3.4.0" })[0], "major");
  assertEquals(ev("major-minor", { version: "4.0.0" })[0], "none");
});

Deno.test("flagd: == compares with JsonLogic's coercion, === without", () => {
  const base = { fn: "Sulisław", age: 29, customer: false };
  assertEquals(ev("context-aware", base)[0], "INTERNAL");
  assertEquals(ev("context-aware", { ...base, age: "29" })[0], "INTERNAL", '29 == "29"');
  assertEquals(ev("context-aware", { ...base, customer: 0 })[0], "INTERNAL", "false == 0");
  assertEquals(ev("context-aware", { ...base, age: 30 })[0], "EXTERNAL");
  assertEquals(ev("code-default", { targeting_key: "user-1" })[0], "B");
  assertEquals(ev("code-default", { targeting_key: "user-2" })[0], "A");
});

Deno.test("flagd: in (a list and a substring), or, >= and != with a missing attribute", () => {
  assertEquals(ev("max-items", { plan: "pro" })[0], 100);
  assertEquals(ev("max-items", { seats: 50 })[0], 100);
  assertEquals(ev("max-items", { seats: 49, plan: "free" })[0], 10);
  assertEquals(ev("theme", { mode: "night-owl" })[0], { bg: "#000", fg: "#fff" });
  assertEquals(ev("not-free", { plan: "free" })[0], false);
  assertEquals(ev("not-free", { plan: "pro" })[0], true);
  assertEquals(ev("not-free", {})[0], true, 'JsonLogic: null != "free"');
});

Deno.test("flagd: a nested if whose branch may serve nothing serves the default, not later branches", () => {
  assertEquals(ev("beta-rollout", { region: "eu-west", beta: true })[0], true);
  assertEquals(ev("beta-rollout", { region: "us-east", beta: true })[0], false);
  assertEquals(ev("beta-rollout", { region: "eu-west", targeting_key: "u1" })[1], "SPLIT");
  assertEquals(ev("beta-rollout", { region: "eu-west" }), [false, "TARGETING_MATCH"]);
});

Deno.test("flagd: DISABLED switches the flag off; a missing defaultVariant is reported", () => {
  assertEquals(ev("legacy-checkout", {}), [true, "DISABLED"]);
  assert(item(result, "flag", "legacy-checkout").notes.some((n) => n.includes("DISABLED")));
  const cd = item(result, "flag", "code-default");
  assertEquals(cd.unmapped.map((u) => u.what), ["no defaultVariant"]);
});

Deno.test("flagd: what has no equivalent is reported per flag, with why", () => {
  const theme = item(result, "flag", "theme");
  assertStringIncludes(theme.unmapped[0]!.what, "$flagd.timestamp");
  const echo = item(result, "flag", "echo-variant");
  assertStringIncludes(echo.unmapped[0]!.what, "cat");
  assert(echo.written);
  assertEquals(item(result, "flag", "new-welcome-banner").unmapped[0]!.what, "metadata.version");
  assert(result.notes.some((n) => n.includes("metadata")));
  // every flag of the source has a report
  const source = Object.keys(JSON.parse(text).flags);
  assertEquals(
    result.items.filter((i) => i.kind === "flag").map((i) => i.sourceKey ?? i.key),
    source,
  );
});

Deno.test("flagd: the array form of flags (the daemon's) and --env-map", () => {
  const r = importFlagd(
    JSON.stringify({
      flags: [{ key: "a", state: "ENABLED", variants: { x: 1, y: 2 }, defaultVariant: "y" }],
    }),
    { file: "f.json", envMap: new Map([["default", "production"]]) },
  );
  assertEquals(outcome(modelOf(r), "production", "a", {}), [2, "DEFAULT"]);
});

Deno.test("flagd: a malformed, truncated or foreign file is an ImportError naming the file", () => {
  const cases: [string, string][] = [
    [text.slice(0, text.length / 2), "f.json: not JSON"],
    ["", "f.json: not JSON"],
    ['{"features": []}', 'f.json: not a flagd flag definition: no top-level "flags"'],
    ['{"flags": 3}', 'f.json: "flags" is neither an object nor an array'],
  ];
  for (const [input, message] of cases) {
    const err = assertThrows(
      () => importFlagd(input, { file: "f.json", envMap: new Map() }),
      ImportError,
    );
    assertStringIncludes(err.message, message);
    assert(!err.message.includes("\n"));
  }
});

Deno.test("flagd: a flag of mixed variant types is not written, and says why", () => {
  const r = importFlagd(
    JSON.stringify({
      flags: { m: { state: "ENABLED", variants: { a: 1, b: "x" }, defaultVariant: "a" } },
    }),
    { file: "f.json", envMap: new Map() },
  );
  const m = item(r, "flag", "m");
  assertEquals(m.written, false);
  assertStringIncludes(m.unmapped[0]!.why, "not all booleans");
  modelOf(r);
});
