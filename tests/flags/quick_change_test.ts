/**
 * Quick changes to a flag file (lib/flags/quick_change.ts): each kind edits
 * only what it names, comments and layout survive, refusals say what is
 * wrong, and every result is a valid manifest with the other files.
 */
import { assert, assertEquals, assertStringIncludes, assertThrows } from "../assert.ts";
import { InvalidRequestError } from "../../lib/errors.ts";
import { effectiveFlag } from "../../lib/flags/effective.ts";
import type { Manifest } from "../../lib/flags/model.ts";
import {
  applyQuickChange,
  type QuickChange,
  rulesAsWritten,
} from "../../lib/flags/quick_change.ts";
import { validateManifest } from "../../lib/flags/validate.ts";
import { diffLines } from "diff";
import { FIXTURE } from "../console/fixture.ts";

const enc = new TextEncoder();

/** The new-checkout flag of the console fixture, with comments and odd spacing. */
const CHECKOUT = `schema_version = 1
# Owned by the payments team.
description = "New checkout flow"
type    = "boolean"   # aligned on purpose
default = "off"

[variations]
on = true   # the new flow
off = false

# beta testers always get it
[[rule]]
segment = "beta-testers"
variation = "on"

[[rule]]
segment = "eu-customers"
rollout = [ { variation = "on", weight = 25 }, { variation = "off", weight = 75 } ]

[environments.production]
enabled = true # flipped at launch
default = "off"
`;

/** Validates the fixture with `flags/<key>.toml` replaced; returns the manifest. */
function validWith(path: string, text: string): Manifest {
  const files = new Map(
    Object.entries({ ...FIXTURE, [path]: text }).map(([p, t]) => [
      p,
      enc.encode(t),
    ]),
  );
  const { problems, manifest } = validateManifest(files);
  assertEquals(problems, [], text);
  return manifest!;
}

function checkout(change: QuickChange): { text: string; manifest: Manifest } {
  const text = applyQuickChange(CHECKOUT, change);
  return { text, manifest: validWith("flags/new-checkout.toml", text) };
}

/** The lines a line diff adds and removes, in order. */
function changedLines(before: string, after: string): { added: string[]; removed: string[] } {
  const out = { added: [] as string[], removed: [] as string[] };
  for (const part of diffLines(before, after)) {
    const lines = part.value.replace(/\n$/, "").split("\n");
    if (part.added) out.added.push(...lines);
    if (part.removed) out.removed.push(...lines);
  }
  return out;
}

function refused(text: string, change: QuickChange, message: string | RegExp): void {
  const err = assertThrows(() => applyQuickChange(text, change), InvalidRequestError);
  if (typeof message === "string") assertStringIncludes(err.message, message);
  else assert(message.test(err.message), err.message);
  assertEquals(err.status, 400);
}

Deno.test("turning a flag off in an environment changes only its enabled line", () => {
  const { text, manifest } = checkout({
    kind: "toggle",
    environment: "production",
    enabled: false,
  });
  assertEquals(changedLines(CHECKOUT, text), {
    added: ["enabled = false # flipped at launch"],
    removed: ["enabled = true # flipped at launch"],
  });
  assertEquals(effectiveFlag(manifest.flags["new-checkout"]!, "production").enabled, false);
});

Deno.test("turning a flag off where it has no override adds an [environments.<env>] table", () => {
  const { text, manifest } = checkout({ kind: "toggle", environment: "staging", enabled: false });
  assert(text.startsWith(CHECKOUT), "everything before stays as it was");
  assertEquals(text.slice(CHECKOUT.length), "\n[environments.staging]\nenabled = false\n");
  assertEquals(effectiveFlag(manifest.flags["new-checkout"]!, "staging").enabled, false);
  assertEquals(effectiveFlag(manifest.flags["new-checkout"]!, "production").enabled, true);
});

Deno.test("a file with no environments at all gets its first table at the end", () => {
  const items = FIXTURE["flags/max-items.toml"]!;
  const text = applyQuickChange(items, {
    kind: "toggle",
    environment: "production",
    enabled: false,
  });
  assertEquals(text, `${items}\n[environments.production]\nenabled = false\n`);
  validWith("flags/max-items.toml", text);
});

Deno.test("an environment implied by its own [[rule]] tables gets a real table too", () => {
  const text = `schema_version = 1
type = "boolean"
default = "off"
[variations]
on = true
off = false

[[environments.production.rule]]
rollout = [
  { variation = "on", weight = 10 }, # ten percent
  { variation = "off", weight = 90 },
]
`;
  const out = applyQuickChange(text, { kind: "toggle", environment: "production", enabled: false });
  assert(out.startsWith(text), out);
  assertEquals(out.slice(text.length), "\n[environments.production]\nenabled = false\n");
  validWith("flags/x.toml", out);
});

Deno.test("turning a flag on where nothing turns it off changes nothing", () => {
  assertEquals(
    applyQuickChange(CHECKOUT, { kind: "toggle", environment: "staging", enabled: true }),
    CHECKOUT,
  );
  assertEquals(
    applyQuickChange(CHECKOUT, { kind: "toggle", environment: "production", enabled: true }),
    CHECKOUT,
  );
});

Deno.test("turning a flag back on rewrites its enabled = false", () => {
  const banner = FIXTURE["flags/banner-text.toml"]!;
  const text = applyQuickChange(banner, { kind: "toggle", environment: "staging", enabled: true });
  assertEquals(changedLines(banner, text), {
    added: ["enabled = true"],
    removed: ["enabled = false"],
  });
});

Deno.test("an environment's default is set in its table, next to what is there", () => {
  const banner = FIXTURE["flags/banner-text.toml"]!;
  const text = applyQuickChange(banner, {
    kind: "default",
    environment: "staging",
    variation: "sale",
  });
  assertEquals(changedLines(banner, text), { added: ['default = "sale"'], removed: [] });
  assertStringIncludes(text, '[environments.staging]\nenabled = false\ndefault = "sale"\n');
  const m = validWith("flags/banner-text.toml", text);
  assertEquals(effectiveFlag(m.flags["banner-text"]!, "staging").default, "sale");
  assertEquals(effectiveFlag(m.flags["banner-text"]!, "production").default, "plain");
});

Deno.test("the flag's default changes when no environment is named", () => {
  const { text, manifest } = checkout({ kind: "default", variation: "on" });
  assertEquals(changedLines(CHECKOUT, text), {
    added: ['default = "on"'],
    removed: ['default = "off"'],
  });
  assertEquals(manifest.flags["new-checkout"]!.default, "on");
  assertEquals(manifest.flags["new-checkout"]!.environments.production!.default, "off");
});

Deno.test("a production default override is replaced in place", () => {
  const { text, manifest } = checkout({
    kind: "default",
    environment: "production",
    variation: "on",
  });
  assertEquals(text.split("\n").filter((l) => l.startsWith("default = ")), [
    'default = "off"',
    'default = "on"',
  ]);
  assertEquals(effectiveFlag(manifest.flags["new-checkout"]!, "production").default, "on");
});

Deno.test("rollout weights change in place, keeping each entry's variation and order", () => {
  const { text, manifest } = checkout({
    kind: "weights",
    environment: "production",
    rule: 1,
    weights: { off: 50, on: 50 },
  });
  assertEquals(changedLines(CHECKOUT, text), {
    added: ['rollout = [ { variation = "on", weight = 50 }, { variation = "off", weight = 50 } ]'],
    removed: [
      'rollout = [ { variation = "on", weight = 25 }, { variation = "off", weight = 75 } ]',
    ],
  });
  assertEquals(manifest.flags["new-checkout"]!.rules[1]!.rollout, [
    { variation: "on", weight: 50000 },
    { variation: "off", weight: 50000 },
  ]);
});

Deno.test("weights out of 100000 are written as given", () => {
  const { text } = checkout({ kind: "weights", rule: 1, weights: { on: 33333, off: 66667 } });
  assertStringIncludes(text, '{ variation = "on", weight = 33333 }');
});

Deno.test("an environment's own rules are the ones whose weights change", () => {
  const text = `schema_version = 1
type = "boolean"
default = "off"
[variations]
on = true
off = false
[[rule]]
rollout = [{ variation = "on", weight = 1 }, { variation = "off", weight = 99 }]
[environments.production]
enabled = true

[[environments.production.rule]]
rollout = [
  { variation = "on", weight = 10 }, # ten percent
  { variation = "off", weight = 90 },
]
`;
  assertEquals(rulesAsWritten(text, "production")[0]!.scope, "environment");
  assertEquals(rulesAsWritten(text, "staging")[0]!.rollout![0]!.weight, 1);
  const out = applyQuickChange(text, {
    kind: "weights",
    environment: "production",
    rule: 0,
    weights: { on: 40, off: 60 },
  });
  assertEquals(changedLines(text, out), {
    added: [
      '  { variation = "on", weight = 40 }, # ten percent',
      '  { variation = "off", weight = 60 },',
    ],
    removed: [
      '  { variation = "on", weight = 10 }, # ten percent',
      '  { variation = "off", weight = 90 },',
    ],
  });
  validWith("flags/x.toml", out);
});

Deno.test("rulesAsWritten shows rollouts in the file's own scale", () => {
  assertEquals(rulesAsWritten(CHECKOUT, "production"), [
    { index: 0, scope: "flag", segment: "beta-testers", variation: "on" },
    {
      index: 1,
      scope: "flag",
      segment: "eu-customers",
      rollout: [{ variation: "on", weight: 25 }, { variation: "off", weight: 75 }],
    },
  ]);
});

Deno.test("an unknown variation is refused with the variations there are", () => {
  refused(
    CHECKOUT,
    { kind: "default", variation: "maybe" },
    'Unknown variation "maybe" (variations: on, off)',
  );
  refused(
    CHECKOUT,
    { kind: "weights", rule: 1, weights: { on: 50, maybe: 50 } },
    'Unknown variation "maybe"',
  );
});

Deno.test("weights for a rule that is not a rollout, or no rule at all, are refused", () => {
  refused(
    CHECKOUT,
    { kind: "weights", rule: 0, weights: { on: 100 } },
    "Rule 1 of the flag's rules is not a rollout",
  );
  refused(CHECKOUT, { kind: "weights", rule: 5, weights: { on: 100 } }, "There is no rule 6");
});

Deno.test("weights that do not sum to 100 or 100000 are refused, saying what they sum to", () => {
  refused(
    CHECKOUT,
    { kind: "weights", rule: 1, weights: { on: 50, off: 40 } },
    "The weights sum to 90; they must sum to 100 (percent) or to 100000",
  );
});

Deno.test("negative, fractional and missing weights are refused", () => {
  refused(
    CHECKOUT,
    { kind: "weights", rule: 1, weights: { on: 150, off: -50 } },
    'The weight of "off" must be a whole number of 0 or more, not -50',
  );
  refused(
    CHECKOUT,
    { kind: "weights", rule: 1, weights: { on: 50.5, off: 49.5 } },
    "not 50.5",
  );
  refused(
    CHECKOUT,
    { kind: "weights", rule: 1, weights: { on: 100 } },
    'The weight of "off" is missing',
  );
});

Deno.test("a file that is not TOML is refused", () => {
  refused("default = = 1\n", { kind: "default", variation: "on" }, "not valid TOML");
});

Deno.test("CRLF files keep their line endings", () => {
  const crlf = FIXTURE["flags/max-items.toml"]!.replaceAll("\n", "\r\n");
  const out = applyQuickChange(crlf, {
    kind: "default",
    environment: "staging",
    variation: "fifty",
  });
  assert(out.startsWith(crlf), JSON.stringify(out));
  assertEquals(out.slice(crlf.length), '\r\n[environments.staging]\r\ndefault = "fifty"\r\n');
});
