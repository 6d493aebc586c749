/**
 * The plain TOML reader (lib/workspace/plain_toml.ts) and the full reader
 * (lib/toml.ts, on smol-toml) agree: whatever the plain reader reads, the
 * full reader reads to the same record; whatever the full reader refuses,
 * the plain reader leaves to it (so every syntax problem keeps the full
 * reader's wording).
 */
import fc from "fast-check";
import { assert, assertEquals } from "../assert.ts";
import { parseToml } from "../../lib/toml.ts";
import { parsePlainToml } from "../../lib/workspace/plain_toml.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** The plain reader's verdict agrees with the full reader's. */
function agree(text: string): "plain" | "full" {
  const plain = parsePlainToml(text);
  if (plain === undefined) return "full";
  const full = parseToml(text, "x.toml");
  assert(full.ok, `plain read a text the full reader refuses:\n${text}\n${JSON.stringify(full)}`);
  assertEquals(plain, full.table, text);
  return "plain";
}

Deno.test("every TOML file of the repository that the plain reader reads, it reads as the full reader does", async () => {
  let plain = 0;
  const walk = async (dir: string): Promise<void> => {
    for await (const e of Deno.readDir(dir)) {
      if (e.name.startsWith(".") || e.name === "node_modules" || e.name === "dist") continue;
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(path);
      else if (e.name.endsWith(".toml")) {
        if (agree(await Deno.readTextFile(path)) === "plain") plain++;
      }
    }
  };
  await walk(`${ROOT}examples`);
  await walk(`${ROOT}tests`);
  // the worked example and the deployment examples are plain TOML
  assert(plain >= 15, `only ${plain} plain files`);
});

Deno.test("what is not plain TOML is left to the full reader", () => {
  for (
    const text of [
      "a = 2026-12-02\n",
      "a = 1979-05-27T07:32:00Z\n",
      'a = """\nx"""\n',
      "a = '''x'''\n",
      '"a b" = 1\n',
      "a . b = 1\n",
      "a = 1\na = 2\n",
      "[t]\n[t]\n",
      "[t.u]\n[t]\n",
      "a = 1\r\n",
      "a = 1e3\n",
      "a = +1\n",
      "a = 1_000\n",
      "a = 0x1f\n",
      "a = inf\n",
      "a = -0\n",
      "a = 9007199254740993\n",
      "__proto__ = 1\n",
      'a = "\\e"\n',
      'a = "\\uD800"\n',
      "a = [1,\n2\n", // unclosed
      "a = { b = 1, }\n",
      "a = { b = 1,\n c = 2 }\n",
      "a = [1]\n[[a]]\n",
      "a.b = 1\n[a]\n",
      "[a]\nb.c = 1\n[a.b]\n",
      "a = 1 b\n",
      "a =\n",
      "\uFEFFa = 1\n",
      "# tab\there is fine, a bell \u0007 is not\n",
      `${"[" + Array.from({ length: 20 }, (_, i) => `k${i}`).join(".") + "]"}\n`,
    ]
  ) {
    assertEquals(parsePlainToml(text), undefined, JSON.stringify(text));
  }
});

Deno.test("the usual shapes of workspace files are plain", () => {
  for (
    const text of [
      "",
      "# only a comment\n",
      'schema_version = 1\ndescription = "x"\n\n[resolve]\ndefault = "d"\n\n[[resolve.rule]]\nqualifier = "q"\nvalue = "v"\n',
      '[[predicate]]\nattribute = "a.b"\nop = "in"\nvalue = ["x", \'y\', "\\u00e9\\U0001F600"] # note\n',
      "a = [\n  1, # one\n  2,\n]\nb = { c = -3, d = { e = 0.25 }, f = [] }\nt.u = true\nt.v = false\n",
      "[a.b]\nx = 1\n[a.c]\ny = 2\n[[l]]\n[[l]]\nz = 3\n[l.sub]\nw = 4\n",
      "1 = 2\nb = 3\n0 = 1\nconstructor = 1\ntoString = 2\n",
    ]
  ) {
    assertEquals(agree(text), "plain", JSON.stringify(text));
  }
});

// Documents built from TOML's pieces, plain and not, well-formed and not.
const key = fc.oneof(
  fc.stringMatching(/^[a-z0-9_-]{1,4}$/),
  fc.constantFrom("a", "b", "1", "0", "constructor", "__proto__", '"q"', "a b"),
);
const keys = fc.array(key, { minLength: 1, maxLength: 3 }).map((ks) => ks.join("."));
const stringChar = fc.oneof(
  fc.constantFrom("a", " ", "é", "😀", "'", '"', "\\", "\t", "\n", "\u0001", "\u007f", "#", "="),
  fc.constantFrom("\\n", "\\t", '\\"', "\\\\", "\\u00e9", "\\U0001F600", "\\uD800", "\\e", "\\x"),
);
const atom = fc.oneof(
  fc.integer().map(String),
  fc.constantFrom("0", "-0", "+1", "1_000", "9007199254740993", "-9007199254740991", "007"),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => String(d)),
  fc.constantFrom("1.5", "-0.25", "1.", ".5", "1e3", "inf", "nan", "true", "false", "TRUE"),
  fc.constantFrom("2026-12-02", "07:32:00", "1979-05-27T07:32:00Z"),
  fc.array(stringChar, { maxLength: 6 }).map((cs) => `"${cs.join("")}"`),
  fc.array(stringChar, { maxLength: 6 }).map((cs) => `'${cs.join("")}'`),
  fc.constantFrom('"""x"""', "'''y'''", '"open', "'open"),
);
const space = fc.constantFrom("", " ", "  ", "\t", "\n", " # c\n");
const { value } = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    atom,
    fc.tuple(fc.array(fc.tuple(space, tie("value"), space), { maxLength: 3 }), fc.boolean())
      .map(([items, trailing]) =>
        `[${items.map(([a, v, b]) => `${a}${v}${b}`).join(",")}${trailing ? "," : ""}]`
      ),
    fc.array(fc.tuple(key, tie("value")), { maxLength: 3 })
      .map((kvs) => `{${kvs.map(([k, v]) => ` ${k} = ${v}`).join(",")} }`),
  ),
}));
const line = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(keys, value, space).map(([k, v, s]) => `${k} = ${v}${s}`) },
  { weight: 1, arbitrary: keys.map((k) => `[${k}]`) },
  { weight: 1, arbitrary: keys.map((k) => `[[${k}]]`) },
  { weight: 1, arbitrary: fc.constantFrom("", "# comment", "\t# tab", "x", "=", "[", "a = 1\r") },
);
const documentText = fc.array(line, { maxLength: 8 }).map((ls) => ls.join("\n") + "\n");

Deno.test("on generated documents, the plain reader reads only what the full reader reads the same", () => {
  let plain = 0;
  fc.assert(
    fc.property(documentText, (text) => {
      if (agree(text) === "plain") plain++;
    }),
    { numRuns: 3000 },
  );
  // the generator must exercise the plain reader, not only its refusals
  assert(plain > 300, `only ${plain} documents read plain`);
});

Deno.test("on edited workspace files, the plain reader reads only what the full reader reads the same", async () => {
  const base = await Deno.readTextFile(
    `${ROOT}examples/notification-workspace/variables/notification-delivery-policy.toml`,
  );
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(fc.nat(), fc.nat(3), fc.constantFrom("", "=", "[", "]", '"', "'", ".", ",", "\n")),
        { maxLength: 4 },
      ),
      (edits) => {
        let text = base;
        for (const [at, cut, insert] of edits) {
          const i = at % (text.length + 1);
          text = text.slice(0, i) + insert + text.slice(i + cut);
        }
        agree(text);
      },
    ),
    { numRuns: 2000 },
  );
});
