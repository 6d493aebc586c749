import { assertEquals } from "../assert.ts";
import { formatProblem } from "../../lib/errors.ts";
import { analyzeFiles, lintWorkspace, sortProblems } from "../../lib/workspace/lint.ts";
import { EXAMPLE_DIR, exampleCopy } from "../fixtures/workspace/build.ts";

Deno.test("lintWorkspace() is clean on the example", async () => {
  assertEquals((await lintWorkspace(EXAMPLE_DIR)).problems, []);
});

Deno.test("lintWorkspace() reports a missing or stale context contract", async () => {
  const missing = await exampleCopy({ "schemas/context.schema.json": null });
  assertEquals((await lintWorkspace(missing)).problems.map(formatProblem), [
    'schemas/context.schema.json: context contract is missing; regenerate it with "cfgtool init <workspace> --context"',
  ]);
  const original = await Deno.readTextFile(`${EXAMPLE_DIR}/schemas/context.schema.json`);
  const stale = await exampleCopy({
    "schemas/context.schema.json": original.replace('"boolean"', '"string"'),
  });
  assertEquals((await lintWorkspace(stale)).problems.map(formatProblem), [
    "schemas/context.schema.json: differs from the contract generated from the qualifiers " +
    '(first difference at line 19); regenerate it with "cfgtool init <workspace> --context"',
  ]);
});

Deno.test("lintWorkspace() reports every problem at once in a stable order", async () => {
  const dir = await exampleCopy({
    "NOTES.txt": "x",
    "variables/notification-delivery-policy.toml": 'schema_version = 1\ntype = "catalog:x"\n',
    "catalogs/notification-delivery-policy-entries/default.toml": 'delivery = "later"\n',
    "qualifiers/incident-updates.toml": "schema_version = 1\n[[predicate]]\nattribute = 1\n",
  });
  const first = (await lintWorkspace(dir)).problems.map(formatProblem);
  const second = (await lintWorkspace(dir)).problems.map(formatProblem);
  assertEquals(first, second);
  assertEquals(first.map((l) => l.split(":")[0]), [
    "NOTES.txt",
    "catalogs/notification-delivery-policy-entries/default.toml",
    "catalogs/notification-delivery-policy-entries/default.toml",
    "catalogs/notification-delivery-policy-entries/default.toml",
    "catalogs/notification-delivery-policy-entries/default.toml",
    "qualifiers/incident-updates.toml",
    "qualifiers/incident-updates.toml",
    "variables/notification-delivery-policy.toml",
    "variables/notification-delivery-policy.toml",
  ]);
});

Deno.test("analyzeFiles() keeps contract problems apart from blocking ones", () => {
  const a = analyzeFiles(new Map());
  assertEquals(a.blocking, []);
  assertEquals(a.advisory.map((p) => p.path), ["schemas/context.schema.json"]);
});

Deno.test("sortProblems() sorts by path byte-wise and keeps the order within a file", () => {
  const s = sortProblems([
    { path: "b", message: "1" },
    { path: "a", message: "2" },
    { path: "b", message: "0" },
    { path: "😀", message: "4" },
    { path: "～", message: "3" },
  ]);
  assertEquals(s.map((p) => p.message), ["2", "1", "0", "3", "4"]);
});
