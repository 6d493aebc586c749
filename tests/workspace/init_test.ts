import { assert, assertEquals, assertRejects } from "../assert.ts";
import { CfgtoolError, NotFoundError, ProblemsError, UsageError } from "../../lib/errors.ts";
import { initWorkspace } from "../../lib/workspace/init.ts";
import { lintWorkspace } from "../../lib/workspace/lint.ts";
import { openWorkspace } from "../../lib/workspace/open.ts";
import { EXAMPLE_DIR, exampleCopy, readTree, writeTree } from "../fixtures/workspace/build.ts";

Deno.test("initWorkspace() catalog then variable gives a workspace that lints clean", async () => {
  const dir = `${await Deno.makeTempDir()}/new-ws`;
  const c = await initWorkspace(dir, { catalog: "delivery" });
  assertEquals(c.written, [
    "catalogs/delivery.toml",
    "schemas/delivery.schema.json",
    "catalogs/delivery-entries/default.toml",
    "schemas/context.schema.json",
  ]);
  assertEquals((await lintWorkspace(dir)).problems, []);
  const v = await initWorkspace(dir, { variable: "delivery" });
  assertEquals(v.written, ["variables/delivery.toml"]);
  assertEquals(v.notes, []);
  assertEquals((await lintWorkspace(dir)).problems, []);
  const ws = await openWorkspace(dir);
  assertEquals(await ws.resolveVariable("delivery", {}), {
    value_key: "default",
    value: { enabled: false },
  });
});

Deno.test("initWorkspace() creates a catalog and a variable in one call", async () => {
  const dir = await Deno.makeTempDir();
  const r = await initWorkspace(dir, { catalog: "limits", variable: "api-limits" });
  assert(r.written.includes("variables/api-limits.toml"));
  const text = await Deno.readTextFile(`${dir}/variables/api-limits.toml`);
  assert(text.includes('type = "catalog:limits"'), text);
  assertEquals((await lintWorkspace(dir)).problems, []);
});

Deno.test("initWorkspace() variable with --type uses that catalog and its first entry", async () => {
  const dir = await exampleCopy();
  const r = await initWorkspace(dir, {
    variable: "other-policy",
    type: "catalog:notification-delivery-policy",
  });
  assertEquals(r.written, ["variables/other-policy.toml"]);
  assertEquals((await lintWorkspace(dir)).problems, []);
  // A catalog without a `default` entry: the first entry by key is the default.
  const dir2 = await exampleCopy({
    "catalogs/notification-delivery-policy-entries/default.toml": null,
    "variables/notification-delivery-policy.toml": null,
  });
  await initWorkspace(dir2, { variable: "p", type: "catalog:notification-delivery-policy" });
  assert(
    (await Deno.readTextFile(`${dir2}/variables/p.toml`)).includes(
      'default = "immediate-incident"',
    ),
  );
  assertEquals((await lintWorkspace(dir2)).problems, []);
});

Deno.test("initWorkspace() variable of a catalog that does not exist yet says so", async () => {
  const dir = await Deno.makeTempDir();
  const r = await initWorkspace(dir, { variable: "x" });
  assertEquals(r.notes.length, 1);
  assert(r.notes[0]!.includes('catalog "x" does not exist yet'));
  const problems = (await lintWorkspace(dir)).problems;
  assertEquals(problems.map((p) => p.key), ["type"]);
  await initWorkspace(dir, { catalog: "x" });
  assertEquals((await lintWorkspace(dir)).problems, []);
});

Deno.test("initWorkspace() refuses to overwrite and writes nothing then", async () => {
  const dir = await Deno.makeTempDir();
  await initWorkspace(dir, { catalog: "c" });
  const before = await readTree(dir);
  await Deno.remove(`${dir}/schemas/c.schema.json`);
  const e = await assertRejects(
    () => initWorkspace(dir, { catalog: "c" }),
    CfgtoolError,
    "already exist",
  );
  assertEquals(e.code, "file_exists");
  assert(!(await readTree(dir))["schemas/c.schema.json"]);
  await assertRejects(
    () => initWorkspace(dir, { variable: "v" }).then(() => initWorkspace(dir, { variable: "v" })),
    CfgtoolError,
    "variables/v.toml already exists",
  );
  assertEquals(Object.keys(before).length, 4);
});

Deno.test("initWorkspace() context regenerates the contract deterministically", async () => {
  const dir = await exampleCopy({ "schemas/context.schema.json": "stale\n" });
  assertEquals((await lintWorkspace(dir)).problems.length, 1);
  const r = await initWorkspace(dir, { context: true });
  assertEquals(r.written, ["schemas/context.schema.json"]);
  assertEquals(
    await Deno.readTextFile(`${dir}/schemas/context.schema.json`),
    await Deno.readTextFile(`${EXAMPLE_DIR}/schemas/context.schema.json`),
  );
  assertEquals((await initWorkspace(dir, { context: true })).unchanged, [
    "schemas/context.schema.json",
  ]);
  assertEquals((await lintWorkspace(dir)).problems, []);
});

Deno.test("initWorkspace() context refuses while qualifiers have problems or conflict", async () => {
  const broken = await exampleCopy({ "qualifiers/security-alerts.toml": "[[predicate\n" });
  const e = await assertRejects(() => initWorkspace(broken, { context: true }), ProblemsError);
  assertEquals(e.problems.map((p) => p.path), ["qualifiers/security-alerts.toml"]);
  const conflict = await exampleCopy();
  await writeTree(conflict, {
    "qualifiers/big.toml":
      'schema_version = 1\n[[predicate]]\nattribute = "account.plan"\nop = "gt"\nvalue = 3\n',
  });
  const c = await assertRejects(() => initWorkspace(conflict, { context: true }), ProblemsError);
  assertEquals(c.problems.map((p) => p.path), ["qualifiers/enterprise-accounts.toml"]);
});

Deno.test("initWorkspace() refuses bad names, bad types and no option", async () => {
  const dir = await Deno.makeTempDir();
  await assertRejects(() => initWorkspace(dir, {}), UsageError);
  await assertRejects(
    () => initWorkspace(dir, { variable: "Bad Name" }),
    UsageError,
    "not a valid variable name",
  );
  await assertRejects(() => initWorkspace(dir, { catalog: "../x" }), UsageError);
  await assertRejects(
    () => initWorkspace(dir, { variable: "v", type: "string" }),
    UsageError,
    "catalog:<catalog_name>",
  );
  await assertRejects(() => initWorkspace(dir, { type: "catalog:x" }), UsageError);
  const e = await assertRejects(
    () => initWorkspace(`${dir}/missing`, { context: true }),
    NotFoundError,
  );
  assertEquals(e.code, "workspace_not_found");
});
