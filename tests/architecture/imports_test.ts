import { assertEquals } from "../assert.ts";
import { parseImports } from "./imports.ts";

/** Each import as `kind specifier` with ` (type)` for type-only ones. */
const read = (source: string) =>
  parseImports(source).map((i) => `${i.kind} ${i.specifier}${i.typeOnly ? " (type)" : ""}`);

Deno.test("static imports are read with their specifiers, default, named and namespace", () => {
  assertEquals(
    read([
      'import a from "./a.ts";',
      "import { b, c as d } from './b.ts';",
      'import * as e from "../e.ts";',
      'import f, { g } from "./f.ts";',
      'import h, * as i from "./h.ts";',
      'import toml from "npm:smol-toml@^1.9.1";',
    ].join("\n")),
    [
      "static ./a.ts",
      "static ./b.ts",
      "static ../e.ts",
      "static ./f.ts",
      "static ./h.ts",
      "static npm:smol-toml@^1.9.1",
    ],
  );
});

Deno.test("a specifier list over several lines is one import", () => {
  assertEquals(
    read('import {\n  a,\n  // a comment\n  b, /* another */\n  c,\n} from\n  "./abc.ts";\n'),
    ["static ./abc.ts"],
  );
});

Deno.test("import type and an all-`type` specifier list are type-only; one value name is not", () => {
  assertEquals(
    read([
      'import type { A } from "./a.ts";',
      'import type B from "./b.ts";',
      'import type * as C from "./c.ts";',
      'import {\n  type D,\n  type E as F,\n} from "./d.ts";',
      'import { type G, h } from "./g.ts";',
      'import I, { type J } from "./i.ts";',
    ].join("\n")),
    [
      "static ./a.ts (type)",
      "static ./b.ts (type)",
      "static ./c.ts (type)",
      "static ./d.ts (type)",
      "static ./g.ts",
      "static ./i.ts",
    ],
  );
});

Deno.test("a binding called `type` is a value import", () => {
  assertEquals(
    read([
      'import type from "./a.ts";',
      'import type, { b } from "./b.ts";',
      'import { type } from "./c.ts";',
      'import { type as kind } from "./d.ts";',
      'import { type as as kind } from "./e.ts";',
      'import {} from "./f.ts";',
    ].join("\n")),
    [
      "static ./a.ts",
      "static ./b.ts",
      "static ./c.ts",
      "static ./d.ts",
      "static ./e.ts (type)",
      "static ./f.ts",
    ],
  );
});

Deno.test("re-exports are read; `export type` and all-`type` lists are type-only", () => {
  assertEquals(
    read([
      'export { a, b as c } from "./a.ts";',
      'export * from "./star.ts";',
      'export * as ns from "./ns.ts";',
      'export type { T } from "./t.ts";',
      "export type {\n  U,\n  V,\n} from './uv.ts';",
      'export type * from "./types.ts";',
      'export { type W, type X } from "./wx.ts";',
      'export { type Y, z } from "./yz.ts";',
    ].join("\n")),
    [
      "re-export ./a.ts",
      "re-export ./star.ts",
      "re-export ./ns.ts",
      "re-export ./t.ts (type)",
      "re-export ./uv.ts (type)",
      "re-export ./types.ts (type)",
      "re-export ./wx.ts (type)",
      "re-export ./yz.ts",
    ],
  );
});

Deno.test("exports that import nothing are not read", () => {
  assertEquals(
    read([
      "export { a, b };",
      "export type { C };",
      "export type D = { from: string };",
      "export const from = 'x';",
      "export default function f() {}",
      "export * as x;",
    ].join("\n")),
    [],
  );
});

Deno.test("side-effect and dynamic imports are read; import.meta is not an import", () => {
  assertEquals(
    read([
      'import "./polyfill.ts";',
      "import './other.ts'",
      'const m = await import("./lazy.ts");',
      "const [a, b] = await Promise.all([import('./a.ts'), import(\"./b.ts\")]);",
      'const j = await import("./data.json", { with: { type: "json" } });',
      "const n = await import(`./n.ts`);",
      "const t = typeof import('./types.ts');",
      "const computed = await import(name);",
      "const templated = await import(`./x/${name}.ts`);",
      "const here = import.meta.url;",
    ].join("\n")),
    [
      "side-effect ./polyfill.ts",
      "side-effect ./other.ts",
      "dynamic ./lazy.ts",
      "dynamic ./a.ts",
      "dynamic ./b.ts",
      "dynamic ./data.json",
      "dynamic ./n.ts",
      "dynamic ./types.ts (type)",
    ],
  );
});

Deno.test("a worker module named by new URL(…, import.meta.url) is read", () => {
  assertEquals(
    read([
      'const w = new Worker(new URL("./_entry.ts", import.meta.url), { type: "module" });',
      'const other = new URL("./x.ts", base);',
    ].join("\n")),
    ["url ./_entry.ts"],
  );
});

Deno.test("imports inside JSDoc, comments, strings, templates and regexes are not read", () => {
  const source = [
    "/**",
    " * Does things.",
    " *",
    " * @example",
    " * ```ts",
    ' * import { thing } from "./doc_example.ts";',
    ' * const x = await import("./doc_dynamic.ts");',
    " * ```",
    " */",
    '// import { old } from "./commented.ts";',
    '/* import "./block.ts"; */',
    "const s = \"import { x } from './in_double.ts'\";",
    "const q = 'export * from \"./in_single.ts\"';",
    'const t = `import { y } from "./in_template.ts"; ${value} import("./in_tail.ts")`;',
    'const r = /import "\\.\\/in_regex.ts"/g;',
    "const c = /[\"'`]/.test(s);",
    'import { real } from "./real.ts";',
  ].join("\n");
  assertEquals(read(source), ["static ./real.ts"]);
});

Deno.test("code inside template substitutions is read, nesting included", () => {
  assertEquals(
    read([
      'const a = `x ${await import("./in_sub.ts")} y`;',
      'const b = `${`${{ k: 1 }.k}`}${"}"}`;',
      'import { after } from "./after.ts";',
    ].join("\n")),
    ["dynamic ./in_sub.ts", "static ./after.ts"],
  );
});

Deno.test("a division is not mistaken for a regex that hides the next import", () => {
  assertEquals(
    read([
      "const half = total / 2; const q = a[1] / b / c;",
      'const x = (n) / 2; import { a } from "./a.ts";',
      'const y = f() /* c */ / 2; import { b } from "./b.ts";',
      'const r = x.split("/").map((p) => p / 1);',
      'import { c } from "./c.ts";',
    ].join("\n")),
    ["static ./a.ts", "static ./b.ts", "static ./c.ts"],
  );
});

Deno.test("`import` and `export` as property names are not statements", () => {
  assertEquals(
    read([
      'const o = { import: "./a.ts", export: 1 };',
      'o.import("./b.ts"); o?.export;',
      "class K { import(x: string) { return x; } }",
    ].join("\n")),
    [],
  );
});

Deno.test("TypeScript-only syntax around imports does not confuse the reader", () => {
  assertEquals(
    read([
      "function f<T extends Record<string, unknown>>(x: T): Promise<T> { return x as never; }",
      "let y = a < b && c > (d);",
      'import x = require("./required.ts");',
      "import Alias = Namespace.Member;",
      'const v = value! / 2; import { after } from "./after.ts";',
      "type Q = typeof import('./q.ts');",
    ].join("\n")),
    ["static ./after.ts", "dynamic ./q.ts (type)"],
  );
});

Deno.test("each import carries the line of its keyword", () => {
  const found = parseImports(
    '/**\n * doc\n */\nimport {\n  a,\n} from "./a.ts";\n\nimport "./b.ts";',
  );
  assertEquals(found.map((i) => i.line), [4, 8]);
});
