import { assert, assertEquals } from "../assert.ts";
import {
  contractFileProblems,
  generateContract,
  renderJson,
} from "../../lib/workspace/context_contract.ts";
import type { Predicate } from "../../lib/flags/conditions.ts";
import type { QualifierModel } from "../../lib/workspace/model.ts";
import { EXAMPLE_DIR } from "../fixtures/workspace/build.ts";
import { loadModel } from "../../lib/workspace/load.ts";
import { readWorkspaceFiles } from "../../lib/workspace/files.ts";

function qual(name: string, predicates: Predicate[]): QualifierModel {
  return { name, path: `qualifiers/${name}.toml`, predicates, refs: [], valid: true };
}

function contract(qs: QualifierModel[]): Record<string, unknown> {
  const r = generateContract(qs);
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return JSON.parse(r.text);
}

Deno.test("generateContract() builds nested objects with typed leaves", () => {
  const c = contract([
    qual("a", [
      { attribute: "account.plan", op: "eq", value: "pro" },
      { attribute: "account.seats", op: "gte", value: 10 },
      { attribute: "beta", op: "eq", value: true },
      { attribute: "qualifier.b", op: "eq", value: true },
    ]),
    qual("b", [{ attribute: "app.version", op: "semver_gt", value: "1.0.0" }]),
    qual("c", [{ attribute: "region", op: "exists", value: true }]),
  ]);
  assertEquals(c.type, "object");
  assertEquals(c.additionalProperties, true);
  assertEquals(c.$schema, "https://json-schema.org/draft/2020-12/schema");
  assertEquals(c.properties, {
    account: {
      additionalProperties: true,
      properties: { plan: { type: "string" }, seats: { type: "number" } },
      type: "object",
    },
    app: {
      additionalProperties: true,
      properties: { version: { type: "string" } },
      type: "object",
    },
    beta: { type: "boolean" },
    region: {},
  });
  assert(!("required" in c));
  assert(!("qualifier" in (c.properties as object)));
});

Deno.test("generateContract() is deterministic: sorted keys, 2-space indent, trailing newline", () => {
  const qs = [
    qual("z", [{ attribute: "b.y", op: "eq", value: "1" }]),
    qual("a", [{ attribute: "a.x", op: "eq", value: "1" }]),
  ];
  const one = generateContract(qs);
  const two = generateContract([...qs].reverse());
  assert(one.ok && two.ok);
  assertEquals(one.text, two.text);
  assert(one.text.endsWith("}\n"));
  assert(one.text.includes('\n  "properties": {\n    "a": {'));
  assertEquals(Object.keys(JSON.parse(one.text)), [
    "$comment",
    "$schema",
    "additionalProperties",
    "properties",
    "type",
  ]);
});

Deno.test("generateContract() merges an untyped exists leaf with a typed one", () => {
  const c = contract([
    qual("a", [{ attribute: "x", op: "exists", value: true }]),
    qual("b", [{ attribute: "x", op: "eq", value: "s" }]),
  ]);
  assertEquals((c.properties as Record<string, unknown>).x, { type: "string" });
});

Deno.test("generateContract() reports conflicting leaf types", () => {
  const r = generateContract([
    qual("a", [{ attribute: "account.plan", op: "eq", value: "pro" }]),
    qual("b", [{ attribute: "account.plan", op: "gt", value: 1 }]),
  ]);
  assert(!r.ok);
  assertEquals(r.problems, [{
    path: "qualifiers/b.toml",
    key: "predicate[0].attribute",
    message: '"account.plan" is compared as number here but as string in qualifiers/a.toml ' +
      "(predicate[0].attribute); the context contract needs one type",
  }]);
});

Deno.test("generateContract() reports a path that is both a value and an object", () => {
  for (
    const order of [
      ["account", "account.plan"],
      ["account.plan", "account"],
    ]
  ) {
    const r = generateContract([
      qual("a", [{ attribute: order[0]!, op: "eq", value: "x" }]),
      qual("b", [{ attribute: order[1]!, op: "eq", value: "y" }]),
    ]);
    assert(!r.ok);
    assertEquals(r.problems.length, 1);
    assertEquals(r.problems[0]!.path, "qualifiers/b.toml");
    assert(
      r.problems[0]!.message.startsWith('"account" is read as a value by'),
      r.problems[0]!.message,
    );
  }
});

Deno.test("generateContract() reproduces the example's contract file byte for byte", async () => {
  const { files } = await readWorkspaceFiles(EXAMPLE_DIR);
  const r = generateContract(loadModel(files).model.qualifiers.values());
  assert(r.ok);
  assertEquals(r.text, await Deno.readTextFile(`${EXAMPLE_DIR}/schemas/context.schema.json`));
  const props = JSON.parse(r.text).properties;
  assertEquals(props.account.properties.plan, { type: "string" });
  assertEquals(props.incident.properties.active, { type: "boolean" });
  assertEquals(props.notification.properties.kind, { type: "string" });
});

Deno.test("contractFileProblems() reports a missing or different file", () => {
  const enc = new TextEncoder();
  assertEquals(contractFileProblems(enc.encode("{}\n"), "{}\n"), []);
  assertEquals(
    contractFileProblems(undefined, "{}\n")[0]!.message,
    'context contract is missing; regenerate it with "cfgtool init <workspace> --context"',
  );
  const p = contractFileProblems(enc.encode('{\n  "a": 1\n}\n'), '{\n  "a": 2\n}\n');
  assertEquals(p.length, 1);
  assert(
    p[0]!.message.startsWith(
      "differs from the contract generated from the qualifiers (first difference at line 2)",
    ),
  );
});

Deno.test("renderJson() sorts keys at every level", () => {
  assertEquals(
    renderJson({ b: { d: 1, c: 2 }, a: null }),
    '{\n  "a": null,\n  "b": {\n    "c": 2,\n    "d": 1\n  }\n}\n',
  );
});
