import fc from "fast-check";
import { assert, assertEquals, assertRejects } from "../assert.ts";
import { NotFoundError, ProblemsError } from "../../lib/errors.ts";
import { openWorkspace } from "../../lib/workspace/open.ts";
import { EXAMPLE_DIR, exampleCopy, VARIABLE } from "../fixtures/workspace/build.ts";

Deno.test("openWorkspace() resolves from memory: files are not read again", async () => {
  const dir = await exampleCopy();
  const ws = await openWorkspace(dir);
  const fingerprint = ws.sourceFingerprint();
  await Deno.remove(dir, { recursive: true });
  const r = await ws.resolveVariable(VARIABLE, { notification: { kind: "security_alert" } });
  assertEquals(r.value_key, "immediate-security");
  assertEquals(ws.sourceFingerprint(), fingerprint);
});

Deno.test("openWorkspace() lists variables and counts", async () => {
  const ws = await openWorkspace(EXAMPLE_DIR);
  assertEquals(ws.variables(), [VARIABLE]);
  assertEquals(ws.counts(), { variables: 1, catalogs: 1, entries: 3, qualifiers: 5 });
  assertEquals(ws.lint(), []);
});

Deno.test("openWorkspace() rejects an unknown variable with variable_not_found", async () => {
  const ws = await openWorkspace(EXAMPLE_DIR);
  const e = await assertRejects(() => ws.resolveVariable("nope", {}), NotFoundError, '"nope"');
  assertEquals(e.code, "variable_not_found");
});

Deno.test("openWorkspace() throws workspace_not_found for a missing directory", async () => {
  const e = await assertRejects(() => openWorkspace("/nonexistent/cfgtool/ws"), NotFoundError);
  assertEquals(e.code, "workspace_not_found");
});

Deno.test("openWorkspace() throws ProblemsError with every blocking problem", async () => {
  const dir = await exampleCopy({
    "variables/notification-delivery-policy.toml": "schema_version = 2\n",
    "NOTES.txt": "x",
  });
  const e = await assertRejects(() => openWorkspace(dir), ProblemsError);
  assertEquals(e.problems.map((p) => p.path), [
    "NOTES.txt",
    "variables/notification-delivery-policy.toml",
    "variables/notification-delivery-policy.toml",
    "variables/notification-delivery-policy.toml",
  ]);
});

Deno.test("openWorkspace() opens despite a missing or stale context contract and reports it", async () => {
  for (const contract of [null, "{}\n"]) {
    const dir = await exampleCopy({ "schemas/context.schema.json": contract });
    const ws = await openWorkspace(dir);
    assertEquals(ws.lint().map((p) => p.path), ["schemas/context.schema.json"]);
    assertEquals((await ws.resolveVariable(VARIABLE, {})).value_key, "default");
  }
});

const contextArb = fc.record({
  account: fc.option(fc.record({ plan: fc.constantFrom("enterprise", "standard", "free") }), {
    nil: undefined,
  }),
  incident: fc.option(fc.record({ active: fc.oneof(fc.boolean(), fc.constant("true")) }), {
    nil: undefined,
  }),
  notification: fc.option(
    fc.record({ kind: fc.constantFrom("security_alert", "incident_update", "marketing") }),
    { nil: undefined },
  ),
}, { requiredKeys: [] });

Deno.test("resolution is deterministic across opened workspaces and repeated calls", async () => {
  const a = await openWorkspace(EXAMPLE_DIR);
  const b = await openWorkspace(await exampleCopy());
  assertEquals(a.sourceFingerprint(), b.sourceFingerprint());
  await fc.assert(
    fc.asyncProperty(contextArb, async (raw) => {
      const ctx = JSON.parse(JSON.stringify(raw));
      const r1 = await a.resolveVariable(VARIABLE, ctx);
      const r2 = await a.resolveVariable(VARIABLE, ctx);
      const r3 = await b.resolveVariable(VARIABLE, structuredClone(ctx));
      assertEquals(r1, r2);
      assertEquals(r1, r3);
      assert(["default", "immediate-security", "immediate-incident"].includes(r1.value_key));
    }),
    { numRuns: 300 },
  );
});
