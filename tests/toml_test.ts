import { assert, assertEquals } from "./assert.ts";
import { parseToml, readToml } from "../lib/toml.ts";

Deno.test("parseToml() returns tables with keys in file order", () => {
  const r = parseToml('b = 1\na = "x"\n[t]\nz = true\ny = [1, 2]\n', "x.toml");
  assert(r.ok);
  assertEquals(Object.keys(r.table), ["b", "a", "t"]);
  assertEquals(r.table.t, { z: true, y: [1, 2] });
  assertEquals(Object.keys(r.table.t as object), ["z", "y"]);
});

Deno.test("parseToml() turns arrays of tables into arrays of plain objects", () => {
  const r = parseToml('[[rule]]\nq = "a"\n[[rule]]\nq = "b"\n', "x.toml");
  assert(r.ok);
  assertEquals(r.table.rule, [{ q: "a" }, { q: "b" }]);
  assertEquals(Object.getPrototypeOf((r.table.rule as object[])[0]), Object.prototype);
});

Deno.test("parseToml() turns dates into RFC 3339 strings", () => {
  const r = parseToml("d = 2024-05-01T10:00:00Z\n", "x.toml");
  assert(r.ok);
  assertEquals(typeof r.table.d, "string");
  assert(String(r.table.d).startsWith("2024-05-01T10:00:00"));
});

Deno.test("parseToml() reports syntax errors with file, line and column", () => {
  const r = parseToml('a = 1\nb = "unterminated\n', "variables/x.toml");
  assert(!r.ok);
  assertEquals(r.problem.path, "variables/x.toml");
  assertEquals(r.problem.line, 2);
  assert(typeof r.problem.column === "number" && r.problem.column >= 1);
  assert(r.problem.message.startsWith("invalid TOML: "), r.problem.message);
  assert(!r.problem.message.includes("\n"));
});

Deno.test("parseToml() reports duplicate keys", () => {
  const r = parseToml("a = 1\na = 2\n", "x.toml");
  assert(!r.ok);
  assertEquals(r.problem.line, 2);
});

Deno.test("readToml() reads a file from disk", async () => {
  const file = await Deno.makeTempFile({ suffix: ".toml" });
  await Deno.writeTextFile(file, "x = 1\n[");
  const r = await readToml(file, "x.toml");
  assert(!r.ok);
  assertEquals(r.problem.line, 2);
});
