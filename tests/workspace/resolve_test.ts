import { assert, assertEquals, assertThrows } from "../assert.ts";
import { NotFoundError, UsageError } from "../../lib/errors.ts";
import type { Predicate } from "../../lib/flags/conditions.ts";
import type { QualifierModel, WorkspaceModel } from "../../lib/workspace/model.ts";
import { compileResolver } from "../../lib/workspace/resolve.ts";

function model(
  qualifiers: Record<string, Predicate[]>,
  rules: [string, string][],
  def = "d",
): WorkspaceModel {
  const entry = (key: string) => ({
    key,
    path: `catalogs/c-entries/${key}.toml`,
    value: { key, nested: { list: [key] } },
  });
  const keys = new Set([def, ...rules.map(([, v]) => v)]);
  return {
    catalogs: new Map([["c", {
      name: "c",
      path: "catalogs/c.toml",
      defined: true,
      entries: new Map([...keys].map((k) => [k, entry(k)])),
    }]]),
    qualifiers: new Map(
      Object.entries(qualifiers).map(([name, predicates]): [string, QualifierModel] => [name, {
        name,
        path: `qualifiers/${name}.toml`,
        predicates,
        refs: [],
        valid: true,
      }]),
    ),
    variables: new Map([["v", {
      name: "v",
      path: "variables/v.toml",
      catalog: "c",
      defaultKey: def,
      rules: rules.map(([qualifier, value]) => ({ qualifier, value })),
    }]]),
  };
}

const eq = (attribute: string, value: string | boolean): Predicate => ({
  attribute,
  op: "eq",
  value,
});

Deno.test("compileResolver() takes the first true rule in order, else the default", () => {
  const m = model({ a: [eq("x", "1")], b: [eq("y", "1")] }, [["a", "ra"], ["b", "rb"]]);
  const r = compileResolver(m);
  assertEquals(r("v", { x: "1", y: "1" }).value_key, "ra");
  assertEquals(r("v", { y: "1" }).value_key, "rb");
  assertEquals(r("v", {}).value_key, "d");
  assertEquals(r("v", {}).value, { key: "d", nested: { list: ["d"] } });
});

Deno.test("compileResolver() returns frozen values that callers cannot corrupt", () => {
  const r = compileResolver(model({}, []));
  const first = r("v", {});
  assert(Object.isFrozen(first.value));
  assert(Object.isFrozen((first.value.nested as { list: string[] }).list));
  assertThrows(() => {
    (first.value as Record<string, unknown>).key = "changed";
  }, TypeError);
  assertEquals(r("v", {}).value.key, "d");
});

Deno.test("compileResolver() evaluates each qualifier at most once per call", () => {
  let reads = 0;
  const ctx = {
    get x() {
      reads++;
      return "1";
    },
  };
  const m = model({
    base: [eq("x", "2")],
    a: [eq("qualifier.base", true)],
    b: [eq("qualifier.base", true)],
  }, [["a", "ra"], ["b", "rb"], ["base", "rc"]]);
  assertEquals(compileResolver(m)("v", ctx).value_key, "d");
  assertEquals(reads, 1);
});

Deno.test("compileResolver() stops at the first true rule", () => {
  let reads = 0;
  const ctx = {
    x: "1",
    get y() {
      reads++;
      return "1";
    },
  };
  const m = model({ a: [eq("x", "1")], b: [eq("y", "1")] }, [["a", "ra"], ["b", "rb"]]);
  assertEquals(compileResolver(m)("v", ctx).value_key, "ra");
  assertEquals(reads, 0);
});

Deno.test("compileResolver() never recurses forever on a cycle (it counts as false)", () => {
  const m = model({
    a: [eq("qualifier.b", true)],
    b: [eq("qualifier.a", true)],
    self: [eq("qualifier.self", false)],
  }, [["a", "ra"], ["self", "rs"]]);
  const r = compileResolver(m);
  assertEquals(r("v", {}).value_key, "rs");
});

Deno.test("compileResolver() throws variable_not_found and refuses non-object contexts", () => {
  const r = compileResolver(model({}, []));
  const e = assertThrows(() => r("nope", {}), NotFoundError);
  assertEquals(e.code, "variable_not_found");
  assertThrows(() => r("v", [] as unknown as Record<string, unknown>), UsageError);
  assertThrows(() => r("v", null as unknown as Record<string, unknown>), UsageError);
});
