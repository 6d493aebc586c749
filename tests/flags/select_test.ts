import { assertEquals } from "../assert.ts";
import { closureFlags, selectClosure } from "../../lib/flags/select.ts";
import { validateManifest } from "../../lib/flags/validate.ts";
import { flagToml, NS_TOML, segmentToml } from "../events/world.ts";

const enc = new TextEncoder();

/** flags: a → s1 → s2 (transitive), b → s3, c (no segment); orphan o1 → o2. */
function manifest(): Map<string, Uint8Array> {
  const files: Record<string, string> = {
    "namespace.toml": NS_TOML,
    "flags/a.toml": flagToml("A", ["s1"]),
    "flags/b.toml": flagToml("B", ["s3"]),
    "flags/c.toml": flagToml("C"),
    "segments/s1.toml": segmentToml("S1", ["s2"]),
    "segments/s2.toml": segmentToml("S2"),
    "segments/s3.toml": segmentToml("S3"),
    "segments/o1.toml": segmentToml("O1", ["o2"]),
    "segments/o2.toml": segmentToml("O2"),
  };
  return new Map(Object.entries(files).map(([k, v]) => [k, enc.encode(v)]));
}

Deno.test("selectClosure() takes namespace.toml, the flags and their segments transitively", () => {
  const c = selectClosure(manifest(), ["a"]);
  assertEquals([...c.keys()].sort(), [
    "flags/a.toml",
    "namespace.toml",
    "segments/s1.toml",
    "segments/s2.toml",
  ]);
});

Deno.test("selectClosure() accepts missing flags and omits them", () => {
  const c = selectClosure(manifest(), ["c", "not-yet"]);
  assertEquals([...c.keys()].sort(), ["flags/c.toml", "namespace.toml"]);
  assertEquals(selectClosure(new Map(), ["a"]).size, 0);
});

Deno.test("selectClosure() with * includes orphan segments; narrow subscriptions do not", () => {
  const all = selectClosure(manifest(), "*");
  assertEquals(all.size, manifest().size);
  assertEquals(all.has("segments/o1.toml") && all.has("segments/o2.toml"), true);
  const narrow = selectClosure(manifest(), ["a", "b", "c"]);
  assertEquals(narrow.has("segments/o1.toml") || narrow.has("segments/o2.toml"), false);
});

Deno.test("a closure of a valid namespace is valid and its model holds exactly the subscribed flags", () => {
  const files = manifest();
  for (const sub of [["a"], ["b"], ["c"], ["a", "b"], ["b", "missing"], ["missing"]]) {
    const closure = selectClosure(files, sub);
    const { problems, manifest: model } = validateManifest(closure);
    assertEquals(problems, [], `closure of ${sub} is invalid`);
    assertEquals(Object.keys(model!.flags).sort(), sub.filter((f) => f !== "missing").sort());
    assertEquals(closureFlags(closure).sort(), Object.keys(model!.flags).sort());
  }
  const star = validateManifest(selectClosure(files, "*"));
  assertEquals(star.problems, []);
  assertEquals(Object.keys(star.manifest!.flags), ["a", "b", "c"]);
});

Deno.test("selectClosure() keeps the exact bytes of the manifest", () => {
  const files = manifest();
  const c = selectClosure(files, ["a"]);
  assertEquals(c.get("flags/a.toml"), files.get("flags/a.toml"));
});
