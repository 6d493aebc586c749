import { assertEquals, assertRejects } from "../assert.ts";
import { closureOf, type LoadedVersion } from "../../lib/events/closures.ts";

/** A loaded version whose manifest cannot be parsed: only a closure that needs the model fails. */
function unparsable(files: Map<string, Uint8Array>): LoadedVersion & { parses: number } {
  const v = {
    meta: { version: 3, closure_hash: "" } as LoadedVersion["meta"],
    files,
    parses: 0,
    model() {
      v.parses++;
      return Promise.reject(new Error("parsed"));
    },
  };
  return v;
}

Deno.test("the closure of a * subscription is the whole version and never parses the manifest", async () => {
  const files = new Map([["flags/a.toml", new Uint8Array([1])], [
    "namespace.toml",
    new Uint8Array(),
  ]]);
  const v = unparsable(files);
  const c = await closureOf(v, "*");
  assertEquals([...c.files.keys()], ["flags/a.toml", "namespace.toml"]);
  assertEquals(v.parses, 0);
  await assertRejects(() => closureOf(v, ["a"]), Error, "parsed");
  assertEquals(v.parses, 1, "a narrow subscription needs the model");
});
