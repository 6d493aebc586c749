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

/** The message parseToml() gives for `text` (which must not parse), without the prefix. */
function syntaxMessage(text: string): string {
  const r = parseToml(text, "x.toml");
  assert(!r.ok, "expected a syntax error");
  assert(r.problem.message.startsWith("invalid TOML: "), r.problem.message);
  return r.problem.message.slice("invalid TOML: ".length);
}

Deno.test("parseToml() calls a string left open at the end of its line an unterminated string", () => {
  const r = parseToml('schema_version = 1\nop = "eq\n', "x.toml");
  assert(!r.ok);
  assertEquals([r.problem.line, r.problem.column], [2, 9]);
  assertEquals(
    r.problem.message,
    'invalid TOML: unterminated string: close it on the same line ("""…""" strings may span lines)',
  );
  assert(syntaxMessage("a = 'eq\n").startsWith("unterminated string"));
});

Deno.test("parseToml() calls a string left open at the end of the file an unterminated string", () => {
  assertEquals(
    syntaxMessage('a = "eq'),
    "unterminated string: the file ends before the closing quote",
  );
  assertEquals(
    syntaxMessage('a = """eq\n'),
    "unterminated string: the file ends before the closing quote",
  );
});

Deno.test("parseToml() names a real control character in a string and its escape", () => {
  assertEquals(
    syntaxMessage('a = "x\u0001y"\n'),
    "control character U+0001 is not allowed in a string; write it as an escape such as \\u0001",
  );
});

Deno.test("parseToml() rewords misleading smol-toml messages for common mistakes", () => {
  const cases: [string, string][] = [
    ["a =\n", 'missing value after "="'],
    ["a = # none\n", 'missing value after "="'],
    ["a = hello\n", 'invalid value hello: a string must be quoted ("hello")'],
    ["a = True\n", "invalid value True: booleans are lower-case true or false"],
    ['a "x"\n', 'expected "=" after the key "a"'],
    ["a: 1\n", 'expected "=" after the key (TOML writes key = value, not key: value)'],
    ["= 1\n", 'missing key before "="'],
    ["a = 1\na = 2\n", "duplicate key: a is already defined above"],
    ["a = 1\na.b = 2\n", "duplicate key: a.b conflicts with a key or table defined above"],
    ["[t]\n[t]\n", "duplicate table: [t] is already defined above"],
    ["[t\n", 'unterminated table header: expected "]"'],
    ["[[t]\n", 'unterminated table array header: expected "]]"'],
    [
      "a = [1, 2\n",
      'expected "," or the closing "]" or "}" of an array or inline table left open',
    ],
    ["a = 1 b = 2\n", "expected the end of the line after the value (one key = value per line)"],
    [
      'a = "c:\\path"\n',
      "invalid escape sequence in a string: write a backslash as \\\\, or use a " +
      "'literal string' where backslashes are plain characters",
    ],
  ];
  for (const [text, message] of cases) assertEquals(syntaxMessage(text), message, text);
});

Deno.test("parseToml() names duplicate keys and tables as written, quoted ones included", () => {
  const cases: [string, string][] = [
    ['"a=b" = 1\n"a=b" = 2\n', 'duplicate key: "a=b" is already defined above'],
    [
      "  x . y = 1\n  x . y = 2\n",
      "duplicate key: x . y conflicts with a key or table defined above",
    ],
    ['["a]b"]\n["a]b"]\n', 'duplicate table: ["a]b"] is already defined above'],
    ["[[t]]\n[t]\n", "duplicate table: [t] is already defined above"],
  ];
  for (const [text, message] of cases) assertEquals(syntaxMessage(text), message, text);
});

Deno.test("parseToml() cuts a huge duplicate key to 80 characters in its message", () => {
  // A duplicated quoted key of 120,000 spaces: the old wording took the key
  // with a regular expression that took the square of its length (about
  // 23 s on a server thread), and then quoted all of it.
  const key = `"${" ".repeat(120_000)}"`;
  const message = syntaxMessage(`${key} = 1\n${key} = 2\n`);
  assertEquals(message, `duplicate key: "${" ".repeat(79)}… is already defined above`);
  const table = syntaxMessage(`[${key}]\n[${key}]\n`);
  assertEquals(table, `duplicate table: ["${" ".repeat(79)}…] is already defined above`);
});

Deno.test("parseToml() keeps smol-toml's message when it already says what is wrong", () => {
  assertEquals(syntaxMessage("a = 01\n"), "illegal leading zero");
});

Deno.test("parseToml() refuses nesting deeper than 64 levels as a problem, not a crash", () => {
  // A dotted key of 100,000 parts once overflowed the call stack (a 500).
  const deep = parseToml(`${Array(100_000).fill("a").join(".")} = 1\n`, "namespace.toml");
  assertEquals(deep.ok, false);
  if (!deep.ok) {
    assertEquals(
      deep.problem.message,
      "invalid TOML: tables and arrays nested deeper than 64 levels",
    );
  }
  const fine = parseToml(`${Array(64).fill("a").join(".")} = 1\nx = [[1], [2, [3]]]\n`, "x.toml");
  assertEquals(fine.ok, true);
  if (fine.ok) assertEquals(fine.table.x, [[1], [2, [3]]]);
});
