import { assertEquals } from "../assert.ts";
import { checkInPlace, checkManifest, IN_PLACE_FILES } from "../../lib/flags/check_off_thread.ts";

const enc = new TextEncoder();
const NS = "schema_version = 1\n[namespace.environments.production]\npublic_evaluate = true\n";
const flag = (i: number) =>
  `schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n# ${i}\n`;

function manifest(count: number, extra: Record<string, string> = {}) {
  const files = new Map([["namespace.toml", enc.encode(NS)]]);
  for (let i = 0; i < count; i++) files.set(`flags/f${i}.toml`, enc.encode(flag(i)));
  for (const [path, text] of Object.entries(extra)) files.set(path, enc.encode(text));
  return files;
}

Deno.test("a large valid manifest checked in a worker gives its environments and no problems", async () => {
  const files = manifest(IN_PLACE_FILES * 4);
  assertEquals(await checkManifest(files), {
    problems: [],
    environments: { production: { public_evaluate: true } },
  });
});

Deno.test("a large invalid manifest checked in a worker reports exactly what in-place validation does", async () => {
  const files = manifest(IN_PLACE_FILES * 4, {
    "flags/broken.toml": 'schema_version = 1\ntype = "boolean"\ndefault = "of',
    "flags/bad-default.toml": flag(0).replace('default = "off"', 'default = "maybe"'),
    "notes.txt": "x",
  });
  const off = await checkManifest(files);
  assertEquals(off, checkInPlace(files));
  assertEquals(off.problems.map((p) => p.path), [
    "flags/bad-default.toml",
    "flags/broken.toml",
    "notes.txt",
  ]);
  assertEquals(off.environments, {});
});

Deno.test("a small manifest is checked in place with the same outcome", async () => {
  const files = manifest(3, { "flags/x.toml": "schema_version = 2\n" });
  assertEquals(await checkManifest(files), checkInPlace(files));
});
