import { assertEquals } from "../assert.ts";
import { graphOf, resolveLocal } from "./graph.ts";

Deno.test("relative specifiers resolve against the importing file, up to the repository root", () => {
  assertEquals(resolveLocal("lib/cli/serve.ts", "../../server.ts"), "server.ts");
  assertEquals(resolveLocal("lib/cli/serve.ts", "./program.ts"), "lib/cli/program.ts");
  assertEquals(resolveLocal("lib/cli/serve.ts", "../store/./kv.ts"), "lib/store/kv.ts");
  assertEquals(resolveLocal("mod.ts", "./lib/client/api.ts"), "lib/client/api.ts");
});

Deno.test("npm:, node: and bare specifiers name no local file", () => {
  assertEquals(resolveLocal("lib/a.ts", "npm:hono@^4"), undefined);
  assertEquals(resolveLocal("lib/a.ts", "node:assert/strict"), undefined);
  assertEquals(resolveLocal("lib/a.ts", "hono/streaming"), undefined);
});

Deno.test("the graph has one edge per local code import, data imports left out", () => {
  const graph = graphOf([
    ["lib/version.ts", 'import denoJson from "../deno.json" with { type: "json" };'],
    [
      "lib/workers/pool.ts",
      'import type { M } from "./_messages.ts";\n' +
      'const w = new Worker(new URL("./_entry.ts", import.meta.url));\n' +
      'const data = new URL("./fixture.txt", import.meta.url);\n' +
      'import { z } from "npm:zod";',
    ],
    ["cli.ts", 'await import("./lib/cli/program.ts");'],
  ]);
  assertEquals(graph.files, ["cli.ts", "lib/version.ts", "lib/workers/pool.ts"]);
  assertEquals(
    graph.edges.map((e) => `${e.from}:${e.line} -> ${e.to} ${e.kind}${e.typeOnly ? " type" : ""}`),
    [
      "cli.ts:1 -> lib/cli/program.ts dynamic",
      "lib/workers/pool.ts:1 -> lib/workers/_messages.ts static type",
      "lib/workers/pool.ts:2 -> lib/workers/_entry.ts url",
    ],
  );
});
