/**
 * The playground's starting context (lib/flags/context_shape.ts).
 */
import { assertEquals } from "../assert.ts";
import {
  BUCKET_PLACEHOLDER,
  contextPaths,
  contextSkeleton,
  nestPaths,
} from "../../lib/flags/context_shape.ts";
import type { Flag, Manifest, Segment } from "../../lib/flags/model.ts";
import { parseManifest } from "../../lib/flags/validate.ts";
import { FIXTURE } from "../console/fixture.ts";

const enc = new TextEncoder();

function segment(key: string, predicates: Segment["predicates"]): Segment {
  return { key, description: "", match: "all", predicates };
}

function manifest(segments: Segment[], flags: Flag[] = []): Manifest {
  return {
    namespace: { description: "", environments: {} },
    flags: Object.fromEntries(flags.map((f) => [f.key, f])),
    segments: Object.fromEntries(segments.map((s) => [s.key, s])),
  };
}

Deno.test("the skeleton of the console fixture nests every path a predicate reads", () => {
  const m = parseManifest(new Map(Object.entries(FIXTURE).map(([p, t]) => [p, enc.encode(t)])));
  assertEquals(JSON.parse(JSON.stringify(contextSkeleton(m))), {
    targeting_key: BUCKET_PLACEHOLDER,
    user: { beta: true },
    account: { country: "DE", plan: "pro" },
  });
});

Deno.test("placeholders take the predicate's type: lists give their first element", () => {
  const paths = contextPaths(manifest([
    segment("s", [
      { attribute: "n", op: "gte", value: 3 },
      { attribute: "b", op: "neq", value: false },
      { attribute: "tier", op: "not_in", value: ["gold", "silver"] },
      { attribute: "age", op: "in", value: [18, 21] },
      { attribute: "email", op: "matches", value: "^.*@x$" },
      { attribute: "seen", op: "exists", value: true },
      { attribute: "app.version", op: "semver_gt", value: "1.2.0" },
    ]),
  ]));
  assertEquals(Object.fromEntries(paths), {
    targeting_key: BUCKET_PLACEHOLDER,
    n: 3,
    b: false,
    tier: "gold",
    age: 18,
    email: "",
    seen: "",
    "app.version": "1.2.0",
  });
});

Deno.test("segment references read no context, and the first predicate on a path wins", () => {
  const paths = contextPaths(manifest([
    segment("a", [
      { attribute: "segment.b", op: "eq", value: true },
      { attribute: "plan", op: "eq", value: "pro" },
    ]),
    segment("b", [{ attribute: "plan", op: "eq", value: "free" }]),
  ]));
  assertEquals([...paths], [["targeting_key", BUCKET_PLACEHOLDER], ["plan", "pro"]]);
});

Deno.test("every rollout's bucket_by is a path, environment overrides too", () => {
  const flag: Flag = {
    key: "f",
    description: "",
    type: "boolean",
    default: "off",
    variations: { on: true, off: false },
    rules: [{ rollout: [{ variation: "on", weight: 100000 }], bucket_by: "account.id" }],
    environments: {
      prod: {
        enabled: true,
        rules: [{ rollout: [{ variation: "on", weight: 100000 }], bucket_by: "device.id" }],
      },
    },
  };
  const s = contextSkeleton(manifest([], [flag]));
  assertEquals(JSON.parse(JSON.stringify(s)), {
    targeting_key: BUCKET_PLACEHOLDER,
    account: { id: BUCKET_PLACEHOLDER },
    device: { id: BUCKET_PLACEHOLDER },
  });
});

Deno.test("when one path is a prefix of another, the nested one wins", () => {
  const a = nestPaths(new Map<string, string | number>([["a", 1], ["a.b", "x"]]));
  const b = nestPaths(new Map<string, string | number>([["a.b", "x"], ["a", 1]]));
  assertEquals(JSON.stringify(a), '{"a":{"b":"x"}}');
  assertEquals(JSON.stringify(b), '{"a":{"b":"x"}}');
});

Deno.test("a __proto__ path is a plain key, not the object's prototype", () => {
  const s = nestPaths(new Map([["__proto__.polluted", true]]));
  assertEquals(JSON.stringify(s), '{"__proto__":{"polluted":true}}');
  assertEquals(({} as Record<string, unknown>).polluted, undefined);
});

Deno.test("the skeleton holds at most the limit of paths", () => {
  const preds = Array.from({ length: 50 }, (_, i) => ({
    attribute: `a${i}`,
    op: "eq" as const,
    value: i,
  }));
  assertEquals(contextPaths(manifest([segment("s", preds)]), 10).size, 10);
});
