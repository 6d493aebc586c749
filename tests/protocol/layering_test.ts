/**
 * lib/protocol/ is the wire contract shared by the server and the SDK: it
 * imports only leaves (top-level lib/*.ts files). The SDK (lib/client/)
 * imports only lib/protocol/, lib/flags/, lib/closure/ and leaves, never the
 * server's store, auth, http or events.
 */
import { assert, assertEquals } from "../assert.ts";

const LIB = new URL("../../lib/", import.meta.url);

/** The relative imports of every module of a lib/ directory, as `<file>: <specifier>`. */
async function importsOf(dir: string): Promise<{ file: string; target: string }[]> {
  const out: { file: string; target: string }[] = [];
  for await (const e of Deno.readDir(new URL(`${dir}/`, LIB))) {
    if (!e.isFile || !e.name.endsWith(".ts")) continue;
    const text = await Deno.readTextFile(new URL(`${dir}/${e.name}`, LIB));
    const code = text.split("\n").filter((l) => !/^\s*(\*|\/\/)/.test(l)).join("\n");
    for (const m of code.matchAll(/(?:^|\n)\s*(?:import|export)\b[^"';]*?from\s+"(\.[^"]+)"/g)) {
      // resolve against lib/<dir>/ and express relative to lib/
      const target = new URL(m[1]!, new URL(`${dir}/${e.name}`, LIB)).pathname
        .slice(LIB.pathname.length);
      out.push({ file: `${dir}/${e.name}`, target });
    }
  }
  return out;
}

const isLeaf = (target: string) => !target.includes("/");

Deno.test("lib/protocol imports only leaves and itself", async () => {
  const imports = await importsOf("protocol");
  assert(imports.length >= 5, `only ${imports.length} imports read: is the scan broken?`);
  const bad = imports.filter(({ target }) => !isLeaf(target) && !target.startsWith("protocol/"));
  assertEquals(bad, []);
});

Deno.test("lib/client imports only lib/protocol, lib/flags, lib/closure, leaves and itself", async () => {
  const allowed = ["protocol/", "flags/", "closure/", "client/"];
  const imports = await importsOf("client");
  assert(imports.length >= 20, `only ${imports.length} imports read: is the scan broken?`);
  const bad = imports.filter(({ target }) =>
    !isLeaf(target) && !allowed.some((dir) => target.startsWith(dir))
  );
  assertEquals(bad, []);
});
