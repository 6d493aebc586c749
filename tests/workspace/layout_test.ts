import { assertEquals } from "../assert.ts";
import { classifyPath, entriesDir, isIgnoredName } from "../../lib/workspace/layout.ts";

Deno.test("classifyPath() recognises every resource of the layout", () => {
  assertEquals(classifyPath("variables/v.toml"), { kind: "variable", name: "v" });
  assertEquals(classifyPath("catalogs/c.toml"), { kind: "catalog", name: "c" });
  assertEquals(classifyPath("catalogs/c-entries/default.toml"), {
    kind: "entry",
    catalog: "c",
    name: "default",
  });
  assertEquals(classifyPath("catalogs/a-entries-entries/k.toml"), {
    kind: "entry",
    catalog: "a-entries",
    name: "k",
  });
  assertEquals(classifyPath("qualifiers/q.toml"), { kind: "qualifier", name: "q" });
  assertEquals(classifyPath("schemas/s.schema.json"), { kind: "schema", name: "s" });
  assertEquals(classifyPath("schemas/context.schema.json"), { kind: "context" });
});

Deno.test("classifyPath() calls everything else unexpected", () => {
  for (
    const p of [
      "README.md",
      "variables/v.json",
      "variables/sub/v.toml",
      "variables/.toml",
      "catalogs/c-entries/sub/k.toml",
      "catalogs/-entries/k.toml",
      "catalogs/c/k.toml",
      "qualifiers/q.yaml",
      "schemas/s.json",
      "schemas/.schema.json",
      "other/x.toml",
    ]
  ) {
    assertEquals(classifyPath(p), { kind: "unexpected" }, p);
  }
});

Deno.test("entriesDir() names the entry directory of a catalog", () => {
  assertEquals(entriesDir("c"), "catalogs/c-entries");
});

Deno.test("isIgnoredName() ignores documentation and dot entries, never a workspace name", () => {
  for (const n of ["README.md", "CHANGES.md", "LICENSE", "LICENSE.txt", "LICENSES", ".git", ".x"]) {
    assertEquals(isIgnoredName(n), true, n);
  }
  for (
    const n of ["variables", "catalogs", "license.toml", "readme.txt", "x.md.toml", "notes.txt"]
  ) {
    assertEquals(isIgnoredName(n), false, n);
  }
});
